#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: retune BLK_MAX_REQUEST_COUNT live in Debian's stock kernel.
#   1. analyse the constant offline (xk gen: objects rebuilt, spans found);
#   2. boot the stock kernel under QEMU and, inside it, run a block workload
#      (dd on null_blk) at the compiled-in value, then at 4 and 128 set live,
#      then after unload: the plug flush counts show the effect.
#
# RELEASE=R (make demo RELEASE=R): that kernel; one the default cache lacks
# is fetched into a cache of its own and this tree built for it apart
# (scripts/kernel-tree.sh), and the demo runs from there; with
# XK_BUILD_DIR=DIR, R is the kernel built from source in DIR, added instead
# of fetched (xk kernel use --build-dir).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${RELEASE:-}" ]; then
	if build/xk -q kernel info --release "$RELEASE" --field release \
		>/dev/null 2>&1; then
		XK_RELEASE=$RELEASE
	else
		how="fetched into a cache of its own"
		[ -n "${XK_BUILD_DIR:-}" ] && how="added from $XK_BUILD_DIR to a cache of its own"
		echo "== $RELEASE: $how, this tree built for it"
		if ! out=$(scripts/kernel-tree.sh "$RELEASE" BLK_MAX_REQUEST_COUNT); then
			echo "demo: $RELEASE could not be fetched, built or analysed" >&2
			exit 1
		fi
		read -r work cache <<<"$(tail -n 1 <<<"$out")"
		cd "$work"
		export XK_CACHE=$cache XK_RELEASE=$RELEASE
	fi
fi
# one kernel for both halves, whatever is fetched meanwhile: the target
# (xk help kernel; xk names the cause when there is none)
XK_RELEASE=${XK_RELEASE:-$(build/xk -q kernel info --field release)}
export XK_RELEASE
echo "== offline: analysing BLK_MAX_REQUEST_COUNT in the kernel's objects"
build/xk gen --explain BLK_MAX_REQUEST_COUNT
echo
echo "== online: booting $XK_RELEASE under QEMU"
exec build/xk vm run --timeout 900 -- scripts/demo-guest.sh
