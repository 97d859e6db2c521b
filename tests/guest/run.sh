#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest (xk vm run -- tests/guest/run.sh [TEST...]): each
# tests/guest/test_*.sh in turn, as the kernel's livepatch selftests do:
# mark the kernel log, run, then check the log since the mark for oopses,
# BUGs and warnings. TAP output; the test's own output is kept as comments.
set -u
cd "$(dirname "$0")/../.."
[ "${XK_GUEST:-}" = 1 ] || { echo "run me in the guest: xk vm run -- $0" >&2; exit 2; }
export XK_TOP=$PWD

tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(tests/guest/test_*.sh)
n=0
failed=0
echo "TAP version 13"
echo "1..${#tests[@]}"
for t in "${tests[@]}"; do
	n=$((n + 1))
	name=$(basename "$t" .sh)
	mark="xk-test-mark-$name-$$"
	echo "$mark" > /dev/kmsg
	# a test may ask for more than 600 s: "# guest-timeout: S" in its header
	limit=$(sed -n 's/^# guest-timeout: *\([0-9][0-9]*\)$/\1/p' "$t" | head -1)
	out=$(timeout "${limit:-600}" bash "$t" 2>&1)
	st=$?
	klog=$(dmesg | sed -n "/$mark/,\$p")
	bad=$(printf '%s\n' "$klog" | grep -E "Oops|BUG:|WARNING:|Call Trace|general protection" | head -5)
	if [ $st = 0 ] && [ -z "$bad" ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name (status $st)"
		failed=$((failed + 1))
	fi
	printf '%s\n' "$out" | tail -n 40 | sed 's/^/#   /'
	[ -n "$bad" ] && printf '%s\n' "$bad" | sed 's/^/#   kernel: /'
	# a test leaves no module of ours behind
	if grep -q '^xkernel ' /proc/modules; then
		echo "#   $name left xkernel.ko loaded; removing it"
		# a loaded constant holds the module: unloaded first
		build/xk unload --all >/dev/null 2>&1
		rmmod xkernel 2>/dev/null
	fi
done
[ $failed = 0 ]
