#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The guest half of bench/tune-blk.sh.
set -euo pipefail
modprobe null_blk nr_devices=1 max_sectors=8
echo 1024 > /sys/block/nullb0/queue/read_ahead_kb
echo "guest kernel: $(uname -r)"
echo "+ xk tune BLK_MAX_REQUEST_COUNT --values 1,2,4,8,16,32,64,128 --repeat 3 \\"
echo "    --run 'bench/blk-unplugs.sh /dev/nullb0 64' --metric \"awk '/^unplugs/ {print \$2}'\" \\"
echo "    --label 'plug flushes per 64 MiB read' --log-y --csv /tmp/tune-blk.csv --plot /tmp/tune-blk.png"
build/xk tune BLK_MAX_REQUEST_COUNT --values 1,2,4,8,16,32,64,128 --repeat 3 \
	--run 'bench/blk-unplugs.sh /dev/nullb0 64' \
	--metric "awk '/^unplugs/ {print \$2}'" \
	--label 'plug flushes per 64 MiB read (block:block_unplug)' --log-y \
	--csv /tmp/tune-blk.csv --plot /tmp/tune-blk.png
echo "--- csv"
cat /tmp/tune-blk.csv
echo "--- end"
echo "--- png"
base64 /tmp/tune-blk.png
echo "--- end"
build/xk unload --all > /dev/null
rmmod xkernel null_blk 2>/dev/null || true
