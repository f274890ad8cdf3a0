#!/bin/sh
# Runs inside the VM: loads rslub.ko and the KUnit module, unloads both, and
# prints the kernel log between markers for scripts/check.sh to parse.
cd "$(dirname "$0")/.." || exit 2
dmesg -C
rc=0
insmod rslub.ko || { echo "guest: insmod rslub.ko failed"; rc=1; }
[ $rc = 0 ] && { insmod kunit/rslub_kunit.ko || { echo "guest: insmod rslub_kunit.ko failed"; rc=1; }; }
rmmod rslub_kunit 2>/dev/null
rmmod rslub || { echo "guest: rmmod rslub failed"; rc=1; }
echo "==RSLUB-DMESG-BEGIN=="
dmesg
echo "==RSLUB-DMESG-END=="
exit $rc
