# shellcheck shell=bash
# Shared by the host shell scripts that remain (sourced, with ROOT set):
# trace-pair.sh, plugin-cost.sh and quantum-sweep.sh. make check, make
# stress and make bench are scripts/harness/ (Python); the copy of the tree
# and the cost model's QEMU options are written once, in its lib.py, and
# the functions below ask it.

# harness_lib COMMAND ARGS...: python3 -m harness.lib (its usage lists them).
harness_lib() {
	PYTHONPATH="$ROOT/scripts${PYTHONPATH:+:$PYTHONPATH}" python3 -m harness.lib "$@"
}

# copy_tree DIR: copies the checkout ($ROOT) into DIR for a module build
# of its own, without git data, results and build outputs (a rebuild there
# is incremental).
copy_tree() {
	harness_lib copy-tree "$1"
}

# model_qemu_opts KDIR COUNTS [ARG,...]: QEMU options for a boot under the
# cost model's plugin (tools/costmodel, built by `make costmodel`): -icount,
# the counts file, the kernel's cpu_number, the plugin arguments ARG, then
# MODEL_ARGS; RR_QUANTUM=Q: the patched QEMU's -accel tcg,rr-quantum=Q (boot
# with VM_QEMU=$(vm_qemu_for OPTS), or call use_quantum outside a $(...):
# it exports VM_QEMU). harness/lib.py says the rest.
model_qemu_opts() {
	harness_lib model-opts "$@"
}

# model_boot_opts KDIR COUNTS [ARG,...]: the options of a make bench model
# boot: MODEL_PROFILE's core and profile, at the quantum of model_quantum.
model_boot_opts() {
	harness_lib boot-opts "$@"
}

# model_quantum: the quantum of make bench's model boots (RR_QUANTUM, 1000
# when unset; 0: the distribution's QEMU).
model_quantum() {
	harness_lib quantum
}

# use_quantum: with RR_QUANTUM set, exports VM_QEMU, the patched QEMU of
# `make qemu`, or says how to get it (it is not built here: about 6 min).
use_quantum() {
	[ "${RR_QUANTUM:-0}" != 0 ] || return 0
	VM_QEMU=$(harness_lib quantum-qemu) || return 1
	export VM_QEMU
}

# vm_qemu_for OPTS: the QEMU binary for a boot with QEMU options OPTS: the
# patched one of `make qemu` when they ask for a quantum, else VM_QEMU
# (empty: scripts/vm.sh's default, the distribution's).
vm_qemu_for() {
	case $1 in
	*rr-quantum=*) "$ROOT/scripts/qemu-build.sh" --print-path ;;
	*) echo "${VM_QEMU:-}" ;;
	esac
}
