#!/bin/bash
# Read-only data the constant initialises is never written: each load of
# it is a span, the loaded register rewritten after the load.
# - golden: golden_ro_read() returns x + golden_ro (`static const int
#   golden_ro = G_RO`, read with READ_ONCE: the load stays): x + 40
#   compiled-in, x + 50 set, x + 40 again after unload; the bytes of
#   golden_ro never change. G_ROA's address is taken: refused by name.
# - stock, in a module: BFQ_TIMEOUT (`const int bfq_timeout = HZ / 8` in
#   bfq-iosched.c) is folded into bfq_init_queue and loaded by
#   bfq_bfqq_charge_time of bfq-wf2q.c (found through the shipped bfq.ko's
#   relocations). Every use supported: `xk set` needs no --partial. A
#   kprobe event on jiffies_to_msecs, filtered on a return address inside
#   bfq_bfqq_charge_time, records the value it converts (the loaded
#   bfq_timeout) while fio reads at random from null_blk under bfq
#   (low_latency 0: no weight raising, so slow queues are charged by
#   time): 31 compiled-in, 62 set. A queue attached after the set shows a
#   timeout_sync of 248 ms (62 jiffies at HZ 250), 124 before and after.
. "$(dirname "$0")/lib.sh"
EV=$TRACE/events/kprobes/xk_ro
cleanup_ro() {
	caller_event_remove xk_ro
	cleanup_xk
	rmmod null_blk 2>/dev/null
	true
}
trap cleanup_ro EXIT
dir=$($XK kernel info --field dir)
tbl=$dir/scopes/BFQ_TIMEOUT.scope
[ -f "$tbl" ] || fail "no table for BFQ_TIMEOUT"

# ---- golden ----
insmod "$GOLDEN_KO" || fail "insmod xk_golden"
field() { grep "^x=$1 " $GOLDEN/probe | tr ' ' '\n' | sed -n "s/^$2=//p"; }
ro_bytes() { python3 "$XK_TOP/tests/guest/kcore_bytes.py" golden_ro 0 4; }
expect_eq "ro compiled-in" "$(field 5 ro)" 45
before=$(ro_bytes)
$XK set G_RO=50 || fail "set G_RO=50"
for x in 5 15 25 1000; do
	expect_eq "ro at x=$x with G_RO=50" "$(field $x ro)" $((x + 50))
done
expect_eq "golden_ro's bytes (never written)" "$(ro_bytes)" "$before"
$XK unload G_RO || fail "unload G_RO"
expect_eq "ro after unload" "$(field 5 ro)" 45
out=$($XK set --partial G_ROA=50 2>&1) && fail "G_ROA set: its address is taken"
echo "$out" | grep -q "golden_roa_addr" || fail "G_ROA refusal does not name golden_roa_addr: $out"
rmmod xk_golden || fail "rmmod xk_golden"

# ---- BFQ_TIMEOUT in bfq.ko ----
grep -q '^function bfq:bfq_bfqq_charge_time ' "$tbl" ||
	fail "the table has no span in bfq:bfq_bfqq_charge_time"
modprobe bfq || fail "modprobe bfq"
modprobe null_blk nr_devices=1 || fail "no null_blk"
Q=/sys/block/nullb0/queue
attach_bfq() {
	echo none > $Q/scheduler && echo bfq > $Q/scheduler || fail "bfq on nullb0"
	echo 0 > $Q/iosched/low_latency || fail "low_latency"
}
attach_bfq
expect_eq "timeout_sync compiled-in" "$(cat $Q/iosched/timeout_sync)" 124
caller_event xk_ro 'jiffies_to_msecs j=%di:u32' "$tbl" bfq:bfq_bfqq_charge_time
# the values bfq_bfqq_charge_time converts, "value count" a line
# (fio again, up to three runs, until some queue was charged by time)
charged() {
	echo > $TRACE/trace
	echo 1 > $EV/enable
	for _ in 1 2 3; do
		fio --name=xk --filename=/dev/nullb0 --rw=randread --bs=4k \
			--direct=1 --ioengine=psync --numjobs=2 --runtime=3 \
			--time_based >/dev/null 2>&1 || fail "fio"
		grep -q 'j=' $TRACE/trace && break
	done
	echo 0 > $EV/enable
	traced_values j | tr '\n' ' '
}
c31=$(charged)
log "compiled-in: $c31"
[ -n "$c31" ] || fail "bfq_bfqq_charge_time never ran"
expect_eq "charged with (compiled-in)" "${c31%% *}" 31
$XK set BFQ_TIMEOUT=62 || fail "set BFQ_TIMEOUT=62 (every use supported: no --partial)"
grep -Eq 'bfq_bfqq_charge_time\+0x[0-9a-f]+ +\[?bfq' /sys/kernel/debug/kprobes/list ||
	fail "no probe in bfq_bfqq_charge_time: $(cat /sys/kernel/debug/kprobes/list)"
c62=$(charged)
log "BFQ_TIMEOUT=62: $c62"
[ -n "$c62" ] || fail "bfq_bfqq_charge_time never ran with 62"
case " $c62" in *" 31 "*) fail "31 still loaded with BFQ_TIMEOUT=62: $c62" ;; esac
expect_eq "charged with (62)" "${c62%% *}" 62
attach_bfq
expect_eq "timeout_sync of a queue attached with 62" "$(cat $Q/iosched/timeout_sync)" 248
$XK unload BFQ_TIMEOUT || fail "unload BFQ_TIMEOUT"
c31=$(charged)
expect_eq "charged with (after unload)" "${c31%% *}" 31
attach_bfq
expect_eq "timeout_sync after unload" "$(cat $Q/iosched/timeout_sync)" 124
[ "$(grep -c bfq_bfqq_charge_time /sys/kernel/debug/kprobes/list)" = 0 ] ||
	fail "a probe left in bfq after unload"
echo "ok"
