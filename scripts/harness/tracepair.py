# SPDX-License-Identifier: GPL-2.0
"""make trace-pair: the instructions of one alloc+free pair, single-stepped.

    python3 -m harness.tracepair              (make trace-pair)
    python3 -m harness.tracepair --self-test  (make check's trace-pair stepping)

The instructions one alloc+free pair executes, counted by single-stepping
the guest under gdb (QEMU's gdbstub, TCG), per allocator of the bench
(slub, rslub, served, kmalloc, kserved) and per function on the way: the
objdump count of a path made exact, every executed instruction listed
with its function, so that no branch is guessed.

The bench kernel and module build of make bench are used (the numbers are
the bench's). The guest loads rslub.ko and the bench module with
workloads=trace; the module warms each allocator's cache, then waits for
trace_go. This run attaches gdb, sets a hardware breakpoint on
rslub_bench_trace_mark(), sets trace_go and steps from mark to mark
(scripts/trace-pair-gdb.py); QEMU keeps interrupts and timers off the
stepping vCPU, so nothing else lands in a pair.

Results go to results/<timestamp>-trace/: steps.txt (every pc), kallsyms,
trace.txt (per allocator and operation: instructions and the functions
they were spent in; scripts/trace-pair-report.py), vm.log and gdb.log. A
rep string instruction is one instruction, listed with its bytes (the gdb
script steps through its iterations).

--self-test checks the stepping and the table without a kernel, in a few
seconds: QEMU boots scripts/trace-pair-test.S (a multiboot image with rep
string instructions between the calls of trace_mark), gdb steps it from
mark to mark, and the report must list each rep string instruction once,
with its bytes. One line per check, "trace-pair: PASS|FAIL <case>"
(SELF_CHECKS; make check counts them); exit status 1 on a FAIL.

Environment: TRACE_ALLOCS (slub,rslub,served,kmalloc,kserved), TRACE_SIZE
(64), TRACE_BULK (N: one bulk call of N objects for each alloc and free),
RSLUB_PARAMS (for rslub.ko), BENCH_KDIR (as for make bench), TRACE_BUILD
(where the modules are built; default RSLUB_CACHE/trace-build), TRACE_PORT
(gdb port, 1234).
"""

import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from harness import benchboot as bb
from harness import lib

USAGE = "usage: python3 -m harness.tracepair [--self-test]"
ALLOCS = "slub,rslub,served,kmalloc,kserved"
GDB_SCRIPT = lib.ROOT / "scripts/trace-pair-gdb.py"
REPORT = lib.ROOT / "scripts/trace-pair-report.py"
TEST_GUEST = lib.ROOT / "scripts/trace-pair-test.S"

# The self-test's checks: (case, pattern, the file it must match a line
# of). trace-pair-test.S's segment 1: call copy, copy's 8 (two reps), call
# trace_mark; segment 2: mov, 3 x (mov mov rep dec jnz), call: each rep
# once, with its bytes.
SELF_CHECKS = (
    ("each rep string instruction is one step", r"^[0-9a-f]+ rep movsb 128$", "steps"),
    ("a rep's bytes are its elements times their size", r"^[0-9a-f]+ rep stosl 256$", "steps"),
    ("the pair's instructions count each rep once",
     r"^\| test \| 10 \| 17 \| 27 \| 27 \| 0 \| 0 \| movsb 128 B, stosl 256 B, "
     r"stosb 100 B, stosb 100 B, stosb 100 B \| 10\+17 \|$", "report"),
    ("a function's row names its reps",
     r"^\| copy \| vmlinux \| 8 \| movsb 128 B, stosl 256 B \|$", "report"),
)


def gdb_argv(target):
    """gdb attached to the gdbstub at TARGET running the stepping script
    (its settings in the environment: MARK, ALLOCS, ARMED, STEPS, ...).
    gdb -batch exits 0 when its script fails: its log says."""
    return ["gdb", "-q", "-batch", "-nx", "-ex", "set pagination off",
            "-ex", "set architecture i386:x86-64", "-ex", f"target remote {target}",
            "-x", str(GDB_SCRIPT)]


def report_argv(allocs, size, steps, kallsyms, kernel=None):
    """The table of STEPS (the gdb script's) over the symbols KALLSYMS."""
    argv = [sys.executable, str(REPORT), "--allocs", allocs, "--size", str(size)]
    return argv + (["--kernel", kernel] if kernel else []) + [str(steps), str(kallsyms)]


def guest_cmd(build, rw, env):
    """The guest: load, publish the symbols (while the bench module is
    loaded: it unloads itself when done) and the mark's address in RW, wait
    for gdb's breakpoint (RW/armed), set trace_go, wait for the module."""
    allocs, size = env.get("TRACE_ALLOCS") or ALLOCS, env.get("TRACE_SIZE") or "64"
    return (
        f"cd {build} && dmesg -n 1 &&\n"
        "{ [ ! -w /sys/module/kunit/parameters/filter_glob ] || "
        "printf none >/sys/module/kunit/parameters/filter_glob; } &&\n"
        f"insmod rslub.ko {env.get('RSLUB_PARAMS', '')} &&\n"
        f"{{ insmod bench/rslub_bench.ko workloads=trace allocs={allocs} sizes={size} rounds=1 "
        f"trace_bulk={env.get('TRACE_BULK') or 0} >{rw}/insmod.log 2>&1; "
        f"echo $? >{rw}/insmod.rc; }} &\n"
        "while ! [ -e /sys/module/rslub_bench/parameters/trace_go ]; do sleep 0.2; done;\n"
        f"cat /proc/kallsyms >{rw}/kallsyms; grep -w rslub_bench_trace_mark {rw}/kallsyms | "
        f"cut -d' ' -f1 >{rw}/mark.tmp && mv {rw}/mark.tmp {rw}/mark;\n"
        f"while ! [ -e {rw}/armed ]; do sleep 0.2; done;\n"
        "echo 1 >/sys/module/rslub_bench/parameters/trace_go; wait;\n"
        "dmesg | grep rslub_bench; echo trace-guest-done")


def count_allocs(allocs):
    """How many allocators a TRACE_ALLOCS list names."""
    return len([a for a in allocs.split(",") if a])


def bench_completed(vm_log, insmod_rc, insmod_log):
    """Whether the guest and the bench module ran to their ends: the
    module's success is -EAGAIN (it does not stay loaded)."""
    return "trace-guest-done" in vm_log and "rslub_bench: done" in vm_log and \
        (insmod_rc.strip() == "0" or "temporarily unavailable" in insmod_log)


def failed(why):
    print(f"trace-pair: FAILED: {why}", file=sys.stderr, flush=True)
    return 1


def trace(env):
    """make trace-pair; the exit status."""
    allocs, size = env.get("TRACE_ALLOCS") or ALLOCS, env.get("TRACE_SIZE") or "64"
    port = env.get("TRACE_PORT") or "1234"
    if not shutil.which("gdb"):
        print("trace-pair: gdb not found (make setup installs it)", file=sys.stderr)
        return 2
    # A build directory of its own: a make bench running meanwhile reads its
    # modules from bench-build.
    cache = env.get("RSLUB_CACHE") or f"{Path.home()}/.cache/rslub"
    build = env.get("TRACE_BUILD") or f"{cache}/trace-build"
    try:
        bkdir = bb.kernel_dir(env, "bench", "BENCH_KDIR")
        bb.copy_tree(build)
        print(f"trace-pair: building modules for {bkdir} (STATS=0) in {build}", flush=True)
        bb.sh(["make", "-s", "-C", build, f"KDIR={bkdir}", "STATS=0", "modules"])
    except bb.Stop as e:
        return e.status
    out = lib.ROOT / f"results/{datetime.now().strftime('%Y%m%d-%H%M%S')}-trace"
    out.mkdir(parents=True, exist_ok=True)
    rw = Path(tempfile.mkdtemp(prefix="rslub-trace.", dir="/tmp"))
    print(f"trace-pair: booting {bkdir} with a gdb stub on :{port}", flush=True)
    vm = lib.start_vm(bkdir, guest_cmd(build, rw, env), out / "vm.log", {
        "VM_CPUS": "2", "VM_MEM": "2G", "VM_RWDIR": str(rw), "VM_QEMU_OPTS": f"-gdb tcp::{port}",
        "VM_STALL": "600", "VM_TIMEOUT": "1800"})
    try:
        return stepped(vm, out, rw, bkdir, allocs, size, port)
    finally:
        if vm.poll() is None:
            vm.terminate()
            vm.wait()
        shutil.rmtree(rw, ignore_errors=True)


def stepped(vm, out, rw, bkdir, allocs, size, port):
    """gdb's stepping of the guest VM once it published the mark, then the
    table; the exit status."""
    mark = rw / "mark"
    for _ in range(1800):
        if lib.read(mark):
            break
        if vm.poll() is not None:
            sys.stdout.write(lib.read(out / "vm.log"))
            return failed("the guest ended before the mark")
        time.sleep(1)
    if not lib.read(mark):
        return failed("no mark address from the guest")
    address = "0x" + lib.read(mark).split("\n")[0]
    n = count_allocs(allocs)
    print(f"trace-pair: rslub_bench_trace_mark at {address}; stepping {n} allocators", flush=True)
    env = {**os.environ, "MARK": address, "ALLOCS": str(n), "ARMED": str(rw / "armed"),
           "STEPS": str(out / "steps.txt")}
    with open(out / "gdb.log", "wb") as log:
        rc = subprocess.run(gdb_argv(f":{port}"), env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, check=False).returncode
    if rc or "Traceback" in lib.read(out / "gdb.log"):
        sys.stdout.write(lib.tail(out / "gdb.log", 20))
        return failed(f"gdb (log: {out}/gdb.log)")
    if vm.wait():
        sys.stdout.write(lib.tail(out / "vm.log", 20))
        return failed(f"the guest (log: {out}/vm.log)")
    insmod_log = lib.read(rw / "insmod.log")
    if not bench_completed(lib.read(out / "vm.log"), lib.read(rw / "insmod.rc"), insmod_log):
        lines = (insmod_log + lib.read(out / "vm.log")).splitlines()[-20:]
        sys.stdout.write("".join(line + "\n" for line in lines))
        return failed("the bench module did not complete")
    shutil.copyfile(rw / "kallsyms", out / "kallsyms")
    sys.stdout.flush()
    table = subprocess.run(report_argv(allocs, size, out / "steps.txt", out / "kallsyms",
                                       os.path.basename(bkdir)),
                           stdout=subprocess.PIPE, text=True, check=False)
    sys.stdout.write(table.stdout)
    (out / "trace.txt").write_text(table.stdout, encoding="utf-8")
    if table.returncode:
        return table.returncode
    print(f"trace-pair: done: {out}", flush=True)
    return 0


def prefixed(text, first=None):
    """TEXT's lines (the FIRST ones) with "  | " before each, as a block."""
    return "".join(f"  | {line}\n" for line in text.splitlines()[:first])


def self_test(tmp, out=print):
    """The stepping and the table on trace-pair-test.S, built and run in
    the directory TMP; the exit status."""
    tmp = Path(tmp)
    elf, steps, kallsyms, report = tmp / "t.elf", tmp / "steps", tmp / "kallsyms", tmp / "report"
    if subprocess.run(["as", "--32", "-o", tmp / "t.o", TEST_GUEST], check=False).returncode or \
            subprocess.run(["ld", "-m", "elf_i386", "-Ttext=0x100000", "-e", "_start",
                            "-o", elf, tmp / "t.o"], check=False).returncode:
        out("trace-pair: FAIL build of trace-pair-test.S")
        return 1
    # The symbols as /proc/kallsyms would give them (text, no module).
    nm = subprocess.run(["nm", elf], stdout=subprocess.PIPE, text=True, check=False).stdout
    syms = [f.split() for f in nm.splitlines()]
    syms = [f"{f[0]} T {f[2]}" for f in syms if len(f) >= 3 and f[1] in ("t", "T")]
    kallsyms.write_text("".join(s + "\n" for s in syms), encoding="ascii")
    mark = "0x" + "".join(s.split()[0] for s in syms if s.split()[2] == "trace_mark")
    # At most a minute each for QEMU and gdb.
    sock = tmp / "gdb.sock"
    qemu = subprocess.Popen(  # pylint: disable=consider-using-with
        ["timeout", "60", "qemu-system-x86_64", "-display", "none", "-monitor", "none",
         "-serial", "none", "-m", "64", "-smp", "1",
         "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-kernel", str(elf),
         "-gdb", f"unix:{sock},server=on,wait=off", "-S"])
    try:
        for _ in range(50):
            if sock.exists() and stat.S_ISSOCK(sock.stat().st_mode):
                break
            time.sleep(0.1)
        env = {**os.environ, "MARK": mark, "ALLOCS": "1", "MARKS": "3", "BITS": "32",
               "ARMED": str(tmp / "armed"), "STEPS": str(steps)}
        with open(tmp / "gdb.log", "wb") as log:
            subprocess.run(["timeout", "60"] + gdb_argv(str(sock)), env=env, stdout=log,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False)
        # gdb -batch exits 0 when its script fails: the steps file says.
        if "mark" not in lib.read(steps).splitlines() or "Traceback" in lib.read(tmp / "gdb.log"):
            out("trace-pair: FAIL gdb:\n" + prefixed(lib.tail(tmp / "gdb.log", 10)).rstrip("\n"))
            return 1
        rc = qemu.wait()
    finally:
        # timeout passes SIGTERM on to QEMU.
        if qemu.poll() is None:
            qemu.terminate()
            qemu.wait()
    fail = 0
    if rc != 1:
        out(f"trace-pair: FAIL QEMU exited {rc} (want 1, the guest's exit)")
        fail = 1
    with open(report, "wb") as f:
        rc = subprocess.run(report_argv("test", 0, steps, kallsyms), stdout=f,
                            check=False).returncode
    if rc:
        out("trace-pair: FAIL the report:\n" + prefixed(lib.read(report)).rstrip("\n"))
        return 1
    files = {"steps": lib.read(steps), "report": lib.read(report)}
    for name, pattern, where in SELF_CHECKS:
        if re.search(pattern, files[where], re.M):
            out(f"trace-pair: PASS {name}")
        else:
            out(f"trace-pair: FAIL {name}: no line matches '{pattern}' in:\n" +
                prefixed(files[where], 30).rstrip("\n"))
            fail = 1
    return fail


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--self-test"]:
        with tempfile.TemporaryDirectory() as tmp:
            return self_test(tmp, lambda line: print(line, flush=True))
    if argv:
        print(USAGE, file=sys.stderr)
        return 2
    os.chdir(lib.ROOT)
    return trace(dict(os.environ))


if __name__ == "__main__":
    sys.exit(main())
