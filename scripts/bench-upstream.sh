#!/usr/bin/env bash
# make bench SUITE=classic-all: upstream's question in one command. The
# classic design (Linux 6.12's C SLUB: CPU slabs and partial lists)
# against sheaves (7.3's SLUB), with rslub on 7.3 beside them, on the cost
# model at 2, 8, 16 and 32 vCPUs (MODES: model model8 model16 model32):
#
#   1. the synthetic rows: make bench SUITE=classic on those boots
#      (scripts/bench.sh), into DIR/synthetic;
#   2. the real programs: make bench SUITE=classic-real on the same boots
#      (scripts/bench-real.sh CLASSIC=1), each kernel's in-tree SLUB twice
#      for its A/A noise, ROUNDS (5) rounds a side, into DIR/real;
#   3. DIR/bench.json, both merged (rsbench merge: one revision), its
#      table.txt and plots, and DIR/glance.md: the "At a glance" and
#      "Beside upstream's figures" rows of docs/benchmarks.md as rsbench
#      glance prints them.
#
# The programs: those of upstream's reports (perf bench syscall fork and
# execve, will-it-scale-style mmap2 and brk1, xcpu-unix for ublk's
# cross-CPU frees), hackbench (processes and threads, pipes and sockets)
# and iperf3 TCP at 2 and 8 vCPUs (WORKLOADS); at 16 and 32 the upstream
# programs and hackbench over pipes (WORKLOADS_model16, WORKLOADS_model32):
# there the plugin runs every vCPU on one host thread and a boot's time
# grows with its work. Expect hours, not minutes, on a 2-core host:
# docs/benchmarks.md ("Running the suites") gives the measured times; QUICK=1
# (2 rounds, the upstream programs alone, 2 and 8 vCPUs) is the test of the
# command.
#
# Environment: MODES, ROUNDS, WORKLOADS, WORKLOADS_<mode>, QUICK, and
# everything scripts/bench.sh and scripts/bench-real.sh take (BENCH_KDIR,
# CLASSIC_KDIR, BENCH_BUILD, ...).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. scripts/lib.sh
export PATH=$HOME/.cargo/bin:$PATH

UPSTREAM="perf-fork perf-execve mmap2 brk1 xcpu-unix"
if [ "${QUICK:-0}" = 1 ]; then
	MODES=${MODES:-model model8}
	ROUNDS=${ROUNDS:-2}
	WORKLOADS=${WORKLOADS:-$UPSTREAM}
fi
MODES=${MODES:-model model8 model16 model32}
# shellcheck disable=SC2086 # a list of modes
MODES=$(expand_modes $MODES)
ROUNDS=${ROUNDS:-5}
WORKLOADS=${WORKLOADS:-$UPSTREAM hb-proc-pipe hb-proc-sock hb-thr-pipe hb-thr-sock iperf3-tcp}
WORKLOADS_model16=${WORKLOADS_model16:-$UPSTREAM hb-proc-pipe}
WORKLOADS_model32=${WORKLOADS_model32:-$WORKLOADS_model16}
export WORKLOADS_model16 WORKLOADS_model32

out=${BENCH_OUT:-$ROOT/results/$(date +%Y%m%d-%H%M%S)-classic-all}
mkdir -p "$out"
T0=$(date +%s)
step() { echo "bench: classic-all: [$(($(date +%s) - T0))s] $*"; }

step "1/3 the synthetic rows on $MODES (into $out/synthetic)"
# The synthetic suite keeps its own sizes and rounds: QUICK=1 is its small
# run, ROUNDS and WORKLOADS are the real programs'.
env -u ROUNDS -u WORKLOADS SUITE=classic MODES="$MODES" BENCH_OUT="$out/synthetic" scripts/bench.sh
step "2/3 the real programs on $MODES, $ROUNDS rounds (into $out/real)"
env -u QUICK -u SUITE CLASSIC=1 REAL_MODES="$MODES" ROUNDS="$ROUNDS" WORKLOADS="$WORKLOADS" \
	BENCH_OUT="$out/real" scripts/bench-real.sh
step "3/3 one bench.json, its table, plots and glance.md"
RSBENCH=$ROOT/tools/rsbench/target/release/rsbench
"$RSBENCH" merge -o "$out/bench.json" "$out/synthetic" "$out/real"
"$RSBENCH" table "$out" >"$out/table.txt"
"$RSBENCH" plot "$out" >/dev/null
"$RSBENCH" glance "$out" | tee "$out/glance.md"
step "done: $out (bench.json, table.txt, glance.md, *.png; synthetic/ and real/ as their suites left them)"
