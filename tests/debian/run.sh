#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debian: xkernel installed from its packages on a Debian system
# with systemd, in the guest. On the host: the Debian image (cached,
# scripts/debian-image.sh), the packages (make deb, done by the Makefile
# before this), the package of shipped scope tables (scripts/scopes-deb.sh,
# for the one constant the test retunes), all staged in
# build/debian-test/; then one guest run
# (two boots) of tests/debian/test_installed.sh, holding the guest lock.
# TAP; the status is the guest test's.
set -u
cd "$(dirname "$0")/../.." || exit 125
export XK_CACHE=${XK_CACHE:-$HOME/.cache/xkernel}
# one kernel throughout (the target when it starts: xk help kernel)
if [ -z "${XK_RELEASE:-}" ] && rel=$(build/xk -q kernel info --field release 2>/dev/null); then
	export XK_RELEASE=$rel
fi
stage=build/debian-test
lock=${XK_GUEST_LOCK:-/tmp/xk-guest.lock}

scripts/debian-image.sh | sed 's/^/# /'
[ "${PIPESTATUS[0]}" = 0 ] || { echo "not ok - the Debian image"; exit 1; }
rm -rf $stage
mkdir -p $stage
v=$(dpkg-parsechangelog -S Version)
for p in xkernel xkernel-dkms xkernel-dev; do
	cp build/deb/${p}_${v}_*.deb $stage/ 2>/dev/null ||
		{ echo "not ok - build/deb/${p}_${v}_*.deb missing (make deb)"; exit 1; }
done
# the shipped tables (xkernel-scopes-RELEASE) of the constant the test
# retunes; tables under the cache are read by guests: made under the lock
rm -f build/deb/xkernel-scopes-"$XK_RELEASE"_*.deb
flock "$lock" env CONSTANTS=BLK_MAX_REQUEST_COUNT scripts/scopes-deb.sh | sed 's/^/# /' &&
	cp build/deb/xkernel-scopes-"$XK_RELEASE"_"${v}"_amd64.deb $stage/ ||
	{ echo "not ok - the package xkernel-scopes-$XK_RELEASE"; exit 1; }
start=$(date +%s)
XK_VM_TIMES=1 flock "$lock" build/xk vm run --debian --timeout "${XK_DEBIAN_TIMEOUT:-1500}" -- \
	tests/debian/test_installed.sh $stage
st=$?
echo "# the Debian guest: status $st, $(( $(date +%s) - start )) s with the wait for $lock"
exit $st
