#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/kernel-tree.sh RELEASE [CONSTANT...] [-- GOLDEN...]: this working
# tree made ready for another kernel than the default, apart from it, for
# make demo RELEASE=R and make check-kernels:
#   - the kernel fetched into a cache of its own ($XK_CACHE-RELEASE), its
#     downloaded packages shared with the default cache, so the default
#     cache keeps its kernels and no command's target changes; with
#     XK_BUILD_DIR=DIR, the kernel built from source in DIR (of release
#     RELEASE) added to that cache instead (xk kernel use --build-dir);
#   - the tree as it is (tracked and new files, no build output) copied to
#     build/kernels/RELEASE and built there for that kernel (xk, the
#     module, the golden module, the policies);
#   - the tables of the CONSTANTs (the catalog's) and of the GOLDEN cases
#     (tests/fixtures/golden/golden.conf) made with that copy.
# Prints the copy's directory and cache ("WORK CACHE") on its last line;
# the status is 0 when every step succeeded.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 125
[ $# -ge 1 ] || { echo "usage: $0 RELEASE [CONSTANT...] [-- GOLDEN...]" >&2; exit 2; }
release=$1
shift
base=${XK_CACHE:-$HOME/.cache/xkernel}
work=$PWD/build/kernels/$release
cache=$base-$release
real=()
golden=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do real+=("$1"); shift; done
[ $# -gt 0 ] && shift
golden=("$@")

mkdir -p "$cache" "$work" "$base/debs" || exit 1
[ -e "$cache/debs" ] || ln -s "$base/debs" "$cache/debs" || exit 1
git ls-files -z --cached --others --exclude-standard |
	tar -c --null -T - | tar -x -C "$work" || exit 1
make -C "$work" -j2 build/xk >/dev/null || exit 1
if [ -n "${XK_BUILD_DIR:-}" ]; then
	XK_CACHE=$cache "$work/build/xk" -q kernel use --build-dir "$XK_BUILD_DIR" \
		>/dev/null || exit 1
else
	XK_CACHE=$cache "$work/build/xk" -q kernel fetch --release "$release" || exit 1
fi
XK_CACHE=$cache XK_RELEASE=$release make -C "$work" -j2 >/dev/null || exit 1
cd "$work" || exit 1
for c in "${real[@]}"; do
	XK_CACHE=$cache XK_RELEASE=$release build/xk -q gen "$c" >/dev/null ||
		exit 1
done
for c in "${golden[@]}"; do
	XK_CACHE=$cache XK_RELEASE=$release build/xk -q gen \
		--catalog tests/fixtures/golden/golden.conf "$c" >/dev/null || exit 1
done
echo "$work $cache"
