# SPDX-License-Identifier: GPL-2.0
"""make bench SUITE=real and SUITE=classic-real: the real-workload A/B.

The in-tree SLUB against rslub serving the kernel's own caches (every
cache it can, the fork, exec and mmap ones too: SERVE in
scripts/guest/real-lib.sh) under hackbench (processes and threads, pipes
and sockets), iperf3 TCP and UDP over the guest's loopback (server and
client on different CPUs), stress-ng --sock, and the programs of
upstream's sheaves reports: perf bench syscall fork and execve,
will-it-scale-style mmap1, mmap2 and brk1 loops and a cross-CPU unix
socket stream (tools/realprogs, built here), in the bench kernel flavor.
The boots (MODES; harness.bench reads it):

  icount   2 vCPUs, -icount shift=0,sleep=off: each workload alternately on
           each side (in-tree, rslub, and rslub again: the A/A noise
           floor), ROUNDS rounds each after a warm-up; guest time is an
           instruction count (the headline: minstr, and slab_kb), under the
           cost model's plugin with model=off, each run between marks, so
           that rsbench counts a rep string instruction once
           (ICOUNT_PLUGIN=0: the clock alone)
  wall     REAL_CPUS (4) vCPUs, multi-threaded TCG: the same in wall time
           (ms), for contention
  model    the icount boot under the cost model's plugin: each run's
           modeled cycles and events besides minstr, each program at a
           fifth of its size (MODEL_SIZES below); MODES=model is this boot
           and model8, run at the same time (each takes one host core),
           MODES=model2 this one alone
  model8   the same on 8 vCPUs over 2 NUMA nodes (4 a node): transfers
           across nodes, more CPUs freeing each other's objects; the mmap
           programs run a task a CPU, perf bench 4 copies at once
  model16, model32  the same on 16 vCPUs over 2 nodes and 32 over 4 (8 a
           node), the programs shorter (MODEL16_SIZES, MODEL32_SIZES):
           MODES=model16 alone is a scale run (perf bench fork and execve,
           mmap2, brk1 and hackbench, 2 rounds, no A/A side but in an
           experiment; WORKLOADS, ROUNDS and AA say otherwise)
  counters REAL_CPUS vCPUs, wall clock, a counters build of rslub.ko (the
           bench build compiles them out): rslub's counters over one run of
           each workload, with the locked and unlocked cmpxchg redos (the
           rows rslabinfo -r shows as "Cmpxchg_double Looping")

Default boots: icount wall counters; QUICK=1: icount counters, 2 rounds.
Results go to results/<timestamp>-real/ (vm-<mode>.log, console-<mode>.log,
counts-<mode>.txt, bench.json, table.txt, PNG plots, report.md).

SUITE=classic-real: the same programs on two kernels, as upstream weighed
sheaves against the design before them. For each mode, first a boot of the
classic kernel (Linux 6.12's C SLUB: CPU slabs and partial lists;
scripts/setup --flavor classic, or CLASSIC_KDIR) with sides slub and
slub-aa (the in-tree SLUB twice: its A/A noise; rslub.ko is not loaded
there), logs vm-classic-<mode>.log; then the bench kernel's (7.3's
sheaves) with slub, slub-aa and rslub serving. The table names 6.12's SLUB
classic, 7.3's sheaves (their second runs classic-aa, sheaves-aa), compares
all with classic and calls sheaves/classic only outside the larger of the
two A/A noises. Boots icount model model8 by default, the 2-vCPU model
boot alone with QUICK=1 (2 rounds); counters boots run on 7.3 only; AA=1
adds rslub's own A/A. Results go to results/<timestamp>-classic-real/.

EXPERIMENT=name runs a seed's experiment on the same programs, rslub
against itself (the seeds' threads judged their changes on hackbench and
slabinfo -r; here the counters boot gives the redo table per busy cache):
  cpu-partial  rslub, and rslub with cpu_partial=0, in one boot
  max-empty    rslub (max_empty chosen by size), and 0 and 64, in one boot
  fill         the fill_ge build (>= cpu_partial/2) against the default
  cmpxchg      the locked_cmpxchg build against the default
  free-batch   the free_batch build with free_batch=8 and 32 against the
               default
EXPERIMENT takes several names at once ("cpu-partial fill"), or all (the
five): the tunables' sides share the default build's boots, each build
variant has its own. The tunables are written to every served cache's
sysfs directory once serving started (scripts/guest/real.sh, SIDES). A
build variant is a different rslub.ko, and rmmod of one needs every object
it served back, which the caches of long-lived kernel objects (inodes,
dentries, tasks) never give with SERVE='*': each build has boots of its
own (logs vm-<mode>-<build>.log), each with the in-tree side, named
slub-<build> in the results: the same allocator as the default boots'
slub, so the two tell how far two boots differ. The A/A side (rslub again)
runs in the default build's boots; rsbench table's experiment section
calls a side against rslub only outside the A/A noise (and for a build
variant, outside the boots' difference too). With hackbench's workloads
named hb-...-gN, several group counts:
  make bench SUITE=real EXPERIMENT=all MODES="model8 model16" \\
    WORKLOADS="hb-proc-pipe-g2 hb-proc-sock-g2 hb-proc-sock-g8" ROUNDS=3

Environment: MODES, ROUNDS (5), REAL_CPUS (4), WORKLOADS
  (scripts/guest/real-lib.sh's names), WORKLOADS_<mode> (a mode's own
  programs, e.g. WORKLOADS_model32), RSLUB_PARAMS, SERVE ('*', the
  default: every cache rslub can serve), the workload sizes (GUEST_VARS
  below), EXPERIMENT, BENCH_KDIR (a built bench kernel: no setup),
  CLASSIC_KDIR (a built classic kernel: no setup), BENCH_BUILD, BENCH_OUT,
  QUICK=1, ICOUNT_PLUGIN (1), AA (1 but with SUITE=classic-real: the A/A
  side, rslub served twice, about half as much time again), NO_SERVE_OK=1
  (a run without rslub's serving interface passes with the in-tree side
  alone: for testing the harness).
"""

import glob
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from harness import benchboot as bb
from harness import lib

REAL_MODES = ("icount", "wall", "counters", "model", "model8", "model16", "model32")
EXPERIMENTS = ("cpu-partial", "max-empty", "fill", "cmpxchg", "free-batch")
# The programs of a scale run (16 and 32 vCPUs only: about 30 to 60 min a
# mode on a 2-core host): figures, not verdicts.
SCALE_WORKLOADS = "perf-fork perf-execve mmap2 brk1 hb-proc-pipe"
# What the guest script passes on to the workloads, when set.
GUEST_VARS = ("WORKLOADS SERVE HB_GROUPS HB_LOOPS IPERF_TCP_BYTES IPERF_TCP_LEN IPERF_UDP_BYTES "
              "IPERF_UDP_LEN NG_WORKERS NG_OPS PIN_SERVER PIN_CLIENT WARMUP COUNTER_ROUNDS "
              "PERF_FORK_LOOPS PERF_EXECVE_LOOPS PERF_COPIES MMAP_PROCS MMAP_ITERS MMAP_MIB "
              "MMAP_DIR XCPU_MSGS XCPU_BYTES XCPU_FROM XCPU_TO XCPU_SNDBUF").split()
# The model's boots run a fifth of each program (a size set in the
# environment wins): the plugin runs 4-8 times slower than icount. On 8
# vCPUs the mmap programs run one task a CPU and perf bench 4 copies at
# once; on 16 and 32 a task a CPU, the loops shorter again (the plugin
# runs every vCPU on one host thread: a boot's time grows with its work).
MODEL_SIZES = ("HB_LOOPS=30 IPERF_TCP_BYTES=12M IPERF_UDP_BYTES=3M NG_OPS=12 PERF_FORK_LOOPS=30 "
               "PERF_EXECVE_LOOPS=40 MMAP_ITERS=4000 XCPU_MSGS=16000")
MODE_SIZES = {
    "model8": "MMAP_PROCS=8 PERF_COPIES=4 PERF_FORK_LOOPS=15 PERF_EXECVE_LOOPS=20",
    "model16": "MMAP_PROCS=16 PERF_COPIES=8 PERF_FORK_LOOPS=8 PERF_EXECVE_LOOPS=10 "
               "MMAP_ITERS=2000 HB_GROUPS=8 HB_LOOPS=15",
    "model32": "MMAP_PROCS=32 PERF_COPIES=16 PERF_FORK_LOOPS=4 PERF_EXECVE_LOOPS=5 "
               "MMAP_ITERS=1000 HB_GROUPS=16 HB_LOOPS=8",
}
# The in-tree SLUB run twice on the classic kernel (rslub beside them on 7.3).
CLASSIC_SIDES = "slub slub-aa"


@dataclass
class Real:  # pylint: disable=too-many-instance-attributes
    """What a real suite runs (plan)."""
    suite: str
    classic: bool
    modes: list
    rounds: str
    workloads: str  # "": the guest's default
    sides: str
    experiment: str  # the names, "all" spelled out
    variant_builds: list = field(default_factory=list)
    build_label: str = ""
    real_cpus: str = "4"
    notes: list = field(default_factory=list)


def plan(env, classic):
    """The real suite ENV asks for (CLASSIC: SUITE=classic-real).

    Raises bb.Refused for an unknown experiment or mode, or an experiment
    on two kernels.
    """
    quick = env.get("QUICK", "0") == "1"
    given, notes = bb.given_modes(env, quick)
    if given:
        modes = given
    elif classic:
        # The comparison of upstream's reports: the 2-vCPU boots and 8
        # vCPUs over 2 nodes, instructions and the cost model.
        modes = ["model"] if quick else ["icount", "model", "model8"]
    else:
        modes = ["icount", "counters"] if quick else ["icount", "wall", "counters"]
    rounds = env.get("ROUNDS") or "5"
    workloads = env.get("WORKLOADS", "")
    scale = all(m in ("model16", "model32") for m in modes)
    if scale:
        workloads = workloads or SCALE_WORKLOADS
        rounds = env.get("ROUNDS") or "2"
    if quick:
        rounds = "2"
    # Experiments: the tunables' sides join the default build's boots;
    # each build variant has boots of its own, with its sides.
    experiment = env.get("EXPERIMENT", "")
    if experiment == "all":
        experiment = " ".join(EXPERIMENTS)
    sides, variants = "slub rslub", []
    for e in experiment.split():
        if e == "cpu-partial":
            sides += " rslub:cpu_partial=0"
        elif e == "max-empty":
            sides += " rslub:max_empty=0 rslub:max_empty=64"
        elif e in ("fill", "cmpxchg", "free-batch"):
            variants.append({"fill": "fill_ge", "cmpxchg": "locked_cmpxchg",
                             "free-batch": "free_batch"}[e])
        else:
            raise bb.Refused(f"bench: FAILED: unknown EXPERIMENT '{e}' "
                             f"({', '.join(EXPERIMENTS)}, or all)", 1)
    if classic:
        if experiment:
            raise bb.Refused(f"bench: FAILED: EXPERIMENT={experiment} is for SUITE=real, "
                             "not SUITE=classic-real", 1)
        sides = "slub slub-aa rslub"
    for m in modes:
        if m not in REAL_MODES:
            raise bb.Refused(f"bench: FAILED: unknown mode '{m}' "
                             f"({', '.join(REAL_MODES)})", 1)
    # The A/A side (AA=1, the default on one kernel but in a scale run
    # without an experiment): rslub served a second time in each round (in
    # an experiment, in the default build's boots), so that the table calls
    # a verdict only where two allocators, or an experiment's side and
    # rslub, differ by more than two runs of rslub do.
    aa = env.get("AA") or ("0" if (scale and not env.get("EXPERIMENT")) or classic else "1")
    if aa == "1":
        sides += " aa"
    return Real(suite="classic-real" if classic else "real", classic=classic, modes=modes,
                rounds=rounds, workloads=workloads, sides=sides,
                experiment=experiment, variant_builds=variants,
                build_label="default" if variants else "",
                real_cpus=env.get("REAL_CPUS") or "4", notes=notes)


def variant_sides(build):
    """The sides of a build variant's boots."""
    return "slub rslub:free_batch=8 rslub:free_batch=32" if build == "free_batch" else \
        "slub rslub"


def guest_env(p, env):
    """What the guest script passes on to the workloads: ROUNDS,
    RSLUB_PARAMS, and each of GUEST_VARS that is set (WORKLOADS: the plan's)."""
    words = [f"ROUNDS={p.rounds}", f"RSLUB_PARAMS='{env.get('RSLUB_PARAMS', '')}'"]
    for v in GUEST_VARS:
        value = p.workloads if v == "WORKLOADS" and p.workloads else env.get(v)
        if value is not None:
            words.append(f"{v}='{value}'")
    return " ".join(words)


def model_scale(mode, env):
    """The model sizes of a boot of MODE that the environment leaves unset
    (the mode's own first)."""
    scale, names = [], set()
    for v in f"{MODE_SIZES.get(mode, '')} {MODEL_SIZES}".split():
        n = v.split("=", 1)[0]
        if env.get(n) or n in names:
            continue
        names.add(n)
        scale.append(v)
    return scale


def guest_cmd(p, env, mode, run_dir, build=None, sides=None, marks="0"):
    """The guest command of a boot of MODE from RUN_DIR's build, BUILD's
    (a build variant's) sides or SIDES (scripts/guest/real.sh). A mode's
    own programs (WORKLOADS_<mode>) come after WORKLOADS, and win."""
    gmode = "model" if mode.startswith("model") else mode
    label = p.build_label
    sides = sides or p.sides
    if build:
        sides, label = variant_sides(build), build
    words = [f"cd {run_dir} &&", f"MODE={gmode}", f"MARKS={marks}", f"SIDES='{sides}'"]
    if gmode == "model":
        words += model_scale(mode, env)
    words += [f"BUILD_LABEL='{label}'", guest_env(p, env)]
    if env.get(f"WORKLOADS_{mode}"):
        words.append(f"WORKLOADS='{env[f'WORKLOADS_{mode}']}'")
    return " ".join(words + ["scripts/guest/real.sh"])


def log_name(mode, tag="", build=None):
    """A boot's name in its files: vm-NAME.log, counts-NAME.txt."""
    return f"{tag}{mode}{f'-{build}' if build else ''}"


def check_host_programs(workloads):
    """The guest runs the host's programs: they must be there."""
    if not all(shutil.which(c) for c in ("hackbench", "iperf3", "stress-ng")):
        bb.fail("hackbench, iperf3 or stress-ng missing on the host (the guest uses the "
                "host's): run scripts/setup")
    if "perf-" in (workloads or "perf-"):
        out = subprocess.run(["perf", "bench", "syscall"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, check=False).stdout
        if not re.search(r"(?<!\w)execve(?!\w)", out):
            version = subprocess.run(["perf", "--version"], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     check=False).stdout.strip()
            bb.fail(f"the host's perf has no 'perf bench syscall fork/execve' ({version}): "
                    "run scripts/setup")


def parse_args(p, out):
    """rsbench parse's logs, --counts and --rename arguments, and the modes
    that ran (a counters boot may have been skipped)."""
    logs, counts, renames, ran = [], [], [], []
    for mode in p.modes:
        classic_log = f"{out}/vm-classic-{mode}.log" if p.classic else ""
        variant_logs = [f"{out}/vm-{mode}-{v}.log" for v in p.variant_builds]
        for f in ([classic_log] if classic_log else []) + [f"{out}/vm-{mode}.log"] + variant_logs:
            if not os.path.isfile(f):
                continue
            logs.append(f)
            c = f"{out}/counts-{f[len(out) + 4:-4]}.txt"
            if os.path.isfile(c):
                counts += ["--counts", f"{f}={c}"]
            # A build variant's boot: its in-tree SLUB apart (slub-BUILD),
            # the same allocator as the default boot's, so that the two say
            # how much two boots differ (the experiment table's boot floor).
            if f.startswith(f"{out}/vm-{mode}-"):
                renames += ["--rename", f"{f}:slub=slub-{f[len(out) + len(mode) + 5:-4]}"]
            # Two kernels: each in-tree SLUB by its design's name.
            if p.classic:
                k = "classic" if f == classic_log else "sheaves"
                renames += ["--rename", f"{f}:slub={k}", "--rename", f"{f}:slub-aa={k}-aa"]
        if os.path.isfile(f"{out}/vm-{mode}.log"):
            ran.append(mode)
    return logs, counts, renames, ran


def first_line(logs, prefix):
    """The first line of LOGS (in order) that starts with PREFIX, without
    PREFIX and the space after it; None when there is none."""
    for f in logs:
        for line in Path(f).read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(prefix):
                return line[len(prefix):].removeprefix(" ")
    return None


def run(p, env):  # pylint: disable=too-many-locals,too-many-statements
    """Builds what a real suite needs, boots it, and writes its results."""
    bkdir = bb.kernel_dir(env, "bench", "BENCH_KDIR")
    ckdir = bb.kernel_dir(env, "classic", "CLASSIC_KDIR") if p.classic else ""
    check_host_programs(p.workloads)
    # First: the guest runs mark from the copies below.
    icount_plugin = (env.get("ICOUNT_PLUGIN") or "1") == "1"
    if "icount" in p.modes or any(m in bb.MODEL_MODES for m in p.modes):
        print("bench: building the cost model's plugin and mark (tools/costmodel)", flush=True)
        bb.sh(["make", "-s", "costmodel"])
    # Two module builds in copies of the tree: the bench build (counters
    # compiled out, what is timed) and a counters build (the counters
    # boot). The classic kernel's boots run in the bench build's copy too:
    # they need its programs (tools/realprogs, mark), not its rslub.ko.
    build = bb.build_dir(env)
    held = bb.lock_build(build)

    def make(where, stats, variant=None):
        bb.copy_tree(where)
        v = f", VARIANT={variant}" if variant else ""
        print(f"bench: building modules for {bkdir} (STATS={stats}{v}) in {where}", flush=True)
        bb.sh(["make", "-s", "-C", where, f"KDIR={bkdir}", f"STATS={stats}"] +
              ([f"VARIANT={variant}"] if variant else []) + ["modules"])
        bb.sh(["make", "-s", "-C", f"{where}/tools/realprogs"])

    make(build, 0)
    if "counters" in p.modes:
        make(f"{build}-stats", 1)
    for v in p.variant_builds:
        make(f"{build}-{v}", 0, v)
        if "counters" in p.modes:
            make(f"{build}-{v}-stats", 1, v)
    rsbench = bb.build_rsbench()
    bb.need_quantum_qemu(p.modes)
    tag = f"-{p.suite}" + (f"-{p.experiment.replace(' ', '+')}" if p.experiment else "")
    out = bb.out_dir(env, tag)
    runner = bb.Runner()

    def boot(mode, cpus, opts_qemu, run_dir, build_name, kdir, pre, sides, marks="0",
             numa=""):
        name = log_name(mode, pre, build_name)
        log = f"{out}/vm-{name}.log"
        bpart = f"-{build_name}" if build_name else ""
        of = f" of {os.path.basename(kdir)}" if pre else ""
        runner.say(f"bench: [{runner.seconds()}s] {mode} boot{bpart}{of}, {cpus} vCPUs "
                   f"(log: {log})")
        opts, qemu = opts_qemu
        vm = {"VM_QEMU": qemu or os.environ.get("VM_QEMU", ""), "VM_CPUS": str(cpus),
              "VM_MEM": env.get("VM_MEM") or "3G", "VM_QEMU_OPTS": opts,
              "VM_STALL": env.get("VM_STALL") or "2400",
              "VM_TIMEOUT": env.get("VM_TIMEOUT") or "10800", "VM_APPEND": "loglevel=4",
              "VM_CONSOLE": f"{out}/console-{name}.log"}
        if numa:
            vm["VM_NUMA"] = numa
        g = bb.Boot(kdir, guest_cmd(p, env, mode, run_dir, build_name, sides, marks),
                    log, vm)
        if not runner.boot(g):
            for line in runner.failed_lines(g):
                runner.say(line)
            bb.fail(f"the {pre}{mode} run did not complete (see {log})")
        no_serve = first_line([log], "bench: no-serve:")
        if no_serve is not None and env.get("NO_SERVE_OK", "0") != "1":
            bb.fail(f"no rslub side: {no_serve}")

    def run_mode(mode, run_dir, build_name, kdir, pre="", sides=None):
        counts = f"{out}/counts-{log_name(mode, pre, build_name)}.txt"
        if mode == "icount":
            if icount_plugin:
                boot(mode, 2, bb.icount_opts(kdir, counts, True), run_dir, build_name, kdir,
                     pre, sides, "1")
            else:
                boot(mode, 2, bb.icount_opts(kdir, counts, False), run_dir, build_name, kdir,
                     pre, sides)
        elif mode == "wall":
            boot(mode, p.real_cpus, ("", ""), run_dir, build_name, kdir, pre, sides)
        elif mode == "counters":
            if first_line(sorted(glob.glob(f"{out}/vm-*.log")), "bench: no-serve:") is not None:
                runner.say("bench: counters boot skipped (no serving interface)")
                return
            boot(mode, p.real_cpus, ("", ""), f"{run_dir}-stats", build_name, kdir, pre, sides)
        else:
            n, nodes = bb.mode_shape(mode, 0)
            opts = bb.model_opts(mode, kdir, counts, env.get("VM_MEM") or "3G")
            boot(mode, n, opts, run_dir, build_name, kdir, pre, sides,
                 numa=str(nodes) if nodes > 1 else "")

    def run_kernels(mode, run_dir, build_name):
        # With two kernels the classic kernel's boot first (but for the
        # counters boot: rslub's, on 7.3 only), then the bench kernel's.
        if p.classic and mode != "counters":
            run_mode(mode, run_dir, build_name, ckdir, "classic-", CLASSIC_SIDES)
        run_mode(mode, run_dir, build_name, bkdir)

    # The model's two boots run at once; with two kernels each of the two
    # runs its kernels' boots one after the other: never more than two
    # boots at once.
    bb.schedule(p.modes, lambda m: run_kernels(m, build, None), runner)
    for v in p.variant_builds:
        bb.schedule(p.modes, lambda m, v=v: run_kernels(m, f"{build}-{v}", v), runner)
    held.close()

    logs, counts, renames, ran = parse_args(p, out)
    cpus_meta, nodes_meta = bb.shapes_meta(ran, p.real_cpus)
    kernel_meta = os.path.basename(bkdir) + (f" + {os.path.basename(ckdir)}" if p.classic else "")
    meta = [("kernel", kernel_meta), ("qemu", bb.qemu_meta(p.modes)), ("mode", ",".join(p.modes)),
            ("cpus", cpus_meta), ("nodes", nodes_meta), ("date", bb.utc_now()),
            ("git", bb.git_rev()), ("suite", p.suite)]
    if p.experiment:
        meta.append(("experiment", p.experiment))
    sizes = first_line(logs, "bench: sizes:") or ""
    meta += [("quick", env.get("QUICK") or "0"), ("rounds", p.rounds),
             ("rslub_params", env.get("RSLUB_PARAMS", "")), ("workloads", sizes),
             ("quantum", lib.model_quantum())]
    served = first_line(logs, "rslub_bench: serve")
    if served:
        meta.append(("served", served))
    args = renames + [a for k, v in meta for a in ("--meta", f"{k}={v}")] + counts + \
        ["--profile", lib.model_profile()] + logs
    bb.finish(rsbench, out, args, plot_quiet=True)
    print(f"bench: [{runner.seconds()}s] done: {out} (bench.json, table.txt, report.md, *.png)")
