#!/bin/bash
# Settling BLK_MAX_REQUEST_COUNT (xk settle, xk set --settle): the value is
# written into the immediates of its two spans in the live text (read back
# from /proc/kcore, not from the module) and the probes go (their rewrite
# count stands still under the workload while the plug-flush effect of the
# new value stays); a new value and xk unload put the compiled-in bytes and
# the probes back; a span whose value needs a longer immediate, or whose
# instruction another kprobe holds, keeps its probe and says why; while
# settled, xkernel.ko cannot be removed.
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT
modprobe null_blk nr_devices=1 max_sectors=8 || fail "no null_blk"
trap 'cleanup_xk; echo "-:xk_owner" >> $TRACE/kprobe_events 2>/dev/null; rmmod null_blk' EXIT
echo 1024 > /sys/block/nullb0/queue/read_ahead_kb
traced_plugs nullb0
echo 16384 > $TRACE/buffer_size_kb
read_nullb0() { dd if=/dev/nullb0 of=/dev/null bs=1M count=64 2>/dev/null; }
unplugs() { unplugs_of read_nullb0; }
kbytes() { python3 "$XK_TOP/tests/guest/kcore_bytes.py" "$@" || fail "kcore read"; }
# the fields, where the table's imm lines put them in this kernel:
# blk_start_plug_nr_ios's mov $N,%edx (imm32), blk_add_rq_to_plug's
# and $-N,%eax and add $2N,%eax (imm8 each)
TBL=$($XK kernel info --field dir)/scopes/BLK_MAX_REQUEST_COUNT.scope
[ -f "$TBL" ] || fail "no table $TBL"
# imm_at FUNC N FIELD: FIELD (insn: the instruction's offset, imm: the
# immediate's) of the Nth immediate of FUNC's span
imm_at() {
	awk -v f="$1" -v n="$2" -v w="$3" '$1 == "function" { fn = $2 }
		$1 == "imm" && fn == f && $2 == n { print (w == "insn" ? $3 : $5) }' "$TBL"
}
MOV_INSN=$(imm_at blk_start_plug_nr_ios 0 insn)
MOV=$(imm_at blk_start_plug_nr_ios 0 imm) AND=$(imm_at blk_add_rq_to_plug 0 imm)
ADD=$(imm_at blk_add_rq_to_plug 1 imm)
[ -n "$MOV_INSN" ] && [ -n "$MOV" ] && [ -n "$AND" ] && [ -n "$ADD" ] ||
	fail "the table has not the three immediates: $(grep -E '^(function|imm) ' "$TBL")"
fields() {
	echo "$(kbytes blk_start_plug_nr_ios $MOV 4) $(kbytes blk_add_rq_to_plug $AND 1)" \
	     "$(kbytes blk_add_rq_to_plug $ADD 1)"
}
hits() { $XK -j status | jq '[.[0].probes[].hits] | add'; }
settled() { $XK -j status | jq -r '[.[0].probes[] | .settle] | join(",")'; }

compiled=$(fields)
expect_eq "compiled-in immediates (32, -32, 64)" "$compiled" "20000000 e0 40"
base=$(unplugs)

# 1. set --settle: loaded at 16, then settled
$XK set --settle BLK_MAX_REQUEST_COUNT=16 || fail "set --settle failed"
expect_eq "span states after settle" "$(settled)" "settled,settled"
expect_eq "immediates settled at 16" "$(fields)" "10000000 f0 20"
expect_eq "probes left in the block functions" "$(probes_left)" 0
h0=$(hits)
n16=$(unplugs)
h1=$(hits)
expect_eq "rewrites while settled (no probe runs)" "$h1" "$h0"
log "unplugs for 64 MiB: N=32 $base, N=16 settled $n16"
[ $((n16 * 10)) -ge $((base * 16)) ] || fail "settled N=16 flushed $n16 times, want >= 1.6x $base"
rmmod xkernel 2>/dev/null && fail "xkernel.ko removed while settled"
dmesg | grep -q "xkernel: settle BLK_MAX_REQUEST_COUNT = 16: 2 spans settled" ||
	fail "settle not in the kernel log"

# 2. a new value: compiled bytes and probes back first, then the value
$XK set BLK_MAX_REQUEST_COUNT=8 || fail "set 8 failed"
expect_eq "immediates after a new value" "$(fields)" "$compiled"
expect_eq "span states after a new value" "$(settled)" "probed,probed"
[ "$(probes_left)" -ge 2 ] || fail "probes not back after a new value"
h2=$(hits)
n8=$(unplugs)
[ "$(hits)" -gt "$h2" ] || fail "no rewrite counted at N=8 (probed)"
[ $((n8 * 10)) -ge $((n16 * 16)) ] || fail "N=8 flushed $n8 times, want >= 1.6x $n16"

# 3. a value one span cannot hold (add $200: no imm8): that span keeps its probe
$XK set --settle BLK_MAX_REQUEST_COUNT=100 || fail "set --settle 100 failed"
expect_eq "span states at 100" "$(settled)" \
	"the value needs a longer immediate,settled"
expect_eq "immediates at 100" "$(fields)" "64000000 e0 40"
n100=$(unplugs)
[ "$n100" -lt "$base" ] || fail "N=100 flushed $n100 times, not fewer than $base"

# 4. another kprobe on the instruction: that span keeps its probe, bytes unchanged
$XK settle --undo BLK_MAX_REQUEST_COUNT || fail "settle --undo failed"
expect_eq "immediates after --undo" "$(fields)" "$compiled"
echo "p:xk_owner blk_start_plug_nr_ios+$MOV_INSN" >> $TRACE/kprobe_events || fail "no kprobe event"
echo 1 > $TRACE/events/kprobes/xk_owner/enable
out=$($XK settle BLK_MAX_REQUEST_COUNT) || fail "settle with a foreign kprobe failed: $out"
log "$out"
expect_eq "span states with a foreign kprobe" "$(settled)" \
	"the value needs a longer immediate,another kprobe or patch holds the bytes"
echo 0 > $TRACE/events/kprobes/xk_owner/enable
echo '-:xk_owner' >> $TRACE/kprobe_events
expect_eq "immediate under the foreign kprobe" "$(kbytes blk_start_plug_nr_ios $MOV 4)" 20000000

# 5. settled, then unloaded: compiled bytes back, no probe, module removable
$XK set --settle BLK_MAX_REQUEST_COUNT=16 || fail "set --settle 16 again failed"
expect_eq "immediates settled at 16 again" "$(fields)" "10000000 f0 20"
$XK unload BLK_MAX_REQUEST_COUNT || fail "unload failed"
expect_eq "immediates after unload" "$(fields)" "$compiled"
expect_eq "probes left after unload" "$(probes_left)" 0
after=$(unplugs)
[ $((after * 100)) -ge $((base * 95)) ] && [ $((after * 100)) -le $((base * 105)) ] ||
	fail "after unload $after, want $base +-5%"
rmmod xkernel || fail "xkernel.ko not removable after unload"
log "unplugs: N=32 $base, N=16 settled $n16, N=8 probed $n8, N=100 half settled $n100, after unload $after"
