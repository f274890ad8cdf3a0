#!/usr/bin/env bash
# make bench (first cut, until the full A/B suite lands): builds the "bench"
# kernel flavor if needed (no lock debugging, SLUB_STATS off), builds the
# modules against it with rslub's counters compiled out, and measures the
# alloc+free pair cost of the in-tree SLUB and rslub in one boot, interleaved,
# under QEMU -icount (the guest TSC counts instructions).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
scripts/setup.sh --flavor bench
BKDIR=$(scripts/setup.sh --flavor bench --print-kdir)
echo "bench: building modules for $BKDIR (STATS=0)"
make -s -C "$BKDIR" M="$ROOT" STATS=0 modules
out=$ROOT/results/bench-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
echo "bench: pair cost under icount (log: $out/vm.log)"
VM_CPUS=${VM_CPUS:-2} VM_QEMU_OPTS='-icount shift=0,sleep=off' \
	scripts/vm.sh "$BKDIR" "insmod rslub.ko && insmod bench/rslub_bench.ko pairs=${PAIRS:-20000} rounds=${ROUNDS:-5}; dmesg" \
	2>&1 | cat >"$out/vm.log" || true
grep -q "rslub_bench: pair" "$out/vm.log" || { tail -n 20 "$out/vm.log"; echo "bench: FAILED: no results"; exit 1; }
printf "%-8s %12s %12s %8s\n" size "slub instr" "rslub instr" ratio | tee "$out/pair.txt"
for size in $(grep -oE "pair size=[0-9]+ slub" "$out/vm.log" | grep -oE "[0-9]+"); do
	a=$(grep -oE "pair size=$size slub median=[0-9]+" "$out/vm.log" | grep -oE "[0-9]+$")
	b=$(grep -oE "pair size=$size rslub median=[0-9]+" "$out/vm.log" | grep -oE "[0-9]+$")
	printf "%-8s %12s %12s %8s\n" "$size" "$a" "$b" "$(echo "scale=2; $b / $a" | bc)" | tee -a "$out/pair.txt"
done
echo "bench: medians of ${ROUNDS:-5} rounds of ${PAIRS:-20000} pairs; results in $out"
