#!/bin/bash
# TCP_INIT_CWND (include/net/tcp.h, RFC 6928's IW10) retuned live: the
# congestion window a new connection starts with (tcp_init_cwnd(), inlined
# into tcp_init_transfer() with the receive-space sizing next to it, whose
# builds schedule the region around a jiffies load and two stores
# otherwise: replayed there, at the values whose region replays alone).
# The table is a proved one (tests/run.sh: xk gen --prove over bounds
# 10..12 of tests/fixtures/prove/tcp.conf): 10 and 12 kept, 11 left out
# (its build does not replay). Connections on loopback, their window read
# with ss right after the handshake (no data sent: still the initial
# one): 10 compiled in, 12 retuned, 10 again unloaded; a connection opened
# before the change keeps its window. 11 is refused by name before
# anything is built or loaded (the values the proof kept, and why 11 is
# not one), 20 as out of the proved bounds; xk status lists the values.
. "$(dirname "$0")/lib.sh"
PORT=5301
# the server, and the kept connection's client (it sleeps 600 s: the
# guest's run waits for it otherwise)
cleanup() { cleanup_xk; kill $SRV ${KEPT:-} 2>/dev/null; }
trap cleanup EXIT
sysctl -qw net.ipv4.tcp_congestion_control=cubic
# BBR uses the constant too (bbr_main): its spans are probed in the module
modprobe tcp_bbr || fail "no tcp_bbr"
# a server that accepts and holds its connections
python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $PORT)); s.listen(64); held = []
while True: held.append(s.accept()[0])
" & SRV=$!
for _ in $(seq 50); do ss -ltn "sport = :$PORT" | grep -q LISTEN && break; sleep 0.1; done
# the initial window of a new connection, the client's side, read while
# the connection is open (python holds it, ss reads it)
cwnd() {
	python3 -c "
import socket, subprocess, re
c = socket.create_connection(('127.0.0.1', $PORT))
port = c.getsockname()[1]
out = subprocess.run(['ss', '-tin', 'sport = :%d' % port], capture_output=True, text=True).stdout
m = re.search(r'\bcwnd:(\d+)', out)
print(m.group(1) if m else 'none: ' + out)
"
}
# a connection opened now and kept: its window must not change
exec 7< <(python3 -c "
import socket, time, sys
c = socket.create_connection(('127.0.0.1', $PORT)); print(c.getsockname()[1], flush=True); time.sleep(600)")
KEPT=$!
read -r OLD_PORT <&7
old_cwnd() { ss -tin "sport = :$OLD_PORT" | grep -o '\bcwnd:[0-9]*' | cut -d: -f2; }

expect_eq "compiled-in initial window" "$(cwnd)" 10
expect_eq "the kept connection's window" "$(old_cwnd)" 10
# 11: not among the proved values, refused naming them and the replayed
# span that refused it in the proof, nothing loaded
out=$($XK set TCP_INIT_CWND=11 2>&1) && fail "TCP_INIT_CWND=11 set: the proof left it out"
echo "$out"
echo "$out" | grep -q "value 11 is not among the values proved for this table (10, 12)" ||
	fail "refusal of 11 does not name the proved values: $out"
echo "$out" | grep -q "TCP_INIT_CWND = 11 cannot be retuned: span [0-9]* ([a-z_0-9.]*+0x[0-9a-f]*, replayed form)" ||
	fail "refusal of 11 does not name the replayed span: $out"
[ -z "$($XK -j status | jq -r '.[] | select(.constant == "TCP_INIT_CWND") | .constant')" ] ||
	fail "TCP_INIT_CWND loaded by a refused set"
out=$($XK set TCP_INIT_CWND=12 2>&1) || fail "set TCP_INIT_CWND=12: $out"
echo "$out"
expect_eq "initial window retuned" "$(cwnd)" 12
expect_eq "the kept connection's window unchanged" "$(old_cwnd)" 10
$XK status | grep -q "values: 10, 12 (proved: 2 values built, every one of the bounds)" ||
	fail "xk status does not list the proved values: $($XK status)"
out=$($XK set TCP_INIT_CWND=20 2>&1) && fail "TCP_INIT_CWND=20 set: out of the proved bounds"
echo "$out" | grep -q "out of bounds \[10, 12\]" || fail "refusal of 20 does not name the bounds: $out"
expect_eq "12 kept after the refusals" "$(cwnd)" 12
$XK unload TCP_INIT_CWND || fail "unload TCP_INIT_CWND"
expect_eq "initial window unloaded" "$(cwnd)" 10
[ "$(probes_left)" = 0 ] || fail "probes left after TCP_INIT_CWND"
log "TCP_INIT_CWND: new connections start at 10, 12, 10; an open one kept its window; 11 (left out by the proof) and 20 (out of its bounds) refused"
