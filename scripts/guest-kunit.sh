#!/bin/sh
# Runs inside the VM: loads rslub.ko and the KUnit module (the suites run at
# load), unloads both, runs rslabinfo against live caches, then (when set)
# the lifecycle test (RSLUB_LIFECYCLE=cycles) and a short stress
# (RSLUB_STRESS=seconds), and prints the kernel log between markers for
# scripts/check.sh to parse.
cd "$(dirname "$0")/.." || exit 2
RSLABINFO=tools/rslabinfo/target/release/rslabinfo
dmesg -C
rc=0
insmod rslub.ko || { echo "guest: insmod rslub.ko failed"; rc=1; }
[ $rc = 0 ] && { insmod kunit/rslub_kunit.ko || { echo "guest: insmod rslub_kunit.ko failed"; rc=1; }; }
rmmod rslub_kunit 2>/dev/null

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
if [ $rc = 0 ] && insmod bench/rslub_bench.ko hold=1 workloads=pair sizes=64 ops=2000 rounds=1; then
	check summary "rslub:rslub_bench_hold" $RSLABINFO
	check in-tree "^kmem_cache " $RSLABINFO --slab-only
	check activity "rslub:rslub_bench_hold .* 1000 " $RSLABINFO -A
	check report "Unlocked Cmpxchg Double redos" $RSLABINFO -r rslub_bench_hold
	check json '"source": "rslub"' $RSLABINFO --json --rslub-only
	$RSLABINFO -r rslub_bench_hold
	rmmod rslub_bench || { echo "guest: rmmod rslub_bench failed"; rc=1; }
else
	echo "rslabinfo: FAIL setup (insmod bench/rslub_bench.ko hold=1)"
fi
rmmod rslub || { echo "guest: rmmod rslub failed"; rc=1; }
# They print their own PASS/FAIL lines, which check.sh counts.
[ -z "${RSLUB_LIFECYCLE:-}" ] || scripts/guest-lifecycle.sh "$RSLUB_LIFECYCLE"
[ -z "${RSLUB_STRESS:-}" ] || scripts/guest-stress.sh "$RSLUB_STRESS"
echo "==RSLUB-DMESG-BEGIN=="
dmesg
echo "==RSLUB-DMESG-END=="
exit $rc
