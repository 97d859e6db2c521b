#!/bin/bash
# LOAD_FREQ retuned live: the load average is sampled every LOAD_FREQ
# jiffies (5 s + 1 tick compiled in). sched_init armed the first deadline
# at boot (jiffies + LOAD_FREQ, a note of the table, no span); the code
# that re-arms it (calc_global_load, calc_global_load_tick) carries the
# retuned value. With a shell loop keeping a CPU busy, /proc/loadavg
# changes at most once in 3 s at the compiled-in value, every few ticks
# at 25 (100 ms), and at most once again after unload, once the last
# short deadline has passed.
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT

# no command substitution in the loop: a fork is a task, and slow under TCG
now=0
tick() { local u; read -r u _ < /proc/uptime; now=$(( ${u%.*} * 100 + 10#${u#*.} )); }
# how often the three averages changed in $1 centiseconds of a busy loop,
# in $changes
changes_in() {
	local end prev cur a b c n=0
	tick
	end=$((now + $1))
	read -r a b c _ < /proc/loadavg
	prev="$a $b $c"
	while tick; [ "$now" -lt "$end" ]; do
		read -r a b c _ < /proc/loadavg
		cur="$a $b $c"
		[ "$cur" != "$prev" ] && n=$((n + 1))
		prev=$cur
	done
	changes=$n
}

changes_in 300
base=$changes
$XK set LOAD_FREQ=25 || fail "set failed"
changes_in 600	# the deadline armed with 1251 passes
changes_in 300
fast=$changes
$XK unload LOAD_FREQ || fail "unload failed"
changes_in 100	# the last deadline armed with 25 passes
changes_in 300
after=$changes
log "load average changes in 3 s of a busy loop: LOAD_FREQ=1251 $base," \
    "=25 $fast, after unload $after ($(cut -d' ' -f1-3 /proc/loadavg))"
[ "$base" -le 2 ] || fail "at 1251 (5 s) the load average changed $base times in 3 s"
[ "$fast" -ge 10 ] || fail "at 25 (100 ms) the load average changed only $fast times in 3 s"
[ "$after" -le 2 ] || fail "after unload the load average changed $after times in 3 s"
