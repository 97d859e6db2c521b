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
# the module and a constant first: an unsigned module is refused once locked
$XK load BLK_MAX_REQUEST_COUNT --value 4 || fail "load before lockdown"
echo integrity > $LD || fail "cannot raise lockdown"
grep -q '\[integrity\]' $LD || fail "lockdown is $(cat $LD)"
out=$($XK set BLK_MAX_REQUEST_COUNT=8 2>&1) && fail "a value was set under lockdown"
echo "$out" | grep -q "locked down" || fail "the refusal does not name lockdown: $out"
expect_eq "value under lockdown" "$($XK -j status | jq '.[0].value')" 4
# unload (back to the compiled-in value) stays allowed; a new load does not
$XK unload BLK_MAX_REQUEST_COUNT || fail "unload under lockdown"
out=$($XK load BLK_MAX_REQUEST_COUNT --value 4 2>&1) && fail "a table loaded under lockdown"
echo "$out" | grep -q "locked down" || fail "the refusal does not name lockdown: $out"
out=$($XK set BLK_MAX_REQUEST_COUNT=4 2>&1) && fail "xk set loaded a table under lockdown"
echo "$out" | grep -q "locked down" || fail "the refusal does not name lockdown: $out"
[ "$(probes_left)" = 0 ] 2>/dev/null || true	# debugfs is itself locked down
log "lockdown integrity: set, load and set-by-load refused naming lockdown; unload allowed"
