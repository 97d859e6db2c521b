/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The scope table: the one contract between the offline analysis (xk gen)
 * and the runtime (xk load, xkernel.ko). A text file, versioned; its format
 * is documented field by field in docs/scope-table.md. Everything the
 * runtime checks against the live kernel is in it: the bytes expected from
 * each span's start to its probe point, the locations to rewrite and the
 * programs that compute them, the fit, and the safe span's exits.
 */
#ifndef XK_SCOPE_H
#define XK_SCOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "xk/abi/xk_expr.h"
#include "xk/abi/xk_ioctl.h"
#include "xk/xk.h"

#define XK_SCOPE_MAGIC "xkernel-scope-table"
#define XK_SCOPE_VERSION 1
#define XK_SCOPE_MAX_EXPECT 64
#define XK_SCOPE_MAX_LOCS 2
#define XK_SCOPE_MAX_PARAMS 8
#define XK_SCOPE_MAX_EXITS 16
#define XK_SCOPE_MAX_RANGES 16
#define XK_SCOPE_MAX_ARGS 6	/* register arguments of the x86-64 ABI */

enum xk_span_class {
	XK_SPAN_UNSUPPORTED = 0,
	XK_SPAN_REGISTER,	/* a register holds the derived value */
	XK_SPAN_FLAGS,		/* a compare: the flags hold the outcome */
	XK_SPAN_MEMORY,		/* a store put the derived value in memory */
	XK_SPAN_DUAL,		/* two locations (register and flags) */
};

/* escapes of derived data out of the safe span: XK_ESCAPE_* (xk_ioctl.h) */

#define XK_LOC_MEM 32		/* location kind: [base + disp] */

struct xk_scope_loc {
	int kind;		/* enum xk_reg, XK_LOC_FLAGS or XK_LOC_MEM */
	int base;		/* XK_LOC_MEM: base register, or XK_BASE_RIP */
	int64_t disp;		/* rip: offset of the rel32 field in the function */
	int64_t rip_end;	/* rip: offset of the storing instruction's end */
	int width;		/* bits */
	struct xk_expr expr;
	char text[256];		/* the expression, for people */
};

struct xk_scope_span {
	char object[128];	/* e.g. block/blk-mq.o */
	char func[128];
	uint64_t func_size;
	enum xk_span_class cls;
	uint64_t start;		/* offset of the span's first instruction */
	uint64_t probe;		/* offset of the probe point */
	uint8_t expect[XK_SCOPE_MAX_EXPECT];	/* bytes from start on */
	uint8_t expect_mask[XK_SCOPE_MAX_EXPECT];/* 0xff: compared */
	uint32_t expect_len;
	bool optimizable;	/* a jump-optimized kprobe is possible */
	int nr_params;
	int64_t fit[XK_SCOPE_MAX_PARAMS][2];	/* immediate = a*N + b */
	int nr_locs;
	struct xk_scope_loc locs[XK_SCOPE_MAX_LOCS];
	int nr_exits;
	uint64_t exits[XK_SCOPE_MAX_EXITS];	/* safe span ends here */
	int nr_ranges;
	uint64_t ranges[XK_SCOPE_MAX_RANGES][2];	/* safe span: [from, to) */
	uint32_t escapes;
	uint32_t slice_len;	/* instructions in the safe span */
	/* the register holding the function's argument i at the probe point
	 * on every path, or -1 (for policies: their context) */
	int8_t arg_reg[XK_SCOPE_MAX_ARGS];
	/* functions of this name in the target kernel (its kallsyms recorded
	 * at fetch); 0: unknown (a module's). Only a name that is not unique
	 * makes xk load read /proc/kallsyms for every copy's address. */
	int copies;
	char why[256];		/* unsupported: the reason */
};

struct xk_scope {
	char constant[64];
	char kind[16];		/* macro, literal, variable */
	char source[256];	/* file:line */
	char release[128];
	char version[128];
	int64_t def, min, max;
	int nr_spans;
	struct xk_scope_span *spans;
};

int xk_scope_write(const struct xk_scope *t, const char *path);
/* The eBPF glue a policy includes (docs/policies.md). */
int xk_scope_write_glue(const struct xk_scope *t, const char *path);
/* Parses a table; a malformed one fails with the line named. */
int xk_scope_read(const char *path, struct xk_scope *t);
void xk_scope_free(struct xk_scope *t);
int xk_scope_nr_supported(const struct xk_scope *t);
const char *xk_span_class_name(enum xk_span_class c);
/*
 * Whether a thread inside one span's safe span may execute a span of the
 * same constant: another span's probe lies in its ranges, or its derived
 * data is passed to a call. Policies then pin a thread's value until it
 * leaves the safe span (xkernel.ko decides the same from the same facts).
 */
bool xk_scope_spans_nest(const struct xk_scope *t);
/* rax ... r15, flags */
const char *xk_scope_reg_name(int reg);

#endif
