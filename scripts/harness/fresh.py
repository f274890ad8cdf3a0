# SPDX-License-Identifier: GPL-2.0
"""A new user's first `make check`, repeatable.

    python3 -m harness.fresh [--branch BRANCH] [--keep]

  --branch  the branch to clone (main)
  --keep    keep the temporary folder (clone, cache, logs) afterwards

Clones this repository's branch into a temporary folder, points
RSLUB_CACHE at an empty temporary directory, removes the linux-source
package (setup installs it again), runs the README's `make check` there
(nothing of a running make's variables reaches it), and prints the time of
each step, make check's own step lines and the final line. Exit status:
make check's. Run it (with PYTHONPATH=scripts) when setup changes: it takes
as long as a first setup, the kernel build included.

The toolchain packages (LLVM, QEMU, bindgen-cli, virtme-ng) stay
installed: they are the same on every run, and setup's package step is
checked by the linux-source reinstall.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness import lib

USAGE = "usage: python3 -m harness.fresh [--branch BRANCH] [--keep]"
PACKAGE = "linux-source-7.3"
# The lines of make check shown as it runs (all of them go to its log).
SHOWN = re.compile(r"^(check|setup): |^[0-9]+ passed, [0-9]+ failed")


def installed(package):
    """Whether dpkg has PACKAGE installed."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, check=False).stdout
    return "ok installed" in out


def make_check(clone, cache, log):
    """make check in CLONE with RSLUB_CACHE=CACHE, as a user types it: all
    its output to LOG, its SHOWN lines here too; its exit status."""
    with open(log, "wb") as f, subprocess.Popen(
            ["make", "check"], cwd=clone, env=lib.user_env({"RSLUB_CACHE": cache}),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as p:
        for line in p.stdout:
            f.write(line)
            f.flush()
            text = line.decode(errors="replace")
            if SHOWN.search(text):
                sys.stdout.write(text)
                sys.stdout.flush()
        return p.wait()


def fresh(tmp, branch, clock):
    """The first run in the temporary folder TMP; its exit status."""
    if not lib.clone(clock, branch, f"{tmp}/rslub"):
        return 1
    if installed(PACKAGE):
        clock.step(f"remove {PACKAGE} (setup installs it again)")
        with open(f"{tmp}/apt-remove.log", "wb") as f:
            rc = subprocess.run(["apt-get", "remove", "-y", "-q", PACKAGE],
                                env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
                                stdout=f, stderr=subprocess.STDOUT, check=False).returncode
        if rc:
            sys.stdout.write(lib.tail(f"{tmp}/apt-remove.log", 5))
            return 1
    os.makedirs(f"{tmp}/cache")
    clock.step(f"make check with RSLUB_CACHE={tmp}/cache (empty); log: {tmp}/check.log")
    rc = make_check(f"{tmp}/rslub", f"{tmp}/cache", f"{tmp}/check.log")
    clock.step(f"make check exited {rc} after {lib.minutes(clock.seconds())}")
    last = lib.tail(f"{tmp}/check.log", 1).rstrip("\n")
    print(f"fresh: last line: {last}", flush=True)
    return rc


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts = lib.options(argv, ("--branch",), ("--keep",))
    except ValueError as e:
        print(f"fresh: {e}\n{USAGE}", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="rslub-fresh.", dir="/tmp")
    try:
        return fresh(tmp, opts.get("branch", "main"), lib.Clock("fresh"))
    finally:
        if opts.get("keep"):
            print(f"fresh: kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
