#!/usr/bin/env bash
# The cost model at several vCPU quanta: the contention programs of make
# check's model guest (tools/costmodel/guest/calib, 4 vCPUs over 2 nodes)
# and a real program (WORK, default hackbench over pipes, 4 groups, on the
# same 4 vCPUs), booted under the model with each vCPU's turn capped at Q
# instructions (RR_QUANTUM=Q: the patched QEMU of `make qemu`), and once on
# the distribution's QEMU (Q = 0: its own slices, hundreds of thousands of
# instructions). Prints, per Q, the figures that depend on the interleaving
# (transfers an update, the makespan of a lock's section, the program's
# cycles, transfers, waiting and makespan) and the CPU time of the
# program's boot against plain -icount's (the boot alone subtracted), and
# plain -icount's at that Q (what the quantum alone costs), so
# that one can see the figures converge as Q shrinks and what each Q costs.
#
# Usage: scripts/quantum-sweep.sh [KDIR]   (default: the test kernel)
# Environment: QUANTA ("0 10000 1000 200"), WORK (a guest shell command
#   between two marks), OUT (default results/<timestamp>-quantum), VM_STALL.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. scripts/lib.sh
KDIR=${1:-$(scripts/setup.sh --print-kdir)}
QUANTA=${QUANTA:-0 10000 1000 200}
M=tools/costmodel/guest/mark
WORK=${WORK:-"$M 1 && hackbench -g 4 -l 40 --pipe && $M 2"}
OUT=${OUT:-results/$(date +%Y%m%d-%H%M%S)-quantum}
mkdir -p "$OUT"
make -s costmodel
for q in $QUANTA; do
	[ "$q" = 0 ] || (RR_QUANTUM=$q use_quantum) || exit 1
done
CALIB=tools/costmodel/target/release/costmodel-calib
NODES=cpu_nodes=0:0:1:1,mem_starts=0x40000000,core=224:10:56:16,profile=server-ooo

# boot Q TAG CMD: one 4-vCPU boot under the model at quantum Q (0: stock
# QEMU), counts in $OUT/counts-TAG.txt; prints its CPU seconds.
boot() {
	local q=$1 tag=$2 cmd=$3 opts t
	unset VM_QEMU
	if [ "$q" = 0 ]; then
		opts=$(model_qemu_opts "$KDIR" "$OUT/counts-$tag.txt" "$NODES")
	else
		RR_QUANTUM=$q use_quantum
		opts=$(RR_QUANTUM=$q model_qemu_opts "$KDIR" "$OUT/counts-$tag.txt" "$NODES")
	fi
	TIMEFORMAT='%U %S'
	t=$( { time VM_CPUS=4 VM_NUMA=2 VM_MEM=2G VM_STALL=${VM_STALL:-1800} VM_TIMEOUT=7200 \
		VM_QEMU_OPTS=$opts VM_APPEND=loglevel=4 VM_CONSOLE=$OUT/console-$tag.log \
		scripts/vm.sh "$KDIR" "$cmd" >"$OUT/vm-$tag.log" 2>&1; } 2>&1) ||
		{ echo "quantum-sweep: the $tag boot failed (see $OUT/vm-$tag.log)" >&2; return 1; }
	echo "$t" | awk '{ printf "%.1f", $1 + $2 }'
}

# plain Q CMD: CPU seconds of a plain -icount boot (no plugin) at quantum Q
# (0: the distribution's QEMU), the base of the plugin's cost.
TIMEFORMAT='%U %S'
plain() {
	local q=$1 accel='' t
	unset VM_QEMU
	if [ "$q" != 0 ]; then
		RR_QUANTUM=$q use_quantum
		accel=" -accel tcg,rr-quantum=$q"
	fi
	t=$( { time VM_CPUS=4 VM_NUMA=2 VM_MEM=2G VM_QEMU_OPTS="-icount shift=0,sleep=off$accel" \
		VM_APPEND=loglevel=4 scripts/vm.sh "$KDIR" "$2" >"$OUT/vm-plain-q$q.log" 2>&1; } 2>&1)
	echo "$t" | awk '{ printf "%.1f", $1 + $2 }'
}
# plain_work Q: the program's CPU seconds under plain -icount at Q.
plain_work() {
	awk -v a="$(plain "$1" "cd $ROOT && ($WORK)")" -v b="$(plain "$1" true)" 'BEGIN { printf "%.1f", a - b }'
}
base=$(plain_work 0)
echo "quantum-sweep: plain -icount, the program: $base CPU s (log: $OUT)"

# The region of the program: its counts summed over the vCPUs.
region() {
	awk '$1 == "mark" && $3 == "id=2" {
		for (i = 6; i <= NF; i++) { split($i, kv, "="); s[kv[1]] += kv[2] } }
		END { printf "%d %d %d %d %d\n", s["insns"], s["xfer_local"] + s["xfer_remote"], s["wait"], s["span"], s["locked"] + s["rmw_xfer"] }' "$1"
}

printf '%-7s %-58s %-44s %14s %18s\n' Q "calib: transfers an update (share-2 xadd-2 share-4), lock a section (2, 4 threads)" \
	"program: insns xfer wait span (M)" "program CPU s (x plain)" "plain at Q (x plain)"
for q in $QUANTA; do
	boot "$q" "calib-q$q" tools/costmodel/guest/calib >/dev/null
	"$CALIB" --profile server-ooo "$OUT/counts-calib-q$q.txt" >"$OUT/calib-q$q.txt" || true
	with=$(boot "$q" "work-q$q" "cd $ROOT && ($WORK)")
	none=$(boot "$q" "none-q$q" true)
	read -r insns xfer wait span _ < <(region "$OUT/counts-work-q$q.txt")
	c=$(awk '/false-sharing/ { for (i = 1; i <= NF; i++) if ($i == "transfers") a[++n] = $(i - 1) }
		/contended-xadd/ { for (i = 1; i <= NF; i++) if ($i == "transfers") { b = $(i - 1); break } }
		/spinlock/ { for (i = 1; i <= NF; i++) if ($i == "makespan") l[++m] = $(i + 1) }
		END { printf "%s %s %s, %s %s", a[1], b, a[2], l[1], l[2] }' "$OUT/calib-q$q.txt")
	work=$(awk -v a="$with" -v b="$none" 'BEGIN { printf "%.1f", a - b }')
	if [ "$q" = 0 ]; then pq=$base; else pq=$(plain_work "$q"); fi
	printf '%-7s %-58s %-44s %14s %18s\n' "$q" "$c" \
		"$(awk -v i="$insns" -v x="$xfer" -v w="$wait" -v s="$span" 'BEGIN { printf "%.2f %.4f %.2f %.2f", i / 1e6, x / 1e6, w / 1e6, s / 1e6 }')" \
		"$work ($(awk -v w="$work" -v p="$base" 'BEGIN { printf "%.2f", w / p }')x)" \
		"$pq ($(awk -v w="$pq" -v p="$base" 'BEGIN { printf "%.2f", w / p }')x)"
done | tee "$OUT/sweep.txt"
