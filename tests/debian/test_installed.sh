#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xkernel on a Debian system as an administrator has it: runs inside the
# Debian guest (xk vm run --debian, booted by tests/debian/run.sh, which
# stages the packages of `make deb` and a scope table in STAGE).
#
#   boot 1: dpkg -i the three packages and xkernel-scopes-RELEASE (the
#           shipped tables); DKMS builds the module for the running kernel;
#           modprobe loads it and xk finds it that way; a tuning in
#           /etc/xkernel; xkernel.service (re)started applies it from the
#           shipped table, with no kernel source or cache of it here (but
#           a table shipped for another build of the release is refused,
#           naming both build ids); a broken
#           entry is one journal line and the rest is applied; man pages
#           and completion work. Then the guest reboots (same disk).
#   boot 2: xkernel.service applied the tuning at boot, its effect shows
#           (plug flushes on null_blk), stopping the service undoes it, and
#           apt-get remove removes it all.
#
# TAP over both boots (the count and the failures are carried over on the
# guest's disk); the status at the end is the whole run's.
set -u
STAGE=$(realpath "${1:?usage: test_installed.sh STAGE_DIR}")
cd "$(dirname "$0")/../.." || exit 125
. tests/lib.sh
[ "${XK_GUEST:-}" = 1 ] && [ -e /usr/local/sbin/xk-guest-run ] ||
	{ echo "run me in the Debian guest: tests/debian/run.sh" >&2; exit 2; }

STATE=/var/lib/xk-test
REL=$(uname -r)
CONF=/etc/xkernel/50-test.conf
CACHED=/var/lib/xkernel/kernels/$REL
SHIPPED=/usr/lib/xkernel/scopes/$REL
SCOPES_PKG=xkernel-scopes-$REL
C=BLK_MAX_REQUEST_COUNT
mkdir -p $STATE
boot=$(( $(cat $STATE/boots 2>/dev/null || echo 0) + 1 ))
echo $boot > $STATE/boots
[ -e $STATE/tap ] && . $STATE/tap
echo "# boot $boot of the Debian guest ($REL, $(systemctl is-system-running))"

value() { xk -j status | jq -r ".[] | select(.constant == \"$1\") | .value"; }
journal() { journalctl -b --no-pager -o cat -u xkernel.service; }
result() { systemctl show -P Result xkernel.service; }

# ---- boot 1 ---------------------------------------------------------

install_packages() {
	local debs=("$STAGE"/xkernel_*.deb "$STAGE"/xkernel-dkms_*.deb
		    "$STAGE"/xkernel-dev_*.deb "$STAGE"/"$SCOPES_PKG"_*.deb) p
	[ -e "${debs[0]}" ] && [ -e "${debs[1]}" ] && [ -e "${debs[2]}" ] &&
		[ -e "${debs[3]}" ] || die "packages missing in $STAGE: ${debs[*]}"
	local t0=$SECONDS
	DEBIAN_FRONTEND=noninteractive dpkg -i "${debs[@]}" > $STATE/dpkg.log 2>&1 ||
		die "dpkg -i failed: $(tail -n 20 $STATE/dpkg.log)"
	echo $((SECONDS - t0)) > $STATE/dpkg.seconds
	for p in xkernel xkernel-dkms xkernel-dev "$SCOPES_PKG"; do
		expect_eq "$p" "$(dpkg-query -W -f '${Status}' $p)" "install ok installed"
	done
	command -v xk | grep -qx /usr/bin/xk || die "xk is not /usr/bin/xk"
}

dkms_built() {
	local st ko
	st=$(dkms status xkernel 2>/dev/null)
	printf '%s\n' "$st" | grep -qF ", $REL, x86_64: installed" ||
		die "dkms status: xkernel not installed for $REL: $st"
	ko=$(modinfo -n xkernel) || die "modinfo finds no xkernel"
	case $ko in
	/lib/modules/$REL/updates/dkms/xkernel.ko*) ;;
	*) die "modinfo: $ko is not DKMS's module" ;;
	esac
}

modprobe_loads() {
	modprobe xkernel || die "modprobe xkernel failed"
	[ -c /dev/xkernel ] || die "no /dev/xkernel after modprobe"
	expect_eq "loaded module" "$(cat /sys/module/xkernel/srcversion)" \
		"$(modinfo -F srcversion xkernel)"
	modprobe -r xkernel || die "modprobe -r xkernel failed"
	[ ! -e /sys/module/xkernel ] || die "xkernel still loaded"
}

# the service loads the module itself: xk runs modprobe (the DKMS module,
# same srcversion), there is no other copy to insmod
service_applies() {
	[ -f "$SHIPPED/$C.scope" ] || die "no shipped table $SHIPPED/$C.scope"
	expect_eq "shipped for" "$(cat "$SHIPPED/build-id")" \
		"$(xk -j doctor | jq -r .build_id)"
	[ ! -e "$CACHED" ] || die "the cache has the kernel: $(ls "$CACHED")"
	printf '# written by tests/debian/test_installed.sh\n%s = 4\n' $C > $CONF
	systemctl restart xkernel.service || die "restart failed: $(journal | tail -n 5)"
	expect_eq "service" "$(systemctl is-active xkernel.service)" active
	expect_eq "result" "$(result)" success
	expect_eq "$C in force" "$(value $C)" 4
	expect_match "journal" "$(journal)" "applied 1 constants? in one transaction"
	expect_eq "module (DKMS's, by modprobe)" "$(cat /sys/module/xkernel/srcversion)" \
		"$(modinfo -F srcversion xkernel)"
	[ ! -e "$CACHED/scopes/$C.scope" ] || die "a table was made in the cache"
}

# tables shipped for another build of the same release are refused, naming
# both build ids; nothing changes
shipped_other_build() {
	local other=/tmp/xk-other-build out
	rm -rf $other
	mkdir -p $other
	cp -r "$SHIPPED" $other/
	echo 0123456789abcdef0123456789abcdef01234567 > "$other/$REL/build-id"
	out=$(XK_SCOPES_DIR=$other xk set $C=8 2>&1) && die "a table of another build was used: $out"
	echo "$out"
	expect_match "refusal" "$out" "made for the build 0123456789abcdef0123456789abcdef01234567 .*the running kernel is the build $(cat "$SHIPPED/build-id")"
	[ -z "$(value $C)" ] || die "$C was loaded from the other build's table"
	rm -rf $other
}

broken_entry() {
	local lines
	printf 'XK_NO_SUCH_CONSTANT = 3\n' > /etc/xkernel/60-broken.conf
	systemctl restart xkernel.service && die "a broken entry did not fail the service"
	expect_eq "result" "$(result)" exit-code
	lines=$(journal | grep -c 'XK_NO_SUCH_CONSTANT')
	journal | grep XK_NO_SUCH_CONSTANT | tee $STATE/broken.line
	expect_eq "journal lines naming the broken entry" "$lines" 1
	expect_match "its file and line" "$(journal)" \
		"XK_NO_SUCH_CONSTANT \(/etc/xkernel/60-broken.conf:1\)"
	expect_eq "$C applied beside it" "$(value $C)" 4
	rm -f /etc/xkernel/60-broken.conf
	systemctl restart xkernel.service || die "restart without the broken entry failed"
	expect_eq "result after the fix" "$(result)" success
}

man_page() {
	local page
	page=$(MANWIDTH=80 man -P cat xk-set 2>&1) || die "man xk-set: $page"
	expect_match "man xk-set" "$page" "xk-set - change a constant"
}

completion() {
	local out
	out=$(bash -c '. /usr/share/bash-completion/bash_completion
		_completion_loader xk; complete -p xk
		COMP_WORDS=(xk se); COMP_CWORD=1; COMP_LINE="xk se"; COMP_POINT=5
		_xk; echo "${COMPREPLY[*]}"' 2>&1)
	expect_match "complete -p xk" "$out" "complete -F _xk xk"
	expect_match "xk se<TAB>" "$out" "(^| )set( |$)"
}

# ---- boot 2 ---------------------------------------------------------

applied_at_boot() {
	expect_eq "service at boot" "$(systemctl is-active xkernel.service)" active
	expect_eq "result" "$(result)" success
	expect_match "journal of this boot" "$(journal)" "applied 1 constants? in one transaction"
	expect_eq "$C in force after the reboot" "$(value $C)" 4
}

# plug flushes of one dd on null_blk (as tests/guest/test_retune_blk.sh):
# 4 flushes ~8x as often as the compiled-in 32; stopping the service
# (xk unload --all) brings 32's behaviour back
unplugs() {
	local T=/sys/kernel/tracing
	echo 3 > /proc/sys/vm/drop_caches
	echo > $T/trace
	echo 1 > $T/events/block/block_unplug/enable
	dd if=/dev/nullb0 of=/dev/null bs=1M count=64 2>/dev/null
	echo 0 > $T/events/block/block_unplug/enable
	grep -c block_unplug $T/trace
}

effect_and_stop() {
	local n4 base
	modprobe null_blk nr_devices=1 max_sectors=8 || die "no null_blk"
	echo 1024 > /sys/block/nullb0/queue/read_ahead_kb
	echo 16384 > /sys/kernel/tracing/buffer_size_kb
	n4=$(unplugs)
	systemctl stop xkernel.service || die "stop failed"
	[ -z "$(value $C)" ] || die "$C still loaded after the service stopped"
	base=$(unplugs)
	rmmod null_blk
	echo "plug flushes for 64 MiB: at boot's 4 $n4, after stop (32) $base"
	[ "$base" -ge 100 ] || die "too few flushes at 32 ($base)"
	[ $((n4 * 10)) -ge $((base * 60)) ] || die "at 4: $n4 flushes, want >= 6x $base"
}

# removal with the tuning in force: the service is stopped, the module
# unloaded (xkernel-dkms's prerm), DKMS's copy and every file removed
removal() {
	local out p
	systemctl start xkernel.service || die "start failed"
	expect_eq "$C in force before removal" "$(value $C)" 4
	echo "xk-test-mark-removal" > /dev/kmsg
	out=$(DEBIAN_FRONTEND=noninteractive apt-get remove -y xkernel xkernel-dkms \
		xkernel-dev 2>&1) || die "apt-get remove failed: $out"
	echo "$out" | grep -iE 'xkernel|module|dkms' | tail -n 8
	# the tables depend on xkernel: removed with it
	for p in xkernel xkernel-dkms xkernel-dev "$SCOPES_PKG"; do
		dpkg-query -W -f '${Status}' $p 2>/dev/null | grep -q ' installed$' &&
			die "$p is still installed"
	done
	[ -z "$(dkms status xkernel 2>/dev/null)" ] ||
		die "dkms still lists: $(dkms status xkernel 2>/dev/null)"
	! ls /lib/modules/$REL/updates/dkms/xkernel.ko* 2>/dev/null ||
		die "the module file is left"
	[ ! -e /usr/bin/xk ] || die "/usr/bin/xk is left"
	[ ! -e "$SHIPPED" ] || die "the shipped tables are left: $(ls "$SHIPPED")"
	[ ! -e /sys/module/xkernel ] || die "xkernel.ko is still loaded after removal"
	! systemctl is-active -q xkernel.service || die "xkernel.service still active"
	dmesg | sed -n '/xk-test-mark-removal/,$p' | grep -q "xkernel: unload $C .*value 4 -> 32" ||
		die "the kernel log has no unload of $C"
	! grep -q "xkernel\|blk_add_rq_to_plug\|blk_start_plug_nr_ios" /sys/kernel/debug/kprobes/list 2>/dev/null ||
		die "kprobes left: $(cat /sys/kernel/debug/kprobes/list)"
}

case $boot in
1)
	t "dpkg -i xkernel xkernel-dkms xkernel-dev" install_packages
	echo "# dpkg -i with DKMS's build: $(cat $STATE/dpkg.seconds 2>/dev/null) s"
	t "DKMS built and installed xkernel.ko for $REL" dkms_built
	t "modprobe xkernel loads the DKMS module" modprobe_loads
	t "a table shipped for another build is refused" shipped_other_build
	t "xkernel.service applies /etc/xkernel from the shipped table" service_applies
	t "a broken entry: one journal line, the rest applied" broken_entry
	echo "# its journal line: $(cat $STATE/broken.line 2>/dev/null)"
	t "man xk-set" man_page
	t "bash completion of xk" completion
	echo "T_NUM=$T_NUM T_FAILED=$T_FAILED" > $STATE/tap
	echo "# rebooting"
	touch /run/xk-guest/reboot
	exit 0 ;;
2)
	t "after a reboot xkernel.service applied the tuning at boot" applied_at_boot
	t "the tuning's effect, undone by systemctl stop" effect_and_stop
	t "apt-get remove removes xkernel, its service and its module" removal
	finish ;;
*)
	echo "not ok - boot $boot: the guest booted more often than the test asks"
	exit 1 ;;
esac
