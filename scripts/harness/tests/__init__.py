# SPDX-License-Identifier: GPL-2.0
"""The host harness's own tests: python3 -m unittest discover -s
scripts/harness/tests -t scripts (make check runs them; seconds, no VM)."""
