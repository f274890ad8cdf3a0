# SPDX-License-Identifier: GPL-2.0
"""Every command README.md and docs/testing.md list, run as a user would.

    python3 -m harness.readmerun [--branch B] [--only REGEX] [--skip REGEX] [--keep] [--list]

  --branch B     the branch to clone (main)
  --only/--skip  run only the commands whose name matches (or does not
                 match) REGEX
  --keep         keep the clone and the logs (else removed unless a
                 command failed)
  --list         print the commands and exit

One after the other, in a fresh clone of this repository's branch, with
the user's kernel cache (RSLUB_CACHE, warm if make check ran before;
harness.fresh is the cold first run). The suites run in their QUICK=1
form, and the real programs' experiments on one program (xcpu-unix; the
two whose cost icount cannot see, cmpxchg and max-empty, on the cost
model): on a 2-core machine, 64 and 89 minutes for the two runs below side
by side. For each command: a line with its exit status, its time and its
last line; at the end, a Markdown table of them. Exit status: 0 when every
command ended as expected.

Two runs may go at once, each in its own clone, say with

  R='^(build|kdir|setup|lint|fmt|host-test|check|vm|stress.*|mutants-list'
  R="$R|gcc-kernel|check-own-kernel)$"
  python3 -m harness.readmerun --only "$R" & python3 -m harness.readmerun --skip "$R"

(PYTHONPATH=scripts). The bench commands share one build directory: they
stay in one run.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from harness import lib

USAGE = ("usage: python3 -m harness.readmerun [--branch B] [--only REGEX] [--skip REGEX] "
         "[--keep] [--list]")

# (name, expected, command): expected is ok (exit 0) or fail (this machine
# cannot run it; the README says so). The command runs under bash in the
# clone; `latest [N]` names the Nth newest plain `make bench` run.
QA = "PYTHONPATH=scripts python3 -m harness."
COMMANDS = (
    ("build", "ok", "make"),
    ("kdir", "ok", "make -s kdir"),
    ("setup", "ok", "make setup"),
    ("lint", "ok", "make lint"),
    ("fmt", "ok", "make fmt && git diff --stat --exit-code"),
    ("host-test", "ok", "make host-test"),
    ("check", "ok", "make check"),
    ("bench", "ok", "make bench"),
    ("bench-quick", "ok", "make bench QUICK=1"),
    ("bench-compare", "ok", "make bench-compare A=$(latest 2) B=$(latest 1)"),
    ("bench-icount", "ok", "make bench QUICK=1 MODES=icount"),
    ("bench-kvm", "fail", "VM_STALL=120 make bench QUICK=1 KVM=1"),
    ("bench-model", "ok", "make bench QUICK=1 MODES=model"),
    ("bench-verdict", "ok", "make bench-verdict R=$(ls -d results/2*[0-9] | tail -n 1)"),
    ("trace-pair", "ok", "make trace-pair"),
    ("plugin-cost", "ok", QA + "plugincost"),
    ("qemu", "ok", "make qemu"),
    ("qemu-quantum", "ok", QA + "qemuquantum"),
    ("quantum-sweep", "ok", "QUANTA='0 1000' " + QA + "quantumsweep"),
    ("real-model16", "ok", "make bench SUITE=real QUICK=1 MODES=model16 AA=0 WORKLOADS=brk1"),
    ("vm", "ok", "make vm CMD='uname -r; grep -c . /proc/cpuinfo'"),
    ("stress", "ok", "make stress"),
    ("stress-faults", "ok", "make stress FAULTS=1"),
    ("stress-pressure", "ok", "make stress PRESSURE=1"),
    ("stress-serve", "ok", "make stress SERVE=1"),
    ("suite-classic", "ok", "make bench SUITE=classic QUICK=1"),
    ("suite-max-empty", "ok", "make bench SUITE=max-empty QUICK=1"),
    ("suite-cpu-partial", "ok", "make bench SUITE=cpu-partial QUICK=1"),
    ("suite-fill", "ok", "make bench SUITE=fill QUICK=1"),
    ("suite-cmpxchg", "ok", "make bench SUITE=cmpxchg QUICK=1"),
    ("suite-hardening", "ok", "make bench SUITE=hardening QUICK=1"),
    ("suite-free-batch", "ok", "make bench SUITE=free-batch QUICK=1"),
    ("suite-real", "ok", "make bench SUITE=real QUICK=1"),
    ("suite-classic-real", "ok", "make bench SUITE=classic-real QUICK=1 WORKLOADS=brk1"),
    ("real-cpu-partial", "ok",
     "make bench SUITE=real EXPERIMENT=cpu-partial QUICK=1 WORKLOADS=xcpu-unix"),
    ("real-max-empty", "ok",
     "make bench SUITE=real EXPERIMENT=max-empty QUICK=1 MODES=model WORKLOADS=xcpu-unix"),
    ("real-fill", "ok", "make bench SUITE=real EXPERIMENT=fill QUICK=1 WORKLOADS=xcpu-unix"),
    ("real-cmpxchg", "ok",
     "make bench SUITE=real EXPERIMENT=cmpxchg QUICK=1 MODES=model WORKLOADS=xcpu-unix"),
    ("real-free-batch", "ok",
     "make bench SUITE=real EXPERIMENT=free-batch QUICK=1 WORKLOADS=xcpu-unix"),
    ("mutants-list", "ok", "make mutants LIST=1 | tail -n 3"),
    ("gcc-kernel", "ok", "scripts/gcc-kernel"),
    ("check-own-kernel", "ok", "make check KDIR=$(scripts/gcc-kernel --print-kdir)"),
)

# What every command's bash has first: pipefail, and `latest [N]`.
PRELUDE = ("set -o pipefail\n"
           "latest() { ls -d results/2*[0-9] | grep -E '/[0-9]{8}-[0-9]{6}$' | "
           "tail -n ${1:-1} | head -n 1; }\n")


def selected(only="", skip=""):
    """The COMMANDS whose name matches ONLY (a regex; empty: any) and not SKIP."""
    return [c for c in COMMANDS if (not only or re.search(only, c[0])) and
            not (skip and re.search(skip, c[0]))]


def last_line(text):
    """TEXT's last line that is not blank, at most 200 characters."""
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def as_expected(expect, rc):
    """Whether a command expected to end EXPECT (ok or fail) did, exiting RC."""
    return (rc == 0) if expect == "ok" else (rc != 0)


def table_row(cmd, rc, secs, last):
    """The Markdown row of a command: its text, exit, time and last line."""
    def code(text):
        return "`" + text.replace("|", "\\|") + "`"
    return f"| {code(cmd)} | {rc} | {lib.minutes(secs)} | {code(last)} |"


def run_one(clone, cmd, log):
    """CMD in the clone as a user types it (nothing of this process's make
    or kernel variables), its output in LOG; its exit status as bash's $?."""
    with open(log, "wb") as f:
        rc = subprocess.run(["bash", "-c", PRELUDE + cmd], cwd=clone, env=lib.user_env(),
                            stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                            check=False).returncode
    return 128 - rc if rc < 0 else rc


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts = lib.options(argv, ("--branch", "--only", "--skip"), ("--keep", "--list"))
        commands = selected(opts.get("only", ""), opts.get("skip", ""))
    except (ValueError, re.error) as e:
        print(f"readme-run: {e}\n{USAGE}", file=sys.stderr)
        return 2
    if opts.get("list"):
        for name, _, cmd in commands:
            print(f"{name}: {cmd}")
        return 0
    clock = lib.Clock("readme-run")
    tmp = tempfile.mkdtemp(prefix="rslub-readme.", dir="/tmp")
    clone = f"{tmp}/rslub"
    if not lib.clone(clock, opts.get("branch", "main"), clone):
        return 1
    os.makedirs(f"{tmp}/logs")
    rows, bad = [], 0
    for i, (name, expect, cmd) in enumerate(commands, 1):
        log = f"{tmp}/logs/{i:02d}-{name}.log"
        clock.step(f"{name}: {cmd} (log: {log})")
        t0 = time.time()
        rc = run_one(clone, cmd, log)
        secs = int(time.time() - t0)
        last = last_line(lib.read(log))
        verdict = "as-expected" if as_expected(expect, rc) else "UNEXPECTED"
        bad += verdict == "UNEXPECTED"
        clock.step(f"{name}: exit {rc} ({verdict}) after {lib.minutes(secs)}: {last}")
        rows.append(table_row(cmd, rc, secs, last))
    print("\n| command | exit | time | last line |\n| --- | ---: | ---: | --- |")
    print("".join(row + "\n" for row in rows))
    clock.step(f"{len(commands)} commands, {bad} not as expected; clone and logs: {tmp}")
    if not opts.get("keep") and not bad:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
