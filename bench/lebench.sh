#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A LEBench-style overhead suite (docs/lebench.md): the kernel's core
# operations (build/bench/lebench, from bench/lebench.c) timed in the stock
# kernel under QEMU, with and without xkernel rewriting constants on their
# paths:
#   none     no xkernel
#   module   xkernel.ko rewriting MAX_RW_COUNT (vfs_read, vfs_write),
#            EP_MAX_EVENTS (do_epoll_wait) and N_STACK_PPS (do_sys_poll) on
#            every hit, with values that change nothing the suite does
#   settled  the same values written into the text (xk settle): no probes
#   policy   MAX_RW_COUNT chosen by an eBPF policy (bench/rw_fixed.bpf.c)
#   none2    no xkernel again: the run-to-run floor
# First in the deterministic guest (-icount shift=0: guest time counts
# instructions, 1 ns = 1 instruction, repeatable), then one wall-clock pass
# (multi-threaded TCG) of none, module and none2, which is noisy.
#
#   bench/lebench.sh [SCALE]     SCALE multiplies every run count (default 1)
#   bench/lebench.sh --report    tables and plot again from the last run's output
#
# Writes build/bench/lebench.csv (every figure), build/bench/lebench-*.txt
# (the guests' output) and docs/lebench.png (the plot); prints the tables.
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${1:-1}
OUT=build/bench
mkdir -p $OUT
if [ "$SCALE" != --report ]; then
	make -s build/bench/lebench policies > /dev/null
	build/xk -q gen MAX_RW_COUNT > /dev/null
	build/xk -q gen --catalog bench/lebench.conf EP_MAX_EVENTS > /dev/null
	build/xk -q gen --catalog bench/lebench.conf N_STACK_PPS > /dev/null

	t0=$(date +%s)
	echo "== deterministic guest (guest instructions), scale $SCALE"
	build/xk vm run --deterministic --smp 1 --timeout 1800 -- \
		bench/lebench-guest.sh det "$SCALE" | tee $OUT/lebench-det.txt | grep -v '^LB '
	t1=$(date +%s)
	echo "== wall-clock guest (thread=multi TCG: noisy), scale $SCALE"
	build/xk vm run --multi-thread --timeout 1800 -- \
		bench/lebench-guest.sh wall "$SCALE" | tee $OUT/lebench-wall.txt | grep -v '^LB '
	t2=$(date +%s)
	echo "suite: deterministic guest $((t1 - t0)) s, wall-clock guest $((t2 - t1)) s (boots included)" \
		> $OUT/lebench-time.txt
fi

# the CSV: mode,config,op,kbest,mean,stdev,n,window
{
	echo "mode,config,op,kbest,mean,stdev,n,window"
	awk '$1 == "LB" { printf "det,%s,%s,%s,%s,%s,%s,%s\n", $2, $3, $4, $5, $6, $7, $8 }' $OUT/lebench-det.txt
	awk '$1 == "LB" { printf "wall,%s,%s,%s,%s,%s,%s,%s\n", $2, $3, $4, $5, $6, $7, $8 }' $OUT/lebench-wall.txt
} > $OUT/lebench.csv

# hits of a rewrite probe per op (from the code paths; status' hit counts
# in the guest's output agree): one per read or write, so ctxsw's round
# trip has four (two writes, two reads); one per poll and per epoll_wait
hits() {
	case $1 in
	ctxsw) echo 4 ;;
	read_*|write_*|poll|poll_big|epoll|epoll_big) echo 1 ;;
	*) echo 0 ;;
	esac
}
HITS=$(awk -F, '$1 == "det" && $2 == "none" { print $3 }' $OUT/lebench.csv |
	while read -r op; do echo "$op $(hits "$op")"; done)

table() {	# mode, configs...
	local mode=$1; shift
	awk -F, -v mode="$mode" -v cfgs="$*" -v hits="$HITS" '
	BEGIN { nc = split(cfgs, cfg, " "); nh = split(hits, h, /[ \n]/)
		for (i = 1; i < nh; i += 2) hit[h[i]] = h[i + 1] }
	$1 == mode { if (!($3 in seen)) { seen[$3] = 1; ops[++no] = $3 }
		     k[$2, $3] = $4 }
	END {
		printf "  %-13s %4s", "op", "hits"
		for (c = 1; c <= nc; c++)
			printf c == 1 ? " %12s" : " %12s %7s", cfg[c], c == 1 ? "" : "%"
		if (mode == "det") printf "  %s", "per hit (module, policy)"
		printf "\n"
		for (o = 1; o <= no; o++) {
			op = ops[o]; base = k[cfg[1], op]
			printf "  %-13s %4s", op, hit[op]
			for (c = 1; c <= nc; c++) {
				v = k[cfg[c], op]
				if (c == 1) { printf " %12d", v; continue }
				printf " %12d %+6.1f%%", v, base ? (v - base) * 100 / base : 0
			}
			# the policy arms MAX_RW_COUNT only: reads and writes
			if (mode == "det" && hit[op] > 0)
				printf "  %+.0f, %s", (k["module", op] - base) / hit[op],
					op ~ /poll/ ? "-" : sprintf("%+.0f", (k["policy", op] - base) / hit[op])
			printf "\n"
		}
	}' $OUT/lebench.csv
}

echo
echo "== k-best per op, guest instructions (deterministic guest); % against none"
table det none module settled policy none2
echo
echo "== k-best per op, ns of wall clock (thread=multi TCG: NOISY, indicative only)"
table wall none module settled none2
echo
cat $OUT/lebench-time.txt

# the plot: k-best per config (log scale), then the overhead against none
awk -F, '$1 == "det" { if (!($3 in seen)) { seen[$3] = 1; ops[++no] = $3 } k[$2, $3] = $4 }
	END { for (o = 1; o <= no; o++) { op = ops[o]; b = k["none", op]
		printf "%s %d %d %d %d %.3f %.3f %.3f %d %.3f\n", op, b, k["module", op],
			k["policy", op], k["none2", op], (k["module", op] - b) * 100 / b,
			(k["policy", op] - b) * 100 / b, (k["none2", op] - b) * 100 / b,
			k["settled", op], (k["settled", op] - b) * 100 / b } }' \
	$OUT/lebench.csv > $OUT/lebench-plot.dat
if command -v gnuplot > /dev/null; then
	gnuplot <<-EOF
	set terminal pngcairo size 1400,900 font "sans,10" noenhanced
	set output "docs/lebench.png"
	set multiplot layout 2,1 title "LEBench-style ops in Debian's 6.12 cloud kernel under QEMU (-icount shift=0: guest instructions), k-closest estimate"
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.85 border -1
	set boxwidth 0.9
	set xtics rotate by -40 scale 0
	set grid ytics
	set key top left
	set logscale y
	set ylabel "instructions per op"
	plot "$OUT/lebench-plot.dat" using 2:xtic(1) title "none" lc rgb "#4c72b0", \
	     "" using 3 title "module (xk set)" lc rgb "#dd8452", \
	     "" using 9 title "settled (xk settle)" lc rgb "#8172b3", \
	     "" using 4 title "eBPF policy (MAX_RW_COUNT)" lc rgb "#55a868"
	unset logscale y
	set key top center
	set ylabel "overhead against none (%)"
	set yrange [-5:*]
	plot "$OUT/lebench-plot.dat" using 6:xtic(1) title "module (xk set)" lc rgb "#dd8452", \
	     "" using 10 title "settled (xk settle)" lc rgb "#8172b3", \
	     "" using 7 title "eBPF policy (MAX_RW_COUNT)" lc rgb "#55a868", \
	     "" using 8 title "none again (floor)" lc rgb "#8c8c8c"
	unset multiplot
	EOF
	echo "plot: docs/lebench.png; figures: $OUT/lebench.csv"
else
	echo "no gnuplot (apt-get install -y gnuplot-nox): no plot; figures: $OUT/lebench.csv"
fi
