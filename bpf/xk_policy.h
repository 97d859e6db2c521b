/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What an Xk-tune policy includes, after vmlinux.h and <bpf/bpf_helpers.h>,
 * and before the glue `xk gen NAME --glue` made for each constant it drives.
 * Step by step: docs/policies.md.
 */
#ifndef XK_POLICY_BPF_H
#define XK_POLICY_BPF_H

#include "xk_expr.h"	/* the update programs' operations (flags, widths) */
#include "xk_kfunc.h"	/* XK_KFUNC_ABI; xk_rules.h: XK_LABEL_MAX */

/* choose() returns it to leave the compiled-in value for this execution */
#define XK_KEEP ((__s64)0x8000000000000000ULL)

/*
 * The kfunc interface this object is built for: xk load reads it and
 * refuses an object built against another (make policies again).
 */
const volatile __u32 xk_kfunc_abi = XK_KFUNC_ABI;

/*
 * The module's kfunc (kmod/xk_policy.c), for non-sleepable kprobe programs
 * only, and obeyed only from the program xk load attached at a span (the
 * XK_POLICY_<CONSTANT> macro of the glue defines them), once per execution
 * of the span: it bounds the value (clamps and counts), counts it under
 * label, pins it for the thread inside the safe span where spans nest, and
 * writes the span's state for it. A second call in the same execution, or
 * a call from any other program, is refused (-EBUSY, -EPERM) and counted.
 */
extern int xk_choose(struct pt_regs *ctx, __s64 value, const char *label,
		     __u32 label__sz) __ksym;

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
