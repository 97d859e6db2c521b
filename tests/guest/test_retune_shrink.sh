#!/bin/bash
# SHRINK_BATCH retuned live: a shrinker that sets no batch of its own (the
# golden module registers one) is asked to scan SHRINK_BATCH objects per
# call by the stock kernel's do_shrink_slab; the batch follows the value.
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT
insmod "$GOLDEN_KO" || fail "insmod xk_golden"
batch() {
	cat $GOLDEN/shrink_batch > /dev/null	# reset
	echo 2 > /proc/sys/vm/drop_caches
	cat $GOLDEN/shrink_batch
}
base=$(batch)
$XK set SHRINK_BATCH=32 || fail "set failed"
small=$(batch)
$XK set SHRINK_BATCH=500 || fail "set failed"
large=$(batch)
$XK unload SHRINK_BATCH
after=$(batch)
log "nr_to_scan per call: SHRINK_BATCH=128 $base, =32 $small, =500 $large, after unload $after"
expect_eq "batch at 128" "$base" 128
expect_eq "batch at 32" "$small" 32
expect_eq "batch at 500" "$large" 500
expect_eq "batch after unload" "$after" 128
