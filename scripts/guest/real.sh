#!/bin/sh
# Runs inside the bench VM (harness/benchreal.py boots it, make bench
# SUITE=real): loads rslub.ko, then runs each real workload
# (scripts/guest/real-lib.sh) alternately on the in-tree SLUB (nothing
# served) and with rslub serving $SERVE, ROUNDS rounds each side after one
# unrecorded warm-up round, in the order A B, B A, A B ... so that a drift
# over the boot does not favour one side. Prints one result line per run
# and side (rsbench parse reads them) and a progress line per workload.
#
# MODE=icount|wall: metric minstr (the program's own elapsed time in
#   millions of ns: under -icount shift=0 one ns is one instruction; see
#   workload_ns) or ms, and slab_kb (/proc/meminfo Slab once the programs
#   have exited).
# MODE=model: as icount, under the cost model's plugin (make bench
#   MODES=model): each run lies between two marks (tools/costmodel/guest/
#   mark), and its minstr line adds n=1000000 and marks=ID, so that rsbench
#   adds the run's modeled cycles and events, in millions per run.
# MARKS=1 with MODE=icount: the same marks, for the icount boot under the
#   plugin with model=off (rsbench scales minstr to count each rep string
#   instruction once).
# MODE=counters: rslub side only (a counters build of rslub.ko): rslub's
#   counters over each run, summed over the served caches (variant -),
#   and for each cache with at least 10% of the run's allocations and
#   kmalloc-256 (variant=NAME), as metric=<counter name>.
#
# SIDES ("slub rslub"): the sides each workload runs on, in turn. A side
#   "rslub:KNOB=V:KNOB=V" is rslub with those tunables written to every
#   served cache's /sys/kernel/rslub/<cache>/KNOB once serving started (a
#   seed's experiment: make bench SUITE=real EXPERIMENT=...); the plain
#   "rslub" side then writes back each such knob's value as the cache was
#   created. Results of rslub sides carry variant=default or the knobs,
#   prefixed with build=BUILD_LABEL when that is set (a build variant of
#   rslub.ko); in the counters boot the op is WORKLOAD@VARIANT. A side
#   "aa" is rslub served again, its results alloc=rslub-aa: the A/A noise
#   floor (make bench SUITE=real AA=1; rsbench table's A/A section). A side
#   "slub-aa" is the in-tree SLUB run again, its results alloc=slub-aa (make
#   bench SUITE=classic-real, on both kernels). When no side needs rslub
#   (only slub and slub-aa: the classic kernel, which has no rslub build),
#   rslub.ko is neither loaded nor asked to serve.
#
# Environment: MODE, MARKS, ROUNDS (5), WORKLOADS, WARMUP (1), RSLUB_PARAMS,
# SIDES, BUILD_LABEL, and the workload sizes of scripts/guest/real-lib.sh.
cd "$(dirname "$0")/../.." || exit 2
. scripts/guest/real-lib.sh
MODE=${MODE:-icount}
MARK=$PWD/tools/costmodel/guest/mark
MARKING=0
[ "$MODE" != model ] && [ "${MARKS:-0}" != 1 ] || MARKING=1
[ "$MARKING" = 0 ] || [ -x "$MARK" ] ||
	{ echo "bench: FAILED: $MARK missing (make costmodel)"; echo "bench: guest done (rc 1)"; exit 1; }
ROUNDS=${ROUNDS:-5}
WORKLOADS=${WORKLOADS:-$REAL_WORKLOADS_ALL}
WARMUP=${WARMUP:-1}
# The counters boot counts one run of each workload: no warm-up.
[ "$MODE" = counters ] && WARMUP=${COUNTER_WARMUP:-0}
CPUS=$(nproc)
COUNTERS="alloc_fastpath alloc_slowpath free_fastpath free_slowpath alloc_slab free_slab
alloc_refill alloc_from_partial cpu_partial_alloc cpu_partial_free free_add_partial
free_remove_partial empty_cache_hit free_frozen cmpxchg_double_fail cmpxchg_double_cpu_fail"

dmesg -n 1
dmesg -C
sides=${SIDES:-slub rslub}
# in_tree SIDE: whether SIDE runs on the in-tree SLUB alone (nothing served).
in_tree() { case $1 in slub | slub-aa) return 0 ;; *) return 1 ;; esac; }
# rslub.ko is loaded only when a side serves with it: the classic kernel
# (make bench SUITE=classic-real) has no rslub build.
LOADED=0
for side in $sides; do in_tree "$side" || LOADED=1; done
if [ "$LOADED" = 1 ]; then
	# kunit runs rslub.ko's suite at every load of the module: not here.
	[ -w /sys/module/kunit/parameters/filter_glob ] &&
		printf rslub-no-suites >/sys/module/kunit/parameters/filter_glob
	# shellcheck disable=SC2086 # RSLUB_PARAMS: several parameters
	insmod rslub.ko ${RSLUB_PARAMS:-} || { echo "bench: FAILED: insmod rslub.ko ${RSLUB_PARAMS:-}"; exit 1; }
	what="rslub.ko ${RSLUB_PARAMS:-(defaults)}"
else
	what="rslub.ko not loaded and nothing served (no side needs it: $sides)"
fi
echo "bench: guest: $(nproc) CPUs, $(uname -r), mode $MODE, rounds $ROUNDS, $what"
echo "bench: sizes: hackbench -g $HB_GROUPS -l $HB_LOOPS; iperf3 TCP $IPERF_TCP_BYTES in $IPERF_TCP_LEN writes, UDP $IPERF_UDP_BYTES in $IPERF_UDP_LEN datagrams (server CPU ${PIN_SERVER:-any}, client CPU ${PIN_CLIENT:-any}); stress-ng --sock $NG_WORKERS --sock-ops $NG_OPS; perf bench syscall fork --loop $PERF_FORK_LOOPS, execve --loop $PERF_EXECVE_LOOPS, $PERF_COPIES at once; mmap1/mmap2 $MMAP_PROCS x $MMAP_ITERS of $MMAP_MIB MiB (file in $MMAP_DIR), brk1 $MMAP_PROCS x $MMAP_ITERS; xcpu-unix $XCPU_MSGS x $XCPU_BYTES bytes CPU $XCPU_FROM to $XCPU_TO"
real_prepare
case $WORKLOADS in
*perf-*)
	t=$(date +%s)
	perf_root_prepare || { echo "bench: FAILED: copying perf to $PERF_ROOT"; echo "bench: guest done (rc 1)"; exit 1; }
	echo "bench: perf and its libraries copied to $PERF_ROOT ($(du -sm "$PERF_ROOT" | cut -f1) MB, $(($(date +%s) - t)) s of guest time)" ;;
esac
rc=0
DRAINING=0
# An experiment: rslub sides are labelled (variant=) even when plain.
LABELLED=0
case $sides in *rslub:*) LABELLED=1 ;; esac
[ -z "${BUILD_LABEL:-}" ] || LABELLED=1
if [ "$LOADED" = 1 ] && ! serve_available; then
	echo "bench: no-serve: $(serve_missing_msg); the rslub side is not run"
	kept=
	for side in $sides; do in_tree "$side" && kept="$kept${kept:+ }$side"; done
	sides=${kept:-slub}
	[ "$MODE" = counters ] && { echo "bench: guest done (rc 1)"; exit 1; }
fi
[ "$MODE" = counters ] && sides=$(echo "$sides" | tr ' ' '\n' | grep '^rslub' | tr '\n' ' ')
# The knobs any side sets (each side that sets none writes their defaults back).
KNOBS=$(echo "$sides" | tr ' ' '\n' | sed -n 's/^rslub://p' | tr ':' '\n' | cut -d= -f1 | sort -u)
SERVING=0
for side in $sides; do in_tree "$side" || SERVING=1; done
if [ "$SERVING" = 1 ]; then
	# What serving covers here: served once, listed, stopped.
	if serve_start; then
		names=$(served)
		echo "rslub_bench: serve $(echo "$names" | wc -l) caches: $(echo "$names" | tr '\n' ' ')"
		serve_stop
		# shellcheck disable=SC2086 # a list of names
		wait_gone 10 0 $names || echo "bench: note: still draining 10 s after serving once: $(draining | tr '\n' ' ')"
	else
		echo "bench: FAILED: serving '$SERVE' failed: $(dmesg | grep -i 'serve' | tail -n 1)"
		echo "bench: guest done (rc 1)"
		exit 1
	fi
	dmesg | grep -i "serve .*refused" | sed 's/^\[[ 0-9.]*\] /bench: note: /' | head -n 20
fi

# side_variant SIDE: the variant= of a side's results ("-" for the in-tree
# sides and, outside experiments, for rslub).
side_variant() {
	case $1 in
	slub | slub-aa) echo - ;;
	*)
		_k=default
		case $1 in rslub:*) _k=${1#rslub:} ;; esac
		[ "$LABELLED" = 1 ] || { echo -; return; }
		echo "${BUILD_LABEL:+build=$BUILD_LABEL:}$_k" | sed 's/:default$//' ;;
	esac
}

# side_alloc SIDE: the alloc= of a side's results.
side_alloc() { case $1 in slub | slub-aa) echo "$1" ;; aa) echo rslub-aa ;; *) echo rslub ;; esac; }

# set_knobs SIDE DIR...: writes a side's knobs to the served caches, or
# for a side without knobs the defaults recorded at their creation (the
# value a cache's knob had the first time it was seen). One awk for all
# caches: a fork a knob and cache costs minutes a side under the model.
set_knobs() {
	_side=$1
	shift
	[ -n "$KNOBS" ] || return 0
	touch "$REAL_OUT/knob-defaults"
	for _d in "$@"; do
		for _k in $KNOBS; do [ -w "$_d/$_k" ] && echo "$_d $_k"; done
	done | awk -v side="${_side#rslub}" -v defs="$REAL_OUT/knob-defaults" '
		BEGIN {
			while ((getline l < defs) > 0) { split(l, f, " "); def[f[1] " " f[2]] = f[3] }
			close(defs)
			n = split(side, kv, ":")
			for (i = 1; i <= n; i++) if (kv[i] ~ /=/) { split(kv[i], p, "="); want[p[1]] = p[2] }
		}
		{
			name = $1; sub(/.*\//, "", name); file = $1 "/" $2
			if (!((name " " $2) in def)) {
				v = ""
				getline v < file
				close(file)
				def[name " " $2] = v
				print name, $2, v >> defs
			}
			v = ($2 in want) ? want[$2] : def[name " " $2]
			printf "%s\n", v > file
			if (close(file) != 0) print "bench: note: cannot write " v " to " file
		}'
}

# result OP ALLOC METRIC ROUND VALUE [WORKLOAD] [VARIANT] [" KEY=V..."]
result() {
	echo "rslub_bench: result mode=$MODE workload=${6:-real} op=$1 size=0 batch=1 cpus=$CPUS alloc=$2 variant=${7:--} metric=$3 round=$4 value=$5${8:-}"
}

# snapshot FILE DIR...: "cache counter value" of every counter of each DIR.
snapshot() {
	f=$1
	shift
	: >"$f"
	for d in "$@"; do
		for c in $COUNTERS; do
			[ -r "$d/$c" ] && echo "$d/$c"
		done
	done | xargs -r awk '{ n = split(FILENAME, p, "/"); print p[n - 1], p[n], $1 }' >"$f"
}

# one WORKLOAD SIDE ROUND: one run; ROUND -1 is the warm-up (not printed).
# Sets RUN_VALUE (the run's metric, as printed) for the progress line.
one() {
	w=$1 side=$2 round=$3 nserved=0
	if ! in_tree "$side"; then
		if ! serve_start; then
			echo "bench: FAILED: serving '$SERVE' failed: $(dmesg | grep -i 'rslub.*serve' | tail -n 1)"
			rc=1
			return 1
		fi
		names=$(served)
		nserved=$(echo "$names" | wc -l)
		# shellcheck disable=SC2086 # a list of names
		dirs=$(rslub_dirs $names)
		# shellcheck disable=SC2086 # a list of directories
		set_knobs "$side" $dirs
		# shellcheck disable=SC2086 # a list of directories
		[ "$MODE" = counters ] && snapshot "$REAL_OUT/before" $dirs
	fi
	t0=$(now_ns)
	[ "$MARKING" = 0 ] || "$MARK" 0
	run_workload "$w"
	st=$?
	# The region's id: the run's start, unique in a boot under -icount.
	[ "$MARKING" = 0 ] || "$MARK" "$t0"
	t1=$(now_ns)
	kb=$(slab_kb)
	if ! in_tree "$side"; then
		# shellcheck disable=SC2086 # a list of directories
		[ "$MODE" = counters ] && snapshot "$REAL_OUT/after" $dirs
		serve_stop
		# The reaper takes each drained cache away at the next look (wait_gone
		# asks for one each second);
		# what still drains 2 s on is counted.
		# shellcheck disable=SC2086 # a list of names
		wait_gone 2 0 $names
		# Objects the kernel keeps for long (allocated while serving) keep
		# their caches draining; the count goes on the progress line.
		DRAINING=$(draining | wc -l)
	fi
	if [ $st != 0 ]; then
		echo "bench: FAILED: $w on $side exited $st: $(tail -n 2 "$REAL_OUT/$w.out" | tr '\n' ' ')"
		rc=1
		return 1
	fi
	# The program's own elapsed time; the clock around it if it printed none.
	ns=$(workload_ns "$w")
	if [ -z "$ns" ]; then
		echo "bench: note: $w printed no time of its own: the guest clock around it is used"
		ns=$((t1 - t0))
	fi
	metric=ms
	marks=
	case $MODE in
	icount | model) metric=minstr ;;
	esac
	[ "$MARKING" = 0 ] || marks=" n=1000000 marks=$t0"
	RUN_VALUE=$(awk -v n="$ns" 'BEGIN { printf "%.1f", n / 1e6 }')
	[ "$round" -ge 0 ] || return 0
	if [ "$MODE" = counters ]; then
		# The sum over the served caches (variant -), and each cache that
		# took at least 10% of the run's allocations, and kmalloc-256
		# (the cache of the seed's slabinfo -r table), as variant=NAME.
		op=$w
		[ "$LABELLED" = 0 ] || op="$w@$(side_variant "$side")"
		awk -v w="$op" -v r="$round" -v mode="$MODE" -v cpus="$CPUS" '
			function out(v, c, x) {
				printf "rslub_bench: result mode=%s workload=counters op=%s size=0 batch=1 cpus=%s alloc=rslub variant=%s metric=%s round=%d value=%d\n", mode, w, cpus, v, c, r, x
			}
			FNR == NR { before[$1 " " $2] = $3; next }
			{
				d = $3 - before[$1 " " $2]
				all[$2] += d
				per[$1 " " $2] = d
				if ($2 ~ /^alloc_(fast|slow)path$/) { allocs[$1] += d; total += d }
			}
			END {
				for (c in all) out("-", c, all[c])
				for (k in per) {
					split(k, p, " ")
					if (p[1] == "kmalloc-256" || allocs[p[1]] * 10 >= total && total > 0)
						out(p[1], p[2], per[k])
				}
			}' "$REAL_OUT/before" "$REAL_OUT/after" | sort
		result "$op" rslub served "$round" "$nserved" counters
	else
		v=$(side_variant "$side")
		result "$w" "$(side_alloc "$side")" "$metric" "$round" "$RUN_VALUE" real "$v" "$marks"
		result "$w" "$(side_alloc "$side")" slab_kb "$round" "$kb" real "$v"
	fi
	echo "rslub_bench: line mode=$MODE op=$w alloc=$side round=$round: $(workload_line "$w")"
	return 0
}

r=$((0 - WARMUP))
last=$ROUNDS
[ "$MODE" = counters ] && last=${COUNTER_ROUNDS:-1}
while [ $r -lt "$last" ]; do
	for w in $WORKLOADS; do
		# A B in even rounds, B A in odd ones.
		order=$sides
		[ $((r % 2)) = 0 ] || order=$(echo "$sides" | awk '{ for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "") }')
		line=""
		for side in $order; do
			one "$w" "$side" "$r" || break 3
			line="$line $side $RUN_VALUE"
		done
		what="round $((r + 1))/$last"
		[ $r -ge 0 ] || what=warm-up
		echo "bench: $MODE: $what: $w:$line ($DRAINING caches draining; $(date +%T))"
	done
	r=$((r + 1))
done
if serve_available && [ -n "$(cat "$SERVE_FILE")" ]; then
	serve_stop
	wait_gone 30 1 || echo "bench: note: still draining at the end: $(draining | tr '\n' ' ')"
fi
[ "$LOADED" = 0 ] || rmmod rslub ||
	echo "bench: note: rmmod rslub refused (served caches left: $(tr '\n' ' ' 2>/dev/null <"$SERVE_FILE"))"
echo "bench: guest done (rc $rc)"
exit $rc
