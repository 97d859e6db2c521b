#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fidelity across the bounds: each constant's table checked against the
# kernel compiled with values spread over its bounds (xk gen --verify: the
# objects of its affine spans built with each value, every span analysed
# again with that build as its check). Prints per constant the spans that
# agree, disagree (with the first reason) and were not compared, then the
# totals.
#   bench/fidelity.sh [--values K] [CONSTANT...]   (default: the catalog)
# K values per constant (default 5): the bounds, and K-2 between them,
# spaced geometrically, the default left out. Builds what the variant cache
# lacks: seconds per object and value.
set -u
cd "$(dirname "$0")/.." || exit
XK=${XK:-build/xk}
k=5
if [ "${1:-}" = --values ]; then
	k=$2
	shift 2
fi
if [ $# -gt 0 ]; then
	names=("$@")
else
	mapfile -t names < <($XK gen --list | awk '{print $1}')
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

agree=0 disagree=0 other=0 pervalue=0 n=0 bad=0 nocheck=0
printf '%-36s %7s %6s %6s %6s  %s\n' constant values agree differ other "first difference"
for c in "${names[@]}"; do
	$XK -q gen "$c" -o "$tmp/t.scope" >/dev/null 2>&1 || { echo "$c: xk gen failed"; continue; }
	read -r lo hi < <(sed -n 's/^bounds //p' "$tmp/t.scope")
	def=$(sed -n 's/^default //p' "$tmp/t.scope")
	args=()
	for v in $(bench/spread-values.py "$lo" "$hi" "$def" "$k"); do
		args+=(--verify "$v")
	done
	$XK -q -j gen "$c" "${args[@]}" -o "$tmp/t.scope" > "$tmp/j" 2>"$tmp/e"
	if ! jq -e .verify "$tmp/j" >/dev/null 2>&1; then
		# a value of the bounds the kernel does not compile with is a
		# finding too: name it
		printf '%-36s cannot check: %.160s\n' "$c" \
			"$( (jq -r '.error // empty' "$tmp/j" 2>/dev/null; cat "$tmp/e") |
			   grep -m1 -E 'error|failed' | tr -s ' ')"
		nocheck=$((nocheck + 1))
		continue
	fi
	read -r a d o p < <(jq -r '[([.verify[].agree]|add), ([.verify[].disagree]|add),
		([.verify[].other]|add), ([.verify[].per_value]|add)] | @tsv' "$tmp/j")
	why=$(jq -r '[.verify[] | select(.disagree > 0) | "N=\(.value): \(.why[0])"][0] // ""' "$tmp/j")
	printf '%-36s %7s %6s %6s %6s  %.100s\n' "$c" "$((${#args[@]} / 2))" "$a" "$d" "$o" "$why"
	agree=$((agree + a)) disagree=$((disagree + d)) other=$((other + o))
	pervalue=$((pervalue + p)) n=$((n + 1))
	[ "$d" -gt 0 ] && bad=$((bad + 1))
done
echo
echo "constants:                   $n ($bad with a span that disagrees at some value)"
echo "could not be checked:        $nocheck (a value of the bounds did not compile, or gen failed)"
echo "span checks that agree:      $agree"
echo "span checks that disagree:   $disagree"
echo "not compared (other code):   $other"
echo "per-value/replayed (at set): $pervalue"
