#!/usr/bin/env bash
# Builds the "own kernel" a README user brings to `make check KDIR=...`: the
# same 7.3 source and config fragments as the test kernel, but built with
# GCC (so no CONFIG_RUST_INLINE_HELPERS: rslub's c_shim/shim_hot.c is an
# ordinary object) and without patches/ (so no slab backend hook: serving
# is refused, the API works). Not part of `make check`: about 10 minutes
# on 2 cores, into the kernel cache; prints the build directory last.
#
#   scripts/gcc-kernel.sh && make check KDIR=$(scripts/gcc-kernel.sh --print-kdir)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${RSLUB_CACHE:-$HOME/.cache/rslub}
JOBS=${JOBS:-$(($(nproc) + 1))}
RUSTC_VER=$(rustc --version | awk '{print $2}')
tarball=/usr/src/linux-source-7.3.tar.xz
[ -f "$tarball" ] || { echo "gcc-kernel: $tarball missing: run make setup first"; exit 1; }
ver=$(dpkg-query -W -f='${Version}' linux-source-7.3)
# Options that need clang or the patches are left out of the fragments.
filter() { grep -vE '^CONFIG_(RUST_INLINE_HELPERS|SLAB_BACKEND)=' "$1"; }
key=$({ echo "$ver gcc"; filter "$ROOT/config/base.config"; filter "$ROOT/config/test.config"; } |
	sha256sum | cut -c1-12)
kdir=$CACHE/kernel/$ver-gcc-$key
if [ "${1:-}" = --print-kdir ]; then
	echo "$kdir"
	exit 0
fi
if [ -f "$kdir/.rslub-built" ]; then
	echo "gcc-kernel: cached at $kdir"
	echo "$kdir"
	exit 0
fi
export PATH=$HOME/.cargo/bin:$PATH RUST_LIB_SRC=/usr/src/rustc-$RUSTC_VER/library
export LIBCLANG_PATH=${LIBCLANG_PATH:-/usr/lib/llvm-22/lib}
frag=$(mktemp -d)
trap 'rm -rf "$frag"' EXIT
filter "$ROOT/config/base.config" >"$frag/base.config"
filter "$ROOT/config/test.config" >"$frag/test.config"
rm -rf "$kdir"
mkdir -p "$kdir"
echo "gcc-kernel: extracting into $kdir"
tar -xf "$tarball" -C "$kdir" --strip-components=1
echo "gcc-kernel: configuring (GCC, no patches)"
"$ROOT/scripts/kconfig" "$kdir" "$frag/base.config" "$frag/test.config" >"$kdir/.rslub-config.log" 2>&1 ||
	{ tail -n 5 "$kdir/.rslub-config.log"; exit 1; }
echo "gcc-kernel: building with -j$JOBS (about 10 min on 2 cores; log: $kdir/.rslub-build.log)"
make -C "$kdir" -j"$JOBS" all >"$kdir/.rslub-build.log" 2>&1 || { tail -n 20 "$kdir/.rslub-build.log"; exit 1; }
touch "$kdir/.rslub-built"
echo "$kdir"
