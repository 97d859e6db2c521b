#!/bin/bash
# The module built by the project against the target's headers loads,
# creates its control device, refuses a caller without CAP_SYS_ADMIN, and
# unloads without a trace.
. "$(dirname "$0")/lib.sh"
[ -f "$MODULE" ] || fail "$MODULE not built (make kmod)"
insmod "$MODULE" || fail "insmod failed"
trap 'rmmod xkernel 2>/dev/null' EXIT
grep -q '^xkernel ' /proc/modules || fail "not in /proc/modules"
[ -c /dev/xkernel ] || fail "no /dev/xkernel"
dmesg | grep -q "xkernel: loaded" || fail "no load message"
# the device node is 0600; open it up to test the module's own check
chmod 0666 /dev/xkernel
if setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'exec 3</dev/xkernel' 2>/dev/null; then
	fail "an unprivileged caller could open /dev/xkernel"
fi
dmesg | grep -q "xkernel: open refused: .* lacks CAP_SYS_ADMIN" || fail "refusal not logged"
rmmod xkernel || fail "rmmod failed"
trap - EXIT
! grep -q '^xkernel ' /proc/modules || fail "still loaded after rmmod"
[ ! -e /dev/xkernel ] || fail "/dev/xkernel left behind"
log "loaded, refused uid 65534, unloaded"
