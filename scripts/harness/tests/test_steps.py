# SPDX-License-Identifier: GPL-2.0
"""harness.steps: the lines of setup, gcc-kernel and qemu-build, a failed
command's one line, the byte-level line handling of their keys."""

import io
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import steps


class Lines(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def last(self, data, blank_too=True):
        (self.dir / "log").write_bytes(data)
        return steps.last_line(self.dir / "log", blank_too)

    def test_last_line(self):
        self.assertEqual(self.last(b"a\nb\n"), "b")
        self.assertEqual(self.last(b"a\nb"), "b")
        self.assertEqual(self.last(b""), "")
        self.assertEqual(self.last(b"x" * 300 + b"\n"), "x" * 200)
        # tail -n 1 quotes a blank last line; qemu-build's grep -v '^\s*$' skips it.
        self.assertEqual(self.last(b"error: x\n\n"), "")
        self.assertEqual(self.last(b"error: x\n \t\n\n", blank_too=False), "error: x")
        self.assertEqual(steps.last_line(self.dir / "none"), "")

    def test_say(self):
        s = steps.Steps("qemu-build", stream=io.StringIO())
        s.t0 -= 7
        s.say("built")
        self.assertEqual(s.stream.getvalue(), "qemu-build: [7s] built\n")
        quiet = steps.Steps("setup", stream=io.StringIO(), quiet=True)
        quiet.say("x")
        self.assertEqual(quiet.stream.getvalue(), "")

    def test_run(self):
        s = steps.Steps("setup", stream=io.StringIO())
        log = self.dir / "logs/step.log"
        s.run("ok step", str(log), ["sh", "-c", "echo out; echo err >&2"])
        self.assertEqual(log.read_text(encoding="ascii"), "out\nerr\n")
        self.assertEqual(s.stream.getvalue(), f"setup: [0s] ok step (log: {log})\n")
        with self.assertRaises(steps.Failed) as e:
            s.run("bad step", str(log), ["sh", "-c", "echo first; echo the reason; exit 3"])
        self.assertEqual(str(e.exception), f"setup: FAILED: step 'bad step' failed: the reason "
                                           f"(full log: {log})")
        with self.assertRaises(steps.Failed) as e:
            s.run("no command", str(log), ["/nonexistent/cmd"])
        self.assertIn("failed: /nonexistent/cmd: No such file or directory", str(e.exception))
        # A callable gets the log.
        s.run("callable", str(log), lambda f: f.write(b"x\n") == 2)
        self.assertEqual(log.read_text(encoding="ascii"), "x\n")

    def test_start(self):
        s = steps.Steps("setup", stream=io.StringIO())
        log = self.dir / "bg.log"
        s.start("fine", str(log), ["true"]).wait()
        bad = s.start("in the background", str(log), ["sh", "-c", "echo why; exit 1"])
        with self.assertRaises(steps.Failed) as e:
            bad.wait()
        self.assertEqual(str(e.exception), "setup: FAILED: step 'in the background' failed: "
                                           f"why (full log: {log})")

    def test_main(self):
        def fails(argv):
            raise steps.Failed(f"x: FAILED: {argv[0]}")
        with mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            self.assertEqual(steps.main(fails, ["why"]), 1)
            self.assertEqual(steps.main(lambda argv: 2, []), 2)
        self.assertEqual(err.getvalue(), "x: FAILED: why\n")


class Bytes(unittest.TestCase):

    def test_split_lines(self):
        self.assertEqual(steps.split_lines(b"a\nb\n"), [b"a", b"b"])
        self.assertEqual(steps.split_lines(b"a\n\nb"), [b"a", b"", b"b"])
        self.assertEqual(steps.split_lines(b""), [])

    def test_grep_v(self):
        # Each line kept ends in a newline, the last one too.
        self.assertEqual(steps.grep_v(b"CONFIG_A=y\nCONFIG_B=y\n# c\nCONFIG_A2=m",
                                      rb"CONFIG_A="), b"CONFIG_B=y\n# c\nCONFIG_A2=m\n")
        # Only at a line's start.
        self.assertEqual(steps.grep_v(b"# CONFIG_A=y\n", rb"CONFIG_A="), b"# CONFIG_A=y\n")

    def test_short_hash(self):
        # printf 'abc\n' | sha256sum | cut -c1-12
        self.assertEqual(steps.short_hash(b"abc\n"), "edeaaff3f177")


class Environment(unittest.TestCase):

    def test_cache_and_path(self):
        self.assertEqual(steps.cache_dir({"HOME": "/h"}), "/h/.cache/rslub")
        self.assertEqual(steps.cache_dir({"HOME": "/h", "RSLUB_CACHE": ""}), "/h/.cache/rslub")
        self.assertEqual(steps.cache_dir({"RSLUB_CACHE": "/c"}), "/c")
        self.assertEqual(steps.cargo_path({"HOME": "/h", "PATH": "/bin"}), "/h/.cargo/bin:/bin")

    def test_jobs(self):
        with mock.patch.dict(os.environ, {"JOBS": "7"}):
            self.assertEqual(steps.jobs(), "7")
            self.assertEqual(steps.jobs(2), "7")
        with mock.patch.dict(os.environ, {"JOBS": ""}):
            self.assertEqual(steps.jobs(2), "2")
            self.assertEqual(steps.jobs(), str(len(os.sched_getaffinity(0)) + 1))


if __name__ == "__main__":
    unittest.main()
