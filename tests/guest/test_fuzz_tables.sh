#!/bin/bash
# A scope table is an adversary's data: tests/fuzz/fuzz_tables.c sends
# XK_IOC_LOAD requests mutated from BLK_MAX_REQUEST_COUNT's table (bit
# flips, every field at its boundaries, truncated and oversized requests,
# overflowing displacements, masks all zero, bogus pointers); each is
# refused with an error or applied and unloaded at once. Afterwards no
# probe is left, rmmod works and the kernel log holds no oops, BUG or
# warning (run.sh checks the log; checked here too, per round). Applied
# tables are settled now and then (text written where their immediate
# records say): the text of the table's functions is the same afterwards.
# FUZZ_N (default 10000) requests, FUZZ_SEED (default 1).
# guest-timeout: 1500
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT
dir=$($XK kernel info --field dir)
tbl=$dir/scopes/BLK_MAX_REQUEST_COUNT.scope
tmp=$(mktemp -d)
trap 'cleanup_xk; rm -rf "$tmp"' EXIT
# no Makefile rule (the guest mounts the host's root: gcc is here)
gcc -O2 -Wall -Werror -Iinclude/xk/abi tests/fuzz/fuzz_tables.c \
	-o "$tmp/fuzz_tables" || fail "cannot build the fuzzer"
# a copy: the host may rewrite the cache's table while this runs
for _ in 1 2 3 4 5; do cp "$tbl" "$tmp/base.scope" 2>/dev/null && break; sleep 2; done
[ -s "$tmp/base.scope" ] || fail "cannot read $tbl"
tbl=$tmp/base.scope
"$tmp/fuzz_tables" --check "$tbl" || fail "the base table breaks the rules"

# the text settling may write, read from /proc/kcore (not from the module)
text() {
	python3 tests/guest/kcore_bytes.py blk_start_plug_nr_ios 0 117 &&
	python3 tests/guest/kcore_bytes.py blk_add_rq_to_plug 0 391
}
text_before=$(text) || fail "cannot read the text"
# the module through xk once (it inserts it), then nothing loaded
$XK load "$tbl" --value 4 || fail "the base table does not load"
$XK unload --all >/dev/null || fail "unload"
# one request per rule first: each refused, naming its cause. Variables
# security depends on (sig_enforce, kernel_locked_down) and another
# module's data (an in-tree module loaded for it) among them: afterwards
# nothing loaded, no probe, those variables as they were
sig() { cat /sys/module/module/parameters/sig_enforce 2>/dev/null; }
lockdown() { cat /sys/kernel/security/lockdown 2>/dev/null; }
sig0=$(sig) lock0=$(lockdown)
had_nullb=1
[ -d /sys/module/null_blk ] || { had_nullb=0; modprobe null_blk nr_devices=0 ||
	fail "modprobe null_blk"; }
out=$("$tmp/fuzz_tables" --cases "$tbl")
rc=$?
echo "$out"
[ "$had_nullb" = 1 ] || rmmod null_blk || fail "rmmod null_blk"
[ "$rc" = 0 ] || fail "a rule did not hold"
echo "$out" | grep -q "^ok case 61: an in-tree module's variable" ||
	fail "no in-tree module's variable was tried"
echo "$out" | grep -q "^ok case 60: a variable in the kernel's bss" ||
	fail "no variable of the kernel's bss was tried"
[ "$($XK -j status | jq length)" = 0 ] || fail "a refused case left a constant loaded"
[ "$(probes_left)" = 0 ] || fail "a refused case left probes: $(cat /sys/kernel/debug/kprobes/list)"
[ "$(sig)" = "$sig0" ] || fail "sig_enforce changed: $sig0 -> $(sig)"
[ "$(lockdown)" = "$lock0" ] || fail "lockdown changed: $lock0 -> $(lockdown)"
# in rounds of 250, the kernel log checked after each: the log buffer
# holds a round's lines (loads and unloads are logged) but not 10000's
n=${FUZZ_N:-10000}
seed=${FUZZ_SEED:-1}
t0=$(date +%s)
total=()
for ((r = 0; r * 250 < n; r++)); do
	mark="xk-fuzz-$$-$r"
	echo "$mark" > /dev/kmsg
	out=$("$tmp/fuzz_tables" -n 250 -s $((seed + r)) "$tbl") ||
		fail "the fuzzer failed: $out"
	total+=("$out")
	bad=$(dmesg | sed -n "/$mark/,\$p" | grep -E "Oops|BUG:|WARNING:|general protection|Call Trace")
	[ -z "$bad" ] || fail "kernel log, round $r: $bad"
	dmesg | grep -q "$mark" || fail "the kernel log overflowed in round $r"
	echo "$out" | grep -q '^other' && fail "a request neither applied nor refused with an errno"
done
t1=$(date +%s)
# the counts, summed over the rounds
sum=$(printf '%s\n' "${total[@]}" | awk '
	/^requests/ { req += $2; t += $4 }
	/^applied/ { app += $2 }
	/^settled/ { set += $2; setref += $6 }
	/^refused/ { ref[$2 " " $3] += $4 }
	END { printf "requests %d in %.1f s\napplied %d\nsettled %d spans, settle refused %d\n", req, t, app, set, setref
	      for (k in ref) printf "refused %s %d\n", k, ref[k] }')
echo "$sum"
log "fuzz run: $((t1 - t0)) s wall in the guest"
req=$(echo "$sum" | awk '/^requests/ { print $2 }')
applied=$(echo "$sum" | awk '/^applied/ { print $2 }')
[ "${req:-0}" -ge "$n" ] || fail "only ${req:-0} requests"
[ "${applied:-0}" -ge 1 ] || fail "not even the base table was applied"
[ "$($XK -j status | jq length)" = 0 ] || fail "a constant is still loaded"
[ "$(probes_left)" = 0 ] || fail "probes left: $(cat /sys/kernel/debug/kprobes/list)"
settled=$(echo "$sum" | awk '/^settled/ { print $2 }')
[ "${settled:-0}" -ge 1 ] || fail "no applied table was ever settled"
[ "$(text)" = "$text_before" ] || fail "the kernel text differs after the fuzzing"
# XK_IOC_REPLAY: a replayed table (MAX_LAGGING_PERIODS, ioc_timer_fn)
# loaded at its default, its own replays taken, then mutated replays:
# each refused or taken (never put in force), the slots' limit reached
rtbl=$tmp/replay.scope
cp "$dir/scopes/MAX_LAGGING_PERIODS.scope" "$rtbl" || fail "no replayed table"
mark="xk-fuzz-$$-replay"
echo "$mark" > /dev/kmsg
rout=$("$tmp/fuzz_tables" --replays -n "${FUZZ_REPLAY_N:-3000}" -s "$seed" "$rtbl") ||
	fail "the replay fuzzer failed: $rout"
echo "$rout"
bad=$(dmesg | sed -n "/$mark/,\$p" | grep -E "Oops|BUG:|WARNING:|general protection|Call Trace")
[ -z "$bad" ] || fail "kernel log, replays: $bad"
echo "$rout" | grep -q "^refused EINVAL" || fail "no malformed replay was refused"
echo "$rout" | grep -q "^refused ENOSPC" || fail "the replay slots' limit was never reached"
[ "$($XK -j status | jq length)" = 0 ] || fail "a constant is still loaded after the replays"
[ "$(probes_left)" = 0 ] && ! grep -q ioc_timer_fn /sys/kernel/debug/kprobes/list ||
	fail "probes left after the replays: $(cat /sys/kernel/debug/kprobes/list)"
rmmod xkernel || fail "rmmod xkernel failed after the fuzzing"
log "fuzzed $req requests: $applied applied ($settled spans settled), the rest refused; no probe left, text as before, rmmod ok"
