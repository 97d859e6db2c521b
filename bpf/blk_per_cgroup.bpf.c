// SPDX-License-Identifier: GPL-2.0
/*
 * BLK_MAX_REQUEST_COUNT per cgroup: the plug of a task in the given cgroup
 * (v2) holds `value` requests before it flushes; every other task keeps the
 * compiled-in 32. A plug is a task's, so the task submitting is the context.
 *
 *   xk load BLK_MAX_REQUEST_COUNT --policy build/bpf/blk_per_cgroup.bpf.o \
 *       --param cgroup_id=$(stat -c %i /sys/fs/cgroup/batch) --param value=128
 *
 * (a cgroup v2 directory's inode number is its id.)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "xk_policy.h"
#include "BLK_MAX_REQUEST_COUNT.xk.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 cgroup_id = 0;
const volatile xk_BLK_MAX_REQUEST_COUNT_t value = BLK_MAX_REQUEST_COUNT_DEFAULT;

static __always_inline __s64 choose(struct pt_regs *ctx, int span, char *label)
{
	if (span != 0 || !cgroup_id || bpf_get_current_cgroup_id() != cgroup_id) {
		xk_label(label, "other");
		return XK_KEEP;
	}
	xk_label(label, "cgroup");
	return value;
}

XK_POLICY_BLK_MAX_REQUEST_COUNT(choose)
