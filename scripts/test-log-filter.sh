#!/usr/bin/env bash
# The kernel log check (kernel_log_bad, scripts/lib.sh) on made-up logs: a
# report a KUnit case asked for, bracketed by its two lines, is left out;
# a report outside the brackets, or in a window never closed (the kthread
# that made the access died), is not. One line per check,
# "log-filter: PASS|FAIL <case>"; make check counts them.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. scripts/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# check CASE WANT LOG: kernel_log_bad of LOG prints exactly WANT.
check() {
	local got
	printf '%s\n' "$3" >"$tmp/log"
	got=$(kernel_log_bad "$tmp/log")
	if [ "$got" = "$2" ]; then
		echo "log-filter: PASS $1"
	else
		echo "log-filter: FAIL $1: expected '$2', got '$got'"
		fails=$((fails + 1))
	fi
}

B="[ 1.0] $KT_REPORT_BEGIN"
E="[ 1.2] $KT_REPORT_END"
check "a clean log" "" "[ 0.1] ok"
check "an expected report is left out" "" "$B
[ 1.1] BUG: KASAN: slab-use-after-free in kt_read_byte
[ 1.1] Call Trace:
$E"
check "a report outside the brackets is bad" "5:[ 2.0] WARNING: at mm/slub.c" "$B
[ 1.1] BUG: KFENCE: use-after-free read in kt_read_byte
$E
[ 1.9] fine
[ 2.0] WARNING: at mm/slub.c"
check "a window never closed is read" "3:[ 1.1] BUG: unable to handle page fault" "[ 0.1] ok
$B
[ 1.1] BUG: unable to handle page fault"
check "a window a new one opens is read" "2:[ 1.1] Oops: 0000" "$B
[ 1.1] Oops: 0000
$B
$E"
exit $((fails > 0))
