#!/bin/bash
# Several constants in one transaction switch together or not at all: with
# a thread held inside G_HOLD's safe span, a global transaction of G_LT and
# G_HOLD times out and neither changes (though no thread is inside G_LT's
# span); released, both switch.
. "$(dirname "$0")/lib.sh"
trap 'echo 1 > $GOLDEN/release 2>/dev/null; cleanup_xk' EXIT
insmod "$GOLDEN_KO" || fail "insmod xk_golden"
value() { $XK -j status | jq ".[] | select(.constant == \"$1\") | .value"; }
$XK load G_LT || fail "load G_LT"
$XK load G_HOLD || fail "load G_HOLD"
cat $GOLDEN/hold > /dev/null &
sleep 1
out=$($XK set --mode global --timeout 300 G_LT=3 G_HOLD=100 2>&1) &&
	fail "the transaction committed with a thread inside: $out"
echo "$out" | grep -q "still inside a safe span" || fail "unexpected error: $out"
expect_eq "G_LT after the failed transaction" "$(value G_LT)" 10
expect_eq "G_HOLD after the failed transaction" "$(value G_HOLD)" 64
grep -q "^x=5 lt=1 " $GOLDEN/probe || fail "G_LT's old behaviour changed"
echo 1 > $GOLDEN/release
wait
$XK set --mode global --timeout 5000 G_LT=3 G_HOLD=100 || fail "transaction failed"
expect_eq "G_LT" "$(value G_LT)" 3
expect_eq "G_HOLD" "$(value G_HOLD)" 100
grep -q "^x=5 lt=2 " $GOLDEN/probe || fail "G_LT's new behaviour missing"
$XK set G_LT=7 G_HOLD=50 || fail "immediate transaction failed"
expect_eq "G_LT" "$(value G_LT)" 7
expect_eq "G_HOLD" "$(value G_HOLD)" 50
dmesg | grep -q "set G_LT by xk\[[0-9]*\] uid 0: 3 -> 7 (immediate, one transaction" ||
	fail "transaction not in the kernel log"
log "all-or-nothing under a held thread; global and immediate transactions committed"
