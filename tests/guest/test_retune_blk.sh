#!/bin/bash
# BLK_MAX_REQUEST_COUNT retuned live in the stock kernel changes how often
# a task's block plug is flushed (block:block_unplug events for one dd on
# null_blk with 4 KiB requests, through mq-deadline): 32 -> 4 flushes ~8x
# as often, 32 -> 128 less often; unload brings 32's behaviour back.
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT
modprobe null_blk nr_devices=1 max_sectors=8 || fail "no null_blk"
trap 'cleanup_xk; rmmod null_blk' EXIT
echo 1024 > /sys/block/nullb0/queue/read_ahead_kb
traced_plugs nullb0
echo 16384 > $TRACE/buffer_size_kb
read_nullb0() { dd if=/dev/nullb0 of=/dev/null bs=1M count=64 2>/dev/null; }
unplugs() { unplugs_of read_nullb0; }
base=$(unplugs)
$XK load BLK_MAX_REQUEST_COUNT --value 4 || fail "load failed"
n4=$(unplugs)
$XK set BLK_MAX_REQUEST_COUNT=128 || fail "set failed"
n128=$(unplugs)
hits=$($XK -j status | jq '[.[0].probes[].hits] | add')
$XK unload BLK_MAX_REQUEST_COUNT || fail "unload failed"
after=$(unplugs)
log "unplugs for 64 MiB: N=32 $base, N=4 $n4, N=128 $n128, after unload $after; rewrites $hits"
[ "$base" -ge 100 ] || fail "too few unplugs at baseline ($base)"
[ $((n4 * 10)) -ge $((base * 60)) ] || fail "N=4 flushed $n4 times, want >= 6x $base"
[ "$n128" -lt "$base" ] || fail "N=128 flushed $n128 times, not fewer than $base"
[ $((after * 100)) -ge $((base * 95)) ] && [ $((after * 100)) -le $((base * 105)) ] ||
	fail "after unload $after, want $base +-5%"
[ "$hits" -gt 0 ] || fail "no rewrite counted"
[ "$(probes_left)" = 0 ] || fail "probes left after unload"
dmesg | grep -q "xkernel: set BLK_MAX_REQUEST_COUNT by xk\[[0-9]*\] uid 0: 4 -> 128" ||
	fail "value change not in the kernel log"
dmesg | grep -q "xkernel: unload BLK_MAX_REQUEST_COUNT by xk\[[0-9]*\] uid 0: value 128 -> 32" ||
	fail "unload not in the kernel log"
