#!/bin/bash
# xk apply: persistent tunings in /etc/xkernel and /usr/lib/xkernel switch in
# one transaction; /etc overrides /usr/lib by file name, later settings win;
# a constant whose table cannot be read is named with its file, line and
# cause while the others are still applied; unload --all undoes it all.
. "$(dirname "$0")/lib.sh"
scopes=$($XK -q kernel info --field dir)/scopes
trap 'cleanup_xk; rm -rf /etc/xkernel /usr/lib/xkernel "$scopes/XK_BROKEN.scope"' EXIT
value() { $XK -j status | jq ".[] | select(.constant == \"$1\") | .value"; }
mkdir -p /etc/xkernel /usr/lib/xkernel "$scopes"
printf 'BLK_MAX_REQUEST_COUNT = 64\n' > /usr/lib/xkernel/50-blk.conf
printf '# the admin'"'"'s\nBLK_MAX_REQUEST_COUNT = 8\n' > /etc/xkernel/50-blk.conf
printf 'SHRINK_BATCH = 100\nBLK_MAX_REQUEST_COUNT = 4\n' > /usr/lib/xkernel/60-late.conf
$XK -j apply --dry-run | jq -c .constants
out=$($XK apply 2>&1) || fail "xk apply failed: $out"
log "$out"
echo "$out" | grep -q "applied 2 constants in one transaction (immediate" ||
	fail "not one transaction of 2: $out"
expect_eq "BLK_MAX_REQUEST_COUNT" "$(value BLK_MAX_REQUEST_COUNT)" 4
expect_eq "SHRINK_BATCH" "$(value SHRINK_BATCH)" 100
dmesg | grep -q "set BLK_MAX_REQUEST_COUNT by xk\[[0-9]*\] uid 0: 32 -> 4 (immediate, one transaction" ||
	fail "transaction not in the kernel log"
$XK unload --all || fail "unload --all"
[ "$(probes_left)" = 0 ] || fail "probes left after unload --all"
# a table that cannot be read: named, and the rest still applied (status 1)
echo garbage > "$scopes/XK_BROKEN.scope"
printf 'XK_BROKEN = 3\n' > /etc/xkernel/70-broken.conf
out=$($XK apply 2>&1)
expect_eq "status with a broken table" $? 1
log "$out"
echo "$out" | grep -q "^xk: error: XK_BROKEN (/etc/xkernel/70-broken.conf:1): .*scope table" ||
	fail "the broken constant is not named with its cause: $out"
expect_eq "BLK_MAX_REQUEST_COUNT beside the broken one" "$(value BLK_MAX_REQUEST_COUNT)" 4
expect_eq "SHRINK_BATCH beside the broken one" "$(value SHRINK_BATCH)" 100
out=$($XK -j apply)
expect_eq "JSON failed" "$(echo "$out" | jq .failed)" 1
expect_eq "JSON applied" "$(echo "$out" | jq .applied)" 2
$XK unload --all || fail "unload --all"
$XK unload --all || fail "unload --all with nothing loaded"
[ "$(probes_left)" = 0 ] || fail "probes left after unload --all"
