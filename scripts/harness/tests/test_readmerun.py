# SPDX-License-Identifier: GPL-2.0
"""harness.readmerun and harness.fresh: the commands, what is made of each
command's run, the command lines (the runs themselves take hours: not run
here)."""

import io
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import fresh, lib, readmerun


class Commands(unittest.TestCase):

    def test_selection(self):
        names = [c[0] for c in readmerun.selected()]
        self.assertEqual(len(names), len(set(names)))
        self.assertEqual(names[:3], ["build", "kdir", "setup"])
        self.assertEqual([c[0] for c in readmerun.selected("^stress")],
                         ["stress", "stress-faults", "stress-pressure", "stress-serve"])
        self.assertEqual([c[0] for c in readmerun.selected("quantum", "sweep")],
                         ["qemu-quantum"])
        self.assertNotIn("check", [c[0] for c in readmerun.selected(skip="^check$")])

    def test_the_qa_runs_are_the_harness(self):
        cmds = dict((name, cmd) for name, _, cmd in readmerun.COMMANDS)
        self.assertEqual(cmds["plugin-cost"], "PYTHONPATH=scripts python3 -m harness.plugincost")
        self.assertEqual(cmds["quantum-sweep"],
                         "QUANTA='0 1000' PYTHONPATH=scripts python3 -m harness.quantumsweep")
        for name, expect, cmd in readmerun.COMMANDS:
            self.assertIn(expect, ("ok", "fail"), name)
            self.assertNotIn("scripts/plugin-cost", cmd)

    def test_list_and_usage(self):
        with mock.patch("sys.stdout", new_callable=io.StringIO) as out:
            self.assertEqual(readmerun.main(["--list", "--only", "^kdir$"]), 0)
        self.assertEqual(out.getvalue(), "kdir: make -s kdir\n")
        with mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            self.assertEqual(readmerun.main(["--bogus"]), 2)
            self.assertEqual(readmerun.main(["--only"]), 2)
            self.assertEqual(readmerun.main(["--list", "--only", "("]), 2)
        self.assertTrue(err.getvalue().startswith("readme-run: unknown argument '--bogus'\n"
                                                  "usage: python3 -m harness.readmerun"))


class Results(unittest.TestCase):

    def test_last_line(self):
        self.assertEqual(readmerun.last_line("a\nlast one\n  \n\n"), "last one")
        self.assertEqual(readmerun.last_line("x" * 300), "x" * 200)
        self.assertEqual(readmerun.last_line(""), "")

    def test_verdict(self):
        self.assertTrue(readmerun.as_expected("ok", 0))
        self.assertFalse(readmerun.as_expected("ok", 2))
        self.assertTrue(readmerun.as_expected("fail", 124))
        self.assertFalse(readmerun.as_expected("fail", 0))

    def test_table_row(self):
        self.assertEqual(readmerun.table_row("make mutants LIST=1 | tail -n 3", 0, 75, "a|b"),
                         "| `make mutants LIST=1 \\| tail -n 3` | 0 | 1 min 15 s | `a\\|b` |")

    def test_run_one(self):
        # In the clone, with `latest` and pipefail, nothing of make's.
        with tempfile.TemporaryDirectory() as tmp:
            for run in ("20260101-000000", "20260102-000000", "20260102-000000-real"):
                os.makedirs(f"{tmp}/results/{run}")
            log = Path(tmp) / "log"
            with mock.patch.dict(os.environ, {"KDIR": "/k", "MAKEFLAGS": "-s"}):
                rc = readmerun.run_one(tmp, 'echo "$(latest 2) $(latest) ${KDIR:-none} '
                                       '${MAKEFLAGS:-none}"; false | true', log)
            self.assertEqual(rc, 1)
            self.assertEqual(log.read_text(encoding="utf-8"),
                             "results/20260101-000000 results/20260102-000000 none none\n")
            self.assertEqual(readmerun.run_one(tmp, "kill -TERM $$", log), 143)


class Fresh(unittest.TestCase):

    def test_make_check(self):
        # A stand-in for make: its check and setup lines and the count
        # shown, all of it in the log, its status; no make variables.
        with tempfile.TemporaryDirectory() as tmp:
            stub = Path(tmp) / "make"
            stub.write_text('#!/bin/sh\necho "setup: [0s] $RSLUB_CACHE"\necho noise\n'
                            'echo "check: ${MAKELEVEL:-top} $*"\necho "3 passed, 0 failed"\n'
                            'exit 3\n', encoding="ascii")
            stub.chmod(0o755)
            env = {"PATH": f"{tmp}:{os.environ['PATH']}", "MAKELEVEL": "1"}
            with mock.patch.dict(os.environ, env), \
                    mock.patch("sys.stdout", new_callable=io.StringIO) as out:
                rc = fresh.make_check(tmp, "/c", f"{tmp}/check.log")
            self.assertEqual(rc, 3)
            self.assertEqual(out.getvalue(), "setup: [0s] /c\ncheck: top check\n"
                             "3 passed, 0 failed\n")
            self.assertIn("noise\n", lib.read(f"{tmp}/check.log"))

    def test_a_failed_clone(self):
        clock = mock.Mock()
        with mock.patch.object(lib, "clone", return_value=False):
            self.assertEqual(fresh.fresh("/nonexistent", "main", clock), 1)

    def test_usage(self):
        with mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            self.assertEqual(fresh.main(["--branch"]), 2)
            self.assertEqual(fresh.main(["--list"]), 2)
        self.assertEqual(err.getvalue().splitlines()[:2],
                         ["fresh: --branch needs a value", fresh.USAGE])


if __name__ == "__main__":
    unittest.main()
