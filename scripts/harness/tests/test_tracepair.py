# SPDX-License-Identifier: GPL-2.0
"""harness.tracepair: the guest command, gdb's and the report's command
lines, the verdicts (make check runs the self-test itself)."""

import re
import unittest
from unittest import mock

from harness import lib
from harness import tracepair as tp

# trace-pair-test.S's steps and report as they are when all is well.
STEPS = """alloc 0
mark
100012
100040
100041 rep movsb 128
mark
"""
REPORT = """| allocator | alloc | free | pair | kernel | rslub | harness | rep (last pair) | \
pairs traced |
|---|---|---|---|---|---|---|---|---|
| test | 10 | 17 | 27 | 27 | 0 | 0 | movsb 128 B, stosl 256 B, stosb 100 B, stosb 100 B, \
stosb 100 B | 10+17 |
| function | module | instructions | rep string instructions |
| copy | vmlinux | 8 | movsb 128 B, stosl 256 B |
"""


class Commands(unittest.TestCase):

    def test_guest_cmd(self):
        cmd = tp.guest_cmd("/b", "/rw", {"TRACE_ALLOCS": "slub,rslub", "RSLUB_PARAMS": "harden=0",
                                         "TRACE_BULK": "", "TRACE_SIZE": ""})
        lines = cmd.split("\n")
        self.assertEqual(lines[0], "cd /b && dmesg -n 1 &&")
        self.assertEqual(lines[2], "insmod rslub.ko harden=0 &&")
        self.assertEqual(lines[3], "{ insmod bench/rslub_bench.ko workloads=trace "
                         "allocs=slub,rslub sizes=64 rounds=1 trace_bulk=0 >/rw/insmod.log 2>&1; "
                         "echo $? >/rw/insmod.rc; } &")
        self.assertIn("mv /rw/mark.tmp /rw/mark;", lines[5])
        self.assertEqual(lines[-1], "dmesg | grep rslub_bench; echo trace-guest-done")
        # The defaults: every allocator of the bench, no parameters.
        cmd = tp.guest_cmd("/b", "/rw", {})
        self.assertIn(f"allocs={tp.ALLOCS} sizes=64 rounds=1 trace_bulk=0 ", cmd)
        self.assertIn("insmod rslub.ko  &&", cmd)

    def test_gdb_and_report(self):
        self.assertEqual(tp.gdb_argv(":1234")[-4:],
                         ["-ex", "target remote :1234", "-x", str(tp.GDB_SCRIPT)])
        argv = tp.report_argv("slub,rslub", 64, "/o/steps.txt", "/o/kallsyms", "k-bench")
        self.assertEqual(argv[1:], [str(tp.REPORT), "--allocs", "slub,rslub", "--size", "64",
                                    "--kernel", "k-bench", "/o/steps.txt", "/o/kallsyms"])
        self.assertNotIn("--kernel", tp.report_argv("test", 0, "s", "k"))

    def test_count_allocs(self):
        self.assertEqual(tp.count_allocs(tp.ALLOCS), 5)
        self.assertEqual(tp.count_allocs("slub,,rslub,"), 2)


class Verdicts(unittest.TestCase):

    def test_bench_completed(self):
        log = "bench: x\nrslub_bench: done\ntrace-guest-done\n"
        self.assertTrue(tp.bench_completed(log, "0\n", ""))
        # -EAGAIN: the module does not stay loaded.
        self.assertTrue(tp.bench_completed(log, "1\n", "insmod: Resource temporarily unavailable"))
        self.assertFalse(tp.bench_completed(log, "1\n", "insmod: Invalid argument"))
        self.assertFalse(tp.bench_completed("trace-guest-done\n", "0\n", ""))
        self.assertFalse(tp.bench_completed("rslub_bench: done\n", "0\n", ""))

    def test_self_checks(self):
        files = {"steps": STEPS + "100050 rep stosl 256\n", "report": REPORT}
        for name, pattern, where in tp.SELF_CHECKS:
            self.assertTrue(re.search(pattern, files[where], re.M), name)
        # A rep counted per iteration, the bytes of one element: no match.
        files = {"steps": "100041\n100041\n100050 rep stosl 64\n",
                 "report": REPORT.replace("10+17", "138+17").replace("| 8 |", "| 136 |")}
        for name, pattern, where in tp.SELF_CHECKS:
            self.assertFalse(re.search(pattern, files[where], re.M), name)
        self.assertEqual(len(tp.SELF_CHECKS), 4)

    def test_prefixed(self):
        self.assertEqual(tp.prefixed("a\n\nb\n"), "  | a\n  | \n  | b\n")
        self.assertEqual(tp.prefixed("a\nb\nc\n", 2), "  | a\n  | b\n")


class CommandLine(unittest.TestCase):

    def test_usage(self):
        with mock.patch("sys.stderr") as err:
            self.assertEqual(tp.main(["--selftest"]), 2)
            self.assertEqual(tp.main(["--self-test", "x"]), 2)
        self.assertIn(tp.USAGE, "".join(c.args[0] for c in err.write.call_args_list))

    def test_without_gdb(self):
        with mock.patch("shutil.which", return_value=None), mock.patch("sys.stderr"):
            self.assertEqual(tp.trace({}), 2)

    def test_paths(self):
        for path in (tp.GDB_SCRIPT, tp.REPORT, tp.TEST_GUEST):
            self.assertTrue(path.is_file(), path)
            self.assertEqual(path.parent, lib.ROOT / "scripts")


if __name__ == "__main__":
    unittest.main()
