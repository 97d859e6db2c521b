#!/bin/bash
# A policy's value stays one per thread inside a safe span: golden_pertask()
# uses G_PT before and after a sleep, and a policy that alternates between
# 70 and 90 at every choice is asked twice by the same thread. xk_choose pins
# the first choice until the safe span's exit, so the thread computes with
# 70 throughout (unpinned it would mix 70 and 90), and again with 70 on its
# next call (the pin was released at the exit). A thread that leaves the
# safe span unseen and exits has its pin freed with the task
# (sched_process_exit), not leaked: MAX_RW_COUNT's span in vfs_write has
# its safe span's exit at the function's end, where no probe can be, so
# every process that writes keeps a pin until it exits; twenty processes
# that write once and exit leave no pin behind.
. "$(dirname "$0")/lib.sh"
POLICY=$XK_TOP/build/bpf/alternate.bpf.o
RW=$XK_TOP/build/bpf/rw_fixed.bpf.o
trap 'echo 1 > $GOLDEN/release 2>/dev/null; cleanup_xk' EXIT
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
$XK unload G_PT || fail "unload failed"
log "pertask with an alternating policy: $(cat /tmp/pins-1), $(cat /tmp/pins-2); mixed would be $(result 70 90)"
expect_eq "first call: one value throughout" "$(cat /tmp/pins-1)" "$(result 70 70)"
expect_eq "second call: chosen afresh, one value" "$(cat /tmp/pins-2)" "$(result 70 70)"
[ "$(jq '.[0].pinned' <<< "$st")" -ge 2 ] || fail "no pinned choice counted"
[ "$(jq '.[0].exits' <<< "$st")" -ge 2 ] || fail "no safe-span exit counted"

# pins of processes that exit
$XK load MAX_RW_COUNT --policy "$RW" --param value=2147475456 || fail "rw_fixed load failed"
pins() { $XK -j status | jq '.[0].pins'; }
# a process that writes and stays: its pin is held
sh -c 'echo > /dev/null; sleep 3' & holder=$!
sleep 1
held=$(pins)
kill $holder; wait $holder 2>/dev/null
before=$(pins)
for _ in $(seq 20); do dd if=/dev/zero of=/dev/null bs=1 count=1 2>/dev/null; done
after=$(pins)
$XK unload MAX_RW_COUNT || fail "unload failed"
log "pins of MAX_RW_COUNT: $held with a writer alive, $before once it exited, $after after 20 writers came and went"
[ "$held" -gt "$before" ] || fail "no pin held by a live writer ($held, then $before)"
[ "$after" -le $((before + 2)) ] || fail "pins leaked by exited writers: $before -> $after"
