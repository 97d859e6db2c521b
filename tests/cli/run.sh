#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The xk command line on the host: help pages, errors named by their cause,
# JSON output, and the guest harness's exit status and timeout.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
XK=build/xk

help_pages() {
	local topic
	for topic in "" kernel "kernel fetch" "kernel info" vm "vm run" \
		"vm shell" build gen load set unload status help version; do
		# shellcheck disable=SC2086
		out=$($XK help $topic) || die "no help page for '$topic'"
		expect_match "help $topic" "$out" "^NAME"
	done
	! $XK help no-such-command 2>/dev/null || die "unknown topic accepted"
}

unknown_release() {
	out=$($XK kernel fetch --release 9.9.9-nosuch-amd64 --no-source 2>&1)
	expect_eq status $? 1
	expect_match message "$out" "unknown kernel release '9.9.9-nosuch-amd64'"
}

malformed_release() {
	out=$($XK kernel fetch --release 'a;rm -rf' 2>&1)
	expect_eq status $? 1
	expect_match message "$out" "is not a kernel release"
}

no_network() {
	local cache
	cache=$(mktemp -d)
	out=$(unshare -n env XK_CACHE="$cache" $XK kernel fetch --no-source 2>&1)
	local st=$?
	rm -rf "$cache"
	expect_eq status $st 1
	expect_match message "$out" "cannot download .* from the Debian mirror"
}

json_info() {
	out=$($XK -j kernel info) || die "kernel info failed"
	rel=$(printf '%s' "$out" | jq -er .release) || die "not JSON: $out"
	[ -f "$(printf '%s' "$out" | jq -er .vmlinuz)" ] || die "no vmlinuz"
	expect_match release "$rel" "^6\.12\."
}

json_error() {
	out=$($XK -j kernel fetch --release 'x y' 2>/dev/null)
	printf '%s' "$out" | jq -er .error >/dev/null || die "no JSON error: $out"
}

bad_option_value() {
	out=$($XK vm run --timeout abc -- true 2>&1)
	expect_eq status $? 2
	expect_match message "$out" "--timeout must be a number"
}

guest_status_comes_back() {
	out=$($XK vm run --timeout 300 -- sh -c 'echo from-guest; exit 7' 2>&1)
	expect_eq status $? 7
	expect_match output "$out" "^from-guest$"
}

guest_missing_command() {
	$XK vm run --timeout 300 -- no-such-command-xk >/dev/null 2>&1
	expect_eq status $? 127
}

guest_hang_times_out() {
	out=$($XK vm run --timeout 25 -- sleep 600 2>&1)
	expect_eq status $? 124
	expect_match message "$out" "did not finish within 25 s"
	expect_match message "$out" "last console lines"
}

guest_cwd_under_tmp() {
	local d xk
	d=$(mktemp -d)
	xk=$PWD/$XK
	out=$(cd "$d" && echo hello > file && $xk vm run --timeout 300 -- sh -c 'pwd; cat file; echo guest > new' 2>&1)
	local st=$?
	[ -e "$d/new" ] && die "the guest wrote to the host"
	rm -rf "$d"
	expect_eq status $st 0
	expect_eq output "$out" "$d
hello"
}

guest_json() {
	out=$($XK -j vm run --timeout 300 -- uname -r)
	rel=$($XK kernel info --field release)
	expect_eq exit_status "$(printf '%s' "$out" | jq -r .exit_status)" 0
	expect_eq output "$(printf '%s' "$out" | jq -r .output)" "$rel"
}

t "the harness fails a test on its first failed check" tests/cli/test_harness.sh
t "help page for every command" help_pages
t "unknown release is named" unknown_release
t "malformed release is refused" malformed_release
t "no network to the mirror is reported" no_network
t "kernel info -j is JSON" json_info
t "errors are JSON under -j" json_error
t "bad option value is a usage error" bad_option_value
t "guest command's exit status comes back" guest_status_comes_back
t "guest command not found is 127" guest_missing_command
t "hung guest is killed with the console tail" guest_hang_times_out
t "vm run -j carries the output" guest_json
t "guest runs in a working directory under /tmp, writes stay in it" guest_cwd_under_tmp
finish
