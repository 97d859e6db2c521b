#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# All set-up on a fresh Debian 12 (bookworm) machine, idempotent:
#   1. the Debian packages xkernel builds and tests with;
#   2. the build (make);
#   3. the kernel: Debian's current 6.12 cloud kernel (or $XK_RELEASE),
#      fetched and prepared in $XK_CACHE (xk kernel fetch), then the module
#      against it. On a fresh machine it is the only kernel in the cache, so
#      the target of every command (xk help kernel); beside others it is
#      not, unless chosen (build/xk kernel use RELEASE).
# A second run only checks: seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
	# build of libxk, xk and the tests
	make gcc gcc-12 libc6-dev pkg-config libelf-dev libcapstone-dev jq
	# the kernel's own single-object builds and out-of-tree modules
	flex bison bc libssl-dev dwarves kmod cpio xz-utils
	# eBPF policies
	clang llvm libbpf-dev bpftool
	# the guest
	qemu-system-x86 busybox-static util-linux
	# workloads in the guest
	fio iperf3 iproute2
	# xk tune --plot (tests/guest/test_tune.sh)
	gnuplot-nox
	# make deb: the packages, their DKMS module, lintian's check
	debhelper dh-dkms dkms lintian dpkg-dev
	# make check-debian: the Debian guest's image (scripts/debian-image.sh)
	# and the copy-on-write disk each run boots
	mmdebstrap qemu-utils
)

if [ "$(id -u)" != 0 ]; then
	echo "setup.sh: run as root (it installs Debian packages)" >&2
	exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
# the package lists must be fresh enough to resolve the current kernel
lists_age=$(( $(date +%s) - $(stat -c %Y /var/lib/apt/lists 2>/dev/null || echo 0) ))
if [ ${#missing[@]} -gt 0 ] || [ "$lists_age" -gt 86400 ]; then
	echo "setup: apt-get update"
	apt-get update -q >/dev/null
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}" >/dev/null
fi

make -s
fetched=$(build/xk kernel fetch)
printf '%s\n' "$fetched"
# the steps below act on the kernel just fetched, whatever the target is
XK_RELEASE=$(awk '$1 == "release:" { print $2 }' <<< "$fetched")
export XK_RELEASE
make -s kmod policies
echo "setup: done (cache: $(build/xk -j kernel info | jq -r .dir))"
if ! env -u XK_RELEASE build/xk -q kernel info >/dev/null 2>&1; then
	echo "setup: the cache holds several kernels and none is the target:" \
		"'build/xk kernel use $XK_RELEASE' makes this one the target" >&2
fi
