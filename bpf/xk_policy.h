/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What an Xk-tune policy includes, after vmlinux.h and <bpf/bpf_helpers.h>,
 * and before the glue `xk gen NAME --glue` made for each constant it drives.
 * Step by step: docs/policies.md.
 */
#ifndef XK_POLICY_BPF_H
#define XK_POLICY_BPF_H

#include "xk_expr.h"	/* the update programs' operations (flags, widths) */
#include "xk_kfunc.h"	/* struct xk_write; xk_rules.h: XK_LABEL_MAX */

/* choose() returns it to leave the compiled-in value for this execution */
#define XK_KEEP ((__s64)0x8000000000000000ULL)

/*
 * The module's kfuncs (kmod/xk_policy.c), for kprobe programs only.
 * xk_set: bounds the value (clamps and counts), counts it under label, and
 *         with several spans pins it for the thread inside the safe span.
 * xk_write_kernel: writes the span's locations; refused (nothing written)
 *         away from a policy-driven probe point, for any other target, a
 *         value out of bounds, or a content the table does not give.
 * xk_transition_done: the thread leaves the safe span (releases the pin).
 */
extern int xk_set(struct pt_regs *ctx, __s64 *value, const char *label,
		  __u32 label__sz) __ksym;
extern int xk_write_kernel(struct pt_regs *ctx, __s64 value,
			   const struct xk_write *writes, __u32 writes__sz) __ksym;
extern int xk_transition_done(struct pt_regs *ctx) __ksym;

/* Copies a NUL-terminated name into a label (at most XK_LABEL_MAX - 1). */
static __always_inline void xk_label(char *label, const char *name)
{
#pragma unroll
	for (int i = 0; i < XK_LABEL_MAX - 1; i++) {
		label[i] = name[i];
		if (!name[i])
			break;
	}
}

#endif
