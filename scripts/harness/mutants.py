# SPDX-License-Identifier: GPL-2.0
"""make mutants: mutation testing of the platform-free core against its host tests.

cargo-mutants (from crates.io; installed here when missing) makes each
mutant one small change to the core (an operator flipped, a function body
replaced, a condition negated); a test suite that notices nothing has a
gap there. Not part of make check: a full run of rust/core/slub/ is about
450 mutants.

  FILE='slub/*.rs'    files to mutate (cargo-mutants --file globs,
                      relative to rust/core; several separated by spaces);
                      default: the whole core but its tests and the host
                      machine
  RE='alloc_inner'    only mutants whose name (as --list shows) matches
  JOBS=1              mutants built and tested at once
  LIST=1              list the mutants, run nothing
  MUTANTS_LIMIT=7200  seconds for the whole run
  VARIANT=free_batch  the core as that build variant compiles it (--cfg
                      rslub_free_batch; Kbuild VARIANT=), whose code the
                      default build does not contain

Results go to results/mutants/<time>/mutants.out (caught.txt, missed.txt,
timeout.txt, unviable.txt, outcomes.json); the summary is printed last.
"""

import os
import shutil
import subprocess
import sys
import time

from harness import lib

# The default run leaves out the tests and the host machine.
EXCLUDE = ("*tests.rs", "test_util.rs", "host.rs", "build.rs", "shim_methods.rs")


def mutants_args(env, root=lib.ROOT):
    """cargo mutants' arguments for the environment ENV (no --list, no --output)."""
    args = ["--dir", f"{root}/rust/core", "--jobs", env.get("JOBS") or "1", "--no-shuffle"]
    if env.get("FILE"):
        for f in env["FILE"].split():
            args += ["--file", f]
    else:
        for f in EXCLUDE:
            args += ["--exclude", f]
    if env.get("RE"):
        args += ["--re", env["RE"]]
    return args


def count(out, what):
    """The lines of mutants.out/WHAT.txt under OUT (0 when it is not there)."""
    try:
        with open(f"{out}/mutants.out/{what}.txt", encoding="utf-8") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def main():
    env = dict(os.environ)
    env["PATH"] = f"{os.path.expanduser('~/.cargo/bin')}:{env.get('PATH', '')}"
    if not shutil.which("cargo-mutants", path=env["PATH"]):
        print("mutants: installing cargo-mutants (cargo install cargo-mutants --locked)",
              flush=True)
        if subprocess.run(["cargo", "install", "cargo-mutants", "--locked"], env=env,
                          check=False).returncode:
            print("mutants: cannot install cargo-mutants")
            return 1
    # cargo-mutants copies rust/core alone (without its target/), which
    # holds every file of the host crate; its build script finds the shim
    # here.
    env["RSLUB_ROOT"] = str(lib.ROOT)
    variant = env.get("VARIANT", "")
    if variant == "free_batch":
        env["RUSTFLAGS"] = f"{env.get('RUSTFLAGS', '')} --cfg rslub_free_batch"
    elif variant:
        print(f"mutants: unknown VARIANT '{variant}' (free_batch)", file=sys.stderr)
        return 2
    args = mutants_args(env)
    if env.get("LIST"):
        return subprocess.run(["cargo", "mutants", "--list"] + args, env=env,
                              check=False).returncode
    out = lib.ROOT / "results/mutants" / time.strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True)
    print(f"mutants: cargo mutants {' '.join(args)} (output: {out}/mutants.out)", flush=True)
    limit = int(env.get("MUTANTS_LIMIT") or 7200)
    # timeout(1) ends the run at the limit whether it prints or not (124).
    with open(out / "log.txt", "wb") as log:
        p = subprocess.Popen(["timeout", str(limit), "cargo", "mutants"] + args +
                             ["--output", str(out)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        for chunk in iter(lambda: p.stdout.read1(65536), b""):
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
            log.write(chunk)
        rc = p.wait()
    print(f"mutants: caught {count(out, 'caught')}, missed {count(out, 'missed')}, "
          f"timeout {count(out, 'timeout')}, unviable {count(out, 'unviable')}")
    for what in ("missed", "timeout"):
        if count(out, what):
            print(f"mutants: {what}:")
            with open(f"{out}/mutants.out/{what}.txt", encoding="utf-8") as f:
                for line in f:
                    print(f"  {line.rstrip()}")
    if rc == 124:
        print(f"mutants: stopped after MUTANTS_LIMIT={limit} s")
    # cargo-mutants exits 2 when mutants were missed, 3 on timeouts.
    return rc


if __name__ == "__main__":
    sys.exit(main())
