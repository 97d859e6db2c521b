#!/bin/bash
# Bad input is refused with the cause named and nothing left behind: a
# table from another build (a byte changed), a value out of bounds, an
# unknown constant, a malformed table, a caller without CAP_SYS_ADMIN, a
# constant with a use the analysis refused (never half-applied unless
# --partial, and then xk status names the use that keeps the old value).
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT
dir=$($XK kernel info --field dir)
tbl=$dir/scopes/BLK_MAX_REQUEST_COUNT.scope
[ -f "$tbl" ] || fail "no scope table $tbl (xk gen BLK_MAX_REQUEST_COUNT)"

# another build: flip the second expected byte of the second span (its
# immediate: the instruction still writes its register; the imm lines go)
awk '/^span 1$/ { s = 1 } s && /^imm / { next }
     s && /^expect / && !done { $3 = "90"; done = 1 } { print }' \
	"$tbl" > /tmp/other.scope
out=$($XK load /tmp/other.scope --value 4 2>&1) && fail "a table of another build loaded"
echo "$out" | grep -Eq "blk_start_plug_nr_ios\+0x[0-9a-f]+ holds [0-9a-f]{2} where the table expects 90" ||
	fail "refusal does not name the location: $out"
[ "$(probes_left)" = 0 ] || fail "a refused load left probes"

out=$($XK load "$tbl" --value 100000 2>&1) && fail "out-of-bounds value loaded"
echo "$out" | grep -q "value 100000 is out of bounds \[2, 512\]" || fail "bounds: $out"

# not a macro's name: refused from the catalog, no search of the source
out=$($XK set no_such_constant=3 2>&1) && fail "unknown constant accepted"
echo "$out" | grep -q "unknown constant 'no_such_constant'" || fail "unknown: $out"

printf 'xkernel-scope-table 1\nconstant X\n' > /tmp/bad.scope
out=$($XK load /tmp/bad.scope 2>&1) && fail "malformed table loaded"
echo "$out" | grep -q "malformed scope table" || fail "malformed: $out"

# TCP_FASTRETRANS_THRESH: tcp_sk_init is retunable, __tcp_ack_snd_check not
out=$($XK set TCP_FASTRETRANS_THRESH=5 2>&1) && fail "a half-retunable constant was set"
echo "$out" | grep -Eq "TCP_FASTRETRANS_THRESH: [0-9]+ of [0-9]+ uses cannot be retuned: __tcp_ack_snd_check" ||
	fail "partial refusal: $out"
expect_eq "probes after the partial refusal" "$(grep -c tcp_sk_init /sys/kernel/debug/kprobes/list)" 0
$XK set --partial TCP_FASTRETRANS_THRESH=5 >/dev/null || fail "--partial refused"
out=$($XK status)
echo "$out" | grep -Eq "__tcp_ack_snd_check\+0x[0-9a-f]+: keeps 3 \(" || fail "status: $out"
expect_eq "kept uses in JSON" "$($XK -j status | jq -r '.[] | select(.constant == "TCP_FASTRETRANS_THRESH") | .kept[0].function')" __tcp_ack_snd_check
$XK unload TCP_FASTRETRANS_THRESH >/dev/null || fail "unload"

$XK load "$tbl" || fail "load"
chmod 0666 /dev/xkernel
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups $XK status 2>&1) &&
	fail "a non-root caller read the status"
echo "$out" | grep -q "CAP_SYS_ADMIN" || fail "non-root: $out"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups $XK set BLK_MAX_REQUEST_COUNT=4 2>&1) &&
	fail "a non-root caller changed a value"
expect_eq "value after refusals" "$($XK -j status | jq '.[0].value')" 32
log "other build, bounds, unknown, malformed, half-retunable and non-root refused"
