# SPDX-License-Identifier: GPL-2.0
"""make check's decisions (harness.check): which guests start when, what
it reads from its steps' logs."""

import os
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

from harness import check


def guests(*shape):
    """Guests of the given (name, vCPUs)."""
    return [check.Guest(name, n, "true") for name, n in shape]


# make check's guests on the project's kernel, in its order.
CHECK = (("serve", 3), ("numa4", 4), ("hang", 1), ("smp2", 2), ("oom", 2), ("model", 2))


def names(gs):
    return [g.name for g in gs]


class Scheduler(unittest.TestCase):
    """Longest first, each as its vCPUs fit beside those running."""

    def test_the_first_start_fills_8_vcpus(self):
        start, used = check.startable(guests(*CHECK), 0, 8)
        self.assertEqual((names(start), used), (["serve", "numa4", "hang"], 8))

    def test_a_later_guest_that_fits_goes_first(self):
        # numa4 ended: 4 of 8 in use by serve and hang; smp2 and oom fit.
        start, used = check.startable(guests(*CHECK[3:]), 4, 8)
        self.assertEqual((names(start), used), (["smp2", "oom"], 8))
        start, used = check.startable(guests(("big", 4), ("small", 1)), 5, 8)
        self.assertEqual((names(start), used), (["small"], 6))

    def test_any_guest_starts_when_none_runs(self):
        start, used = check.startable(guests(("huge", 12), ("small", 1)), 0, 8)
        self.assertEqual((names(start), used), (["huge"], 12))

    def test_seq_runs_one_at_a_time(self):
        # CHECK_VMS=seq: a limit of 0.
        start, _ = check.startable(guests(*CHECK), 0, 0)
        self.assertEqual(names(start), ["serve"])
        self.assertEqual(check.startable(guests(*CHECK[1:]), 3, 0)[0], [])

    def test_a_run_of_the_queue(self):
        """The whole run as run_guests drives it, guests ending longest first."""
        waiting, running, order, used = guests(*CHECK), [], [], 0
        while waiting or running:
            start, used = check.startable(waiting, used, 8)
            for g in start:
                waiting.remove(g)
            running += start
            order.append(names(start))
            ended = max(running, key=lambda g: g.vcpus)
            running.remove(ended)
            used -= ended.vcpus
        self.assertEqual(order, [["serve", "numa4", "hang"], ["smp2", "oom"], ["model"],
                                 [], [], []])


class Limits(unittest.TestCase):

    def test_vm_limit_scales_with_the_work(self):
        with mock.patch.dict(os.environ, {"VM_TIMEOUT": ""}):
            self.assertEqual(check.vm_limit(0), 1800)
            self.assertEqual(check.vm_limit(15), 2100)
        with mock.patch.dict(os.environ, {"VM_TIMEOUT": "99"}):
            self.assertEqual(check.vm_limit(15), 99)

    def test_kunit_guest(self):
        c = check.Check()
        g = c.kunit("smp2", 2, 1, 50, 0, "2G", "init_on_free=1 ")
        self.assertEqual(g.cmd, " RSLUB_LIFECYCLE=50 scripts/guest/kunit.sh")
        self.assertEqual(g.env["VM_APPEND"], "init_on_free=1")
        self.assertEqual(g.cwd, c.tree)


class StepLogs(unittest.TestCase):

    def test_warnings_with_three_lines_after(self):
        text = "a\nfoo.c:1: Warning: x\n1\n2\n3\n4\n"
        self.assertEqual(check.warnings(text), ["foo.c:1: Warning: x", "1", "2", "3"])
        self.assertEqual(check.warnings("all fine\n"), [])

    def test_cargo_passed(self):
        text = ("test result: ok. 117 passed; 0 failed; 1 ignored\nrunning 0 tests\n"
                "test result: ok. 6 passed; 0 failed\nnot a test result: 5 passed\n")
        self.assertEqual(check.cargo_passed(text), 123)

    def test_unittest_counts(self):
        self.assertEqual(check.unittest_counts("Ran 40 tests in 3s\n\nOK\n"), (40, 0))
        self.assertEqual(check.unittest_counts(
            "Ran 40 tests in 3s\n\nFAILED (failures=2, errors=1, skipped=3)\n"), (34, 3))
        self.assertEqual(check.unittest_counts("Traceback...\n"), (0, 1))



def group_nices(pgid):
    """The nice values of the processes of group PGID."""
    nices = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if pid.isdigit() and int(fields[2]) == pgid:
            nices.append(int(fields[16]))
    return nices


class Beside(unittest.TestCase):

    # A step started beside the guests runs at nice 10, its children too,
    # and all of them at 0 once the guests are done (unnice).
    def test_a_step_beside_the_guests_gets_the_cpu_back_after_them(self):
        c = check.Check()
        gate = threading.Event()
        c.guests_thread = threading.Thread(target=gate.wait)
        c.guests_thread.start()
        with tempfile.TemporaryDirectory() as d:
            stop = Path(d, "stop")
            step = f"sh -c 'while [ ! -e {stop} ]; do sleep 0.05; done' & wait"
            ok = []
            t = threading.Thread(target=lambda: ok.append(
                c.run_logged(["sh", "-c", step], Path(d, "log"))))
            t.start()
            try:
                for _ in range(200):
                    if c.procs and len(group_nices(c.procs[0].pid)) >= 2:
                        break
                    time.sleep(0.02)
                pgid = c.procs[0].pid
                self.assertGreaterEqual(len(group_nices(pgid)), 2)
                self.assertEqual(set(group_nices(pgid)), {10})
                c.unnice()
                self.assertEqual(set(group_nices(pgid)), {0})
                # Started after the guests: not niced at all.
                self.assertEqual(c.beside(["true"]), ["true"])
            finally:
                stop.touch()
                t.join()
                gate.set()
            self.assertEqual(ok, [True])
            self.assertEqual(c.procs, [])

if __name__ == "__main__":
    unittest.main()
