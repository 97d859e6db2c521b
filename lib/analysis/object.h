/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the offline analysis: the object model (object.c, after
 * kpatch's create-diff-object), the disassembler (disasm.c) and the
 * instruction diff (diff.c).
 */
#ifndef XK_ANALYSIS_OBJECT_H
#define XK_ANALYSIS_OBJECT_H

#include <capstone/capstone.h>
#include <gelf.h>
#include <stdint.h>

#include "internal.h"
#include "xk/abi/xk_expr.h"
#include "xk/analysis.h"

/* variants of an object: two for the linear fit, one to check it */
#define GEN_FIT_VARIANTS 2
#define GEN_NR_VARIANTS 3

/* ---- object model (elf.c), after kpatch's create-diff-object ---- */

struct xk_obj;

struct xk_rela {
	uint64_t offset;	/* in its section */
	uint32_t type;
	int64_t addend;
	struct xk_sym *sym;
};

struct xk_sec {
	const struct xk_obj *obj;	/* the object it is a section of */
	char *name;
	size_t index;
	GElf_Shdr sh;
	const uint8_t *data;	/* NULL for NOBITS */
	struct xk_rela *relas;	/* relocations that apply to this section */
	size_t nr_relas;
	bool relas_sorted;	/* ... in offset order (as assemblers emit) */
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

/* A jump-label site: objtool turns its jump into a NOP at link time, and
 * the kernel patches it between the NOP and a jump to target at run time. */
struct xk_jump_label {
	size_t sec;		/* section index */
	uint64_t off;		/* in the section */
	size_t target_sec;	/* where the jump goes (SIZE_MAX: unknown) */
	uint64_t target;
};

/* An alternative's site: bytes the kernel may replace at boot or module
 * load, by the CPU's features (.altinstructions). */
struct xk_alt_site {
	size_t sec;		/* section index */
	uint64_t off;		/* in the section */
	unsigned int len;	/* the original instructions' length */
	size_t repl_sec;	/* the replacement's section (SIZE_MAX: none) */
	uint64_t repl_off;
	unsigned int repl_len;
};

struct xk_obj {
	char path[XK_PATH_MAX];
	int fd;
	Elf *elf;
	struct xk_sec *secs;
	size_t nr_secs;
	struct xk_sym *syms;
	size_t nr_syms;
	struct xk_jump_label *jump_labels;	/* from __jump_table */
	size_t nr_jump_labels;
	struct xk_alt_site *alt_sites;		/* from .altinstructions */
	size_t nr_alt_sites;
};

int xk_obj_open(struct xk_obj *o, const char *path);
void xk_obj_close(struct xk_obj *o);
struct xk_sym *xk_obj_find_func(struct xk_obj *o, const char *name,
				const char *secname);
/* Pairs each function of a with the same function of b (sym->twin). */
void xk_obj_correlate(struct xk_obj *a, struct xk_obj *b);
/* Bytes of a function, and whether [off, off+len) is covered by a relocation. */
const uint8_t *xk_func_bytes(const struct xk_sym *f);
/* The first relocation applied at an offset in [start, end) of sec, or NULL. */
const struct xk_rela *xk_rela_in(const struct xk_sec *sec, uint64_t start,
				 uint64_t end);
bool xk_func_reloc_at(const struct xk_sym *f, uint64_t off, unsigned int len);
/* The offset in function f of the place relocation r names (symbol plus
 * addend, as a table's pc32 field: __ex_table, __bug_table), or -1 when it
 * names no byte of f. */
int64_t xk_rela_in_func(const struct xk_rela *r, const struct xk_sym *f);
struct xk_insn;
/* The place relocation r, applied to a field of instruction in of function
 * f, names, in the section of r's symbol: the symbol plus the addend, plus,
 * for a pc-relative field, the instruction's tail after the field (S + A -
 * P: the CPU adds the address of the next instruction, not the field's). */
/* The first relocation applied inside instruction in of function f, or
 * NULL. */
const struct xk_rela *xk_insn_rela(const struct xk_sym *f,
				   const struct xk_insn *in);
int64_t xk_insn_rela_place(const struct xk_sym *f, const struct xk_insn *in,
			   const struct xk_rela *r);
/* Whether an __ex_table entry names an instruction of function f. */
bool xk_func_has_extable(const struct xk_obj *o, const struct xk_sym *f);
/* Whether a jump-label site covers byte off of function f (of object o). */
bool xk_jump_label_at(const struct xk_obj *o, const struct xk_sym *f,
		      uint64_t off);
/* The length of the alternative site of function f (of object o) that
 * covers byte off, 0 if none, and its first byte in *site_off. */
unsigned int xk_alternative_at(const struct xk_obj *o, const struct xk_sym *f,
			       uint64_t off, uint64_t *site_off);
/* The same for the first site that overlaps bytes [start, end) of f. */
unsigned int xk_alternative_in(const struct xk_obj *o, const struct xk_sym *f,
			       uint64_t start, uint64_t end, uint64_t *site_off);
/* The entries of the alternatives' sites of f that start at byte off, one
 * after another (after: the previous one, NULL for the first), or NULL. */
const struct xk_alt_site *xk_alternative_site(const struct xk_sym *f, uint64_t off,
					      const struct xk_alt_site *after);
/* mask[0, len): 0 for each byte of f from start that the running kernel
 * may hold otherwise (a relocated field, a jump-label or alternative site),
 * 0xff for the others, which must match. */
void xk_func_fixed_bytes(const struct xk_obj *o, const struct xk_sym *f,
			 uint64_t start, uint32_t len, uint8_t *mask);
/* The jump-label site at byte off of function f (its first byte), or NULL. */
const struct xk_jump_label *xk_jump_label_site(const struct xk_sym *f,
					       uint64_t off);

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
	bool reloc_imm;		/* ... its immediate (mov $sym, %rsi) */
	bool reloc_disp;	/* ... its displacement (sym(%rax), sym(,%rcx,8)):
				 * the object holds 0, the kernel an address */
	bool alt_site;		/* a static_cpu_has() site: a jcc to its t_no */
	bool tail_call;		/* a relocated jmp to another function (not the
				 * return thunk): it reads the argument registers */
	bool jump_label;	/* a static branch: a jcc to its target */
	const char *alt_differs;/* in an alternative's site whose replacement
				 * moves data otherwise: why (NULL: no site,
				 * or one of the same effect) */
	bool unprobeable;	/* kprobes refuses it: a jump-label site, a
				 * BUG/WARN site (__bug_table), a static
				 * call (call __SCT__...) */
	int64_t fixup;		/* where a fault of it resumes (__ex_table), -1,
				 * or XK_FIXUP_ELSEWHERE (not in the function) */
};
#define XK_FIXUP_ELSEWHERE (-2)

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

/*
 * The name of the function instruction in of f calls or tail-calls
 * (`call`/`jmp rel32`, its rel32 relocated to the callee), or NULL.
 */
const char *xk_callee_name(const struct xk_sym *f, const struct xk_insn *in);
/* ---- instruction diff (diff.c) ---- */

/* For each instruction of a, the index of its match in b, or -1. */
int xk_align(const struct xk_func_code *a, const struct xk_func_code *b,
	     ssize_t *match_a);

#endif
