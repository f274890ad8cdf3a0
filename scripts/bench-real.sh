#!/usr/bin/env bash
# make bench SUITE=real: the real-workload A/B. The in-tree SLUB against
# rslub serving the kernel's own caches (every cache it can, the fork, exec
# and mmap ones too: SERVE in scripts/guest/real-lib.sh) under hackbench
# (processes and threads, pipes and sockets), iperf3 TCP and UDP over the
# guest's loopback (server and client on different CPUs), stress-ng
# --sock, and the programs of upstream's sheaves reports: perf bench
# syscall fork and execve, will-it-scale-style mmap1, mmap2 and brk1 loops and a
# cross-CPU unix socket stream (tools/realprogs, built here), in the bench
# kernel flavor. Three boots:
#
#   icount   2 vCPUs, -icount shift=0,sleep=off: each workload alternately
#            on each side (in-tree, rslub, and rslub again: the A/A
#            noise floor), ROUNDS rounds each after a warm-up; guest time
#            is an instruction count (the headline: minstr, and slab_kb),
#            under the cost model's plugin with model=off, each run
#            between marks, so that rsbench counts a rep string
#            instruction once (ICOUNT_PLUGIN=0: the clock alone)
#   wall     REAL_CPUS (4) vCPUs, multi-threaded TCG: the same in wall
#            time (ms), for contention
#   model    (REAL_MODES=model) the icount boot under the cost model's
#            plugin: each run's modeled cycles and events besides minstr,
#            each program at a fifth of its size (MODEL_SIZES below)
#   model8   the same on 8 vCPUs over 2 NUMA nodes (4 a node): transfers
#            across nodes, more CPUs freeing each other's objects; the
#            mmap programs run a task a CPU, perf bench 4 copies at once.
#            MODES=model (make bench SUITE=real MODES=model) is both boots,
#            run at the same time (each takes one host core)
#   model16, model32  the same on 16 vCPUs over 2 nodes and 32 over 4 (8
#            a node), the programs shorter (MODEL16_SIZES, MODEL32_SIZES):
#            make bench SUITE=real REAL_MODES=model16 (a scale run: perf
#            bench fork and execve, mmap2, brk1 and hackbench, 2 rounds,
#            no A/A side but in an experiment; WORKLOADS, ROUNDS and AA
#            say otherwise)
#   counters REAL_CPUS vCPUs, wall clock, a counters build of rslub.ko
#            (the bench build compiles them out): rslub's counters over one
#            run of each workload, with the locked and unlocked cmpxchg
#            redos (the rows rslabinfo -r shows as "Cmpxchg_double Looping")
#
# Results go to results/<timestamp>-real/ (vm-<mode>.log, bench.json,
# table.txt, PNG plots, report.md), like the other suites.
#
# CLASSIC=1 (make bench SUITE=classic-real): the same programs on two
# kernels, as upstream weighed sheaves against the design before them. For
# each mode, first a boot of the classic kernel (Linux 6.12's C SLUB: CPU
# slabs and partial lists; scripts/setup.sh --flavor classic, or
# CLASSIC_KDIR) with sides slub and slub-aa (the in-tree SLUB twice: its A/A
# noise; rslub.ko is not loaded there), logs vm-classic-<mode>.log; then the
# bench kernel's (7.3's sheaves) with slub, slub-aa and rslub serving. The
# table names 6.12's SLUB classic, 7.3's sheaves (their second runs
# classic-aa, sheaves-aa), compares all with classic and calls
# sheaves/classic only outside the larger of the two A/A noises. Modes
# (REAL_MODES) icount model model8 by default, model alone with QUICK=1
# (2 rounds); counters boots run on 7.3 only; AA=1 adds rslub's own A/A.
# Results go to results/<timestamp>-classic-real/.
#
# EXPERIMENT=name runs a seed's experiment on the same programs, rslub
# against itself (the seeds' threads judged their changes on hackbench and
# slabinfo -r; here the counters boot gives the redo table per busy cache):
#   cpu-partial  rslub, and rslub with cpu_partial=0, in one boot
#   max-empty    rslub (max_empty chosen by size), and 0 and 64, in one boot
#   fill         the fill_ge build (>= cpu_partial/2) against the default
#   cmpxchg      the locked_cmpxchg build against the default
#   free-batch   the free_batch build with free_batch=8 and 32 against the
#                default
# EXPERIMENT takes several names at once ("cpu-partial fill"), or all
# (the five): the tunables' sides share the default build's boots, each
# build variant has its own. The tunables are written to every served
# cache's sysfs directory once serving started (scripts/guest/real.sh,
# SIDES). A build variant is a different rslub.ko, and rmmod of one needs
# every object it served back, which the caches of long-lived kernel
# objects (inodes, dentries, tasks) never give with SERVE='*': each build
# has boots of its own (logs vm-<mode>-<build>.log), each with the
# in-tree side, named slub-<build> in the results: the same allocator as
# the default boots' slub, so the two tell how far two boots differ.
# The A/A side (rslub again) runs in the default build's boots; rsbench
# table's experiment section calls a side against rslub only outside the
# A/A noise (and for a build variant, outside the boots' difference too).
# With hackbench's workloads named hb-...-gN, several group counts:
#   make bench SUITE=real EXPERIMENT=all REAL_MODES="model8 model16" \
#     WORKLOADS="hb-proc-pipe-g2 hb-proc-sock-g2 hb-proc-sock-g8" ROUNDS=3
#
# Environment: ROUNDS (5), REAL_MODES ("icount wall counters"), REAL_CPUS
#   (4), WORKLOADS (scripts/guest/real-lib.sh's names), RSLUB_PARAMS,
#   SERVE ('*', the default: every cache rslub can serve), the workload sizes
#   (HB_GROUPS HB_LOOPS IPERF_TCP_BYTES IPERF_TCP_LEN IPERF_UDP_BYTES
#   IPERF_UDP_LEN NG_WORKERS NG_OPS PERF_FORK_LOOPS PERF_EXECVE_LOOPS
#   MMAP_PROCS MMAP_ITERS MMAP_MIB MMAP_DIR XCPU_MSGS XCPU_BYTES XCPU_FROM
#   XCPU_TO XCPU_SNDBUF),
#   EXPERIMENT (above), BENCH_KDIR (a built bench kernel: no setup),
#   BENCH_BUILD, QUICK=1, ICOUNT_PLUGIN (1), AA (1 but with CLASSIC=1: the
#   A/A side, rslub served twice, about half as much time again)
#   (2 rounds, no wall boot), NO_SERVE_OK=1 (a run without rslub's serving
#   interface passes with the in-tree side alone: for testing the scripts),
#   CLASSIC=1 (above; AA then 0 by default), CLASSIC_KDIR (a built classic
#   kernel: no setup), WORKLOADS_<mode> (a mode's own programs, e.g.
#   WORKLOADS_model32), BENCH_OUT (the results directory: make bench
#   SUITE=classic-all puts its two parts in one).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. scripts/lib.sh
use_quantum || exit 1
export PATH=$HOME/.cargo/bin:$PATH

ROUNDS_GIVEN=${ROUNDS:-}
ROUNDS=${ROUNDS:-5}
CLASSIC=${CLASSIC:-0}
# make bench MODES=...: the boots, model meaning the cost model's two (on
# 2 and on 8 vCPUs), unless REAL_MODES or QUICK_MODES say otherwise.
if [ -n "${MODES:-}" ]; then
	# shellcheck disable=SC2086 # a list of modes
	m=$(expand_modes $MODES)
	REAL_MODES=${REAL_MODES:-$m} QUICK_MODES=${QUICK_MODES:-$m}
fi
if [ "$CLASSIC" = 1 ]; then
	# The comparison of upstream's reports: the 2-vCPU boots and 8 vCPUs
	# over 2 nodes, instructions and the cost model.
	REAL_MODES=${REAL_MODES:-icount model model8} QUICK_MODES=${QUICK_MODES:-model}
fi
REAL_MODES=${REAL_MODES:-icount wall counters}
REAL_CPUS=${REAL_CPUS:-4}
# A scale run (REAL_MODES of model16 and model32 only): the programs of
# upstream's reports at 16 and 32 vCPUs, 2 rounds, no A/A side (about 30
# to 60 min a mode on a 2-core host): figures, not verdicts.
if [ -z "$(echo "$REAL_MODES" | tr ' ' '\n' | grep -v '^model16$\|^model32$\|^$')" ]; then
	WORKLOADS=${WORKLOADS:-perf-fork perf-execve mmap2 brk1 hb-proc-pipe}
	ROUNDS=${ROUNDS_GIVEN:-2}
	# An experiment keeps its A/A side: its verdicts need it.
	[ -n "${EXPERIMENT:-}" ] || AA=${AA:-0}
fi
if [ "${QUICK:-0}" = 1 ]; then
	ROUNDS=2
	REAL_MODES=${QUICK_MODES:-icount counters}
fi
fail() { echo "bench: FAILED: $*"; exit 1; }

# Experiments (EXPERIMENT: one or several names, or all): the tunables'
# sides join the default build's boots; each build variant has boots of
# its own (VARIANT_BUILDS), with its sides (variant_sides).
SIDES="slub rslub" VARIANT_BUILDS="" BUILD_LABEL=""
[ "${EXPERIMENT:-}" != all ] || EXPERIMENT="cpu-partial max-empty fill cmpxchg free-batch"
for e in ${EXPERIMENT:-}; do
	case $e in
	cpu-partial) SIDES="$SIDES rslub:cpu_partial=0" ;;
	max-empty) SIDES="$SIDES rslub:max_empty=0 rslub:max_empty=64" ;;
	fill) VARIANT_BUILDS="$VARIANT_BUILDS fill_ge" ;;
	cmpxchg) VARIANT_BUILDS="$VARIANT_BUILDS locked_cmpxchg" ;;
	free-batch) VARIANT_BUILDS="$VARIANT_BUILDS free_batch" ;;
	*) fail "unknown EXPERIMENT '$e' (cpu-partial, max-empty, fill, cmpxchg, free-batch, or all)" ;;
	esac
done
[ -z "$VARIANT_BUILDS" ] || BUILD_LABEL=default
# variant_sides BUILD: the sides of a build variant's boots.
variant_sides() {
	case $1 in
	free_batch) echo "slub rslub:free_batch=8 rslub:free_batch=32" ;;
	*) echo "slub rslub" ;;
	esac
}
# Two kernels: the in-tree SLUB run twice on each (slub-aa), rslub beside
# them on 7.3 (CLASSIC_SIDES on 6.12, SIDES on 7.3).
CLASSIC_SIDES="slub slub-aa"
if [ "$CLASSIC" = 1 ]; then
	[ -z "${EXPERIMENT:-}" ] || fail "EXPERIMENT=$EXPERIMENT is for SUITE=real, not SUITE=classic-real"
	SIDES="slub slub-aa rslub"
fi
# The A/A side (AA=1, the default without a second kernel): rslub served
# a second time in each round (in an experiment, in the default build's
# boots), so that the table calls a verdict only where two allocators, or
# an experiment's side and rslub, differ by more than two runs of rslub do.
if [ "${AA:-$([ "$CLASSIC" = 0 ] && echo 1 || echo 0)}" = 1 ]; then
	SIDES="$SIDES aa"
fi

if [ -n "${BENCH_KDIR:-}" ]; then
	BKDIR=$BENCH_KDIR
else
	scripts/setup.sh --flavor bench
	BKDIR=$(scripts/setup.sh --flavor bench --print-kdir)
fi
if [ "$CLASSIC" = 1 ]; then
	if [ -n "${CLASSIC_KDIR:-}" ]; then
		CKDIR=$CLASSIC_KDIR
	else
		scripts/setup.sh --flavor classic
		CKDIR=$(scripts/setup.sh --flavor classic --print-kdir)
	fi
fi
command -v hackbench >/dev/null && command -v iperf3 >/dev/null && command -v stress-ng >/dev/null ||
	fail "hackbench, iperf3 or stress-ng missing on the host (the guest uses the host's): run scripts/setup.sh"
case ${WORKLOADS:-perf-} in
*perf-*)
	perf bench syscall 2>&1 | grep -w execve >/dev/null ||
		fail "the host's perf has no 'perf bench syscall fork/execve' ($(perf --version 2>&1)): run scripts/setup.sh" ;;
esac

# First: the guest runs mark from the copies below (build).
ICOUNT_PLUGIN=${ICOUNT_PLUGIN:-1}
case " $REAL_MODES " in
*" model"* | *" icount "*)
	echo "bench: building the cost model's plugin and mark (tools/costmodel)"
	make -s costmodel ;;
esac

# Two module builds in copies of the tree: the bench build (counters
# compiled out, what is timed) and a counters build (the counters boot).
# The classic kernel's boots run in the bench build's copy too: they need
# its programs (tools/realprogs, mark), not its rslub.ko.
BUILD=${BENCH_BUILD:-${RSLUB_CACHE:-$HOME/.cache/rslub}/bench-build}
lock_build "$BUILD"
build() {	# build DIR STATS [VARIANT]
	copy_tree "$1"
	echo "bench: building modules for $BKDIR (STATS=$2${3:+, VARIANT=$3}) in $1"
	make -s -C "$1" KDIR="$BKDIR" STATS="$2" ${3:+VARIANT=$3} modules
	make -s -C "$1/tools/realprogs"
}
build "$BUILD" 0
case " $REAL_MODES " in *" counters "*) build "$BUILD-stats" 1 ;; esac
for v in $VARIANT_BUILDS; do
	build "$BUILD-$v" 0 "$v"
	case " $REAL_MODES " in *" counters "*) build "$BUILD-$v-stats" 1 "$v" ;; esac
done

echo "bench: building tools/rsbench"
(cd tools/rsbench && cargo build --release --quiet)
RSBENCH=$ROOT/tools/rsbench/target/release/rsbench

suite=real
[ "$CLASSIC" = 0 ] || suite=classic-real
# shellcheck disable=SC2086 # a list of modes
need_quantum_qemu $REAL_MODES || exit 1
exp_name=${EXPERIMENT:-}
out=${BENCH_OUT:-$ROOT/results/$(date +%Y%m%d-%H%M%S)-$suite${EXPERIMENT:+-${exp_name// /+}}}
mkdir -p "$out"
T0=$(date +%s)
# What the guest script passes on to the workloads.
GUEST_ENV="ROUNDS=$ROUNDS RSLUB_PARAMS='${RSLUB_PARAMS:-}'"
for v in WORKLOADS SERVE HB_GROUPS HB_LOOPS IPERF_TCP_BYTES IPERF_TCP_LEN IPERF_UDP_BYTES \
	IPERF_UDP_LEN NG_WORKERS NG_OPS PIN_SERVER PIN_CLIENT WARMUP COUNTER_ROUNDS \
	PERF_FORK_LOOPS PERF_EXECVE_LOOPS PERF_COPIES MMAP_PROCS MMAP_ITERS MMAP_MIB MMAP_DIR \
	XCPU_MSGS XCPU_BYTES XCPU_FROM XCPU_TO XCPU_SNDBUF; do
	[ -z "${!v+x}" ] || GUEST_ENV="$GUEST_ENV $v='${!v}'"
done

MODEL_SIZES="HB_LOOPS=30 IPERF_TCP_BYTES=12M IPERF_UDP_BYTES=3M NG_OPS=12 PERF_FORK_LOOPS=30
PERF_EXECVE_LOOPS=40 MMAP_ITERS=4000 XCPU_MSGS=16000"
MODEL8_SIZES="MMAP_PROCS=8 PERF_COPIES=4 PERF_FORK_LOOPS=15 PERF_EXECVE_LOOPS=20"
# 16 and 32 vCPUs: a task a CPU, the loops shorter again (the plugin runs
# every vCPU on one host thread: a boot's time grows with its work).
MODEL16_SIZES="MMAP_PROCS=16 PERF_COPIES=8 PERF_FORK_LOOPS=8 PERF_EXECVE_LOOPS=10 MMAP_ITERS=2000 HB_GROUPS=8 HB_LOOPS=15"
MODEL32_SIZES="MMAP_PROCS=32 PERF_COPIES=16 PERF_FORK_LOOPS=4 PERF_EXECVE_LOOPS=5 MMAP_ITERS=1000 HB_GROUPS=16 HB_LOOPS=8"

# run MODE CPUS QEMU_OPTS DIR [BUILD]: a boot of DIR's rslub.ko; with
# BUILD (an experiment's build variant) its logs are named after it.
# VM_NUMA comes from the environment; a model8 boot is the guest's
# MODE=model. RUN_KDIR (the kernel; BKDIR), RUN_TAG (its logs'
# prefix, classic- for the classic kernel) and RUN_SIDES (SIDES) too.
run() {
	local mode=$1 cpus=$2 qopts=$3 dir=$4 tag=${5:+-$5} pre=${RUN_TAG:-}
	local log=$out/vm-$pre$1$tag.log sides=${RUN_SIDES:-$SIDES} label=$BUILD_LABEL gmode=$1
	local scale='' v marks=${RUN_MARKS:-0}
	# The model's boots run a fifth of each program (MODEL_SIZES; a size
	# set in the environment wins): the plugin runs 4-8 times slower than
	# icount. On 8 vCPUs the mmap programs run one task a CPU and perf
	# bench 4 copies at once.
	case $1 in model*) gmode=model ;; esac
	if [ "$gmode" = model ]; then
		local sizes=$MODEL_SIZES n
		case $mode in
		model8) sizes="$MODEL8_SIZES $sizes" ;;
		model16) sizes="$MODEL16_SIZES $sizes" ;;
		model32) sizes="$MODEL32_SIZES $sizes" ;;
		esac
		for v in $sizes; do
			n=${v%%=*}
			[ -z "${!n:-}" ] || continue
			case " $scale " in *" $n="*) ;; *) scale="$scale $v" ;; esac
		done
	fi
	[ -z "${5:-}" ] || { sides=$(variant_sides "$5") label=$5; }
	# A mode's own programs (WORKLOADS_model32=...), after GUEST_ENV's.
	local wl=WORKLOADS_$mode
	[ -z "${!wl:-}" ] || scale="$scale WORKLOADS='${!wl}'"
	echo "bench: [$(($(date +%s) - T0))s] $mode boot$tag${pre:+ of ${RUN_KDIR##*/}}, $cpus vCPUs (log: $log)"
	# As in bench.sh: judged by its output (VM_STALL), a quiet console.
	VM_QEMU=$(vm_qemu_for "$qopts") VM_CPUS=$cpus VM_MEM=${VM_MEM:-3G} VM_QEMU_OPTS=$qopts VM_STALL=${VM_STALL:-2400} \
		VM_TIMEOUT=${VM_TIMEOUT:-10800} VM_APPEND=loglevel=4 VM_CONSOLE=$out/console-$pre$1$tag.log \
		scripts/vm.sh "${RUN_KDIR:-$BKDIR}" "cd $dir && MODE=$gmode MARKS=$marks SIDES='$sides' $scale BUILD_LABEL='$label' $GUEST_ENV scripts/guest/real.sh" 2>&1 |
		tee "$log" | grep --line-buffered "^bench:" | sed -u 's/^/  /' || true
	if grep -q "^bench: FAILED" "$log" || ! grep -q "^bench: guest done (rc 0)" "$log"; then
		grep -E "^bench: FAILED|^vm:" "$log" | head -n 10
		fail "the $pre$mode run did not complete (see $log)"
	fi
	if grep -q "^bench: no-serve:" "$log" && [ "${NO_SERVE_OK:-0}" != 1 ]; then
		fail "no rslub side: $(grep -m1 '^bench: no-serve:' "$log" | sed 's/^bench: no-serve: //')"
	fi
}

# run_mode MODE DIR [BUILD]: one boot of DIR's rslub.ko (of RUN_KDIR).
run_mode() {
	local mode=$1 q kdir=${RUN_KDIR:-$BKDIR} counts=$out/counts-${RUN_TAG:-}$1${3:+-$3}.txt
	shift
	case $mode in
	icount)
		if [ "$ICOUNT_PLUGIN" = 1 ]; then
			q=$(model_qemu_opts "$kdir" "$counts" model=off) || exit 1
			RUN_MARKS=1 run icount 2 "$q" "$1" ${2:+"$2"}
		else
			run icount 2 "-icount shift=0,sleep=off" "$1" ${2:+"$2"}
		fi ;;
	wall) run wall "$REAL_CPUS" "" "$1" ${2:+"$2"} ;;
	model)
		q=$(model_boot_opts "$kdir" "$counts") || exit 1
		run model 2 "$q" "$1" ${2:+"$2"} ;;
	model8)
		# 3 GiB over 2 nodes: node 1's memory begins at 1.5 GiB.
		q=$(model_boot_opts "$kdir" "$counts" \
			cpu_nodes=0:0:0:0:1:1:1:1,mem_starts=0x60000000) || exit 1
		VM_NUMA=2 run model8 8 "$q" "$1" ${2:+"$2"} ;;
	model16 | model32)
		# 16 vCPUs over 2 nodes, 32 over 4 (8 a node), VM_MEM (3 GiB)
		# split evenly: cpu_nodes and mem_starts tell the model the same.
		local n nodes
		read -r n nodes <<<"$(mode_shape "$mode" 0)"
		q=$(model_boot_opts "$kdir" "$counts" \
			"$(model_nodes "$n" "$nodes" "${VM_MEM:-3G}")") || exit 1
		VM_NUMA=$nodes run "$mode" "$n" "$q" "$1" ${2:+"$2"} ;;
	counters)
		if grep -qs "^bench: no-serve:" "$out"/vm-*.log; then
			echo "bench: counters boot skipped (no serving interface)"
			return 0
		fi
		run counters "$REAL_CPUS" "" "$1-stats" ${2:+"$2"} ;;
	*) fail "unknown mode '$mode' (icount, wall, counters, model, model8, model16, model32)" ;;
	esac
}

# run_kernels MODE DIR [BUILD]: a mode's boots: with CLASSIC=1 the
# classic kernel's first (but for the counters boot: rslub's, on 7.3
# only), then the bench kernel's.
run_kernels() {
	if [ "$CLASSIC" = 1 ] && [ "$1" != counters ]; then
		RUN_KDIR=$CKDIR RUN_TAG=classic- RUN_SIDES=$CLASSIC_SIDES run_mode "$@"
	fi
	run_mode "$@"
}

# run_modes DIR [BUILD]: the boots of one build of rslub.ko. The model's
# two boots run at once on a host of 2 cores or more: under -icount QEMU
# runs all of a guest's vCPUs in one thread, so each takes one core. With
# two kernels each of the two runs its kernels' boots one after the other:
# never more than two boots at once.
run_modes() {
	local mode pids=() both=0
	case " $REAL_MODES " in *" model "*)
		case " $REAL_MODES " in *" model8 "*) [ "$(nproc)" -lt 2 ] || both=1 ;; esac ;;
	esac
	for mode in $REAL_MODES; do
		if [ "$both" = 1 ] && [ "${mode%8}" = model ]; then
			run_kernels "$mode" "$@" &
			pids+=($!)
		else
			run_kernels "$mode" "$@"
		fi
	done
	for mode in "${pids[@]}"; do
		wait "$mode" || fail "a model boot failed (above)"
	done
}
run_modes "$BUILD"
for v in $VARIANT_BUILDS; do run_modes "$BUILD-$v" "$v"; done

logs=()
counts=()
renames=()
cpus_meta="" nodes_meta=""
for mode in $REAL_MODES; do
	classic_log=
	[ "$CLASSIC" = 0 ] || classic_log=$out/vm-classic-$mode.log
	variant_logs=()
	for v in $VARIANT_BUILDS; do variant_logs+=("$out/vm-$mode-$v.log"); done
	for f in ${classic_log:+"$classic_log"} "$out/vm-$mode.log" ${variant_logs[@]+"${variant_logs[@]}"}; do
		[ -f "$f" ] || continue
		logs+=("$f")
		c=${f%.log}.txt
		c=$out/counts-${c#"$out"/vm-}
		[ ! -f "$c" ] || counts+=(--counts "$f=$c")
		# A build variant's boot: its in-tree SLUB apart (slub-BUILD), the
		# same allocator as the default boot's, so that the two say how
		# much two boots differ (the experiment table's boot floor).
		case $f in "$out/vm-$mode-"*) b=${f#"$out/vm-$mode-"} && renames+=(--rename "$f:slub=slub-${b%.log}") ;; esac
		# Two kernels: each in-tree SLUB by its design's name.
		[ "$CLASSIC" = 1 ] || continue
		k=sheaves
		[ "$f" != "$classic_log" ] || k=classic
		renames+=(--rename "$f:slub=$k" --rename "$f:slub-aa=$k-aa")
	done
	[ -f "$out/vm-$mode.log" ] || continue
	read -r n nodes <<<"$(mode_shape "$mode" "$REAL_CPUS")"
	cpus_meta="${cpus_meta:+$cpus_meta, }$mode $n"
	nodes_meta="${nodes_meta:+$nodes_meta, }$mode $nodes"
done
kernel_meta=$(basename "$BKDIR")
[ "$CLASSIC" = 0 ] || kernel_meta="$kernel_meta + $(basename "$CKDIR")"
git_rev=$(git describe --always --dirty 2>/dev/null || echo unknown)
qemu=$(qemu_meta $REAL_MODES)
# sed reads all of grep's lines (a head that stops early would end grep
# with SIGPIPE, which pipefail makes the script's failure).
sizes=$(grep -h -m1 "^bench: sizes:" "${logs[@]}" | sed -n '1s/^bench: sizes: //p')
serve=$({ grep -h -m1 "^rslub_bench: serve " "${logs[@]}" || true; } | sed -n '1s/^rslub_bench: serve //p')
"$RSBENCH" parse -o "$out/bench.json" "${renames[@]}" \
	--meta "kernel=$kernel_meta" --meta "qemu=$qemu" \
	--meta "mode=$(echo "$REAL_MODES" | tr ' ' ,)" --meta "cpus=$cpus_meta" \
	--meta "nodes=$nodes_meta" --meta "date=$(date -u +%FT%TZ)" --meta "git=$git_rev" \
	--meta suite=$suite${EXPERIMENT:+ --meta "experiment=$EXPERIMENT"} --meta "quick=${QUICK:-0}" --meta "rounds=$ROUNDS" \
	--meta "rslub_params=${RSLUB_PARAMS:-}" --meta "workloads=$sizes" --meta "quantum=$(model_quantum)" \
	${serve:+--meta "served=$serve"} "${counts[@]}" --profile "$(model_profile)" "${logs[@]}"
"$RSBENCH" table "$out" | tee "$out/table.txt"
"$RSBENCH" plot "$out" >/dev/null
echo "bench: [$(($(date +%s) - T0))s] done: $out (bench.json, table.txt, report.md, *.png)"
