#!/usr/bin/env bash
# A new user's first `make check`, repeatable: clones this repository's main
# branch into a temporary folder, points RSLUB_CACHE at an empty temporary
# directory, removes the linux-source package (setup installs it again), runs
# the README's `make check` there, and prints the time of each step and the
# final line. Exit status: make check's.
#
# Usage: scripts/fresh.sh [--branch BRANCH] [--keep]
#   --keep  keep the temporary folder (clone, cache, logs) afterwards
# The toolchain packages (LLVM, QEMU, bindgen-cli, virtme-ng) stay installed:
# they are the same on every run, and setup's package step is checked by
# the linux-source reinstall.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
branch=main
keep=0
while [ $# -gt 0 ]; do
	case "$1" in
	--branch) branch=$2; shift ;;
	--keep) keep=1 ;;
	*) echo "fresh: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done
T0=$(date +%s)
say() { echo "fresh: [$(($(date +%s) - T0))s] $*"; }
tmp=$(mktemp -d /tmp/rslub-fresh.XXXXXX)
[ "$keep" = 1 ] || trap 'rm -rf "$tmp"' EXIT

say "clone $ROOT ($branch) into $tmp/rslub"
git clone -q --branch "$branch" "$ROOT" "$tmp/rslub" || exit 1
say "commit $(git -C "$tmp/rslub" rev-parse --short HEAD)"
pkg=linux-source-7.3
if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed'; then
	say "remove $pkg (setup installs it again)"
	DEBIAN_FRONTEND=noninteractive apt-get remove -y -q "$pkg" >"$tmp/apt-remove.log" 2>&1 ||
		{ tail -n 5 "$tmp/apt-remove.log"; exit 1; }
fi
mkdir -p "$tmp/cache"
say "make check with RSLUB_CACHE=$tmp/cache (empty); log: $tmp/check.log"
# Nothing of this shell's make or kernel variables may reach the run.
# As a user types it: in the clone, `make check`.
(cd "$tmp/rslub" && env -u KDIR -u MAKEFLAGS -u MAKELEVEL -u MFLAGS RSLUB_CACHE="$tmp/cache" \
	make check) 2>&1 | tee "$tmp/check.log" |
	grep --line-buffered -E "^(check|setup): |^[0-9]+ passed, [0-9]+ failed"
rc=${PIPESTATUS[0]}
say "make check exited $rc after $(( ($(date +%s) - T0) / 60 )) min $(( ($(date +%s) - T0) % 60 )) s"
echo "fresh: last line: $(tail -n 1 "$tmp/check.log")"
[ "$keep" = 0 ] || echo "fresh: kept $tmp"
exit "$rc"
