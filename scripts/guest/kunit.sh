#!/bin/sh
# Runs inside the VM: loads rslub.ko and the KUnit module (the suites run at
# load: rslub_percpu in rslub.ko, the others in rslub_kunit.ko), unloads both, runs rslabinfo against live caches, then (when set)
# the lifecycle test (RSLUB_LIFECYCLE=cycles) and a short stress
# (RSLUB_STRESS=seconds), and prints the kernel log between markers for
# make check (scripts/harness/check.py) to parse.
cd "$(dirname "$0")/../.." || exit 2
RSLABINFO=tools/rslabinfo/target/release/rslabinfo
dmesg -C
rc=0
# The KUnit module is loaded from a child memory cgroup: rslub_serve's
# charging case charges that cgroup (its suite init takes the loading
# task's). Without cgroup v2 or memcg the case skips itself.
CG=/sys/fs/cgroup
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG 2>/dev/null
if grep -qw memory $CG/cgroup.controllers 2>/dev/null; then
	echo +memory >$CG/cgroup.subtree_control && mkdir -p $CG/rslub-kt ||
		echo "guest: cannot make the memory cgroup $CG/rslub-kt"
fi
# rslub_serve's higher_orders_fail_softly: page requests of order 1 and up
# fail for the tasks that ask (make_it_fail). A failed request made without
# __GFP_NOWARN prints a stack (verbose 2), which fails this guest's kernel
# log check: the slab pages of a served cache must be asked for quietly.
FPA=/sys/kernel/debug/fail_page_alloc
if [ -d $FPA ]; then
	echo 2 >$FPA/verbose
	echo N >$FPA/ignore-gfp-wait
	echo Y >$FPA/task-filter
	echo 1 >$FPA/interval
	echo -1 >$FPA/times
	echo 1 >$FPA/min-order
	echo 100 >$FPA/probability
fi
insmod rslub.ko || { echo "guest: insmod rslub.ko failed"; rc=1; }
# rslub_serve's allocation_profiling_switched_on switches profiling on
# where the boot made that possible (sysctl.vm.mem_profiling=0).
kt_args=""
[ -e /proc/allocinfo ] && kt_args="profiling=1"
[ $rc = 0 ] && { sh -c "[ -d $CG/rslub-kt ] && echo \$\$ >$CG/rslub-kt/cgroup.procs; exec insmod kunit/rslub_kunit.ko $kt_args" ||
	{ echo "guest: insmod rslub_kunit.ko failed"; rc=1; }; }
if [ -d $FPA ]; then echo 0 >$FPA/probability; fi
rmmod rslub_kunit 2>/dev/null
# rslub.ko carries a suite too (rslub_percpu, rust/selftest.rs), which kunit
# runs at every load of the module: it ran at the load above. From here on
# kunit runs no suite at a module load (a glob no suite name matches), so
# the loads that follow (bad parameters, lifecycle, stress) run none, and
# the log holds one result per suite.
printf rslub-no-suites >/sys/module/kunit/parameters/filter_glob ||
	{ echo "guest: cannot set kunit's filter_glob"; rc=1; }

# rslabinfo on a live rslub cache next to the in-tree ones.
check() {	# check NAME PATTERN CMD...
	name=$1 pattern=$2
	shift 2
	if "$@" >/tmp/rslabinfo.out 2>&1 && grep -q -- "$pattern" /tmp/rslabinfo.out; then
		echo "rslabinfo: PASS $name"
	else
		echo "rslabinfo: FAIL $name"
		sed 's/^/  | /' /tmp/rslabinfo.out | head -20
	fi
}
echo "rslabinfo: plan 5"
if [ $rc = 0 ] && insmod bench/rslub_bench.ko hold=1 workloads=pair sizes=64 ops=2000 rounds=1; then
	check summary "rslub:rslub_bench_hold" $RSLABINFO
	check in-tree "^kmem_cache " $RSLABINFO --slab-only
	check activity "rslub:rslub_bench_hold .* 1000 " $RSLABINFO -A
	check report "Unlocked Cmpxchg Double redos" $RSLABINFO -r rslub_bench_hold
	# The report in the log too (docs/observability.md annotates one), from
	# the run just checked: each run of a program under TCG is dear.
	cp /tmp/rslabinfo.out /tmp/rslabinfo-report.out
	check json '"source": "rslub"' $RSLABINFO --json --rslub-only
	cat /tmp/rslabinfo-report.out
	rmmod rslub_bench || { echo "guest: rmmod rslub_bench failed"; rc=1; }
else
	echo "rslabinfo: FAIL setup (insmod bench/rslub_bench.ko hold=1)"
fi
rmmod rslub || { echo "guest: rmmod rslub failed"; rc=1; }

# Module parameters out of range or malformed: the load is refused with
# one kernel log line saying which (docs/reliability.md, "Bad input").
# The log is not cleared: the KUnit results in it are printed at the end.
new_log() {	# the kernel log lines after line $1
	dmesg | tail -n "+$(($1 + 1))"
}
badparam() {	# badparam PARAM=VALUE LOG-PATTERN
	n=$(dmesg | wc -l)
	if insmod rslub.ko "$1" 2>/dev/null; then
		echo "badparam: FAIL $1: loaded"
		rmmod rslub
	elif [ -e /sys/kernel/rslub ]; then
		echo "badparam: FAIL $1: /sys/kernel/rslub left behind"
	elif ! new_log "$n" | grep -q -- "$2"; then
		echo "badparam: FAIL $1: no log line matching '$2'"
		new_log "$n" | tail -n 3 | sed 's/^/  | /'
	else
		echo "badparam: PASS $1: $(new_log "$n" | grep -m1 -- "$2" | sed 's/^\[[^]]*\] //')"
	fi
}
if [ $rc = 0 ]; then
	echo "badparam: plan 10"
	badparam debug=X "debug=X: unknown flag letter 'X'"
	badparam cpu_partial=-5 "cpu_partial=-5: out of range -1..100000; not loading"
	badparam cpu_partial=100001 "cpu_partial=100001: out of range -1..100000"
	badparam min_partial=1001 "min_partial=1001: out of range -1..1000"
	badparam max_empty=1001 "max_empty=1001: out of range -1..1000"
	badparam max_empty=-2 "max_empty=-2: out of range -1..1000; not loading"
	badparam max_empty=4294967296 "invalid for parameter .max_empty'"
	badparam cpu_partial=abc "invalid for parameter .cpu_partial'"
	badparam harden=2 "invalid for parameter .harden'"
	# An unknown parameter is the module loader's business: it is ignored
	# with a line, and the load goes on.
	n=$(dmesg | wc -l)
	if insmod rslub.ko no_such_param=1 && [ -e /sys/kernel/rslub ] &&
		new_log "$n" | grep -q "unknown parameter 'no_such_param' ignored" && rmmod rslub; then
		echo "badparam: PASS no_such_param=1: loaded; $(new_log "$n" | grep -m1 "unknown parameter" | sed 's/^\[[^]]*\] //')"
	else
		echo "badparam: FAIL no_such_param=1"
	fi
fi
# They print their own PASS/FAIL lines, which make check counts.
[ -z "${RSLUB_LIFECYCLE:-}" ] || scripts/guest/lifecycle.sh "$RSLUB_LIFECYCLE"
[ -z "${RSLUB_STRESS:-}" ] || scripts/guest/stress.sh "$RSLUB_STRESS"
echo "==RSLUB-DMESG-BEGIN=="
dmesg
echo "==RSLUB-DMESG-END=="
exit $rc
