#!/usr/bin/env bash
# Configures a kernel tree from tinyconfig plus rslub's fragments, then checks
# that every option the fragments ask for survived olddefconfig (an option
# whose dependencies are unmet is silently dropped by Kconfig otherwise); a
# later fragment's setting of an option overrides an earlier one's.
#
# Usage: scripts/kconfig.sh KDIR FRAGMENT...
set -euo pipefail
kdir=$1
shift
make -C "$kdir" tinyconfig
"$kdir/scripts/kconfig/merge_config.sh" -m -O "$kdir" "$kdir/.config" "$@"
make -C "$kdir" olddefconfig
# What the fragments ask for, a later fragment's word on an option winning
# (as merge_config.sh applies them).
declare -A want from
order=()
for frag in "$@"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) opt=${line%%=*} val=${line#*=} ;;
		"# CONFIG_"*" is not set") opt=${line#\# } opt=${opt%% *} val=off ;;
		*) continue ;;
		esac
		[ -n "${want[$opt]+x}" ] || order+=("$opt")
		want[$opt]=$val from[$opt]=$frag
	done <"$frag"
done
bad=0
for opt in "${order[@]}"; do
	got=$(grep -E "^$opt=" "$kdir/.config" | cut -d= -f2- || true)
	if [ "${want[$opt]}" = off ]; then
		case $got in y | m) echo "kconfig: $opt wanted off, got on (${from[$opt]})"; bad=1 ;; esac
	elif [ "${want[$opt]}" != "$got" ]; then
		echo "kconfig: $opt wanted ${want[$opt]}, got '${got:-unset}' (${from[$opt]})"
		bad=1
	fi
done
[ $bad = 0 ] || { echo "kconfig: fragment options were dropped; see above"; exit 1; }
echo "kconfig: all fragment options applied"
