#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A workload for xk tune BLK_MAX_REQUEST_COUNT, run in the guest: reads
# MiB (default 64) from DEV (default /dev/nullb0) with dd, the page cache
# dropped first, and prints how often the task's block plug was flushed
# (block:block_unplug events) as "unplugs N", and dd's own line.
#
#   bench/blk-unplugs.sh [DEV [MiB]]
# Set up null_blk first (4 KiB requests, readahead 1 MiB):
#   modprobe null_blk nr_devices=1 max_sectors=8
#   echo 1024 > /sys/block/nullb0/queue/read_ahead_kb
set -eu
dev=${1:-/dev/nullb0}
mib=${2:-64}
T=/sys/kernel/tracing
[ "$(cut -d" " -f1 $T/buffer_size_kb)" -ge 16384 ] || echo 16384 > $T/buffer_size_kb
echo 3 > /proc/sys/vm/drop_caches
echo > $T/trace
echo 1 > $T/events/block/block_unplug/enable
dd if="$dev" of=/dev/null bs=1M count="$mib" 2>&1 | tail -n 1
echo 0 > $T/events/block/block_unplug/enable
echo "unplugs $(grep -c block_unplug $T/trace)"
