#!/bin/bash
# Selective CUBIC HyStart: a policy chooses HYSTART_DELAY_MIN/MAX only for
# flows whose minimum RTT is long. Two paths to a server in a network
# namespace, each a veth pair shaped by netem to 10 Mbit/s: one with 1 ms
# of delay, one with 60 ms. With HyStart's delay detection alone
# (hystart_detect=2), every flow leaves slow start by delay detection
# (TcpExtTCPHystartDelayDetect) once the bottleneck queue grows. A policy
# asking for 1 s as HYSTART_DELAY_MIN is refused at load, naming the bound:
# a kernel compiled with MIN above MAX's compiled-in 16 ms alone does not
# exist (clamp()'s static check), so xk gen moved the table's upper bound
# in. Raising the threshold past the queue takes both retuned as one,
# which tables of one constant cannot express; so the policy takes MIN's
# upper bound and 1 s as MAX for long flows, the long flow still leaves by
# delay detection, and the test checks what the policy chose where: the
# long flow's contexts got the values, the short flow's kept the
# compiled-in ones, and detections went on for both.
. "$(dirname "$0")/lib.sh"
POLICY=$XK_TOP/build/bpf/cubic_long_rtt.bpf.o
policies_or_refused
NS=xk-srv
cleanup() {
	cleanup_xk
	ip netns pids $NS 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del $NS 2>/dev/null
	echo "$detect_was" > /sys/module/tcp_cubic/parameters/hystart_detect
}
detect_was=$(cat /sys/module/tcp_cubic/parameters/hystart_detect)
trap cleanup EXIT
[ -f "$POLICY" ] || fail "no $POLICY (make policies)"
modprobe veth && modprobe sch_netem || fail "no veth or netem"
echo 2 > /sys/module/tcp_cubic/parameters/hystart_detect
sysctl -qw net.ipv4.tcp_congestion_control=cubic
ip netns add $NS
ip -n $NS link set lo up
# path 1 (short): 10.77.1.0/24, path 2 (long): 10.77.2.0/24
for p in 1 2; do
	ip link add xk$p type veth peer name xk$p netns $NS
	ip addr add 10.77.$p.1/24 dev xk$p
	ip link set xk$p up
	ip -n $NS addr add 10.77.$p.2/24 dev xk$p
	ip -n $NS link set xk$p up
done
# the data goes out of the client's side: delay, rate and a queue of at most
# 400 packets (< 0.5 s at 10 Mbit/s) on that side
tc qdisc add dev xk1 root netem delay 1ms rate 10mbit limit 400
tc qdisc add dev xk2 root netem delay 60ms rate 10mbit limit 400
ip netns exec $NS iperf3 -s -D -p 5201 || fail "no iperf3 server"
sleep 0.5
detections() { awk '/^TcpExt:/ { if (!h) { split($0, k); h = 1 } else { split($0, v);
	for (i in k) if (k[i] == "TCPHystartDelayDetect") print v[i] } }' /proc/net/netstat; }
# one flow; prints the detections it caused
flow() {
	local before after
	before=$(detections)
	iperf3 -c 10.77.$1.2 -p 5201 -t 3 -C cubic >/dev/null || fail "iperf3 to path $1"
	after=$(detections)
	echo $((after - before))
}
base_short=$(flow 1)
base_long=$(flow 2)
min_bound=$(awk '/^bounds /{ print $3; exit }' \
	"$($XK kernel info --field dir)/scopes/HYSTART_DELAY_MIN.scope")
[ -n "$min_bound" ] && [ "$min_bound" -lt 16000 ] ||
	fail "HYSTART_DELAY_MIN's upper bound '$min_bound' reaches MAX's compiled-in 16000"
out=$($XK load HYSTART_DELAY_MIN HYSTART_DELAY_MAX --policy "$POLICY" \
	--param long_rtt_us=20000 --param long_delay_min=1000000 \
	--param long_delay_max=1000000 2>&1) &&
	fail "a policy parameter past HYSTART_DELAY_MIN's bounds was loaded"
grep -q "parameter long_delay_min: 1000000 is out of the bounds of HYSTART_DELAY_MIN \[100, $min_bound\]" <<< "$out" ||
	fail "the refusal does not name the parameter and the bounds: $out"
$XK load HYSTART_DELAY_MIN HYSTART_DELAY_MAX --policy "$POLICY" \
	--param long_rtt_us=20000 --param long_delay_min="$min_bound" \
	--param long_delay_max=1000000 || fail "policy load failed"
pol_short=$(flow 1)
pol_long=$(flow 2)
$XK status
st=$($XK -j status)
long_choices=$(jq '[.[] | .contexts[] | select(.label == "long-rtt") | .choices] | add // 0' <<< "$st")
short_choices=$(jq '[.[] | .contexts[] | select(.label == "short-rtt") | .choices] | add // 0' <<< "$st")
long_value=$(jq -r '.[] | select(.constant == "HYSTART_DELAY_MAX") | .contexts[] | select(.label == "long-rtt") | .value' <<< "$st")
long_min=$(jq -r '.[] | select(.constant == "HYSTART_DELAY_MIN") | .contexts[] | select(.label == "long-rtt") | .value' <<< "$st")
$XK unload HYSTART_DELAY_MIN || fail "unload failed"
expect_eq "constants left after unloading the policy" "$($XK -j status | jq length)" 0
after_long=$(flow 2)
log "HyStart delay detections per flow: default short $base_short long $base_long; policy short $pol_short long $pol_long; after unload long $after_long; choices long-rtt $long_choices short-rtt $short_choices"
[ "$base_long" -ge 1 ] || fail "the long flow left slow start without delay detection at default"
[ "$base_short" -ge 1 ] || fail "the short flow left slow start without delay detection at default"
[ "$pol_long" -ge 1 ] || fail "the long flow left slow start without delay detection under the policy (MIN $long_min)"
[ "$pol_short" -ge 1 ] || fail "the short flow changed under the policy ($pol_short detections)"
expect_eq "HYSTART_DELAY_MIN chosen for long flows (its upper bound)" "$long_min" "$min_bound"
[ "$after_long" -ge 1 ] || fail "the long flow did not come back after unload"
[ "$long_choices" -gt 0 ] && [ "$short_choices" -gt 0 ] || fail "contexts not counted"
expect_eq "HYSTART_DELAY_MAX chosen for long flows" "$long_value" 1000000
[ "$(grep -c cubictcp_acked /sys/kernel/debug/kprobes/list)" = 0 ] || fail "probes left"
