# SPDX-License-Identifier: GPL-2.0
"""Runs a virtme-ng guest and judges it by its progress, not by the clock.

harness.vm builds the vng command line and runs it under this watcher
(supervise()); on its own, for the host tests' stand-ins for vng:

    python3 -m harness.vmwatch --console FILE --monitor SOCK --stall S
               [--limit T] [--system-map MAP] -- vng ARGS...

The guest command's output (vng's stdout) is passed through. The kernel
console (vng's stderr: vng runs with --show-boot-console) goes to FILE, a
side log. The guest makes progress when its command prints a line, or when
the console shows a KTAP result line ("ok N ..." / "not ok N ...": a KUnit
case ended). Until the command's first line, every console line counts: the
boot (kernel, virtme-ng-init, udev) prints as it goes, and under load it
takes minutes. Other console lines are not progress once the command runs:
a wedged kernel can print warnings for ever.

When the guest makes no progress for S seconds it is declared stuck; when it
runs T seconds in all (a last resort, 0: no limit) it is stopped too. In both
cases the watcher first asks the kernel what it is doing, through the QEMU
monitor at SOCK (vng --qemu-opts "-monitor unix:SOCK,server=on,wait=off"):

  - "info cpus" and "info registers -a": each vCPU's state and instruction
    pointer, named from MAP (the kernel's System.map); this needs nothing
    from the guest, so it answers even when the kernel cannot;
  - SysRq w, l and t on the guest's keyboard (the test kernel has
    CONFIG_MAGIC_SYSRQ and an AT keyboard): blocked tasks, a backtrace of
    every CPU, every task; the kernel prints them on its console.

It waits for the console to go quiet, prints what the console said after the
request (the stacks) on stderr, stops QEMU and exits 124. Otherwise it exits
with vng's status (143 when stopped by SIGTERM/SIGINT).

When the machine ends before the guest command printed anything, the
guest is started once more, and the log says how the first one ended:
QEMU's own line on the console stream (e.g. TCG's "iotlb_to_section:
Assertion ... failed", seen while a 4-vCPU kernel set up PCI), or QEMU's
exit status (QSTATUS, written by harness.vm's QEMU wrapper; vng itself only
exits 255) with what QEMU's debug log (QLOG: -d cpu_reset)
says of a guest that reset itself, e.g. a triple fault early in the boot,
which under vng's -no-reboot ends QEMU with status 0.
"""

import argparse
import bisect
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time

# A KTAP result line on the console, after the printk time stamp.
KTAP_RESULT = re.compile(rb"\]\s+(?:not )?ok \d+ ")
# Terminal control sequences the HMP monitor writes around its output.
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]|\r")


def log(msg):
    print(f"vm: {msg}", file=sys.stderr, flush=True)


class Symbols:
    """Kernel text symbols of a System.map, for naming instruction pointers."""

    def __init__(self, path):
        self.addrs, self.names = [], []
        if not path:
            return
        try:
            with open(path, encoding="ascii", errors="replace") as f:
                rows = []
                for line in f:
                    parts = line.split()
                    if len(parts) >= 3 and parts[1] in "tTwW":
                        rows.append((int(parts[0], 16), parts[2]))
        except OSError:
            return
        rows.sort()
        self.addrs = [a for a, _ in rows]
        self.names = [n for _, n in rows]

    def name(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        # Beyond the kernel image's text (a module, user space): no name.
        if i < 0 or addr - self.addrs[i] > 0x100000 or self.names[i] in ("_etext", "__init_end"):
            return "?"
        return f"{self.names[i]}+{addr - self.addrs[i]:#x}"


class Monitor:
    """A line-oriented client of QEMU's human monitor on a unix socket."""

    def __init__(self, path, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self._until_prompt()

    def _until_prompt(self):
        data = b""
        while not data.endswith(b"(qemu) "):
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            data += chunk
        return ANSI.sub("", data.decode("utf-8", "replace"))

    def cmd(self, line):
        self.sock.sendall(line.encode() + b"\n")
        out = self._until_prompt()
        # The echo of the command (redrawn as it is typed, so it ends with
        # the whole command) comes first, the prompt last.
        return [l for l in out.split("\n")
                if l.strip() and not l.startswith("(qemu)") and not l.rstrip().endswith(line)]

    def close(self):
        self.sock.close()


class Guest:
    def __init__(self, args):
        self.args = args
        self.console = open(args.console, "ab")
        self.console_size = 0
        self.last_console = time.monotonic()
        self.last_progress = time.monotonic()
        self.start = time.monotonic()
        # The console's last line while it is incomplete.
        self.partial = b""
        self.booted = False
        # A line QEMU itself printed on its stderr (the console's stream).
        self.qemu_died = ""
        # The console's last non-empty line (said when the boot ends early).
        self.last_line = b""
        # The longest time without progress, and the line that ended it.
        self.longest = (0.0, "")
        self.proc = subprocess.Popen(
            args.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ, "out")
        self.sel.register(self.proc.stderr, selectors.EVENT_READ, "console")
        self.open_streams = 2

    def pump(self, timeout):
        """Copies what the guest wrote in the next TIMEOUT seconds."""
        for key, _ in self.sel.select(timeout):
            data = os.read(key.fileobj.fileno(), 65536)
            if not data:
                self.sel.unregister(key.fileobj)
                self.open_streams -= 1
                continue
            now = time.monotonic()
            if key.data == "out":
                sys.stdout.buffer.write(data)
                sys.stdout.buffer.flush()
                if b"\n" in data:
                    self.progress(now, data.split(b"\n")[0])
                    self.booted = True
            else:
                self.console.write(data)
                self.console.flush()
                self.console_size += len(data)
                self.last_console = now
                # Whole lines only: a result line may arrive in two reads.
                lines = (self.partial + data).split(b"\n")
                self.partial = lines.pop()
                for line in lines:
                    if line.strip():
                        self.last_line = line
                    if line.startswith(b"qemu-system"):
                        self.qemu_died = line.decode("utf-8", "replace").strip()
                if not self.booted and lines:
                    self.progress(now, lines[0])
                else:
                    for line in lines:
                        if KTAP_RESULT.search(line):
                            self.progress(now, line)
                            break

    def progress(self, now, line):
        """Notes progress at NOW, and the longest wait for it so far."""
        if now - self.last_progress > self.longest[0]:
            self.longest = (now - self.last_progress, line.decode("utf-8", "replace").strip())
        self.last_progress = now

    def running(self):
        return self.open_streams > 0 or self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM):
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def finish(self):
        """Stops the guest's whole session: TERM, then KILL after 10 s."""
        self.stop(signal.SIGTERM)
        deadline = time.monotonic() + 10
        while self.proc.poll() is None and time.monotonic() < deadline:
            self.pump(0.5)
        if self.proc.poll() is None:
            self.stop(signal.SIGKILL)
            self.proc.wait()

    def quiet_for(self, secs, at_most):
        """Copies output until the console has been quiet for SECS seconds."""
        deadline = time.monotonic() + at_most
        while self.running() and time.monotonic() < deadline:
            self.pump(0.5)
            if time.monotonic() - self.last_console >= secs:
                break

    def dump(self, why):
        """Asks the kernel what it is doing, then prints the answer."""
        log(f"STUCK: {why}; asking the kernel for its stacks (console log: {self.args.console})")
        mark = self.console_size
        symbols = Symbols(self.args.system_map)
        try:
            mon = Monitor(self.args.monitor)
        except OSError as e:
            log(f"no QEMU monitor at {self.args.monitor}: {e}")
            mon = None
        if mon:
            try:
                for line in mon.cmd("info cpus"):
                    log(f"  {line.strip()}")
                cpu = -1
                for line in mon.cmd("info registers -a"):
                    m = re.match(r"CPU#(\d+)", line)
                    if m:
                        cpu = int(m.group(1))
                    m = re.search(r"RIP=([0-9a-f]{16})", line)
                    if m:
                        rip = int(m.group(1), 16)
                        log(f"  CPU {cpu}: RIP {rip:#018x} {symbols.name(rip)}")
                # SysRq: blocked tasks, every CPU's backtrace, every task.
                for key in "wlt":
                    mon.cmd(f"sendkey alt-sysrq-{key}")
                    self.quiet_for(3, 30)
            except OSError as e:
                log(f"QEMU monitor: {e}")
            finally:
                mon.close()
        self.quiet_for(5, 60)
        with open(self.args.console, "rb") as f:
            f.seek(0, os.SEEK_END)
            end = f.tell()
            start = end - (self.console_size - mark)
            f.seek(max(start, 0))
            said = f.read().decode("utf-8", "replace").splitlines()
        if not said:
            log("the kernel printed nothing after the request (console silent: a kernel "
                "that takes no interrupts, or QEMU itself stuck; see the vCPU states above)")
        else:
            log(f"the kernel's answer ({len(said)} console lines):")
            for line in said:
                print(f"vm: | {line}", file=sys.stderr)
            sys.stderr.flush()


def watch(args, stopped):
    """Runs the guest once; its exit status and the Guest."""
    guest = Guest(args)
    stuck = None
    while guest.running():
        guest.pump(1.0)
        if stopped:
            guest.finish()
            return 143, guest
        now = time.monotonic()
        if now - guest.last_progress > args.stall:
            what = ("no guest output and no KTAP result line" if guest.booted
                    else "the boot printed nothing on the console, the command nothing yet,")
            stuck = (f"{what} for {args.stall} s (VM_STALL), "
                     f"{int(now - guest.start)} s after the start")
        elif args.limit and now - guest.start > args.limit:
            stuck = f"still running after {args.limit} s in all (VM_TIMEOUT, the last resort)"
        if stuck:
            guest.dump(stuck)
            guest.finish()
            log(f"TIMEOUT: {stuck}; killed")
            return 124, guest
    return guest.proc.wait(), guest


def boot_end(args, guest):
    """How a machine that ended during the boot ended, in one line."""
    if guest.qemu_died:
        return f"QEMU said: {guest.qemu_died}"
    status = None
    if args.qemu_status:
        try:
            with open(args.qemu_status, encoding="utf-8") as f:
                status = int(f.read().strip())
        except (OSError, ValueError):
            pass
    if status is None:
        how = "QEMU's exit status unknown (no status from the wrapper)"
    elif status > 128:
        how = f"QEMU killed by signal {status - 128}"
    else:
        how = f"QEMU exited with status {status}"
    said = []
    if args.qemu_log:
        try:
            with open(args.qemu_log, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            text = ""
        # QEMU logs "Triple fault" before the reset it causes; each CPU's
        # reset (also the first one, at power-on) starts "CPU Reset".
        if "Triple fault" in text:
            said.append("the guest triple-faulted (a CPU reset, QEMU's debug log)")
        said.append(f"{text.count('CPU Reset')} CPU resets logged (one per vCPU at power-on)")
    last = guest.last_line.decode("utf-8", "replace").strip()[:100]
    return (f"{how}; {'; '.join(said) if said else 'no QEMU debug log'}; "
            f"the console's last line: {last or '(none)'}")


def supervise(args):
    """Runs the guest of ARGS to its verdict; the exit status.

    ARGS has console, monitor, stall, limit, system_map, qemu_status,
    qemu_log and command (vng's argv). SIGTERM and SIGINT stop the guest
    (exit 143).
    """
    stopped = []

    def on_signal(signum, _frame):
        stopped.append(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    rc, guest = watch(args, stopped)
    if rc not in (0, 124, 143) and not guest.booted:
        # The machine ended before the guest command began (seen: TCG's
        # "iotlb_to_section: Assertion ... failed" while the kernel set up
        # PCI with several vCPUs; vng exits 255 with no output). Not the
        # guest's verdict: once more, and how it ended said.
        log(f"the machine ended before the guest command began (exit {rc}): "
            f"{boot_end(args, guest)}; starting the guest once more")
        with open(args.console, "ab") as f:
            f.write(b"\n==== vmwatch: the machine ended during boot; the guest again ====\n")
        for path in (args.qemu_status, args.qemu_log):
            if path and os.path.exists(path):
                os.unlink(path)
        rc, guest = watch(args, stopped)
        if rc not in (0, 124, 143) and not guest.booted:
            log(f"the machine ended before the guest command began again (exit {rc}): "
                f"{boot_end(args, guest)}")
    # How close the guest came to the stall limit (make check prints it).
    log(f"longest wait for progress: {guest.longest[0]:.0f} s of VM_STALL {args.stall} s, "
        f"ended by: {guest.longest[1][:100]}")
    return rc


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--console", required=True)
    p.add_argument("--monitor", required=True)
    p.add_argument("--stall", type=int, required=True)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--system-map")
    p.add_argument("--qemu-status", help="file the QEMU wrapper writes its exit status to")
    p.add_argument("--qemu-log", help="QEMU's -D log (-d cpu_reset)")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    return supervise(args)


if __name__ == "__main__":
    sys.exit(main())
