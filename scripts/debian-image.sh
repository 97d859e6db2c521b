#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A Debian bookworm system for the guest (xk vm run --debian): systemd as
# init, dpkg, DKMS and the target kernel's own packages (image, headers,
# kbuild) installed the Debian way, so the packages of `make deb` can be
# installed and tested as an administrator has them.
#
#   scripts/debian-image.sh [--print]
#
# Built with mmdebstrap (variant minbase, plus what the test needs), made
# into an ext4 image with `mkfs.ext4 -d` (no loop device) and kept in
#   $XK_CACHE/debian/<key>/rootfs.ext4   the root file system (sparse)
#   $XK_CACHE/debian/<key>/initrd.img    Debian's initramfs (initramfs-tools:
#                                        virtio_blk is a module of the stock
#                                        kernel, so the root needs one)
#   $XK_CACHE/debian/<release> -> <key>  what xk vm run --debian boots
# <key> hashes every input (this script, the kernel's .debs); a second run
# with the same inputs reuses the image and takes a fraction of a second.
# --print only prints the image's directory (empty when not built).
# The guest never writes to it: each run boots a copy-on-write overlay.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${XK_CACHE:-$HOME/.cache/xkernel}
XK=build/xk
SUITE=bookworm
# what the test needs beyond minbase: systemd as init, DKMS and a compiler,
# the libraries xk links, jq for xk -j, man, bash completion
PACKAGES=(
	systemd systemd-sysv udev dbus
	dkms make gcc kmod initramfs-tools e2fsprogs
	libbpf1 libelf1 libcapstone4
	jq man-db bash-completion procps
)

# the target kernel (xk help kernel); xk names the cause when there is none
release=$($XK -q kernel info --field release) || {
	echo "debian-image: no target kernel (build/xk kernel list)" >&2
	exit 1
}
debs=$CACHE/debs
kdebs=()
for pat in "linux-image-${release}-unsigned_" "linux-headers-${release}_" \
	   "linux-headers-${release%-cloud-amd64}-common_" \
	   "linux-kbuild-${release%-cloud-amd64}_"; do
	f=$(ls "$debs"/"$pat"*.deb 2>/dev/null | tail -n 1)
	[ -n "$f" ] || { echo "debian-image: no $pat*.deb in $debs" >&2; exit 1; }
	kdebs+=("$f")
done
key=$( { cat "$0"; printf '%s\n' "$SUITE" "${PACKAGES[@]}";
	 for f in "${kdebs[@]}"; do basename "$f"; stat -c %s "$f"; done; } |
	 sha256sum | cut -c1-16)
out=$CACHE/debian/$key
link=$CACHE/debian/$release

if [ "${1:-}" = --print ]; then
	[ -e "$out/done" ] && echo "$out"
	exit 0
fi
if [ -e "$out/done" ]; then
	ln -sfn "$key" "$link"
	echo "debian-image: $out (cached)"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "debian-image: run as root (mmdebstrap installs as root)" >&2
	exit 1
fi
command -v mmdebstrap >/dev/null || {
	echo "debian-image: mmdebstrap is missing (scripts/setup.sh installs it)" >&2
	exit 1
}

start=$(date +%s)
rm -rf "$out"
mkdir -p "$out"
root=$out/root.tmp
trap 'rm -rf "$root"' EXIT
kincludes=()
for f in "${kdebs[@]}"; do kincludes+=(--include="$f"); done

# The command xk vm run --debian passes in: xk-guest.service (once per
# boot, when the system is up) mounts the host's / read-only at /host
# (virtiofs tag hostroot) and runs /host<run dir>/cmd.sh, the run directory
# named on the kernel command line (xk.run=). Its output and, at the end,
# "\001XK-EXIT <status>" go to ttyS1 (the host's stdout), the kernel log to
# ttyS2; then the system powers off. A command that creates
# /run/xk-guest/reboot asks for a reboot instead ("\001XK-REBOOT"): the host
# boots the same disk again and the command runs again.
cat > "$out/xk-guest-run" <<'EOF'
#!/bin/bash
# xk-guest.service: runs the command of `xk vm run --debian` (see
# scripts/debian-image.sh); the host reads ttyS1.
out=/dev/ttyS1
grep -qw xk.interactive=1 /proc/cmdline || stty -F $out raw -echo 2>/dev/null
run=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^xk\.run=//p')
done_with() {
	dmesg > /dev/ttyS2 2>&1
	printf '\001XK-EXIT %d\n' "$1" > $out
	systemctl --no-block poweroff
	exit 0
}
mkdir -p /host /run/xk-guest
if [ -z "$run" ] || ! mount -t virtiofs -o ro hostroot /host; then
	echo "xk-guest: cannot mount the host's files (xk.run='$run')" > $out
	done_with 125
fi
printf '\001XK-BOOT %s\n' "$(cut -d' ' -f1 /proc/uptime)" > $out
if grep -qw xk.interactive=1 /proc/cmdline; then
	(cd / && exec setsid -c /bin/bash "/host$run/cmd.sh") < $out > $out 2>&1
else
	(cd / && exec /bin/bash "/host$run/cmd.sh") < /dev/null > $out 2>&1
fi
st=$?
if [ -e /run/xk-guest/reboot ]; then
	printf '\001XK-REBOOT\n' > $out
	systemctl --no-block reboot
	exit 0
fi
done_with $st
EOF
cat > "$out/xk-guest.service" <<'EOF'
[Unit]
Description=The command of xk vm run --debian
After=multi-user.target
ConditionKernelCommandLine=xk.run

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/xk-guest-run
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
EOF

echo "debian-image: mmdebstrap $SUITE for $release into $out"
mmdebstrap --variant=minbase --mode=root \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/man/??/*' \
	--dpkgopt='path-exclude=/usr/share/man/??_??/*' \
	--include="$(IFS=,; echo "${PACKAGES[*]}")" \
	"${kincludes[@]}" \
	--customize-hook='echo xk-debian > "$1/etc/hostname"' \
	--customize-hook='printf "/dev/vda / ext4 rw,errors=remount-ro 0 1\n" > "$1/etc/fstab"' \
	--customize-hook='chroot "$1" passwd -d root >/dev/null' \
	--customize-hook="install -m 0755 '$out/xk-guest-run' \"\$1/usr/local/sbin/\"" \
	--customize-hook="install -m 0644 '$out/xk-guest.service' \"\$1/etc/systemd/system/\"" \
	--customize-hook='chroot "$1" systemctl enable xk-guest.service' \
	--customize-hook='chroot "$1" systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer 2>/dev/null || true' \
	--customize-hook="cp \"\$1/boot/initrd.img-$release\" \"$out/initrd.img\"" \
	"$SUITE" "$root" 2>&1 | sed -u 's/^/  /' | grep -v '^  I: ' || true
[ -s "$out/initrd.img" ] || { echo "debian-image: mmdebstrap failed" >&2; exit 1; }
[ -d "$root/lib/modules/$release" ] ||
	{ echo "debian-image: no /lib/modules/$release in the image" >&2; exit 1; }

# room for the test's packages and DKMS's build; the file is sparse
used_mb=$(du -sm "$root" | cut -f1)
size_mb=$((used_mb + 1024))
mkfs.ext4 -q -F -L xk-debian -d "$root" "$out/rootfs.ext4" "${size_mb}M"
echo "$release" > "$out/release"
touch "$out/done"
ln -sfn "$key" "$link"
# images of this release made from other inputs are stale
for d in "$CACHE"/debian/*/; do
	d=${d%/}
	[ -L "$d" ] || [ "$d" = "$out" ] || [ "$(cat "$d/release" 2>/dev/null)" != "$release" ] ||
		rm -rf "$d"
done
echo "debian-image: $out ($used_mb MB used of ${size_mb} MB; $(( $(date +%s) - start )) s)"
