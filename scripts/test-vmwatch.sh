#!/usr/bin/env bash
# The guest watcher's decisions (scripts/vmwatch.py), on stand-ins for vng:
# small shell commands that print like a guest (stdout: the guest command's
# output; stderr: the kernel console) and behave like one that works, hangs
# or whose QEMU dies. Seconds, no VM. One line per check,
# "vmwatch: PASS|FAIL <case>"; make check counts them.
set -uo pipefail
cd "$(dirname "$0")" || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0

# expect NAME RC PATTERN STALL COMMAND: runs COMMAND under the watcher with
# a stall limit of STALL seconds; passes when it exits RC and its stderr
# (the watcher's lines) matches PATTERN (an ERE).
expect() {
	local name=$1 want=$2 pattern=$3 stall=$4 rc
	shift 4
	n=$((n + 1))
	python3 vmwatch.py --console "$tmp/console.$n" --monitor "$tmp/none.sock" \
		--qemu-status "$tmp/qemu.status" --qemu-log "$tmp/qemu.log" \
		--stall "$stall" -- "$@" >"$tmp/out.$n" 2>"$tmp/err.$n" </dev/null
	rc=$?
	if [ "$rc" = "$want" ] && grep -qE -- "$pattern" "$tmp/err.$n"; then
		echo "vmwatch: PASS $name"
	else
		echo "vmwatch: FAIL $name: exit $rc (want $want), stderr:"
		sed 's/^/  | /' "$tmp/err.$n" | head -n 10
	fi
}

echo "vmwatch: plan 8"
# A guest that prints now and then, each gap below the limit, ends 0.
expect "progress keeps a slow guest alive" 0 "longest wait for progress: [12] s" 3 \
	sh -c 'for i in 1 2 3 4; do echo "line $i"; sleep 1.5; done'
# KUnit results on the console count, other console lines do not.
expect "KTAP results on the console are progress" 0 "longest wait" 3 \
	sh -c 'echo started; for i in 1 2 3 4; do sleep 1.5; echo "[ 1.0]     ok $i case" >&2; done'
expect "other console lines are not progress" 124 "^vm: STUCK: no guest output and no KTAP result line for 2 s" 2 \
	sh -c 'echo started; for i in 1 2 3 4 5 6 7 8; do echo "[ 1.0] WARNING: still here" >&2; sleep 0.5; done; sleep 60'
# Before the command's first line the boot's console lines count.
expect "a boot that prints is progress" 0 "longest wait" 2 \
	sh -c 'for i in 1 2 3 4; do echo "[ $i.0] booting" >&2; sleep 1; done; echo started'
expect "a silent boot is stuck" 124 "^vm: STUCK: the boot printed nothing" 2 \
	sh -c 'sleep 30'
# QEMU dying before the command began: once more, said; the second run's
# status is the verdict.
expect "QEMU dying at boot is retried once" 0 "machine ended before the guest command began \(exit 255\): QEMU said: qemu-system-x86_64: .*Assertion" 5 \
	sh -c "if [ -e $tmp/died ]; then echo started; else touch $tmp/died;
		echo 'qemu-system-x86_64: system/physmem.c:2678: iotlb_to_section: Assertion failed.' >&2; exit 255; fi"
# A guest that resets itself early in the boot (vng's -no-reboot: QEMU
# exits 0, vng 255, the console has the kernel's first line): the status
# the wrapper wrote and QEMU's "Triple fault" said, once more.
expect "a guest reset at boot is said and retried once" 0 "exit 255\): QEMU exited with status 0; the guest triple-faulted.*2 CPU resets logged.*last line: \[ *0\.0+\] Linux version" 5 \
	sh -c "if [ -e $tmp/reset ]; then echo started; else touch $tmp/reset;
		echo '[    0.000000] Linux version 7.3.4' >&2;
		printf 'CPU Reset (CPU 0)\nCPU Reset (CPU 1)\nTriple fault\n' >$tmp/qemu.log; echo 0 >$tmp/qemu.status; exit 255; fi"
# Twice: the second run's status stands, and the log says both.
expect "a boot that ends twice fails, said twice" 255 "began again \(exit 255\): QEMU killed by signal 9" 5 \
	sh -c "echo 137 >$tmp/qemu.status; exit 255"
