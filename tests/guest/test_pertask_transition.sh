#!/bin/bash
# Why transitions are scoped: golden_pertask() uses G_PT before and after a
# sleep. Changed immediately, a thread asleep in between mixes both values.
# Changed per task, that thread keeps the old value for both uses while a
# thread that starts afterwards uses the new one for both; the transition
# completes when the old thread leaves.
. "$(dirname "$0")/lib.sh"
trap 'echo 1 > $GOLDEN/release 2>/dev/null; cleanup_xk' EXIT
insmod "$GOLDEN_KO" || fail "insmod xk_golden"
# a = 1 + N1 before the sleep, b = 15 + N2 after it: a + 1000 * b
result() { echo $(( (1 + $1) + 1000 * (15 + $2) )); }
$XK load G_PT || fail "load"

cat $GOLDEN/pertask > /tmp/pt-imm &
sleep 1
$XK set G_PT=70 || fail "immediate set"
echo 1 > $GOLDEN/release
wait
expect_eq "immediate: the sleeping thread mixes 50 and 70" "$(cat /tmp/pt-imm)" "$(result 50 70)"
$XK set G_PT=50 || fail "reset"

cat $GOLDEN/pertask > /tmp/pt-old &
sleep 1
$XK -j set --mode per-task --timeout 20000 G_PT=70 > /tmp/pt-set.json &
sleep 1
cat $GOLDEN/pertask > /tmp/pt-new &
sleep 1
echo 1 > $GOLDEN/release
wait
expect_eq "per task: the old thread keeps 50 for both uses" "$(cat /tmp/pt-old)" "$(result 50 50)"
expect_eq "per task: the new thread uses 70 for both" "$(cat /tmp/pt-new)" "$(result 70 70)"
ms=$(jq .transition_ms /tmp/pt-set.json)
[ "${ms%.*}" -ge 1000 ] || fail "the per-task transition ended after $ms ms, before the old thread left"
expect_eq "value" "$($XK -j status | jq '.[0].value')" 70
# per task, not drained in time: the old value again for everyone
cat $GOLDEN/pertask > /tmp/pt-t &
sleep 1
$XK set --mode per-task --timeout 300 G_PT=90 2>/dev/null && fail "per-task transition did not time out"
expect_eq "value after the timeout" "$($XK -j status | jq '.[0].value')" 70
echo 1 > $GOLDEN/release
wait
expect_eq "thread held through the failed transition" "$(cat /tmp/pt-t)" "$(result 70 70)"
log "immediate mixed $(cat /tmp/pt-imm); per task: old $(cat /tmp/pt-old), new $(cat /tmp/pt-new), drained after $ms ms"

# per task, rolled back: a thread that took the new value keeps it until
# it leaves; only threads entering afterwards take the old value again
cat $GOLDEN/pertask > /tmp/pt-a &
sleep 1
$XK set --mode per-task --timeout 3000 G_PT=90 > /tmp/pt-rb.out 2>&1 &
setter=$!
sleep 1
cat $GOLDEN/pertask > /tmp/pt-b &
wait $setter && fail "the per-task transition ended with the old thread inside"
grep -q "G_PT: 1 thread still inside a safe span after 3000 ms; the old value 70 is in force again (1 thread that took the new value keeps it until it leaves)" /tmp/pt-rb.out ||
	fail "rollback: $(cat /tmp/pt-rb.out)"
expect_eq "value after the rollback" "$($XK -j status | jq '.[0].value')" 70
out=$($XK set G_PT=60 2>&1) && fail "a set succeeded while a thread still uses the rolled-back value"
echo "$out" | grep -q "1 thread of an earlier per-task transition that failed is still inside a safe span with value 90" ||
	fail "busy after the rollback: $out"
echo 1 > $GOLDEN/release
wait
expect_eq "the old thread through the rollback" "$(cat /tmp/pt-a)" "$(result 70 70)"
expect_eq "the thread that took the new value" "$(cat /tmp/pt-b)" "$(result 90 90)"
$XK set G_PT=60 || fail "set after the rolled-back transition drained"
expect_eq "value" "$($XK -j status | jq '.[0].value')" 60

# a per-task load that times out is rolled back as a per-task set is: the
# thread that took the new value keeps it to the end of its span, so the
# constant stays loaded (at its default for everyone else) until it leaves
$XK unload G_PT || fail "unload before the per-task load"
cat $GOLDEN/pertask > /tmp/pt-la &
sleep 1
$XK load G_PT --value 90 --mode per-task --timeout 3000 > /tmp/pt-load.out 2>&1 &
loader=$!
wait_armed golden_pertask
sleep 1
cat $GOLDEN/pertask > /tmp/pt-lb &
wait $loader && fail "the per-task load ended with the old thread inside"
grep -q "(1 thread that took the new value keeps it until it leaves); G_PT stays loaded until then" /tmp/pt-load.out ||
	fail "per-task load: $(cat /tmp/pt-load.out)"
expect_eq "value after the rolled-back load" "$($XK -j status | jq '.[0].value')" 50
echo 1 > $GOLDEN/release
wait
expect_eq "the old thread through the rolled-back load" "$(cat /tmp/pt-la)" "$(result 50 50)"
expect_eq "the thread that took the load's value" "$(cat /tmp/pt-lb)" "$(result 90 90)"
$XK set G_PT=60 || fail "set after the rolled-back load drained"
log "rolled-back load: old thread $(cat /tmp/pt-la), new thread $(cat /tmp/pt-lb): $(cat /tmp/pt-load.out)"

# threads that exit inside the span: 20 sleepers killed during a per-task
# transition leave through its exits as they die; the transition drains
pids=()
for _ in $(seq 20); do
	cat $GOLDEN/pertask > /dev/null &
	pids+=($!)
done
sleep 2
$XK -j set --mode per-task --timeout 30000 G_PT=75 > /tmp/pt-kill.json &
setter=$!
sleep 1
{ kill -9 "${pids[@]}"; wait "${pids[@]}"; } 2>/dev/null
wait $setter || fail "the per-task transition did not end after its threads died"
expect_eq "value after the killed threads" "$($XK -j status | jq '.[0].value')" 75
cat $GOLDEN/pertask > /tmp/pt-after &
sleep 1
echo 1 > $GOLDEN/release
wait
expect_eq "a thread after them" "$(cat /tmp/pt-after)" "$(result 75 75)"
log "rollback: old thread $(cat /tmp/pt-a), new thread $(cat /tmp/pt-b); 20 killed threads drained"
