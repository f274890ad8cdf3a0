# SPDX-License-Identifier: GPL-2.0
"""harness.setup: the kernel cache keys (byte for byte the shell's), the
fragments of each flavor, the patch refusals, the version checks, the
reuse of a cached build and the cleanup of stale ones. Nothing is
installed or built here; harness.setuplogic plays setup's decisions."""

import fcntl
import io
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import lib, setup
from harness.tests import fakes

# The key as scripts/setup.sh computed it (kernel_key and fragment, with
# the flavor's names, label and patches given): the keys of the Python
# setup must stay these, or every user rebuilds the kernel.
SHELL_KEY = r"""
fragment() {
	if [ "$CLASSIC" = 1 ]; then
		grep -vE '^CONFIG_(RUST|RUST_INLINE_HELPERS|SLAB_BACKEND)=' "$1"
	elif [ "$NO_PATCHES" = 1 ]; then
		grep -vE '^CONFIG_SLAB_BACKEND=' "$1"
	else
		cat "$1"
	fi
}
{
	echo "$VER LLVM=$LLVM_SUFFIX"
	for f in $NAMES; do fragment "$ROOT/config/$f.config"; done |
		awk '/^# CONFIG_[A-Za-z0-9_]+ is not set/ || !/^[[:space:]]*(#|$)/'
	[ "$PATCHED" = 0 ] || cat "$ROOT"/patches/*.patch
} | sha256sum | cut -c1-12 | sed "s/^/$VER-$LABEL-/"
"""

# (flavor, --no-patches) of every kernel setup builds.
BUILDS = (("test", False), ("bench", False), ("classic", False), ("debug", False),
          ("test", True), ("bench", True), ("debug", True))


def shell_key(root, ver, llvm, flavor, no_patches):
    env = {"ROOT": str(root), "VER": ver, "LLVM_SUFFIX": llvm,
           "CLASSIC": "1" if flavor == "classic" else "0",
           "NO_PATCHES": "1" if no_patches else "0",
           "NAMES": " ".join(setup.fragment_names(flavor)),
           "PATCHED": "1" if setup.patched(flavor, no_patches) else "0",
           "LABEL": setup.label(flavor, no_patches), "PATH": os.environ["PATH"]}
    return subprocess.run(["bash", "-c", SHELL_KEY], env=env, stdout=subprocess.PIPE, text=True,
                          check=True).stdout.rstrip("\n")


class Tmp(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        self.dir = Path(self.tmp.name)
        self.bin = self.dir / "bin"
        fakes.rustc(self.bin)
        fakes.dpkg(self.bin, {"linux-source-7.3": "7.3.4-1~bpo13+1",
                              "linux-source-6.12": "6.12.48-1"})
        self.env = {"PATH": f"{self.bin}:{os.environ['PATH']}", "HOME": str(self.dir / "home"),
                    "RSLUB_CACHE": str(self.dir / "cache"), "RSLUB_FLAVOR": "",
                    "RSLUB_SETUP_DRY_RUN": "", "JOBS": ""}
        patcher = mock.patch.dict(os.environ, self.env)
        patcher.start()
        self.addCleanup(patcher.stop)

    def tearDown(self):
        self.tmp.cleanup()

    @staticmethod
    def run_setup(what, *args):
        """WHAT(ARGS) and what it printed, its times [Ns]."""
        with mock.patch("sys.stdout", new_callable=io.StringIO) as out:
            result = what(*args)
        return result, untimed(out.getvalue())


def untimed(out):
    """OUT with the seconds of its "[12s]" as N, and the minutes and seconds
    of "in 1 min 2 s"."""
    out = re.sub(r"in [0-9]+ min [0-9]+ s", "in N min N s", out)
    return re.sub(r"\[[0-9]+s\]", "[Ns]", out)


class KeyText(unittest.TestCase):

    def test_the_text(self):
        text = setup.key_text("7.3.4-1", "-22", [b"# head\nCONFIG_A=y\n\n# CONFIG_B is not set\n",
                                                 b"CONFIG_C=m\n"], b"P1\nP2")
        self.assertEqual(text, b"7.3.4-1 LLVM=-22\nCONFIG_A=y\n# CONFIG_B is not set\n"
                               b"CONFIG_C=m\nP1\nP2")
        self.assertEqual(setup.key_text("none", "-19", [b"CONFIG_A=y\n"]),
                         b"none LLVM=-19\nCONFIG_A=y\n")

    def test_comments_and_blank_lines_are_not_options(self):
        kept = setup.options_only(b"# c\n  # indented\n\t\n\n \r\n# CONFIG_X is not set\n"
                                  b"# CONFIG_Z is not set, so\n#CONFIG_Y is not set\n"
                                  b"# CONFIG_ is not set\n# CONFIG_W is not on\n"
                                  b"CONFIG_A=y # why\n x=1\nlast")
        self.assertEqual(kept, b"# CONFIG_X is not set\n# CONFIG_Z is not set, so\n"
                               b"CONFIG_A=y # why\n x=1\nlast\n")

    def test_fragments_are_one_stream(self):
        # cat joins a fragment without its last newline to the next one's
        # first line, which the key then reads as one option.
        self.assertEqual(setup.key_text("v", "-22", [b"CONFIG_A=y", b"CONFIG_B=y\n"]),
                         b"v LLVM=-22\nCONFIG_A=yCONFIG_B=y\n")

    def test_the_key(self):
        # printf 'v LLVM=-22\nCONFIG_A=y\n' | sha256sum | cut -c1-12
        self.assertEqual(setup.kernel_key("v", "test", b"v LLVM=-22\nCONFIG_A=y\n"),
                         "v-test-2317ad0b6c1c")


class Fragments(unittest.TestCase):

    DATA = (b"CONFIG_RUST=y\nCONFIG_RUST_INLINE_HELPERS=y\nCONFIG_SLAB_BACKEND=y\n"
            b"CONFIG_RUSTY=y\n# CONFIG_RUST is not set\nCONFIG_X=y")

    def test_classic_drops_what_6_12_lacks(self):
        self.assertEqual(setup.fragment(self.DATA, "classic", False),
                         b"CONFIG_RUSTY=y\n# CONFIG_RUST is not set\nCONFIG_X=y\n")

    def test_no_patches_drops_the_backend(self):
        for flavor in ("test", "bench", "debug"):
            self.assertEqual(setup.fragment(self.DATA, flavor, True),
                             b"CONFIG_RUST=y\nCONFIG_RUST_INLINE_HELPERS=y\nCONFIG_RUSTY=y\n"
                             b"# CONFIG_RUST is not set\nCONFIG_X=y\n")

    def test_patched_keeps_every_byte(self):
        for flavor in ("test", "bench", "debug"):
            self.assertEqual(setup.fragment(self.DATA, flavor, False), self.DATA)

    def test_names_labels_patches(self):
        self.assertEqual([setup.fragment_names(f) for f in setup.FLAVORS],
                         [["base", "test"], ["base", "bench"], ["base", "bench", "classic"],
                          ["base", "test", "debug"]])
        self.assertEqual(setup.label("bench", True), "bench-unpatched")
        self.assertEqual(setup.label("classic", False), "classic")
        self.assertTrue(setup.patched("debug", False))
        self.assertFalse(setup.patched("test", True))
        self.assertFalse(setup.patched("classic", False))


class Keys(Tmp):
    """Setup's keys against the shell's."""

    def test_a_checkout_of_awkward_fragments(self):
        root = fakes.checkout(self.dir / "root")
        keys = set()
        for flavor, no_patches in BUILDS:
            s = setup.Setup(root, flavor, no_patches)
            ver = "6.12.48-1" if flavor == "classic" else "7.3.4-1~bpo13+1"
            self.assertEqual(s.key(), shell_key(root, ver, "-22", flavor, no_patches),
                             (flavor, no_patches))
            keys.add(s.key())
        self.assertEqual(len(keys), len(BUILDS))

    def test_this_checkout(self):
        # Its real fragments and patches, the machine's linux-source (or none).
        with mock.patch.dict(os.environ, {"PATH": os.environ["PATH"].split(":", 1)[1]}):
            for flavor, no_patches in BUILDS:
                s = setup.Setup(lib.ROOT, flavor, no_patches)
                ver = s.key().split(f"-{s.label()}-")[0]
                self.assertEqual(s.key(), shell_key(lib.ROOT, ver, s.llvm, flavor, no_patches))

    def test_toolchain_and_source_version(self):
        root = fakes.checkout(self.dir / "root")
        fakes.rustc(self.bin, llvm="19.1.7")
        s = setup.Setup(root, "test")
        self.assertEqual(s.llvm, "-19")
        self.assertEqual(s.key(), shell_key(root, "7.3.4-1~bpo13+1", "-19", "test", False))
        fakes.dpkg(self.bin, {})
        fakes.command(self.bin, "rustc", "exit 127")
        s = setup.Setup(root, "test")
        self.assertEqual((s.llvm, s.rustc_ver), ("-22", ""))
        self.assertTrue(s.key().startswith("none-test-"))
        self.assertEqual(s.key(), shell_key(root, "none", "-22", "test", False))

    def test_print_kdir(self):
        root = fakes.checkout(self.dir / "root")
        with mock.patch("sys.stdout", new_callable=io.StringIO) as out:
            self.assertEqual(setup.main(["--flavor", "bench", "--no-patches", "--print-kdir"],
                                        root), 0)
        key = shell_key(root, "7.3.4-1~bpo13+1", "-22", "bench", True)
        self.assertEqual(out.getvalue(), f"{self.dir}/cache/kernel/{key}\n")


class Patches(unittest.TestCase):

    def test_a_failed_hunk(self):
        out = ("checking file include/linux/slab_backend.h\nchecking file mm/Kconfig\n"
               "Hunk #1 FAILED at 231.\n1 out of 1 hunk FAILED\nchecking file mm/slab.h\n"
               "Hunk #1 FAILED at 290.")
        self.assertEqual(setup.failed_hunk(out), "mm/Kconfig: Hunk #1 FAILED at 231.")

    def test_a_missing_file(self):
        out = ("can't find file to patch at input line 5\nPerhaps you used the wrong -p or "
               "--strip option?\nThe text leading up to this was:\n"
               "--------------------------\n|From 1 Mon Sep 17 00:00:00 2001\n"
               "|--- a/mm/Kconfig\n|+++ b/mm/Kconfig\n--------------------------\n"
               "No file to patch.  Skipping patch.\n1 out of 1 hunk ignored")
        self.assertEqual(setup.failed_hunk(out), "mm/Kconfig: no such file")

    def test_a_malformed_patch_and_anything_else(self):
        self.assertEqual(setup.failed_hunk("checking file a.c\npatch: **** malformed patch "
                                           "at line 9: x"),
                         "a.c: patch: **** malformed patch at line 9: x")
        self.assertEqual(setup.failed_hunk("something\nelse went wrong"), "else went wrong")


class Versions(unittest.TestCase):

    def test_bindgen(self):
        for v, ge in (("0.71.1", True), ("0.72.0", True), ("0.71.10", True), ("1.0.0", True),
                      ("0.71.0", False), ("0.9.5", False), ("0.71.1~rc1", False),
                      ("0.71.1a", True), ("0.71.01", False), ("0.71a1", False),
                      ("0.71+1", False)):
            self.assertEqual(setup.version_ge(v, setup.BINDGEN_MIN), ge, v)
            # What sort -V says.
            first = subprocess.run(["sort", "-V"], input=f"{setup.BINDGEN_MIN}\n{v}\n",
                                   stdout=subprocess.PIPE, text=True, check=True).stdout
            self.assertEqual(first.split("\n")[0] == setup.BINDGEN_MIN, ge, v)

    def test_the_tool_versions(self):
        self.assertEqual(setup.second_field("bindgen 0.71.1\n"), "0.71.1")
        self.assertEqual(setup.second_field("rustc 1.95.0 (59807616e 2026-04-14)"), "1.95.0")
        self.assertEqual(setup.second_field(""), "")
        self.assertEqual(setup.llvm_major("rustc 1.95.0\nbinary: rustc\nLLVM version: 22.1.2\n"),
                         "22")
        self.assertEqual(setup.llvm_major("rustc 1.95.0\n"), "")

    def test_rust_src(self):
        madison = (" rust-src | 1.96.0+dfsg1-1~bpo13+1 | http://d/debian trixie-backports/main\n"
                   " rust-src | 1.95.0+dfsg1-2~bpo12+1 | http://d/debian bookworm-backports/main\n"
                   " rust-src | 1.95.0+dfsg1-1 | http://d/debian trixie/main\n")
        self.assertEqual(setup.rust_src_version(madison, "1.95.0"), "1.95.0+dfsg1-2~bpo12+1")
        self.assertEqual(setup.rust_src_version(madison, "1.95"), "")
        self.assertEqual(setup.rust_src_version(madison, "1.94.0"), "")

    def test_os_codename(self):
        with tempfile.NamedTemporaryFile("w", encoding="ascii") as f:
            f.write('NAME="Debian GNU/Linux"\nVERSION_CODENAME=bookworm\n')
            f.flush()
            self.assertEqual(setup.os_codename(f.name), "bookworm")
        self.assertEqual(setup.os_codename("/nonexistent"), "")


class Arguments(unittest.TestCase):

    def test_parse(self):
        opts = setup.parse(["--flavor", "classic", "--tools-only"], {})
        self.assertEqual(opts, {"flavor": "classic", "no_patches": False, "print_kdir": False,
                                "tools_only": True, "dry_run": False, "apply_to": None})
        env = {"RSLUB_FLAVOR": "debug", "RSLUB_SETUP_DRY_RUN": "1"}
        opts = setup.parse(["--no-patches", "--apply-patches", "/src"], env)
        self.assertEqual((opts["flavor"], opts["dry_run"], opts["no_patches"], opts["apply_to"]),
                         ("debug", True, True, "/src"))
        self.assertTrue(setup.parse(["--dry-run"], {"RSLUB_SETUP_DRY_RUN": "0"})["dry_run"])
        self.assertFalse(setup.parse([], {"RSLUB_SETUP_DRY_RUN": "yes"})["dry_run"])

    def test_wrong_arguments(self):
        self.assertEqual(setup.parse(["--bogus"], {}), "unknown argument '--bogus'")
        self.assertEqual(setup.parse(["--flavor"], {}), "--flavor needs a value")
        self.assertEqual(setup.parse(["--flavor", "fast"], {}),
                         "unknown flavor 'fast' (test|bench|classic|debug)")
        with mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            self.assertEqual(setup.main(["--bogus"]), 2)
            self.assertEqual(setup.main(["--flavor", "classic", "--no-patches"]), 1)
        self.assertEqual(err.getvalue(), f"setup: unknown argument '--bogus'\n{setup.USAGE}\n"
                                         "setup: FAILED: --no-patches: the classic flavor has "
                                         "no patches\n")


PATCH = b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+new\n"


class Cache(Tmp):
    """seed_tree and drop_stale in a cache of builds (stand-ins)."""

    def build(self, name, content=b"new\n", built=True, patch=PATCH):
        d = self.dir / "cache/kernel" / name
        (d / ".rslub-patches.d").mkdir(parents=True)
        (d / "f").write_bytes(content)
        (d / ".rslub-extracted").touch()
        if built:
            (d / ".rslub-built").touch()
        if patch:
            (d / ".rslub-patches.d/0001-p.patch").write_bytes(patch)
        return d

    def test_seed_from_the_cached_build(self):
        self.build("7.3-1-test-000000000000", built=False)
        self.build("7.3-1-test-unpatched-111111111111")
        self.build("7.3-2-test-222222222222")
        old = self.build("7.3-1-test-aaaaaaaaaaaa")
        s = setup.Setup(self.dir, "test")
        kdir = self.dir / "cache/kernel/7.3-1-test-bbbbbbbbbbbb"
        seeded, out = self.run_setup(s.seed_tree, str(kdir), kdir.name)
        self.assertTrue(seeded and s.seeded)
        self.assertEqual(out, "setup: [Ns] start from the cached build "
                              "7.3-1-test-aaaaaaaaaaaa (make rebuilds what changed)\n")
        self.assertEqual((kdir / "f").read_bytes(), b"old\n")
        self.assertFalse((kdir / ".rslub-built").exists())
        self.assertFalse((kdir / ".rslub-extracted").exists())
        self.assertEqual((old / "f").read_bytes(), b"new\n")

    def test_a_build_whose_patches_do_not_come_off(self):
        self.build("7.3-1-test-aaaaaaaaaaaa", content=b"other\n")
        s = setup.Setup(self.dir, "test")
        kdir = self.dir / "cache/kernel/7.3-1-test-bbbbbbbbbbbb"
        with mock.patch("sys.stderr"):
            seeded, out = self.run_setup(s.seed_tree, str(kdir), kdir.name)
        self.assertFalse(seeded)
        self.assertFalse(kdir.exists())
        self.assertTrue(out.endswith("the cached build 7.3-1-test-aaaaaaaaaaaa cannot be "
                                     "reused: extract afresh\n"))

    def test_no_build_to_seed_from(self):
        s = setup.Setup(self.dir, "bench", no_patches=True)
        self.build("7.3-1-bench-aaaaaaaaaaaa")
        kdir = self.dir / "cache/kernel/7.3-1-bench-unpatched-bbbbbbbbbbbb"
        self.assertEqual(self.run_setup(s.seed_tree, str(kdir), kdir.name), (False, ""))

    def test_drop_stale(self):
        kdir = self.build("7.3-1-test-cccccccccccc")
        gone = self.build("7.3-0-test-aaaaaaaaaaaa")
        unbuilt = self.build("7.3-0-test-dddddddddddd", built=False)
        running = self.build("7.3-1-test-bbbbbbbbbbbb")
        others = [self.build(n) for n in ("7.3-1-bench-aaaaaaaaaaaa",
                                          "7.3-1-test-unpatched-aaaaaaaaaaaa",
                                          "7.3-1-test-aaaa")]
        s = setup.Setup(self.dir, "test")
        # A VM runs from it: harness.vm holds a shared lock.
        with open(running / ".rslub-built", "rb") as held:
            fcntl.flock(held, fcntl.LOCK_SH | fcntl.LOCK_NB)
            _, out = self.run_setup(s.drop_stale, str(kdir))
        self.assertEqual(out, "setup: [Ns] kept 7.3-1-test-bbbbbbbbbbbb: a VM runs from it\n")
        self.assertEqual([d.exists() for d in (kdir, gone, unbuilt, running, *others)],
                         [True, False, False, True, True, True, True])


class Tools(Tmp):
    """The package, bindgen and virtme-ng steps with stand-ins for apt-get,
    apt-cache, dpkg-query, debconf-set-selections, cargo, bindgen and vng;
    the apt sources are written into the test's directory."""

    def setUp(self):
        super().setUp()
        for name in ("SOURCES", "PIN"):
            patcher = mock.patch.object(setup, name, str(self.dir / name.lower()))
            patcher.start()
            self.addCleanup(patcher.stop)
        self.calls = self.dir / "calls"
        # apt-get install fails once (a stale index), then works.
        fakes.command(self.bin, "apt-get", f'echo "apt-get $*" >>{self.calls}\n'
                      f'[ "$1" = install ] && [ ! -e {self.dir}/once ] && '
                      f'{{ touch {self.dir}/once; echo "E: stale"; exit 100; }}\nexit 0')
        fakes.command(self.bin, "apt-cache", 'echo " rust-src | 9.9.9+dfsg1-1~bpo12+1 | '
                      'http://d/debian bookworm-backports/main Sources"')
        fakes.command(self.bin, "debconf-set-selections", f"cat >{self.dir}/debconf")

    def all_installed(self, perf="6.12.38-1~bpo12+1"):
        versions = {p: "1" for p in setup.apt_packages("-22")}
        versions.update({"linux-source-7.3": "7.3.4-1", "qemu-system-x86": "1:10.0",
                         "linux-perf": perf})
        fakes.dpkg(self.bin, versions)

    def test_the_package_list(self):
        # APT_PKGS of scripts/setup.sh with LLVM_SUFFIX=-22.
        self.assertEqual(" ".join(setup.apt_packages("-22")),
                         "bc flex bison libelf-dev libssl-dev cpio xz-utils make gcc patch procps "
                         "python3 udev rsync kmod fonts-dejavu-core clang-22 lld-22 llvm-22 "
                         "libclang-22-dev rt-tests iperf3 stress-ng gdb")

    def test_missing_packages(self):
        fakes.dpkg(self.bin, {})
        s = setup.Setup(self.dir, "classic")
        s.rustc_ver = "9.9.9"
        with mock.patch("sys.stdout"):
            missing = s.missing_packages()
        self.assertEqual(missing, setup.apt_packages("-22") + [
            "linux-source-7.3/trixie-backports", "linux-perf/bookworm-backports",
            "linux-source-6.12", "qemu-system-x86/bookworm-backports",
            "qemu-system-common/bookworm-backports", "qemu-system-data/bookworm-backports",
            "seabios/bookworm-backports", "rust-src=9.9.9+dfsg1-1~bpo12+1"])
        self.assertEqual(Path(setup.SOURCES).read_text(encoding="utf-8"), setup.SOURCES_TEXT)
        self.assertEqual(Path(setup.PIN).read_text(encoding="utf-8"), setup.PIN_TEXT)
        self.assertTrue((self.dir / "cache/.apt-updated").exists())
        self.assertEqual(self.calls.read_text(encoding="ascii"), "apt-get update\n")

    def test_an_old_perf_and_no_rust_src(self):
        self.all_installed(perf="6.1.153-1")
        s = setup.Setup(self.dir, "test")
        self.assertEqual(s.missing_packages(), ["linux-perf/bookworm-backports"])
        s.rustc_ver = "1.0.0"
        with mock.patch("sys.stdout"), self.assertRaises(setup.Failed) as e:
            s.missing_packages()
        self.assertEqual(str(e.exception), "setup: FAILED: unsupported host: no rust-src "
                         "package matching rustc 1.0.0 in the registry (apt-cache madison "
                         "rust-src)")

    def test_install_refreshes_a_stale_index_once(self):
        versions = {p: "1" for p in setup.apt_packages("-22") if p not in ("iperf3", "gdb")}
        versions.update({"linux-source-7.3": "7.3.4-1", "qemu-system-x86": "1:10.0",
                         "linux-perf": "6.12.38-1"})
        fakes.dpkg(self.bin, versions)
        s = setup.Setup(self.dir, "test")
        _, out = self.run_setup(s.install_packages)
        log = self.dir / "cache/logs/apt-install.log"
        self.assertEqual(out, f"setup: [Ns] apt-get update (log: {self.dir}/cache/logs/"
                              f"apt-update.log)\nsetup: [Ns] apt-get install iperf3 gdb "
                              f"(log: {log})\n")
        install = "apt-get install -y --no-install-recommends iperf3 gdb\n"
        self.assertEqual(self.calls.read_text(encoding="ascii"),
                         f"apt-get update\n{install}apt-get update\n{install}")
        self.assertEqual(log.read_text(encoding="ascii"), "E: stale\n")
        self.assertEqual((self.dir / "debconf").read_text(encoding="ascii"),
                         "iperf3 iperf3/start_daemon boolean false\n")

    def test_a_failed_install(self):
        fakes.dpkg(self.bin, {})
        fakes.command(self.bin, "apt-get", 'echo "E: Unable to locate package x"; exit 100')
        s = setup.Setup(self.dir, "test")
        with mock.patch("sys.stdout"), self.assertRaises(setup.Failed) as e:
            s.install_packages()
        log = self.dir / "cache/logs/apt-update.log"
        self.assertEqual(str(e.exception), "setup: FAILED: step 'apt-get update' failed: "
                         f"E: Unable to locate package x (full log: {log})")

    def test_tools_present(self):
        self.all_installed()
        fakes.command(self.bin, "bindgen", "echo bindgen 0.72.1")
        fakes.command(self.bin, "vng", "exit 0")
        s = setup.Setup(self.dir, "test", tools_only=True)
        _, out = self.run_setup(s.tools)
        self.assertEqual(out, "setup: [Ns] bindgen 0.72.1: present\n"
                              "setup: [Ns] Debian packages: present\n"
                              "setup: [Ns] virtme-ng: present\n")

    def test_bindgen_beside_the_packages(self):
        # cargo builds in the background while the packages install: it
        # ends after them, and its failure is said last.
        self.all_installed()
        fakes.command(self.bin, "bindgen", "echo bindgen 0.69.4")
        fakes.command(self.bin, "vng", "exit 0")
        fakes.command(self.bin, "cargo", f'sleep 0.3; echo "$*" >{self.dir}/cargo; '
                      'echo "error: could not compile"; exit 101')
        s = setup.Setup(self.dir, "test", tools_only=True)
        log = self.dir / "cache/logs/bindgen.log"
        with mock.patch("sys.stdout", new_callable=io.StringIO) as out, \
                self.assertRaises(setup.Failed) as e:
            s.tools()
        self.assertEqual(untimed(out.getvalue()),
                         "setup: [Ns] cargo install bindgen-cli (about 3 min, beside the "
                         f"packages) (log: {log})\nsetup: [Ns] Debian packages: present\n"
                         "setup: [Ns] virtme-ng: present\n")
        self.assertEqual(str(e.exception), "setup: FAILED: step 'cargo install bindgen-cli "
                         "(about 3 min, beside the packages)' failed: error: could not compile "
                         f"(full log: {log})")
        self.assertEqual((self.dir / "cargo").read_text(encoding="ascii"),
                         "install bindgen-cli --locked\n")


class Build(Tmp):
    """build_kernel with stand-ins for tar and make (harness.kconfig runs
    for real on the tree they make)."""

    def setUp(self):
        super().setUp()
        self.root = fakes.checkout(self.dir / "root", {"base": b"CONFIG_A=y\n",
                                                       "test": b"CONFIG_B=y\n"}, [PATCH])
        (self.root / "scripts").symlink_to(lib.ROOT / "scripts")
        tarball = self.dir / "linux-source-{}.tar.xz"
        Path(str(tarball).format("7.3")).touch()
        patcher = mock.patch.object(setup, "SRC_TARBALL", str(tarball))
        patcher.start()
        self.addCleanup(patcher.stop)
        # The tree: a file the patch changes, and a merge_config.sh that
        # appends the fragments.
        merge = (self.dir / "merge_config.sh")
        merge.write_text('#!/bin/sh\nshift 4; cat "$@" >"$0.out"\n', encoding="ascii")
        merge.chmod(0o755)
        fakes.command(self.bin, "tar", 'mkdir -p "$4/scripts/kconfig"; echo old >"$4/f"\n'
                      f'cp -p {merge} "$4/scripts/kconfig/"')
        fakes.command(self.bin, "make", 'case "$3" in olddefconfig) '
                      'cp "$2/scripts/kconfig/merge_config.sh.out" "$2/.config" ;; '
                      '-j*) echo "LLVM=$LLVM $3 $4" >"$2/built" ;; esac')

    def build(self):
        s = setup.Setup(self.root, "test")
        _, out = self.run_setup(s.build_kernel)
        kdir = Path(f"{self.dir}/cache/kernel/{s.key()}")
        return s, out, kdir

    def test_a_cold_build_then_one_from_it(self):
        s, out, kdir = self.build()
        logs = f"{self.dir}/cache/logs/kernel-{kdir.name}"
        self.assertEqual(out.split("\n"), [
            f"setup: [Ns] extract kernel source (log: {logs}-extract.log)",
            "setup: [Ns] apply patches/ (1 patch)",
            f"setup: [Ns] configure kernel (test, LLVM=-22) (log: {logs}-config.log)",
            f"setup: [Ns] build kernel {kdir.name} with -j{s.jobs} (about 20 min cold on 2 "
            f"cores) (log: {logs}-build.log)",
            "setup: [Ns] kernel built in N min N s", f"setup: [Ns] kernel ready: {kdir}", ""])
        self.assertEqual((kdir / "f").read_text(encoding="ascii"), "new\n")
        self.assertEqual((kdir / "built").read_text(encoding="ascii"), "LLVM=-22 -j%s all\n"
                         % s.jobs)
        self.assertEqual(os.listdir(kdir / ".rslub-patches.d"), ["0001-p.patch"])
        self.assertTrue((kdir / ".rslub-built").exists())
        self.assertEqual(Path(f"{logs}-config.log").read_text(encoding="utf-8").split("\n")[-2],
                         "kconfig: all fragment options applied")
        # Cached now.
        self.assertEqual(self.build()[1], f"setup: [Ns] kernel {kdir.name}: cached at {kdir}\n")
        # An option more: the new key starts from this build, which then goes.
        with open(self.root / "config/test.config", "a", encoding="ascii") as f:
            f.write("CONFIG_C=y\n")
        s, out, new = self.build()
        self.assertNotEqual(new, kdir)
        self.assertEqual(out.split("\n")[:2], [
            f"setup: [Ns] start from the cached build {kdir.name} (make rebuilds what changed)",
            "setup: [Ns] apply patches/ (1 patch)"])
        self.assertIn("(only what changed: 1-5 min)", out)
        self.assertEqual((new / "f").read_text(encoding="ascii"), "new\n")
        self.assertFalse(kdir.exists())

    def test_an_option_dropped(self):
        fakes.command(self.bin, "make", '[ "$3" = olddefconfig ] && echo CONFIG_A=y >"$2/.config"'
                      '; exit 0')
        s = setup.Setup(self.root, "test")
        logs = f"{self.dir}/cache/logs/kernel-{s.key()}"
        with mock.patch("sys.stdout"), self.assertRaises(setup.Failed) as e:
            s.build_kernel()
        self.assertEqual(str(e.exception), "setup: FAILED: step 'configure kernel (test, "
                         "LLVM=-22)' failed: kconfig: fragment options were dropped; see above "
                         f"(full log: {logs}-config.log)")

    def test_no_source(self):
        os.remove(setup.SRC_TARBALL.format("7.3"))
        with mock.patch("sys.stdout"), self.assertRaises(setup.Failed) as e:
            setup.Setup(self.root, "test").build_kernel()
        self.assertEqual(str(e.exception), "setup: FAILED: kernel source "
                         f"{setup.SRC_TARBALL.format('7.3')} missing (package linux-source-7.3)")


if __name__ == "__main__":
    unittest.main()
