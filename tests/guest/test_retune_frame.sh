#!/bin/bash
# PIPE_DEF_BUFFERS retuned live, a constant that sizes stack frames.
# tracing_buffers_splice_read() keeps PIPE_DEF_BUFFERS page pointers on its
# stack (struct page *pages_def[PIPE_DEF_BUFFERS]) and splices at most that
# many ring-buffer pages into a pipe of that size; alloc_pipe_info() gives
# every new pipe that many slots. The spans in the tracing functions are of
# the frame form: values up to the default only (the compiled frame holds
# 16 pointers), each from a build whose smaller frame maps onto the
# compiled one, and a change that lowers the value waits until no thread
# is inside (--mode global); --mode immediate is refused by the module, and
# so is 32 (out of bounds, naming the frame).
# - default 16: a new pipe has 65536 bytes; a splice of 64 pages from
#   per_cpu/cpu0/trace_pipe_raw into it moves 16 pages;
# - 8 (global): 32768 bytes and 8 pages, the frame spans of
#   tracing_buffers_splice_read rewriting (their hits counted);
# - unloaded: 65536 and 16 again.
. "$(dirname "$0")/lib.sh"
trap 'cleanup_xk; echo 0 > $TRACE/tracing_on' EXIT
# trace_marker writes on CPU 0 fill cpu0's ring buffer with whole pages
fill() {
	python3 - <<'EOF'
import os
os.sched_setaffinity(0, {0})
fd = os.open("/sys/kernel/tracing/trace_marker", os.O_WRONLY)
for i in range(6000):
    os.write(fd, b"xk-frame-test %06d ................................................\n" % i)
os.close(fd)
EOF
}
# pages moved by one splice of 64 pages into a new pipe, and a new pipe's size
splice_pages() {
	python3 - <<'EOF'
import os
src = os.open("/sys/kernel/tracing/per_cpu/cpu0/trace_pipe_raw", os.O_RDONLY)
r, w = os.pipe()
print(os.splice(src, w, 64 * 4096) // 4096)
EOF
}
pipe_size() { python3 -c 'import fcntl, os; r, w = os.pipe(); print(fcntl.fcntl(w, 1032))'; }
measure() { echo > $TRACE/trace; fill; echo "$(pipe_size) $(splice_pages)"; }

echo 1 > $TRACE/tracing_on
read -r size_def pages_def <<< "$(measure)"
$XK load PIPE_DEF_BUFFERS || fail "load failed"
$XK set --mode immediate PIPE_DEF_BUFFERS=8 2> /tmp/fr.err && fail "8 was set immediately"
cat /tmp/fr.err
grep -q "stack frame of tracing_.* is sized by it.*--mode global or per-task" /tmp/fr.err ||
	fail "the immediate refusal does not name the frame: $(cat /tmp/fr.err)"
$XK set --mode global PIPE_DEF_BUFFERS=32 2> /tmp/fr.err && fail "32 was set"
cat /tmp/fr.err
grep -q "out of bounds \[1, 16\] (the stack frame of " /tmp/fr.err ||
	fail "the bounds refusal does not name the frame: $(cat /tmp/fr.err)"
$XK set --mode global PIPE_DEF_BUFFERS=8 2> /tmp/fr.err || fail "set 8 failed: $(cat /tmp/fr.err)"
read -r size_8 pages_8 <<< "$(measure)"
$XK status
hits=$($XK -j status | jq '[.[] | select(.constant == "PIPE_DEF_BUFFERS") | .probes[] |
	select(.function == "tracing_buffers_splice_read") | .hits] | add')
$XK unload PIPE_DEF_BUFFERS || fail "unload failed"
read -r size_back pages_back <<< "$(measure)"
log "new pipe / pages per splice: default $size_def / $pages_def, 8: $size_8 / $pages_8 ($hits rewrites in tracing_buffers_splice_read), unloaded $size_back / $pages_back"
expect_eq "default pipe" "$size_def" 65536
expect_eq "default splice" "$pages_def" 16
expect_eq "pipe at 8" "$size_8" 32768
expect_eq "splice at 8" "$pages_8" 8
[ "${hits:-0}" -gt 0 ] || fail "the frame spans of tracing_buffers_splice_read did not rewrite"
expect_eq "pipe unloaded" "$size_back" 65536
expect_eq "splice unloaded" "$pages_back" 16
[ "$(grep -c 'tracing_buffers_splice_read\|alloc_pipe_info' /sys/kernel/debug/kprobes/list)" = 0 ] ||
	fail "probes left"
