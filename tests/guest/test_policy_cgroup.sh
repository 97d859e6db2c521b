#!/bin/bash
# An eBPF policy gives BLK_MAX_REQUEST_COUNT a value per cgroup: a dd in the
# cgroup xk-batch (value 4) and one outside (compiled-in 32) read the same
# null_blk device one after the other; only the one in the cgroup flushes
# its plug ~8x as often.
. "$(dirname "$0")/lib.sh"
POLICY=$XK_TOP/build/bpf/blk_per_cgroup.bpf.o
policies_or_refused
CG=/sys/fs/cgroup/xk-batch
cleanup() {
	cleanup_xk
	rmdir $CG 2>/dev/null
	rmmod null_blk 2>/dev/null
}
trap cleanup EXIT
[ -f "$POLICY" ] || fail "no $POLICY (make policies)"
[ -f /sys/fs/cgroup/cgroup.procs ] || fail "no cgroup v2 at /sys/fs/cgroup"
modprobe null_blk nr_devices=1 max_sectors=8 || fail "no null_blk"
echo 1024 > /sys/block/nullb0/queue/read_ahead_kb
mkdir -p $CG
echo 16384 > $TRACE/buffer_size_kb
# one dd; $1: "in" to run it in the cgroup
read_nullb0() {
	if [ "$1" = in ]; then
		sh -c "echo \$\$ > $CG/cgroup.procs && exec dd if=/dev/nullb0 of=/dev/null bs=1M count=32 2>/dev/null"
	else
		dd if=/dev/nullb0 of=/dev/null bs=1M count=32 2>/dev/null
	fi
}
unplugs() { unplugs_of read_nullb0 "$1"; }
base_in=$(unplugs in)
base_out=$(unplugs out)
$XK load BLK_MAX_REQUEST_COUNT --policy "$POLICY" --param cgroup_id="$(stat -c %i $CG)" \
	--param value=4 || fail "policy load failed"
pol_in=$(unplugs in)
pol_out=$(unplugs out)
st=$($XK -j status)
$XK status
$XK unload BLK_MAX_REQUEST_COUNT || fail "unload failed"
log "flushes per 32 MiB: in the cgroup $base_in -> $pol_in (value 4), outside $base_out -> $pol_out"
[ "$base_in" -ge 50 ] || fail "too few unplugs at baseline ($base_in)"
[ $((pol_in * 10)) -ge $((base_in * 50)) ] || fail "in the cgroup $pol_in flushes, want >= 5x $base_in"
[ $((pol_out * 100)) -ge $((base_out * 90)) ] && [ $((pol_out * 100)) -le $((base_out * 110)) ] ||
	fail "outside the cgroup $pol_out flushes, want $base_out +-10%"
expect_eq "value for the cgroup" \
	"$(jq -r '.[0].contexts[] | select(.label == "cgroup") | .value' <<< "$st")" 4
[ "$(jq -r '.[0].contexts[] | select(.label == "other") | .choices' <<< "$st")" -gt 0 ] ||
	fail "no choice counted outside the cgroup"
