#!/bin/bash
# FQ_DEFAULT_INITIAL_QUANTUM_MTUS retuned live in the replayed form, with
# a replayed store, in a module. fq_init() sets a new fq qdisc's initial
# quantum to 10 * psched_mtu(dev) (min'ed with 1 MiB): a multiply by 10
# that every other value compiles to another schedule, one of whose
# regions also stores a field (`movb $1, 0x1ba(%rdi)` moves with the
# schedule): the module writes that store where the baseline's region
# stores, with the register it had at the region's start. tc shows the
# quantum of a qdisc made on lo: default (10 MTUs), at 5, at 9, unloaded.
. "$(dirname "$0")/lib.sh"
modprobe sch_fq || fail "no sch_fq"
trap 'cleanup_xk; tc qdisc del dev lo root 2>/dev/null' EXIT
ip link set lo up
iq() {	# a new fq on lo, its initial quantum
	tc qdisc del dev lo root 2>/dev/null
	tc qdisc add dev lo root fq || fail "tc qdisc add fq"
	tc -j qdisc show dev lo | jq '.[0].options.initial_quantum'
}
# every other option of that qdisc (the replayed store sets one of them)
others() { tc -j qdisc show dev lo | jq -c '.[0].options | del(.initial_quantum)'; }
before=$(iq)
opts_before=$(others)
[ "$before" -gt 0 ] 2>/dev/null || fail "no initial quantum: $before"
mtu=$((before / 10))
$XK load --value 5 FQ_DEFAULT_INITIAL_QUANTUM_MTUS 2> /tmp/fq.err ||
	fail "load 5 failed: $(cat /tmp/fq.err)"
at5=$(iq)
opts5=$(others)
$XK set FQ_DEFAULT_INITIAL_QUANTUM_MTUS=9 2> /tmp/fq.err || fail "set 9 failed: $(cat /tmp/fq.err)"
at9=$(iq)
stores=$($XK -j status | jq '[.[] | select(.constant == "FQ_DEFAULT_INITIAL_QUANTUM_MTUS") | (.probes // .spans)[].hits] | add')
$XK unload FQ_DEFAULT_INITIAL_QUANTUM_MTUS || fail "unload failed"
back=$(iq)
log "fq initial quantum on lo (psched_mtu $mtu): default $before, 5 -> $at5, 9 -> $at9, unloaded $back; $stores replays"
expect_eq "default" "$before" $((10 * mtu))
expect_eq "at 5" "$at5" $((5 * mtu))
expect_eq "at 9" "$at9" $((9 * mtu))
expect_eq "unloaded" "$back" "$before"
expect_eq "the other options at 5" "$opts5" "$opts_before"
[ "${stores:-0}" -gt 0 ] || fail "no replay counted"
[ "$(grep -c fq_init /sys/kernel/debug/kprobes/list)" = 0 ] || fail "probes left"
