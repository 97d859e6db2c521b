#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The harness of the shell suites (tests/lib.sh) fails a test on its first
# failed check, not only on its last: a suite of deliberate failures runs
# in a child shell, and its TAP lines are checked here. Needs no guest.
set -u
cd "$(dirname "$0")/../.." || exit
. tests/lib.sh

# runs the suite given as shell text; prints its TAP and its status
suite() { bash -c ". tests/lib.sh; $1" 2>&1; echo "status $?"; }

first_check_fails() {
	out=$(suite 'two() { expect_eq first 1 2; expect_eq second 1 1; }
		t two two; finish')
	expect_match tap "$out" "^not ok 1 - two$"
	expect_match cause "$out" "first: got '1', want '2'"
	expect_match status "$out" "status 1$"
}

match_fails() {
	out=$(suite 'm() { expect_match text abc "^x"; true; }; t m m; finish')
	expect_match tap "$out" "^not ok 1 - m$"
}

die_fails() {
	local mark
	mark=$(mktemp -u)
	out=$(suite "d() { false || die gone; touch $mark; }; t d d; finish")
	[ ! -e "$mark" ] || { rm -f "$mark"; die "the test ran on after die"; }
	expect_match tap "$out" "^not ok 1 - d$"
	expect_match cause "$out" "^#   gone$"
}

passing_tests_pass() {
	out=$(suite 'p() { expect_eq a 1 1; expect_match b abc "^a"; }
		f() { die no; }
		t p p; t f f; t p2 p; finish')
	expect_eq tap "$(printf '%s\n' "$out" | grep -E '^(not )?ok|^1\.\.')" \
		"ok 1 - p
not ok 2 - f
ok 3 - p2
1..3"
	expect_match status "$out" "status 1$"
	out=$(suite 'p() { expect_eq a 1 1; }; t p p; finish')
	expect_match status "$out" "status 0$"
}

t "a failed first check fails a multi-check test" first_check_fails
t "expect_match fails its test" match_fails
t "die ends its test" die_fails
t "passing tests pass, the suite's status counts the failures" passing_tests_pass
finish
