/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the offline analysis: symbolic execution of a straight-line
 * run of instructions (symexec.c), and its expressions compiled to the
 * update programs of xk/abi/xk_expr.h.
 */
#ifndef XK_ANALYSIS_SYMEXEC_H
#define XK_ANALYSIS_SYMEXEC_H

#include "object.h"

enum sx_kind {
	SX_CONST, SX_REG, SX_PARAM, SX_UNKNOWN,
	SX_ADD, SX_SUB, SX_AND, SX_OR, SX_XOR, SX_MUL, SX_SHL, SX_SHR, SX_SAR,
	SX_NEG, SX_NOT, SX_SEXT, SX_LTU, SX_LTS, SX_EQ, SX_SELECT,
	SX_FLAGS_SUB, SX_FLAGS_LOGIC, SX_MULHU, SX_DIVU, SX_REMU,
};

struct sx {
	enum sx_kind kind;
	uint8_t width;
	int reg;		/* SX_REG: the register at the span's start */
	int param;		/* SX_PARAM: index of the seed immediate */
	int64_t v;		/* SX_CONST value; SX_SEXT source width */
	bool reloc;		/* SX_CONST: a relocated immediate (mov $sym,
				 * %r12): 0 in the object, an address in the
				 * kernel; no program may compute with it */
	struct sx *a, *b, *c;
};


/*
 * Expression nodes: a run may use sx_pool_nodes (SX_POOL_NODES; the unit
 * tests lower it to hit the limit); before each instruction at least
 * SX_STEP_MAX_NODES must be left (the most one instruction makes, with room
 * to spare). Either limit refuses the span, naming it.
 */
#define SX_POOL_NODES 4096
#define SX_STEP_MAX_NODES 64
extern size_t sx_pool_nodes;

#define SX_MAX_STORES XK_REPLAY_MAX_STORES

/* The state of a straight-line run of instructions. */
struct sx_state {
	struct sx *reg[XK_NR_REGS];	/* full 64-bit values */
	/* lazy flags: the last flag-setting operation */
	enum { FL_NONE, FL_SUB, FL_ADD, FL_LOGIC, FL_UNKNOWN } fl_kind;
	struct sx *fl_a, *fl_b, *fl_res;
	uint8_t fl_width;
	bool fl_from_start;		/* flags untouched so far */
	bool reg_written[XK_NR_REGS];
	bool reg_read_first[XK_NR_REGS];	/* read before written: a leaf */
	bool flags_read_first;
	/* immediates of seed instructions become parameters */
	int nr_params;
	int64_t param_imm[XK_MAX_PARAMS];
	uint64_t param_off[XK_MAX_PARAMS];
	uint8_t param_width[XK_MAX_PARAMS];
	bool all_stores;		/* record stores of constants too */
	/* a seed that loads the constant from a read-only variable (a
	 * reader, reader_span in forms/variables.c): its memory operand is
	 * the parameter, whose value at the default is seed_load_value */
	bool seed_is_load;
	int64_t seed_load_value;
	bool has_store;			/* a memory store of a derived value */
	int st_base;			/* ... to [st_base + st_disp] */
	int64_t st_disp;
	uint8_t st_width;
	struct sx *st_val;
	uint64_t st_off;		/* offset of the store */
	uint64_t st_rip_end;		/* end of a rip-relative store */
	/* every store recorded (st_* above: the last), in order; a store
	 * past SX_MAX_STORES only counts */
	int nr_stores;
	struct { int base; int64_t disp; uint8_t width; struct sx *val; }
		stores[SX_MAX_STORES];
	/*
	 * Values read from memory at [base + disp] whose base is the span's
	 * input (unchanged so far) and that no store in the span precedes:
	 * inputs XK_NR_REGS + k of the programs. A store after one of them
	 * (mem_clobbered) makes them unusable; so does no_mem_inputs.
	 */
	int nr_mem_in;
	/* [base + index * scale + disp]; scale 0: no index */
	struct { int base; int64_t disp; int width; int index, scale; }
		mem_in[XK_MAX_MEM_INPUTS];
	bool no_mem_inputs;
	bool stored;			/* a store was executed */
	bool stored_before;		/* ... before the current instruction */
	bool mem_clobbered;		/* ... after a memory input was read */
	char why[256];			/* why execution stopped, if it failed */
	/* arena */
	struct sx *pool;
	size_t pool_used, pool_size;
	bool exhausted;			/* the pool ran out inside a step */
	struct sx poison;		/* what node() gives then */
};

int sx_init(struct sx_state *s);
/* Whether an expression reads a memory input (an input past the GPRs). */
bool sx_uses_mem_inputs(const struct sx *e);
/* Whether e computes with a relocated immediate (sx.reloc). */
bool sx_uses_reloc(const struct sx *e);
void sx_free(struct sx_state *s);
/*
 * Executes one instruction; is_seed makes its immediate a parameter.
 * Returns -ENOTSUP (with s->why) for what the model does not cover.
 */
int sx_step(struct sx_state *s, const struct xk_insn *in, bool is_seed);
struct sx *sx_flags(struct sx_state *s);
bool sx_flags_derived(const struct sx_state *s);
bool sx_uses_params(const struct sx *e);
/* Whether an expression reads register reg as it was at the span's start. */
bool sx_reads_reg(const struct sx *e, int reg);
/* Compiles an expression; params[k] gives the fit (a, b) of parameter k. */
int sx_compile(const struct sx *e, const int64_t (*fit)[2], struct xk_expr *out);
int sx_compile_inverse(const struct sx *e, const int64_t (*fit)[2], int64_t def,
		       int loc, int width, struct xk_expr *out);
/*
 * An expression compiled for evaluation in the analysis: the same update
 * program (and the one evaluator, xk_prog_run of xk/abi/xk_expr.h) as the
 * runtime runs, without the runtime's size limits; parameters are the seed
 * immediates, unknown memory a fixed pattern.
 */
/* the most nodes an evaluated expression may unfold to (a DAG as a tree) */
#define SX_PROG_MAX_NODES (1 << 20)

struct sx_prog {
	struct xk_expr_insn *insn;
	uint32_t len;
	__u64 *stack;
};

int sx_prog_compile(const struct sx *e, const int64_t *params, int nr_params,
		    struct sx_prog *p);
/* Its value with the given registers at the start of the run. */
uint64_t sx_prog_eval(const struct sx_prog *p, const __u64 *regs);
void sx_prog_free(struct sx_prog *p);
void sx_print(const struct sx *e, char *buf, size_t size);

#endif
