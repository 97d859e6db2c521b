#!/bin/bash
# An eBPF policy gives BLK_MAX_REQUEST_COUNT a value per block device: two
# null_blk devices read at the same time, nullb0 with 4 and nullb1 with 128.
# Each dd's plug flushes (block:block_unplug events of its pid) follow its
# own device's value; unloading brings 32 back for both.
. "$(dirname "$0")/lib.sh"
POLICY=$XK_TOP/build/bpf/blk_per_device.bpf.o
policies_or_refused
PINS=/sys/fs/bpf/xkernel/blk_per_device
trap cleanup_xk EXIT
[ -f "$POLICY" ] || fail "no $POLICY (make policies)"
modprobe null_blk nr_devices=2 max_sectors=8 || fail "no null_blk"
trap 'cleanup_xk; rmmod null_blk' EXIT
for d in nullb0 nullb1; do echo 1024 > /sys/block/$d/queue/read_ahead_kb; done
echo 65536 > $TRACE/buffer_size_kb
read_both() {
	dd if=/dev/nullb0 of=/dev/null bs=1M count=32 2>/dev/null & p0=$!
	dd if=/dev/nullb1 of=/dev/null bs=1M count=32 2>/dev/null & p1=$!
	wait $p0 $p1
}
# both devices at once; prints "flushes-of-nullb0 flushes-of-nullb1"
unplugs_both() {
	trace_unplugs read_both
	echo "$(traced_unplugs $p0) $(traced_unplugs $p1)"
}
read -r b0 b1 <<< "$(unplugs_both)"
$XK load BLK_MAX_REQUEST_COUNT --policy "$POLICY" --param dev0=nullb0 \
	--param value0=4 --param dev1=nullb1 --param value1=128 || fail "policy load failed"
[ -d $PINS ] || fail "no policy directory $PINS"
read -r p0 p1 <<< "$(unplugs_both)"
$XK status
st=$($XK -j status)
ctx_value() { jq -r --arg l "$1" '.[0].contexts[] | select(.label == $l) | .value' <<< "$st"; }
ctx_hits() { jq -r --arg l "$1" '.[0].contexts[] | select(.label == $l) | .choices' <<< "$st"; }
expect_eq "policy named in status" "$(jq -r '.[0].policy' <<< "$st")" blk_per_device
expect_eq "value chosen for nullb0" "$(ctx_value nullb0)" 4
expect_eq "value chosen for nullb1" "$(ctx_value nullb1)" 128
[ "$(ctx_hits nullb0)" -gt 0 ] && [ "$(ctx_hits nullb1)" -gt 0 ] || fail "no choices counted"
writes=$(jq '.[0].writes' <<< "$st")
[ "$writes" -gt 0 ] || fail "no policy write counted"
expect_eq "refused writes" "$(jq '.[0].refused' <<< "$st")" 0
# the value is the policy's: xk set is refused while it is loaded
out=$($XK set BLK_MAX_REQUEST_COUNT=8 2>&1) && fail "xk set accepted under a policy"
grep -q "chosen by policy blk_per_device" <<< "$out" || fail "xk set error: $out"
$XK unload BLK_MAX_REQUEST_COUNT || fail "unload failed"
[ -e $PINS ] && fail "pins left in $PINS"
read -r a0 a1 <<< "$(unplugs_both)"
log "flushes per 32 MiB, both devices at once: default $b0/$b1, policy (nullb0=4, nullb1=128) $p0/$p1, after unload $a0/$a1; $writes policy writes"
[ "$b0" -ge 50 ] && [ "$b1" -ge 50 ] || fail "too few unplugs at baseline ($b0/$b1)"
[ $((p0 * 10)) -ge $((b0 * 50)) ] || fail "nullb0 (4) flushed $p0 times, want >= 5x $b0"
[ $((p1 * 10)) -le $((b1 * 7)) ] || fail "nullb1 (128) flushed $p1 times, want <= 0.7x $b1"
[ $((a0 * 100)) -ge $((b0 * 90)) ] && [ $((a0 * 100)) -le $((b0 * 110)) ] ||
	fail "nullb0 after unload $a0, want $b0 +-10%"
[ $((a1 * 100)) -ge $((b1 * 90)) ] && [ $((a1 * 100)) -le $((b1 * 110)) ] ||
	fail "nullb1 after unload $a1, want $b1 +-10%"
[ "$(probes_left)" = 0 ] || fail "probes left after unload"
dmesg | grep -q "xkernel: load BLK_MAX_REQUEST_COUNT: values chosen by policy blk_per_device" ||
	fail "policy load not in the kernel log"
