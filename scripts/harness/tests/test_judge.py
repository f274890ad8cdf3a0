# SPDX-License-Identifier: GPL-2.0
"""The verdicts of harness.judge on made-up guest output."""

import unittest

from harness import judge

B = f"[ 1.0] {judge.KT_REPORT_BEGIN}"
E = f"[ 1.2] {judge.KT_REPORT_END}"


class KernelLogBad(unittest.TestCase):
    """The kernel log check: a report a KUnit case asked for, bracketed by
    its two lines, is left out; a report outside the brackets, or in a
    window never closed (the kthread that made the access died), is not."""

    def bad(self, *lines):
        return judge.kernel_log_bad("\n".join(lines) + "\n")

    def test_a_clean_log(self):
        self.assertEqual(self.bad("[ 0.1] ok"), [])

    def test_an_expected_report_is_left_out(self):
        self.assertEqual(self.bad(B, "[ 1.1] BUG: KASAN: slab-use-after-free in kt_read_byte",
                                  "[ 1.1] Call Trace:", E), [])

    def test_a_report_outside_the_brackets_is_bad(self):
        self.assertEqual(self.bad(B, "[ 1.1] BUG: KFENCE: use-after-free read in kt_read_byte",
                                  E, "[ 1.9] fine", "[ 2.0] WARNING: at mm/slub.c"),
                         ["5:[ 2.0] WARNING: at mm/slub.c"])

    def test_a_window_never_closed_is_read(self):
        self.assertEqual(self.bad("[ 0.1] ok", B, "[ 1.1] BUG: unable to handle page fault"),
                         ["3:[ 1.1] BUG: unable to handle page fault"])

    def test_a_window_a_new_one_opens_is_read(self):
        self.assertEqual(self.bad(B, "[ 1.1] Oops: 0000", B, E), ["2:[ 1.1] Oops: 0000"])

    def test_at_most_five_lines(self):
        self.assertEqual(len(self.bad(*["WARNING: x"] * 9)), 5)


class GuestOutput(unittest.TestCase):
    """Cutting a guest's output into its kernel log and KTAP runs."""

    def test_dmesg_section_keeps_the_markers(self):
        log = f"a\n{judge.DMESG_BEGIN}\nk1\n{judge.DMESG_END}\nb\n"
        self.assertEqual(judge.dmesg_section(log),
                         f"{judge.DMESG_BEGIN}\nk1\n{judge.DMESG_END}\n")

    def test_ktap_runs_one_per_top_level_header(self):
        dmesg = ("[ 0.1] boot\n[ 1.0] KTAP version 1\n[ 1.0] ok 1 rslub_percpu\n"
                 "[ 2.0] KTAP version 1\n[ 2.0]     KTAP version 1\n[ 2.1] ok 1 rslub_api\n")
        runs = judge.ktap_runs(dmesg)
        self.assertEqual(len(runs), 2)
        self.assertTrue(runs[1].startswith("[ 2.0] KTAP version 1\n"))
        self.assertTrue(runs[1].endswith("ok 1 rslub_api\n"))

    def test_ktap_from_first(self):
        self.assertEqual(judge.ktap_from_first("a\n] KTAP version 1\nb\n"),
                         "] KTAP version 1\nb\n")
        self.assertEqual(judge.ktap_from_first("a\n"), "")

    def test_suite_ended(self):
        dmesg = "[ 1] ok 3 rslub_api\n[ 2] ok 4 rslub_serve # SKIP no hook\n"
        self.assertTrue(judge.suite_ended(dmesg, "rslub_api"))
        self.assertTrue(judge.suite_ended(dmesg, "rslub_serve"))
        self.assertFalse(judge.suite_ended(dmesg, "rslub_ap"))
        self.assertFalse(judge.suite_ended(dmesg, "rslub_slub"))

    def test_kunit_sums(self):
        parsed = ("[12:00:00] Testing complete. Ran 5 tests: passed: 5\n"
                  "[12:00:01] Testing complete. Ran 109 tests: passed: 96, failed: 1, "
                  "crashed: 1, skipped: 10, errors: 1\n")
        summaries, sums = judge.kunit_sums(parsed)
        self.assertEqual(len(summaries), 2)
        self.assertEqual(sums, {"passed": 101, "failed": 1, "crashed": 2, "skipped": 10})


class CountChecks(unittest.TestCase):
    """A guest's PASS/FAIL lines against the expected count or its plan."""

    def setUp(self):
        self.said = []
        self.tally = judge.Tally(self.said.append)

    def test_against_the_plan(self):
        log = "x: plan 3\nx: PASS a\nx: FAIL b: why\nx: PASS c\n"
        self.tally.count_checks("g", log, "x")
        self.assertEqual(self.said, ["  g: x: 2 passed, 1 failed", "  g: x: FAIL b: why"])
        self.assertEqual((self.tally.passed, self.tally.failed, self.tally.problems), (2, 1, []))

    def test_a_check_that_did_not_report(self):
        self.tally.count_checks("g", "x: PASS a\n", "x", 2)
        self.assertEqual(self.tally.problems, ["  g: 1 of 2 x checks reported"])

    def test_no_plan_line(self):
        self.tally.count_checks("g", "", "x")
        self.assertEqual(self.tally.problems,
                         ["  g: no 'x: plan N' line: the guest never reached its x checks"])

    def test_summary(self):
        self.tally.passed, self.tally.skipped = 7, 2
        self.assertTrue(self.tally.summary("check", "note"))
        self.assertEqual(self.said, ["note", "7 passed, 0 failed, 2 skipped"])

    def test_a_problem_fails_the_run(self):
        self.tally.problem("  g: broken")
        self.assertFalse(self.tally.summary("check"))
        self.assertEqual(self.said, ["check: problems:\n  g: broken", "0 passed, 1 failed"])


if __name__ == "__main__":
    unittest.main()
