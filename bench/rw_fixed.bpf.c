// SPDX-License-Identifier: GPL-2.0
/*
 * The cheapest policy: one value for MAX_RW_COUNT everywhere, so that
 * bench/runtime.sh measures what the policy path (kprobe, BPF dispatch,
 * the program, one xk_choose; the module's probes at the safe-span exits,
 * which release pins) costs per trigger next to the module's own rewrite
 * handler.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "xk_policy.h"
#include "MAX_RW_COUNT.xk.h"

char LICENSE[] SEC("license") = "GPL";

const volatile xk_MAX_RW_COUNT_t value = MAX_RW_COUNT_DEFAULT;

static __always_inline __s64 choose(struct pt_regs *ctx, int span, char *label)
{
	xk_label(label, "all");
	return value;
}

XK_POLICY_MAX_RW_COUNT(choose)
