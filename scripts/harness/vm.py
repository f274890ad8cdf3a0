# SPDX-License-Identifier: GPL-2.0
"""Boots a kernel under virtme-ng with the repo visible and runs a command.

    python3 -m harness.vm KDIR CMD        (make vm CMD=...)

CMD runs as root in the guest; its exit status is this one's. TCG by
default (KVM hangs on this machine kind); KVM=1 uses KVM. The guest is
judged by its progress, not by the clock (harness.vmwatch): stuck when
neither CMD prints a line nor the kernel console shows a KTAP result for
VM_STALL seconds; VM_TIMEOUT bounds the whole run as a last resort. A
stuck guest is asked for its stacks first (vCPU instruction pointers
through QEMU's monitor, SysRq w/l/t), they go to stderr, and the exit
status is 124. The kernel console is kept in a side log, VM_CONSOLE.
CMD's stderr is merged into its stdout.

Environment: VM_CPUS (2), VM_MEM (2G), VM_NUMA (0, or 2 for two nodes),
VM_STALL seconds (300), VM_TIMEOUT seconds (3600; 0: none), VM_CONSOLE
(the console log; default: a temporary file, kept and named when the
guest is stuck), VM_APPEND (extra boot options), VM_QEMU_OPTS, VM_QEMU (the
QEMU binary), VM_RWDIR (a host directory the guest may write), VM_UDEV
(0; 1: udev and systemd-tmpfiles run in the guest, see guest_init), KVM
(0), VNG (the vng to run).
"""

import ctypes
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from harness import vmwatch

# tsc=unstable: the guests keep time with the HPET, never the TSC. Under
# TCG the vCPUs' TSCs are the host's clock read at different moments; 7.3's
# clocksource watchdog checks their skew by a ping-pong between two CPUs
# with interrupts off, and a boot was seen stuck for good there: CPU 0 in
# watchdog_check_skew() waiting for CPU 1, CPUs 1 and 2 in stop_machine()
# (the switch away from tsc-early) waiting for CPU 0, the console silent
# from 3 s on. With the TSC unstable from the start there is no such check
# and no switch; the guests with 4 vCPUs already found the TSC
# unsynchronized and used the HPET.
KARGS = "kunit.enable=1 tsc=unstable"

# QEMU runs through this wrapper (qemu_main). vng reports a QEMU that ended
# before the guest command did only as its own exit 255 (it keeps QEMU's
# status to itself): the wrapper writes the machine run's status (not vng's
# probes of the binary) where the watcher reads it; QEMU also logs CPU
# resets (-d cpu_reset): a guest that resets itself (a triple fault ends
# QEMU with status 0 under vng's -no-reboot) says so there. It also puts
# the guests' own first process, GUEST_INIT, before virtme-ng-init
# (with_init).
QEMU_WRAPPER = """#!{python}
import sys
sys.path.insert(0, {scripts!r})
from harness import vm
sys.exit(vm.qemu_main({qemu!r}, {work!r}, {init!r}, sys.argv[1:]))
"""

# The guests' first process: links the script's I/O ports itself and
# hides udev and systemd-tmpfiles from virtme-ng-init, two thirds of a
# boot's CPU under TCG (see its source). VM_UDEV=1 boots with
# virtme-ng-init alone.
GUEST_INIT = Path(__file__).resolve().parents[1] / "guest" / "init.c"


def guest_init(env):
    """The guest init program, built static the first time (by its source's hash).

    Under RSLUB_CACHE (~/.cache/rslub)/guest-init; None, with a line said,
    when it does not build. Guests that start together may each build it:
    each writes its own file and renames it into place.
    """
    source = GUEST_INIT.read_bytes()
    cache = Path(env.get("RSLUB_CACHE") or Path.home() / ".cache/rslub") / "guest-init"
    init = cache / f"init-{hashlib.sha256(source).hexdigest()[:12]}"
    if init.is_file():
        return init
    cache.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=".init.")
    os.close(fd)
    cc = subprocess.run(["gcc", "-static", "-O2", "-Wall", "-Wextra", "-Werror", "-o", tmp,
                         str(GUEST_INIT)], capture_output=True, text=True, check=False)
    if cc.returncode:
        os.unlink(tmp)
        print(f"vm: the guest init does not build (gcc -static {GUEST_INIT}):\n"
              f"{cc.stderr.strip()}", file=sys.stderr)
        return None
    os.replace(tmp, init)
    return init


def with_init(args, init):
    """QEMU's ARGS with INIT run first: init=INIT in -append, vng's init after.

    Only vng's virtme-ng-init is put behind INIT (as rslub_init_next=,
    which the kernel hands to INIT in its environment); ARGS without it
    come back as they are.
    """
    out = list(args)
    for i in range(len(out) - 1):
        if out[i] != "-append":
            continue
        words = out[i + 1].split(" ")
        for j, w in enumerate(words):
            if w.startswith("init=") and w.endswith("/virtme-ng-init"):
                words[j] = f"init={init} rslub_init_next={w[len('init='):]}"
        out[i + 1] = " ".join(words)
    return out


def qemu_main(qemu, work, init, args):
    """The wrapper's body: QEMU with ARGS; its status, also to WORK/qemu.status."""
    if "-kernel" not in args:
        # vng's probes of the binary.
        os.execv(qemu, [qemu] + args)
    if init:
        args = with_init(args, init)
    rc = subprocess.call([qemu] + args + ["-d", "cpu_reset", "-D", f"{work}/qemu-debug.log"])
    rc = 128 - rc if rc < 0 else rc
    Path(work, "qemu.status").write_text(f"{rc}\n", encoding="utf-8")
    return rc


def mib(size):
    """SIZE as numfmt --from=iec reads it (2G, 320M, 1024), in MiB."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    size = size.strip()
    scale = units.get(size[-1:].upper(), 1)
    number = size[:-1] if size[-1:].upper() in units else size
    return int(float(number) * scale) // (1 << 20)


def vng_args(kdir, env):
    """vng's arguments (before --qemu, --verbose and --exec) for ENV.

    Raises ValueError with a line to print on a shape that cannot be.
    """
    cpus = int(env.get("VM_CPUS") or 2)
    mem = env.get("VM_MEM") or "2G"
    numa = int(env.get("VM_NUMA") or 0)
    kvm = [] if env.get("KVM", "0") == "1" else ["--disable-kvm"]
    if numa <= 1:
        args = ["--run", kdir, "--cpus", str(cpus), "--memory", mem, "--append", KARGS] + kvm
    else:
        # Memory and CPUs split evenly over the nodes.
        per_mem = mib(mem) // numa
        per_cpu = cpus // numa
        if per_cpu < 1:
            raise ValueError(f"vm: VM_CPUS={cpus} is fewer than VM_NUMA={numa} nodes")
        args = ["--run", kdir, "--cpus", str(cpus), "--memory", f"{per_mem * numa}M",
                "--append", KARGS] + kvm
        for n in range(numa):
            first = n * per_cpu
            last = cpus - 1 if n == numa - 1 else first + per_cpu - 1
            args += ["--numa", f"{per_mem}M,cpus={first}-{last}"]
        # One socket per node: QEMU's default puts every CPU in one socket
        # (one LLC), and the kernel warns (topology_sane) when a CPU comes
        # online with an LLC sibling on another node, as CPU hotplug in the
        # stress runs does. QEMU merges this -smp with vng's.
        if cpus % numa == 0:
            args.append(f"--qemu-opts=-smp {cpus},sockets={numa},cores={per_cpu},threads=1")
    if env.get("VM_APPEND"):
        args += ["--append", env["VM_APPEND"]]
    if env.get("VM_RWDIR"):
        args.append(f"--rwdir={env['VM_RWDIR']}")
    if env.get("VM_QEMU_OPTS"):
        args.append(f"--qemu-opts={env['VM_QEMU_OPTS']}")
    return args


def find_vng(env):
    """VNG, vng on PATH, or the one pip put next to the interpreter."""
    return env.get("VNG") or shutil.which("vng") or \
        os.path.join(os.path.dirname(sys.executable), "vng")


def run(kdir, cmd, env=None):
    """Runs CMD in a guest of the kernel in KDIR; the exit status."""
    env = os.environ if env is None else env
    if not os.path.isfile(f"{kdir}/arch/x86/boot/bzImage"):
        print(f"vm: no kernel image in {kdir} (run 'make setup', or pass KDIR=)",
              file=sys.stderr)
        return 2
    try:
        args = vng_args(kdir, env)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    vng = find_vng(env)
    if not os.access(vng, os.X_OK):
        print("vm: vng not found (run 'make setup')", file=sys.stderr)
        return 2
    init = ""
    if env.get("VM_UDEV", "0") != "1":
        init = guest_init(env)
        if not init:
            return 2
    # Held (shared) while the VM runs: setup does not drop a cached kernel
    # build that a VM is booted from (a rebuild for new patches meanwhile).
    built = Path(kdir) / ".rslub-built"
    held = None
    if built.is_file():
        held = open(built, "rb")  # pylint: disable=consider-using-with
        try:
            fcntl.flock(held, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            pass
    work = tempfile.mkdtemp(prefix="rslub-vm.")
    console = env.get("VM_CONSOLE") or f"{work}/console.log"
    open(console, "wb").close()
    qemu = env.get("VM_QEMU") or shutil.which("qemu-system-x86_64") or "qemu-system-x86_64"
    wrapper = Path(work) / "qemu"
    wrapper.write_text(QEMU_WRAPPER.format(python=sys.executable,
                                           scripts=str(GUEST_INIT.parents[1]), qemu=qemu,
                                           work=work, init=str(init or '')), encoding="utf-8")
    wrapper.chmod(0o755)
    # The console on vng's stderr (--verbose: at the default log level), a
    # monitor socket for the watcher; vng passes the --qemu-opts to QEMU last.
    args += ["--qemu", str(wrapper), "--verbose",
             f"--qemu-opts=-monitor unix:{work}/monitor.sock,server=on,wait=off"]
    watch = SimpleNamespace(
        console=console, monitor=f"{work}/monitor.sock",
        stall=int(env.get("VM_STALL") or 300), limit=int(env.get("VM_TIMEOUT") or 3600),
        system_map=f"{kdir}/System.map", qemu_status=f"{work}/qemu.status",
        qemu_log=f"{work}/qemu-debug.log",
        command=[vng] + args + ["--exec", f"exec 2>&1; {cmd}"])
    try:
        rc = vmwatch.supervise(watch)
        if rc == 124 and not env.get("VM_CONSOLE"):
            # Keep the console of a stuck guest.
            fd, keep = tempfile.mkstemp(prefix="rslub-console.")
            os.close(fd)
            shutil.copyfile(console, keep)
            print(f"vm: console log kept: {keep}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if held:
            held.close()
    return rc


PR_SET_CHILD_SUBREAPER = 36


def adopt_orphans():
    """Makes this process the reaper of the descendants that lose their parent.

    A guest stopped by the watcher (its session killed) can leave QEMU
    exiting after vng: adopted, it is waited for here (reap_orphans), so
    that its CPU time reaches whoever waits for this process (make check
    prints each guest's).
    """
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def reap_orphans(at_most=15.0):
    """Waits for the adopted descendants that are left, AT_MOST seconds."""
    deadline = time.monotonic() + at_most
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() > deadline:
                return
            time.sleep(0.1)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python3 -m harness.vm KDIR CMD", file=sys.stderr)
        return 2
    adopt_orphans()
    try:
        return run(argv[0], argv[1])
    finally:
        reap_orphans()


if __name__ == "__main__":
    sys.exit(main())
