#!/bin/bash
# A constant that initialises variables and is in no instruction:
# SK_MEMORY_PCPU_RESERVE (include/net/proto_memory.h) is the default of
# net_hotdata.sysctl_mem_pcpu_rsv (net.core.mem_pcpu_rsv) and the minimum
# that sysctl accepts (min_mem_pcpu_rsv). Retuned, both are what a kernel
# built with the value holds; unloaded, the compiled-in ones again. A value
# the administrator set through the sysctl is never overwritten.
. "$(dirname "$0")/lib.sh"
trap 'cleanup_xk; echo 256 > $RSV; echo 0 > $RR' EXIT
RSV=/proc/sys/net/core/mem_pcpu_rsv
RR=/proc/sys/kernel/sched_rr_timeslice_ms
rsv() { cat $RSV; }
# whether the sysctl accepts a value (its minimum is the constant)
accepts() { echo "$1" > $RSV 2>/dev/null; }

expect_eq "compiled-in" "$(rsv)" 256
accepts 100 && fail "mem_pcpu_rsv took 100, below its minimum 256"
expect_eq "refused below the minimum" "$(rsv)" 256

out=$($XK set SK_MEMORY_PCPU_RESERVE=128) || fail "set SK_MEMORY_PCPU_RESERVE=128"
echo "$out"
expect_eq "retuned" "$(rsv)" 128
# the sysctl's bound moved with it: 128 is now the minimum
accepts 100 && fail "mem_pcpu_rsv took 100, below the new minimum 128"
accepts 127 && fail "mem_pcpu_rsv took 127, below the new minimum 128"
expect_eq "still retuned" "$(rsv)" 128
$XK status | grep -q "net_hotdata+0x1a8: 1 writes, none (a variable)" ||
	fail "status: $($XK status)"
$XK set SK_MEMORY_PCPU_RESERVE=1024 || fail "set 1024"
expect_eq "retuned again" "$(rsv)" 1024
$XK set --mode global SK_MEMORY_PCPU_RESERVE=512 || fail "set 512 globally"
expect_eq "retuned globally" "$(rsv)" 512
out=$($XK set --mode per-task SK_MEMORY_PCPU_RESERVE=640) || fail "set 640 per task"
echo "$out" | grep -q "(global," || fail "a variable switched per task: $out"
expect_eq "retuned (globally: a variable is one for every thread)" "$(rsv)" 640
# nothing to settle: a variable costs nothing already
out=$($XK settle SK_MEMORY_PCPU_RESERVE) || fail "settle a constant of variables only"
echo "$out" | grep -q "net_hotdata+0x1a8: a variable (no probe, nothing to settle)" ||
	fail "settle: $out"
expect_eq "settled" "$(rsv)" 640
$XK unload SK_MEMORY_PCPU_RESERVE || fail "unload"
expect_eq "unloaded" "$(rsv)" 256
accepts 200 && fail "mem_pcpu_rsv took 200 after unload (minimum 256)"

# the administrator's value stays: a load refuses to start over it ...
accepts 300 || fail "mem_pcpu_rsv refused 300"
out=$($XK set SK_MEMORY_PCPU_RESERVE=128 2>&1) && fail "set over the administrator's 300"
echo "$out" | grep -q "net_hotdata+0x1a8 does not hold the compiled-in 256" ||
	fail "refusal: $out"
expect_eq "administrator's value kept" "$(rsv)" 300
[ "$(probes_left)" = 0 ] || fail "a refused load left probes"
$XK status | grep -q SK_MEMORY_PCPU_RESERVE && fail "a refused load left the constant loaded"
# ... and a change while loaded is left as it is
accepts 256
$XK set SK_MEMORY_PCPU_RESERVE=512 || fail "set 512"
accepts 600 || fail "mem_pcpu_rsv refused 600"
$XK set SK_MEMORY_PCPU_RESERVE=1024 || fail "set 1024 over 600"
expect_eq "left as the administrator set it" "$(rsv)" 600
dmesg | grep -q "net_hotdata+0x1a8 was changed since xkernel wrote it" ||
	fail "no log of the variable left as it was"
$XK unload SK_MEMORY_PCPU_RESERVE || fail "unload"
expect_eq "left at unload" "$(rsv)" 600
log "SK_MEMORY_PCPU_RESERVE: net.core.mem_pcpu_rsv and its minimum retuned and restored; the administrator's values kept"

# RR_TIMESLICE (include/linux/sched/rt.h, 25 jiffies at HZ=250) initialises
# two variables its sysctl handler stores to, sched_rr_timeslice (what a
# SCHED_RR task gets) and sysctl_sched_rr_timeslice (kernel.
# sched_rr_timeslice_ms): the handler's stores are the administrator's
# setting, so both are settings, retuned with the handler's own use (a 0
# written resets the slice to the constant). init_task's slice is the boot
# CPU's idle task's own state, kept as every other task's is (a note, no
# span): the load needs no --partial, and the module never writes init_task.
rr() { cat $RR; }
# the slice a new SCHED_RR task is given, in milliseconds
rr_slice() {
	python3 -c 'import os; os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(1)); print(round(os.sched_rr_get_interval(0) * 1000))'
}
echo 0 > $RR
expect_eq "RR compiled-in" "$(rr)" 100
expect_eq "RR task's slice compiled-in" "$(rr_slice)" 100
# init_task's rt.time_slice, read from /proc/kcore
idle_slice() {
	python3 "$XK_TOP/tests/guest/kcore_bytes.py" init_task 0x1a0 4 |
		python3 -c 'import sys; print(int.from_bytes(bytes.fromhex(sys.stdin.read().strip()), "little"))'
}
idle0=$(idle_slice)
expect_eq "idle task's slice compiled-in (jiffies)" "$idle0" 25
$XK gen RR_TIMESLICE | grep -q "note: init_task+0x1a0: the constant initialises the boot task's own state" ||
	fail "xk gen does not note init_task's slice as the boot task's state"
$XK set RR_TIMESLICE=50 || fail "set RR_TIMESLICE=50 (no --partial: every use retuned)"
expect_eq "RR retuned (sysctl)" "$(rr)" 200
expect_eq "RR task's slice retuned" "$(rr_slice)" 200
expect_eq "idle task's slice left as its state" "$(idle_slice)" "$idle0"
$XK status | grep -q "note: init_task+0x1a0: the constant initialises the boot task's own state" ||
	fail "status does not note the idle task's slice: $($XK status)"
[ "$($XK -j status | jq '[.[] | select(.constant == "RR_TIMESLICE") | .notes[] | select(startswith("init_task+0x1a0"))] | length')" = 1 ] ||
	fail "status -j has no note of init_task's slice: $($XK -j status)"
# the handler's reset to the constant is retuned too
echo 0 > $RR
expect_eq "RR reset by the handler to the retuned default" "$(rr)" 200
echo 300 > $RR
expect_eq "RR task's slice as the administrator set it" "$(rr_slice)" 300
$XK set RR_TIMESLICE=30 || fail "set RR_TIMESLICE=30"
expect_eq "RR administrator's value kept" "$(rr)" 300
echo 0 > $RR
expect_eq "RR reset to the new default" "$(rr)" 120
expect_eq "RR task's slice at the new default" "$(rr_slice)" 120
# unloaded, what the administrator's reset stored stays (it was not ours);
# the handler's reset is the compiled-in 25 jiffies again
$XK unload RR_TIMESLICE || fail "unload RR_TIMESLICE"
expect_eq "RR left as the administrator's reset stored it" "$(rr)" 120
echo 0 > $RR
expect_eq "RR reset to the compiled-in default" "$(rr)" 100
expect_eq "RR task's slice compiled-in again" "$(rr_slice)" 100
$XK set RR_TIMESLICE=50 || fail "set RR_TIMESLICE=50 again"
$XK unload RR_TIMESLICE || fail "unload RR_TIMESLICE again"
expect_eq "RR unloaded" "$(rr)" 100
expect_eq "RR task's slice unloaded" "$(rr_slice)" 100
[ "$(probes_left)" = 0 ] || fail "probes left after RR_TIMESLICE"
log "RR_TIMESLICE: sched_rr_timeslice and kernel.sched_rr_timeslice_ms retuned through their handler and restored"
