#!/bin/bash
# The module obeys xk_choose only from the programs xk load attached for a
# span of a loaded policy, once per execution of the span, and never from a
# sleepable program:
# 1. a program calling xk_choose twice per hit (4, then 64): the second call
#    is refused and counted, plugs flush as with 4;
# 2. a program at the same probe point attached by a loader of its own
#    (no attach cookie): refused, counted in refused_outside, the kernel
#    keeps its value;
# 3. the module runs the spans' programs itself and holds them (no link,
#    nothing pinned) until xk unload, which frees them; a new load runs its
#    own with its value, nothing refused;
# 4. a sleepable program calling the kfunc: refused at load, saying why.
. "$(dirname "$0")/lib.sh"
policies_or_refused
BPF=$XK_TOP/build/bpf
PINS=/sys/fs/bpf/xkernel/blk_per_device
FOREIGN=/sys/fs/bpf/xk-foreign
cleanup() {
	rm -rf $FOREIGN
	cleanup_xk
	rmmod null_blk 2>/dev/null
}
trap cleanup EXIT
for f in twice foreign sleepy blk_per_device; do
	[ -f $BPF/$f.bpf.o ] || fail "no $BPF/$f.bpf.o (make policies)"
done
modprobe null_blk nr_devices=1 max_sectors=8 || fail "no null_blk"
echo 1024 > /sys/block/nullb0/queue/read_ahead_kb
echo 16384 > $TRACE/buffer_size_kb
read_nullb0() { dd if=/dev/nullb0 of=/dev/null bs=1M count=32 2>/dev/null; }
unplugs() { unplugs_of read_nullb0; }
field() { jq ".[0].$1" <<< "$st"; }
within() {	# name, value, reference, percent
	[ $(($2 * 100)) -ge $(($3 * (100 - $4))) ] && [ $(($2 * 100)) -le $(($3 * (100 + $4))) ] ||
		fail "$1: $2, want $3 +-$4%"
}
base=$(unplugs)
[ "$base" -ge 50 ] || fail "too few unplugs at baseline ($base)"

# 1. twice per hit
$XK load BLK_MAX_REQUEST_COUNT --policy $BPF/twice.bpf.o || fail "twice: load failed"
n=$(unplugs)
st=$($XK -j status)
$XK status
$XK unload BLK_MAX_REQUEST_COUNT || fail "twice: unload failed"
log "twice per hit: $(field writes) writes, $(field refused) second calls refused; unplugs $base -> $n (4: ~8x, 64: fewer)"
[ "$(field writes)" -gt 0 ] || fail "twice: no write"
[ "$(field refused)" -ge "$(field writes)" ] || fail "twice: $(field refused) refused for $(field writes) writes"
expect_eq "twice: refused away from a bound span" "$(field refused_outside)" 0
expect_eq "twice: value counted" "$(jq -r '.[0].contexts[] | select(.label == "twice") | .value' <<< "$st")" 4
[ $((n * 10)) -ge $((base * 50)) ] || fail "twice: $n unplugs, want >= 5x $base (the value 4)"
dmesg | grep -q "a second xk_choose in one hit" || fail "twice: no refusal in the kernel log"

# 2. a foreign program at the span, next to a policy that keeps the value
$XK load BLK_MAX_REQUEST_COUNT --policy $BPF/blk_per_device.bpf.o || fail "foreign: load failed"
python3 tests/fixtures/policies/foreign_loader.py $BPF/foreign.bpf.o $FOREIGN ||
	fail "foreign: the foreign loader failed"
n=$(unplugs)
st=$($XK -j status)
rm -rf $FOREIGN
outside=$(field refused_outside)	# a count of the module's lifetime
log "foreign program: $(field refused_outside) calls refused; unplugs $base -> $n"
[ "$(field refused_outside)" -gt 0 ] || fail "foreign: no refusal counted"
expect_eq "foreign: writes" "$(field writes)" 0
within "foreign: unplugs" "$n" "$base" 10
dmesg | grep -q "not a program the module runs" || fail "foreign: no refusal in the kernel log"
$XK unload BLK_MAX_REQUEST_COUNT || fail "foreign: unload failed"

# 3. the module holds the spans' programs (no link, nothing pinned) and
#    lets them go at unload; a new load runs its own, with its new value
span_progs() { bpftool prog show -j | jq '[.[] | select(.type == "kprobe")] | length'; }
before=$(span_progs)
$XK load BLK_MAX_REQUEST_COUNT --policy $BPF/blk_per_device.bpf.o \
	--param dev0=nullb0 --param value0=4 || fail "reload: first load failed"
held=$(span_progs)
pinned=$(find $PINS -mindepth 1 | wc -l)
$XK unload BLK_MAX_REQUEST_COUNT || fail "reload: unload failed"
after=$(span_progs)
log "span programs: $before before the load, $held held by the module, $pinned links pinned, $after after the unload"
expect_eq "reload: programs the module holds" "$held" $((before + 2))
expect_eq "reload: links pinned" "$pinned" 0
expect_eq "reload: programs left after the unload" "$after" "$before"
$XK load BLK_MAX_REQUEST_COUNT --policy $BPF/blk_per_device.bpf.o \
	--param dev0=nullb0 --param value0=128 || fail "reload: second load failed"
n=$(unplugs)
st=$($XK -j status)
$XK unload BLK_MAX_REQUEST_COUNT || fail "reload: unload failed"
log "loaded again with 128: $(($(field refused_outside) - outside)) calls refused, $(field refused) repeats, $(field writes) writes; unplugs $base -> $n"
expect_eq "reload: refused calls (all so far)" "$(field refused_outside)" "$outside"
expect_eq "reload: repeats" "$(field refused)" 0
[ "$(field writes)" -gt 0 ] || fail "reload: the new load wrote nothing"
[ $((n * 10)) -le $((base * 7)) ] || fail "reload: $n unplugs, want <= 0.7x $base (the value 128)"

# 4. a sleepable uprobe: refused by kind before the verifier (a policy's
#    programs are kprobes, tracepoints, fentry/fexit; the module's kfunc
#    filter would refuse a sleepable program the kfunc as well)
out=$($XK load BLK_MAX_REQUEST_COUNT --policy $BPF/sleepy.bpf.o 2>&1) && fail "a sleepable policy was loaded"
log "sleepable: $(tail -n 1 <<< "$out" | cut -c1-300)"
grep -q "policy sleepy refused, nothing loaded: program sleepy (section uprobe.s) is a uprobe program" <<< "$out" ||
	fail "sleepable: no clear error: $out"
expect_eq "sleepable: constants loaded" "$($XK -j status | jq length)" 0
[ "$(probes_left)" = 0 ] || fail "probes left"
