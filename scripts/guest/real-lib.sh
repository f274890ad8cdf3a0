# shellcheck shell=sh
# Real programs and rslub's serving, inside the guest: sourced by
# scripts/guest/real.sh (make bench SUITE=real) and scripts/guest/serve.sh
# (make stress SERVE=1, make check). The programs come from Debian bookworm
# (scripts/setup installs rt-tests, iperf3 and stress-ng on the host,
# whose root filesystem the guest boots on); network load stays on the
# guest's loopback.
#
# The workloads, each a fixed amount of work (so that under -icount its
# guest time is an instruction count):
#   hb-proc-pipe  hackbench, processes over pipes      (HB_GROUPS, HB_LOOPS)
#   hb-proc-sock  hackbench, processes over unix sockets
#   hb-thr-pipe   hackbench, threads over pipes
#   hb-thr-sock   hackbench, threads over unix sockets
#   hb-...-gN     any of the four with N groups (hb-proc-sock-g2: 80
#                 processes), for several group counts in one run
#   iperf3-tcp    iperf3 TCP over 127.0.0.1, IPERF_TCP_BYTES sent in
#                 IPERF_TCP_LEN writes (TCP_NODELAY)
#   iperf3-udp    iperf3 UDP over 127.0.0.1, IPERF_UDP_BYTES sent in
#                 IPERF_UDP_LEN datagrams, unthrottled (a throttled client
#                 would sleep, and idle guest time is not instructions)
#   ng-sock       stress-ng --sock (TCP over loopback), NG_WORKERS workers,
#                 NG_OPS bogo operations in all
#   perf-fork     perf bench syscall fork --loop PERF_FORK_LOOPS (perf 6.12,
#                 bookworm-backports): perf forks, the child exits at once,
#                 perf waits for it
#   perf-execve   perf bench syscall execve --loop PERF_EXECVE_LOOPS: the
#                 same, the child execs /bin/true
#   mmap1         tools/realprogs/mmap-loop anon: MMAP_PROCS processes, each
#                 mapping and unmapping MMAP_MIB MiB of anonymous memory
#                 MMAP_ITERS times (will-it-scale's mmap1)
#   mmap2         mmap-loop file: the same with a file of each process's own
#                 on the tmpfs MMAP_DIR (will-it-scale's mmap2)
#   brk1          mmap-loop brk: MMAP_PROCS processes, each moving its break
#                 up a page and back MMAP_ITERS times (will-it-scale's brk1,
#                 its processes variant: the heap VMA and its maple nodes)
#   xcpu-unix     tools/realprogs/xcpu-unix: XCPU_MSGS writes of XCPU_BYTES
#                 into a unix stream socket on CPU XCPU_FROM, read on CPU
#                 XCPU_TO (each SKB allocated on one CPU, freed on the other;
#                 XCPU_SNDBUF: the socket's send buffer, empty: the default)
# iperf3's server and client run pinned to different CPUs (PIN_SERVER,
# PIN_CLIENT; empty: not pinned).
#
# The programs of upstream's reports on sheaves against the classic design
# (perf bench syscall fork and execve, will-it-scale mmap2): will-it-scale
# runs one task per CPU for a fixed time, each mapping a 128 MiB region
# private and read-write and unmapping it at once, never touching it (so no
# page is faulted in: each iteration is a VMA and its maple tree nodes made
# and freed), and reports iterations per second. mmap1 maps anonymous
# memory; mmap2 maps a file each task made for itself in /tmp (a tmpfs on
# the machines of those reports), sized with ftruncate() and unlinked
# before the loop. Here the iterations are fixed and the time is measured,
# MMAP_PROCS tasks (2) rather than one per CPU. perf runs from a copy of
# itself, /bin/true and their libraries on a tmpfs (perf_root_prepare),
# chrooted there: from the guest's 9p root every exec waits on the host for
# its path lookups, and under -icount those waits count as time (one
# fork+exec of /bin/true: 75-105 million "instructions" from 9p, 2.5
# million from the tmpfs copy), where upstream's machines exec from the
# page cache.

SERVE_FILE=/sys/kernel/rslub/serve
# Every cache rslub can serve ('*': 121 on the test kernel), the caches of
# fork, exec and mmap (vm_area_struct, maple_node, anon_vma, filp,
# mm_struct, task_struct, ...) with the kmalloc caches. The former default,
# every normal kmalloc cache and skbuff_head_cache, is
# SERVE='kmalloc-? kmalloc-?? kmalloc-??? kmalloc-?k skbuff_head_cache'.
SERVE=${SERVE:-*}
REAL_WORKLOADS_ALL="hb-proc-pipe hb-proc-sock hb-thr-pipe hb-thr-sock iperf3-tcp iperf3-udp ng-sock
perf-fork perf-execve mmap1 mmap2 brk1 xcpu-unix"
HB_GROUPS=${HB_GROUPS:-4}
HB_LOOPS=${HB_LOOPS:-150}
IPERF_TCP_BYTES=${IPERF_TCP_BYTES:-64M}
IPERF_TCP_LEN=${IPERF_TCP_LEN:-16K}
IPERF_UDP_BYTES=${IPERF_UDP_BYTES:-16M}
IPERF_UDP_LEN=${IPERF_UDP_LEN:-1400}
# The UDP server's receive buffer: room for what an unthrottled client
# sends while the server waits for its CPU, so that fewer datagrams drop.
IPERF_UDP_WINDOW=${IPERF_UDP_WINDOW:-4M}
NG_WORKERS=${NG_WORKERS:-2}
NG_OPS=${NG_OPS:-60}
PIN_SERVER=${PIN_SERVER-0}
PIN_CLIENT=${PIN_CLIENT-1}
PERF_FORK_LOOPS=${PERF_FORK_LOOPS:-150}
PERF_EXECVE_LOOPS=${PERF_EXECVE_LOOPS:-200}
# Copies of perf bench run at once (each --loop the count above): the
# 8-vCPU model boot forks on every CPU, as upstream's many-CPU machines.
PERF_COPIES=${PERF_COPIES:-1}
MMAP_PROCS=${MMAP_PROCS:-2}
MMAP_ITERS=${MMAP_ITERS:-20000}
MMAP_MIB=${MMAP_MIB:-128}
MMAP_DIR=${MMAP_DIR:-/dev/shm}
XCPU_MSGS=${XCPU_MSGS:-80000}
XCPU_BYTES=${XCPU_BYTES:-1024}
XCPU_FROM=${XCPU_FROM:-0}
XCPU_TO=${XCPU_TO:-1}
XCPU_SNDBUF=${XCPU_SNDBUF:-0}
# The programs of tools/realprogs (built there by make bench,
# harness/benchreal.py) and the tmpfs root perf runs in.
REAL_PROGS=${REAL_PROGS:-$(pwd)/tools/realprogs}
PERF_ROOT=${PERF_ROOT:-/dev/shm/perf-root}
REAL_OUT=${REAL_OUT:-/tmp/real}
mkdir -p "$REAL_OUT"

# real_prepare: the guest's socket buffer limits raised for iperf3 -w
# (rmem_max caps SO_RCVBUF).
real_prepare() {
	echo 8388608 >/proc/sys/net/core/rmem_max
	echo 8388608 >/proc/sys/net/core/wmem_max
}

# perf_root_prepare: copies perf, /bin/true, their libraries (at the paths
# the loader resolves them to) and the loader's cache into $PERF_ROOT, a
# tmpfs, once per boot; about 50 MB, half a minute under TCG.
perf_root_prepare() {
	[ -x "$PERF_ROOT/usr/bin/perf" ] && return 0
	_perf=$(command -v perf) || return 1
	for _f in /bin/true /etc/ld.so.cache $(
		for _b in "$_perf" /bin/true; do
			ldd "$_b" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
		done | sort -u); do
		mkdir -p "$PERF_ROOT${_f%/*}" && cp -L "$_f" "$PERF_ROOT$_f" || return 1
	done
	# Last: its presence says the copy is complete.
	mkdir -p "$PERF_ROOT/usr/bin" && cp -L "$_perf" "$PERF_ROOT/usr/bin/perf"
}

# now_ns: the guest clock in ns (under -icount shift=0: instructions).
now_ns() { date +%s%N; }

# serve_available: rslub.ko has the serving interface (and is loaded).
serve_available() { [ -e "$SERVE_FILE" ]; }

serve_missing_msg() {
	if [ -d /sys/kernel/rslub ]; then
		echo "rslub.ko has no $SERVE_FILE: this build predates serving (merge main)"
	else
		echo "rslub.ko is not loaded (no /sys/kernel/rslub)"
	fi
}

# served: the caches being served, one a line; draining: the draining ones.
served() { grep -v ' (draining)$\| (kept)$' "$SERVE_FILE" 2>/dev/null; }
draining() { sed -n 's/ (draining)$//p' "$SERVE_FILE" 2>/dev/null; }

# serve_start: serves $SERVE (one write); fails when the write fails or
# nothing ends up served.
serve_start() {
	printf '%s\n' "$SERVE" >"$SERVE_FILE" 2>/dev/null || return 1
	[ -n "$(served)" ]
}

# serve_stop: stops serving every cache (they drain).
serve_stop() { echo '-*' >"$SERVE_FILE"; }

# rslub_dirs NAME...: the /sys/kernel/rslub directories of the named
# caches that still exist.
rslub_dirs() {
	for _c in "$@"; do
		[ -d "/sys/kernel/rslub/$_c" ] && echo "/sys/kernel/rslub/$_c"
	done
}

# wait_gone SECONDS DROP NAME...: waits until nothing is served or draining
# and none of the named rslub caches exist (a write to serve each second
# is a look of the reaper);
# with DROP=1 it drops the kernel's reclaimable caches (dentries, inodes)
# every 5 s meanwhile, so that what they hold of served objects comes back.
# 0 when gone in time; WAITED holds the seconds waited.
wait_gone() {
	_tmo=$1 _drop=$2
	shift 2
	WAITED=0
	while :; do
		[ -z "$(cat "$SERVE_FILE" 2>/dev/null)" ] && [ -z "$(rslub_dirs "$@")" ] && return 0
		[ "$WAITED" -ge "$_tmo" ] && return 1
		[ "$_drop" = 1 ] && [ $((WAITED % 5)) = 0 ] && echo 3 >/proc/sys/vm/drop_caches
		sleep 1
		echo >"$SERVE_FILE" 2>/dev/null
		WAITED=$((WAITED + 1))
	done
}

# sum_attr ATTR DIR...: the sum of the first field of DIR/ATTR.
sum_attr() {
	_a=$1
	shift
	# One cat and one awk for all of them: a program started in the guest
	# costs tens of ms under TCG (over 9p), and a list has 121 caches. cat
	# goes on past a cache that went meanwhile.
	set -- $(for _d in "$@"; do echo "$_d/$_a"; done)
	[ $# -gt 0 ] || { echo 0; return; }
	cat "$@" 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# slab_kb: /proc/meminfo's Slab in kB.
slab_kb() { awk '/^Slab:/ {print $2}' /proc/meminfo; }

# wait_listen PORT: until a TCP socket listens on PORT (iperf3's server is
# up), at most about 20 s.
wait_listen() {
	_hex=$(printf '%04X' "$1")
	_i=0
	while ! grep -q ":$_hex 00000000:0000 0A" /proc/net/tcp 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt 200 ] && return 1
		sleep 0.1
	done
}

# pinned CPU CMD...: CMD on CPU (taskset), or unpinned when CPU is empty.
pinned() {
	_cpu=$1
	shift
	if [ -n "$_cpu" ]; then taskset -c "$_cpu" "$@"; else "$@"; fi
}

IPERF_PORT=${IPERF_PORT:-5201}

# iperf_run tcp|udp BYTES LEN: one iperf3 test, server and client.
iperf_run() {
	_proto=$1 _bytes=$2 _len=$3 _out=$REAL_OUT/iperf3-$1
	pinned "$PIN_SERVER" iperf3 -s -1 -i 0 -p "$IPERF_PORT" >"$_out.server" 2>&1 &
	_spid=$!
	if ! wait_listen "$IPERF_PORT"; then
		kill "$_spid" 2>/dev/null
		wait "$_spid" 2>/dev/null
		echo "iperf3 server did not listen on port $IPERF_PORT" >"$_out.client"
		return 1
	fi
	_t0=$(now_ns)
	if [ "$_proto" = udp ]; then
		pinned "$PIN_CLIENT" iperf3 -c 127.0.0.1 -p "$IPERF_PORT" -i 0 -u -b 0 -n "$_bytes" -l "$_len" -w "$IPERF_UDP_WINDOW" >"$_out.client" 2>&1
	else
		pinned "$PIN_CLIENT" iperf3 -c 127.0.0.1 -p "$IPERF_PORT" -i 0 -N -n "$_bytes" -l "$_len" >"$_out.client" 2>&1
	fi
	_crc=$?
	echo $(($(now_ns) - _t0)) >"$_out.ns"
	wait "$_spid"
	_src=$?
	[ $_crc = 0 ] && [ $_src = 0 ]
}

# perf_copies fork|execve LOOPS OUT: PERF_COPIES copies of perf bench
# syscall at once, their outputs one after the other in OUT; fails if one
# failed.
perf_copies() {
	_k=1 _pids=
	while [ "$_k" -le "$PERF_COPIES" ]; do
		chroot "$PERF_ROOT" /usr/bin/perf bench syscall "$1" --loop "$2" >"$3.$_k" 2>&1 &
		_pids="$_pids $!"
		_k=$((_k + 1))
	done
	_r=0
	for _p in $_pids; do wait "$_p" || _r=1; done
	_k=1
	while [ "$_k" -le "$PERF_COPIES" ]; do
		cat "$3.$_k"
		rm -f "$3.$_k"
		_k=$((_k + 1))
	done >"$3"
	return $_r
}

# run_workload NAME: one run of a workload, its output in $REAL_OUT/NAME.out;
# the exit status is the program's.
run_workload() {
	_o=$REAL_OUT/$1.out
	# hb-*-gN: the hackbench workload with N groups instead of HB_GROUPS.
	_w=$1 _g=$HB_GROUPS
	case $1 in hb-*-g[0-9]*) _w=${1%-g*} _g=${1##*-g} ;; esac
	case $_w in
	hb-proc-pipe) hackbench -p -g "$_g" -l "$HB_LOOPS" >"$_o" 2>&1 ;;
	hb-proc-sock) hackbench -g "$_g" -l "$HB_LOOPS" >"$_o" 2>&1 ;;
	hb-thr-pipe) hackbench -T -p -g "$_g" -l "$HB_LOOPS" >"$_o" 2>&1 ;;
	hb-thr-sock) hackbench -T -g "$_g" -l "$HB_LOOPS" >"$_o" 2>&1 ;;
	iperf3-tcp)
		iperf_run tcp "$IPERF_TCP_BYTES" "$IPERF_TCP_LEN"
		_r=$?
		cat "$REAL_OUT/iperf3-tcp.client" >"$_o"
		return $_r ;;
	iperf3-udp)
		iperf_run udp "$IPERF_UDP_BYTES" "$IPERF_UDP_LEN"
		_r=$?
		cat "$REAL_OUT/iperf3-udp.client" >"$_o"
		return $_r ;;
	ng-sock)
		stress-ng --sock "$NG_WORKERS" --sock-ops "$NG_OPS" --metrics-brief \
			--temp-path "$REAL_OUT" >"$_o" 2>&1 ;;
	perf-fork) perf_copies fork "$PERF_FORK_LOOPS" "$_o" ;;
	perf-execve) perf_copies execve "$PERF_EXECVE_LOOPS" "$_o" ;;
	mmap1) "$REAL_PROGS/mmap-loop" anon "$MMAP_PROCS" "$MMAP_ITERS" "$MMAP_MIB" >"$_o" 2>&1 ;;
	mmap2) "$REAL_PROGS/mmap-loop" file "$MMAP_PROCS" "$MMAP_ITERS" "$MMAP_MIB" "$MMAP_DIR" >"$_o" 2>&1 ;;
	brk1) "$REAL_PROGS/mmap-loop" brk "$MMAP_PROCS" "$MMAP_ITERS" 0 >"$_o" 2>&1 ;;
	xcpu-unix)
		"$REAL_PROGS/xcpu-unix" "$XCPU_MSGS" "$XCPU_BYTES" "$XCPU_FROM" "$XCPU_TO" \
			"$XCPU_SNDBUF" >"$_o" 2>&1 ;;
	*) echo "unknown workload '$1'" >"$_o"; return 2 ;;
	esac
}

# workload_ns NAME: the last run's own elapsed time in ns, from the
# program: hackbench's and tools/realprogs' "Time:", perf's microseconds
# per call times its calls (the slowest copy's), stress-ng's bogo ops over its bogo ops per
# second of real time, the guest clock around iperf3's client (started
# once the server listens). Their start-up and teardown are not in it.
workload_ns() {
	_o=$REAL_OUT/$1.out
	case $1 in
	hb-* | mmap* | brk1 | xcpu-*) awk '/^Time:/ { printf "%.0f\n", $2 * 1e9; exit }' "$_o" ;;
	perf-*) awk '/^# Executed [0-9]+ / { n = $3 } n && $2 == "usecs/op" { t = $1 * n * 1e3; if (t > m) m = t; n = 0 }
		END { if (m) printf "%.0f\n", m }' "$_o" ;;
	iperf3-tcp | iperf3-udp) cat "$REAL_OUT/$1.ns" ;;
	ng-sock) awk '$4 == "sock" && $5 ~ /^[0-9]+$/ && $9 > 0 { printf "%.0f\n", $5 / $9 * 1e9; exit }' "$_o" ;;
	esac
}

# workload_line NAME: the line of the program's output worth quoting.
workload_line() {
	_o=$REAL_OUT/$1.out
	case $1 in
	hb-*) grep -m1 '^Time:' "$_o" ;;
	mmap* | brk1 | xcpu-*) echo "$(grep -m1 '^Time:' "$_o"): $(head -n 1 "$_o" | sed 's/^[a-z-]*: //')" ;;
	perf-*)
		_l=$(grep -E -m2 '^# Executed|usecs/op' "$_o" | sed 's/^ *//' | paste -sd ',' - | sed 's/,/, /')
		if [ "$PERF_COPIES" -gt 1 ]; then echo "$_l (the first of $PERF_COPIES copies at once)"; else echo "$_l"; fi ;;
	iperf3-*) grep -E 'receiver$' "$_o" | tail -n 1 | sed 's/^\[[ 0-9SUM]*\] *//' ;;
	ng-sock) grep -E 'sock +[0-9]' "$_o" | tail -n 1 | sed 's/^.*\] //' ;;
	esac
}
