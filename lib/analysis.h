/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the offline analysis (xk build, xk gen): the object model,
 * the disassembler, the instruction diff, symbolic execution and slicing.
 */
#ifndef XK_ANALYSIS_H
#define XK_ANALYSIS_H

#include <capstone/capstone.h>
#include <gelf.h>
#include <stdint.h>

#include "internal.h"
#include "xk/abi/xk_expr.h"

/* variants of an object: two for the linear fit, one to check it */
#define GEN_FIT_VARIANTS 2
#define GEN_NR_VARIANTS 3

/* ---- object model (elf.c), after kpatch's create-diff-object ---- */

struct xk_rela {
	uint64_t offset;	/* in its section */
	uint32_t type;
	int64_t addend;
	struct xk_sym *sym;
};

struct xk_sec {
	char *name;
	size_t index;
	GElf_Shdr sh;
	const uint8_t *data;	/* NULL for NOBITS */
	struct xk_rela *relas;	/* relocations that apply to this section */
	size_t nr_relas;
	struct xk_sec *twin;	/* the same section in the other object */
};

struct xk_sym {
	char *name;
	size_t index;
	GElf_Sym sym;
	struct xk_sec *sec;
	bool is_func;
	struct xk_sym *twin;	/* the same function in the other object */
	struct xk_sym *twin_v[GEN_NR_VARIANTS];	/* ... in each variant */
};

struct xk_obj {
	char path[XK_PATH_MAX];
	int fd;
	Elf *elf;
	struct xk_sec *secs;
	size_t nr_secs;
	struct xk_sym *syms;
	size_t nr_syms;
};

int xk_obj_open(struct xk_obj *o, const char *path);
void xk_obj_close(struct xk_obj *o);
struct xk_sym *xk_obj_find_func(struct xk_obj *o, const char *name,
				const char *secname);
/* Pairs each function of a with the same function of b (sym->twin). */
void xk_obj_correlate(struct xk_obj *a, struct xk_obj *b);
/* Bytes of a function, and whether [off, off+len) is covered by a relocation. */
const uint8_t *xk_func_bytes(const struct xk_sym *f);
bool xk_func_reloc_at(const struct xk_sym *f, uint64_t off, unsigned int len);

/* ---- disassembly (disasm.c) ---- */

struct xk_insn {
	uint64_t off;		/* offset in the function */
	uint8_t len;
	uint8_t bytes[16];
	unsigned int id;	/* capstone X86_INS_* */
	char text[200];		/* "mnemonic operands" */
	char norm[200];		/* branch and call targets masked, for the diff */
	bool is_branch;		/* jmp, jcc */
	bool is_cond;		/* jcc */
	bool is_call, is_ret;
	int64_t target;		/* branch target offset in the function, -1 */
	cs_x86 x86;		/* operands */
	uint16_t regs_read[20], regs_write[20];
	uint8_t nr_read, nr_write;
	bool has_imm;
	int64_t imm;		/* the first immediate operand */
	bool rip_relative;
	bool has_reloc;		/* a relocation covers some of its bytes */
};

struct xk_func_code {
	const struct xk_sym *sym;
	struct xk_insn *insn;
	size_t nr;
};

int xk_disasm_func(const struct xk_sym *f, struct xk_func_code *code);
void xk_func_code_free(struct xk_func_code *code);
/* The index of the instruction at an offset, or -1. */
ssize_t xk_code_index(const struct xk_func_code *c, uint64_t off);
/* capstone register -> (GPR index, width in bits, high byte?); -1 if none */
int xk_gpr(unsigned int cs_reg, int *width, bool *high8);
const char *xk_gpr_name(int gpr);

/* ---- instruction diff (diff.c) ---- */

/* For each instruction of a, the index of its match in b, or -1. */
int xk_align(const struct xk_func_code *a, const struct xk_func_code *b,
	     ssize_t *match_a);

/* ---- symbolic execution (symexec.c) ---- */

enum sx_kind {
	SX_CONST, SX_REG, SX_PARAM, SX_UNKNOWN,
	SX_ADD, SX_SUB, SX_AND, SX_OR, SX_XOR, SX_MUL, SX_SHL, SX_SHR, SX_SAR,
	SX_NEG, SX_NOT, SX_SEXT, SX_LTU, SX_LTS, SX_EQ, SX_SELECT,
	SX_FLAGS_SUB, SX_FLAGS_LOGIC,
};

struct sx {
	enum sx_kind kind;
	uint8_t width;
	int reg;		/* SX_REG: the register at the span's start */
	int param;		/* SX_PARAM: index of the seed immediate */
	int64_t v;		/* SX_CONST value; SX_SEXT source width */
	struct sx *a, *b, *c;
};

#define XK_MAX_PARAMS 8

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
	bool has_store;			/* a memory store of a derived value */
	int st_base;			/* ... to [st_base + st_disp] */
	int64_t st_disp;
	uint8_t st_width;
	struct sx *st_val;
	uint64_t st_off;		/* offset of the store */
	uint64_t st_rip_end;		/* end of a rip-relative store */
	char why[256];			/* why execution stopped, if it failed */
	/* arena */
	struct sx *pool;
	size_t pool_used, pool_size;
};

int sx_init(struct sx_state *s);
void sx_free(struct sx_state *s);
/*
 * Executes one instruction; is_seed makes its immediate a parameter.
 * Returns -ENOTSUP (with s->why) for what the model does not cover.
 */
int sx_step(struct sx_state *s, const struct xk_insn *in, bool is_seed);
struct sx *sx_flags(struct sx_state *s);
bool sx_uses_params(const struct sx *e);
/* Compiles an expression; params[k] gives the fit (a, b) of parameter k. */
int sx_compile(const struct sx *e, const int64_t (*fit)[2], struct xk_expr *out);
int sx_compile_inverse(const struct sx *e, const int64_t (*fit)[2], int64_t def,
		       int loc, int width, struct xk_expr *out);
/* Concrete value with given leaf registers and parameter values. */
uint64_t sx_eval(const struct sx *e, const uint64_t *regs, const int64_t *params);
void sx_print(const struct sx *e, char *buf, size_t size);

#endif
