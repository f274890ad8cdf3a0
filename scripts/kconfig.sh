#!/usr/bin/env bash
# Configures a kernel tree from tinyconfig plus rslub's fragments, then checks
# that every option the fragments ask for survived olddefconfig (an option
# whose dependencies are unmet is silently dropped by Kconfig otherwise).
#
# Usage: scripts/kconfig.sh KDIR FRAGMENT...
set -euo pipefail
kdir=$1
shift
make -C "$kdir" tinyconfig
"$kdir/scripts/kconfig/merge_config.sh" -m -O "$kdir" "$kdir/.config" "$@"
make -C "$kdir" olddefconfig
bad=0
for frag in "$@"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			opt=${line%%=*}
			want=${line#*=}
			got=$(grep -E "^$opt=" "$kdir/.config" | cut -d= -f2- || true)
			if [ "$want" != "$got" ]; then
				echo "kconfig: $opt wanted $want, got '${got:-unset}' ($frag)"
				bad=1
			fi
			;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			if grep -qE "^$opt=[ym]" "$kdir/.config"; then
				echo "kconfig: $opt wanted off, got on ($frag)"
				bad=1
			fi
			;;
		esac
	done <"$frag"
done
[ $bad = 0 ] || { echo "kconfig: fragment options were dropped; see above"; exit 1; }
echo "kconfig: all fragment options applied"
