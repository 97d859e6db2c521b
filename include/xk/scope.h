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
#include "xk/abi/xk_rules.h"
#include "xk/core.h"

#define XK_SCOPE_MAGIC "xkernel-scope-table"
/* 2: memory inputs with an index register (input K BASE DISP WIDTH INDEX
 * SCALE), which a version-1 reader would misread; a table without one is
 * still written as version 1 */
#define XK_SCOPE_VERSION 2
#define XK_SCOPE_VERSION_INDEX 2
#define XK_SCOPE_MAX_NOTES 16
/* ranges of a `values` line: the values of the bounds a proof accepted */
#define XK_SCOPE_MAX_RANGES 16
/* limits: XK_MAX_* of xk/abi/xk_rules.h, the module's own */

enum xk_span_class {
	XK_SPAN_UNSUPPORTED = 0,
	XK_SPAN_REGISTER,	/* a register holds the derived value */
	XK_SPAN_FLAGS,		/* a compare: the flags hold the outcome */
	XK_SPAN_MEMORY,		/* a store put the derived value in memory */
	XK_SPAN_DUAL,		/* two locations (register and flags) */
	XK_SPAN_DATA,		/* a variable it initialises (XK_EMULATE_DATA):
				 * no code, a field written at each switch */
};

/* escapes of derived data out of the safe span: XK_ESCAPE_* (xk_rules.h);
 * location kinds: enum xk_reg, XK_LOC_FLAGS or XK_LOC_MEM (xk_rules.h) */

struct xk_scope_loc {
	int kind;		/* enum xk_reg, XK_LOC_FLAGS or XK_LOC_MEM */
	int base;		/* XK_LOC_MEM: base register, or XK_BASE_RIP */
	int64_t disp;		/* rip: offset of the rel32 field in the function */
	int64_t rip_end;	/* rip: offset of the storing instruction's end */
	int width;		/* bits */
	struct xk_expr expr;
	char text[256];		/* the expression, for people */
};

/* One value's code of a replayed span (struct xk_ioc_replay). */
struct xk_scope_replay {
	int64_t n;
	int nr_locs;
	struct xk_scope_loc locs[XK_REPLAY_MAX_LOCS];
	int nr_mem_in;
	struct xk_scope_mem_in {
		int base;
		int64_t disp;
		int width;
		int index;	/* [base + index * scale + disp] */
		int scale;	/* 0: no index */
	} mem_in[XK_MAX_MEM_INPUTS];
};

/*
 * The reason of a refused use that is a static object sized by the
 * constant (lib/analysis/forms/variables.c): the object keeps its compiled
 * size, so the runtime refuses every other value, even with --partial.
 */
#define XK_WHY_SIZED "data: the size of "
/*
 * The same for a use whose value sizes a heap object (an allocator's
 * argument, lib/analysis/dataflow.c): objects allocated under one value
 * would be used under another, so any other value is refused too. Found
 * anywhere in a reason (a later form's refusal is appended to the first).
 */
#define XK_WHY_HEAP "sizes a heap object: "

struct xk_scope_span {
	char object[128];	/* e.g. block/blk-mq.o */
	char func[XK_FUNC_MAX];
	uint64_t func_size;
	enum xk_span_class cls;
	uint64_t start;		/* offset of the span's first instruction */
	uint64_t probe;		/* offset of the probe point */
	uint8_t expect[XK_MAX_EXPECT];	/* bytes from start on */
	uint8_t expect_mask[XK_MAX_EXPECT];/* 0xff: compared */
	uint32_t expect_len;
	bool optimizable;	/* a jump-optimized kprobe is possible */
	int nr_params;
	int64_t fit[XK_MAX_PARAMS][2];	/* immediate = a*N + b */
	/* where immediate k lies, when every seed of the span is an
	 * immediate (nr_imms == nr_params): settling rewrites them in place */
	int nr_imms;
	struct xk_scope_imm {
		uint64_t insn, field;	/* offsets in the function */
		uint32_t insn_len, size, width;
	} imm[XK_MAX_PARAMS];
	int nr_locs;
	struct xk_scope_loc locs[XK_MAX_LOCS];
	/* values the programs read from memory at the probe point: input
	 * XK_NR_REGS + k of the programs is width bits at [base + disp] */
	int nr_mem_in;
	struct xk_scope_mem_in mem_in[XK_MAX_MEM_INPUTS];
	/* 0, or the length of the span's last instruction, on which the
	 * rewrite probe sits because the probe point is a branch target (the
	 * module rewrites after that instruction runs; never optimized, never
	 * settled, no policy) */
	uint32_t post_len;
	/* the emulated form: the rewrite probe sits at start, the module
	 * writes the locations and resumes at probe; the span never runs
	 * (unless the compiled-in value is in force) */
	int emulate;		/* XK_EMULATE_SPAN, or XK_EMULATE_REPLAY */
	/*
	 * State of the call: the function's frame is sized by the constant
	 * (an array on the stack), so a thread fills it under one value from
	 * the function's entry to its return. Its safe span is the whole
	 * function, its value changes only when no thread is inside (never
	 * immediately, back to the default the same way at unload) and no
	 * policy drives it (struct xk_ioc_span.call_state).
	 */
	int call_state;		/* 0, XK_CALL_STATE_FRAME or _HEAP */
	/*
	 * Replayed (emulate == XK_EMULATE_REPLAY): what the build with each
	 * prepared value leaves after [start, probe), as programs of the
	 * registers at start (nr_locs is 0: the locations are the
	 * replays'). NULL or XK_MAX_POINTS slots; freed by xk_scope_free.
	 */
	int nr_replays;
	struct xk_scope_replay *replays;
	/*
	 * A per-value span (nr_points > 0): its parameters are the
	 * immediates of the instructions at param_insn[k] in a build with
	 * each value, not a*N + b (fit[k] is then 0, the default's immediate).
	 * points: the parameters at every value prepared (built and checked),
	 * the default's among them. Never settled, never policy-driven.
	 */
	int nr_points;
	struct xk_point points[XK_MAX_POINTS];
	uint64_t param_insn[XK_MAX_PARAMS];
	int nr_exits;
	uint64_t exits[XK_MAX_EXITS];	/* safe span ends here */
	int nr_ranges;
	uint64_t ranges[XK_MAX_RANGES][2];	/* safe span: [from, to) */
	uint32_t escapes;
	uint32_t slice_len;	/* instructions in the safe span */
	/* the register holding the function's argument i at the probe point
	 * on every path, or -1 (for policies: their context) */
	int8_t arg_reg[XK_MAX_ARGS];
	/* functions of this name in the target kernel (its kallsyms recorded
	 * at fetch); 0: unknown (a module's). Only a name that is not unique
	 * makes xk load read /proc/kallsyms for every copy's address. */
	int copies;
	char why[512];		/* unsupported: the reason (XK_WHY_*) */
};

/* The function of a refused span that stands for every use in its object
 * (an object the catalog's objects= leaves out) */
#define XK_SPAN_EVERY_USE "*"
/* What such a span names: its object, or "objects left out" for one that
 * stands for more objects than a build takes (object "*"). */
const char *xk_scope_left_out_name(const struct xk_scope_span *sp);

struct xk_scope {
	char constant[XK_NAME_MAX];
	char kind[16];		/* macro, literal, variable */
	char source[256];	/* file:line */
	char release[128];
	char version[128];
	int64_t def, min, max;
	int nr_spans;
	struct xk_scope_span *spans;
	/* uses the analysis left out with a reason that needs no span (boot
	 * code that only chose a boot message): shown, never loaded */
	int nr_notes;
	char notes[XK_SCOPE_MAX_NOTES][256];
	/* xk gen --prove: how many values of the catalog's bounds were built
	 * and checked (0: none), whether that was every one of them or a
	 * sample; then the values accepted when they are not all of
	 * [min, max] (nr_ranges 0), as sorted inclusive ranges */
	int nr_proved;
	bool proved_every;
	/* xk gen: the affine spans hold at both ends of the bounds, each
	 * built and checked (xk_gen_check_bounds) */
	bool ends_checked;
	int nr_ranges;
	int64_t ranges[XK_SCOPE_MAX_RANGES][2];
};

/* Writes a table; a span that breaks the rules (xk_rules.h) is refused. */
int xk_scope_write(const struct xk_scope *t, const char *path);
/* Parses a table; a malformed one fails with the line named. */
int xk_scope_read(const char *path, struct xk_scope *t);
void xk_scope_free(struct xk_scope *t);
/* A replay as the module takes it (xk_ioc_replay: name, span, size unset). */
void xk_scope_replay_to_ioc(const struct xk_scope_replay *r,
			    struct xk_ioc_replay *d);
/*
 * Whether span sp can take value n as it is: unsupported, affine, the
 * compiled-in value def, or a point or a replay at n.
 */
bool xk_scope_span_has_value(const struct xk_scope_span *sp, int64_t n,
			     int64_t def);
/* Span sp's replay at value n, or NULL. */
const struct xk_scope_replay *xk_scope_replay_of(const struct xk_scope_span *sp,
						 int64_t n);
/* Adds a replay to sp (the oldest dropped when full); -ENOMEM. */
int xk_scope_add_replay(struct xk_scope_span *sp, const struct xk_scope_replay *r);
int xk_scope_nr_supported(const struct xk_scope *t);
/* Why the table's bounds are narrower than the catalog's (a note that
 * starts "bounds: ", that prefix left out), or "". */
const char *xk_scope_bounds_why(const struct xk_scope *t);
/* 0 when value is within t's bounds and among its values (a proved
 * table's ranges); else -ERANGE, the error naming the bounds or the
 * values and the table's reason for them (xk_scope_bounds_why, a
 * "values: " note). */
int xk_scope_check_value(const struct xk_scope *t, long long value);
/* Whether value is among t's values: its bounds, less a proof's holes. */
bool xk_scope_takes_value(const struct xk_scope *t, long long value);
/* t's accepted values as "A..B, C, D..E" (its bounds when it has no
 * ranges), into buf. */
void xk_scope_values_text(const struct xk_scope *t, char *buf, size_t size);
const char *xk_span_class_name(enum xk_span_class c);
/*
 * Whether spans of the table nest (xk_rule_spans_nest of xk_rules.h, the
 * rule xkernel.ko applies): a function is its object and name here.
 */
bool xk_scope_spans_nest(const struct xk_scope *t);
/* rax ... r15, flags (the names the table's text uses); "?" out of range */
const char *xk_reg_name(int reg);
/* A span as the ioctl ABI carries it (the module's candidates not filled). */
void xk_scope_span_to_ioc(const struct xk_scope_span *s, struct xk_ioc_span *d);

#endif
