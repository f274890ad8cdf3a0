# SPDX-License-Identifier: GPL-2.0
"""Builds the "own kernel" a README user brings to `make check KDIR=...`.

    scripts/gcc-kernel && make check KDIR=$(scripts/gcc-kernel --print-kdir)

(or python3 -m harness.gcckernel, with PYTHONPATH=scripts). The same 7.3
source and config fragments as the test kernel, but built with GCC (so no
CONFIG_RUST_INLINE_HELPERS: rslub's c_shim/shim_hot.c is an ordinary
object) and without patches/ (so no slab backend hook: serving is refused,
the API works). Not part of `make check`: about 10 minutes on 2 cores,
into the kernel cache; prints the build directory last (--print-kdir:
only that, built or not).

Environment: RSLUB_CACHE (default ~/.cache/rslub), JOBS (default nproc+1),
LIBCLANG_PATH (default /usr/lib/llvm-22/lib).

Its key hashes "VERSION gcc" and the two fragments as they are filtered,
comments included (unlike setup's keys): an edit of base.config or
test.config, a comment's too, makes it another kernel.
"""

import os
import shutil
import subprocess
import sys
import tempfile

from harness import lib
from harness import steps as st
from harness.steps import Failed

USAGE = "usage: scripts/gcc-kernel [--print-kdir]"
KVER = "7.3"
TARBALL = f"/usr/src/linux-source-{KVER}.tar.xz"
# Options that need clang or the patches are left out of the fragments.
FILTER = rb"CONFIG_(RUST_INLINE_HELPERS|SLAB_BACKEND)="
FRAGMENTS = ("base", "test")


def fragments(root):
    """{name: bytes} of the fragments, filtered."""
    out = {}
    for name in FRAGMENTS:
        with open(f"{root}/config/{name}.config", "rb") as f:
            out[name] = st.grep_v(f.read(), FILTER)
    return out


def key_text(ver, frags):
    """What the key hashes: "VER gcc", then the filtered fragments FRAGS
    ({name: bytes}) in order."""
    return f"{ver} gcc\n".encode() + b"".join(frags[name] for name in FRAGMENTS)


def kernel_dir(cache, ver, frags):
    return f"{cache}/kernel/{ver}-gcc-{st.short_hash(key_text(ver, frags))}"


def say(what):
    print(f"gcc-kernel: {what}", flush=True)


def failed(log, lines, step):
    """The last LINES of the file LOG, then the line that stops the run."""
    sys.stdout.write(lib.tail(log, lines))
    raise Failed(f"gcc-kernel: FAILED: {step} (log: {log})")


def build(root, kdir, frags):
    """Extracts, configures (harness.kconfig) and builds KDIR."""
    os.environ["PATH"] = st.cargo_path()
    rustc = st.second_field(st.output(["rustc", "--version"]))
    os.environ["RUST_LIB_SRC"] = f"/usr/src/rustc-{rustc}/library"
    os.environ["LIBCLANG_PATH"] = os.environ.get("LIBCLANG_PATH") or "/usr/lib/llvm-22/lib"
    shutil.rmtree(kdir, ignore_errors=True)
    os.makedirs(kdir)
    say(f"extracting into {kdir}")
    sys.stdout.flush()
    if subprocess.run(["tar", "-xf", TARBALL, "-C", kdir, "--strip-components=1"],
                      check=False).returncode:
        raise Failed(f"gcc-kernel: FAILED: extracting {TARBALL} into {kdir}")
    say("configuring (GCC, no patches)")
    log = f"{kdir}/.rslub-config.log"
    with tempfile.TemporaryDirectory() as frag:
        files = []
        for name, data in frags.items():
            files.append(f"{frag}/{name}.config")
            with open(files[-1], "wb") as f:
                f.write(data)
        with open(log, "wb") as f:
            rc = st.call([sys.executable, f"{root}/scripts/kconfig", kdir, *files], f)
    if rc:
        failed(log, 5, "configuring")
    jobs = st.jobs()
    log = f"{kdir}/.rslub-build.log"
    say(f"building with -j{jobs} (about 10 min on 2 cores; log: {log})")
    with open(log, "wb") as f:
        rc = st.call(["make", "-C", kdir, f"-j{jobs}", "all"], f)
    if rc:
        failed(log, 20, "building")
    with open(f"{kdir}/.rslub-built", "ab"):
        pass


def gcc_kernel(argv, root):
    if argv not in ([], ["--print-kdir"]):
        print(f"gcc-kernel: unknown argument '{argv[0]}'\n{USAGE}", file=sys.stderr)
        return 2
    if not os.path.isfile(TARBALL):
        say(f"{TARBALL} missing: run make setup first")
        return 1
    ver = st.dpkg_version(f"linux-source-{KVER}")
    if ver is None:
        raise Failed(f"gcc-kernel: FAILED: linux-source-{KVER} is not installed: run make "
                     "setup first")
    frags = fragments(root)
    kdir = kernel_dir(st.cache_dir(), ver, frags)
    if argv:
        print(kdir)
        return 0
    if os.path.isfile(f"{kdir}/.rslub-built"):
        say(f"cached at {kdir}")
    else:
        build(root, kdir, frags)
    print(kdir)
    return 0


def main(argv=None, root=None):
    argv = sys.argv[1:] if argv is None else argv
    return st.main(lambda a: gcc_kernel(a, root or lib.ROOT), argv)


if __name__ == "__main__":
    sys.exit(main())
