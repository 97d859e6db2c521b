/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The interface between eBPF policies (Xk-tunes) and xkernel.ko: the kfuncs
 * the module registers for BPF_PROG_TYPE_KPROBE programs, and what they take.
 * Included by the module, by libxk and by policies (after vmlinux.h).
 *
 * A policy program runs at the probe point of a critical span of a constant
 * loaded with `xk load --policy`. It picks a value for this execution
 * (xk_set: bounded, counted per context, pinned per thread while the thread
 * is inside the safe span when the constant has several spans), turns it
 * into the span's state with the code `xk gen --glue` generated, and hands
 * that state to xk_write_kernel, which writes it only if the program is at a
 * policy-driven probe point, each target is that span's location, the value
 * is within bounds and the content is what the scope table's program gives
 * for that value. At the safe span's exits, xk_transition_done ends the
 * thread's pin.
 */
#ifndef XK_KFUNC_H
#define XK_KFUNC_H

#include "xk_rules.h"

/* One location written at a critical span, named as the scope table names it. */
struct xk_write {
	__s32 kind;	/* enum xk_reg, XK_LOC_FLAGS, or 32 for memory */
	__s32 base;	/* memory: base register or XK_BASE_RIP */
	__s64 disp;	/* memory: displacement (rip: offset of the rel32 field) */
	__u64 content;	/* the bits a kernel built with the value would hold */
};

/* A label (at most XK_LABEL_MAX with its NUL) names the context a value was
 * chosen for: a device, a flow class. */

#endif
