# shellcheck shell=bash
# The served-cache VM of make check, the short form of make stress SERVE=1
# (sourced by scripts/check.sh, which provides OUT, TREE, KDIR, step,
# vm_jobs, problems, total_fail, count_checks and kernel_log_bad): a small
# VM (3 CPUs: rslub_stress keeps 2 online, so it needs a third to take
# offline; 1 GB) runs scripts/guest-serve.sh for CHECK_SERVE_SECONDS
# (15): rslub serves every normal kmalloc cache and skbuff_head_cache from
# load while hackbench, iperf3 and stress-ng run beside rslub_stress.ko
# with CPU hotplug; then validate, serving stopped (the programs run again
# with no rslub allocation), objects coming back, empty caches gone, and
# rmmod refused exactly while the kernel keeps served objects (the drain is
# watched until it settles, CHECK_SERVE_DRAIN (30) seconds at most).
# CHECK_SERVE=0 leaves it out.
#
#   start_serve   boots it in the background (beside the other VMs)
#   judge_serve   after `wait`: its checks, kernel log and figures

# The "serve: PASS" lines of scripts/guest-serve.sh (also make stress SERVE=1).
SERVE_CHECKS=10

start_serve() {
	local log=$OUT/vm-serve.log
	step "VM serve: 3 CPUs, 1 GB: rslub serving the kernel's kmalloc and skb caches under hackbench, iperf3, stress-ng (log: $log)"
	(
		cd "$TREE" || exit 2
		VM_CPUS=3 VM_NUMA=0 VM_MEM=1G VM_APPEND=log_buf_len=4M VM_TIMEOUT=${VM_TIMEOUT:-600} \
			scripts/vm.sh "$KDIR" "DRAIN_SECONDS=${CHECK_SERVE_DRAIN:-30} scripts/guest-serve.sh --dmesg ${CHECK_SERVE_SECONDS:-15}" 2>&1 |
			cat >"$log"
		echo "${PIPESTATUS[0]}" >"$OUT/vm-serve.rc"
	) &
	vm_jobs="$vm_jobs $!"
}

judge_serve() {
	local name=serve log=$OUT/vm-serve.log rc bad
	rc=$(cat "$OUT/vm-serve.rc" 2>/dev/null || echo 2)
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		problems="$problems\n  $name: guest timed out (VM_TIMEOUT=${VM_TIMEOUT:-600}s)"
		total_fail=$((total_fail + 1))
		return
	fi
	[ "$rc" = 0 ] || problems="$problems\n  $name: guest command exited $rc"
	sed -n '/==RSLUB-DMESG-BEGIN==/,/==RSLUB-DMESG-END==/p' "$log" >"$OUT/dmesg-$name.log"
	bad=$(kernel_log_bad "$OUT/dmesg-$name.log")
	[ -z "$bad" ] || problems="$problems\n  $name: kernel log reports:\n$bad"
	count_checks "$name" "$log" serve "$SERVE_CHECKS"
	grep -E "^serve: figures" "$log" | sed "s/^/    /"
}
