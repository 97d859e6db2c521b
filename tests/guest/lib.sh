# SPDX-License-Identifier: GPL-2.0
# Helpers for guest tests: source it; every failed check exits 1.
set -u
cd "$XK_TOP"
XK=$XK_TOP/build/xk
MODULE=$XK_TOP/kmod/xkernel.ko
fail() { echo "FAIL: $*"; exit 1; }
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }
log() { echo "$*"; }
