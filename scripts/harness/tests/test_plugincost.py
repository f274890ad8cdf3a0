# SPDX-License-Identifier: GPL-2.0
"""harness.plugincost: each boot's QEMU options, the table's figures, the
command line (the boots themselves take 20 minutes: not run here)."""

import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import lib
from harness import plugincost as pc
from harness.tests import fakes


class Boots(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        self.kdir = fakes.model_tree(self.tmp.name)
        env = {"RR_QUANTUM": "", "MODEL_ARGS": "", "MODEL_PROFILE": "server",
               "COSTMODEL_PLUGIN": "/p.so", "VM_QEMU": "/my/qemu"}
        patcher = mock.patch.dict(os.environ, env)
        patcher.start()
        self.addCleanup(patcher.stop)
        # costmodel-price of this directory.
        real = lib.model_boot_opts
        patcher = mock.patch.object(lib, "model_boot_opts", lambda kdir, counts, profile: real(
            kdir, counts, "", self.kdir, profile))
        patcher.start()
        self.addCleanup(patcher.stop)

    def tearDown(self):
        self.tmp.cleanup()

    def opts(self, boot):
        return pc.boot_opts(boot, self.kdir, "/o/counts.txt")

    def test_each_boot(self):
        plugin = "-icount shift=0,sleep=off -plugin /p.so,out=/o/counts.txt,cpu_number=0x20a2c"
        self.assertEqual(self.opts("plain"), ("-icount shift=0,sleep=off", "/my/qemu"))
        self.assertEqual(self.opts("off"), (plugin + ",model=off", "/my/qemu"))
        self.assertEqual(self.opts("model"), (plugin, "/my/qemu"))
        # core: the server-ooo profile's core, whatever MODEL_PROFILE says,
        # at make bench's quantum (0 here: RR_QUANTUM empty).
        self.assertEqual(self.opts("core"),
                         (plugin + ",core=224:10:56:16,profile=server-ooo", "/my/qemu"))

    def test_plainq_needs_the_patched_qemu(self):
        with mock.patch.object(lib, "quantum_qemu", return_value="/patched") as q:
            os.environ["RR_QUANTUM"] = "200"
            self.assertEqual(self.opts("plainq"),
                             ("-icount shift=0,sleep=off -accel tcg,rr-quantum=200", "/patched"))
            q.assert_called_with(quantum="200")
            q.return_value = None
            self.assertIsNone(self.opts("plainq"))

    def test_unknown_boot(self):
        os.environ["BOOTS"] = "plain kvm"
        with mock.patch("sys.stderr") as err:
            self.assertIsNone(self.opts("kvm"))
            # Refused before anything runs.
            with mock.patch("subprocess.run") as run:
                self.assertEqual(pc.main(["/k"]), 1)
            run.assert_not_called()
            self.assertEqual(pc.main(["/k", "/l"]), 2)
        said = "".join(c.args[0] for c in err.write.call_args_list)
        self.assertIn("plugin-cost: unknown boot 'kvm' (plain, plainq, off, model, core)", said)
        self.assertIn(pc.USAGE, said)


class Figures(unittest.TestCase):

    def test_work_and_multiple(self):
        # As the shell's awk had them: from the rounded figures.
        self.assertEqual(pc.minus("61.3", "12.1"), "49.2")
        self.assertEqual(pc.minus("12.0", "12.1"), "-0.1")
        self.assertEqual(pc.times("49.2", "24.6"), "2.00")
        self.assertEqual(pc.times("49.2", "0.0"), "-")

    def test_row(self):
        self.assertEqual(pc.ROW.format("boot", "with work", "boot only", "work", "x plain"),
                         "boot      with work  boot only       work  x plain")
        self.assertEqual(pc.ROW.format("core", "301.5", "40.2", "261.3", "10.62"),
                         "core          301.5       40.2      261.3    10.62")

    def test_default_work(self):
        self.assertEqual(
            f"cd /w && ({pc.WORK})",
            "cd /w && (tools/costmodel/guest/mark 1 && hackbench -g 4 -l 50 && hackbench -T -g 4 "
            "-l 50 -s 512 && hackbench -g 4 -l 50 --pipe && for i in $(seq 300); do /bin/true; "
            "done && dd if=/dev/zero of=/dev/null bs=64k count=2000 && "
            "tools/costmodel/guest/mark 2)")

    def test_boot_cpu(self):
        # A guest that fails: no figure (harness.vm refuses a kernel
        # without an image).
        with tempfile.TemporaryDirectory() as tmp:
            self.assertIsNone(pc.boot_cpu(tmp, "true", Path(tmp) / "vm.log", {}))


if __name__ == "__main__":
    unittest.main()
