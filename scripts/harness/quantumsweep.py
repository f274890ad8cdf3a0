# SPDX-License-Identifier: GPL-2.0
"""The cost model at several vCPU quanta: how its figures converge, what each costs.

    python3 -m harness.quantumsweep [KDIR]   (default: the test kernel)

The contention programs of make check's model guest
(tools/costmodel/guest/calib, 4 vCPUs over 2 nodes) and a real program
(WORK, default hackbench over pipes, 4 groups, on the same 4 vCPUs),
booted under the model with each vCPU's turn capped at Q instructions
(the patched QEMU of `make qemu`, -accel tcg,rr-quantum=Q), and once on
the distribution's QEMU (Q = 0: its own slices, hundreds of thousands of
instructions). Prints, per Q, the figures that depend on the interleaving
(transfers an update, the makespan of a lock's section, the program's
instructions, transfers, waiting and makespan) and the CPU time of the
program's boot against plain -icount's (the boot alone subtracted, as
harness.plugincost does), and plain -icount's at that Q (what the quantum
alone costs), so that one can see the figures converge as Q shrinks and
what each Q costs. Hours with the default quanta.

Its files go to OUT: each boot's vm-TAG.log, console-TAG.log and the
plugin's counts-TAG.txt, costmodel-calib's calib-qQ.txt, and the table's
rows in sweep.txt.

Environment: QUANTA ("0 10000 1000 200"), WORK (a guest shell command
between two marks, run in the checkout), OUT (default
results/<timestamp>-quantum), VM_STALL (1800 for the model boots).
"""

import os
import re
import subprocess
import sys
from collections import defaultdict
from datetime import datetime

from harness import lib
from harness import plugincost as pc

USAGE = "usage: python3 -m harness.quantumsweep [KDIR]"
QUANTA = "0 10000 1000 200"
WORK = f"{pc.MARK} 1 && hackbench -g 4 -l 40 --pipe && {pc.MARK} 2"
CALIB = "tools/costmodel/target/release/costmodel-calib"
# The plugin's machine: 4 vCPUs over 2 nodes (node 1's memory from 1 GiB),
# the server-ooo profile's interval core.
NODES = "cpu_nodes=0:0:1:1,mem_starts=0x40000000,core=224:10:56:16,profile=server-ooo"
# Every boot's shape (harness.vm).
SHAPE = {"VM_CPUS": "4", "VM_NUMA": "2", "VM_MEM": "2G", "VM_APPEND": "loglevel=4"}
ROW = "{:<7} {:<58} {:<44} {:>14} {:>18}"
HEADER = ROW.format("Q", "calib: transfers an update (share-2 xadd-2 share-4), lock a section "
                    "(2, 4 threads)", "program: insns xfer wait span (M)",
                    "program CPU s (x plain)", "plain at Q (x plain)")


class Failed(Exception):
    """A boot that failed or could not be set up (said on stderr)."""


def model_env(kdir, out, q, tag):
    """harness.vm's settings for a boot under the model at quantum Q (0:
    the distribution's QEMU), its counts in OUT/counts-TAG.txt."""
    opts = lib.model_qemu_opts(kdir, f"{out}/counts-{tag}.txt", NODES, quantum=q)
    if opts is None:
        raise Failed
    return {**SHAPE, "VM_STALL": os.environ.get("VM_STALL") or "1800", "VM_TIMEOUT": "7200",
            "VM_QEMU_OPTS": opts[0], "VM_CONSOLE": f"{out}/console-{tag}.log",
            "VM_QEMU": opts[1]}


def plain_env(q):
    """harness.vm's settings for a plain -icount boot (no plugin) at
    quantum Q, the base of the plugin's cost."""
    if q == "0":
        return {**SHAPE, "VM_QEMU_OPTS": pc.PLAIN, "VM_QEMU": ""}
    qemu = lib.quantum_qemu(quantum=q)
    if qemu is None:
        raise Failed
    return {**SHAPE, "VM_QEMU_OPTS": f"{pc.PLAIN} -accel tcg,rr-quantum={q}", "VM_QEMU": qemu}


def number(text):
    """TEXT's leading number as awk reads it (0 when there is none)."""
    m = re.match(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text)
    return float(m.group(0)) if m else 0.0


def region(counts):
    """The program's region (the counts of its mark 2, summed over the
    vCPUs): (instructions, transfers, waiting, makespan, atomics)."""
    s = defaultdict(float)
    for line in counts.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] == "mark" and f[2] == "id=2":
            for kv in f[5:]:
                parts = kv.split("=")
                s[parts[0]] += number(parts[1]) if len(parts) > 1 else 0.0
    return (int(s["insns"]), int(s["xfer_local"] + s["xfer_remote"]), int(s["wait"]),
            int(s["span"]), int(s["locked"] + s["rmw_xfer"]))


def calib_figures(text):
    """From costmodel-calib's report: "SHARE-2 XADD-2 SHARE-4, LOCK-2 LOCK-4"
    (transfers an update of false sharing and of the contended xadd, the
    makespan of a spinlock's section)."""
    shares, xadd, locks = [], "", []
    for line in text.splitlines():
        f = line.split()
        before = [line if i == 0 else f[i - 1] for i, w in enumerate(f) if w == "transfers"]
        if "false-sharing" in line:
            shares += before
        if "contended-xadd" in line and before:
            xadd = before[0]
        if "spinlock" in line:
            locks += [f[i + 1] if i + 1 < len(f) else "" for i, w in enumerate(f)
                      if w == "makespan"]
    shares, locks = shares + ["", ""], locks + ["", ""]
    return f"{shares[0]} {xadd} {shares[1]}, {locks[0]} {locks[1]}"


def program_figures(counts):
    """The row's program figures, in millions: instructions, transfers,
    waiting, makespan."""
    insns, xfer, wait, span, _ = region(counts)
    return f"{insns / 1e6:.2f} {xfer / 1e6:.4f} {wait / 1e6:.2f} {span / 1e6:.2f}"


class Sweep:
    """One sweep of KDIR, its files in OUT, the program WORK."""

    def __init__(self, kdir, out, work):
        self.kdir, self.out, self.work = kdir, out, work

    def boot(self, q, tag, cmd):
        """One 4-vCPU boot under the model at quantum Q; its CPU seconds."""
        secs = pc.boot_cpu(self.kdir, cmd, f"{self.out}/vm-{tag}.log",
                           model_env(self.kdir, self.out, q, tag))
        if secs is None:
            print(f"quantum-sweep: the {tag} boot failed (see {self.out}/vm-{tag}.log)",
                  file=sys.stderr)
            raise Failed
        return secs

    def plain_work(self, q):
        """The program's CPU seconds under plain -icount at quantum Q."""
        log = f"{self.out}/vm-plain-q{q}.log"
        both = [pc.boot_cpu(self.kdir, cmd, log, plain_env(q))
                for cmd in (f"cd {lib.ROOT} && ({self.work})", "true")]
        if None in both:
            print(f"quantum-sweep: a plain boot at Q = {q} failed (see {log})", file=sys.stderr)
            raise Failed
        return pc.minus(*both)

    def row(self, q, base):
        """Quantum Q's row of the table (BASE: the program's plain -icount CPU
        seconds on the distribution's QEMU)."""
        self.boot(q, f"calib-q{q}", "tools/costmodel/guest/calib")
        with open(f"{self.out}/calib-q{q}.txt", "wb") as f:
            subprocess.run([CALIB, "--profile", "server-ooo", f"{self.out}/counts-calib-q{q}.txt"],
                           stdout=f, check=False)
        with_work = self.boot(q, f"work-q{q}", f"cd {lib.ROOT} && ({self.work})")
        alone = self.boot(q, f"none-q{q}", "true")
        calib = calib_figures(lib.read(f"{self.out}/calib-q{q}.txt"))
        program = program_figures(lib.read(f"{self.out}/counts-work-q{q}.txt"))
        work = pc.minus(with_work, alone)
        plain = base if q == "0" else self.plain_work(q)
        return ROW.format(q, calib, program, f"{work} ({pc.times(work, base)}x)",
                          f"{plain} ({pc.times(plain, base)}x)")


def main(argv=None):
    kdir = lib.kernel_argument(sys.argv[1:] if argv is None else argv)
    if kdir is None:
        print(USAGE, file=sys.stderr)
        return 2
    os.chdir(lib.ROOT)
    quanta = (os.environ.get("QUANTA") or QUANTA).split()
    out = os.environ.get("OUT") or f"results/{datetime.now().strftime('%Y%m%d-%H%M%S')}-quantum"
    os.makedirs(out, exist_ok=True)
    if subprocess.run(["make", "-s", "costmodel"], check=False).returncode:
        return 1
    # The patched QEMU of every quantum, before the first boot.
    if any(q != "0" and lib.quantum_qemu(quantum=q) is None for q in quanta):
        return 1
    sweep = Sweep(kdir, out, os.environ.get("WORK") or WORK)
    try:
        base = sweep.plain_work("0")
        print(f"quantum-sweep: plain -icount, the program: {base} CPU s (log: {out})", flush=True)
        print(HEADER, flush=True)
        with open(f"{out}/sweep.txt", "w", encoding="utf-8") as table:
            for q in quanta:
                line = sweep.row(q, base)
                print(line, flush=True)
                table.write(line + "\n")
                table.flush()
    except Failed:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
