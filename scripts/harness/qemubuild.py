# SPDX-License-Identifier: GPL-2.0
"""Builds a patched qemu-system-x86_64 of exactly the QEMU version setup
installs (Debian's qemu-system-x86 from bookworm-backports), with
patches/qemu/*.patch applied, and caches it. Not part of make setup or
make check: run it (make qemu) when a script needs the patched binary.

    scripts/qemu-build [--print-path]     (or python3 -m harness.qemubuild)

Prints progress on stderr and the binary's path on stdout (the last line),
so that a script can say

    VM_QEMU=$(scripts/qemu-build) make vm CMD=...

--print-path prints where the binary is or would be, builds nothing.
Environment: RSLUB_CACHE (default ~/.cache/rslub), JOBS (default 2).

The patches (each explained in its header):
  -accel tcg,rr-quantum=N   with -icount, each vCPU's turn of the
                            round-robin loop is at most N instructions
                            (stock QEMU: hundreds of thousands), so the
                            vCPUs interleave finely
  plugin vCPU index         under round-robin, plugin callbacks and
                            per-vCPU scoreboards get the vCPU that runs a
                            block, not the one that translated it

Cached in $RSLUB_CACHE/qemu/VERSION-HASH/ (VERSION without its epoch, HASH
over the full version, the patches, the configure line and the build
recipe): bin/qemu-system-x86_64, include/qemu-plugin.h (the plugin API
header of this version, which no Debian package ships) and
build-info.txt. A second run with the same key only prints the path.

The source is the orig tarball of the installed version's source package
(apt-get source --tar-only, 39 MB, kept in $RSLUB_CACHE/qemu/src/): the
package mirror here serves it but not the .dsc nor the Debian patches
(debian.tar.xz answers 404), so the binary is upstream QEMU of that version
plus patches/qemu, without Debian's own patches. It keeps Debian's firmware
(--firmwarepath: seabios, the option ROMs of qemu-system-data), so it boots
what the stock binary boots.
"""

import fcntl
import glob
import os
import re
import shutil
import subprocess
import sys
import time

from harness import lib
from harness import steps as st
from harness.steps import Steps

USAGE = "usage: scripts/qemu-build [--print-path]"

# Only the x86_64 system emulator, TCG and plugins; every optional feature
# off except what virtme-ng's command line needs beyond the built-in
# devices: virtio-9p (the guest's root file system; needs xattr, which
# glibc provides) and vhost-user (virtio-fs, which vng uses instead of 9p
# when a virtiofsd is installed). No relocatable install: the binary lives
# outside any prefix and finds Debian's firmware at its absolute paths.
# python: Debian's, which sees the meson package (a pyenv python on PATH
# would not).
CONFIGURE_ARGS = (
    "--python=/usr/bin/python3",
    "--target-list=x86_64-softmmu",
    "--without-default-features",
    "--enable-tcg",
    "--enable-plugins",
    "--enable-attr",
    "--enable-virtfs",
    "--enable-vhost-user",
    "--disable-download",
    "--disable-install-blobs",
    "--disable-relocatable",
    "--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu",
)
# Changes to how the tree is prepared that are not in the patches or the
# configure line (the edk2 line in prepare()): bump to rebuild.
RECIPE = 1

# Build dependencies, by name. meson >= 1.5 (QEMU 10's pythondeps.toml) is
# only in bookworm-backports (1.7), and so is pycotap, which configure's
# mkvenv insists on ("meson" group) and which Debian's +ds tarball does not
# carry as a wheel (python/wheels/ is emptied).
BUILD_PKGS = ("gcc", "ninja-build", "pkgconf", "libglib2.0-dev", "zlib1g-dev", "python3-venv")
MESON_MIN = "1.5.0"

# The installed version's source must be listed: a deb-src entry for
# bookworm-backports, beside setup's rslub-backports.sources (same mirror
# and keyring).
SRC_LIST = "/etc/apt/sources.list.d/rslub-backports-src.sources"
SRC_LIST_TEXT = """\
# Added by rslub scripts/qemu-build: the source of the installed QEMU.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""

# Debian's +ds tarball drops the prebuilt EDK2 images (pc-bios/edk2-*.bz2:
# Debian ships them as the ovmf package), but meson unpacks them for an
# x86_64 target whenever bzip2 is installed, and stops on the missing
# files. Nothing here needs them.
EDK2 = re.compile(r"unpack_edk2_blobs = bzip2.found\(\)")
EDK2_OFF = "unpack_edk2_blobs = false"

HEX12 = "[0-9a-f]" * 12


def key_text(ver, patches):
    """What the key hashes: "VER recipe=RECIPE", the configure line an
    argument a line, then each patch of PATCHES ([(name, bytes)], in order)
    after a line "== NAME"."""
    text = f"{ver} recipe={RECIPE}\n" + "".join(f"{a}\n" for a in CONFIGURE_ARGS)
    return text.encode() + b"".join(f"== {name}\n".encode() + data for name, data in patches)


def versions(ver):
    """(VER without its epoch, the upstream version: without the Debian
    revision either)."""
    noepoch = ver.split(":", 1)[1] if ":" in ver else ver
    return noepoch, noepoch.rsplit("-", 1)[0]


def what_failed(out):
    """What a patch's failed dry run OUT says: its first FAILED, malformed or
    can't find line, else its last line."""
    lines = out.rstrip("\n").split("\n")
    return next((line for line in lines if re.search(r"FAILED|malformed|can.t find", line)),
                lines[-1])


def edk2_off(text):
    """meson.build's TEXT without the edk2 unpacking (the first match on each
    line, as sed's s/// makes it), and whether the line that says so is
    there."""
    out = "".join(EDK2.sub(EDK2_OFF, line, count=1) for line in text.splitlines(True))
    return out, any(line.endswith(EDK2_OFF) for line in out.split("\n"))


class QemuBuild:
    """A run: the checkout ROOT's patches/qemu, the cache, its steps."""

    def __init__(self, root):
        self.root = str(root)
        self.qdir = f"{st.cache_dir()}/qemu"
        self.logdir = f"{st.cache_dir()}/logs"
        self.jobs = st.jobs(2)
        self.steps = Steps("qemu-build", stream=sys.stderr, blank_too=False)
        self.ver = self.noepoch = self.upstream = self.key = self.out = ""

    def say(self, what):
        self.steps.say(what)

    def fail(self, why):
        self.steps.fail(why)

    def log(self, name):
        return f"{self.logdir}/qemu-{name}.log"

    def patches(self):
        return sorted(glob.glob(f"{glob.escape(self.root)}/patches/qemu/*.patch"))

    def find(self):
        """The installed QEMU's version, the key and the build's directory."""
        ver = st.dpkg_version("qemu-system-x86")
        if ver is None:
            self.fail("qemu-system-x86 is not installed (run 'make setup' first: it installs "
                      "QEMU from bookworm-backports)")
        if not ver:
            self.fail("qemu-system-x86 is not installed (run 'make setup' first)")
        self.ver = ver
        self.noepoch, self.upstream = versions(ver)
        patches = []
        for p in self.patches():
            with open(p, "rb") as f:
                patches.append((os.path.basename(p), f.read()))
        self.key = st.short_hash(key_text(ver, patches))
        self.out = f"{self.qdir}/{self.noepoch}-{self.key}"

    def binary(self, out=None):
        return f"{out or self.out}/bin/qemu-system-x86_64"

    def cached(self):
        return os.path.isfile(f"{self.out}/.rslub-built") and os.access(self.binary(), os.X_OK)

    def source_listed(self):
        shown = st.output(["apt-cache", "showsrc", "qemu"], stderr=subprocess.DEVNULL)
        return f"Version: {self.ver}" in shown.split("\n")

    def list_source(self):
        if self.source_listed():
            return
        if not os.path.isfile(SRC_LIST):
            try:
                with open(SRC_LIST, "w", encoding="utf-8") as f:
                    f.write(SRC_LIST_TEXT)
            except OSError as e:
                self.fail(f"cannot write {SRC_LIST}: {e.strerror}")
            self.say(f"added {SRC_LIST}")
        self.steps.run("apt-get update", f"{self.logdir}/qemu-apt-update.log",
                       ["apt-get", "update"])
        if not self.source_listed():
            self.fail(f"no source package qemu {self.ver} in the apt sources (apt-cache "
                      "showsrc qemu); it may have left bookworm-backports: update "
                      "qemu-system-x86 (make setup) and retry")

    def install_build_deps(self):
        missing = [p for p in BUILD_PKGS if not st.pkg_installed(p)]
        meson = st.dpkg_version("meson") or ""
        if not st.pkg_installed("meson") or not st.dpkg_ge(meson, MESON_MIN):
            missing.append("meson/bookworm-backports")
        if not st.pkg_installed("python3-pycotap"):
            missing.append("python3-pycotap/bookworm-backports")
        if not missing:
            self.say("build dependencies: present")
            return
        self.steps.run(f"apt-get install {' '.join(missing)}", self.log("apt-install"),
                       ["apt-get", "install", "-y", "--no-install-recommends", *missing],
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})

    def tarball(self):
        found = sorted(glob.glob(f"{glob.escape(self.qdir)}/src/"
                                 f"qemu_{glob.escape(self.upstream)}.orig.tar.*"))
        return found[0] if found else ""

    def fetch_source(self):
        """The orig tarball, downloaded once into the cache."""
        if not self.tarball():
            self.steps.run(f"apt-get source --tar-only qemu={self.ver} (39 MB)",
                           self.log("source"), ["apt-get", "source", "--tar-only",
                                                "--download-only", f"qemu={self.ver}"],
                           cwd=f"{self.qdir}/src")
        tarball = self.tarball()
        if not tarball:
            self.fail(f"apt-get source left no qemu_{self.upstream}.orig.tar.* in "
                      f"{self.qdir}/src (log: {self.log('source')})")
        return tarball

    def prepare(self, tarball, work):
        """WORK/src: the tarball extracted, patches/qemu applied, edk2 off."""
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(f"{self.out}.tmp", ignore_errors=True)
        os.makedirs(f"{work}/src")
        self.steps.run(f"extract {os.path.basename(tarball)}", self.log("extract"),
                       ["tar", "-xf", tarball, "-C", f"{work}/src", "--strip-components=1",
                        "--no-same-owner"])
        for p in self.patches():
            name = os.path.basename(p)
            rc, out = patch(f"{work}/src", p, "--dry-run")
            if rc:
                self.fail(f"patch {name} does not apply to QEMU {self.ver}: {what_failed(out)}")
            if patch(f"{work}/src", p, "--quiet")[0]:
                self.fail(f"patch {name} failed to apply")
            self.say(f"applied {name}")
        meson = f"{work}/src/meson.build"
        try:
            with open(meson, encoding="utf-8", errors="surrogateescape") as f:
                text, off = edk2_off(f.read())
            with open(meson, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(text)
        except OSError as e:
            self.fail(f"{meson}: {e.strerror}")
        if not off:
            self.fail(f"meson.build no longer has the edk2 line this script turns off (QEMU "
                      f"{self.ver}): update scripts/harness/qemubuild.py")

    def compile(self, work):
        os.makedirs(f"{work}/src/build", exist_ok=True)
        self.steps.run(f"configure {' '.join(CONFIGURE_ARGS)}", self.log("configure"),
                       ["nice", "-n", "10", "../configure", *CONFIGURE_ARGS],
                       cwd=f"{work}/src/build")
        t0 = int(time.time())
        self.steps.run(f"build qemu-system-x86_64 with -j{self.jobs} (about 4 min on 2 idle "
                       "cores)", self.log("build"),
                       ["nice", "-n", "10", "ninja", "-C", f"{work}/src/build", f"-j{self.jobs}",
                        "qemu-system-x86_64"])
        self.say(f"built in {lib.minutes(int(time.time()) - t0)}")

    def install(self, tarball, work):
        """The binary, the plugin header and build-info.txt into the cache."""
        tmp = f"{self.out}.tmp"
        try:
            os.makedirs(f"{tmp}/bin")
            os.makedirs(f"{tmp}/include")
            shutil.copy(f"{work}/src/build/qemu-system-x86_64", f"{tmp}/bin/")
            shutil.copy(f"{work}/src/include/qemu/qemu-plugin.h", f"{tmp}/include/")
        except OSError as e:
            self.fail(f"copying the build into {tmp}: {e}")
        info = [f"QEMU {self.ver} (orig tarball {os.path.basename(tarball)}) with:"]
        for p in self.patches():
            with open(p, "rb") as f:
                info.append(f"  {os.path.basename(p)} {st.short_hash(f.read())}")
        info += [f"configure {' '.join(CONFIGURE_ARGS)}", f"recipe {RECIPE}"]
        with open(f"{tmp}/build-info.txt", "w", encoding="utf-8") as f:
            f.write("".join(f"{line}\n" for line in info))
        try:
            ok = subprocess.run([self.binary(tmp), "-accel", "help"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, check=False).returncode == 0
        except OSError:
            ok = False
        if not ok:
            self.fail(f"the built binary does not run: {self.binary(tmp)} -accel help")
        shutil.rmtree(self.out, ignore_errors=True)
        os.rename(tmp, self.out)
        with open(f"{self.out}/.rslub-built", "ab"):
            pass
        shutil.rmtree(work, ignore_errors=True)

    def drop_stale(self):
        """Drops the builds of other keys (older patches): a VM still running
        one keeps its binary open; the file goes when it exits."""
        for old in sorted(glob.glob(f"{glob.escape(self.qdir)}/*-{HEX12}")):
            if old == self.out or not os.path.isdir(old):
                continue
            shutil.rmtree(old, ignore_errors=True)
            if not os.path.lexists(old):
                self.say(f"dropped the stale build {os.path.basename(old)}")

    def build(self):
        """The binary's path, built first unless cached."""
        if self.cached():
            self.say(f"cached: QEMU {self.ver} with patches/qemu ({self.noepoch}-{self.key})")
            return self.binary()
        if os.geteuid() != 0:
            self.fail("needs root (apt-get) for the first build; the cached binary then needs "
                      "nothing")
        if not self.patches():
            self.fail(f"no patches in {self.root}/patches/qemu")
        os.makedirs(f"{self.qdir}/src", exist_ok=True)
        os.makedirs(self.logdir, exist_ok=True)
        # One build at a time (a second run waits, then finds the cache).
        with open(f"{self.qdir}/.lock", "w", encoding="ascii") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.cached():
                self.say(f"cached (built by a concurrent run): {self.noepoch}-{self.key}")
                return self.binary()
            self.list_source()
            self.install_build_deps()
            tarball = self.fetch_source()
            work = f"{self.qdir}/build-{self.key}"
            self.prepare(tarball, work)
            self.compile(work)
            self.install(tarball, work)
            self.drop_stale()
            self.say(f"done: QEMU {self.ver} with patches/qemu in {self.out}")
        return self.binary()


def patch(tree, path, *args):
    """`patch -d TREE -p1 --fuzz=0 --batch ARGS <PATH`: (its exit status, its
    output, both streams)."""
    try:
        with open(path, "rb") as f:
            done = subprocess.run(["patch", "-d", tree, "-p1", "--fuzz=0", "--batch", *args],
                                  stdin=f, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  check=False)
    except OSError as e:
        return 127, f"patch: {e.strerror}"
    return done.returncode, done.stdout.decode("utf-8", "replace")


def qemu_build(argv, root):
    if argv not in ([], ["--print-path"]):
        print(f"qemu-build: unknown argument '{argv[0]}' ({USAGE})", file=sys.stderr)
        return 2
    q = QemuBuild(root)
    q.find()
    print(q.binary() if argv else q.build(), flush=True)
    return 0


def main(argv=None, root=None):
    argv = sys.argv[1:] if argv is None else argv
    return st.main(lambda a: qemu_build(a, root or lib.ROOT), argv)


if __name__ == "__main__":
    sys.exit(main())
