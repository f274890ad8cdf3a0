# SPDX-License-Identifier: GPL-2.0
"""What the host runs share: the checkout, the kernel and its config, a
step clock, and the QEMU options of a boot under the cost model."""

import os
import subprocess
import sys
import time
from pathlib import Path

# The checkout this package is in (scripts/harness/..).
ROOT = Path(__file__).resolve().parents[2]


def rslub_kdir(root=ROOT):
    """The kernel build directory `make` uses: the cached one or KDIR=.

    --no-print-directory: under `make -C DIR check` every nested make
    would print "Entering directory" lines around the path.
    """
    out = subprocess.run(["make", "-s", "--no-print-directory", "kdir"], cwd=root,
                         capture_output=True, text=True, check=False)
    return out.stdout.strip()


def kconfig(kdir, option):
    """The value of OPTION (CONFIG_...) in KDIR's .config, or None."""
    try:
        with open(Path(kdir) / ".config", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(option + "="):
                    return line.rstrip("\n").split("=", 1)[1]
    except OSError:
        pass
    return None


def has(kdir, option):
    """Whether KDIR's kernel is built with OPTION=y."""
    return kconfig(kdir, option) == "y"


class Clock:
    """Prints "PREFIX: [Ns] what" lines, N seconds since its creation."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.t0 = time.time()

    def seconds(self):
        return int(time.time() - self.t0)

    def step(self, what):
        print(f"{self.prefix}: [{self.seconds()}s] {what}", flush=True)


def cpu_number(kdir):
    """The address of the kernel's per-CPU cpu_number (System.map), hex.

    Linux 6.2 to 6.14 (the classic flavor's 6.12) keep it in struct
    pcpu_hot, after the task pointer and preempt_count: at +12. None when
    neither is there.
    """
    syms = {}
    try:
        with open(Path(kdir) / "System.map", encoding="ascii", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[2] in ("cpu_number", "pcpu_hot"):
                    syms.setdefault(parts[2], int(parts[0], 16))
    except OSError:
        return None
    if "cpu_number" in syms:
        return f"{syms['cpu_number']:x}"
    if "pcpu_hot" in syms:
        return f"{syms['pcpu_hot'] + 12:x}"
    return None


def quantum_qemu(root=ROOT):
    """The patched QEMU of `make qemu` for RR_QUANTUM, or None (said why).

    RR_QUANTUM=Q boots with each vCPU's turn at most Q instructions; that
    QEMU is not built here (about 6 min: scripts/qemu-build.sh).
    """
    q = os.environ.get("RR_QUANTUM", "")
    if not q.isdigit():
        print(f"model: RR_QUANTUM={q}: expected a number of instructions", file=sys.stderr)
        return None
    out = subprocess.run([str(root / "scripts/qemu-build.sh"), "--print-path"],
                         capture_output=True, text=True, check=False)
    path = out.stdout.strip()
    if out.returncode != 0 or not os.access(path, os.X_OK):
        print(f"model: RR_QUANTUM needs the patched QEMU: run 'make qemu' first "
              f"(about 6 min; {path})", file=sys.stderr)
        return None
    return path


def model_qemu_opts(kdir, counts, extra="", root=ROOT):
    """QEMU options for a boot under the cost model's plugin, and its QEMU.

    -icount, the counts file COUNTS, the kernel's cpu_number (the plugin
    finds the running vCPU with it), the plugin arguments EXTRA, then
    MODEL_ARGS from the environment; COSTMODEL_PLUGIN: another build of
    the plugin. With RR_QUANTUM (not 0) the patched QEMU and the plugin
    trusting its vCPU index (vcpu=qemu). Returns (options, VM_QEMU or "")
    or None, said on stderr.
    """
    cn = cpu_number(kdir)
    if cn is None:
        print(f"model: no cpu_number (nor pcpu_hot) in {kdir}/System.map", file=sys.stderr)
        return None
    accel, qemu = "", ""
    if os.environ.get("RR_QUANTUM", "0") not in ("", "0"):
        qemu = quantum_qemu(root)
        if qemu is None:
            return None
        accel = f" -accel tcg,rr-quantum={os.environ['RR_QUANTUM']}"
        extra = f"{extra},vcpu=qemu" if extra else "vcpu=qemu"
    plugin = os.environ.get("COSTMODEL_PLUGIN") or \
        f"{root}/tools/costmodel/target/release/libcostmodel.so"
    args = ",".join(a for a in (f"out={counts}", f"cpu_number=0x{cn}", extra,
                                os.environ.get("MODEL_ARGS", "")) if a)
    return f"-icount shift=0,sleep=off{accel} -plugin {plugin},{args}", qemu
