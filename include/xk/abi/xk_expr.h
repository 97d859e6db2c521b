/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state-update programs of a scope table, and their one interpreter.
 *
 * `xk gen` derives, for each critical span, an expression of the state that
 * the span leaves in a register or in the flags, as a function of the
 * registers at the probe point and of the constant's source value N. It is
 * stored as a short postfix program; the module runs it in the kprobe
 * handler to compute what N would have produced. The same interpreter (this
 * header) runs in the kernel and in libxk (fit checks, tests), so what was
 * checked offline is what runs.
 *
 * Values are 64-bit; each operation has a width (8, 16, 32, 64) and its
 * result is truncated (zero-extended) to it. A program is validated once
 * (xk_expr_validate) before it is run: known opcodes and widths, registers
 * in range, the stack within bounds, exactly one value left.
 */
#ifndef XK_EXPR_H
#define XK_EXPR_H

#if defined(__bpf__)
/* an eBPF policy: the types come from vmlinux.h, included first */
#ifndef EINVAL
#define EINVAL 22
#endif
#else
#include <linux/types.h>
#ifdef __KERNEL__
#include <linux/errno.h>
#else
#include <errno.h>
#endif
#endif

#define XK_EXPR_MAX_INSNS 48
#define XK_EXPR_MAX_STACK 16
#define XK_EXPR_MAX_PARAMS 8	/* parameters of one span (XK_MAX_PARAMS) */

/* General-purpose registers, in x86 encoding order. */
enum xk_reg {
	XK_RAX, XK_RCX, XK_RDX, XK_RBX, XK_RSP, XK_RBP, XK_RSI, XK_RDI,
	XK_R8, XK_R9, XK_R10, XK_R11, XK_R12, XK_R13, XK_R14, XK_R15,
	XK_NR_REGS,
	XK_LOC_FLAGS = XK_NR_REGS,	/* a location only: the arithmetic flags */
	XK_BASE_RIP = XK_NR_REGS + 1,	/* a memory location's base: rip */
};

/*
 * A program's inputs: the general registers at the probe point, then up to
 * XK_MAX_MEM_INPUTS values read from memory at [register + disp] there
 * (xk_ioc_span.mem_in; the runtime reads them fault-tolerantly before the
 * program runs). XK_OP_REG names an input; arrays of inputs hold
 * XK_NR_INPUTS.
 */
#define XK_MAX_MEM_INPUTS 2
#define XK_NR_INPUTS (XK_NR_REGS + XK_MAX_MEM_INPUTS)

enum xk_op {
	XK_OP_CONST = 1,	/* push imm */
	XK_OP_REG,		/* push regs[reg]: an input (XK_NR_INPUTS) */
	XK_OP_PARAM,		/* push imm * N + imm2: a fitted immediate;
				 * in a per-value span the value of
				 * parameter reg (xk_ioc_span.points) */
	XK_OP_ADD,
	XK_OP_SUB,
	XK_OP_AND,
	XK_OP_OR,
	XK_OP_XOR,
	XK_OP_MUL,
	XK_OP_SHL,
	XK_OP_SHR,
	XK_OP_SAR,		/* arithmetic, on the sign bit of width */
	XK_OP_NEG,
	XK_OP_NOT,
	XK_OP_SEXT,		/* sign-extend from imm bits to width */
	XK_OP_LTU,		/* 1 if a < b unsigned at width, else 0 */
	XK_OP_LTS,		/* 1 if a < b signed at width, else 0 */
	XK_OP_EQ,
	XK_OP_SELECT,		/* c ? a : b (pushed in the order c, a, b) */
	XK_OP_FLAGS_SUB,	/* EFLAGS of cmp/sub a - b at width */
	XK_OP_FLAGS_LOGIC,	/* EFLAGS of test/and a & b at width */
	XK_OP_MULHU,		/* the high 64 bits of the unsigned a * b */
	XK_OP_DIVU,		/* a / b unsigned at width; 0 when b is 0 */
	XK_OP_REMU,		/* a % b unsigned at width; a when b is 0 */
	XK_OP_MAX,
};

#define XK_EFLAGS_CF 0x001
#define XK_EFLAGS_PF 0x004
#define XK_EFLAGS_AF 0x010
#define XK_EFLAGS_ZF 0x040
#define XK_EFLAGS_SF 0x080
#define XK_EFLAGS_OF 0x800
#define XK_EFLAGS_ARITH (XK_EFLAGS_CF | XK_EFLAGS_PF | XK_EFLAGS_AF | \
			 XK_EFLAGS_ZF | XK_EFLAGS_SF | XK_EFLAGS_OF)

struct xk_expr_insn {
	__u8 op;
	__u8 width;		/* 8, 16, 32 or 64 */
	__u8 reg;
	__u8 pad[5];
	__s64 imm;
	__s64 imm2;
};

struct xk_expr {
	__u32 len;
	__u32 pad;
	struct xk_expr_insn insn[XK_EXPR_MAX_INSNS];
};

/* The name of an operation in a scope table's text; NULL if unknown. */
static inline const char *xk_op_name(unsigned int op)
{
	static const char *const names[XK_OP_MAX] = {
		[XK_OP_CONST] = "const", [XK_OP_REG] = "reg", [XK_OP_PARAM] = "param",
		[XK_OP_ADD] = "add", [XK_OP_SUB] = "sub", [XK_OP_AND] = "and",
		[XK_OP_OR] = "or", [XK_OP_XOR] = "xor", [XK_OP_MUL] = "mul",
		[XK_OP_SHL] = "shl", [XK_OP_SHR] = "shr", [XK_OP_SAR] = "sar",
		[XK_OP_NEG] = "neg", [XK_OP_NOT] = "not", [XK_OP_SEXT] = "sext",
		[XK_OP_LTU] = "ltu", [XK_OP_LTS] = "lts", [XK_OP_EQ] = "eq",
		[XK_OP_SELECT] = "select", [XK_OP_FLAGS_SUB] = "flags_sub",
		[XK_OP_FLAGS_LOGIC] = "flags_logic", [XK_OP_MULHU] = "mulhu",
		[XK_OP_DIVU] = "divu", [XK_OP_REMU] = "remu",
	};

	return op < XK_OP_MAX ? names[op] : 0;
}

static inline __u64 xk_mask(unsigned int width)
{
	return width >= 64 ? ~0ULL : (1ULL << width) - 1;
}

static inline int xk_expr_arity(unsigned int op)
{
	switch (op) {
	case XK_OP_CONST: case XK_OP_REG: case XK_OP_PARAM:
		return 0;
	case XK_OP_NEG: case XK_OP_NOT: case XK_OP_SEXT:
		return 1;
	case XK_OP_SELECT:
		return 3;
	default:
		return op > 0 && op < XK_OP_MAX ? 2 : -1;
	}
}

/*
 * Checks a program of len instructions once, before it may run: known
 * opcodes and widths, registers in range, the stack never below empty nor
 * above max_stack, exactly one value left. 0 or -EINVAL. The runtime's
 * programs (struct xk_expr) are checked with the ABI's limits; the
 * analysis evaluates larger ones with the same code.
 */
static inline int xk_prog_validate(const struct xk_expr_insn *insn, __u32 len,
				   __u32 max_len, __u32 max_stack)
{
	__u32 depth = 0;

	if (len == 0 || len > max_len)
		return -EINVAL;
	for (__u32 i = 0; i < len; i++) {
		const struct xk_expr_insn *in = &insn[i];
		int arity = xk_expr_arity(in->op);

		if (arity < 0)
			return -EINVAL;
		if (in->width != 8 && in->width != 16 && in->width != 32 &&
		    in->width != 64)
			return -EINVAL;
		if (in->op == XK_OP_REG && in->reg >= XK_NR_INPUTS)
			return -EINVAL;
		if (in->op == XK_OP_PARAM && in->reg >= XK_EXPR_MAX_PARAMS)
			return -EINVAL;
		if (in->op == XK_OP_SEXT && (in->imm < 1 || in->imm > 64))
			return -EINVAL;
		if (depth < (__u32)arity)
			return -EINVAL;
		depth = depth - arity + 1;
		if (depth > max_stack)
			return -EINVAL;
	}
	return depth == 1 ? 0 : -EINVAL;
}

static inline int xk_expr_validate(const struct xk_expr *e)
{
	return xk_prog_validate(e->insn, e->len, XK_EXPR_MAX_INSNS,
				XK_EXPR_MAX_STACK);
}

static inline __u64 xk_parity_flag(__u64 res)
{
	__u64 b = res & 0xff;

	b ^= b >> 4;
	b ^= b >> 2;
	b ^= b >> 1;
	return (b & 1) ? 0 : XK_EFLAGS_PF;
}

static inline __u64 xk_flags_sub(__u64 a, __u64 b, unsigned int w)
{
	__u64 m = xk_mask(w), r = (a - b) & m, sign = 1ULL << (w - 1);
	__u64 f = 0;

	a &= m;
	b &= m;
	if (a < b)
		f |= XK_EFLAGS_CF;
	if (!r)
		f |= XK_EFLAGS_ZF;
	if (r & sign)
		f |= XK_EFLAGS_SF;
	if ((a ^ b) & (a ^ r) & sign)
		f |= XK_EFLAGS_OF;
	if ((a ^ b ^ r) & 0x10)
		f |= XK_EFLAGS_AF;
	return f | xk_parity_flag(r);
}

static inline __u64 xk_flags_logic(__u64 a, __u64 b, unsigned int w)
{
	__u64 r = a & b & xk_mask(w), f = 0;

	if (!r)
		f |= XK_EFLAGS_ZF;
	if (r & (1ULL << (w - 1)))
		f |= XK_EFLAGS_SF;
	return f | xk_parity_flag(r);
}

static inline __s64 xk_signed(__u64 v, unsigned int w)
{
	if (w >= 64)
		return (__s64)v;
	v &= xk_mask(w);
	return (v & (1ULL << (w - 1))) ? (__s64)(v | ~xk_mask(w)) : (__s64)v;
}

/* The high half of the 128-bit product of a and b (mul's rdx), in four
 * 32-bit products: no 128-bit type (eBPF has none). */
static inline __u64 xk_mulhu(__u64 a, __u64 b)
{
	__u64 al = a & 0xffffffffULL, ah = a >> 32;
	__u64 bl = b & 0xffffffffULL, bh = b >> 32;
	__u64 ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	__u64 mid = (ll >> 32) + (lh & 0xffffffffULL) + (hl & 0xffffffffULL);

	return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/*
 * THE evaluator of update programs: the module runs it in its kprobe
 * handlers, libxk in the analysis (fit checks) and the tests against the
 * glue. Runs a program validated with a stack of at least the capacity of
 * st, with the registers at the probe point and the constant's value n.
 * pv: NULL, or a per-value span's parameters at n (XK_EXPR_MAX_PARAMS of
 * them), which its XK_OP_PARAM then push instead of imm * n + imm2.
 * Never fails: a validated program cannot underflow or overflow st.
 */
static inline __u64 xk_prog_run_pv(const struct xk_expr_insn *insn, __u32 len,
				   __u64 *st, const __u64 *regs, __s64 n,
				   const __s64 *pv)
{
	int sp = 0;

	for (__u32 i = 0; i < len; i++) {
		const struct xk_expr_insn *in = &insn[i];
		unsigned int w = in->width;
		__u64 m = xk_mask(w), a = 0, b = 0, c = 0, r = 0;
		int arity = xk_expr_arity(in->op);

		if (arity == 3) {
			b = st[--sp];
			a = st[--sp];
			c = st[--sp];
		} else if (arity == 2) {
			b = st[--sp];
			a = st[--sp];
		} else if (arity == 1) {
			a = st[--sp];
		}
		switch (in->op) {
		case XK_OP_CONST: r = (__u64)in->imm; break;
		case XK_OP_REG: r = regs[in->reg % XK_NR_INPUTS]; break;
		case XK_OP_PARAM:	/* wraps: no signed overflow */
			r = pv ? (__u64)pv[in->reg % XK_EXPR_MAX_PARAMS] :
				 (__u64)in->imm * (__u64)n + (__u64)in->imm2;
			break;
		case XK_OP_ADD: r = a + b; break;
		case XK_OP_SUB: r = a - b; break;
		case XK_OP_AND: r = a & b; break;
		case XK_OP_OR: r = a | b; break;
		case XK_OP_XOR: r = a ^ b; break;
		case XK_OP_MUL: r = a * b; break;
		case XK_OP_MULHU: r = xk_mulhu(a, b); break;
		/* div's quotient and remainder; a zero divisor (where the
		 * code itself would trap) gives eBPF's answers, never a trap */
		case XK_OP_DIVU: r = (b & m) ? (a & m) / (b & m) : 0; break;
		case XK_OP_REMU: r = (b & m) ? (a & m) % (b & m) : (a & m); break;
		case XK_OP_SHL: r = (b & 63) >= w ? 0 : a << (b & 63); break;
		case XK_OP_SHR: r = (b & 63) >= w ? 0 : (a & m) >> (b & 63); break;
		case XK_OP_SAR:
			r = (__u64)(xk_signed(a, w) >> ((b & 63) >= w ? w - 1 : (b & 63)));
			break;
		case XK_OP_NEG: r = -a; break;
		case XK_OP_NOT: r = ~a; break;
		case XK_OP_SEXT: r = (__u64)xk_signed(a, (unsigned int)in->imm); break;
		case XK_OP_LTU: r = (a & m) < (b & m); break;
		case XK_OP_LTS: r = xk_signed(a, w) < xk_signed(b, w); break;
		case XK_OP_EQ: r = (a & m) == (b & m); break;
		case XK_OP_SELECT: r = (c & 1) ? a : b; break;
		case XK_OP_FLAGS_SUB: r = xk_flags_sub(a, b, w); break;
		case XK_OP_FLAGS_LOGIC: r = xk_flags_logic(a, b, w); break;
		}
		/* flags are a register image, not a value of the width */
		st[sp++] = in->op == XK_OP_FLAGS_SUB ||
				   in->op == XK_OP_FLAGS_LOGIC ? r : r & m;
	}
	return st[0];
}

static inline __u64 xk_prog_run(const struct xk_expr_insn *insn, __u32 len,
				__u64 *st, const __u64 *regs, __s64 n)
{
	return xk_prog_run_pv(insn, len, st, regs, n, 0);
}

/* A program of the ABI's size (validated with xk_expr_validate). */
static inline __u64 xk_expr_eval_pv(const struct xk_expr *e, const __u64 *regs,
				    __s64 n, const __s64 *pv)
{
	__u64 st[XK_EXPR_MAX_STACK];

	return xk_prog_run_pv(e->insn, e->len, st, regs, n, pv);
}

static inline __u64 xk_expr_eval(const struct xk_expr *e, const __u64 *regs,
				 __s64 n)
{
	return xk_expr_eval_pv(e, regs, n, 0);
}

#endif
