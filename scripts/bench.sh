#!/usr/bin/env bash
# make bench: A/B micro-benchmarks of the in-tree SLUB, rslub and a floor
# allocator in the "bench" kernel flavor (no lock debugging, SLUB_STATS off,
# rslub's counters compiled out), built into the kernel cache if needed.
#
#   icount boot (2 vCPUs, -icount shift=0,sleep=off; ticks = instructions):
#       pair, repeat, fifo, shuffle, bulk, remote, churn over every size;
#       under the cost model's plugin with model=off, so that a rep string
#       instruction counts once (ICOUNT_PLUGIN=0: the virtual clock alone,
#       each iteration of a rep string instruction counted as one)
#   wall boot (BENCH_CPUS vCPUs, multi-threaded TCG; nanoseconds):
#       parallel scaling over 1..BENCH_CPUS, remote objects/s, pair
#   model boot (MODES=model; the icount boot's workloads under the cost
#       model's QEMU plugin, tools/costmodel: modeled cycles and the cache,
#       coherence and atomic events of each operation, priced by
#       MODEL_PROFILE of tools/costmodel/profiles.toml, default server-ooo,
#       the interval core; MODEL_PROFILE=server prices in order)
#   model8 boot (with MODES=model, at the same time: 8 vCPUs over 2 NUMA
#       nodes under the plugin): parallel over 1..8 CPUs and remote from
#       CPU 0 to CPU 4, across the nodes (WORKLOADS_MODEL8, MODEL8_SIZES,
#       MODEL8_OPS, MODEL8_BUDGET_KB)
#   model16, model32 boots (MODES=model16 or model32, scale runs): the
#       same on 16 vCPUs over 2 nodes and 32 over 4 (8 a node), parallel at
#       PAR16_CPUS / PAR32_CPUS CPUs, remote across nodes
#
# Results go to results/<timestamp>/: vm-<mode>.log, bench.json, table.txt,
# PNG plots and report.md (tools/rsbench).
#
# Environment (make bench VAR=...):
#   QUICK=1        a small run (< 5 min warm): 4 sizes, 3 rounds, fewer ops
#   SUITE=name     an rslub-vs-rslub experiment: max-empty, cpu-partial,
#                  fill, cmpxchg, hardening, free-batch (docs/benchmarks.md);
#                  SUITE=real: real programs on the in-tree SLUB and on
#                  rslub serving the kernel's caches (scripts/bench-real.sh);
#                  SUITE=classic: a second kernel, Linux 6.12, whose C SLUB
#                  is the classic design rslub implements: one table of
#                  classic (6.12), sheaves (7.3's SLUB) and rslub (7.3), with
#                  the floor measured on both kernels (icount only unless
#                  MODES is given);
#                  SUITE=classic-real: SUITE=real's programs on both
#                  kernels (scripts/bench-real.sh CLASSIC=1): classic,
#                  sheaves and rslub, each in-tree SLUB run twice for its
#                  A/A noise (boots icount, model, model8; QUICK=1: model)
#                  SUITE=classic-all: both, at 2, 8, 16 and 32 vCPUs on
#                  the cost model, into one results directory with one
#                  bench.json and glance.md (scripts/bench-upstream.sh)
#   BENCH_OUT      the results directory (default results/<timestamp>)
#   MODES          "icount wall" (default), any of icount, wall, model
#                  (the 2- and 8-vCPU model boots; model8 alone: the 8);
#                  KVM=1 runs one "cycles" boot on KVM
#   RSLUB_PARAMS   module parameters for rslub.ko, e.g. "harden=0 max_empty=0"
#   SIZES BATCHES OPS ROUNDS CHURN_ROUNDS BENCH_CPUS WORKLOADS_ICOUNT
#   WORKLOADS_WALL WALL_SIZES WALL_ROUNDS override the defaults below
#   BENCH_KDIR     a bench kernel already built (setup is skipped)
#   CLASSIC_KDIR   SUITE=classic, classic-real: a classic (6.12) kernel already built
#   BENCH_BUILD    where the modules are built (two runs at once need two)
#   ICOUNT_PLUGIN  1 (default): the icount boot under the plugin (model=off)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. scripts/lib.sh
use_quantum || exit 1
export PATH=$HOME/.cargo/bin:$PATH

SIZES=${SIZES:-8 16 32 64 128 256 512 1024 2048 4096 8192 16384}
BATCHES=${BATCHES:-1 8 16 32 64 128}
OPS=${OPS:-10000}
ROUNDS=${ROUNDS:-5}
CHURN_ROUNDS=${CHURN_ROUNDS:-3}
BENCH_CPUS=${BENCH_CPUS:-4}
ALLOCS=${ALLOCS:-slub,rslub,served,kmalloc,kserved,floor}
WORKLOADS_ICOUNT=${WORKLOADS_ICOUNT:-pair repeat fifo shuffle bulk remote churn}
WORKLOADS_WALL=${WORKLOADS_WALL:-parallel remote pair}
WALL_SIZES=${WALL_SIZES:-$SIZES}
WALL_ROUNDS=${WALL_ROUNDS:-7}	# wall mode is noisy: more rounds
MODES_GIVEN=${MODES:-}
MODES=${MODES:-icount wall}
# MODES=model: the cost model's boots on 2 vCPUs (every workload) and on 8
# over 2 nodes (model8: parallel and remote, WORKLOADS_MODEL8).
# shellcheck disable=SC2086 # a list of modes
MODES=$(expand_modes $MODES)
WORKLOADS_MODEL8=${WORKLOADS_MODEL8:-parallel remote}
MODEL8_SIZES=${MODEL8_SIZES:-64 256}
MODEL8_OPS=${MODEL8_OPS:-2000}
MODEL8_BUDGET_KB=${MODEL8_BUDGET_KB:-512}
# model16 and model32 (scale runs, not part of MODES=model): parallel at
# these CPU counts rather than at each count.
PAR16_CPUS=${PAR16_CPUS:-1,2,4,8,16}
PAR32_CPUS=${PAR32_CPUS:-1,2,4,8,16,32}
note=""
CLASSIC=0
if [ "${QUICK:-0}" = 1 ]; then
	SIZES="8 64 256 4096" BATCHES="1 16 128" OPS=3000 ROUNDS=3 CHURN_ROUNDS=2
	WALL_SIZES="64 256" WALL_ROUNDS=3 BENCH_CPUS=2
fi
case ${SUITE:-} in
"") ;;
real)
	# The real-workload A/B: a script of its own (its own boots and guest),
	# given the modes as the user gave them.
	MODES=$MODES_GIVEN exec scripts/bench-real.sh ;;
classic-real)
	# The same on the classic kernel and on 7.3 (bench-real.sh, CLASSIC=1).
	MODES=$MODES_GIVEN CLASSIC=1 exec scripts/bench-real.sh ;;
classic-all)
	# Both of the above at 2 to 32 vCPUs, one results directory.
	MODES=$MODES_GIVEN exec scripts/bench-upstream.sh ;;
max-empty)
	ALLOCS=rslub:max_empty=0,rslub:max_empty=1,rslub:max_empty=8
	WORKLOADS_ICOUNT=remote WORKLOADS_WALL=remote ;;
cpu-partial)
	ALLOCS=rslub,rslub:cpu_partial=0
	WORKLOADS_ICOUNT="remote repeat" WORKLOADS_WALL="remote parallel" ;;
fill)
	# Upstream's > against the fill_ge build variant's >= (Kbuild VARIANT=).
	ALLOCS=rslub VARIANTS=fill_ge
	WORKLOADS_ICOUNT="remote repeat" WORKLOADS_WALL=remote ;;
cmpxchg)
	ALLOCS=rslub VARIANTS=locked_cmpxchg
	WORKLOADS_ICOUNT="pair repeat" WORKLOADS_WALL="pair parallel"
	note="cmpxchg: icount counts instructions and the lock prefix adds none, so the icount rows of the two builds should match; MODES=model prices the lock (the cost model's cx16_locked against cx16_unlocked), real hardware (KVM=1, or insmod on a test machine) measures it." ;;
hardening)
	# The default (hardened) load, then rslub.ko harden=0: hardening is
	# fixed at a cache's creation, so it is a module parameter of the load.
	ALLOCS=rslub,rslub:random_freelist=1 LOADS=plain=harden=0
	WORKLOADS_ICOUNT="pair repeat bulk remote" WORKLOADS_WALL=pair ;;
free-batch)
	# Classic frees (the default module: one slab update per free that
	# misses the CPU slab) against the free_batch build variant's batched
	# ones (Kbuild VARIANT=free_batch) at two batch sizes, with the in-tree
	# SLUB for scale.
	ALLOCS=slub,rslub VARIANTS=free_batch VARIANT_ALLOCS=rslub:free_batch=8,rslub:free_batch=32
	WORKLOADS_ICOUNT="pair repeat fifo shuffle remote" WORKLOADS_WALL="remote parallel" ;;
classic)
	# Two kernels: the 7.3 bench kernel runs slub (its sheaves), rslub and
	# the floor, the 6.12 classic kernel slub (the classic design) and the
	# floor, each in a boot of its own with the same workloads; the floor's
	# pair of rows calibrates the harness across the two. icount is what
	# compares across kernels (wall time under TCG is too noisy for it).
	# rslub runs twice in the 7.3 boot: as loaded by default (hardened,
	# build=default) and as rslub.ko harden=0 (build=plain), the like of
	# both in-tree kernels, built without SLAB_FREELIST_HARDENED.
	CLASSIC=1 LOADS=plain=harden=0
	# shellcheck disable=SC2086 # a list of modes
	MODES=$(expand_modes ${MODES_GIVEN:-icount}) ;;
*)
	echo "bench: unknown SUITE '$SUITE' (max-empty, cpu-partial, fill, cmpxchg, hardening, free-batch, real, classic, classic-real, classic-all)" >&2
	exit 2 ;;
esac
[ "${KVM:-0}" = 1 ] && MODES=cycles

# BENCH_KDIR: an already built bench kernel (no setup); BENCH_BUILD: where
# the modules are built (default in the cache; two runs at once need two).
if [ -n "${BENCH_KDIR:-}" ]; then
	BKDIR=$BENCH_KDIR
else
	scripts/setup.sh --flavor bench
	BKDIR=$(scripts/setup.sh --flavor bench --print-kdir)
fi

# The modules are built for the bench kernel (with the counters compiled out)
# in a copy of the tree, so the test build in the checkout stays as it is.
BUILD=${BENCH_BUILD:-${RSLUB_CACHE:-$HOME/.cache/rslub}/bench-build}
lock_build "$BUILD"
copy_tree "$BUILD"
echo "bench: building modules for $BKDIR (STATS=0) in $BUILD"
make -s -C "$BUILD" KDIR="$BKDIR" STATS=0 modules
# Build variants (VARIANTS, a suite's): rslub.ko built again with Kbuild's
# VARIANT=, each in a directory of its own; the guest loads the default
# build and then each variant in turn (rmmod, insmod) in the same boot.
RSLUB_BUILDS="default=$BUILD/rslub.ko"
for v in ${VARIANTS:-}; do
	vdir=$BUILD-$v
	copy_tree "$vdir"
	echo "bench: building the $v variant of rslub.ko in $vdir"
	make -s -C "$vdir" KDIR="$BKDIR" STATS=0 VARIANT="$v" modules
	RSLUB_BUILDS="$RSLUB_BUILDS $v=$vdir/rslub.ko"
done
# Loads (LOADS, a suite's: "LABEL=PARAM,PARAM ..."): the default build
# loaded again with other module parameters, for choices fixed when a
# cache is created (harden=).
for l in ${LOADS:-}; do
	RSLUB_BUILDS="$RSLUB_BUILDS ${l%%=*}=$BUILD/rslub.ko?${l#*=}"
done
# The hit paths the numbers rest on (docs/design.md, "Fast-path cost"); a
# regression is said here, before the numbers show it.
python3 scripts/fastpath-shape.py "$BUILD/rslub.ko" rslub_cache_alloc=38 rslub_cache_free=47 \
	rslub_rust_served_alloc=41 rslub_rust_served_free=47 |
	sed 's/^/bench: /' || true

# The classic kernel (SUITE=classic) and its build of the bench module:
# the C module alone (M=bench), without rslub (BENCH_NO_RSLUB=1: there is no
# rslub.ko on 6.12), with the kernel's own compiler (LLVM=-NN when it is
# clang-built, as the project's flavors are).
if [ "$CLASSIC" = 1 ]; then
	if [ -n "${CLASSIC_KDIR:-}" ]; then
		CKDIR=$CLASSIC_KDIR
	else
		scripts/setup.sh --flavor classic
		CKDIR=$(scripts/setup.sh --flavor classic --print-kdir)
	fi
	CBUILD=$BUILD-classic
	copy_tree "$CBUILD"
	cllvm=
	if grep -q '^CONFIG_CC_IS_CLANG=y' "$CKDIR/.config"; then
		cmajor=$(($(sed -n 's/^CONFIG_CLANG_VERSION=//p' "$CKDIR/.config") / 10000))
		if command -v "clang-$cmajor" >/dev/null; then cllvm=LLVM=-$cmajor; else cllvm=LLVM=1; fi
	fi
	echo "bench: building the bench module without rslub for $CKDIR in $CBUILD"
	make -s -C "$CKDIR" M="$CBUILD/bench" BENCH_NO_RSLUB=1 $cllvm modules
fi

echo "bench: building tools/rsbench"
(cd tools/rsbench && cargo build --release --quiet)
RSBENCH=$ROOT/tools/rsbench/target/release/rsbench
# The icount boot counts under the plugin too (model=off: instructions,
# each rep string instruction once), unless ICOUNT_PLUGIN=0.
ICOUNT_PLUGIN=${ICOUNT_PLUGIN:-1}
case " $MODES " in
*" model "* | *" model8 "*)
	echo "bench: building the cost model's plugin (tools/costmodel)"
	make -s costmodel ;;
*" icount "*)
	if [ "$ICOUNT_PLUGIN" = 1 ]; then
		echo "bench: building the cost model's plugin (tools/costmodel; the icount boot's count)"
		make -s costmodel
	fi ;;
esac

# shellcheck disable=SC2086 # a list of modes
need_quantum_qemu $MODES || exit 1
out=${BENCH_OUT:-$ROOT/results/$(date +%Y%m%d-%H%M%S)${SUITE:+-$SUITE}}
mkdir -p "$out"
T0=$(date +%s)

# The kernel a boot runs and what it measures there: the bench kernel
# (the modules in BUILD), or with SUITE=classic also the classic one
# (run_classic: CBUILD's module, no rslub.ko, slub and floor).
RUN_KDIR=$BKDIR RUN_BUILD=$BUILD RUN_ALLOCS=$ALLOCS RUN_BUILDS=$RSLUB_BUILDS RUN_TAG=

# run MODE CPUS QEMU_OPTS WORKLOADS SIZES ROUNDS
run() {
	local mode=$1 cpus=$2 qopts=$3 workloads=$4 sizes=$5 rounds=$6
	local log=$out/vm-$RUN_TAG$1.log
	echo "bench: [$(($(date +%s) - T0))s] $mode boot${RUN_TAG:+ ($RUN_TAG${RUN_KDIR##*/})}, $cpus vCPUs: $workloads (log: $log)"
	# A bench guest prints little until a boot's workloads end: it is judged
	# stuck after VM_STALL (2400) s without output; the console keeps only
	# warnings and errors (loglevel=4), so that printing cannot land inside
	# a measurement.
	VM_QEMU=$(vm_qemu_for "$qopts") VM_CPUS=$cpus VM_MEM=${VM_MEM:-3G} VM_QEMU_OPTS=$qopts VM_STALL=${VM_STALL:-2400} \
		VM_TIMEOUT=${VM_TIMEOUT:-7200} VM_APPEND=loglevel=4 VM_CONSOLE=$out/console-$RUN_TAG$1.log \
		scripts/vm.sh "$RUN_KDIR" "cd $RUN_BUILD && MODE=$mode WORKLOADS='$workloads' SIZES='$sizes' \
BATCHES='$BATCHES' ALLOCS='${RUN_ALLOCS_NOW:-$RUN_ALLOCS}' OPS=${RUN_OPS:-$OPS} ROUNDS=$rounds CHURN_ROUNDS=$CHURN_ROUNDS ${RUN_EXTRA:-} \
MAX_CPUS=$cpus RSLUB_PARAMS='${RSLUB_PARAMS:-}' RSLUB_BUILDS='$RUN_BUILDS' \
VARIANT_ALLOCS='${VARIANT_ALLOCS:-}' scripts/guest/bench.sh" 2>&1 |
		tee "$log" | grep --line-buffered "^bench:" | sed -u 's/^/  /' || true
	if grep -q "^bench: FAILED" "$log" || ! grep -q "^bench: guest done (rc 0)" "$log"; then
		grep -E "^bench: FAILED|^vm:|rslub_bench: .*(FAILED|failed|cannot)" "$log" | head -n 10
		echo "bench: FAILED: the $mode run did not complete (see $log)"
		exit 1
	fi
}

# run_mode MODE: one boot of RUN_KDIR.
run_mode() {
	local q
	case $1 in
	icount)
		# Instructions as the CPU retires them: the plugin counts each
		# rep string instruction once in the bench module's marked
		# windows (model=off: no caches, no prices; rsbench parse scales
		# the clock's figures by its counts).
		if [ "$ICOUNT_PLUGIN" = 1 ]; then
			q=$(model_qemu_opts "$RUN_KDIR" "$out/counts-${RUN_TAG}icount.txt" model=off) || exit 1
			RUN_EXTRA=MARKS=1 run icount 2 "$q" "$WORKLOADS_ICOUNT" "$SIZES" "$ROUNDS"
		else
			run icount 2 "-icount shift=0,sleep=off" "$WORKLOADS_ICOUNT" "$SIZES" "$ROUNDS"
		fi ;;
	wall) run wall "$BENCH_CPUS" "" "$WORKLOADS_WALL" "$WALL_SIZES" "$WALL_ROUNDS" ;;
	model)
		# The icount boot's instructions, the plugin's events besides.
		q=$(model_boot_opts "$RUN_KDIR" "$out/counts-${RUN_TAG}model.txt") || exit 1
		run model 2 "$q" "$WORKLOADS_ICOUNT" "$SIZES" "$ROUNDS" ;;
	model8)
		# 8 vCPUs over 2 nodes (4 a node; node 1's memory from 1.5 GiB):
		# parallel on 1 to 8 CPUs, remote from CPU 0 to CPU 4 across the
		# nodes; smaller (all 8 vCPUs run in one host thread), without
		# the kmalloc rows.
		q=$(model_boot_opts "$RUN_KDIR" "$out/counts-${RUN_TAG}model8.txt" \
			cpu_nodes=0:0:0:0:1:1:1:1,mem_starts=0x60000000) || exit 1
		VM_NUMA=2 RUN_OPS=$MODEL8_OPS RUN_EXTRA="REMOTE_CPU=4 BUDGET_KB=$MODEL8_BUDGET_KB" \
			RUN_ALLOCS_NOW=$(echo "$RUN_ALLOCS" | tr , '\n' | grep -v '^kmalloc$\|^kserved$' | paste -sd,) \
			run model8 8 "$q" "$WORKLOADS_MODEL8" "$MODEL8_SIZES" "$ROUNDS" ;;
	model16 | model32)
		# 16 vCPUs over 2 nodes, 32 over 4 (8 a node): parallel at
		# PAR16_CPUS / PAR32_CPUS CPUs, remote from CPU 0 to the first
		# CPU of the last node; as model8 otherwise.
		local n nodes par
		read -r n nodes <<<"$(mode_shape "$1" 0)"
		par=$PAR16_CPUS
		[ "$n" = 32 ] && par=$PAR32_CPUS
		q=$(model_boot_opts "$RUN_KDIR" "$out/counts-${RUN_TAG}$1.txt" \
			"$(model_nodes "$n" "$nodes" "${VM_MEM:-3G}")") || exit 1
		VM_NUMA=$nodes RUN_OPS=$MODEL8_OPS \
			RUN_EXTRA="REMOTE_CPU=$((n - n / nodes)) BUDGET_KB=$MODEL8_BUDGET_KB PAR_CPUS=$par" \
			RUN_ALLOCS_NOW=$(echo "$RUN_ALLOCS" | tr , '\n' | grep -v '^kmalloc$\|^kserved$' | paste -sd,) \
			run "$1" "$n" "$q" "$WORKLOADS_MODEL8" "$MODEL8_SIZES" "$ROUNDS" ;;
	cycles) run cycles "$BENCH_CPUS" "" "$WORKLOADS_ICOUNT parallel" "$SIZES" "$WALL_ROUNDS" ;;
	*) echo "bench: unknown mode '$1' (icount, wall, model, model8, model16, model32)" >&2; exit 2 ;;
	esac
}

# run_modes: RUN_KDIR's boots. The model's two boots run at once on a host
# of 2 cores or more: under -icount QEMU runs a guest's vCPUs in one
# thread, so each takes one core.
run_modes() {
	local mode pids=() both=0
	case " $MODES " in *" model "*)
		case " $MODES " in *" model8 "*) [ "$(nproc)" -lt 2 ] || both=1 ;; esac ;;
	esac
	for mode in $MODES; do
		if [ "$both" = 1 ] && [ "${mode%8}" = model ]; then
			run_mode "$mode" &
			pids+=($!)
		else
			run_mode "$mode"
		fi
	done
	for mode in "${pids[@]}"; do
		wait "$mode" || { echo "bench: FAILED: a model boot failed (above)"; exit 1; }
	done
}

# SUITE=classic: the classic kernel's boots first (their logs vm-classic-*,
# parsed first, so the table's first floor is 6.12's), then the bench
# kernel's. Each kernel's allocators get their table names at parse time
# (rsbench parse --rename): 6.12's slub is "classic", 7.3's "sheaves", the
# floors "floor-<major.minor>".
logs=()
renames=()
counts=()
# kernel_release KDIR: "7.3", "6.12" (the built tree's release, major.minor).
kernel_release() { cut -d. -f1,2 <"$1/include/config/kernel.release"; }
if [ "$CLASSIC" = 1 ]; then
	RUN_KDIR=$CKDIR RUN_BUILD=$CBUILD RUN_ALLOCS=slub,floor RUN_BUILDS=none RUN_TAG=classic-
	run_modes
	crel=$(kernel_release "$CKDIR") brel=$(kernel_release "$BKDIR")
	for mode in $MODES; do
		logs+=("$out/vm-classic-$mode.log")
		[ ! -f "$out/counts-classic-$mode.txt" ] || counts+=(--counts "$out/vm-classic-$mode.log=$out/counts-classic-$mode.txt")
		renames+=(--rename "$out/vm-classic-$mode.log:slub=classic"
			--rename "$out/vm-classic-$mode.log:floor=floor-$crel"
			--rename "$out/vm-$mode.log:slub=sheaves"
			--rename "$out/vm-$mode.log:floor=floor-$brel")
	done
	RUN_KDIR=$BKDIR RUN_BUILD=$BUILD RUN_ALLOCS=$ALLOCS RUN_BUILDS=$RSLUB_BUILDS RUN_TAG=
fi
run_modes

cpus_meta="" nodes_meta=""
for mode in $MODES; do
	logs+=("$out/vm-$mode.log")
	[ ! -f "$out/counts-$mode.txt" ] || counts+=(--counts "$out/vm-$mode.log=$out/counts-$mode.txt")
	read -r n nodes <<<"$(mode_shape "$mode" "$BENCH_CPUS")"
	cpus_meta="${cpus_meta:+$cpus_meta, }$mode $n"
	nodes_meta="${nodes_meta:+$nodes_meta, }$mode $nodes"
done
kernel_meta=$(basename "$BKDIR")
[ "$CLASSIC" = 0 ] || kernel_meta="$kernel_meta + $(basename "$CKDIR")"
git_rev=$(git describe --always --dirty 2>/dev/null || echo unknown)
qemu=$(qemu_meta $MODES)
"$RSBENCH" parse -o "$out/bench.json" "${renames[@]}" \
	--meta "kernel=$kernel_meta" --meta "qemu=$qemu" \
	--meta "mode=$(echo "$MODES" | tr ' ' ,)" --meta "cpus=$cpus_meta" \
	--meta "nodes=$nodes_meta" --meta "date=$(date -u +%FT%TZ)" --meta "git=$git_rev" \
	--meta "suite=${SUITE:-default}" --meta "quick=${QUICK:-0}" \
	--meta "kvm=${KVM:-0}" --meta "rslub_params=${RSLUB_PARAMS:-}" --meta "quantum=$(model_quantum)" \
	${note:+--meta "note=$note"} "${counts[@]}" --profile "$(model_profile)" "${logs[@]}"
"$RSBENCH" table "$out" | tee "$out/table.txt"
"$RSBENCH" plot "$out"
[ -z "$note" ] || echo "bench: note: $note"
echo "bench: [$(($(date +%s) - T0))s] done: $out (bench.json, table.txt, report.md, *.png)"
