#!/usr/bin/env bash
# The setup decisions of `make`, checked in seconds without building anything
# (a computed kernel path once leaked through the environment of a nested
# make, which then took it for the user's KDIR= and set up tools only, so a
# fresh machine's `make check` never built its kernel).
#
# Each case runs setup in dry-run mode (RSLUB_SETUP_DRY_RUN=1) against an
# empty temporary RSLUB_CACHE, typed (make setup) and nested (a make recipe
# of the project's Makefile running make setup, as make check does),
# and prints "setup-logic: PASS|FAIL <case>". Exit status 1 on any FAIL.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export RSLUB_CACHE=$tmp/cache RSLUB_SETUP_DRY_RUN=1
unset KDIR MAKEFLAGS MFLAGS MAKELEVEL
# A nested make: a recipe of the project's Makefile (with all its exports)
# that runs make again, like `make check` (scripts/harness/check.py).
cat >"$tmp/nested.mk" <<'MK'
nested-setup:
	@$(MAKE) --no-print-directory -s setup
nested-kdir:
	@$(MAKE) --no-print-directory -s kdir
# How make check and make stress ask (scripts/harness/lib.py), from a recipe.
nested-kdir-alone:
	@PYTHONPATH=scripts python3 -c 'from harness import lib; print(lib.rslub_kdir())' >$(OUTFILE)
MK
nested() { make --no-print-directory -s -f Makefile -f "$tmp/nested.mk" "$@"; }
fails=0
# expect CASE TEXT OUTPUT: some line of OUTPUT ends in TEXT (a fixed string).
expect() {
	if printf '%s\n' "$3" | awk -v t="$2" 'substr($0, length($0) - length(t) + 1) == t { f = 1 } END { exit !f }'; then
		echo "setup-logic: PASS $1"
	else
		echo "setup-logic: FAIL $1: expected a line ending in '$2', got:"
		printf '%s\n' "$3" | sed 's/^/    /'
		fails=$((fails + 1))
	fi
}

# exact CASE TEXT OUTPUT: OUTPUT is TEXT, nothing more.
exact() {
	if [ "$3" = "$2" ]; then
		echo "setup-logic: PASS $1"
	else
		echo "setup-logic: FAIL $1: expected exactly '$2', got:"
		printf '%s\n' "$3" | sed 's/^/    /'
		fails=$((fails + 1))
	fi
}

kdir=$(make -s kdir)
case $kdir in
"$RSLUB_CACHE"/kernel/*) echo "setup-logic: PASS kdir is in RSLUB_CACHE" ;;
*) echo "setup-logic: FAIL kdir is in RSLUB_CACHE: got '$kdir'"; fails=$((fails + 1)) ;;
esac
expect "nested kdir equals typed kdir" "$kdir" "$(nested nested-kdir)"
expect "user KDIR is the kdir" "/user/kernel" "$(make -s kdir KDIR=/user/kernel)"
# `make -C DIR check` (from elsewhere) makes every nested make print
# "Entering directory" lines; make check reads the kdir from a nested make and
# must get the path alone.
(cd / && make -C "$ROOT" -f Makefile -f "$tmp/nested.mk" nested-kdir-alone OUTFILE="$tmp/kdir.out" >/dev/null)
exact "kdir alone through make -C" "$kdir" "$(cat "$tmp/kdir.out")"
expect "user KDIR is the kdir, nested" "/user/kernel" "$(nested nested-kdir KDIR=/user/kernel)"

build=": build into $kdir"
expect "no cache: build the kernel" "$build" "$(make -s setup)"
expect "no cache, nested: build the kernel" "$build" "$(nested nested-setup)"

tools_only="kernel: not set up (tools only)"
expect "KDIR= given: tools only" "$tools_only" "$(make -s setup KDIR=/user/kernel)"
expect "KDIR= given, nested: tools only" "$tools_only" "$(nested nested-setup KDIR=/user/kernel)"
expect "KDIR in the environment: tools only" "$tools_only" "$(KDIR=/user/kernel make -s setup)"

mkdir -p "$kdir" && touch "$kdir/.rslub-built"
cached=": cached at $kdir"
expect "cache present: reuse" "$cached" "$(make -s setup)"
expect "cache present, nested: reuse" "$cached" "$(nested nested-setup)"

# The classic flavor (make bench SUITE=classic, Linux 6.12) is a kernel of
# its own in the cache, never the test or bench one.
ckdir=$(scripts/setup.sh --flavor classic --print-kdir)
case $ckdir in
"$RSLUB_CACHE"/kernel/*-classic-*) echo "setup-logic: PASS classic flavor has its own kdir" ;;
*) echo "setup-logic: FAIL classic flavor has its own kdir: got '$ckdir'"; fails=$((fails + 1)) ;;
esac
expect "classic flavor, no cache: build it" ": build into $ckdir" \
	"$(scripts/setup.sh --flavor classic)"

# A source tree that no longer takes a patch stops setup with one line
# naming the patch (and, where there is one, the hunk).
mkdir -p "$tmp/src"
expect "a tree without the patched files: setup stops naming the patch" \
	"$(ls patches | head -n 1) does not apply to linux-source-7.3: mm/Kconfig: no such file" \
	"$(RSLUB_SETUP_DRY_RUN=0 scripts/setup.sh --apply-patches "$tmp/src" 2>&1)"

# The prerequisites setup checks before it changes anything: each one
# missing is a line of its own. Stand-ins on PATH play the host: a command
# that answers otherwise (uname, id, python3), or a PATH of links to every
# command but some (path_without), with HOME elsewhere (setup looks in
# ~/.cargo/bin too).
stub() {	# stub NAME SCRIPT: a command NAME in $tmp/stub-NAME, running SCRIPT
	mkdir -p "$tmp/stub-$1"
	printf '#!/bin/sh\n%s\n' "$2" >"$tmp/stub-$1/$1"
	chmod +x "$tmp/stub-$1/$1"
	echo "$tmp/stub-$1"
}
path_without() {	# path_without CMD...: PATH's commands but CMD..., in one directory
	local d dir dirs
	d=$(mktemp -d "$tmp/path.XXXXXX")
	IFS=: read -ra dirs <<<"$PATH"
	# The first on PATH wins: ln refuses a name already linked.
	for dir in "${dirs[@]}"; do ln -s "$dir"/* "$d"/ 2>/dev/null; done
	for dir in "$@"; do rm -f "$d/$dir"; done
	echo "$d"
}
expect "not x86_64: refused" "rslub needs x86_64 (cmpxchg16b)" \
	"$(PATH=$(stub uname 'echo aarch64'):$PATH scripts/setup.sh 2>&1)"
expect "no apt-get: refused" "no apt-get; setup installs Debian packages" \
	"$(PATH=$(path_without apt-get) scripts/setup.sh 2>&1)"
expect "not root: refused" "writes under /etc/apt, and the guests load modules as this user" \
	"$(PATH=$(stub id '[ "$1" = -u ] && echo 1000 || exec /usr/bin/id "$@"'):$PATH scripts/setup.sh 2>&1)"
no_rust=$(HOME=$tmp/home PATH=$(path_without rustc cargo) scripts/setup.sh 2>&1)
expect "no rustc: refused" "no rustc on PATH or in ~/.cargo/bin (install Rust with rustup first)" "$no_rust"
expect "no cargo either: both said" "no cargo on PATH or in ~/.cargo/bin (install Rust with rustup first)" "$no_rust"
expect "no vng, python3 without pip: refused" "put a pyenv or venv python3 first on PATH, or install virtme-ng yourself" \
	"$(PATH=$(stub python3 'exit 1'):$(path_without vng python3) scripts/setup.sh 2>&1)"

[ "$fails" = 0 ]
