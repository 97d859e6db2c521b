#!/bin/bash
# An emulated span whose first byte is also an exit of a safe span of the
# same constant. MEMCG_CHARGE_BATCH (64) in __mod_memcg_lruvec_state: a
# loop over the memcg's ancestors computes `shl $6, %ecx` (64 *
# num_online_cpus(), per value: the shift is log2 N), emulated from +0xc5;
# the next turn of the loop reaches +0xc5 again, which ends the span's own
# safe span there. kprobes would stop at the rewrite handler (it returns 1)
# and never run an exit probe at that byte: the module registers none
# there, the rewrite handler takes the exit (exits_at) before it counts
# the entry. The module used to refuse such a table at load ("another
# probe would sit in the bytes the module emulates"), the analysis the span.
# - the table is whole (no refused span) and loads; a global transition
#   to 256 completes while memcg stats churn in another cgroup;
# - the effect: a CPU pre-charges MEMCG_CHARGE_BATCH pages of a cgroup at
#   its first charge (try_charge_memcg, the rest kept as the CPU's stock,
#   which a charge of another cgroup on that CPU gives back), so the peak
#   charge of a fresh cgroup in which one small process ran is at least a
#   whole batch: 256 KiB at 64 pages, 1 MiB at 256 (a shell's write of a
#   few bytes to tmpfs charges far less than 64 pages);
# - the emulated spans ran; unloaded, no probe is left.
. "$(dirname "$0")/lib.sh"
CG=/sys/fs/cgroup/xk-charge
CHURN=/sys/fs/cgroup/xk-churn
churn_pid=
stop_churn() {
	[ -n "$churn_pid" ] && kill "$churn_pid" 2>/dev/null && wait "$churn_pid" 2>/dev/null
	churn_pid=
	rmdir "$CHURN" 2>/dev/null
	true
}
trap 'stop_churn; cleanup_xk; rmdir $CG 2>/dev/null' EXIT
tbl=$($XK kernel info --field dir)/scopes/MEMCG_CHARGE_BATCH.scope
[ -f "$tbl" ] || fail "no table for MEMCG_CHARGE_BATCH"
refused=$(grep -c '^class unsupported' "$tbl" || true)
expect_eq "refused spans of MEMCG_CHARGE_BATCH" "$refused" 0
[ -f /sys/fs/cgroup/cgroup.procs ] || fail "no cgroup v2 at /sys/fs/cgroup"
echo +memory > /sys/fs/cgroup/cgroup.subtree_control || fail "no memory controller"

# memory.peak of a fresh cgroup in which a shell, already running, wrote
# a few bytes to tmpfs (one page of shmem, some slab), on CPU 0 (one CPU's
# stock): no exec, no fork in the cgroup
charged() {
	rmdir "$CG" 2>/dev/null
	mkdir "$CG" || fail "mkdir $CG"
	taskset -c 0 bash -c "echo \$\$ > $CG/cgroup.procs && echo x > /dev/shm/xk-charge" ||
		fail "no process in $CG"
	rm -f /dev/shm/xk-charge
	cat "$CG/memory.peak"
}
# page cache charged and freed over and over in another cgroup: the stats
# updates run __mod_memcg_lruvec_state, its loop and its emulated span
start_churn() {
	mkdir -p "$CHURN"
	sh -c "echo \$\$ > $CHURN/cgroup.procs; while :; do
		dd if=/dev/zero of=/dev/shm/xk-churn bs=64k count=16 2>/dev/null
		rm -f /dev/shm/xk-churn; done" &
	churn_pid=$!
}

c64=$(charged)
start_churn
$XK set MEMCG_CHARGE_BATCH=256 || fail "set MEMCG_CHARGE_BATCH=256 (a global transition under churn)"
sleep 1
c256=$(charged)
hits=$($XK -j status | jq '[.[] | select(.constant == "MEMCG_CHARGE_BATCH") |
	.probes[] | select(.function == "__mod_memcg_lruvec_state") | .hits] | add')
value=$($XK -j status | jq -r '.[] | select(.constant == "MEMCG_CHARGE_BATCH") | .value')
$XK set MEMCG_CHARGE_BATCH=64 || fail "set MEMCG_CHARGE_BATCH=64 (back, under churn)"
stop_churn
$XK unload MEMCG_CHARGE_BATCH || fail "unload MEMCG_CHARGE_BATCH"
c_after=$(charged)
log "memory.peak of a fresh cgroup after a write to tmpfs: 64 (compiled-in) $c64, 256 $c256, unloaded $c_after; __mod_memcg_lruvec_state rewrites $hits"
expect_eq "MEMCG_CHARGE_BATCH in force" "$value" 256
[ "$c64" -ge 262144 ] && [ "$c64" -lt 1048576 ] || fail "compiled-in: peak $c64 bytes, want one 64-page batch or a few"
[ "$c256" -ge 1048576 ] || fail "256: peak $c256 bytes, want a 256-page batch (1 MiB)"
[ "$c_after" -lt 1048576 ] || fail "unloaded: peak $c_after bytes, want the compiled-in batch"
[ "$hits" -gt 0 ] || fail "the emulated spans of __mod_memcg_lruvec_state never ran"
dmesg | grep -q "MEMCG_CHARGE_BATCH.*timed out" && fail "a transition timed out"
[ "$(probes_left)" = 0 ] || fail "probes left after unload"
true
