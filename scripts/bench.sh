#!/usr/bin/env bash
# make bench (first cut, until the full A/B suite lands): builds the "bench"
# kernel flavor if needed (no lock debugging, SLUB_STATS off), builds the
# modules against it with rslub's counters compiled out, and measures the
# pair, repeat and bulk workloads of the in-tree SLUB and rslub in one boot,
# interleaved, under QEMU -icount (the guest TSC counts instructions).
# RSLUB_PARAMS passes module parameters to rslub.ko, e.g. RSLUB_PARAMS=harden=0
# measures without freelist hardening (on by default).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
scripts/setup.sh --flavor bench
BKDIR=$(scripts/setup.sh --flavor bench --print-kdir)
echo "bench: building modules for $BKDIR (STATS=0)"
make -s -C "$BKDIR" M="$ROOT" STATS=0 modules
out=$ROOT/results/bench-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
echo "bench: pair, repeat, bulk under icount (log: $out/vm.log)"
VM_CPUS=${VM_CPUS:-2} VM_QEMU_OPTS='-icount shift=0,sleep=off' \
	scripts/vm.sh "$BKDIR" "insmod rslub.ko ${RSLUB_PARAMS:-} && insmod bench/rslub_bench.ko pairs=${PAIRS:-20000} rounds=${ROUNDS:-5}; dmesg" \
	2>&1 | cat >"$out/vm.log" || true
grep -q "rslub_bench: pair" "$out/vm.log" || { tail -n 20 "$out/vm.log"; echo "bench: FAILED: no results"; exit 1; }
# "rslub_bench: <workload> size=<s> batch=<b> <what> <allocator> median=<m> ..."
awk '/rslub_bench: [a-z]+ size=/ {
	for (i = 1; i <= NF; i++) if ($i == "rslub_bench:") break
	key = sprintf("%-7s %6s %6s %-7s", $(i + 1), substr($(i + 2), 6), substr($(i + 3), 7), $(i + 4))
	val = substr($(i + 6), 8)
	if (!(key in seen)) { seen[key] = 1; order[n++] = key }
	v[key, $(i + 5)] = val
}
END {
	printf "%-7s %6s %6s %-7s %12s %12s %7s\n", "workload", "size", "batch", "per", "slub instr", "rslub instr", "ratio"
	for (j = 0; j < n; j++) {
		k = order[j]; a = v[k, "slub"]; b = v[k, "rslub"]
		printf "%s %12s %12s %7.2f\n", k, a, b, (a > 0 ? b / a : 0)
	}
}' "$out/vm.log" | tee "$out/table.txt"
echo "bench: rslub.ko ${RSLUB_PARAMS:-(default parameters)}"
echo "bench: medians of ${ROUNDS:-5} rounds of ${PAIRS:-20000} operations, icount mode; results in $out"
