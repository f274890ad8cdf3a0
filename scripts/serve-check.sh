# shellcheck shell=bash
# The served-cache VM of make check, the short form of make stress SERVE=1
# (sourced by scripts/check.sh, which provides OUT, TREE, KDIR, vm_limit,
# judge_rc, problems, count_checks and kernel_log_bad): a small
# VM (3 CPUs: rslub_stress keeps 2 online, so it needs a third to take
# offline; 1 GB) runs scripts/guest/serve.sh for CHECK_SERVE_SECONDS
# (15): rslub serves every cache it can ('*') from load while hackbench,
# iperf3, execs and stress-ng (sockets in a child memory cgroup; fork,
# mmap and files in the root one) run beside rslub_stress.ko with CPU
# hotplug, and validate meanwhile; then serving stopped (the programs run
# again with no rslub allocation), objects coming back, empty caches gone, and
# rmmod refused exactly while the kernel keeps served objects (the drain is
# watched until it settles, CHECK_SERVE_DRAIN (30) seconds at most), and
# last the KUnit suite rslub_serve_kept (it leaves rslub loaded) and the
# reaper going to sleep. The KUnit suite rslub_serve_kmalloc frees through
# kfree_rcu()'s list path on the served kmalloc-96 and kmalloc-192 while
# '*' is served (without init_on_free=1: zeroing every free slows this,
# make check's longest guest, under TCG; smp2 has it for the same path on
# caches of its own).
# CHECK_SERVE=0 leaves it out. Validated under load: the caches of fork,
# exec, mmap, files and TCP, a few kmalloc ones and skbuff_head_cache
# (SERVE_VALIDATE; make stress SERVE=1 validates all 121).
#
#   run_serve     runs it (check.sh's scheduler starts it beside the others)
#   judge_serve   afterwards: its checks, kernel log and figures

# The "serve: PASS" lines of scripts/guest/serve.sh (also make stress SERVE=1).
SERVE_CHECKS=19
SERVE_VALIDATE="task_struct mm_struct vm_area_struct maple_node anon_vma anon_vma_chain sighand_cache signal_cache files_cache filp TCP skbuff_head_cache kmalloc-64 kmalloc-512 kmalloc-1k"

run_serve() {
	local log=$OUT/vm-serve.log secs=${CHECK_SERVE_SECONDS:-15} drain=${CHECK_SERVE_DRAIN:-30} kfence=
	# KFENCE (built in and off on the test kernel) samples every 100 ms
	# here, as a distribution kernel's does, while rslub serves.
	! grep -q '^CONFIG_KFENCE=y' "$KDIR/.config" || kfence=" kfence.sample_interval=100"
	cd "$TREE" || return 2
	VM_CPUS=3 VM_NUMA=0 VM_MEM=1G VM_APPEND="log_buf_len=4M$kfence" VM_TIMEOUT=$(vm_limit $((secs + drain))) \
		VM_CONSOLE=$OUT/console-serve.log \
		scripts/vm.sh "$KDIR" "DRAIN_SECONDS=$drain SERVE_KEPT=1 SERVE_VALIDATE='$SERVE_VALIDATE' scripts/guest/serve.sh --dmesg $secs" 2>&1 |
		cat >"$log"
	echo "${PIPESTATUS[0]}" >"$OUT/vm-serve.rc"
}

judge_serve() {
	local name=serve log=$OUT/vm-serve.log bad
	judge_rc "$name" || return
	sed -n '/==RSLUB-DMESG-BEGIN==/,/==RSLUB-DMESG-END==/p' "$log" >"$OUT/dmesg-$name.log"
	bad=$(kernel_log_bad "$OUT/dmesg-$name.log")
	[ -z "$bad" ] || problems="$problems\n  $name: kernel log reports:\n$bad"
	count_checks "$name" "$log" serve "$SERVE_CHECKS"
	grep -E "^serve: figures" "$log" | sed "s/^/    /"
}
