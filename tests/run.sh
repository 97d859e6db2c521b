#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs every suite and ends with one line "N passed, N failed":
#   unit   build/tests/test_* (libxk on the host)
#   cli    tests/cli/run.sh   (xk's commands and errors, including guest boots)
#   guest  tests/guest/run.sh (inside the stock kernel, one boot)
# A suite that dies before reporting counts as one failure.
set -u
cd "$(dirname "$0")/.."
export XK_CACHE=${XK_CACHE:-$HOME/.cache/xkernel}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
passed=0
failed=0

suite() {
	local name=$1
	shift
	echo "# suite: $name"
	"$@" 2>&1 | tee "$log/$name"
	local st=${PIPESTATUS[0]}
	local ok bad
	ok=$(grep -c '^ok ' "$log/$name")
	bad=$(grep -c '^not ok ' "$log/$name")
	if [ "$st" != 0 ] && [ "$bad" = 0 ]; then
		echo "not ok - suite $name exited with status $st"
		bad=1
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
}

for t in build/tests/test_*; do
	[ -x "$t" ] && suite "unit-$(basename "$t")" "$t"
done
suite cli tests/cli/run.sh
suite guest build/xk vm run --timeout 1800 -- tests/guest/run.sh

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
