# SPDX-License-Identifier: GPL-2.0
"""harness.setuplogic: its verdicts, its lines and the hosts it plays (make
check runs the cases themselves)."""

import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import setuplogic as sl


class Verdicts(unittest.TestCase):

    def test_ends(self):
        self.assertIsNone(sl.ends("into /k", "setup: a\nsetup: build into /k"))
        self.assertIsNone(sl.ends("", ""))
        self.assertEqual(sl.ends("into /k", "a\ninto /k2"),
                         "expected a line ending in 'into /k', got:\n    a\n    into /k2")
        # An empty output is one empty line, shown indented.
        self.assertEqual(sl.ends("x", ""), "expected a line ending in 'x', got:\n    ")

    def test_exactly(self):
        self.assertIsNone(sl.exactly("/k", "/k"))
        self.assertEqual(sl.exactly("/k", "Entering\n/k"),
                         "expected exactly '/k', got:\n    Entering\n    /k")

    def test_within(self):
        # * takes in a / too, as the shell's case did; the cache is no glob.
        self.assertIsNone(sl.within("/c[1]", "/kernel/*", "/c[1]/kernel/7.3/x"))
        self.assertIsNone(sl.within("/c", "/kernel/*-classic-*", "/c/kernel/6.12-classic-ab"))
        self.assertEqual(sl.within("/c", "/kernel/*-classic-*", "/c/kernel/7.3-test-ab"),
                         "got '/c/kernel/7.3-test-ab'")
        self.assertEqual(sl.within("/c", "/kernel/*", "/c1/kernel/x"), "got '/c1/kernel/x'")

    def test_the_cases(self):
        names = [name for name, _ in sl.CASES]
        self.assertEqual(len(names), 23)
        self.assertEqual(len(set(names)), 23)

    def test_run_prints_a_line_a_case(self):
        lines = []
        cases = (("good", lambda h: None), ("bad", lambda h: "got 'x'"))
        self.assertEqual(sl.run(None, cases, lines.append), 1)
        self.assertEqual(lines, ["setup-logic: PASS good", "setup-logic: FAIL bad: got 'x'"])


class Hosts(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def host(self, path=None):
        env = {"KDIR": "/k", "MAKELEVEL": "1", "PATH": path or os.environ["PATH"]}
        with mock.patch.dict(os.environ, env):
            return sl.Host(self.dir, self.dir)

    def test_environment_and_output(self):
        h = self.host()
        self.assertEqual(h.run(["printf", "a\\n\\n"]), "a")
        env = h.run(["env"]).splitlines()
        self.assertIn(f"RSLUB_CACHE={self.dir}/cache", env)
        self.assertIn("RSLUB_SETUP_DRY_RUN=1", env)
        self.assertFalse([v for v in env if v.startswith(("KDIR=", "MAKELEVEL="))])
        self.assertEqual(h.run(["sh", "-c", "echo out; echo err >&2"], stderr=True),
                         "out\nerr")
        self.assertEqual(h.run(["sh", "-c", "echo $X"], env={"X": "given"}), "given")

    def test_path_without(self):
        # The first of a name on PATH, every name but those left out and
        # the hidden ones.
        a, b = self.dir / "a", self.dir / "b"
        for d, names in ((a, ("cc", "ld", ".hidden")), (b, ("cc", "gdb", "vng"))):
            d.mkdir()
            for name in names:
                (d / name).write_text("", encoding="ascii")
        h = self.host(f"{a}:{self.dir}/none:{b}")
        d = Path(h.path_without("vng", "ld"))
        self.assertEqual(sorted(os.listdir(d)), ["cc", "gdb"])
        self.assertEqual(os.readlink(d / "cc"), f"{a}/cc")
        self.assertEqual(os.readlink(d / "gdb"), f"{b}/gdb")

    def test_stub(self):
        h = self.host()
        d = h.stub("uname", "echo aarch64")
        self.assertEqual(subprocess.run([f"{d}/uname"], capture_output=True, text=True,
                                        check=False).stdout, "aarch64\n")


if __name__ == "__main__":
    unittest.main()
