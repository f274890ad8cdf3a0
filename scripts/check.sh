#!/usr/bin/env bash
# make check: the setup-logic test, setup if needed, module build, then
# three VMs at once: KUnit in two shapes (2 CPUs; 4 CPUs on 2 NUMA nodes),
# with the module lifecycle test in the first and a short stress
# (CHECK_STRESS_SECONDS, 15) with CPU hotplug in the second, and a small
# one (320 MB, 2 CPUs) for rslub out of memory:
# injected failures and a short stress with them (CHECK_FAULT_SECONDS, 10),
# and one round of real memory pressure with the shrinker
# (scripts/guest-oom.sh). The host tests (also those of the free_batch
# build variant, --cfg rslub_free_batch), tool tests and lint run beside the
# VMs. The VMs boot from a snapshot of the built tree ($OUT/tree), so lint's
# rebuild cannot change what they load. CHECK_VMS=seq runs the VMs one after
# the other instead. Fails on any failed,
# crashed or missing suite or case, on a kernel WARNING/BUG/Oops/lockdep or
# context report, and on a guest timeout. Ends with "N passed, M failed".
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. scripts/lib.sh
. scripts/serve-check.sh	# start_serve, judge_serve (CHECK_SERVE=0: not run)
EXPECTED_SUITES="rslub_percpu rslub_api rslub_slub rslub_sysfs rslub_debug rslub_badinput rslub_serve"
CHECK_STRESS_SECONDS=${CHECK_STRESS_SECONDS:-15}
CHECK_FAULT_SECONDS=${CHECK_FAULT_SECONDS:-10}
OUT=${CHECK_OUT:-$ROOT/results/check}
rm -rf "$OUT"
mkdir -p "$OUT"
T0=$(date +%s)
step() { echo "check: [$(($(date +%s) - T0))s] $*"; }
# VMs run as background jobs, each its own process group (set -m): a failure
# elsewhere stops them (scripts/vm.sh then stops its QEMU).
set -m
vm_jobs=""
stop_vms() { local p; for p in $vm_jobs; do kill -TERM -- "-$p" 2>/dev/null; done; wait; }
fail() { echo "check: FAILED: $*"; stop_vms; echo "0 passed, 1 failed"; exit 1; }

total_pass=0
total_fail=0
total_skip=0
problems=""

# count_checks NAME LOG WHAT [EXPECTED]: counts "WHAT: PASS|FAIL" lines of
# LOG against EXPECTED or, without it, against the "WHAT: plan N" line the
# guest script prints before its checks (the count lives beside them).
count_checks() {
	local name=$1 log=$2 what=$3 expected=${4:-} p f
	if [ -z "$expected" ]; then
		expected=$(sed -n "s/^$what: plan \([0-9][0-9]*\).*/\1/p" "$log" | head -n 1)
		[ -n "$expected" ] || {
			problems="$problems\n  $name: no '$what: plan N' line: the guest never reached its $what checks"
			expected=0
		}
	fi
	p=$(grep -c "^$what: PASS" "$log")
	f=$(grep -c "^$what: FAIL" "$log")
	echo "  $name: $what: $p passed, $f failed"
	grep "^$what: FAIL" "$log" | sed "s/^/  $name: /"
	[ $((p + f)) -eq "$expected" ] ||
		problems="$problems\n  $name: $((p + f)) of $expected $what checks reported"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
}

step "setup logic (scripts/test-setup-logic.sh, log: $OUT/setup-logic.log)"
scripts/test-setup-logic.sh >"$OUT/setup-logic.log" 2>&1
count_checks host "$OUT/setup-logic.log" setup-logic "$(grep -c '^expect \|^exact \|^case \$[a-z]*kdir ' scripts/test-setup-logic.sh)"

step "setup"
make -s setup || fail "setup (see the line above)"
KDIR=$(rslub_kdir)
[ -n "$KDIR" ] && [ -d "$KDIR" ] || fail "no kernel build directory (make -s kdir printed '$KDIR')"

step "build modules (log: $OUT/build.log)"
make -s modules >"$OUT/build.log" 2>&1 || { tail -n 40 "$OUT/build.log"; fail "module build"; }
if grep -qiE "warning:" "$OUT/build.log"; then
	grep -iE -A3 "warning:" "$OUT/build.log" | head -n 40
	fail "module build printed warnings"
fi

# The alloc and free hit paths keep their shape (no call, one push, one
# cmpxchg16b, within the budget of docs/design.md): only where the C shim is
# inlined into the Rust (CONFIG_RUST_INLINE_HELPERS, the project's kernels).
if grep -q '^CONFIG_RUST_INLINE_HELPERS=y' "$KDIR/.config"; then
	step "fast-path shape (scripts/fastpath-shape.py, log: $OUT/shape.log)"
	python3 scripts/fastpath-shape.py rslub.ko >"$OUT/shape.log" 2>&1
	count_checks module "$OUT/shape.log" fastpath-shape 2
	grep "^fastpath-shape: PASS" "$OUT/shape.log" | sed "s/^/    /"
	grep -A60 "^fastpath-shape: FAIL" "$OUT/shape.log" | head -n 60
else
	step "fast-path shape: skipped (2 checks): $KDIR calls the C shim out of line (no CONFIG_RUST_INLINE_HELPERS)"
	total_skip=$((total_skip + 2))
fi

# start_shape NAME CPUS NUMA LIFECYCLE_CYCLES STRESS_SECONDS (0: not run):
# boots the VM in the background from the snapshot; its exit status goes to
# $OUT/vm-NAME.rc.
start_shape() {
	local name=$1 cpus=$2 numa=$3 cycles=$4 secs=$5 log=$OUT/vm-$1.log
	step "VM $name: $cpus CPUs, $numa NUMA node(s) (log: $log)"
	local env=""
	[ "$cycles" = 0 ] || env="$env RSLUB_LIFECYCLE=$cycles"
	# The stress runs the module as built (batched frees are a build
	# variant, tested on the host: the free_batch host tests below).
	[ "$secs" = 0 ] || env="$env RSLUB_STRESS=$secs"
	# Through a pipe: the guest tools reopen /dev/stdout, which on a plain
	# file would start writing at offset 0 again.
	(
		cd "$TREE" || exit 2
		VM_CPUS=$cpus VM_NUMA=$numa VM_TIMEOUT=${VM_TIMEOUT:-600} \
			scripts/vm.sh "$KDIR" "$env scripts/guest-kunit.sh" 2>&1 | cat >"$log"
		echo "${PIPESTATUS[0]}" >"$OUT/vm-$name.rc"
	) &
	vm_jobs="$vm_jobs $!"
}

# judge_shape NAME LIFECYCLE_CYCLES STRESS_SECONDS: counts the VM's results.
judge_shape() {
	local name=$1 cycles=$2 secs=$3 log=$OUT/vm-$1.log
	local rc
	rc=$(cat "$OUT/vm-$name.rc" 2>/dev/null || echo 2)
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		problems="$problems\n  $name: guest timed out (VM_TIMEOUT=${VM_TIMEOUT:-600}s)"
		total_fail=$((total_fail + 1))
		return
	fi
	[ $rc = 0 ] || problems="$problems\n  $name: guest command exited $rc ($(grep -m1 '^guest:' "$log" || echo 'see log'))"
	sed -n '/==RSLUB-DMESG-BEGIN==/,/==RSLUB-DMESG-END==/p' "$log" >"$OUT/dmesg-$name.log"
	local bad
	bad=$(kernel_log_bad "$OUT/dmesg-$name.log")
	[ -z "$bad" ] || problems="$problems\n  $name: kernel log reports:\n$bad"
	local ktap=$OUT/ktap-$name.txt parsed=$OUT/kunit-$name.txt
	# One KTAP run per module load that ran suites (rslub.ko's rslub_percpu,
	# then rslub_kunit.ko's), each with its own top-level header ("] KTAP
	# version", not indented); kunit.py parses the first run of a log
	# only, so each run is parsed from its own file.
	rm -f "$OUT/ktap-$name".*.log
	awk -v out="$OUT/ktap-$name" '/\] (K)?TAP version/ { n++ } n { print > (out "." n ".log") }' \
		"$OUT/dmesg-$name.log"
	local run
	for run in "$OUT/ktap-$name".*.log; do
		[ -e "$run" ] || continue
		python3 "$KDIR/tools/testing/kunit/kunit.py" parse "$run"
	done >"$parsed" 2>&1
	sed -n '/KTAP version\|TAP version/,$p' "$OUT/dmesg-$name.log" >"$ktap"
	local s
	for s in $EXPECTED_SUITES; do
		# A suite skipped whole (rslub_serve without the hook) ends " # SKIP".
		grep -qE "(ok|not ok) [0-9]+ $s( |\$)" "$OUT/dmesg-$name.log" ||
			problems="$problems\n  $name: suite $s missing or did not finish"
	done
	# rslabinfo against live caches, lifecycle, stress: lines in the guest.
	count_checks "$name" "$log" rslabinfo
	count_checks "$name" "$log" badparam
	[ "$cycles" = 0 ] || count_checks "$name" "$log" lifecycle
	if [ "$secs" != 0 ]; then
		count_checks "$name" "$log" stress 1
		grep -E "^rslub_stress: (ops|hotplug|verified|destroyed)" "$log" | sed "s/^/    /"
	fi
	# kunit.py's summary, one per run: "Ran N tests: passed: P, failed: F,
	# crashed: C, skipped: S"; the runs are summed.
	local summaries pass fail crash skip
	summaries=$(grep -E "Ran [0-9]+ tests" "$parsed")
	[ -n "$summaries" ] || { problems="$problems\n  $name: no KUnit results parsed"; total_fail=$((total_fail + 1)); return; }
	sum_of() {
		local v
		v=$(echo "$summaries" | grep -oE "($1): [0-9]+" | grep -oE "[0-9]+" | paste -sd+ | bc)
		echo "${v:-0}"
	}
	pass=$(sum_of passed)
	fail=$(sum_of failed)
	crash=$(sum_of "crashed|errors")
	skip=$(sum_of skipped)
	echo "$summaries" | sed "s/^.*\] /  $name: /"
	grep -E "\[FAILED\]|\[CRASHED\]" "$parsed" | sed "s/^/  $name: /" | head -n 20
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail + ${crash:-0}))
	total_skip=$((total_skip + skip))
}

# The out-of-memory VM: no KUnit, its own checks and the same log filter.
start_oom() {
	local log=$OUT/vm-oom.log
	step "VM oom: 2 CPUs, 320 MB: injected failures, memory pressure (log: $log)"
	# A larger log buffer: the create sweep logs a line per failed create.
	(
		cd "$TREE" || exit 2
		VM_CPUS=2 VM_NUMA=0 VM_MEM=320M VM_APPEND=log_buf_len=4M VM_TIMEOUT=${VM_TIMEOUT:-600} \
			scripts/vm.sh "$KDIR" "scripts/guest-oom.sh --dmesg faults $CHECK_FAULT_SECONDS; a=\$?; scripts/guest-oom.sh --dmesg pressure 1; b=\$?; exit \$((a | b))" 2>&1 | cat >"$log"
		echo "${PIPESTATUS[0]}" >"$OUT/vm-oom.rc"
	) &
	vm_jobs="$vm_jobs $!"
}

judge_oom() {
	local name=oom log=$OUT/vm-oom.log rc
	rc=$(cat "$OUT/vm-oom.rc" 2>/dev/null || echo 2)
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		problems="$problems\n  $name: guest timed out (VM_TIMEOUT=${VM_TIMEOUT:-600}s)"
		total_fail=$((total_fail + 1))
		return
	fi
	[ "$rc" = 0 ] || problems="$problems\n  $name: guest command exited $rc"
	sed -n '/==RSLUB-DMESG-BEGIN==/,/==RSLUB-DMESG-END==/p' "$log" >"$OUT/dmesg-$name.log"
	local bad
	bad=$(kernel_log_bad "$OUT/dmesg-$name.log")
	[ -z "$bad" ] || problems="$problems\n  $name: kernel log reports:\n$bad"
	count_checks "$name" "$log" faults
	count_checks "$name" "$log" pressure
	grep -E "^(faults|pressure): PASS (stress|injected|fill|shrinker|memory)" "$log" | cut -c1-230 | sed "s/^/    /"
}

# The guest tools: rslabinfo runs in the guest.
step "build rslabinfo (log: $OUT/rslabinfo-build.log)"
(cd tools/rslabinfo && cargo build --release --quiet) >"$OUT/rslabinfo-build.log" 2>&1 ||
	{ tail -n 30 "$OUT/rslabinfo-build.log"; fail "rslabinfo build"; }

# What the VMs load: a snapshot of the built tree (no sources of cargo's, no git).
TREE=$OUT/tree
rsync -a --exclude /.git --exclude /results --exclude target --exclude '*.o' --exclude '*.bc' \
	"$ROOT/" "$TREE/" && mkdir -p "$TREE/tools/rslabinfo/target/release" &&
	cp tools/rslabinfo/target/release/rslabinfo "$TREE/tools/rslabinfo/target/release/" ||
	fail "snapshot of the built tree into $TREE"

start_shape smp2 2 1 50 0
[ "${CHECK_VMS:-par}" = seq ] && wait
start_shape numa4 4 2 0 "$CHECK_STRESS_SECONDS"
[ "${CHECK_VMS:-par}" = seq ] && wait
start_oom
# The served-cache VM needs the slab backend hook (patches/0001); a KDIR=
# kernel without it skips it: serving is refused there, the API works.
check_serve=${CHECK_SERVE:-1}
if [ "$check_serve" = 1 ] && ! grep -q '^CONFIG_SLAB_BACKEND=y' "$KDIR/.config"; then
	step "VM serve: skipped ($SERVE_CHECKS checks): $KDIR has no slab backend hook (patches/0001)"
	total_skip=$((total_skip + SERVE_CHECKS))
	check_serve=0
fi
[ "$check_serve" = 1 ] && start_serve

step "host tests (cargo test, log: $OUT/host-test.log)"
make -s host-test >"$OUT/host-test.log" 2>&1 || { tail -n 30 "$OUT/host-test.log"; fail "host tests"; }
host_pass=$(grep -E "^test result" "$OUT/host-test.log" | grep -oE "[0-9]+ passed" | grep -oE "[0-9]+" | paste -sd+ | bc)
echo "  host: ${host_pass:-0} tests passed"

# The build variants' logic that the default module leaves out: batched
# frees (--cfg rslub_free_batch), in a target directory of its own.
step "host tests, free_batch variant (cargo test --cfg rslub_free_batch, log: $OUT/host-test-free_batch.log)"
make -s host-test-free-batch >"$OUT/host-test-free_batch.log" 2>&1 ||
	{ tail -n 30 "$OUT/host-test-free_batch.log"; fail "host tests (free_batch variant)"; }
fb_pass=$(grep -E "^test result" "$OUT/host-test-free_batch.log" | grep -oE "[0-9]+ passed" | grep -oE "[0-9]+" | paste -sd+ | bc)
echo "  host (free_batch): ${fb_pass:-0} tests passed"
host_pass=$((${host_pass:-0} + ${fb_pass:-0}))

step "tools: rslabinfo and rsbench, build and test (log: $OUT/tools.log)"
(cd tools/rslabinfo && cargo build --release --quiet && cargo test --quiet &&
	cd ../rsbench && cargo build --release --quiet && cargo test --quiet) >"$OUT/tools.log" 2>&1 ||
	{ tail -n 30 "$OUT/tools.log"; fail "tools build or tests"; }
tool_pass=$(grep -E "^test result" "$OUT/tools.log" | grep -oE "[0-9]+ passed" | grep -oE "[0-9]+" | paste -sd+ | bc)
echo "  tools: ${tool_pass:-0} tests passed"
host_pass=$((${host_pass:-0} + ${tool_pass:-0}))
total_pass=$((total_pass + host_pass))

step "lint (log: $OUT/lint.log)"
make -s lint >"$OUT/lint.log" 2>&1 || { tail -n 40 "$OUT/lint.log"; fail "lint (make lint)"; }
if grep -qiE "warning:" "$OUT/lint.log"; then
	grep -iE -A3 "warning:" "$OUT/lint.log" | head -n 40
	fail "clippy printed warnings"
fi

# Kernels rslub cannot work on stop the build with one line (Kbuild).
step "build refusals: PREEMPT_RT, !SMP, !X86_64"
refused=0
for v in CONFIG_PREEMPT_RT=y CONFIG_SMP= CONFIG_X86_64=; do
	out=$(make -s -C "$KDIR" M="$ROOT" "$v" modules 2>&1 || true)
	if printf '%s\n' "$out" | grep -q '\*\*\* rslub: '; then
		refused=$((refused + 1))
	else
		problems="$problems\n  build: $v was not refused with a message"
	fi
done
echo "  build refusals: $refused of 3"
total_pass=$((total_pass + refused))

step "waiting for the VMs"
wait
judge_shape smp2 50 0
judge_shape numa4 0 "$CHECK_STRESS_SECONDS"
judge_oom
[ "$check_serve" = 1 ] && judge_serve

step "done"
if [ -n "$problems" ]; then
	echo -e "check: problems:$problems"
	[ "$total_fail" -gt 0 ] || total_fail=1
fi
echo "KUnit logs and parsed results: $OUT"
if [ "$total_skip" -gt 0 ]; then
	echo "$total_pass passed, $total_fail failed, $total_skip skipped"
else
	echo "$total_pass passed, $total_fail failed"
fi
[ "$total_fail" = 0 ]
