# SPDX-License-Identifier: GPL-2.0
"""harness.gcckernel: its key (byte for byte the shell's), its lines, a
build with stand-ins for tar and make."""

import io
import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import gcckernel, lib
from harness.tests import fakes

# The key as scripts/gcc-kernel.sh computed it.
SHELL_KEY = r"""
filter() { grep -vE '^CONFIG_(RUST_INLINE_HELPERS|SLAB_BACKEND)=' "$1"; }
{ echo "$VER gcc"; filter "$ROOT/config/base.config"; filter "$ROOT/config/test.config"; } |
	sha256sum | cut -c1-12
"""


def shell_key(root, ver):
    return subprocess.run(["bash", "-c", SHELL_KEY], env={"ROOT": str(root), "VER": ver,
                                                          "PATH": os.environ["PATH"]},
                          stdout=subprocess.PIPE, text=True, check=True).stdout.strip()


class Key(unittest.TestCase):

    def test_the_text(self):
        frags = {"base": b"# c\nCONFIG_A=y\n", "test": b"CONFIG_B=y\n"}
        self.assertEqual(gcckernel.key_text("7.3.4-1", frags),
                         b"7.3.4-1 gcc\n# c\nCONFIG_A=y\nCONFIG_B=y\n")

    def test_the_fragments_filtered(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = fakes.checkout(tmp)
            frags = gcckernel.fragments(root)
            # Comments stay; RUST stays, its inline helpers and the backend go.
            self.assertEqual(frags["base"], b"# base\n\nCONFIG_RUST=y\nCONFIG_RUSTY=y\n"
                                            b"  # indented comment\n\t\n# CONFIG_X is not set\n"
                                            b"#CONFIG_Y is not set\n# CONFIG_Z is not set, so\n"
                                            b"CONFIG_LAST=y\n")
            ver = "7.3.4-1~bpo13+1"
            self.assertEqual(gcckernel.kernel_dir("/c", ver, frags),
                             f"/c/kernel/{ver}-gcc-{shell_key(root, ver)}")

    def test_this_checkout(self):
        frags = gcckernel.fragments(lib.ROOT)
        self.assertEqual(gcckernel.kernel_dir("/c", "v", frags),
                         f"/c/kernel/v-gcc-{shell_key(lib.ROOT, 'v')}")


class Main(unittest.TestCase):
    """main() with stand-ins for dpkg-query, tar and make."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        self.dir = Path(self.tmp.name)
        self.root = fakes.checkout(self.dir / "root", {"base": b"CONFIG_A=y\n",
                                                       "test": b"CONFIG_B=y\n"})
        (self.root / "scripts").symlink_to(lib.ROOT / "scripts")
        self.bin = self.dir / "bin"
        fakes.dpkg(self.bin, {"linux-source-7.3": "7.3.4-1"})
        fakes.rustc(self.bin)
        merge = self.dir / "merge_config.sh"
        merge.write_text('#!/bin/sh\nshift 4; cat "$@" >"$0.out"\n', encoding="ascii")
        merge.chmod(0o755)
        fakes.command(self.bin, "tar", f'mkdir -p "$4/scripts/kconfig"; cp -p {merge} '
                      '"$4/scripts/kconfig/"')
        fakes.command(self.bin, "make", 'case "$3" in olddefconfig) '
                      'cp "$2/scripts/kconfig/merge_config.sh.out" "$2/.config" ;; '
                      '-j*) echo "$RUST_LIB_SRC $LIBCLANG_PATH" >"$2/built" ;; esac')
        self.tarball = self.dir / "linux-source-7.3.tar.xz"
        self.tarball.touch()
        env = {"PATH": f"{self.bin}:{os.environ['PATH']}", "HOME": str(self.dir),
               "RSLUB_CACHE": str(self.dir / "cache"), "JOBS": "3", "LIBCLANG_PATH": ""}
        for patcher in (mock.patch.dict(os.environ, env),
                        mock.patch.object(gcckernel, "TARBALL", str(self.tarball))):
            patcher.start()
            self.addCleanup(patcher.stop)

    def tearDown(self):
        self.tmp.cleanup()

    def main(self, *argv):
        with mock.patch("sys.stdout", new_callable=io.StringIO) as out, \
                mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            rc = gcckernel.main(list(argv), self.root)
        return rc, out.getvalue(), err.getvalue()

    def kdir(self):
        return f"{self.dir}/cache/kernel/7.3.4-1-gcc-{shell_key(self.root, '7.3.4-1')}"

    def test_print_kdir(self):
        self.assertEqual(self.main("--print-kdir"), (0, f"{self.kdir()}\n", ""))
        self.assertEqual(self.main("--bogus"),
                         (2, "", f"gcc-kernel: unknown argument '--bogus'\n{gcckernel.USAGE}\n"))

    def test_build_then_cached(self):
        kdir = self.kdir()
        self.assertEqual(self.main(), (0, f"gcc-kernel: extracting into {kdir}\n"
                                          "gcc-kernel: configuring (GCC, no patches)\n"
                                          "gcc-kernel: building with -j3 (about 10 min on 2 "
                                          f"cores; log: {kdir}/.rslub-build.log)\n{kdir}\n", ""))
        self.assertEqual(Path(kdir, "built").read_text(encoding="ascii"),
                         "/usr/src/rustc-1.95.0/library /usr/lib/llvm-22/lib\n")
        self.assertEqual(self.main(), (0, f"gcc-kernel: cached at {kdir}\n{kdir}\n", ""))

    def test_a_failed_build(self):
        fakes.command(self.bin, "make", 'case "$3" in olddefconfig) '
                      'cp "$2/scripts/kconfig/merge_config.sh.out" "$2/.config" ;; '
                      '-j*) seq 1 30; exit 2 ;; esac')
        rc, out, err = self.main()
        self.assertEqual(rc, 1)
        self.assertTrue(out.endswith("".join(f"{i}\n" for i in range(11, 31))))
        self.assertEqual(err, f"gcc-kernel: FAILED: building (log: {self.kdir()}/"
                              ".rslub-build.log)\n")
        self.assertFalse(os.path.exists(f"{self.kdir()}/.rslub-built"))

    def test_no_source(self):
        self.tarball.unlink()
        self.assertEqual(self.main("--print-kdir"),
                         (1, f"gcc-kernel: {self.tarball} missing: run make setup first\n", ""))


if __name__ == "__main__":
    unittest.main()
