# SPDX-License-Identifier: GPL-2.0
"""harness.qemubuild: its key (byte for byte the shell's), the versions,
the patch refusals, the edk2 line, and a build with stand-ins for apt,
tar, configure and ninja (QEMU is not built here)."""

import io
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import lib, qemubuild
from harness.tests import fakes

# The key as scripts/qemu-build.sh computed it, its configure line as it
# was: a change of either is a new key (a rebuild), on purpose only.
SHELL_KEY = r"""
CONFIGURE_ARGS=(
	--python=/usr/bin/python3
	--target-list=x86_64-softmmu
	--without-default-features
	--enable-tcg
	--enable-plugins
	--enable-attr
	--enable-virtfs
	--enable-vhost-user
	--disable-download
	--disable-install-blobs
	--disable-relocatable
	--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu
)
RECIPE=1
{
	echo "$VER recipe=$RECIPE"
	printf '%s\n' "${CONFIGURE_ARGS[@]}"
	for p in "$ROOT"/patches/qemu/*.patch; do
		[ -e "$p" ] || continue
		echo "== $(basename "$p")"
		cat "$p"
	done
} | sha256sum | cut -c1-12
"""


def shell_key(root, ver):
    return subprocess.run(["bash", "-c", SHELL_KEY], env={"ROOT": str(root), "VER": ver,
                                                          "PATH": os.environ["PATH"]},
                          stdout=subprocess.PIPE, text=True, check=True).stdout.strip()


PATCH = b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+new\n"


class Pure(unittest.TestCase):

    def test_key_text(self):
        text = qemubuild.key_text("1:10.0.2+ds-2", [("0001-a.patch", b"A\n"), ("0002-b", b"B")])
        lines = text.split(b"\n")
        self.assertEqual(lines[0], b"1:10.0.2+ds-2 recipe=1")
        self.assertEqual(lines[1:13], [a.encode() for a in qemubuild.CONFIGURE_ARGS])
        self.assertEqual(lines[13:], [b"== 0001-a.patch", b"A", b"== 0002-b", b"B"])

    def test_against_the_shell(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "patches/qemu").mkdir(parents=True)
            for name, data in (("0002-b.patch", b"no newline"), ("0001-a.patch", PATCH)):
                (Path(tmp) / "patches/qemu" / name).write_bytes(data)
            q = qemubuild.QemuBuild(tmp)
            with mock.patch("harness.steps.dpkg_version", return_value="1:10.0.3+ds-1~bpo12+1"):
                q.find()
            self.assertEqual(q.key, shell_key(tmp, "1:10.0.3+ds-1~bpo12+1"))
            self.assertTrue(q.out.endswith(f"/qemu/10.0.3+ds-1~bpo12+1-{q.key}"))

    def test_this_checkout(self):
        q = qemubuild.QemuBuild(lib.ROOT)
        with mock.patch("harness.steps.dpkg_version", return_value="1:10.0.2+ds-2"):
            q.find()
        self.assertEqual(q.key, shell_key(lib.ROOT, "1:10.0.2+ds-2"))

    def test_versions(self):
        self.assertEqual(qemubuild.versions("1:10.0.2+ds-2+deb13u1~bpo12+1"),
                         ("10.0.2+ds-2+deb13u1~bpo12+1", "10.0.2+ds"))
        self.assertEqual(qemubuild.versions("10.0.2-1"), ("10.0.2-1", "10.0.2"))
        self.assertEqual(qemubuild.versions("10.0.2"), ("10.0.2", "10.0.2"))
        self.assertEqual(qemubuild.versions("1:10.1.0-rc1+ds-1"),
                         ("10.1.0-rc1+ds-1", "10.1.0-rc1+ds"))

    def test_what_failed(self):
        out = "checking file accel/tcg/x.c\nHunk #2 FAILED at 10.\n1 out of 2 hunks FAILED\n"
        self.assertEqual(qemubuild.what_failed(out), "Hunk #2 FAILED at 10.")
        self.assertEqual(qemubuild.what_failed("a\ncan't find file to patch at input line 3\n"),
                         "can't find file to patch at input line 3")
        self.assertEqual(qemubuild.what_failed("a\nsomething else\n\n"), "something else")

    def test_edk2_off(self):
        text = "x = 1\n  unpack_edk2_blobs = bzip2.found()\ny\n"
        self.assertEqual(qemubuild.edk2_off(text),
                         ("x = 1\n  unpack_edk2_blobs = false\ny\n", True))
        self.assertEqual(qemubuild.edk2_off("unpack_edk2_blobs = get_option('x')\n"),
                         ("unpack_edk2_blobs = get_option('x')\n", False))


class Build(unittest.TestCase):
    """main() in a checkout with one QEMU patch, stand-ins for what it runs."""

    VER = "1:10.0.2+ds-2~bpo12+1"

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        self.dir = Path(self.tmp.name)
        self.root = self.dir / "root"
        (self.root / "patches/qemu").mkdir(parents=True)
        (self.root / "patches/qemu/0001-p.patch").write_bytes(PATCH)
        self.bin = self.dir / "bin"
        self.calls = self.dir / "calls"
        installed = {p: "1" for p in qemubuild.BUILD_PKGS}
        installed.update({"qemu-system-x86": self.VER, "meson": "1.7.0-1~bpo12+1",
                          "python3-pycotap": "1"})
        fakes.dpkg(self.bin, installed)
        fakes.command(self.bin, "apt-cache", f'echo "Package: qemu"; echo "Version: {self.VER}"')
        fakes.command(self.bin, "apt-get", f'echo "apt-get $*" >>{self.calls}; '
                      '[ "$1" != source ] || touch qemu_10.0.2+ds.orig.tar.xz')
        # The tree: the file the patch changes, meson.build, the plugin
        # header, a configure; ninja's binary answers -accel help.
        fakes.command(self.bin, "tar", 'src="$4"; mkdir -p "$src/include/qemu"; echo old '
                      '>"$src/f"; echo "unpack_edk2_blobs = bzip2.found()" >"$src/meson.build";'
                      ' echo header >"$src/include/qemu/qemu-plugin.h"; printf "#!/bin/sh\\n'
                      'echo \\"\\$*\\" >configured\\n" >"$src/configure"; chmod +x '
                      '"$src/configure"')
        fakes.command(self.bin, "ninja", 'printf "#!/bin/sh\\necho tcg\\n" '
                      '>"$2/qemu-system-x86_64"; chmod +x "$2/qemu-system-x86_64"')
        env = {"PATH": f"{self.bin}:{os.environ['PATH']}", "HOME": str(self.dir),
               "RSLUB_CACHE": str(self.dir / "cache"), "JOBS": ""}
        for patcher in (mock.patch.dict(os.environ, env),
                        mock.patch.object(qemubuild, "SRC_LIST", str(self.dir / "src.sources")),
                        mock.patch("os.geteuid", return_value=0)):
            patcher.start()
            self.addCleanup(patcher.stop)
        self.qdir = self.dir / "cache/qemu"
        self.out = f"{self.qdir}/10.0.2+ds-2~bpo12+1-{shell_key(self.root, self.VER)}"

    def tearDown(self):
        self.tmp.cleanup()

    def main(self, *argv):
        with mock.patch("sys.stdout", new_callable=io.StringIO) as out, \
                mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            rc = qemubuild.main(list(argv), self.root)
        return rc, out.getvalue(), err.getvalue()

    def test_print_path(self):
        self.assertEqual(self.main("--print-path"),
                         (0, f"{self.out}/bin/qemu-system-x86_64\n", ""))
        self.assertEqual(self.main("--path"), (2, "", "qemu-build: unknown argument '--path' "
                                                      f"({qemubuild.USAGE})\n"))

    def test_not_installed(self):
        fakes.dpkg(self.bin, {})
        rc, out, err = self.main("--print-path")
        self.assertEqual((rc, out), (1, ""))
        self.assertTrue(err.startswith("qemu-build: FAILED: qemu-system-x86 is not installed"))

    def test_build_then_cached(self):
        stale = self.qdir / "10.0.1+ds-1-aaaaaaaaaaaa"
        stale.mkdir(parents=True)
        rc, out, err = self.main()
        binary = f"{self.out}/bin/qemu-system-x86_64"
        self.assertEqual((rc, out), (0, f"{binary}\n"), err)
        key = os.path.basename(self.out)
        lines = [re.sub(r"in [0-9]+ min [0-9]+ s", "in N min N s", line.split("] ", 1)[1])
                 for line in err.splitlines()]
        logs = self.dir / "cache/logs"
        self.assertEqual(lines, [
            "build dependencies: present",
            f"apt-get source --tar-only qemu={self.VER} (39 MB) (log: {logs}/qemu-source.log)",
            f"extract qemu_10.0.2+ds.orig.tar.xz (log: {logs}/qemu-extract.log)",
            "applied 0001-p.patch",
            f"configure {' '.join(qemubuild.CONFIGURE_ARGS)} (log: {logs}/qemu-configure.log)",
            f"build qemu-system-x86_64 with -j2 (about 4 min on 2 idle cores) (log: "
            f"{logs}/qemu-build.log)", "built in N min N s",
            "dropped the stale build 10.0.1+ds-1-aaaaaaaaaaaa",
            f"done: QEMU {self.VER} with patches/qemu in {self.out}"])
        self.assertEqual(self.calls.read_text(encoding="ascii"),
                         f"apt-get source --tar-only --download-only qemu={self.VER}\n")
        self.assertEqual(Path(self.out, "include/qemu-plugin.h").read_text(encoding="ascii"),
                         "header\n")
        info = Path(self.out, "build-info.txt").read_text(encoding="ascii").split("\n")
        self.assertEqual(info[0], f"QEMU {self.VER} (orig tarball qemu_10.0.2+ds.orig.tar.xz) "
                                  "with:")
        self.assertEqual(info[1], f"  0001-p.patch {fakes_sha(PATCH)}")
        self.assertEqual(info[2:], [f"configure {' '.join(qemubuild.CONFIGURE_ARGS)}",
                                    "recipe 1", ""])
        self.assertFalse(stale.exists())
        self.assertFalse(Path(f"{self.qdir}/build-{key.rsplit('-', 1)[1]}").exists())
        # Cached now.
        rc, out, err = self.main()
        self.assertEqual((rc, out), (0, f"{binary}\n"))
        self.assertRegex(err, r"^qemu-build: \[[0-9]+s\] cached: QEMU 1:10.0.2\+ds-2~bpo12\+1 "
                              r"with patches/qemu \(10.0.2\+ds-2~bpo12\+1-[0-9a-f]{12}\)\n$")

    def test_a_patch_that_does_not_apply(self):
        fakes.command(self.bin, "tar", 'echo other >"$4/f"')
        (self.qdir / "src").mkdir(parents=True)
        (self.qdir / "src/qemu_10.0.2+ds.orig.tar.gz").touch()
        rc, out, err = self.main()
        self.assertEqual((rc, out), (1, ""))
        self.assertEqual(err.splitlines()[-1], f"qemu-build: FAILED: patch 0001-p.patch does "
                         f"not apply to QEMU {self.VER}: Hunk #1 FAILED at 1.")

    def test_no_source_listed(self):
        fakes.command(self.bin, "apt-cache", "echo Version: 1:9")
        rc, _, err = self.main()
        self.assertEqual(rc, 1)
        self.assertEqual(Path(qemubuild.SRC_LIST).read_text(encoding="utf-8"),
                         qemubuild.SRC_LIST_TEXT)
        self.assertEqual(err.splitlines()[-1], f"qemu-build: FAILED: no source package qemu "
                         f"{self.VER} in the apt sources (apt-cache showsrc qemu); it may have "
                         "left bookworm-backports: update qemu-system-x86 (make setup) and "
                         "retry")


def fakes_sha(data):
    """`sha256sum <FILE | cut -c1-12` of a file holding DATA."""
    return subprocess.run(["sha256sum"], input=data, stdout=subprocess.PIPE, check=True
                          ).stdout.decode()[:12]


if __name__ == "__main__":
    unittest.main()
