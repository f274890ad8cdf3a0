# SPDX-License-Identifier: GPL-2.0
"""harness.quantumsweep: each boot's settings, the figures read from the
counts and from costmodel-calib, the table (the sweep itself takes hours:
not run here)."""

import os
import tempfile
import unittest
from unittest import mock

from harness import lib
from harness import quantumsweep as qs
from harness.tests import fakes

CALIB = """\
model: PASS cx16: locked - unlocked cmpxchg16b: 9.00 cycles/op (profile: 9.00)
model: PASS false-sharing: 2 threads: 1.982 transfers an update (want >= 1), 35.2 cycles \
waited an update; 4 threads: 3.104 transfers an update (want >= 1), 80.1 cycles waited an update
model: PASS contended-xadd: 2 threads: 1.511 transfers an update (want >= 1), 20.0 cycles \
waited an update; 4 threads: 2.750 transfers an update (want >= 1), 60.0 cycles waited an update
model: PASS own-lines: 2 threads: 0.001 transfers an update (want <= 0.1), 0.0 cycles waited \
an update; 4 threads: 0.002 transfers an update (want <= 0.1), 0.0 cycles waited an update
model: PASS spinlock: alone: 120 cycles a section; 2 threads: makespan 118 cycles a section, \
0.98 of alone (want >= 0.8), 60 cycles waited a section; 4 threads: makespan 121 cycles a \
section, 1.01 of alone (want >= 0.8), 180 cycles waited a section
"""
COUNTS = """\
mark seq=1 id=1 vcpu=0 by=0 insns=100 xfer_local=3 xfer_remote=4 wait=5 span=6 locked=7
mark seq=2 id=2 vcpu=0 by=0 insns=123456789 xfer_local=1234 xfer_remote=4321 wait=2345678 \
span=34567890 locked=77 rmw_xfer=8
mark seq=3 id=2 vcpu=1 by=0 insns=223456789 xfer_local=234 xfer_remote=321 wait=345678 \
span=4567890 locked=7 rmw_xfer=80 l1=9
exit seq=4 id=0 vcpu=0 by=0 insns=5
"""


class Figures(unittest.TestCase):

    def test_calib(self):
        self.assertEqual(qs.calib_figures(CALIB), "1.982 1.511 3.104, 118 121")
        # A report without its checks (the calib boot failed): blanks.
        self.assertEqual(qs.calib_figures(""), "  ,  ")

    def test_region(self):
        # Mark 2's counts summed over the vCPUs, nothing of mark 1 or the exit.
        self.assertEqual(qs.region(COUNTS), (346913578, 6110, 2691356, 39135780, 172))
        self.assertEqual(qs.program_figures(COUNTS), "346.91 0.0061 2.69 39.14")
        self.assertEqual(qs.region(""), (0, 0, 0, 0, 0))

    def test_number(self):
        # As awk reads a string as a number.
        self.assertEqual(qs.number("12"), 12)
        self.assertEqual(qs.number("1.5e3x"), 1500)
        self.assertEqual(qs.number("x1"), 0)

    def test_header(self):
        self.assertEqual(qs.HEADER.split("  ")[0], "Q")
        self.assertEqual(len(qs.HEADER.split(" program: ")[0]), 7 + 1 + 82)
        self.assertTrue(qs.HEADER.endswith("program CPU s (x plain) plain at Q (x plain)"))


class Boots(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        self.kdir = fakes.model_tree(self.tmp.name)
        env = {"RR_QUANTUM": "200", "MODEL_ARGS": "", "COSTMODEL_PLUGIN": "/p.so",
               "VM_STALL": ""}
        patcher = mock.patch.dict(os.environ, env)
        patcher.start()
        self.addCleanup(patcher.stop)
        patcher = mock.patch.object(lib, "quantum_qemu", return_value="/patched")
        self.quantum_qemu = patcher.start()
        self.addCleanup(patcher.stop)

    def tearDown(self):
        self.tmp.cleanup()

    def test_model_boot(self):
        # Q = 0: the distribution's QEMU, whatever RR_QUANTUM says.
        env = qs.model_env(self.kdir, "results/q", "0", "work-q0")
        self.assertEqual(env, {
            "VM_CPUS": "4", "VM_NUMA": "2", "VM_MEM": "2G", "VM_APPEND": "loglevel=4",
            "VM_STALL": "1800", "VM_TIMEOUT": "7200", "VM_CONSOLE": "results/q/console-work-q0.log",
            "VM_QEMU": "", "VM_QEMU_OPTS": "-icount shift=0,sleep=off -plugin /p.so,"
            "out=results/q/counts-work-q0.txt,cpu_number=0x20a2c," + qs.NODES})
        env = qs.model_env(self.kdir, "results/q", "1000", "calib-q1000")
        self.assertEqual(env["VM_QEMU"], "/patched")
        self.assertTrue(env["VM_QEMU_OPTS"].startswith(
            "-icount shift=0,sleep=off -accel tcg,rr-quantum=1000 -plugin /p.so,"))
        self.assertTrue(env["VM_QEMU_OPTS"].endswith(qs.NODES + ",vcpu=qemu"))
        self.quantum_qemu.assert_called_with(lib.ROOT, "1000")

    def test_model_boot_without_cpu_number(self):
        with mock.patch("sys.stderr"), self.assertRaises(qs.Failed):
            qs.model_env(self.kdir / "none", "results/q", "0", "work-q0")

    def test_plain_boot(self):
        self.assertEqual(qs.plain_env("0")["VM_QEMU_OPTS"], "-icount shift=0,sleep=off")
        self.assertEqual(qs.plain_env("0")["VM_QEMU"], "")
        env = qs.plain_env("10000")
        self.assertEqual((env["VM_QEMU_OPTS"], env["VM_QEMU"]),
                         ("-icount shift=0,sleep=off -accel tcg,rr-quantum=10000", "/patched"))
        self.assertNotIn("VM_STALL", env)
        self.quantum_qemu.return_value = None
        with self.assertRaises(qs.Failed):
            qs.plain_env("10000")

    def test_row(self):
        # The boots' CPU seconds: calib, the program with and without its
        # work, then plain -icount's at Q with and without.
        sweep = qs.Sweep(self.kdir, str(self.kdir), "work")
        (self.kdir / "counts-work-q1000.txt").write_text(COUNTS, encoding="ascii")
        secs = iter(["50.0", "300.5", "40.2", "30.1", "10.0"])
        with mock.patch.object(qs.pc, "boot_cpu", side_effect=lambda *a: next(secs)), \
                mock.patch("subprocess.run") as calib:
            calib.side_effect = lambda argv, stdout, check: stdout.write(CALIB.encode())
            row = sweep.row("1000", "24.6")
        self.assertEqual(row, qs.ROW.format("1000", "1.982 1.511 3.104, 118 121",
                                            "346.91 0.0061 2.69 39.14", "260.3 (10.58x)",
                                            "20.1 (0.82x)"))

    def test_a_failed_boot_and_bad_arguments(self):
        sweep = qs.Sweep(self.kdir, str(self.kdir), "work")
        with mock.patch.object(qs.pc, "boot_cpu", return_value=None), \
                mock.patch("sys.stderr") as err, self.assertRaises(qs.Failed):
            sweep.boot("0", "calib-q0", "calib")
        with mock.patch("sys.stderr") as usage:
            self.assertEqual(qs.main(["-h"]), 2)
        self.assertIn("quantum-sweep: the calib-q0 boot failed",
                      "".join(c.args[0] for c in err.write.call_args_list))
        self.assertEqual(usage.write.call_args_list[0].args[0], qs.USAGE)


if __name__ == "__main__":
    unittest.main()
