#!/bin/sh
# Runs inside the VM: rslub when memory runs out. Loads rslub.ko (unless
# loaded) and prints one "faults: PASS|FAIL <check> ..." or
# "pressure: PASS|FAIL <check> ..." line per check, which make check counts.
# Exit status 0 when every check passed.
#
# Usage: scripts/guest/oom.sh [--dmesg] faults SECONDS [PERCENT]
#        scripts/guest/oom.sh [--dmesg] pressure [ROUNDS]
#   --dmesg   clear the kernel log first and print this run's log at the end
#             between ==RSLUB-DMESG-BEGIN== and ==RSLUB-DMESG-END==
#   faults    (8 checks) the kernel's fault injection, failslab and
#             fail_page_alloc through /sys/kernel/debug: rslub_oom.ko
#             test=create fails each request of rslub_cache_create, of the
#             random_freelist tunable, of single and bulk allocations once
#             (fail-nth; create, random_freelist, alloc, bulk), and the
#             page request of a cache with a fallback (fallback); then
#             rslub_stress.ko faults=1 runs SECONDS with PERCENT (10) of its
#             kthreads' slab and page requests failing at random, sleeping
#             and atomic, order 0 and up (stress); the counts of injected
#             failures (injected); every out-of-memory line of
#             docs/reliability.md in the log (log-lines).
#   pressure  (2 checks per round, ROUNDS + 1 rounds, + memory)
#             rslub_oom.ko test=pressure: fill until NULL and give back
#             (fill), the shrinker under pressure (shrinker); one round,
#             then MemAvailable with rslub unloaded, ROUNDS rounds, and
#             MemAvailable after unloading within 1% of before (memory).
#             Meant for a VM of 256-384 MB.
cd "$(dirname "$0")/../.." || exit 2
# kunit runs rslub.ko's suite (rslub_percpu) at every load of the module:
# not here (a filter_glob no suite name matches; absent without kunit).
[ -w /sys/module/kunit/parameters/filter_glob ] &&
	printf rslub-no-suites >/sys/module/kunit/parameters/filter_glob
dump=0
if [ "${1:-}" = --dmesg ]; then
	dump=1
	shift
fi
mode=${1:-}
[ $# -gt 0 ] && shift
LOG=/tmp/rslub-oom-dmesg.log
: >$LOG
[ $dump = 1 ] && dmesg -C
rc=0
say() {	# say PASS|FAIL check text
	echo "$mode: $1 $2${3:+ $3}"
	[ "$1" = PASS ] || rc=1
}
# The kernel log since the last call (kept whole in $LOG: the create sweep
# logs a line per failed create, more than the ring buffer should hold).
collect() {
	if [ $dump = 1 ]; then dmesg -c >>$LOG; else dmesg >$LOG; fi
}
# Lines of rslub_oom.ko as checks of this mode.
oom_checks() {
	grep "rslub_oom: \(PASS\|FAIL\) " $LOG | sed 's/^\[[ 0-9.]*\] //' |
		sed "s/^rslub_oom: \(PASS\|FAIL\) \([a-z_]*\):* */$mode: \1 \2 /"
	grep -q "rslub_oom: FAIL " $LOG && rc=1
	grep -c "rslub_oom: \(PASS\|FAIL\) " $LOG >/tmp/rslub-oom-n
}
meminfo() {
	awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo
}
# MemAvailable plus the free pages on the per-CPU page lists, which
# MemAvailable leaves out: they hold a few MB here, more or less from one
# moment to the next (kB).
available() {
	echo $(($(meminfo MemAvailable) + \
		$(awk '$1 == "count:" { n += $2 } END { print n + 0 }' /proc/zoneinfo) * \
		$(getconf PAGESIZE) / 1024))
}

loaded_rslub=0
if ! grep -q "^rslub " /proc/modules; then
	if insmod rslub.ko; then loaded_rslub=1; else
		echo "$mode: FAIL setup insmod rslub.ko failed"
		exit 1
	fi
fi

FI=/sys/kernel/debug
# fi_set PROBABILITY TIMES: both failslab and fail_page_alloc, for tasks
# marked make-it-fail (and any task's fail-nth), sleeping requests too,
# every order, no log line or stack per failure.
fi_set() {
	for d in failslab fail_page_alloc; do
		echo 0 >$FI/$d/probability
		echo 0 >$FI/$d/verbose
		echo N >$FI/$d/ignore-gfp-wait
		echo Y >$FI/$d/task-filter
		echo 1 >$FI/$d/interval
		echo 0 >$FI/$d/space
		echo "$2" >$FI/$d/times
		echo "$1" >$FI/$d/probability
	done
	echo 0 >$FI/fail_page_alloc/min-order
}

case $mode in
faults)
	secs=${1:-10}
	pct=${2:-10}
	# rslub_oom.ko test=create's 4 (create, random_freelist, alloc, bulk),
	# then stress, injected, log-lines.
	echo "$mode: plan 8"
	[ -d $FI/failslab ] || mount -t debugfs debugfs $FI 2>/dev/null
	if [ ! -d $FI/failslab ] || [ ! -d $FI/fail_page_alloc ]; then
		say FAIL setup "no $FI/failslab or fail_page_alloc (CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS)"
	else
		# 1. Systematic: fail-nth only (probability 0). A big "times"
		# counts the failures down.
		big=1000000000
		fi_set 0 $big
		insmod stress/rslub_oom.ko test=create
		create_slab=$((big - $(cat $FI/failslab/times)))
		create_page=$((big - $(cat $FI/fail_page_alloc/times)))
		collect
		oom_checks
		grep -q "^rslub_oom " /proc/modules && rmmod rslub_oom
		left=$(ls /sys/kernel/rslub | grep -c "^rslub_oom")
		[ "$left" = 0 ] || { echo "$mode: FAIL create $left rslub_oom directories left in /sys/kernel/rslub"; rc=1; }

		# 2. At random: PERCENT of the stress kthreads' requests.
		fi_set "$pct" $big
		insmod stress/rslub_stress.ko duration="$secs" faults=1
		ins=$?
		slab_left=$(cat $FI/failslab/times)
		page_left=$(cat $FI/fail_page_alloc/times)
		fi_set 0 -1
		collect
		grep "rslub_stress: " $LOG | sed 's/^\[[ 0-9.]*\] //' |
			grep -v "rslub_stress: cache \|rslub_stress: t=" >/tmp/rslub-stress.out
		sed 's/^/  /' /tmp/rslub-stress.out
		why=$(grep -m1 "rslub_stress: FAIL" /tmp/rslub-stress.out | sed 's/.*rslub_stress: FAIL //')
		if [ $ins = 0 ] && grep -q "rslub_stress: PASS" /tmp/rslub-stress.out; then
			say PASS stress "$secs s, $pct% of requests failing: $(grep -o 'null_returns=[0-9]*.*' /tmp/rslub-stress.out)"
			rmmod rslub_stress
		else
			say FAIL stress "${why:-insmod exited $ins without a PASS line}"
		fi
		slab_failed=$((big - slab_left))
		page_failed=$((big - page_left))
		counts="failed requests: by fail-nth failslab=$create_slab fail_page_alloc=$create_page; at random failslab=$slab_failed fail_page_alloc=$page_failed"
		if [ "$create_slab" -gt 0 ] && [ "$create_page" -gt 0 ] && [ "$page_failed" -gt 0 ]; then
			say PASS injected "$counts"
		else
			say FAIL injected "$counts: a kind of request never failed"
		fi

		# 3. Every out-of-memory line of docs/reliability.md was logged.
		# With kmemleak (the debug flavor), a create's first injected
		# failures hit kmemleak's and KASAN's own allocations beside
		# rslub's, which they absorb: that create succeeds, the registry
		# grows, and keeps its room after the destroy, so no later
		# attempt reaches its growth; its line is not asked for there.
		registry="create [^ ]*: out of memory for the registry"
		unprovoked=""
		want=4
		if [ -e $FI/kmemleak ]; then
			want=3
			unprovoked=" (the registry's not provoked: kmemleak absorbs the first failures)"
			registry=""
		fi
		missing=""
		seen=0
		for re in "create [^ ]*: out of memory for the cache" \
			${registry:+"$registry"} \
			"create [^ ]*: cannot add its sysfs directory" \
			"random_freelist: no memory for the shuffled index sequence; unchanged"; do
			n=$(grep -c "rslub: .*$re" $LOG)
			if [ "$n" -gt 0 ]; then
				seen=$((seen + 1))
				echo "  log: $n x \"$re\""
			else
				missing="$missing \"$re\""
			fi
		done
		if [ -z "$missing" ]; then
			say PASS log-lines "$seen of $want out-of-memory lines seen$unprovoked"
		else
			say FAIL log-lines "never logged:$missing"
		fi
	fi
	;;
pressure)
	rounds=${1:-1}
	# fill and shrinker for the first round and each of ROUNDS, memory.
	echo "$mode: plan $((2 * rounds + 3))"
	# The fill takes every page it can get on purpose: a program that needs
	# a page right then starts the OOM killer, which is the kernel's policy,
	# not rslub's. systemd-udevd, where the guest runs it (VM_UDEV=1: the
	# guest init leaves it out otherwise), does (it reads the test caches'
	# uevents): seen twice, even with its event queue stopped. It is
	# stopped (SIGSTOP) while the test runs, its events wait in its
	# socket, and it is continued afterwards.
	udev_pids=$(pidof systemd-udevd udevd)
	if [ -n "$udev_pids" ]; then
		command -v udevadm >/dev/null && udevadm settle -t 30
		kill -STOP $udev_pids
	fi
	# A first round squeezes out what drop_caches cannot free (file pages
	# mapped by running programs, ...): without it MemAvailable after the
	# test was up to 2% above the value before. Its checks count too.
	insmod stress/rslub_oom.ko test=pressure rounds=1
	grep -q "^rslub_oom " /proc/modules && rmmod rslub_oom
	if [ $loaded_rslub = 1 ]; then
		rmmod rslub || echo "$mode: FAIL unload rmmod rslub failed"
	fi
	sync
	echo 3 >/proc/sys/vm/drop_caches
	before=$(available)
	raw_before=$(meminfo MemAvailable)
	total=$(meminfo MemTotal)
	echo "  MemTotal $total kB, MemAvailable $(meminfo MemAvailable) kB, with the per-CPU lists $before kB (rslub not loaded)"
	[ $loaded_rslub = 1 ] && insmod rslub.ko
	insmod stress/rslub_oom.ko test=pressure rounds="$rounds"
	collect
	oom_checks
	[ "$(cat /tmp/rslub-oom-n)" = $((2 * rounds + 2)) ] ||
		{ echo "$mode: FAIL run $(cat /tmp/rslub-oom-n) of $((2 * rounds + 2)) checks reported"; rc=1; }
	grep -q "^rslub_oom " /proc/modules && rmmod rslub_oom
	if grep -q "invoked oom-killer\|Out of memory" $LOG; then
		say FAIL no-oom-kill "the OOM killer ran: $(grep -m1 'Killed process\|invoked oom-killer' $LOG)"
	fi
	if [ $loaded_rslub = 1 ]; then
		loaded_rslub=0
		rmmod rslub || { echo "$mode: FAIL unload rmmod rslub failed"; rc=1; }
	fi
	# Measured before udev runs its held events (its workers take memory).
	sync
	echo 3 >/proc/sys/vm/drop_caches
	after=$(available)
	echo "  MemAvailable alone: $raw_before kB before, $(meminfo MemAvailable) kB after"
	diff=$((after - before))
	line="MemAvailable (+ per-CPU free lists) $before kB before loading, $after kB after unloading ($diff kB, $(awk "BEGIN { printf \"%+.2f\", $diff * 100 / $before }")%)"
	if [ $((diff < 0 ? -diff : diff)) -le $((before / 100)) ]; then
		say PASS memory "$line"
	else
		say FAIL memory "$line: more than 1%"
	fi
	[ -n "$udev_pids" ] && kill -CONT $udev_pids
	;;
*)
	echo "usage: $0 [--dmesg] faults SECONDS [PERCENT] | pressure [ROUNDS]" >&2
	exit 2
	;;
esac

if [ $loaded_rslub = 1 ]; then
	rmmod rslub || { echo "$mode: FAIL unload rmmod rslub failed"; rc=1; }
fi
collect
if [ $dump = 1 ]; then
	echo "==RSLUB-DMESG-BEGIN=="
	cat $LOG
	echo "==RSLUB-DMESG-END=="
fi
exit $rc
