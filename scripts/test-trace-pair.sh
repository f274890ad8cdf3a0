#!/usr/bin/env bash
# make trace-pair's stepping and table (scripts/trace-pair-gdb.py,
# scripts/trace-pair-report.py) on a guest without a kernel: QEMU boots
# scripts/trace-pair-test.S (a multiboot image with rep string instructions
# between the calls of trace_mark), gdb steps it from mark to mark, and the
# report must list each rep string instruction once, with its bytes. A few
# seconds. One line per check, "trace-pair: PASS|FAIL <case>".
set -uo pipefail
cd "$(dirname "$0")" || exit 2
tmp=$(mktemp -d)
qemu=
trap '[ -z "$qemu" ] || kill "$qemu" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0

if ! { as --32 -o "$tmp/t.o" trace-pair-test.S &&
	ld -m elf_i386 -Ttext=0x100000 -e _start -o "$tmp/t.elf" "$tmp/t.o"; }; then
	echo "trace-pair: FAIL build of trace-pair-test.S"
	exit 1
fi
# The symbols as /proc/kallsyms would give them (text, no module).
nm "$tmp/t.elf" | awk '$2 ~ /^[tT]$/ { print $1, "T", $3 }' >"$tmp/kallsyms"
mark=0x$(awk '$3 == "trace_mark" { print $1 }' "$tmp/kallsyms")

timeout 60 qemu-system-x86_64 -display none -monitor none -serial none -m 64 -smp 1 \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 -kernel "$tmp/t.elf" \
	-gdb "unix:$tmp/gdb.sock,server=on,wait=off" -S &
qemu=$!
for _ in $(seq 50); do [ -S "$tmp/gdb.sock" ] && break; sleep 0.1; done
MARK=$mark ALLOCS=1 MARKS=3 BITS=32 ARMED=$tmp/armed STEPS=$tmp/steps \
	timeout 60 gdb -q -batch -nx -ex "set pagination off" -ex "set architecture i386:x86-64" \
	-ex "target remote $tmp/gdb.sock" -x trace-pair-gdb.py >"$tmp/gdb.log" 2>&1
# gdb -batch exits 0 when its script fails: the steps file says.
if ! grep -q '^mark$' "$tmp/steps" 2>/dev/null || grep -q Traceback "$tmp/gdb.log"; then
	echo "trace-pair: FAIL gdb:"
	tail -n 10 "$tmp/gdb.log" | sed 's/^/  | /'
	exit 1
fi
wait "$qemu"
rc=$? qemu=
[ "$rc" = 1 ] || { echo "trace-pair: FAIL QEMU exited $rc (want 1, the guest's exit)"; fail=1; }
python3 trace-pair-report.py --allocs test --size 0 "$tmp/steps" "$tmp/kallsyms" >"$tmp/report" || {
	echo "trace-pair: FAIL the report:"
	sed 's/^/  | /' "$tmp/report"
	exit 1
}

# check NAME PATTERN FILE: passes when FILE has a line matching PATTERN (ERE).
check() {
	if grep -qE -- "$2" "$3"; then
		echo "trace-pair: PASS $1"
	else
		echo "trace-pair: FAIL $1: no line matches '$2' in:"
		sed 's/^/  | /' "$3" | head -n 30
		fail=1
	fi
}
# Segment 1: call copy, copy's 8 (two reps), call trace_mark; segment 2:
# mov, 3 x (mov mov rep dec jnz), call: each rep once, with its bytes.
check "each rep string instruction is one step" '^[0-9a-f]+ rep movsb 128$' "$tmp/steps"
check "a rep's bytes are its elements times their size" '^[0-9a-f]+ rep stosl 256$' "$tmp/steps"
check "the pair's instructions count each rep once" '^\| test \| 10 \| 17 \| 27 \| 27 \| 0 \| 0 \| movsb 128 B, stosl 256 B, stosb 100 B, stosb 100 B, stosb 100 B \| 10\+17 \|$' "$tmp/report"
check "a function's row names its reps" '^\| copy \| vmlinux \| 8 \| movsb 128 B, stosl 256 B \|$' "$tmp/report"
exit $fail
