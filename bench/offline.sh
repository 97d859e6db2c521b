#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Offline cost per constant of the catalog: xk build + xk gen, cold (the
# variant cache and the constant's baseline objects removed) and warm
# (everything cached). Prints one line per constant and the mean.
# Usage: bench/offline.sh [CONSTANT...]
set -euo pipefail
cd "$(dirname "$0")/.."
XK=build/xk
dir=$($XK kernel info --field dir)
consts=("$@")
[ ${#consts[@]} -gt 0 ] || mapfile -t consts < <($XK build --list)
printf '%-24s %8s %8s %10s %6s %9s\n' constant cold_s warm_s analysis_s spans supported
sum_cold=0 sum_warm=0
for c in "${consts[@]}"; do
	for base in $($XK -j build "$c" | jq -r '.objects[].baseline'); do
		rm -f "$base"
	done
	rm -rf "$dir/xk-build"
	t0=$(date +%s%N)
	$XK -q -j gen "$c" > /tmp/xk-bench-cold.json
	t1=$(date +%s%N)
	$XK -q -j gen "$c" > /tmp/xk-bench-warm.json
	t2=$(date +%s%N)
	cold=$(( (t1 - t0) / 1000000 ))
	warm=$(( (t2 - t1) / 1000000 ))
	sum_cold=$((sum_cold + cold))
	sum_warm=$((sum_warm + warm))
	printf '%-24s %8.2f %8.2f %10.3f %6d %9d\n' "$c" \
		"$(echo "$cold / 1000" | bc -l)" "$(echo "$warm / 1000" | bc -l)" \
		"$(jq .analysis_seconds /tmp/xk-bench-warm.json)" \
		"$(jq .spans /tmp/xk-bench-warm.json)" \
		"$(jq .supported /tmp/xk-bench-warm.json)"
done
n=${#consts[@]}
printf '%-24s %8.2f %8.2f   (2 cores: %s)\n' mean \
	"$(echo "$sum_cold / $n / 1000" | bc -l)" "$(echo "$sum_warm / $n / 1000" | bc -l)" \
	"$(nproc) CPUs"
