# SPDX-License-Identifier: GPL-2.0
"""The cost model's plugin in time, against plain -icount.

    python3 -m harness.plugincost [KDIR]   (default: the test kernel)

The same guest work booted under plain -icount, under the plugin counting
instructions only (model=off, the icount boot of make bench), under the
model in order (the server profile's boot) and under the model with the
interval core (core=, the server-ooo profile's boot: make bench's model
boots), each boot also run with no work, so that the work's own CPU time
is the difference. Prints one row per boot: the work's CPU seconds
(QEMU's user and system time, the boot's subtracted) and its multiple of
the first boot's (plain -icount's by default).

The work (WORK, default below: hackbench over sockets, threads and pipes,
300 fork+exec, 128 MB read from /dev/zero) starts with a mark and ends
with one: the model sees memory from the first mark on, as in make bench.
Each step prints a line (the VM's watcher judges progress by output).
About 20 minutes with the default boots.

Environment: WORK (a guest shell command, run in the checkout), BOOTS
("plain off model core"; plainq: plain -icount on the patched QEMU at the
core boot's quantum, what the quantum alone costs), VM_CPUS (2), VM_STALL
(1800: a boot's longest silence, in seconds); RR_QUANTUM, MODEL_ARGS and
COSTMODEL_PLUGIN as harness.lib reads them (COSTMODEL_PLUGIN: another
build of the plugin, to compare two).
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import lib

USAGE = "usage: python3 -m harness.plugincost [KDIR]"
BOOTS = ("plain", "plainq", "off", "model", "core")
MARK = "tools/costmodel/guest/mark"
WORK = (f"{MARK} 1 && hackbench -g 4 -l 50 && hackbench -T -g 4 -l 50 -s 512 && "
        "hackbench -g 4 -l 50 --pipe && for i in $(seq 300); do /bin/true; done && "
        f"dd if=/dev/zero of=/dev/null bs=64k count=2000 && {MARK} 2")
PLAIN = "-icount shift=0,sleep=off"
ROW = "{:<8} {:>10} {:>10} {:>10} {:>8}"


def refuse(boot):
    print(f"plugin-cost: unknown boot '{boot}' ({', '.join(BOOTS)})", file=sys.stderr)


def boot_opts(boot, kdir, counts):
    """(QEMU options, VM_QEMU) of BOOT, its counts in COUNTS; None when
    they cannot be (said on stderr)."""
    if boot == "plain":
        opts = PLAIN, ""
    elif boot == "plainq":
        # Plain -icount on the patched QEMU at make bench's quantum: what
        # the quantum alone costs the core boot, which runs at it.
        q = lib.model_quantum()
        qemu = lib.quantum_qemu(quantum=q)
        opts = (f"{PLAIN} -accel tcg,rr-quantum={q}", qemu) if qemu else None
    elif boot == "off":
        opts = lib.model_qemu_opts(kdir, counts, "model=off")
    elif boot == "model":
        opts = lib.model_qemu_opts(kdir, counts)
    elif boot == "core":
        opts = lib.model_boot_opts(kdir, counts, profile="server-ooo")
    else:
        refuse(boot)
        return None
    # Without a quantum of its own, the QEMU VM_QEMU names (empty: harness.vm's).
    return opts and (opts[0], opts[1] or os.environ.get("VM_QEMU", ""))


def boot_cpu(kdir, cmd, log, env):
    """The CPU seconds (user and system, "%.1f") of one boot of KDIR running
    CMD with ENV (harness.vm's VM_...), its output in LOG; None when the
    guest failed."""
    rc, cpu = lib.wait_cpu(lib.start_vm(kdir, cmd, log, env))
    return None if rc else f"{cpu:.1f}"


def minus(a, b):
    """A - B of two "%.1f" figures, as one."""
    return f"{float(a) - float(b):.1f}"


def times(a, base):
    """A as a multiple of BASE, "%.2f" ("-" for a BASE of nothing)."""
    return f"{float(a) / float(base):.2f}" if float(base) else "-"


def cpu(boot, cmd, kdir, out):
    """The CPU seconds of a BOOT running CMD; None when it failed (said)."""
    opts = boot_opts(boot, kdir, str(out / "counts.txt"))
    if opts is None:
        return None
    # A model boot runs a program 6-8 times slower than plain -icount,
    # more with other work on the host: the watcher's patience to match.
    secs = boot_cpu(kdir, cmd, out / "vm.log", {
        "VM_QEMU": opts[1], "VM_STALL": os.environ.get("VM_STALL") or "1800",
        "VM_QEMU_OPTS": opts[0], "VM_APPEND": "loglevel=4"})
    if secs is None:
        print(f"plugin-cost: the {boot} boot failed:", file=sys.stderr)
        sys.stderr.write(lib.tail(out / "vm.log", 5))
    return secs


def main(argv=None):
    kdir = lib.kernel_argument(sys.argv[1:] if argv is None else argv)
    if kdir is None:
        print(USAGE, file=sys.stderr)
        return 2
    boots = (os.environ.get("BOOTS") or "plain off model core").split()
    unknown = [b for b in boots if b not in BOOTS]
    if unknown:
        refuse(unknown[0])
        return 1
    os.chdir(lib.ROOT)
    work = os.environ.get("WORK") or WORK
    if subprocess.run(["make", "-s", "costmodel"], check=False).returncode:
        return 1
    print(ROW.format("boot", "with work", "boot only", "work", "x plain"), flush=True)
    base = None
    with tempfile.TemporaryDirectory() as tmp:
        for b in boots:
            with_work = cpu(b, f"cd {lib.ROOT} && ({work})", kdir, Path(tmp))
            alone = cpu(b, "true", kdir, Path(tmp)) if with_work else None
            if alone is None:
                return 1
            w = minus(with_work, alone)
            if base is None:
                base = w
            print(ROW.format(b, with_work, alone, w, times(w, base)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
