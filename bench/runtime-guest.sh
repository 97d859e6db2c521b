#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The guest half of bench/runtime.sh.
set -euo pipefail
XK=build/xk
stats() {	# name, then values (ms) on stdin
	sort -n | awk -v name="$1" '{ v[NR] = $1 } END {
		p99 = v[int((NR * 99 + 99) / 100)]; if (p99 == "") p99 = v[NR];
		printf "  %-40s n=%d median %.3f ms  p99 %.3f ms\n", name, NR, v[int((NR + 1) / 2)], p99 }'
}
case "$1" in
times)
	insmod kmod/xkernel.ko
	for i in $(seq 30); do
		$XK -j load BLK_MAX_REQUEST_COUNT --value 4 > /tmp/l.json
		jq .load_ms /tmp/l.json >> /tmp/load
		jq .transition_ms /tmp/l.json >> /tmp/tr_load
		$XK -j set BLK_MAX_REQUEST_COUNT=$((8 + i)) | jq .transition_ms >> /tmp/tr_imm
		$XK -j set --mode global BLK_MAX_REQUEST_COUNT=$((64 + i)) | jq .transition_ms >> /tmp/tr_glob
		$XK unload BLK_MAX_REQUEST_COUNT > /dev/null
	done
	stats "load (2 spans: validate + arm)" < /tmp/load
	stats "immediate transition" < /tmp/tr_imm
	stats "global transition (stop_machine + drain)" < /tmp/tr_glob
	insmod tests/fixtures/golden/xk_golden.ko
	$XK load G_HOLD > /dev/null
	for i in $(seq 10); do
		$XK -j set --mode global G_HOLD=$((100 + i)) | jq .transition_ms >> /tmp/tr_hold
	done
	stats "global transition, golden G_HOLD" < /tmp/tr_hold
	$XK unload --all > /dev/null
	# an eBPF policy: xk load (open, verify, validate the table, attach,
	# pin) and xk unload (unpin, wait for the programs and kprobes to go)
	modprobe null_blk nr_devices=2
	for i in $(seq 10); do
		t0=$(date +%s%N)
		$XK -j load BLK_MAX_REQUEST_COUNT --policy build/bpf/blk_per_device.bpf.o \
			--param dev0=nullb0 --param value0=4 > /tmp/p.json
		t1=$(date +%s%N)
		$XK -j unload BLK_MAX_REQUEST_COUNT > /tmp/u.json
		t2=$(date +%s%N)
		echo "scale=3; ($t1 - $t0) / 1000000" | bc >> /tmp/pol_load
		echo "scale=3; ($t2 - $t1) / 1000000" | bc >> /tmp/pol_unload
		for f in open verify tables attach pin; do
			jq .${f}_ms /tmp/p.json >> /tmp/pol_$f
		done
		jq .load_ms /tmp/p.json >> /tmp/pol_validate
		jq .policy_detach_ms /tmp/u.json >> /tmp/pol_detach
	done
	rmmod null_blk
	t0=$(date +%s%N); /bin/true; t1=$(date +%s%N)
	echo "  (starting any process in this guest takes $(( (t1 - t0) / 1000000 )) ms)"
	stats "policy: xk load --policy, whole command" < /tmp/pol_load
	stats "  open the object, parameters" < /tmp/pol_open
	stats "  verify (BTF, CO-RE, verifier)" < /tmp/pol_verify
	stats "  tables into the module" < /tmp/pol_tables
	stats "    of which the module's validation" < /tmp/pol_validate
	stats "  attach (programs to the module)" < /tmp/pol_attach
	stats "  pin" < /tmp/pol_pin
	stats "policy: xk unload, whole command" < /tmp/pol_unload
	stats "  detach (programs and kprobes gone)" < /tmp/pol_detach
	;;
trigger)
	insmod kmod/xkernel.ko
	N=200000
	# the best of three: a timer tick or a deferred work item landing in
	# one run is not the probe's cost
	run() {
		local t0 t1 best=
		for _ in 1 2 3; do
			t0=$(date +%s%N)
			dd if=/dev/zero of=/dev/null bs=1 count=$N 2>/dev/null
			t1=$(date +%s%N)
			v=$(( (t1 - t0) / N ))
			[ -z "$best" ] || [ "$v" -lt "$best" ] && best=$v
		done
		echo "$best"
	}
	run > /dev/null		# warm up
	none=$(run)
	# a value above any count: behaviour unchanged, the rewrite still runs
	$XK load --partial MAX_RW_COUNT --value 2147475456 > /dev/null
	sleep 1			# optimization is deferred work
	state=$($XK -j status | jq -r '[.[0].probes[].probe] | join(",")')
	opt=$(run)
	echo 0 > /proc/sys/debug/kprobes-optimization
	sleep 1
	state_int3=$($XK -j status | jq -r '[.[0].probes[].probe] | join(",")')
	int3=$(run)
	echo 1 > /proc/sys/debug/kprobes-optimization
	hits=$($XK -j status | jq '[.[0].probes[].hits] | add')
	# settled: the value in the text, the probes gone
	nset=$($XK -j settle MAX_RW_COUNT | jq '.[0].settled_spans')
	settled=$(run)
	$XK unload MAX_RW_COUNT > /dev/null
	# the same value chosen by an eBPF policy at every span
	$XK load --partial MAX_RW_COUNT --policy build/bpf/rw_fixed.bpf.o --param value=2147475456 > /dev/null
	sleep 1
	policy=$(run)
	pwrites=$($XK -j status | jq '.[0].writes')
	$XK unload MAX_RW_COUNT > /dev/null
	after=$(run)
	echo "  dd bs=1 if=/dev/zero of=/dev/null, guest instructions per 1-byte read+write:"
	printf '    %-44s %6d\n' "no probe" "$none"
	printf '    %-44s %6d  (+%d, +%.1f%%)\n' "rewrite probe, kprobes as armed ($state)" \
		"$opt" $((opt - none)) "$(echo "($opt - $none) * 100 / $none" | bc -l)"
	printf '    %-44s %6d  (+%d, +%.1f%%)\n' "rewrite probe, optimization off ($state_int3)" \
		"$int3" $((int3 - none)) "$(echo "($int3 - $none) * 100 / $none" | bc -l)"
	printf '    %-44s %6d  (%+d, %+.1f%%)\n' "settled ($nset of 9 spans in the text)" \
		"$settled" $((settled - none)) "$(echo "($settled - $none) * 100 / $none" | bc -l)"
	printf '    %-44s %6d  (+%d, +%.1f%%)\n' "eBPF policy choosing the same value" \
		"$policy" $((policy - none)) "$(echo "($policy - $none) * 100 / $none" | bc -l)"
	printf '    %-44s %6d\n' "after unload" "$after"
	echo "    rewrites counted: $hits; policy writes: $pwrites"
	;;
esac
