#!/usr/bin/env bash
# make stress: boots the test kernel with 4 CPUs on 2 NUMA nodes, runs
# rslub_stress.ko for STRESS_SECONDS (60), and fails unless the module
# reports PASS and the kernel log has no WARNING/BUG/Oops/lockdep report or
# stack trace. Prints the figures. Log: results/stress/.
#
# Environment: STRESS_SECONDS (60), STRESS_PARAMS (extra module parameters,
#   e.g. "seed=123 hotplug_ms=100"), RSLUB_PARAMS (rslub.ko's, e.g.
#   "free_batch=32"), VM_CPUS (4), VM_NUMA (2), VM_TIMEOUT.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. scripts/lib.sh
OUT=${STRESS_OUT:-$ROOT/results/stress}
secs=${STRESS_SECONDS:-60}
rm -rf "$OUT"
mkdir -p "$OUT"
fail() { echo "stress: FAILED: $*"; exit 1; }

# The first command on a fresh machine may be this one: set up first (seconds
# when everything is there).
make -s setup || fail "setup (see the line above)"
KDIR=$(make -s kdir)
[ -n "$KDIR" ] && [ -d "$KDIR" ] || fail "no kernel build directory (make -s kdir printed '$KDIR')"
make -s modules >"$OUT/build.log" 2>&1 || { tail -n 30 "$OUT/build.log"; fail "module build"; }

echo "stress: $secs s on ${VM_CPUS:-4} CPUs, ${VM_NUMA:-2} NUMA nodes (log: $OUT/vm.log)"
t0=$(date +%s)
# Through a pipe, like check.sh: guest tools reopen /dev/stdout.
VM_CPUS=${VM_CPUS:-4} VM_NUMA=${VM_NUMA:-2} VM_TIMEOUT=${VM_TIMEOUT:-$((secs * 4 + 400))} \
	scripts/vm.sh "$KDIR" "RSLUB_PARAMS='${RSLUB_PARAMS:-}' scripts/guest-stress.sh --dmesg $secs ${STRESS_PARAMS:-}" 2>&1 | cat >"$OUT/vm.log"
rc=$?
wall=$(($(date +%s) - t0))
sed -n '/==RSLUB-DMESG-BEGIN==/,/==RSLUB-DMESG-END==/p' "$OUT/vm.log" >"$OUT/dmesg.log"

grep -E "^rslub_stress: |^stress: " "$OUT/vm.log" | grep -v "^rslub_stress: t=" | sed 's/^/  /'
echo "  wall time: $wall s (boot, load, run, unload)"
problems=""
[ "$rc" = 124 ] && problems="$problems\n  the guest timed out (VM_TIMEOUT)"
[ "$rc" = 0 ] || [ "$rc" = 124 ] || problems="$problems\n  the guest command exited $rc"
grep -q "^stress: PASS" "$OUT/vm.log" || problems="$problems\n  no 'stress: PASS' line"
[ -s "$OUT/dmesg.log" ] || problems="$problems\n  no kernel log captured"
bad=$(kernel_log_bad "$OUT/dmesg.log")
[ -z "$bad" ] || problems="$problems\n  kernel log reports:\n$bad"
if [ -n "$problems" ]; then
	echo -e "stress: FAILED:$problems"
	exit 1
fi
echo "stress: PASSED"
