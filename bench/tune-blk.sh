#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The sweep of docs/tuning.md: xk tune BLK_MAX_REQUEST_COUNT over 1..128 in
# the guest, block plug flushes per 64 MiB dd from null_blk (4 KiB
# requests), 3 runs per value. The guest's files stay in the guest, so its
# half prints the table, the CSV and the PNG (base64) and this half writes
# them: docs/tune-blk.png and docs/tune-blk.csv by default.
#
#   bench/tune-blk.sh [OUT_PREFIX]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/tune-blk}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
build/xk vm run --timeout 1800 -- bench/tune-blk-guest.sh | tee "$log" |
	sed '/^--- png/,/^--- end/d'
sed -n '/^--- csv/,/^--- end/p' "$log" | sed '1d;$d' > "$out.csv"
sed -n '/^--- png/,/^--- end/p' "$log" | sed '1d;$d' | base64 -d > "$out.png"
echo "wrote $out.csv and $out.png"
