#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every fully supported constant of the catalog loaded into the running
# stock kernel (the guest) and unloaded: what `xk gen` accepted, the module
# validates against the live text (symbols, expected bytes, stores, resume
# points, exits: every kprobe registered). A table the analysis accepts but
# the module refuses at load is a bug of one of them; this finds it.
#
# Usage: bench/load-all.sh [--csv FILE] [CONSTANT...]
#   Makes the tables on the host (xk gen, cached), then boots the guest and
#   runs bench/load-all-guest.sh: per constant, xk load at its compiled-in
#   value, then xk unload; prints loaded/refused per constant with the
#   module's message, and the totals. --csv writes constant,status,ms,error.
set -uo pipefail
cd "$(dirname "$0")/.."
XK=${XK:-build/xk}
csv= consts=()
while [ $# -gt 0 ]; do
	case $1 in
	--csv) csv=$2; shift ;;
	-h|--help) sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "load-all.sh: unknown option $1" >&2; exit 2 ;;
	*) consts+=("$1") ;;
	esac
	shift
done
command -v jq > /dev/null || { echo "load-all.sh: needs jq" >&2; exit 2; }
[ -x "$XK" ] || { echo "load-all.sh: $XK not built (make)" >&2; exit 2; }
[ -f kmod/xkernel.ko ] || { echo "load-all.sh: kmod/xkernel.ko not built (make kmod)" >&2; exit 2; }
[ ${#consts[@]} -gt 0 ] || mapfile -t consts < <($XK gen --list)
mkdir -p build
list=build/load-all.list
: > "$list"
for c in "${consts[@]}"; do
	out=$($XK -q -j gen "$c" 2>/dev/null) || continue
	spans=$(jq '.spans' <<< "$out") sup=$(jq '.supported' <<< "$out")
	[ "$spans" -gt 0 ] && [ "$spans" = "$sup" ] && echo "$c" >> "$list"
done
echo "$(wc -l < "$list") of ${#consts[@]} constants fully supported: loading each in the guest" >&2
out=$($XK vm run --timeout 3000 -- bench/load-all-guest.sh "$list")
rc=$?
printf '%s\n' "$out"
[ -n "$csv" ] && printf '%s\n' "$out" | sed -n 's/^csv: //p' > "$csv"
exit $rc
