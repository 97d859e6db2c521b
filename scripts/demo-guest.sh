#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The guest half of scripts/demo.sh.
set -euo pipefail
XK=build/xk
echo "guest kernel: $(uname -r) ($(grep -o 'Debian [0-9][^ )]*' /proc/version | tail -n 1)), kprobes enabled: $(cat /sys/kernel/debug/kprobes/enabled)"
modprobe null_blk nr_devices=2 max_sectors=8
modprobe mq-deadline 2>/dev/null || true
# behind mq-deadline, every plug flush is traced on every kernel (6.1
# traces none where it issues straight to the driver)
for d in nullb0 nullb1; do
	echo 1024 > /sys/block/$d/queue/read_ahead_kb
	echo mq-deadline > /sys/block/$d/queue/scheduler
done
T=/sys/kernel/tracing
echo 16384 > $T/buffer_size_kb
run() {
	echo 3 > /proc/sys/vm/drop_caches
	echo > $T/trace
	echo 1 > $T/events/block/block_unplug/enable
	local t0 t1
	t0=$(date +%s%N)
	dd if=/dev/nullb0 of=/dev/null bs=1M count=64 2>/dev/null
	t1=$(date +%s%N)
	echo 0 > $T/events/block/block_unplug/enable
	printf '  %-34s %5d plug flushes (block:block_unplug), dd %4d ms\n' "$1" \
		"$(grep -c block_unplug $T/trace)" $(( (t1 - t0) / 1000000 ))
}
echo "workload: dd 64 MiB from null_blk (4 KiB requests), readahead 1 MiB"
run "compiled-in value 32:"
$XK load BLK_MAX_REQUEST_COUNT --value 4
run "retuned live to 4:"
$XK set BLK_MAX_REQUEST_COUNT=128
run "retuned live to 128:"
$XK status
$XK unload BLK_MAX_REQUEST_COUNT
run "after unload (32 again):"
# per device: an eBPF policy chooses the value for each request's device
both() {
	echo 3 > /proc/sys/vm/drop_caches
	echo > $T/trace
	echo 1 > $T/events/block/block_unplug/enable
	dd if=/dev/nullb0 of=/dev/null bs=1M count=64 2>/dev/null & local p0=$!
	dd if=/dev/nullb1 of=/dev/null bs=1M count=64 2>/dev/null & local p1=$!
	wait $p0 $p1
	echo 0 > $T/events/block/block_unplug/enable
	printf '  %-34s nullb0 %5d, nullb1 %5d plug flushes\n' "$1" \
		"$(grep -c -- "-$p0 .*block_unplug" $T/trace)" "$(grep -c -- "-$p1 .*block_unplug" $T/trace)"
}
echo "both devices read at once, 64 MiB each:"
policy=(load BLK_MAX_REQUEST_COUNT --policy build/bpf/blk_per_device.bpf.o
	--param dev0=nullb0 --param value0=4 --param dev1=nullb1 --param value1=128)
v=$(uname -r)
if [ -e /sys/kernel/btf/vmlinux ] &&
	{ [ "${v%%.*}" -gt 6 ] || { v=${v#*.}; [ "${v%%[!0-9]*}" -ge 10 ]; }; }; then
	both "compiled-in value 32:"
	$XK "${policy[@]}"
	both "policy: nullb0 4, nullb1 128:"
	$XK status
	$XK unload BLK_MAX_REQUEST_COUNT
	both "after unload (32 again):"
else
	# eBPF policies need Linux 6.10 and the kernel's BTF: the refusal, by
	# name, nothing loaded
	if out=$($XK "${policy[@]}" 2>&1); then
		echo "demo: a policy loaded on Linux $(uname -r)" >&2
		exit 1
	fi
	echo "  per-device policy on $(uname -r): $out"
fi
echo "kernel log:"
dmesg | grep 'xkernel: \(load\|set\|unload\)' | sed 's/^/  /'
