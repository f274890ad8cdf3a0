#!/usr/bin/env bash
# Builds a patched qemu-system-x86_64 of exactly the QEMU version setup
# installs (Debian's qemu-system-x86 from bookworm-backports), with
# patches/qemu/*.patch applied, and caches it. Not part of make setup or
# make check: run it (make qemu) when a script needs the patched binary.
#
# The patches (each explained in its header):
#   -accel tcg,rr-quantum=N   with -icount, each vCPU's turn of the
#                             round-robin loop is at most N instructions
#                             (stock QEMU: hundreds of thousands), so the
#                             vCPUs interleave finely
#   plugin vCPU index         under round-robin, plugin callbacks and
#                             per-vCPU scoreboards get the vCPU that runs a
#                             block, not the one that translated it
#
# Usage: scripts/qemu-build.sh [--print-path]
#   Prints progress on stderr and the binary's path on stdout (the last
#   line), so that a script can say
#       VM_QEMU=$(scripts/qemu-build.sh) make vm CMD=...
#   --print-path prints where the binary is or would be, builds nothing.
# Environment: RSLUB_CACHE (default ~/.cache/rslub), JOBS (default 2).
#
# Cached in $RSLUB_CACHE/qemu/VERSION-HASH/ (VERSION without its epoch,
# HASH over the full version, the patches, the configure line and the
# build recipe): bin/qemu-system-x86_64, include/qemu-plugin.h (the plugin
# API header of this version, which no Debian package ships) and
# build-info.txt. A second run with the same key only prints the path.
#
# The source is the orig tarball of the installed version's source package
# (apt-get source --tar-only, 39 MB, kept in $RSLUB_CACHE/qemu/src/):
# the package mirror here serves it but not the .dsc nor the Debian
# patches (debian.tar.xz answers 404), so the binary is upstream QEMU of
# that version plus patches/qemu, without Debian's own patches. It keeps
# Debian's firmware (--firmwarepath: seabios, the option ROMs of
# qemu-system-data), so it boots what the stock binary boots.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${RSLUB_CACHE:-$HOME/.cache/rslub}
QDIR=$CACHE/qemu
LOGDIR=$CACHE/logs
JOBS=${JOBS:-2}
PRINT_PATH=0

case "${1:-}" in
--print-path) PRINT_PATH=1 ;;
"") ;;
*) echo "qemu-build: unknown argument '$1' (usage: scripts/qemu-build.sh [--print-path])" >&2; exit 2 ;;
esac

T0=$(date +%s)
say() { echo "qemu-build: [$(($(date +%s) - T0))s] $*" >&2; }
die() { echo "qemu-build: FAILED: $*" >&2; exit 1; }

# run STEP LOG CMD...: CMD's output goes to LOG; one line on failure.
run() {
	local step=$1 log=$2
	shift 2
	say "$step (log: $log)"
	if ! "$@" >"$log" 2>&1; then
		die "step '$step' failed: $(grep -v '^\s*$' "$log" | tail -n 1 | cut -c1-200) (full log: $log)"
	fi
}

# Only the x86_64 system emulator, TCG and plugins; every optional feature
# off except what virtme-ng's command line needs beyond the built-in
# devices: virtio-9p (the guest's root file system; needs xattr, which
# glibc provides) and vhost-user (virtio-fs, which vng uses instead of 9p
# when a virtiofsd is installed). No relocatable install: the binary lives
# outside any prefix and finds Debian's firmware at its absolute paths.
# python: Debian's, which sees the meson package (a pyenv python on PATH
# would not).
CONFIGURE_ARGS=(
	--python=/usr/bin/python3
	--target-list=x86_64-softmmu
	--without-default-features
	--enable-tcg
	--enable-plugins
	--enable-attr
	--enable-virtfs
	--enable-vhost-user
	--disable-download
	--disable-install-blobs
	--disable-relocatable
	--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu
)
# Changes to how the tree is prepared that are not in the patches or the
# configure line (the edk2 line below): bump to rebuild.
RECIPE=1

# Build dependencies, by name. meson >= 1.5 (QEMU 10's pythondeps.toml) is
# only in bookworm-backports (1.7), and so is pycotap, which configure's
# mkvenv insists on ("meson" group) and which Debian's +ds tarball does not
# carry as a wheel (python/wheels/ is emptied).
BUILD_PKGS="gcc ninja-build pkgconf libglib2.0-dev zlib1g-dev python3-venv"
MESON_MIN=1.5.0

VER=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null) ||
	die "qemu-system-x86 is not installed (run 'make setup' first: it installs QEMU from bookworm-backports)"
[ -n "$VER" ] || die "qemu-system-x86 is not installed (run 'make setup' first)"
NOEPOCH=${VER#*:}
UPSTREAM=${NOEPOCH%-*}

KEY=$({
	echo "$VER recipe=$RECIPE"
	printf '%s\n' "${CONFIGURE_ARGS[@]}"
	for p in "$ROOT"/patches/qemu/*.patch; do
		[ -e "$p" ] || continue
		echo "== $(basename "$p")"
		cat "$p"
	done
} | sha256sum | cut -c1-12)
OUT=$QDIR/$NOEPOCH-$KEY
BIN=$OUT/bin/qemu-system-x86_64

if [ "$PRINT_PATH" = 1 ]; then
	echo "$BIN"
	exit 0
fi
if [ -f "$OUT/.rslub-built" ] && [ -x "$BIN" ]; then
	say "cached: QEMU $VER with patches/qemu ($NOEPOCH-$KEY)"
	echo "$BIN"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "needs root (apt-get) for the first build; the cached binary then needs nothing"
ls "$ROOT"/patches/qemu/*.patch >/dev/null 2>&1 || die "no patches in $ROOT/patches/qemu"
mkdir -p "$QDIR/src" "$LOGDIR"
# One build at a time (a second run waits, then finds the cache).
exec 9>"$QDIR/.lock"
flock 9
if [ -f "$OUT/.rslub-built" ] && [ -x "$BIN" ]; then
	say "cached (built by a concurrent run): $NOEPOCH-$KEY"
	echo "$BIN"
	exit 0
fi

pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }

# The installed version's source must be listed: a deb-src entry for
# bookworm-backports, beside setup's rslub-backports.sources (same mirror
# and keyring).
SRC_LIST=/etc/apt/sources.list.d/rslub-backports-src.sources
source_listed() { apt-cache showsrc qemu 2>/dev/null | grep -qxF "Version: $VER"; }
if ! source_listed; then
	if [ ! -f "$SRC_LIST" ]; then
		cat >"$SRC_LIST" <<'SRC'
# Added by rslub scripts/qemu-build.sh: the source of the installed QEMU.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
		say "added $SRC_LIST"
	fi
	run "apt-get update" "$LOGDIR/qemu-apt-update.log" apt-get update
	source_listed || die "no source package qemu $VER in the apt sources (apt-cache showsrc qemu); it may have left bookworm-backports: update qemu-system-x86 (make setup) and retry"
fi

missing=()
for p in $BUILD_PKGS; do pkg_installed "$p" || missing+=("$p"); done
meson_ver=$(dpkg-query -W -f='${Version}' meson 2>/dev/null || true)
if ! pkg_installed meson || ! dpkg --compare-versions "$meson_ver" ge "$MESON_MIN"; then
	missing+=(meson/bookworm-backports)
fi
pkg_installed python3-pycotap || missing+=(python3-pycotap/bookworm-backports)
if [ ${#missing[@]} -gt 0 ]; then
	run "apt-get install ${missing[*]}" "$LOGDIR/qemu-apt-install.log" \
		env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
else
	say "build dependencies: present"
fi

tarball() {
	local f
	for f in "$QDIR/src/qemu_$UPSTREAM".orig.tar.*; do
		[ -e "$f" ] && echo "$f" && return
	done
	return 0
}
# Subshells: apt-get source and configure work in the current directory.
fetch_source() (cd "$QDIR/src" && exec apt-get source --tar-only --download-only "qemu=$VER")
configure() (cd "$WORK/src/build" && exec nice -n 10 ../configure "${CONFIGURE_ARGS[@]}")
if [ -z "$(tarball)" ]; then
	run "apt-get source --tar-only qemu=$VER (39 MB)" "$LOGDIR/qemu-source.log" fetch_source
fi
TARBALL=$(tarball)
[ -n "$TARBALL" ] || die "apt-get source left no qemu_$UPSTREAM.orig.tar.* in $QDIR/src (log: $LOGDIR/qemu-source.log)"

WORK=$QDIR/build-$KEY
rm -rf "$WORK" "$OUT.tmp"
mkdir -p "$WORK/src"
run "extract $(basename "$TARBALL")" "$LOGDIR/qemu-extract.log" \
	tar -xf "$TARBALL" -C "$WORK/src" --strip-components=1 --no-same-owner
for p in "$ROOT"/patches/qemu/*.patch; do
	if ! out=$(patch -d "$WORK/src" -p1 --fuzz=0 --batch --dry-run <"$p" 2>&1); then
		die "patch $(basename "$p") does not apply to QEMU $VER: $(printf '%s\n' "$out" | grep -m1 -E 'FAILED|malformed|can.t find' || printf '%s\n' "$out" | tail -n 1)"
	fi
	patch -d "$WORK/src" -p1 --fuzz=0 --batch --quiet <"$p" || die "patch $(basename "$p") failed to apply"
	say "applied $(basename "$p")"
done
# Debian's +ds tarball drops the prebuilt EDK2 images (pc-bios/edk2-*.bz2:
# Debian ships them as the ovmf package), but meson unpacks them for an
# x86_64 target whenever bzip2 is installed, and stops on the missing
# files. Nothing here needs them.
sed -i 's/unpack_edk2_blobs = bzip2.found()/unpack_edk2_blobs = false/' "$WORK/src/meson.build"
grep -q 'unpack_edk2_blobs = false$' "$WORK/src/meson.build" ||
	die "meson.build no longer has the edk2 line this script turns off (QEMU $VER): update scripts/qemu-build.sh"

mkdir -p "$WORK/src/build"
run "configure ${CONFIGURE_ARGS[*]}" "$LOGDIR/qemu-configure.log" configure
t0=$(date +%s)
run "build qemu-system-x86_64 with -j$JOBS (about 4 min on 2 idle cores)" "$LOGDIR/qemu-build.log" \
	nice -n 10 ninja -C "$WORK/src/build" -j"$JOBS" qemu-system-x86_64
say "built in $((($(date +%s) - t0) / 60)) min $((($(date +%s) - t0) % 60)) s"

mkdir -p "$OUT.tmp/bin" "$OUT.tmp/include"
cp "$WORK/src/build/qemu-system-x86_64" "$OUT.tmp/bin/"
cp "$WORK/src/include/qemu/qemu-plugin.h" "$OUT.tmp/include/"
{
	echo "QEMU $VER (orig tarball $(basename "$TARBALL")) with:"
	for p in "$ROOT"/patches/qemu/*.patch; do echo "  $(basename "$p") $(sha256sum <"$p" | cut -c1-12)"; done
	echo "configure ${CONFIGURE_ARGS[*]}"
	echo "recipe $RECIPE"
} >"$OUT.tmp/build-info.txt"
"$OUT.tmp/bin/qemu-system-x86_64" -accel help >/dev/null 2>&1 ||
	die "the built binary does not run: $OUT.tmp/bin/qemu-system-x86_64 -accel help"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
touch "$OUT/.rslub-built"
rm -rf "$WORK"
# Drop the builds of other keys (older patches): a VM still running one
# keeps its binary open; the file goes when it exits.
for old in "$QDIR"/*-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]; do
	[ "$old" = "$OUT" ] || [ ! -d "$old" ] || { rm -rf "$old" && say "dropped the stale build $(basename "$old")"; }
done
say "done: QEMU $VER with patches/qemu in $OUT"
echo "$BIN"
