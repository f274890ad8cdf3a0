#!/usr/bin/env bash
# make bench SUITE=real: the real-workload A/B. The in-tree SLUB against
# rslub serving the kernel's own caches (every normal kmalloc-* cache and
# skbuff_head_cache: SERVE in scripts/guest-real-lib.sh) under hackbench
# (processes and threads, pipes and sockets), iperf3 TCP and UDP over the
# guest's loopback (server and client on different CPUs), stress-ng
# --sock, and the programs of upstream's sheaves reports: perf bench
# syscall fork and execve, will-it-scale-style mmap1 and mmap2 loops and a
# cross-CPU unix socket stream (tools/realprogs, built here), in the bench
# kernel flavor. Three boots:
#
#   icount   2 vCPUs, -icount shift=0,sleep=off: each workload alternately
#            on both sides, ROUNDS rounds each after a warm-up; guest time
#            is an instruction count (the headline: minstr, and slab_kb)
#   wall     REAL_CPUS (4) vCPUs, multi-threaded TCG: the same in wall
#            time (ms), for contention
#   counters REAL_CPUS vCPUs, wall clock, a counters build of rslub.ko
#            (the bench build compiles them out): rslub's counters over one
#            run of each workload, with the locked and unlocked cmpxchg
#            redos (the rows rslabinfo -r shows as "Cmpxchg_double Looping")
#
# Results go to results/<timestamp>-real/ (vm-<mode>.log, bench.json,
# table.txt, PNG plots, report.md), like the other suites.
#
# Environment: ROUNDS (5), REAL_MODES ("icount wall counters"), REAL_CPUS
#   (4), WORKLOADS (scripts/guest-real-lib.sh's names), RSLUB_PARAMS,
#   SERVE ('*': every cache rslub can serve), the workload sizes
#   (HB_GROUPS HB_LOOPS IPERF_TCP_BYTES IPERF_TCP_LEN IPERF_UDP_BYTES
#   IPERF_UDP_LEN NG_WORKERS NG_OPS PERF_FORK_LOOPS PERF_EXECVE_LOOPS
#   MMAP_PROCS MMAP_ITERS MMAP_MIB MMAP_DIR XCPU_MSGS XCPU_BYTES XCPU_FROM
#   XCPU_TO XCPU_SNDBUF),
#   BENCH_KDIR (a built bench kernel: no setup), BENCH_BUILD, QUICK=1
#   (2 rounds, no wall boot), NO_SERVE_OK=1 (a run without rslub's serving
#   interface passes with the in-tree side alone: for testing the scripts).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. scripts/lib.sh
export PATH=$HOME/.cargo/bin:$PATH

ROUNDS=${ROUNDS:-5}
REAL_MODES=${REAL_MODES:-icount wall counters}
REAL_CPUS=${REAL_CPUS:-4}
if [ "${QUICK:-0}" = 1 ]; then
	ROUNDS=2
	REAL_MODES=${QUICK_MODES:-icount counters}
fi
fail() { echo "bench: FAILED: $*"; exit 1; }

if [ -n "${BENCH_KDIR:-}" ]; then
	BKDIR=$BENCH_KDIR
else
	scripts/setup.sh --flavor bench
	BKDIR=$(scripts/setup.sh --flavor bench --print-kdir)
fi
command -v hackbench >/dev/null && command -v iperf3 >/dev/null && command -v stress-ng >/dev/null ||
	fail "hackbench, iperf3 or stress-ng missing on the host (the guest uses the host's): run scripts/setup.sh"
case ${WORKLOADS:-perf-} in
*perf-*)
	perf bench syscall 2>&1 | grep -w execve >/dev/null ||
		fail "the host's perf has no 'perf bench syscall fork/execve' ($(perf --version 2>&1)): run scripts/setup.sh" ;;
esac

# Two module builds in copies of the tree: the bench build (counters
# compiled out, what is timed) and a counters build (the counters boot).
BUILD=${BENCH_BUILD:-${RSLUB_CACHE:-$HOME/.cache/rslub}/bench-build}
build() {	# build DIR STATS
	copy_tree "$1"
	echo "bench: building modules for $BKDIR (STATS=$2) in $1"
	make -s -C "$1" KDIR="$BKDIR" STATS="$2" modules
	make -s -C "$1/tools/realprogs"
}
build "$BUILD" 0
case " $REAL_MODES " in *" counters "*) build "$BUILD-stats" 1 ;; esac

echo "bench: building tools/rsbench"
(cd tools/rsbench && cargo build --release --quiet)
RSBENCH=$ROOT/tools/rsbench/target/release/rsbench

out=$ROOT/results/$(date +%Y%m%d-%H%M%S)-real
mkdir -p "$out"
T0=$(date +%s)
# What the guest script passes on to the workloads.
GUEST_ENV="ROUNDS=$ROUNDS RSLUB_PARAMS='${RSLUB_PARAMS:-}'"
for v in WORKLOADS SERVE HB_GROUPS HB_LOOPS IPERF_TCP_BYTES IPERF_TCP_LEN IPERF_UDP_BYTES \
	IPERF_UDP_LEN NG_WORKERS NG_OPS PIN_SERVER PIN_CLIENT WARMUP COUNTER_ROUNDS \
	PERF_FORK_LOOPS PERF_EXECVE_LOOPS MMAP_PROCS MMAP_ITERS MMAP_MIB MMAP_DIR \
	XCPU_MSGS XCPU_BYTES XCPU_FROM XCPU_TO XCPU_SNDBUF; do
	[ -z "${!v+x}" ] || GUEST_ENV="$GUEST_ENV $v='${!v}'"
done

# run MODE CPUS QEMU_OPTS DIR
run() {
	local mode=$1 cpus=$2 qopts=$3 dir=$4 log=$out/vm-$1.log
	echo "bench: [$(($(date +%s) - T0))s] $mode boot, $cpus vCPUs (log: $log)"
	# As in bench.sh: judged by its output (VM_STALL), a quiet console.
	VM_CPUS=$cpus VM_MEM=${VM_MEM:-3G} VM_QEMU_OPTS=$qopts VM_STALL=${VM_STALL:-2400} \
		VM_TIMEOUT=${VM_TIMEOUT:-10800} VM_APPEND=loglevel=4 VM_CONSOLE=$out/console-$1.log \
		scripts/vm.sh "$BKDIR" "cd $dir && MODE=$mode $GUEST_ENV scripts/guest-real.sh" 2>&1 |
		tee "$log" | grep --line-buffered "^bench:" | sed -u 's/^/  /' || true
	if grep -q "^bench: FAILED" "$log" || ! grep -q "^bench: guest done (rc 0)" "$log"; then
		grep -E "^bench: FAILED|^vm:" "$log" | head -n 10
		fail "the $mode run did not complete (see $log)"
	fi
	if grep -q "^bench: no-serve:" "$log" && [ "${NO_SERVE_OK:-0}" != 1 ]; then
		fail "no rslub side: $(grep -m1 '^bench: no-serve:' "$log" | sed 's/^bench: no-serve: //')"
	fi
}

for mode in $REAL_MODES; do
	case $mode in
	icount) run icount 2 "-icount shift=0,sleep=off" "$BUILD" ;;
	wall) run wall "$REAL_CPUS" "" "$BUILD" ;;
	counters)
		if grep -qs "^bench: no-serve:" "$out"/vm-*.log; then
			echo "bench: counters boot skipped (no serving interface)"
			continue
		fi
		run counters "$REAL_CPUS" "" "$BUILD-stats" ;;
	*) fail "unknown mode '$mode' (icount, wall, counters)" ;;
	esac
done

logs=()
cpus_meta=""
for mode in $REAL_MODES; do
	[ -f "$out/vm-$mode.log" ] || continue
	logs+=("$out/vm-$mode.log")
	[ "$mode" = icount ] && n=2 || n=$REAL_CPUS
	cpus_meta="${cpus_meta:+$cpus_meta, }$mode $n"
done
git_rev=$(git describe --always --dirty 2>/dev/null || echo unknown)
qemu=$(qemu-system-x86_64 --version | head -n 1 | sed 's/^QEMU emulator version //')
sizes=$(grep -h -m1 "^bench: sizes:" "${logs[@]}" | head -n 1 | sed 's/^bench: sizes: //')
serve=$(grep -h -m1 "^rslub_bench: serve " "${logs[@]}" | head -n 1 | sed 's/^rslub_bench: serve //')
"$RSBENCH" parse -o "$out/bench.json" \
	--meta "kernel=$(basename "$BKDIR")" --meta "qemu=$qemu" \
	--meta "mode=$(echo "$REAL_MODES" | tr ' ' ,)" --meta "cpus=$cpus_meta" \
	--meta nodes=1 --meta "date=$(date -u +%FT%TZ)" --meta "git=$git_rev" \
	--meta suite=real --meta "quick=${QUICK:-0}" --meta "rounds=$ROUNDS" \
	--meta "rslub_params=${RSLUB_PARAMS:-}" --meta "workloads=$sizes" \
	${serve:+--meta "served=$serve"} "${logs[@]}"
"$RSBENCH" table "$out" | tee "$out/table.txt"
"$RSBENCH" plot "$out" >/dev/null
echo "bench: [$(($(date +%s) - T0))s] done: $out (bench.json, table.txt, report.md, *.png)"
