#!/bin/bash
# KYBER_ASYNC_PERCENT retuned live in the replayed form, in a module.
# kyber_depth_updated() sets the async depth to nr_requests * 75 / 100:
# the compiler multiplies by 75 with two leas and divides by 100 with a
# magic multiply, and with 84 or 50 it picks other registers and another
# schedule, so no immediate carries the constant and no build of another
# value has the baseline's shape. The builds differ from the baseline in
# straight-line regions only: the module replays there what the build
# with the value in force computes, from the same registers.
# The depth is recomputed whenever nr_requests changes and debugfs shows
# it: default (75%), loaded at 50, set 84, unloaded (75% again). A value
# changes only when no thread is inside the functions (global, even when
# immediate is asked), and unload goes back to 75 that way first.
. "$(dirname "$0")/lib.sh"
modprobe null_blk nr_devices=1 || fail "no null_blk"
modprobe kyber-iosched || fail "no kyber-iosched"
trap 'cleanup_xk; echo none > /sys/block/nullb0/queue/scheduler; rmmod null_blk' EXIT
echo kyber > /sys/block/nullb0/queue/scheduler || fail "kyber does not take nullb0"
q=/sys/block/nullb0/queue/nr_requests
dbg=/sys/kernel/debug/block/nullb0/sched/async_depth
depth() {	# the depth computed with nr_requests $1: the kernel calls
		# kyber_depth_updated() before it stores the new count, so
		# a second write (of another value) computes from $1
	echo "$1" > $q && echo $(($1 / 2)) > $q || fail "nr_requests $1"
	cat $dbg
}
before=$(depth 64)
$XK load --value 50 KYBER_ASYNC_PERCENT 2> /tmp/ky.err || fail "load 50 failed: $(cat /tmp/ky.err)"
at50=$(depth 64)
at50b=$(depth 40)
$XK set KYBER_ASYNC_PERCENT=84 > /tmp/ky.out 2> /tmp/ky.err || fail "set 84 failed: $(cat /tmp/ky.err)"
cat /tmp/ky.out
# asked immediate (the default), switched when no thread was inside:
# between two regions a thread holds the variant's registers
grep -q "(global," /tmp/ky.out || fail "a replayed constant switched immediately: $(cat /tmp/ky.out)"
at84=$(depth 64)
hits=$($XK -j status | jq '[.[] | select(.constant == "KYBER_ASYNC_PERCENT") | (.probes // .spans)[].hits] | add')
$XK unload KYBER_ASYNC_PERCENT || fail "unload failed"
back=$(depth 64)
log "async depth at 64 requests: default $before, 50 -> $at50 (40 requests: $at50b), 84 -> $at84, unloaded $back; $hits replays"
expect_eq "default" "$before" $((64 * 75 / 100))
expect_eq "at 50" "$at50" $((64 * 50 / 100))
expect_eq "at 50, 40 requests" "$at50b" $((40 * 50 / 100))
expect_eq "at 84" "$at84" $((64 * 84 / 100))
expect_eq "unloaded" "$back" "$before"
[ "${hits:-0}" -gt 0 ] || fail "no replay counted"
[ "$(grep -c kyber_depth_updated /sys/kernel/debug/kprobes/list)" = 0 ] || fail "probes left"
