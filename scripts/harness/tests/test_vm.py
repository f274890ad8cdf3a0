# SPDX-License-Identifier: GPL-2.0
"""The vng command lines of harness.vm for the guests' shapes."""

import io
import os
import struct
import subprocess
import sys
import tempfile
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


class GuestInit(unittest.TestCase):

    APPEND = ("kunit.enable=1 virtme_link_mods=/k/.virtme_mods/lib/modules/0.0.0 "
              "init=/venv/lib/virtme/guest/bin/virtme-ng-init virtme.exec=`aW5pdD14`")

    def test_virtme_ng_init_goes_behind_the_guest_init(self):
        args = ["-m", "2G", "-append", self.APPEND, "-kernel", "/k/bzImage"]
        self.assertEqual(vm.with_init(args, "/r/init"), [
            "-m", "2G", "-append",
            "kunit.enable=1 virtme_link_mods=/k/.virtme_mods/lib/modules/0.0.0 "
            "init=/r/init rslub_init_next=/venv/lib/virtme/guest/bin/virtme-ng-init "
            "virtme.exec=`aW5pdD14`", "-kernel", "/k/bzImage"])
        self.assertEqual(args[3], self.APPEND)

    def test_other_inits_are_left_alone(self):
        # vng's shell init (systemd, a root disk) and a script's own words.
        for append in ("init=/bin/sh -- -c mount", "virtme_initmount0=x init=/sbin/init",
                       "virtme.exec=`init=/x/virtme-ng-init`"):
            self.assertEqual(vm.with_init(["-append", append], "/r/init"), ["-append", append])

    def test_the_init_is_built_once_by_its_source(self):
        with tempfile.TemporaryDirectory() as cache:
            init = vm.guest_init({"RSLUB_CACHE": cache})
            self.assertTrue(os.access(init, os.X_OK))
            self.assertEqual(init.parent, Path(cache, "guest-init"))
            # Static: no PT_INTERP program header (TCG would translate the
            # loader at every start).
            elf = init.read_bytes()
            phoff, = struct.unpack_from("<Q", elf, 0x20)
            phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
            types = [struct.unpack_from("<I", elf, phoff + i * phentsize)[0]
                     for i in range(phnum)]
            self.assertIn(1, types)
            self.assertNotIn(3, types)
            when = init.stat().st_mtime_ns
            self.assertEqual(vm.guest_init({"RSLUB_CACHE": cache}), init)
            self.assertEqual(init.stat().st_mtime_ns, when)
            self.assertEqual(os.listdir(init.parent), [init.name])

    def test_an_init_that_does_not_build_is_said(self):
        with tempfile.TemporaryDirectory() as cache:
            broken = Path(cache, "init.c")
            broken.write_text("int main(void) { return x; }\n", encoding="utf-8")
            with mock.patch.object(vm, "GUEST_INIT", broken), \
                    mock.patch("sys.stderr", new_callable=io.StringIO) as err:
                self.assertIsNone(vm.guest_init({"RSLUB_CACHE": cache}))
            self.assertIn("vm: the guest init does not build", err.getvalue())
            self.assertEqual(os.listdir(Path(cache, "guest-init")), [])

    def test_the_wrapper_passes_probes_and_keeps_the_status(self):
        # A fake QEMU that prints its arguments and ends with status 3.
        with tempfile.TemporaryDirectory() as work:
            qemu = Path(work, "fake-qemu")
            qemu.write_text("#!/bin/sh\necho \"$@\"\nexit 3\n", encoding="utf-8")
            qemu.chmod(0o755)
            env = {**os.environ, "PYTHONPATH": str(Path(vm.__file__).resolve().parents[1])}
            run = ["import sys; from harness import vm; "
                   f"sys.exit(vm.qemu_main({str(qemu)!r}, {work!r}, '/r/init', sys.argv[1:]))"]
            probe = subprocess.run([sys.executable, "-c"] + run + ["-version"], env=env,
                                   capture_output=True, text=True, check=False)
            self.assertEqual((probe.returncode, probe.stdout), (3, "-version\n"))
            self.assertFalse(Path(work, "qemu.status").exists())
            boot = subprocess.run([sys.executable, "-c"] + run +
                                  ["-kernel", "bz", "-append", "init=/v/virtme-ng-init"],
                                  env=env, capture_output=True, text=True, check=False)
            self.assertEqual(boot.returncode, 3)
            self.assertEqual(boot.stdout, "-kernel bz -append init=/r/init "
                             f"rslub_init_next=/v/virtme-ng-init -d cpu_reset -D {work}"
                             "/qemu-debug.log\n")
            self.assertEqual(Path(work, "qemu.status").read_text(encoding="utf-8"), "3\n")


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
