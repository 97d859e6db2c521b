#!/bin/bash
# SHRINK_BATCH retuned live: the batch a shrinker is asked to scan
# (shrink_control.nr_to_scan at super_cache_scan) follows the new value.
. "$(dirname "$0")/lib.sh"
trap 'cleanup_xk; echo "-:xk_scan" >> /sys/kernel/tracing/kprobe_events 2>/dev/null' EXIT
T=/sys/kernel/tracing
# struct shrink_control: gfp_mask, nid, then nr_to_scan at offset 8
echo 'p:xk_scan super_cache_scan nr=+8(%si):u64' >> $T/kprobe_events || fail "kprobe event"
max_batch() {
	mkdir -p /tmp/neg
	for i in $(seq 3000); do : > /tmp/neg/f$i; done
	for i in $(seq 3000); do stat /nonexistent-$RANDOM-$i >/dev/null 2>&1; done
	echo > $T/trace
	echo 1 > $T/events/kprobes/xk_scan/enable
	echo 2 > /proc/sys/vm/drop_caches
	echo 0 > $T/events/kprobes/xk_scan/enable
	grep -o 'nr=[0-9]*' $T/trace | cut -d= -f2 | sort -n | tail -1
}
base=$(max_batch)
$XK set SHRINK_BATCH=32 || fail "set failed"
small=$(max_batch)
$XK unload SHRINK_BATCH
after=$(max_batch)
log "largest nr_to_scan: SHRINK_BATCH=128 $base, =32 $small, after unload $after"
expect_eq "batch at 128" "$base" 128
expect_eq "batch at 32" "$small" 32
expect_eq "batch after unload" "$after" 128
