#!/bin/bash
# A span whose value depends on memory read in it: BLK_PLUG_FLUSH_SIZE is
# compared with the last plugged request's size in memory
# (cmpl $0x1ffff, 0x2c(%r12); ja: flush when it is 128 KiB or more). The
# table names that memory as an input of the update program (input 0 r12
# 44 32); the module reads it at the probe point, fault-tolerantly, and
# recomputes the flags. With 4 KiB requests from null_blk, 4096 makes every
# request flush the plug (one unplug per request instead of one per 32),
# 8192 does not; unloading brings the compiled-in behaviour back. Then a
# memory input with an index register (CAPACITY_GREATER_MARGIN, per-CPU).
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT
tbl=$($XK kernel info --field dir)/scopes/BLK_PLUG_FLUSH_SIZE.scope
grep -q '^input 0 r12 44 32$' "$tbl" || fail "the table has no memory input: $(grep -E '^(input|loc)' "$tbl")"
modprobe null_blk nr_devices=1 max_sectors=8 || fail "no null_blk"
trap 'cleanup_xk; rmmod null_blk' EXIT
echo 1024 > /sys/block/nullb0/queue/read_ahead_kb
echo 16384 > $TRACE/buffer_size_kb
read_nullb0() { dd if=/dev/nullb0 of=/dev/null bs=1M count=16 2>/dev/null; }
unplugs() { unplugs_of read_nullb0; }
base=$(unplugs)
$XK set BLK_PLUG_FLUSH_SIZE=4096 || fail "set 4096 failed"
n4k=$(unplugs)
hits=$($XK -j status | jq '[.[0].probes[].hits] | add')
$XK set BLK_PLUG_FLUSH_SIZE=8192 || fail "set 8192 failed"
n8k=$(unplugs)
faults=$(dmesg | grep -c "BLK_PLUG_FLUSH_SIZE: an access to" || true)
$XK unload BLK_PLUG_FLUSH_SIZE || fail "unload failed"
after=$(unplugs)
log "unplugs for 16 MiB of 4 KiB requests: 128 KiB (compiled-in) $base, 4096 $n4k, 8192 $n8k, after unload $after; rewrites $hits"
[ "$base" -ge 50 ] || fail "too few unplugs at baseline ($base)"
[ "$n4k" -ge $((base * 10)) ] || fail "4096 flushed $n4k times, want >= 10x $base"
[ $((n8k * 100)) -le $((base * 110)) ] || fail "8192 flushed $n8k times, want about $base"
[ $((after * 100)) -ge $((base * 95)) ] && [ $((after * 100)) -le $((base * 105)) ] ||
	fail "after unload $after, want $base +-5%"
[ "$hits" -gt 0 ] || fail "no rewrite counted"
expect_eq "faulting memory inputs" "$faults" 0
[ "$(probes_left)" = 0 ] || fail "probes left after unload"

# A memory input with an index register: CAPACITY_GREATER_MARGIN (1078,
# capacity_greater(a, b): a * 1078 > b * 1024) reads a CPU's capacity
# through its per-CPU address, imul $0x436, 0xb10(%rsi,%r9,1), %rsi with
# r9 = __per_cpu_offset[cpu] (input 0 rsi 2832 64 r9 1): the module takes
# the table (the rules allow the index) and arms it at the live text. The
# span runs on asymmetric or misfit load balancing, which two equal vCPUs
# rarely do: its rewrites are logged, not required (golden G_IDX's test
# checks an indexed input's value); a fault would disarm the constant.
tbl=$($XK kernel info --field dir)/scopes/CAPACITY_GREATER_MARGIN.scope
grep -q '^input 0 rsi 2832 64 r9 1$' "$tbl" ||
	fail "the table has no indexed memory input: $(grep -E '^input' "$tbl")"
$XK set CAPACITY_GREATER_MARGIN=1200 || fail "set CAPACITY_GREATER_MARGIN=1200"
for i in 1 2 3 4 5 6; do timeout 4 sh -c 'while :; do :; done' & done
wait
hits=$($XK -j status | jq -c '[.[] | select(.constant == "CAPACITY_GREATER_MARGIN") |
	.probes[] | "\(.function)+\(.offset): \(.hits)"]')
value=$($XK -j status | jq -r '.[] | select(.constant == "CAPACITY_GREATER_MARGIN") | .value')
faults=$(dmesg | grep -c "CAPACITY_GREATER_MARGIN: an access to" || true)
$XK unload CAPACITY_GREATER_MARGIN || fail "unload CAPACITY_GREATER_MARGIN"
log "CAPACITY_GREATER_MARGIN=1200 under load: rewrites $hits, value $value"
expect_eq "CAPACITY_GREATER_MARGIN still in force" "$value" 1200
expect_eq "faulting indexed memory inputs" "$faults" 0
[ "$(probes_left)" = 0 ] || fail "probes left after unload"
