#!/bin/bash
# 300 kernel threads inside G_PT's safe span during a global transition:
# each uses G_PT before and after its sleep, and none may mix the old and
# the new value; the transition ends when the last one leaves. Meanwhile
# the module is not blocked: status answers, a second set of the same
# constant is refused as busy, and an unrelated constant loads, changes
# and unloads.
. "$(dirname "$0")/lib.sh"
trap 'echo 1 > $GOLDEN/release 2>/dev/null; cleanup_xk' EXIT
insmod "$GOLDEN_KO" || fail "insmod xk_golden"
pt() { echo $(( (1 + $1) + 1000 * (15 + $2) )); }
value() { $XK -j status | jq ".[] | select(.constant == \"$1\") | .value"; }
N=300
$XK load G_PT || fail "load"
echo $N > $GOLDEN/crowd || fail "cannot start $N threads"
sleep 1
$XK -j set --mode global --timeout 60000 G_PT=70 > /tmp/crowd-set.json 2>&1 &
setter=$!
sleep 2
expect_eq "value while $N threads are inside" "$(value G_PT)" 50
out=$($XK set G_PT=60 2>&1) && fail "a second set during the transition succeeded"
echo "$out" | grep -q "another transition of it is under way" || fail "busy: $out"
$XK load G_HOLD > /dev/null || fail "an unrelated load waited for the transition"
$XK set G_HOLD=65 || fail "an unrelated set failed"
expect_eq "the unrelated constant" "$(value G_HOLD)" 65
$XK unload G_HOLD || fail "an unrelated unload failed"
out=$($XK unload G_PT 2>&1) && fail "unload during the transition succeeded"
echo "$out" | grep -q "a transition of it is under way" || fail "unload: $out"
echo 1 > $GOLDEN/release
wait $setter || fail "the transition failed: $(cat /tmp/crowd-set.json)"
expect_eq "the $N threads' results" "$(cat $GOLDEN/crowd)" "$(pt 50 50) $N"
expect_eq "value" "$(value G_PT)" 70
ms=$(jq .transition_ms /tmp/crowd-set.json)
# a crowd after it uses the new value in both places
echo 50 > $GOLDEN/crowd || fail "second crowd"
echo 1 > $GOLDEN/release
expect_eq "a later crowd" "$(cat $GOLDEN/crowd)" "$(pt 70 70) 50"
log "$N threads inside: all kept 50; the transition ended after $ms ms; a later crowd used 70"
