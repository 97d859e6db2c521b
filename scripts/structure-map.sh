#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The structure map of a part of libxk: which file of it calls which other,
# and through which functions, read from the compiled objects' symbols (so
# a macro or a callback through a pointer is no arrow; a direct call is).
# Fails, naming the files, when the arrows go round in a circle.
#
# Usage: scripts/structure-map.sh [--quiet] [PART]
#   PART     a folder of lib/ (default: analysis), built under build/lib/
#   --quiet  print nothing but a circle
# Exit: 0 no circle, 1 a circle, 2 usage or not built.
set -euo pipefail
cd "$(dirname "$0")/.."
quiet=0 part=analysis
while [ $# -gt 0 ]; do
	case $1 in
	--quiet) quiet=1 ;;
	-h|--help) sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "structure-map.sh: unknown option $1" >&2; exit 2 ;;
	*) part=$1 ;;
	esac
	shift
done
dir=${BUILD:-build}/lib/$part
[ -d "lib/$part" ] || { echo "structure-map.sh: no part lib/$part" >&2; exit 2; }
mapfile -t objs < <(cd "$dir" 2>/dev/null && find . -name '*.o' | sed 's|^\./||' | sort)
[ ${#objs[@]} -gt 0 ] || { echo "structure-map.sh: $dir is not built (make)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in "${objs[@]}"; do
	# an object that no longer has a source (a file moved) is no part of it
	[ -f "lib/$part/${o%.o}.c" ] || continue
	nm -g --defined-only "$dir/$o" | awk -v f="${o%.o}.c" 'NF == 3 { print $3, f }'
done | sort > "$tmp/defs"
for o in "${objs[@]}"; do
	[ -f "lib/$part/${o%.o}.c" ] || continue
	nm -u "$dir/$o" | awk -v f="${o%.o}.c" '{ print $NF, f }'
done | sort > "$tmp/uses"
# caller callee symbol
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3, $1 }' | sort > "$tmp/edges"
if [ $quiet = 0 ]; then
	echo "# lib/$part: file -> file it calls: functions"
	awk '{ k = $1 " -> " $2; if (!(k in s)) { o[n++] = k; s[k] = $3 } else s[k] = s[k] " " $3 }
	     END { for (i = 0; i < n; i++) print o[i] ": " s[o[i]] }' "$tmp/edges"
fi
awk '{ print $1, $2 }' "$tmp/edges" | sort -u > "$tmp/pairs"
if ! tsort "$tmp/pairs" > /dev/null 2> "$tmp/loop"; then
	echo "structure-map.sh: lib/$part has a circle:" \
	     "$(grep -v 'input contains a loop' "$tmp/loop" | sed 's/^tsort: //' | tr '\n' ' ')" >&2
	exit 1
fi
[ $quiet = 1 ] || echo "# no circle"
