# SPDX-License-Identifier: GPL-2.0
"""make stress's runs (harness.stress): the guest each asks for, the verdict."""

import unittest

from harness import serve, stress


class Plan(unittest.TestCase):

    def test_the_default_stress(self):
        self.assertEqual(stress.plan_run({"STRESS_PARAMS": "seed=1"}, True),
                         ("stress", "4", "2", "2G", "log_buf_len=4M",
                          "RSLUB_PARAMS='' scripts/guest/stress.sh --dmesg 60 seed=1"))

    def test_pressure_is_small(self):
        kind, cpus, numa, mem, _, cmd = stress.plan_run({"PRESSURE": "1"}, False)
        self.assertEqual((kind, cpus, numa, mem), ("pressure", "2", "0", "320M"))
        self.assertEqual(cmd, "scripts/guest/oom.sh --dmesg pressure 5")

    def test_serve_samples_with_kfence(self):
        plan = stress.plan_run({"SERVE": "1", "STRESS_SECONDS": "30"}, True)
        self.assertEqual(plan[4], "log_buf_len=4M kfence.sample_interval=100")
        self.assertTrue(plan[5].startswith("SERVE_KEPT=1 "))
        self.assertEqual(stress.plan_run({"SERVE": "1"}, False)[4], "log_buf_len=4M")

    def test_faults(self):
        self.assertEqual(stress.plan_run({"FAULTS": "1", "FAULT_PERCENT": "5"}, False)[5],
                         "scripts/guest/oom.sh --dmesg faults 60 5")


class Verdict(unittest.TestCase):

    def test_a_passing_stress(self):
        self.assertEqual(stress.problems("stress", 0, "stress: PASS all\n", "/o", 5), [])

    def test_a_stuck_guest(self):
        found = stress.problems("stress", 124, "vm: STUCK: no output\n", "/o", 5)
        self.assertIn("vm: STUCK: no output", found[0])
        self.assertEqual(found[1], "  no 'stress: PASS' line")

    def test_pressure_counts_rounds_and_plan(self):
        log = "pressure: plan 5\n" + "pressure: PASS fill\npressure: PASS shrinker\n" * 2
        self.assertEqual(stress.problems("pressure", 0, log, "/o", 1),
                         ["  4 of 5 pressure checks passed"])
        self.assertEqual(stress.problems("pressure", 0, log, "/o", 2),
                         ["  not every round reported fill and shrinker",
                          "  4 of 5 pressure checks passed"])

    def test_serve_needs_every_check(self):
        log = "serve: PASS x\n" * (serve.SERVE_CHECKS - 1) + "serve: FAIL y\n"
        self.assertEqual(stress.problems("serve", 0, log, "/o", 5),
                         ["  1 'serve: FAIL' lines",
                          f"  {serve.SERVE_CHECKS - 1} of {serve.SERVE_CHECKS} serve checks "
                          "passed"])


if __name__ == "__main__":
    unittest.main()
