#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The cost model's plugin under QEMU, without a kernel: boots
# guest/selftest.S (a multiboot image: rep string instructions and atomics
# between marks) under -icount with the plugin, and checks every field of
# every region with costmodel-calib --selftest; then again with model=off
# (the icount boot's count: instructions, each rep string instruction
# once). About 2 seconds each.
# Usage: tools/costmodel/selftest.sh   (after `make costmodel`)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$here/target/selftest
mkdir -p "$out"
as --32 -o "$out/selftest.o" "$here/guest/selftest.S"
ld -m elf_i386 -Ttext=0x100000 -e _start -o "$out/selftest.elf" "$out/selftest.o"
status=0
for model in on off; do
	counts=$out/counts-model-$model.txt
	rm -f "$counts"
	# isa-debug-exit ends QEMU with status 1 for the guest's 0.
	rc=0
	timeout 120 qemu-system-x86_64 -display none -monitor none -serial none -m 128 -smp 1 \
		-icount shift=0,sleep=off -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-kernel "$out/selftest.elf" \
		-plugin "$here/target/release/libcostmodel.so,out=$counts,model=$model${MODEL_ARGS:+,$MODEL_ARGS}" || rc=$?
	[ "$rc" = 1 ] || { echo "selftest: FAIL QEMU exited with $rc (want 1, the guest's exit), model=$model"; exit 1; }
	echo "selftest: model=$model"
	"$here/target/release/costmodel-calib" --selftest "$counts" || status=1
done
exit $status
