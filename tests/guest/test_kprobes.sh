#!/bin/bash
# kprobes are enabled and fire: a kprobe event on vfs_read counts hits.
. "$(dirname "$0")/lib.sh"
expect_eq "kprobes/enabled" "$(cat /sys/kernel/debug/kprobes/enabled)" 1
T=/sys/kernel/tracing
echo 'p:xk_test_read vfs_read' >> $T/kprobe_events || fail "cannot add a kprobe event"
trap 'echo 0 > $T/events/kprobes/xk_test_read/enable; echo "-:xk_test_read" >> $T/kprobe_events' EXIT
echo 1 > $T/events/kprobes/xk_test_read/enable
grep -q vfs_read /sys/kernel/debug/kprobes/list || fail "probe not listed"
for _ in 1 2 3 4 5; do cat /proc/version > /dev/null; done
hits=$(awk '$1 == "xk_test_read" { print $2 }' $T/kprobe_profile)
log "vfs_read probe hits: $hits"
[ "${hits:-0}" -ge 5 ] || fail "the probe fired $hits times, want >= 5"
