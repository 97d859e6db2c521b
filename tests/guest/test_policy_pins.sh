#!/bin/bash
# A policy's value stays one per thread inside a safe span: golden_pertask()
# uses G_PT before and after a sleep, and a policy that gives 70 at every
# third choice and 90 at the others (70, 90, 90, 70, ...) is asked twice
# per call. One thread calls it twice. xk_choose pins the first choice
# until the safe span's exit, so the first call computes with 70
# throughout (unpinned it would mix 70 and 90); the exit releases the pin,
# so the second call chooses afresh and computes with 90 throughout (a pin
# kept would give 70 again, none 90 and 70). A thread that leaves the safe
# span unseen and exits has its pin freed with the task
# (sched_process_exit), not leaked: a reader of pertask pins, sleeps, and
# is released with every kprobe disarmed (kprobes/enabled), so it leaves
# the safe span unseen; once it has exited, no pin is left. Each release
# waits until the thread has made its choice (the module's count), so the
# choices come in one order.
. "$(dirname "$0")/lib.sh"
POLICY=$XK_TOP/build/bpf/alternate.bpf.o
policies_or_refused
trap 'echo 1 > /sys/kernel/debug/kprobes/enabled; echo 1 > $GOLDEN/release 2>/dev/null; cleanup_xk' EXIT
[ -f "$POLICY" ] || fail "no $POLICY (make policies)"
insmod "$GOLDEN_KO" || fail "insmod xk_golden"
# a = 1 + N1 before the sleep, b = 15 + N2 after it: a + 1000 * b
result() { echo $(( (1 + $1) + 1000 * (15 + $2) )); }
field() { $XK -j status | jq ".[0].$1"; }
# waits until xk_choose has been called $1 times in all (the thread is in)
wait_choices() {
	for _ in $(seq 600); do
		[ "$(field choices)" -ge "$1" ] && return 0
		sleep 0.1
	done
	fail "xk_choose never called $1 times ($(field choices))"
}
$XK load --catalog tests/fixtures/golden/golden.conf G_PT --policy "$POLICY" ||
	fail "policy load failed"
# one thread, two calls (one read(2) of pertask each)
python3 -c '
import os, sys
for out in sys.argv[2:]:
    fd = os.open(sys.argv[1], os.O_RDONLY)
    data = os.read(fd, 64)
    os.close(fd)
    with open(out, "wb") as f:
        f.write(data)
' $GOLDEN/pertask /tmp/pins-1 /tmp/pins-2 &
reader=$!
wait_choices 1		# first call, span 0: 70, pinned
echo 1 > $GOLDEN/release
wait_choices 3		# second call, span 0: 90
echo 1 > $GOLDEN/release
wait $reader || fail "the reader failed"
st=$($XK -j status)
$XK status
# a thread pins (span 0, before the sleep), then leaves the safe span with
# every kprobe disarmed (no exit probe sees it) and exits
cat $GOLDEN/pertask > /tmp/pins-3 &
wait_choices 5
held=$(field pins)
echo 0 > /sys/kernel/debug/kprobes/enabled
echo 1 > $GOLDEN/release
wait
echo 1 > /sys/kernel/debug/kprobes/enabled
after=$(field pins)
$XK unload G_PT || fail "unload failed"
log "pins: $held held by the sleeping thread, $after once it left unseen and exited"
expect_eq "pin held by the sleeping thread" "$held" 1
expect_eq "pins left once the thread exited" "$after" 0
log "pertask with the policy, one thread: $(cat /tmp/pins-1), $(cat /tmp/pins-2); mixed would be $(result 70 90), $(result 90 70); a pin kept $(result 70 70) twice"
expect_eq "choices of the two calls" "$(jq '.[0].choices' <<< "$st")" 4
expect_eq "first call: one value throughout" "$(cat /tmp/pins-1)" "$(result 70 70)"
expect_eq "second call: chosen afresh, one value" "$(cat /tmp/pins-2)" "$(result 90 90)"
[ "$(jq '.[0].pinned' <<< "$st")" -ge 2 ] || fail "no pinned choice counted"
[ "$(jq '.[0].exits' <<< "$st")" -ge 2 ] || fail "no safe-span exit counted"
