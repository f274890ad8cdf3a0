# SPDX-License-Identifier: GPL-2.0
"""harness.lib: the kernel's config and the cost model's QEMU options."""

import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import lib


class Kernel(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        self.kdir = Path(self.tmp.name)
        (self.kdir / ".config").write_text(
            "CONFIG_KASAN=y\n# CONFIG_KFENCE is not set\nCONFIG_NR_CPUS=64\n", encoding="utf-8")

    def tearDown(self):
        self.tmp.cleanup()

    def test_kconfig(self):
        self.assertTrue(lib.has(self.kdir, "CONFIG_KASAN"))
        self.assertFalse(lib.has(self.kdir, "CONFIG_KFENCE"))
        self.assertFalse(lib.has(self.kdir, "CONFIG_KASA"))
        self.assertEqual(lib.kconfig(self.kdir, "CONFIG_NR_CPUS"), "64")
        self.assertIsNone(lib.kconfig("/nonexistent", "CONFIG_KASAN"))

    def test_cpu_number(self):
        (self.kdir / "System.map").write_text(
            "0000000000001000 D pcpu_hot\n0000000000020a2c D cpu_number\n", encoding="ascii")
        self.assertEqual(lib.cpu_number(self.kdir), "20a2c")

    def test_cpu_number_in_pcpu_hot(self):
        # Linux 6.2 to 6.14: in struct pcpu_hot, at +12.
        (self.kdir / "System.map").write_text("0000000000001000 D pcpu_hot\n", encoding="ascii")
        self.assertEqual(lib.cpu_number(self.kdir), "100c")

    def test_model_qemu_opts(self):
        (self.kdir / "System.map").write_text("0000000000020a2c D cpu_number\n",
                                              encoding="ascii")
        env = {"RR_QUANTUM": "0", "MODEL_ARGS": "strings=iter", "COSTMODEL_PLUGIN": "/p.so"}
        with mock.patch.dict(os.environ, env):
            opts = lib.model_qemu_opts(self.kdir, "/o/counts", "core=1:2:3:4", Path("/r"))
        self.assertEqual(opts, ("-icount shift=0,sleep=off -plugin /p.so,out=/o/counts,"
                                "cpu_number=0x20a2c,core=1:2:3:4,strings=iter", ""))

    def test_model_qemu_opts_without_cpu_number(self):
        with mock.patch("sys.stderr"):
            self.assertIsNone(lib.model_qemu_opts(self.kdir, "/o/counts"))


if __name__ == "__main__":
    unittest.main()
