#!/bin/sh
# Runs inside the VM (see tools/rslabinfo/README.md): saves a small sysfs
# tree with a live rslub cache and a few in-tree caches as rslabinfo's test
# fixtures. Usage: scripts/guest/capture-fixtures.sh OUTDIR
set -e
cd "$(dirname "$0")/../.."
out=$1
insmod rslub.ko
insmod bench/rslub_bench.ko hold=1 pairs=2000 rounds=1
save() {	# save SRCDIR DSTDIR
	mkdir -p "$2"
	for f in "$1"/*; do
		[ -f "$f" ] || continue
		cat "$f" >"$2/$(basename "$f")" 2>/dev/null || rm -f "$2/$(basename "$f")"
	done
}
rm -rf "$out/sys"
for c in /sys/kernel/rslub/*; do
	save "$c" "$out/sys/kernel/rslub/$(basename "$c")"
done
for c in kmalloc-64 kmalloc-256 kmem_cache dentry; do
	[ -e "/sys/kernel/slab/$c" ] && save "/sys/kernel/slab/$c" "$out/sys/kernel/slab/$c"
done
rmmod rslub_bench
rmmod rslub
