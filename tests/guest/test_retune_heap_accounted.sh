#!/bin/bash
# A heap object sized, recorded and accounted in the one function that uses
# the constant: state of the call. PIPE_MIN_DEF_BUFFERS (fs/pipe.c, 2) is
# the ring a pipe gets when its user is over fs.pipe-user-pages-soft:
# alloc_pipe_info accounts it to the user (an atomic add), checks the
# user's total against fs.pipe-user-pages-hard, allocates the ring
# (kcalloc) and records its size in the pipe (max_usage, ring_size,
# nr_accounted); freeing or resizing a pipe reads nr_accounted. So pipes
# made under one value and freed under another keep the user's account
# exact, which this test checks through the hard limit:
# - as an unprivileged user over the soft limit, a new pipe's size
#   (F_GETPIPE_SZ) is 2 pages compiled-in, 4 with 4 loaded, 2 after unload;
# - with the hard limit at 64 pages the user gets 32 pipes at 2, 16 at 4;
# - pipes made under 4 and closed after the unload give back 4 pages each:
#   the user then gets 32 pipes again (one page short per pipe, had the
#   free read the constant, and the count would differ);
# - the set reports the global mode (a call-state constant is never
#   changed at an instant), and no probe stays.
. "$(dirname "$0")/lib.sh"
SOFT=/proc/sys/fs/pipe-user-pages-soft
HARD=/proc/sys/fs/pipe-user-pages-hard
soft0=$(cat $SOFT)
hard0=$(cat $HARD)
holder=
cleanup_pipes() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null
	echo "$soft0" > $SOFT
	echo "$hard0" > $HARD
	cleanup_xk
	true
}
trap cleanup_pipes EXIT
heap_call_table PIPE_MIN_DEF_BUFFERS

# as uid 4242 (no capability, its own user_struct): size | count | hold K
# (hold: K pipes open until a line comes on stdin)
AS_USER='
import errno, fcntl, os, sys
os.setgroups([])
os.setgid(4242)
os.setuid(4242)
F_GETPIPE_SZ = 1032
what = sys.argv[1]
if what == "size":
    r, w = os.pipe()
    print(fcntl.fcntl(r, F_GETPIPE_SZ))
elif what == "count":
    pipes = []
    try:
        while len(pipes) < 400:
            pipes.append(os.pipe())
    except OSError as e:
        if e.errno != errno.ENFILE:
            raise
    print(len(pipes))
elif what == "hold":
    pipes = [os.pipe() for _ in range(int(sys.argv[2]))]
    print(" ".join(str(fcntl.fcntl(r, F_GETPIPE_SZ)) for r, w in pipes), flush=True)
    sys.stdin.readline()
'
as_user() { python3 -c "$AS_USER" "$@"; }
echo 1 > $SOFT
echo 64 > $HARD
expect_eq "pipe size over the soft limit (compiled-in)" "$(as_user size)" 8192
expect_eq "pipes within the hard limit (compiled-in)" "$(as_user count)" 32

out=$($XK -j set PIPE_MIN_DEF_BUFFERS=4 2>&1) ||
	fail "set PIPE_MIN_DEF_BUFFERS=4 (every use supported: no --partial): $out"
expect_eq "the mode of a call-state constant" "$(echo "$out" | jq -r .mode)" global
expect_eq "pipe size over the soft limit (4)" "$(as_user size)" 16384
expect_eq "pipes within the hard limit (4)" "$(as_user count)" 16

# eight pipes made under 4, held open across the unload
coproc HOLDER { as_user hold 8; }
holder=$HOLDER_PID
read -r -t 60 sizes <&"${HOLDER[0]}" || fail "the holder made no pipes"
expect_eq "held pipes' sizes (4)" "$sizes" "16384 16384 16384 16384 16384 16384 16384 16384"
# 32 of the 64 pages are the holder's: 8 more pipes of 4
expect_eq "pipes beside the held ones (4)" "$(as_user count)" 8
$XK unload PIPE_MIN_DEF_BUFFERS || fail "unload"
expect_eq "pipe size over the soft limit (after unload)" "$(as_user size)" 8192
expect_eq "pipes beside the held ones (after unload)" "$(as_user count)" 16
echo >&"${HOLDER[1]}"
wait "$holder" 2>/dev/null
holder=
# each held pipe gave back the 4 pages it recorded
expect_eq "pipes within the hard limit (after the held ones closed)" "$(as_user count)" 32
[ "$(probes_left)" = 0 ] || fail "probes left after unload"
grep -q alloc_pipe_info /sys/kernel/debug/kprobes/list && fail "a probe on alloc_pipe_info stays"
log "PIPE_MIN_DEF_BUFFERS: 2 -> 4 pages for a user over the soft limit, and back; the user's account exact across the change"
echo "ok"
