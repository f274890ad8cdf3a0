# SPDX-License-Identifier: GPL-2.0
"""make bench: A/B benchmarks of the in-tree SLUB, rslub and a floor allocator.

    python3 -m harness.bench          (make bench VAR=...)

The synthetic suites (the default and the rslub-vs-rslub experiments) run
the bench module (bench/) in the "bench" kernel flavor (no lock debugging,
SLUB_STATS off, rslub's counters compiled out), built into the kernel
cache if needed, one boot per mode:

  icount   2 vCPUs, -icount shift=0,sleep=off (ticks = instructions): pair,
           repeat, fifo, shuffle, bulk, remote, churn over every size;
           under the cost model's plugin with model=off, so that a rep
           string instruction counts once (ICOUNT_PLUGIN=0: the virtual
           clock alone, each iteration of a rep string instruction one)
  wall     BENCH_CPUS vCPUs, multi-threaded TCG (nanoseconds): parallel
           scaling over 1..BENCH_CPUS, remote objects/s, pair
  model    the icount boot's workloads under the cost model's QEMU plugin
           (tools/costmodel): modeled cycles and the cache, coherence and
           atomic events of each operation, priced by MODEL_PROFILE of
           tools/costmodel/profiles.toml (default server-ooo, the interval
           core; MODEL_PROFILE=server prices in order)
  model8   8 vCPUs over 2 NUMA nodes under the plugin: parallel over 1..8
           CPUs and remote from CPU 0 to CPU 4, across the nodes
           (WORKLOADS_MODEL8, MODEL8_SIZES, MODEL8_OPS, MODEL8_BUDGET_KB)
  model16, model32  (scale runs) the same on 16 vCPUs over 2 nodes and 32
           over 4 (8 a node), parallel at PAR16_CPUS / PAR32_CPUS CPUs,
           remote across nodes
  cycles   KVM=1: one boot on KVM, BENCH_CPUS vCPUs

SUITE=real and classic-real are harness.benchreal's (real programs);
SUITE=classic-all runs classic and classic-real into one directory.
Results go to results/<timestamp>[-SUITE]/: vm-<mode>.log,
console-<mode>.log, counts-<mode>.txt (the plugin's), bench.json,
table.txt, PNG plots and report.md (tools/rsbench).

Environment:
  QUICK=1        a small run (< 5 min warm): 4 sizes, 3 rounds, fewer ops
  SUITE=name     an rslub-vs-rslub experiment: max-empty, cpu-partial, fill,
                 cmpxchg, hardening, free-batch (docs/benchmarks.md);
                 real: real programs on the in-tree SLUB and on rslub
                 serving the kernel's caches (harness.benchreal);
                 classic: a second kernel, Linux 6.12, whose C SLUB is the
                 classic design rslub implements: one table of classic
                 (6.12), sheaves (7.3's SLUB) and rslub (7.3), the floor
                 measured on both kernels (icount only unless MODES is
                 given);
                 classic-real: SUITE=real's programs on both kernels:
                 classic, sheaves and rslub, each in-tree SLUB run twice
                 for its A/A noise (boots icount, model, model8; QUICK=1:
                 model);
                 classic-all: both, at 2, 8, 16 and 32 vCPUs on the cost
                 model, into one results directory with one bench.json and
                 glance.md (classic_all below)
  MODES          the boots, for every suite: any of icount, wall, model
                 (the 2- and 8-vCPU model boots), model2 (the 2-vCPU one
                 alone), model8, model16, model32, and counters (the real
                 suites); default "icount wall" (the real suites: see
                 harness.benchreal). KVM=1 runs one "cycles" boot on KVM.
                 REAL_MODES and QUICK_MODES, the real suites' old names,
                 still work (given_modes)
  BENCH_OUT      the results directory (default results/<timestamp>...)
  RSLUB_PARAMS   module parameters for rslub.ko, e.g. "harden=0 max_empty=0"
  SIZES BATCHES OPS ROUNDS CHURN_ROUNDS BENCH_CPUS ALLOCS WORKLOADS_ICOUNT
  WORKLOADS_WALL WALL_SIZES WALL_ROUNDS PAR16_CPUS PAR32_CPUS override the
                 defaults (synthetic_plan)
  BENCH_KDIR     a bench kernel already built (setup is skipped)
  CLASSIC_KDIR   SUITE=classic, classic-real: a classic (6.12) kernel built
  BENCH_BUILD    where the modules are built (two runs at once need two)
  ICOUNT_PLUGIN  1 (default): the icount boot under the plugin (model=off)
  RR_QUANTUM     the model boots' vCPU quantum on the patched QEMU of
                 `make qemu` (default 1000; 0: the distribution's QEMU);
                 set, the other boots run on that QEMU too
  MODEL_PROFILE, MODEL_ARGS, COSTMODEL_PLUGIN  the cost model's (harness.lib)
  VM_MEM (3G), VM_STALL (2400 s), VM_TIMEOUT (7200 s; the real suites
                 10800): harness.vm's, for every boot

A guest prints little until a boot's workloads end: it is judged stuck
after VM_STALL seconds without output; the console keeps only warnings and
errors (loglevel=4), so that printing cannot land inside a measurement.
"""

import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from harness import benchboot as bb
from harness import benchreal, lib

SUITES = ("max-empty", "cpu-partial", "fill", "cmpxchg", "hardening", "free-batch", "real",
          "classic", "classic-real", "classic-all")
SYNTHETIC_MODES = ("icount", "wall", "model", "model8", "model16", "model32", "cycles")
ALL_SIZES = "8 16 32 64 128 256 512 1024 2048 4096 8192 16384"
CMPXCHG_NOTE = ("cmpxchg: icount counts instructions and the lock prefix adds none, so the "
                "icount rows of the two builds should match; MODES=model prices the lock (the "
                "cost model's cx16_locked against cx16_unlocked), real hardware (KVM=1, or "
                "insmod on a test machine) measures it.")
# The hit paths the numbers rest on (docs/design.md, "Fast-path cost").
FASTPATH_BUDGET = ["rslub_cache_alloc=38", "rslub_cache_free=47",
                   "rslub_rust_served_alloc=41", "rslub_rust_served_free=47"]


@dataclass
class Synthetic:  # pylint: disable=too-many-instance-attributes
    """What a synthetic suite runs (synthetic_plan)."""
    suite: str
    modes: list
    sizes: str
    batches: str
    ops: str
    rounds: str
    churn_rounds: str
    bench_cpus: str
    allocs: str
    workloads_icount: str
    workloads_wall: str
    wall_sizes: str
    wall_rounds: str
    workloads_model8: str
    model8_sizes: str
    model8_ops: str
    model8_budget_kb: str
    par16_cpus: str
    par32_cpus: str
    variants: list = field(default_factory=list)
    loads: list = field(default_factory=list)
    variant_allocs: str = ""
    classic: bool = False
    note: str = ""
    notes: list = field(default_factory=list)


# A suite's workloads and allocators: (ALLOCS, WORKLOADS_ICOUNT,
# WORKLOADS_WALL, and VARIANTS, LOADS, VARIANT_ALLOCS, note when it has them).
SUITE_PLANS = {
    "max-empty": dict(allocs="rslub:max_empty=0,rslub:max_empty=1,rslub:max_empty=8",
                      workloads_icount="remote", workloads_wall="remote"),
    "cpu-partial": dict(allocs="rslub,rslub:cpu_partial=0", workloads_icount="remote repeat",
                        workloads_wall="remote parallel"),
    # Upstream's > against the fill_ge build variant's >= (Kbuild VARIANT=).
    "fill": dict(allocs="rslub", variants=["fill_ge"], workloads_icount="remote repeat",
                 workloads_wall="remote"),
    "cmpxchg": dict(allocs="rslub", variants=["locked_cmpxchg"], workloads_icount="pair repeat",
                    workloads_wall="pair parallel", note=CMPXCHG_NOTE),
    # The default (hardened) load, then rslub.ko harden=0: hardening is
    # fixed at a cache's creation, so it is a module parameter of the load.
    "hardening": dict(allocs="rslub,rslub:random_freelist=1", loads=["plain=harden=0"],
                      workloads_icount="pair repeat bulk remote", workloads_wall="pair"),
    # Classic frees (the default module: one slab update per free that
    # misses the CPU slab) against the free_batch build variant's batched
    # ones at two batch sizes, with the in-tree SLUB for scale.
    "free-batch": dict(allocs="slub,rslub", variants=["free_batch"],
                       variant_allocs="rslub:free_batch=8,rslub:free_batch=32",
                       workloads_icount="pair repeat fifo shuffle remote",
                       workloads_wall="remote parallel"),
}


def synthetic_plan(env):
    """The synthetic suite ENV asks for (SUITE empty or an experiment, or
    classic). Raises Refused for an unknown suite or mode."""
    def get(name, default):
        return env.get(name) or default

    quick = env.get("QUICK", "0") == "1"
    suite = env.get("SUITE", "")
    given, notes = bb.given_modes(env, quick)
    sizes = get("SIZES", ALL_SIZES)
    p = Synthetic(
        suite=suite, modes=given or bb.expand_modes("icount wall"),
        sizes=sizes, batches=get("BATCHES", "1 8 16 32 64 128"), ops=get("OPS", "10000"),
        rounds=get("ROUNDS", "5"), churn_rounds=get("CHURN_ROUNDS", "3"),
        bench_cpus=get("BENCH_CPUS", "4"),
        allocs=get("ALLOCS", "slub,rslub,served,kmalloc,kserved,floor"),
        workloads_icount=get("WORKLOADS_ICOUNT", "pair repeat fifo shuffle bulk remote churn"),
        workloads_wall=get("WORKLOADS_WALL", "parallel remote pair"),
        wall_sizes=get("WALL_SIZES", sizes),
        wall_rounds=get("WALL_ROUNDS", "7"),  # wall mode is noisy: more rounds
        workloads_model8=get("WORKLOADS_MODEL8", "parallel remote"),
        model8_sizes=get("MODEL8_SIZES", "64 256"), model8_ops=get("MODEL8_OPS", "2000"),
        model8_budget_kb=get("MODEL8_BUDGET_KB", "512"),
        # model16 and model32: parallel at these CPU counts, not at each.
        par16_cpus=get("PAR16_CPUS", "1,2,4,8,16"), par32_cpus=get("PAR32_CPUS", "1,2,4,8,16,32"),
        variants=env.get("VARIANTS", "").split(), loads=env.get("LOADS", "").split(),
        variant_allocs=env.get("VARIANT_ALLOCS", ""), notes=notes)
    if quick:
        p.sizes, p.batches, p.ops, p.rounds, p.churn_rounds = \
            "8 64 256 4096", "1 16 128", "3000", "3", "2"
        p.wall_sizes, p.wall_rounds, p.bench_cpus = "64 256", "3", "2"
    if suite in SUITE_PLANS:
        for k, v in SUITE_PLANS[suite].items():
            setattr(p, k, v)
    elif suite == "classic":
        # Two kernels: the 7.3 bench kernel runs slub (its sheaves), rslub
        # and the floor, the 6.12 classic kernel slub (the classic design)
        # and the floor, each in a boot of its own with the same workloads;
        # the floor's pair of rows calibrates the harness across the two.
        # icount is what compares across kernels (wall time under TCG is
        # too noisy for it). rslub runs twice in the 7.3 boot: as loaded by
        # default (hardened, build=default) and as rslub.ko harden=0
        # (build=plain), the like of both in-tree kernels, built without
        # SLAB_FREELIST_HARDENED.
        p.classic, p.loads = True, ["plain=harden=0"]
        p.modes = given or ["icount"]
    elif suite:
        raise bb.Refused(f"bench: unknown SUITE '{suite}' ({', '.join(SUITES)})", 2, stderr=True)
    if env.get("KVM", "0") == "1":
        p.modes = ["cycles"]
    for m in p.modes:
        if m not in SYNTHETIC_MODES:
            raise bb.Refused(f"bench: unknown mode '{m}' (icount, wall, model, model8, model16, "
                          "model32)", 2, stderr=True)
    return p


def rslub_builds(build, variants, loads):
    """The guest's RSLUB_BUILDS: the default build, each build variant's
    (BUILD-VARIANT), and the default build loaded again with a LOAD's
    parameters ("LABEL=PARAM,PARAM")."""
    builds = [f"default={build}/rslub.ko"] + [f"{v}={build}-{v}/rslub.ko" for v in variants]
    for load in loads:
        label, _, params = load.partition("=")
        builds.append(f"{label}={build}/rslub.ko?{params if params else load}")
    return " ".join(builds)


def without_kmalloc(allocs):
    """ALLOCS without its kmalloc rows (the model8-and-up boots)."""
    return ",".join(a for a in allocs.split(",") if a not in ("kmalloc", "kserved"))


@dataclass
class Kernel:
    """The kernel a boot runs and what it measures there: TAG prefixes its
    logs (classic- for the classic kernel's)."""
    kdir: str
    build: str
    allocs: str
    builds: str
    tag: str = ""


@dataclass
class Shape:  # pylint: disable=too-many-instance-attributes
    """One boot of a synthetic suite: its vCPUs, what the guest runs
    (WORKLOADS over SIZES, ROUNDS rounds of OPS operations of ALLOCS, EXTRA
    guest variables), its nodes (NUMA, "" for one) and its QEMU (OPTS: "",
    "icount" the clock alone, "plugin" the icount count under the plugin,
    "model" a model boot)."""
    cpus: int
    workloads: str
    sizes: str
    rounds: str
    allocs: str
    ops: str
    extra: str = ""
    numa: str = ""
    opts: str = ""


def synthetic_shape(p, mode, allocs, icount_plugin):
    """The Shape of a boot of MODE for plan P, measuring ALLOCS."""
    if mode == "icount":
        # Instructions as the CPU retires them: the plugin counts each rep
        # string instruction once in the bench module's marked windows
        # (model=off: no caches, no prices; rsbench parse scales the
        # clock's figures by its counts).
        if icount_plugin:
            return Shape(2, p.workloads_icount, p.sizes, p.rounds, allocs, p.ops, "MARKS=1",
                         opts="plugin")
        return Shape(2, p.workloads_icount, p.sizes, p.rounds, allocs, p.ops, opts="icount")
    if mode == "wall":
        return Shape(int(p.bench_cpus), p.workloads_wall, p.wall_sizes, p.wall_rounds, allocs,
                     p.ops)
    if mode == "cycles":
        return Shape(int(p.bench_cpus), f"{p.workloads_icount} parallel", p.sizes,
                     p.wall_rounds, allocs, p.ops)
    if mode == "model":
        # The icount boot's instructions, the plugin's events besides.
        return Shape(2, p.workloads_icount, p.sizes, p.rounds, allocs, p.ops, opts="model")
    # model8: 8 vCPUs over 2 nodes (4 a node; node 1's memory from 1.5
    # GiB), parallel on 1 to 8 CPUs, remote from CPU 0 to CPU 4 across the
    # nodes; model16, model32: parallel at PAR16_CPUS / PAR32_CPUS CPUs,
    # remote from CPU 0 to the first CPU of the last node. Smaller (all
    # the vCPUs run in one host thread), without the kmalloc rows.
    n, nodes = bb.mode_shape(mode, 0)
    extra = f"REMOTE_CPU={n - n // nodes} BUDGET_KB={p.model8_budget_kb}"
    if mode != "model8":
        extra += f" PAR_CPUS={p.par32_cpus if n == 32 else p.par16_cpus}"
    return Shape(n, p.workloads_model8, p.model8_sizes, p.rounds, without_kmalloc(allocs),
                 p.model8_ops, extra, str(nodes), "model")


def synthetic_cmd(p, k, mode, s, rslub_params):
    """The guest command of a boot of MODE, Shape S, on Kernel K
    (scripts/guest/bench.sh)."""
    return (f"cd {k.build} && MODE={mode} WORKLOADS='{s.workloads}' SIZES='{s.sizes}' "
            f"BATCHES='{p.batches}' ALLOCS='{s.allocs}' OPS={s.ops} ROUNDS={s.rounds} "
            f"CHURN_ROUNDS={p.churn_rounds} {s.extra} MAX_CPUS={s.cpus} "
            f"RSLUB_PARAMS='{rslub_params}' RSLUB_BUILDS='{k.builds}' "
            f"VARIANT_ALLOCS='{p.variant_allocs}' scripts/guest/bench.sh")


def boot_opts(kind, mode, kdir, counts, env):
    """(QEMU options, QEMU) of a boot whose Shape's opts is KIND."""
    if kind == "icount":
        return "-icount shift=0,sleep=off", ""
    if kind == "plugin":
        return bb.icount_opts(kdir, counts, True)
    if kind == "model":
        return bb.model_opts(mode, kdir, counts, env.get("VM_MEM") or "3G")
    return "", ""


def vm_env(env, s, opts, qemu, console, timeout):
    """harness.vm's settings for a boot of Shape S."""
    e = {"VM_QEMU": qemu or os.environ.get("VM_QEMU", ""), "VM_CPUS": str(s.cpus),
         "VM_MEM": env.get("VM_MEM") or "3G", "VM_QEMU_OPTS": opts,
         "VM_STALL": env.get("VM_STALL") or "2400", "VM_TIMEOUT": env.get("VM_TIMEOUT") or timeout,
         "VM_APPEND": "loglevel=4", "VM_CONSOLE": console}
    if s.numa:
        e["VM_NUMA"] = s.numa
    return e


def run_synthetic(p, env):
    """Builds what a synthetic suite needs, boots it, and writes its results."""
    bkdir = bb.kernel_dir(env, "bench", "BENCH_KDIR")
    # The modules are built for the bench kernel (with the counters
    # compiled out) in a copy of the tree, so that the test build in the
    # checkout stays as it is.
    build = bb.build_dir(env)
    held = bb.lock_build(build)
    bb.copy_tree(build)
    print(f"bench: building modules for {bkdir} (STATS=0) in {build}", flush=True)
    bb.sh(["make", "-s", "-C", build, f"KDIR={bkdir}", "STATS=0", "modules"])
    # Build variants (a suite's VARIANTS): rslub.ko built again with
    # Kbuild's VARIANT=, each in a directory of its own; the guest loads the
    # default build, then each variant in turn (rmmod, insmod), in one boot.
    for v in p.variants:
        bb.copy_tree(f"{build}-{v}")
        print(f"bench: building the {v} variant of rslub.ko in {build}-{v}", flush=True)
        bb.sh(["make", "-s", "-C", f"{build}-{v}", f"KDIR={bkdir}", "STATS=0", f"VARIANT={v}",
               "modules"])
    builds = rslub_builds(build, p.variants, p.loads)
    # A regression of the hit paths is said here, before the numbers show it.
    shape = subprocess.run([sys.executable, "scripts/fastpath-shape.py", f"{build}/rslub.ko"] +
                           FASTPATH_BUDGET, stdout=subprocess.PIPE, text=True, check=False)
    for line in shape.stdout.splitlines():
        print(f"bench: {line}", flush=True)
    # The classic kernel and its build of the bench module: the C module
    # alone (M=bench), without rslub (BENCH_NO_RSLUB=1: there is no
    # rslub.ko on 6.12), with the kernel's own compiler.
    ckdir = cbuild = ""
    if p.classic:
        ckdir = bb.kernel_dir(env, "classic", "CLASSIC_KDIR")
        cbuild = f"{build}-classic"
        bb.copy_tree(cbuild)
        print(f"bench: building the bench module without rslub for {ckdir} in {cbuild}",
              flush=True)
        bb.sh(["make", "-s", "-C", ckdir, f"M={cbuild}/bench", "BENCH_NO_RSLUB=1"] +
              bb.clang_llvm(ckdir) + ["modules"])
    rsbench = bb.build_rsbench()
    if any(m in bb.MODEL_MODES for m in p.modes):
        print("bench: building the cost model's plugin (tools/costmodel)", flush=True)
        bb.sh(["make", "-s", "costmodel"])
    elif "icount" in p.modes and (env.get("ICOUNT_PLUGIN") or "1") == "1":
        print("bench: building the cost model's plugin (tools/costmodel; the icount boot's "
              "count)", flush=True)
        bb.sh(["make", "-s", "costmodel"])
    bb.need_quantum_qemu(p.modes)
    out = bb.out_dir(env, f"-{p.suite}" if p.suite else "")
    runner = bb.Runner()

    icount_plugin = (env.get("ICOUNT_PLUGIN") or "1") == "1"

    def boot(k, mode):
        s = synthetic_shape(p, mode, k.allocs, icount_plugin)
        opts, qemu = boot_opts(s.opts, mode, k.kdir, f"{out}/counts-{k.tag}{mode}.txt", env)
        log = f"{out}/vm-{k.tag}{mode}.log"
        where = f" ({k.tag}{os.path.basename(k.kdir)})" if k.tag else ""
        runner.say(f"bench: [{runner.seconds()}s] {mode} boot{where}, {s.cpus} vCPUs: "
                   f"{s.workloads} (log: {log})")
        g = bb.Boot(k.kdir, synthetic_cmd(p, k, mode, s, env.get("RSLUB_PARAMS", "")), log,
                    vm_env(env, s, opts, qemu, f"{out}/console-{k.tag}{mode}.log", "7200"),
                    r"^bench: FAILED|^vm:|rslub_bench: .*(FAILED|failed|cannot)")
        if not runner.boot(g):
            for line in runner.failed_lines(g):
                runner.say(line)
            bb.fail(f"the {mode} run did not complete (see {log})")

    # SUITE=classic: the classic kernel's boots first (their logs
    # vm-classic-*, parsed first, so that the table's first floor is
    # 6.12's), then the bench kernel's. Each kernel's allocators get their
    # table names at parse time: 6.12's slub is "classic", 7.3's "sheaves",
    # the floors "floor-<major.minor>".
    logs, renames, counts = [], [], []
    if p.classic:
        ck = Kernel(ckdir, cbuild, "slub,floor", "none", "classic-")
        bb.schedule(p.modes, lambda m: boot(ck, m), runner)
        crel, brel = bb.kernel_release(ckdir), bb.kernel_release(bkdir)
        for m in p.modes:
            logs.append(f"{out}/vm-classic-{m}.log")
            counts += counts_arg(out, f"classic-{m}")
            renames += ["--rename", f"{out}/vm-classic-{m}.log:slub=classic",
                        "--rename", f"{out}/vm-classic-{m}.log:floor=floor-{crel}",
                        "--rename", f"{out}/vm-{m}.log:slub=sheaves",
                        "--rename", f"{out}/vm-{m}.log:floor=floor-{brel}"]
    bk = Kernel(bkdir, build, p.allocs, builds)
    bb.schedule(p.modes, lambda m: boot(bk, m), runner)
    held.close()

    for m in p.modes:
        logs.append(f"{out}/vm-{m}.log")
        counts += counts_arg(out, m)
    cpus_meta, nodes_meta = bb.shapes_meta(p.modes, p.bench_cpus)
    kernel_meta = os.path.basename(bkdir) + (f" + {os.path.basename(ckdir)}" if p.classic else "")
    meta = {"kernel": kernel_meta, "qemu": bb.qemu_meta(p.modes), "mode": ",".join(p.modes),
            "cpus": cpus_meta, "nodes": nodes_meta, "date": bb.utc_now(), "git": bb.git_rev(),
            "suite": p.suite or "default", "quick": env.get("QUICK") or "0",
            "kvm": env.get("KVM") or "0", "rslub_params": env.get("RSLUB_PARAMS", ""),
            "quantum": lib.model_quantum()}
    if p.note:
        meta["note"] = p.note
    args = renames + [a for k, v in meta.items() for a in ("--meta", f"{k}={v}")] + counts + \
        ["--profile", lib.model_profile()] + logs
    bb.finish(rsbench, out, args, plot_quiet=False)
    if p.note:
        print(f"bench: note: {p.note}")
    print(f"bench: [{runner.seconds()}s] done: {out} (bench.json, table.txt, report.md, *.png)")


def counts_arg(out, name):
    """rsbench parse's --counts for the boot NAME, when the plugin wrote them."""
    c = f"{out}/counts-{name}.txt"
    return ["--counts", f"{out}/vm-{name}.log={c}"] if os.path.isfile(c) else []


UPSTREAM = "perf-fork perf-execve mmap2 brk1 xcpu-unix"


def classic_all_plan(env):
    """SUITE=classic-all: (modes, rounds, the two steps' environments).

    Upstream's question in one command: the classic design (Linux 6.12's C
    SLUB: CPU slabs and partial lists) against sheaves (7.3's SLUB), with
    rslub on 7.3 beside them, on the cost model at 2, 8, 16 and 32 vCPUs
    (MODES: model model8 model16 model32): 1. the synthetic rows
    (SUITE=classic on those boots) into DIR/synthetic, with their own sizes
    and rounds; 2. the real programs (SUITE=classic-real on the same boots,
    each kernel's in-tree SLUB twice for its A/A noise, ROUNDS (5) rounds a
    side) into DIR/real: those of upstream's reports (perf bench syscall
    fork and execve, will-it-scale-style mmap2 and brk1, xcpu-unix for
    ublk's cross-CPU frees), hackbench (processes and threads, pipes and
    sockets) and iperf3 TCP at 2 and 8 vCPUs (WORKLOADS), and at 16 and 32
    the upstream programs and hackbench over pipes (WORKLOADS_model16,
    WORKLOADS_model32: the plugin runs every vCPU on one host thread, a
    boot's time grows with its work). Expect hours on a 2-core host;
    QUICK=1 (2 rounds, the upstream programs alone, 2 and 8 vCPUs) is the
    test of the command.
    """
    quick = env.get("QUICK", "0") == "1"
    given, notes = bb.given_modes(env, quick)
    default = "model model8" if quick else "model model8 model16 model32"
    modes = given or bb.expand_modes(default)
    rounds = env.get("ROUNDS") or ("2" if quick else "5")
    workloads = env.get("WORKLOADS") or (UPSTREAM if quick else
                                         f"{UPSTREAM} hb-proc-pipe hb-proc-sock hb-thr-pipe "
                                         "hb-thr-sock iperf3-tcp")
    wl16 = env.get("WORKLOADS_model16") or f"{UPSTREAM} hb-proc-pipe"
    wl32 = env.get("WORKLOADS_model32") or wl16
    base = {k: v for k, v in env.items() if k not in ("REAL_MODES", "QUICK_MODES")}
    base.update({"WORKLOADS_model16": wl16, "WORKLOADS_model32": wl32,
                 "MODES": bb.modes_value(modes)})
    synthetic = {k: v for k, v in base.items() if k not in ("ROUNDS", "WORKLOADS")}
    synthetic["SUITE"] = "classic"
    real = {k: v for k, v in base.items() if k != "QUICK"}
    real.update({"SUITE": "classic-real", "ROUNDS": rounds, "WORKLOADS": workloads})
    return modes, rounds, synthetic, real, notes


def run_classic_all(env):
    """SUITE=classic-all (classic_all_plan): both suites, then DIR/bench.json
    (rsbench merge), its table.txt and plots, and DIR/glance.md: the "At a
    glance" and "Beside upstream's figures" rows of docs/benchmarks.md."""
    modes, rounds, synthetic, real, notes = classic_all_plan(env)
    for line in notes:
        print(line, flush=True)
    out = bb.out_dir(env, "-classic-all")
    clock = lib.Clock("bench: classic-all")
    m = " ".join(modes)
    clock.step(f"1/3 the synthetic rows on {m} (into {out}/synthetic)")
    scripts = {"PYTHONPATH": str(lib.ROOT / "scripts")}
    bb.sh([sys.executable, "-m", "harness.bench"],
          env={**synthetic, **scripts, "BENCH_OUT": f"{out}/synthetic"})
    clock.step(f"2/3 the real programs on {m}, {rounds} rounds (into {out}/real)")
    bb.sh([sys.executable, "-m", "harness.bench"],
          env={**real, **scripts, "BENCH_OUT": f"{out}/real"})
    clock.step("3/3 one bench.json, its table, plots and glance.md")
    rsbench = str(lib.ROOT / "tools/rsbench/target/release/rsbench")
    bb.sh([rsbench, "merge", "-o", f"{out}/bench.json", f"{out}/synthetic", f"{out}/real"])
    with open(f"{out}/table.txt", "w", encoding="utf-8") as f:
        bb.sh([rsbench, "table", out], stdout=f)
    bb.sh([rsbench, "plot", out], stdout=subprocess.DEVNULL)
    glance = subprocess.run([rsbench, "glance", out], stdout=subprocess.PIPE, text=True,
                            check=False)
    sys.stdout.write(glance.stdout)
    Path(f"{out}/glance.md").write_text(glance.stdout, encoding="utf-8")
    if glance.returncode:
        raise bb.Stop(glance.returncode)
    clock.step(f"done: {out} (bench.json, table.txt, glance.md, *.png; synthetic/ and real/ "
               "as their suites left them)")


def main(env=None):
    env = dict(os.environ if env is None else env)
    os.chdir(lib.ROOT)
    os.environ["PATH"] = f"{Path.home()}/.cargo/bin:{os.environ.get('PATH', '')}"
    # The boots' guests are this run's children: a SIGTERM (make stopped,
    # a timeout) stops them too, as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        # RR_QUANTUM: every boot runs on the patched QEMU of `make qemu`
        # (it is not built here: about 6 min), the model boots at that
        # quantum.
        if env.get("RR_QUANTUM", "0") not in ("", "0"):
            qemu = lib.quantum_qemu()
            if qemu is None:
                return 1
            os.environ["VM_QEMU"] = qemu
        suite = env.get("SUITE", "")
        if suite == "classic-all":
            run_classic_all(env)
        elif suite in ("real", "classic-real"):
            p = benchreal.plan(env, suite == "classic-real")
            for line in p.notes:
                print(line, flush=True)
            benchreal.run(p, env)
        else:
            p = synthetic_plan(env)
            for line in p.notes:
                print(line, flush=True)
            run_synthetic(p, env)
    except bb.Refused as e:
        print(e.line, file=sys.stderr if e.stderr else sys.stdout, flush=True)
        return e.status
    except bb.Stop as e:
        return e.status
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
