#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest (bench/load-all.sh): xk load, then xk unload, of every
# constant named in $1, one at a time, with the module's message on a
# refusal; the kernel log is checked for oopses and warnings at the end.
set -u
cd "$(dirname "$0")/.."
XK=$PWD/build/xk
insmod kmod/xkernel.ko || { echo "insmod xkernel.ko failed"; exit 1; }
dir=$($XK kernel info --field dir)
n=0 ok=0
echo "csv: constant,status,ms,error"
while read -r c; do
	n=$((n + 1))
	# the modules its spans live in, loaded first: validated, not deferred
	for m in $(sed -n 's/^function \([a-z0-9_]*\):.*/\1/p' "$dir/scopes/$c.scope" | sort -u); do
		modprobe "$m" 2>/dev/null
	done
	t0=$(date +%s%N)
	err=$($XK -q load --no-build "$c" 2>&1 >/dev/null)
	rc=$?
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	if [ $rc = 0 ]; then
		ok=$((ok + 1))
		printf '%-40s loaded   %6d ms\n' "$c" "$ms"
		echo "csv: $c,loaded,$ms,"
		$XK -q unload "$c" >/dev/null 2>&1 || echo "$c: unload failed"
	else
		err=$(printf '%s' "$err" | tr '\n,' '  ' | cut -c1-300)
		printf '%-40s refused  %6d ms  %s\n' "$c" "$ms" "$err"
		echo "csv: $c,refused,$ms,$err"
	fi
done < "$1"
bad=$(dmesg | grep -cE "Oops|BUG:|WARNING:|general protection" || true)
echo "loaded $ok of $n; kernel log: $bad oopses or warnings"
left=$(grep -c '\[xkernel\]' /sys/kernel/debug/kprobes/list 2>/dev/null || echo 0)
echo "kprobes of xkernel left: $left"
rmmod xkernel
[ "$ok" = "$n" ] && [ "$bad" = 0 ] && [ "$left" = 0 ]
