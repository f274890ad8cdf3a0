#!/usr/bin/env bash
# make check: the setup-logic test, setup if needed, module build, then the
# VMs: KUnit in two shapes (2 CPUs; 4 CPUs on 2 NUMA nodes), with the
# module lifecycle test in the first and a short stress
# (CHECK_STRESS_SECONDS, 15) with CPU hotplug in the second; a small one
# (320 MB, 2 CPUs) for rslub out of memory: injected failures and a short
# stress with them (CHECK_FAULT_SECONDS, 10), and one round of real memory
# pressure with the shrinker (scripts/guest/oom.sh); the served-cache VM
# (scripts/serve-check.sh); and a 1-CPU guest that hangs on purpose, which
# must be reported stuck with its kernel stacks (the harness's own test).
#
# The VMs run as many at once as CHECK_VCPUS allows (their vCPUs together;
# default 4 per host core: TCG runs a vCPU as a host thread, and an idle
# one costs nothing), longest first; CHECK_VMS=seq runs one at a time. A VM
# is judged by its progress, not by the clock (scripts/vm.sh): stuck after
# VM_STALL (300) s without output or KTAP result, its stacks in its log;
# each has a last-resort total limit scaled to its work. The host tests
# (also those of the free_batch build variant, --cfg rslub_free_batch),
# tool tests, lint and the build refusals run beside the VMs at a lower
# priority (nice) while the VMs run, so that they use the time the guests
# leave. The VMs boot from a snapshot of the built tree ($OUT/tree), so
# lint's rebuild cannot change what they load. Fails on any failed,
# crashed or missing suite or case, on a kernel WARNING/BUG/Oops/lockdep or
# context report, and on a stuck guest. The watcher's own decisions are tested first
# (scripts/test-vmwatch.sh, on stand-ins for vng). Ends with "N passed, M
# failed".
set -uo pipefail
# Read whole before it runs (the braces, closed by the exit at the end): a
# developer editing this file during a run must not change the run.
{
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. scripts/lib.sh
. scripts/serve-check.sh	# run_serve, judge_serve (CHECK_SERVE=0: not run)
EXPECTED_SUITES="rslub_percpu rslub_api rslub_slub rslub_sysfs rslub_debug rslub_badinput rslub_serve rslub_kdebug"
CHECK_STRESS_SECONDS=${CHECK_STRESS_SECONDS:-15}
CHECK_FAULT_SECONDS=${CHECK_FAULT_SECONDS:-10}
# Absolute: the guests' commands run from the tree's snapshot.
OUT=$(realpath -m "${CHECK_OUT:-$ROOT/results/check}")
rm -rf "$OUT"
mkdir -p "$OUT"
T0=$(date +%s)
step() { echo "check: [$(($(date +%s) - T0))s] $*"; }
# The VMs run under one background job, its own process group (set -m): a
# failure elsewhere stops it and them (scripts/vm.sh then stops its QEMU).
set -m
vm_jobs=""
stop_vms() { local p; for p in $vm_jobs; do kill -TERM -- "-$p" 2>/dev/null; done; wait; }
# Host work beside the VMs: at a lower priority than the guests while
# they run (a step that starts after them runs at the normal priority).
guests_job=""
beside() {
	if [ -n "$guests_job" ] && kill -0 "$guests_job" 2>/dev/null; then
		nice -n 10 "$@"
	else
		"$@"
	fi
}
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

step "kernel log check (scripts/test-log-filter.sh, log: $OUT/log-filter.log)"
scripts/test-log-filter.sh >"$OUT/log-filter.log" 2>&1
count_checks host "$OUT/log-filter.log" log-filter "$(grep -c '^check "' scripts/test-log-filter.sh)"

# The guest watcher's own decisions, on stand-ins for vng (about 40 s,
# mostly asleep): in the background, counted at the end.
scripts/test-vmwatch.sh >"$OUT/vmwatch.log" 2>&1 &
vm_jobs="$vm_jobs $!"

step "setup"
make -s setup || fail "setup (see the line above)"
KDIR=$(rslub_kdir)
[ -n "$KDIR" ] && [ -d "$KDIR" ] || fail "no kernel build directory (make -s kdir printed '$KDIR')"

# make trace-pair's stepping and table on a guest without a kernel (QEMU
# and gdb, a few seconds): each rep string instruction listed once.
step "trace-pair stepping (scripts/test-trace-pair.sh, log: $OUT/trace-pair.log)"
scripts/test-trace-pair.sh >"$OUT/trace-pair.log" 2>&1
count_checks host "$OUT/trace-pair.log" trace-pair "$(grep -c '^check "' scripts/test-trace-pair.sh)"

# The cost model's plugin and calibration program, built in the background
# from here on (cargo may fetch crates the first time); run_model waits.
build_model() {
	{ make -s costmodel && echo 0 || echo 1; } >"$OUT/model-build.log" 2>&1
	tail -n 1 "$OUT/model-build.log" >"$OUT/model-build.rc"
}
build_model &
vm_jobs="$vm_jobs $!"

step "build modules (log: $OUT/build.log)"
make -s modules >"$OUT/build.log" 2>&1 || { tail -n 40 "$OUT/build.log"; fail "module build"; }
if grep -qiE "warning:" "$OUT/build.log"; then
	grep -iE -A3 "warning:" "$OUT/build.log" | head -n 40
	fail "module build printed warnings"
fi

# The alloc and free hit paths keep their shape (no call, one push, one
# cmpxchg16b, within the budget of docs/design.md): only where the C shim is
# inlined into the Rust (CONFIG_RUST_INLINE_HELPERS, the project's kernels).
# A KASAN kernel instruments the inlined C (a shadow check and a report
# call on each access): the shape is the sanitizer's, not rslub's.
if grep -q '^CONFIG_KASAN=y' "$KDIR/.config"; then
	step "fast-path shape: skipped (4 checks): $KDIR has KASAN, which instruments the inlined shim"
	total_skip=$((total_skip + 4))
elif grep -q '^CONFIG_RUST_INLINE_HELPERS=y' "$KDIR/.config"; then
	step "fast-path shape (scripts/fastpath-shape.py, log: $OUT/shape.log)"
	python3 scripts/fastpath-shape.py rslub.ko >"$OUT/shape.log" 2>&1
	count_checks module "$OUT/shape.log" fastpath-shape 4
	grep "^fastpath-shape: PASS" "$OUT/shape.log" | sed "s/^/    /"
	grep -A60 "^fastpath-shape: FAIL" "$OUT/shape.log" | head -n 60
else
	step "fast-path shape: skipped (4 checks): $KDIR calls the C shim out of line (no CONFIG_RUST_INLINE_HELPERS)"
	total_skip=$((total_skip + 4))
fi

# run_shape NAME CPUS NUMA LIFECYCLE_CYCLES STRESS_SECONDS (0: not run)
# MEMORY [BOOT_OPTION...]: runs the VM from the snapshot; its exit status
# goes to $OUT/vm-NAME.rc.
run_shape() {
	local name=$1 cpus=$2 numa=$3 cycles=$4 secs=$5 mem=$6 append="${*:7}" log=$OUT/vm-$1.log
	local env=""
	[ "$cycles" = 0 ] || env="$env RSLUB_LIFECYCLE=$cycles"
	# The stress runs the module as built (batched frees are a build
	# variant, tested on the host: the free_batch host tests below).
	[ "$secs" = 0 ] || env="$env RSLUB_STRESS=$secs"
	# Through a pipe: the guest tools reopen /dev/stdout, which on a plain
	# file would start writing at offset 0 again.
	cd "$TREE" || return 2
	VM_CPUS=$cpus VM_NUMA=$numa VM_MEM=$mem VM_APPEND=$append VM_TIMEOUT=$(vm_limit "$secs") \
		VM_CONSOLE=$OUT/console-$name.log scripts/vm.sh "$KDIR" "$env scripts/guest/kunit.sh" 2>&1 | cat >"$log"
	echo "${PIPESTATUS[0]}" >"$OUT/vm-$name.rc"
}

# vm_limit SECONDS: a guest's last-resort total limit, scaled to the
# SECONDS of timed work it does beyond its tests: 30 min, and 20 s more per
# second of it (a machine 10 times slower than ours still finishes).
vm_limit() { echo "${VM_TIMEOUT:-$((1800 + 20 * $1))}"; }

# judge_rc NAME: 0 when the guest ran to its end; otherwise the problem is
# noted (a stuck guest: the watcher's verdict, its stacks are in the log).
judge_rc() {
	local name=$1 log=$OUT/vm-$1.log rc
	rc=$(cat "$OUT/vm-$name.rc" 2>/dev/null || echo 2)
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		local why
		why=$(grep -m1 '^vm: STUCK' "$log" | sed 's/^vm: //')
		problems="$problems\n  $name: ${why:-guest stopped (exit $rc)}"
		problems="$problems\n    kernel stacks: $log (lines 'vm: |'), console: $OUT/console-$name.log"
		total_fail=$((total_fail + 1))
		return 1
	fi
	[ "$rc" = 0 ] || problems="$problems\n  $name: guest command exited $rc ($(grep -m1 '^guest:' "$log" || echo "see $log and $OUT/console-$name.log"))"
	return 0
}

# judge_shape NAME LIFECYCLE_CYCLES STRESS_SECONDS: counts the VM's results.
judge_shape() {
	local name=$1 cycles=$2 secs=$3 log=$OUT/vm-$1.log
	judge_rc "$name" || return
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
run_oom() {
	local log=$OUT/vm-oom.log
	# A larger log buffer: the create sweep logs a line per failed create.
	cd "$TREE" || return 2
	VM_CPUS=2 VM_NUMA=0 VM_MEM=320M VM_APPEND=log_buf_len=4M VM_TIMEOUT=$(vm_limit "$CHECK_FAULT_SECONDS") \
		VM_CONSOLE=$OUT/console-oom.log \
		scripts/vm.sh "$KDIR" "scripts/guest/oom.sh --dmesg faults $CHECK_FAULT_SECONDS; a=\$?; scripts/guest/oom.sh --dmesg pressure 1; b=\$?; exit \$((a | b))" 2>&1 | cat >"$log"
	echo "${PIPESTATUS[0]}" >"$OUT/vm-oom.rc"
}

# The cost model's calibration guest: tools/costmodel/guest/calib on 4
# vCPUs over 2 nodes (1 GiB each: node 1 begins at 0x40000000) under the
# plugin, with the core of the validation table's profiles (core=, GUEST_CORE
# in model/src/validate.rs) and the vCPUs' clocks priced by the server one
# (profile=: the contention checks' makespans); costmodel-calib checks its counts against the
# profile and against the table's hardware figures (judge_model). The plugin and
# the program are built in the background from the start (build_model);
# the guest waits for them (at most 30 min).
run_model() {
	local log=$OUT/vm-model.log
	local waited=0
	while [ ! -s "$OUT/model-build.rc" ] && [ "$waited" -lt 1800 ]; do
		sleep 2
		waited=$((waited + 2))
	done
	if [ "$(cat "$OUT/model-build.rc" 2>/dev/null)" != 0 ]; then
		echo "guest: the cost model's plugin or program did not build (log: $OUT/model-build.log)" >"$log"
		echo 2 >"$OUT/vm-model.rc"
		return
	fi
	cd "$ROOT" || return 2
	VM_CPUS=4 VM_NUMA=2 VM_MEM=2G VM_TIMEOUT=1800 VM_CONSOLE=$OUT/console-model.log \
		VM_QEMU_OPTS="$(model_qemu_opts "$KDIR" "$OUT/model-counts.txt" cpu_nodes=0:0:1:1,mem_starts=0x40000000,core=224:10:56:16,profile=server-ooo)" \
		scripts/vm.sh "$KDIR" "tools/costmodel/guest/calib" 2>&1 | cat >"$log"
	echo "${PIPESTATUS[0]}" >"$OUT/vm-model.rc"
}

judge_model() {
	judge_rc model || return
	tools/costmodel/target/release/costmodel-calib "$OUT/model-counts.txt" >"$OUT/model.txt" 2>&1
	count_checks model "$OUT/model.txt" model
	grep "^model: " "$OUT/model.txt" | grep -v "^model: plan" | cut -c1-200 | sed "s/^/    /"
	# The validation table: published hardware figures, reproduced by the
	# same guest's programs, priced with the profiles of those machines.
	tools/costmodel/target/release/costmodel-calib --validate "$OUT/model-counts.txt" >"$OUT/validate.txt" 2>&1
	count_checks model "$OUT/validate.txt" validate
	grep "^validate: " "$OUT/validate.txt" | grep -v "^validate: plan" | cut -c1-160 | sed "s/^/    /"
}

# The harness's own test: a guest that prints a line, then sleeps for ever,
# must be declared stuck (VM_STALL 120 s here, 600 s on a KASAN kernel)
# with the kernel's answer in its log: the vCPUs' instruction pointers,
# SysRq's task list with the sleeping task's kernel stack.
HANG_CHECKS=4
HANG_STALL=120
run_hang() {
	local log=$OUT/vm-hang.log
	cd "$TREE" || return 2
	VM_CPUS=1 VM_MEM=512M VM_STALL=$HANG_STALL VM_TIMEOUT=1800 VM_CONSOLE=$OUT/console-hang.log \
		scripts/vm.sh "$KDIR" "echo 'hang: sleeping for ever on purpose'; exec sleep 987654321" 2>&1 | cat >"$log"
	echo "${PIPESTATUS[0]}" >"$OUT/vm-hang.rc"
}

judge_hang() {
	local log=$OUT/vm-hang.log rc
	rc=$(cat "$OUT/vm-hang.rc" 2>/dev/null || echo 2)
	hang_check() {	# hang_check WHAT PATTERN
		if grep -qE -- "$2" "$log"; then
			echo "hang: PASS $1" >>"$OUT/hang.txt"
		else
			echo "hang: FAIL $1: no line matching '$2' in $log" >>"$OUT/hang.txt"
		fi
	}
	: >"$OUT/hang.txt"
	if [ "$rc" = 124 ] && grep -q "^hang: sleeping" "$log"; then
		echo "hang: PASS declared stuck (exit 124) after the guest's last line" >>"$OUT/hang.txt"
	else
		echo "hang: FAIL exit $rc, $(grep -c '^hang: sleeping' "$log") 'hang: sleeping' lines: not declared stuck after its line" >>"$OUT/hang.txt"
	fi
	hang_check "vCPU instruction pointers named" "^vm:   CPU 0: RIP 0x[0-9a-f]+ [a-z_]"
	# SysRq on the keyboard needs both in the kernel (the test flavor has
	# them; a KDIR= kernel may not).
	if grep -q '^CONFIG_MAGIC_SYSRQ=y' "$KDIR/.config" && grep -q '^CONFIG_KEYBOARD_ATKBD=y' "$KDIR/.config"; then
		hang_check "SysRq answered" "^vm: \| .*sysrq: Show (State|Blocked State|backtrace)"
		hang_check "the sleeping task's kernel stack" "^vm: \| .*(do_nanosleep|hrtimer_nanosleep)"
		count_checks hang "$OUT/hang.txt" hang "$HANG_CHECKS"
	else
		echo "  hang: 2 SysRq checks skipped: $KDIR has no CONFIG_MAGIC_SYSRQ or CONFIG_KEYBOARD_ATKBD"
		total_skip=$((total_skip + 2))
		count_checks hang "$OUT/hang.txt" hang $((HANG_CHECKS - 2))
	fi
}

judge_oom() {
	local name=oom log=$OUT/vm-oom.log
	judge_rc "$name" || return
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

# The served-cache VM needs the slab backend hook (patches/); a KDIR=
# kernel without it skips it: serving is refused there, the API works.
check_serve=${CHECK_SERVE:-1}
if [ "$check_serve" = 1 ] && ! grep -q '^CONFIG_SLAB_BACKEND=y' "$KDIR/.config"; then
	step "VM serve: skipped ($SERVE_CHECKS checks): $KDIR has no slab backend hook (patches/)"
	total_skip=$((total_skip + SERVE_CHECKS))
	check_serve=0
elif [ "$check_serve" = 1 ] && grep -q '^CONFIG_KASAN=y' "$KDIR/.config"; then
	step "VM serve: skipped ($SERVE_CHECKS checks): $KDIR has KASAN, under which the kernel serves no cache"
	total_skip=$((total_skip + SERVE_CHECKS))
	check_serve=0
fi

# The guests, longest first: NAME:VCPUS:COMMAND. The hang test is idle
# most of its time (one vCPU asleep): it goes early, beside the others.
# numa4's second node has memory above 4 GiB only (6 GB: the first node
# holds the memory below the 32-bit PCI hole), for rslub_serve's DMA32
# case; smp2 wipes freed memory (init_on_free=1) and can switch allocation
# profiling on at run time (built in, off: sysctl.vm.mem_profiling=0), for
# the cases of each. Each of those cases skips itself in the other guest.
# On a KASAN kernel (DEBUG=1) KASAN prints every report, not the first
# alone: rslub_kdebug expects several.
# A case may also run silent far longer there: KASAN's shadow checks and
# kmemleak's tracking of every allocation make the slow cases about ten
# times slower under TCG (rslub_slub's churn of 100k objects ran 9 min
# beside three guests), so a guest is judged stuck after VM_STALL 1200 s
# by default, not 300.
# The kernel's hung-task detector waits 900 s there (it reports the
# insmod that waits for such a case otherwise), and the hang guest's
# limit is 600 s: its boot alone went 121 s without a console line.
kasan=""
if grep -q '^CONFIG_KASAN=y' "$KDIR/.config"; then
	kasan="kasan_multi_shot sysctl.kernel.hung_task_timeout_secs=900"
	export VM_STALL=${VM_STALL:-1200}
	HANG_STALL=600
fi
guests="numa4:4:run_shape numa4 4 2 0 $CHECK_STRESS_SECONDS 6G $kasan
hang:1:run_hang
smp2:2:run_shape smp2 2 1 50 0 2G init_on_free=1 sysctl.vm.mem_profiling=0 $kasan
oom:2:run_oom
model:2:run_model"
[ "$check_serve" = 1 ] && guests="serve:3:run_serve
$guests"
ncpu=$(nproc)
vcpus=${CHECK_VCPUS:-$((4 * ncpu))}
[ "${CHECK_VMS:-par}" != seq ] || vcpus=0

# run_guests: starts each guest when its vCPUs fit in $vcpus beside those
# running (the first that fits, in the order above; any guest when none
# runs), and waits for all. Each guest's start, end and wall time is a
# "check:" line; its verdict comes from judge_* afterwards.
run_guests() {
	local queue=$guests rest line name n used=0 pid
	local -A vc=() nm=() t0=()
	while [ -n "$queue" ] || [ ${#nm[@]} -gt 0 ]; do
		rest=""
		while IFS= read -r line; do
			[ -n "$line" ] || continue
			name=${line%%:*}
			n=${line#*:}
			n=${n%%:*}
			if [ $used = 0 ] || [ $((used + n)) -le "$vcpus" ]; then
				# shellcheck disable=SC2086 # the command's words
				${line#*:*:} &
				pid=$!
				vc[$pid]=$n nm[$pid]=$name t0[$pid]=$(date +%s)
				used=$((used + n))
				step "VM $name started: $n vCPU(s), $used of ${vcpus} in use (log: $OUT/vm-$name.log)"
			else
				rest="$rest$line"$'\n'
			fi
		done <<<"$queue"
		queue=$rest
		wait -n -p pid || true
		[ -n "${nm[$pid]:-}" ] || continue
		used=$((used - vc[$pid]))
		step "VM ${nm[$pid]} ended after $(($(date +%s) - t0[$pid])) s (exit $(cat "$OUT/vm-${nm[$pid]}.rc" 2>/dev/null || echo '?'))$(
			sed -n 's/^vm: longest wait for progress: \([0-9]*\) s.*/; longest wait for progress \1 s/p' "$OUT/vm-${nm[$pid]}.log")"
		unset "vc[$pid]" "nm[$pid]" "t0[$pid]"
	done
}
step "VMs: at most $vcpus vCPUs at once ($ncpu host cores; CHECK_VCPUS, CHECK_VMS=seq), stuck after ${VM_STALL:-300} s without progress (VM_STALL)"
run_guests &
guests_job=$!
vm_jobs="$vm_jobs $!"

step "host tests (cargo test, log: $OUT/host-test.log)"
beside make -s host-test >"$OUT/host-test.log" 2>&1 || { tail -n 30 "$OUT/host-test.log"; fail "host tests"; }
host_pass=$(grep -E "^test result" "$OUT/host-test.log" | grep -oE "[0-9]+ passed" | grep -oE "[0-9]+" | paste -sd+ | bc)
echo "  host: ${host_pass:-0} tests passed"

# The build variants' logic that the default module leaves out: batched
# frees (--cfg rslub_free_batch), in a target directory of its own.
step "host tests, free_batch variant (cargo test --cfg rslub_free_batch, log: $OUT/host-test-free_batch.log)"
beside make -s host-test-free-batch >"$OUT/host-test-free_batch.log" 2>&1 ||
	{ tail -n 30 "$OUT/host-test-free_batch.log"; fail "host tests (free_batch variant)"; }
fb_pass=$(grep -E "^test result" "$OUT/host-test-free_batch.log" | grep -oE "[0-9]+ passed" | grep -oE "[0-9]+" | paste -sd+ | bc)
echo "  host (free_batch): ${fb_pass:-0} tests passed"
host_pass=$((${host_pass:-0} + ${fb_pass:-0}))

step "tools: rslabinfo, rsbench and costmodel, build and test (log: $OUT/tools.log)"
(cd tools/rslabinfo && beside cargo build --release --quiet && beside cargo test --quiet &&
	cd ../rsbench && beside cargo build --release --quiet && beside cargo test --quiet &&
	cd ../costmodel && beside cargo test --quiet --workspace) >"$OUT/tools.log" 2>&1 ||
	{ tail -n 30 "$OUT/tools.log"; fail "tools build or tests"; }
tool_pass=$(grep -E "^test result" "$OUT/tools.log" | grep -oE "[0-9]+ passed" | grep -oE "[0-9]+" | paste -sd+ | bc)
echo "  tools: ${tool_pass:-0} tests passed"
host_pass=$((${host_pass:-0} + ${tool_pass:-0}))
total_pass=$((total_pass + host_pass))

step "lint (log: $OUT/lint.log)"
beside make -s lint >"$OUT/lint.log" 2>&1 || { tail -n 40 "$OUT/lint.log"; fail "lint (make lint)"; }
if grep -qiE "warning:" "$OUT/lint.log"; then
	grep -iE -A3 "warning:" "$OUT/lint.log" | head -n 40
	fail "clippy printed warnings"
fi

# Kernels rslub cannot work on stop the build with one line (Kbuild).
step "build refusals: PREEMPT_RT, !SMP, !X86_64"
refused=0
for v in CONFIG_PREEMPT_RT=y CONFIG_SMP= CONFIG_X86_64=; do
	out=$(beside make -s -C "$KDIR" M="$ROOT" "$v" modules 2>&1 || true)
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
step "guest watcher (scripts/test-vmwatch.sh, log: $OUT/vmwatch.log)"
count_checks host "$OUT/vmwatch.log" vmwatch
judge_shape smp2 50 0
judge_shape numa4 0 "$CHECK_STRESS_SECONDS"
judge_oom
judge_hang
judge_model
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
exit
}
