#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of make check-fidelity (tests/fidelity/ab.sh), in the
# deterministic guest: for each row "CONSTANT VALUE OBSERVABLE LIVEPATCH"
# of ROWS, the observable read at the compiled-in value, with VALUE set
# live by xk, then with the livepatch that compiles VALUE in (xk unloaded);
# then the golden module's constants all set live against GOLDEN_KO, the
# module compiled with those values (GOLDEN_VALUES: "NAME=VALUE ...").
#   tests/fidelity/ab-guest.sh ROWS GOLDEN_KO GOLDEN_VALUES
# TAP; a comparison passes when both readings agree exactly and differ
# from the compiled-in one.
cd "$(dirname "$0")/../.." || exit 125
export XK_TOP=$PWD
. tests/guest/lib.sh
rows=$1 golden_ko=$2 golden_values=$3
LP=/sys/kernel/livepatch
n=0 failed=0
trap 'cleanup_xk; rmmod null_blk 2>/dev/null; true' EXIT

report() {	# what, compiled-in, xk, livepatch[, after both]
	local line="$1: compiled-in '$2', set live '$3', compiled with the value '$4'"
	n=$((n + 1))
	[ $# -ge 5 ] && line="$line, after both '$5'"
	if [ "$3" = "$4" ] && [ "$3" != "$2" ] && { [ $# -lt 5 ] || [ "$5" = "$2" ]; }; then
		echo "ok $n - $line"
	else
		failed=$((failed + 1))
		echo "not ok $n - $line"
	fi
}

# ---- livepatches ----
# waits (60 s at most) until patch $1's transition is over; a disabled
# patch leaves $LP once its transition is over (the kernel frees it)
lp_settled() {
	for _ in $(seq 600); do
		[ "$(cat $LP/$1/transition 2>/dev/null || echo 0)" = 0 ] && return 0
		sleep 0.1
	done
	echo "# livepatch $1: transition still running after 60 s"
	return 1
}
lp_on() {
	local name=$(basename "$1" .ko)
	insmod "$1" && [ -d $LP/$name ] && lp_settled "$name" &&
		[ "$(cat $LP/$name/enabled)" = 1 ]
}
lp_off() {
	local name=$(basename "$1" .ko)
	echo 0 > $LP/$name/enabled && lp_settled "$name" || return 1
	for _ in $(seq 100); do
		rmmod "$name" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "# rmmod $name failed"
	return 1
}

# ---- observables: one line each, the same workload every time ----
# null_blk in 4 KiB requests behind mq-deadline, for the block workloads
modprobe null_blk nr_devices=1 max_sectors=8 || fail "no null_blk"
traced_plugs nullb0
echo 1024 > /sys/block/nullb0/queue/read_ahead_kb
echo 16384 > $TRACE/buffer_size_kb
plug_flushes() {	# plug flushes of 16 MiB read in 4 KiB requests
	unplugs_of dd if=/dev/nullb0 of=/dev/null bs=1M count=16 status=none
}
zone_batch() {	# the per-CPU page lists' batch of the largest zone, recomputed
	echo 8 > /proc/sys/vm/percpu_pagelist_high_fraction
	echo 0 > /proc/sys/vm/percpu_pagelist_high_fraction
	awk '/^Node/ { z = $4 } /^ +managed/ { m[z] = $2 }
	     /^ +batch:/ && !(z in b) { b[z] = $2 }
	     END { for (z in m) if (m[z] > best) { best = m[z]; bz = z }
		   print b[bz] }' /proc/zoneinfo
}
memcg_peak() {	# memory.peak of a fresh cgroup after one small tmpfs write
	local cg=/sys/fs/cgroup/xk-ab
	echo +memory > /sys/fs/cgroup/cgroup.subtree_control
	rmdir $cg 2>/dev/null
	mkdir $cg || fail "mkdir $cg"
	bash -c "echo \$\$ > $cg/cgroup.procs && echo x > /dev/shm/xk-ab" || fail "no process in $cg"
	rm -f /dev/shm/xk-ab
	cat $cg/memory.peak
	rmdir $cg
}
ring_entries() {	# SQ/CQ entries of rings asked for 65536 and 100 (clamped), 8192 (strict)
	python3 tests/guest/ring_entries.py 65536:clamp 100:clamp 8192
}
bulk_sizes() {	# io_uring's bulk request allocations under fio: the size most made
	local ev=$TRACE/events/kprobes/xk_ab_bulk size ranges= a
	size=$(awk '$1 == "function" && $2 == "__io_alloc_req_refill" { print $3; exit }' \
		"$($XK kernel info --field dir)/scopes/IO_REQ_ALLOC_BATCH.scope")
	[ -n "$size" ] || fail "no size of __io_alloc_req_refill"
	[ -d $ev ] || echo 'p:xk_ab_bulk kmem_cache_alloc_bulk_noprof size=%dx:u32 caller=+0(%sp):u64' \
		>> $TRACE/kprobe_events || fail "no kprobe event on kmem_cache_alloc_bulk_noprof"
	# calls from the function, or from its copy in a livepatch (its size
	# within a few instructions of the original's)
	for a in $(awk '$3 ~ /^(xk_klp_)?__io_alloc_req_refill$/ { print "0x" $1 }' /proc/kallsyms); do
		ranges="${ranges:+$ranges || }(caller > $a && caller < $(printf '0x%x' $((a + size + 64))))"
	done
	[ -n "$ranges" ] || fail "no __io_alloc_req_refill in kallsyms"
	echo "$ranges" > $ev/filter || fail "no filter on the caller ($ranges)"
	echo > $TRACE/trace
	echo 1 > $ev/enable
	fio --name=xk --ioengine=io_uring --filename=/dev/nullb0 --rw=randread \
		--bs=4k --iodepth=16 --direct=1 --size=8M --numjobs=1 >/dev/null 2>&1 || fail "fio"
	echo 0 > $ev/enable
	traced_values size | head -n 1 | cut -d' ' -f1
}
gso_limits() {	# gso_max_segs of a new network namespace's lo (alloc_netdev_mqs),
	# and BPF_PROG_TEST_RUN's check of a context's gso_segs (2000, 500)
	echo "lo $(unshare -n ip -d link show lo | grep -o "gso_max_segs [0-9]*" | cut -d' ' -f2)" \
		"test_run $(python3 - <<'PY'
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
def bpf(cmd, attr):			# the bpf(2) system call
    buf = ctypes.create_string_buffer(attr, len(attr))
    r = libc.syscall(321, cmd, buf, len(attr))
    return r, ctypes.get_errno()
insns = struct.pack("<BBhi", 0xb7, 0, 0, 0) + struct.pack("<BBhi", 0x95, 0, 0, 0)
ib, lic = ctypes.create_string_buffer(insns, 16), ctypes.create_string_buffer(b"GPL")
# BPF_PROG_LOAD: a socket filter returning 0
attr = struct.pack("<IIQQIIQII", 1, 2, ctypes.addressof(ib), ctypes.addressof(lic), 0, 0, 0, 0, 0)
fd, err = bpf(5, attr + bytes(144 - len(attr)))
if fd < 0:
    raise SystemExit("BPF_PROG_LOAD: errno %d" % err)
def run(segs):				# BPF_PROG_TEST_RUN, struct __sk_buff's gso_segs
    data = ctypes.create_string_buffer(64)
    ctx = bytearray(192)
    struct.pack_into("<I", ctx, 164, segs)
    cb = ctypes.create_string_buffer(bytes(ctx), 192)
    a = struct.pack("<IIIIQQIIIIQQIII", fd, 0, 64, 0, ctypes.addressof(data), 0, 1, 0,
                    192, 0, ctypes.addressof(cb), 0, 0, 0, 0)
    r, e = bpf(10, a)
    return "E%d" % e if r < 0 else "0"
print("%s/%s" % (run(2000), run(500)))
PY
)"
}

# ---- the kernel's constants ----
while read -r c v observe ko <&3; do
	d=$($observe)
	# --partial: a use the table refuses keeps the compiled-in value, and
	# so does the livepatch, which compiles V into the span functions only
	# (GSO_MAX_SEGS: the drivers its catalog entry leaves out)
	if ! $XK set --partial "$c=$v" > /tmp/ab.out 2>&1 < /dev/null; then
		report "$c=$v ($observe)" "$d" "xk set failed: $(tail -n 1 /tmp/ab.out)" "-"
		$XK unload --all > /dev/null 2>&1
		continue
	fi
	a=$($observe)
	$XK unload "$c" > /dev/null < /dev/null || fail "unload $c"
	[ "$(probes_left)" = 0 ] || fail "probes left after unloading $c"
	# a livepatch that did not come fully in force or out would be in
	# the next rows' way: the run stops there
	lp_on "$ko" < /dev/null || fail "the livepatch of $c did not load and complete"
	b=$($observe)
	lp_off "$ko" < /dev/null || fail "the livepatch of $c stays"
	after=$($observe)
	report "$c=$v ($observe)" "$d" "$a" "$b" "$after"
done 3< "$rows"

# ---- the golden module ----
probe_lines() { cat $GOLDEN/probe > /dev/null; cat $GOLDEN/probe; }
insmod "$GOLDEN_KO" || fail "insmod xk_golden"
d=$(probe_lines)
set_all=ok
for cv in $(cat "$golden_values"); do
	$XK set "$cv" > /tmp/ab.out 2>&1 || { set_all="xk set $cv: $(tail -n 1 /tmp/ab.out)"; break; }
done
a=$(probe_lines)
$XK unload --all > /dev/null || fail "unload the golden constants"
rmmod xk_golden || fail "rmmod xk_golden"
insmod "$golden_ko" || fail "insmod the golden module compiled with the values"
probe_lines > /dev/null	# as many reads as above (golden_spend counts them)
b=$(probe_lines)
rmmod xk_golden
names=$(sed 's/=[0-9-]*//g' "$golden_values")
# each constant has an effect on its own field (G_NAME: name=) for these
# inputs, or its comparison would show nothing
field_of() { tr ' ' '\n' <<< "$1" | grep "^$2="; }
idle=
for name in $names; do
	f=$(tr 'A-Z' 'a-z' <<< "${name#G_}")
	[ "$(field_of "$d" "$f")" != "$(field_of "$a" "$f")" ] ||
		idle="$idle $name ($(field_of "$a" "$f" | tr '\n' ' '))"
done
[ -z "$idle" ] || [ "$set_all" != ok ] || set_all="no effect on their own field:$idle"
if [ "$set_all" != ok ]; then
	report "golden $names" "-" "$set_all" "-"
else
	# field by field, so that a difference names its function
	while IFS= read -r la && IFS= read -r lb <&3; do
		for f in $la; do
			grep -qw -- "$f" <<< "$lb" ||
				echo "# differs: $f set live, $(tr ' ' '\n' <<< "$lb" | grep "^${f%%=*}=") compiled with the values"
		done
	done < <(echo "$a") 3< <(echo "$b")
	report "golden module, $(wc -w < "$golden_values") constants ($names)" \
		"$(echo "$d" | md5sum | cut -c1-12)" "$(echo "$a" | md5sum | cut -c1-12)" \
		"$(echo "$b" | md5sum | cut -c1-12)"
fi
echo "1..$n"
echo "# $failed of $n comparisons failed"
[ "$failed" = 0 ]
