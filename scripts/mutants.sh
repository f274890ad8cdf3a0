#!/usr/bin/env bash
# make mutants: mutation testing of the platform-free core against its host
# tests (cargo-mutants, from crates.io; installed here when missing). Each
# mutant is one small change to the core (an operator flipped, a function
# body replaced, a condition negated); a test suite that notices nothing has
# a gap there. Not part of make check: a full run of rust/core/slub/ is
# about 450 mutants.
#
#   FILE='slub/*.rs'  files to mutate (cargo-mutants --file globs, relative to
#                     rust/core; several separated by spaces); default: the
#                     whole core but its tests and the host machine
#   RE='alloc_inner'  only mutants whose name (as --list shows) matches
#   JOBS=1            mutants built and tested at once
#   LIST=1            list the mutants, run nothing
#   MUTANTS_LIMIT=7200  seconds for the whole run
#   VARIANT=free_batch  the core as that build variant compiles it
#                     (--cfg rslub_free_batch; Kbuild VARIANT=), whose code
#                     the default build does not contain
#
# Results go to results/mutants/<time>/mutants.out (caught.txt, missed.txt,
# timeout.txt, unviable.txt, outcomes.json); the summary is printed last.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo-mutants >/dev/null; then
	echo "mutants: installing cargo-mutants (cargo install cargo-mutants --locked)"
	cargo install cargo-mutants --locked || { echo "mutants: cannot install cargo-mutants"; exit 1; }
fi
# cargo-mutants copies rust/core alone (without its target/), which holds
# every file of the host crate; its build script finds the shim here.
export RSLUB_ROOT=$ROOT
case ${VARIANT:-} in
"") ;;
free_batch) export RUSTFLAGS="${RUSTFLAGS:-} --cfg rslub_free_batch" ;;
*) echo "mutants: unknown VARIANT '$VARIANT' (free_batch)" >&2; exit 2 ;;
esac
args=(--dir "$ROOT/rust/core" --jobs "${JOBS:-1}" --no-shuffle)
if [ -n "${FILE:-}" ]; then
	for f in $FILE; do args+=(--file "$f"); done
else
	args+=(--exclude '*tests.rs' --exclude test_util.rs --exclude host.rs --exclude build.rs \
		--exclude shim_methods.rs)
fi
[ -n "${RE:-}" ] && args+=(--re "$RE")
if [ -n "${LIST:-}" ]; then
	cargo mutants --list "${args[@]}"
	exit
fi
OUT=$ROOT/results/mutants/$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
echo "mutants: cargo mutants ${args[*]} (output: $OUT/mutants.out)"
timeout "${MUTANTS_LIMIT:-7200}" cargo mutants "${args[@]}" --output "$OUT" 2>&1 | tee "$OUT/log.txt"
rc=${PIPESTATUS[0]}
M=$OUT/mutants.out
count() { [ -f "$M/$1.txt" ] && wc -l <"$M/$1.txt" || echo 0; }
echo "mutants: caught $(count caught), missed $(count missed), timeout $(count timeout), unviable $(count unviable)"
[ -s "$M/missed.txt" ] && { echo "mutants: missed:"; sed 's/^/  /' "$M/missed.txt"; }
[ -s "$M/timeout.txt" ] && { echo "mutants: timeout:"; sed 's/^/  /' "$M/timeout.txt"; }
[ "$rc" = 124 ] && echo "mutants: stopped after MUTANTS_LIMIT=${MUTANTS_LIMIT:-7200} s"
# cargo-mutants exits 2 when mutants were missed, 3 on timeouts.
exit "$rc"
