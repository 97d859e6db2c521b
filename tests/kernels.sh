#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-kernels [KERNELS="RELEASE..."]: the guest tests every kernel
# must pass, on kernels other than the default one (by default Debian 12's
# own 6.1 cloud kernel and Debian 13's 6.12, built by gcc-14 in its
# toolchain root).
# Per release, on the host: scripts/kernel-tree.sh (the kernel fetched into
# a cache of its own, this working tree copied to build/kernels/RELEASE and
# built there for it, the tables the tests load made with that copy); then
# one guest run of the tests below. On a kernel
# without a feature (policies before 6.10) the tests check its named
# refusal. TAP; the status is 0 when every test of every kernel passed.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 125
top=$PWD
base=${XK_CACHE:-$HOME/.cache/xkernel}
kernels=${KERNELS:-6.1.0-57-cloud-amd64 6.12.118+deb13-cloud-amd64}
# what every kernel must do: load, set in each transition mode, unload,
# settle, refusals, a policy (or its refusal), the golden module's forms
# (TESTS="test_x ..." in the environment: those instead)
# shellcheck disable=SC2206
TESTS=(${TESTS:-test_module_load test_kprobes test_doctor
	test_refusals test_global_transition test_pertask_transition
	test_transaction test_unload_busy test_retune_blk test_retune_shrink
	test_settle test_status_addresses test_policy_blk test_retune_golden})
REAL=(BLK_MAX_REQUEST_COUNT SHRINK_BATCH TCP_FASTRETRANS_THRESH)
GOLDEN=(G_LT G_LE G_FOLD G_TWICE G_STORE G_RMW G_INLINE G_HOLD G_VAR G_PT G_DUP
	G_ADDR G_INIT G_BUDGET G_SIZE G_SYSCTL G_RESET G_ALT G_ALTI G_ALTX G_FAULT G_JL
	G_IDX G_HEAP G_STKH G_TAILW)
failed=0

for r in $kernels; do
	work=$top/build/kernels/$r
	cache=$base-$r
	start=$(date +%s)
	how=fetched
	[ -n "${XK_BUILD_DIR:-}" ] && how="built in $XK_BUILD_DIR, added"
	echo "# $r: $how into $cache, this tree built in $work"
	if ! scripts/kernel-tree.sh "$r" "${REAL[@]}" -- "${GOLDEN[@]}" 2>&1 |
		sed 's/^/#   /'; then
		echo "not ok - $r: fetch, build or tables"
		failed=$((failed + 1))
		continue
	fi
	echo "ok - $r: ${how##* }, built and analysed in $(($(date +%s) - start)) s"
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
