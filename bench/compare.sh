#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xkernel against a livepatch of the same constant, side by side in one guest
# boot (docs/compare.md): BLK_MAX_REQUEST_COUNT = VALUE (default 4) compiled
# into blk_add_rq_to_plug and blk_start_plug_nr_ios by a livepatch module the
# project builds from the stock source the kpatch way (build/klp-build), and
# the same value set by xk (immediate, global, settled where xk has settle):
# load and transition times (median, p99), guest instructions per request of
# the plug workload, and the plug flushes each causes (which must agree).
#
#   bench/compare.sh [VALUE [XK_ROUNDS [LP_ROUNDS]]]
#
# The guest is the deterministic one (single-threaded TCG, -icount): the
# livepatch patches live text, and under multi-threaded TCG a livepatch
# transition occasionally oopsed at a call site being re-patched (a TCG
# cross-modifying-code effect); instruction counts repeat there.
set -euo pipefail
cd "$(dirname "$0")/.."
V=${1:-4} NXK=${2:-20} NLP=${3:-5}
OUT=build/klp
make -s policies > /dev/null	# the policy row (blk_per_device)
mkdir -p $OUT
# the table xk loads and klp-build reads, made by this build of xk
build/xk -q gen BLK_MAX_REQUEST_COUNT -o $OUT/BLK_MAX_REQUEST_COUNT.scope > /dev/null
for v in "$V" 32; do
	rm -rf "$OUT/v$v"
	build/klp-build -t $OUT/BLK_MAX_REQUEST_COUNT.scope -o "$PWD/$OUT/v$v" \
		BLK_MAX_REQUEST_COUNT="$v" > "$OUT/v$v.txt"
done
echo "== the livepatch, built the kpatch way (build/klp-build)"
sed 's/^/  /' "$OUT/v$V.txt"
echo "== side by side (one deterministic guest boot)"
build/xk vm run --deterministic --smp 1 --timeout 3000 -- bench/compare-guest.sh \
	$OUT/BLK_MAX_REQUEST_COUNT.scope "$V" \
	"$(sed -n 's/^ko //p' "$OUT/v$V.txt" | sed "s|^$PWD/||")" \
	"$(sed -n 's/^ko //p' "$OUT/v32.txt" | sed "s|^$PWD/||")" "$NXK" "$NLP"
