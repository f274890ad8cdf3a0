# SPDX-License-Identifier: GPL-2.0
"""harness.lib: the kernel's config and the cost model's QEMU options."""

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import lib
from harness.tests import fakes


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

    def test_model_boot_opts(self):
        # The profile's core (costmodel-price --core) and the profile, at
        # the model boots' quantum (0 here: the distribution's QEMU).
        fakes.model_tree(self.kdir)
        env = {"RR_QUANTUM": "0", "MODEL_ARGS": "", "COSTMODEL_PLUGIN": "/p.so"}
        with mock.patch.dict(os.environ, env):
            opts = lib.model_boot_opts(self.kdir, "/o/c", "cpu_nodes=0:1", self.kdir)
            self.assertEqual(opts[0], "-icount shift=0,sleep=off -plugin /p.so,out=/o/c,"
                             "cpu_number=0x20a2c,cpu_nodes=0:1,core=224:10:56:16,"
                             "profile=server-ooo")
            os.environ["MODEL_PROFILE"] = "server"
            opts = lib.model_boot_opts(self.kdir, "/o/c", "", self.kdir)
            self.assertTrue(opts[0].endswith(",cpu_number=0x20a2c,profile=server"))

    def test_kernel_argument(self):
        self.assertEqual(lib.kernel_argument(["/k"]), "/k")
        self.assertIsNone(lib.kernel_argument(["/k", "/l"]))
        self.assertIsNone(lib.kernel_argument(["--help"]))
        with mock.patch.object(lib, "test_kdir", return_value="/test"):
            self.assertEqual(lib.kernel_argument([]), "/test")

    def test_quantum_qemu_wants_a_number(self):
        with mock.patch("sys.stderr"):
            self.assertIsNone(lib.quantum_qemu(quantum="1k"))

    def test_model_quantum_and_profile(self):
        self.assertEqual(lib.model_quantum({}), "1000")
        self.assertEqual(lib.model_quantum({"RR_QUANTUM": ""}), "0")
        self.assertEqual(lib.model_quantum({"RR_QUANTUM": "200"}), "200")
        self.assertEqual(lib.model_profile({}), "server-ooo")
        self.assertEqual(lib.model_profile({"MODEL_PROFILE": "desktop"}), "desktop")

    def test_copy_tree(self):
        src = self.kdir / "src"
        for name in ("keep.c", ".git/HEAD", "results/r.log", "m.o", "sub/target/x",
                     "rust/shim_bindings.rs"):
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_text("x", encoding="ascii")
        dest = self.kdir / "dest"
        self.assertEqual(lib.copy_tree(dest, src), 0)
        self.assertEqual(sorted(str(p.relative_to(dest)) for p in dest.rglob("*")
                                if p.is_file()), ["keep.c"])


class Processes(unittest.TestCase):

    # A guest's CPU time is its process's and its children's: a child that
    # spins 0.3 s of CPU and exits 3 is waited for with both.
    def test_wait_cpu_counts_the_children(self):
        busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
        spin = ("import subprocess, sys; "
                f"subprocess.run([sys.executable, '-c', {busy!r}]); sys.exit(3)")
        p = subprocess.Popen([sys.executable, "-c", spin])
        rc, cpu = lib.wait_cpu(p)
        self.assertEqual(rc, 3)
        self.assertEqual(p.returncode, 3)
        self.assertGreaterEqual(cpu, 0.3)

    # Reaped elsewhere (make check's stop): the status, no CPU time.
    def test_wait_cpu_after_a_reap(self):
        p = subprocess.Popen([sys.executable, "-c", "pass"])
        p.wait()
        self.assertEqual(lib.wait_cpu(p), (0, None))

    # harness.vm's refusal of a kernel without an image, in the log, with
    # the environment given (VM_CPUS=0 would be refused later).
    def test_start_vm(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "vm.log"
            p = lib.start_vm(tmp, "true", log, {"VM_CPUS": "0"})
            self.assertEqual(lib.wait_cpu(p)[0], 2)
            self.assertIn("vm: no kernel image in", log.read_text(encoding="utf-8"))

    def test_read(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "log").write_bytes(b"a\xffb\n")
            self.assertEqual(lib.read(Path(tmp) / "log"), "a\ufffdb\n")
            self.assertEqual(lib.read(Path(tmp) / "none"), "")

    def test_tail(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "log"
            path.write_text("a\nb\nc", encoding="utf-8")
            self.assertEqual(lib.tail(path, 2), "b\nc\n")
            self.assertEqual(lib.tail(path, 9), "a\nb\nc\n")
            self.assertEqual(lib.tail(Path(tmp) / "none", 2), "")


class QaRuns(unittest.TestCase):
    """What harness.fresh and harness.readmerun share."""

    def test_minutes(self):
        self.assertEqual(lib.minutes(0), "0 min 0 s")
        self.assertEqual(lib.minutes(3725), "62 min 5 s")

    def test_user_env(self):
        with mock.patch.dict(os.environ, {"KDIR": "/k", "MAKEFLAGS": "-s", "MAKELEVEL": "1",
                                          "MFLAGS": "-s", "KEPT": "1"}):
            env = lib.user_env({"RSLUB_CACHE": "/c"})
        self.assertFalse(set(lib.MAKE_VARS) & set(env))
        self.assertEqual((env["KEPT"], env["RSLUB_CACHE"]), ("1", "/c"))

    def test_options(self):
        valued, flags = ("--branch", "--only"), ("--keep",)
        self.assertEqual(lib.options(["--keep", "--branch", "b", "--only", "--x"], valued, flags),
                         {"keep": True, "branch": "b", "only": "--x"})
        self.assertEqual(lib.options([], valued, flags), {})
        with self.assertRaisesRegex(ValueError, "^unknown argument 'x'$"):
            lib.options(["x"], valued, flags)
        with self.assertRaisesRegex(ValueError, "^--branch needs a value$"):
            lib.options(["--branch"], valued, flags)

    def test_clone(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp) / "repo"
            git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
            subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
            subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "x"], check=True)
            clock = mock.Mock()
            self.assertTrue(lib.clone(clock, "main", f"{tmp}/c", repo))
            self.assertTrue((Path(tmp) / "c/.git").is_dir())
            said = [c.args[0] for c in clock.step.call_args_list]
            self.assertEqual(said[0], f"clone {repo} (main) into {tmp}/c")
            self.assertRegex(said[1], "^commit [0-9a-f]{7,}$")
            # git's own line about it on stderr, out of the tests' output.
            saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            try:
                self.assertFalse(lib.clone(clock, "none", f"{tmp}/d", repo))
            finally:
                os.dup2(saved, 2)
                os.close(saved)
                os.close(devnull)


if __name__ == "__main__":
    unittest.main()
