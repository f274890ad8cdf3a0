# SPDX-License-Identifier: GPL-2.0
"""make stress: rslub_stress.ko in a guest, judged by its lines and kernel log.

The test kernel boots with 4 CPUs on 2 NUMA nodes and runs rslub_stress.ko
for STRESS_SECONDS (60); the run fails unless the module reports PASS and
the kernel log has no WARNING/BUG/Oops/lockdep report or stack trace. It
prints the figures; its logs go to results/stress/ (STRESS_OUT).

Environment: STRESS_SECONDS (60), STRESS_PARAMS (extra module parameters,
e.g. "seed=123 hotplug_ms=100"), RSLUB_PARAMS (rslub.ko's, e.g.
"max_empty=0"), VM_CPUS (4), VM_NUMA (2), VM_MEM, VM_APPEND, VM_STALL,
VM_TIMEOUT (harness.vm).

FAULTS=1: the same VM shape runs scripts/guest/oom.sh faults: every
  request of rslub_cache_create and of the allocation paths failed once,
  then the stress for STRESS_SECONDS with FAULT_PERCENT (10) of its
  kthreads' slab and page requests failing.
PRESSURE=1: a VM of VM_MEM (320M) with 2 CPUs runs scripts/guest/oom.sh
  pressure: PRESSURE_ROUNDS (5) rounds of filling rslub until NULL and of
  the shrinker under memory pressure.
SERVE=1: the stress VM shape runs scripts/guest/serve.sh: rslub serves
  every cache it can ('*') from load while hackbench, iperf3, execs and
  stress-ng (sockets, fork, mmap, files) run beside rslub_stress.ko (CPU
  hotplug) for STRESS_SECONDS; then validate of every served cache,
  serving stopped, the served caches drained and gone, rslub unloaded.
All pass only when every check line of the guest says PASS.
"""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from harness import judge, lib, serve


def plan_run(env, kfence):
    """(kind, vCPUs, nodes, memory, guest command) of the run ENV asks for.

    KFENCE: the kernel has it (it samples while rslub serves, as in make
    check's serve guest; VM_APPEND's default then says so).
    """
    secs = env.get("STRESS_SECONDS") or "60"
    params, rslub = env.get("STRESS_PARAMS", ""), env.get("RSLUB_PARAMS", "")
    cpus, numa, mem = env.get("VM_CPUS") or "4", env.get("VM_NUMA") or "2", \
        env.get("VM_MEM") or "2G"
    append = "log_buf_len=4M"
    if env.get("FAULTS") == "1":
        kind = "faults"
        cmd = f"scripts/guest/oom.sh --dmesg faults {secs} {env.get('FAULT_PERCENT') or 10}"
    elif env.get("SERVE") == "1":
        kind = "serve"
        if kfence:
            append = "log_buf_len=4M kfence.sample_interval=100"
        cmd = f"SERVE_KEPT=1 RSLUB_PARAMS='{rslub}' scripts/guest/serve.sh --dmesg {secs} {params}"
    elif env.get("PRESSURE") == "1":
        kind = "pressure"
        cpus, numa, mem = env.get("VM_CPUS") or "2", env.get("VM_NUMA") or "0", \
            env.get("VM_MEM") or "320M"
        cmd = f"scripts/guest/oom.sh --dmesg pressure {env.get('PRESSURE_ROUNDS') or 5}"
    else:
        kind = "stress"
        cmd = f"RSLUB_PARAMS='{rslub}' scripts/guest/stress.sh --dmesg {secs} {params}"
    return kind, cpus, numa, mem, env.get("VM_APPEND") or append, cmd


def problems(kind, rc, log, out, rounds):
    """What is wrong with a run of KIND that exited RC with output LOG."""
    found = []
    if rc == 124:
        m = re.search(r"^vm: STUCK.*$", log, re.M)
        found.append("  the guest was stuck (VM_STALL) or ran out of time (VM_TIMEOUT): "
                     f"{m.group(0) if m else ''}; stacks in {out}/vm.log, "
                     f"console in {out}/console.log")
    elif rc != 0:
        found.append(f"  the guest command exited {rc}")
    passes = judge.lines_of(log, kind, "PASS")
    if not passes:
        found.append(f"  no '{kind}: PASS' line")
    if kind != "stress":
        fails = judge.lines_of(log, kind, "FAIL")
        if fails:
            found.append(f"  {len(fails)} '{kind}: FAIL' lines")
    if kind == "pressure":
        rounds_said = [p for p in passes if re.match(r"pressure: PASS (fill|shrinker)", p)]
        if len(rounds_said) != 2 * rounds + 2:
            found.append("  not every round reported fill and shrinker")
    # faults and pressure: as many checks passed as the guest planned (its
    # "KIND: plan N" line, printed beside the checks it counts).
    if kind in ("faults", "pressure"):
        planned = judge.plan(log, kind)
        if planned is None:
            found.append(f"  no '{kind}: plan N' line: the guest never reached its checks")
        elif len(passes) != planned:
            found.append(f"  {len(passes)} of {planned} {kind} checks passed")
    if kind == "serve" and len(passes) != serve.SERVE_CHECKS:
        found.append(f"  {len(passes)} of {serve.SERVE_CHECKS} serve checks passed")
    return found


def main():
    root = lib.ROOT
    out = Path(os.environ.get("STRESS_OUT") or root / "results/stress")
    secs = int(os.environ.get("STRESS_SECONDS") or 60)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)

    def fail(why):
        print(f"stress: FAILED: {why}", flush=True)
        sys.exit(1)

    # The first command on a fresh machine may be this one: set up first
    # (seconds when everything is there).
    if subprocess.run(["make", "-s", "setup"], cwd=root, check=False).returncode:
        fail("setup (see the line above)")
    kdir = lib.rslub_kdir(root)
    if not kdir or not os.path.isdir(kdir):
        fail(f"no kernel build directory (make -s kdir printed '{kdir}')")
    with open(out / "build.log", "wb") as f:
        built = subprocess.run(["make", "-s", "modules"], cwd=root, stdout=f,
                               stderr=subprocess.STDOUT, check=False).returncode == 0
    if not built:
        print("\n".join((out / "build.log").read_text(errors="replace").splitlines()[-30:]))
        fail("module build")
    kind, cpus, numa, mem, append, cmd = plan_run(os.environ, lib.has(kdir, "CONFIG_KFENCE"))
    print(f"stress: {kind}, {secs} s on {cpus} CPUs, {numa} NUMA nodes, {mem} "
          f"(log: {out}/vm.log)", flush=True)
    # The stress prints nothing on stdout while it runs: the stall limit
    # (the guest judged stuck, harness.vm) is the run's length and 300 s more.
    env = {**os.environ, "VM_CPUS": cpus, "VM_NUMA": numa, "VM_MEM": mem, "VM_APPEND": append,
           "VM_STALL": os.environ.get("VM_STALL") or str(secs + 300),
           "VM_TIMEOUT": os.environ.get("VM_TIMEOUT") or str(secs * 10 + 1800),
           "VM_CONSOLE": str(out / "console.log"), "PYTHONPATH": str(root / "scripts")}
    t0 = time.time()
    with open(out / "vm.log", "wb") as f:
        rc = subprocess.run([sys.executable, "-m", "harness.vm", kdir, cmd], cwd=root, env=env,
                            stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            check=False).returncode
    wall = int(time.time() - t0)
    log = (out / "vm.log").read_text(errors="replace")
    dmesg = judge.dmesg_section(log)
    (out / "dmesg.log").write_text(dmesg, encoding="utf-8")
    for line in log.splitlines():
        if re.match(r"rslub_stress: |stress: |faults: |pressure: |serve: "
                    r"|  (log|MemTotal|rslub_stress): ", line) and "rslub_stress: t=" not in line:
            print(f"  {line}")
    print(f"  wall time: {wall} s (boot, load, run, unload)")
    found = problems(kind, rc, log, out, int(os.environ.get("PRESSURE_ROUNDS") or 5))
    if not dmesg:
        found.append("  no kernel log captured")
    bad = judge.kernel_log_bad(dmesg)
    if bad:
        found += ["  kernel log reports:"] + bad
    if found:
        print("stress: FAILED:\n" + "\n".join(found))
        return 1
    print("stress: PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
