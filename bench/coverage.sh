#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Coverage of the catalog: runs `xk -q -j gen` on every constant, one at a
# time, and prints per constant the spans supported/total, a status and the
# first refusal reason, then totals and the median and worst seconds.
#
# Status: full (every span supported), partial (some), refused (none),
# no spans (the tool found no code that changes with the constant), not
# built (no object using it is built by this configuration), not in source
# (the kernel's source lacks what the catalog names: an older release),
# tool failure (xk gen failed with another error; its message is the
# reason).
#
# With --oracle K, each constant with a supported span is then checked
# against the kernel compiled with K values spread over its bounds (the
# bounds among them; xk gen --verify, as bench/fidelity.sh does; not in
# the seconds): column "oracle" says agree, differ at N (a span's program
# does not compute what the build with N computes, or its code at N has
# another form), or cannot check (a value of the bounds does not compile),
# and the totals count a constant fully supported after the oracle only
# when the table says full and the oracle agrees.
#
# Usage: bench/coverage.sh [--cold] [--oracle K] [--csv FILE] [--catalog FILE] [CONSTANT...]
#   --cold   remove the variant cache ($(xk kernel info --field dir)/xk-build)
#            before each constant, like bench/offline.sh; default warm
#   --csv    also write constant,spans,supported,status,seconds,first_reason,
#            reasons (every distinct refusal reason, " | " between them),
#            oracle
# Progress goes to stderr, the table to stdout.
set -uo pipefail
cd "$(dirname "$0")/.."
XK=${XK:-build/xk}
cold=0 csv= catalog=() oracle=0
consts=()
while [ $# -gt 0 ]; do
	case $1 in
	--cold) cold=1 ;;
	--oracle) oracle=$2; shift ;;
	--csv) csv=$2; shift ;;
	--csv=*) csv=${1#--csv=} ;;
	--catalog) catalog=(--catalog "$2"); shift ;;
	-h|--help) sed -n '3,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "coverage.sh: unknown option $1" >&2; exit 2 ;;
	*) consts+=("$1") ;;
	esac
	shift
done
command -v jq > /dev/null || { echo "coverage.sh: needs jq" >&2; exit 2; }
[ -x "$XK" ] || { echo "coverage.sh: $XK not built (make build/xk)" >&2; exit 2; }
dir=$($XK kernel info --field dir) || exit 2
[ ${#consts[@]} -gt 0 ] || mapfile -t consts < <($XK gen "${catalog[@]}" --list)
n=${#consts[@]}
[ "$n" -gt 0 ] || { echo "coverage.sh: no constants" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rows=$tmp/rows.tsv
: > "$rows"
: > "$tmp/spans.tsv"

# one line of text: tabs and newlines to spaces
flat() { tr '\t\n' '  ' | sed 's/  */ /g; s/^ //; s/ $//'; }

# the table of constant $1 against the kernel compiled with $oracle values
# of its bounds: "agree", "differ at N: why", or "cannot check: why"
oracle_of() {
	local lo hi def args=() v
	read -r lo hi < <(jq -r '"\(.bounds[0]) \(.bounds[1])"' "$tmp/out.json")
	def=$(jq -r '.default' "$tmp/out.json")
	for v in $(bench/spread-values.py "$lo" "$hi" "$def" "$oracle"); do
		args+=(--verify "$v")
	done
	$XK -q -j gen "${catalog[@]}" "$1" "${args[@]}" -o "$tmp/oracle.scope" \
		> "$tmp/oracle.json" 2> "$tmp/oracle.err"
	if ! jq -e .verify "$tmp/oracle.json" > /dev/null 2>&1; then
		echo "cannot check: $( { jq -r '.error // empty' "$tmp/oracle.json" 2>/dev/null
			cat "$tmp/oracle.err"; } | grep -m1 -E 'error|failed' | flat | cut -c1-120)"
		return
	fi
	jq -r '[.verify[] | select(.disagree > 0) | "differ at \(.value): \(.why[0])"][0]
		// "agree"' "$tmp/oracle.json" | flat | cut -c1-160
}

i=0
for c in "${consts[@]}"; do
	i=$((i + 1))
	[ $cold = 1 ] && rm -rf "$dir/xk-build"
	printf '[%d/%d] %s ... ' "$i" "$n" "$c" >&2
	t0=$(date +%s%N)
	$XK -q -j gen "${catalog[@]}" "$c" > "$tmp/out.json" 2> "$tmp/err.txt"
	rc=$?
	t1=$(date +%s%N)
	secs=$(echo "scale=2; ($t1 - $t0) / 1000000000" | bc)
	secs=$(printf '%.2f' "$secs")
	spans=0 sup=0 first= reasons=
	if [ $rc = 0 ] && jq -e '.spans' "$tmp/out.json" > /dev/null 2>&1; then
		spans=$(jq '.spans' "$tmp/out.json")
		sup=$(jq '.supported' "$tmp/out.json")
		first=$(jq -r '[.span_list[] | select(.why) | .why][0] // ""' \
			"$tmp/out.json" | flat)
		jq -r --arg c "$c" '.span_list[] | select(.why) |
			"\($c)\t\(.why)"' "$tmp/out.json" >> "$tmp/spans.tsv"
		reasons=$(jq -r '[.span_list[] | select(.why) |
			"\(.function): \(.why)"] | unique | join(" | ")' \
			"$tmp/out.json" | flat)
		if [ "$spans" = 0 ]; then
			status="no spans"
		elif [ "$sup" = "$spans" ]; then
			status=full
		elif [ "$sup" = 0 ]; then
			status=refused
		else
			status=partial
		fi
	else
		first=$({ jq -r '.error // empty' "$tmp/out.json" 2>/dev/null
			  cat "$tmp/err.txt"; } | flat)
		[ -n "$first" ] || first="exit status $rc, no message"
		reasons=$first
		case $first in
		*"among those its configuration builds"*) status="not built" ;;
		# the catalog's entry names source another kernel lacks (an
		# older release: a macro not defined yet, a literal's line)
		*"has no #define "*|*"no #define of it"*|*"is not on "*|*"no line of "*)
			status="not in source" ;;
		*) status="tool failure" ;;
		esac
	fi
	verdict=-
	if [ "$oracle" -gt 0 ] && [ "$sup" -gt 0 ]; then
		verdict=$(oracle_of "$c")
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$spans" "$sup" "$status" \
		"$secs" "$first" "$reasons" "$verdict" >> "$rows"
	printf '%s %s/%s %ss %s\n' "$status" "$sup" "$spans" "$secs" "$verdict" >&2
done

short() { local s=$1; [ ${#s} -le 70 ] && echo "$s" || echo "${s:0:67}..."; }
printf '%-34s %11s  %-12s %8s  %s\n' constant supported status seconds \
	"first refusal reason"
while IFS=$'\t' read -r c spans sup status secs first reasons verdict; do
	printf '%-34s %11s  %-12s %8s  %s\n' "$c" "$sup/$spans" "$status" \
		"$secs" "$(short "$first")"
	[ "$oracle" -gt 0 ] && [ "$verdict" != - ] && printf '%34s oracle: %s\n' '' "$verdict"
done < "$rows"

count() { awk -F'\t' -v s="$1" '$4 == s' "$rows" | wc -l; }
median=$(cut -f5 "$rows" | sort -n | awk '{ v[NR] = $1 } END {
	if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
worst=$(sort -t$'\t' -k5,5 -n "$rows" | tail -1 | cut -f1,5 | tr '\t' ' ')
tspans=$(awk -F'\t' '{ s += $2 } END { print s + 0 }' "$rows")
tsup=$(awk -F'\t' '{ s += $3 } END { print s + 0 }' "$rows")
echo
echo "constants:        $n ($([ $cold = 1 ] && echo cold || echo warm))"
echo "fully supported:  $(count full)"
echo "partly supported: $(count partial)"
echo "refused:          $(count refused)"
echo "no spans:         $(count 'no spans')"
echo "not built:        $(count 'not built')"
echo "not in source:    $(count 'not in source')"
echo "tool failures:    $(count 'tool failure')"
echo "spans supported:  $tsup/$tspans"
echo "seconds:          median $median, worst $worst"
if [ "$oracle" -gt 0 ]; then
	full_ok=$(awk -F'\t' '$4 == "full" && $8 == "agree"' "$rows" | wc -l)
	full_differ=$(awk -F'\t' '$4 == "full" && $8 ~ /^differ/' "$rows" | wc -l)
	full_nocheck=$(awk -F'\t' '$4 == "full" && $8 ~ /^cannot/' "$rows" | wc -l)
	echo "after the oracle ($oracle values of each constant's bounds):"
	echo "  full, the oracle agreeing:    $full_ok"
	echo "  full, but differing at a value: $full_differ ($(awk -F'\t' '$4 == "full" && $8 ~ /^differ/ { printf "%s%s", n++ ? " " : "", $1 }' "$rows"))"
	echo "  full, not checkable:          $full_nocheck ($(awk -F'\t' '$4 == "full" && $8 ~ /^cannot/ { printf "%s%s", n++ ? " " : "", $1 }' "$rows"))"
fi

# refusal reasons by kind: the part before "; inverse form", without the
# instruction it names (its mnemonic kept for "outside the model"),
# numbers as N, registers as REG
if [ -s "$tmp/spans.tsv" ]; then
	echo
	echo "refused spans by reason (spans, constants):"
	sed -E 's/; inverse form:.*//;
		s/\+0x[0-9a-f]+ ([a-z0-9]+)[^:]*: (instruction outside the model)/\1: \2/g;
		s/\+0x[0-9a-f]+ [^:]*: //g;
		s/(the fitted|the value of|that build.s) [a-z0-9]+/\1 REG/g;
		s/0x[0-9a-f]+/X/g; s/\b[0-9]+\b/N/g' "$tmp/spans.tsv" |
	awk -F'\t' '{ n[$2]++; if (index(" " c[$2] " ", " " $1 " ") == 0)
			c[$2] = c[$2] (c[$2] ? " " : "") $1 }
		END { for (r in n) printf "%d\t%s\t%s\n", n[r], r, c[r] }' |
	sort -t$'\t' -k1,1nr | awk -F'\t' '{ printf "%5d  %s\n       %s\n", $1, $2, $3 }'
fi

if [ -n "$csv" ]; then
	{
		echo "constant,spans,supported,status,seconds,first_reason,reasons,oracle"
		awk -F'\t' -v OFS=, '{
			for (f = 6; f <= 8; f++) { gsub(/"/, "\"\"", $f); $f = "\"" $f "\"" }
			print }' "$rows"
	} > "$csv"
fi
