#!/bin/bash
# The guest runs the fetched stock kernel: its release and Debian version
# are those recorded by xk kernel fetch.
. "$(dirname "$0")/lib.sh"
want_rel=$($XK kernel info --field release) || fail "no kernel in the cache"
want_ver=$($XK kernel info --field version)
expect_eq "uname -r" "$(uname -r)" "$want_rel"
grep -qF "Debian $want_ver" /proc/version ||
	fail "/proc/version does not name Debian $want_ver: $(cat /proc/version)"
log "running $want_rel ($want_ver)"
