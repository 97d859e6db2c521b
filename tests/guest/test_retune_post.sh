#!/bin/bash
# IORING_MAX_ENTRIES retuned live where a span's probe point is a branch
# target. io_uring_setup clamps `entries = IORING_MAX_ENTRIES` (with
# IORING_SETUP_CLAMP) and joins the unclamped path at +0x94: a probe there
# would also rewrite the entries of a small ring. The table puts that
# span's rewrite probe on the clamp's own instruction (post handler):
# - 65536 entries, clamped: the ring gets IORING_MAX_ENTRIES entries;
# - 100 entries, clamped: 128 (rounded up), whatever the value (the path
#   that did not clamp is never rewritten);
# - 8192 entries, not clamped: refused (EINVAL, 22) above the value.
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT
rings() {	# SQ entries of rings asked for 65536 and 100 (clamped), 8192 (strict)
	python3 tests/guest/ring_entries.py 65536:clamp 100:clamp 8192 | sed 's|/[0-9]*||g'
}
$XK -j gen IORING_MAX_ENTRIES > /tmp/post.json || fail "gen failed"
post=$(jq '[.span_list[] | select(.post_len > 0)] | length' /tmp/post.json)
[ "$post" -ge 1 ] || fail "no span probed on its last instruction: $(jq -c '[.span_list[] | {function, probe, class}]' /tmp/post.json)"
read -r big small strict <<< "$(rings)"
$XK set IORING_MAX_ENTRIES=4096 || fail "set 4096 failed"
read -r big2 small2 strict2 <<< "$(rings)"
$XK status | grep -A6 IORING_MAX_ENTRIES
$XK set IORING_MAX_ENTRIES=16384 || fail "set 16384 failed"
read -r big3 small3 strict3 <<< "$(rings)"
$XK unload IORING_MAX_ENTRIES || fail "unload failed"
read -r big4 small4 strict4 <<< "$(rings)"
log "SQ entries (65536 clamped, 100 clamped, 8192 strict): 32768: $big $small $strict; 4096: $big2 $small2 $strict2; 16384: $big3 $small3 $strict3; unloaded: $big4 $small4 $strict4"
expect_eq "default, clamped" "$big" 32768
expect_eq "default, small" "$small" 128
expect_eq "default, strict" "$strict" 8192
expect_eq "4096, clamped (the post-probed span)" "$big2" 4096
expect_eq "4096, small ring untouched" "$small2" 128
expect_eq "4096, strict above the value" "$strict2" E22
expect_eq "16384, clamped" "$big3" 16384
expect_eq "16384, small ring untouched" "$small3" 128
expect_eq "16384, strict below the value" "$strict3" 8192
expect_eq "unloaded, clamped" "$big4" 32768
[ "$(grep -c io_uring_setup /sys/kernel/debug/kprobes/list)" = 0 ] || fail "probes left"
