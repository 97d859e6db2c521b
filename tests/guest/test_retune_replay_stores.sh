#!/bin/bash
# MIN_LRU_BATCH retuned live where a replayed region stores twice. Below
# 64 (its one-word bitmap on walk_pud_range's stack bounds it there) the
# builds change walk_pmd_range_locked's bit search and register
# allocation; at 32 the region at +0x14b spills r14 and r15 in the other
# order. Every region of the function replays the build with 32, stores
# first (each where the baseline's region stores, through rsp unchanged),
# then registers. Multi-gen LRU aging is forced over a process's 300 MiB
# (debugfs lru_gen), which walks its page tables through the function:
# the replays run (hits, the two-store region among them), the process's
# memory reads back intact, no oops, and unload leaves no probe.
. "$(dirname "$0")/lib.sh"
trap 'cleanup_xk; kill $pid 2>/dev/null; true' EXIT
LRU=/sys/kernel/debug/lru_gen
[ -w $LRU ] || fail "no $LRU: the kernel has no multi-gen LRU"
echo y > /sys/kernel/mm/lru_gen/enabled || fail "cannot enable the multi-gen LRU"
# touch 300 MiB, wait for the aging, then check every page still holds its byte
python3 -c '
import os, sys, time
n = 300 * 1024 * 1024
b = bytearray(n)
for i in range(0, n, 4096):
    b[i] = (i >> 12) & 0xff
open("/tmp/lru.ready", "w").close()
while not os.path.exists("/tmp/lru.done"):
    time.sleep(0.1)
bad = sum(1 for i in range(0, n, 4096) if b[i] != (i >> 12) & 0xff)
print("pages changed:", bad)
sys.exit(1 if bad else 0)
' > /tmp/lru.out 2>&1 &
pid=$!
rm -f /tmp/lru.done
for _ in $(seq 100); do [ -e /tmp/lru.ready ] && break; sleep 0.2; done
[ -e /tmp/lru.ready ] || fail "the workload did not start"
# force aging of the root memcg's node 0, four generations
age() {
	local memcg gen
	memcg=$(awk '/^memcg/ { print $2; exit }' $LRU)
	for _ in 1 2 3 4; do
		gen=$(awk '/^ *node/ { n = 1; next } n && /^ +[0-9]+ / { g = $1 } END { print g }' $LRU)
		echo "+ $memcg 0 $gen 1 1" > $LRU || fail "aging refused"
	done
}
$XK set MIN_LRU_BATCH=32 > /tmp/mlb.out 2> /tmp/mlb.err ||
	fail "set MIN_LRU_BATCH=32: $(cat /tmp/mlb.err)"
cat /tmp/mlb.out
age
hits() {	# hits of walk_pmd_range_locked's probes, all or at offset $1
	$XK -j status | jq "[.[] | select(.constant == \"MIN_LRU_BATCH\") | .probes[] |
		select(.function == \"walk_pmd_range_locked\") | select(${1:+.offset == $1 and} true) |
		.hits] | add // 0"
}
all=$(hits)
two=$(hits $((0x158)))
log "MIN_LRU_BATCH=32: walk_pmd_range_locked's replays ran $all times, the two-store region's $two"
[ "$all" -gt 0 ] || fail "no replay of walk_pmd_range_locked ran"
[ "$two" -gt 0 ] || fail "the two-store region never replayed"
expect_eq "value in force" "$($XK -j status | jq '.[] | select(.constant == "MIN_LRU_BATCH") | .value')" 32
$XK unload MIN_LRU_BATCH || fail "unload"
age
touch /tmp/lru.done
wait $pid || fail "the workload's memory changed: $(cat /tmp/lru.out)"
[ "$(probes_left)" = 0 ] || fail "probes left: $(cat /sys/kernel/debug/kprobes/list)"
log "MIN_LRU_BATCH: retuned to 32 and back under forced aging, replays with two stores ran, memory intact"
