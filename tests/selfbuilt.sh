#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-selfbuilt: xkernel on a kernel the user built from source, not
# Debian's packages. The source of the default kernel (its linux-source
# package, already in the cache) is unpacked into build/selfbuilt/, given
# a small configuration (tinyconfig and tests/fixtures/selfbuilt/small.config:
# modules, kprobes, tracing, virtio and virtiofs, null_blk; no BTF, so no
# policies) and built with this host's compiler (make -j, minutes on two
# cores; kept, and rebuilt only when the configuration changes). Then
# tests/kernels.sh runs on it with XK_BUILD_DIR: a cache of its own where
# xk kernel use --build-dir adds it, this tree built for it, the analysis
# on its objects, and the guest tests every kernel must pass (but one, see
# below), booted on it.
# TAP; the status is 0 when every test passed.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 125
top=$PWD
XK=build/xk
out=$top/build/selfbuilt
src=$out/linux
version=$($XK -q kernel info --field version) || exit 1
series=$($XK -q kernel info --field release | grep -o '^[0-9]*\.[0-9]*') || exit 1
base=${XK_CACHE:-$HOME/.cache/xkernel}
deb=$base/debs/linux-source-${series}_${version}_all.deb
[ -f "$deb" ] || { echo "not ok - no source package $deb (xk kernel fetch)"; exit 1; }

start=$(date +%s)
if [ ! -f "$src/Makefile" ]; then
	echo "# unpacking $(basename "$deb") into $src"
	rm -rf "$src" && mkdir -p "$out" || exit 1
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xO "./usr/src/linux-source-$series.tar.xz" | tar -xJ -C "$out" || exit 1
	mv "$out/linux-source-$series" "$src" || exit 1
fi
cd "$src" || exit 1
want=$(cat "$top/tests/fixtures/selfbuilt/small.config")
if [ ! -f .xk-config ] || [ "$(cat .xk-config)" != "$want" ]; then
	echo "# configuring: tinyconfig and tests/fixtures/selfbuilt/small.config"
	{ make tinyconfig &&
	  scripts/kconfig/merge_config.sh -m .config "$top/tests/fixtures/selfbuilt/small.config" &&
	  make olddefconfig; } > "$out/config.log" 2>&1 || {
		echo "not ok - configuring the kernel (see $out/config.log)"; exit 1; }
	printf '%s\n' "$want" > .xk-config
fi
# every option asked for is in the configuration made
while IFS= read -r line; do
	case $line in CONFIG_*=*)
		grep -qxF -- "$line" .config || {
			echo "not ok - $line did not survive olddefconfig"; exit 1; } ;;
	esac
done < "$top/tests/fixtures/selfbuilt/small.config"
echo "# building $(make -s kernelrelease) in $src"
make -j"$(nproc)" > "$out/build.log" 2>&1 || {
	echo "not ok - building the kernel (see $out/build.log)"; tail -5 "$out/build.log"; exit 1; }
release=$(cat include/config/kernel.release)
echo "ok - $release built in $(($(date +%s) - start)) s"
cd "$top" || exit 1
# every kernel's guest tests but test_settle, which reads the immediates
# Debian's build of blk_add_rq_to_plug has (this configuration compiles it
# without them: xk settle keeps that span's probe and says why)
XK_BUILD_DIR=$src KERNELS=$release TESTS="test_module_load test_kprobes
	test_doctor test_refusals test_global_transition test_pertask_transition
	test_transaction test_unload_busy test_retune_blk test_retune_shrink
	test_status_addresses test_policy_blk test_retune_golden" tests/kernels.sh
