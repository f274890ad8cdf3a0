# SPDX-License-Identifier: GPL-2.0
"""The served-cache guest of make check, the short form of make stress SERVE=1.

A small VM (3 CPUs: rslub_stress keeps 2 online, so it needs a third to
take offline; 1 GB) runs scripts/guest/serve.sh for CHECK_SERVE_SECONDS
(15): rslub serves every cache it can ('*') from load while hackbench,
iperf3, execs and stress-ng (sockets in a child memory cgroup; fork, mmap
and files in the root one) run beside rslub_stress.ko with CPU hotplug,
and validate meanwhile; then serving stopped (the programs run again with
no rslub allocation), objects coming back, empty caches gone, and rmmod
refused exactly while the kernel keeps served objects (the drain is
watched until it settles, CHECK_SERVE_DRAIN (30) seconds at most), and
last the KUnit suite rslub_serve_kept (it leaves rslub loaded) and the
reaper going to sleep. The KUnit suite rslub_serve_kmalloc frees through
kfree_rcu()'s list path on the served kmalloc-96 and kmalloc-192 while
'*' is served (without init_on_free=1: zeroing every free slows this, make
check's longest guest, under TCG; smp2 has it for the same path on caches
of its own). CHECK_SERVE=0 leaves it out. Validated under load: the caches
of fork, exec, mmap, files and TCP, a few kmalloc ones and
skbuff_head_cache (SERVE_VALIDATE; make stress SERVE=1 validates all 121).
The programs run small here (hackbench 10 loops, iperf3 2 MB a run): each
has ended a run by the time validate and rslub_stress are done, when the
load stops (the stop waits for each loop's first run).
"""

import os
import re

from harness import judge, lib

# The "serve: PASS" lines of scripts/guest/serve.sh (also make stress SERVE=1).
SERVE_CHECKS = 19
SERVE_VALIDATE = ("task_struct mm_struct vm_area_struct maple_node anon_vma anon_vma_chain "
                  "sighand_cache signal_cache files_cache filp TCP skbuff_head_cache "
                  "kmalloc-64 kmalloc-512 kmalloc-1k")


def seconds():
    """(serving seconds, drain seconds) of make check's serve guest."""
    return (int(os.environ.get("CHECK_SERVE_SECONDS") or 15),
            int(os.environ.get("CHECK_SERVE_DRAIN") or 30))


def guest(kdir):
    """The serve guest's (VM environment without VM_TIMEOUT, command, work seconds).

    KFENCE (built in and off on the test kernel) samples every 100 ms
    here, as a distribution kernel's does, while rslub serves.
    """
    secs, drain = seconds()
    kfence = " kfence.sample_interval=100" if lib.has(kdir, "CONFIG_KFENCE") else ""
    env = {"VM_CPUS": "3", "VM_NUMA": "0", "VM_MEM": "1G",
           "VM_APPEND": f"log_buf_len=4M{kfence}"}
    cmd = (f"DRAIN_SECONDS={drain} SERVE_KEPT=1 SERVE_HB_LOOPS=10 SERVE_IPERF_BYTES=2M "
           f"SERVE_VALIDATE='{SERVE_VALIDATE}' "
           f"scripts/guest/serve.sh --dmesg {secs}")
    return env, cmd, secs + drain


def judge_serve(tally, log, dmesg_out):
    """Counts the serve guest's checks; its kernel log goes to DMESG_OUT."""
    dmesg = judge.dmesg_section(log)
    with open(dmesg_out, "w", encoding="utf-8") as f:
        f.write(dmesg)
    tally.kernel_log("serve", dmesg)
    tally.count_checks("serve", log, "serve", SERVE_CHECKS)
    for line in re.findall(r"^serve: figures.*$", log, re.M):
        tally.out(f"    {line}")
