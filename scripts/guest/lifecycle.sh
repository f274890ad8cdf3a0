#!/bin/sh
# Runs inside the VM with rslub unloaded. The module lifecycle test:
#  - stress/modcycle: CYCLES (50) loads and unloads of rslub.ko in one
#    process; every second cycle also loads stress/rslub_holder.ko (creates,
#    uses and destroys caches, then holds one with live objects) and checks
#    that unloading rslub is refused while it is held and that sysfs still
#    works (checks cycles, holder, refused, sysfs);
#  - once with kmod's tools: `rmmod rslub` with the holder loaded fails
#    saying "in use" (rmmod-in-use), and a 2 s rslub_stress run passes
#    meanwhile (still-works);
#  - every holder unload logged "pages=0": rslub returned all its slab pages
#    (pages); nothing of rslub is left loaded (unloaded); MemAvailable after
#    sync and drop_caches is within 1% of the start (memory).
#  - rcu-unload: rslub unloaded right after a SLAB_TYPESAFE_BY_RCU cache
#    was destroyed with an object out and freed slabs waiting for RCU;
#  - with the slab backend hook: a serve request against rmmod
#    (serve-vs-rmmod) and serving refused under debug= (serve-debug).
# Prints "lifecycle: plan N" (10, or 12 with the hook), then N lines
# "lifecycle: PASS <check>" or
# "lifecycle: FAIL <check>: <why>" (make check counts them against
# the plan); exit status 0 when all pass.
#
# Usage: scripts/guest/lifecycle.sh [CYCLES]
cd "$(dirname "$0")/../.." || exit 2
cycles=${1:-50}
KEEP=100

# kunit runs rslub.ko's suite (rslub_percpu) at every load of the module:
# not here (a filter_glob no suite name matches; absent without kunit).
[ -w /sys/module/kunit/parameters/filter_glob ] &&
	printf rslub-no-suites >/sys/module/kunit/parameters/filter_glob
mem_available() {	# KiB
	sync
	echo 3 >/proc/sys/vm/drop_caches
	awk '/^MemAvailable:/ { print $2 }' /proc/meminfo
}
rc=0
# The serving checks need the kernel's slab backend hook (patches/), and
# a kernel without KASAN (under which it serves no cache).
hook=0
grep -q " slab_backend_register$" /proc/kallsyms 2>/dev/null &&
	! grep -q " kasan_report$" /proc/kallsyms && hook=1
echo "lifecycle: plan $((10 + 2 * hook))"
result() {	# result CHECK PROBLEM: PASS when PROBLEM is empty
	if [ -z "$2" ]; then
		echo "lifecycle: PASS $1"
	else
		echo "lifecycle: FAIL $1: $2"
		rc=1
	fi
}

if grep -q "^rslub " /proc/modules; then
	echo "lifecycle: FAIL setup: rslub.ko is loaded already"
	exit 1
fi
mem0=$(mem_available)

stress/modcycle "$cycles" rslub.ko stress/rslub_holder.ko $KEEP || rc=1

# The same refusal through kmod, as a user sees it, and rslub meanwhile.
e_inuse="" e_works=""
if insmod rslub.ko && insmod stress/rslub_holder.ko keep=$KEEP; then
	if rmmod rslub >/tmp/rmmod.out 2>&1; then
		e_inuse="rmmod rslub succeeded while rslub_holder holds caches"
	elif ! grep -q "in use" /tmp/rmmod.out; then
		e_inuse="rmmod rslub failed without saying 'in use': $(cat /tmp/rmmod.out)"
	fi
	scripts/guest/stress.sh 2 hotplug_ms=0 >/tmp/stress.out 2>&1 ||
		e_works="$(grep -m1 '^stress: FAIL' /tmp/stress.out)"
	rmmod rslub_holder || e_works="${e_works:-rmmod rslub_holder failed}"
	rmmod rslub || e_works="${e_works:-rmmod rslub failed after rslub_holder was removed}"
else
	e_inuse="insmod rslub.ko or stress/rslub_holder.ko failed"
	e_works=$e_inuse
	rmmod rslub_holder 2>/dev/null
	rmmod rslub 2>/dev/null
fi
result rmmod-in-use "$e_inuse"
result still-works "$e_works"

# A SLAB_TYPESAFE_BY_RCU cache destroyed with an object out, its freed
# slabs still waiting for their grace period, and rslub unloaded at once:
# rslub's unload waits for those RCU callbacks (they run in its text).
e_rcu=""
n0=$(dmesg | wc -l)
if insmod rslub.ko && insmod stress/rslub_holder.ko keep=1 rcu_busy=1; then
	rmmod rslub_holder || e_rcu="rmmod rslub_holder failed"
	rmmod rslub || e_rcu="${e_rcu:-rmmod rslub failed}"
	# Time for a callback left behind to run (and oops).
	sleep 2
	line=$(dmesg | tail -n "+$((n0 + 1))" | grep -m1 "rslub_holder: rcu_busy: destroy")
	case "$line" in
	*"returned -16 with "[1-9]*) ;;
	*) e_rcu="${e_rcu:-the holder did not leave RCU-deferred slabs behind: '${line:-no line}'}" ;;
	esac
	bad=$(dmesg | tail -n "+$((n0 + 1))" | grep -m1 -E "BUG:|Oops|WARNING:|general protection")
	[ -z "$bad" ] || e_rcu="after unloading: $bad"
	echo "lifecycle: rcu-unload: $line"
else
	e_rcu="insmod rslub.ko or stress/rslub_holder.ko rcu_busy=1 failed"
	rmmod rslub_holder 2>/dev/null
	rmmod rslub 2>/dev/null
fi
result rcu-unload "$e_rcu"

if [ $hook = 1 ]; then
	# A serve request against rmmod: the write pauses between listing and
	# serving (serve_pause_ms, test-only), rmmod starts meanwhile and
	# pauses before unregistering, and the write resumes in that gap. It
	# must be refused: serving from a module being unloaded would leave
	# the kernel calling into freed text.
	e_race=""
	n0=$(dmesg | wc -l)
	if insmod rslub.ko serve_pause_ms=3000; then
		(echo kmalloc-8k >/sys/kernel/rslub/serve 2>/tmp/serve-race.err
			echo $? >/tmp/serve-race.rc) &
		writer=$!
		# Sequenced by the kernel log, not by the clock.
		i=0
		until dmesg | tail -n "+$((n0 + 1))" | grep -q "pausing .* before serving"; do
			i=$((i + 1))
			[ $i -le 600 ] || break
			sleep 0.1
		done
		rmmod rslub || e_race="rmmod rslub failed while a serve request paused"
		wait $writer
		rcw=$(cat /tmp/serve-race.rc 2>/dev/null)
		case "$rcw" in
		0) e_race="${e_race:-the serve request succeeded against a module being unloaded}" ;;
		'' | *[!0-9]*) e_race="${e_race:-the serve request never ended (status '$rcw')}" ;;
		esac
		grep -q "^rslub " /proc/modules && e_race="${e_race:-rslub is still loaded}"
		# A kernel calling into the unloaded module kills what runs next.
		log=$(dmesg) || e_race="dmesg failed after the race (exit $?): the kernel is broken"
		bad=$(echo "$log" | tail -n "+$((n0 + 1))" | grep -m1 -E "BUG:|Oops|WARNING:|general protection")
		[ -z "$bad" ] || e_race="$bad"
		echo "lifecycle: serve-vs-rmmod: the write ended: $(cat /tmp/serve-race.err 2>/dev/null | tail -n 1)"
	else
		e_race="insmod rslub.ko serve_pause_ms=3000 failed"
	fi
	result serve-vs-rmmod "$e_race"

	# rslub's debug= (red zones, poison) changes the layout of its objects,
	# and the kernel writes served objects by SLUB's: serving is refused.
	e_dbg=""
	n0=$(dmesg | wc -l)
	if insmod rslub.ko debug=ZP; then
		if echo kmalloc-8k >/sys/kernel/rslub/serve 2>/dev/null; then
			e_dbg="kmalloc-8k served with debug=ZP"
			echo -kmalloc-8k >/sys/kernel/rslub/serve
		elif ! dmesg | tail -n "+$((n0 + 1))" | grep -q "serve kmalloc-8k: refused: .*debug="; then
			e_dbg="refused without a line saying it is debug=: $(dmesg | tail -n 1)"
		elif ! grep -q "debug=" /sys/kernel/rslub/serve_refused; then
			e_dbg="serve_refused does not say why: $(head -n 1 /sys/kernel/rslub/serve_refused)"
		fi
		i=0
		while [ -n "$(cat /sys/kernel/rslub/serve)" ] && [ $i -lt 300 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		rmmod rslub || e_dbg="${e_dbg:-rmmod rslub failed}"
	else
		e_dbg="insmod rslub.ko debug=ZP failed"
	fi
	result serve-debug "$e_dbg"
fi

# Each holder unload logs the pages rslub still holds: 0, nothing else uses it.
loads=$(dmesg | grep -c "rslub_holder: holding ")
released=$(dmesg | grep -c "rslub_holder: released, pages=0$")
e_pages=""
[ "$loads" -gt 0 ] && [ "$released" = "$loads" ] ||
	e_pages="$released of $loads holder unloads logged 'released, pages=0' $(dmesg | grep -m1 -E 'rslub_holder: (released, pages=[1-9]|FAIL)')"
result pages "$e_pages"

e_unl=""
if grep -qE "^rslub(_holder|_stress)? " /proc/modules || [ -e /sys/kernel/rslub ]; then
	e_unl="still loaded: $(grep -E '^rslub' /proc/modules | cut -d' ' -f1 | tr '\n' ' ')"
fi
result unloaded "$e_unl"

mem1=$(mem_available)
delta=$((mem1 - mem0))
echo "lifecycle: MemAvailable ${mem0} KiB -> ${mem1} KiB (delta $delta KiB)"
e_mem=""
[ ${delta#-} -le $((mem0 / 100)) ] || e_mem="MemAvailable moved by $delta KiB, more than 1% of $mem0 KiB"
result memory "$e_mem"
exit $rc
