#!/bin/bash
# xk tune sweeps BLK_MAX_REQUEST_COUNT over 3 values on null_blk (block
# plug flushes per dd, from bench/blk-unplugs.sh's output on the metric's
# stdin): a CSV row per value, fewer flushes for larger values, the constant
# unloaded after (it was not loaded before); loaded at 16, a failing --run,
# a failing --metric and SIGTERM all leave 16 in force.
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT
modprobe null_blk nr_devices=1 max_sectors=8 || fail "no null_blk"
trap 'cleanup_xk; rmmod null_blk' EXIT
echo 1024 > /sys/block/nullb0/queue/read_ahead_kb
value() { $XK -j status | jq ".[] | select(.constant == \"$1\") | .value"; }
run='bench/blk-unplugs.sh /dev/nullb0 16'
metric="awk '/^unplugs/ {print \$2}'"
csv=$(mktemp --suffix .csv)
out=$($XK -j tune BLK_MAX_REQUEST_COUNT --values 4,32,128 --repeat 1 \
	--run "$run" --metric "$metric" --csv "$csv" --plot /tmp/tune.png) ||
	fail "xk tune failed: $out"
log "$(cat "$csv")"
expect_eq "CSV lines" "$(wc -l < "$csv")" 4
expect_eq "CSV header" "$(head -1 "$csv")" "value,mean,stdev,min,max,n"
expect_eq "CSV values" "$(tail -n +2 "$csv" | cut -d, -f1 | tr '\n' ' ')" "4 32 128 "
n4=$(echo "$out" | jq '.results[0].mean | floor')
n32=$(echo "$out" | jq '.results[1].mean | floor')
n128=$(echo "$out" | jq '.results[2].mean | floor')
[ "$n4" -gt $((n32 * 4)) ] || fail "N=4 flushed $n4 times, want > 4x $n32"
[ "$n128" -lt "$n32" ] || fail "N=128 flushed $n128 times, not fewer than $n32"
[ "$(head -c 4 /tmp/tune.png | tail -c 3)" = PNG ] || fail "no PNG drawn"
expect_eq "loaded after the sweep" "$($XK -j status | jq length)" 0
[ "$(probes_left)" = 0 ] || fail "probes left after the sweep"
# loaded before at 16: failures and signals restore 16
$XK set BLK_MAX_REQUEST_COUNT=16 || fail "set 16"
out=$($XK tune BLK_MAX_REQUEST_COUNT --values 4,8 --repeat 1 --run 'exit 3' \
	--metric cat 2>&1)
expect_eq "status of a failing --run" $? 1
echo "$out" | grep -q "run 'exit 3' failed (exit status 3) at BLK_MAX_REQUEST_COUNT=4, run 1 of 1" ||
	fail "the failing run is not named: $out"
expect_eq "value after a failing --run" "$(value BLK_MAX_REQUEST_COUNT)" 16
out=$($XK tune BLK_MAX_REQUEST_COUNT --values 4 --repeat 1 --run 'echo x' \
	--metric cat 2>&1)
expect_eq "status of a metric that is no number" $? 1
echo "$out" | grep -q "printed 'x' at BLK_MAX_REQUEST_COUNT=4, run 1: not a number" ||
	fail "the bad metric is not named: $out"
expect_eq "value after a bad metric" "$(value BLK_MAX_REQUEST_COUNT)" 16
$XK tune BLK_MAX_REQUEST_COUNT --values 8 --repeat 1 --run 'sleep 60' \
	--metric cat > /dev/null 2>&1 &
pid=$!
for _ in $(seq 50); do [ "$(value BLK_MAX_REQUEST_COUNT)" = 8 ] && break; sleep 0.2; done
expect_eq "value during the sweep" "$(value BLK_MAX_REQUEST_COUNT)" 8
kill -TERM $pid
wait $pid
expect_eq "status after SIGTERM" $? 143
expect_eq "value after SIGTERM" "$(value BLK_MAX_REQUEST_COUNT)" 16
$XK unload BLK_MAX_REQUEST_COUNT || fail "unload"
