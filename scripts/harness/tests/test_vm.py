# SPDX-License-Identifier: GPL-2.0
"""The vng command lines of harness.vm for the guests' shapes."""

import os
import subprocess
import sys
import unittest
from pathlib import Path
from unittest import mock

from harness import vm


class Sizes(unittest.TestCase):

    def test_mib(self):
        self.assertEqual([vm.mib(s) for s in ("2G", "320M", "6G", "1.5G", "1048576")],
                         [2048, 320, 6144, 1536, 1])


class VngArgs(unittest.TestCase):

    def test_defaults(self):
        self.assertEqual(vm.vng_args("/k", {}),
                         ["--run", "/k", "--cpus", "2", "--memory", "2G", "--append",
                          vm.KARGS, "--disable-kvm"])

    def test_kvm_and_extras(self):
        args = vm.vng_args("/k", {"KVM": "1", "VM_APPEND": "init_on_free=1",
                                  "VM_RWDIR": "/tmp/x", "VM_QEMU_OPTS": "-icount shift=0"})
        self.assertNotIn("--disable-kvm", args)
        self.assertEqual(args[-4:], ["--append", "init_on_free=1", "--rwdir=/tmp/x",
                                     "--qemu-opts=-icount shift=0"])

    def test_numa4(self):
        # make check's numa4: 6 GB over 2 nodes, one socket each.
        args = vm.vng_args("/k", {"VM_CPUS": "4", "VM_NUMA": "2", "VM_MEM": "6G"})
        self.assertEqual(args, ["--run", "/k", "--cpus", "4", "--memory", "6144M",
                                "--append", vm.KARGS, "--disable-kvm",
                                "--numa", "3072M,cpus=0-1", "--numa", "3072M,cpus=2-3",
                                "--qemu-opts=-smp 4,sockets=2,cores=2,threads=1"])

    def test_uneven_nodes(self):
        # The last node takes the CPUs left over; no -smp then.
        args = vm.vng_args("/k", {"VM_CPUS": "3", "VM_NUMA": "2", "VM_MEM": "1G"})
        self.assertEqual(args[-4:], ["--numa", "512M,cpus=0-0", "--numa", "512M,cpus=1-2"])

    def test_fewer_cpus_than_nodes(self):
        with self.assertRaisesRegex(ValueError, "VM_CPUS=1 is fewer than VM_NUMA=2"):
            vm.vng_args("/k", {"VM_CPUS": "1", "VM_NUMA": "2"})

    def test_no_kernel(self):
        with mock.patch("sys.stderr"):
            self.assertEqual(vm.run("/nonexistent", "true", {}), 2)



class Orphans(unittest.TestCase):

    # A grandchild whose parent exits without waiting for it (QEMU after a
    # stopped vng) is adopted and waited for: its CPU time (0.3 s of spin)
    # reaches the process that waits for the VM runner.
    def test_an_orphan_is_reaped_with_its_cpu_time(self):
        spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
        parent = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {spin!r}])"
        runner = ("import subprocess, sys; from harness import vm; vm.adopt_orphans(); "
                  f"subprocess.run([sys.executable, '-c', {parent!r}]); vm.reap_orphans()")
        env = {**os.environ, "PYTHONPATH": str(Path(vm.__file__).resolve().parents[1])}
        p = subprocess.Popen([sys.executable, "-c", runner], env=env)
        _, status, used = os.wait4(p.pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        self.assertGreaterEqual(used.ru_utime + used.ru_stime, 0.3)

if __name__ == "__main__":
    unittest.main()
