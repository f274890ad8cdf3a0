# SPDX-License-Identifier: GPL-2.0
"""rslub's host harness: the VM runner and the runs that use it.

vm (make vm: one guest under the watcher, vmwatch), check (make check's
steps and guest scheduler), serve (its served-cache guest), setuplogic
(the setup decisions it checks first), stress (make stress), bench (make
bench, with benchreal and benchboot), tracepair (make trace-pair), judge
(the verdicts all of them share) and lib (the kernel, its config, copies
of the tree, the cost model's QEMU options, what the runs share). The
runs that check the project itself (docs/testing.md): plugincost and
quantumsweep (the cost model's own cost), qemuquantum (make qemu's QEMU),
fresh (a new user's first make check) and readmerun (every command the
README lists). Each runs as `python3 -m harness.NAME` with PYTHONPATH=scripts.
Setting the machine up is Python too: setup (make setup: the toolchain
and the kernel, with kconfig), gcckernel (the "own kernel") and qemubuild
(make qemu), with steps, what they share; scripts/setup, scripts/kconfig,
scripts/gcc-kernel and scripts/qemu-build are the short entries that run
them. Only the guests' own scripts stay shell, in scripts/guest/. Python
3.11, standard library only; the host tests are in tests/ (python3 -m
unittest, run by make check and make harness-test).
"""
