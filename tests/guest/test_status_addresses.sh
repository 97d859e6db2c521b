#!/bin/bash
# Status gives kernel addresses only to whom kallsyms gives them: a caller
# with CAP_SYSLOG while kptr_restrict is below 2. Otherwise every address
# is 0 (the function and offset still say where a probe is).
. "$(dirname "$0")/lib.sh"
restrict0=$(cat /proc/sys/kernel/kptr_restrict)
tmp=$(mktemp -d)
trap 'echo $restrict0 > /proc/sys/kernel/kptr_restrict; cleanup_xk; rm -rf $tmp' EXIT
gcc -O2 -Wall -Werror -Iinclude/xk/abi tests/guest/status_addresses.c \
	-o "$tmp/status_addresses" || fail "cannot build the status reader"
$XK load BLK_MAX_REQUEST_COUNT --value 8 >/dev/null || fail "load"

# the address kprobes/list gives the probe at FUNC+OFF (it applies the
# same rule to its own reader)
listed() { awk -v at="$1" '$3 == at { print $1; exit }' /sys/kernel/debug/kprobes/list; }

echo 1 > /proc/sys/kernel/kptr_restrict
out=$("$tmp/status_addresses") || fail "status as root"
n=0
while read -r at addr; do
	[ "$addr" != 0 ] || fail "root with CAP_SYSLOG got no address for $at"
	expect_eq "status address of $at" "$addr" "$(listed "$at" | sed 's/^0*//')"
	n=$((n + 1))
done <<< "$out"
[ $n -ge 1 ] || fail "no span in status"

out=$(setpriv --bounding-set=-syslog --inh-caps=-syslog "$tmp/status_addresses") ||
	fail "status without CAP_SYSLOG"
hidden=$(awk '$2 != 0' <<< "$out")
[ -z "$hidden" ] || fail "a caller without CAP_SYSLOG got addresses: $hidden"

echo 2 > /proc/sys/kernel/kptr_restrict
out=$("$tmp/status_addresses") || fail "status under kptr_restrict 2"
hidden=$(awk '$2 != 0' <<< "$out")
[ -z "$hidden" ] || fail "kptr_restrict 2 still gave addresses: $hidden"
log "status: $n address(es) to root with CAP_SYSLOG, matching kprobes/list; none without CAP_SYSLOG or under kptr_restrict 2"
