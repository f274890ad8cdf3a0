# SPDX-License-Identifier: GPL-2.0
"""What setup, gcc-kernel and qemu-build share: their progress lines, the
commands they run with the output in a log (one line when one fails), the
cache, the Debian package queries and the short hashes of their keys."""

import hashlib
import os
import re
import subprocess
import sys
import time

# "[[:space:]]" and "\s" of awk and grep in the C locale.
SPACE = b" \t\n\v\f\r"


class Failed(Exception):
    """What stops a run: its line ("PREFIX: FAILED: why"; setup's missing
    prerequisites, a line each), said on stderr by main."""


class Steps:
    """A run's progress lines, "PREFIX: [Ns] what" (N seconds since its
    start) on STREAM, none when QUIET, and its commands.

    BLANK_TOO: a failed command's line quotes the log's last line even
    when it is blank (setup's `tail -n 1`); else its last line that is not
    (qemu-build's).
    """

    def __init__(self, prefix, stream=None, quiet=False, blank_too=True):
        self.prefix, self.stream, self.quiet = prefix, stream, quiet
        self.blank_too = blank_too
        self.t0 = int(time.time())

    def say(self, what):
        if not self.quiet:
            print(f"{self.prefix}: [{int(time.time()) - self.t0}s] {what}",
                  file=self.stream or sys.stdout, flush=True)

    def fail(self, why):
        """Stops the run with the line "PREFIX: FAILED: WHY"."""
        raise Failed(f"{self.prefix}: FAILED: {why}")

    def run(self, step, log, action, **kw):
        """Runs ACTION, its output (both streams) in the file LOG, saying
        STEP first; a failure stops the run with one line that quotes the
        log and names it.

        ACTION is a command (a list, run with KW: cwd, env) or a callable
        given the open log that returns whether it succeeded.
        """
        os.makedirs(os.path.dirname(log) or ".", exist_ok=True)
        self.say(f"{step} (log: {log})")
        with open(log, "wb") as f:
            ok = action(f) if callable(action) else call(action, f, **kw) == 0
        if not ok:
            self.fail(f"step '{step}' failed: {last_line(log, self.blank_too)} "
                      f"(full log: {log})")

    def start(self, step, log, argv):
        """Starts ARGV in the background, its output in the file LOG, saying
        STEP first; wait() on what it returns stops the run as run() does
        when ARGV failed."""
        os.makedirs(os.path.dirname(log) or ".", exist_ok=True)
        self.say(f"{step} (log: {log})")
        with open(log, "wb") as f:
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=f,
                                        stderr=subprocess.STDOUT)
            except OSError as e:
                f.write(f"{argv[0]}: {e.strerror}\n".encode())
                proc = None
        return Background(self, step, log, proc)


class Background:
    """A command of Steps.start."""

    def __init__(self, steps, step, log, proc):
        self.steps, self.step, self.log, self.proc = steps, step, log, proc

    def wait(self):
        if self.proc is None or self.proc.wait() != 0:
            self.steps.fail(f"step '{self.step}' failed: "
                            f"{last_line(self.log, self.steps.blank_too)} (full log: {self.log})")


def call(argv, out, **kw):
    """ARGV's exit status, its output (both streams) in the open file OUT; a
    command that cannot be run says so there, as a shell would, and gives
    127."""
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out,
                              stderr=subprocess.STDOUT, check=False, **kw).returncode
    except OSError as e:
        out.write(f"{argv[0]}: {e.strerror}\n".encode())
        out.flush()
        return 127


def last_line(path, blank_too=True):
    """The last line of the file PATH (BLANK_TOO false: the last that is not
    blank), at most 200 bytes (`cut -c1-200`); "" without one."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return ""
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    if not blank_too:
        lines = [line for line in lines if line.strip(SPACE)]
    return lines[-1][:200].decode("utf-8", "replace") if lines else ""


def output(argv, **kw):
    """ARGV's standard output, as text ("" when it cannot be run); its
    stderr is this process's unless KW says otherwise."""
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
                              errors="replace", check=False, **kw).stdout
    except OSError:
        return ""


def second_field(text):
    """The second word of TEXT's first line ("rustc 1.95.0 (...)": the
    version), "" without one."""
    fields = text.split("\n")[0].split()
    return fields[1] if len(fields) > 1 else ""


def dpkg_version(package):
    """The installed version of PACKAGE (dpkg-query), None when dpkg knows
    it not (or there is no dpkg-query)."""
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, check=False)
    except OSError:
        return None
    return out.stdout.decode("utf-8", "replace").rstrip("\n") if out.returncode == 0 else None


def pkg_installed(package):
    """Whether dpkg has PACKAGE installed ("ok installed")."""
    return "ok installed" in output(["dpkg-query", "-W", "-f=${Status}", package],
                                    stderr=subprocess.DEVNULL)


def dpkg_ge(version, than):
    """Whether Debian's order puts VERSION at or after THAN."""
    try:
        return subprocess.run(["dpkg", "--compare-versions", version, "ge", than],
                              stdin=subprocess.DEVNULL, check=False).returncode == 0
    except OSError:
        return False


def short_hash(data):
    """The first 12 hex digits of DATA's sha256 (`sha256sum | cut -c1-12`)."""
    return hashlib.sha256(data).hexdigest()[:12]


def grep_v(data, pattern):
    """The lines of DATA (bytes) that PATTERN (bytes regex) does not match
    at their start, each ended by a newline, as `grep -vE '^PATTERN'`
    writes them (a last line without one gets one)."""
    return b"".join(line + b"\n" for line in split_lines(data) if not re.match(pattern, line))


def split_lines(data):
    """The lines of DATA (bytes) without their newlines, a last one without
    a newline included, as grep and awk read them."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def cache_dir(env=None):
    """RSLUB_CACHE, default ~/.cache/rslub (empty as good as unset)."""
    env = os.environ if env is None else env
    return env.get("RSLUB_CACHE") or os.path.join(home(env), ".cache/rslub")


def home(env=None):
    env = os.environ if env is None else env
    return env.get("HOME") or os.path.expanduser("~")


def cargo_path(env=None):
    """PATH with ~/.cargo/bin first (rustup's rustc, cargo and bindgen)."""
    env = os.environ if env is None else env
    return f"{home(env)}/.cargo/bin:{env.get('PATH', '')}"


def jobs(default=None):
    """JOBS (make -j), default DEFAULT or the CPUs this process may use, plus
    one (`nproc` + 1)."""
    given = os.environ.get("JOBS")
    if given:
        return given
    return str(default if default is not None else len(os.sched_getaffinity(0)) + 1)


def main(run, argv):
    """RUN(ARGV)'s exit status; a Failed it raises said on stderr, status 1."""
    try:
        return run(argv)
    except Failed as e:
        sys.stdout.flush()
        print(e, file=sys.stderr, flush=True)
        return 1
