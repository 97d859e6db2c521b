#!/bin/bash
# What a policy may not do. A tracepoint program calling the kfunc is
# refused by the verifier and nothing stays loaded; a kprobe program that
# calls xk_choose away from the spans (attached without a span's cookie) is
# refused (counted, logged) and the kernel behaves as compiled; a parameter
# out of the constant's bounds is refused at load, a value computed out of
# them clamped at run time; a non-root user cannot load a policy; a policy
# holding programs that do more than choose values (lsm, fmod_ret, a kprobe
# writing user memory, a kfunc not xkernel's, a subprogram overriding a
# return value) is refused before anything reaches the kernel, each program
# named, and no program of it stays. (Binding,
# one call per hit, sleepable programs: test_policy_binding.sh.)
. "$(dirname "$0")/lib.sh"
policies_or_refused
BPF=$XK_TOP/build/bpf
trap cleanup_xk EXIT
modprobe null_blk nr_devices=1 max_sectors=8 || fail "no null_blk"
trap 'cleanup_xk; rmmod null_blk' EXIT
echo 1024 > /sys/block/nullb0/queue/read_ahead_kb
echo 16384 > $TRACE/buffer_size_kb
read_nullb0() { dd if=/dev/nullb0 of=/dev/null bs=1M count=32 2>/dev/null; }
unplugs() { unplugs_of read_nullb0; }
nothing_loaded() {
	expect_eq "$1: constants loaded" "$($XK -j status | jq length)" 0
	[ -e /sys/fs/bpf/xkernel/$2 ] && fail "$1: pins left"
	[ "$(probes_left)" = 0 ] || fail "$1: probes left"
}

# 1. the verifier: kfuncs are for kprobe programs only
out=$($XK load BLK_MAX_REQUEST_COUNT --policy $BPF/rogue_tracepoint.bpf.o 2>&1) &&
	fail "a tracepoint policy was loaded"
log "tracepoint policy: $(tail -n 2 <<< "$out" | tr '\n' ' ')"
grep -q "refused by the kernel" <<< "$out" || fail "no verifier refusal: $out"
grep -qi "xk_choose\|kernel function\|kfunc" <<< "$out" || fail "the refusal names no kfunc: $out"
nothing_loaded "verifier refusal" rogue_tracepoint

# 2. bounds of a parameter, at load
out=$($XK load BLK_MAX_REQUEST_COUNT --policy $BPF/blk_per_device.bpf.o \
	--param dev0=nullb0 --param value0=100000 2>&1) && fail "value0=100000 accepted"
grep -q "value0: 100000 is out of the bounds of BLK_MAX_REQUEST_COUNT \[2, 512\]" <<< "$out" ||
	fail "bounds error: $out"
out=$($XK load BLK_MAX_REQUEST_COUNT --policy $BPF/blk_per_device.bpf.o --param nosuch=1 2>&1) &&
	fail "an unknown parameter was accepted"
grep -q "no parameter nosuch" <<< "$out" || fail "unknown parameter error: $out"
nothing_loaded "bounds refusal" blk_per_device

# 3. non-root
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups $XK load BLK_MAX_REQUEST_COUNT \
	--policy $BPF/blk_per_device.bpf.o 2>&1) && fail "uid 65534 loaded a policy"
grep -q "CAP_SYS_ADMIN" <<< "$out" || fail "non-root error: $out"
nothing_loaded "non-root" blk_per_device

# 4. run-time refusals by xk_choose: a call away from any span
base=$(unplugs)
$XK load BLK_MAX_REQUEST_COUNT --policy $BPF/rogue_writes.bpf.o || fail "rogue load failed"
n=$(unplugs)
cat /proc/self/stat >/dev/null	# vfs_read
st=$($XK -j status)
$XK status
writes=$(jq '.[0].writes' <<< "$st")
outside=$(jq '.[0].refused_outside' <<< "$st")
$XK unload BLK_MAX_REQUEST_COUNT || fail "unload failed"
log "rogue calls: $outside refused away from a span, $writes done; unplugs $base -> $n"
expect_eq "writes done by the rogue policy" "$writes" 0
[ "$outside" -gt 0 ] || fail "no refusal away from the span"
[ $((n * 100)) -ge $((base * 95)) ] && [ $((n * 100)) -le $((base * 105)) ] ||
	fail "the kernel changed under refused calls: $n unplugs, want $base +-5%"
dmesg | grep -q "xk_choose refused at vfs_read" || fail "no refusal in the kernel log"
nothing_loaded "after unload" rogue_writes

# 5. a value computed out of bounds: clamped to the maximum, and counted
$XK load BLK_MAX_REQUEST_COUNT --policy $BPF/overreach.bpf.o || fail "overreach load failed"
n=$(unplugs)
st=$($XK -j status)
$XK unload BLK_MAX_REQUEST_COUNT || fail "unload failed"
value=$(jq '.[0].contexts[] | select(.label == "everything") | .value' <<< "$st")
clamped=$(jq '.[0].clamped' <<< "$st")
choices=$(jq '.[0].choices' <<< "$st")
log "computed 2048: in force $value, $clamped of $choices choices clamped; unplugs $base -> $n"
expect_eq "value in force" "$value" 512
[ "$clamped" -gt 0 ] && [ "$clamped" = "$choices" ] || fail "clamped $clamped of $choices"
[ "$n" -lt "$base" ] || fail "at 512, $n unplugs, not fewer than $base"

# 6. programs that do more than choose values: each named, nothing loaded,
#    no program of the object reaches the kernel
command -v bpftool >/dev/null || fail "no bpftool"
progs_of() { bpftool prog show -j | jq "[.[] | select((.name // \"\") | startswith(\"$1\"))] | length"; }
[ "$(progs_of overpowered)" = 0 ] || fail "programs named overpowered* before the load"
out=$($XK load BLK_MAX_REQUEST_COUNT --policy $BPF/overpowered.bpf.o 2>&1) &&
	fail "a policy with lsm, fmod_ret and write_user programs was loaded"
log "overpowered policy: $(cut -c1-700 <<< "$out")"
for want in "policy overpowered refused, nothing loaded" \
	"program overpowered_lsm (section lsm/file_open) is an lsm program" \
	"program overpowered_fmod_ret (section fmod_ret/security_file_open) is an fmod_ret program" \
	"program overpowered_write_user (section kprobe/__x64_sys_getcwd) calls bpf_probe_write_user" \
	"program overpowered_kfunc (section tp_btf/sched_switch) calls kfunc bpf_task_acquire"; do
	grep -qF "$want" <<< "$out" || fail "overpowered: not named: '$want' in: $out"
done
nothing_loaded "overpowered refusal" overpowered
expect_eq "overpowered: its programs in the kernel" "$(progs_of overpowered)" 0
# the same for a call in a subprogram
out=$($XK load BLK_MAX_REQUEST_COUNT --policy $BPF/overpowered_sub.bpf.o 2>&1) &&
	fail "a policy overriding a return value was loaded"
grep -qF "policy overpowered_sub refused, nothing loaded: function override_zero (section .text) calls bpf_override_return" <<< "$out" ||
	fail "overpowered_sub: not named: $out"
nothing_loaded "overpowered_sub refusal" overpowered_sub
expect_eq "overpowered_sub: its programs in the kernel" "$(progs_of overpowered)" 0
