/* SPDX-License-Identifier: GPL-2.0 */
/* Internals of the offline analysis: data flow in a function (dataflow.c). */
#ifndef XK_ANALYSIS_DATAFLOW_H
#define XK_ANALYSIS_DATAFLOW_H

#include "table.h"

/*
 * The limits of the analyses here; reaching one refuses the span with a
 * reason naming it. The unit tests lower them to hit each with a golden case.
 */
struct df_limits {
	int stack_slots;	/* stack slots holding derived data at once */
	int exits;		/* exits of a safe span (at most XK_MAX_EXITS) */
	/* an allocator's size argument is any call's argument: the whole
	 * function is the safe span (forms/heap_call.c) */
	bool allocations_in_call;
};
extern struct df_limits df_limits;


/* Where control goes after instruction i, inside the function: 0 to 2. */
/* at most DF_MAX_SUCC: a branch's target, the next one, a fault's fixup */
#define DF_MAX_SUCC 3
int df_successors(const struct xk_func_code *code, size_t i,
		  size_t succ[DF_MAX_SUCC]);
/* How many low bits of reg the code from probe_idx on reads (8 to 64). */
int df_used_width(const struct xk_func_code *code, size_t probe_idx, int reg);
/* 0 when nothing from idx on (or after the function) reads reg, else the
 * bits read. */
int df_reg_read(const struct xk_func_code *code, size_t idx, int reg);
/* Whether the arithmetic flags are tested from idx on before all are set. */
bool df_flags_live(const struct xk_func_code *code, size_t idx);
bool df_reads_flags(const struct xk_insn *in);
/*
 * The safe span of sp from its probe point: ranges, exits, escapes and
 * slice length. -ENOTSUP (with sp->why) when a limit would cut it short.
 */
int df_slice_forward(const struct xk_func_code *code, uint64_t func_size,
		     struct xk_scope_span *sp, size_t probe_idx);
/*
 * How instruction in touches general register gpr: *reads when an operand,
 * an address or an implicit read uses it, *writes when it writes it (any
 * width; a call reads its arguments and clobbers the caller-saved ones).
 */
void df_touches_gpr(const struct xk_insn *in, int gpr, bool *reads,
		    bool *writes);
/* The registers holding the function's arguments at the probe point. */
int df_locate_args(const struct xk_func_code *code, struct xk_scope_span *sp,
		   size_t probe);
/* Whether instruction in of f leaves it for another function's code (a
 * call or jump the assembler resolved, no relocation). */
bool df_leaves_function(const struct xk_sym *f, const struct xk_insn *in);
/* A branch of f that leaves it but for a return or a tail call (a .cold
 * part, an indirect or conditional jump out), or NULL; buf holds why. */
const char *df_unfollowable_branch(const struct xk_sym *f,
				   const struct xk_func_code *code, char *buf,
				   size_t size);

#endif
