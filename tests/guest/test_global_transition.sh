#!/bin/bash
# A global transition waits until no thread is inside the safe span: a
# thread blocked inside G_HOLD's span makes a short transition fail (the old
# value stays in force); released, the next transition goes through; a
# transition started while a thread is inside completes when it leaves.
. "$(dirname "$0")/lib.sh"
trap 'echo 1 > $GOLDEN/release 2>/dev/null; cleanup_xk' EXIT
insmod "$GOLDEN_KO" || fail "insmod xk_golden"
$XK load G_HOLD || fail "load"
cat $GOLDEN/hold > /tmp/hold1 &
sleep 1
out=$($XK set G_HOLD=100 --mode global --timeout 300 2>&1) && fail "transition succeeded with a thread inside: $out"
echo "$out" | grep -q "1 thread still inside a safe span after 300 ms; the old value 64 stays in force" ||
	fail "unexpected error: $out"
expect_eq "value after a failed transition" "$($XK -j status | jq '.[0].value')" 64
echo 1 > $GOLDEN/release
wait
expect_eq "held thread's result" "$(cat /tmp/hold1)" $(((1 + 64) * 2))

# a thread inside when the transition starts delays it until it leaves
cat $GOLDEN/hold > /tmp/hold2 &
sleep 1
( sleep 2; echo 1 > $GOLDEN/release ) &
t0=$(date +%s%N)
$XK -j set G_HOLD=100 --mode global --timeout 20000 > /tmp/set.json || fail "transition failed"
t1=$(date +%s%N)
wait
ms=$(( (t1 - t0) / 1000000 ))
[ $ms -ge 1000 ] || fail "the transition took $ms ms; it did not wait for the thread"
expect_eq "value" "$($XK -j status | jq '.[0].value')" 100
# and the value is in force for the next caller
( sleep 1; echo 1 > $GOLDEN/release ) &
expect_eq "new result" "$(cat $GOLDEN/hold)" $(((1 + 100) * 2))
wait
log "failed while held (300 ms timeout), waited $ms ms for the thread, then in force"

# the wait is bounded and killable: a timeout above the limit is refused;
# a transition killed (SIGKILL) while a thread is inside ends at once, the
# old value stays in force and the module answers the next request
out=$($XK set G_HOLD=50 --mode global --timeout 60001 2>&1) && fail "a timeout above the limit was accepted"
echo "$out" | grep -Eq "timeout 60001 ms is above the limit of 60000 ms|--timeout is 1 to 60000 ms" || fail "timeout: $out"
cat $GOLDEN/hold > /tmp/hold3 &
hold=$!
sleep 1
$XK set G_HOLD=50 --mode global --timeout 60000 > /tmp/killed.out 2>&1 &
setter=$!
sleep 2
t0=$(date +%s%N)
kill -9 $setter
wait $setter 2>/dev/null
t1=$(date +%s%N)
kill_ms=$(( (t1 - t0) / 1000000 ))
[ $kill_ms -lt 10000 ] || fail "the killed transition took $kill_ms ms to end"
expect_eq "value after a killed transition" "$($XK -j status | jq '.[0].value')" 100
echo 1 > $GOLDEN/release
wait $hold
expect_eq "held thread's result after the kill" "$(cat /tmp/hold3)" $(((1 + 100) * 2))
dmesg | grep -q "G_HOLD: the transition was killed with 1 thread inside a safe span" ||
	fail "the killed transition is not in the kernel log"
log "timeout 60001 refused; a killed transition ended in $kill_ms ms, value 100 kept"
