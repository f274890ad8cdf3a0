# shellcheck shell=bash
# Shared by the host shell scripts (sourced): bench.sh, bench-real.sh,
# trace-pair.sh and the QA scripts. make check and make stress are
# scripts/harness/ (Python), whose lib.py has the model boots' options too.

# The kernel build directory `make` uses (the cached one, or the user's
# KDIR=). --no-print-directory: under `make -C DIR check` every nested make
# would print "Entering directory" lines around the path.
rslub_kdir() {
	make -s --no-print-directory kdir
}

# copy_tree DIR: copies the checkout ($ROOT) into DIR for a module build
# of its own (bench builds, build variants, another kernel), without git
# data, results and build outputs; the outputs already in DIR are excluded
# from --delete too, so a rebuild there is incremental.
copy_tree() {
	mkdir -p "$1"
	rsync -a --delete --exclude /results --exclude target --exclude .git \
		--exclude '*.o' --exclude '*.ko' --exclude '*.cmd' --exclude '*.mod' \
		--exclude '*.mod.c' --exclude '*.bc' --exclude Module.symvers --exclude modules.order \
		--exclude /rust/shim_bindings.rs \
		"$ROOT/" "$1/"
}

# expand_modes MODE...: the modes with "model" standing for the cost
# model's two boots, model (2 vCPUs) and model8 (8 over 2 nodes); each once.
expand_modes() {
	for m in "$@"; do if [ "$m" = model ]; then echo model model8; else echo "$m"; fi; done |
		tr ' ' '\n' | awk 'NF && !seen[$0]++' | paste -sd' '
}

# model_qemu_opts KDIR COUNTS [ARG,...]: QEMU options for a boot under the
# cost model's plugin (tools/costmodel, built by `make costmodel`): -icount,
# the counts file, the kernel's per-CPU cpu_number (System.map; the plugin
# finds the running vCPU with it) and any further plugin arguments, then
# MODEL_ARGS from the environment (e.g. MODEL_ARGS=strings=iter,rmw=access:
# each rep iteration an access and an atomic's accesses priced on top of
# it, the older counting, for comparison). COSTMODEL_PLUGIN: another
# build of the plugin (scripts/plugin-cost.sh compares two).
# RR_QUANTUM=Q: the patched QEMU of `make qemu` (scripts/qemu-build.sh,
# which must have run) with each vCPU's turn at most Q instructions
# (-accel tcg,rr-quantum=Q), and the plugin trusting that QEMU's vCPU index
# (vcpu=qemu: its patch gives callbacks the vCPU that runs a block), for
# the vCPUs to interleave finely (docs/benchmarks.md, "Two CPUs at once");
# 0 or empty: the distribution's QEMU. Boot with VM_QEMU=$(vm_qemu_for
# OPTS), or call use_quantum outside a $(...) (it exports VM_QEMU).
model_qemu_opts() {
	local kdir=$1 counts=$2 extra=${3:-} cn
	cn=$(awk '$3 == "cpu_number" { print $1; exit }' "$kdir/System.map" 2>/dev/null)
	# Linux 6.2 to 6.14 (the classic flavor's 6.12) keep it in struct
	# pcpu_hot, after the task pointer and preempt_count: at +12.
	if [ -z "$cn" ]; then
		cn=$(awk '$3 == "pcpu_hot" { print $1; exit }' "$kdir/System.map" 2>/dev/null)
		[ -z "$cn" ] || cn=$(printf '%x' $((0x$cn + 12)))
	fi
	[ -n "$cn" ] || { echo "model: no cpu_number (nor pcpu_hot) in $kdir/System.map" >&2; return 1; }
	local accel=''
	if [ "${RR_QUANTUM:-0}" != 0 ]; then
		use_quantum || return 1
		accel=" -accel tcg,rr-quantum=$RR_QUANTUM"
		extra="${extra:+$extra,}vcpu=qemu"
	fi
	echo "-icount shift=0,sleep=off$accel -plugin ${COSTMODEL_PLUGIN:-$ROOT/tools/costmodel/target/release/libcostmodel.so},out=$counts,cpu_number=0x$cn${extra:+,$extra}${MODEL_ARGS:+,$MODEL_ARGS}"
}

# use_quantum: with RR_QUANTUM set, exports VM_QEMU, the patched QEMU of
# `make qemu`, or says how to get it (it is not built here: about 6 min).
use_quantum() {
	[ "${RR_QUANTUM:-0}" != 0 ] || return 0
	case $RR_QUANTUM in '' | *[!0-9]*) echo "model: RR_QUANTUM=$RR_QUANTUM: expected a number of instructions" >&2; return 1 ;; esac
	local q
	q=$("$ROOT/scripts/qemu-build.sh" --print-path) || return 1
	[ -x "$q" ] || { echo "model: RR_QUANTUM needs the patched QEMU: run 'make qemu' first (about 6 min; $q)" >&2; return 1; }
	export VM_QEMU=$q
}

# model_nodes N NODES MEM: the plugin's cpu_nodes= and mem_starts= for N
# vCPUs over NODES nodes of N/NODES vCPUs each, MEM (e.g. 3G) split evenly
# as QEMU's -numa does for VM_NUMA=NODES (scripts/vm.sh).
model_nodes() {
	local n=$1 nodes=$2 mb per starts='' cn='' k c
	mb=$(numfmt --from=iec "$3" | awk '{print int($1 / 1048576)}')
	per=$((mb / nodes))
	for ((k = 1; k < nodes; k++)); do
		starts="$starts${starts:+:}$(printf '0x%x' $((k * per * 1048576)))"
	done
	for ((c = 0; c < n; c++)); do cn="$cn${cn:+:}$((c / (n / nodes)))"; done
	echo "cpu_nodes=$cn,mem_starts=$starts"
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

# model_quantum: the quantum of make bench's model boots: RR_QUANTUM, 1000
# instructions when unset (the figures converge from Q = 10000 down, where
# the distribution's QEMU gives a spinner's clock whole slices of waiting:
# docs/benchmarks.md, "Fine interleaving"); 0: the distribution's QEMU.
model_quantum() { echo "${RR_QUANTUM-1000}"; }

# need_quantum_qemu MODES...: when one of MODES is a model boot and
# model_quantum is not 0, builds the patched QEMU (scripts/qemu-build.sh:
# about 6 min the first time, cached under RSLUB_CACHE/qemu).
need_quantum_qemu() {
	local m
	[ "$(model_quantum)" != 0 ] || return 0
	for m in "$@"; do
		case $m in model*)
			"$ROOT/scripts/qemu-build.sh" >/dev/null || {
				echo "bench: FAILED: building the patched QEMU of the model boots (scripts/qemu-build.sh; RR_QUANTUM=0 boots them on the distribution's)" >&2
				return 1
			}
			return 0 ;;
		esac
	done
}

# mode_shape MODE DEFAULT_CPUS: "vCPUs nodes" of a bench boot: icount and
# model 2 on one node, model8 and model16 over 2 nodes, model32 over 4, any
# other DEFAULT_CPUS on one.
mode_shape() {
	case $1 in
	icount | model) echo "2 1" ;;
	model8 | model16) echo "${1#model} 2" ;;
	model32) echo "32 4" ;;
	*) echo "$2 1" ;;
	esac
}

# qemu_meta MODES...: the QEMU of a bench run for its metadata: the
# distribution's version, and the quantum patch when a model boot used it.
qemu_meta() {
	local m v
	v=$(qemu-system-x86_64 --version | head -n 1 | sed 's/^QEMU emulator version //')
	if [ "$(model_quantum)" != 0 ]; then
		for m in "$@"; do
			case $m in model*)
				v="$v; model boots: patched, rr-quantum=$(model_quantum)"
				break ;;
			esac
		done
	fi
	echo "$v"
}

# model_profile: the profile make bench prices its model boots with
# (MODEL_PROFILE, default server-ooo: the server's prices on an interval
# core, which hides what an out-of-order core overlaps; `server` prices
# in order, every access one after another).
model_profile() { echo "${MODEL_PROFILE:-server-ooo}"; }

# model_boot_opts KDIR COUNTS [ARG,...]: model_qemu_opts for a make bench
# boot, with the plugin's core= of model_profile when it is an interval
# core (costmodel-price --core; empty for an in-order profile), so that
# the counts can be priced under it and under the in-order profiles, at
# the quantum of model_quantum (boot them with VM_QEMU=$(vm_qemu_for OPTS)).
model_boot_opts() {
	local core extra=${3:-}
	core=$("$ROOT/tools/costmodel/target/release/costmodel-price" --profile "$(model_profile)" --core) ||
		{ echo "model: no profile '$(model_profile)' in tools/costmodel/profiles.toml" >&2; return 1; }
	[ -z "$core" ] || extra="${extra:+$extra,}core=$core"
	# The vCPUs' clocks (the order of their events, waiting, the span)
	# are timed with the same profile.
	extra="${extra:+$extra,}profile=$(model_profile)"
	RR_QUANTUM=$(model_quantum) model_qemu_opts "$1" "$2" "$extra"
}

# lock_build DIR: holds DIR (a module build copy of make bench) for this
# shell and its children, or stops with one line: two runs at once in one
# build directory would delete each other's built programs (copy_tree
# --delete). BENCH_BUILD gives a run a directory of its own.
lock_build() {
	mkdir -p "$(dirname "$1")"
	exec 9>"$1.lock"
	flock -n 9 || {
		echo "bench: FAILED: another make bench is using $1; wait for it, or give this run BENCH_BUILD=/another/dir" >&2
		exit 1
	}
}
