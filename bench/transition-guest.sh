#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Global transition times of a loaded BLK_MAX_REQUEST_COUNT, in the guest:
#   xk vm run -- bench/transition-guest.sh [MODULE.ko] [ROUNDS]
# (MODULE defaults to kmod/xkernel.ko; build/before/xkernel.ko compares an
# older module in the same boot). Prints the median and p99 of the
# transition_ms that `xk -j set --mode global` reports.
set -euo pipefail
cd "$(dirname "$0")/.."
XK=build/xk
mod=${1:-kmod/xkernel.ko}
rounds=${2:-20}
insmod "$mod"
$XK load BLK_MAX_REQUEST_COUNT > /dev/null
for i in $(seq "$rounds"); do
	$XK -j set --mode global BLK_MAX_REQUEST_COUNT=$((64 + i)) | jq .transition_ms
done | sort -n | awk -v name="$mod" '{ v[NR] = $1 } END {
	p99 = v[int((NR * 99 + 99) / 100)]; if (p99 == "") p99 = v[NR];
	printf "%s: global transition n=%d median %.3f ms p99 %.3f ms (min %.3f max %.3f)\n",
		name, NR, v[int((NR + 1) / 2)], p99, v[1], v[NR] }'
dmesg | grep "set BLK_MAX_REQUEST_COUNT" | tail -2
$XK unload --all > /dev/null
rmmod xkernel
