# SPDX-License-Identifier: GPL-2.0
"""harness.qemuquantum: the loop's symbols, each run's options, the
report's verdicts and the table (the runs take 5 minutes: not run here)."""

import unittest
from unittest import mock

from harness import qemuquantum as qq

NM = """\
0000000060001020 0000000000000010 T main
00000000600017b0 0000000000000023 T spin
00000000600017e0 0000000000000001 T spin_done
                 U nothing
0000000060002000 T unsized
"""
N = 12500000


def report(max_turn, max_block="40", window="closed", loops=(N, N)):
    return {"window": window, "max_turn": str(max_turn), "max_block": max_block,
            "mean_turn": "500", "turns": "50000", "loop_execs_vcpu0": str(loops[0]),
            "loop_execs_vcpu1": str(loops[1])}


class Runs(unittest.TestCase):

    def test_spin_symbols(self):
        self.assertEqual(qq.spin_symbols(NM), (0x600017b0, 0x600017d3, 0x600017e0))
        self.assertIsNone(qq.spin_symbols("00000000600017b0 0000000000000023 T spin\n"))

    def test_turns_opts(self):
        syms = (1610618800, 1610618835, 1610618848)
        self.assertEqual(qq.turns_opts("/w", "none", syms),
                         "-icount shift=0,sleep=off -plugin /w/turns.so,out=/w/none.txt,"
                         "lo=1610618800,hi=1610618835,done=1610618848")
        self.assertEqual(qq.turns_opts("/w", "q200", syms, "-accel tcg,rr-quantum=200"),
                         "-icount shift=0,sleep=off -accel tcg,rr-quantum=200 -plugin "
                         "/w/turns.so,out=/w/q200.txt,lo=1610618800,hi=1610618835,"
                         "done=1610618848")

    def test_values(self):
        self.assertEqual(qq.values("window=closed\nturns=5\nnoise\nturns=6\n"),
                         {"window": "closed", "turns": "5"})


class Verdicts(unittest.TestCase):

    def test_loop_ok(self):
        self.assertTrue(qq.loop_ok(report(1000), N))
        self.assertTrue(qq.loop_ok(report(1000, loops=(N + N // 10, N)), N))
        # The stock binary: every execution on the vCPU that translated it.
        self.assertFalse(qq.loop_ok(report(1000, loops=(2 * N, 0)), N))
        self.assertFalse(qq.loop_ok(report(1000, loops=("", N)), N))

    def test_checks_pass(self):
        reports = {"none": report(300000), "q1000": report(1040), "q200": report(230)}
        results = qq.checks(["1000", "200"], reports, N)
        self.assertEqual([what for what, _ in results], [
            "rr-quantum=1000: both vCPUs spun together (window closed)",
            "rr-quantum=1000: longest turn 1040 <= 1000 + one block (40)",
            "rr-quantum=1000: each vCPU seen running the loop's block",
            "rr-quantum=200: both vCPUs spun together (window closed)",
            "rr-quantum=200: longest turn 230 <= 200 + one block (40)",
            "rr-quantum=200: each vCPU seen running the loop's block",
            "no quantum: longest turn 300000 > 10 x 1000",
            "no quantum: each vCPU seen running the loop's block"])
        self.assertTrue(all(ok for _, ok in results))

    def test_checks_fail(self):
        reports = {"none": report(9000), "q1000": report(1041, window="never-opened"),
                   "q200": report("", max_block="")}
        oks = [ok for _, ok in qq.checks(["1000", "200"], reports, N)]
        self.assertEqual(oks, [False, False, True, True, False, True, False, True])

    def test_table(self):
        self.assertEqual(qq.TABLE.format("run", "max_turn", "mean_turn", "turns", "loop_vcpu0",
                                         "loop_vcpu1"),
                         "run              max_turn  mean_turn    turns   loop_vcpu0   "
                         "loop_vcpu1")
        self.assertEqual(qq.table_row("q200", report(230)),
                         "q200                  230        500    50000     12500000     "
                         "12500000")
        self.assertEqual(qq.table_row("stock", {}), "stock".ljust(14 + 11 + 11 + 9 + 13 + 13))

    def test_usage_and_refusals(self):
        with mock.patch("sys.stderr"):
            self.assertEqual(qq.main(["x"]), 2)
        with mock.patch.dict("os.environ", {"SPIN_ITERS": "1e6"}), \
                self.assertRaises(qq.Died):
            qq.run("/nonexistent")


if __name__ == "__main__":
    unittest.main()
