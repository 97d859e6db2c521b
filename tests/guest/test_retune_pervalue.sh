#!/bin/bash
# GSO_MAX_SEGS retuned live through a span of the per-value form.
# alloc_netdev_mqs sets gso_max_segs and tso_max_segs, two adjacent u16
# fields, with one `mov $0xffffffff, %edx`: the immediate is
# (TSO_MAX_SEGS << 16) | N, 16-bit fields, no a*N+b over the variants'
# values. The span takes its parameter per value from a build with that
# value; the host built 1000's variant (tests/run.sh), so the set here
# prepares the point from the cached build (shape and value checked) and
# hands it to the loaded module, which refused the value until then. Every device made afterwards (the loopback of a
# new network namespace) carries the value:
# - default: 65535; set 1000: a new namespace's lo has gso_max_segs 1000,
#   tso_max_segs still 65535 (the other field of the same immediate), the
#   existing lo keeps 65535;
# - 777 was never built: --no-build refuses it, naming --prepare, and the
#   module keeps 1000 (it refuses a value with no point itself too);
# - unload: 65535 again.
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT
segs() { unshare -n ip -d link show lo | grep -o "$1 [0-9]*" | cut -d' ' -f2; }
# the table (tests/run.sh) has no point at 1000: the set must make it
# (no xk gen here: its search of the source tree through virtiofs would
# take a file descriptor of virtiofsd per file of the tree)
before=$(segs gso_max_segs)
# loaded at the default first: the module refuses 1000 (no point), the
# set prepares it and hands it over (XK_IOC_POINT), then sets it
# --partial: the drivers its catalog entry leaves out keep the
# compiled-in value (their GSO_MAX_SIZE, 8 * GSO_MAX_SEGS)
$XK load --partial GSO_MAX_SEGS || fail "load failed"
$XK set GSO_MAX_SEGS=1000 2> /tmp/pv.err || fail "set 1000 failed: $(cat /tmp/pv.err)"
cat /tmp/pv.err
grep -q "per-value parameters of" /tmp/pv.err || fail "the set did not prepare the value"
after=$(segs gso_max_segs)
tso=$(segs tso_max_segs)
host=$(ip -d link show lo | grep -o "gso_max_segs [0-9]*" | cut -d' ' -f2)
$XK set --no-build GSO_MAX_SEGS=777 2> /tmp/pv.err && fail "777 was set without a build"
cat /tmp/pv.err
grep -q "prepare 777" /tmp/pv.err || fail "the refusal does not name --prepare: $(cat /tmp/pv.err)"
kept=$(segs gso_max_segs)
value=$($XK -j status | jq '.[] | select(.constant == "GSO_MAX_SEGS") | .value')
grep -q "point GSO_MAX_SEGS: value 1000" <(dmesg) || fail "the module took no point"
$XK unload GSO_MAX_SEGS || fail "unload failed"
back=$(segs gso_max_segs)
log "gso_max_segs of a new lo: default $before, 1000 -> $after (tso $tso, lo of the host namespace $host), after the refused 777 $kept (status $value), unloaded $back"
expect_eq "default" "$before" 65535
expect_eq "1000 (the per-value span)" "$after" 1000
expect_eq "the other field of the immediate" "$tso" 65535
expect_eq "a device made before" "$host" 65535
expect_eq "after 777 was refused" "$kept" 1000
expect_eq "status after 777 was refused" "$value" 1000
expect_eq "unloaded" "$back" 65535
[ "$(grep -c alloc_netdev_mqs /sys/kernel/debug/kprobes/list)" = 0 ] || fail "probes left"
