#!/bin/bash
# A batch sized by the constant on the stack: the call-state form.
# IO_REQ_ALLOC_BATCH (8) sizes __io_alloc_req_refill()'s void *reqs[8]:
# zeroed (rep stosq, count 8), then filled by
# kmem_cache_alloc_bulk(req_cachep, gfp, ARRAY_SIZE(reqs), reqs). In a
# build with another value the frame and its canary slot move too; the
# analysis keeps the compiled-in frame, which holds any smaller batch,
# retunes both counts, bounds the value by 8 (a larger batch would need
# more stack than the function has), and marks the spans as state of the
# call: the whole function is their safe span, and the module never
# changes the value at an instant.
# - a kprobe event on kmem_cache_alloc_bulk_noprof records the size (rdx)
#   of each bulk allocation __io_alloc_req_refill makes (its return address
#   on the stack, inside that function) while fio submits io_uring
#   requests (16 in flight, the ring's request cache empty at first): 8
#   compiled-in, 4 loaded, 8 again after unload;
# - `xk set` in the default (immediate) mode changes the value globally;
# - 16 is refused by the bounds, the frame named.
. "$(dirname "$0")/lib.sh"
EV=$TRACE/events/kprobes/xk_bulk
cleanup_bulk() {
	caller_event_remove xk_bulk
	cleanup_xk
	rmmod null_blk 2>/dev/null
	true
}
trap cleanup_bulk EXIT
tbl=$($XK kernel info --field dir)/scopes/IO_REQ_ALLOC_BATCH.scope
[ -f "$tbl" ] || fail "no table for IO_REQ_ALLOC_BATCH"
grep -q '^bounds 1 8$' "$tbl" || fail "the table's bounds are not 1 8: $(grep '^bounds' "$tbl")"
grep -q '^note bounds: at most the compiled-in 8: the constant sizes the frame of __io_alloc_req_refill' "$tbl" ||
	fail "no note on the frame: $(grep '^note' "$tbl")"
[ "$(grep -c '^call-state$' "$tbl")" -ge 1 ] || fail "no call-state span in the table"
modprobe null_blk nr_devices=1 || fail "no null_blk"
caller_event xk_bulk 'kmem_cache_alloc_bulk_noprof size=%dx:u32' "$tbl" __io_alloc_req_refill

# the sizes of the refill's bulk allocations, "size count" a line, most first
bulk_sizes() {
	echo > $TRACE/trace
	echo 1 > $EV/enable
	fio --name=xk --ioengine=io_uring --filename=/dev/nullb0 --rw=randread \
		--bs=4k --iodepth=16 --direct=1 --size=8M --numjobs=1 \
		>/dev/null 2>&1 || fail "fio"
	echo 0 > $EV/enable
	traced_values size
}
most() { head -1 | cut -d' ' -f1; }

s8=$(bulk_sizes)
mode=$($XK -j set IO_REQ_ALLOC_BATCH=4 | jq -r .mode) || fail "set IO_REQ_ALLOC_BATCH=4"
s4=$(bulk_sizes)
hits=$($XK -j status | jq '[.[] | select(.constant == "IO_REQ_ALLOC_BATCH") | .probes[].hits] | add')
out=$($XK set IO_REQ_ALLOC_BATCH=16 2>&1) && fail "IO_REQ_ALLOC_BATCH=16 was set (the frame holds 8)"
$XK unload IO_REQ_ALLOC_BATCH || fail "unload IO_REQ_ALLOC_BATCH"
s_after=$(bulk_sizes)
log "bulk allocations of __io_alloc_req_refill (size count): compiled-in: $(echo $s8); 4: $(echo $s4); unloaded: $(echo $s_after); rewrites $hits"
log "16: $out"
log "mode of the immediate set: $mode"
expect_eq "the mode of a call-state constant's set" "$mode" global
expect_eq "the batch compiled in" "$(echo "$s8" | most)" 8
expect_eq "the batch at 4" "$(echo "$s4" | most)" 4
expect_eq "the batch after unload" "$(echo "$s_after" | most)" 8
[ "$hits" -gt 0 ] || fail "no rewrite counted"
echo "$out" | grep -q "value 16 is out of bounds \[1, 8\]: at most the compiled-in 8: the constant sizes the frame of __io_alloc_req_refill" ||
	fail "16 refused without the frame named: $out"
[ "$(probes_left)" = 0 ] || fail "probes left after unload"
true
