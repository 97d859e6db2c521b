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
traced_unplugs() { grep -c -- "${1:+-$1 .*}block_unplug" $TRACE/trace; }
unplugs_of() { trace_unplugs "$@"; traced_unplugs; }
cleanup_xk() {
	$XK unload --all >/dev/null 2>&1
	rmmod xk_golden 2>/dev/null
	for _ in 1 2 3 4 5; do rmmod xkernel 2>/dev/null && break; sleep 0.2; done
	true
}
