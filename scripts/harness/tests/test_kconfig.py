# SPDX-License-Identifier: GPL-2.0
"""harness.kconfig: what the fragments ask for, and which of it the .config
lacks (the tree's make is not run here)."""

import io
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import kconfig


class Wanted(unittest.TestCase):

    def test_settings(self):
        self.assertEqual(kconfig.setting("CONFIG_A=y"), ("CONFIG_A", "y"))
        self.assertEqual(kconfig.setting('CONFIG_S="a=b"'), ("CONFIG_S", '"a=b"'))
        self.assertEqual(kconfig.setting("# CONFIG_B is not set"), ("CONFIG_B", "off"))
        for other in ("# a comment", "", "CONFIG_C", " CONFIG_D=y", "# CONFIG_E is set",
                      "#CONFIG_F is not set"):
            self.assertIsNone(kconfig.setting(other), other)

    def test_a_later_fragment_wins(self):
        want = kconfig.wanted([("base", "CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n"),
                               ("test", "# CONFIG_A is not set\nCONFIG_C=m\nCONFIG_D=64")])
        self.assertEqual(want, {"CONFIG_A": ("off", "test"), "CONFIG_B": ("y", "base"),
                                "CONFIG_C": ("m", "test"), "CONFIG_D": ("64", "test")})
        # In the order the options first appear.
        self.assertEqual(list(want), ["CONFIG_A", "CONFIG_B", "CONFIG_C", "CONFIG_D"])


class Dropped(unittest.TestCase):

    CONFIG = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_M=m\nCONFIG_N=64\nCONFIG_AB=y\n"

    def test_all_applied(self):
        want = {"CONFIG_A": ("y", "f"), "CONFIG_B": ("off", "f"), "CONFIG_M": ("m", "f"),
                "CONFIG_N": ("64", "f"), "CONFIG_GONE": ("off", "f")}
        self.assertEqual(kconfig.dropped(want, self.CONFIG), [])

    def test_wanted_off_got_on(self):
        want = {"CONFIG_A": ("off", "base"), "CONFIG_M": ("off", "test")}
        self.assertEqual(kconfig.dropped(want, self.CONFIG),
                         ["kconfig: CONFIG_A wanted off, got on (base)",
                          "kconfig: CONFIG_M wanted off, got on (test)"])

    def test_values(self):
        # An option that is not there is 'unset'; a prefix of another
        # option's name is not that option.
        want = {"CONFIG_B": ("y", "base"), "CONFIG_N": ("32", "bench"),
                "CONFIG_M": ("y", "test")}
        self.assertEqual(kconfig.dropped(want, self.CONFIG),
                         ["kconfig: CONFIG_B wanted y, got 'unset' (base)",
                          "kconfig: CONFIG_N wanted 32, got '64' (bench)",
                          "kconfig: CONFIG_M wanted y, got 'm' (test)"])
        self.assertEqual(kconfig.value(self.CONFIG, "CONFIG_A"), "y")


class Main(unittest.TestCase):
    """main() with a tree whose make and merge_config.sh are stand-ins."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()  # pylint: disable=consider-using-with
        self.dir = Path(self.tmp.name)
        merge = self.dir / "scripts/kconfig/merge_config.sh"
        merge.parent.mkdir(parents=True)
        # The fragments, appended in order: the .config they give.
        merge.write_text('#!/bin/sh\nshift 4\ncat "$@" >"$0.out"\n', encoding="ascii")
        merge.chmod(0o755)
        (self.dir / "bin").mkdir()
        make = self.dir / "bin/make"
        # olddefconfig drops CONFIG_DROPPED (its dependencies unmet).
        make.write_text(f'#!/bin/sh\n[ "$3" = olddefconfig ] && grep -v DROPPED {merge}.out '
                        f'>"$2/.config"\nexit 0\n', encoding="ascii")
        make.chmod(0o755)

    def tearDown(self):
        self.tmp.cleanup()

    def run_main(self, *fragments):
        paths = []
        for i, text in enumerate(fragments):
            paths.append(str(self.dir / f"f{i}.config"))
            Path(paths[-1]).write_text(text, encoding="ascii")
        env = {"PATH": f"{self.dir}/bin:{os.environ['PATH']}"}
        with mock.patch.dict(os.environ, env), \
                mock.patch("sys.stdout", new_callable=io.StringIO) as out:
            rc = kconfig.main([str(self.dir), *paths])
        return rc, out.getvalue()

    def test_applied(self):
        self.assertEqual(self.run_main("CONFIG_A=y\n", "# CONFIG_B is not set\n"),
                         (0, "kconfig: all fragment options applied\n"))

    def test_dropped(self):
        rc, out = self.run_main("CONFIG_A=y\nCONFIG_DROPPED=y\n")
        self.assertEqual(rc, 1)
        self.assertEqual(out, f"kconfig: CONFIG_DROPPED wanted y, got 'unset' "
                              f"({self.dir}/f0.config)\n"
                              "kconfig: fragment options were dropped; see above\n")

    def test_a_failed_make(self):
        (self.dir / "bin/make").write_text("#!/bin/sh\nexit 2\n", encoding="ascii")
        rc, out = self.run_main("CONFIG_A=y\n")
        self.assertEqual(rc, 1)
        self.assertEqual(out, f"kconfig: FAILED: make -C {self.dir} tinyconfig: "
                              "exit status 2\n")

    def test_usage(self):
        with mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            self.assertEqual(kconfig.main(["/k"]), 2)
        self.assertEqual(err.getvalue(), kconfig.USAGE + "\n")


if __name__ == "__main__":
    unittest.main()
