#!/bin/bash
# LOAD_FREQ retuned live: the load average is sampled every LOAD_FREQ
# jiffies (5 s + 1 tick compiled in). sched_init armed the first deadline
# at boot (jiffies + LOAD_FREQ: a note of the table, no span); the code
# that re-arms it (calc_global_load, calc_global_load_tick) carries the
# retuned value. With a shell loop keeping a CPU busy, the averages in
# /proc/loadavg change at every sample: the time between two changes is
# 5 s compiled in, 10 s at 2502 (the values whose builds keep the
# division's shape are 1251 times a power of two: others are refused by
# name when set), and 5 s again after unload.
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT

# no command substitution in the loop: a fork is a task, and slow under TCG
now=0
tick() { local u; read -r u _ < /proc/uptime; now=$(( ${u%.*} * 100 + 10#${u#*.} )); }
# the uptime (centiseconds) at which the averages next change, in $at;
# a busy loop meanwhile (at most $1 centiseconds)
next_change() {
	local end prev a b c
	tick
	end=$((now + $1))
	read -r a b c _ < /proc/loadavg
	prev="$a $b $c"
	while tick; [ "$now" -lt "$end" ]; do
		read -r a b c _ < /proc/loadavg
		[ "$a $b $c" != "$prev" ] && { at=$now; return 0; }
	done
	fail "the load average did not change in $(($1 / 100)) s"
}
# the time between two samples, in $gap (centiseconds): the first change
# ends a period armed before, the next one the period armed at it
sample_gap() {
	local first
	next_change 1200
	first=$at
	next_change 1200
	gap=$((at - first))
}

sample_gap
base=$gap
$XK set LOAD_FREQ=2502 || fail "set failed"
sample_gap
slow=$gap
$XK unload LOAD_FREQ || fail "unload failed"
sample_gap
after=$gap
log "time between load-average samples: LOAD_FREQ=1251 $base cs," \
    "=2502 $slow cs, after unload $after cs"
[ "$base" -ge 450 ] && [ "$base" -le 550 ] || fail "at 1251 the samples were $base cs apart, not 5 s"
[ "$slow" -ge 950 ] && [ "$slow" -le 1050 ] || fail "at 2502 the samples were $slow cs apart, not 10 s"
[ "$after" -ge 450 ] && [ "$after" -le 550 ] || fail "after unload the samples were $after cs apart, not 5 s"
