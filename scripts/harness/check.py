# SPDX-License-Identifier: GPL-2.0
"""make check: host checks, setup, the module build, then six guests.

The guests: KUnit in two shapes (smp2: 2 CPUs, with the module lifecycle
test; numa4: 4 CPUs on 2 NUMA nodes, with a short stress,
CHECK_STRESS_SECONDS (15), with CPU hotplug); a small one (320 MB, 2 CPUs)
for rslub out of memory: injected failures and a short stress with them
(CHECK_FAULT_SECONDS, 10), and one round of real memory pressure with the
shrinker (scripts/guest/oom.sh); the served-cache guest (harness.serve);
the cost model's calibration guest; and a 1-CPU guest that hangs on
purpose, which must be reported stuck with its kernel stacks (the
harness's own test).

The guests run as many at once as CHECK_VCPUS allows (their vCPUs
together; default 4 per host core: TCG runs a vCPU as a host thread, and
an idle one costs nothing), longest first; CHECK_VMS=seq runs one at a
time. A guest is judged by its progress, not by the clock (harness.vm):
stuck after VM_STALL (300) s without output or KTAP result, its stacks in
its log; each has a last-resort total limit scaled to its work. The host
tests, tool tests, lint and the build refusals run beside the guests at a
lower priority (nice) while they run, so that they use the time the
guests leave. The guests boot from a snapshot of the built tree
(OUT/tree), so lint's rebuild cannot change what they load. Fails on any
failed, crashed or missing suite or case, on a kernel
WARNING/BUG/Oops/lockdep or context report, and on a stuck guest. Ends
with "N passed, M failed, K skipped".
"""

import os
import queue
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness import judge, lib, serve, setuplogic, tracepair

EXPECTED_SUITES = ("rslub_percpu rslub_api rslub_slub rslub_sysfs rslub_debug rslub_badinput "
                   "rslub_serve rslub_kdebug").split()
# The hang guest's checks, and its stall limit (600 s on a KASAN kernel).
HANG_CHECKS = 4


def vm_limit(work_seconds):
    """A guest's last-resort total limit: 30 min and 20 s per second of timed work.

    (A machine 10 times slower than ours still finishes.) VM_TIMEOUT
    overrides it.
    """
    return int(os.environ.get("VM_TIMEOUT") or 1800 + 20 * work_seconds)


@dataclass
class Guest:
    """One VM of make check: NAME, its vCPUs, and how it runs.

    ENV is the VM's environment (VM_*), CMD the guest command, CWD the
    tree it boots from. PREPARE, when set, runs first in the guest's
    thread and may set ENV and CMD, or return an exit status to record
    instead of booting (with a "guest:" line for the log).
    """
    name: str
    vcpus: int
    cmd: str
    env: dict = field(default_factory=dict)
    cwd: Path = lib.ROOT
    prepare: object = None


def fits(vcpus, used, limit):
    """Whether a guest of VCPUS starts beside USED of LIMIT (any, when none runs)."""
    return used == 0 or used + vcpus <= limit


def startable(waiting, used, limit):
    """The guests of WAITING to start now, in order, and the vCPUs then in use.

    One pass in order: each guest that fits beside those running and those
    started before it in this pass.
    """
    start = []
    for g in waiting:
        if fits(g.vcpus, used, limit):
            start.append(g)
            used += g.vcpus
    return start, used


class Check:
    """One make check run: its output directory, counts and processes."""

    def __init__(self):
        self.root = lib.ROOT
        self.out = Path(os.path.realpath(os.environ.get("CHECK_OUT") or
                                         self.root / "results/check"))
        self.tree = self.out / "tree"
        self.clock = lib.Clock("check")
        self.lock = threading.Lock()
        self.tally = judge.Tally(self.say)
        self.kdir = ""
        self.procs = []
        self.stopping = False
        self.guests_thread = None
        self.guests_done = False
        self.model_built = threading.Event()

    def say(self, line):
        """Prints a line whole (guests start and end from another thread)."""
        with self.lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def step(self, what):
        self.say(f"check: [{self.clock.seconds()}s] {what}")

    def spawn(self, argv, log, cwd=None, env=None):
        """Starts ARGV in a session of its own, its output to LOG."""
        with open(log, "wb") as f:
            p = subprocess.Popen(argv, cwd=cwd or self.root, env=env, stdout=f,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
        with self.lock:
            self.procs.append(p)
        return p

    def stop_all(self):
        """Stops every process this run started (their whole sessions)."""
        self.stopping = True
        with self.lock:
            procs = list(self.procs)
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in procs:
            p.wait()

    def fail(self, why):
        self.say(f"check: FAILED: {why}")
        self.stop_all()
        self.say("0 passed, 1 failed")
        sys.exit(1)

    def beside(self, argv):
        """ARGV, under nice -n 10 while guests run."""
        if self.guests_thread and self.guests_thread.is_alive() and not self.guests_done:
            return ["nice", "-n", "10"] + argv
        return argv

    def run_logged(self, argv, log, cwd=None, env=None):
        """Runs ARGV (beside the guests) with its output to LOG; success.

        In a process group of its own, which unnice() takes back to the
        normal priority once the guests are done.
        """
        # Under the lock: either unnice() sees it, or it is not niced.
        with open(log, "wb") as f, self.lock:
            p = subprocess.Popen(self.beside(argv), cwd=cwd or self.root, env=env, stdout=f,
                                 stderr=subprocess.STDOUT, process_group=0)
            self.procs.append(p)
        try:
            return p.wait() == 0
        finally:
            with self.lock:
                self.procs.remove(p)

    def unnice(self):
        """The host steps under way at nice 0 again: no guest is left to go first.

        A step started beside the guests (lint's checkpatch, say) kept
        nice 10 after them, and with other load on the host (stress-ng
        --cpu 2) took minutes at a tenth of a core.
        """
        with self.lock:
            self.guests_done = True
            procs = list(self.procs)
        for p in procs:
            if p.poll() is None:
                try:
                    os.setpriority(os.PRIO_PGRP, p.pid, 0)
                except OSError:
                    pass

    def run_harness(self, module, log, *args):
        """Runs python3 -m harness.MODULE ARGS as run_logged does; success."""
        return self.run_logged([sys.executable, "-m", f"harness.{module}", *args], log,
                               env={**os.environ, "PYTHONPATH": str(self.root / "scripts")})

    def tail(self, log, n):
        lines = lib.read(log).splitlines()[-n:]
        if lines:
            self.say("\n".join(lines))

    def make_clean(self, target, log, failed, warned):
        """make -s TARGET into LOG; fails the run on its failure or a warning."""
        if not self.run_logged(["make", "-s", target], log):
            self.tail(log, 40)
            self.fail(failed)
        if warnings(lib.read(log)):
            self.say("\n".join(warnings(lib.read(log))[:40]))
            self.fail(warned)

    def count_file(self, name, log, what, expected=None):
        self.tally.count_checks(name, lib.read(log), what, expected)

    # The host steps before the guests.

    def host_checks(self):
        """The setup logic (it needs none of the packages setup installs)."""
        log = self.out / "setup-logic.log"
        self.step(f"setup logic (python3 -m harness.setuplogic, log: {log})")
        self.run_harness("setuplogic", log)
        self.count_file("host", log, "setup-logic", len(setuplogic.CASES))

    def harness_tests(self):
        """The harness's own tests, in the background from setup's end on.

        The watcher's decisions on stand-ins for vng (about 40 s, mostly
        asleep), the log check, the scheduler and the VM options; some run
        programs that setup installs (rsync).
        """
        self.step(f"harness tests (python3 -m unittest, scripts/harness/tests, "
                  f"log: {self.out / 'harness.log'}), in the background")
        self.spawn([sys.executable, "-m", "unittest", "discover", "-v",
                    "-s", "scripts/harness/tests", "-t", "scripts"], self.out / "harness.log")

    def build(self):
        """Setup, trace-pair, the module build, the fast-path shape, rslabinfo."""
        self.step("setup")
        if subprocess.run(["make", "-s", "setup"], cwd=self.root, check=False).returncode:
            self.fail("setup (see the line above)")
        self.harness_tests()
        self.kdir = lib.rslub_kdir(self.root)
        if not self.kdir or not os.path.isdir(self.kdir):
            self.fail(f"no kernel build directory (make -s kdir printed '{self.kdir}')")
        log = self.out / "trace-pair.log"
        # make trace-pair's stepping and table on a guest without a kernel
        # (QEMU and gdb, a few seconds): each rep string instruction once.
        self.step(f"trace-pair stepping (python3 -m harness.tracepair --self-test, log: {log})")
        self.run_harness("tracepair", log, "--self-test")
        self.count_file("host", log, "trace-pair", len(tracepair.SELF_CHECKS))
        # The cost model's plugin and calibration program, built in the
        # background from here on (cargo may fetch crates the first time);
        # the model guest waits.
        threading.Thread(target=self.build_model, daemon=True).start()
        log = self.out / "build.log"
        self.step(f"build modules (log: {log})")
        self.make_clean("modules", log, "module build", "module build printed warnings")
        self.shape()
        log = self.out / "rslabinfo-build.log"
        self.step(f"build rslabinfo (log: {log})")
        if not self.run_logged(["cargo", "build", "--release", "--quiet"], log,
                               cwd=self.root / "tools/rslabinfo"):
            self.tail(log, 30)
            self.fail("rslabinfo build")
        # What the guests load: a snapshot of the built tree (no sources of
        # cargo's, no git).
        rsync = subprocess.run(
            ["rsync", "-a", "--exclude", "/.git", "--exclude", "/results", "--exclude", "target",
             "--exclude", "*.o", "--exclude", "*.bc", "--exclude", "__pycache__",
             f"{self.root}/", f"{self.tree}/"], check=False)
        info = self.tree / "tools/rslabinfo/target/release"
        try:
            if rsync.returncode:
                raise OSError("rsync failed")
            info.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.root / "tools/rslabinfo/target/release/rslabinfo", info)
        except OSError:
            self.fail(f"snapshot of the built tree into {self.tree}")

    def build_model(self):
        log = self.out / "model-build.log"
        p = self.spawn(["make", "-s", "costmodel"], log)
        rc = 0 if p.wait() == 0 else 1
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{rc}\n")
        (self.out / "model-build.rc").write_text(f"{rc}\n", encoding="utf-8")
        self.model_built.set()

    def shape(self):
        """The alloc and free hit paths keep their shape (docs/design.md's budget).

        Only where the C shim is inlined into the Rust
        (CONFIG_RUST_INLINE_HELPERS, the project's kernels). A KASAN kernel
        instruments the inlined C: the shape is the sanitizer's, not rslub's.
        """
        if lib.has(self.kdir, "CONFIG_KASAN"):
            self.step(f"fast-path shape: skipped (4 checks): {self.kdir} has KASAN, "
                      "which instruments the inlined shim")
            self.tally.skipped += 4
        elif lib.has(self.kdir, "CONFIG_RUST_INLINE_HELPERS"):
            log = self.out / "shape.log"
            self.step(f"fast-path shape (scripts/fastpath-shape.py, log: {log})")
            self.run_logged([sys.executable, "scripts/fastpath-shape.py", "rslub.ko"], log)
            text = lib.read(log)
            self.count_file("module", log, "fastpath-shape", 4)
            for line in judge.lines_of(text, "fastpath-shape", "PASS"):
                self.say(f"    {line}")
            lines = text.splitlines()
            fails = [i for i, line in enumerate(lines) if line.startswith("fastpath-shape: FAIL")]
            if fails:
                self.say("\n".join(lines[fails[0]:fails[0] + 61][:60]))
        else:
            self.step(f"fast-path shape: skipped (4 checks): {self.kdir} calls the C shim "
                      "out of line (no CONFIG_RUST_INLINE_HELPERS)")
            self.tally.skipped += 4

    # The guests.

    def guests(self):
        """The guests, longest first.

        The hang test is idle most of its time (one vCPU asleep): it goes
        early, beside the others. numa4's second node has memory above 4
        GiB only (6 GB: the first node holds the memory below the 32-bit
        PCI hole), for rslub_serve's DMA32 case; smp2 wipes freed memory
        (init_on_free=1) and can switch allocation profiling on at run
        time (built in, off: sysctl.vm.mem_profiling=0), for the cases of
        each. Each of those cases skips itself in the other guest. On a
        KASAN kernel (DEBUG=1) KASAN prints every report, not the first
        alone: rslub_kdebug expects several. A case may also run silent far
        longer there (KASAN's shadow checks and kmemleak's tracking make
        the slow cases about ten times slower under TCG), so a guest is
        judged stuck after VM_STALL 1200 s by default, the hung-task
        detector waits 900 s, and the hang guest's limit is 600 s (its boot
        alone went 121 s without a console line).
        """
        stress = int(os.environ.get("CHECK_STRESS_SECONDS") or 15)
        faults = int(os.environ.get("CHECK_FAULT_SECONDS") or 10)
        kasan, hang_stall = "", 120
        if lib.has(self.kdir, "CONFIG_KASAN"):
            kasan = " kasan_multi_shot sysctl.kernel.hung_task_timeout_secs=900"
            os.environ.setdefault("VM_STALL", "1200")
            hang_stall = 600
        out = self.out
        guests = []
        if self.serve_runs():
            env, cmd, secs = serve.guest(self.kdir)
            guests.append(Guest("serve", 3, cmd, {**env, "VM_TIMEOUT": str(vm_limit(secs))},
                                self.tree))
        guests += [
            self.kunit("numa4", 4, 2, 0, stress, "6G", kasan),
            Guest("hang", 1, "echo 'hang: sleeping for ever on purpose'; exec sleep 987654321",
                  {"VM_CPUS": "1", "VM_MEM": "512M", "VM_STALL": str(hang_stall),
                   "VM_TIMEOUT": "1800"}, self.tree),
            self.kunit("smp2", 2, 1, 50, 0, "2G",
                       "init_on_free=1 sysctl.vm.mem_profiling=0" + kasan),
            # A larger log buffer: the create sweep logs a line per failed create.
            Guest("oom", 2, f"scripts/guest/oom.sh --dmesg faults {faults}; a=$?; "
                  "scripts/guest/oom.sh --dmesg pressure 1; b=$?; exit $((a | b))",
                  {"VM_CPUS": "2", "VM_NUMA": "0", "VM_MEM": "320M",
                   "VM_APPEND": "log_buf_len=4M", "VM_TIMEOUT": str(vm_limit(faults))},
                  self.tree),
            Guest("model", 2, "tools/costmodel/guest/calib", {}, self.root,
                  self.prepare_model),
        ]
        for g in guests:
            g.env["VM_CONSOLE"] = str(out / f"console-{g.name}.log")
        return guests

    def kunit(self, name, cpus, numa, cycles, secs, mem, append):
        """A KUnit guest; CYCLES of the lifecycle test, SECS of stress (0: none).

        The stress runs the module as built (batched frees are a build
        variant, tested on the host).
        """
        env = ""
        if cycles:
            env += f" RSLUB_LIFECYCLE={cycles}"
        if secs:
            env += f" RSLUB_STRESS={secs}"
        return Guest(name, cpus, f"{env} scripts/guest/kunit.sh",
                     {"VM_CPUS": str(cpus), "VM_NUMA": str(numa), "VM_MEM": mem,
                      "VM_APPEND": append.strip(), "VM_TIMEOUT": str(vm_limit(secs))}, self.tree)

    def prepare_model(self, g):
        """The model guest waits for its build (30 min at most), then its options.

        tools/costmodel/guest/calib on 4 vCPUs over 2 nodes (1 GiB each:
        node 1 begins at 0x40000000) under the plugin, with the core of the
        validation table's profiles (core=, GUEST_CORE in
        model/src/validate.rs) and the vCPUs' clocks priced by the Skylake
        client's (profile=: the makespans of the validation's contention
        rows, measured on client parts).
        """
        self.model_built.wait(1800)
        if lib.read(self.out / "model-build.rc").strip() != "0":
            return ("guest: the cost model's plugin or program did not build "
                    f"(log: {self.out / 'model-build.log'})")
        opts = lib.model_qemu_opts(
            self.kdir, self.out / "model-counts.txt",
            "cpu_nodes=0:0:1:1,mem_starts=0x40000000,core=224:10:56:16,profile=skylake-ooo",
            self.root)
        if opts is None:
            return "guest: no QEMU options for the cost model (see the line above)"
        g.env.update({"VM_CPUS": "4", "VM_NUMA": "2", "VM_MEM": "2G", "VM_TIMEOUT": "1800",
                      "VM_QEMU_OPTS": opts[0]})
        if opts[1]:
            g.env["VM_QEMU"] = opts[1]
        return None

    def serve_runs(self):
        """Whether the serve guest runs; when the kernel cannot, its checks skipped.

        It needs the slab backend hook (patches/); a KDIR= kernel without
        it skips it: serving is refused there, the API works.
        """
        if os.environ.get("CHECK_SERVE", "1") != "1":
            return False
        why = None
        if not lib.has(self.kdir, "CONFIG_SLAB_BACKEND"):
            why = "has no slab backend hook (patches/)"
        elif lib.has(self.kdir, "CONFIG_KASAN"):
            why = "has KASAN, under which the kernel serves no cache"
        if why:
            self.step(f"VM serve: skipped ({serve.SERVE_CHECKS} checks): {self.kdir} {why}")
            self.tally.skipped += serve.SERVE_CHECKS
            return False
        return True

    def run_guest(self, g, done):
        """Runs guest G (in its thread); its exit status to OUT/vm-NAME.rc."""
        log = self.out / f"vm-{g.name}.log"
        rc = 2
        try:
            why = g.prepare(g) if g.prepare else None
            if why:
                log.write_text(why + "\n", encoding="utf-8")
            elif not self.stopping:
                env = {**os.environ, **g.env, "PYTHONPATH": str(g.cwd / "scripts")}
                p = self.spawn([sys.executable, "-m", "harness.vm", self.kdir, g.cmd], log,
                               cwd=g.cwd, env=env)
                rc, cpu = lib.wait_cpu(p)
                if cpu is not None and not self.stopping:
                    (self.out / f"vm-{g.name}.cpu").write_text(f"{cpu:.0f}\n", encoding="utf-8")
        finally:
            (self.out / f"vm-{g.name}.rc").write_text(f"{rc}\n", encoding="utf-8")
            done.put(g)

    def run_guests(self, guests, limit):
        """Starts each guest as its vCPUs fit (startable()) and waits for all.

        Each guest's start, end and wall time is a "check:" line; its
        verdict comes from the judge afterwards.
        """
        done = queue.Queue()
        waiting, used, t0 = list(guests), 0, {}
        while waiting or t0:
            start, _ = startable(waiting, used, limit)
            for g in start:
                if self.stopping:
                    return
                used += g.vcpus
                t0[g.name] = time.time()
                threading.Thread(target=self.run_guest, args=(g, done), daemon=True).start()
                self.step(f"VM {g.name} started: {g.vcpus} vCPU(s), {used} of {limit} in use "
                          f"(log: {self.out / f'vm-{g.name}.log'})")
                waiting.remove(g)
            g = done.get()
            used -= g.vcpus
            log = lib.read(self.out / f"vm-{g.name}.log")
            waits = "".join(f"; longest wait for progress {s} s" for s in re.findall(
                r"^vm: longest wait for progress: ([0-9]*) s", log, re.M))
            rc = lib.read(self.out / f"vm-{g.name}.rc").strip() or "?"
            cpu = lib.read(self.out / f"vm-{g.name}.cpu").strip()
            cpu = f", {cpu} s of CPU" if cpu else ""
            self.step(f"VM {g.name} ended after {int(time.time() - t0.pop(g.name))} s "
                      f"(exit {rc}{cpu}){waits}")
        self.unnice()

    # The host steps beside the guests.

    def host_tests(self):
        """The core's host tests (also as free_batch compiles it), the tools'."""
        host = 0
        for target, title, label, fails in (
                ("host-test", "host tests (cargo test", "host", "host tests"),
                ("host-test-free-batch",
                 "host tests, free_batch variant (cargo test --cfg rslub_free_batch",
                 "host (free_batch)", "host tests (free_batch variant)")):
            log = self.out / f"{target.replace('-free-batch', '-free_batch')}.log"
            self.step(f"{title}, log: {log})")
            if not self.run_logged(["make", "-s", target], log):
                self.tail(log, 30)
                self.fail(fails)
            n = cargo_passed(lib.read(log))
            self.say(f"  {label}: {n} tests passed")
            host += n
        log = self.out / "tools.log"
        self.step(f"tools: rslabinfo, rsbench and costmodel, build and test (log: {log})")
        steps = [("tools/rslabinfo", ["cargo", "build", "--release", "--quiet"]),
                 ("tools/rslabinfo", ["cargo", "test", "--quiet"]),
                 ("tools/rsbench", ["cargo", "build", "--release", "--quiet"]),
                 ("tools/rsbench", ["cargo", "test", "--quiet"]),
                 ("tools/costmodel", ["cargo", "test", "--quiet", "--workspace"])]
        with open(log, "wb") as f:
            for where, argv in steps:
                if subprocess.run(self.beside(argv), cwd=self.root / where, stdout=f,
                                  stderr=subprocess.STDOUT, check=False).returncode:
                    f.close()
                    self.tail(log, 30)
                    self.fail("tools build or tests")
        n = cargo_passed(lib.read(log))
        self.say(f"  tools: {n} tests passed")
        self.tally.passed += host + n

    def lint_and_refusals(self):
        log = self.out / "lint.log"
        self.step(f"lint (log: {log})")
        self.make_clean("lint", log, "lint (make lint)", "clippy printed warnings")
        # Kernels rslub cannot work on stop the build with one line (Kbuild).
        self.step("build refusals: PREEMPT_RT, !SMP, !X86_64")
        refused = 0
        for v in ("CONFIG_PREEMPT_RT=y", "CONFIG_SMP=", "CONFIG_X86_64="):
            out = subprocess.run(self.beside(["make", "-s", "-C", self.kdir, f"M={self.root}",
                                              v, "modules"]),
                                 capture_output=True, text=True, check=False)
            if "*** rslub: " in out.stdout + out.stderr:
                refused += 1
            else:
                self.tally.problem(f"  build: {v} was not refused with a message")
        self.say(f"  build refusals: {refused} of 3")
        self.tally.passed += refused

    # The verdicts.

    def judge_rc(self, name):
        """Whether guest NAME ran to its end; otherwise the problem noted.

        A stuck guest is the watcher's verdict; its stacks are in the log.
        """
        log = self.out / f"vm-{name}.log"
        rc = lib.read(self.out / f"vm-{name}.rc").strip() or "2"
        text = lib.read(log)
        if rc in ("124", "137"):
            m = re.search(r"^vm: (STUCK.*)$", text, re.M)
            self.tally.problem(f"  {name}: {m.group(1) if m else f'guest stopped (exit {rc})'}")
            self.tally.problem(f"    kernel stacks: {log} (lines 'vm: |'), "
                               f"console: {self.out / f'console-{name}.log'}")
            self.tally.failed += 1
            return False
        if rc != "0":
            m = re.search(r"^guest:.*$", text, re.M)
            said = m.group(0) if m else f"see {log} and {self.out / f'console-{name}.log'}"
            self.tally.problem(f"  {name}: guest command exited {rc} ({said})")
        return True

    def dmesg(self, name):
        """Guest NAME's kernel log, saved and checked for reports."""
        text = judge.dmesg_section(lib.read(self.out / f"vm-{name}.log"))
        (self.out / f"dmesg-{name}.log").write_text(text, encoding="utf-8")
        self.tally.kernel_log(name, text)
        return text

    def judge_kunit(self, name, cycles, secs):
        """A KUnit guest's results: suites, its checks, kunit.py's counts."""
        if not self.judge_rc(name):
            return
        log = lib.read(self.out / f"vm-{name}.log")
        dmesg = self.dmesg(name)
        for old in self.out.glob(f"ktap-{name}.*.log"):
            old.unlink()
        parsed = []
        for i, run in enumerate(judge.ktap_runs(dmesg), 1):
            path = self.out / f"ktap-{name}.{i}.log"
            path.write_text(run, encoding="utf-8")
            p = subprocess.run([sys.executable, f"{self.kdir}/tools/testing/kunit/kunit.py",
                                "parse", str(path)], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, check=False)
            parsed.append(p.stdout)
        parsed = "".join(parsed)
        (self.out / f"kunit-{name}.txt").write_text(parsed, encoding="utf-8")
        (self.out / f"ktap-{name}.txt").write_text(judge.ktap_from_first(dmesg),
                                                   encoding="utf-8")
        for s in EXPECTED_SUITES:
            if not judge.suite_ended(dmesg, s):
                self.tally.problem(f"  {name}: suite {s} missing or did not finish")
        # rslabinfo against live caches, lifecycle, stress: lines in the guest.
        self.tally.count_checks(name, log, "rslabinfo")
        self.tally.count_checks(name, log, "badparam")
        if cycles:
            self.tally.count_checks(name, log, "lifecycle")
        if secs:
            self.tally.count_checks(name, log, "stress", 1)
            for line in re.findall(r"^rslub_stress: (?:ops|hotplug|verified|destroyed).*$",
                                   log, re.M):
                self.say(f"    {line}")
        summaries, sums = judge.kunit_sums(parsed)
        if not summaries:
            self.tally.problem(f"  {name}: no KUnit results parsed")
            self.tally.failed += 1
            return
        for line in summaries:
            self.say(re.sub(r"^.*\] ", f"  {name}: ", line))
        bad = [line for line in parsed.splitlines() if re.search(r"\[FAILED\]|\[CRASHED\]", line)]
        for line in bad[:20]:
            self.say(f"  {name}: {line}")
        self.tally.passed += sums["passed"]
        self.tally.failed += sums["failed"] + sums["crashed"]
        self.tally.skipped += sums["skipped"]

    def judge_oom(self):
        if not self.judge_rc("oom"):
            return
        log = lib.read(self.out / "vm-oom.log")
        self.dmesg("oom")
        self.tally.count_checks("oom", log, "faults")
        self.tally.count_checks("oom", log, "pressure")
        for line in re.findall(
                r"^(?:faults|pressure): PASS (?:stress|injected|fill|shrinker|memory).*$",
                log, re.M):
            self.say(f"    {line[:230]}")

    def judge_hang(self):
        """The hang guest: declared stuck after its line, with its stacks.

        SysRq on the keyboard needs both in the kernel (the test flavor has
        them; a KDIR= kernel may not).
        """
        log_path = self.out / "vm-hang.log"
        log = lib.read(log_path)
        rc = lib.read(self.out / "vm-hang.rc").strip() or "2"
        lines = []
        sleeping = len(re.findall(r"^hang: sleeping", log, re.M))
        if rc == "124" and sleeping:
            lines.append("hang: PASS declared stuck (exit 124) after the guest's last line")
        else:
            lines.append(f"hang: FAIL exit {rc}, {sleeping} 'hang: sleeping' lines: "
                         "not declared stuck after its line")
        checks = [("vCPU instruction pointers named", r"^vm:   CPU 0: RIP 0x[0-9a-f]+ [a-z_]")]
        sysrq = (lib.has(self.kdir, "CONFIG_MAGIC_SYSRQ") and
                 lib.has(self.kdir, "CONFIG_KEYBOARD_ATKBD"))
        if sysrq:
            checks += [("SysRq answered",
                        r"^vm: \| .*sysrq: Show (State|Blocked State|backtrace)"),
                       ("the sleeping task's kernel stack",
                        r"^vm: \| .*(do_nanosleep|hrtimer_nanosleep)")]
        for what, pattern in checks:
            if re.search(pattern, log, re.M):
                lines.append(f"hang: PASS {what}")
            else:
                lines.append(f"hang: FAIL {what}: no line matching '{pattern}' in {log_path}")
        text = "".join(line + "\n" for line in lines)
        (self.out / "hang.txt").write_text(text, encoding="utf-8")
        if not sysrq:
            self.say(f"  hang: 2 SysRq checks skipped: {self.kdir} has no CONFIG_MAGIC_SYSRQ "
                     "or CONFIG_KEYBOARD_ATKBD")
            self.tally.skipped += 2
        self.tally.count_checks("hang", text, "hang", HANG_CHECKS if sysrq else HANG_CHECKS - 2)

    def judge_model(self):
        """The calibration counts against the profile and the hardware figures."""
        if not self.judge_rc("model"):
            return
        calib = self.root / "tools/costmodel/target/release/costmodel-calib"
        counts = str(self.out / "model-counts.txt")
        for what, args, width in (("model", [], 200), ("validate", ["--validate"], 160)):
            out = self.out / f"{what}.txt"
            self.run_logged([str(calib)] + args + [counts], out)
            text = lib.read(out)
            self.tally.count_checks("model", text, what)
            for line in text.splitlines():
                if line.startswith(f"{what}: ") and not line.startswith(f"{what}: plan"):
                    self.say(f"    {line[:width]}")

    def judge_harness(self):
        log = self.out / "harness.log"
        self.step(f"harness tests (log: {log})")
        passed, failed = unittest_counts(lib.read(log))
        self.say(f"  host: harness: {passed} passed, {failed} failed")
        if failed or not passed:
            for line in lib.read(log).splitlines():
                if re.search(r"\.\.\. (FAIL|ERROR)$", line):
                    self.say(f"  host: {line}")
            self.tally.problem(f"  host: harness tests: {failed} failed (log: {log})")
        self.tally.passed += passed
        self.tally.failed += failed

    def main(self):
        shutil.rmtree(self.out, ignore_errors=True)
        self.out.mkdir(parents=True)

        def on_signal(_signum, _frame):
            self.stop_all()
            sys.exit(143)

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        self.host_checks()
        self.build()
        guests = self.guests()
        ncpu = os.cpu_count() or 1
        limit = int(os.environ.get("CHECK_VCPUS") or 4 * ncpu)
        if os.environ.get("CHECK_VMS", "par") == "seq":
            limit = 0
        self.step(f"VMs: at most {limit} vCPUs at once ({ncpu} host cores; CHECK_VCPUS, "
                  f"CHECK_VMS=seq), stuck after {os.environ.get('VM_STALL') or 300} s "
                  "without progress (VM_STALL)")
        self.guests_thread = threading.Thread(target=self.run_guests, args=(guests, limit),
                                              daemon=True)
        self.guests_thread.start()
        self.host_tests()
        self.lint_and_refusals()
        self.step("waiting for the VMs")
        self.guests_thread.join()
        for p in list(self.procs):
            p.wait()
        self.judge_harness()
        stress = int(os.environ.get("CHECK_STRESS_SECONDS") or 15)
        self.judge_kunit("smp2", 50, 0)
        self.judge_kunit("numa4", 0, stress)
        self.judge_oom()
        self.judge_hang()
        self.judge_model()
        if any(g.name == "serve" for g in guests) and self.judge_rc("serve"):
            serve.judge_serve(self.tally, lib.read(self.out / "vm-serve.log"),
                              self.out / "dmesg-serve.log")
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.step(f"done: {used.ru_utime + used.ru_stime:.0f} s of CPU in every step and "
                  f"guest ({os.cpu_count() or 1} host cores)")
        return 0 if self.tally.summary("check", f"KUnit logs and parsed results: {self.out}") \
            else 1


def warnings(text):
    """The lines of TEXT from each "warning:" line (any case), 3 more each."""
    lines, out, until = text.splitlines(), [], -1
    for i, line in enumerate(lines):
        if "warning:" in line.lower():
            until = i + 3
        if i <= until:
            out.append(line)
    return out


def cargo_passed(text):
    """The sum of "N passed" of cargo test's "test result" lines."""
    return sum(int(n) for line in text.splitlines() if line.startswith("test result")
               for n in re.findall(r"([0-9]+) passed", line))


def unittest_counts(text):
    """(passed, failed) of python -m unittest's output; errors count as failed."""
    m = re.search(r"^Ran ([0-9]+) tests?", text, re.M)
    if not m:
        return 0, 1
    ran = int(m.group(1))
    bad = sum(int(n) for n in re.findall(r"(?:failures|errors)=([0-9]+)", text))
    skipped = sum(int(n) for n in re.findall(r"skipped=([0-9]+)", text))
    return ran - bad - skipped, bad


if __name__ == "__main__":
    sys.exit(Check().main())
