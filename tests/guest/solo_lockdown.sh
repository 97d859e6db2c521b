#!/bin/bash
# Under kernel lockdown xkernel loads no table and sets no value: a table
# writes kernel state where user space says, which integrity lockdown
# forbids (as it forbids /dev/mem). Raises lockdown to integrity, which is
# one-way for the boot: tests/run.sh runs this test in a boot of its own.
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT
LD=/sys/kernel/security/lockdown
[ -e $LD ] || mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
[ -e $LD ] || fail "no $LD (securityfs, the lockdown LSM)"
grep -q '\[none\]' $LD || fail "lockdown is already raised: $(cat $LD)"
# the module and two constants first (an unsigned module is refused once
# locked); the request tester built before (gcc reads the host's root)
tmp=$(mktemp -d)
trap 'cleanup_xk; rm -rf "$tmp"' EXIT
gcc -O2 -Wall -Werror -Iinclude/xk/abi tests/guest/lockdown_requests.c \
	-o "$tmp/lockdown_requests" || fail "cannot build the request tester"
$XK load BLK_MAX_REQUEST_COUNT --value 4 || fail "load before lockdown"
$XK load SHRINK_BATCH || fail "load SHRINK_BATCH before lockdown"
echo integrity > $LD || fail "cannot raise lockdown"
grep -q '\[integrity\]' $LD || fail "lockdown is $(cat $LD)"
refused() {	# refused WHAT OUTPUT: the command failed naming lockdown
	echo "$2" | grep -q "locked down" || fail "$1: the refusal does not name lockdown: $2"
}
out=$($XK set BLK_MAX_REQUEST_COUNT=8 2>&1) && fail "a value was set under lockdown"
refused "set" "$out"
out=$($XK set BLK_MAX_REQUEST_COUNT=8 SHRINK_BATCH=64 2>&1) && fail "a transaction was set under lockdown"
refused "set of two (one transaction)" "$out"
out=$($XK settle BLK_MAX_REQUEST_COUNT 2>&1) && fail "a constant was settled under lockdown"
refused "settle" "$out"
expect_eq "value under lockdown" "$($XK -j status | jq '.[] | select(.constant == "BLK_MAX_REQUEST_COUNT") | .value')" 4
expect_eq "spans settled under lockdown" "$($XK -j status | jq '[.[].probes[]? | select(.settled == true)] | length')" 0
# every request that writes, one by one through the ioctl
"$tmp/lockdown_requests" BLK_MAX_REQUEST_COUNT || fail "a request was not refused under lockdown"
# unload (back to the compiled-in value) stays allowed; a new load does not
$XK unload BLK_MAX_REQUEST_COUNT || fail "unload under lockdown"
$XK unload SHRINK_BATCH || fail "unload SHRINK_BATCH under lockdown"
out=$($XK load BLK_MAX_REQUEST_COUNT --value 4 2>&1) && fail "a table loaded under lockdown"
refused "load" "$out"
out=$($XK set BLK_MAX_REQUEST_COUNT=4 2>&1) && fail "xk set loaded a table under lockdown"
refused "set (by a load)" "$out"
out=$($XK load BLK_MAX_REQUEST_COUNT --policy build/bpf/blk_per_device.bpf.o 2>&1) &&
	fail "a policy loaded under lockdown"
refused "policy" "$out"
expect_eq "constants loaded at the end" "$($XK -j status | jq length)" 0
# kprobes/list is read-only (0400): debugfs allows reading it under lockdown
expect_eq "probes left" "$(probes_left)" 0
log "lockdown integrity: load, set, a transaction, settle, a policy and every writing ioctl refused naming lockdown; unload allowed"
