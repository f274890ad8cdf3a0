# SPDX-License-Identifier: GPL-2.0
"""Checks the patched QEMU of `make qemu`: how long a vCPU's turn lasts.

    python3 -m harness.qemuquantum

Boots the test kernel under -icount with 2 vCPUs, runs the same busy loop
pinned on each CPU (tools/qemu-quantum/spin.c) under a plugin that records
the vCPU of every executed block (tools/qemu-quantum/turns.c), and
measures the vCPUs' turns while both spin: the longest run of consecutive
instructions of one vCPU before the other runs.

  rr-quantum=Q    the longest turn is at most Q plus one block
  no rr-quantum   turns are far longer (the vCPU's share of the time to the
                  next timer: hundreds of thousands of instructions)
  vCPU index      each vCPU is seen executing the loop's block about as
                  often as the loop's iterations (the plugin index patch);
                  the stock binary (STOCK=1, informational) puts nearly
                  all of them on the vCPU that translated the block

Prints a table of the runs, an "  ok: ..." or "  FAIL: ..." line per
check and "N passed, M failed"; exit status 1 on a FAIL or when a run
cannot be made ("test-qemu-quantum: FAILED: ..."). About 5 minutes; it
builds the patched QEMU first if it is not cached (scripts/qemu-build,
about 4 minutes more).

Environment: QUANTA (default "1000 200"), SPIN_ITERS (loop iterations per
CPU, 4 instructions each; default 12500000), STOCK (1: also run Debian's
binary; default 1), KDIR (default: the cached test kernel), VM_TIMEOUT
(1200 s a run), RSLUB_CACHE.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

from harness import lib

USAGE = "usage: python3 -m harness.qemuquantum"
TABLE = "{:<14} {:>10} {:>10} {:>8} {:>12} {:>12}"
SPIN = lib.ROOT / "tools/qemu-quantum/spin.c"
TURNS = lib.ROOT / "tools/qemu-quantum/turns.c"


class Died(Exception):
    """A run that cannot be made: the line to print."""


def integer(text):
    """TEXT as an integer, or None."""
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def spin_symbols(nm):
    """(lo, hi, done) of the spin program from `nm -S`'s output NM: the
    loop function spin's [start, end) and spin_done's address; None when
    either is missing."""
    syms = {}
    for line in nm.splitlines():
        f = line.split()
        if len(f) == 4:
            syms.setdefault(f[3], (int(f[0], 16), int(f[1], 16)))
    if "spin" not in syms or "spin_done" not in syms:
        return None
    return syms["spin"][0], sum(syms["spin"]), syms["spin_done"][0]


def turns_opts(work, name, syms, accel=""):
    """QEMU's options of run NAME: -icount (and ACCEL), the turns plugin
    of WORK, its report in WORK/NAME.txt, the loop at SYMS."""
    lo, hi, done = syms
    accel = f" {accel}" if accel else ""
    return (f"-icount shift=0,sleep=off{accel} -plugin {work}/turns.so,"
            f"out={work}/{name}.txt,lo={lo},hi={hi},done={done}")


def values(report):
    """The plugin's report, "key=value" lines, as a dict."""
    out = {}
    for line in report.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out.setdefault(key, value)
    return out


def loop_ok(v, n):
    """Whether each vCPU executed the loop's block N to 1.1 N times (the
    extra: blocks cut short at the end of a turn) in report V."""
    counts = [integer(v.get(f"loop_execs_vcpu{i}")) for i in (0, 1)]
    return all(c is not None and n <= c <= n + n // 10 for c in counts)


def checks(quanta, reports, n):
    """(what, passed) of each check of the runs' REPORTS ({run: values}):
    q<Q> for each of QUANTA, and none (no quantum)."""
    out, maxq = [], 0
    for q in quanta:
        v = reports[f"q{q}"]
        maxq = max(maxq, int(q))
        turn, block = integer(v.get("max_turn")), integer(v.get("max_block"))
        out += [
            (f"rr-quantum={q}: both vCPUs spun together (window {v.get('window', '')})",
             v.get("window") == "closed"),
            (f"rr-quantum={q}: longest turn {v.get('max_turn', '')} <= {q} + one block "
             f"({v.get('max_block', '')})",
             None not in (turn, block) and turn <= int(q) + block),
            (f"rr-quantum={q}: each vCPU seen running the loop's block", loop_ok(v, n))]
    v = reports["none"]
    turn = integer(v.get("max_turn"))
    return out + [
        (f"no quantum: longest turn {v.get('max_turn', '')} > 10 x {maxq}",
         turn is not None and turn > 10 * maxq),
        ("no quantum: each vCPU seen running the loop's block", loop_ok(v, n))]


def table_row(name, v):
    return TABLE.format(name, *(v.get(k, "") for k in (
        "max_turn", "mean_turn", "turns", "loop_execs_vcpu0", "loop_execs_vcpu1")))


class Runs:
    """The guests of one check: the kernel KDIR, the programs in WORK."""

    def __init__(self, kdir, work, n, syms):
        self.kdir, self.work, self.n, self.syms = kdir, work, n, syms
        self.reports = {}

    def boot(self, name, qemu, accel=""):
        """Run NAME on the QEMU binary QEMU; its report in self.reports."""
        t0 = time.time()
        log = f"{self.work}/{name}.log"
        rc, _ = lib.wait_cpu(lib.start_vm(self.kdir, f"{self.work}/spin {self.n}", log, {
            "VM_QEMU": qemu, "VM_TIMEOUT": os.environ.get("VM_TIMEOUT") or "1200",
            "VM_QEMU_OPTS": turns_opts(self.work, name, self.syms, accel)}))
        if rc:
            sys.stderr.write(lib.tail(log, 5))
            raise Died(f"the guest of run '{name}' failed (its output above)")
        report = lib.read(f"{self.work}/{name}.txt")
        if not report:
            raise Died(f"run '{name}': the plugin wrote no report")
        self.reports[name] = values(report)
        print(f"  ({name}: {int(time.time() - t0)} s wall)", file=sys.stderr, flush=True)


def patched_qemu():
    """The patched QEMU (built if need be) and the directory it is
    installed in, with its plugin header."""
    out = subprocess.run([sys.executable, str(lib.ROOT / "scripts/qemu-build")],
                         stdout=subprocess.PIPE, text=True, check=False).stdout
    qemu = (out.splitlines() or [""])[-1]
    if not qemu or not os.access(qemu, os.X_OK):
        raise Died("scripts/qemu-build gave no binary")
    prefix = os.path.dirname(os.path.dirname(qemu))
    if not os.path.isfile(f"{prefix}/include/qemu-plugin.h"):
        raise Died(f"no {prefix}/include/qemu-plugin.h beside the binary (rebuild: remove "
                   f"{prefix})")
    return qemu, prefix


def build(work, prefix):
    """The guest's program and the plugin, built into WORK (the plugin
    against the header of the QEMU installed in PREFIX)."""
    # Static (guest execs over 9p are slow), text far from the 0x400000
    # where other static programs sit: the plugin matches the loop by address.
    if subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-static",
                       "-Wl,-Ttext-segment=0x60000000", "-o", f"{work}/spin", str(SPIN)],
                      check=False).returncode:
        raise Died("spin.c does not build")
    glib = subprocess.run(["pkg-config", "--cflags", "glib-2.0"], stdout=subprocess.PIPE,
                          text=True, check=False).stdout.split()
    # -Wno-unused-parameter: the callbacks' signatures are the plugin API's.
    if subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
                       "-shared", "-fPIC", *glib, f"-I{prefix}/include", "-o",
                       f"{work}/turns.so", str(TURNS)], check=False).returncode:
        raise Died("turns.c does not build")
    nm = subprocess.run(["nm", "-S", f"{work}/spin"], stdout=subprocess.PIPE, text=True,
                        check=False).stdout
    syms = spin_symbols(nm)
    if syms is None:
        raise Died(f"no spin/spin_done symbols in {work}/spin")
    return syms


def run(work):
    """The check, its programs in WORK; the number of failed checks."""
    quanta = (os.environ.get("QUANTA") or "1000 200").split()
    n = integer(os.environ.get("SPIN_ITERS") or "12500000")
    stock = (os.environ.get("STOCK") or "1") == "1"
    if n is None or not all(q.isdigit() for q in quanta):
        raise Died("SPIN_ITERS and QUANTA are numbers of instructions")
    qemu, prefix = patched_qemu()
    kdir = os.environ.get("KDIR") or lib.test_kdir()
    if not os.path.isfile(f"{kdir}/arch/x86/boot/bzImage"):
        raise Died(f"no kernel image in {kdir} (run 'make setup')")
    syms = build(work, prefix)
    print(f"QEMU: {qemu}", file=sys.stderr)
    print(f"kernel: {kdir}; 2 vCPUs, 2 x {n} loop iterations; loop block at {syms[0]:#x}",
          file=sys.stderr, flush=True)
    runs = Runs(kdir, work, n, syms)
    runs.boot("none", qemu)
    for q in quanta:
        runs.boot(f"q{q}", qemu, f"-accel tcg,rr-quantum={q}")
    if stock:
        runs.boot("stock", shutil.which("qemu-system-x86_64") or "")
    print()
    print(TABLE.format("run", "max_turn", "mean_turn", "turns", "loop_vcpu0", "loop_vcpu1"))
    for name in runs.reports:
        print(table_row(name, runs.reports[name]))
    print("(turns: instructions in a row on one vCPU while both spin; loop_vcpuN:")
    print(f" executions of the loop's block reported for vCPU N, {n} expected each)")
    print()
    results = checks(quanta, runs.reports, n)
    for what, ok in results:
        print(f"  {'ok' if ok else 'FAIL'}: {what}")
    if stock:
        v = runs.reports["stock"]
        print("  (stock QEMU, not checked: the loop's block reported "
              f"{v.get('loop_execs_vcpu0') or 0} times on vCPU 0 and "
              f"{v.get('loop_execs_vcpu1') or 0} on vCPU 1)")
    failed = len([ok for _, ok in results if not ok])
    print(f"{len(results) - failed} passed, {failed} failed", flush=True)
    return failed


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        print(USAGE, file=sys.stderr)
        return 2
    # The guest runs programs from the host's file system: a directory in /tmp.
    work = tempfile.mkdtemp(prefix="rslub-quantum.", dir="/tmp")
    try:
        return 1 if run(work) else 0
    except Died as e:
        sys.stdout.flush()
        print(f"test-qemu-quantum: FAILED: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
