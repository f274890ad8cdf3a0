# shellcheck shell=sh
# Real programs and rslub's serving, inside the guest: sourced by
# scripts/guest-real.sh (make bench SUITE=real) and scripts/guest-serve.sh
# (make stress SERVE=1, make check). The programs come from Debian bookworm
# (scripts/setup.sh installs rt-tests, iperf3 and stress-ng on the host,
# whose root filesystem the guest boots on); network load stays on the
# guest's loopback.
#
# The workloads, each a fixed amount of work (so that under -icount its
# guest time is an instruction count):
#   hb-proc-pipe  hackbench, processes over pipes      (HB_GROUPS, HB_LOOPS)
#   hb-proc-sock  hackbench, processes over unix sockets
#   hb-thr-pipe   hackbench, threads over pipes
#   hb-thr-sock   hackbench, threads over unix sockets
#   iperf3-tcp    iperf3 TCP over 127.0.0.1, IPERF_TCP_BYTES sent in
#                 IPERF_TCP_LEN writes (TCP_NODELAY)
#   iperf3-udp    iperf3 UDP over 127.0.0.1, IPERF_UDP_BYTES sent in
#                 IPERF_UDP_LEN datagrams, unthrottled
#   ng-sock       stress-ng --sock (TCP over loopback), NG_WORKERS workers,
#                 NG_OPS bogo operations in all
# iperf3's server and client run pinned to different CPUs (PIN_SERVER,
# PIN_CLIENT; empty: not pinned).

SERVE_FILE=/sys/kernel/rslub/serve
# Every normal kmalloc cache (kmalloc-8 ... kmalloc-8k; not kmalloc-rcl-*,
# kmalloc-cg-*, dma-kmalloc-*) and skbuff_head_cache. The lead's glob has
# '*' and '?' only.
SERVE=${SERVE:-kmalloc-? kmalloc-?? kmalloc-??? kmalloc-?k skbuff_head_cache}
REAL_WORKLOADS_ALL="hb-proc-pipe hb-proc-sock hb-thr-pipe hb-thr-sock iperf3-tcp iperf3-udp ng-sock"
HB_GROUPS=${HB_GROUPS:-4}
HB_LOOPS=${HB_LOOPS:-100}
IPERF_TCP_BYTES=${IPERF_TCP_BYTES:-64M}
IPERF_TCP_LEN=${IPERF_TCP_LEN:-16K}
IPERF_UDP_BYTES=${IPERF_UDP_BYTES:-16M}
IPERF_UDP_LEN=${IPERF_UDP_LEN:-1400}
NG_WORKERS=${NG_WORKERS:-2}
NG_OPS=${NG_OPS:-2000}
PIN_SERVER=${PIN_SERVER-0}
PIN_CLIENT=${PIN_CLIENT-1}
REAL_OUT=${REAL_OUT:-/tmp/real}
mkdir -p "$REAL_OUT"

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
served() { grep -v ' (draining)$' "$SERVE_FILE" 2>/dev/null; }
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
	for c in "$@"; do
		[ -d "/sys/kernel/rslub/$c" ] && echo "/sys/kernel/rslub/$c"
	done
}

# wait_gone SECONDS DROP NAME...: waits until nothing is served or draining
# and none of the named rslub caches exist (the reaper looks every second);
# with DROP=1 it drops the kernel's reclaimable caches (dentries, inodes)
# every 5 s meanwhile, so that what they hold of served objects comes back.
# 0 when gone in time; WAITED holds the seconds waited.
wait_gone() {
	tmo=$1 drop=$2
	shift 2
	t=0
	while :; do
		if [ -z "$(cat "$SERVE_FILE" 2>/dev/null)" ] && [ -z "$(rslub_dirs "$@")" ]; then
			WAITED=$t
			return 0
		fi
		[ "$t" -ge "$tmo" ] && break
		[ "$drop" = 1 ] && [ $((t % 5)) = 0 ] && echo 3 >/proc/sys/vm/drop_caches
		sleep 1
		t=$((t + 1))
	done
	WAITED=$t
	return 1
}

# sum_attr ATTR DIR...: the sum of the first field of DIR/ATTR.
sum_attr() {
	a=$1
	shift
	s=0
	for d in "$@"; do
		v=$(cut -d' ' -f1 "$d/$a" 2>/dev/null) || continue
		[ -n "$v" ] && s=$((s + v))
	done
	echo $s
}

# slab_kb: /proc/meminfo's Slab in kB.
slab_kb() { awk '/^Slab:/ {print $2}' /proc/meminfo; }

# wait_listen PORT: until a TCP socket listens on PORT (iperf3's server is
# up), at most about 20 s.
wait_listen() {
	hex=$(printf '%04X' "$1")
	i=0
	while ! grep -q ":$hex 00000000:0000 0A" /proc/net/tcp 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 200 ] && return 1
		sleep 0.1
	done
}

# pinned CPU CMD...: CMD on CPU (taskset), or unpinned when CPU is empty.
pinned() {
	c=$1
	shift
	if [ -n "$c" ]; then taskset -c "$c" "$@"; else "$@"; fi
}

IPERF_PORT=${IPERF_PORT:-5201}

# iperf_run tcp|udp BYTES LEN: one iperf3 test, server and client.
iperf_run() {
	proto=$1 bytes=$2 len=$3 out=$REAL_OUT/iperf3-$1
	pinned "$PIN_SERVER" iperf3 -s -1 -i 0 -p "$IPERF_PORT" >"$out.server" 2>&1 &
	spid=$!
	if ! wait_listen "$IPERF_PORT"; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		echo "iperf3 server did not listen on port $IPERF_PORT" >"$out.client"
		return 1
	fi
	if [ "$proto" = udp ]; then
		pinned "$PIN_CLIENT" iperf3 -c 127.0.0.1 -p "$IPERF_PORT" -i 0 -u -b 0 -n "$bytes" -l "$len" >"$out.client" 2>&1
	else
		pinned "$PIN_CLIENT" iperf3 -c 127.0.0.1 -p "$IPERF_PORT" -i 0 -N -n "$bytes" -l "$len" >"$out.client" 2>&1
	fi
	crc=$?
	wait "$spid"
	src=$?
	[ $crc = 0 ] && [ $src = 0 ]
}

# run_workload NAME: one run of a workload, its output in $REAL_OUT/NAME.out;
# the exit status is the program's.
run_workload() {
	o=$REAL_OUT/$1.out
	case $1 in
	hb-proc-pipe) hackbench -p -g "$HB_GROUPS" -l "$HB_LOOPS" >"$o" 2>&1 ;;
	hb-proc-sock) hackbench -g "$HB_GROUPS" -l "$HB_LOOPS" >"$o" 2>&1 ;;
	hb-thr-pipe) hackbench -T -p -g "$HB_GROUPS" -l "$HB_LOOPS" >"$o" 2>&1 ;;
	hb-thr-sock) hackbench -T -g "$HB_GROUPS" -l "$HB_LOOPS" >"$o" 2>&1 ;;
	iperf3-tcp)
		iperf_run tcp "$IPERF_TCP_BYTES" "$IPERF_TCP_LEN"
		r=$?
		cat "$REAL_OUT/iperf3-tcp.client" >"$o"
		return $r ;;
	iperf3-udp)
		iperf_run udp "$IPERF_UDP_BYTES" "$IPERF_UDP_LEN"
		r=$?
		cat "$REAL_OUT/iperf3-udp.client" >"$o"
		return $r ;;
	ng-sock)
		stress-ng --sock "$NG_WORKERS" --sock-ops "$NG_OPS" --metrics-brief \
			--temp-path "$REAL_OUT" >"$o" 2>&1 ;;
	*) echo "unknown workload '$1'" >"$o"; return 2 ;;
	esac
}

# workload_line NAME: the line of the program's output worth quoting.
workload_line() {
	o=$REAL_OUT/$1.out
	case $1 in
	hb-*) grep -m1 '^Time:' "$o" ;;
	iperf3-*) grep -E 'receiver$' "$o" | tail -n 1 | sed 's/^\[[ 0-9SUM]*\] *//' ;;
	ng-sock) grep -E 'sock +[0-9]' "$o" | tail -n 1 | sed 's/^.*\] //' ;;
	esac
}
