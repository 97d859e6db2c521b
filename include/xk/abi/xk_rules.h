/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The rules both halves of xkernel apply, written once: the limits of a
 * scope table, the shape a span must have before anything touches the
 * kernel, and when spans of one constant nest. libxk applies them when it
 * writes or reads a table (a table it would refuse never leaves `xk gen`),
 * xkernel.ko when a table arrives through the ioctl (where every field is
 * an adversary's). Included by the module, libxk, the tests and policies.
 *
 * Nothing here allocates, sleeps or prints; a rule returns NULL when it
 * holds, else a short phrase naming what broke it, for the caller to put
 * in its own message.
 */
#ifndef XK_RULES_H
#define XK_RULES_H

#include "xk_expr.h"

/* ---- limits (one definition; user-space structs are sized with these) ---- */

#define XK_NAME_MAX 64		/* a constant's or a policy's name, with NUL */
#define XK_FUNC_MAX 128		/* a function's name, with NUL */
#define XK_ERROR_MAX 256	/* an error line from the module */
#define XK_MAX_SPANS 32		/* critical spans of one constant */
#define XK_MAX_EXPECT 64	/* bytes compared from a span's start */
#define XK_MAX_LOCS 2		/* locations one span writes */
#define XK_MAX_EXITS 16		/* exits of one safe span */
#define XK_MAX_RANGES 16	/* address ranges of one safe span */
#define XK_MAX_CANDS 8		/* same-named functions a span may resolve to */
#define XK_MAX_ARGS 6		/* register arguments of the x86-64 ABI */
#define XK_MAX_PARAMS 8		/* fitted immediates of one span */
#define XK_MAX_CONTEXTS 16	/* per-context figures kept for a policy */
#define XK_LABEL_MAX 16		/* a policy's context label, with NUL */
#define XK_TX_MAX 8		/* constants switched in one transaction */

/* location kinds: enum xk_reg (a register), XK_LOC_FLAGS, or memory */
#define XK_LOC_MEM 32		/* [base + disp], base a register or XK_BASE_RIP */

/* escapes of derived data out of the safe span (bit mask) */
#define XK_ESCAPE_STORE 0x1	/* stored to non-stack memory */
#define XK_ESCAPE_CALL 0x2	/* passed to a call */
#define XK_ESCAPE_RET 0x4	/* returned */

#ifndef __bpf__
_Static_assert(XK_LOC_MEM > XK_BASE_RIP, "location kinds overlap registers");
_Static_assert(XK_MAX_PARAMS <= XK_EXPR_MAX_INSNS, "parameters exceed a program");
#endif

/* ---- the shape of one location and one span ---- */

static inline int xk_rule_width_ok(__u32 width)
{
	return width == 8 || width == 16 || width == 32 || width == 64;
}

/*
 * A location is a general register other than rsp, the flags, or memory at
 * [register + disp] or rip-relative; a rip-relative location's rel32 lies
 * in the bytes compared with the live text: [start, start + expect_len).
 */
static inline const char *xk_rule_check_loc(__s32 kind, __s32 base, __s64 disp,
					    __u64 rip_end, __u32 width,
					    __u64 start, __u32 expect_len)
{
	if (!xk_rule_width_ok(width))
		return "a location's width is not 8, 16, 32 or 64 bits";
	if (kind == XK_LOC_FLAGS)
		return 0;
	if (kind >= 0 && kind < XK_NR_REGS)
		return kind == XK_RSP ? "a location is the stack pointer" : 0;
	if (kind != XK_LOC_MEM)
		return "a location is not a register, the flags or memory";
	if (base >= 0 && base < XK_NR_REGS)
		return 0;
	if (base != XK_BASE_RIP)
		return "a memory location's base is not a register or rip";
	if (disp < 0 || (__u64)disp < start || rip_end < (__u64)disp + 4 ||
	    rip_end > start + expect_len)
		return "a rip-relative location lies outside the compared bytes";
	return 0;
}

/*
 * The offsets of a span in its function: the probe point after the start,
 * inside the function and inside the compared bytes; safe-span ranges and
 * exits inside the function (exits may lie before the start: code is not
 * laid out in source order). Counts within the limits above.
 */
static inline const char *xk_rule_check_offsets(__u64 func_size, __u64 start,
						__u64 probe, __u32 expect_len,
						__u32 nr_locs, __u32 nr_exits,
						__u32 nr_ranges)
{
	if (expect_len > XK_MAX_EXPECT)
		return "more expected bytes than the limit";
	if (probe <= start || probe >= func_size || probe - start >= expect_len)
		return "the probe point is not inside the span and its function";
	if (nr_locs < 1 || nr_locs > XK_MAX_LOCS)
		return "no location, or more than the limit";
	if (nr_exits > XK_MAX_EXITS)
		return "more safe-span exits than the limit";
	if (nr_ranges > XK_MAX_RANGES)
		return "more safe-span ranges than the limit";
	return 0;
}

static inline const char *xk_rule_check_range(__u64 from, __u64 to,
					      __u64 func_size)
{
	return from < to && to <= func_size ? 0 :
	       "a safe-span range lies outside the function";
}

/* ---- nesting ---- */

/* What the nesting rule reads of a span; func_id names its function. */
struct xk_rule_span_view {
	__u32 escapes;
	__u32 nr_ranges;
	const __u64 (*ranges)[2];
	__u64 probe;
	__u64 func_id;
};

/*
 * Whether a thread inside one span's safe span may execute a span of the
 * same constant: derived data is passed to a call, or another span's probe
 * point lies in the ranges, in the same function. view() fills span i and
 * returns 0, or non-zero to leave it out (a span that is not loaded). The
 * caller says what "the same function" is: libxk the object and name, the
 * module the live address. Policies then pin a thread's value until it
 * leaves the safe span; the glue attaches exit programs where it is so.
 */
static inline int xk_rule_spans_nest(int (*view)(const void *ctx, __u32 i,
						 struct xk_rule_span_view *v),
				     const void *ctx, __u32 nr_spans)
{
	struct xk_rule_span_view a, b;

	for (__u32 i = 0; i < nr_spans; i++) {
		if (view(ctx, i, &a))
			continue;
		if (a.escapes & XK_ESCAPE_CALL)
			return 1;
		for (__u32 j = 0; j < nr_spans; j++) {
			if (j == i || view(ctx, j, &b) || b.func_id != a.func_id)
				continue;
			for (__u32 r = 0; r < a.nr_ranges && r < XK_MAX_RANGES; r++)
				if (b.probe >= a.ranges[r][0] &&
				    b.probe < a.ranges[r][1])
					return 1;
		}
	}
	return 0;
}

#endif
