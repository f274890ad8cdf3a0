#!/usr/bin/env bash
# Boots the kernel in KDIR under virtme-ng with the repo visible, runs CMD as
# root, and returns CMD's exit status. TCG by default (KVM hangs on this
# machine kind); KVM=1 uses KVM.
#
# The guest is judged by its progress, not by the clock (scripts/vmwatch.py):
# it is declared stuck when neither CMD prints a line nor the kernel console
# shows a KTAP result for VM_STALL seconds; VM_TIMEOUT bounds the whole run
# as a last resort. A stuck guest is asked for its stacks first (vCPU
# instruction pointers through QEMU's monitor, SysRq w/l/t), they go to
# stderr, and the exit status is 124. The kernel console is kept in a side
# log, VM_CONSOLE. CMD's stderr is merged into its stdout.
#
# Usage: scripts/vm.sh KDIR CMD
# Environment: VM_CPUS (2), VM_MEM (2G), VM_NUMA (0, or 2 for two nodes),
#   VM_STALL seconds (300), VM_TIMEOUT seconds (3600; 0: none),
#   VM_CONSOLE (the console log; default: a temporary file, kept and named
#   when the guest is stuck), VM_APPEND (extra boot options), VM_QEMU_OPTS,
#   VM_RWDIR (a host directory the guest may write), KVM (0).
set -uo pipefail
kdir=$1
cmd=$2
cpus=${VM_CPUS:-2}
mem=${VM_MEM:-2G}
numa=${VM_NUMA:-0}
stall=${VM_STALL:-300}
limit=${VM_TIMEOUT:-3600}

[ -f "$kdir/arch/x86/boot/bzImage" ] || {
	echo "vm: no kernel image in $kdir (run 'make setup', or pass KDIR=)" >&2
	exit 2
}
# Held (shared) while the VM runs: setup does not drop a cached kernel
# build that a VM is booted from (a rebuild for new patches meanwhile).
[ ! -f "$kdir/.rslub-built" ] || { exec 8<"$kdir/.rslub-built" && flock -s -n 8; } || true
# tsc=unstable: the guests keep time with the HPET, never the TSC. Under
# TCG the vCPUs' TSCs are the host's clock read at different moments; 7.3's
# clocksource watchdog checks their skew by a ping-pong between two CPUs
# with interrupts off, and a boot was seen stuck for good there: CPU 0 in
# watchdog_check_skew() waiting for CPU 1, CPUs 1 and 2 in stop_machine()
# (the switch away from tsc-early) waiting for CPU 0, the console silent
# from 3 s on (results/check/console-serve.log of such a run). With the
# TSC unstable from the start there is no such check and no switch; the
# guests with 4 vCPUs already found the TSC unsynchronized and used the
# HPET.
KARGS="kunit.enable=1 tsc=unstable"
args=(--run "$kdir" --cpus "$cpus" --memory "$mem" --append "$KARGS")
[ "${KVM:-0}" = 1 ] || args+=(--disable-kvm)
if [ "$numa" -gt 1 ]; then
	# Split memory and CPUs evenly over the nodes.
	mem_mb=$(numfmt --from=iec "${mem}" | awk '{print int($1 / 1048576)}')
	per_mem=$((mem_mb / numa))
	per_cpu=$((cpus / numa))
	[ "$per_cpu" -ge 1 ] || { echo "vm: VM_CPUS=$cpus is fewer than VM_NUMA=$numa nodes" >&2; exit 2; }
	args=(--run "$kdir" --cpus "$cpus" --memory "$((per_mem * numa))M" --append "$KARGS")
	[ "${KVM:-0}" = 1 ] || args+=(--disable-kvm)
	for ((n = 0; n < numa; n++)); do
		first=$((n * per_cpu))
		last=$((n == numa - 1 ? cpus - 1 : first + per_cpu - 1))
		args+=(--numa "${per_mem}M,cpus=$first-$last")
	done
	# One socket per node: QEMU's default puts every CPU in one socket
	# (one LLC), and the kernel warns (topology_sane) when a CPU comes
	# online with an LLC sibling on another node, as CPU hotplug in the
	# stress runs does. QEMU merges this -smp with vng's.
	if [ $((cpus % numa)) = 0 ]; then
		args+=(--qemu-opts="-smp $cpus,sockets=$numa,cores=$per_cpu,threads=1")
	fi
fi
[ -z "${VM_APPEND:-}" ] || args+=(--append "$VM_APPEND")
[ -z "${VM_RWDIR:-}" ] || args+=(--rwdir="$VM_RWDIR")
[ -z "${VM_QEMU_OPTS:-}" ] || args+=(--qemu-opts="$VM_QEMU_OPTS")

# pip puts vng next to the interpreter, which need not be on PATH.
vng=${VNG:-$(command -v vng 2>/dev/null ||
	python3 -c 'import os, sys; print(os.path.join(os.path.dirname(sys.executable), "vng"))')}
[ -x "$vng" ] || { echo "vm: vng not found (run 'make setup')" >&2; exit 2; }

work=$(mktemp -d /tmp/rslub-vm.XXXXXX)
console=${VM_CONSOLE:-$work/console.log}
: >"$console"
# vng reports a QEMU that ended before the guest command did only as its
# own exit 255 (it keeps QEMU's status to itself). QEMU runs through this
# wrapper, which writes the machine run's status (not vng's probes of the
# binary) where the watcher reads it; QEMU also logs CPU resets
# (-d cpu_reset) to a file: a guest that resets itself
# (a triple fault ends QEMU with status 0 under vng's -no-reboot) says so
# there.
qemu_bin=${VM_QEMU:-$(command -v qemu-system-x86_64)}
cat >"$work/qemu" <<EOF_QEMU
#!/bin/sh
case " \$* " in
*" -kernel "*) ;;
*) exec "$qemu_bin" "\$@" ;;
esac
"$qemu_bin" "\$@" -d cpu_reset -D "$work/qemu-debug.log"
rc=\$?
echo "\$rc" >"$work/qemu.status"
exit "\$rc"
EOF_QEMU
chmod +x "$work/qemu"
args+=(--qemu "$work/qemu")
# The console on vng's stderr (--verbose: at the default log level), a
# monitor socket for the watcher; vng passes the --qemu-opts to QEMU last.
args+=(--verbose --qemu-opts="-monitor unix:$work/monitor.sock,server=on,wait=off")
python3 "$(dirname "$0")/vmwatch.py" --console "$console" --monitor "$work/monitor.sock" \
	--stall "$stall" --limit "$limit" --system-map "$kdir/System.map" \
	--qemu-status "$work/qemu.status" --qemu-log "$work/qemu-debug.log" -- \
	"$vng" "${args[@]}" --exec "exec 2>&1; $cmd" </dev/null &
pid=$!
# Stopped from outside (make check failing elsewhere): the watcher stops the guest.
trap 'kill -TERM "$pid" 2>/dev/null; wait "$pid"; rm -rf "$work"; exit 143' TERM INT
wait "$pid"
rc=$?
if [ "$rc" = 124 ] && [ -z "${VM_CONSOLE:-}" ]; then
	# Keep the console of a stuck guest.
	keep=$(mktemp /tmp/rslub-console.XXXXXX)
	cp "$console" "$keep"
	echo "vm: console log kept: $keep" >&2
fi
rm -rf "$work"
exit $rc
