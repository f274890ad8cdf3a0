# SPDX-License-Identifier: GPL-2.0
"""What make bench's suites share: modes, module builds, boots, results.

harness.bench plans a suite; this module gives it the modes (MODES, what
each boot's shape is and which QEMU options it boots with), the module
builds in copies of the tree (one make bench at a time in one copy), the
boots themselves (one guest under harness.vm, its output kept in the
results directory, its "bench:" lines shown, judged by the guest's last
line) and the end of a run (rsbench parse, table and plots).

A boot that fails stops the run: Stop(status) carries the exit status up
to harness.bench's main.
"""

import fcntl
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from harness import lib, vm

# Every mode a MODES list may name, after expand_modes.
MODEL_MODES = ("model", "model8", "model16", "model32")


class Stop(Exception):
    """Ends the run with STATUS (its lines were printed already)."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


class Refused(Exception):
    """A run refused before it starts: LINE (on stderr when STDERR), then
    exit STATUS."""

    def __init__(self, line, status, stderr=False):
        super().__init__(line)
        self.line, self.status, self.stderr = line, status, stderr


def fail(why):
    """The suites' failure line, and exit status 1."""
    print(f"bench: FAILED: {why}", flush=True)
    raise Stop(1)


def expand_modes(words):
    """The modes of a MODES list, each once, in order.

    "model" stands for the cost model's two boots, model (2 vCPUs) and
    model8 (8 over 2 nodes); "model2" is the 2-vCPU one alone.
    """
    out = []
    for w in words.split():
        for m in {"model": ("model", "model8"), "model2": ("model",)}.get(w, (w,)):
            if m not in out:
                out.append(m)
    return out


def modes_value(modes):
    """MODES for another run that reads it (expand_modes gives MODES back)."""
    return " ".join("model2" if m == "model" else m for m in modes)


def given_modes(env, quick):
    """(the modes ENV gives, or None; the lines to print about old names).

    MODES is the name for every suite. REAL_MODES (SUITE=real's name until
    the drivers were one) and QUICK_MODES (its name under QUICK=1) still
    work, ahead of MODES as they were, QUICK_MODES only with QUICK=1; in
    them "model" kept its old meaning, the 2-vCPU model boot alone
    (MODES=model2).
    """
    notes = []
    for name in ("QUICK_MODES", "REAL_MODES") if quick else ("REAL_MODES",):
        value = env.get(name, "")
        if value:
            alias = " ".join("model2" if w == "model" else w for w in value.split())
            notes.append(f"bench: {name} is MODES now: {name}='{value}' read as "
                         f"MODES='{alias}' (MODES=model is the model and model8 boots)")
            return expand_modes(alias), notes
    if env.get("MODES", "").split():
        return expand_modes(env["MODES"]), notes
    return None, notes


def mode_shape(mode, default_cpus):
    """(vCPUs, nodes) of a boot: icount and model 2 on one node, model8 and
    model16 over 2 nodes, model32 over 4, any other DEFAULT_CPUS on one."""
    return {"icount": (2, 1), "model": (2, 1), "model8": (8, 2), "model16": (16, 2),
            "model32": (32, 4)}.get(mode, (int(default_cpus), 1))


def model_nodes(n, nodes, mem):
    """The plugin's cpu_nodes= and mem_starts= for N vCPUs over NODES nodes.

    N/NODES vCPUs a node, MEM (e.g. 3G) split evenly as harness.vm's
    VM_NUMA=NODES splits it.
    """
    per = vm.mib(mem) // nodes
    starts = ":".join(f"0x{k * per * 1048576:x}" for k in range(1, nodes))
    cpus = ":".join(str(c // (n // nodes)) for c in range(n))
    return f"cpu_nodes={cpus},mem_starts={starts}"


def model8_nodes():
    """model8's shape for the plugin: 3 GiB over 2 nodes, node 1 from 1.5 GiB."""
    return "cpu_nodes=0:0:0:0:1:1:1:1,mem_starts=0x60000000"


def icount_opts(kdir, counts, plugin):
    """(QEMU options, QEMU) of an icount boot: under the plugin with model=off
    when PLUGIN (its counts in COUNTS), else the clock alone."""
    if not plugin:
        return "-icount shift=0,sleep=off", ""
    opts = lib.model_qemu_opts(kdir, counts, "model=off")
    if opts is None:
        raise Stop(1)
    return opts


def model_opts(mode, kdir, counts, mem):
    """(QEMU options, QEMU) of a model boot of MODE, its counts in COUNTS."""
    extra = ""
    if mode == "model8":
        extra = model8_nodes()
    elif mode in ("model16", "model32"):
        n, nodes = mode_shape(mode, 0)
        extra = model_nodes(n, nodes, mem)
    opts = lib.model_boot_opts(kdir, counts, extra)
    if opts is None:
        raise Stop(1)
    return opts


def quantum_modes(modes, quantum):
    """Whether MODES has a model boot that runs on the patched QEMU."""
    return quantum != "0" and any(m in MODEL_MODES for m in modes)


def need_quantum_qemu(modes):
    """Builds the patched QEMU when a model boot needs it (6 min the first time)."""
    if not quantum_modes(modes, lib.model_quantum()):
        return
    if subprocess.run([sys.executable, str(lib.ROOT / "scripts/qemu-build")],
                      stdout=subprocess.DEVNULL, check=False).returncode:
        print("bench: FAILED: building the patched QEMU of the model boots "
              "(scripts/qemu-build; RR_QUANTUM=0 boots them on the distribution's)",
              file=sys.stderr, flush=True)
        raise Stop(1)


def qemu_meta(modes):
    """The QEMU of a run for its metadata: the distribution's version, and
    the quantum patch when a model boot used it."""
    out = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True,
                         check=False).stdout
    v = (out.splitlines() or [""])[0].removeprefix("QEMU emulator version ")
    q = lib.model_quantum()
    if quantum_modes(modes, q):
        v += f"; model boots: patched, rr-quantum={q}"
    return v


def sh(argv, **kw):
    """Runs ARGV; a failure ends the run with its status (as set -e did).

    Stopped meanwhile (SIGTERM, Ctrl-C), this run stops ARGV with SIGTERM
    first, so that a run under it stops its guests.
    """
    with subprocess.Popen(argv, **kw) as p:
        try:
            rc = p.wait()
        except BaseException:
            p.terminate()
            raise
    if rc:
        raise Stop(rc)


def kernel_dir(env, flavor, given):
    """The kernel of a flavor: the one ENV's GIVEN names (no setup), or the
    project's cached one, set up (built) first if needed."""
    if env.get(given):
        return env[given]
    sh([sys.executable, "scripts/setup", "--flavor", flavor])
    out = subprocess.run([sys.executable, "scripts/setup", "--flavor", flavor, "--print-kdir"],
                         stdout=subprocess.PIPE, text=True, check=False)
    if out.returncode:
        raise Stop(out.returncode)
    return out.stdout.strip()


def kernel_release(kdir):
    """"7.3", "6.12": the built tree's release, major.minor."""
    text = (Path(kdir) / "include/config/kernel.release").read_text(encoding="utf-8")
    return ".".join(text.strip().split(".")[:2])


def build_dir(env):
    """Where make bench builds its modules: BENCH_BUILD, or in the cache."""
    cache = env.get("RSLUB_CACHE") or f"{Path.home()}/.cache/rslub"
    return env.get("BENCH_BUILD") or f"{cache}/bench-build"


def lock_build(build):
    """Holds BUILD for this run (the lock lives as long as the returned file).

    Two runs in one build directory would delete each other's built
    programs (the copy's rsync --delete); BENCH_BUILD gives a run its own.
    """
    os.makedirs(os.path.dirname(build), exist_ok=True)
    held = open(f"{build}.lock", "w", encoding="utf-8")  # pylint: disable=consider-using-with
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        held.close()
        print(f"bench: FAILED: another make bench is using {build}; wait for it, "
              "or give this run BENCH_BUILD=/another/dir", file=sys.stderr, flush=True)
        raise Stop(1) from None
    return held


def copy_tree(dest):
    """The checkout copied into DEST for a module build (harness.lib)."""
    rc = lib.copy_tree(dest)
    if rc:
        raise Stop(rc)


def clang_llvm(kdir):
    """make's LLVM= for a module of KDIR: LLVM=-NN for a clang-built kernel
    when clang-NN is installed, else LLVM=1; nothing for a GCC-built one."""
    if lib.kconfig(kdir, "CONFIG_CC_IS_CLANG") != "y":
        return []
    major = int(lib.kconfig(kdir, "CONFIG_CLANG_VERSION") or 0) // 10000
    return [f"LLVM=-{major}" if shutil.which(f"clang-{major}") else "LLVM=1"]


def build_rsbench():
    """tools/rsbench, built; its path."""
    print("bench: building tools/rsbench", flush=True)
    sh(["cargo", "build", "--release", "--quiet"], cwd="tools/rsbench")
    return str(lib.ROOT / "tools/rsbench/target/release/rsbench")


def out_dir(env, tag):
    """The results directory: BENCH_OUT, or results/<timestamp><TAG>; made."""
    out = env.get("BENCH_OUT") or \
        str(lib.ROOT / f"results/{datetime.now().strftime('%Y%m%d-%H%M%S')}{tag}")
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    return out


@dataclass
class Boot:
    """One guest of a run: what harness.vm gets, and where its output goes.

    LOG keeps the guest's output (harness.vm's lines too); ENV is added to
    the environment (VM_...); PATTERN: the log lines shown when it fails.
    """
    kdir: str
    cmd: str
    log: str
    env: dict = field(default_factory=dict)
    pattern: str = r"^bench: FAILED|^vm:"


class Runner:
    """Runs boots, one at a time or some at once, and shows their lines.

    T0 is the run's start ("bench: [Ns] ..."). Boots at once (the cost
    model's two) print through one lock, line by line.
    """

    def __init__(self):
        self.t0 = time.time()
        self.lock = threading.Lock()
        self.procs = []

    def seconds(self):
        return int(time.time() - self.t0)

    def say(self, line):
        with self.lock:
            print(line, flush=True)

    def boot(self, b):
        """Runs boot B to its end; its log keeps everything; True when the
        guest said "bench: guest done (rc 0)" and no "bench: FAILED"."""
        env = {**os.environ, **b.env, "PYTHONPATH": str(lib.ROOT / "scripts")}
        with open(b.log, "wb") as log, subprocess.Popen(
                [sys.executable, "-m", "harness.vm", b.kdir, b.cmd], env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT) as p:
            with self.lock:
                self.procs.append(p)
            try:
                for line in p.stdout:
                    log.write(line)
                    log.flush()
                    if line.startswith(b"bench:"):
                        self.say("  " + line.decode(errors="replace").rstrip("\n"))
                p.wait()
            except BaseException:
                p.terminate()
                raise
            finally:
                with self.lock:
                    self.procs.remove(p)
        text = Path(b.log).read_text(encoding="utf-8", errors="replace")
        return not re.search(r"^bench: FAILED", text, re.M) and \
            re.search(r"^bench: guest done \(rc 0\)", text, re.M) is not None

    def failed_lines(self, b):
        """The first 10 lines of B's log that say why it failed."""
        text = Path(b.log).read_text(encoding="utf-8", errors="replace")
        return [ln for ln in text.splitlines() if re.search(b.pattern, ln)][:10]

    def stop_all(self):
        """Stops the guests that run (harness.vm stops its QEMU on SIGTERM)."""
        with self.lock:
            for p in self.procs:
                if p.poll() is None:
                    p.terminate()


def schedule(modes, run_mode, runner):
    """Runs RUN_MODE(mode) for each of MODES, in order.

    The cost model's two boots (model and model8) run at once on a host of
    2 cores or more (under -icount QEMU runs a guest's vCPUs in one thread:
    each takes one core): each starts where MODES names it, beside the
    boots after it. When a boot fails, the others that run are stopped.
    """
    both = "model" in modes and "model8" in modes and (os.cpu_count() or 1) >= 2
    threads, errors = [], []

    def run(m):
        try:
            run_mode(m)
        except Stop as e:
            errors.append(e)
            runner.stop_all()

    try:
        for m in modes:
            if both and m in ("model", "model8"):
                t = threading.Thread(target=run, args=(m,))
                t.start()
                threads.append(t)
            else:
                run_mode(m)
        for t in threads:
            t.join()
    except BaseException:
        runner.stop_all()
        for t in threads:
            t.join()
        raise
    if errors:
        fail("a model boot failed (above)")


def git_rev():
    out = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                         text=True, check=False)
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def utc_now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def shapes_meta(modes, default_cpus, present=None):
    """rsbench's cpus and nodes metadata: "icount 2, wall 4" and the nodes;
    PRESENT (a function): only the modes it says ran."""
    cpus, nodes = [], []
    for m in modes:
        if present and not present(m):
            continue
        n, k = mode_shape(m, default_cpus)
        cpus.append(f"{m} {n}")
        nodes.append(f"{m} {k}")
    return ", ".join(cpus), ", ".join(nodes)


def finish(rsbench, out, parse_args, plot_quiet):
    """rsbench parse (PARSE_ARGS after -o), its table (shown and in
    table.txt) and plots; the failure of either ends the run."""
    sh([rsbench, "parse", "-o", f"{out}/bench.json"] + parse_args)
    table = subprocess.run([rsbench, "table", out], stdout=subprocess.PIPE, text=True,
                           check=False)
    sys.stdout.write(table.stdout)
    sys.stdout.flush()
    Path(f"{out}/table.txt").write_text(table.stdout, encoding="utf-8")
    if table.returncode:
        raise Stop(table.returncode)
    sh([rsbench, "plot", out], stdout=subprocess.DEVNULL if plot_quiet else None)
