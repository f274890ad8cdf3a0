#!/usr/bin/env bash
# Boots the kernel in KDIR under virtme-ng with the repo visible, runs CMD as
# root, and returns CMD's exit status. TCG by default (KVM hangs on this
# machine kind); KVM=1 uses KVM.
#
# Usage: scripts/vm.sh KDIR CMD
# Environment: VM_CPUS (2), VM_MEM (2G), VM_NUMA (0, or 2 for two nodes),
#   VM_TIMEOUT seconds (600), VM_APPEND (extra boot options), VM_QEMU_OPTS,
#   VM_RWDIR (a host directory the guest may write), KVM (0).
set -uo pipefail
kdir=$1
cmd=$2
cpus=${VM_CPUS:-2}
mem=${VM_MEM:-2G}
numa=${VM_NUMA:-0}
tmo=${VM_TIMEOUT:-600}

[ -f "$kdir/arch/x86/boot/bzImage" ] || {
	echo "vm: no kernel image in $kdir (run 'make setup', or pass KDIR=)" >&2
	exit 2
}
args=(--run "$kdir" --cpus "$cpus" --memory "$mem" --append kunit.enable=1)
[ "${KVM:-0}" = 1 ] || args+=(--disable-kvm)
if [ "$numa" -gt 1 ]; then
	# Split memory and CPUs evenly over the nodes.
	mem_mb=$(numfmt --from=iec "${mem}" | awk '{print int($1 / 1048576)}')
	per_mem=$((mem_mb / numa))
	per_cpu=$((cpus / numa))
	[ "$per_cpu" -ge 1 ] || { echo "vm: VM_CPUS=$cpus is fewer than VM_NUMA=$numa nodes" >&2; exit 2; }
	args=(--run "$kdir" --cpus "$cpus" --memory "$((per_mem * numa))M" --append kunit.enable=1)
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
# The guest runs in its own session so that a timeout kills QEMU too, not
# only vng (timeout --foreground would leave QEMU running to the end).
marker=$(mktemp)
rm -f "$marker"
setsid "$vng" "${args[@]}" --exec "$cmd" </dev/null &
pid=$!
(
	sleep "$tmo"
	kill -0 "$pid" 2>/dev/null || exit 0
	touch "$marker"
	kill -TERM -- "-$pid" 2>/dev/null
	sleep 10
	kill -KILL -- "-$pid" 2>/dev/null
) 2>/dev/null &
watchdog=$!
# Stopped from outside (make check failing elsewhere): stop the guest too.
trap 'kill -TERM -- "-$pid" 2>/dev/null; kill "$watchdog" 2>/dev/null; exit 143' TERM INT
wait "$pid"
rc=$?
pkill -P "$watchdog" 2>/dev/null
kill "$watchdog" 2>/dev/null
wait "$watchdog" 2>/dev/null
if [ -e "$marker" ]; then
	rm -f "$marker"
	echo "vm: TIMEOUT: the guest did not finish within ${tmo}s (VM_TIMEOUT); killed" >&2
	exit 124
fi
exit $rc
