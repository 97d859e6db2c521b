#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make scopes-deb [RELEASE=R] [CONSTANTS="A B ..."]: the package
# xkernel-scopes-R, the analysed scope tables of a kernel release, so that
# a host running that kernel retunes with xkernel and xkernel-dkms alone:
# no source tree, no compiler, no cache. It holds
#   /usr/lib/xkernel/scopes/R/NAME.scope   one per constant
#   /usr/lib/xkernel/scopes/R/build-id     the GNU build id of R's image
# and xk uses a shipped table only on a kernel of that build id (xk help
# load). R: RELEASE, else XK_RELEASE, else the target kernel; it must be in
# the cache with its source (xk kernel fetch --release R). CONSTANTS: by
# default every constant of the catalog; a constant xk gen fails on fails
# the package, named, unless KEEP_GOING=1 (then it is left out, named).
# The package lands in build/deb/.
set -euo pipefail
cd "$(dirname "$0")/.."
XK=build/xk
release=${RELEASE:-${XK_RELEASE:-$($XK -q kernel info --field release)}}
export XK_RELEASE=$release
dir=$($XK -q kernel info --field dir)
build_id=$($XK -q kernel info --field build_id)
kversion=$($XK -q kernel info --field version)
version=$(dpkg-parsechangelog -S Version)
names=${CONSTANTS:-$($XK gen --list)}
pkg=xkernel-scopes-$release
stage=build/scopes-deb/$pkg
out=build/deb

rm -rf "$stage"
mkdir -p "$stage/DEBIAN" "$stage/usr/lib/xkernel/scopes/$release" \
	"$stage/usr/share/doc/$pkg" "$out"
failed=()
n=0
for c in $names; do
	if ! err=$($XK -q gen "$c" 2>&1 >/dev/null); then
		failed+=("$c")
		echo "scopes-deb: $c: ${err##*xk: error: }" >&2
		continue
	fi
	install -m 0644 "$dir/scopes/$c.scope" "$stage/usr/lib/xkernel/scopes/$release/"
	n=$((n + 1))
done
if [ ${#failed[@]} -gt 0 ] && [ "${KEEP_GOING:-0}" != 1 ]; then
	echo "scopes-deb: xk gen failed for ${failed[*]} (KEEP_GOING=1 leaves them out)" >&2
	exit 1
fi
[ $n -gt 0 ] || { echo "scopes-deb: no table to ship" >&2; exit 1; }
echo "$build_id" > "$stage/usr/lib/xkernel/scopes/$release/build-id"

tables="$n table$([ $n = 1 ] || echo s)"
cp debian/copyright "$stage/usr/share/doc/$pkg/copyright"
{
	echo "$pkg ($version) unstable; urgency=medium"
	echo
	echo "  * Scope tables of $n constants for $release" | fold -s -w 76 |
		sed '2,$s/^ */    /'
	echo
	echo " -- $(dpkg-parsechangelog -S Maintainer)  $(dpkg-parsechangelog -S Date)"
} | gzip -9n > "$stage/usr/share/doc/$pkg/changelog.gz"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
{
	cat <<EOF
Package: $pkg
Source: xkernel
Version: $version
Architecture: amd64
Maintainer: $(dpkg-parsechangelog -S Maintainer)
Installed-Size: $size
Depends: xkernel (>= $version)
Recommends: xkernel-dkms
Section: admin
Priority: optional
Description: xkernel's scope tables for Linux $release
EOF
	echo "The analysed scope tables ($tables) for the kernel $release" \
		"(Debian package version $kversion, build id $build_id), so that" \
		"xk set and xk load retune them on a host running that kernel" \
		"without its source tree or a compiler. xk uses them only on a" \
		"kernel of that build id." | fold -s -w 72 | sed 's/ *$//; s/^/ /'
} > "$stage/DEBIAN/control"
deb=$out/${pkg}_${version}_amd64.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "scopes-deb: $deb: $tables for $release, build id $build_id${failed[*]:+; left out: ${failed[*]}}"
