# SPDX-License-Identifier: GPL-2.0
"""The setup decisions of `make`, checked in seconds without building anything.

    python3 -m harness.setuplogic        (make check's first step)

A computed kernel path once leaked through the environment of a nested
make, which then took it for the user's KDIR= and set up tools only, so a
fresh machine's `make check` never built its kernel. Each case runs
scripts/setup (harness.setup) in dry-run mode (RSLUB_SETUP_DRY_RUN=1)
against an empty temporary RSLUB_CACHE, typed (make setup) and nested (a
recipe of the project's Makefile running make setup, as make check does),
and prints "setup-logic: PASS|FAIL <case>", a FAIL with what it got. Exit
status 1 on any FAIL. CASES lists the cases in the order they run (make
check counts them).

The prerequisites setup checks before it changes anything are played with
stand-ins on PATH: a command that answers otherwise (uname, id, python3),
or a PATH of links to every command but some (Host.path_without), with
HOME elsewhere (setup looks in ~/.cargo/bin too). Setup itself runs on
this interpreter (sys.executable), not on PATH's python3: the python3 it
checks is PATH's, the one pip would install virtme-ng into.

Environment: none of its own; a running make's (KDIR, MAKEFLAGS, MFLAGS,
MAKELEVEL: harness.lib.MAKE_VARS) is left out of every command's.
"""

import fnmatch
import functools
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import lib

# A nested make: a recipe of the project's Makefile (with all its exports)
# that runs make again, like `make check` (harness.check).
NESTED_MK = """\
nested-setup:
\t@$(MAKE) --no-print-directory -s setup
nested-kdir:
\t@$(MAKE) --no-print-directory -s kdir
# How make check and make stress ask (harness/lib.py), from a recipe.
nested-kdir-alone:
\t@PYTHONPATH=scripts python3 -c 'from harness import lib; print(lib.rslub_kdir())' >$(OUTFILE)
"""

USER_KDIR = "/user/kernel"
TOOLS_ONLY = "kernel: not set up (tools only)"


class Host:
    """The commands of the cases: make and scripts/setup of the checkout ROOT,
    against the empty cache TMP/cache, their stand-ins in TMP."""

    def __init__(self, root, tmp):
        self.root, self.tmp = Path(root), Path(tmp)
        self.cache = self.tmp / "cache"
        self.env = lib.user_env({"RSLUB_CACHE": str(self.cache), "RSLUB_SETUP_DRY_RUN": "1"})
        self.nested_mk = self.tmp / "nested.mk"
        self.nested_mk.write_text(NESTED_MK, encoding="utf-8")

    def run(self, argv, env=None, stderr=False, cwd=None):
        """ARGV's output as $(...) gives it: stdout (and stderr when STDERR)
        without its last newlines. ENV is added to the environment; the
        rest of stderr goes to this one's."""
        out = subprocess.run(argv, cwd=cwd or self.root, env={**self.env, **(env or {})},
                             stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT if stderr else None,
                             text=True, errors="replace", check=False)
        return out.stdout.rstrip("\n")

    def make(self, *args, env=None):
        """make -s ARGS, typed."""
        return self.run(["make", "-s", *args], env)

    def nested(self, *args):
        """A target of NESTED_MK (ARGS), run as a recipe of the Makefile."""
        return self.run(["make", "--no-print-directory", "-s", "-f", "Makefile",
                         "-f", str(self.nested_mk), *args])

    def setup(self, *args, env=None, stderr=True):
        """scripts/setup ARGS, its stderr too unless not STDERR."""
        return self.run([sys.executable, "scripts/setup", *args], env, stderr)

    @functools.cached_property
    def kdir(self):
        """The kernel make uses when nothing is given (make -s kdir)."""
        return self.make("kdir")

    @functools.cached_property
    def classic_kdir(self):
        """The classic flavor's kernel (setup --flavor classic --print-kdir)."""
        return self.setup("--flavor", "classic", "--print-kdir", stderr=False)

    def built_kdir(self):
        """KDIR, marked built in the cache as a setup that ran leaves it."""
        Path(self.kdir).mkdir(parents=True, exist_ok=True)
        (Path(self.kdir) / ".rslub-built").touch()
        return self.kdir

    def kdir_through_make_c(self):
        """The kernel path make check reads from a nested make under
        `make -C DIR` from elsewhere, where every nested make prints
        "Entering directory" lines."""
        out = self.tmp / "kdir.out"
        subprocess.run(["make", "-C", str(self.root), "-f", "Makefile", "-f",
                        str(self.nested_mk), "nested-kdir-alone", f"OUTFILE={out}"],
                       cwd="/", env=self.env, stdout=subprocess.DEVNULL, check=False)
        try:
            return out.read_text(encoding="utf-8").rstrip("\n")
        except OSError:
            return ""

    def stub(self, name, script):
        """A directory holding a command NAME that runs the shell SCRIPT."""
        d = self.tmp / f"stub-{name}"
        d.mkdir(exist_ok=True)
        (d / name).write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
        (d / name).chmod(0o755)
        return str(d)

    def path_without(self, *names):
        """A directory of links to PATH's commands but NAMES (the first of
        a name on PATH, as a lookup finds it)."""
        d = tempfile.mkdtemp(prefix="path.", dir=self.tmp)
        for entry in self.env.get("PATH", "").split(":"):
            try:
                items = sorted(os.listdir(entry)) if entry else []
            except OSError:
                continue
            for item in items:
                link = os.path.join(d, item)
                if not item.startswith(".") and item not in names and \
                        not os.path.lexists(link):
                    os.symlink(os.path.join(entry, item), link)
        return d

    def refused(self, path, home=None):
        """setup's output, stderr too, with PATH (and HOME) given."""
        return self.setup(env={"PATH": path, **({"HOME": home} if home else {})})

    @functools.cached_property
    def no_rust(self):
        """setup with neither rustc nor cargo to be found."""
        return self.refused(self.path_without("rustc", "cargo"), str(self.tmp / "home"))

    def kdir_with(self, line):
        """The test kernel's path for this checkout with LINE added to its
        first fragment (a copy of config/ beside links to the rest)."""
        root = Path(tempfile.mkdtemp(prefix="root.", dir=self.tmp))
        for item in os.listdir(self.root):
            if item != "config":
                os.symlink(self.root / item, root / item)
        shutil.copytree(self.root / "config", root / "config")
        with open(root / "config/base.config", "a", encoding="utf-8") as f:
            f.write(f"{line}\n")
        return self.run([sys.executable, "scripts/setup", "--print-kdir"], cwd=root)

    def first_patch(self):
        return sorted(os.listdir(self.root / "patches"))[0]

    def patch_refusal(self):
        """setup applying the patches to a tree without the files they change."""
        src = self.tmp / "src"
        src.mkdir(exist_ok=True)
        return self.setup("--apply-patches", str(src), env={"RSLUB_SETUP_DRY_RUN": "0"})


def indent(output):
    return "\n".join("    " + line for line in output.split("\n"))


def ends(text, output):
    """None when a line of OUTPUT ends in TEXT, else what the FAIL says."""
    if any(line.endswith(text) for line in output.split("\n")):
        return None
    return f"expected a line ending in '{text}', got:\n{indent(output)}"


def exactly(text, output):
    """None when OUTPUT is TEXT, nothing more, else what the FAIL says."""
    return None if output == text else f"expected exactly '{text}', got:\n{indent(output)}"


def differs(first, output):
    """None when OUTPUT is a path other than FIRST, else what the FAIL says."""
    return None if output and output != first else f"expected a path other than '{first}', " \
        f"got '{output}'"


def within(cache, pattern, path):
    """None when PATH matches PATTERN (a glob, / included in *) under the
    directory CACHE, else what the FAIL says."""
    return None if fnmatch.fnmatchcase(path, glob.escape(str(cache)) + pattern) \
        else f"got '{path}'"


# (case, check): each check takes the Host and returns None (PASS) or what
# its FAIL line says. They run in this order: the cache is marked built
# from "cache present" on.
CASES = (
    ("kdir is in RSLUB_CACHE", lambda h: within(h.cache, "/kernel/*", h.kdir)),
    ("nested kdir equals typed kdir", lambda h: ends(h.kdir, h.nested("nested-kdir"))),
    ("user KDIR is the kdir", lambda h: ends(USER_KDIR, h.make("kdir", f"KDIR={USER_KDIR}"))),
    ("kdir alone through make -C", lambda h: exactly(h.kdir, h.kdir_through_make_c())),
    ("user KDIR is the kdir, nested",
     lambda h: ends(USER_KDIR, h.nested("nested-kdir", f"KDIR={USER_KDIR}"))),
    ("no cache: build the kernel", lambda h: ends(f": build into {h.kdir}", h.make("setup"))),
    ("no cache, nested: build the kernel",
     lambda h: ends(f": build into {h.kdir}", h.nested("nested-setup"))),
    ("KDIR= given: tools only",
     lambda h: ends(TOOLS_ONLY, h.make("setup", f"KDIR={USER_KDIR}"))),
    ("KDIR= given, nested: tools only",
     lambda h: ends(TOOLS_ONLY, h.nested("nested-setup", f"KDIR={USER_KDIR}"))),
    ("KDIR in the environment: tools only",
     lambda h: ends(TOOLS_ONLY, h.make("setup", env={"KDIR": USER_KDIR}))),
    ("cache present: reuse", lambda h: ends(f": cached at {h.built_kdir()}", h.make("setup"))),
    ("cache present, nested: reuse",
     lambda h: ends(f": cached at {h.built_kdir()}", h.nested("nested-setup"))),
    # The classic flavor (make bench SUITE=classic, Linux 6.12) is a kernel
    # of its own in the cache, never the test or bench one.
    ("classic flavor has its own kdir",
     lambda h: within(h.cache, "/kernel/*-classic-*", h.classic_kdir)),
    ("classic flavor, no cache: build it",
     lambda h: ends(f": build into {h.classic_kdir}",
                    h.setup("--flavor", "classic", stderr=False))),
    # The cache key reads the fragments' options: a comment (or a blank
    # line) rebuilds nothing, an option does.
    ("a comment in a fragment: the same kernel",
     lambda h: exactly(h.kdir, h.kdir_with("\n# a comment, then a blank line\n"))),
    ("an option in a fragment: another kernel",
     lambda h: differs(h.kdir, h.kdir_with("# CONFIG_RSLUB_NO_SUCH is not set"))),
    # A source tree that no longer takes a patch stops setup with one line
    # naming the patch (and, where there is one, the hunk).
    ("a tree without the patched files: setup stops naming the patch",
     lambda h: ends(f"{h.first_patch()} does not apply to linux-source-7.3: "
                    "mm/Kconfig: no such file", h.patch_refusal())),
    # The prerequisites: each one missing is a line of its own.
    ("not x86_64: refused",
     lambda h: ends("rslub needs x86_64 (cmpxchg16b)",
                    h.refused(h.stub("uname", "echo aarch64") + ":" + h.env["PATH"]))),
    ("no apt-get: refused",
     lambda h: ends("no apt-get; setup installs Debian packages",
                    h.refused(h.path_without("apt-get")))),
    ("not root: refused",
     lambda h: ends("writes under /etc/apt, and the guests load modules as this user",
                    h.refused(h.stub("id", '[ "$1" = -u ] && echo 1000 || exec /usr/bin/id "$@"')
                              + ":" + h.env["PATH"]))),
    ("no rustc: refused",
     lambda h: ends("no rustc on PATH or in ~/.cargo/bin (install Rust with rustup first)",
                    h.no_rust)),
    ("no cargo either: both said",
     lambda h: ends("no cargo on PATH or in ~/.cargo/bin (install Rust with rustup first)",
                    h.no_rust)),
    ("no vng, python3 without pip: refused",
     lambda h: ends("put a pyenv or venv python3 first on PATH, or install virtme-ng yourself",
                    h.refused(h.stub("python3", "exit 1") + ":" +
                              h.path_without("vng", "python3")))),
)


def run(host, cases=CASES, out=print):
    """Runs CASES on HOST, a line each; the number of FAILs."""
    fails = 0
    for name, check in cases:
        why = check(host)
        if why is None:
            out(f"setup-logic: PASS {name}")
        else:
            out(f"setup-logic: FAIL {name}: {why}")
            fails += 1
    return fails


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        print("usage: python3 -m harness.setuplogic", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        fails = run(Host(lib.ROOT, tmp), out=lambda line: print(line, flush=True))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
