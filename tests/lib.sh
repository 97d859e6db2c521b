# SPDX-License-Identifier: GPL-2.0
# Helpers for the shell test suites (TAP output): source it, call
# `t NAME CMD...` per test, `finish` at the end.
#
# Each test runs in a subshell; a failed check (die, expect_eq,
# expect_match) ends that subshell with status 1, so the first check that
# fails fails the test, whatever the checks after it say. A test passes
# when CMD returns 0 and no check failed.
T_NUM=0
T_FAILED=0
t() {
	local name=$1 out
	shift
	T_NUM=$((T_NUM + 1))
	if out=$( ("$@") 2>&1); then
		echo "ok $T_NUM - $name"
	else
		echo "not ok $T_NUM - $name"
		printf '%s\n' "$out" | tail -n 25 | sed 's/^/#   /'
		T_FAILED=$((T_FAILED + 1))
	fi
}
# die MESSAGE: fails the test that calls it (exits its subshell)
die() { echo "$*" >&2; exit 1; }
# expect_eq WHAT GOT WANT
expect_eq() { [ "$2" = "$3" ] || die "$1: got '$2', want '$3'"; }
# expect_match WHAT TEXT REGEX
expect_match() { printf '%s' "$2" | grep -Eq -- "$3" || die "$1: '$3' not in: $2"; }
finish() { echo "1..$T_NUM"; [ "$T_FAILED" = 0 ]; }
