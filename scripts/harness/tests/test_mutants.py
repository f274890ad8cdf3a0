# SPDX-License-Identifier: GPL-2.0
"""make mutants' cargo-mutants arguments (harness.mutants)."""

import unittest
from pathlib import Path

from harness import mutants


class Args(unittest.TestCase):

    def test_the_default_run_leaves_out_tests_and_host(self):
        args = mutants.mutants_args({}, Path("/r"))
        self.assertEqual(args[:5], ["--dir", "/r/rust/core", "--jobs", "1", "--no-shuffle"])
        self.assertEqual(args[5:], [a for f in mutants.EXCLUDE for a in ("--exclude", f)])

    def test_files_and_regex(self):
        args = mutants.mutants_args({"FILE": "slub/*.rs slab/a.rs", "RE": "x$", "JOBS": "2"},
                                    Path("/r"))
        self.assertEqual(args, ["--dir", "/r/rust/core", "--jobs", "2", "--no-shuffle",
                                "--file", "slub/*.rs", "--file", "slab/a.rs", "--re", "x$"])


if __name__ == "__main__":
    unittest.main()
