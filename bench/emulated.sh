#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cost of one hit of an emulated span (its int3 at the span's first
# instruction, the programs, ip moved past the span) against a register
# rewrite at a probe point, jump-optimized and int3, in the deterministic
# guest (-icount shift=0: 1 instruction = 1 ns of guest time, repeatable).
# The golden module's probe file calls each golden function once per read:
# G_SCALE (x * 12, a multiply the compiler wrote as lea and shl: the
# multiply form, emulated) and G_TWICE (x ^ 77, an immediate at a probe
# point, optimizable) are loaded in turn; the difference to no probe is
# the cost of their span's one hit per read.
set -euo pipefail
cd "$(dirname "$0")/.."
for c in G_SCALE G_TWICE; do
	build/xk -q gen --catalog tests/fixtures/golden/golden.conf $c > /dev/null
done
build/xk vm run --deterministic --smp 1 --timeout 900 -- bench/emulated-guest.sh
