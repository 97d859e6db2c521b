// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: variables that boot code derives from the constant.
 *
 * CUBIC's cubictcp_register (.init.text, freed after boot) computes
 *
 *	beta_scale = 8 * (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta);
 *	cube_factor = (1ull << (10 + 3 * BICTCP_HZ)) / (bic_scale * 10);
 *
 * and the code that runs later reads only those variables. No probe can
 * serve that code (it is gone), but what it left is data: the build with
 * another value would have booted with other bytes in beta_scale. So each
 * such variable becomes a span of class data, like a variable the constant
 * initialises (forms/variables.c), whose value at N is what the boot code of the
 * build with N stores there: no fit (integer divisions are no a*N + b),
 * one point per value, each build's straight-line start run concretely.
 *
 * The run (boot_run) starts at the function's entry with nothing known
 * but the stack pointer, reads memory only through the object's own
 * relocations (the initial bytes of its data: a module parameter's
 * default, as at boot with none given), and ends at the first call but
 * __fentry__, branch, return or instruction it does not model. The form
 * holds only when, in every build: the code from that end on is the same,
 * no branch comes back into the run, what the end passes on holds the same
 * value (a call of another object's function: its arguments by its BTF
 * prototype and the callee-saved registers; a return: rax and those; any
 * other end: every register and the flags), and every store that differs
 * goes to an aligned field of a static variable in writable data that no
 * other code of the object writes and no other boot-time code of it (nor
 * the function after its run) refers to. The inputs being their defaults at boot is
 * checked where it can be: the module refuses a variable that does not
 * hold the baseline's value at load (a parameter given at boot changes
 * it), and writes it by compare-and-exchange only (kmod/xk_data.c).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "relocs.h"
#include "form.h"

#define BOOT_MAX_STORES 16

/*
 * A value of the run: a number, an address (sym + v: the same in every
 * build when the name is), or unknown. An unknown value may still be known
 * to be the same in every build: tag names how it was made (the same
 * operations on the same inputs: jiffies + 250 loaded and added), 0 when
 * nothing is known of it.
 */
struct cval {
	bool known;
	uint64_t v;
	const char *addr;	/* an address: relocated name, or "%rsp" */
	uint64_t tag;		/* unknown: how it was made, or 0 */
};

struct boot_store {
	const struct xk_sec *sec;	/* where: section and offset */
	int64_t place;
	uint32_t width;			/* bytes */
	struct cval val;
};

struct boot_run {
	struct cval reg[XK_NR_REGS];
	bool written[XK_NR_REGS];
	/* the flags: made of the last operation that set them (its kind and
	 * operands), the same in every build where those are */
	struct cval flags;
	struct boot_store st[BOOT_MAX_STORES];
	int nr_st;
	size_t stop;			/* the instruction the run ends at */
	const char *callee;		/* ... a call of it, or NULL */
	char why[240];			/* set: the run cannot be followed */
};

static const struct cval unknown = { .known = false };

static uint64_t mask(int bytes)
{
	return bytes >= 8 ? ~0ULL : (1ULL << (bytes * 8)) - 1;
}

static uint64_t sext(uint64_t v, int bytes)
{
	int sh = 64 - bytes * 8;

	return bytes >= 8 ? v : (uint64_t)((int64_t)(v << sh) >> sh);
}

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0x100000001b3ULL;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	while (s && *s)
		h = mix(h, (unsigned char)*s++);
	return h;
}

/* What makes x, for the tags of what is computed from it; 0: unknown */
static uint64_t tag_of(const struct cval *x)
{
	if (!x->known)
		return x->tag;
	return mix_str(mix(1, x->v), x->addr) | 1;
}

/* operations of made() that are no instruction's X86_INS_* (all below) */
#define OP_NARROW (1ULL << 32)	/* a narrower read of a register */
#define OP_ZX32 (2ULL << 32)	/* a 32-bit write, zero-extended */
#define OP_LEA (3ULL << 32)	/* lea's scale and displacement */

/* An unknown value made by operation op (an X86_INS_*, with width bytes)
 * of a and b: the same in every build where they are. */
static struct cval made(uint64_t op, int bytes, const struct cval *a,
			const struct cval *b)
{
	uint64_t ta = tag_of(a), tb = b ? tag_of(b) : 1;

	if (!ta || !tb)
		return (struct cval){ .known = false };
	return (struct cval){ .known = false,
			      .tag = mix(mix(mix(mix(2, op), (uint64_t)bytes), ta), tb) | 1 };
}

static bool same_val(const struct cval *a, const struct cval *b)
{
	if (!a->known && !b->known)
		return a->tag && a->tag == b->tag;
	if (!a->known || !b->known || a->v != b->v)
		return false;
	if (!a->addr || !b->addr)
		return !a->addr && !b->addr;
	return !strcmp(a->addr, b->addr);
}

static struct cval num(uint64_t v)
{
	return (struct cval){ .known = true, .v = v };
}

static struct cval read_reg(const struct boot_run *r, unsigned int cs_reg,
			    int *bytes)
{
	bool high8;
	int w, g = xk_gpr(cs_reg, &w, &high8);
	struct cval x;

	*bytes = w / 8;
	if (g < 0)
		return unknown;
	x = r->reg[g];
	if (!x.known)
		return w == 64 ? x : made(OP_NARROW + (high8 ? 0x100 : (uint64_t)w),
					  w / 8, &x, NULL);
	if (x.addr)
		return w == 64 ? x : unknown;
	return num((high8 ? x.v >> 8 : x.v) & mask(w / 8));
}

static void write_reg(struct boot_run *r, unsigned int cs_reg, struct cval x)
{
	bool high8;
	int w, g = xk_gpr(cs_reg, &w, &high8);
	struct cval old;

	if (g < 0)
		return;
	old = r->reg[g];
	r->written[g] = true;
	if (!x.known && (w == 64 || w == 32))
		r->reg[g] = w == 64 ? x : made(OP_ZX32, 4, &x, NULL);
	else if (!x.known || (x.addr && w != 64))
		r->reg[g] = unknown;
	else if (w == 64)
		r->reg[g] = x;
	else if (w == 32)	/* zero-extends */
		r->reg[g] = num(x.v & 0xffffffffULL);
	else if (!old.known || old.addr)
		r->reg[g] = unknown;
	else if (high8)
		r->reg[g] = num((old.v & ~0xff00ULL) | ((x.v & 0xff) << 8));
	else
		r->reg[g] = num((old.v & ~mask(w / 8)) | (x.v & mask(w / 8)));
}

/*
 * The section and offset a rip-relative operand of instruction in names
 * through its relocation: the symbol plus the addend plus the
 * instruction's tail after the rel32 field (S + A - P). false when none.
 */
static bool rip_place(const struct xk_sym *f, const struct xk_insn *in,
		      const struct xk_sec **sec, int64_t *place,
		      const char **name)
{
	uint64_t field = in->off + in->x86.encoding.disp_offset;
	const struct xk_rela *r;

	if (!in->x86.encoding.disp_offset)
		return false;
	r = xk_rela_in(f->sec, f->sym.st_value + field,
		       f->sym.st_value + field + 4);
	if (!r || !r->sym || (r->type != R_X86_64_PC32 &&
			      r->type != R_X86_64_PLT32))
		return false;
	*sec = r->sym->sec;
	*place = xk_insn_rela_place(f, in, r);
	*name = r->sym->name;
	return true;
}

static struct cval address_of(const struct xk_sec *sec, int64_t place);

/* A load of width bytes at (sec, place): what the run stored there last,
 * else the object's initial bytes (zero in .bss), else unknown. */
static struct cval load(const struct boot_run *r, const struct xk_sec *sec,
			int64_t place, int width, const char *name)
{
	/* an extern's or code's bytes: the same in every build */
	struct cval opaque = { .known = false,
			       .tag = mix(mix(mix_str(3, name), (uint64_t)place),
					  (uint64_t)width) | 1 };
	uint64_t v = 0;

	for (int i = r->nr_st - 1; i >= 0; i--) {
		const struct boot_store *s = &r->st[i];

		if (s->sec != sec || s->place + s->width <= place ||
		    place + width <= s->place)
			continue;
		if (s->place == place && (int)s->width == width &&
		    (!s->val.known || !s->val.addr || width == 8))
			return s->val.known && !s->val.addr ?
			       num(s->val.v & mask(width)) : s->val;
		return unknown;
	}
	if (!sec || !(sec->sh.sh_flags & SHF_ALLOC) ||
	    (sec->sh.sh_flags & SHF_EXECINSTR) || place < 0 ||
	    (uint64_t)place + (uint64_t)width > sec->sh.sh_size)
		return opaque;
	if (sec->sh.sh_type == SHT_NOBITS)
		return num(0);
	if (!sec->data)
		return unknown;
	/* a cell a relocation fills in (a pointer): its bytes are 0 in the
	 * object, an address in the kernel */
	{
		const struct xk_rela *rl = xk_rela_in(sec, (uint64_t)place,
						      (uint64_t)place + (uint64_t)width);

		if (rl) {
			if (rl->offset == (uint64_t)place && width == 8 &&
			    rl->type == R_X86_64_64 && rl->sym)
				return GELF_ST_TYPE(rl->sym->sym.st_info) == STT_SECTION ?
				       address_of(rl->sym->sec,
						  (int64_t)rl->sym->sym.st_value + rl->addend) :
				       (struct cval){ .known = true, .v = (uint64_t)rl->addend,
						      .addr = rl->sym->name };
			return unknown;
		}
	}
	for (int i = width - 1; i >= 0; i--)
		v = v << 8 | sec->data[place + i];
	return num(v);
}

/* The address of byte place of sec as the same value in every build: the
 * named symbol that holds it and the offset in it (else the section's). */
static struct cval address_of(const struct xk_sec *sec, int64_t place)
{
	const struct xk_sym *y = sec ? gen_holder_in(sec, place) : NULL;

	if (!sec)
		return unknown;
	if (y)
		return (struct cval){ .known = true, .addr = y->name,
				      .v = (uint64_t)(place - (int64_t)y->sym.st_value) };
	return (struct cval){ .known = true, .addr = sec->name, .v = (uint64_t)place };
}

/* An immediate operand; a relocated one is an address (mov $sym, %rsi). */
static struct cval imm_of(const struct xk_sym *f, const struct xk_insn *in,
			  const cs_x86_op *op)
{
	if (in->reloc_imm) {
		uint64_t field = in->off + in->x86.encoding.imm_offset;
		const struct xk_rela *r = xk_rela_in(f->sec, f->sym.st_value + field,
						     f->sym.st_value + field + 4);

		if (!r || !r->sym || !in->x86.encoding.imm_offset)
			return unknown;
		if (GELF_ST_TYPE(r->sym->sym.st_info) == STT_SECTION)
			return address_of(r->sym->sec, r->addend);
		return (struct cval){ .known = true, .v = (uint64_t)r->addend,
				      .addr = r->sym->name };
	}
	return num((uint64_t)op->imm & mask(op->size ?: 8));
}

static struct cval operand(const struct boot_run *r, const struct xk_sym *f,
			   const struct xk_insn *in, const cs_x86_op *op)
{
	const struct xk_sec *sec;
	const char *name;
	int64_t place;
	int w;

	switch (op->type) {
	case X86_OP_REG:
		return read_reg(r, op->reg, &w);
	case X86_OP_IMM:
		return imm_of(f, in, op);
	case X86_OP_MEM:
		/* %gs: names the per-CPU copy, not the object's bytes */
		if (op->mem.segment == X86_REG_INVALID && op->mem.base == X86_REG_RIP &&
		    rip_place(f, in, &sec, &place, &name))
			return load(r, sec, place, op->size ?: 8, name);
		return unknown;
	default:
		return unknown;
	}
}

static bool stop_at(struct boot_run *r, size_t i, const char *callee)
{
	r->stop = i;
	r->callee = callee;
	return false;
}

static int refuse_run(struct boot_run *r, const struct xk_insn *in,
		      const char *what)
{
	snprintf(r->why, sizeof(r->why), "+0x%lx %.60s: %s",
		 (unsigned long)in->off, in->text, what);
	return -ENOTSUP;
}

/* A store of x to operand op; a store the run cannot place ends it. */
static int store(struct boot_run *r, const struct xk_sym *f,
		 const struct xk_insn *in, const cs_x86_op *op, struct cval x,
		 bool *ended)
{
	const struct xk_sec *sec;
	const char *name;
	int64_t place;

	if (op->mem.base != X86_REG_RIP || op->mem.index != X86_REG_INVALID ||
	    !rip_place(f, in, &sec, &place, &name) || !sec) {
		*ended = true;	/* the stack, a pointer's, an extern's */
		return 0;
	}
	if (r->nr_st == BOOT_MAX_STORES)
		return refuse_run(r, in, "more stores than the analysis follows "
				  "(" XK_STR(BOOT_MAX_STORES) ")");
	r->st[r->nr_st++] = (struct boot_store){ .sec = sec, .place = place,
						 .width = op->size ?: 8, .val = x };
	return 0;
}

/* The binary operation of instruction id at width bytes; false: unmodelled */
static bool binop(unsigned int id, uint64_t a, uint64_t b, int bytes,
		  uint64_t *res)
{
	unsigned int sh = (unsigned int)(b & (bytes == 8 ? 63 : 31));

	switch (id) {
	case X86_INS_ADD: *res = a + b; break;
	case X86_INS_SUB: *res = a - b; break;
	case X86_INS_AND: *res = a & b; break;
	case X86_INS_OR: *res = a | b; break;
	case X86_INS_XOR: *res = a ^ b; break;
	case X86_INS_IMUL: *res = a * b; break;
	case X86_INS_SHL: case X86_INS_SAL: *res = a << sh; break;
	case X86_INS_SHR: *res = (a & mask(bytes)) >> sh; break;
	case X86_INS_SAR: *res = (uint64_t)((int64_t)sext(a, bytes) >> sh); break;
	default: return false;
	}
	*res &= mask(bytes);
	return true;
}

/* rdx:rax (edx:eax) divided by x: the quotient and remainder, or why not */
static int divide(struct boot_run *r, const struct xk_insn *in, struct cval x,
		  int bytes)
{
	struct cval lo = r->reg[XK_RAX], hi = r->reg[XK_RDX];
	bool sign = in->id == X86_INS_IDIV;
	__int128 n, d;
	unsigned __int128 un, ud;
	uint64_t q, rem;

	if (!lo.known || !hi.known || lo.addr || hi.addr || !x.known || x.addr) {
		r->reg[XK_RAX] = r->reg[XK_RDX] = unknown;
		r->written[XK_RAX] = r->written[XK_RDX] = true;
		return 0;
	}
	if (!(x.v & mask(bytes)))
		return refuse_run(r, in, "a division by zero");
	if (bytes == 8) {
		un = (unsigned __int128)hi.v << 64 | lo.v;
		ud = x.v;
	} else {
		un = (hi.v & 0xffffffffULL) << 32 | (lo.v & 0xffffffffULL);
		ud = x.v & 0xffffffffULL;
	}
	if (sign) {
		n = bytes == 8 ? (__int128)un : (__int128)(int64_t)(uint64_t)un;
		d = (__int128)(int64_t)sext(x.v, bytes);
		if (d == -1 && bytes == 8 && un == (unsigned __int128)1 << 127)
			return refuse_run(r, in, "a quotient wider than the register");
		if (n / d > (__int128)(int64_t)(mask(bytes) >> 1) ||
		    n / d < -(__int128)(int64_t)(mask(bytes) >> 1) - 1)
			return refuse_run(r, in, "a quotient wider than the register");
		q = (uint64_t)(n / d);
		rem = (uint64_t)(n % d);
	} else {
		if (un / ud > mask(bytes))
			return refuse_run(r, in, "a quotient wider than the register");
		q = (uint64_t)(un / ud);
		rem = (uint64_t)(un % ud);
	}
	r->reg[XK_RAX] = num(q & mask(bytes));
	r->reg[XK_RDX] = num(rem & mask(bytes));
	r->written[XK_RAX] = r->written[XK_RDX] = true;
	return 0;
}

/*
 * One instruction; false when the run ends before it (r->stop set), or
 * -ENOTSUP in err with r->why when it cannot be followed at all.
 */
static bool step(struct boot_run *r, const struct xk_sym *f,
		 const struct xk_func_code *code, size_t i, int *err)
{
	const struct xk_insn *in = &code->insn[i];
	const cs_x86 *x = &in->x86;
	const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
	struct cval a, b, res;
	bool ended = false;
	int bytes = o0->size ?: 8, w;
	uint64_t v;

	*err = 0;
	if (in->is_call) {
		const char *callee = xk_callee_name(f, in);

		if (callee && !strcmp(callee, "__fentry__"))
			return true;	/* saves every register */
		return stop_at(r, i, callee ? callee : "?");
	}
	if (in->is_branch || in->is_ret || in->unprobeable)
		return stop_at(r, i, NULL);
	switch (in->id) {
	case X86_INS_NOP:
	case X86_INS_ENDBR64:
		return true;
	case X86_INS_CMP:
	case X86_INS_TEST:
		if (x->op_count != 2)
			break;
		a = operand(r, f, in, o0);
		b = operand(r, f, in, o1);
		r->flags = made(in->id, bytes, &a, &b);
		return true;
	case X86_INS_MOV:
	case X86_INS_MOVABS:
	case X86_INS_MOVZX:
	case X86_INS_MOVSX:
	case X86_INS_MOVSXD:
		if (x->op_count != 2)
			break;
		a = operand(r, f, in, o1);
		if (a.known && !a.addr && in->id != X86_INS_MOV &&
		    in->id != X86_INS_MOVABS) {
			int from = o1->size ?: 8;

			a.v &= mask(from);
			if (in->id != X86_INS_MOVZX)
				a.v = sext(a.v, from) & mask(bytes);
		} else if (in->id != X86_INS_MOV && in->id != X86_INS_MOVABS) {
			a = a.known ? unknown : made(in->id, bytes * 16 + (o1->size ?: 8),
						     &a, NULL);
		}
		if (o0->type == X86_OP_REG) {
			write_reg(r, o0->reg, a);
			return true;
		}
		if (o0->type == X86_OP_MEM) {
			*err = store(r, f, in, o0, a, &ended);
			return *err ? false : !ended || stop_at(r, i, NULL);
		}
		break;
	case X86_INS_LEA:
		if (x->op_count != 2 || o0->type != X86_OP_REG)
			break;
		if (o1->mem.base == X86_REG_RIP) {
			const struct xk_sec *sec;
			const char *name;
			int64_t place;

			write_reg(r, o0->reg, rip_place(f, in, &sec, &place, &name) ?
				  address_of(sec, place) : unknown);
			return true;
		}
		a = o1->mem.base == X86_REG_INVALID ? num(0) :
		    read_reg(r, o1->mem.base, &w);
		b = o1->mem.index == X86_REG_INVALID ? num(0) :
		    read_reg(r, o1->mem.index, &w);
		if (!a.known || !b.known || b.addr) {
			res = made(in->id, bytes, &a, &b);
			res = made(OP_LEA + mix((uint64_t)o1->mem.scale, (uint64_t)o1->mem.disp),
				   bytes, &res, NULL);
			write_reg(r, o0->reg, res);
			return true;
		}
		res = a;
		res.v = a.v + b.v * (uint64_t)o1->mem.scale + (uint64_t)o1->mem.disp;
		if (!res.addr)
			res.v &= mask(bytes);
		write_reg(r, o0->reg, res);
		return true;
	case X86_INS_ADD: case X86_INS_SUB: case X86_INS_AND: case X86_INS_OR:
	case X86_INS_XOR: case X86_INS_SHL: case X86_INS_SAL: case X86_INS_SHR:
	case X86_INS_SAR: case X86_INS_IMUL:
		if (in->id == X86_INS_IMUL && x->op_count == 1)
			break;	/* rdx:rax: not used by such code */
		if (o0->type != X86_OP_REG)
			break;	/* a store of memory: ends the run below */
		if (x->op_count == 3) {
			a = operand(r, f, in, o1);
			b = operand(r, f, in, &x->operands[2]);
		} else {
			a = operand(r, f, in, o0);
			b = x->op_count == 2 ? operand(r, f, in, o1) : num(1);
		}
		r->flags = made(in->id, bytes, &a, &b);
		if (in->id == X86_INS_XOR && x->op_count == 2 &&
		    o1->type == X86_OP_REG && o1->reg == o0->reg) {
			write_reg(r, o0->reg, num(0));
			return true;
		}
		/* the stack pointer moved by a constant: still known */
		if (a.known && a.addr && b.known && !b.addr && bytes == 8 &&
		    (in->id == X86_INS_ADD || in->id == X86_INS_SUB)) {
			a.v = in->id == X86_INS_ADD ? a.v + b.v : a.v - b.v;
			write_reg(r, o0->reg, a);
			return true;
		}
		if (!a.known || !b.known || a.addr || b.addr ||
		    !binop(in->id, a.v, b.v, bytes, &v)) {
			write_reg(r, o0->reg, made(in->id, bytes, &a, &b));
			return true;
		}
		write_reg(r, o0->reg, num(v));
		return true;
	case X86_INS_NEG:
	case X86_INS_NOT:
	case X86_INS_INC:
	case X86_INS_DEC:
		if (x->op_count != 1 || o0->type != X86_OP_REG)
			break;
		a = read_reg(r, o0->reg, &w);
		if (in->id != X86_INS_NOT)
			r->flags = made(in->id, bytes, &a, NULL);
		if (!a.known || a.addr) {
			write_reg(r, o0->reg, made(in->id, bytes, &a, NULL));
			return true;
		}
		v = in->id == X86_INS_NEG ? -a.v : in->id == X86_INS_NOT ? ~a.v :
		    in->id == X86_INS_INC ? a.v + 1 : a.v - 1;
		write_reg(r, o0->reg, num(v & mask(bytes)));
		return true;
	case X86_INS_CDQ:	/* cltd: edx = the sign of eax */
		a = read_reg(r, X86_REG_EAX, &w);
		write_reg(r, X86_REG_EDX, a.known && !a.addr ?
			  num(a.v & 0x80000000ULL ? 0xffffffffULL : 0) : unknown);
		return true;
	case X86_INS_CQO:
		a = r->reg[XK_RAX];
		write_reg(r, X86_REG_RDX, a.known && !a.addr ?
			  num((uint64_t)((int64_t)a.v >> 63)) : unknown);
		return true;
	case X86_INS_CDQE:	/* cltq */
		a = read_reg(r, X86_REG_EAX, &w);
		write_reg(r, X86_REG_RAX, a.known && !a.addr ? num(sext(a.v, 4)) :
			  unknown);
		return true;
	case X86_INS_DIV:
	case X86_INS_IDIV:
		if (x->op_count != 1 || (bytes != 4 && bytes != 8))
			break;
		r->flags = unknown;	/* undefined after div */
		*err = divide(r, in, operand(r, f, in, o0), bytes);
		return !*err;
	case X86_INS_MUL:
		if (x->op_count != 1 || bytes != 8)
			break;
		a = r->reg[XK_RAX];
		b = operand(r, f, in, o0);
		r->flags = made(in->id, bytes, &a, &b);
		if (a.known && b.known && !a.addr && !b.addr) {
			unsigned __int128 p = (unsigned __int128)a.v * b.v;

			r->reg[XK_RAX] = num((uint64_t)p);
			r->reg[XK_RDX] = num((uint64_t)(p >> 64));
		} else {
			r->reg[XK_RAX] = r->reg[XK_RDX] = unknown;
		}
		r->written[XK_RAX] = r->written[XK_RDX] = true;
		return true;
	case X86_INS_PUSH: {
		/* a callee-saved register kept: the slot is the stack's; a
		 * value the run made could come back in the tail (pop) */
		int g = o0->type == X86_OP_REG ? xk_gpr(o0->reg, NULL, NULL) : -1;

		if (x->op_count != 1 || g < 0 || r->written[g] ||
		    !r->reg[XK_RSP].known || !r->reg[XK_RSP].addr)
			break;
		r->reg[XK_RSP].v -= 8;
		r->written[XK_RSP] = true;
		return true;
	}
	default:
		break;
	}
	return stop_at(r, i, NULL);
}

/* The run of function f's code from its entry (r->why set when it cannot
 * be followed). */
static int run_boot(const struct xk_sym *f, const struct xk_func_code *code,
		    struct boot_run *r)
{
	int err = 0;

	memset(r, 0, sizeof(*r));
	r->reg[XK_RSP] = (struct cval){ .known = true, .addr = "%rsp" };
	r->flags = (struct cval){ .known = false, .tag = 5 };	/* the caller's */
	r->stop = code->nr;
	for (size_t i = 0; i < code->nr; i++)
		if (!step(r, f, code, i, &err))
			return err;
	return 0;
}

/* ---- the callee's arguments, from the target kernel's BTF ---- */

static struct btf *kernel_btf;
static char kernel_btf_dir[XK_PATH_MAX];

/*
 * How many registers function name of vmlinux takes its arguments in, by
 * its BTF prototype, or -1 when unknown (no kernel, not in vmlinux's BTF;
 * a variadic one: its format decides). rax, the count of vector registers
 * of a variadic call in the ABI, is never set by the kernel's compiler
 * (-mno-sse: no callee reads it).
 */
static int callee_arity(const struct gen_input *in, const char *name,
			bool *variadic)
{
	const struct btf_type *fn, *proto;
	const struct btf_param *p;
	int id, n;

	*variadic = false;
	if (!in->kernel || !in->kernel->dir[0])
		return -1;
	if (strcmp(kernel_btf_dir, in->kernel->dir)) {
		char path[XK_PATH_MAX];

		btf__free(kernel_btf);
		kernel_btf = NULL;
		xk_strlcpy(kernel_btf_dir, in->kernel->dir, sizeof(kernel_btf_dir));
		if (!xk_snprintf(path, sizeof(path), "%s/vmlinux", in->kernel->dir))
			kernel_btf = btf__parse_elf(path, NULL);
		if (!kernel_btf || libbpf_get_error(kernel_btf))
			kernel_btf = NULL;
	}
	if (!kernel_btf)
		return -1;
	id = btf__find_by_name_kind(kernel_btf, name, BTF_KIND_FUNC);
	if (id < 0)
		return -1;
	fn = btf__type_by_id(kernel_btf, (__u32)id);
	proto = fn ? btf__type_by_id(kernel_btf, fn->type) : NULL;
	if (!proto || !btf_is_func_proto(proto))
		return -1;
	n = btf_vlen(proto);
	p = btf_params(proto);
	if (n && !p[n - 1].type) {
		*variadic = true;
		return -1;
	}
	/* an argument of more than 8 bytes (a structure by value) takes two
	 * registers or the stack: not counted here */
	for (int k = 0; k < n; k++) {
		__s64 size = btf__resolve_size(kernel_btf, p[k].type);

		if (size <= 0 || size > 8)
			return -1;
	}
	return n;
}

/* ---- the form ---- */

/* The offset of the instruction run r ends at. */
static uint64_t stop_off(const struct xk_func_code *code, const struct boot_run *r)
{
	return r->stop < code->nr ? code->insn[r->stop].off :
	       code->nr ? code->insn[code->nr - 1].off + code->insn[code->nr - 1].len : 0;
}

/* Whether f's code from offset from on refers to bytes [off, off + w) of
 * y (a pc-relative field's tail: up to 16 bytes before). */
static bool refers_from(const struct xk_sym *f, uint64_t from,
			const struct xk_sym *y, uint64_t off, uint32_t w)
{
	for (size_t k = 0; k < f->sec->nr_relas; k++) {
		const struct xk_rela *r = &f->sec->relas[k];
		int64_t at;

		if (r->offset < f->sym.st_value + from ||
		    r->offset >= f->sym.st_value + f->sym.st_size || !r->sym ||
		    (r->sym != y && (GELF_ST_TYPE(r->sym->sym.st_info) != STT_SECTION ||
				     r->sym->sec != y->sec)))
			continue;
		at = (int64_t)r->sym->sym.st_value + r->addend;
		if (at + 16 >= (int64_t)(y->sym.st_value + off) &&
		    at < (int64_t)(y->sym.st_value + off + w))
			return true;
	}
	return false;
}

/*
 * Code of fb's object that may have read bytes [off, off + w) of y at
 * boot and kept what it derived: fb's own code after its run (from from
 * on), or another boot-time function's. Its name, or NULL. (A function
 * the boot code calls that reads it is not seen: docs/design.md, Limits.)
 */
static const char *other_boot_reader(const struct xk_sym *fb, uint64_t from,
				     const struct xk_sym *y, uint64_t off,
				     uint32_t w)
{
	const struct xk_obj *o = fb->sec->obj;

	if (refers_from(fb, from, y, off, w))
		return fb->name;
	for (size_t i = 0; i < o->nr_syms; i++) {
		const struct xk_sym *f = &o->syms[i];

		if (!f->is_func || !f->sec || !f->sym.st_size || !gen_init_code(f) ||
		    (f->sec == fb->sec && f->sym.st_value == fb->sym.st_value))
			continue;
		if (refers_from(f, 0, y, off, w))
			return f->name;
	}
	return NULL;
}

static const int arg_regs[] = { XK_RDI, XK_RSI, XK_RDX, XK_RCX, XK_R8, XK_R9 };
static const int callee_saved[] = { XK_RBX, XK_RSP, XK_RBP, XK_R12, XK_R13,
				    XK_R14, XK_R15 };
static const char *const reg_names[XK_NR_REGS] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

/* Whether the instruction the run ends at returns (ret, or the jump to
 * the return thunk). */
static bool is_return(const struct xk_sym *f, const struct xk_func_code *code,
		      size_t stop)
{
	const struct xk_insn *in = stop < code->nr ? &code->insn[stop] : NULL;
	const char *to;

	if (!in)
		return false;
	if (in->is_ret)
		return true;
	to = in->is_branch && !in->is_cond ? xk_callee_name(f, in) : NULL;
	return to && !strcmp(to, "__x86_return_thunk");
}

/* Whether callee is a function of another object (undefined in f's, and
 * no thunk of an indirect call). */
static bool extern_callee(const struct xk_sym *f, const char *callee)
{
	const struct xk_obj *o = f->sec->obj;

	if (!strcmp(callee, "?") || !strncmp(callee, "__x86_indirect_thunk", 20) ||
	    !strncmp(callee, "__x86_indirect_call_thunk", 25))
		return false;
	for (size_t i = 0; i < o->nr_syms; i++)
		if (!strcmp(o->syms[i].name, callee) && o->syms[i].sec)
			return false;	/* defined here */
	return true;
}

/* Whether register g holds the same in the runs r[0..nr). */
static bool reg_agrees(const struct boot_run *r, int nr, int g)
{
	for (int k = 1; k < nr; k++) {
		if (!r[0].written[g] && !r[k].written[g])
			continue;
		if (!same_val(&r[0].reg[g], &r[k].reg[g]))
			return false;
	}
	return true;
}

/*
 * The runs of fb (code[0]) and of its builds (code[1..nr)), checked as the
 * form needs (the file's comment); 0, or -ENOTSUP with why.
 */
static int check_runs(const struct gen_input *in, const struct xk_sym *const *fs,
		      const struct xk_func_code *const *code, int nr,
		      struct boot_run *r, char *why, size_t size)
{
	const char *callee;
	bool variadic = false, ret, live[XK_NR_REGS] = { false };
	int arity = -1, err;

	for (int k = 0; k < nr; k++) {
		err = run_boot(fs[k], code[k], &r[k]);
		if (err) {
			xk_snprintf(why, size, "its start cannot be run: %s", r[k].why);
			return -ENOTSUP;
		}
	}
	/* the same code from the end of the run on, reached from it only */
	for (int k = 1; k < nr; k++) {
		size_t tail = code[0]->nr - r[0].stop;

		if (code[k]->nr - r[k].stop != tail ||
		    (r[0].callee == NULL) != (r[k].callee == NULL) ||
		    (r[0].callee && strcmp(r[0].callee, r[k].callee))) {
			snprintf(why, size, "the constant reaches code past the "
				 "straight-line start that ends at +0x%lx",
				 (unsigned long)(r[0].stop < code[0]->nr ?
						 code[0]->insn[r[0].stop].off : 0));
			return -ENOTSUP;
		}
		for (size_t j = 0; j < tail; j++) {
			const struct xk_insn *a = &code[0]->insn[r[0].stop + j];
			const struct xk_insn *b = &code[k]->insn[r[k].stop + j];
			char buf[160];

			/* a branch goes as far past the end of the run */
			bool same_target = (a->target < 0) == (b->target < 0) &&
				(a->target < 0 || a->target - (int64_t)stop_off(code[0], &r[0]) ==
						  b->target - (int64_t)stop_off(code[k], &r[k]));

			if (strcmp(a->norm, b->norm) || !same_target ||
			    !gen_same_relocs(fs[0], a, fs[k], b, buf, sizeof(buf))) {
				snprintf(why, size, "the constant reaches +0x%lx "
					 "%.60s, past the straight-line start",
					 (unsigned long)a->off, a->text);
				return -ENOTSUP;
			}
		}
	}
	for (size_t j = 0; j < code[0]->nr; j++) {
		const struct xk_insn *a = &code[0]->insn[j];

		if (a->is_branch && a->target >= 0 &&
		    (uint64_t)a->target < stop_off(code[0], &r[0])) {
			snprintf(why, size, "+0x%lx %.60s branches back into its "
				 "straight-line start", (unsigned long)a->off,
				 a->text);
			return -ENOTSUP;
		}
	}
	/*
	 * What the end passes on: a call of a function of another object (by
	 * its BTF prototype in vmlinux) takes its arguments and keeps the
	 * callee-saved registers, a return gives rax and them back; anything
	 * else (a call of this object's code, which the compiler may know to
	 * keep more, an indirect one, a jump, a store, an instruction not
	 * modelled) may read every register and the flags.
	 */
	callee = r[0].callee;
	ret = is_return(fs[0], code[0], r[0].stop);
	if (callee && extern_callee(fs[0], callee))
		arity = callee_arity(in, callee, &variadic);
	for (int g = 0; g < XK_NR_REGS; g++)
		live[g] = arity < 0 && !ret;
	for (size_t k = 0; arity >= 0 && k < ARRAY_SIZE(arg_regs); k++)
		live[arg_regs[k]] = (int)k < arity;
	for (size_t k = 0; k < ARRAY_SIZE(callee_saved); k++)
		live[callee_saved[k]] = true;
	live[XK_RAX] |= ret;
	if (!callee && !ret) {
		for (int k = 1; k < nr; k++) {
			if (!same_val(&r[0].flags, &r[k].flags)) {
				snprintf(why, size, "the flags, which differ with the "
					 "constant, reach the end of its straight-line "
					 "start (+0x%lx)", (unsigned long)stop_off(code[0], &r[0]));
				return -ENOTSUP;
			}
		}
	}
	for (int g = 0; g < XK_NR_REGS; g++) {
		if (live[g] && !reg_agrees(r, nr, g)) {
			snprintf(why, size, "%s, which differs with the constant, "
				 "reaches %s%s%s", reg_names[g],
				 callee ? "the call of " : "the end of its "
				 "straight-line start", callee ? callee : "",
				 callee && variadic ? " (variadic: any argument "
				 "register may be read)" : callee && arity < 0 ?
				 " (its arguments unknown: this object's code, "
				 "an indirect call, or not in vmlinux's BTF)" : "");
			return -ENOTSUP;
		}
	}
	return 0;
}

/* The store of run r at (sec of the holder named like y, place), or NULL */
static const struct boot_store *store_of(const struct boot_run *r,
					 const char *var, int64_t off,
					 uint32_t width)
{
	const struct boot_store *found = NULL;

	for (int i = 0; i < r->nr_st; i++) {
		const struct boot_store *s = &r->st[i];
		const struct xk_sym *y = gen_holder_in(s->sec, s->place);

		if (y && !strcmp(y->name, var) &&
		    s->place - (int64_t)y->sym.st_value == off && s->width == width)
			found = s;	/* the last one */
	}
	return found;
}

/* Whether two builds' stores go to the same place: the same section (by
 * name), holder and offset in it, and width. */
static bool same_place(const struct boot_store *a, const struct boot_store *b)
{
	const struct xk_sym *ya = gen_holder_in(a->sec, a->place);
	const struct xk_sym *yb = gen_holder_in(b->sec, b->place);

	return a->width == b->width && ya && yb &&
	       !strcmp(a->sec->name, b->sec->name) && !strcmp(ya->name, yb->name) &&
	       a->place - (int64_t)ya->sym.st_value ==
	       b->place - (int64_t)yb->sym.st_value;
}

/* ... and put the same value there. */
static bool same_store(const struct boot_store *a, const struct boot_store *b)
{
	return same_place(a, b) && same_val(&a->val, &b->val);
}


/* Whether y is a static variable of writable data the module may write */
static const char *variable_refusal(const struct xk_sym *y)
{
	const char *sec = y->sec ? y->sec->name : "";

	if (!y->sec || GELF_ST_TYPE(y->sym.st_info) != STT_OBJECT)
		return "is no named variable";
	if (GELF_ST_BIND(y->sym.st_info) != STB_LOCAL)
		return "is global: code of other objects may write it";
	if (!(y->sec->sh.sh_flags & SHF_WRITE) ||
	    (y->sec->sh.sh_flags & SHF_EXECINSTR) ||
	    !strncmp(sec, ".init", 5) || !strncmp(sec, ".exit", 5) ||
	    strstr(sec, "percpu") || strstr(sec, "ro_after_init"))
		return "is not in writable data the kernel keeps";
	return NULL;
}

static uint64_t holder_off(const struct boot_store *s, const struct xk_sym *y)
{
	return (uint64_t)(s->place - (int64_t)y->sym.st_value);
}

/*
 * Function fb (boot-time code of the baseline, its code base; var[v] its
 * code in each build) stores, in the straight-line run it starts with,
 * values that differ between the builds to static variables, and the
 * constant reaches nothing else of it. Each variable becomes a data span
 * with the value each build's run stores (per value: points); 1 with them
 * added, 0 with why when fb is no such code, or -errno.
 */
static int boot_data(const struct gen_input *in, const struct xk_sym *fb,
		     const struct xk_func_code *base,
		     const struct xk_func_code *var, struct xk_scope *t,
		     char *why, size_t size)
{
	const struct xk_sym *fs[1 + GEN_NR_VARIANTS] = { fb };
	const struct xk_func_code *code[1 + GEN_NR_VARIANTS] = { base };
	struct boot_run *r;
	int nr = 1, derived = 0, first = t->nr_spans, err;
	char note[sizeof(t->notes[0])], writer[200];
	size_t len;

	int64_t values[1 + GEN_NR_VARIANTS] = { in->def };

	/* a build outside the bounds is no value the variable will hold (the
	 * compiler may even drop a shift past the width as undefined) */
	for (int v = 0; v < GEN_NR_VARIANTS; v++) {
		if (!fb->twin_v[v] || !var[v].nr || in->variant[v].value < in->min ||
		    in->variant[v].value > in->max)
			continue;
		fs[nr] = fb->twin_v[v];
		values[nr] = in->variant[v].value;
		code[nr++] = &var[v];
	}
	if (nr < 2) {
		snprintf(why, size, "no build within the bounds to compare with");
		return 0;
	}
	r = calloc((size_t)nr, sizeof(*r));
	if (!r)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	err = check_runs(in, fs, code, nr, r, why, size);
	if (err)
		goto refuse;
	/* every build stores to the same places; those that differ are the
	 * derived variables */
	for (int k = 1; k < nr; k++) {
		if (r[k].nr_st != r[0].nr_st) {
			snprintf(why, size, "its start stores %d values in the "
				 "build with %lld, %d in the baseline", r[k].nr_st,
				 (long long)values[k], r[0].nr_st);
			goto refuse;
		}
	}
	len = (size_t)snprintf(note, sizeof(note), "not a span: %s (boot-time "
			       "code, %s) derives from the constant only",
			       fb->name, fb->sec->name);
	for (int i = 0; i < r[0].nr_st; i++) {
		const struct boot_store *s0 = &r[0].st[i];
		const struct xk_sym *y = gen_holder_in(s0->sec, s0->place);
		const char *bad;
		bool differs = false, writes = false;
		struct xk_scope_span *sp;
		const char *reader;
		uint8_t expect[8];
		uint64_t off;

		for (int k = 1; k < nr; k++)
			differs |= !same_store(s0, &r[k].st[i]);
		if (!differs)
			continue;
		if (!y) {
			snprintf(why, size, "it stores a value that differs with "
				 "the constant outside any named variable");
			goto refuse;
		}
		off = holder_off(s0, y);
		bad = variable_refusal(y);
		if (!bad && (s0->width > 8 || (s0->width & (s0->width - 1)) ||
			     off % s0->width || off + s0->width > y->sym.st_size))
			bad = "is written in a field that is no aligned 1, 2, 4 or "
			      "8 bytes inside it";
		for (int k = 0; k < nr && !bad; k++) {
			const struct boot_store *sk = store_of(&r[k], y->name,
							       (int64_t)off,
							       s0->width);

			if (!sk || !sk->val.known || sk->val.addr)
				bad = "gets a value the run cannot compute in some build";
		}
		reader = bad ? NULL : other_boot_reader(fb, stop_off(base, &r[0]),
							 y, off, s0->width);
		if (reader) {
			snprintf(why, size, "it derives %s from the constant, and "
				 "boot-time code (%s%s) refers to it too", y->name,
				 reader, reader == fb->name ? ", after its start" : "");
			goto refuse;
		}
		if (!bad) {
			err = gen_code_writes(fb->sec->obj, y, off, off + s0->width,
					      fb, writer, sizeof(writer), &writes);
			if (err)
				goto out;
			if (writes) {
				snprintf(why, size, "it derives %s from the constant, "
					 "and %s", y->name, writer);
				goto refuse;
			}
		}
		if (bad) {
			snprintf(why, size, "it derives %s from the constant, which "
				 "%s", y->name, bad);
			goto refuse;
		}
		if (store_of(&r[0], y->name, (int64_t)off, s0->width) != s0)
			continue;	/* an earlier store, overwritten */
		len += (size_t)snprintf(note + len, len < sizeof(note) ?
					sizeof(note) - len : 0, "%s %s",
					derived++ ? "," : ":", y->name);
		/* an alias of fb (init_module) made it already */
		for (int k = 0; k < t->nr_spans && !bad; k++)
			bad = t->spans[k].cls == XK_SPAN_DATA &&
			      !strcmp(t->spans[k].object, in->object) &&
			      !strcmp(t->spans[k].func, y->name) &&
			      t->spans[k].start == off ? "" : NULL;
		if (bad)
			continue;
		for (uint32_t b = 0; b < s0->width; b++)
			expect[b] = (uint8_t)(s0->val.v >> (8 * b));
		err = gen_add_variable_span(t, in, y, off, s0->width, expect, 0,
					    (int64_t)s0->val.v, &sp);
		if (err)
			goto out;
		for (int k = 0; k < nr; k++) {
			int64_t n = values[k];
			bool have = false;

			for (int j = 0; j < sp->nr_points; j++)
				have |= sp->points[j].n == n;
			if (have || n < in->min || n > in->max ||
			    sp->nr_points == XK_MAX_POINTS)
				continue;
			memset(&sp->points[sp->nr_points], 0, sizeof(sp->points[0]));
			sp->points[sp->nr_points].n = n;
			sp->points[sp->nr_points].p[0] = (__s64)store_of(&r[k],
						y->name, (int64_t)off, s0->width)->val.v;
			sp->nr_points++;
		}
	}
	if (!derived) {
		snprintf(why, size, "its straight-line start stores nothing that "
			 "differs with the constant");
		goto refuse;
	}
	if (len < sizeof(note))
		snprintf(note + len, sizeof(note) - len, ", data spans written as "
			 "the build with the value computes them");
	err = gen_add_note(t, note);
	if (!err)
		err = 1;
	goto out;
refuse:
	/* nothing half-added */
	for (int k = first; k < t->nr_spans; k++)
		memset(&t->spans[k], 0, sizeof(t->spans[k]));
	t->nr_spans = first;
	err = 0;
out:
	free(r);
	return err;
}

/* Whether store s (of the baseline) is a variable t retunes per value. */
static bool per_value_variable(const struct xk_scope *t, const char *object,
			       const struct boot_store *s)
{
	const struct xk_sym *y = gen_holder_in(s->sec, s->place);

	for (int i = 0; y && i < t->nr_spans; i++) {
		const struct xk_scope_span *sp = &t->spans[i];
		const char *name = strchr(sp->func, ':') ? strchr(sp->func, ':') + 1 :
				   sp->func;

		if (sp->cls == XK_SPAN_DATA && sp->nr_points > 0 &&
		    !strcmp(sp->object, object) && !strcmp(name, y->name) &&
		    sp->start == (uint64_t)(s->place - (int64_t)y->sym.st_value) &&
		    sp->expect_len == s->width)
			return true;
	}
	return false;
}

/*
 * The value a derived variable's span sp (boot_data) holds in the build of
 * object var: the run of its boot code there, checked against the same
 * function of the baseline base as xk gen checks it, every other store of
 * it the baseline's or a per-value variable of t; -ENOTSUP with why.
 */
static int boot_data_point(const struct gen_input *in, const struct xk_scope *t,
			   struct xk_obj *base, struct xk_obj *var,
			   const struct xk_scope_span *sp, __s64 *value, char *why,
			   size_t size)
{
	const char *name = strchr(sp->func, ':') ? strchr(sp->func, ':') + 1 :
			   sp->func;
	const struct xk_sym *first = NULL;
	uint64_t def = 0;
	int found = 0, err = 0;

	for (uint32_t b = 0; b < sp->expect_len && b < 8; b++)
		def |= (uint64_t)sp->expect[b] << (8 * b);
	snprintf(why, size, "no boot-time function stores %s+%llu in its "
		 "straight-line start", name, (unsigned long long)sp->start);
	/* the boot code of the baseline that stores the field (exactly one),
	 * checked against the same function of that build as at xk gen */
	for (size_t i = 0; i < base->nr_syms && !err; i++) {
		const struct xk_sym *fs[2] = { &base->syms[i], NULL };
		struct xk_func_code code[2] = { { 0 } };
		const struct xk_func_code *codes[2] = { &code[0], &code[1] };
		const struct boot_store *s0, *s1;
		struct boot_run r[2];
		char how[240];

		if (!fs[0]->is_func || !fs[0]->sec || !fs[0]->sym.st_size ||
		    !gen_init_code(fs[0]))
			continue;
		/* an alias of the one found (init_module of golden_init) */
		if (first && first->sec == fs[0]->sec &&
		    first->sym.st_value == fs[0]->sym.st_value)
			continue;
		fs[1] = xk_obj_find_func(var, fs[0]->name, fs[0]->sec->name);
		err = xk_disasm_func(fs[0], &code[0]);
		if (err)
			break;
		if (run_boot(fs[0], &code[0], &r[0]) ||
		    !store_of(&r[0], name, (int64_t)sp->start, sp->expect_len)) {
			xk_func_code_free(&code[0]);
			continue;
		}
		found++;
		first = fs[0];
		err = fs[1] ? xk_disasm_func(fs[1], &code[1]) : -ENOTSUP;
		if (!err)
			err = check_runs(in, fs, codes, 2, r, how, sizeof(how));
		/* every other store of that build as the baseline's, or a
		 * variable the table retunes per value too */
		if (!err && r[1].nr_st != r[0].nr_st) {
			snprintf(how, sizeof(how), "its start stores %d values in that "
				 "build, %d in the baseline", r[1].nr_st, r[0].nr_st);
			err = -ENOTSUP;
		}
		for (int k = 0; !err && k < r[0].nr_st; k++) {
			if (same_store(&r[0].st[k], &r[1].st[k]) ||
			    (per_value_variable(t, in->object, &r[0].st[k]) &&
			     same_place(&r[0].st[k], &r[1].st[k])))
				continue;
			snprintf(how, sizeof(how), "its start stores another value "
				 "than the baseline's at a place the table does not "
				 "retune (store %d)", k);
			err = -ENOTSUP;
		}
		if (err == -ENOTSUP)
			snprintf(why, size, "%s %s", fs[0]->name, fs[1] ? how :
				 "is not in that build");
		s0 = err ? NULL : store_of(&r[0], name, (int64_t)sp->start,
					   sp->expect_len);
		s1 = err ? NULL : store_of(&r[1], name, (int64_t)sp->start,
					   sp->expect_len);
		if (!err && (!s0 || !s1 || !s1->val.known || s1->val.addr ||
			     !s0->val.known || s0->val.addr ||
			     (s0->val.v & mask((int)sp->expect_len)) != def)) {
			snprintf(why, size, "%s's start does not compute %s+%llu in "
				 "that build as in the baseline's table", fs[0]->name,
				 name, (unsigned long long)sp->start);
			err = -ENOTSUP;
		}
		if (!err)
			*value = (__s64)(s1->val.v & mask((int)sp->expect_len));
		xk_func_code_free(&code[0]);
		xk_func_code_free(&code[1]);
	}
	if (!err && found != 1) {
		if (found)
			snprintf(why, size, "several boot-time functions store "
				 "%s+%llu", name, (unsigned long long)sp->start);
		err = -ENOTSUP;
	}
	return err;
}

/* Claims boot-time code (not by shape) whose every use of the value is a
 * variable it derives; else leaves in fn->found why not, for the boot-code
 * form's refusal. */
static int claim_boot_data(struct form_fn *fn, struct xk_scope *t)
{
	if (!gen_init_code(fn->fb) || fn->in->by_shape ||
	    !(fn->nr_seeds || fn->other_diff))
		return 0;
	return boot_data(fn->in, fn->fb, fn->base, fn->var, t, fn->found,
			 sizeof(fn->found));
}

/* The per-value spans of class data are this form's (a variable the value
 * initialises has a fit, no points). */
static bool owns_boot_data(const struct xk_scope_span *sp)
{
	return sp->cls == XK_SPAN_DATA;
}

const struct gen_form form_boot_data = {
	.name = "boot data",
	.claim = claim_boot_data,
	.owns = owns_boot_data,
	.point = boot_data_point,
};
