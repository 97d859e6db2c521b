#!/bin/bash
# A policy's value stays one per thread inside a safe span: golden_pertask()
# uses G_PT before and after a sleep, and a policy that alternates between
# 70 and 90 at every choice is asked twice by the same thread. xk_choose pins
# the first choice until the safe span's exit, so the thread computes with
# 70 throughout (unpinned it would mix 70 and 90), and again with 70 on its
# next call (the pin was released at the exit). A thread that leaves the
# safe span unseen and exits has its pin freed with the task
# (sched_process_exit), not leaked: a reader of pertask pins, sleeps, and
# is released with every kprobe disarmed (kprobes/enabled), so it leaves
# the safe span unseen; once it has exited, no pin is left.
. "$(dirname "$0")/lib.sh"
POLICY=$XK_TOP/build/bpf/alternate.bpf.o
trap 'echo 1 > /sys/kernel/debug/kprobes/enabled; echo 1 > $GOLDEN/release 2>/dev/null; cleanup_xk' EXIT
[ -f "$POLICY" ] || fail "no $POLICY (make policies)"
insmod "$GOLDEN_KO" || fail "insmod xk_golden"
# a = 1 + N1 before the sleep, b = 15 + N2 after it: a + 1000 * b
result() { echo $(( (1 + $1) + 1000 * (15 + $2) )); }
$XK load --catalog tests/fixtures/golden/golden.conf G_PT --policy "$POLICY" ||
	fail "policy load failed"
for i in 1 2; do
	cat $GOLDEN/pertask > /tmp/pins-$i &
	sleep 1
	echo 1 > $GOLDEN/release
	wait
done
st=$($XK -j status)
$XK status
# a thread pins (span 0, before the sleep), then leaves the safe span with
# every kprobe disarmed (no exit probe sees it) and exits
cat $GOLDEN/pertask > /tmp/pins-3 &
sleep 1
held=$($XK -j status | jq '.[0].pins')
echo 0 > /sys/kernel/debug/kprobes/enabled
echo 1 > $GOLDEN/release
wait
echo 1 > /sys/kernel/debug/kprobes/enabled
after=$($XK -j status | jq '.[0].pins')
$XK unload G_PT || fail "unload failed"
log "pins: $held held by the sleeping thread, $after once it left unseen and exited"
expect_eq "pin held by the sleeping thread" "$held" 1
expect_eq "pins left once the thread exited" "$after" 0
log "pertask with an alternating policy: $(cat /tmp/pins-1), $(cat /tmp/pins-2); mixed would be $(result 70 90)"
expect_eq "first call: one value throughout" "$(cat /tmp/pins-1)" "$(result 70 70)"
expect_eq "second call: chosen afresh, one value" "$(cat /tmp/pins-2)" "$(result 70 70)"
[ "$(jq '.[0].pinned' <<< "$st")" -ge 2 ] || fail "no pinned choice counted"
[ "$(jq '.[0].exits' <<< "$st")" -ge 2 ] || fail "no safe-span exit counted"

