#!/bin/bash
# Transitions count every frame inside a safe span, however deep the stack:
# golden_deep() holds G_REC's derived value in a frame 80 frames above the
# one that sleeps (a stack walk cut at 64 frames misses it), golden_rec()
# holds it at each of 81 levels of a recursion (counted once, the first
# level out would end the count while 80 are still inside). Every level
# uses G_REC before and after the sleep: a result shows whether a thread
# mixed the old and the new value.
. "$(dirname "$0")/lib.sh"
trap 'echo 1 > $GOLDEN/release 2>/dev/null; cleanup_xk' EXIT
insmod "$GOLDEN_KO" || fail "insmod xk_golden"
deep() { echo $(( (1 + $1) + 1000 * (15 + $2) )); }
rec() { echo $(( 81 * (1 + $1) + 81000 * (15 + $2) )); }
value() { $XK -j status | jq '.[0].value'; }
$XK load G_REC || fail "load"

# global, a thread 80 frames under the span: the transition cannot end
cat $GOLDEN/deep > /tmp/deep1 &
sleep 1
out=$($XK set --mode global --timeout 500 G_REC=60 2>&1) &&
	fail "a global transition ended with a thread inside, 80 frames down: $out"
echo "$out" | grep -q "1 thread still inside a safe span after 500 ms; the old value 40 stays in force" ||
	fail "unexpected error: $out"
expect_eq "value after the failed transition" "$(value)" 40
echo 1 > $GOLDEN/release
wait
expect_eq "the deep thread" "$(cat /tmp/deep1)" "$(deep 40 40)"

# per task, a thread 81 levels deep keeps 40 at every level, through 81
# nested exits; a thread started afterwards uses 60 at every level
cat $GOLDEN/rec > /tmp/rec1 &
sleep 1
$XK -j set --mode per-task --timeout 30000 G_REC=60 > /tmp/rec-set.json &
setter=$!
sleep 1
cat $GOLDEN/rec > /tmp/rec2 &
sleep 1
echo 1 > $GOLDEN/release
wait $setter || fail "per-task transition failed: $(cat /tmp/rec-set.json)"
wait
expect_eq "the old recursing thread" "$(cat /tmp/rec1)" "$(rec 40 40)"
expect_eq "the new recursing thread" "$(cat /tmp/rec2)" "$(rec 60 60)"
expect_eq "value" "$(value)" 60

# global, a thread 81 levels deep: the transition ends when it has left
cat $GOLDEN/rec > /tmp/rec3 &
sleep 1
( sleep 2; echo 1 > $GOLDEN/release ) &
$XK -j set --mode global --timeout 30000 G_REC=80 > /tmp/rec-glob.json ||
	fail "global transition failed: $(cat /tmp/rec-glob.json)"
wait
ms=$(jq .transition_ms /tmp/rec-glob.json)
[ "${ms%.*}" -ge 1000 ] || fail "the global transition ended after $ms ms, with the thread inside"
expect_eq "the recursing thread through a global transition" "$(cat /tmp/rec3)" "$(rec 60 60)"
expect_eq "value" "$(value)" 80
dmesg | grep -q "set G_REC by xk\[[0-9]*\] uid 0: 60 -> 80 (global, .*retries" ||
	fail "the audit line has no scan figures"
log "deep: $(cat /tmp/deep1); rec per task: old $(cat /tmp/rec1), new $(cat /tmp/rec2); global waited $ms ms"
