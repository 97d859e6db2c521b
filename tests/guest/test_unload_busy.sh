#!/bin/bash
# A loaded constant holds xkernel.ko: rmmod says "in use" instead of freeing
# the module's text under live probes. G_STKH is state of the call (a frame
# the constant sizes, around a sleep in golden_stkhold): it never switches
# while a thread is inside. With a thread asleep there at 8, xk unload
# cannot put the default back and refuses by name, the module stays, and
# the thread finishes its call with 8; once it has left, both succeed.
# Then a thread that took a per-task value and dies inside (a kernel thread
# calling kthread_exit there: no exit probe sees it leave) does not keep
# the constant loaded for good: the next request reaps it.
. "$(dirname "$0")/lib.sh"
trap 'echo 1 > $GOLDEN/release 2>/dev/null; cleanup_xk' EXIT
insmod "$GOLDEN_KO" || fail "insmod xk_golden"
# what golden_stkhold returns with N: sum of golden_in[i & 3] ^ i, i < N
result() {
	local in=(5 15 25 1000) s=0 i
	for ((i = 0; i < $1; i++)); do s=$((s + (in[i & 3] ^ i))); done
	echo $s
}
refs() { awk '$1 == "xkernel" { print $3 }' /proc/modules; }
value() { $XK -j status | jq '.[] | select(.constant == "G_STKH") | .value'; }

$XK load G_STKH --value 8 || fail "load G_STKH=8"
[ "$(refs)" -ge 1 ] || fail "a loaded constant holds no reference on xkernel.ko"
out=$(rmmod xkernel 2>&1) && fail "rmmod xkernel succeeded with G_STKH loaded"
grep -q "in use" <<< "$out" || fail "rmmod: $out"

cat $GOLDEN/stkhold > /tmp/stkh-a &
sleep 1
out=$($XK unload G_STKH 2>&1) && fail "unload succeeded with a thread inside G_STKH's function"
grep -q "G_STKH: 1 thread still inside a safe span" <<< "$out" || fail "unload: $out"
expect_eq "value after the refused unload" "$(value)" 8
out=$(rmmod xkernel 2>&1) && fail "rmmod xkernel succeeded after the refused unload"
grep -q "in use" <<< "$out" || fail "rmmod after the refused unload: $out"
grep -q '^xkernel ' /proc/modules || fail "xkernel.ko is gone"
echo 1 > $GOLDEN/release
wait
expect_eq "the thread inside through the refused unload" "$(cat /tmp/stkh-a)" "$(result 8)"
$XK unload G_STKH || fail "unload after the thread left"
expect_eq "references after the unload" "$(refs)" 0
rmmod xkernel || fail "rmmod after the unload"
log "rmmod refused while loaded; unload refused with a thread inside ($(cat /tmp/stkh-a) = 8's sum); both after it left"

# a per-task transition rolled back, its one new-value thread dying inside
insmod "$MODULE" || fail "insmod xkernel"
$XK load G_STKH || fail "load G_STKH"
cat $GOLDEN/stkhold > /tmp/stkh-b &
sleep 1
$XK set --mode per-task --timeout 3000 G_STKH=8 > /tmp/stkh-set.out 2>&1 &
setter=$!
sleep 1
echo 1 > $GOLDEN/stkdie
wait $setter && fail "the per-task set ended with the old thread inside"
grep -q "1 thread that took the new value keeps it until it leaves" /tmp/stkh-set.out ||
	fail "rollback: $(cat /tmp/stkh-set.out)"
mark="xk-unload-busy-$$"
echo "$mark" > /dev/kmsg
echo 1 > $GOLDEN/release
wait
expect_eq "the old thread" "$(cat /tmp/stkh-b)" "$(result 16)"
sleep 1
$XK unload G_STKH || fail "the thread that died inside keeps G_STKH loaded"
dmesg | sed -n "/$mark/,\$p" | grep -q "G_STKH: 1 thread of an earlier per-task transition left its safe spans unseen" ||
	fail "no reaping logged"
[ "$(probes_left)" = 0 ] || fail "probes left: $(cat /sys/kernel/debug/kprobes/list)"
rmmod xkernel || fail "rmmod at the end"
log "a thread that died inside was reaped at the next request"
