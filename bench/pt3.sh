cd /work/main; XK=build/xk
insmod kmod/xkernel.ko
N=100000
run() { local t0 t1; t0=$(date +%s%N); dd if=/dev/zero of=/dev/null bs=1 count=$N 2>/dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / N )); }
run >/dev/null; echo none $(run)
$XK load MAX_RW_COUNT --policy build/bpf/rw_fixed.bpf.o --param value=2147475456 >/dev/null
sleep 1
echo policy $(run)
sysctl -qw kernel.bpf_stats_enabled=1
echo policy+stats $(run)
bpftool -j prog show | jq -r '.[] | select(.run_cnt != null and .run_cnt > 1000) | "\(.name) runs \(.run_cnt) ns/run \(.run_time_ns / .run_cnt | floor)"'
sysctl -qw kernel.bpf_stats_enabled=0
$XK unload MAX_RW_COUNT >/dev/null
