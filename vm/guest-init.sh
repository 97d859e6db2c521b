#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# xkernel guest init: PID 1 of the initramfs that `xk vm run` builds.
#
# The guest sees the host's root file system read-only (virtiofs, tag
# "hostroot") under a tmpfs overlay, so every host tool (fio, iperf3, kmod,
# bpftool, the project's own build) runs in the guest and nothing the guest
# writes reaches the host. /lib/modules/<release> is the target kernel's
# module tree from the xkernel cache.
#
# Serial ports (see lib/vm.c): ttyS0 kernel console -> console.log,
# ttyS1 the command's output -> the host's stdout, ttyS2 the full kernel log
# at the end -> dmesg.log. The command's exit status comes back on ttyS1 as a
# line "\001XK-EXIT <status>".

B=/bin/busybox
OUT=/dev/ttyS1
$B mkdir -p /proc /sys /dev /lower /upper /newroot
$B mount -t proc proc /proc
$B mount -t sysfs sysfs /sys
$B mount -t devtmpfs devtmpfs /dev
. /xk/env

finish() {
	$B dmesg > /dev/ttyS2 2>&1
	$B printf '\001XK-EXIT %d\n' "$1" > $OUT
	$B sync
	$B poweroff -f
}

fail() {
	echo "xk guest init: $*" > $OUT
	finish 125
}

[ "$XK_INTERACTIVE" = 1 ] || $B stty -F $OUT raw -echo 2>/dev/null

# what the kernel needs to reach the host, where the target builds it as
# modules (virtio PCI, fuse, virtiofs): carried in /xk/mod, in load order
for m in /xk/mod/*.ko; do
	[ -e "$m" ] || continue
	$B insmod "$m" || fail "cannot load ${m##*/} (the target's module)"
done
$B mount -t virtiofs -o ro hostroot /lower ||
	fail "cannot mount the host's root file system (virtiofs)"
$B mount -t tmpfs -o mode=0755 upper /upper
$B mkdir -p /upper/data /upper/work
# overlay.ko, compressed or not, unless it is built in
for m in /lower$XK_MODULES/kernel/fs/overlayfs/overlay.ko*; do
	[ -e "$m" ] || continue
	$B chroot /lower /sbin/insmod "${m#/lower}" ||
		fail "cannot load ${m#/lower} (is kmod installed?)"
	break
done
$B mount -t overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work,redirect_dir=off,index=off,metacopy=off \
	overlay /newroot || fail "cannot mount the overlay root"

R=/newroot
$B mount -t proc proc $R/proc
$B mount -t sysfs sysfs $R/sys
$B mount -t devtmpfs devtmpfs $R/dev
$B mkdir -p $R/dev/pts $R/dev/shm
$B mount -t devpts devpts $R/dev/pts
$B mount -t tmpfs tmpfs $R/dev/shm
# what a system's udev would make: bash's <(...) and dkms need /dev/fd
$B ln -sf /proc/self/fd $R/dev/fd
$B ln -sf /proc/self/fd/0 $R/dev/stdin
$B ln -sf /proc/self/fd/1 $R/dev/stdout
$B ln -sf /proc/self/fd/2 $R/dev/stderr
# /tmp stays the host's (through the overlay: writable, nothing reaches the
# host), so a working directory under /tmp exists in the guest too
$B mount -t tmpfs tmpfs $R/run
$B mount -t debugfs debugfs $R/sys/kernel/debug
$B mount -t tracefs tracefs $R/sys/kernel/tracing 2>/dev/null
$B mount -t bpf bpf $R/sys/fs/bpf 2>/dev/null
$B mount -t cgroup2 cgroup2 $R/sys/fs/cgroup 2>/dev/null
$B mkdir -p "$R/lib/modules/$XK_RELEASE"
$B mount --bind "/lower$XK_MODULES" "$R/lib/modules/$XK_RELEASE" ||
	fail "cannot bind the module tree $XK_MODULES"
$B mkdir -p $R/run/xk
$B cp /xk/cmd.sh $R/run/xk/cmd.sh
$B hostname xk-guest
$B chroot $R /bin/sh -c 'command -v ip >/dev/null && ip link set lo up'

$B printf '\001XK-BOOT %s\n' "$($B cut -d' ' -f1 /proc/uptime)" > $OUT

if [ "$XK_INTERACTIVE" = 1 ]; then
	$B chroot $R /usr/bin/env -i /usr/bin/setsid -c /bin/sh /run/xk/cmd.sh \
		< $OUT > $OUT 2>&1
else
	$B chroot $R /usr/bin/env -i /bin/sh /run/xk/cmd.sh < /dev/null > $OUT 2>&1
fi
finish $?
