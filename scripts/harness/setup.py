# SPDX-License-Identifier: GPL-2.0
"""Installs rslub's toolchain from the package registries and builds the
cached Rust-enabled test kernel. Idempotent: every step checks first and
skips what is already there, so a second run finishes in seconds.

    scripts/setup [--flavor test|bench|classic|debug] [--no-patches] [--print-kdir]
                  [--tools-only] [--dry-run] [--apply-patches KERNEL_SOURCE_DIR]

(or python3 -m harness.setup, with PYTHONPATH=scripts). Environment:
RSLUB_CACHE (default ~/.cache/rslub), JOBS (default nproc+1),
RSLUB_FLAVOR (the flavor when --flavor is not given; make ... DEBUG=1
sets debug: the test flavor with the memory debuggers, config/debug.config,
cached apart), RSLUB_SETUP_DRY_RUN.

--dry-run (or RSLUB_SETUP_DRY_RUN=1 in the environment, which reaches a
setup run by a nested make) prints the decisions ("tools: ...", "kernel
...: build|cached ...", or a "setup: FAILED:" line for each missing
prerequisite) and changes nothing: harness.setuplogic checks them.

--no-patches builds the flavor without patches/ (and without the options
only they provide), cached as FLAVOR-unpatched: the kernel that measures
what the patches cost with nothing served (docs/benchmarks.md).

Both flavors are built with LLVM (the major of rustc's LLVM) and
CONFIG_RUST_INLINE_HELPERS, so that rslub's C shim is inlined into its
Rust (see Kbuild); the toolchain is part of the cache key.

--flavor classic is Linux 6.12 (linux-source-6.12, bookworm-security): the
last C SLUB of the classic design rslub implements (per-CPU slabs, the tid
cmpxchg16b fast path, CPU partial lists; 7.0 replaced it with sheaves), for
make bench SUITE=classic. Only the C bench module runs on it, so it has no
Rust and no patches; it is built with the same LLVM as the 7.3 flavors (the
same compiler on every side of the comparison) from the bench flavor's
fragments, minus the options 6.12 lacks, plus config/classic.config.

The cache key of a kernel (its directory's name, VERSION-LABEL-HASH) must
stay byte for byte what it was: a changed key costs every user a kernel
rebuild. tests/test_setup.py checks it against the shell pipeline it was
first computed with.
"""

import fcntl
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from harness import lib
from harness.steps import (Failed, Steps, dpkg_ge, dpkg_version, output, pkg_installed,
                           second_field)
from harness import steps as st

USAGE = ("usage: scripts/setup [--flavor test|bench|classic|debug] [--no-patches] "
         "[--print-kdir] [--tools-only] [--dry-run] [--apply-patches KERNEL_SOURCE_DIR]")
FLAVORS = ("test", "bench", "classic", "debug")
KVER_MAJOR = "7.3"
# The classic flavor's source (bookworm-security: default apt sources).
CLASSIC_KVER = "6.12"
# When rustc cannot say its LLVM.
DEFAULT_LLVM_MAJOR = "22"
BINDGEN_MIN = "0.71.1"
# What the package linux-source-VERSION installs.
SRC_TARBALL = "/usr/src/linux-source-{}.tar.xz"

# The options that exist only with patches/ applied.
PATCH_OPTIONS = rb"CONFIG_SLAB_BACKEND="
# The options of base.config that 6.12 lacks (RUST_INLINE_HELPERS, the
# patches' SLAB_BACKEND) or that the classic flavor does not need (RUST:
# only the C bench module runs there, and 6.12 predates this rustc).
# harness.kconfig would fail on each of them; "is not set" lines of
# unknown options are harmless and stay.
CLASSIC_DROP = rb"CONFIG_(RUST|RUST_INLINE_HELPERS|SLAB_BACKEND)="

# The key reads the fragments' options, not their comments or blank lines
# ("# CONFIG_X is not set" is an option): a comment's edit rebuilds nothing.
# (awk '/^# CONFIG_[A-Za-z0-9_]+ is not set/ || !/^[[:space:]]*(#|$)/')
NOT_SET = re.compile(rb"# CONFIG_[A-Za-z0-9_]+ is not set")
COMMENT_OR_BLANK = re.compile(rb"[" + re.escape(st.SPACE) + rb"]*(#|\Z)")


def apt_packages(llvm_suffix):
    """The Debian packages setup installs by name (the default suites).

    The last line: the real workloads the guest runs (make bench
    SUITE=real, make stress SERVE=1, make check), bookworm's own:
    hackbench (rt-tests), iperf3, stress-ng (and perf 6.12 from
    bookworm-backports: install_packages), and gdb, which make trace-pair
    attaches to QEMU's gdb stub. The guest boots on the host's root
    filesystem.
    """
    s = llvm_suffix
    return ("bc flex bison libelf-dev libssl-dev cpio xz-utils make gcc patch procps python3 "
            "udev rsync kmod fonts-dejavu-core "
            f"clang{s} lld{s} llvm{s} libclang{s}-dev "
            "rt-tests iperf3 stress-ng gdb").split()


# Added under /etc/apt when missing.
SOURCES = "/etc/apt/sources.list.d/rslub-backports.sources"
SOURCES_TEXT = """\
# Added by rslub scripts/setup: the 7.3 kernel source, rust-src and QEMU.
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie-backports bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""
# Low priority: nothing upgrades from these suites unless named.
PIN = "/etc/apt/preferences.d/rslub-backports"
PIN_TEXT = """\
Package: *
Pin: release n=trixie-backports
Pin-Priority: 50

Package: *
Pin: release n=bookworm-backports
Pin-Priority: 50
"""

# pip_can_install: python3 has pip, and pip may install into its
# environment (a distribution's Python carries PEP 668's EXTERNALLY-MANAGED
# marker and refuses, unless in a venv).
PIP_CAN_INSTALL = """
import importlib.util, os, sys, sysconfig
marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
refused = sys.prefix == sys.base_prefix and os.path.isfile(marker) and \\
    not os.environ.get("PIP_BREAK_SYSTEM_PACKAGES")
sys.exit(importlib.util.find_spec("pip") is None or refused)"""
# pip puts vng next to the interpreter, which need not be on PATH.
VNG_BESIDE_PYTHON = ('import os, sys; p = os.path.join(os.path.dirname(sys.executable), "vng"); '
                     'print(p if os.access(p, os.X_OK) else "")')

NO_VNG = ("no vng, and python3 cannot pip install virtme-ng (no pip, or a distribution's "
          "Python: PEP 668); put a pyenv or venv python3 first on PATH, or install "
          "virtme-ng yourself")


# The cache key and the fragments: what goes into a kernel's name.

def fragment(data, flavor, no_patches):
    """A config fragment's bytes DATA as a build of FLAVOR uses them: the
    classic flavor without CLASSIC_DROP's options, --no-patches without
    PATCH_OPTIONS' (each as `grep -vE` gives it), else as it is (`cat`)."""
    if flavor == "classic":
        return st.grep_v(data, CLASSIC_DROP)
    if no_patches:
        return st.grep_v(data, PATCH_OPTIONS)
    return data


def fragment_names(flavor):
    """The flavor's fragments (config/NAME.config), in the order they are
    merged: the classic one is the bench flavor's (the same bench-relevant
    options on both kernels) plus its own."""
    if flavor == "classic":
        return ["base", "bench", "classic"]
    if flavor == "debug":
        return ["base", "test", "debug"]
    return ["base", flavor]


def label(flavor, no_patches):
    """The cache's name for the flavor (its stale builds are dropped)."""
    return f"{flavor}-unpatched" if no_patches else flavor


def patched(flavor, no_patches):
    """Whether patches/ go into the tree (and the key)."""
    return not no_patches and flavor != "classic"


def options_only(data):
    """The lines of DATA (bytes) that set an option, comments and blank
    lines left out ("# CONFIG_X is not set" is an option), each ended by a
    newline, as awk prints them."""
    return b"".join(line + b"\n" for line in st.split_lines(data)
                    if NOT_SET.match(line) or not COMMENT_OR_BLANK.match(line))


def key_text(ver, llvm_suffix, fragments, patches=None):
    """What a kernel's key hashes: "VER LLVM=SUFFIX", the options of the
    FRAGMENTS (their bytes as the build uses them, in order, read as one
    stream as `cat` joins them), then PATCHES (their bytes, joined) when
    the build is patched."""
    return (f"{ver} LLVM={llvm_suffix}\n".encode() + options_only(b"".join(fragments)) +
            (patches or b""))


def kernel_key(ver, lbl, text):
    """The key of a kernel: VERSION-LABEL-HASH, HASH of its key_text TEXT."""
    return f"{ver}-{lbl}-{st.short_hash(text)}"


def llvm_major(verbose):
    """The major of the LLVM in `rustc --version --verbose`'s VERBOSE, ""
    when it says none."""
    for line in verbose.split("\n"):
        if line.startswith("LLVM version"):
            fields = line.split()
            return fields[2].split(".")[0] if len(fields) > 2 else ""
    return ""


def failed_hunk(out):
    """What a patch's failed `patch --dry-run` output OUT says went wrong:
    "FILE: the FAILED (or malformed) line", "FILE: no such file" for a
    file the tree lacks, else OUT's last line."""
    name, missing = "", False
    for line in out.split("\n"):
        fields = line.split()
        if line.startswith("checking file"):
            name = fields[2] if len(fields) > 2 else ""
        if "FAILED" in line or "malformed" in line:
            return f"{name}: {line}"
        if re.search(r"can.t find file", line):
            missing = True
        if missing and line.startswith("|+++ "):
            return f"{line.removeprefix('|+++ b/')}: no such file"
    lines = out.rstrip("\n").split("\n")
    return lines[-1]


DIGITS = "0123456789"


def order(c):
    """A character's rank where a version's non-digit parts are compared
    (sort -V): a digit (the other's part is longer) as the end, letters
    first, ~ before both."""
    if c in DIGITS:
        return 0
    if c.isascii() and c.isalpha():
        return ord(c)
    return -1 if c == "~" else ord(c) + 256


def verrevcmp(a, b):
    """<0, 0, >0 as version A sorts before, with or after B: non-digit runs
    by character (letters before the rest, ~ before all, even the end),
    digit runs by number (GNU sort -V's comparison)."""
    i = j = 0
    while i < len(a) or j < len(b):
        while (i < len(a) and a[i] not in DIGITS) or (j < len(b) and b[j] not in DIGITS):
            ca = order(a[i]) if i < len(a) else 0
            cb = order(b[j]) if j < len(b) else 0
            if ca != cb:
                return ca - cb
            i, j = i + 1, j + 1
        m, n = i, j
        while i < len(a) and a[i] in DIGITS:
            i += 1
        while j < len(b) and b[j] in DIGITS:
            j += 1
        da, db = a[m:i].lstrip("0"), b[n:j].lstrip("0")
        if len(da) != len(db):
            return len(da) - len(db)
        if da != db:
            return -1 if da < db else 1
    return 0


def version_ge(version, least):
    """Whether VERSION is LEAST or newer: LEAST sorts first of the two by
    `sort -V` (equal versions by their bytes, as sort breaks the tie)."""
    c = verrevcmp(least, version)
    return c < 0 or c == 0 and least.encode() <= version.encode()


def os_codename(path="/etc/os-release"):
    """VERSION_CODENAME of the os-release file PATH ("" without one)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return ""
    name = ""
    for line in text.split("\n"):
        if line.startswith("VERSION_CODENAME="):
            try:
                name = "".join(shlex.split(line.split("=", 1)[1]))
            except ValueError:
                name = ""
    return name


class Setup:
    """A setup run: its options, its machine, its steps."""

    def __init__(self, root, flavor, no_patches=False, print_kdir=False, tools_only=False,
                 dry_run=False):
        self.root, self.flavor, self.no_patches = str(root), flavor, no_patches
        self.print_kdir, self.tools_only, self.dry_run = print_kdir, tools_only, dry_run
        self.classic = flavor == "classic"
        # The classic flavor: its own source and fragments, never patches/
        # (they are written against 7.3); cached as "classic".
        self.kver = CLASSIC_KVER if self.classic else KVER_MAJOR
        self.cache = st.cache_dir()
        self.logdir = f"{self.cache}/logs"
        self.jobs = st.jobs()
        self.steps = Steps("setup", quiet=print_kdir)
        self.seeded = False
        # Empty without rustc (the prerequisites say what is missing).
        self.rustc_ver = second_field(output(["rustc", "--version"], stderr=subprocess.DEVNULL))
        # The kernel is built with the LLVM whose major matches rustc's
        # (needed by CONFIG_RUST_INLINE_HELPERS); bindgen loads the same
        # libclang.
        major = llvm_major(output(["rustc", "--version", "--verbose"], stderr=subprocess.DEVNULL))
        self.llvm = f"-{major or DEFAULT_LLVM_MAJOR}"
        os.environ["LIBCLANG_PATH"] = f"/usr/lib/llvm{self.llvm}/lib"

    def say(self, what):
        self.steps.say(what)

    def fail(self, why):
        self.steps.fail(why)

    def run(self, step, log, action, **kw):
        self.steps.run(step, log, action, **kw)

    # The key.

    def label(self):
        return label(self.flavor, self.no_patches)

    def patched(self):
        return patched(self.flavor, self.no_patches)

    def patches(self):
        """patches/*.patch, in the order they apply."""
        return sorted(glob.glob(f"{glob.escape(self.root)}/patches/*.patch"))

    def fragments(self):
        """[(name, bytes as this build uses them)] of the flavor's fragments."""
        out = []
        for name in fragment_names(self.flavor):
            with open(f"{self.root}/config/{name}.config", "rb") as f:
                out.append((name, fragment(f.read(), self.flavor, self.no_patches)))
        return out

    def key(self):
        ver = dpkg_version(f"linux-source-{self.kver}")
        ver = "none" if ver is None else ver
        patches = None
        if self.patched():
            patches = b"".join(read_bytes(p) for p in self.patches())
        text = key_text(ver, self.llvm, [data for _, data in self.fragments()], patches)
        return kernel_key(ver, self.label(), text)

    # prerequisites: what setup needs and does not install itself, checked
    # before it changes anything (in a dry run too: harness.setuplogic checks
    # the refusals). Each missing one is a line of its own, then setup stops.
    # rust-src is not among them: setup installs Debian's package of rustc's
    # exact version, and says so when there is none (install_packages).
    # (The commands uname and id, not os.uname() and os.getuid():
    # harness.setuplogic plays other hosts with stand-ins for them on PATH.)

    def missing_prerequisites(self):
        why = []
        machine = output(["uname", "-m"]).strip()
        if machine != "x86_64":
            why.append(f"unsupported host: {machine}; rslub needs x86_64 (cmpxchg16b)")
        if not shutil.which("apt-get") or not shutil.which("dpkg-query"):
            why.append("unsupported host: no apt-get; setup installs Debian packages")
        else:
            # The suites setup adds and pins (bookworm-backports,
            # trixie-backports) and those it installs from by default
            # (bookworm-security) are chosen for Debian 12.
            release = os_codename()
            if release != "bookworm":
                why.append(f"unsupported host: '{release or 'unknown'}' is not Debian 12 "
                           "(bookworm), whose suites setup installs from")
        # vng runs the guest command as the host user, and the guests load modules.
        if output(["id", "-u"]).strip() != "0":
            why.append("not root: setup installs packages and writes under /etc/apt, and the "
                       "guests load modules as this user")
        for tool in ("rustc", "cargo"):
            if not shutil.which(tool):
                why.append(f"no {tool} on PATH or in ~/.cargo/bin (install Rust with rustup "
                           "first)")
        if not find_vng() and not pip_can_install():
            why.append(NO_VNG)
        return why

    def prerequisites(self):
        why = self.missing_prerequisites()
        if why:
            raise Failed("\n".join(f"setup: FAILED: {w}" for w in why))

    # The tools.

    def apt_sources(self):
        """The suites setup installs from named (SOURCES) and pinned low
        (PIN), when they are not; the package index refreshed then, and
        once in the cache's life."""
        changed = False
        for path, text in ((SOURCES, SOURCES_TEXT), (PIN, PIN_TEXT)):
            if not os.path.isfile(path):
                try:
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(text)
                except OSError as e:
                    self.fail(f"cannot write {path}: {e.strerror}")
                changed = True
        stamp = f"{self.cache}/.apt-updated"
        if changed or not os.path.isfile(stamp):
            self.run("apt-get update", f"{self.logdir}/apt-update.log", ["apt-get", "update"])
            os.makedirs(self.cache, exist_ok=True)
            touch(stamp)

    def missing_packages(self):
        """The packages to install, each as apt-get install is to be given it."""
        missing = [p for p in apt_packages(self.llvm) if not pkg_installed(p)]
        if not pkg_installed(f"linux-source-{KVER_MAJOR}"):
            missing.append(f"linux-source-{KVER_MAJOR}/trixie-backports")
        # perf bench syscall fork and execve (make bench SUITE=real):
        # bookworm's linux-perf (6.1) has only 'syscall basic';
        # bookworm-backports' 6.12 has both and installs on bookworm's libc.
        # A 6.1 already installed (the machine's own) is upgraded: the suite
        # is named.
        perf = dpkg_version("linux-perf") or ""
        if not pkg_installed("linux-perf") or not dpkg_ge(perf, "6.12"):
            missing.append("linux-perf/bookworm-backports")
        # The classic flavor's 6.12 source comes from bookworm-security, one
        # of the machine's default suites (no pin, no suite named); only
        # that flavor needs it (make bench SUITE=classic), so only it
        # installs it.
        if self.classic and not pkg_installed(f"linux-source-{CLASSIC_KVER}"):
            missing.append(f"linux-source-{CLASSIC_KVER}")
        # QEMU 10 from bookworm-backports (bookworm's 7.2 crashes on KVM MSR
        # setup); its own dependencies must come from the same suite, so
        # they are named too.
        if not pkg_installed("qemu-system-x86"):
            missing += [f"{p}/bookworm-backports" for p in (
                "qemu-system-x86", "qemu-system-common", "qemu-system-data", "seabios")]
        if not os.path.isdir(f"/usr/src/rustc-{self.rustc_ver}/library"):
            self.apt_sources()
            v = rust_src_version(output(["apt-cache", "madison", "rust-src"],
                                        stderr=subprocess.DEVNULL), self.rustc_ver)
            if not v:
                self.fail(f"unsupported host: no rust-src package matching rustc "
                          f"{self.rustc_ver} in the registry (apt-cache madison rust-src)")
            missing.append(f"rust-src={v}")
        return missing

    def install_packages(self):
        missing = self.missing_packages()
        if not missing:
            self.say("Debian packages: present")
            return
        self.apt_sources()
        # iperf3 asks (debconf, priority high) whether to run as a daemon;
        # its default is no, and noninteractive takes it: said explicitly
        # so that no service is ever started on the host.
        if "iperf3" in missing:
            answer = "iperf3 iperf3/start_daemon boolean false\n"
            try:
                rc = subprocess.run(["debconf-set-selections"], input=answer.encode(),
                                    check=False).returncode
            except OSError:
                rc = 127
            if rc:
                self.fail("debconf-set-selections: could not say no to iperf3's daemon")
        install = ["apt-get", "install", "-y", "--no-install-recommends", *missing]
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}

        # A stale package index (kept machine) fails the install: refresh once.
        def install_or_refresh(log):
            return st.call(install, log, env=env) == 0 or (
                st.call(["apt-get", "update"], log) == 0 and st.call(install, log, env=env) == 0)
        self.run(f"apt-get install {' '.join(missing)}", f"{self.logdir}/apt-install.log",
                 install_or_refresh)

    def start_bindgen(self):
        """Installs bindgen when missing or older than BINDGEN_MIN, in the
        background; returns what to wait() for (None: nothing started)."""
        v = second_field(output(["bindgen", "--version"], stderr=subprocess.DEVNULL))
        if v and version_ge(v, BINDGEN_MIN):
            self.say(f"bindgen {v}: present")
            return None
        # bindgen-cli loads libclang at run time: it builds without it.
        return self.steps.start("cargo install bindgen-cli (about 3 min, beside the packages)",
                                f"{self.logdir}/bindgen.log",
                                ["cargo", "install", "bindgen-cli", "--locked"])

    def install_vng(self):
        if find_vng():
            self.say("virtme-ng: present")
            return
        if not shutil.which("python3"):
            self.fail("unsupported host: no python3 (needed for virtme-ng)")
        log = f"{self.logdir}/pip.log"
        self.run("pip install virtme-ng", log, ["python3", "-m", "pip", "install", "virtme-ng"])
        if not find_vng():
            self.fail(f"virtme-ng installed but no vng command found (log: {log})")

    # Kernel: extracted and built once per (version, flavor, fragment
    # contents, patches).

    def apply_patches(self, kdir):
        """Applies patches/*.patch to KDIR in order (each explained in its
        header). A source package that no longer takes one stops setup with
        one line naming the patch and the hunk that failed."""
        for p in self.patches():
            name = os.path.basename(p)
            rc, out = patch(kdir, p, "--dry-run", capture=True)
            if rc:
                hunk = failed_hunk(out.rstrip("\n"))
                self.fail(f"patch {name} does not apply to linux-source-{self.kver}: {hunk}")
            if patch(kdir, p, "--quiet")[0]:
                self.fail(f"patch {name} failed to apply")

    def seed_tree(self, kdir, key):
        """Starts KDIR of a new KEY of a flavor whose build of the same
        source is cached (only patches/ or a fragment changed) from a copy
        of that build, with the patches it recorded taken off (unpatch):
        make then rebuilds what changed, a few minutes instead of a cold
        build. False, leaving no KDIR, when there is no such build or its
        patches do not come off; the caller then extracts the source
        afresh."""
        lbl = self.label()
        ver = key[:key.rindex(f"-{lbl}-")]
        for old in sorted(glob.glob(f"{glob.escape(self.cache)}/kernel/"
                                    f"{glob.escape(ver)}-{glob.escape(lbl)}-{HEX12}")):
            if old == kdir or not os.path.isfile(f"{old}/.rslub-built") or not (
                    os.path.isfile(f"{old}/.rslub-patches") or
                    os.path.isdir(f"{old}/.rslub-patches.d")):
                continue
            shutil.rmtree(kdir, ignore_errors=True)
            if subprocess.run(["cp", "-a", old, kdir], check=False).returncode == 0:
                for stamp in (".rslub-built", ".rslub-extracted"):
                    remove(f"{kdir}/{stamp}")
                if unpatch(kdir):
                    self.say(f"start from the cached build {os.path.basename(old)} "
                             "(make rebuilds what changed)")
                    self.seeded = True
                    return True
            shutil.rmtree(kdir, ignore_errors=True)
            self.say(f"the cached build {os.path.basename(old)} cannot be reused: "
                     "extract afresh")
        return False

    def build_kernel(self):
        key = self.key()
        kdir = f"{self.cache}/kernel/{key}"
        if self.print_kdir:
            print(kdir, flush=True)
            return
        if os.path.isfile(f"{kdir}/.rslub-built"):
            self.say(f"kernel {key}: cached at {kdir}")
            return
        if self.dry_run:
            self.say(f"kernel {key}: build into {kdir}")
            return
        tarball = SRC_TARBALL.format(self.kver)
        if not os.path.isfile(tarball):
            self.fail(f"kernel source {tarball} missing (package linux-source-{self.kver})")
        log = f"{self.logdir}/kernel-{key}"
        if not os.path.isfile(f"{kdir}/.rslub-extracted"):
            self.extract(kdir, key, tarball, log)
        os.environ["RUST_LIB_SRC"] = f"/usr/src/rustc-{self.rustc_ver}/library"
        os.environ["LLVM"] = self.llvm
        with tempfile.TemporaryDirectory() as frag:
            files = []
            for name, data in self.fragments():
                with open(f"{frag}/{name}.config", "wb") as f:
                    f.write(data)
                files.append(f"{frag}/{name}.config")
            self.run(f"configure kernel ({self.label()}, LLVM={self.llvm})", f"{log}-config.log",
                     [sys.executable, f"{self.root}/scripts/kconfig", kdir, *files])
        cold = "about 20 min cold on 2 cores"
        if self.classic:
            cold = "20 min cold beside VMs, 11 of CPU; no Rust"
        if self.seeded:
            cold = "only what changed: 1-5 min"
        t0 = int(time.time())
        self.run(f"build kernel {key} with -j{self.jobs} ({cold})", f"{log}-build.log",
                 ["make", "-C", kdir, f"-j{self.jobs}", "all"])
        self.say(f"kernel built in {lib.minutes(int(time.time()) - t0)}")
        touch(f"{kdir}/.rslub-built")
        self.drop_stale(kdir)
        self.say(f"kernel ready: {kdir}")

    def extract(self, kdir, key, tarball, log):
        """KDIR made the source of KEY: seeded or extracted, patched, and
        what is applied recorded (.rslub-patches.d/, for seed_tree to take
        off for the next key)."""
        if not self.seed_tree(kdir, key):
            shutil.rmtree(kdir, ignore_errors=True)
            os.makedirs(kdir)
            self.run("extract kernel source", f"{log}-extract.log",
                     ["tar", "-xf", tarball, "-C", kdir, "--strip-components=1"])
        if self.classic:
            self.say("no patches applied (the classic flavor has none)")
        elif self.no_patches:
            self.say("no patches applied (--no-patches)")
        else:
            self.say(f"apply patches/ ({len(self.patches())} patch)")
            self.apply_patches(kdir)
        remove(f"{kdir}/.rslub-patches")
        shutil.rmtree(f"{kdir}/.rslub-patches.d", ignore_errors=True)
        os.mkdir(f"{kdir}/.rslub-patches.d")
        if self.patched():
            for p in self.patches():
                shutil.copy(p, f"{kdir}/.rslub-patches.d/")
        touch(f"{kdir}/.rslub-extracted")

    def drop_stale(self, kdir):
        """Drops the stale builds of the flavor so the cache does not grow
        without bound. One a VM is booted from (harness.vm holds a lock on
        its .rslub-built) stays until the next build."""
        pattern = f"{glob.escape(self.cache)}/kernel/*-{glob.escape(self.label())}-{HEX12}"
        for old in sorted(glob.glob(pattern)):
            if old == kdir or not os.path.isdir(old):
                continue
            if in_use(f"{old}/.rslub-built"):
                self.say(f"kept {os.path.basename(old)}: a VM runs from it")
                continue
            shutil.rmtree(old, ignore_errors=True)
            if os.path.lexists(old):
                self.say(f"could not remove all of {os.path.basename(old)}: left for the "
                         "next build")

    def tools(self):
        """The packages, bindgen and virtme-ng, each installed when missing.

        bindgen-cli compiles for minutes and needs nothing from apt (gcc is
        there): it builds beside the package installs.
        """
        os.makedirs(self.logdir, exist_ok=True)
        bindgen = self.start_bindgen()
        self.install_packages()
        self.install_vng()
        if bindgen:
            bindgen.wait()


HEX12 = "[0-9a-f]" * 12


def rust_src_version(madison, rustc_ver):
    """The first version of rust-src in `apt-cache madison rust-src`'s
    MADISON that is rustc RUSTC_VER's ("1.95.0+dfsg1-..."), or ""."""
    for line in madison.split("\n"):
        fields = line.split()
        if len(fields) > 2 and re.match(re.escape(rustc_ver) + r"[+]", fields[2]):
            return fields[2]
    return ""


def pip_can_install():
    try:
        return subprocess.run(["python3", "-c", PIP_CAN_INSTALL], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              check=False).returncode == 0
    except OSError:
        return False


def find_vng():
    """The vng command: on PATH, or beside PATH's python3 (where pip puts
    it); "" without one."""
    return shutil.which("vng") or output(["python3", "-c", VNG_BESIDE_PYTHON],
                                         stderr=subprocess.DEVNULL).strip()


def unpatch(kdir):
    """Takes off the patches KDIR recorded, the last first (.rslub-patches.d/;
    a build of an older setup recorded them as one file, .rslub-patches,
    of one patch); whether they came off."""
    recorded = f"{kdir}/.rslub-patches.d"
    if os.path.isdir(recorded):
        files = [f"{recorded}/{p}" for p in sorted(os.listdir(recorded), reverse=True)]
    elif os.path.isfile(f"{kdir}/.rslub-patches") and os.path.getsize(f"{kdir}/.rslub-patches"):
        files = [f"{kdir}/.rslub-patches"]
    else:
        files = []
    return not any(patch(kdir, p, "-R", "-E", "--quiet", quiet=True)[0] for p in files)


def patch(kdir, path, *args, capture=False, quiet=False):
    """`patch -d KDIR -p1 --fuzz=0 --batch ARGS <PATH`: (its exit status,
    its output when CAPTURE, both streams); QUIET: its stdout dropped."""
    out = subprocess.PIPE if capture else subprocess.DEVNULL if quiet else None
    try:
        with open(path, "rb") as f:
            done = subprocess.run(["patch", "-d", kdir, "-p1", "--fuzz=0", "--batch", *args],
                                  stdin=f, stdout=out,
                                  stderr=subprocess.STDOUT if capture else None, check=False)
    except OSError as e:
        return 127, f"patch: {e.strerror}"
    return done.returncode, (done.stdout or b"").decode("utf-8", "replace")


def in_use(built):
    """Whether a VM holds the lock on the file BUILT (flock -x -n fails)."""
    try:
        with open(built, "rb") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
    except OSError:
        pass
    return False


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def touch(path):
    with open(path, "ab"):
        os.utime(path)


def remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def parse(argv, env):
    """The options of ARGV: a dict, or a str saying what is wrong."""
    opts = {"flavor": env.get("RSLUB_FLAVOR") or "test", "no_patches": False,
            "print_kdir": False, "tools_only": False,
            "dry_run": env.get("RSLUB_SETUP_DRY_RUN", "0") == "1", "apply_to": None}
    flags = {"--no-patches": "no_patches", "--print-kdir": "print_kdir",
             "--tools-only": "tools_only", "--dry-run": "dry_run"}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in flags:
            opts[flags[arg]] = True
        elif arg in ("--flavor", "--apply-patches"):
            if not args:
                return f"{arg} needs a value"
            opts["flavor" if arg == "--flavor" else "apply_to"] = args.pop(0)
        else:
            return f"unknown argument '{arg}'"
    if opts["flavor"] not in FLAVORS:
        return f"unknown flavor '{opts['flavor']}' ({'|'.join(FLAVORS)})"
    return opts


def setup(argv, root):
    opts = parse(argv, os.environ)
    if isinstance(opts, str):
        print(f"setup: {opts}\n{USAGE}", file=sys.stderr)
        return 2
    os.environ["PATH"] = st.cargo_path()
    s = Setup(root, opts["flavor"], opts["no_patches"], opts["print_kdir"], opts["tools_only"],
              opts["dry_run"])
    if s.classic and s.no_patches:
        s.fail("--no-patches: the classic flavor has no patches")
    if s.print_kdir:
        s.build_kernel()
        return 0
    if opts["apply_to"]:
        s.apply_patches(opts["apply_to"])
        s.say(f"patches applied to {opts['apply_to']}")
        return 0
    s.prerequisites()
    if s.dry_run:
        s.say("tools: check and install what is missing")
        if s.tools_only:
            s.say("kernel: not set up (tools only)")
        else:
            s.build_kernel()
        return 0
    s.tools()
    if not s.tools_only:
        s.build_kernel()
    s.say("done")
    return 0


def main(argv=None, root=None):
    argv = sys.argv[1:] if argv is None else argv
    return st.main(lambda a: setup(a, root or lib.ROOT), argv)


if __name__ == "__main__":
    sys.exit(main())
