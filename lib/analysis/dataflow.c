// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: data flow over one function's control-flow graph, for
 * spans.c: where control goes (df_successors), how many bits of a register
 * the code after a probe point reads (df_used_width), the safe span as a
 * forward thin slice of the derived value (df_slice_forward), and which
 * registers hold the function's arguments at a probe point
 * (df_locate_args). Every analysis here runs to its fixed point or refuses
 * the span naming what stopped it: a cap never truncates a result.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>

#include "dataflow.h"

/* Where control goes after instruction i, inside the function: 0 to
 * DF_MAX_SUCC (a fault's fixup too: it may be taken instead of any). */
int df_successors(const struct xk_func_code *code, size_t i,
		  size_t succ[DF_MAX_SUCC])
{
	const struct xk_insn *in = &code->insn[i];
	int ns = 0;

	if (in->fixup >= 0) {
		ssize_t t = xk_code_index(code, (uint64_t)in->fixup);

		if (t >= 0)
			succ[ns++] = t;
	}
	if (in->is_ret)
		return ns;
	if (in->target >= 0 && !in->is_call) {
		ssize_t t = xk_code_index(code, in->target);

		if (t >= 0)
			succ[ns++] = t;
	}
	if ((!in->is_branch || in->is_cond) && i + 1 < code->nr)
		succ[ns++] = i + 1;
	return ns;
}

/*
 * How many low bits of a register location the code after the probe point
 * reads before overwriting it: what a variant leaves in the other bits is
 * never observed, so the fit is checked, and the runtime writes, only those.
 */
static int read_width(const struct xk_func_code *code, size_t probe_idx, int reg,
		      int width, bool leaves);

int df_used_width(const struct xk_func_code *code, size_t probe_idx, int reg)
{
	return read_width(code, probe_idx, reg, 8, false);
}

/*
 * 0 when no path from idx reads reg before overwriting it, else the bits
 * read. Unlike df_used_width, control leaving the function counts: a
 * tail call reads the argument registers, a return rax and the
 * callee-saved ones (the caller's), a jump out of the function all.
 */
int df_reg_read(const struct xk_func_code *code, size_t idx, int reg)
{
	return read_width(code, idx, reg, 0, true);
}

static int read_width(const struct xk_func_code *code, size_t probe_idx, int reg,
		      int width, bool leaves)
{
	size_t n = code->nr;
	bool *seen = calloc(n, sizeof(bool));
	size_t *stack = calloc(DF_MAX_SUCC * (n + 1), sizeof(size_t)), sp = 0;

	if (!seen || !stack) {
		free(seen);
		free(stack);
		return 64;
	}
	stack[sp++] = probe_idx;
	while (sp && width < 64) {
		size_t i = stack[--sp];
		const struct xk_insn *in;
		bool killed = false;

		if (i >= n || seen[i])
			continue;
		seen[i] = true;
		in = &code->insn[i];
		for (int o = 0; o < in->x86.op_count; o++) {
			const cs_x86_op *op = &in->x86.operands[o];
			int w, g = -1;
			bool high8;

			if (op->type == X86_OP_REG)
				g = xk_gpr(op->reg, &w, &high8);
			if (op->type == X86_OP_MEM) {
				/* an address computed from it: all bits */
				if (xk_gpr(op->mem.base, NULL, NULL) == reg ||
				    xk_gpr(op->mem.index, NULL, NULL) == reg)
					width = 64;
				continue;
			}
			if (g != reg)
				continue;
			if (high8)
				w = 16;
			if (op->access & CS_AC_READ && w > width)
				width = w;
			if (op->access == CS_AC_WRITE && w >= 32)
				killed = true;
		}
		/* implicit reads (e.g. cqo, rep, shifts by cl) */
		for (int r = 0; r < in->nr_read; r++) {
			bool explicit = false;

			for (int o = 0; o < in->x86.op_count; o++)
				if (in->x86.operands[o].type == X86_OP_REG &&
				    in->x86.operands[o].reg == in->regs_read[r])
					explicit = true;
			if (!explicit && xk_gpr(in->regs_read[r], NULL, NULL) == reg)
				width = 64;
		}
		if (in->is_call) {
			if (reg == XK_RDI || reg == XK_RSI || reg == XK_RDX ||
			    reg == XK_RCX || reg == XK_R8 || reg == XK_R9)
				width = 64;
			if (reg == XK_RAX || reg == XK_R10 || reg == XK_R11)
				killed = true;
		}
		if (in->is_ret && reg == XK_RAX)
			width = 64;
		/* a tail call reads the argument registers as a call does,
		 * all their bits (the callee's parameter may be any width),
		 * whether or not leaving the function counts otherwise: a
		 * value passed on so is written whole, not its low byte */
		if (in->tail_call &&
		    (reg == XK_RDI || reg == XK_RSI || reg == XK_RDX ||
		     reg == XK_RCX || reg == XK_R8 || reg == XK_R9))
			width = 64;
		/* a return: the caller's callee-saved registers; a relocated
		 * jmp may be a tail call: its arguments too; any other jump out
		 * (a switch's table) or the end: everything */
		if (leaves && in->is_ret &&
		    (reg == XK_RBX || reg == XK_RBP || reg >= XK_R12 ||
		     (in->is_branch && (reg == XK_RDI || reg == XK_RSI ||
					reg == XK_RDX || reg == XK_RCX ||
					reg == XK_R8 || reg == XK_R9))))
			width = 64;
		if (leaves && ((in->is_branch && in->target < 0 && !in->is_ret) ||
			       (!in->is_branch && !in->is_ret && !in->is_call &&
				i + 1 == n)))
			width = 64;
		if (!killed)
			sp += df_successors(code, i, stack + sp);
	}
	free(seen);
	free(stack);
	return width;
}

/* Does the instruction read the arithmetic flags? */
bool df_reads_flags(const struct xk_insn *in)
{
	const char *m = in->text;

	/* static branches and static_cpu_has() sites are patched, not tested */
	return (in->is_cond && !in->jump_label && !in->alt_site) ||
	       !strncmp(m, "set", 3) || !strncmp(m, "cmov", 4) ||
	       in->id == X86_INS_SBB || in->id == X86_INS_ADC ||
	       in->id == X86_INS_PUSHF || in->id == X86_INS_PUSHFQ ||
	       in->id == X86_INS_LAHF;
}

/* Does it set every arithmetic flag a later instruction may test? */
static bool kills_flags(const struct xk_insn *in)
{
	switch (in->id) {
	case X86_INS_CMP: case X86_INS_TEST: case X86_INS_ADD:
	case X86_INS_SUB: case X86_INS_AND: case X86_INS_OR:
	case X86_INS_XOR: case X86_INS_NEG:
		return true;
	default:
		return false;
	}
}

/*
 * Whether a path from idx tests the flags before an instruction sets
 * them all: a call or a return ends them (the ABI keeps none), a jump out
 * of the function keeps them (conservatively live).
 */
bool df_flags_live(const struct xk_func_code *code, size_t idx)
{
	size_t n = code->nr;
	bool *seen = calloc(n, sizeof(bool));
	size_t *stack = calloc(DF_MAX_SUCC * (n + 1), sizeof(size_t)), sp = 0;
	bool live = false;

	if (!seen || !stack) {
		free(seen);
		free(stack);
		return true;
	}
	stack[sp++] = idx;
	while (sp && !live) {
		size_t i = stack[--sp];
		const struct xk_insn *in;

		if (i >= n) {
			live = true;	/* falls off the end */
			continue;
		}
		if (seen[i])
			continue;
		seen[i] = true;
		in = &code->insn[i];
		if (in->is_ret || in->is_call)
			continue;	/* the ABI keeps no flags: a return, a
					 * call, a tail call (a relocated jmp) */
		if (df_reads_flags(in) || (in->is_branch && in->target < 0 &&
					   !in->is_cond))
			live = true;	/* tested, or a jump out (a table) */
		else if (!kills_flags(in))
			sp += df_successors(code, i, stack + sp);
	}
	free(seen);
	free(stack);
	return live;
}

/* ---- the safe span: a forward thin slice ---- */

#define MAX_SLOTS 16

struct df_limits df_limits = {
	.stack_slots = MAX_SLOTS,
	.exits = XK_MAX_EXITS,
};

struct taint {
	uint32_t regs;		/* bit per GPR; bit 16: flags */
	int nr_slots;
	int64_t slot[MAX_SLOTS];	/* [rsp + d] or [rbp + d] (d | base<<56) */
	bool overflow;		/* a slot could not be recorded: refuse */
};

static int64_t slot_key(const cs_x86_op *op)
{
	int base = xk_gpr(op->mem.base, NULL, NULL);

	if (op->type != X86_OP_MEM || op->mem.index != X86_REG_INVALID ||
	    (base != XK_RSP && base != XK_RBP))
		return INT64_MIN;
	return op->mem.disp ^ ((int64_t)base << 56);
}

static bool slot_has(const struct taint *t, int64_t k)
{
	for (int i = 0; i < t->nr_slots; i++)
		if (t->slot[i] == k)
			return true;
	return false;
}

static void slot_set(struct taint *t, int64_t k, bool on)
{
	for (int i = 0; i < t->nr_slots; i++) {
		if (t->slot[i] == k) {
			if (!on)
				t->slot[i] = t->slot[--t->nr_slots];
			return;
		}
	}
	if (!on)
		return;
	if (t->nr_slots < df_limits.stack_slots && t->nr_slots < MAX_SLOTS)
		t->slot[t->nr_slots++] = k;
	else
		t->overflow = true;
}

static bool taint_merge(struct taint *into, const struct taint *from)
{
	bool changed = (into->regs | from->regs) != into->regs;

	into->regs |= from->regs;
	into->overflow |= from->overflow;
	for (int i = 0; i < from->nr_slots; i++) {
		if (!slot_has(into, from->slot[i])) {
			slot_set(into, from->slot[i], true);
			changed = true;
		}
	}
	return changed;
}

/* One instruction's effect on the taint; returns true if it consumed some. */
static bool taint_step(const struct xk_insn *in, struct taint *t,
		       uint32_t *escapes)
{
	const cs_x86 *x = &in->x86;
	bool src = false, dst_mem_nonstack = false;
	uint32_t written = 0;
	int64_t store_slot = INT64_MIN;

	for (int i = 0; i < in->nr_read; i++) {
		int g = xk_gpr(in->regs_read[i], NULL, NULL);

		if (g >= 0 && (t->regs & (1u << g)))
			src = true;
		if (in->regs_read[i] == X86_REG_EFLAGS && (t->regs & (1u << 16)))
			src = true;
	}
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type != X86_OP_MEM)
			continue;
		if (op->access & CS_AC_READ) {
			if (slot_has(t, slot_key(op)))
				src = true;
			/* the address itself derived: a load through it */
		}
		if (op->access & CS_AC_WRITE) {
			store_slot = slot_key(op);
			if (store_slot == INT64_MIN)
				dst_mem_nonstack = true;
		}
	}
	/* xor r, r and friends read nothing that matters */
	if (in->id == X86_INS_XOR && x->op_count == 2 &&
	    x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_REG &&
	    x->operands[0].reg == x->operands[1].reg)
		src = false;
	for (int i = 0; i < in->nr_write; i++) {
		int g = xk_gpr(in->regs_write[i], NULL, NULL);

		if (g >= 0 && g != XK_RSP)
			written |= 1u << g;
		if (in->regs_write[i] == X86_REG_EFLAGS)
			written |= 1u << 16;
	}
	if (in->is_call) {
		if (t->regs & 0x3c6u)	/* rdi rsi rdx rcx r8 r9 */
			*escapes |= XK_ESCAPE_CALL;
		src = src || (t->regs & 0x3c6u);
		written |= 0xf07u | (1u << 16);	/* caller-saved, flags */
		t->regs &= ~written;
		return src;
	}
	if (in->is_ret && (t->regs & 1u))
		*escapes |= XK_ESCAPE_RET;
	/* xadd %reg, mem (lock or not): the sum goes to memory and the flags,
	 * the register gets memory's old contents (derived when that slot
	 * is) */
	if (in->id == X86_INS_XADD && x->op_count == 2 &&
	    x->operands[0].type == X86_OP_MEM && x->operands[1].type == X86_OP_REG) {
		int width, g = xk_gpr(x->operands[1].reg, &width, NULL);
		bool old = slot_has(t, store_slot);

		src |= old;		/* the sum: memory's and the register's */
		/* a narrower register keeps the rest of what it held */
		old |= width < 32 && g >= 0 && (t->regs & (1u << g));
		if (src && dst_mem_nonstack)
			*escapes |= XK_ESCAPE_STORE;
		if (store_slot != INT64_MIN)
			slot_set(t, store_slot, src);
		t->regs = src ? t->regs | (1u << 16) : t->regs & ~(1u << 16);
		if (g >= 0)
			t->regs = old ? t->regs | (1u << g) : t->regs & ~(1u << g);
		return src;
	}
	if (src && dst_mem_nonstack)
		*escapes |= XK_ESCAPE_STORE;
	if (store_slot != INT64_MIN)
		slot_set(t, store_slot, src);
	if (src)
		t->regs |= written;
	else
		t->regs &= ~written;
	return src;
}

/*
 * The allocator a call (or tail call) calls, by its relocation's symbol,
 * and the register of its size argument (*size_reg), or NULL: kmalloc and
 * kvmalloc in every form (the _noprof entry points the inline wrappers
 * call), vmalloc, krealloc, kmem_cache_create, page (an order) and per-CPU
 * allocations. Only the size counts: derived data left in another argument
 * register is no argument of these. Pools' element counts (mempool) are
 * no size.
 */
static const char *allocator_called(const struct xk_func_code *code,
				    const struct xk_insn *in, int *size_reg)
{
	static const struct {
		const char *name;	/* without the _noprof suffix */
		int size_reg;
	} allocators[] = {
		{ "__kmalloc", XK_RDI }, { "__kmalloc_node", XK_RDI },
		{ "__kmalloc_cache", XK_RDX }, { "__kmalloc_cache_node", XK_RCX },
		{ "__kmalloc_large", XK_RDI }, { "__kmalloc_large_node", XK_RDI },
		{ "__kmalloc_node_track_caller", XK_RDI },
		{ "kmalloc_trace", XK_RDX }, { "kmalloc_node_trace", XK_RCX },
		{ "kmalloc_large", XK_RDI }, { "kmalloc_large_node", XK_RDI },
		{ "__kvmalloc_node", XK_RDI }, { "kvmalloc_node", XK_RDI },
		{ "kvrealloc", XK_RSI }, { "krealloc", XK_RSI },
		{ "__vmalloc", XK_RDI }, { "vmalloc", XK_RDI }, { "vzalloc", XK_RDI },
		{ "__vmalloc_node", XK_RDI }, { "vmalloc_node", XK_RDI },
		{ "vzalloc_node", XK_RDI }, { "vmalloc_user", XK_RDI },
		{ "__kmem_cache_create_args", XK_RSI }, { "__kmem_cache_create", XK_RSI },
		{ "kmem_cache_create", XK_RSI }, { "kmem_cache_create_usercopy", XK_RSI },
		{ "alloc_pages", XK_RSI }, { "__alloc_pages", XK_RSI },
		{ "alloc_pages_mpol", XK_RSI }, { "folio_alloc", XK_RSI },
		{ "__folio_alloc", XK_RSI }, { "__get_free_pages", XK_RSI },
		{ "__alloc_percpu", XK_RDI }, { "__alloc_percpu_gfp", XK_RDI },
		{ "devm_kmalloc", XK_RSI },
	};
	const char *callee = xk_callee_name(code->sym, in);	/* call, tail call */
	size_t len;

	if (!callee)
		return NULL;
	len = strlen(callee);
	if (len > 7 && !strcmp(callee + len - 7, "_noprof"))
		len -= 7;
	for (size_t i = 0; i < sizeof(allocators) / sizeof(allocators[0]); i++) {
		if (strlen(allocators[i].name) == len &&
		    !strncmp(callee, allocators[i].name, len)) {
			*size_reg = allocators[i].size_reg;
			return callee;
		}
	}
	return NULL;
}

/* bt, bts, btr, btc: a register operand is a bit offset into memory. */
static bool is_bit_op(const struct xk_insn *in)
{
	return in->id == X86_INS_BT || in->id == X86_INS_BTS ||
	       in->id == X86_INS_BTR || in->id == X86_INS_BTC;
}

/* The variable instruction in of the function names rip-relative: its
 * relocation's symbol (a section's for a static one) and the place in
 * that symbol's section; false when none. */
static bool insn_variable(const struct xk_func_code *code,
			  const struct xk_insn *in, const struct xk_sym **sym,
			  int64_t *place)
{
	const struct xk_rela *r = xk_insn_rela(code->sym, in);

	if (!r || !r->sym)
		return false;
	*sym = r->sym;
	*place = xk_insn_rela_place(code->sym, in, r);
	return true;
}

/* Whether an instruction of the function writes the variable at place of
 * sym's section (a store, an atomic add: any write to `var(%rip)`), or
 * writes rip-relative memory it cannot name. */
static bool function_writes(const struct xk_func_code *code,
			    const struct xk_sym *sym, int64_t place)
{
	for (size_t i = 0; i < code->nr; i++) {
		const struct xk_insn *in = &code->insn[i];
		const struct xk_sym *s;
		int64_t p;

		for (int o = 0; o < in->x86.op_count; o++) {
			const cs_x86_op *op = &in->x86.operands[o];

			if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP ||
			    !(op->access & CS_AC_WRITE) || in->id == X86_INS_LEA)
				continue;
			if (!insn_variable(code, in, &s, &p) ||
			    (s->sec == sym->sec && p == place))
				return true;
		}
	}
	return false;
}

/* A variable a compare weighed: section and place (insn_variable). */
struct weighed_var {
	const struct xk_sec *sec;
	int64_t place;
};

/*
 * Whether a path from instruction from reaches an access through an index
 * register (`(%rdx,%rax,4)`), a bit offset into memory (bt %reg, mem), a
 * load again of one of the nr variables in var (the value compared is not
 * the one used then: after a call, a READ_ONCE), or a branch out of the
 * function that is no call or return (a conditional tail call, an
 * unresolved site): where a count bounded by a compare would meet an
 * object, whichever register carries it (a copy, N minus it).
 */
static bool indexes_after(const struct xk_func_code *code, size_t from,
			  const struct weighed_var *var, int nr)
{
	size_t n = code->nr, sp = 0;
	bool *seen = calloc(n + 1, sizeof(bool));
	size_t *stack = calloc(DF_MAX_SUCC * (n + 1) + 1, sizeof(size_t));
	bool hit = false;

	if (!seen || !stack) {
		hit = true;	/* nothing proven */
		goto out;
	}
	if (from < n)
		stack[sp++] = from;
	while (sp && !hit) {
		size_t i = stack[--sp], succ[DF_MAX_SUCC];
		const struct xk_insn *in = &code->insn[i];
		const struct xk_sym *sym;
		int64_t place;
		int ns;

		if (seen[i])
			continue;
		seen[i] = true;
		for (int o = 0; o < in->x86.op_count && in->id != X86_INS_LEA; o++) {
			const cs_x86_op *op = &in->x86.operands[o];

			if (op->type != X86_OP_MEM)
				continue;
			if (op->mem.index != X86_REG_INVALID || is_bit_op(in))
				hit = true;
			if (op->mem.base == X86_REG_RIP && nr &&
			    insn_variable(code, in, &sym, &place))
				for (int v = 0; v < nr; v++)
					hit |= sym->sec == var[v].sec &&
					       place == var[v].place;
		}
		if (in->is_branch && !in->is_ret && !in->jump_label &&
		    !in->alt_site && xk_code_index(code, in->target) < 0)
			hit = true;
		ns = df_successors(code, i, succ);
		for (int k = 0; k < ns; k++)
			if (!seen[succ[k]])
				stack[sp++] = succ[k];
	}
out:
	free(seen);
	free(stack);
	return hit;
}

/* Whether a branch of the function goes to the instruction at off. */
static bool branch_target(const struct xk_func_code *code, uint64_t off)
{
	for (size_t i = 0; i < code->nr; i++)
		if (code->insn[i].target == (int64_t)off && !code->insn[i].is_call)
			return true;
	return false;
}

/*
 * Whether the registers in mask, at instruction from on, or any value
 * computed from them, address memory (base or index of an access), are
 * stored, pushed, passed to a call, returned or leave the function before
 * every path overwrites them. Runs over the function's paths, each
 * instruction's set of registers growing until it holds (bounded: a set
 * of 16 registers grows at most 16 times per instruction).
 */
static bool weighed_value_escapes(const struct xk_func_code *code, size_t from,
				  uint32_t mask)
{
	size_t n = code->nr, head = 0, tail = 0, rounds = 0;
	uint32_t *in_mask = calloc(n + 1, sizeof(*in_mask));
	size_t *queue = calloc(n * 17 + 1, sizeof(*queue));
	bool escapes = false;

	if (!in_mask || !queue) {
		escapes = true;		/* nothing proven */
		goto out;
	}
	if (from >= n)
		goto out;
	in_mask[from] = mask;
	queue[tail++] = from;
	while (head != tail && !escapes) {
		size_t i = queue[head++], succ[DF_MAX_SUCC];
		const struct xk_insn *in = &code->insn[i];
		const cs_x86 *x = &in->x86;
		uint32_t m = in_mask[i], written = 0, whole = 0;
		bool reads = false;
		int ns;

		if (++rounds > n * 17) {
			escapes = true;
			break;
		}
		for (int o = 0; o < x->op_count; o++) {
			const cs_x86_op *op = &x->operands[o];
			int b, ix;

			if (op->type == X86_OP_REG) {
				int g = xk_gpr(op->reg, NULL, NULL);

				if (g >= 0 && (m & (1u << g)) &&
				    (op->access & CS_AC_READ))
					reads = true;
				continue;
			}
			if (op->type != X86_OP_MEM)
				continue;
			b = xk_gpr(op->mem.base, NULL, NULL);
			ix = xk_gpr(op->mem.index, NULL, NULL);
			if ((b >= 0 && (m & (1u << b))) || (ix >= 0 && (m & (1u << ix)))) {
				if (in->id != X86_INS_LEA)
					escapes = true;	/* an address */
				reads = true;
			}
		}
		for (int r = 0; r < in->nr_read; r++) {
			int g = xk_gpr(in->regs_read[r], NULL, NULL);

			if (g >= 0 && g != XK_RSP && (m & (1u << g)))
				reads = true;
		}
		/* stored, or a bit offset into memory (bt %reg, mem) */
		for (int o = 0; o < x->op_count && reads; o++)
			if (x->operands[o].type == X86_OP_MEM && in->id != X86_INS_LEA &&
			    ((x->operands[o].access & CS_AC_WRITE) || is_bit_op(in)))
				escapes = true;
		if (reads && (in->id == X86_INS_PUSH || in->is_call || in->is_ret ||
			      in->is_branch || in->fixup == XK_FIXUP_ELSEWHERE))
			escapes = true;		/* spilled, passed on, jumped with */
		/* arguments and results are no operands of call and ret */
		if ((in->is_call && (m & 0x3c6u)) ||
		    (in->is_ret && (m & (0x3c6u | 1u))))
			escapes = true;
		if (in->is_ret || escapes)
			continue;
		for (int r = 0; r < in->nr_write; r++) {
			int width, g = xk_gpr(in->regs_write[r], &width, NULL);

			if (g < 0 || g == XK_RSP)
				continue;
			written |= 1u << g;
			if (width >= 32)	/* a narrower write keeps the rest */
				whole |= 1u << g;
		}
		if (in->is_call)
			written = whole = 0xfc7u;	/* caller-saved */
		m = reads ? m | written : m & ~whole;
		if (!m)
			continue;
		if (in->is_branch && !in->is_cond && xk_code_index(code, in->target) < 0) {
			escapes = true;		/* a tail jump out with it live */
			break;
		}
		ns = df_successors(code, i, succ);
		for (int k = 0; k < ns; k++) {
			if ((in_mask[succ[k]] | m) == in_mask[succ[k]])
				continue;
			in_mask[succ[k]] |= m;
			queue[tail++] = succ[k];
		}
		if ((!in->is_branch || in->is_cond) && i + 1 == n)
			escapes = true;		/* falls off the end */
	}
out:
	free(in_mask);
	free(queue);
	return escapes;
}

/*
 * The instruction that last wrote general register gpr before instruction
 * k on k's straight path (no join, call or jump between), or -1.
 */
static ssize_t straight_def(const struct xk_func_code *code, size_t k, int gpr)
{
	for (size_t j = k; j-- > 0;) {
		const struct xk_insn *p = &code->insn[j];
		const cs_x86 *x = &p->x86;
		bool writes = false;

		if (branch_target(code, code->insn[j + 1].off) || p->is_call ||
		    p->is_ret || (p->is_branch && !p->is_cond))
			return -1;
		for (int r = 0; r < p->nr_write; r++)
			writes |= xk_gpr(p->regs_write[r], NULL, NULL) == gpr;
		for (int o = 0; o < x->op_count; o++)
			writes |= x->operands[o].type == X86_OP_REG &&
				  (x->operands[o].access & CS_AC_WRITE) &&
				  xk_gpr(x->operands[o].reg, NULL, NULL) == gpr;
		if (writes)
			return (ssize_t)j;
	}
	return -1;
}

/*
 * Where general register gpr got what it holds at instruction k, when
 * that is a variable loaded on k's straight path (no join, call or jump
 * between) with `mov sym(%rip), %reg` (32 or 64 bits) that the function
 * never writes: a setting such as a sysctl's limit, neither an object a
 * call made nor a count the function keeps. -1 otherwise.
 */
static ssize_t loaded_variable(const struct xk_func_code *code, size_t k,
			       int gpr, struct weighed_var *var)
{
	ssize_t j = straight_def(code, k, gpr);
	const struct xk_insn *p = j >= 0 ? &code->insn[j] : NULL;
	const cs_x86 *x = p ? &p->x86 : NULL;
	const struct xk_sym *sym;
	int64_t place;

	if (!p || p->id != X86_INS_MOV || x->op_count != 2 ||
	    x->operands[0].type != X86_OP_REG || x->operands[0].size < 4 ||
	    x->operands[1].type != X86_OP_MEM ||
	    x->operands[1].mem.base != X86_REG_RIP ||
	    x->operands[1].mem.index != X86_REG_INVALID ||
	    x->operands[1].mem.segment != X86_REG_INVALID ||
	    !insn_variable(code, p, &sym, &place) ||
	    function_writes(code, sym, place))
		return -1;
	var->sec = sym->sec;
	var->place = place;
	return j;
}

/*
 * Whether the derived register gpr, at compare k, was computed on k's
 * straight path (no join, call or jump between) from a register that was
 * not derived, and what that register held is then used on an object
 * (weighed_value_escapes from there): N - used, with used an index or a
 * callee's argument. A value made before a join is not followed.
 */
static bool mixes_count(const struct xk_func_code *code, size_t k, int gpr,
			const struct taint *state)
{
	ssize_t j = straight_def(code, k, gpr);
	const struct xk_insn *p = j >= 0 ? &code->insn[j] : NULL;
	uint32_t inputs = 0;

	if (!p)
		return false;
	/* the instruction that made it: its register inputs not derived */
	for (int r = 0; r < p->nr_read; r++) {
		int g = xk_gpr(p->regs_read[r], NULL, NULL);

		if (g >= 0)
			inputs |= 1u << g;
	}
	for (int o = 0; o < p->x86.op_count; o++) {
		const cs_x86_op *op = &p->x86.operands[o];

		if (op->type == X86_OP_REG && (op->access & CS_AC_READ) &&
		    xk_gpr(op->reg, NULL, NULL) >= 0)
			inputs |= 1u << xk_gpr(op->reg, NULL, NULL);
		if (op->type == X86_OP_MEM && p->id == X86_INS_LEA) {
			int b = xk_gpr(op->mem.base, NULL, NULL);
			int ix = xk_gpr(op->mem.index, NULL, NULL);

			inputs |= (b >= 0 ? 1u << b : 0) | (ix >= 0 ? 1u << ix : 0);
		}
	}
	inputs &= ~(1u << XK_RSP) & ~state[j].regs;
	return inputs && weighed_value_escapes(code, (size_t)j, inputs);
}

/*
 * Whether the derived flags instruction i reads come from a compare that
 * weighs the value against a limit and nothing of another call's: the
 * flags' setter is a cmp or test on i's straight path (no join between);
 * each operand is an immediate, derived, or a register holding a variable
 * the function never writes, loaded on the compare's straight path
 * (loaded_variable), whose contents from the load on
 * weighed_value_escapes() clears; a derived operand made on the straight
 * path from a register not derived (N - used) whose contents do not escape
 * either (mixes_count); and no path after the compare indexes memory,
 * loads a weighed variable again or branches out (indexes_after).
 * Refused: golden_lazy_get's `cmp $N-1, %ebx; ja` (the index is what the
 * constant is weighed against), a count in memory (`cmp N, 8(%rdi)`: its
 * bytes may be read again), an argument, a count the function keeps
 * (G_HEAPCAP), N - used with used a callee's argument (G_HEAPSPACE) or
 * the index (G_HEAPROOM), a setting passed on (G_HEAPPASS). Taken: the user's total of pipe
 * buffers with the value added (alloc_pipe_info: lock xadd) weighed
 * against pipe_user_pages_hard. state: the taint entering each
 * instruction.
 */
static bool compare_weighs_no_object(const struct xk_func_code *code, size_t i,
				     const struct taint *state)
{
	struct weighed_var var[4];
	const struct xk_insn *cmp;
	ssize_t k, load;
	int nr = 0;

	for (k = (ssize_t)i - 1; k >= 0; k--) {
		const struct xk_insn *p = &code->insn[k];
		bool sets = false;

		if (branch_target(code, code->insn[k + 1].off) || p->is_branch ||
		    p->is_call || p->is_ret)
			return false;
		for (int r = 0; r < p->nr_write; r++)
			sets |= p->regs_write[r] == X86_REG_EFLAGS;
		if (sets)
			break;
	}
	if (k < 0)
		return false;
	cmp = &code->insn[k];
	if (cmp->id != X86_INS_CMP && cmp->id != X86_INS_TEST)
		return false;
	for (int o = 0; o < cmp->x86.op_count; o++) {
		const cs_x86_op *op = &cmp->x86.operands[o];
		int g;

		if (op->type == X86_OP_IMM)
			continue;
		if (op->type != X86_OP_REG)
			return false;	/* memory: its bytes may be read again */
		g = xk_gpr(op->reg, NULL, NULL);
		if (g < 0 || g == XK_RSP)
			return false;
		if (state[k].regs & (1u << g)) {
			if (mixes_count(code, (size_t)k, g, state))
				return false;
			continue;
		}
		if (nr == (int)(sizeof(var) / sizeof(var[0])))
			return false;
		load = loaded_variable(code, (size_t)k, g, &var[nr++]);
		/* its copies count from the load on */
		if (load < 0 || weighed_value_escapes(code, (size_t)load + 1, 1u << g))
			return false;
	}
	return !indexes_after(code, (size_t)k, var, nr);
}

/*
 * With df_limits.allocations_in_call (the heap of one call, forms/heap_call.c): what the
 * function may do with derived data so that each object it allocates is
 * sized and described under one value: compute with it (moves,
 * arithmetic, a compare whose flags nothing reads, or a compare against
 * nothing then used on an object: compare_weighs_no_object), store it
 * (what the call records or accounts: an atomic add too), pass it as an
 * allocator's size. Anything else reads the value against an object that
 * may be another call's (a bound, an index, a free's order, a callee's
 * argument, the caller's result): NULL when instruction in (state t
 * before it; state: the taint entering each instruction) is allowed, else
 * what it does.
 */
static const char *heap_call_use(const struct xk_func_code *code,
				 const struct xk_insn *in, const struct taint *t,
				 const struct taint *state)
{
	const cs_x86 *x = &in->x86;
	const char *callee;
	bool reads = false;
	int size_reg;

	for (int i = 0; i < in->nr_read; i++) {
		int g = xk_gpr(in->regs_read[i], NULL, NULL);

		if (in->regs_read[i] == X86_REG_EFLAGS && (t->regs & (1u << 16)) &&
		    !compare_weighs_no_object(code, (size_t)(in - code->insn), state))
			return "tests flags derived from the value (a compare with "
			       "what it then uses on an object)";
		if (g >= 0 && (t->regs & (1u << g)))
			reads = true;
	}
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		int b, ix;

		if (op->type != X86_OP_MEM)
			continue;
		b = xk_gpr(op->mem.base, NULL, NULL);
		ix = xk_gpr(op->mem.index, NULL, NULL);
		if (in->id == X86_INS_LEA) {	/* arithmetic: nothing is read */
			reads |= (b >= 0 && (t->regs & (1u << b))) ||
				 (ix >= 0 && (t->regs & (1u << ix)));
			continue;
		}
		if ((b >= 0 && (t->regs & (1u << b))) ||
		    (ix >= 0 && (t->regs & (1u << ix))))
			return "addresses memory with the value (an index, a bound)";
		if ((op->access & CS_AC_READ) && slot_has(t, slot_key(op)))
			reads = true;
	}
	callee = xk_callee_name(code->sym, in);
	if (in->is_ret && (!in->is_branch ||
			   (callee && !strcmp(callee, "__x86_return_thunk"))))
		return t->regs & 1u ? "returns the value" : NULL;
	if (in->is_call || (in->is_ret && in->is_branch)) {	/* tail call */
		uint32_t args = t->regs & 0x3c6u;	/* rdi rsi rdx rcx r8 r9 */

		if (!args || (allocator_called(code, in, &size_reg) &&
			      args == 1u << size_reg))
			return NULL;
		return "passes the value to a function, not as an allocator's size";
	}
	if (in->id == X86_INS_XOR && x->op_count == 2 &&
	    x->operands[0].type == X86_OP_REG && x->operands[1].type == X86_OP_REG &&
	    x->operands[0].reg == x->operands[1].reg)
		reads = false;
	if (!reads)
		return NULL;
	switch (in->id) {
	case X86_INS_MOV: case X86_INS_MOVZX: case X86_INS_MOVSX:
	case X86_INS_MOVSXD: case X86_INS_LEA: case X86_INS_ADD:
	case X86_INS_SUB: case X86_INS_SHL: case X86_INS_SHR: case X86_INS_SAR:
	case X86_INS_IMUL: case X86_INS_AND: case X86_INS_OR: case X86_INS_XOR:
	case X86_INS_NOT: case X86_INS_NEG: case X86_INS_INC: case X86_INS_DEC:
	case X86_INS_CMP: case X86_INS_TEST: case X86_INS_PUSH: case X86_INS_POP:
	case X86_INS_XADD:	/* an atomic add to memory: what the call accounts */
		return NULL;
	default:
		return "uses it in an instruction the rule does not take";
	}
}

int df_slice_forward(const struct xk_func_code *code, uint64_t func_size,
		     struct xk_scope_span *sp, size_t probe_idx)
{
	size_t n = code->nr;
	struct taint *in_state = calloc(n, sizeof(*in_state));
	bool *queued = calloc(n, sizeof(bool)), *in_slice = calloc(n, sizeof(bool));
	bool *is_exit = calloc(n + 1, sizeof(bool));
	size_t *queue = calloc(n * 4 + 4, sizeof(size_t)), qh = 0, qt = 0;
	/*
	 * The states only grow (registers and flags, then slots, join by
	 * union) and an instruction is queued once at a time, so the work is
	 * at most one round per instruction per growth of its state: past
	 * that bound the analysis is wrong, and says so.
	 */
	size_t rounds = 0, max_rounds = (n + 1) * (18 + MAX_SLOTS);
	int err = 0, nr_exits = 0;

	if (!in_state || !queued || !in_slice || !is_exit || !queue) {
		err = xk_err(-ENOMEM, "safe-span slice of %s: out of memory",
			     sp->func);
		goto out;
	}
	for (int l = 0; l < sp->nr_locs; l++) {
		const struct xk_scope_loc *loc = &sp->locs[l];

		if (loc->kind == XK_LOC_FLAGS)
			in_state[probe_idx].regs |= 1u << 16;
		else if (loc->kind == XK_LOC_MEM)
			sp->escapes |= XK_ESCAPE_STORE;
		else
			in_state[probe_idx].regs |= 1u << loc->kind;
	}
	queue[qt++] = probe_idx;
	queued[probe_idx] = true;
	while (qh != qt) {
		size_t i = queue[qh++ % (n * 4 + 4)];
		struct taint t = in_state[i];
		const struct xk_insn *in = &code->insn[i];
		size_t succ[DF_MAX_SUCC];
		const char *allocator, *heap_use;
		int ns = 0, size_reg;

		queued[i] = false;
		if (!t.regs && !t.nr_slots)
			continue;
		if (++rounds > max_rounds) {
			span_refuse(sp, "the safe-span slice did not reach its fixed "
					"point within %zu rounds", max_rounds);
			err = -ENOTSUP;
			goto out;
		}
		/* the object's instructions, the kernel's maybe not: an
		 * alternative's site the slice cannot read for both */
		if (in->alt_differs) {
			span_refuse(sp, "+0x%lx %s: an alternative's site with derived "
					"data live, and %s: the safe span cannot follow "
					"what the kernel may run there",
				    (unsigned long)in->off, in->text, in->alt_differs);
			err = -ENOTSUP;
			goto out;
		}
		/* jmp *%rax, or a relocated jmp neither a return nor a
		 * static_cpu_has() site (one whose aux code is no feature test) */
		if (in->is_branch && !in->is_cond && !in->is_ret &&
		    (in->has_reloc || in->x86.op_count != 1 ||
		     in->x86.operands[0].type != X86_OP_IMM)) {
			span_refuse(sp, "+0x%lx %s: an indirect jump with derived "
					"data live (its targets are not known)",
				    (unsigned long)in->off, in->text);
			err = -ENOTSUP;
			goto out;
		}
		/* a jcc out of the function: into its .cold part (the thread
		 * comes back with the data) or a conditional tail call (the
		 * data leaves in an argument): outside every range of the
		 * safe span, and no escape records it */
		if (in->is_cond && !in->alt_site &&
		    (in->has_reloc || in->target < 0 ||
		     (uint64_t)in->target >= func_size)) {
			span_refuse(sp, "+0x%lx %s: a conditional jump out of the "
					"function (a .cold part or a conditional tail "
					"call) with derived data "
					"live: the safe span does not follow the thread "
					"there", (unsigned long)in->off, in->text);
			err = -ENOTSUP;
			goto out;
		}
		if (in->fixup == XK_FIXUP_ELSEWHERE) {
			span_refuse(sp, "+0x%lx %s: a fault there resumes outside "
					"the function (exception table), with derived "
					"data live", (unsigned long)in->off, in->text);
			err = -ENOTSUP;
			goto out;
		}
		/*
		 * Derived data in an allocator's arguments sizes a heap object:
		 * objects allocated before a retune (swapon's per-CPU slot
		 * arrays, kvcalloc(SWAP_SLOTS_CACHE_SIZE)) would be filled by
		 * code running the new value, and objects allocated under it
		 * by code running the compiled-in one after unload. Nothing
		 * here follows the object, so the use is refused, and the
		 * runtime refuses any value but the default, --partial or not.
		 */
		if (df_limits.allocations_in_call &&
		    (heap_use = heap_call_use(code, in, &t, in_state))) {
			span_refuse(sp, "+0x%lx %s: the value sizes heap objects, "
					"and the call %s: objects of another call "
					"may meet it", (unsigned long)in->off,
				    in->text, heap_use);
			err = -ENOTSUP;
			goto out;
		}
		if (!df_limits.allocations_in_call &&
		    (in->is_call || (in->is_ret && in->is_branch)) &&
		    (allocator = allocator_called(code, in, &size_reg)) &&
		    (t.regs & (1u << size_reg))) {
			span_refuse(sp, "+0x%lx %s: the value " XK_WHY_HEAP "the "
					"size argument of %s: what was allocated under "
					"one value would be used under another",
				    (unsigned long)in->off, in->text, allocator);
			err = -ENOTSUP;
			goto out;
		}
		if (taint_step(in, &t, &sp->escapes))
			in_slice[i] = true;
		/* an allocator is a C function: its size argument's register
		 * holds nothing of the caller's after it */
		if (df_limits.allocations_in_call && in->is_call &&
		    allocator_called(code, in, &size_reg))
			t.regs &= ~(1u << size_reg);
		if (t.overflow) {
			span_refuse(sp, "+0x%lx %s: derived data in more than %d stack "
					"slots: the safe-span slice would be cut short",
				    (unsigned long)in->off, in->text,
				    df_limits.stack_slots);
			err = -ENOTSUP;
			goto out;
		}
		if (!t.regs && !t.nr_slots) {
			/* the derived value is dead after this instruction */
			if (i + 1 <= n)
				is_exit[i + 1] = true;
			continue;
		}
		if (in->is_ret || (in->is_branch && !in->is_cond && !in->has_reloc &&
				   in->x86.op_count == 1 &&
				   in->x86.operands[0].type == X86_OP_IMM &&
				   xk_code_index(code, (uint64_t)in->target) < 0))
			is_exit[i] = true;	/* the thread leaves the function
						 * (a return, a tail call, a jump
						 * the assembler resolved to a
						 * static function) */
		ns = df_successors(code, i, succ);
		for (int k = 0; k < ns; k++) {
			if (taint_merge(&in_state[succ[k]], &t) && !queued[succ[k]]) {
				queued[succ[k]] = true;
				queue[qt++ % (n * 4 + 4)] = succ[k];
			}
		}
	}
	sp->slice_len = 0;
	for (size_t i = 0; i < n; i++)
		sp->slice_len += in_slice[i];
	/* where a thread holds derived data: the critical span, then every
	 * instruction reached with taint live, as ranges of offsets */
	sp->nr_ranges = 0;
	for (size_t i = 0; i < n; i++) {
		bool live = (code->insn[i].off >= sp->start && i <= probe_idx) ||
			    in_state[i].regs || in_state[i].nr_slots;
		uint64_t from = code->insn[i].off;
		uint64_t to = from + code->insn[i].len;

		if (!live)
			continue;
		if (sp->nr_ranges && sp->ranges[sp->nr_ranges - 1][1] == from) {
			sp->ranges[sp->nr_ranges - 1][1] = to;
		} else if (sp->nr_ranges < XK_MAX_RANGES) {
			sp->ranges[sp->nr_ranges][0] = from;
			sp->ranges[sp->nr_ranges++][1] = to;
		} else {
			/* too fragmented: one conservative range to the end */
			sp->ranges[sp->nr_ranges - 1][1] = func_size;
			break;
		}
	}
	/* kprobes refuses a jump-label site (the kernel patches its bytes)
	 * and a BUG/WARN site: an exit there moves on to where the site goes,
	 * which it reaches touching no data (a BUG that never returns needs
	 * none); a jump-label site whose target is unknown refuses the span */
	for (size_t round = 0, moved = 1; moved && round <= n; round++) {
		moved = 0;
		for (size_t i = 0; i < n; i++) {
			size_t succ[DF_MAX_SUCC];
			int ns;

			if (!is_exit[i] || !code->insn[i].unprobeable)
				continue;
			ns = df_successors(code, i, succ);
			if (code->insn[i].jump_label && (!code->insn[i].is_cond || !ns)) {
				span_refuse(sp, "+0x%lx: an exit of the safe span is "
						"a jump-label site whose target is not "
						"known", (unsigned long)code->insn[i].off);
				err = -ENOTSUP;
				goto out;
			}
			is_exit[i] = false;
			for (int k = 0; k < ns; k++)
				is_exit[succ[k]] = true;
			moved = 1;
		}
	}
	for (size_t i = 0; i <= n; i++)
		nr_exits += is_exit[i];
	if (nr_exits > df_limits.exits || nr_exits > XK_MAX_EXITS) {
		span_refuse(sp, "the safe span has %d exits, more than the %d a "
				"table may hold", nr_exits,
			    df_limits.exits < XK_MAX_EXITS ? df_limits.exits :
							     XK_MAX_EXITS);
		err = -ENOTSUP;
		goto out;
	}
	sp->nr_exits = 0;
	for (size_t i = 0; i <= n; i++)
		if (is_exit[i])
			sp->exits[sp->nr_exits++] =
				i < n ? code->insn[i].off : func_size;
out:
	free(in_state);
	free(queued);
	free(in_slice);
	free(is_exit);
	free(queue);
	return err;
}

/* ---- the function's arguments at the probe point, for policies ---- */

static const int abi_args[XK_MAX_ARGS] = {
	XK_RDI, XK_RSI, XK_RDX, XK_RCX, XK_R8, XK_R9,
};

/*
 * What instruction in does to the argument map (register -> argument).
 * fentry: the __fentry__ call opening the function, which preserves all.
 */
static void args_step(const struct xk_insn *in, bool fentry, int8_t *map)
{
	const cs_x86_op *o0 = &in->x86.operands[0], *o1 = &in->x86.operands[1];
	int8_t copy = -1;
	int w0, w1;

	if (in->id == X86_INS_MOV && in->x86.op_count == 2 &&
	    o0->type == X86_OP_REG && o1->type == X86_OP_REG &&
	    xk_gpr(o0->reg, &w0, NULL) >= 0 && xk_gpr(o1->reg, &w1, NULL) >= 0 &&
	    w0 == 64 && w1 == 64)
		copy = map[xk_gpr(o1->reg, NULL, NULL)];
	for (int i = 0; i < in->nr_write; i++) {
		int g = xk_gpr(in->regs_write[i], NULL, NULL);

		if (g >= 0)
			map[g] = -1;
	}
	if (in->is_call && !fentry) {
		static const int clobbered[] = { XK_RAX, XK_RCX, XK_RDX, XK_RSI,
			XK_RDI, XK_R8, XK_R9, XK_R10, XK_R11 };

		for (size_t i = 0; i < ARRAY_SIZE(clobbered); i++)
			map[clobbered[i]] = -1;
	}
	if (copy >= 0)
		map[xk_gpr(o0->reg, NULL, NULL)] = copy;
}

/*
 * Which register holds each of the function's register arguments at the
 * probe point, on every path from the entry: a forward must-analysis over
 * the function (moves between 64-bit registers copy, any other write and
 * calls clobber). Policies read their context (a request, a socket) from
 * there. A function with an indirect jump is not analysed.
 */
int df_locate_args(const struct xk_func_code *code, struct xk_scope_span *sp, size_t probe)
{
	size_t n = code->nr, *work, nw = 0;
	int8_t (*map)[XK_NR_REGS];
	bool *seen, *queued;

	for (int a = 0; a < XK_MAX_ARGS; a++)
		sp->arg_reg[a] = -1;
	for (size_t i = 0; i < n; i++) {
		const struct xk_insn *in = &code->insn[i];

		if (in->is_branch && !in->is_cond && in->target < 0 && !in->is_ret)
			return 0;
	}
	map = calloc(n, sizeof(*map));
	seen = calloc(n, sizeof(*seen));
	queued = calloc(n, sizeof(*queued));
	/* an instruction is on the work list at most once: n entries */
	work = calloc(n + 1, sizeof(*work));
	if (!map || !seen || !queued || !work) {
		free(map);
		free(seen);
		free(queued);
		free(work);
		return xk_err(-ENOMEM, "arguments of %s: out of memory", sp->func);
	}
	memset(map[0], -1, sizeof(map[0]));
	for (int a = 0; a < XK_MAX_ARGS; a++)
		map[0][abi_args[a]] = a;
	seen[0] = true;
	queued[0] = true;
	work[nw++] = 0;
	while (nw) {
		size_t i = work[--nw], succ[DF_MAX_SUCC];
		int8_t out[XK_NR_REGS];
		int ns;

		queued[i] = false;
		memcpy(out, map[i], sizeof(out));
		args_step(&code->insn[i], i == 0 || (i == 1 &&
			  code->insn[0].id == X86_INS_ENDBR64), out);
		ns = df_successors(code, i, succ);
		for (int k = 0; k < ns; k++) {
			size_t t = succ[k];
			bool changed = !seen[t];

			if (!seen[t]) {
				memcpy(map[t], out, sizeof(out));
				seen[t] = true;
			} else {
				for (int g = 0; g < XK_NR_REGS; g++) {
					if (map[t][g] >= 0 && map[t][g] != out[g]) {
						map[t][g] = -1;
						changed = true;
					}
				}
			}
			/* a value only loses information: this terminates */
			if (changed && !queued[t]) {
				queued[t] = true;
				work[nw++] = t;
			}
		}
	}
	if (seen[probe]) {
		/* callee-saved registers first: they are the likelier home */
		static const int order[] = { XK_RBX, XK_RBP, XK_R12, XK_R13, XK_R14,
			XK_R15, XK_RDI, XK_RSI, XK_RDX, XK_RCX, XK_R8, XK_R9,
			XK_RAX, XK_R10, XK_R11 };

		for (size_t k = 0; k < ARRAY_SIZE(order); k++) {
			int a = map[probe][order[k]];

			if (a >= 0 && sp->arg_reg[a] < 0)
				sp->arg_reg[a] = order[k];
		}
	}
	free(map);
	free(seen);
	free(queued);
	free(work);
	return 0;
}

/*
 * How instruction in touches general register gpr: *reads when an operand,
 * an address or an implicit read uses it, *writes when it writes it (any
 * width: a partial write keeps part of the old value, which counts too).
 */
void df_touches_gpr(const struct xk_insn *in, int gpr, bool *reads,
		    bool *writes)
{
	*reads = *writes = false;
	for (int o = 0; o < in->x86.op_count; o++) {
		const cs_x86_op *op = &in->x86.operands[o];

		if (op->type == X86_OP_MEM)
			*reads |= xk_gpr(op->mem.base, NULL, NULL) == gpr ||
				  xk_gpr(op->mem.index, NULL, NULL) == gpr;
		else if (op->type == X86_OP_REG && xk_gpr(op->reg, NULL, NULL) == gpr) {
			*reads |= !!(op->access & CS_AC_READ);
			*writes |= !!(op->access & CS_AC_WRITE);
		}
	}
	for (int r = 0; r < in->nr_read; r++)
		*reads |= xk_gpr(in->regs_read[r], NULL, NULL) == gpr;
	for (int r = 0; r < in->nr_write; r++)
		*writes |= xk_gpr(in->regs_write[r], NULL, NULL) == gpr;
	if (in->is_call)	/* arguments read, caller-saved clobbered */
		*reads = *writes = true;
}

/* Whether an instruction of f leaves it for another function's code. */
bool df_leaves_function(const struct xk_sym *f, const struct xk_insn *in)
{
	return (in->is_call || in->is_branch) && !in->has_reloc &&
	       (in->target < 0 || (uint64_t)in->target >= f->sym.st_size);
}

/*
 * A branch of f that leaves it but for a return or a tail call: a
 * jump-label site out of the function, an indirect jump, a relocated
 * branch to anything but a function's start or an external symbol (a
 * .cold part: the thread comes back), a conditional jump into another
 * function. What the replayed form cannot
 * follow, and what the call-state form refuses: its safe span is the
 * whole call.
 */
const char *df_unfollowable_branch(const struct xk_sym *f,
				   const struct xk_func_code *code, char *buf,
				   size_t size)
{
	for (size_t i = 0; i < code->nr; i++) {
		const struct xk_insn *in = &code->insn[i];
		const struct xk_rela *r = xk_insn_rela(f, in);

		if (in->jump_label && !in->is_cond) {
			snprintf(buf, size, "+0x%llx: a jump-label site whose target "
				 "is not in the function", (unsigned long long)in->off);
			return buf;
		}
		if (in->id == X86_INS_JMP && in->x86.op_count == 1 &&
		    in->x86.operands[0].type != X86_OP_IMM) {
			snprintf(buf, size, "+0x%llx %.60s: an indirect jump",
				 (unsigned long long)in->off, in->text);
			return buf;
		}
		if ((in->is_branch || in->is_ret) && r && r->sym && !in->alt_site &&
		    !(r->sym->sym.st_shndx == SHN_UNDEF ||
		      (r->sym->is_func && !strstr(r->sym->name, ".cold") &&
		       r->addend == -4))) {
			snprintf(buf, size, "+0x%llx %.60s: a jump to %.80s%+lld, no "
				 "function's start", (unsigned long long)in->off,
				 in->text, r->sym->name, (long long)r->addend);
			return buf;
		}
		if (in->is_cond && df_leaves_function(f, in)) {
			snprintf(buf, size, "+0x%llx %.60s: a conditional jump into "
				 "another function", (unsigned long long)in->off,
				 in->text);
			return buf;
		}
	}
	return NULL;
}
