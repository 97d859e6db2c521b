# SPDX-License-Identifier: GPL-2.0
# Helpers for guest tests: source it; every failed check exits 1.
set -u
cd "$XK_TOP"
XK=$XK_TOP/build/xk
MODULE=$XK_TOP/kmod/xkernel.ko
fail() { echo "FAIL: $*"; exit 1; }
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }
log() { echo "$*"; }
GOLDEN_KO=$XK_TOP/tests/fixtures/golden/xk_golden.ko
GOLDEN=/sys/kernel/debug/xk_golden
# a kprobe still registered by xkernel? (kprobes/list names the module)
probes_left() { grep -c '\[xkernel\]\|xk_golden\|blk_add_rq_to_plug\|blk_start_plug_nr_ios\|do_shrink_slab' /sys/kernel/debug/kprobes/list; }
# wait_armed FUNC: until a probe in FUNC is enabled (a load arms its probes
# before its transition starts; under TCG that can take seconds)
wait_armed() {
	for _ in $(seq 600); do
		grep "$1" /sys/kernel/debug/kprobes/list | grep -qv DISABLED && return 0
		sleep 0.1
	done
	fail "no enabled probe in $1 after 60 s"
}
# Plug flushes are block:block_unplug events. trace_unplugs runs "$@" with
# the page cache dropped and the event traced (the events stay in the trace);
# traced_unplugs counts them, of pid $1 when given; unplugs_of does both.
TRACE=/sys/kernel/tracing
trace_unplugs() {
	echo 3 > /proc/sys/vm/drop_caches
	echo > $TRACE/trace
	echo 1 > $TRACE/events/block/block_unplug/enable
	"$@"
	echo 0 > $TRACE/events/block/block_unplug/enable
}
# traced_plugs DEV: DEV behind mq-deadline, through which a flush of the
# plug is traced on every kernel (Linux 6.1 traces no unplug where it
# issues straight to the driver)
traced_plugs() {
	modprobe mq-deadline 2>/dev/null
	echo mq-deadline > /sys/block/$1/queue/scheduler || fail "no mq-deadline scheduler for $1"
}
traced_unplugs() { grep -c -- "${1:+-$1 .*}block_unplug" $TRACE/trace; }
unplugs_of() { trace_unplugs "$@"; traced_unplugs; }
# The scope table of a heap constant of one call (heap_in_one_call): sets
# tbl to its path, failing unless at least two spans are call-state heap
# and none is refused.
heap_call_table() {
	tbl=$($XK kernel info --field dir)/scopes/$1.scope
	[ -f "$tbl" ] || fail "no table for $1"
	[ "$(grep -c '^call-state heap$' "$tbl")" -ge 2 ] || fail "the table's spans are not call-state"
	grep -q '^unsupported' "$tbl" && fail "a refused span in the table: $(grep -A1 '^unsupported' "$tbl")"
	true
}
cleanup_xk() {
	$XK unload --all >/dev/null 2>&1
	rmmod xk_golden 2>/dev/null
	for _ in 1 2 3 4 5; do rmmod xkernel 2>/dev/null && break; sleep 0.2; done
	true
}
# A kprobe event NAME (events/kprobes/NAME) on PROBE ("FUNC FIELD=FETCH ...")
# that also records the return address, filtered to calls made from the
# function SPANFUNC of scope table TABLE (module:function for a module's:
# its address from kallsyms, its size from the table's function line).
# caller_event NAME PROBE TABLE SPANFUNC; caller_event_remove NAME undoes it.
caller_event() {
	local name=$1 probe=$2 tbl=$3 func=${4#*:} mod= start size
	[ "$func" != "$4" ] && mod="[${4%%:*}]"
	echo "p:$name $probe caller=+0(%sp):u64" >> $TRACE/kprobe_events ||
		fail "no kprobe event $name ($probe)"
	start=$(awk -v f="$func" -v m="$mod" \
		'$3 == f && (m == "" || $4 == m) { print "0x" $1; exit }' /proc/kallsyms)
	size=$(awk -v f="$4" '$1 == "function" && $2 == f { print $3; exit }' "$tbl")
	[ -n "$start" ] && [ -n "$size" ] || fail "no address for $4 ($start, $size)"
	# two's complement: a kernel address
	echo "caller > $start && caller < $(printf '0x%x' $((start + size)))" \
		> $TRACE/events/kprobes/$name/filter || fail "no filter on the caller of $name"
}
caller_event_remove() {
	echo 0 > $TRACE/events/kprobes/$1/enable 2>/dev/null
	echo "-:$1" >> $TRACE/kprobe_events 2>/dev/null
	true
}
# The values of FIELD in the trace, "value count" a line, most first.
traced_values() {
	grep -o "$1=[0-9]*" $TRACE/trace | sort | uniq -c | sort -rn |
		awk -v f="$1=" '{ sub(f, "", $2); print $2, $1 }'
}
# kernel_at_least MAJOR MINOR: the running kernel is that version or later
kernel_at_least() {
	local v=$(uname -r) major minor
	major=${v%%.*}; v=${v#*.}; minor=${v%%[!0-9]*}
	[ "$major" -gt "$1" ] || { [ "$major" -eq "$1" ] && [ "$minor" -ge "$2" ]; }
}
# Policies need Linux 6.10 and the kernel's BTF. Without, a policy load is
# refused naming the kernel, with no constant, pin or probe left; the test
# then ends there.
policies_or_refused() {
	local out
	kernel_at_least 6 10 && [ -e /sys/kernel/btf/vmlinux ] && return 0
	out=$($XK load BLK_MAX_REQUEST_COUNT --policy "$XK_TOP/build/bpf/blk_per_device.bpf.o" \
		--param dev0=nullb0 --param value0=4 2>&1) &&
		fail "a policy loaded on Linux $(uname -r)"
	grep -q "policies need Linux 6.10 or later.*this kernel is $(uname -r)\|policies need the kernel's BTF.*kernel $(uname -r) was built without" <<< "$out" ||
		fail "the policy's refusal does not name the kernel: $out"
	[ -n "$(ls -A /sys/fs/bpf/xkernel 2>/dev/null)" ] && fail "pins left: $(ls /sys/fs/bpf/xkernel)"
	[ "$(probes_left)" = 0 ] || fail "probes left after the refusal"
	$XK -j status 2>/dev/null | jq -e 'type != "array" or length == 0' > /dev/null ||
		fail "a constant is left loaded: $($XK status)"
	log "Linux $(uname -r): the policy is refused by name ($out)"
	exit 0
}
