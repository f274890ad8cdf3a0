#!/bin/sh
# Runs inside the VM: loads rslub.ko (unless loaded) and rslub_stress.ko for
# SECONDS, prints the stress figures and one line "stress: PASS" or
# "stress: FAIL <why>", then unloads what it loaded. Exit status 0 on PASS.
#
# Usage: scripts/guest/stress.sh [--dmesg] SECONDS [rslub_stress params...]
#   --dmesg  clear the kernel log first and print it at the end between
#            ==RSLUB-DMESG-BEGIN== and ==RSLUB-DMESG-END== (scripts/stress.sh)
# Environment: RSLUB_PARAMS, module parameters for rslub.ko when this script
#   loads it (e.g. "max_empty=0"; "free_batch=8" for an rslub.ko built as
#   the free_batch variant, make VARIANT=free_batch).
cd "$(dirname "$0")/../.." || exit 2
dump=0
if [ "${1:-}" = --dmesg ]; then
	dump=1
	shift
fi
secs=${1:-60}
[ $# -gt 0 ] && shift
[ $dump = 1 ] && dmesg -C

# kunit runs rslub.ko's suite (rslub_percpu) at every load of the module:
# not here (a filter_glob no suite name matches; absent without kunit).
[ -w /sys/module/kunit/parameters/filter_glob ] &&
	printf rslub-no-suites >/sys/module/kunit/parameters/filter_glob
fail() {
	echo "stress: FAIL $*"
	rc=1
}
rc=0
loaded_rslub=0
if ! grep -q "^rslub " /proc/modules; then
	# shellcheck disable=SC2086 # a list of parameters
	if insmod rslub.ko ${RSLUB_PARAMS:-}; then loaded_rslub=1; else fail "insmod rslub.ko ${RSLUB_PARAMS:-} failed"; fi
fi
# The defaults in force; default_free_batch exists in the free_batch build
# variant only.
if [ -r /sys/kernel/rslub/default_max_empty ]; then
	defaults="max_empty=$(cat /sys/kernel/rslub/default_max_empty)"
	[ -r /sys/kernel/rslub/default_free_batch ] &&
		defaults="free_batch=$(cat /sys/kernel/rslub/default_free_batch) $defaults"
	echo "stress: rslub defaults: $defaults"
fi
if [ $rc = 0 ]; then
	t0=$(date +%s)
	insmod stress/rslub_stress.ko duration="$secs" "$@"
	ins=$?
	t1=$(date +%s)
	# This run's lines: from the last "seed=" line (the module's first) on.
	dmesg | grep "rslub_stress: " | sed 's/^\[[ 0-9.]*\] //' |
		awk '/^rslub_stress: seed=/ { n = 0 } { line[n++] = $0 } END { for (i = 0; i < n; i++) print line[i] }' \
		>/tmp/rslub-stress.out
	grep -v "rslub_stress: cache \|rslub_stress: t=" /tmp/rslub-stress.out
	why=$(grep -m1 "rslub_stress: FAIL" /tmp/rslub-stress.out | sed 's/.*rslub_stress: FAIL //')
	if [ $ins = 0 ] && grep -q "rslub_stress: PASS" /tmp/rslub-stress.out; then
		echo "stress: PASS $((t1 - t0)) s in insmod ($secs s of stress)"
		rmmod rslub_stress || fail "rmmod rslub_stress failed"
	elif [ -n "$why" ]; then
		fail "$why"
	else
		fail "insmod rslub_stress.ko exited $ins without a PASS line"
	fi
fi
if [ $loaded_rslub = 1 ]; then
	rmmod rslub || fail "rmmod rslub failed"
fi
if [ $dump = 1 ]; then
	echo "==RSLUB-DMESG-BEGIN=="
	dmesg
	echo "==RSLUB-DMESG-END=="
fi
exit $rc
