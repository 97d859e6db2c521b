#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runtime figures in the guest (stock kernel, QEMU TCG):
#   load and transition times of BLK_MAX_REQUEST_COUNT (median, p99), and a
#   global transition of the golden module's G_HOLD;
#   per-trigger cost of a rewrite probe on a hot path (MAX_RW_COUNT's span in
#   vfs_write, hit by every write of dd bs=1), jump-optimized and int3,
#   against no probe and against an eBPF policy choosing the same value
#   (bench/rw_fixed.bpf.c), measured in guest instructions (-icount shift=0:
#   1 instruction = 1 ns of guest time), which TCG makes repeatable.
# Absolute times under TCG are only indicative; ratios in one run count.
set -euo pipefail
cd "$(dirname "$0")/.."
build/xk -q gen BLK_MAX_REQUEST_COUNT > /dev/null
build/xk -q gen MAX_RW_COUNT > /dev/null
build/xk -q gen --catalog tests/fixtures/golden/golden.conf G_HOLD > /dev/null
make -s policies > /dev/null
echo "== load and transition times (single-threaded TCG, wall clock)"
build/xk vm run --timeout 900 -- bench/runtime-guest.sh times
echo "== per-trigger cost (deterministic: guest instructions)"
build/xk vm run --deterministic --smp 1 --timeout 900 -- bench/runtime-guest.sh trigger
