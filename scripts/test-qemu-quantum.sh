#!/usr/bin/env bash
# Checks the patched QEMU of scripts/qemu-build.sh (patches/qemu): boots the
# test kernel under -icount with 2 vCPUs, runs the same busy loop pinned on
# each CPU (tools/qemu-quantum/spin.c) under a plugin that records the vCPU
# of every executed block (tools/qemu-quantum/turns.c), and measures the
# vCPUs' turns while both spin: the longest run of consecutive instructions
# of one vCPU before the other runs.
#
#   rr-quantum=Q    the longest turn is at most Q plus one block
#   no rr-quantum   turns are far longer (the vCPU's share of the time to the
#                   next timer: hundreds of thousands of instructions)
#   vCPU index      each vCPU is seen executing the loop's block about as
#                   often as the loop's iterations (the plugin index patch);
#                   the stock binary (STOCK=1, informational) puts nearly
#                   all of them on the vCPU that translated the block
#
# Usage: scripts/test-qemu-quantum.sh
# Environment: QUANTA (default "1000 200"), SPIN_ITERS (loop iterations per
#   CPU, 4 instructions each; default 12500000), STOCK (1: also run Debian's
#   binary; default 1), KDIR (default: the cached test kernel), RSLUB_CACHE.
# Builds the patched QEMU first if it is not cached (about 4 min).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
QUANTA=${QUANTA:-1000 200}
N=${SPIN_ITERS:-12500000}
STOCK=${STOCK:-1}

die() { echo "test-qemu-quantum: FAILED: $*" >&2; exit 1; }

bin=$("$ROOT/scripts/qemu-build.sh" | tail -n 1)
[ -x "$bin" ] || die "scripts/qemu-build.sh gave no binary"
inc=$(dirname "$(dirname "$bin")")/include
[ -f "$inc/qemu-plugin.h" ] || die "no $inc/qemu-plugin.h beside the binary (rebuild: remove $(dirname "$(dirname "$bin")"))"
kdir=${KDIR:-$("$ROOT/scripts/setup.sh" --print-kdir)}
[ -f "$kdir/arch/x86/boot/bzImage" ] || die "no kernel image in $kdir (run 'make setup')"

# The guest runs programs from the host's file system: a directory in /tmp.
work=$(mktemp -d /tmp/rslub-quantum.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Static (guest execs over 9p are slow), text far from the 0x400000 where
# other static programs sit: the plugin matches the loop by address.
gcc -O2 -Wall -Wextra -Werror -static -Wl,-Ttext-segment=0x60000000 \
	-o "$work/spin" "$ROOT/tools/qemu-quantum/spin.c" || die "spin.c does not build"
# -Wno-unused-parameter: the callbacks' signatures are the plugin API's.
# shellcheck disable=SC2046 # pkg-config's flags are words
gcc -O2 -Wall -Wextra -Wno-unused-parameter -Werror -shared -fPIC \
	$(pkg-config --cflags glib-2.0) -I"$inc" \
	-o "$work/turns.so" "$ROOT/tools/qemu-quantum/turns.c" || die "turns.c does not build"
sym() { nm -S "$work/spin" | awk -v s="$1" '$4 == s { print $1, $2 }'; }
read -r spin_addr spin_size < <(sym spin) || true
read -r done_addr _ < <(sym spin_done) || true
if [ -z "${spin_addr:-}" ] || [ -z "${done_addr:-}" ]; then
	die "no spin/spin_done symbols in $work/spin"
fi
lo=$((16#$spin_addr))
hi=$((lo + 16#$spin_size))
done_pc=$((16#$done_addr))

# boot NAME QEMU [QEMU OPTIONS]: one guest; the plugin's report in $work/NAME.txt.
boot() {
	local name=$1 qemu=$2 opts=${3:-} t0
	t0=$(date +%s)
	if ! VM_QEMU=$qemu VM_TIMEOUT=${VM_TIMEOUT:-1200} \
		VM_QEMU_OPTS="-icount shift=0,sleep=off${opts:+ $opts} -plugin $work/turns.so,out=$work/$name.txt,lo=$lo,hi=$hi,done=$done_pc" \
		"$ROOT/scripts/vm.sh" "$kdir" "$work/spin $N" >"$work/$name.log" 2>&1; then
		tail -n 5 "$work/$name.log" >&2
		die "the guest of run '$name' failed (its output above)"
	fi
	[ -s "$work/$name.txt" ] || die "run '$name': the plugin wrote no report"
	echo "  ($name: $(($(date +%s) - t0)) s wall)" >&2
}
val() { sed -n "s/^$2=//p" "$work/$1.txt"; }

pass=0
fail=0
check() { # check DESCRIPTION CONDITION...
	local what=$1
	shift
	if "$@"; then
		pass=$((pass + 1))
		echo "  ok: $what"
	else
		fail=$((fail + 1))
		echo "  FAIL: $what"
	fi
}
# loop_ok NAME: each vCPU executed the loop's block N to 1.1 N times (the
# extra: blocks cut short at the end of a turn).
loop_ok() {
	local c
	for c in "$(val "$1" loop_execs_vcpu0)" "$(val "$1" loop_execs_vcpu1)"; do
		[ -n "$c" ] && [ "$c" -ge "$N" ] && [ "$c" -le $((N + N / 10)) ] || return 1
	done
}
report() {
	printf '%-14s %10s %10s %8s %12s %12s\n' "$1" "$(val "$1" max_turn)" "$(val "$1" mean_turn)" \
		"$(val "$1" turns)" "$(val "$1" loop_execs_vcpu0)" "$(val "$1" loop_execs_vcpu1)"
}

echo "QEMU: $bin" >&2
echo "kernel: $kdir; 2 vCPUs, 2 x $N loop iterations; loop block at $(printf '%#x' "$lo")" >&2
runs=(none)
boot none "$bin"
for q in $QUANTA; do
	boot "q$q" "$bin" "-accel tcg,rr-quantum=$q"
	runs+=("q$q")
done
if [ "$STOCK" = 1 ]; then
	boot stock "$(command -v qemu-system-x86_64)"
fi

echo
printf '%-14s %10s %10s %8s %12s %12s\n' run max_turn mean_turn turns loop_vcpu0 loop_vcpu1
for r in "${runs[@]}"; do report "$r"; done
if [ "$STOCK" = 1 ]; then report stock; fi
echo "(turns: instructions in a row on one vCPU while both spin; loop_vcpuN:"
echo " executions of the loop's block reported for vCPU N, $N expected each)"
echo

maxq=0
for q in $QUANTA; do
	[ "$q" -gt "$maxq" ] && maxq=$q
	check "rr-quantum=$q: both vCPUs spun together (window $(val "q$q" window))" [ "$(val "q$q" window)" = closed ]
	check "rr-quantum=$q: longest turn $(val "q$q" max_turn) <= $q + one block ($(val "q$q" max_block))" \
		[ "$(val "q$q" max_turn)" -le $((q + $(val "q$q" max_block))) ]
	check "rr-quantum=$q: each vCPU seen running the loop's block" loop_ok "q$q"
done
check "no quantum: longest turn $(val none max_turn) > 10 x $maxq" [ "$(val none max_turn)" -gt $((10 * maxq)) ]
check "no quantum: each vCPU seen running the loop's block" loop_ok none
if [ "$STOCK" = 1 ]; then
	s0=$(val stock loop_execs_vcpu0)
	s1=$(val stock loop_execs_vcpu1)
	echo "  (stock QEMU, not checked: the loop's block reported ${s0:-0} times on vCPU 0" \
		"and ${s1:-0} on vCPU 1)"
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
