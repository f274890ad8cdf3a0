#!/usr/bin/env bash
# make stress: boots the test kernel with 4 CPUs on 2 NUMA nodes, runs
# rslub_stress.ko for STRESS_SECONDS (60), and fails unless the module
# reports PASS and the kernel log has no WARNING/BUG/Oops/lockdep report or
# stack trace. Prints the figures. Log: results/stress/.
#
# Environment: STRESS_SECONDS (60), STRESS_PARAMS (extra module parameters,
#   e.g. "seed=123 hotplug_ms=100"), RSLUB_PARAMS (rslub.ko's, e.g.
#   "max_empty=0"), VM_CPUS (4), VM_NUMA (2), VM_STALL, VM_TIMEOUT (scripts/vm.sh).
#
# FAULTS=1 (make stress FAULTS=1): the same VM shape runs
#   scripts/guest/oom.sh faults: every request of rslub_cache_create and of
#   the allocation paths failed once, then the stress for STRESS_SECONDS
#   with FAULT_PERCENT (10) of its kthreads' slab and page requests failing.
# PRESSURE=1 (make stress PRESSURE=1): a VM of VM_MEM (320M) with 2 CPUs
#   runs scripts/guest/oom.sh pressure: PRESSURE_ROUNDS (5) rounds of filling
#   rslub until NULL and of the shrinker under memory pressure.
# SERVE=1 (make stress SERVE=1): the stress VM shape runs
#   scripts/guest/serve.sh: rslub serves every cache it can ('*') from load
#   while hackbench, iperf3, execs and stress-ng (sockets, fork, mmap,
#   files) run beside rslub_stress.ko (CPU hotplug) for STRESS_SECONDS;
#   then validate of every served cache,
#   serving stopped, the served caches drained and gone, rslub unloaded.
# All pass only when every check line of the guest says PASS.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. scripts/lib.sh
OUT=${STRESS_OUT:-$ROOT/results/stress}
secs=${STRESS_SECONDS:-60}
rm -rf "$OUT"
mkdir -p "$OUT"
fail() { echo "stress: FAILED: $*"; exit 1; }
. scripts/serve-check.sh	# SERVE_CHECKS

# The first command on a fresh machine may be this one: set up first (seconds
# when everything is there).
make -s setup || fail "setup (see the line above)"
KDIR=$(rslub_kdir)
[ -n "$KDIR" ] && [ -d "$KDIR" ] || fail "no kernel build directory (make -s kdir printed '$KDIR')"
make -s modules >"$OUT/build.log" 2>&1 || { tail -n 30 "$OUT/build.log"; fail "module build"; }

kind=stress
cpus=${VM_CPUS:-4}
numa=${VM_NUMA:-2}
mem=${VM_MEM:-2G}
guest="RSLUB_PARAMS='${RSLUB_PARAMS:-}' scripts/guest/stress.sh --dmesg $secs ${STRESS_PARAMS:-}"
if [ "${FAULTS:-0}" = 1 ]; then
	kind=faults
	guest="scripts/guest/oom.sh --dmesg faults $secs ${FAULT_PERCENT:-10}"
elif [ "${SERVE:-0}" = 1 ]; then
	kind=serve
	# KFENCE samples while rslub serves, as in make check's serve guest.
	! grep -q '^CONFIG_KFENCE=y' "$KDIR/.config" || VM_APPEND=${VM_APPEND:-log_buf_len=4M kfence.sample_interval=100}
	guest="SERVE_KEPT=1 RSLUB_PARAMS='${RSLUB_PARAMS:-}' scripts/guest/serve.sh --dmesg $secs ${STRESS_PARAMS:-}"
elif [ "${PRESSURE:-0}" = 1 ]; then
	kind=pressure
	cpus=${VM_CPUS:-2}
	numa=${VM_NUMA:-0}
	mem=${VM_MEM:-320M}
	guest="scripts/guest/oom.sh --dmesg pressure ${PRESSURE_ROUNDS:-5}"
fi
echo "stress: $kind, $secs s on $cpus CPUs, $numa NUMA nodes, $mem (log: $OUT/vm.log)"
t0=$(date +%s)
# Through a pipe, like check.sh: guest tools reopen /dev/stdout. The
# stress prints nothing on stdout while it runs: the stall limit (the guest
# judged stuck, scripts/vm.sh) is the run's length and 300 s more.
VM_CPUS=$cpus VM_NUMA=$numa VM_MEM=$mem VM_APPEND=${VM_APPEND:-log_buf_len=4M} \
	VM_STALL=${VM_STALL:-$((secs + 300))} VM_TIMEOUT=${VM_TIMEOUT:-$((secs * 10 + 1800))} \
	VM_CONSOLE=$OUT/console.log \
	scripts/vm.sh "$KDIR" "$guest" 2>&1 | cat >"$OUT/vm.log"
rc=$?
wall=$(($(date +%s) - t0))
sed -n '/==RSLUB-DMESG-BEGIN==/,/==RSLUB-DMESG-END==/p' "$OUT/vm.log" >"$OUT/dmesg.log"

grep -E "^rslub_stress: |^stress: |^faults: |^pressure: |^serve: |^  (log|MemTotal|rslub_stress): " "$OUT/vm.log" |
	grep -v "rslub_stress: t=" | sed 's/^/  /'
echo "  wall time: $wall s (boot, load, run, unload)"
problems=""
[ "$rc" = 124 ] && problems="$problems\n  the guest was stuck (VM_STALL) or ran out of time (VM_TIMEOUT): $(grep -m1 '^vm: STUCK' "$OUT/vm.log"); stacks in $OUT/vm.log, console in $OUT/console.log"
[ "$rc" = 0 ] || [ "$rc" = 124 ] || problems="$problems\n  the guest command exited $rc"
if [ "$kind" = stress ]; then
	grep -q "^stress: PASS" "$OUT/vm.log" || problems="$problems\n  no 'stress: PASS' line"
else
	grep -q "^$kind: PASS" "$OUT/vm.log" || problems="$problems\n  no '$kind: PASS' line"
	! grep -q "^$kind: FAIL" "$OUT/vm.log" || problems="$problems\n  $(grep -c "^$kind: FAIL" "$OUT/vm.log") '$kind: FAIL' lines"
	if [ "$kind" = pressure ] && [ "$(grep -c "^pressure: PASS \(fill\|shrinker\)" "$OUT/vm.log")" != $((2 * ${PRESSURE_ROUNDS:-5} + 2)) ]; then
		problems="$problems\n  not every round reported fill and shrinker"
	fi
	# faults and pressure: as many checks passed as the guest planned (its
	# "KIND: plan N" line, printed beside the checks it counts).
	if [ "$kind" = faults ] || [ "$kind" = pressure ]; then
		plan=$(sed -n "s/^$kind: plan \([0-9][0-9]*\).*/\1/p" "$OUT/vm.log" | head -n 1)
		passed=$(grep -c "^$kind: PASS" "$OUT/vm.log")
		if [ -z "$plan" ]; then
			problems="$problems\n  no '$kind: plan N' line: the guest never reached its checks"
		elif [ "$passed" != "$plan" ]; then
			problems="$problems\n  $passed of $plan $kind checks passed"
		fi
	fi
	if [ "$kind" = serve ] && [ "$(grep -c "^serve: PASS" "$OUT/vm.log")" != "$SERVE_CHECKS" ]; then
		problems="$problems\n  $(grep -c "^serve: PASS" "$OUT/vm.log") of $SERVE_CHECKS serve checks passed"
	fi
fi
[ -s "$OUT/dmesg.log" ] || problems="$problems\n  no kernel log captured"
bad=$(kernel_log_bad "$OUT/dmesg.log")
[ -z "$bad" ] || problems="$problems\n  kernel log reports:\n$bad"
if [ -n "$problems" ]; then
	echo -e "stress: FAILED:$problems"
	exit 1
fi
echo "stress: PASSED"
