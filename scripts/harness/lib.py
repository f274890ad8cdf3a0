# SPDX-License-Identifier: GPL-2.0
"""What the host runs share: the checkout, the kernel and its config, a
step clock, copies of the tree for module builds, the QEMU options of a
boot under the cost model (the only place they are written), a guest's
process and its CPU time, and what the QA runs share (a fresh clone, a
user's environment, their options)."""

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


def test_kdir(root=ROOT):
    """The project's cached test kernel (RSLUB_FLAVOR's, when set), built or
    not: scripts/setup --print-kdir."""
    return subprocess.run([sys.executable, f"{root}/scripts/setup", "--print-kdir"],
                          stdout=subprocess.PIPE, text=True, check=False).stdout.strip()


def kernel_argument(argv):
    """The kernel of a run whose arguments ARGV are [KDIR]: KDIR, else the
    test kernel; None for other arguments (the run prints its usage)."""
    if len(argv) > 1 or argv[:1] and argv[0].startswith("-"):
        return None
    return argv[0] if argv else test_kdir()


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


def minutes(secs):
    """SECS as "M min S s"."""
    return f"{secs // 60} min {secs % 60} s"


# A running make's variables: a command run as a user types it has none of
# them (a nested make would take a KDIR of make's for the user's).
MAKE_VARS = ("KDIR", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")


def user_env(extra=None):
    """This environment without MAKE_VARS, EXTRA added."""
    env = {k: v for k, v in os.environ.items() if k not in MAKE_VARS}
    return {**env, **(extra or {})}


def clone(clock, branch, dest, root=ROOT):
    """Clones ROOT's BRANCH into DEST as a new user would, saying so on
    CLOCK; whether git did."""
    clock.step(f"clone {root} ({branch}) into {dest}")
    if subprocess.run(["git", "clone", "-q", "--branch", branch, str(root), str(dest)],
                      check=False).returncode:
        return False
    head = subprocess.run(["git", "-C", str(dest), "rev-parse", "--short", "HEAD"],
                          stdout=subprocess.PIPE, text=True, check=False).stdout.strip()
    clock.step(f"commit {head}")
    return True


def options(argv, valued=(), flags=()):
    """The arguments ARGV of a QA run: --NAME VALUE for each name of VALUED,
    --NAME for each of FLAGS (True), as a dict by NAME without its dashes.
    Raises ValueError with what is wrong (an unknown argument, a missing
    value)."""
    out, args = {}, list(argv)
    while args:
        arg = args.pop(0)
        if arg in valued:
            if not args:
                raise ValueError(f"{arg} needs a value")
            out[arg[2:]] = args.pop(0)
        elif arg in flags:
            out[arg[2:]] = True
        else:
            raise ValueError(f"unknown argument '{arg}'")
    return out


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


def quantum_qemu(root=ROOT, quantum=None):
    """The patched QEMU of `make qemu` for QUANTUM (RR_QUANTUM), or None.

    RR_QUANTUM=Q boots with each vCPU's turn at most Q instructions; that
    QEMU is not built here (about 6 min: scripts/qemu-build). None is
    said on stderr.
    """
    q = os.environ.get("RR_QUANTUM", "") if quantum is None else quantum
    if not q.isdigit():
        print(f"model: RR_QUANTUM={q}: expected a number of instructions", file=sys.stderr)
        return None
    out = subprocess.run([sys.executable, str(root / "scripts/qemu-build"), "--print-path"],
                         capture_output=True, text=True, check=False)
    path = out.stdout.strip()
    if out.returncode != 0 or not os.access(path, os.X_OK):
        print(f"model: RR_QUANTUM needs the patched QEMU: run 'make qemu' first "
              f"(about 6 min; {path})", file=sys.stderr)
        return None
    return path


def model_qemu_opts(kdir, counts, extra="", root=ROOT, quantum=None):
    """QEMU options for a boot under the cost model's plugin, and its QEMU.

    -icount, the counts file COUNTS, the kernel's cpu_number (the plugin
    finds the running vCPU with it), the plugin arguments EXTRA, then
    MODEL_ARGS from the environment (e.g. strings=iter,rmw=access: each
    rep iteration an access and an atomic's accesses priced on top of it,
    the older counting); COSTMODEL_PLUGIN: another build of the plugin
    (harness.plugincost compares two). With a QUANTUM (default
    RR_QUANTUM; 0 or empty: the distribution's QEMU) the patched QEMU of
    `make qemu`, each vCPU's turn at most QUANTUM instructions (-accel
    tcg,rr-quantum=), and the plugin trusting that QEMU's vCPU index
    (vcpu=qemu), for the vCPUs to interleave finely (docs/benchmarks.md,
    "Two CPUs at once"). Returns (options, VM_QEMU or "") or None, said
    on stderr.
    """
    cn = cpu_number(kdir)
    if cn is None:
        print(f"model: no cpu_number (nor pcpu_hot) in {kdir}/System.map", file=sys.stderr)
        return None
    if quantum is None:
        quantum = os.environ.get("RR_QUANTUM", "")
    accel, qemu = "", ""
    if quantum not in ("", "0"):
        qemu = quantum_qemu(root, quantum)
        if qemu is None:
            return None
        accel = f" -accel tcg,rr-quantum={quantum}"
        extra = f"{extra},vcpu=qemu" if extra else "vcpu=qemu"
    plugin = os.environ.get("COSTMODEL_PLUGIN") or \
        f"{root}/tools/costmodel/target/release/libcostmodel.so"
    args = ",".join(a for a in (f"out={counts}", f"cpu_number=0x{cn}", extra,
                                os.environ.get("MODEL_ARGS", "")) if a)
    return f"-icount shift=0,sleep=off{accel} -plugin {plugin},{args}", qemu


def model_quantum(env=None):
    """The quantum of make bench's model boots: RR_QUANTUM, or 1000 when unset.

    The figures converge from Q = 10000 down, where the distribution's QEMU
    gives a spinner's clock whole slices of waiting (docs/benchmarks.md,
    "Fine interleaving"). "0" (or empty): the distribution's QEMU.
    """
    env = os.environ if env is None else env
    q = env.get("RR_QUANTUM", "1000")
    return q if q else "0"


def model_profile(env=None):
    """The profile make bench prices its model boots with: MODEL_PROFILE.

    Default server-ooo: the server's prices on an interval core, which
    hides what an out-of-order core overlaps; `server` prices in order,
    every access one after another.
    """
    env = os.environ if env is None else env
    return env.get("MODEL_PROFILE") or "server-ooo"


def model_boot_opts(kdir, counts, extra="", root=ROOT, profile=None):
    """model_qemu_opts for a make bench boot: (options, VM_QEMU or "") or None.

    With the plugin's core= of PROFILE (default model_profile) when it is
    an interval core (costmodel-price --core; nothing for an in-order
    profile), so that the counts can be priced under it and under the
    in-order profiles, the vCPUs' clocks timed with the same profile, at
    the quantum of model_quantum.
    """
    profile = profile or model_profile()
    out = subprocess.run([f"{root}/tools/costmodel/target/release/costmodel-price",
                          "--profile", profile, "--core"],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        print(f"model: no profile '{profile}' in tools/costmodel/profiles.toml", file=sys.stderr)
        return None
    core = out.stdout.strip()
    args = [a for a in (extra, f"core={core}" if core else "", f"profile={profile}") if a]
    return model_qemu_opts(kdir, counts, ",".join(args), root, model_quantum())


# What a copy of the tree for a module build leaves out: git data, results
# and build outputs. The outputs already in the copy are excluded from
# --delete too, so that a rebuild there is incremental.
COPY_EXCLUDES = ["/results", "target", ".git", "*.o", "*.ko", "*.cmd", "*.mod", "*.mod.c",
                 "*.bc", "Module.symvers", "modules.order", "/rust/shim_bindings.rs"]


def start_vm(kdir, cmd, log, env=None, root=ROOT):
    """Starts one guest of the kernel in KDIR running CMD (harness.vm).

    Its output, both streams, goes to the file LOG; ENV (the VM_...
    settings of harness.vm) is added to this process's environment, an
    empty value as good as unset. Returns the process: wait_cpu gives its
    exit status and CPU time, as the shell's `time` gave them.
    """
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(Path(root) / "scripts")}
    with open(log, "wb") as f:
        return subprocess.Popen([sys.executable, "-m", "harness.vm", str(kdir), cmd], env=env,
                                stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT)


def wait_cpu(p):
    """Waits for P: (its exit status, the CPU seconds of it and its children).

    The CPU time is None when P was reaped elsewhere (make check's stop_all's
    poll).
    """
    try:
        _, status, used = os.wait4(p.pid, 0)
    except ChildProcessError:
        return p.wait(), None
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, used.ru_utime + used.ru_stime


def read(path):
    """The text of the file PATH, or "" when it is not there."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def tail(path, n):
    """The last N lines of the file PATH, as `tail -n N` prints them ("" when
    it is not there)."""
    return "".join(line + "\n" for line in read(path).splitlines()[-n:])


def copy_tree(dest, root=ROOT):
    """Copies the checkout into DEST for a module build of its own (rsync).

    make bench's builds (each build variant, another kernel) and make
    trace-pair's. Returns rsync's exit status.
    """
    os.makedirs(dest, exist_ok=True)
    args = ["rsync", "-a", "--delete"]
    for e in COPY_EXCLUDES:
        args += ["--exclude", e]
    return subprocess.run(args + [f"{root}/", f"{dest}/"], check=False).returncode
