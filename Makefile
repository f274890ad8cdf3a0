# SPDX-License-Identifier: GPL-2.0
# rslub: build, lint, test and run in a VM. See README.md.
#
#   make            build rslub.ko and kunit/rslub_kunit.ko against KDIR
#                   (VARIANT=locked_cmpxchg|fill_ge|free_batch: a build variant,
#                   one of the bench's experiments, never the default module)
#   make check      setup if needed, host tests, lint, build, KUnit in VMs
#                   (DEBUG=1: on the debug kernel flavor, KASAN and friends)
#   make bench      A/B benchmark: in-tree SLUB vs rslub vs a floor allocator
#                   (QUICK=1, SUITE=max-empty|cpu-partial|fill|cmpxchg|hardening|free-batch|real|classic|classic-real|classic-all, KVM=1)
#   make bench-compare A=results/<x> B=results/<y>   compare two saved runs
#   make bench-verdict R=results/<x>   a model run's verdicts priced again
#   make bench-glance R='results/<x> ...'   classic, sheaves and rslub from two-kernel runs, as Markdown
#   make bench-experiments R='results/<x> ...'   the seeds' experiments (SUITE=real EXPERIMENT=), as Markdown
#                   (transfer and atomic prices halved and doubled, desktop)
#   make trace-pair the instructions of one alloc+free pair, single-stepped
#                   under gdb in the bench kernel, per function (slub, rslub,
#                   served, kmalloc, kserved; TRACE_ALLOCS, TRACE_SIZE)
#   make stress     60 s of rslub_stress.ko on 4 CPUs / 2 NUMA nodes with CPU hotplug
#   make setup      install the toolchain, build the cached test kernel
#   make lint       clippy + rustfmt on the Rust, checkpatch on the C and on patches/
#   make host-test  the core's host tests (host-test-free-batch: as the
#                   free_batch variant compiles it; make check runs both)
#   make harness-test  the host harness's own tests (scripts/harness/tests)
#   make vm CMD=..  run CMD as root in a VM with the repo visible
#   make -s kdir    print the kernel build directory
#   make costmodel  the cost model: its QEMU plugin, costmodel-price and
#                   costmodel-calib (tools/costmodel), the calibration
#                   program its make check guest runs and `mark`
#   make costmodel-selftest  the plugin under QEMU without a kernel: rep
#                   string instructions and atomics counted as worked out
#   make qemu       a patched QEMU (patches/qemu: -accel tcg,rr-quantum=N,
#                   the plugins' vCPU index under -icount), built once and
#                   cached; prints its path (scripts/qemu-build; not part
#                   of setup or check). python3 -m harness.qemuquantum checks it
#   make mutants    mutation testing of the core's host tests (cargo-mutants;
#                   FILE='slub/*.rs' RE=regex JOBS=1 LIST=1; not part of check)
#
# KDIR=/path uses your own Rust-enabled kernel build (no kernel setup).

ROOT := $(CURDIR)
export PATH := $(HOME)/.cargo/bin:$(PATH)
# DEBUG=1: every target on the debug kernel flavor (config/debug.config:
# KASAN, KFENCE, kmemleak, DEBUG_VM, ...), built and cached apart.
ifeq ($(DEBUG),1)
export RSLUB_FLAVOR := debug
endif
export LIBCLANG_PATH ?= /usr/lib/llvm-22/lib

# Which kernel: the user's KDIR= (command line or environment), or the
# project's cached one. The cached one's path depends on what setup installs,
# so it is resolved when first used (after setup), and it is never put in the
# environment under the name KDIR: a nested make (harness.check runs
# 'make setup') must not mistake it for the user's, or that setup would
# install the tools only and never build or refresh the cached kernel.
# harness.setuplogic (scripts/harness/setuplogic.py) checks these decisions.
ifeq ($(origin KDIR),undefined)
# (RSLUB_FLAVOR given by hand: make before 4.4 does not pass exported
# variables to $(shell), and DEBUG=1 would build against the test kernel.)
BUILD_KDIR = $(eval BUILD_KDIR := $(shell RSLUB_FLAVOR=$(RSLUB_FLAVOR) $(ROOT)/scripts/setup --print-kdir 2>/dev/null))$(BUILD_KDIR)
SETUP_ARGS :=
else
BUILD_KDIR := $(KDIR)
SETUP_ARGS := --tools-only
endif

# A clang-built kernel needs its LLVM for modules too (LLVM=-NN when clang-NN
# is installed, else LLVM=1); a GCC-built one needs nothing.
kconfig = $(shell sed -n 's/^$(1)=//p' $(BUILD_KDIR)/.config 2>/dev/null)
clang_major = $(shell expr $(call kconfig,CONFIG_CLANG_VERSION) / 10000)
KLLVM = $(if $(filter y,$(call kconfig,CONFIG_CC_IS_CLANG)),LLVM=$(if $(shell command -v clang-$(clang_major)),-$(clang_major),1))
KMAKE = $(MAKE) -C $(BUILD_KDIR) M=$(ROOT) $(KLLVM)

# The module's Rust (kernel rustfmt config); tools/ use cargo fmt's defaults.
RUST_SRC := $(wildcard rust/*.rs rust/serve/*.rs rust/core/*.rs rust/core/slab/*.rs rust/core/slub/*.rs)
# c_shim/host/ is userspace code (the host machine the core's host tests
# run on), not kernel style, and not in this list.
# stress/modcycle.c and tools/realprogs/ are userspace too, but kernel style.
C_SRC := $(filter-out %.mod.c,$(wildcard c_shim/*.c c_shim/*.h kunit/*.c kunit/*.h bench/*.c bench/*.h stress/*.c stress/*.h include/*.h tools/realprogs/*.c tools/realprogs/*.h tools/costmodel/guest/*.c tools/qemu-quantum/*.c scripts/guest/*.c))

.PHONY: all modules setup check harness-test bench bench-compare bench-verdict bench-glance bench-experiments trace-pair stress lint fmt vm kdir clean host-test \
	host-test-free-batch mutants costmodel costmodel-selftest qemu

all: modules

modules: stress/modcycle
	$(KMAKE) modules

# The lifecycle test's load/unload loop; static: guest execs are slow over 9p.
stress/modcycle: stress/modcycle.c
	$(CC) -O2 -Wall -Wextra -Werror -static -o $@ $<

# Setup and the harness are Python (scripts/setup: harness.setup); without
# a python3 the targets that set up say so in one line.
NEED_PYTHON3 = command -v python3 >/dev/null || { echo "setup: FAILED: no python3 on PATH (setup \
	and the harness are Python 3.11: apt-get install python3)" >&2; exit 1; }

setup:
	@$(NEED_PYTHON3)
	@scripts/setup $(SETUP_ARGS)

# The patched QEMU of patches/qemu, cached under ~/.cache/rslub/qemu; a run
# selects it with VM_QEMU=$$(scripts/qemu-build) (scripts/harness/vm.py).
qemu:
	@$(NEED_PYTHON3)
	@scripts/qemu-build

# The plugin and its host tools (cargo), and the calibration program (static:
# the guest runs it from the host's filesystem over 9p).
costmodel: tools/costmodel/guest/calib tools/costmodel/guest/mark
	cd tools/costmodel && cargo build --release --quiet

# The plugin under QEMU without a kernel: a multiboot guest of rep string
# instructions and atomics, every field of its counts checked (2 s).
costmodel-selftest: costmodel
	tools/costmodel/selftest.sh

tools/costmodel/guest/calib: tools/costmodel/guest/calib.c include/rslub_mark.h
	$(CC) -O2 -Wall -Wextra -Werror -static -pthread -o $@ $<

tools/costmodel/guest/mark: tools/costmodel/guest/mark.c include/rslub_mark.h
	$(CC) -O2 -Wall -Wextra -Werror -static -o $@ $<

host-test:
	cd rust/core && cargo test --quiet

# The core as the free_batch build variant compiles it (Kbuild
# VARIANT=free_batch), in a target directory of its own: RUSTFLAGS would
# otherwise rebuild the default one each time.
FREE_BATCH_CARGO = RUSTFLAGS="--cfg rslub_free_batch" CARGO_TARGET_DIR=target/free_batch cargo

host-test-free-batch:
	cd rust/core && $(FREE_BATCH_CARGO) test --quiet

lint:
	$(KMAKE) CLIPPY=1 modules
	cd rust/core && cargo clippy --quiet --all-targets -- -D warnings
	cd rust/core && $(FREE_BATCH_CARGO) clippy --quiet --all-targets -- -D warnings
	cd tools/rslabinfo && cargo clippy --quiet --all-targets -- -D warnings && cargo fmt --check
	cd tools/rsbench && cargo clippy --quiet --all-targets -- -D warnings && cargo fmt --check
	cd tools/costmodel && cargo clippy --quiet --workspace --all-targets -- -D warnings && cargo fmt --all --check
	# The host harness: it compiles, and no line is longer than 100 characters.
	python3 -m compileall -q scripts/harness scripts/fastpath-shape.py
	! grep -n '.\{101\}' scripts/harness/*.py scripts/harness/tests/*.py
	rustfmt --check --edition 2021 --config-path $(BUILD_KDIR)/.rustfmt.toml $(RUST_SRC)
	$(BUILD_KDIR)/scripts/checkpatch.pl --no-tree --quiet --terse --strict \
		--ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES,EXPORT_SYMBOL -f $(C_SRC)
	# The kernel patches as patches to the kernel, read from stdin (named
	# inside a git checkout, checkpatch checks the file's own git diff).
	# CamelCase: the kernel's own page-flag helpers, __SetPageSlab().
	for p in patches/*.patch; do \
		$(BUILD_KDIR)/scripts/checkpatch.pl --no-tree --quiet --terse --strict \
			--ignore CAMELCASE - <$$p || exit 1; \
	done

fmt:
	rustfmt --edition 2021 --config-path $(BUILD_KDIR)/.rustfmt.toml $(RUST_SRC)
	cd tools/rslabinfo && cargo fmt
	cd tools/rsbench && cargo fmt
	cd tools/costmodel && cargo fmt --all

# The host harness (scripts/harness/, Python): make check, make stress, make
# bench, the VM runner.
HARNESS = PYTHONPATH=$(ROOT)/scripts python3 -m harness

check:
	@$(NEED_PYTHON3)
	@$(HARNESS).check

# The harness's own tests (make check runs them too).
harness-test:
	cd scripts && python3 -m unittest discover -s harness/tests -t .

# FILE and RE are passed unexpanded (globs, regex specials such as '$').
mutants:
	@FILE='$(value FILE)' RE='$(value RE)' JOBS='$(JOBS)' LIST='$(LIST)' \
		MUTANTS_LIMIT='$(MUTANTS_LIMIT)' VARIANT='$(VARIANT)' $(HARNESS).mutants

bench:
	@$(NEED_PYTHON3)
	@$(HARNESS).bench

trace-pair:
	@$(HARNESS).tracepair

bench-compare:
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make bench-compare A=results/<run> B=results/<run>"; exit 2; }
	@cd tools/rsbench && cargo build --release --quiet
	@tools/rsbench/target/release/rsbench compare "$(A)" "$(B)"

bench-verdict:
	@test -n "$(R)" || { echo "usage: make bench-verdict R=results/<run> (a run with MODES=model)"; exit 2; }
	@cd tools/rsbench && cargo build --release --quiet
	@tools/rsbench/target/release/rsbench verdict "$(R)"

bench-glance:
	@test -n "$(R)" || { echo "usage: make bench-glance R='results/<run> ...' (runs of SUITE=classic or classic-real)"; exit 2; }
	@cd tools/rsbench && cargo build --release --quiet
	@tools/rsbench/target/release/rsbench glance $(R)

bench-experiments:
	@test -n "$(R)" || { echo "usage: make bench-experiments R='results/<run> ...' (runs of SUITE=real EXPERIMENT=...)"; exit 2; }
	@cd tools/rsbench && cargo build --release --quiet
	@tools/rsbench/target/release/rsbench experiment $(R)

stress:
	@$(NEED_PYTHON3)
	@$(HARNESS).stress

# CMD goes through the environment unexpanded, so '$x' and quotes survive.
vm: export RSLUB_VM_CMD = $(value CMD)
vm:
	@$(NEED_PYTHON3)
	@scripts/setup $(SETUP_ARGS) >/dev/null || { echo "vm: setup failed (run make setup)"; exit 1; }
	@$(HARNESS).vm "$(BUILD_KDIR)" "$$RSLUB_VM_CMD"

kdir:
	@echo $(BUILD_KDIR)

clean:
	$(KMAKE) clean
	rm -f rust/shim_bindings.rs stress/modcycle tools/costmodel/guest/calib tools/costmodel/guest/mark
	$(MAKE) -C tools/realprogs clean
	rm -rf rust/core/target tools/rslabinfo/target tools/rsbench/target tools/costmodel/target
