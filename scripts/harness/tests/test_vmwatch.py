# SPDX-License-Identifier: GPL-2.0
"""The guest watcher's decisions (harness.vmwatch), on stand-ins for vng.

Small shell commands print like a guest (stdout: the guest command's
output; stderr: the kernel console) and behave like one that works, hangs
or whose QEMU dies. Seconds, no VM; about 40 s in all, mostly asleep.
"""

import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2]


class Watcher(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def expect(self, want, pattern, stall, script):
        """Runs SCRIPT under the watcher with a stall limit of STALL s.

        It must exit WANT, and its stderr (the watcher's lines) match
        PATTERN (a regex, per line).
        """
        d = self.dir
        p = subprocess.run(
            [sys.executable, "-m", "harness.vmwatch", "--console", f"{d}/console",
             "--monitor", f"{d}/none.sock", "--qemu-status", f"{d}/qemu.status",
             "--qemu-log", f"{d}/qemu.log", "--stall", str(stall), "--",
             "sh", "-c", script.replace("$tmp", d)],
            cwd=SCRIPTS, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
        self.assertEqual(p.returncode, want, p.stderr)
        self.assertRegex(p.stderr, re.compile(pattern, re.M))

    def test_progress_keeps_a_slow_guest_alive(self):
        self.expect(0, "longest wait for progress: [12] s", 3,
                    'for i in 1 2 3 4; do echo "line $i"; sleep 1.5; done')

    def test_ktap_results_on_the_console_are_progress(self):
        self.expect(0, "longest wait", 3,
                    'echo started; for i in 1 2 3 4; do sleep 1.5; '
                    'echo "[ 1.0]     ok $i case" >&2; done')

    def test_other_console_lines_are_not_progress(self):
        self.expect(124, "^vm: STUCK: no guest output and no KTAP result line for 2 s", 2,
                    'echo started; for i in 1 2 3 4 5 6 7 8; do '
                    'echo "[ 1.0] WARNING: still here" >&2; sleep 0.5; done; sleep 60')

    def test_a_boot_that_prints_is_progress(self):
        # Before the command's first line the boot's console lines count.
        self.expect(0, "longest wait", 2,
                    'for i in 1 2 3 4; do echo "[ $i.0] booting" >&2; sleep 1; done; '
                    'echo started')

    def test_a_silent_boot_is_stuck(self):
        self.expect(124, "^vm: STUCK: the boot printed nothing", 2, "sleep 30")

    def test_qemu_dying_at_boot_is_retried_once(self):
        # Said, and the second run's status is the verdict.
        self.expect(0, r"machine ended before the guest command began \(exit 255\): "
                    r"QEMU said: qemu-system-x86_64: .*Assertion", 5,
                    "if [ -e $tmp/died ]; then echo started; else touch $tmp/died; "
                    "echo 'qemu-system-x86_64: system/physmem.c:2678: iotlb_to_section: "
                    "Assertion failed.' >&2; exit 255; fi")

    def test_a_guest_reset_at_boot_is_said_and_retried_once(self):
        # vng's -no-reboot: QEMU exits 0, vng 255, the console has the
        # kernel's first line; the wrapper's status and QEMU's "Triple
        # fault" are said.
        self.expect(0, r"exit 255\): QEMU exited with status 0; the guest triple-faulted.*"
                    r"2 CPU resets logged.*last line: \[ *0\.0+\] Linux version", 5,
                    "if [ -e $tmp/reset ]; then echo started; else touch $tmp/reset; "
                    "echo '[    0.000000] Linux version 7.3.4' >&2; "
                    "printf 'CPU Reset (CPU 0)\\nCPU Reset (CPU 1)\\nTriple fault\\n' "
                    ">$tmp/qemu.log; echo 0 >$tmp/qemu.status; exit 255; fi")

    def test_a_boot_that_ends_twice_fails_said_twice(self):
        self.expect(255, r"began again \(exit 255\): QEMU killed by signal 9", 5,
                    "echo 137 >$tmp/qemu.status; exit 255")


if __name__ == "__main__":
    unittest.main()
