#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-kernels [KERNELS="RELEASE..."]: the guest tests every kernel
# must pass, on kernels other than the default one (by default Debian 12's
# own 6.1 cloud kernel and the generic flavour of 6.12, which hosts run). Per release, on the host: the kernel fetched into
# a cache of its own ($XK_CACHE-RELEASE, sharing the default cache's
# downloaded packages, so that the default cache keeps one kernel and every
# command's target stays what it was); this working tree copied to
# build/kernels/RELEASE and built there for that kernel (the module and the
# golden module are built inside the tree); the tables the tests load made
# with that copy; then one guest run of the tests below. On a kernel
# without a feature (policies before 6.10) the tests check its named
# refusal. TAP; the status is 0 when every test of every kernel passed.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 125
top=$PWD
base=${XK_CACHE:-$HOME/.cache/xkernel}
kernels=${KERNELS:-6.1.0-57-cloud-amd64 6.12.118+deb12-amd64}
# what every kernel must do: load, set in each transition mode, unload,
# settle, refusals, a policy (or its refusal), the golden module's forms
TESTS=(test_module_load test_kprobes test_doctor test_refusals
       test_global_transition test_pertask_transition test_transaction
       test_unload_busy test_retune_blk test_retune_shrink test_settle
       test_status_addresses test_policy_blk test_retune_golden)
REAL=(BLK_MAX_REQUEST_COUNT SHRINK_BATCH TCP_FASTRETRANS_THRESH)
GOLDEN=(G_LT G_LE G_FOLD G_TWICE G_STORE G_RMW G_INLINE G_HOLD G_VAR G_PT G_DUP
	G_ADDR G_INIT G_BUDGET G_SIZE G_SYSCTL G_RESET G_ALT G_ALTI G_ALTX G_FAULT G_JL
	G_IDX G_HEAP G_STKH G_TAILW)
failed=0

# prepare RELEASE WORK CACHE: the copy built for the kernel, its tables
prepare() {
	local r=$1 work=$2 cache=$3 c
	mkdir -p "$cache" "$work"
	[ -e "$cache/debs" ] || ln -s "$base/debs" "$cache/debs"
	# the working tree as it is (tracked and new files), not build outputs
	git ls-files -z --cached --others --exclude-standard |
		tar -c --null -T - | tar -x -C "$work" || return 1
	make -C "$work" -j2 build/xk >/dev/null || return 1
	XK_CACHE=$cache "$work/build/xk" -q kernel fetch --release "$r" || return 1
	XK_CACHE=$cache make -C "$work" -j2 >/dev/null || return 1
	for c in "${REAL[@]}"; do
		(cd "$work" && XK_CACHE=$cache build/xk -q gen "$c" >/dev/null) || return 1
	done
	for c in "${GOLDEN[@]}"; do
		(cd "$work" && XK_CACHE=$cache build/xk -q gen \
			--catalog tests/fixtures/golden/golden.conf "$c" >/dev/null) || return 1
	done
}

for r in $kernels; do
	work=$top/build/kernels/$r
	cache=$base-$r
	start=$(date +%s)
	echo "# $r: fetched into $cache, this tree built in $work"
	if ! prepare "$r" "$work" "$cache" 2>&1 | sed 's/^/#   /'; then
		echo "not ok - $r: fetch, build or tables"
		failed=$((failed + 1))
		continue
	fi
	echo "ok - $r: fetched, built and analysed in $(($(date +%s) - start)) s"
	list=()
	for t in "${TESTS[@]}"; do list+=("tests/guest/$t.sh"); done
	(cd "$work" && XK_CACHE=$cache build/xk vm run --timeout 2400 -- \
		tests/guest/run.sh "${list[@]}") > "$work.tap" 2>&1
	st=$?
	sed "s/^\(not ok\|ok\) [0-9]* - /\1 - $r: /" "$work.tap"
	bad=$(grep -c '^not ok' "$work.tap")
	[ "$st" != 0 ] && [ "$bad" = 0 ] && bad=1
	failed=$((failed + bad))
done
echo "# other kernels: $failed failed"
[ "$failed" = 0 ]
