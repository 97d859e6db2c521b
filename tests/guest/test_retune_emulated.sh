#!/bin/bash
# BBR_PACING_MARGIN_PERCENT retuned live through spans of the emulated
# form, in a module (tcp_bbr). bbr_rate_bytes_per_sec() scales a rate in
# place, `imul $990000, %rax, %rax` (USEC_PER_SEC / 100 * (100 - margin)):
# the span overwrites its own input, so no probe after it can recompute
# it. The module's probe sits on the imul itself, writes what a kernel
# built with the new margin computes there, and resumes after the span.
# A new BBR connection's initial pacing rate comes from bbr_init's copy:
# K = pacing_rate * srtt / (cwnd * mss) is proportional to 100 - margin.
# - default (1%): K1; margin 20: K2 = K1 * 80/99; unloaded: K1 again;
# - the table's spans in tcp_bbr are emulated and armed (kprobes lists
#   them), and none is left after unload.
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT
modprobe tcp_bbr || fail "no tcp_bbr module"
# K of a fresh loopback connection, in thousands (tcp_info: rtt at 68,
# snd_cwnd at 80, snd_mss at 16, pacing_rate at 104)
k_of_connection() {
	python3 - <<'PY'
import socket, struct
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
c = socket.socket()
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"bbr")
c.connect(srv.getsockname()); a, _ = srv.accept()
i = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
mss, rtt, cwnd = struct.unpack_from("I", i, 16)[0], struct.unpack_from("I", i, 68)[0], struct.unpack_from("I", i, 80)[0]
pacing = struct.unpack_from("Q", i, 104)[0]
print(pacing * rtt // (cwnd * mss) // 1000)
PY
}
emulated=$($XK -j gen BBR_PACING_MARGIN_PERCENT | jq '[.span_list[] | select(.emulate)] | length')
k1=$(k_of_connection)
$XK set BBR_PACING_MARGIN_PERCENT=20 || fail "set 20 failed"
armed=$(grep -c "tcp_bbr\]\|bbr_" /sys/kernel/debug/kprobes/list)
k2=$(k_of_connection)
$XK status | grep -A6 BBR_PACING_MARGIN_PERCENT
$XK unload BBR_PACING_MARGIN_PERCENT || fail "unload failed"
k3=$(k_of_connection)
log "K (pacing * srtt / (cwnd * mss), thousands): margin 1: $k1; 20: $k2; unloaded: $k3 ($emulated emulated spans, $armed probes)"
[ "$emulated" -ge 1 ] || fail "no emulated span in the table"
[ "$armed" -ge 1 ] || fail "no probe in tcp_bbr"
# 80/99 = 0.808, within 3%; back within 3%
[ "$k1" -gt 0 ] || fail "no pacing rate"
r2=$((k2 * 1000 / k1)); r3=$((k3 * 1000 / k1))
[ "$r2" -ge 785 ] && [ "$r2" -le 833 ] || fail "margin 20: K2/K1 = $r2/1000, want 808"
[ "$r3" -ge 970 ] && [ "$r3" -le 1030 ] || fail "unloaded: K3/K1 = $r3/1000, want 1000"
[ "$(grep -c 'bbr_' /sys/kernel/debug/kprobes/list)" = 0 ] || fail "probes left"
