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
#define XK_MAX_SPANS 64		/* critical spans of one constant */
#define XK_MAX_CONSTANTS 512	/* constants loaded at once (each at most
				 * XK_MAX_SPANS spans: the module's probes
				 * are bounded) */
#define XK_MAX_EXPECT 64	/* bytes compared from a span's start */
#define XK_MAX_LOCS 2		/* locations one span writes */
#define XK_MAX_EXITS 16		/* exits of one safe span */
#define XK_MAX_RANGES 16	/* address ranges of one safe span */
#define XK_MAX_CANDS 8		/* same-named functions a span may resolve to */
#define XK_MAX_ARGS 6		/* register arguments of the x86-64 ABI */
#define XK_MAX_PARAMS 8		/* fitted immediates of one span */
#define XK_MAX_POINTS 16	/* values of a per-value span (its points) */
#define XK_MAX_CONTEXTS 16	/* per-context figures kept for a policy */
#define XK_LABEL_MAX 16		/* a policy's context label, with NUL */
#define XK_TX_MAX 8		/* constants switched in one transaction */
#define XK_MAX_FUNC_SIZE 0x100000	/* bytes of one function (1 MiB) */
#define XK_MAX_MEM_DISP 4096	/* |disp| of a [register + disp] location */
#define XK_MAX_MASKED_RUN 10	/* consecutive bytes left uncompared */
#define XK_MAX_TIMEOUT_MS 60000	/* a transition's wait (global, per task) */
#define XK_MAX_LOAD_DISP 0x100000	/* |disp| of a memory input (1 MiB) */
#define XK_REPLAY_MAX_LOCS 8	/* stores, registers and flags one replay writes */
#define XK_REPLAY_MAX_STORES 4	/* ... of which stores, first */
#define XK_DEFAULT_TIMEOUT_MS 1000	/* ... when the request says 0 */

/* location kinds: enum xk_reg (a register), XK_LOC_FLAGS, or memory */
#define XK_LOC_MEM 32		/* [base + disp], base a register or XK_BASE_RIP */

/* escapes of derived data out of the safe span (bit mask) */
#define XK_ESCAPE_STORE 0x1	/* stored to non-stack memory */
#define XK_ESCAPE_CALL 0x2	/* passed to a call */
#define XK_ESCAPE_RET 0x4	/* returned */

#ifndef __bpf__
_Static_assert(XK_LOC_MEM > XK_BASE_RIP, "location kinds overlap registers");
_Static_assert(XK_MAX_PARAMS <= XK_EXPR_MAX_INSNS, "parameters exceed a program");
_Static_assert(XK_MAX_PARAMS == XK_EXPR_MAX_PARAMS, "two parameter limits");
#endif

/* ---- the shape of one location and one span ---- */

static inline int xk_rule_width_ok(__u32 width)
{
	return width == 8 || width == 16 || width == 32 || width == 64;
}

/*
 * A location is a general register other than rsp, the flags, or memory at
 * [register + disp] with |disp| < XK_MAX_MEM_DISP, or rip-relative; a
 * rip-relative location's rel32 lies in the bytes compared with the live
 * text, [start, start + expect_len), and its instruction ends there too.
 * Unsigned arithmetic throughout: every field is an adversary's.
 * (Which instruction stores there: xk_rule_find_store.)
 */
static inline const char *xk_rule_check_loc(__s32 kind, __s32 base, __s64 disp,
					    __u64 rip_end, __u32 width,
					    __u64 start, __u32 expect_len)
{
	__u64 field, end;

	if (!xk_rule_width_ok(width))
		return "a location's width is not 8, 16, 32 or 64 bits";
	if (kind == XK_LOC_FLAGS)
		return 0;
	if (kind >= 0 && kind < XK_NR_REGS)
		return kind == XK_RSP ? "a location is the stack pointer" : 0;
	if (kind != XK_LOC_MEM)
		return "a location is not a register, the flags or memory";
	if (base >= 0 && base < XK_NR_REGS) {
		__u64 mag = disp < 0 ? 0 - (__u64)disp : (__u64)disp;

		/* below the stack pointer lie the handler's own frames and
		 * the saved registers (kernel C has no red zone) */
		if (base == XK_RSP && disp < 0)
			return "a memory location lies below the stack pointer";
		return mag < XK_MAX_MEM_DISP ? 0 :
		       "a memory location's displacement is out of bounds";
	}
	if (base != XK_BASE_RIP)
		return "a memory location's base is not a register or rip";
	if (expect_len > XK_MAX_EXPECT || disp < 0 || (__u64)disp < start ||
	    rip_end < start)
		return "a rip-relative location lies outside the compared bytes";
	field = (__u64)disp - start;	/* the rel32, in the compared bytes */
	end = rip_end - start;		/* the end of its instruction */
	if (field > expect_len || end > expect_len || end < field + 4)
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
	if (func_size == 0 || func_size > XK_MAX_FUNC_SIZE)
		return "the function is empty or larger than the limit";
	if (expect_len > XK_MAX_EXPECT)
		return "more expected bytes than the limit";
	/* func_size is bounded: start < probe < func_size cannot wrap */
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

/*
 * The expected bytes of a span (start .. the end of the probed instruction)
 * and their mask. Every byte is compared (0xff) or not at all (0x00); the
 * analysis leaves out only bytes the kernel may hold otherwise (a rel32,
 * an absolute 64-bit address, a relocated call or jump whole, a jump-label
 * site whole, an alternative's site), so: no run of uncompared bytes is
 * longer than XK_MAX_MASKED_RUN (two 5-byte sites); the span's first byte
 * is compared, and before the probe point at least as many bytes are
 * compared as not. The byte under the probe point (the probed
 * instruction's first) is compared, unless:
 *  - the probed instruction is a relocated call or jump or a jump-label
 *    site (5 bytes, all uncompared, which boot-time and run-time patching
 *    rewrite: return thunks, retpolines, __fentry__, static keys); the
 *    module then requires the live byte to be one of those sites'
 *    (xk_rule_patched_site_byte);
 *  - the span is probed on its last instruction (post_len): the
 *    instruction it resumes at is no probe's and runs as the kernel has it,
 *    so it may be uncompared whole (a jump label's, an alternative's: the
 *    CPU's features chose its bytes at boot or load), within the limit on
 *    runs of uncompared bytes above.
 * Call after xk_rule_check_offsets (probe - start < expect_len).
 */
#define XK_PATCHED_SITE_LEN 5

static inline const char *xk_rule_check_expect(const __u8 *mask,
					       __u32 expect_len, __u64 start,
					       __u64 probe, __u32 post_len)
{
	__u32 run = 0, masked = 0, p;

	if (expect_len > XK_MAX_EXPECT || probe <= start ||
	    probe - start >= expect_len)
		return "the probe point is not inside the compared bytes";
	p = (__u32)(probe - start);
	for (__u32 i = 0; i < expect_len; i++) {
		if (mask[i] == 0xff) {
			run = 0;
			continue;
		}
		if (mask[i] != 0)
			return "an expected byte is masked in part";
		if (i < p)
			masked++;
		if (++run > XK_MAX_MASKED_RUN)
			return "too many consecutive expected bytes are not compared";
	}
	if (mask[0] != 0xff)
		return "the span's first byte is not compared";
	if (masked > p - masked)
		return "fewer bytes of the span are compared than not";
	if (mask[p] == 0xff)
		return 0;
	if (post_len) {
		for (__u32 i = p; i < expect_len; i++)
			if (mask[i])
				return "the instruction after a span probed on its "
				       "last is compared in part";
		return 0;
	}
	if (expect_len - p != XK_PATCHED_SITE_LEN)
		return "the byte under the probe point is not compared";
	for (__u32 i = p; i < expect_len; i++)
		if (mask[i])
			return "the byte under the probe point is not compared";
	return 0;
}

/* The first byte of a site that boot-time patching may rewrite: call, jmp,
 * ret (a return thunk), a 5-byte nop (__fentry__, a jump label), a short
 * jump or 2-byte nop (a jump label), an indirect call or jump, with a cs or
 * REX prefix (a retpoline). */
static inline int xk_rule_patched_site_byte(__u8 b)
{
	return b == 0xe8 || b == 0xe9 || b == 0xc3 || b == 0x0f || b == 0xeb ||
	       b == 0x66 || b == 0xff || b == 0x2e || b == 0x41;
}

/*
 * A store as the analysis emits memory locations: mov r/m8|16|32|64 from a
 * register (88, 89) or an immediate (c6 /0, c7 /0), or the arithmetic of
 * group 1 with an immediate (80, 81, 83 /0-/6: add, or, adc, sbb, and,
 * sub, xor to memory; /7, cmp, stores nothing), with an optional 66
 * and REX prefix, to [base + disp8|disp32], [base] or [rip + rel32]; no
 * index register, no segment. Decoded from the expected bytes at q: the
 * prefixes, opcode, ModRM, SIB and a register-based displacement must be
 * compared bytes; a rel32 or an immediate may be relocated. Returns the
 * instruction's length, or 0 if the bytes at q are no such store.
 */
struct xk_rule_store {
	__s32 base;		/* a register, or XK_BASE_RIP */
	__s64 disp;		/* [base + disp]; rip: 0 */
	__u32 field;		/* rip: offset of the rel32 from q */
	__u32 width;		/* bits stored */
};

static inline __u32 xk_rule_decode_store(const __u8 *b, const __u8 *mask,
					 __u32 n, __u32 q,
					 struct xk_rule_store *st)
{
	__u32 i = q, fixed, disp_len = 0, imm_len = 0;
	__u8 rex = 0, op, modrm, mod, rm;
	int opsize16 = 0;

	if (q >= n)
		return 0;
	if (b[i] == 0x66) {
		opsize16 = 1;
		if (++i >= n)
			return 0;
	}
	if ((b[i] & 0xf0) == 0x40) {
		rex = b[i];
		if (++i >= n)
			return 0;
	}
	op = b[i++];
	if (op != 0x88 && op != 0x89 && op != 0xc6 && op != 0xc7 &&
	    op != 0x80 && op != 0x81 && op != 0x83)
		return 0;
	if (i >= n)
		return 0;
	modrm = b[i++];
	mod = modrm >> 6;
	rm = modrm & 7;
	if (mod == 3 || ((op == 0xc6 || op == 0xc7) && (modrm & 0x38)) ||
	    ((op == 0x80 || op == 0x81 || op == 0x83) && (modrm & 0x38) == 0x38))
		return 0;
	st->field = 0;
	st->disp = 0;
	if (mod == 0 && rm == 5) {
		st->base = XK_BASE_RIP;
		st->field = i - q;
		disp_len = 4;
	} else {
		if (rm == 4) {		/* SIB: no index, a base */
			__u8 sib;

			if (i >= n)
				return 0;
			sib = b[i++];
			if (((sib >> 3) & 7) != 4 || (rex & 2) ||
			    (mod == 0 && (sib & 7) == 5))
				return 0;
			rm = sib & 7;
		}
		st->base = rm | ((rex & 1) << 3);
		disp_len = mod == 1 ? 1 : mod == 2 ? 4 : 0;
	}
	fixed = i;			/* prefixes to ModRM/SIB: compared */
	if (op == 0xc6 || op == 0x80 || op == 0x83)
		imm_len = 1;
	else if (op == 0xc7 || op == 0x81)
		imm_len = opsize16 && !(rex & 8) ? 2 : 4;
	if (n - i < disp_len + imm_len)
		return 0;
	if (st->base != XK_BASE_RIP) {
		__u32 d = 0;

		for (__u32 k = 0; k < disp_len; k++)
			d |= (__u32)b[i + k] << (8 * k);
		st->disp = disp_len == 1 ? (__s64)(__s8)d :
			   disp_len == 4 ? (__s64)(__s32)d : 0;
		fixed += disp_len;
	}
	for (__u32 k = q; k < fixed; k++)
		if (mask[k] != 0xff)
			return 0;
	st->width = op == 0x88 || op == 0xc6 || op == 0x80 ? 8 : rex & 8 ? 64 :
		    opsize16 ? 16 : 32;
	return i + disp_len + imm_len - q;
}

/*
 * One instruction the emulated form may skip (xk_rule_check_emulated):
 * arithmetic, logic, compares, moves, lea, movzx/movsx, shifts, imul,
 * cmov, setcc, cdq and a plain nop, with an optional 66 and REX prefix;
 * nothing that branches, calls, traps, takes a lock or a segment, writes
 * the stack pointer, or is a NOP the kernel patches into a jump or a call
 * (0f 1f, 66 90: jump-label, static-call and fentry sites). Decoded from
 * the expected bytes at q (prefixes, opcodes, ModRM and SIB compared;
 * displacements and immediates may be relocated): its length, or 0 if it
 * is none of them; *store: it writes memory; *dst: the general register
 * it writes (-1: none, or memory).
 */
#define XK_RULE_DST_RAX_RDX 17	/* *dst of mul, imul, div, idiv (muldiv) */

static inline __u32 xk_rule_decode_insn(const __u8 *b, const __u8 *mask,
					__u32 n, __u32 q, int *store, int *dst,
					int muldiv)
{
	__u32 i = q, fixed, disp = 0, imm = 0;
	__u8 rex = 0, op, op2 = 0, modrm = 0, mod = 3, rm = 0, grp = 0;
	int osz = 0, has_modrm = 0, writes_rm = 0, writes_reg = 0, lea = 0;
	int fixed_dst = -1, byte_op;
	__u32 imm32;

	*store = 0;
	*dst = -1;
	if (i < n && b[i] == 0x66) {
		osz = 1;
		i++;
	}
	if (i < n && (b[i] & 0xf0) == 0x40)
		rex = b[i++];
	if (i >= n)
		return 0;
	imm32 = osz && !(rex & 8) ? 2 : 4;	/* REX.W wins over 66 */
	op = b[i++];
	if (op == 0x0f) {
		if (i >= n)
			return 0;
		op2 = b[i++];
		if ((op2 & 0xf0) == 0x40 || op2 == 0xaf || op2 == 0xb6 ||
		    op2 == 0xb7 || op2 == 0xbe || op2 == 0xbf)
			has_modrm = writes_reg = 1;	/* cmovcc imul movzx movsx */
		else if ((op2 & 0xf0) == 0x90)
			has_modrm = writes_rm = 1;	/* setcc */
		else
			return 0;
	} else if (op < 0x40 && (op & 7) < 4) {
		has_modrm = 1;			/* add or adc sbb and sub xor cmp */
		if ((op >> 3) != 7) {
			writes_reg = !!(op & 2);
			writes_rm = !(op & 2);
		}
	} else if (op < 0x40 && (op & 7) == 4) {
		imm = 1;			/* ..., al, imm8 */
		fixed_dst = (op >> 3) != 7 ? 0 : -1;
	} else if (op < 0x40 && (op & 7) == 5) {
		imm = imm32;			/* ..., eax, imm32 */
		fixed_dst = (op >> 3) != 7 ? 0 : -1;
	} else if (op == 0x63) {
		has_modrm = writes_reg = 1;	/* movsxd */
	} else if (op == 0x84 || op == 0x85) {
		has_modrm = 1;			/* test */
	} else if (op == 0x69 || op == 0x6b) {
		has_modrm = writes_reg = 1;	/* imul r, r/m, imm */
		imm = op == 0x6b ? 1 : imm32;
	} else if (op == 0x80 || op == 0x81 || op == 0x83) {
		has_modrm = 1;			/* group 1, imm */
		imm = op == 0x81 ? imm32 : 1;
	} else if (op >= 0x88 && op <= 0x8b) {
		has_modrm = 1;			/* mov */
		writes_rm = op < 0x8a;
		writes_reg = op >= 0x8a;
	} else if (op == 0x8d) {
		has_modrm = lea = writes_reg = 1;
	} else if (op == 0x90 && !rex && !osz) {
		;				/* nop */
	} else if (op == 0x98 || op == 0x99) {
		fixed_dst = op == 0x98 ? 0 : 2;	/* cdqe: rax, cqo: rdx */
	} else if (op >= 0xb0 && op <= 0xbf) {
		imm = op < 0xb8 ? 1 : rex & 8 ? 8 : imm32;	/* mov r, imm */
		fixed_dst = (op & 7) | ((rex & 1) << 3);
		if (op < 0xb8 && !rex && (op & 7) >= 4)
			fixed_dst = 4;		/* ah..bh: refused below */
	} else if (op == 0xc0 || op == 0xc1 || (op >= 0xd0 && op <= 0xd3)) {
		has_modrm = writes_rm = 1;	/* shifts and rotates */
		imm = op <= 0xc1 ? 1 : 0;
	} else if (op == 0xc6 || op == 0xc7) {
		has_modrm = writes_rm = 1;	/* mov r/m, imm */
		imm = op == 0xc6 ? 1 : imm32;
	} else if (op == 0xf6 || op == 0xf7) {
		has_modrm = 1;			/* test imm, not, neg */
	} else {
		return 0;
	}
	if (has_modrm) {
		if (i >= n)
			return 0;
		modrm = b[i++];
		mod = modrm >> 6;
		rm = modrm & 7;
		grp = (modrm >> 3) & 7;
		if (op == 0x80 || op == 0x81 || op == 0x83)
			writes_rm = grp != 7;		/* cmp only reads */
		if ((op == 0xc0 || op == 0xc1 || (op >= 0xd0 && op <= 0xd3)) &&
		    grp == 6)
			return 0;			/* undefined shift */
		if ((op == 0xc6 || op == 0xc7) && grp)
			return 0;
		if (op == 0xf6 || op == 0xf7) {
			/* mul, imul, div, idiv: only when skipped (a division
			 * traps), writing rax and rdx */
			if (grp == 1 || (grp > 3 && !muldiv))
				return 0;
			if (grp > 3)
				fixed_dst = XK_RULE_DST_RAX_RDX;
			writes_rm = grp != 0 && grp <= 3;
			imm = grp ? 0 : op == 0xf6 ? 1 : imm32;
		}
		if (lea && mod == 3)
			return 0;
		if (mod != 3 && rm == 4) {
			__u8 sib;

			if (i >= n)
				return 0;
			sib = b[i++];
			if (mod == 0 && (sib & 7) == 5)
				disp = 4;
		}
		if (mod == 0 && rm == 5)
			disp = 4;			/* rip + rel32 */
		else if (mod == 1)
			disp = 1;
		else if (mod == 2)
			disp = 4;
	}
	fixed = i;
	for (__u32 k = q; k < fixed; k++)
		if (mask[k] != 0xff)
			return 0;
	if (n - i < disp + imm)
		return 0;
	/* an operation on 8-bit registers: without REX, registers 4 to 7
	 * are ah, ch, dh and bh, parts of rax to rbx, not rsp to rdi */
	byte_op = (op < 0x40 && (op & 7) < 4 && !(op & 1)) || op == 0x80 ||
		  op == 0x88 || op == 0x8a || op == 0xc0 || op == 0xc6 ||
		  op == 0xd0 || op == 0xd2 || op == 0xf6 ||
		  (op == 0x0f && (op2 & 0xf0) == 0x90);
	if (writes_reg)
		*dst = grp | ((rex & 4) << 1);
	else if (writes_rm && mod == 3)
		*dst = rm | ((rex & 1) << 3);
	else
		*dst = fixed_dst;
	/* ah..bh written: refused (a write to rcx, rdx or rbx must not pass
	 * for one to rbp, rsi or rdi); then the stack pointer */
	if (byte_op && !rex && (writes_reg || (writes_rm && mod == 3)) &&
	    *dst >= 4 && *dst <= 7)
		return 0;
	if (*dst == 4)
		return 0;
	*store = has_modrm && mod != 3 && writes_rm && !lea;
	return i + disp + imm - q;
}

/* The emulated form's instructions (no mul, imul, div or idiv). */
static inline __u32 xk_rule_decode_plain(const __u8 *b, const __u8 *mask,
					 __u32 n, __u32 q, int *store, int *dst)
{
	return xk_rule_decode_insn(b, mask, n, q, store, dst, 0);
}

/*
 * The bytes an emulated span skips, [start, probe): instructions
 * xk_rule_decode_plain accepts, back to back, ending exactly at the probe
 * point, of which at most the one at store (an offset from start, or
 * (__u32)-1 for none: the span's memory location, which the module
 * writes itself, from the registers at start) writes memory, and none
 * before it writes that store's base register (store_base, -1: rip).
 * Skipping them changes registers other than rsp and flags only, which
 * the rewrite writes anyway: the form adds no write.
 */
static inline const char *xk_rule_check_emulated(const __u8 *expect,
						 const __u8 *mask, __u64 start,
						 __u64 probe, __u32 store,
						 __s32 store_base)
{
	__u32 n = (__u32)(probe - start), q = 0;
	int stored = 0;

	if (probe <= start || probe - start > XK_MAX_EXPECT)
		return "the emulated span is empty or too long";
	while (q < n) {
		int st, dst;
		__u32 len = xk_rule_decode_plain(expect, mask, n, q, &st, &dst);

		if (!len)
			return "the emulated span has an instruction it may not skip";
		if (st && q != store)
			return "the emulated span writes memory other than its location";
		if (!stored && store != (__u32)-1 && dst >= 0 && dst == store_base)
			return "the emulated span changes its store's base register";
		stored |= st;
		q += len;
	}
	return 0;
}

/*
 * The bytes a replayed span skips (xk_ioc_span.emulate == XK_EMULATE_REPLAY):
 * [start, probe) are all instructions the emulated form may skip
 * (xk_rule_decode_plain). Unlike an emulated span, what the thread gets
 * instead is not the span's own result but the variant build's code for
 * the value in force (struct xk_ioc_replay); skipping a store of the
 * baseline writes nothing, so stores may be skipped too.
 */
static inline const char *xk_rule_check_replayed(const __u8 *expect,
						 const __u8 *mask, __u64 start,
						 __u64 probe)
{
	__u32 n = (__u32)(probe - start), q = 0;

	if (probe <= start || probe - start > XK_MAX_EXPECT)
		return "the replayed span is empty or too long";
	while (q < n) {
		int st, dst;
		/* skipped, a division cannot trap: muldiv too */
		__u32 len = xk_rule_decode_insn(expect, mask, n, q, &st, &dst, 1);

		if (!len)
			return "the replayed span has an instruction it may not skip";
		q += len;
	}
	return 0;
}

/*
 * A replay's store to [base + disp], width bits, with base's value at the
 * replayed span's start: the span's own bytes (the baseline's code,
 * decoded from start on) store there too, base unchanged before that
 * store, so the module writes only where the kernel itself writes at this
 * point. NULL, or why not.
 */
static inline const char *xk_rule_replay_store(const __u8 *expect,
					       const __u8 *mask, __u64 start,
					       __u64 probe, __s32 base,
					       __s64 disp, __u32 width)
{
	__u32 n = (__u32)(probe - start), q = 0, len;
	struct xk_rule_store st;
	int store, dst;

	if (probe <= start || probe - start > XK_MAX_EXPECT)
		return "the replayed span is empty or too long";
	for (; q < n; q += len) {
		len = xk_rule_decode_insn(expect, mask, n, q, &store, &dst, 1);
		if (!len)
			return "the replayed span has an instruction it may not skip";
		if (store && xk_rule_decode_store(expect, mask, n, q, &st) &&
		    st.base == base && st.disp == disp && st.width == width)
			return 0;
		if (dst == base || (dst == XK_RULE_DST_RAX_RDX &&
				    (base == XK_RAX || base == XK_RDX)))
			break;
	}
	return "a replay stores where the span itself does not (with the "
	       "base register it has at the span's start)";
}

/*
 * The next store, at an offset >= *q of the expected bytes and ending
 * before the probed instruction, that writes the memory location given:
 * its offset in *q and 0, or a phrase when there is none. The module then
 * makes sure *q is an instruction boundary (the bytes before a prefix may
 * belong to another instruction) and tries the next one if not.
 */
static inline const char *xk_rule_find_store(const __u8 *expect,
					     const __u8 *mask, __u32 expect_len,
					     __u64 start, __u64 probe,
					     __s32 base, __s64 disp,
					     __u64 rip_end, __u32 width,
					     __u32 *q)
{
	struct xk_rule_store st;
	__u32 before, len;

	if (expect_len > XK_MAX_EXPECT || probe <= start ||
	    probe - start >= expect_len)
		return "the probe point is not inside the compared bytes";
	before = (__u32)(probe - start);	/* the span's own instructions */
	for (; *q < before; (*q)++) {
		len = xk_rule_decode_store(expect, mask, before, *q, &st);
		if (!len || st.base != base || st.width != width)
			continue;
		if (base == XK_BASE_RIP) {
			/* xk_rule_check_loc bounded disp and rip_end */
			if ((__u64)disp - start == *q + st.field &&
			    rip_end - start == *q + len)
				return 0;
		} else if (st.disp == disp) {
			return 0;
		}
	}
	return "no compared instruction of the span stores to a memory location";
}

/*
 * After a memory location's store at q (xk_rule_find_store), up to the
 * probe point (before bytes from the span's start) where the module writes
 * [base + disp] with base's value there: every instruction is one the
 * decoder knows (xk_rule_decode_plain) and none writes base, so the module
 * writes where the span itself stored. Returns NULL, or why not.
 */
static inline const char *xk_rule_base_kept(const __u8 *expect,
					    const __u8 *mask, __u32 q,
					    __u32 before, __s32 base)
{
	struct xk_rule_store st;
	__u32 len = xk_rule_decode_store(expect, mask, before, q, &st);
	int store, dst;

	for (q += len; q < before; q += len) {
		len = xk_rule_decode_plain(expect, mask, before, q, &store, &dst);
		if (!len)
			return "an instruction between the store and the probe "
			       "point is not one the module can tell keeps the "
			       "store's base register";
		if (dst >= 0 && dst == base)
			return "the store's base register changes between the "
			       "store and the probe point";
	}
	return 0;
}

/*
 * The offset of the opcode of the instruction at q (past an optional 66
 * and REX prefix, as xk_rule_decode_insn reads them), or n if none.
 */
static inline __u32 xk_rule_opcode_at(const __u8 *b, __u32 n, __u32 q)
{
	if (q < n && b[q] == 0x66)
		q++;
	if (q < n && (b[q] & 0xf0) == 0x40)
		q++;
	return q < n ? q : n;
}

/*
 * Whether the instruction at q, one xk_rule_decode_insn accepted, writes
 * the arithmetic flags: add, or, adc, sbb, and, sub, xor, cmp, test, the
 * group-1 arithmetic, shifts and rotates, imul, neg, mul and div; not
 * mov, movzx/movsx/movsxd, lea, cmov, setcc, cdqe/cqo, not or nop.
 */
static inline int xk_rule_insn_writes_flags(const __u8 *b, __u32 n, __u32 q)
{
	__u32 i = xk_rule_opcode_at(b, n, q);
	__u8 op;

	if (i >= n)
		return 0;
	op = b[i++];
	if (op == 0x0f)
		return i < n && b[i] == 0xaf;		/* imul r, r/m */
	if (op < 0x40)
		return (op & 7) <= 5;
	if (op == 0xf6 || op == 0xf7)
		return i < n && ((b[i] >> 3) & 7) != 2;	/* but not */
	return op == 0x84 || op == 0x85 || op == 0x69 || op == 0x6b ||
	       (op >= 0x80 && op <= 0x83) || op == 0xc0 || op == 0xc1 ||
	       (op >= 0xd0 && op <= 0xd3);
}

/*
 * What a span's own instructions write: [start, probe) decoded back to
 * back from the span's first instruction with the rules' decoder
 * (xk_rule_decode_insn; mul and div too: they run as compiled), up to the
 * first instruction the decoder does not know, after which nothing is
 * known. *regs: a bit per general register written (mul, div: rax and
 * rdx, rax only for an 8-bit one), *flags: whether the flags are. The
 * caller makes sure start is an instruction boundary (the module: the
 * kprobes core decodes the live function there), or the instructions
 * decoded may be none the kernel runs.
 */
static inline void xk_rule_span_writes(const __u8 *expect, const __u8 *mask,
				       __u64 start, __u64 probe, __u32 *regs,
				       int *flags)
{
	__u32 n, q, len;
	int store, dst;

	*regs = 0;
	*flags = 0;
	if (probe <= start || probe - start > XK_MAX_EXPECT)
		return;
	n = (__u32)(probe - start);
	for (q = 0; q < n; q += len) {
		len = xk_rule_decode_insn(expect, mask, n, q, &store, &dst, 1);
		if (!len)
			return;
		if (dst == XK_RULE_DST_RAX_RDX)
			*regs |= 1u << XK_RAX |
				 (expect[xk_rule_opcode_at(expect, n, q)] == 0xf7 ?
				  1u << XK_RDX : 0);
		else if (dst >= 0 && dst < XK_NR_REGS)
			*regs |= 1u << dst;
		*flags |= xk_rule_insn_writes_flags(expect, n, q);
	}
}

/*
 * A register or flags location of a span (not replayed: a replay's
 * registers are the variant build's) must be one the span's own
 * instructions write (xk_rule_span_writes): the rewrite replaces the
 * output of an instruction the span covers, never a register it only
 * reads, such as a store's base or source. NULL, or a phrase naming the
 * location.
 */
static inline const char *xk_rule_loc_written(__s32 kind, __u32 regs,
					      int flags)
{
	static const char *const why[XK_NR_REGS + 1] = {
		"register rax is not written by the span's instructions",
		"register rcx is not written by the span's instructions",
		"register rdx is not written by the span's instructions",
		"register rbx is not written by the span's instructions",
		"register rsp is not written by the span's instructions",
		"register rbp is not written by the span's instructions",
		"register rsi is not written by the span's instructions",
		"register rdi is not written by the span's instructions",
		"register r8 is not written by the span's instructions",
		"register r9 is not written by the span's instructions",
		"register r10 is not written by the span's instructions",
		"register r11 is not written by the span's instructions",
		"register r12 is not written by the span's instructions",
		"register r13 is not written by the span's instructions",
		"register r14 is not written by the span's instructions",
		"register r15 is not written by the span's instructions",
		"the flags are not written by the span's instructions",
	};

	if (kind == XK_LOC_FLAGS)
		return flags ? 0 : why[XK_NR_REGS];
	if (kind >= 0 && kind < XK_NR_REGS)
		return regs & (1u << kind) ? 0 : why[kind];
	return 0;	/* memory: xk_rule_find_store */
}

static inline const char *xk_rule_check_range(__u64 from, __u64 to,
					      __u64 func_size)
{
	return from < to && to <= func_size ? 0 :
	       "a safe-span range lies outside the function";
}

/*
 * A span probed on its last instruction (post_len bytes before the probe
 * point, which is a branch target): that instruction lies inside the span
 * and is at most an x86 instruction long, and the span has no settleable
 * immediates (settle guards and rewrites at the probe point). The module
 * checks the boundary itself: kprobes decodes the instruction there.
 */
static inline const char *xk_rule_check_post(__u32 post_len, __u64 start,
					     __u64 probe, __u32 nr_imms)
{
	if (!post_len)
		return 0;
	if (post_len > 15 || probe - start < post_len)
		return "the probed last instruction lies outside the span";
	if (nr_imms)
		return "a span probed on its last instruction has settleable "
		       "immediates";
	return 0;
}

/*
 * A per-value span's parameters at one value N: the immediates a build
 * with N has where the baseline has the span's parameters (xk gen for the
 * values it builds, xk set for a new one, checked against that build).
 */
struct xk_point {
	__s64 n;
	__s64 p[XK_MAX_PARAMS];
};

/*
 * The points of a span: none (an affine span), or up to XK_MAX_POINTS
 * values, each once, the compiled-in one among them, within the bounds;
 * such a span is never settled (nr_imms 0).
 */
static inline const char *xk_rule_check_points(const struct xk_point *pt,
					       __u32 nr, __s64 def, __s64 min,
					       __s64 max, __u32 nr_imms)
{
	int has_def = 0;

	if (!nr)
		return 0;
	if (nr > XK_MAX_POINTS)
		return "more points than the limit";
	if (nr_imms)
		return "a per-value span has settleable immediates";
	for (__u32 i = 0; i < nr; i++) {
		if (pt[i].n < min || pt[i].n > max)
			return "a point lies outside the bounds";
		has_def |= pt[i].n == def;
		for (__u32 j = 0; j < i; j++)
			if (pt[j].n == pt[i].n)
				return "a value has two points";
	}
	return has_def ? 0 : "no point at the compiled-in value";
}

/*
 * A memory input of the update programs: [base + index * scale + disp]
 * read at the probe point, width bits (zero-extended); base a general
 * register, index one too when scale is 1, 2, 4 or 8 (0: none, as x86
 * addressing has it; rsp is never an index), |disp| at most
 * XK_MAX_LOAD_DISP. The runtime reads it fault-tolerantly, from kernel
 * addresses only.
 */
static inline const char *xk_rule_check_mem_in(__s32 base, __u32 width,
					       __s64 disp, __s32 index,
					       __u32 scale)
{
	if (base < 0 || base >= XK_NR_REGS)
		return "a memory input's base is not a general register";
	if (scale != 0 && scale != 1 && scale != 2 && scale != 4 && scale != 8)
		return "a memory input's scale is not 1, 2, 4 or 8";
	if (scale && (index < 0 || index >= XK_NR_REGS || index == XK_RSP))
		return "a memory input's index is not a general register but rsp";
	if (!xk_rule_width_ok(width))
		return "a memory input's width is malformed";
	if (disp > XK_MAX_LOAD_DISP || disp < -XK_MAX_LOAD_DISP)
		return "a memory input's displacement is past the limit";
	return 0;
}

/* The inputs a span's programs may name: its registers and memory inputs. */
static inline const char *xk_rule_check_inputs(const struct xk_expr *e,
					       __u32 nr_mem_in)
{
	for (__u32 i = 0; i < e->len && i < XK_EXPR_MAX_INSNS; i++)
		if (e->insn[i].op == XK_OP_REG &&
		    e->insn[i].reg >= XK_NR_REGS + nr_mem_in)
			return "a program reads a memory input the span does not have";
	return 0;
}

/*
 * Whether a variable a table names is a structure of the kernel's own
 * rather than a setting a constant initialises: the boot CPU's idle task
 * (init_task), the first credentials (init_cred), a module's own struct
 * module (__this_module), or a whole page-aligned page of data or bss
 * (page tables, stacks, the zero page). The analysis refuses such a span
 * by name (lib/analysis/forms/variables.c), the module again at load
 * (kmod/xk_data.c). page_aligned: the object starts on a page boundary.
 */
#define XK_RULE_PAGE_SIZE 4096

static inline int xk_rule_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

static inline int xk_rule_kernel_structure(const char *name, int page_aligned,
					   __u64 size)
{
	return xk_rule_streq(name, "init_task") ||
	       xk_rule_streq(name, "init_cred") ||
	       xk_rule_streq(name, "__this_module") ||
	       (page_aligned && size >= XK_RULE_PAGE_SIZE);
}

/*
 * Whether a variable a table names (name, or module:name) is one the
 * kernel's security depends on, which no table writes whatever it says:
 * lockdown, module loading and signing, the LSMs and their hooks,
 * integrity (IMA, EVM), BPF and perf's restrictions, kexec, the kernel's
 * pointers and log kept from users, address-space randomization and
 * mmap_min_addr, the helpers the kernel runs as root (modprobe, core
 * dumps, uevents, poweroff), the first task, credentials and namespaces,
 * seccomp and audit. A deny list by name (exact, or a prefix below), not a
 * proof: the module applies it with the other checks of xk_data.c.
 */
static inline int xk_rule_prefix(const char *s, const char *p)
{
	while (*p && *s == *p) {
		s++;
		p++;
	}
	return !*p;
}

static inline int xk_rule_security_variable(const char *name)
{
	static const char *const exact[] = {
		"sig_enforce", "kernel_locked_down", "modules_disabled",
		"kptr_restrict", "dmesg_restrict", "randomize_va_space",
		"core_pattern", "core_pipe_limit", "core_uses_pid",
		"modprobe_path", "uevent_helper", "poweroff_cmd",
		"suid_dumpable", "mmap_min_addr", "dac_mmap_min_addr",
		"mmap_rnd_bits", "mmap_rnd_compat_bits",
		"sysctl_unprivileged_bpf_disabled", "sysctl_perf_event_paranoid",
		"sysctl_unprivileged_userfaultfd", "unprivileged_userns_clone",
		"security_hook_heads", "static_calls_table", "cap_last_cap",
		"root_user", "cred_jar", "ptrace_scope", "panic_on_oops",
		"sysctl_panic_on_oops", "stack_guard_gap", "vm_mmap_min_addr",
	};
	static const char *const prefix[] = {
		"selinux", "apparmor", "aa_", "smack", "tomoyo", "landlock",
		"yama", "lockdown", "loadpin", "safesetid", "ipe_", "lsm_",
		"security_", "ima_", "evm_", "integrity_", "bpf_", "sysctl_bpf",
		"kexec", "module_sig", "init_", "usermodehelper_",
		"sysctl_protected_", "seccomp", "audit", "kptr_", "dmesg_",
		"cred_", "capability",
	};
	const char *colon = name;

	while (*colon && *colon != ':')
		colon++;
	if (*colon)
		name = colon + 1;
	for (__u32 i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (xk_rule_streq(name, exact[i]))
			return 1;
	for (__u32 i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (xk_rule_prefix(name, prefix[i]))
			return 1;
	return 0;
}

/* ---- settling: immediates rewritten in place ---- */

/*
 * An immediate that settling (xk settle) rewrites in the live text: the
 * instruction [insn, insn + insn_len) lies inside the span before the probe
 * point with every byte compared; the field [field, field + size) is inside
 * it, past its first byte (which a kprobe borrows while the field changes);
 * 1, 2, 4 or 8 bytes, read at an operand width of 8 to 64 bits no narrower.
 */
static inline const char *xk_rule_check_imm(__u64 insn, __u32 insn_len,
					    __u64 field, __u32 size,
					    __u32 width, __u64 start,
					    __u64 probe, __u32 expect_len,
					    const __u8 *mask)
{
	if (insn < start || insn_len == 0 || insn_len > 15 ||
	    insn > probe || probe - insn < insn_len)
		return "a settled instruction lies outside the span before the probe";
	if (probe - start > expect_len)
		return "the probe point is not inside the compared bytes";
	if (field <= insn || field - insn >= insn_len ||
	    insn_len - (field - insn) != size)
		return "an immediate field is not the last bytes of its instruction";
	if ((size != 1 && size != 2 && size != 4 && size != 8) ||
	    !xk_rule_width_ok(width) || width < size * 8)
		return "an immediate's size or operand width is malformed";
	/*
	 * From the instruction to the probe point, every byte compared: no
	 * call (its rel32 is relocated, never compared) where a thread could
	 * sleep after the old immediate and before the probe corrects it
	 */
	for (__u64 i = insn - start; i < probe - start; i++)
		if (mask[i] != 0xff)
			return "a settled instruction or what follows it up to the probe "
			       "point is not compared in full";
	return 0;
}

/*
 * Whether the instruction b[0..len) (every byte compared) carries an
 * immediate of size bytes as its last bytes, by its opcode: mov r, imm
 * (b0-bf), mov r/m, imm (c6/c7 /0), the group-1 arithmetic (80/81/83,
 * 04..3d with al/eax), imul r, r/m, imm (69/6b), test (a8/a9, f6/f7 /0)
 * and the shifts by imm8 (c0/c1). Legacy prefixes and REX are skipped.
 * Settling writes only such a field: never an opcode, a ModRM, SIB or
 * displacement byte. NULL, or why not.
 */
static inline const char *xk_rule_imm_opcode(const __u8 *b, __u32 len,
					     __u32 size)
{
	__u32 i = 0, want = 0, osz = 4;
	int rex_w = 0, reg;
	__u8 op;

	for (; i < len; i++) {
		__u8 p = b[i];

		if (p == 0x66)
			osz = 2;
		else if (p != 0xf2 && p != 0xf3 && p != 0x2e && p != 0x3e &&
			 p != 0x26 && p != 0x64 && p != 0x65 && p != 0x36 &&
			 p != 0xf0)
			break;
	}
	if (i < len && (b[i] & 0xf0) == 0x40) {
		rex_w = (b[i] >> 3) & 1;
		i++;
	}
	if (i >= len)
		return "a settled instruction has no opcode";
	op = b[i];
	reg = i + 1 < len ? (b[i + 1] >> 3) & 7 : -1;
	if (rex_w && osz == 4)
		osz = 4;	/* imm32, sign-extended, except mov r64, imm64 */
	if (op >= 0xb0 && op <= 0xb7)
		want = 1;
	else if (op >= 0xb8 && op <= 0xbf)
		want = rex_w ? 8 : osz;
	else if ((op == 0xc6 || op == 0xf6) && reg == 0)
		want = 1;
	else if ((op == 0xc7 || op == 0xf7) && reg == 0)
		want = osz;
	else if (op == 0x80 || op == 0x83 || op == 0x6b || op == 0xc0 ||
		 op == 0xc1 || op == 0xa8 || (op <= 0x3c && (op & 7) == 4))
		want = 1;
	else if (op == 0x81 || op == 0x69 || op == 0xa9 ||
		 (op <= 0x3d && (op & 7) == 5))
		want = osz;
	if (!want)
		return "a settled instruction's opcode carries no immediate";
	if (want != size)
		return "a settled field is not the instruction's immediate";
	return 0;
}

/*
 * The bytes (little endian) of the immediate a*n + b in a field of size
 * bytes that the instruction reads at width bits (sign-extending a narrower
 * field): NULL, or why the value has no such encoding (then the compiler
 * would have emitted another instruction, and the span keeps its probe).
 */
static inline const char *xk_rule_imm_bytes(__s64 a, __s64 b, __s64 n,
					    __u32 size, __u32 width,
					    __u8 out[8])
{
	__u64 m = width >= 64 ? ~0ULL : (1ULL << width) - 1, v, f, ext;
	__s64 an, y;

	if (__builtin_mul_overflow(a, n, &an) ||
	    __builtin_add_overflow(an, b, &y))
		return "the immediate overflows";
	v = (__u64)y & m;
	f = size >= 8 ? v : v & ((1ULL << (size * 8)) - 1);
	ext = f;
	if (size < 8 && (f >> (size * 8 - 1)) & 1)
		ext |= ~0ULL << (size * 8);
	if ((ext & m) != v)
		return "the value needs a longer immediate than the compiled one";
	for (__u32 i = 0; i < 8; i++)
		out[i] = i < size ? (__u8)(f >> (i * 8)) : 0;
	return 0;
}

/* ---- variables: data the constant initialises ---- */

/*
 * The bytes (little endian) of a*n + b in a variable's field of size bytes
 * (1, 2, 4 or 8): NULL, or why the value does not fit the field as a
 * signed or an unsigned number (the compiler would have refused the
 * initialiser, or truncated it: never written truncated).
 */
static inline const char *xk_rule_data_bytes(__s64 a, __s64 b, __s64 n,
					     __u32 size, __u8 out[8])
{
	__s64 an, y;

	if (__builtin_mul_overflow(a, n, &an) ||
	    __builtin_add_overflow(an, b, &y))
		return "the variable's value overflows";
	if (size < 8 && (y < -(1LL << (size * 8 - 1)) ||
			 y > (__s64)((1ULL << (size * 8)) - 1)))
		return "the variable's value does not fit its field";
	for (__u32 i = 0; i < 8; i++)
		out[i] = i < size ? (__u8)((__u64)y >> (i * 8)) : 0;
	return 0;
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
