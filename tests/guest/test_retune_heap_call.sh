#!/bin/bash
# Heap objects sized in the one function that uses the constant: state of
# the call. SKB_FRAG_PAGE_ORDER (get_order(32768): 3) is used only by
# skb_page_frag_refill, which allocates a socket's page_frag with
# alloc_pages(gfp, order) and records pfrag->size = PAGE_SIZE << order;
# every reader of the frag reads pfrag->size. The whole function is the
# safe span of both uses, so the value changes only when no thread is in
# it (global, never immediate), and a frag's pages and recorded size come
# from one value.
# - a kprobe event on alloc_pages_noprof records the order (rsi) of the
#   allocations whose return address lies in skb_page_frag_refill while
#   iperf3 sends over loopback: 3 compiled-in, 4 with 65536 loaded, 3
#   again after unload;
# - the set reports the global mode (a call-state constant is never
#   changed at an instant).
. "$(dirname "$0")/lib.sh"
EV=$TRACE/events/kprobes/xk_frag
cleanup_frag() {
	caller_event_remove xk_frag
	pkill iperf3 2>/dev/null
	cleanup_xk
	true
}
trap cleanup_frag EXIT
heap_call_table SKB_FRAG_PAGE_ORDER
caller_event xk_frag 'alloc_pages_noprof order=%si:u32' "$tbl" skb_page_frag_refill
# the orders skb_page_frag_refill allocates while iperf3 sends, "order
# count" a line, most first
orders() {
	echo > $TRACE/trace
	echo 1 > $EV/enable
	iperf3 -s -D -1 -p 5211 || fail "iperf3 server"
	sleep 0.5
	iperf3 -c 127.0.0.1 -p 5211 -t 2 >/dev/null || fail "iperf3"
	echo 0 > $EV/enable
	traced_values order | tr '\n' ' '
}
o3=$(orders)
log "compiled-in: $o3"
expect_eq "order (compiled-in)" "${o3%% *}" 3
out=$($XK -j set SKB_FRAG_PAGE_ORDER=65536 2>&1) ||
	fail "set SKB_FRAG_PAGE_ORDER=65536 (every use supported: no --partial): $out"
mode=$(echo "$out" | jq -r .mode)
expect_eq "the mode of a call-state constant" "$mode" global
o4=$(orders)
log "65536: $o4"
expect_eq "order (65536)" "${o4%% *}" 4
case " $o4" in *" 3 "*) fail "order 3 still allocated with 65536 loaded: $o4" ;; esac
$XK unload SKB_FRAG_PAGE_ORDER || fail "unload"
o3=$(orders)
expect_eq "order (after unload)" "${o3%% *}" 3
[ "$(probes_left)" = 0 ] || fail "probes left after unload"
echo "ok"
