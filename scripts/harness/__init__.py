# SPDX-License-Identifier: GPL-2.0
"""rslub's host harness: the VM runner and the runs that use it.

vm (make vm: one guest under the watcher, vmwatch), check (make check's
steps and guest scheduler), serve (its served-cache guest), setuplogic
(the setup decisions it checks first), stress (make stress), bench (make
bench, with benchreal and benchboot), tracepair (make trace-pair), judge
(the verdicts all of them share) and lib (the kernel, its config, copies
of the tree, the cost model's QEMU options). The guests' own scripts
stay shell, in scripts/guest/. Python 3.11, standard library only; the
host tests are in tests/ (python3 -m unittest, run by make check).
"""
