// SPDX-License-Identifier: GPL-2.0
/*
 * libxk: symbolic execution of a straight-line run of x86-64 instructions.
 *
 * Registers hold expressions over the registers at the start of the run
 * (leaves) and over parameters: the immediates of the seed instructions,
 * which the linear fit later maps to a*N + b. Flags are kept lazily as the
 * last flag-setting operation, so that sbb, setcc, cmovcc and a final
 * compare become expressions too. What the model does not cover (a load
 * whose value reaches the result, an unknown instruction) stops execution
 * with a reason: the span is then reported unsupported, never guessed.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "symexec.h"

/* ---- expression nodes ---- */

size_t sx_pool_nodes = SX_POOL_NODES;

static struct sx *node(struct sx_state *s, enum sx_kind k, int width,
		       struct sx *a, struct sx *b)
{
	struct sx *e;

	if (s->pool_used == s->pool_size) {
		/* never NULL: the step finishes on a harmless node and
		 * sx_step() refuses it, naming the limit */
		s->exhausted = true;
		s->poison = (struct sx){ .kind = SX_UNKNOWN, .width = 64 };
		return &s->poison;
	}
	e = &s->pool[s->pool_used++];
	*e = (struct sx){ .kind = k, .width = width, .a = a, .b = b };
	return e;
}

static struct sx *cnst(struct sx_state *s, int width, int64_t v)
{
	struct sx *e = node(s, SX_CONST, width, NULL, NULL);

	if (e)
		e->v = (int64_t)((uint64_t)v & xk_mask(width));
	return e;
}

int sx_init(struct sx_state *s)
{
	memset(s, 0, sizeof(*s));
	s->pool_size = sx_pool_nodes;
	s->pool = calloc(s->pool_size, sizeof(*s->pool));
	if (!s->pool)
		return xk_err(-ENOMEM, "symbolic execution: out of memory");
	for (int r = 0; r < XK_NR_REGS; r++) {
		s->reg[r] = node(s, SX_REG, 64, NULL, NULL);
		s->reg[r]->reg = r;
	}
	s->fl_kind = FL_NONE;
	s->fl_from_start = true;
	return 0;
}

void sx_free(struct sx_state *s)
{
	free(s->pool);
	s->pool = NULL;
}

static int unsupported(struct sx_state *s, const struct xk_insn *in,
		       const char *why)
{
	/* the instruction's text is cut, the reason never */
	snprintf(s->why, sizeof(s->why), "+0x%lx %.60s: %s",
		 (unsigned long)in->off, in->text, why);
	return -ENOTSUP;
}

/* ---- operands ---- */

static struct sx *read_reg(struct sx_state *s, unsigned int cs_reg, int *width)
{
	bool high8;
	int w, r = xk_gpr(cs_reg, &w, &high8);
	struct sx *v;

	if (r < 0)
		return NULL;
	if (!s->reg_written[r])
		s->reg_read_first[r] = true;
	*width = w;
	v = s->reg[r];
	if (high8)
		v = node(s, SX_SHR, 64, v, cnst(s, 64, 8));
	/* a narrower read is the same value seen at that width */
	return node(s, SX_AND, w, v, cnst(s, 64, (int64_t)xk_mask(w)));
}

static int write_reg(struct sx_state *s, unsigned int cs_reg, struct sx *v)
{
	bool high8;
	int w, r = xk_gpr(cs_reg, &w, &high8);
	struct sx *old;

	if (r < 0)
		return -EINVAL;
	old = s->reg[r];
	s->reg_written[r] = true;
	if (w == 64 || w == 32) {
		/* a 32-bit write zero-extends */
		s->reg[r] = node(s, SX_AND, 64, v, cnst(s, 64, (int64_t)xk_mask(w)));
	} else if (high8) {
		s->reg[r] = node(s, SX_OR, 64,
				 node(s, SX_AND, 64, old, cnst(s, 64, ~0xff00LL)),
				 node(s, SX_SHL, 64,
				      node(s, SX_AND, 64, v, cnst(s, 64, 0xff)),
				      cnst(s, 64, 8)));
	} else {
		s->reg[r] = node(s, SX_OR, 64,
				 node(s, SX_AND, 64, old,
				      cnst(s, 64, (int64_t)~xk_mask(w))),
				 node(s, SX_AND, 64, v,
				      cnst(s, 64, (int64_t)xk_mask(w))));
	}
	return s->reg[r] ? 0 : -ENOMEM;
}

/* e without the all-ones masks of 64-bit writes around it (write_reg) */
static const struct sx *unmasked(const struct sx *e)
{
	while (e && e->kind == SX_AND && e->width == 64 && e->a && e->b &&
	       ((e->b->kind == SX_CONST && e->b->v == -1) ||
		(e->a->kind == SX_CONST && e->a->v == -1)))
		e = e->b->kind == SX_CONST && e->b->v == -1 ? e->a : e->b;
	return e;
}

/*
 * A value read from memory: a memory input when its address is the span's
 * input register plus a displacement, directly or through a register the
 * span set to one (the runtime reads the same address
 * at the probe point, where inputs_live() keeps that register unchanged)
 * and no store came before it in the span; else unknown to the model.
 */
static struct sx *read_mem(struct sx_state *s, const struct xk_insn *in,
			   const cs_x86_op *op, int w)
{
	const x86_op_mem *m = &op->mem;
	int base = xk_gpr(m->base, NULL, NULL), k;
	int index = -1, scale = 0;
	int64_t disp = m->disp;
	struct sx *v;

	/* an index the span has not written (a per-CPU offset, an array's
	 * subscript): the runtime reads it at the probe point too */
	if (m->index != X86_REG_INVALID) {
		index = xk_gpr(m->index, NULL, NULL);
		scale = m->scale;
		if (index < 0 || index == XK_RSP || s->reg_written[index] ||
		    (scale != 1 && scale != 2 && scale != 4 && scale != 8))
			return node(s, SX_UNKNOWN, w, NULL, NULL);
	}

	/* a base the span set to an input register, or to one plus a
	 * constant (mov %rdi, %rax; movzbl 0x238(%rax), %ecx): that input
	 * register's address, read where the span starts */
	if (base >= 0 && s->reg_written[base]) {
		const struct sx *e = unmasked(s->reg[base]), *r = NULL, *c = NULL;

		if (e && e->kind == SX_REG) {
			r = e;
		} else if (e && e->kind == SX_ADD && e->width == 64) {
			const struct sx *a = unmasked(e->a), *b = unmasked(e->b);

			r = a && a->kind == SX_REG ? a : b;
			c = r == a ? b : a;
		}
		if (r && r->kind == SX_REG && r->width == 64 && r->reg >= 0 &&
		    r->reg < XK_NR_REGS && (!c || (c->kind == SX_CONST &&
						   c->v <= XK_MAX_LOAD_DISP &&
						   c->v >= -XK_MAX_LOAD_DISP))) {
			base = r->reg;
			disp += c ? c->v : 0;
		} else {
			base = -1;
		}
	}
	/* a relocated displacement is 0 in the object, an address in the
	 * kernel: the runtime would read elsewhere */
	if (s->no_mem_inputs || s->stored || m->segment != X86_REG_INVALID ||
	    base < 0 || in->reloc_disp ||
	    (w != 8 && w != 16 && w != 32 && w != 64) ||
	    disp > XK_MAX_LOAD_DISP || disp < -XK_MAX_LOAD_DISP)
		return node(s, SX_UNKNOWN, w, NULL, NULL);
	for (k = 0; k < s->nr_mem_in; k++)
		if (s->mem_in[k].base == base && s->mem_in[k].disp == disp &&
		    s->mem_in[k].width == w && s->mem_in[k].index == index &&
		    s->mem_in[k].scale == scale)
			break;
	if (k == XK_MAX_MEM_INPUTS)
		return node(s, SX_UNKNOWN, w, NULL, NULL);
	if (k == s->nr_mem_in) {
		s->mem_in[k].base = base;
		s->mem_in[k].disp = disp;
		s->mem_in[k].width = w;
		s->mem_in[k].index = index;
		s->mem_in[k].scale = scale;
		s->nr_mem_in++;
	}
	s->reg_read_first[base] = true;	/* the address: an input too */
	if (scale)
		s->reg_read_first[index] = true;
	v = node(s, SX_REG, w, NULL, NULL);
	if (v)
		v->reg = XK_NR_REGS + k;
	return v;
}

/* The next parameter: the seed of instruction in, y at the default. */
static struct sx *new_param(struct sx_state *s, const struct xk_insn *in,
			    int w, int64_t y)
{
	struct sx *p;

	if (s->nr_params == XK_MAX_PARAMS)
		return NULL;
	p = node(s, SX_PARAM, w, NULL, NULL);
	if (!p)
		return NULL;
	p->param = s->nr_params;
	s->param_imm[s->nr_params] = y;
	s->param_off[s->nr_params] = in->off;
	s->param_width[s->nr_params] = w;
	s->nr_params++;
	return p;
}

static struct sx *read_op(struct sx_state *s, const struct xk_insn *in,
			  const cs_x86_op *op, bool is_seed)
{
	int w = op->size * 8;

	switch (op->type) {
	case X86_OP_REG:
		return read_reg(s, op->reg, &w);
	case X86_OP_IMM:
		if (is_seed && !s->seed_is_load)
			return new_param(s, in, w, op->imm);
	{
		struct sx *c = cnst(s, w, op->imm);

		/* mov $sym, %rsi: the same 0 in every build (one
		 * relocation), so the builds compare; never a program's */
		if (c && in->reloc_imm)
			c->reloc = true;
		return c;
	}
	case X86_OP_MEM:
		if (is_seed && s->seed_is_load)
			return new_param(s, in, w, s->seed_load_value);
		return read_mem(s, in, op, w);
	default:
		return NULL;
	}
}

bool sx_uses_mem_inputs(const struct sx *e)
{
	if (!e)
		return false;
	if (e->kind == SX_REG && e->reg >= XK_NR_REGS)
		return true;
	return sx_uses_mem_inputs(e->a) || sx_uses_mem_inputs(e->b) ||
	       sx_uses_mem_inputs(e->c);
}

static bool mentions(const struct sx *e, enum sx_kind k)
{
	if (!e)
		return false;
	return e->kind == k || mentions(e->a, k) || mentions(e->b, k) ||
	       mentions(e->c, k);
}

bool sx_uses_reloc(const struct sx *e)
{
	if (!e)
		return false;
	return (e->kind == SX_CONST && e->reloc) || sx_uses_reloc(e->a) ||
	       sx_uses_reloc(e->b) || sx_uses_reloc(e->c);
}

bool sx_uses_params(const struct sx *e)
{
	return mentions(e, SX_PARAM);
}

bool sx_reads_reg(const struct sx *e, int reg)
{
	if (!e)
		return false;
	return (e->kind == SX_REG && e->reg == reg) || sx_reads_reg(e->a, reg) ||
	       sx_reads_reg(e->b, reg) || sx_reads_reg(e->c, reg);
}

/* ---- flags ---- */

static void set_flags(struct sx_state *s, int kind, struct sx *a,
		      struct sx *b, struct sx *res, int width)
{
	s->fl_kind = kind;
	s->fl_a = a;
	s->fl_b = b;
	s->fl_res = res;
	s->fl_width = width;
	s->fl_from_start = false;
}

/* Flags the model does not follow (adc, sbb, multiplies, divisions, inc,
 * dec): unknown, with the result they came from (sx_flags_derived). */
static void unknown_flags(struct sx_state *s, struct sx *res)
{
	set_flags(s, FL_UNKNOWN, NULL, NULL, res, 0);
}

static struct sx *not01(struct sx_state *s, struct sx *c)
{
	return node(s, SX_EQ, 8, c, cnst(s, 8, 0));
}

/* The conditions after cmp a, b (sign: of the result a - b). */
static const struct sub_condition {
	const char *cc;
	enum sx_kind kind;
	bool swap, negate, sign;
} sub_conditions[] = {
	{ "b", SX_LTU, false, false, false },	/* a < b */
	{ "ae", SX_LTU, false, true, false },
	{ "e", SX_EQ, false, false, false },
	{ "ne", SX_EQ, false, true, false },
	{ "be", SX_LTU, true, true, false },	/* !(b < a) */
	{ "a", SX_LTU, true, false, false },
	{ "l", SX_LTS, false, false, false },
	{ "ge", SX_LTS, false, true, false },
	{ "le", SX_LTS, true, true, false },
	{ "g", SX_LTS, true, false, false },
	{ "s", SX_LTS, false, false, true },	/* r < 0 */
	{ "ns", SX_LTS, false, true, true },
};

/* A condition code (the suffix of jcc/setcc/cmovcc) as a 0/1 expression. */
static struct sx *condition(struct sx_state *s, const char *cc)
{
	int w = s->fl_width;
	struct sx *a = s->fl_a, *b = s->fl_b, *r = s->fl_res;

	if (s->fl_kind == FL_NONE) {
		s->flags_read_first = true;
		return NULL;
	}
	if (s->fl_kind == FL_UNKNOWN)
		return NULL;
	if (s->fl_kind == FL_LOGIC) {
		struct sx *zf = node(s, SX_EQ, w, r, cnst(s, w, 0));
		struct sx *sf = node(s, SX_LTS, w, r, cnst(s, w, 0));

		if (!strcmp(cc, "b") || !strcmp(cc, "o"))
			return cnst(s, 8, 0);
		if (!strcmp(cc, "ae") || !strcmp(cc, "no"))
			return cnst(s, 8, 1);
		if (!strcmp(cc, "e") || !strcmp(cc, "be"))
			return zf;
		if (!strcmp(cc, "ne") || !strcmp(cc, "a"))
			return not01(s, zf);
		if (!strcmp(cc, "s") || !strcmp(cc, "l"))
			return sf;
		if (!strcmp(cc, "ns") || !strcmp(cc, "ge"))
			return not01(s, sf);
		if (!strcmp(cc, "le"))
			return node(s, SX_OR, 8, zf, sf);
		if (!strcmp(cc, "g"))
			return not01(s, node(s, SX_OR, 8, zf, sf));
		return NULL;
	}
	if (s->fl_kind == FL_ADD) {
		struct sx *cf = node(s, SX_LTU, w, r, a);
		struct sx *zf = node(s, SX_EQ, w, r, cnst(s, w, 0));

		if (!strcmp(cc, "b"))
			return cf;
		if (!strcmp(cc, "ae"))
			return not01(s, cf);
		if (!strcmp(cc, "e"))
			return zf;
		if (!strcmp(cc, "ne"))
			return not01(s, zf);
		return NULL;
	}
	/* FL_SUB: cmp a, b: each condition is a < b or a == b, operands
	 * maybe swapped, result maybe negated */
	for (size_t i = 0; i < ARRAY_SIZE(sub_conditions); i++) {
		const struct sub_condition *sc = &sub_conditions[i];
		struct sx *e;

		if (strcmp(cc, sc->cc))
			continue;
		e = sc->sign ? node(s, SX_LTS, w, r, cnst(s, w, 0)) :
		    node(s, sc->kind, w, sc->swap ? b : a, sc->swap ? a : b);
		return sc->negate ? not01(s, e) : e;
	}
	return NULL;
}

/* Canonical condition-code suffix of a mnemonic after its prefix. */
static const char *canon_cc(const char *cc)
{
	static const char *const alias[][2] = {
		{ "c", "b" }, { "nae", "b" }, { "nb", "ae" }, { "nc", "ae" },
		{ "z", "e" }, { "nz", "ne" }, { "na", "be" }, { "nbe", "a" },
		{ "nge", "l" }, { "nl", "ge" }, { "ng", "le" }, { "nle", "g" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(alias); i++)
		if (!strcmp(cc, alias[i][0]))
			return alias[i][1];
	return cc;
}

struct sx *sx_flags(struct sx_state *s)
{
	switch (s->fl_kind) {
	case FL_SUB:
		return node(s, SX_FLAGS_SUB, s->fl_width, s->fl_a, s->fl_b);
	case FL_LOGIC:
		return node(s, SX_FLAGS_LOGIC, s->fl_width, s->fl_res, s->fl_res);
	default:
		return NULL;
	}
}

/*
 * Whether the flags the state leaves were computed from the parameters
 * (the constant), known to the model or not. An instruction that sets the
 * flags without an operation the model follows (inc, dec, a rotate...)
 * leaves FL_UNKNOWN without operands: derived, conservatively.
 */
bool sx_flags_derived(const struct sx_state *s)
{
	if (s->fl_kind == FL_NONE || s->fl_from_start)
		return false;
	if (!s->fl_a && !s->fl_b && !s->fl_res)
		return s->fl_kind == FL_UNKNOWN;
	return sx_uses_params(s->fl_a) || sx_uses_params(s->fl_b) ||
	       sx_uses_params(s->fl_res);
}

/* ---- instructions ---- */

static int step(struct sx_state *s, const struct xk_insn *in, bool is_seed);

int sx_step(struct sx_state *s, const struct xk_insn *in, bool is_seed)
{
	int err;

	if (s->pool_used + SX_STEP_MAX_NODES > s->pool_size)
		return unsupported(s, in, "the span needs more expression nodes "
				   "than the model's pool holds");
	/* a store: memory read before it may no longer hold what was read */
	s->stored_before = s->stored;
	/* capstone marks the memory operand of test, cmp and bt written */
	for (int i = 0; i < in->x86.op_count && in->id != X86_INS_TEST &&
			in->id != X86_INS_CMP && in->id != X86_INS_BT; i++) {
		if (in->x86.operands[i].type == X86_OP_MEM &&
		    (in->x86.operands[i].access & CS_AC_WRITE)) {
			s->mem_clobbered |= s->nr_mem_in > 0;
			s->stored = true;
		}
	}
	if (in->is_call) {
		s->mem_clobbered |= s->nr_mem_in > 0;
		s->stored = true;
	}
	err = step(s, in, is_seed);
	if (!err && s->exhausted)
		return unsupported(s, in, "one instruction needed more than "
				   XK_STR(SX_STEP_MAX_NODES) " expression nodes");
	return err;
}

/* The flags an arithmetic operation k leaves (unknown for shifts). */
static void binop_flags(struct sx_state *s, enum sx_kind k, struct sx *a,
			struct sx *b, struct sx *r, int w)
{
	if (k == SX_ADD)
		set_flags(s, FL_ADD, a, b, r, w);
	else if (k == SX_SUB)
		set_flags(s, FL_SUB, a, b, r, w);
	else if (k == SX_AND || k == SX_OR || k == SX_XOR)
		set_flags(s, FL_LOGIC, r, r, r, w);
	else {
		/* a shift's, a multiply's: unknown, but what they came from
		 * is kept (sx_flags_derived) */
		set_flags(s, FL_UNKNOWN, a, b, r, w);
	}
}

/* The span's store of val, w bits to [base + disp], by instruction in. */
static void record_store(struct sx_state *s, const struct xk_insn *in,
			 int base, int64_t disp, int w, struct sx *val)
{
	s->has_store = true;
	s->st_base = base;
	s->st_disp = disp;
	s->st_rip_end = in->off + in->len;
	s->st_width = w;
	s->st_val = val;
	s->st_off = in->off;
	if (s->nr_stores < SX_MAX_STORES) {
		s->stores[s->nr_stores].base = base;
		s->stores[s->nr_stores].disp = disp;
		s->stores[s->nr_stores].width = (uint8_t)w;
		s->stores[s->nr_stores].val = val;
	}
	s->nr_stores++;
}

/*
 * add/sub/and/or/xor to memory, [base + disp] with a general register as
 * base: the old value is a memory input (read where the span starts: only
 * the emulated form can use it, as the store that follows clobbers it for
 * a probe after the span), the result the span's store.
 */
static int read_modify_write(struct sx_state *s, const struct xk_insn *in,
			     enum sx_kind k, bool is_seed)
{
	const cs_x86_op *o0 = &in->x86.operands[0], *o1 = &in->x86.operands[1];
	int w = o0->size * 8, base = xk_gpr(o0->mem.base, NULL, NULL);
	bool stored = s->stored;
	struct sx *a, *b, *r;

	/* an immediate source only: the module takes group 1 (80, 81, 83)
	 * to memory as a store, not 01/09/21/29/31 from a register */
	if (base < 0 || o0->mem.index != X86_REG_INVALID || in->reloc_disp ||
	    o0->mem.segment != X86_REG_INVALID || o1->type != X86_OP_IMM ||
	    (k != SX_ADD && k != SX_SUB && k != SX_AND && k != SX_OR &&
	     k != SX_XOR) || in->x86.prefix[0] == X86_PREFIX_LOCK)
		return unsupported(s, in, "read-modify-write of memory");
	/* the read comes before the instruction's own store */
	s->stored = s->stored_before;
	a = read_mem(s, in, o0, w);
	s->stored = stored;
	b = read_op(s, in, o1, is_seed);
	if (!a || !b)
		return unsupported(s, in, "operand");
	if (a->kind == SX_REG && a->reg >= XK_NR_REGS)
		s->mem_clobbered = true;
	r = node(s, k, w, a, b);
	binop_flags(s, k, a, b, r, w);
	if (sx_uses_params(r) || s->all_stores)
		record_store(s, in, base, o0->mem.disp, w, r);
	return 0;
}

/* Whether an expression is the constant 0 (a register xor'ed with itself,
 * seen through the masks a narrower write leaves). */
static bool is_zero(const struct sx *e)
{
	while (e && e->kind == SX_AND && e->b && e->b->kind == SX_CONST)
		e = e->a;
	return e && e->kind == SX_CONST && e->v == 0;
}

static int step(struct sx_state *s, const struct xk_insn *in, bool is_seed)
{
	const cs_x86 *x = &in->x86;
	const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
	const char *mn = in->text;
	struct sx *a = NULL, *b = NULL, *r = NULL;
	int w = o0->size * 8;
	enum sx_kind k;

	switch (in->id) {
	case X86_INS_NOP:
	case X86_INS_ENDBR64:
		return 0;
	case X86_INS_MOV:
	case X86_INS_MOVABS:
	case X86_INS_MOVZX:
	case X86_INS_MOVSX:
	case X86_INS_MOVSXD:
		b = read_op(s, in, o1, is_seed);
		if (!b)
			return unsupported(s, in, "operand");
		if (in->id == X86_INS_MOVSX || in->id == X86_INS_MOVSXD) {
			b = node(s, SX_SEXT, w, b, NULL);
			b->v = o1->size * 8;
		}
		if (o0->type == X86_OP_MEM) {
			if (sx_uses_params(b) || s->all_stores) {
				bool rip = o0->mem.base == X86_REG_RIP &&
					   in->x86.encoding.disp_offset;

				if (o0->mem.index != X86_REG_INVALID ||
				    (!rip && (xk_gpr(o0->mem.base, NULL, NULL) < 0 ||
					      in->reloc_disp)))
					return unsupported(s, in, "store through an address the model cannot name");
				/* rip-relative: where the relocated rel32 is */
				record_store(s, in, rip ? XK_BASE_RIP :
					     xk_gpr(o0->mem.base, NULL, NULL),
					     rip ? (int64_t)(in->off +
					     in->x86.encoding.disp_offset) : o0->mem.disp,
					     w, b);
			}
			return 0;
		}
		return write_reg(s, o0->reg, b);
	case X86_INS_LEA: {
		const x86_op_mem *m = &o1->mem;
		struct sx *addr = cnst(s, 64, m->disp);
		int tw;

		if (m->base == X86_REG_RIP || in->reloc_disp)	/* an address */
			return write_reg(s, o0->reg, node(s, SX_UNKNOWN, 64, NULL, NULL));
		if (m->base != X86_REG_INVALID)
			addr = node(s, SX_ADD, 64, addr, read_reg(s, m->base, &tw));
		if (m->index != X86_REG_INVALID)
			addr = node(s, SX_ADD, 64, addr,
				    node(s, SX_MUL, 64, read_reg(s, m->index, &tw),
					 cnst(s, 64, m->scale)));
		if (is_seed && m->disp) {
			/* the displacement is the constant: make it a parameter */
			cs_x86_op imm = { .type = X86_OP_IMM, .imm = m->disp, .size = 8 };

			addr = cnst(s, 64, 0);
			if (m->base != X86_REG_INVALID)
				addr = read_reg(s, m->base, &tw);
			if (m->index != X86_REG_INVALID)
				addr = node(s, SX_ADD, 64, addr,
					    node(s, SX_MUL, 64, read_reg(s, m->index, &tw),
						 cnst(s, 64, m->scale)));
			addr = node(s, SX_ADD, 64, addr, read_op(s, in, &imm, true));
		}
		return write_reg(s, o0->reg, node(s, SX_AND, w, addr, cnst(s, 64, -1)));
	}
	case X86_INS_ADD: k = SX_ADD; goto binop;
	case X86_INS_SUB: k = SX_SUB; goto binop;
	case X86_INS_AND: k = SX_AND; goto binop;
	case X86_INS_OR: k = SX_OR; goto binop;
	case X86_INS_XOR: k = SX_XOR; goto binop;
	case X86_INS_SHL: case X86_INS_SAL: k = SX_SHL; goto binop;
	case X86_INS_SHR: k = SX_SHR; goto binop;
	case X86_INS_SAR: k = SX_SAR; goto binop;
	case X86_INS_CMP:
	case X86_INS_TEST:
		a = read_op(s, in, o0, false);
		b = read_op(s, in, o1, is_seed);
		if (!a || !b)
			return unsupported(s, in, "operand");
		if (in->id == X86_INS_CMP)
			set_flags(s, FL_SUB, a, b, node(s, SX_SUB, w, a, b), w);
		else
			set_flags(s, FL_LOGIC, a, b, node(s, SX_AND, w, a, b), w);
		return 0;
	case X86_INS_NEG:
	case X86_INS_NOT:
		a = read_op(s, in, o0, false);
		if (!a || o0->type != X86_OP_REG)
			return unsupported(s, in, "operand");
		r = node(s, in->id == X86_INS_NEG ? SX_NEG : SX_NOT, w, a, NULL);
		if (in->id == X86_INS_NEG)
			set_flags(s, FL_SUB, cnst(s, w, 0), a, r, w);
		return write_reg(s, o0->reg, r);
	case X86_INS_SBB:
	case X86_INS_ADC: {
		struct sx *cf = condition(s, "b");

		if (!cf)
			return unsupported(s, in, "carry from before the span");
		if (o0->type != X86_OP_REG)
			return unsupported(s, in, "operand");
		if (o1->type == X86_OP_REG && o0->reg == o1->reg &&
		    in->id == X86_INS_SBB) {
			/* sbb r,r: -CF, whatever r held */
			r = node(s, SX_NEG, w, node(s, SX_AND, w, cf,
						    cnst(s, w, 1)), NULL);
		} else {
			a = read_op(s, in, o0, false);
			b = read_op(s, in, o1, is_seed);
			if (!a || !b)
				return unsupported(s, in, "operand");
			r = node(s, in->id == X86_INS_SBB ? SX_SUB : SX_ADD, w,
				 node(s, in->id == X86_INS_SBB ? SX_SUB : SX_ADD,
				      w, a, b), cf);
		}
		unknown_flags(s, r);
		return write_reg(s, o0->reg, r);
	}
	case X86_INS_IMUL:
		if (x->op_count == 3) {
			a = read_op(s, in, o1, false);
			b = read_op(s, in, &x->operands[2], is_seed);
		} else if (x->op_count == 2) {
			a = read_op(s, in, o0, false);
			b = read_op(s, in, o1, is_seed);
		} else {
			return unsupported(s, in, "one-operand multiply");
		}
		if (!a || !b || o0->type != X86_OP_REG)
			return unsupported(s, in, "operand");
		r = node(s, SX_MUL, w, a, b);
		unknown_flags(s, r);
		return write_reg(s, o0->reg, r);
	case X86_INS_MUL: {
		/* rdx:rax = rax * src, unsigned; CF and OF only (high half != 0) */
		struct sx *lo, *hi;
		int wa;

		if (x->op_count != 1 || (w != 32 && w != 64))
			return unsupported(s, in, "operand");
		a = read_reg(s, w == 64 ? X86_REG_RAX : X86_REG_EAX, &wa);
		b = read_op(s, in, o0, is_seed);
		if (!a || !b)
			return unsupported(s, in, "operand");
		if (w == 64) {
			lo = node(s, SX_MUL, 64, a, b);
			hi = node(s, SX_MULHU, 64, a, b);
		} else {	/* 32-bit values read zero-extended */
			struct sx *p = node(s, SX_MUL, 64, a, b);

			lo = node(s, SX_AND, 64, p, cnst(s, 64, 0xffffffffLL));
			hi = node(s, SX_SHR, 64, p, cnst(s, 64, 32));
		}
		unknown_flags(s, hi);
		return write_reg(s, X86_REG_RAX, lo) ?: write_reg(s, X86_REG_RDX, hi);
	}
	case X86_INS_DIV: {
		/* rax = rdx:rax / src, rdx = the remainder, unsigned; only with
		 * rdx known zero (a 64-bit dividend: xor edx, edx before) */
		struct sx *hi, *q, *rem;
		int wa;

		if (x->op_count != 1 || (w != 32 && w != 64))
			return unsupported(s, in, "operand");
		a = read_reg(s, w == 64 ? X86_REG_RAX : X86_REG_EAX, &wa);
		hi = read_reg(s, w == 64 ? X86_REG_RDX : X86_REG_EDX, &wa);
		b = read_op(s, in, o0, is_seed);
		if (!a || !b || !hi)
			return unsupported(s, in, "operand");
		if (!is_zero(hi))
			return unsupported(s, in, "a division of a dividend wider than 64 bits");
		q = node(s, SX_DIVU, w, a, b);
		rem = node(s, SX_REMU, w, a, b);
		unknown_flags(s, q);
		return write_reg(s, w == 64 ? X86_REG_RAX : X86_REG_EAX, q) ?:
		       write_reg(s, w == 64 ? X86_REG_RDX : X86_REG_EDX, rem);
	}
	case X86_INS_PUSH:
	case X86_INS_POP: {
		/*
		 * A callee-saved register saved or restored in a prologue or
		 * epilogue the compiler scheduled into the span. The slot is
		 * below the stack pointer, where no object lives (the kernel
		 * has no red zone), so no memory input can alias it; a later
		 * rsp-based read is unknown (rsp written). A pushed value
		 * derived from the constant would be a store the runtime
		 * cannot place: refused. The emulated form refuses any span
		 * that moves rsp.
		 */
		int rw;
		struct sx *sp = read_reg(s, X86_REG_RSP, &rw);

		if (x->op_count != 1 || o0->type != X86_OP_REG || o0->size != 8)
			return unsupported(s, in, "operand");
		if (in->id == X86_INS_PUSH) {
			a = read_reg(s, o0->reg, &rw);
			if (!a || sx_uses_params(a))
				return unsupported(s, in, "a push of a value derived from the constant");
			return write_reg(s, X86_REG_RSP,
					 node(s, SX_SUB, 64, sp, cnst(s, 64, 8)));
		}
		if (xk_gpr(o0->reg, NULL, NULL) == XK_RSP)
			return unsupported(s, in, "operand");
		return write_reg(s, o0->reg, node(s, SX_UNKNOWN, 64, NULL, NULL)) ?:
		       write_reg(s, X86_REG_RSP,
				 node(s, SX_ADD, 64, sp, cnst(s, 64, 8)));
	}
	case X86_INS_INC:
	case X86_INS_DEC:
		a = read_op(s, in, o0, false);
		if (!a || o0->type != X86_OP_REG)
			return unsupported(s, in, "operand");
		r = node(s, in->id == X86_INS_INC ? SX_ADD : SX_SUB, w, a,
			 cnst(s, w, 1));
		unknown_flags(s, r);
		return write_reg(s, o0->reg, r);
	default:
		break;
	}
	if (!strncmp(mn, "set", 3)) {
		char cc[8];

		snprintf(cc, sizeof(cc), "%.*s", (int)strcspn(mn + 3, " "), mn + 3);
		r = condition(s, canon_cc(cc));
		if (!r)
			return unsupported(s, in, "condition from before the span");
		if (o0->type != X86_OP_REG)
			return unsupported(s, in, "setcc to memory");
		return write_reg(s, o0->reg, r);
	}
	if (!strncmp(mn, "cmov", 4)) {
		char cc[8];
		struct sx *c;

		snprintf(cc, sizeof(cc), "%.*s", (int)strcspn(mn + 4, " "), mn + 4);
		c = condition(s, canon_cc(cc));
		if (!c)
			return unsupported(s, in, "condition from before the span");
		a = read_op(s, in, o1, is_seed);
		b = read_op(s, in, o0, false);
		if (!a || !b)
			return unsupported(s, in, "operand");
		r = node(s, SX_SELECT, w, a, b);
		r->c = c;
		return write_reg(s, o0->reg, r);
	}
	return unsupported(s, in, "instruction outside the model");

binop:
	if (o0->type == X86_OP_MEM)
		return read_modify_write(s, in, k, is_seed);
	if (o0->type != X86_OP_REG)
		return unsupported(s, in, "operand");
	if ((k == SX_XOR || k == SX_SUB) && o1->type == X86_OP_REG &&
	    o0->reg == o1->reg) {
		/* xor r,r / sub r,r: zero, whatever r held */
		a = b = r = cnst(s, w, 0);
	} else {
		a = read_op(s, in, o0, false);
		b = read_op(s, in, o1, is_seed);
		if (!a || !b)
			return unsupported(s, in, "operand");
		r = node(s, k, w, a, b);
	}
	binop_flags(s, k, a, b, r, w);
	return write_reg(s, o0->reg, r);
}

/* ---- evaluation, compilation, printing ---- */

/* A program being compiled: into a table's struct xk_expr, or larger. */
struct sx_out {
	struct xk_expr_insn *insn;
	uint32_t len, cap;
};

static int emit(struct sx_out *out, int op, int width, int reg, int64_t imm,
		int64_t imm2)
{
	if (out->len == out->cap)
		return -E2BIG;
	out->insn[out->len++] = (struct xk_expr_insn){
		.op = op, .width = width, .reg = reg, .imm = imm, .imm2 = imm2,
	};
	return 0;
}

/*
 * mode: COMPILE_AS_IS; COMPILE_LEAVES_ZERO (registers read as 0); or
 * COMPILE_AT_DEF (also parameters at N = def); COMPILE_EVAL (unknown
 * memory reads as a fixed pattern, for evaluation during the analysis).
 */
enum { COMPILE_AS_IS, COMPILE_LEAVES_ZERO, COMPILE_AT_DEF, COMPILE_EVAL };

static int compile(const struct sx *e, const int64_t (*fit)[2],
		   struct sx_out *out, int mode, int64_t def)
{
	static const int ops[] = {
		[SX_ADD] = XK_OP_ADD, [SX_SUB] = XK_OP_SUB, [SX_AND] = XK_OP_AND,
		[SX_OR] = XK_OP_OR, [SX_XOR] = XK_OP_XOR, [SX_MUL] = XK_OP_MUL,
		[SX_SHL] = XK_OP_SHL, [SX_SHR] = XK_OP_SHR, [SX_SAR] = XK_OP_SAR,
		[SX_NEG] = XK_OP_NEG, [SX_NOT] = XK_OP_NOT, [SX_SEXT] = XK_OP_SEXT,
		[SX_LTU] = XK_OP_LTU, [SX_LTS] = XK_OP_LTS, [SX_EQ] = XK_OP_EQ,
		[SX_SELECT] = XK_OP_SELECT, [SX_FLAGS_SUB] = XK_OP_FLAGS_SUB,
		[SX_FLAGS_LOGIC] = XK_OP_FLAGS_LOGIC, [SX_MULHU] = XK_OP_MULHU,
		[SX_DIVU] = XK_OP_DIVU, [SX_REMU] = XK_OP_REMU,
	};
	int err = 0;

	switch (e->kind) {
	case SX_CONST:
		return emit(out, XK_OP_CONST, e->width, 0, e->v, 0);
	case SX_REG:
		if (mode == COMPILE_LEAVES_ZERO || mode == COMPILE_AT_DEF)
			return emit(out, XK_OP_CONST, e->width, 0, 0, 0);
		return emit(out, XK_OP_REG, e->width, e->reg, 0, 0);
	case SX_PARAM:
		if (mode == COMPILE_AT_DEF)
			return emit(out, XK_OP_CONST, e->width, 0,
				    fit[e->param][0] * def + fit[e->param][1], 0);
		/* reg: the parameter's index (a per-value span's point) */
		return emit(out, XK_OP_PARAM, e->width, (uint8_t)e->param,
			    fit[e->param][0], fit[e->param][1]);
	case SX_UNKNOWN:
		if (mode == COMPILE_EVAL)
			return emit(out, XK_OP_CONST, e->width, 0,
				    (int64_t)0xdeadbeefdeadbeefULL, 0);
		return -ENOTSUP;
	default:
		break;
	}
	if (e->kind == SX_SELECT)
		err = compile(e->c, fit, out, mode, def);
	err = err ?: compile(e->a, fit, out, mode, def);
	if (!err && e->b)
		err = compile(e->b, fit, out, mode, def);
	return err ?: emit(out, ops[e->kind], e->width, 0,
			   e->kind == SX_SEXT ? e->v : 0, 0);
}

int sx_compile(const struct sx *e, const int64_t (*fit)[2], struct xk_expr *out)
{
	struct sx_out o;
	int err;

	memset(out, 0, sizeof(*out));
	if (mentions(e, SX_UNKNOWN) || sx_uses_reloc(e))
		return -ENOTSUP;
	o = (struct sx_out){ out->insn, 0, XK_EXPR_MAX_INSNS };
	err = compile(e, fit, &o, COMPILE_AS_IS, 0);
	out->len = o.len;
	if (!err && xk_expr_validate(out))
		err = -E2BIG;	/* deeper than the runtime's stack */
	return err;
}

/*
 * The inverse form, for a span that overwrites an input it reads (reg =
 * reg + P): at the probe point only the result is left, so the new value is
 * the result plus what the parameters add, E(N) - E(def), computed with the
 * inputs as 0. Valid only when that difference does not depend on the
 * inputs: check_variant() verifies it by value.
 */
int sx_compile_inverse(const struct sx *e, const int64_t (*fit)[2], int64_t def,
		       int loc, int width, struct xk_expr *out)
{
	int err;

	struct sx_out o = { out->insn, 0, XK_EXPR_MAX_INSNS };

	memset(out, 0, sizeof(*out));
	if (mentions(e, SX_UNKNOWN) || sx_uses_reloc(e))
		return -ENOTSUP;
	/* a 32-bit result is zero-extended into its register: corrected at
	 * 32 bits, as the span computed it (8 and 16 bits keep the rest) */
	if (width > 32 && e->kind == SX_AND && e->b && e->b->kind == SX_CONST &&
	    (uint64_t)e->b->v == 0xffffffffULL)	/* write_reg's 32-bit form */
		width = 32;
	err = emit(&o, XK_OP_REG, width, loc, 0, 0) ?:
	      compile(e, fit, &o, COMPILE_LEAVES_ZERO, def) ?:
	      compile(e, fit, &o, COMPILE_AT_DEF, def) ?:
	      emit(&o, XK_OP_SUB, width, 0, 0, 0) ?:
	      emit(&o, XK_OP_ADD, width, 0, 0, 0);
	out->len = o.len;
	if (!err && xk_expr_validate(out))
		err = -E2BIG;	/* deeper than the runtime's stack */
	return err;
}

/* Nodes of an expression (shared nodes counted each time they are used). */
static size_t tree_size(const struct sx *e)
{
	size_t n;

	if (!e)
		return 0;
	n = 1 + tree_size(e->a);
	if (n <= SX_PROG_MAX_NODES)
		n += tree_size(e->b);
	if (n <= SX_PROG_MAX_NODES)
		n += tree_size(e->c);
	return n;	/* past the limit: any value above it */
}

int sx_prog_compile(const struct sx *e, const int64_t *params, int nr_params,
		    struct sx_prog *p)
{
	int64_t fit[XK_MAX_PARAMS][2] = { { 0 } };
	struct sx_out o;
	size_t n = tree_size(e);
	int err;

	memset(p, 0, sizeof(*p));
	if (nr_params > XK_MAX_PARAMS || n > SX_PROG_MAX_NODES)
		return -E2BIG;
	/* a parameter evaluates to its immediate: 0 * N + imm */
	for (int k = 0; k < nr_params; k++)
		fit[k][1] = params[k];
	p->insn = calloc(n, sizeof(*p->insn));
	p->stack = calloc(n, sizeof(*p->stack));
	if (!p->insn || !p->stack) {
		sx_prog_free(p);
		return xk_err(-ENOMEM, "symbolic execution: out of memory");
	}
	o = (struct sx_out){ p->insn, 0, (uint32_t)n };
	err = compile(e, (const int64_t (*)[2])fit, &o, COMPILE_EVAL, 0);
	p->len = o.len;
	/* a tree's postfix program never needs more stack than it has nodes */
	if (!err && xk_prog_validate(p->insn, p->len, (uint32_t)n, (uint32_t)n))
		err = -EINVAL;
	if (err)
		sx_prog_free(p);
	return err;
}

uint64_t sx_prog_eval(const struct sx_prog *p, const __u64 *regs)
{
	return xk_prog_run(p->insn, p->len, p->stack, regs, 0);
}

void sx_prog_free(struct sx_prog *p)
{
	free(p->insn);
	free(p->stack);
	memset(p, 0, sizeof(*p));
}

void sx_print(const struct sx *e, char *buf, size_t size)
{
	static const char *const names[] = {
		[SX_ADD] = "+", [SX_SUB] = "-", [SX_AND] = "&", [SX_OR] = "|",
		[SX_XOR] = "^", [SX_MUL] = "*", [SX_SHL] = "<<", [SX_SHR] = ">>",
		[SX_SAR] = ">>s", [SX_LTU] = "<u", [SX_LTS] = "<s", [SX_EQ] = "==",
	};
	char a[512] = "", b[512] = "", c[512] = "";

	if (e->a)
		sx_print(e->a, a, sizeof(a));
	if (e->b)
		sx_print(e->b, b, sizeof(b));
	if (e->c)
		sx_print(e->c, c, sizeof(c));
	switch (e->kind) {
	case SX_CONST: snprintf(buf, size, "%#llx", (unsigned long long)e->v); break;
	case SX_REG:
		if (e->reg >= XK_NR_REGS)
			snprintf(buf, size, "m%d", e->reg - XK_NR_REGS);
		else
			snprintf(buf, size, "%s", xk_reg_name(e->reg));
		break;
	case SX_PARAM: snprintf(buf, size, "P%d", e->param); break;
	case SX_UNKNOWN: snprintf(buf, size, "?mem"); break;
	case SX_NEG: snprintf(buf, size, "-(%s)", a); break;
	case SX_NOT: snprintf(buf, size, "~(%s)", a); break;
	case SX_SEXT: snprintf(buf, size, "sext%d(%s)", (int)e->v, a); break;
	case SX_SELECT: snprintf(buf, size, "(%s ? %s : %s)", c, a, b); break;
	case SX_FLAGS_SUB: snprintf(buf, size, "flags(%s - %s)", a, b); break;
	case SX_FLAGS_LOGIC: snprintf(buf, size, "flags(%s & %s)", a, b); break;
	case SX_MULHU: snprintf(buf, size, "hi(%s * %s)", a, b); break;
	case SX_DIVU: snprintf(buf, size, "(%s /u %s)", a, b); break;
	case SX_REMU: snprintf(buf, size, "(%s %%u %s)", a, b); break;
	default:
		/* drop the masks that only restate a width */
		if (e->kind == SX_AND && e->b && e->b->kind == SX_CONST &&
		    (uint64_t)e->b->v == xk_mask(e->width) && e->a) {
			snprintf(buf, size, "%s", a);
			break;
		}
		snprintf(buf, size, "(%s %s %s)", a, names[e->kind], b);
	}
}
