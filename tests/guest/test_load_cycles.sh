#!/bin/bash
# 100 load/unload cycles while fio runs on null_blk leave no probe, no
# module reference and (checked by the runner) no oops or warning behind.
. "$(dirname "$0")/lib.sh"
fio_pid=
# a failing cycle must not leave the workload running into the next test
trap '[ -n "$fio_pid" ] && kill $fio_pid 2>/dev/null && wait $fio_pid 2>/dev/null; cleanup_xk; rmmod null_blk 2>/dev/null' EXIT
modprobe null_blk nr_devices=1 || fail "null_blk"
fio --name=bg --filename=/dev/nullb0 --rw=randread --bs=4k --iodepth=16 \
	--ioengine=io_uring --time_based --runtime=600 --numjobs=1 >/dev/null 2>&1 &
fio_pid=$!
sleep 1
insmod "$MODULE" || fail "insmod"
for i in $(seq 100); do
	v=$(( (i % 8) * 16 + 4 ))
	$XK -q load BLK_MAX_REQUEST_COUNT --value $v >/dev/null || fail "load $i"
	$XK -q unload BLK_MAX_REQUEST_COUNT >/dev/null || fail "unload $i"
done
kill $fio_pid; wait $fio_pid 2>/dev/null
fio_pid=
[ "$(probes_left)" = 0 ] || fail "probes left: $(cat /sys/kernel/debug/kprobes/list)"
refs=$(awk '$1 == "xkernel" { print $3 }' /proc/modules)
expect_eq "module references" "$refs" 0
rmmod xkernel || fail "rmmod after 100 cycles"
log "100 cycles under fio; no probe left; module unloaded"
