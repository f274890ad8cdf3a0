#!/bin/sh
# Runs inside the bench VM (make bench, harness/bench.py, boots it): loads rslub.ko, then
# the bench module once per workload, size (and bulk batch), so that each
# load's result lines fit the kernel log, and prints every result line on
# stdout with a progress line per workload. churn loads the module once per
# round; it stays loaded with its live objects while this script reads the
# pages each cache holds from sysfs, before and after shrink.
#
# Environment: MODE (icount|wall|model|model8|model16|model32), MARKS (1: the bench module
# marks its windows in icount mode too, for the plugin's model=off count),
# WORKLOADS, SIZES, BATCHES,
# ALLOCS, OPS, ROUNDS, CHURN_ROUNDS, MAX_CPUS, REMOTE_BATCH, REMOTE_CPU (the
# freeing CPU of remote), BUDGET_KB (the bench module's budget_kb), PAR_CPUS
# (parallel's CPU counts, e.g. 1,2,4,8: par_cpus), RSLUB_PARAMS (for rslub.ko),
# RSLUB_BUILDS ("LABEL=PATH[?PARAM,PARAM] ...", default "default=rslub.ko"):
# the builds of rslub.ko to measure in turn, each after rmmod of the one
# before, loaded with RSLUB_PARAMS and its own PARAMs (a suite's LOADS). The
# first runs ALLOCS; each later one (a build variant, Kbuild VARIANT=) runs
# ALLOCS' rslub entries only, or VARIANT_ALLOCS when set (rslub entries
# with knobs only a variant has, e.g. rslub:free_batch=8). With more than
# one build, rslub's entries are labelled build=LABEL (the first build's
# columns are the baseline). RSLUB_BUILDS=none loads no rslub.ko at all:
# a kernel without rslub (make bench SUITE=classic on Linux 6.12) runs the
# bench module built without it, ALLOCS slub and floor.
cd "$(dirname "$0")/../.." || exit 2
MODE=${MODE:-icount}
WORKLOADS=${WORKLOADS:-pair repeat bulk remote churn}
SIZES=${SIZES:-8 16 32 64 128 256 512 1024 2048 4096 8192 16384}
BATCHES=${BATCHES:-1 8 16 32 64 128}
ALLOCS=${ALLOCS:-slub,rslub,floor}
OPS=${OPS:-10000}
ROUNDS=${ROUNDS:-5}
CHURN_ROUNDS=${CHURN_ROUNDS:-3}
MAX_CPUS=${MAX_CPUS:-0}
REMOTE_BATCH=${REMOTE_BATCH:-16}
REMOTE_CPU=${REMOTE_CPU:--1}
BENCH=bench/rslub_bench.ko
# served, draining, rslub_dirs, sum_attr (assignments and functions only).
. scripts/guest/real-lib.sh

dmesg -n 1	# results go through dmesg, not the (slow) console
dmesg -C
# kunit runs rslub.ko's suite (rslub_percpu) at every load of the module:
# not here (a filter_glob no suite name matches; absent without kunit).
[ -w /sys/module/kunit/parameters/filter_glob ] &&
	printf rslub-no-suites >/sys/module/kunit/parameters/filter_glob
RSLUB_BUILDS=${RSLUB_BUILDS:-default=rslub.ko}
echo "bench: guest: $(nproc) CPUs, $(uname -r), mode $MODE, allocators $ALLOCS, rslub.ko ${RSLUB_PARAMS:-(defaults)}, builds: $RSLUB_BUILDS"
rc=0

# load ARGS...: one run of the bench module; prints its log lines.
load() {
	out=$(insmod $BENCH mode="$MODE" marks="${MARKS:-0}" allocs="$ALLOCS" ops="$OPS" rounds="$ROUNDS" \
		max_cpus="$MAX_CPUS" remote_batch="$REMOTE_BATCH" remote_cpu="$REMOTE_CPU" \
		${BUDGET_KB:+budget_kb="$BUDGET_KB"} ${PAR_CPUS:+par_cpus="$PAR_CPUS"} "$@" 2>&1)
	st=$?
	dmesg -c | grep "rslub_bench:"
	# Success is -EAGAIN ("Resource temporarily unavailable") or staying loaded.
	case "$st:$out" in
	0:* | *"temporarily unavailable"*) return 0 ;;
	esac
	echo "bench: FAILED: insmod $BENCH $*: $out"
	rc=1
	return 1
}

# pages SYSFSDIR: slabs x 2^order, from the in-tree format "N N0=.. N1=..".
pages() {
	slabs=$(cut -d' ' -f1 "$1/slabs")
	order=$(cat "$1/order")
	echo $((slabs << order))
}

churn() {
	r=0
	while [ $r -lt "$CHURN_ROUNDS" ]; do
		log=$(load workloads=churn sizes="$(echo $SIZES | tr ' ' ,)" round_base=$r)
		st=$?
		echo "$log"
		[ $st = 0 ] || { rc=1; return; }
		echo "$log" | grep "rslub_bench: churn " | while read -r line; do
			set -- $(echo "${line#*rslub_bench: churn }" | tr ' ' '\n' | cut -d= -f2-)
			alloc=$1 variant=$2 size=$3 round=$4 sysfs=$6
			key="mode=$MODE workload=churn size=$size batch=1 cpus=1 alloc=$alloc variant=$variant metric=pages round=$round"
			echo "rslub_bench: result $key op=end value=$(pages "$sysfs")"
			echo 1 >"$sysfs/shrink"
			echo "rslub_bench: result $key op=after_shrink value=$(pages "$sysfs")"
		done
		# Not loaded: no allocator of ALLOCS has churn caches (kmalloc,
		# kserved, floor), so the module had nothing to hold.
		[ ! -d /sys/module/rslub_bench ] || rmmod rslub_bench ||
			{ echo "bench: FAILED: rmmod rslub_bench"; rc=1; return; }
		r=$((r + 1))
	done
}

# workloads: every workload of WORKLOADS with the rslub.ko loaded now.
workloads() {
	for w in $WORKLOADS; do
		echo "bench: $MODE: $w ($(date +%T))"
		case $w in
		churn) churn ;;
		bulk)
			for s in $SIZES; do
				for b in $BATCHES; do
					load workloads=bulk sizes="$s" batches="$b" || break 2
				done
			done ;;
		*)
			for s in $SIZES; do
				load workloads="$w" sizes="$s" || break
			done ;;
		esac
	done
}

# label_allocs LABEL ALL: ALLOCS with its rslub entries labelled build=LABEL
# (the tables' columns, the first build's the baseline); the other
# allocators' entries only when ALL is 1.
label_allocs() {
	echo "$ALLOCS" | tr ',' '\n' | { if [ "$2" = 1 ]; then cat; else grep '^rslub'; fi; } |
		sed -e "s/^rslub:/rslub:build=$1:/" -e t -e "s/^rslub\$/rslub:build=$1/" | paste -sd,
}
# unload_rslub LAST: rmmod rslub.ko. Objects a served kmalloc cache handed
# the kernel (the kserved rounds) keep that cache draining, and rslub.ko
# loaded, until the kernel frees them: rslub cannot take them back. So a
# refused rmmod waits for the drain while the count of objects out still
# falls (dropping the kernel's reclaimable caches every 5 polls), then tries
# again. After the last build a cache still draining is reported and rslub
# stays loaded; before another build it is a failure (two rslub.ko cannot
# be loaded at once).
unload_rslub() {
	rmmod rslub 2>/dev/null && return 0
	_names=$(draining)
	if [ -z "$_names" ]; then
		rmmod rslub && return 0
		echo "bench: FAILED: rmmod rslub refused with nothing draining"
		return 1
	fi
	_last=-1 _still=0 _polls=0
	# shellcheck disable=SC2086 # a list of names
	while [ -n "$(draining)" ] && [ "$_still" -lt 5 ] && [ "$_polls" -lt 120 ]; do
		[ $((_polls % 5)) = 0 ] && echo 3 >/proc/sys/vm/drop_caches
		sleep 1
		_o=$(sum_attr objects $(rslub_dirs $_names))
		if [ "$_o" = "$_last" ]; then _still=$((_still + 1)); else _still=0 _last=$_o; fi
		_polls=$((_polls + 1))
	done
	rmmod rslub 2>/dev/null && return 0
	_left=""
	for _c in $(draining); do
		_left="$_left $_c($(cut -d' ' -f1 "/sys/kernel/rslub/$_c/objects" 2>/dev/null) objects)"
	done
	if [ "$1" = 1 ]; then
		echo "bench: note: rslub.ko stays loaded: the kernel still holds objects of served caches after $_polls s (draining:$_left)"
		return 0
	fi
	echo "bench: FAILED: rmmod rslub: the kernel still holds objects of served caches after $_polls s (draining:$_left); the next build cannot load"
	return 1
}

all_allocs=$ALLOCS
nbuilds=$(echo "$RSLUB_BUILDS" | wc -w)
first=1
if [ "$RSLUB_BUILDS" = none ]; then
	RSLUB_BUILDS=
	workloads
fi
# kserved serves the kernel's own kmalloc caches, and the kernel may keep
# objects of them for long: rslub.ko then cannot be unloaded for the next
# build. With several builds, kserved's rounds and kmalloc's (its
# baseline, interleaved with it) run last, in a load of the first build of
# their own, which may stay loaded.
late=
if [ "$nbuilds" -gt 1 ] && echo ",$all_allocs," | grep -q ',kserved,'; then
	late=$(echo "$all_allocs" | tr ',' '\n' | grep -x 'kmalloc\|kserved' | paste -sd,)
	all_allocs=$(echo "$all_allocs" | tr ',' '\n' | grep -vx 'kmalloc\|kserved' | paste -sd,)
	RSLUB_BUILDS="$RSLUB_BUILDS late:${RSLUB_BUILDS%% *}"
	nbuilds=$((nbuilds + 1))
fi
for b in $RSLUB_BUILDS; do
	pass=$b
	b=${b#late:}
	label=${b%%=*} ko=${b#*=} params=
	case $ko in *\?*) params=$(echo "${ko#*\?}" | tr ',' ' ') ko=${ko%%\?*} ;; esac
	ALLOCS=$all_allocs
	if [ $first = 0 ] && [ -n "${VARIANT_ALLOCS:-}" ]; then
		ALLOCS=$VARIANT_ALLOCS
	fi
	if [ "$pass" != "$b" ]; then
		ALLOCS=$late
	elif [ "$nbuilds" -gt 1 ]; then
		ALLOCS=$(label_allocs "$label" $first)
		echo "$ALLOCS" | grep -q '^rslub\|,rslub' ||
			{ echo "bench: FAILED: no rslub entry in ALLOCS for the $label build"; rc=1; break; }
	fi
	first=0
	built=$((${built:-0} + 1))
	# shellcheck disable=SC2086 # several parameters each
	insmod "$ko" ${RSLUB_PARAMS:-} $params ||
		{ echo "bench: FAILED: insmod $ko ${RSLUB_PARAMS:-} $params"; rc=1; break; }
	echo "bench: rslub.ko build '$label' ($ko): $(dmesg | grep -o 'rslub: loaded.*' | tail -n 1)"
	workloads
	unload_rslub $([ "$built" = "$nbuilds" ] && echo 1 || echo 0) || { rc=1; break; }
done
echo "bench: guest done (rc $rc)"
exit $rc
