#!/usr/bin/env bash
# make trace-pair: the instructions one alloc+free pair executes, counted by
# single-stepping the guest under gdb (QEMU's gdbstub, TCG), per allocator
# of the bench (slub, rslub, served) and per function on the way. This is
# the objdump count of a path made exact: every executed instruction is
# listed, with its function, so no branch is guessed.
#
# The bench kernel and module build of make bench are used (the numbers
# are the bench's). The guest loads rslub.ko and the bench module with
# workloads=trace; the module warms each allocator's cache, then waits for
# trace_go. This script attaches gdb, sets a hardware breakpoint on
# rslub_bench_trace_mark(), sets trace_go and steps from mark to mark
# (scripts/trace-pair-gdb.py); QEMU keeps interrupts and timers off the
# stepping vCPU, so nothing else lands in a pair.
#
# Results go to results/<timestamp>-trace/: steps.txt (every pc), kallsyms,
# trace.txt (per allocator and operation: instructions and the functions
# they were spent in; scripts/trace-pair-report.py). A rep string
# instruction is one instruction, listed with its bytes (the gdb script
# steps through its iterations; scripts/test-trace-pair.sh checks it
# without a kernel).
#
# Environment: TRACE_ALLOCS (slub,rslub,served,kmalloc,kserved), TRACE_SIZE (64),
#   TRACE_BULK (N: one bulk call of N objects for each alloc and free),
#   RSLUB_PARAMS (for rslub.ko), BENCH_KDIR (as for make bench), TRACE_BUILD
#   (where the modules are built), TRACE_PORT (gdb port, 1234).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. scripts/lib.sh

ALLOCS=${TRACE_ALLOCS:-slub,rslub,served,kmalloc,kserved}
SIZE=${TRACE_SIZE:-64}
PORT=${TRACE_PORT:-1234}
command -v gdb >/dev/null || { echo "trace-pair: gdb not found (make setup installs it)" >&2; exit 2; }

if [ -n "${BENCH_KDIR:-}" ]; then
	BKDIR=$BENCH_KDIR
else
	scripts/setup.sh --flavor bench
	BKDIR=$(scripts/setup.sh --flavor bench --print-kdir)
fi
# A build directory of its own: a make bench running meanwhile reads its
# modules from bench-build.
BUILD=${TRACE_BUILD:-${RSLUB_CACHE:-$HOME/.cache/rslub}/trace-build}
copy_tree "$BUILD"
echo "trace-pair: building modules for $BKDIR (STATS=0) in $BUILD"
make -s -C "$BUILD" KDIR="$BKDIR" STATS=0 modules

out=$ROOT/results/$(date +%Y%m%d-%H%M%S)-trace
mkdir -p "$out"
rw=$(mktemp -d /tmp/rslub-trace.XXXXXX)
trap 'rm -rf "$rw"' EXIT

# The guest: load, publish the symbols (while the bench module is loaded:
# it unloads itself when done) and the mark's address, wait for the module.
guest="cd $BUILD && dmesg -n 1 &&
{ [ ! -w /sys/module/kunit/parameters/filter_glob ] || printf none >/sys/module/kunit/parameters/filter_glob; } &&
insmod rslub.ko ${RSLUB_PARAMS:-} &&
{ insmod bench/rslub_bench.ko workloads=trace allocs=$ALLOCS sizes=$SIZE rounds=1 trace_bulk=${TRACE_BULK:-0} >$rw/insmod.log 2>&1; echo \$? >$rw/insmod.rc; } &
while ! [ -e /sys/module/rslub_bench/parameters/trace_go ]; do sleep 0.2; done;
cat /proc/kallsyms >$rw/kallsyms; grep -w rslub_bench_trace_mark $rw/kallsyms | cut -d' ' -f1 >$rw/mark.tmp && mv $rw/mark.tmp $rw/mark;
while ! [ -e $rw/armed ]; do sleep 0.2; done;
echo 1 >/sys/module/rslub_bench/parameters/trace_go; wait;
dmesg | grep rslub_bench; echo trace-guest-done"

echo "trace-pair: booting $BKDIR with a gdb stub on :$PORT"
VM_CPUS=2 VM_MEM=2G VM_RWDIR=$rw VM_QEMU_OPTS="-gdb tcp::$PORT" VM_STALL=600 VM_TIMEOUT=1800 \
	scripts/vm.sh "$BKDIR" "$guest" >"$out/vm.log" 2>&1 &
vm=$!

for _ in $(seq 1800); do
	[ -s "$rw/mark" ] && break
	kill -0 $vm 2>/dev/null || { cat "$out/vm.log"; echo "trace-pair: FAILED: the guest ended before the mark" >&2; exit 1; }
	sleep 1
done
[ -s "$rw/mark" ] || { echo "trace-pair: FAILED: no mark address from the guest" >&2; exit 1; }
mark=0x$(head -n 1 "$rw/mark")
nallocs=$(echo "$ALLOCS" | tr ',' '\n' | grep -c .)
echo "trace-pair: rslub_bench_trace_mark at $mark; stepping $nallocs allocators"
# gdb -batch exits 0 when its script fails: its log says.
if ! MARK=$mark ALLOCS=$nallocs ARMED=$rw/armed STEPS=$out/steps.txt \
	gdb -q -batch -nx -ex "set pagination off" -ex "set architecture i386:x86-64" -ex "target remote :$PORT" \
	-x scripts/trace-pair-gdb.py >"$out/gdb.log" 2>&1 || grep -q Traceback "$out/gdb.log"; then
	tail -n 20 "$out/gdb.log"
	echo "trace-pair: FAILED: gdb (log: $out/gdb.log)" >&2
	kill $vm 2>/dev/null
	exit 1
fi
wait $vm || { tail -n 20 "$out/vm.log"; echo "trace-pair: FAILED: the guest (log: $out/vm.log)" >&2; exit 1; }
# The bench module's success is -EAGAIN (it does not stay loaded).
grep -q trace-guest-done "$out/vm.log" && grep -q "rslub_bench: done" "$out/vm.log" &&
	{ [ "$(cat "$rw/insmod.rc")" = 0 ] || grep -q "temporarily unavailable" "$rw/insmod.log"; } || {
	cat "$rw/insmod.log" "$out/vm.log" | tail -n 20
	echo "trace-pair: FAILED: the bench module did not complete" >&2
	exit 1
}
cp "$rw/kallsyms" "$out/kallsyms"
python3 scripts/trace-pair-report.py --allocs "$ALLOCS" --size "$SIZE" \
	--kernel "$(basename "$BKDIR")" "$out/steps.txt" "$out/kallsyms" | tee "$out/trace.txt"
echo "trace-pair: done: $out"
