#!/usr/bin/env bash
# The cost model's plugin in time: the same guest work booted under plain
# -icount, under the plugin counting instructions only (model=off, the
# icount boot of make bench), under the model in order (the server
# profile's boot) and under the model with the interval core (core=, the
# server-ooo profile's boot: make bench's model boots), each boot also run
# with no work, so that the work's own CPU time is the difference. Prints
# one row per boot: the work's CPU seconds (QEMU's user and system time,
# the boot's subtracted) and its multiple of plain -icount's.
#
# The work (WORK, default below: hackbench over sockets, threads and pipes,
# 300 fork+exec, 128 MB read from /dev/zero) starts with a mark and ends
# with one: the model sees memory from the first mark on, as in make bench.
# Each step prints a line (the VM's watcher judges progress by output).
#
# Usage: scripts/plugin-cost.sh [KDIR]   (default: the test kernel)
# Environment: WORK (a guest shell command), BOOTS ("plain off model core";
#   plainq: plain -icount on the patched QEMU at the core boot's quantum),
#   VM_CPUS (2), VM_STALL (1800: a boot's longest silence, in seconds).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. scripts/lib.sh
KDIR=${1:-$(scripts/setup.sh --print-kdir)}
BOOTS=${BOOTS:-plain off model core}
M=tools/costmodel/guest/mark
WORK=${WORK:-"$M 1 && hackbench -g 4 -l 50 && hackbench -T -g 4 -l 50 -s 512 && hackbench -g 4 -l 50 --pipe && for i in \$(seq 300); do /bin/true; done && dd if=/dev/zero of=/dev/null bs=64k count=2000 && $M 2"}
make -s costmodel
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

opts() {	# opts BOOT: the QEMU options of a boot
	case $1 in
	plain) echo "-icount shift=0,sleep=off" ;;
	# Plain -icount on the patched QEMU at make bench's quantum: what the
	# quantum alone costs the core boot, which runs at it.
	plainq) echo "-icount shift=0,sleep=off -accel tcg,rr-quantum=$(model_quantum)" ;;
	off) model_qemu_opts "$KDIR" "$out/counts.txt" model=off ;;
	model) model_qemu_opts "$KDIR" "$out/counts.txt" ;;
	core) MODEL_PROFILE=server-ooo model_boot_opts "$KDIR" "$out/counts.txt" ;;
	*) echo "plugin-cost: unknown boot '$1' (plain, plainq, off, model, core)" >&2; return 1 ;;
	esac
}

cpu() {	# cpu BOOT CMD: CPU seconds (user + system) of one boot running CMD
	local q t
	q=$(opts "$1")
	TIMEFORMAT='%U %S'
	# A model boot runs a program 6-8 times slower than plain -icount,
	# more with other work on the host: the watcher's patience to match.
	t=$( { time VM_QEMU=$(vm_qemu_for "$q") VM_STALL=${VM_STALL:-1800} VM_QEMU_OPTS=$q VM_APPEND=loglevel=4 scripts/vm.sh "$KDIR" "$2" >"$out/vm.log" 2>&1; } 2>&1) ||
		{ echo "plugin-cost: the $1 boot failed:" >&2; tail -n 5 "$out/vm.log" >&2; return 1; }
	echo "$t" | awk '{ printf "%.1f", $1 + $2 }'
}

printf '%-8s %10s %10s %10s %8s\n' boot "with work" "boot only" work "x plain"
base=""
for b in $BOOTS; do
	with=$(cpu "$b" "cd $ROOT && ($WORK)")
	none=$(cpu "$b" true)
	work=$(awk -v a="$with" -v b="$none" 'BEGIN { printf "%.1f", a - b }')
	[ -n "$base" ] || base=$work
	printf '%-8s %10s %10s %10s %8s\n' "$b" "$with" "$none" "$work" \
		"$(awk -v w="$work" -v p="$base" 'BEGIN { printf "%.2f", w / p }')"
done
