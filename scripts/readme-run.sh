#!/usr/bin/env bash
# Runs the commands README.md and docs/testing.md list, one after the other,
# as a user would: in a fresh clone of this repository's main branch, with
# the user's kernel cache (RSLUB_CACHE, warm if make check ran before;
# scripts/fresh.sh is the cold first run). The suites run in their QUICK=1
# form, and the real programs' experiments on one program (xcpu-unix; the
# two whose cost icount cannot see, cmpxchg and max-empty, on the cost
# model): on a 2-core machine, 64 and 89 minutes for the two runs below side
# by side. For each command: a line with its exit status, its time and its
# last line; at the end, a Markdown table of them. Exit status: 0 when every
# command ended as expected.
#
# Usage: scripts/readme-run.sh [--branch B] [--only REGEX] [--skip REGEX] [--keep] [--list]
#   --only/--skip  run only the commands matching (or not matching) REGEX
#   --keep         keep the clone and the logs (else removed unless a command failed)
#   --list         print the commands and exit
# Two runs may go at once, each in its own clone, say with
#   R='^(build|kdir|setup|lint|fmt|host-test|check|vm|stress.*|mutants-list|gcc-kernel|check-own-kernel)$'
#   scripts/readme-run.sh --only "$R" & scripts/readme-run.sh --skip "$R"
# The bench commands share one build directory: they stay in one run.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
branch=main only="" skip="" keep=0 list=0
while [ $# -gt 0 ]; do
	case "$1" in
	--branch) branch=$2; shift ;;
	--only) only=$2; shift ;;
	--skip) skip=$2; shift ;;
	--keep) keep=1 ;;
	--list) list=1 ;;
	*) echo "readme-run: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done

# NAME|EXPECT|COMMAND: EXPECT is ok (exit 0) or fail (this machine cannot
# run it; the README says so). COMMAND runs under bash in the clone;
# latest [N] names the Nth newest plain `make bench` run.
COMMANDS="build|ok|make
kdir|ok|make -s kdir
setup|ok|make setup
lint|ok|make lint
fmt|ok|make fmt && git diff --stat --exit-code
host-test|ok|make host-test
check|ok|make check
bench|ok|make bench
bench-quick|ok|make bench QUICK=1
bench-compare|ok|make bench-compare A=\$(latest 2) B=\$(latest 1)
bench-icount|ok|make bench QUICK=1 MODES=icount
bench-kvm|fail|VM_STALL=120 make bench QUICK=1 KVM=1
bench-model|ok|make bench QUICK=1 MODES=model
bench-verdict|ok|make bench-verdict R=\$(ls -d results/2*[0-9] | tail -n 1)
trace-pair|ok|make trace-pair
plugin-cost|ok|PYTHONPATH=scripts python3 -m harness.plugincost
qemu|ok|make qemu
qemu-quantum|ok|PYTHONPATH=scripts python3 -m harness.qemuquantum
quantum-sweep|ok|QUANTA='0 1000' PYTHONPATH=scripts python3 -m harness.quantumsweep
real-model16|ok|make bench SUITE=real QUICK=1 MODES=model16 AA=0 WORKLOADS=brk1
vm|ok|make vm CMD='uname -r; grep -c . /proc/cpuinfo'
stress|ok|make stress
stress-faults|ok|make stress FAULTS=1
stress-pressure|ok|make stress PRESSURE=1
stress-serve|ok|make stress SERVE=1
suite-classic|ok|make bench SUITE=classic QUICK=1
suite-max-empty|ok|make bench SUITE=max-empty QUICK=1
suite-cpu-partial|ok|make bench SUITE=cpu-partial QUICK=1
suite-fill|ok|make bench SUITE=fill QUICK=1
suite-cmpxchg|ok|make bench SUITE=cmpxchg QUICK=1
suite-hardening|ok|make bench SUITE=hardening QUICK=1
suite-free-batch|ok|make bench SUITE=free-batch QUICK=1
suite-real|ok|make bench SUITE=real QUICK=1
suite-classic-real|ok|make bench SUITE=classic-real QUICK=1 WORKLOADS=brk1
real-cpu-partial|ok|make bench SUITE=real EXPERIMENT=cpu-partial QUICK=1 WORKLOADS=xcpu-unix
real-max-empty|ok|make bench SUITE=real EXPERIMENT=max-empty QUICK=1 MODES=model WORKLOADS=xcpu-unix
real-fill|ok|make bench SUITE=real EXPERIMENT=fill QUICK=1 WORKLOADS=xcpu-unix
real-cmpxchg|ok|make bench SUITE=real EXPERIMENT=cmpxchg QUICK=1 MODES=model WORKLOADS=xcpu-unix
real-free-batch|ok|make bench SUITE=real EXPERIMENT=free-batch QUICK=1 WORKLOADS=xcpu-unix
mutants-list|ok|make mutants LIST=1 | tail -n 3
gcc-kernel|ok|scripts/gcc-kernel.sh
check-own-kernel|ok|make check KDIR=\$(scripts/gcc-kernel.sh --print-kdir)"

selected() {
	local line=$1 name=${1%%|*}
	[ -z "$only" ] || [[ $name =~ $only ]] || return 1
	[ -z "$skip" ] || ! [[ $name =~ $skip ]] || return 1
	[ -n "$line" ]
}
if [ $list = 1 ]; then
	while IFS= read -r line; do
		selected "$line" && echo "${line%%|*}: ${line#*|*|}"
	done <<<"$COMMANDS"
	exit 0
fi

T0=$(date +%s)
say() { echo "readme-run: [$(($(date +%s) - T0))s] $*"; }
tmp=$(mktemp -d /tmp/rslub-readme.XXXXXX)
say "clone $ROOT ($branch) into $tmp/rslub"
git clone -q --branch "$branch" "$ROOT" "$tmp/rslub" || exit 1
say "commit $(git -C "$tmp/rslub" rev-parse --short HEAD)"
mkdir -p "$tmp/logs"
rows="" bad=0 i=0
while IFS= read -r line; do
	selected "$line" || continue
	i=$((i + 1))
	name=${line%%|*}
	rest=${line#*|}
	expect=${rest%%|*}
	cmd=${rest#*|}
	log=$tmp/logs/$(printf %02d $i)-$name.log
	say "$name: $cmd (log: $log)"
	t=$(date +%s)
	# As a user types it: nothing of this shell's make or kernel variables.
	(cd "$tmp/rslub" && env -u KDIR -u MAKEFLAGS -u MAKELEVEL -u MFLAGS bash -c "set -o pipefail
		latest() { ls -d results/2*[0-9] | grep -E '/[0-9]{8}-[0-9]{6}\$' | tail -n \${1:-1} | head -n 1; }
		$cmd") >"$log" 2>&1 </dev/null
	rc=$?
	secs=$(($(date +%s) - t))
	last=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1 | cut -c1-200)
	if { [ "$expect" = ok ] && [ $rc = 0 ]; } || { [ "$expect" = fail ] && [ $rc != 0 ]; }; then
		verdict=as-expected
	else
		verdict=UNEXPECTED
		bad=$((bad + 1))
	fi
	say "$name: exit $rc ($verdict) after $((secs / 60)) min $((secs % 60)) s: $last"
	rows="$rows| \`${cmd//|/\\|}\` | $rc | $((secs / 60)) min $((secs % 60)) s | \`${last//|/\\|}\` |"$'\n'
done <<<"$COMMANDS"
echo
echo "| command | exit | time | last line |"
echo "| --- | ---: | ---: | --- |"
printf '%s' "$rows"
echo
say "$i commands, $bad not as expected; clone and logs: $tmp"
if [ $keep = 0 ] && [ $bad = 0 ]; then
	rm -rf "$tmp"
fi
[ $bad = 0 ]
