#!/bin/sh
# Runs inside the VM (make stress SERVE=1; make check's short form): rslub
# serves every cache the kernel lets it serve ('*': the kernel refuses none
# on the test kernel, /sys/kernel/rslub/serve_refused says) from the moment
# it loads (serve=), while real programs run (hackbench in its four shapes,
# iperf3 TCP and UDP over loopback, stress-ng --sock in a child memory
# cgroup; fork, exec, mmap and file load in the root one: stress-ng --fork
# --mmap --vm --open --dentry and a loop of execs) beside
# stress/rslub_stress.ko with CPU hotplug, for SECONDS; meanwhile validate
# on every served cache (three at a time) must find nothing. Then the
# programs are stopped (the runs under way killed) and serving stops
# ('-*'): the programs run again with no allocation from rslub, a
# pipe made while serving is closed and its objects come back, every cache
# whose objects are all back goes (the reaper), and rmmod is refused
# exactly while caches drain (objects the kernel keeps: see step 6). The
# drain is watched until it settles (SETTLE_SECONDS, 5, without change) or
# for DRAIN_SECONDS at most. One line per check,
# "serve: PASS ..." or "serve: FAIL ...", the figures on "serve: figures"
# lines, and the exit status 0 only when every check passed.
#
# Usage: scripts/guest/serve.sh [--dmesg] SECONDS [rslub_stress params...]
#   --dmesg  clear the kernel log first and print it at the end between
#            ==RSLUB-DMESG-BEGIN== and ==RSLUB-DMESG-END==
# Environment: RSLUB_PARAMS (more rslub.ko parameters), SERVE_KEPT (1:
#   last, the KUnit suite rslub_serve_kept), SERVE (the patterns; '*'
#   here), SERVE_VALIDATE (the served caches validated under load: all,
#   or these names; a validate flushes every CPU, seconds under load on
#   TCG, minutes for all 121), DRAIN_SECONDS (60), and the program sizes below
#   (SERVE_HB_GROUPS, SERVE_HB_LOOPS, SERVE_IPERF_BYTES).
cd "$(dirname "$0")/../.." || exit 2
dump=0
if [ "${1:-}" = --dmesg ]; then
	dump=1
	shift
fi
secs=${1:-60}
[ $# -gt 0 ] && shift
[ $dump = 1 ] && dmesg -C
REAL_OUT=/tmp/serve
SERVE=${SERVE:-*}
. scripts/guest/real-lib.sh
DRAIN_SECONDS=${DRAIN_SECONDS:-60}
# Small runs, many of them: every program starts and ends many times.
HB_GROUPS=${SERVE_HB_GROUPS:-2}
HB_LOOPS=${SERVE_HB_LOOPS:-50}
IPERF_BYTES=${SERVE_IPERF_BYTES:-8M}
STOP=$REAL_OUT/stop
rm -f "$STOP" "$REAL_OUT"/*.count "$REAL_OUT"/*.fail

# kunit runs rslub.ko's suite at every load of the module: not here.
[ -w /sys/module/kunit/parameters/filter_glob ] &&
	printf rslub-no-suites >/sys/module/kunit/parameters/filter_glob
rc=0
# The guest's uptime in whole seconds: each step line says when it began.
# Builtins only (no program started: under load a start costs seconds).
up() {
	read -r _up _ </proc/uptime
	echo "${_up%.*}"
}
pass() { echo "serve: PASS $*"; }
fail() {
	echo "serve: FAIL $*"
	rc=1
}
finish() {
	if [ $dump = 1 ]; then
		echo "==RSLUB-DMESG-BEGIN=="
		dmesg
		echo "==RSLUB-DMESG-END=="
	fi
	exit $rc
}
real_prepare

# 1. Served from load.
param=$(echo "$SERVE" | tr ' ' ,)
# shellcheck disable=SC2086 # RSLUB_PARAMS: several parameters
if ! insmod rslub.ko "serve=$param" ${RSLUB_PARAMS:-} 2>"$REAL_OUT/insmod.err"; then
	fail "insmod rslub.ko serve=$param: $(cat "$REAL_OUT/insmod.err") $(dmesg | grep -E 'rslub.*(serve|unknown parameter)' | tail -n 1)"
	finish
fi
if ! serve_available; then
	fail "$(serve_missing_msg)"
	rmmod rslub
	finish
fi
names=$(served)
nserved=$(echo "$names" | grep -c .)
# Every normal kmalloc cache of the kernel is served or was refused with a
# line saying why; skbuff_head_cache is served.
missing=""
for c in $(ls /sys/kernel/slab 2>/dev/null | grep -E '^kmalloc-([0-9]+|[0-9]+k)$'); do
	echo "$names" | grep -qx "$c" || dmesg | grep -q "serve $c: refused" || missing="$missing $c"
done
if ! echo "$names" | grep -qx skbuff_head_cache; then
	fail "skbuff_head_cache is not served from load (served: $(echo "$names" | tr '\n' ' '); $(dmesg | grep 'serve skbuff_head_cache' | tail -n 1))"
elif [ -n "$missing" ]; then
	fail "kmalloc caches neither served nor refused with a reason:$missing"
else
	pass "serving $nserved caches from load: $(echo "$names" | tr '\n' ' ')"
fi
# Nothing refused by the kernel (the test kernel has neither SLUB
# debugging nor allocation profiling on) nor by rslub but for its object
# size limit (9p's 500 kB request buffers), and with '*' the caches of
# fork, exec, mmap, files and TCP served: the ones upstream's sheaves
# reports are about.
FORK_CACHES="task_struct mm_struct vm_area_struct maple_node anon_vma anon_vma_chain sighand_cache signal_cache files_cache filp TCP"
refused=$(grep -v ': objects larger than RSLUB_MAX_OBJECT_SIZE$' /sys/kernel/rslub/serve_refused 2>/dev/null)
notserved=""
if [ "$SERVE" = "*" ]; then
	for c in $FORK_CACHES; do
		echo "$names" | grep -qx "$c" || notserved="$notserved $c"
	done
fi
if [ -n "$refused" ]; then
	fail "the kernel refuses: $(echo "$refused" | tr '\n' ';')"
elif [ -n "$notserved" ]; then
	fail "not served from load:$notserved ($(dmesg | grep -E 'serve .*(refused|cannot)' | tail -n 2 | tr '\n' ' '))"
else
	pass "nothing refused ($(grep -c . /sys/kernel/rslub/serve_refused) above rslub's object size limit); served among them: $FORK_CACHES"
fi
# shellcheck disable=SC2086 # a list of names
dirs=$(rslub_dirs $names)

# A pipe made while serving (its kmalloc'd pipe_inode_info and buffer
# array are rslub objects), kept until serving has stopped: closing it
# then must hand objects back to rslub (step 6).
sleep 987654 | sleep 987654 &
# 2. rmmod is refused while caches are served.
if rmmod rslub 2>/dev/null; then
	fail "rmmod rslub succeeded while $nserved caches were served"
	finish
fi
grep -q "^rslub " /proc/modules && pass "rmmod refused while serving"

# kunit_case NAME: the KTAP result line of case NAME since log line $n.
kunit_ok() {
	dmesg | tail -n "+$((n + 1))" | grep -qE "^\[[ 0-9.]*\] +ok [0-9]+ $1\$"
}
kunit_why() {
	dmesg | tail -n "+$((n + 1))" | grep -E 'Expected|not ok|SKIP' | head -n 3 | tr '\n' ' '
}
# 2b. kvfree_rcu() and kfree_rcu() through their list path on served
# kmalloc caches (KUnit suite rslub_serve_kmalloc): the kernel finds each
# object's start from its rcu_head by asking rslub: nothing refused, no
# live neighbour changed (the smp2 guest's own-cache cases wipe freed
# memory too, init_on_free=1).
printf rslub_serve_kmalloc >/sys/module/kunit/parameters/filter_glob
n=$(dmesg | wc -l)
if ! insmod kunit/rslub_kunit.ko 2>"$REAL_OUT/kmalloc.err"; then
	fail "rslub_serve_kmalloc: insmod rslub_kunit.ko: $(cat "$REAL_OUT/kmalloc.err")"
else
	for c in kvfree_rcu_list_path_kmalloc_96 kfree_rcu_list_path_kmalloc_192; do
		if kunit_ok $c; then
			pass "rslub_serve_kmalloc: $c (KUnit): $(dmesg | tail -n "+$((n + 1))" | grep -m1 -o '[0-9]* objects by kfree_rcu(), [0-9]* of them by its list path' | head -n 1)"
		else
			fail "rslub_serve_kmalloc: $c: $(kunit_why)"
		fi
	done
	rmmod rslub_kunit || fail "rmmod rslub_kunit failed"
fi
printf rslub-no-suites >/sys/module/kunit/parameters/filter_glob

# 3. The programs, in loops until $STOP, beside the stress module.
# loop NAME CMD...: runs CMD until $STOP exists; counts runs and failures.
# The stop kills the run under way (step 5): a run that fails once $STOP
# exists is that kill, not a failure, and is not counted.
loop() {
	n=$1
	shift
	runs=0 fails=0
	LOOPED=1
	while [ ! -e "$STOP" ]; do
		if ! "$@" >"$REAL_OUT/$n.last" 2>&1; then
			[ -e "$STOP" ] && break
			fails=$((fails + 1))
			cp "$REAL_OUT/$n.last" "$REAL_OUT/$n.fail"
		fi
		runs=$((runs + 1))
		echo "$runs $fails" >"$REAL_OUT/$n.count"
	done
}
hb_cycle() {
	i=0
	for w in hb-proc-pipe hb-proc-sock hb-thr-pipe hb-thr-sock; do
		# In a loop, the stop ends the cycle (its hackbench was killed).
		[ -n "${LOOPED:-}" ] && [ -e "$STOP" ] && return 1
		run_workload $w || i=1
	done
	return $i
}
# Not pinned: CPUs go offline and online under them.
PIN_SERVER="" PIN_CLIENT=""
iperf_cycle() {
	iperf_run tcp "$IPERF_BYTES" 16K || return 1
	# In a loop, the stop ends the cycle (as hb_cycle).
	[ -n "${LOOPED:-}" ] && [ -e "$STOP" ] && return 1
	iperf_run udp "$IPERF_BYTES" 1400
}
# Execs: stress-ng's exec stressor refuses to run as root; 50 of a small
# program, each a fork and an exec of the shell's.
exec_cycle() {
	_i=0
	while [ "$_i" -lt 50 ]; do
		/bin/true || return 1
		_i=$((_i + 1))
	done
}
# The sampler: objects rslub holds for the served caches, the peak kept.
sampler() {
	peak=0
	while [ ! -e "$STOP" ]; do
		# shellcheck disable=SC2086 # a list of directories
		o=$(sum_attr objects $dirs)
		[ "$o" -gt "$peak" ] && peak=$o && echo "$peak" >"$REAL_OUT/peak"
		sleep 1
	done
}
echo 0 >"$REAL_OUT/peak"
loop hackbench hb_cycle &
hb_pid=$!
loop iperf3 iperf_cycle &
ip_pid=$!
loop execs exec_cycle &
ex_pid=$!
# Fork, mmap and file load in the root cgroup (SLUB charges nothing there,
# so rslub serves these accounted caches; a child cgroup's requests would
# go to SLUB): stress-ng for the whole time, once.
stress-ng --fork 1 --mmap 1 --mmap-bytes 2M --vm 1 --vm-bytes 4M --open 1 --dentry 1 \
	--timeout $((secs + 10))s --metrics-brief --temp-path "$REAL_OUT" \
	>"$REAL_OUT/stress-ng-fork.out" 2>&1 &
nf_pid=$!
# stress-ng runs for the whole time, once (its own bogo-op count), in a
# child memory cgroup: its kernel memory is charged, as on a distribution's
# kernel (memcg kmem comes online with the cgroup), so its charged requests
# to served caches go to SLUB while rslub serves the rest.
CG=/sys/fs/cgroup
MEMCG=$CG/rslub-serve
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG 2>/dev/null
{ grep -qw memory $CG/cgroup.controllers && echo +memory >$CG/cgroup.subtree_control &&
	mkdir -p $MEMCG; } 2>/dev/null || MEMCG=""
sh -c "[ -z '$MEMCG' ] || echo \$\$ >'$MEMCG/cgroup.procs'
	exec stress-ng --sock 2 --timeout $((secs + 10))s --metrics-brief --temp-path '$REAL_OUT'" \
	>"$REAL_OUT/stress-ng.out" 2>&1 &
ng_pid=$!
sampler &
sm_pid=$!
echo "serve: programs started: hackbench, iperf3 (TCP, UDP), execs, stress-ng --fork --mmap --vm --open --dentry, stress-ng --sock (memory cgroup ${MEMCG:-none}); rslub_stress for $secs s with CPU hotplug [$(up) s]"

# 4. validate while still serving, the programs and the stress module
# running (CPUs going offline and online under it): three at a time, as
# each takes seconds under load on TCG, mostly waiting for the other CPUs.
# The stress module's insmod returns when its run ends.
st0=$(up)
insmod stress/rslub_stress.ko duration="$secs" serving=1 "$@" &
ins_pid=$!
echo "serve: step: validate, the programs and rslub_stress running [$(up) s]"
vdirs=$dirs
# shellcheck disable=SC2086 # a list of names
[ -n "${SERVE_VALIDATE:-}" ] && vdirs=$(rslub_dirs $SERVE_VALIDATE)
: >"$REAL_OUT/validate.res"
# validate_some DIR...: validates each cache, one line each (the host
# judges the guest by its lines), "name errors" into validate.res.
validate_some() {
	for d in "$@"; do
		# Builtins only, as up().
		if echo 1 >"$d/validate"; then
			read -r e <"$d/errors"
		else
			e="unwritable"
		fi
		echo "serve: validated ${d##*/}: errors=$e [$(up) s]"
		echo "${d##*/} $e" >>"$REAL_OUT/validate.res"
	done
}
vpids=""
for j in 1 2 3; do
	# shellcheck disable=SC2086 # a list of directories
	validate_some $(echo $vdirs | tr ' ' '\n' | awk -v j=$j 'NR % 3 == j % 3') &
	vpids="$vpids $!"
done
# shellcheck disable=SC2086 # a list of pids
wait $vpids
wait $ins_pid
ins=$?
st1=$(up)

# 5. Stop the programs as soon as validate and rslub_stress are done (the
# load is for them; what follows judges files and would only compete with
# the programs for the CPUs), then serving; the caches must drain and go.
echo "serve: step: stopping the programs [$(up) s]"
# Each loop has ended a run first: a fast guest may be here before that.
for n in hackbench iperf3 execs; do
	while [ ! -s "$REAL_OUT/$n.count" ]; do
		sleep 1
	done
done
touch "$STOP"
# stress-ng ends at its --timeout (SIGINT makes it stop and report early);
# the loops' runs under way are killed (a hackbench or iperf3 run takes
# up to a minute on a loaded TCG guest). No clock here: each program's
# end is a line, and a program that never ends leaves the guest silent,
# which the host reports as stuck with the kernel's stacks (scripts/harness/vm.py).
kill -INT "$ng_pid" "$nf_pid" 2>/dev/null
t0=$(up)
for p in hackbench:$hb_pid iperf3:$ip_pid execs:$ex_pid stress-ng:$ng_pid stress-ng-fork:$nf_pid; do
	while kill -0 "${p#*:}" 2>/dev/null; do
		# Again each second: a loop between two runs starts one more
		# before it sees the stop.
		case ${p%%:*} in
		hackbench | iperf3) pkill -x "${p%%:*}" ;;
		esac
		sleep 1
	done
	echo "serve: ${p%%:*} stopped $(($(up) - t0)) s after the stop"
done
wait $hb_pid $ip_pid $ex_pid $sm_pid
wait $nf_pid
nf=$?
wait $ng_pid
ng=$?
# The results of step 4, now that the guest is quiet.
errs=0
while read -r c e; do
	case $e in
	0) ;;
	unwritable) fail "validate of $c could not be written"; errs=$((errs + 1)) ;;
	*) fail "$c: validate found errors=$e"; errs=$((errs + e)) ;;
	esac
done <"$REAL_OUT/validate.res"
nval=$(grep -c . "$REAL_OUT/validate.res")
nwant=$(echo "$vdirs" | wc -w)
if [ "$nval" != "$nwant" ]; then
	fail "validate: $nval results for $nwant caches"
elif [ $errs = 0 ]; then
	pass "validate: $nwant of $(echo "$dirs" | wc -w) served caches, 0 errors"
fi
dmesg | grep "rslub_stress: " | sed 's/^\[[ 0-9.]*\] //' |
	awk '/^rslub_stress: seed=/ { n = 0 } { line[n++] = $0 } END { for (i = 0; i < n; i++) print line[i] }' \
	>"$REAL_OUT/stress.out"
grep -v "rslub_stress: cache \|rslub_stress: t=" "$REAL_OUT/stress.out"
if [ $ins = 0 ] && grep -q "rslub_stress: PASS" "$REAL_OUT/stress.out"; then
	pass "rslub_stress $((st1 - st0)) s beside the programs"
	rmmod rslub_stress || fail "rmmod rslub_stress failed"
else
	fail "rslub_stress: $(grep -m1 'rslub_stress: FAIL' "$REAL_OUT/stress.out" | sed 's/.*FAIL //') (insmod exited $ins)"
fi
for n in hackbench iperf3 execs; do
	set -- $(cat "$REAL_OUT/$n.count" 2>/dev/null || echo "0 0")
	eval "${n}_runs=$1"
	if [ "$1" = 0 ]; then
		fail "$n never completed a run"
	elif [ "$2" != 0 ]; then
		fail "$n: $2 of $1 runs failed: $(tail -n 2 "$REAL_OUT/$n.fail" | tr '\n' ' ')"
	else
		pass "$n: $1 runs"
	fi
done
ng_ops=$(awk '$4 == "sock" && $5 ~ /^[0-9]+$/ { print $5; exit }' "$REAL_OUT/stress-ng.out")
if [ -n "$ng_ops" ] && [ "$ng_ops" -gt 0 ]; then
	pass "stress-ng --sock: $ng_ops bogo ops"
else
	fail "stress-ng --sock reported no bogo ops (exit $ng): $(tail -n 3 "$REAL_OUT/stress-ng.out" | tr '\n' ' ')"
fi
# Each stressor ran and the run completed. Its bogo ops are figures, not
# a verdict: a slow or loaded guest may end an mmap or vm stressor before
# its first bogo op (stopped early by SIGINT); that the load reached the
# caches is what the allocation counters below check.
nf_ops="" nf_none=""
for st in fork mmap vm open dentry; do
	o=$(awk -v st=$st '$4 == st && $5 ~ /^[0-9]+$/ { print $5; exit }' "$REAL_OUT/stress-ng-fork.out")
	nf_ops="$nf_ops $st=${o:-none}"
	[ -n "$o" ] || nf_none="$nf_none $st"
done
if [ -z "$nf_none" ] && [ "$nf" = 0 ] && grep -q "successful run completed" "$REAL_OUT/stress-ng-fork.out"; then
	pass "stress-ng fork, mmap, vm, open, dentry ran; bogo ops:$nf_ops"
else
	fail "stress-ng: no result for$nf_none (exit $nf): $(tail -n 3 "$REAL_OUT/stress-ng-fork.out" | tr '\n' ' ')"
fi
# Objects of the fork, exec, mmap, file and TCP caches came from rslub.
used="" unused=""
for c in $FORK_CACHES; do
	d=/sys/kernel/rslub/$c
	[ -d "$d" ] || continue
	a=$(( $(sum_attr alloc_fastpath "$d") + $(sum_attr alloc_slowpath "$d") ))
	used="$used $c=$a"
	[ "$a" -gt 0 ] || unused="$unused $c"
done
if [ "$SERVE" != "*" ]; then
	pass "allocations of the fork/exec/mmap caches not checked (SERVE=$SERVE)"
elif [ -z "$unused" ]; then
	pass "allocations from rslub:$used"
else
	fail "no allocation from rslub for$unused ($used)"
fi
peak=$(cat "$MEMCG/memory.peak" 2>/dev/null || echo 0)
if [ -n "$MEMCG" ] && [ "$peak" -gt 0 ]; then
	pass "stress-ng --sock in the memory cgroup $MEMCG: $((peak / 1024)) KiB charged at the peak"
else
	fail "stress-ng --sock ran in no memory cgroup (cgroup v2 with the memory controller, CONFIG_MEMCG)"
fi
# 6. Serving stops: from then on the kernel's allocations go to SLUB and
# what it frees of rslub's objects comes back to rslub. The caches whose
# objects are all back go (the reaper looks every second). Objects the
# kernel keeps (its per-CPU SKB cache, sockets in TIME_WAIT, structures
# rebuilt at CPU hotplug, ...) keep their cache draining, and rmmod is
# refused until they come back: rslub cannot take memory back from the
# kernel, so a draining cache is a legitimate end state, and what is
# checked is that serving has stopped and that frees keep coming back.
allocs_stop=$(( $(sum_attr alloc_fastpath $dirs) + $(sum_attr alloc_slowpath $dirs) ))
objects_stop=$(sum_attr objects $dirs)
serve_stop || fail "echo '-*' > $SERVE_FILE failed"
[ -z "$(served)" ] || fail "still served after '-*': $(served | tr '\n' ' ')"
# The pipe made while serving goes: its objects come back to rslub.
pkill -f "sleep 987654"
# The counters of the caches still listed (those gone have no directory,
# so their share of allocs_stop is subtracted with them below).
# shellcheck disable=SC2086 # a list of names
dirs_after=$(rslub_dirs $names)
# A short burst of the same programs after serving stopped: none of its
# objects may come from rslub.
allocs_before_burst=$(( $(sum_attr alloc_fastpath $dirs_after) + $(sum_attr alloc_slowpath $dirs_after) ))
echo "serve: step: serving stopped, the programs once more [$(up) s]"
# A fifth of the loops' size: any allocation would show.
HB_LOOPS=$(((HB_LOOPS + 4) / 5))
hb_cycle >"$REAL_OUT/burst.out" 2>&1 && iperf_run tcp 1M 16K >>"$REAL_OUT/burst.out" 2>&1 ||
	fail "the programs failed after serving stopped: $(tail -n 2 "$REAL_OUT/burst.out" | tr '\n' ' ')"
# shellcheck disable=SC2086 # a list of names
dirs_after=$(rslub_dirs $names)
allocs_after_burst=$(( $(sum_attr alloc_fastpath $dirs_after) + $(sum_attr alloc_slowpath $dirs_after) ))
if [ "$allocs_after_burst" -le "$allocs_before_burst" ]; then
	pass "serving stopped: no rslub allocation while hackbench and iperf3 ran again"
else
	fail "serving stopped, yet $((allocs_after_burst - allocs_before_burst)) allocations came from rslub while the programs ran again"
fi
# Drain: until everything is gone, or the count of objects rslub still
# has out stops falling for SETTLE_SECONDS (dropping the kernel's
# reclaimable caches meanwhile), at most DRAIN_SECONDS.
SETTLE_SECONDS=${SETTLE_SECONDS:-5}
echo "serve: step: watching the drain [$(up) s]"
WAITED=0 last=-1 still=0
while :; do
	# shellcheck disable=SC2086 # a list of names
	dirs_after=$(rslub_dirs $names)
	[ -z "$(cat "$SERVE_FILE" 2>/dev/null)" ] && [ -z "$dirs_after" ] && break
	o=$(sum_attr objects $dirs_after)
	if [ "$o" = "$last" ]; then still=$((still + 1)); else still=0 last=$o; fi
	[ "$still" -ge "$SETTLE_SECONDS" ] || [ "$WAITED" -ge "$DRAIN_SECONDS" ] && break
	[ $((WAITED % 5)) = 0 ] && echo 3 >/proc/sys/vm/drop_caches
	sleep 1
	WAITED=$((WAITED + 1))
done
# listed_empty: the draining caches that hold no object; LEFT: every
# draining cache with its objects.
listed_empty() {
	LEFT="" EMPTY=""
	for c in $(draining); do
		o=$(cut -d' ' -f1 "/sys/kernel/rslub/$c/objects" 2>/dev/null)
		LEFT="$LEFT $c($o)"
		[ "${o:-0}" = 0 ] && EMPTY="$EMPTY $c"
	done
}
# An empty cache goes at the reaper's next look, after the grace period
# of its last slabs for a SLAB_TYPESAFE_BY_RCU one; its last object (a
# TIME_WAIT socket's, on a timer) may have come back just now. A write to
# serve is a look: the cache must be gone within the 10 that follow.
listed_empty
looks=0
while [ -n "$EMPTY" ] && [ "$looks" -lt 10 ]; do
	sleep 1
	echo >"$SERVE_FILE"
	looks=$((looks + 1))
	listed_empty
done
left=$LEFT empty_listed=$EMPTY
objects_left=$(sum_attr objects $dirs_after)
ngone=$((nserved - $(draining | grep -c .)))
if [ -n "$empty_listed" ]; then
	fail "empty yet still listed as draining ${WAITED} s after serving stopped and $looks reaper looks after:$empty_listed"
elif [ -z "$left" ]; then
	pass "served caches empty and gone ${WAITED} s after serving stopped"
elif [ "$objects_left" -lt "$objects_stop" ]; then
	pass "objects come back after serving stopped: $objects_stop out at the stop, $objects_left still kept by the kernel after ${WAITED} s; $ngone of $nserved caches gone, draining:$left"
else
	fail "nothing came back after serving stopped, not even a pipe made while serving ($objects_stop objects out, $objects_left after ${WAITED} s, draining:$left)"
fi
# rmmod: refused exactly while something drains.
if [ -n "$(cat "$SERVE_FILE" 2>/dev/null)" ]; then
	if rmmod rslub 2>/dev/null; then
		fail "rmmod rslub succeeded while caches drained:$left"
	else
		pass "rmmod refused while the kernel keeps served objects"
	fi
elif rmmod rslub; then
	pass "rmmod rslub"
else
	fail "rmmod rslub refused with nothing served or draining"
fi
# SERVE_KEPT=1 (make check): last, as it leaves rslub loaded for good, the
# KUnit suite rslub_serve_kept: a served slab isolated after a reported
# corruption keeps its cache (and rslub) while the kernel may free into it.
if [ "${SERVE_KEPT:-0}" = 1 ]; then
	printf rslub_serve_kept >/sys/module/kunit/parameters/filter_glob
	grep -q "^rslub " /proc/modules || insmod rslub.ko
	n=$(dmesg | wc -l)
	if ! insmod kunit/rslub_kunit.ko run_kept=1 2>"$REAL_OUT/kept.err"; then
		fail "rslub_serve_kept: insmod rslub_kunit.ko run_kept=1: $(cat "$REAL_OUT/kept.err")"
	elif kunit_ok an_isolated_served_slab_keeps_its_cache; then
		pass "rslub_serve_kept: an isolated served slab keeps its cache (KUnit)"
	else
		fail "rslub_serve_kept: $(kunit_why)"
	fi
fi
# 7. The reaper: while caches drain, it looks at doubling intervals and,
# after four looks without progress (15 s), sleeps with one line naming what the
# kernel keeps (no wake-up at all from then on, until memory pressure or a
# write to serve). Nothing draining: it has nothing to do.
if [ -n "$(draining)" ]; then
	waited=0
	while ! dmesg | grep -q "serve: the reaper sleeps" && [ $waited -lt 60 ]; do
		sleep 1
		waited=$((waited + 1))
	done
	if dmesg | grep -q "serve: the reaper sleeps"; then
		pass "the reaper sleeps while the kernel keeps objects: $(dmesg | grep "serve: the reaper sleeps" | tail -n 1 | sed 's/^\[[^]]*\] //' | cut -c1-200)"
	else
		fail "the reaper still looks ${waited} s after the drain settled: no 'the reaper sleeps' line"
	fi
else
	pass "the reaper has nothing to watch: every served cache is gone"
fi
ops=$(grep -o "allocs=[0-9]* frees=[0-9]*" "$REAL_OUT/stress.out" | head -n 1)
echo "serve: figures: served=$nserved objects_peak=$(cat "$REAL_OUT/peak") objects_at_stop=$objects_stop objects_kept=$objects_left caches_gone=$ngone served_allocs=$allocs_stop"
# KFENCE samples the served caches too (the guest boots with a sample
# interval when the kernel has it): what it took over the whole run.
kf=/sys/kernel/debug/kfence/stats
[ ! -r $kf ] || echo "serve: figures: kfence_allocations=$(awk -F': ' '/^total allocations/ { print $2 }' $kf) kfence_bugs=$(awk -F': ' '/^total bugs/ { print $2 }' $kf)"
echo "serve: figures: hackbench_runs=${hackbench_runs:-0} iperf3_runs=${iperf3_runs:-0} exec_runs=${execs_runs:-0} stress-ng_bogo_ops=${ng_ops:-0}$nf_ops rslub_stress ${ops:-?} $(grep -o 'cpu_offline=[0-9]* cpu_online=[0-9]*' "$REAL_OUT/stress.out" | head -n 1)"
finish
