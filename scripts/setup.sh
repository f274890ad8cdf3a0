#!/usr/bin/env bash
# Installs rslub's toolchain from the package registries and builds the cached
# Rust-enabled test kernel. Idempotent: every step checks first and skips what
# is already there, so a second run finishes in seconds.
#
# Usage: scripts/setup.sh [--flavor test|bench|classic|debug] [--no-patches] [--print-kdir]
#                         [--tools-only] [--dry-run]
#                         [--apply-patches KERNEL_SOURCE_DIR]
# Environment: RSLUB_CACHE (default ~/.cache/rslub), JOBS (default nproc+1).
#
# --dry-run (or RSLUB_SETUP_DRY_RUN=1 in the environment, which reaches a
# setup run by a nested make) prints the decisions ("tools: ...",
# "kernel ...: build|cached ...", or a "setup: FAILED:" line for each
# missing prerequisite) and changes nothing: harness.setuplogic
# (scripts/harness/setuplogic.py) checks them.
#
# --no-patches builds the flavor without patches/ (and without the options
# only they provide), cached as FLAVOR-unpatched: the kernel that measures
# what the patches cost with nothing served (docs/benchmarks.md).
#
# Both flavors are built with LLVM ($LLVM_SUFFIX, the major of rustc's LLVM)
# and CONFIG_RUST_INLINE_HELPERS, so that rslub's C shim is inlined into its
# Rust (see Kbuild); the toolchain is part of the cache key.
#
# --flavor classic is Linux 6.12 (linux-source-6.12, bookworm-security): the
# last C SLUB of the classic design rslub implements (per-CPU slabs, the tid
# cmpxchg16b fast path, CPU partial lists; 7.0 replaced it with sheaves),
# for make bench SUITE=classic. Only the C bench module runs on it, so it has
# no Rust and no patches; it is built with the same LLVM as the 7.3 flavors
# (the same compiler on every side of the comparison) from the bench
# flavor's fragments, minus the options 6.12 lacks, plus config/classic.config.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PATH=$HOME/.cargo/bin:$PATH
CACHE=${RSLUB_CACHE:-$HOME/.cache/rslub}
# RSLUB_FLAVOR=debug (make ... DEBUG=1): the test flavor with the memory
# debuggers (config/debug.config), cached apart.
FLAVOR=${RSLUB_FLAVOR:-test}
NO_PATCHES=0
PRINT_KDIR=0
TOOLS_ONLY=0
DRY_RUN=${RSLUB_SETUP_DRY_RUN:-0}
KVER_MAJOR=7.3
# The classic flavor's source (bookworm-security: default apt sources).
CLASSIC_KVER=6.12
CLASSIC=0
JOBS=${JOBS:-$(($(nproc) + 1))}
LOGDIR=$CACHE/logs
T0=$(date +%s)

while [ $# -gt 0 ]; do
	case "$1" in
	--flavor) FLAVOR=$2; shift ;;
	--no-patches) NO_PATCHES=1 ;;
	--print-kdir) PRINT_KDIR=1 ;;
	--tools-only) TOOLS_ONLY=1 ;;
	--dry-run) DRY_RUN=1 ;;
	--apply-patches) APPLY_TO=$2; shift ;;
	*) echo "setup: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done

say() { [ "$PRINT_KDIR" = 1 ] || echo "setup: [$(($(date +%s) - T0))s] $*"; }
die() { echo "setup: FAILED: $*" >&2; exit 1; }
# The classic flavor: its own source and fragments, never patches/ (they
# are written against 7.3); cached as "classic".
if [ "$FLAVOR" = classic ]; then
	CLASSIC=1
	KVER_MAJOR=$CLASSIC_KVER
	[ "$NO_PATCHES" = 0 ] || die "--no-patches: the classic flavor has no patches"
fi

# run STEP LOG CMD...: runs CMD with its output in LOG, stops with one line on failure.
run() {
	local step=$1 log=$2
	shift 2
	mkdir -p "$(dirname "$log")"
	say "$step (log: $log)"
	if ! "$@" >"$log" 2>&1; then
		die "step '$step' failed: $(tail -n 1 "$log" | cut -c1-200) (full log: $log)"
	fi
}

# prerequisites: what setup needs and does not install itself, checked
# before it changes anything (in a dry run too: harness.setuplogic checks
# the refusals). Each missing one is a line of its own, then setup
# stops. rust-src is not among them: setup installs Debian's package of
# rustc's exact version, and says so when there is none (install_packages).
prerequisites() {
	local why=() w release
	[ "$(uname -m)" = x86_64 ] || why+=("unsupported host: $(uname -m); rslub needs x86_64 (cmpxchg16b)")
	if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
		why+=("unsupported host: no apt-get; setup installs Debian packages")
	else
		# The suites setup adds and pins (bookworm-backports, trixie-backports)
		# and those it installs from by default (bookworm-security) are chosen
		# for Debian 12.
		release=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
		[ "$release" = bookworm ] ||
			why+=("unsupported host: '${release:-unknown}' is not Debian 12 (bookworm), whose suites setup installs from")
	fi
	# vng runs the guest command as the host user, and the guests load modules.
	[ "$(id -u)" = 0 ] ||
		why+=("not root: setup installs packages and writes under /etc/apt, and the guests load modules as this user")
	command -v rustc >/dev/null || why+=("no rustc on PATH or in ~/.cargo/bin (install Rust with rustup first)")
	command -v cargo >/dev/null || why+=("no cargo on PATH or in ~/.cargo/bin (install Rust with rustup first)")
	[ -n "$(find_vng)" ] || pip_can_install ||
		why+=("no vng, and python3 cannot pip install virtme-ng (no pip, or a distribution's Python: PEP 668); put a pyenv or venv python3 first on PATH, or install virtme-ng yourself")
	for w in "${why[@]}"; do echo "setup: FAILED: $w" >&2; done
	[ ${#why[@]} = 0 ] || exit 1
}

# Empty without rustc (|| true: pipefail would end setup here, silently,
# before prerequisites says what is missing).
RUSTC_VER=$(rustc --version 2>/dev/null | awk '{print $2}' || true)
# The kernel is built with the LLVM whose major matches rustc's (needed by
# CONFIG_RUST_INLINE_HELPERS); bindgen loads the same libclang.
LLVM_MAJOR=$(rustc --version --verbose 2>/dev/null | awk '/^LLVM version/ {split($3, v, "."); print v[1]}' || true)
LLVM_SUFFIX=-${LLVM_MAJOR:-22}
export LIBCLANG_PATH=/usr/lib/llvm$LLVM_SUFFIX/lib
# The last line: the real workloads the guest runs (make bench SUITE=real,
# make stress SERVE=1, make check), bookworm's own: hackbench (rt-tests),
# iperf3, stress-ng (and perf 6.12 from bookworm-backports: install_packages),
# and gdb, which make trace-pair attaches to QEMU's gdb stub.
# The guest boots on the host's root filesystem.
APT_PKGS="bc flex bison libelf-dev libssl-dev cpio xz-utils make gcc patch procps python3 udev rsync kmod fonts-dejavu-core
clang$LLVM_SUFFIX lld$LLVM_SUFFIX llvm$LLVM_SUFFIX libclang$LLVM_SUFFIX-dev
rt-tests iperf3 stress-ng gdb"

apt_sources() {
	local changed=0
	if [ ! -f /etc/apt/sources.list.d/rslub-backports.sources ]; then
		cat >/etc/apt/sources.list.d/rslub-backports.sources <<'SRC'
# Added by rslub scripts/setup.sh: the 7.3 kernel source, rust-src and QEMU.
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie-backports bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
		changed=1
	fi
	if [ ! -f /etc/apt/preferences.d/rslub-backports ]; then
		# Low priority: nothing upgrades from these suites unless named.
		cat >/etc/apt/preferences.d/rslub-backports <<'PIN'
Package: *
Pin: release n=trixie-backports
Pin-Priority: 50

Package: *
Pin: release n=bookworm-backports
Pin-Priority: 50
PIN
		changed=1
	fi
	if [ $changed = 1 ] || [ ! -f "$CACHE/.apt-updated" ]; then
		run "apt-get update" "$LOGDIR/apt-update.log" apt-get update
		mkdir -p "$CACHE" && touch "$CACHE/.apt-updated"
	fi
}

pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }

install_packages() {
	local missing="" p
	for p in $APT_PKGS; do pkg_installed "$p" || missing="$missing $p"; done
	pkg_installed linux-source-7.3 || missing="$missing linux-source-7.3/trixie-backports"
	# perf bench syscall fork and execve (make bench SUITE=real): bookworm's
	# linux-perf (6.1) has only 'syscall basic'; bookworm-backports' 6.12 has
	# both and installs on bookworm's libc. A 6.1 already installed (the
	# machine's own) is upgraded: the suite is named.
	local perf_ver
	perf_ver=$(dpkg-query -W -f='${Version}' linux-perf 2>/dev/null || true)
	if ! pkg_installed linux-perf || ! dpkg --compare-versions "$perf_ver" ge 6.12; then
		missing="$missing linux-perf/bookworm-backports"
	fi
	# The classic flavor's 6.12 source comes from bookworm-security, one of
	# the machine's default suites (no pin, no suite named); only that
	# flavor needs it (make bench SUITE=classic), so only it installs it.
	if [ "$CLASSIC" = 1 ] && ! pkg_installed linux-source-$CLASSIC_KVER; then
		missing="$missing linux-source-$CLASSIC_KVER"
	fi
	# QEMU 10 from bookworm-backports (bookworm's 7.2 crashes on KVM MSR setup);
	# its own dependencies must come from the same suite, so they are named too.
	pkg_installed qemu-system-x86 || missing="$missing qemu-system-x86/bookworm-backports \
qemu-system-common/bookworm-backports qemu-system-data/bookworm-backports seabios/bookworm-backports"
	if ! [ -d "/usr/src/rustc-$RUSTC_VER/library" ]; then
		apt_sources
		local v
		v=$(apt-cache madison rust-src 2>/dev/null | awk -v r="$RUSTC_VER" '$3 ~ "^"r"[+]" {print $3; exit}')
		[ -n "$v" ] || die "unsupported host: no rust-src package matching rustc $RUSTC_VER in the registry (apt-cache madison rust-src)"
		missing="$missing rust-src=$v"
	fi
	if [ -n "$missing" ]; then
		apt_sources
		# iperf3 asks (debconf, priority high) whether to run as a daemon;
		# its default is no, and noninteractive takes it: said explicitly
		# so that no service is ever started on the host.
		case "$missing " in
		*" iperf3 "*) echo "iperf3 iperf3/start_daemon boolean false" | debconf-set-selections ;;
		esac
		# A stale package index (kept machine) fails the install: refresh once.
		run "apt-get install$missing" "$LOGDIR/apt-install.log" \
			sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing ||
				{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing; }"
	else
		say "Debian packages: present"
	fi
}

version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

install_bindgen() {
	local v
	v=$(bindgen --version 2>/dev/null | awk '{print $2}') || true
	if [ -n "$v" ] && version_ge "$v" 0.71.1; then
		say "bindgen $v: present"
		return
	fi
	# bindgen-cli loads libclang at run time: it builds without it.
	run "cargo install bindgen-cli (about 3 min, beside the packages)" "$LOGDIR/bindgen.log" \
		cargo install bindgen-cli --locked
}

# pip_can_install: python3 has pip, and pip may install into its
# environment (a distribution's Python carries PEP 668's EXTERNALLY-MANAGED
# marker and refuses, unless in a venv).
pip_can_install() {
	python3 -c '
import importlib.util, os, sys, sysconfig
marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
refused = sys.prefix == sys.base_prefix and os.path.isfile(marker) and not os.environ.get("PIP_BREAK_SYSTEM_PACKAGES")
sys.exit(importlib.util.find_spec("pip") is None or refused)' 2>/dev/null
}

# pip puts vng next to the interpreter, which need not be on PATH.
find_vng() {
	command -v vng 2>/dev/null ||
		python3 -c 'import os, sys; p = os.path.join(os.path.dirname(sys.executable), "vng"); print(p if os.access(p, os.X_OK) else "")'
}

install_vng() {
	if [ -n "$(find_vng)" ]; then
		say "virtme-ng: present"
		return
	fi
	command -v python3 >/dev/null || die "unsupported host: no python3 (needed for virtme-ng)"
	run "pip install virtme-ng" "$LOGDIR/pip.log" python3 -m pip install virtme-ng
	[ -n "$(find_vng)" ] || die "virtme-ng installed but no vng command found (log: $LOGDIR/pip.log)"
}

# Kernel: extracted and built once per (version, flavor, fragment contents,
# patches).

# apply_patches KDIR: applies patches/*.patch in order (each explained in
# its header). A source package that no longer takes one stops setup with
# one line naming the patch and the hunk that failed.
apply_patches() {
	local kdir=$1 p out hunk
	for p in "$ROOT"/patches/*.patch; do
		[ -e "$p" ] || continue
		if ! out=$(patch -d "$kdir" -p1 --fuzz=0 --dry-run --batch <"$p" 2>&1); then
			hunk=$(printf '%s\n' "$out" | awk '
				/^checking file/ {f = $3}
				/FAILED|malformed/ {print f ": " $0; exit}
				/can.t find file/ {missing = 1}
				missing && /^\|\+\+\+ / {sub(/^\|\+\+\+ b\//, ""); print $0 ": no such file"; exit}')
			[ -n "$hunk" ] || hunk=$(printf '%s\n' "$out" | tail -n 1)
			die "patch $(basename "$p") does not apply to linux-source-$KVER_MAJOR: $hunk"
		fi
		patch -d "$kdir" -p1 --fuzz=0 --batch --quiet <"$p" || die "patch $(basename "$p") failed to apply"
	done
}
# The options that exist only with patches/ applied.
PATCH_OPTIONS='^CONFIG_SLAB_BACKEND='
# The options of base.config that 6.12 lacks (RUST_INLINE_HELPERS, the
# patches' SLAB_BACKEND) or that the classic flavor does not need (RUST:
# only the C bench module runs there, and 6.12 predates this rustc).
# scripts/kconfig would fail on each of them; "is not set" lines of
# unknown options are harmless and stay.
CLASSIC_DROP='^CONFIG_(RUST|RUST_INLINE_HELPERS|SLAB_BACKEND)='
# fragment FILE: a config fragment as this build uses it.
fragment() {
	if [ "$CLASSIC" = 1 ]; then
		grep -vE "$CLASSIC_DROP" "$1"
	elif [ "$NO_PATCHES" = 1 ]; then
		grep -vE "$PATCH_OPTIONS" "$1"
	else
		cat "$1"
	fi
}
# The flavor's fragments, in the order they are merged: the classic one is
# the bench flavor's (the same bench-relevant options on both kernels)
# plus its own.
fragment_names() {
	if [ "$CLASSIC" = 1 ]; then
		echo "base bench classic"
	elif [ "$FLAVOR" = debug ]; then
		echo "base test debug"
	else
		echo "base $FLAVOR"
	fi
}
# The cache's name for the flavor (its stale builds are dropped).
label() {
	if [ "$NO_PATCHES" = 1 ]; then echo "$FLAVOR-unpatched"; else echo "$FLAVOR"; fi
}
# Whether patches/ go into the tree (and the key).
patched() { [ "$NO_PATCHES" = 0 ] && [ "$CLASSIC" = 0 ]; }
# The key reads the fragments' options, not their comments or blank lines
# ("# CONFIG_X is not set" is an option): a comment's edit rebuilds nothing.
kernel_key() {
	local ver f
	ver=$(dpkg-query -W -f='${Version}' linux-source-$KVER_MAJOR 2>/dev/null || echo none)
	{
		echo "$ver LLVM=$LLVM_SUFFIX"
		for f in $(fragment_names); do fragment "$ROOT/config/$f.config"; done |
			awk '/^# CONFIG_[A-Za-z0-9_]+ is not set/ || !/^[[:space:]]*(#|$)/'
		! patched || cat "$ROOT"/patches/*.patch
	} | sha256sum | cut -c1-12 | sed "s/^/$ver-$(label)-/"
}

# unpatch KDIR: takes off the patches KDIR recorded, the last first
# (.rslub-patches.d/; a build of an older setup recorded them as one file,
# .rslub-patches, of one patch).
unpatch() {
	local kdir=$1 p
	if [ -d "$kdir/.rslub-patches.d" ]; then
		for p in $(ls "$kdir/.rslub-patches.d" | sort -r); do
			patch -d "$kdir" -p1 -R -E --fuzz=0 --batch --quiet \
				<"$kdir/.rslub-patches.d/$p" >/dev/null || return 1
		done
	elif [ -s "$kdir/.rslub-patches" ]; then
		patch -d "$kdir" -p1 -R -E --fuzz=0 --batch --quiet <"$kdir/.rslub-patches" >/dev/null
	fi
}

# seed_tree KDIR KEY: a new key of a flavor whose build of the same source
# is cached (only patches/ or a fragment changed) starts from a copy of
# that build, with the patches it recorded (unpatch) taken off: make
# then rebuilds what changed, a few minutes instead of a cold build. Fails,
# leaving no KDIR, when there is no such build or its patches do not come
# off; the caller then extracts the source afresh.
seed_tree() {
	local kdir=$1 ver=${2%-"$(label)"-*} old hex='[0-9a-f]'
	for old in "$CACHE"/kernel/"$ver"-"$(label)"-$hex$hex$hex$hex$hex$hex$hex$hex$hex$hex$hex$hex; do
		[ "$old" != "$kdir" ] && [ -f "$old/.rslub-built" ] &&
			{ [ -f "$old/.rslub-patches" ] || [ -d "$old/.rslub-patches.d" ]; } || continue
		rm -rf "$kdir"
		if cp -a "$old" "$kdir" && rm -f "$kdir/.rslub-built" "$kdir/.rslub-extracted" &&
			unpatch "$kdir"; then
			say "start from the cached build $(basename "$old") (make rebuilds what changed)"
			SEEDED=1
			return 0
		fi
		rm -rf "$kdir"
		say "the cached build $(basename "$old") cannot be reused: extract afresh"
	done
	return 1
}

build_kernel() {
	local key kdir log
	key=$(kernel_key)
	kdir=$CACHE/kernel/$key
	if [ "$PRINT_KDIR" = 1 ]; then
		echo "$kdir"
		return
	fi
	if [ -f "$kdir/.rslub-built" ]; then
		say "kernel $key: cached at $kdir"
		return
	fi
	if [ "$DRY_RUN" = 1 ]; then
		say "kernel $key: build into $kdir"
		return
	fi
	local tarball=/usr/src/linux-source-$KVER_MAJOR.tar.xz
	[ -f "$tarball" ] || die "kernel source $tarball missing (package linux-source-$KVER_MAJOR)"
	log=$LOGDIR/kernel-$key
	if [ ! -f "$kdir/.rslub-extracted" ]; then
		if ! seed_tree "$kdir" "$key"; then
			rm -rf "$kdir"
			mkdir -p "$kdir"
			run "extract kernel source" "$log-extract.log" \
				tar -xf "$tarball" -C "$kdir" --strip-components=1
		fi
		if [ "$CLASSIC" = 1 ]; then
			say "no patches applied (the classic flavor has none)"
		elif [ "$NO_PATCHES" = 1 ]; then
			say "no patches applied (--no-patches)"
		else
			say "apply patches/ ($(ls "$ROOT"/patches/*.patch 2>/dev/null | wc -l) patch)"
			apply_patches "$kdir"
		fi
		# What is applied, for seed_tree to take off for the next key.
		rm -rf "$kdir/.rslub-patches" "$kdir/.rslub-patches.d"
		mkdir "$kdir/.rslub-patches.d"
		if patched; then cp "$ROOT"/patches/*.patch "$kdir/.rslub-patches.d/"; fi
		touch "$kdir/.rslub-extracted"
	fi
	export RUST_LIB_SRC=/usr/src/rustc-$RUSTC_VER/library
	export PATH=$HOME/.cargo/bin:$PATH
	export LLVM=$LLVM_SUFFIX
	local frag f files=()
	frag=$(mktemp -d)
	for f in $(fragment_names); do
		fragment "$ROOT/config/$f.config" >"$frag/$f.config"
		files+=("$frag/$f.config")
	done
	run "configure kernel ($(label), LLVM=$LLVM)" "$log-config.log" \
		"$ROOT/scripts/kconfig" "$kdir" "${files[@]}"
	rm -rf "$frag"
	local t0 cold="about 20 min cold on 2 cores"
	[ "$CLASSIC" = 0 ] || cold="20 min cold beside VMs, 11 of CPU; no Rust"
	[ "${SEEDED:-0}" = 0 ] || cold="only what changed: 1-5 min"
	t0=$(date +%s)
	run "build kernel $key with -j$JOBS ($cold)" "$log-build.log" \
		make -C "$kdir" -j"$JOBS" all
	say "kernel built in $((($(date +%s) - t0) / 60)) min $((($(date +%s) - t0) % 60)) s"
	touch "$kdir/.rslub-built"
	# Drop stale builds of the same flavor so the cache does not grow without bound.
	local old
	local hex='[0-9a-f]'
	# One a VM is booted from (scripts/harness/vm.py holds its lock) stays until
	# the next build.
	for old in "$CACHE"/kernel/*-"$(label)"-$hex$hex$hex$hex$hex$hex$hex$hex$hex$hex$hex$hex; do
		[ "$old" = "$kdir" ] || [ ! -d "$old" ] || {
			if [ -f "$old/.rslub-built" ] && ! flock -x -n "$old/.rslub-built" true; then
				say "kept $(basename "$old"): a VM runs from it"
				continue
			fi
			rm -rf "$old" 2>/dev/null || say "could not remove all of $(basename "$old"): left for the next build"
		}
	done
	say "kernel ready: $kdir"
}

if [ "$PRINT_KDIR" = 1 ]; then
	build_kernel
	exit 0
fi
if [ -n "${APPLY_TO:-}" ]; then
	apply_patches "$APPLY_TO"
	say "patches applied to $APPLY_TO"
	exit 0
fi
prerequisites
if [ "$DRY_RUN" = 1 ]; then
	say "tools: check and install what is missing"
	if [ "$TOOLS_ONLY" = 1 ]; then say "kernel: not set up (tools only)"; else build_kernel; fi
	exit 0
fi
mkdir -p "$LOGDIR"
# bindgen-cli compiles for minutes and needs nothing from apt (gcc is there):
# it builds beside the package installs.
install_bindgen &
bindgen_pid=$!
install_packages
install_vng
wait $bindgen_pid || exit 1
[ "$TOOLS_ONLY" = 1 ] || build_kernel
say "done"
