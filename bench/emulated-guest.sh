#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The guest half of bench/emulated.sh.
set -euo pipefail
XK=build/xk
insmod kmod/xkernel.ko
insmod tests/fixtures/golden/xk_golden.ko
N=20000
# guest ns per read of the probe file, the best of three
run() {
	python3 - "$N" <<'PY'
import sys, time
n = int(sys.argv[1]); best = None
for _ in range(3):
    t0 = time.monotonic_ns()
    for _ in range(n):
        with open("/sys/kernel/debug/xk_golden/probe", "rb") as f:
            f.read()
    v = (time.monotonic_ns() - t0) // n
    best = v if best is None or v < best else best
print(best)
PY
}
run > /dev/null
none=$(run)
$XK load --catalog tests/fixtures/golden/golden.conf G_SCALE --value 13 > /dev/null
emu=$(run)
emu_hits=$($XK -j status | jq '[.[0].probes[].hits] | add')
$XK unload G_SCALE > /dev/null
$XK load --catalog tests/fixtures/golden/golden.conf G_TWICE --value 78 > /dev/null
sleep 1			# optimization is deferred work
state=$($XK -j status | jq -r '[.[0].probes[].probe] | unique | join(",")')
opt=$(run)
echo 0 > /proc/sys/debug/kprobes-optimization
sleep 1
int3=$(run)
echo 1 > /proc/sys/debug/kprobes-optimization
$XK unload G_TWICE > /dev/null
after=$(run)
echo "  reads of xk_golden/probe, guest instructions per read (each calls every golden function once):"
printf '    %-48s %7d\n' "no probe" "$none"
printf '    %-48s %7d  (+%d)\n' "G_SCALE emulated (int3, span skipped)" "$emu" $((emu - none))
printf '    %-48s %7d  (+%d)\n' "G_TWICE register rewrite, as armed ($state)" "$opt" $((opt - none))
printf '    %-48s %7d  (+%d)\n' "G_TWICE register rewrite, int3" "$int3" $((int3 - none))
printf '    %-48s %7d\n' "after unload" "$after"
echo "    emulated hits counted: $emu_hits"
