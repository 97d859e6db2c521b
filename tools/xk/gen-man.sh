#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The man pages docs/man/xk*.1, made from xk's own help pages (xk help
# --man TOPIC; the topic "vm run" is xk-vm-run.1), so that both say the
# same. --check writes nothing: it fails, naming them, when a page is
# missing, stale, or has no topic any more.
#
#   tools/xk/gen-man.sh [--check] [XK [DIR]]   (default: build/xk docs/man)
set -u
check=
[ "${1:-}" = --check ] && { check=1; shift; }
xk=${1:-build/xk}
dir=${2:-docs/man}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$xk" help --topics > "$tmp/topics" || exit 1
while IFS= read -r topic; do
	page=xk${topic:+-${topic// /-}}.1
	# shellcheck disable=SC2086
	"$xk" help --man $topic > "$tmp/$page" || exit 1
done < "$tmp/topics"
rm "$tmp/topics"

if [ -z "$check" ]; then
	mkdir -p "$dir"
	rm -f "$dir"/xk*.1
	cp "$tmp"/xk*.1 "$dir"/
	exit 0
fi
bad=0
for f in "$tmp"/xk*.1; do
	cmp -s "$f" "$dir/${f##*/}" ||
		{ echo "$dir/${f##*/}: missing or stale (tools/xk/gen-man.sh)"; bad=1; }
done
for f in "$dir"/xk*.1; do
	[ -e "$f" ] && [ ! -e "$tmp/${f##*/}" ] &&
		{ echo "$f: no such help topic"; bad=1; }
done
exit $bad
