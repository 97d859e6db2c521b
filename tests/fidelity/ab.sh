#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-fidelity: a retuned kernel against the kernel compiled with the
# value. For each constant of tests/fixtures/fidelity/ab.conf (one at least
# of every span form the stock kernel's vmlinux has), on this host:
#   - its scope table, the value prepared (xk gen --prepare: per-value
#     points and replays built here, not in the guest);
#   - a livepatch that compiles the value into every function of its spans
#     (build/klp-build, the kpatch way, from the same objects);
# for the golden module's constants: xk_golden.ko compiled with all their
# values at once. Then one boot of the deterministic guest
# (tests/fidelity/ab-guest.sh): each observable read at the compiled-in
# value, set live by xk, then under the livepatch (or the module compiled
# with the values); the two must agree exactly, and differ from the
# compiled-in reading (else the comparison shows nothing).
# TAP; the status is 0 when every comparison passed.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 125
top=$PWD
XK=build/xk
out=build/fidelity
conf=tests/fixtures/fidelity/ab.conf
: "${KHEADERS:=$($XK -q kernel info --field headers)}"
rm -rf "$out" && mkdir -p "$out/golden" || exit 1
: > "$out/rows"
failed=0
start=$(date +%s)

# the kernel's constants: table, value prepared, livepatch
while read -r c v observe _ <&3; do
	case $c in ''|'#'*|golden) continue ;; esac
	if ! $XK -q gen "$c" > /dev/null 2> "$out/$c.err" ||
	   ! $XK -q gen --prepare "$v" "$c" > /dev/null 2>> "$out/$c.err"; then
		echo "not ok - $c=$v: xk gen: $(tail -n 1 "$out/$c.err")"
		failed=1
		continue
	fi
	if ! build/klp-build -o "$top/$out/$c" "$c=$v" > "$out/$c.klp" 2>> "$out/$c.err"; then
		echo "not ok - $c=$v: klp-build: $(tail -n 1 "$out/$c.err")"
		failed=1
		continue
	fi
	ko=$(sed -n "s|^ko $top/||p" "$out/$c.klp")
	echo "# $c=$v: livepatch $(basename "$ko") replaces $(grep -c '^function ' "$out/$c.klp") functions"
	echo "$c $v $observe $ko" >> "$out/rows"
done 3< "$conf"

# the golden module's constants: tables, values prepared, the module
# compiled with every value (its source's #define lines changed)
golden=()
cp tests/fixtures/golden/{xk_golden.c,compat.h,Kbuild} "$out/golden/" || exit 1
while read -r tag c v <&3; do
	[ "$tag" = golden ] || continue
	if ! $XK -q gen --catalog tests/fixtures/golden/golden.conf "$c" > /dev/null 2> "$out/$c.err" ||
	   ! $XK -q gen --catalog tests/fixtures/golden/golden.conf --prepare "$v" "$c" \
		> /dev/null 2>> "$out/$c.err"; then
		echo "not ok - $c=$v: xk gen: $(tail -n 1 "$out/$c.err")"
		failed=1
		continue
	fi
	# a macro's #define line, or a variable's line (golden.conf: line, text)
	entry=$(sed -n "/^\[$c\]/,/^\[/p" tests/fixtures/golden/golden.conf)
	if grep -q '^kind = variable' <<< "$entry"; then
		line=$(sed -n 's/^line = //p' <<< "$entry")
		text=$(sed -n 's/^text = //p' <<< "$entry")
		[ -n "$line" ] && [ -n "$text" ] &&
			sed -i "${line}s/\b$text\b/$v/" "$out/golden/xk_golden.c"
		sed -n "${line:-0}p" "$out/golden/xk_golden.c" | grep -qw -- "$v" ||
			{ echo "not ok - $c: line ${line:-?} of xk_golden.c not changed to $v"
			  failed=1; continue; }
	elif grep -q "^#define $c [0-9]*\$" "$out/golden/xk_golden.c"; then
		sed -i "s/^#define $c [0-9]*\$/#define $c $v/" "$out/golden/xk_golden.c"
	else
		echo "not ok - $c: no '#define $c N' line in xk_golden.c"
		failed=1
		continue
	fi
	golden+=("$c=$v")
done 3< "$conf"
if ! $XK -q kernel exec -- make -C "$KHEADERS" M="$top/$out/golden" modules \
	> "$out/golden/build.log" 2>&1; then
	echo "not ok - xk_golden.ko with ${golden[*]}: see $out/golden/build.log"
	exit 1
fi
echo "${golden[*]}" > "$out/golden.values"
echo "# prepared in $(($(date +%s) - start)) s: $(wc -l < "$out/rows") constants, ${#golden[@]} golden ones"

# the deterministic guest: single-threaded TCG (a livepatch transition
# re-patches live call sites, which multi-threaded TCG does not always
# see at once), one boot for every comparison
build/xk vm run --deterministic --smp 1 --timeout 1800 -- \
	tests/fidelity/ab-guest.sh "$out/rows" "$out/golden/xk_golden.ko" "$out/golden.values" ||
	failed=1
exit $failed
