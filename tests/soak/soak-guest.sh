#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The soak (make soak; runs in the guest): XK_SOAK_CYCLES (default 1000)
# load/set/unload cycles of BLK_MAX_REQUEST_COUNT, the three transition
# modes in turn and every fifth cycle settled before the unload, while fio
# reads null_blk, iperf3 runs over loopback and four loops fork and exit
# as fast as they can. Checks: every step either succeeds or fails with the
# value in force unchanged (a global or per-task transition may time out
# under this load; nothing half-applied), the kernel log holds no oops, BUG
# or warning, no probe is left, xkernel.ko unloads, and the kmalloc caches
# hold no more objects than before (quiesced, page cache dropped): no cache
# the module allocates from grows by half the cycle count, which a
# per-cycle leak of the module would.
set -u
cd "$(dirname "$0")/../.."
[ "${XK_GUEST:-}" = 1 ] || { echo "run me in the guest: make soak" >&2; exit 2; }
export XK_TOP=$PWD
. tests/guest/lib.sh
cycles=${XK_SOAK_CYCLES:-1000}
mark="xk-soak-$$"
echo "$mark" > /dev/kmsg

# objects in use per kmalloc cache, quiesced ("cache count per-slab" lines).
# The module allocates with GFP_KERNEL, never charged to a cgroup: a leak
# of it shows in kmalloc-N. The workloads' own objects (sockets, forks)
# are charged and live in kmalloc-cg-N, whose count moves by a few hundred
# between two quiesced moments whatever the cycle count: left out.
kmalloc_objs() {
	echo 3 > /proc/sys/vm/drop_caches
	sleep 1
	awk '/^kmalloc-[0-9]/ { print $1, $2, $5 }' /proc/slabinfo
}
# the growth of each cache beyond a slab per CPU (a CPU's slab counts as in
# use whole): "cache growth", the largest first
kmalloc_growth() {
	awk 'NR == FNR { a[$1] = $2; next }
		{ d = $2 - a[$1] - 2 * $3; if (d > m) { m = d; c = $1 } }
		END { print (c ? c : "none"), m + 0 }' <(echo "$1") <(echo "$2")
}
stop_load() {
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	pkill iperf3 2>/dev/null
	pids=()
}
pids=()
trap 'stop_load; cleanup_xk; rmmod null_blk 2>/dev/null' EXIT

modprobe null_blk nr_devices=1 || fail "no null_blk"
# the module in and out once, so that its first load is not counted
$XK load BLK_MAX_REQUEST_COUNT --value 8 >/dev/null || fail "first load"
$XK unload --all >/dev/null
rmmod xkernel || fail "rmmod after the first load"
objs0=$(kmalloc_objs)

fio --name=soak --filename=/dev/nullb0 --rw=randread --bs=4k --iodepth=16 \
	--ioengine=libaio --direct=1 --time_based --runtime=100000 \
	--eta=never --output=/dev/null >/dev/null 2>&1 & pids+=($!)
iperf3 -s -D -1 >/dev/null 2>&1 || iperf3 -s -D >/dev/null 2>&1
sleep 0.5
iperf3 -c 127.0.0.1 -t 100000 >/dev/null 2>&1 & pids+=($!)
for _ in 1 2 3 4; do
	(while :; do /bin/true; done) & pids+=($!)
done

# the cycles in one process through libxk (tests/soak/soak_cycles.c),
# 50 at a time, xkernel.ko removed and inserted again between the chunks
# a copy: a make on the host meanwhile rewrites the cache's tables
tbl=$(mktemp)
cp "$($XK kernel info --field dir)/scopes/BLK_MAX_REQUEST_COUNT.scope" "$tbl" ||
	fail "no table of BLK_MAX_REQUEST_COUNT"
out=$(mktemp)
t0=$(date +%s)
for ((i = 0; i < cycles; i += 50)); do
	n=$((cycles - i < 50 ? cycles - i : 50))
	insmod "$MODULE" || fail "insmod before cycle $i"
	st=0
	build/soak/soak_cycles "$tbl" $n $i >> "$out" || st=$?
	if [ "$st" != 0 ]; then
		grep '^#' "$out" | tail -5
		[ "$st" = 1 ] &&
			fail "a step left another value than its outcome says (cycle $i..)"
		fail "soak_cycles stopped with status $st in cycles $i..$((i + n - 1))"
	fi
	rmmod xkernel || fail "rmmod xkernel after cycle $((i + n - 1))"
	echo "# $((i + n)) cycles, $(($(date +%s) - t0)) s"
done
t1=$(date +%s)
stop_load
[ "$(probes_left)" = 0 ] || fail "probes left: $(cat /sys/kernel/debug/kprobes/list)"
rmmod xkernel 2>/dev/null
grep -q '^xkernel ' /proc/modules && fail "xkernel.ko is still loaded"
objs1=$(kmalloc_objs)
bad=$(dmesg | sed -n "/$mark/,\$p" | grep -E "Oops|BUG:|WARNING:|general protection|Call Trace")
[ -z "$bad" ] || fail "kernel log: $bad"
echo "soak: $cycles cycles in $((t1 - t0)) s under fio, iperf3 and a fork storm"
for m in immediate global per-task; do
	awk -v m=$m '$1 == "soak" && $2 == m { lo += $4; lf += $6; so += $8; sf += $10 }
		END { printf "  %s: load ok %d failed %d, set ok %d failed %d (a failure left the value before it)\n", m, lo, lf, so, sf }' "$out"
done
settled=$(awk '$1 == "soak" && $2 == "settled" { n += $3 } END { print n + 0 }' "$out")
read -r cache grew <<< "$(kmalloc_growth "$objs0" "$objs1")"
echo "  settled $settled times; the kmalloc cache that grew most beyond a slab per CPU: $cache, by $grew objects"
# a leak of one object per cycle grows its cache by the cycle count; the
# workloads' own objects spread over the caches (a few hundred in all)
[ "$grew" -lt $((cycles / 2)) ] ||
	fail "$cache grew by $grew objects over $cycles cycles: a leak"
echo "ok - soak"
