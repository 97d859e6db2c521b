#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of bench/lebench.sh: runs build/bench/lebench once per
# configuration and prints its lines prefixed with "LB CONFIG ":
#   none     no xkernel (module not loaded)
#   module   xkernel.ko rewriting, on every hit, the constants on the ops'
#            paths, each set to a value that changes nothing the suite does:
#            MAX_RW_COUNT=2147475456 (vfs_read, vfs_write: every read and
#            write, so ctxsw's pipe and the file ops), EP_MAX_EVENTS=178956969
#            (do_epoll_wait), N_STACK_PPS=29 (do_sys_poll)
#   settled  the module's values written into the kernel text (xk settle):
#            no probe left where the immediates can hold them
#   policy   MAX_RW_COUNT=2147475456 chosen by an eBPF policy at every span
#            (bench/rw_fixed.bpf.c); nothing else armed
#   none2    no xkernel again (module unloaded): the run-to-run floor
# and "LBI CONFIG KEY VALUE" lines on the probes (their kind and hits).
#   lebench-guest.sh det|wall [SCALE]
#     det   all four (run it under --deterministic)
#     wall  none, module, none2 (wall clock: noisy)
set -euo pipefail
XK=build/xk
LB=build/bench/lebench
SCALE=${2:-1}
RW=MAX_RW_COUNT=2147475456
OTHERS="EP_MAX_EVENTS=178956969 N_STACK_PPS=29"

pass() {	# config
	echo "LBI $1 start_ns $(date +%s%N)"
	$LB -s "$SCALE" | grep -v '^#' | sed "s/^/LB $1 /"
	echo "LBI $1 end_ns $(date +%s%N)"
}

probes() {	# config: each loaded constant's probes, kinds and hits
	$XK -j status | jq -r --arg c "$1" '.[] | .constant as $n | .probes[] |
		"LBI \($c) probe \($n) \(.function)+\(.offset) \(.probe) \(.hits)"'
}

mode=$1
# the same layout every pass: a 4 MiB mapping's cost depends on where it
# falls against 2 MiB boundaries (the guest's own setting; the host's untouched)
echo 0 > /proc/sys/kernel/randomize_va_space
echo "LBI kernel $(uname -r) clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
# a pass thrown away: the first writes of a fresh guest's tmpfs pages are
# slower (write_big twice as slow for its first few dozen runs)
$LB -s 0.1 > /dev/null
pass none
insmod kmod/xkernel.ko
# one transaction: the three constants switch together
# shellcheck disable=SC2086
$XK set --partial $RW $OTHERS > /dev/null
sleep 1			# kprobe optimization is deferred work
probes module-armed
pass module
probes module
# settled: the same values written into the text, the probes gone
$XK settle MAX_RW_COUNT EP_MAX_EVENTS N_STACK_PPS > /dev/null ||
	echo "LBI settled warning: xk settle failed"
pass settled
probes settled
$XK unload --all > /dev/null
if [ "$mode" = det ]; then
	$XK load --partial MAX_RW_COUNT --policy build/bpf/rw_fixed.bpf.o --param value=2147475456 > /dev/null
	sleep 1
	pass policy
	probes policy
	$XK unload --all > /dev/null
fi
# right after a BPF program goes, rmmod can fail once with EAGAIN
for _ in 1 2 3 4 5; do rmmod xkernel 2> /dev/null && break; sleep 1; done
[ ! -e /sys/module/xkernel ] || echo "LBI none2 warning: xkernel.ko still loaded (nothing armed)"
pass none2
