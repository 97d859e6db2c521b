#!/bin/bash
# A constant of a module the stock kernel ships (tcp_bbr's CYCLE_LEN, in
# net/ipv4/tcp_bbr.o): its table names bbr_main as tcp_bbr:bbr_main; with
# the module not loaded the load is refused, naming it; loaded, the probe
# is armed in the module's text and rewrites on every ACK of a BBR flow
# over loopback; when tcp_bbr is removed while the constant is loaded, its
# span is marked gone (module notifier: xk status says so, a new value
# writes nothing there) and nothing breaks; unloading the constant then
# leaves the kernel as it was.
# Three of its five uses are refused by the analysis: --partial. One
# supported use is of the per-value form with points at 8 and 16 only (the
# builds with 9, 10 or 6 have another shape there): 16 is the value set.
. "$(dirname "$0")/lib.sh"
cleanup() {
	cleanup_xk
	pkill iperf3 2>/dev/null
	sysctl -qw net.ipv4.tcp_congestion_control=cubic
	modprobe -r tcp_bbr 2>/dev/null
	true
}
trap cleanup EXIT
grep -q '^function tcp_bbr:bbr_main ' "$($XK kernel info --field dir)/scopes/CYCLE_LEN.scope" ||
	fail "the table does not name bbr_main as tcp_bbr:bbr_main"
modprobe -r tcp_bbr 2>/dev/null
insmod "$MODULE" || fail "insmod"
out=$($XK set --partial CYCLE_LEN=16 2>&1) && fail "loaded while tcp_bbr is not"
echo "$out" | grep -q "is module tcp_bbr loaded" || fail "refusal: $out"
expect_eq "probes after the refusal" "$(grep -c tcp_bbr /sys/kernel/debug/kprobes/list)" 0

modprobe tcp_bbr || fail "modprobe tcp_bbr"
$XK set --partial CYCLE_LEN=16 || fail "set with tcp_bbr loaded"
grep -Eq 'bbr_main\+0x[0-9a-f]+ +\[?tcp_bbr' /sys/kernel/debug/kprobes/list ||
	fail "no probe in tcp_bbr: $(cat /sys/kernel/debug/kprobes/list)"
sysctl -qw net.ipv4.tcp_congestion_control=bbr
iperf3 -s -D -1 -p 5209 || fail "iperf3 server"
sleep 0.5
iperf3 -c 127.0.0.1 -p 5209 -t 2 >/dev/null || fail "iperf3"
hits=$($XK -j status | jq '[.[] | select(.constant == "CYCLE_LEN") | .probes[].hits] | add')
[ "$hits" -gt 0 ] || fail "no rewrite in bbr_main during a BBR flow (hits $hits)"
# the module goes away under the loaded constant
sysctl -qw net.ipv4.tcp_congestion_control=cubic
for _ in 1 2 3 4 5 6 7 8 9 10; do modprobe -r tcp_bbr 2>/dev/null && break; sleep 1; done
grep -q '^tcp_bbr ' /proc/modules && fail "tcp_bbr cannot be removed while the constant is loaded"
states=$($XK -j status | jq -r '[.[] | select(.constant == "CYCLE_LEN") | .probes[] | .probe + "/" + .settle] | unique | join(",")')
expect_eq "span states once tcp_bbr is gone" "$states" "gone/its module was unloaded"
dmesg | grep -Eq "xkernel: CYCLE_LEN: span [0-9]+ \(tcp_bbr:bbr_main\) gone with module tcp_bbr" ||
	fail "the span's going not in the kernel log"
$XK set --partial CYCLE_LEN=8 >/dev/null || fail "set after tcp_bbr went"
$XK unload CYCLE_LEN >/dev/null || fail "unload"
expect_eq "probes after unload" "$(grep -c tcp_bbr /sys/kernel/debug/kprobes/list)" 0
modprobe -r tcp_bbr 2>/dev/null
log "CYCLE_LEN in tcp_bbr: refused without the module, $hits rewrites in bbr_main with it"
