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
# Prints "lifecycle: plan 9", then 9 lines "lifecycle: PASS <check>" or
# "lifecycle: FAIL <check>: <why>" (scripts/check.sh counts them against
# the plan); exit status 0 when all pass.
#
# Usage: scripts/guest-lifecycle.sh [CYCLES]
cd "$(dirname "$0")/.." || exit 2
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
echo "lifecycle: plan 9"
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
	scripts/guest-stress.sh 2 hotplug_ms=0 >/tmp/stress.out 2>&1 ||
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
