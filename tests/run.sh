#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs every suite and ends with one line "N passed, N failed":
#   unit   build/tests/test_* (libxk on the host)
#   cli    tests/cli/run.sh   (xk's commands and errors, including guest boots)
#   guest  tests/guest/run.sh (inside the stock kernel, one boot)
# A suite that dies before reporting counts as one failure.
set -u
cd "$(dirname "$0")/.."
export XK_CACHE=${XK_CACHE:-$HOME/.cache/xkernel}
# one kernel throughout, whatever is fetched meanwhile: the target when the
# run starts (xk help kernel), for every suite and the guests
if [ -z "${XK_RELEASE:-}" ] && rel=$(build/xk -q kernel info --field release 2>/dev/null); then
	export XK_RELEASE=$rel
fi
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
passed=0
failed=0

suite() {
	local name=$1
	shift
	echo "# suite: $name"
	"$@" 2>&1 | tee "$log/$name"
	local st=${PIPESTATUS[0]}
	local ok bad
	ok=$(grep -c '^ok ' "$log/$name")
	bad=$(grep -c '^not ok ' "$log/$name")
	if [ "$st" != 0 ] && [ "$bad" = 0 ]; then
		echo "not ok - suite $name exited with status $st"
		bad=1
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
}

for t in build/tests/test_*; do
	[ -x "$t" ] && suite "unit-$(basename "$t")" "$t"
done
suite cli tests/cli/run.sh

# the guest tests load scope tables made here, on the host
prepare_tables() {
	local c
	for c in BLK_MAX_REQUEST_COUNT SHRINK_BATCH HYSTART_DELAY_MIN HYSTART_DELAY_MAX \
		 TCP_FASTRETRANS_THRESH CYCLE_LEN BLK_PLUG_FLUSH_SIZE IORING_MAX_ENTRIES \
		 BBR_PACING_MARGIN_PERCENT PCP_BATCH_DIVISOR KYBER_ASYNC_PERCENT \
		 MAX_LAGGING_PERIODS FQ_DEFAULT_INITIAL_QUANTUM_MTUS SK_MEMORY_PCPU_RESERVE \
		 RR_TIMESLICE CAPACITY_GREATER_MARGIN MEMCG_CHARGE_BATCH \
		 IO_REQ_ALLOC_BATCH LOAD_FREQ BFQ_TIMEOUT SKB_FRAG_PAGE_ORDER \
		 BICTCP_BETA_SCALE BICTCP_HZ MIN_LRU_BATCH PIPE_MIN_DEF_BUFFERS; do
		build/xk -q gen "$c" >/dev/null || return 1
	done
	# a proved table: TCP_INIT_CWND over 10..12 (11 left out)
	build/xk -q gen --prove --catalog tests/fixtures/prove/tcp.conf \
		TCP_INIT_CWND >/dev/null || return 1
	# the per-value test's value, built here (the guest takes it from the
	# cache of variant objects instead of compiling under TCG), then the
	# table made again without it: the set in the guest must prepare it
	build/xk -q gen --prepare 1000 GSO_MAX_SEGS >/dev/null || return 1
	build/xk -q gen GSO_MAX_SEGS >/dev/null || return 1
	# the replayed test's value, the same way: its load prepares it
	build/xk -q gen --prepare 50 KYBER_ASYNC_PERCENT >/dev/null || return 1
	build/xk -q gen KYBER_ASYNC_PERCENT >/dev/null || return 1
	# the boot-derived test's value, the same way: set while loaded
	build/xk -q gen --prepare 1500 --catalog tests/fixtures/golden/golden.conf \
		G_DERIV >/dev/null || return 1
	# the by-shape test's refused value: its build has another shape (the
	# guest analyses the cached build and refuses it by name)
	if build/xk -q gen --prepare 6 PCP_BATCH_DIVISOR >/dev/null 2>&1; then
		echo "not ok - PCP_BATCH_DIVISOR=6 was prepared: it has another shape"
		return 1
	fi
	for c in G_LT G_LE G_FOLD G_TWICE G_STORE G_RMW G_INLINE G_HOLD G_VAR G_PT G_REC G_DUP \
		 G_ADDR G_INIT G_BUDGET G_SIZE G_SYSCTL G_RESET G_ALT G_ALTI G_ALTX G_FAULT G_JL G_IDX G_HEAP G_RO G_ROA G_STKH \
		 G_DERIV G_TAILW; do
		build/xk -q gen --catalog tests/fixtures/golden/golden.conf "$c" \
			>/dev/null || return 1
	done
	echo "ok - scope tables for the guest tests"
	# the policies (make policies) include glue made from the same tables
	make -s policies >/dev/null || return 1
	echo "ok - eBPF policies for the guest tests"
}
suite tables prepare_tables
suite guest build/xk vm run --timeout 3600 -- tests/guest/run.sh
# settling pokes live text: once more in the deterministic guest
# (single-threaded TCG), the other model of cross-modifying code
suite guest-settle-deterministic build/xk vm run --deterministic --smp 1 \
	--timeout 600 -- tests/guest/run.sh tests/guest/test_settle.sh
# lockdown is one-way for a boot: its test has a boot of its own
suite guest-lockdown build/xk vm run --timeout 600 -- tests/guest/run.sh \
	tests/guest/solo_lockdown.sh

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
