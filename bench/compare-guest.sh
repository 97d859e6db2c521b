#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The guest half of bench/compare.sh: xkernel against a livepatch of the
# same constant (BLK_MAX_REQUEST_COUNT), in one boot of the deterministic
# guest (single-threaded TCG, -icount shift=0: 1 guest instruction = 1 ns
# of guest time; livepatch patches live text, and under multi-threaded TCG
# a livepatch transition occasionally oopsed at a call site being
# re-patched, a TCG cross-modifying-code effect).
#
#   bench/compare-guest.sh TABLE VALUE KO_VALUE KO_DEFAULT XK_ROUNDS LP_ROUNDS
# KO_VALUE compiles VALUE in, KO_DEFAULT the default (the mechanism's cost
# alone); both made by build/klp-build.
set -euo pipefail
XK=build/xk
table=$1 V=$2 ko_v=$3 ko_def=$4 nxk=$5 nlp=$6
name_v=$(basename "$ko_v" .ko) name_def=$(basename "$ko_def" .ko)
LP=/sys/kernel/livepatch
MIB=64 REQS=$((64 * 256))	# 4 KiB requests (null_blk max_sectors=8)
T=/tmp/compare
mkdir -p $T

stats() {	# name, unit, then values on stdin: "median p99"
	sort -n | awk '{ v[NR] = $1 } END {
		p99 = v[int((NR * 99 + 99) / 100)]; if (p99 == "") p99 = v[NR];
		printf "%.3f %.3f\n", v[int((NR + 1) / 2)], p99 }'
}
# guest instructions per 4 KiB request of dd bs=1M from nullb0, the best of 3
per_req() {
	local t0 t1 best= v
	for _ in 1 2 3; do
		echo 3 > /proc/sys/vm/drop_caches
		t0=$(date +%s%N)
		dd if=/dev/nullb0 of=/dev/null bs=1M count=$MIB 2>/dev/null
		t1=$(date +%s%N)
		v=$(( (t1 - t0) / REQS ))
		if [ -z "$best" ] || [ "$v" -lt "$best" ]; then best=$v; fi
	done
	echo "$best"
}
flushes() { bench/blk-unplugs.sh /dev/nullb0 $MIB | awk '/^unplugs/ {print $2}'; }
# dmesg's time of the last line matching $1, in ms
klog_ms() { dmesg | grep -F "$1" | tail -n 1 | sed 's/^\[ *\([0-9.]*\)\].*/\1/' |
	awk '{ printf "%.3f\n", $1 * 1000 }'; }
now_ns() { date +%s%N; }
# waits (bounded: 60 s) until a patch's transition reads 0
lp_settled() {
	for _ in $(seq 1200); do
		[ "$(cat $LP/$1/transition 2>/dev/null || echo 0)" = 0 ] && return 0
		sleep 0.05
	done
	echo "livepatch $1: transition still running after 60 s" >&2
	return 1
}
lp_off() {	# disable, wait, unload (the module is busy until the patch is freed)
	echo 0 > $LP/$1/enabled
	lp_settled "$1"
	for _ in $(seq 100); do
		rmmod "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "rmmod $1 failed" >&2
	return 1
}
# one livepatch round: insmod until transition 0 (wall), and the kernel's own
# "enabling patch" -> "patching complete" (dmesg), then the same for disable
lp_round() {
	local ko=$1 n=$2 t0 t1
	t0=$(now_ns)
	insmod "$ko"
	lp_settled "$n"
	t1=$(now_ns)
	echo "scale=3; ($t1 - $t0) / 1000000" | bc >> $T/lp_enable_wall
	echo "$(klog_ms "'$n': patching complete") - $(klog_ms "enabling patch '$n'")" |
		bc >> $T/lp_enable
	t0=$(now_ns)
	lp_off "$n"
	t1=$(now_ns)
	echo "scale=3; ($t1 - $t0) / 1000000" | bc >> $T/lp_disable_wall
	echo "$(klog_ms "'$n': unpatching complete") - $(klog_ms "'$n': starting unpatching transition")" |
		bc >> $T/lp_disable
}

modprobe null_blk nr_devices=1 max_sectors=8
echo 1024 > /sys/block/nullb0/queue/read_ahead_kb
insmod kmod/xkernel.ko
echo "guest kernel $(uname -r); deterministic TCG: times are guest instructions (1 ns each)"
per_req > /dev/null	# warm up

# ---- steady state and effect ----
f_none=$(flushes); i_none=$(per_req)
insmod "$ko_def"; lp_settled "$name_def"
i_lp_def=$(per_req); f_lp_def=$(flushes)
lp_off "$name_def"
$XK -q load "$table" --value 32 > /dev/null
sleep 1		# optimization is deferred work
i_xk_def=$(per_req); f_xk_def=$(flushes)
$XK -q unload BLK_MAX_REQUEST_COUNT > /dev/null
insmod "$ko_v"; lp_settled "$name_v"
i_lp=$(per_req); f_lp=$(flushes)
lp_off "$name_v"
$XK -q load "$table" --value "$V" > /dev/null
sleep 1
i_xk=$(per_req); f_xk=$(flushes)
$XK -q unload BLK_MAX_REQUEST_COUNT > /dev/null
$XK -q load "$table" --value 32 > /dev/null
$XK -q set --mode global BLK_MAX_REQUEST_COUNT="$V" > /dev/null
sleep 1
i_xkg=$(per_req); f_xkg=$(flushes)
settle=no
if $XK help settle > /dev/null 2>&1; then
	settle=yes
	$XK -j settle BLK_MAX_REQUEST_COUNT > $T/s.json
	settled="$(jq '.[0].settled_spans' $T/s.json) in the text, $(jq '.[0].probed_spans' $T/s.json) probed"
	sleep 1
	i_xks=$(per_req); f_xks=$(flushes)
fi
$XK -q unload BLK_MAX_REQUEST_COUNT > /dev/null
# the same value chosen per device by an eBPF policy (make policies)
policy=build/bpf/blk_per_device.bpf.o
if [ -f $policy ]; then
	$XK -q load BLK_MAX_REQUEST_COUNT --policy $policy --param dev0=nullb0 \
		--param value0="$V" > /dev/null
	sleep 1
	i_xkp=$(per_req); f_xkp=$(flushes)
	$XK -q unload BLK_MAX_REQUEST_COUNT > /dev/null
fi
f_after=$(flushes)

# ---- load and transitions ----
for i in $(seq "$nxk"); do
	t0=$(now_ns)
	$XK -j load "$table" --value "$V" > $T/l.json
	t1=$(now_ns)
	echo "scale=3; ($t1 - $t0) / 1000000" | bc >> $T/xk_load_wall
	jq .load_ms $T/l.json >> $T/xk_load
	jq .transition_ms $T/l.json >> $T/xk_tr_load
	$XK -j set BLK_MAX_REQUEST_COUNT=$((8 + i)) | jq .transition_ms >> $T/xk_imm
	$XK -j set --mode global BLK_MAX_REQUEST_COUNT=$((64 + i)) | jq .transition_ms >> $T/xk_glob
	if [ $settle = yes ]; then
		$XK -j settle BLK_MAX_REQUEST_COUNT | jq '.[0].settle_ms' >> $T/xk_settle
	fi
	t0=$(now_ns)
	$XK -q unload BLK_MAX_REQUEST_COUNT > /dev/null
	t1=$(now_ns)
	echo "scale=3; ($t1 - $t0) / 1000000" | bc >> $T/xk_unload_wall
done
for i in $(seq "$nlp"); do
	lp_round "$ko_v" "$name_v"
done
t0=$(now_ns); /bin/true; t1=$(now_ns)
spawn=$(echo "scale=3; ($t1 - $t0) / 1000000" | bc)

# ---- the table ----
read -r xk_load xk_load99 < <(stats < $T/xk_load)
read -r xk_imm xk_imm99 < <(stats < $T/xk_imm)
read -r xk_glob xk_glob99 < <(stats < $T/xk_glob)
read -r lp_en lp_en99 < <(stats < $T/lp_enable)
read -r lp_enw lp_enw99 < <(stats < $T/lp_enable_wall)
read -r lp_dis lp_dis99 < <(stats < $T/lp_disable)
read -r xk_unw xk_unw99 < <(stats < $T/xk_unload_wall)
read -r xk_lw xk_lw99 < <(stats < $T/xk_load_wall)
read -r lp_disw lp_disw99 < <(stats < $T/lp_disable_wall)
pct() { echo "$1 $i_none" | awk '{ printf "%+.1f", ($1 - $2) * 100 / $2 }'; }
ratio() { echo "$1 $2" | awk '{ if ($2 == 0) printf "n/a"; else printf "%.2f", $1 / $2 }'; }
echo
echo "BLK_MAX_REQUEST_COUNT = $V; $nxk xk rounds, $nlp livepatch rounds; ms of guest time (median / p99)"
printf '  %-52s %12s %12s\n' "" median p99
printf '  %-52s %12s %12s\n' "livepatch: enable -> patching complete (dmesg)" "$lp_en" "$lp_en99"
printf '  %-52s %12s %12s\n' "livepatch: insmod until transition 0 (wall)" "$lp_enw" "$lp_enw99"
printf '  %-52s %12s %12s\n' "livepatch: unpatching transition (dmesg)" "$lp_dis" "$lp_dis99"
printf '  %-52s %12s %12s\n' "livepatch: disable + rmmod (wall)" "$lp_disw" "$lp_disw99"
printf '  %-52s %12s %12s\n' "xk load (validate + arm 2 spans)" "$xk_load" "$xk_load99"
printf '  %-52s %12s %12s\n' "xk load --value V, whole command (wall)" "$xk_lw" "$xk_lw99"
printf '  %-52s %12s %12s\n' "xk set, immediate transition" "$xk_imm" "$xk_imm99"
printf '  %-52s %12s %12s\n' "xk set --mode global transition" "$xk_glob" "$xk_glob99"
if [ $settle = yes ]; then
	read -r xk_set xk_set99 < <(stats < $T/xk_settle)
	printf '  %-52s %12s %12s\n' "xk settle (value into the text, probes off)" "$xk_set" "$xk_set99"
else
	printf '  %-52s %12s\n' "xk settle" "n/a (no settle)"
fi
printf '  %-52s %12s %12s\n' "xk unload (whole command, wall)" "$xk_unw" "$xk_unw99"
echo "  (starting any process in this guest: $spawn ms; wall figures include it)"
echo
echo "steady state: guest instructions per 4 KiB request (dd bs=1M, $MIB MiB from null_blk), plug flushes"
printf '  %-40s %10s %8s %10s\n' "" "insns/req" "vs none" "flushes"
printf '  %-40s %10d %8s %10d\n' "no patch (32)" "$i_none" "" "$f_none"
printf '  %-40s %10d %7s%% %10d\n' "livepatch, 32 compiled in" "$i_lp_def" "$(pct "$i_lp_def")" "$f_lp_def"
printf '  %-40s %10d %7s%% %10d\n' "xk load --value 32 (probes, same value)" "$i_xk_def" "$(pct "$i_xk_def")" "$f_xk_def"
printf '  %-40s %10d %7s%% %10d\n' "livepatch, $V compiled in" "$i_lp" "$(pct "$i_lp")" "$f_lp"
printf '  %-40s %10d %7s%% %10d\n' "xk, $V, immediate" "$i_xk" "$(pct "$i_xk")" "$f_xk"
printf '  %-40s %10d %7s%% %10d\n' "xk, $V, global" "$i_xkg" "$(pct "$i_xkg")" "$f_xkg"
if [ $settle = yes ]; then
	printf '  %-40s %10d %7s%% %10d\n' "xk, $V, settled ($settled)" "$i_xks" "$(pct "$i_xks")" "$f_xks"
else
	printf '  %-40s %10s %8s %10s\n' "xk, $V, settled" "n/a" "" "(no settle)"
fi
if [ -f $policy ]; then
	printf '  %-40s %10d %7s%% %10d\n' "xk, $V, eBPF policy (per device)" "$i_xkp" "$(pct "$i_xkp")" "$f_xkp"
else
	printf '  %-40s %10s %8s %10s\n' "xk, $V, eBPF policy" "n/a" "" "(make policies)"
fi
printf '  %-40s %10s %8s %10d\n' "after both unloaded" "" "" "$f_after"
echo
echo "ratios (livepatch / xk):"
echo "  command until in effect (wall): livepatch insmod->transition 0 $lp_enw ms /" \
	"xk load $xk_lw ms = $(ratio "$lp_enw" "$xk_lw")x"
echo "  in the kernel: livepatch enable->complete $lp_en ms / xk load+immediate" \
	"$(echo "$xk_load + $xk_imm" | bc) ms = $(ratio "$lp_en" "$(echo "$xk_load + $xk_imm" | bc)")x"
echo "  a change of value: livepatch (a new module) $lp_en ms / xk set immediate $xk_imm ms," \
	"global $xk_glob ms = $(ratio "$lp_en" "$xk_glob")x"
echo "  per-request overhead at 32: livepatch +$((i_lp_def - i_none)), xk +$((i_xk_def - i_none))" \
	"instructions: xk / livepatch = $(ratio $((i_xk_def - i_none)) $((i_lp_def - i_none)))x"
echo "  per request at $V: xk immediate / livepatch = $(ratio "$i_xk" "$i_lp")x"
[ $settle = no ] || echo "  per request at $V: xk settled / livepatch = $(ratio "$i_xks" "$i_lp")x"
[ -f $policy ] && echo "  per request at $V over no patch: xk policy +$((i_xkp - i_none)) / xk immediate" \
	"+$((i_xk - i_none)) = $(ratio $((i_xkp - i_none)) $((i_xk - i_none)))x"
[ $settle = yes ] || f_xks=$f_xk
[ -f $policy ] || f_xkp=$f_xk
if [ "$f_lp" = "$f_xk" ] && [ "$f_lp" = "$f_xkg" ] && [ "$f_lp" = "$f_xks" ] &&
   [ "$f_lp" = "$f_xkp" ] &&
   [ "$f_lp_def" = "$f_none" ] &&
   [ "$f_xk_def" = "$f_none" ] && [ "$f_after" = "$f_none" ]; then
	echo "effect: agree ($f_lp plug flushes at $V under both; $f_none at 32)"
else
	echo "effect: DISAGREE (livepatch $f_lp, xk $f_xk / $f_xkg / $f_xks at $V; none $f_none," \
		"livepatch-32 $f_lp_def, xk-32 $f_xk_def, after $f_after)"
	exit 1
fi
if dmesg | grep -qE 'Oops|BUG:|WARNING:|Call Trace'; then
	echo "dmesg: a kernel warning or oops:"; dmesg | grep -E -A5 'Oops|BUG:|WARNING:' | head -40
	exit 1
fi
