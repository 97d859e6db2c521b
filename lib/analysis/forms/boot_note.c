// SPDX-License-Identifier: GPL-2.0
/*
 * Form: boot-time code in which the value changes nothing a retune could
 * carry, a note instead of a span. In rcu_init() the constant only decides
 * whether a boot message is logged (if (blimit != DEFAULT_RCU_BLIMIT)
 * pr_info(...)); in sched_init() it only arms deadlines once (jiffies +
 * LOAD_FREQ, stored). Anything else the function does with the value, and
 * the boot-code forms after this one decide.
 */
#include "dataflow.h"
#include "form.h"

/* Whether baseline instruction i is a call of the kernel's printk (its
 * rel32 names _printk). */
static bool calls_printk(const struct form_fn *fn, size_t i)
{
	const struct xk_insn *in = &fn->base->insn[i];
	const char *callee = in->is_call ? xk_callee_name(fn->fb, in) : NULL;

	return callee && !strcmp(callee, "_printk");
}

static bool caller_saved(int gpr)
{
	return gpr == XK_RAX || gpr == XK_RCX || gpr == XK_RDX || gpr == XK_RSI ||
	       gpr == XK_RDI || (gpr >= XK_R8 && gpr <= XK_R11);
}

/*
 * Whether the block [from, to) of straight-line code only logs: moves
 * into caller-saved registers (arguments), ending with a call of printk
 * at to - 1. No store, no other call: what a path through it leaves is
 * the kernel log, and registers the call clobbers anyway.
 */
static bool only_logs(const struct form_fn *fn, size_t from, size_t to)
{
	if (to <= from || !calls_printk(fn, to - 1))
		return false;
	for (size_t i = from; i + 1 < to; i++) {
		const struct xk_insn *in = &fn->base->insn[i];
		const cs_x86 *x = &in->x86;
		int width, gpr;
		bool high;

		if (fn->target[i] && i != from)
			return false;	/* another path joins inside */
		if ((in->id != X86_INS_MOV && in->id != X86_INS_MOVABS &&
		     in->id != X86_INS_LEA && in->id != X86_INS_XOR) ||
		    x->op_count != 2 || x->operands[0].type != X86_OP_REG)
			return false;
		gpr = xk_gpr(x->operands[0].reg, &width, &high);
		if (gpr < 0 || !caller_saved(gpr) ||
		    (in->id == X86_INS_XOR && (x->operands[1].type != X86_OP_REG ||
					       x->operands[1].reg != x->operands[0].reg)))
			return false;
	}
	return !fn->target[to - 1] || to - 1 == from;
}

/* Appends the n-th use's offset to a note being built (why, *len bytes
 * so far, or negative once it did not fit): " +0x10", ", +0x20". */
static void note_offset(char *why, size_t size, int *len, int n, uint64_t off)
{
	if (*len > 0 && (size_t)*len < size)
		*len += snprintf(why + *len, size - *len, "%s +0x%llx", n ? "," : "",
				 (unsigned long long)off);
}

/*
 * Boot-time code in which the constant only decided whether a message
 * went to the kernel log: each use is `cmp $N, x` and a jcc, one side of
 * which is a call of printk (only_logs) and comes back where the other
 * goes, with the flags dead on both. rcu_init() tells that way that a
 * parameter differs from its default (if (blimit != DEFAULT_RCU_BLIMIT)
 * pr_info(...)). That code ran once, at boot: a kernel built with another
 * value differs from this one by a line of the boot log at most, nothing
 * the retune could or should reproduce. The note for the table (why) names
 * the uses; any other change in the function, or any other shape, and it
 * is refused as boot-time code.
 */
static bool boot_log_only(const struct form_fn *fn, char *why, size_t size)
{
	int n = 0, len;

	len = snprintf(why, size, "%s %s (boot-time code, %s): the constant only "
		       "decided whether it logged a boot message, at", fn->in->object,
		       fn->fb->name, fn->fb->sec->name);
	for (size_t i = 0; i < fn->base->nr; i++) {
		const struct xk_insn *cmp = &fn->base->insn[i], *jcc;
		size_t t;

		if (fn->other[i])
			return false;
		if (!fn->seed[i])
			continue;
		if (cmp->id != X86_INS_CMP || i + 2 >= fn->base->nr)
			return false;
		jcc = &fn->base->insn[i + 1];
		if (!jcc->is_cond || jcc->jump_label || jcc->alt_site ||
		    jcc->target <= (int64_t)jcc->off || fn->target[i + 1])
			return false;
		t = (size_t)xk_code_index(fn->base, (uint64_t)jcc->target);
		/* printk's return value (rax) unread where the paths join */
		if ((ssize_t)t < 0 || !only_logs(fn, i + 2, t) ||
		    df_flags_live(fn->base, i + 2) || df_flags_live(fn->base, t) ||
		    df_reg_read(fn->base, t, XK_RAX))
			return false;
		note_offset(why, size, &len, n++, cmp->off);
	}
	return n > 0 && len > 0 && (size_t)len < size;
}

/* Whether baseline instruction i loads the kernel's tick count (`mov
 * jiffies(%rip), %reg`, 64 bits) into general register gpr. */
static bool loads_jiffies(const struct form_fn *fn, size_t i, int gpr)
{
	const struct xk_insn *in = &fn->base->insn[i];
	const cs_x86 *x = &in->x86;
	const struct xk_rela *r;
	int width;

	if (in->id != X86_INS_MOV || x->op_count != 2 ||
	    x->operands[0].type != X86_OP_REG || x->operands[1].type != X86_OP_MEM ||
	    x->operands[1].mem.base != X86_REG_RIP ||
	    xk_gpr(x->operands[0].reg, &width, NULL) != gpr || width != 64)
		return false;
	r = xk_insn_rela(fn->fb, in);
	return r && r->sym && r->sym->name &&
	       (!strcmp(r->sym->name, "jiffies") || !strcmp(r->sym->name, "jiffies_64"));
}

/*
 * Boot-time code in which the constant only armed deadlines: each use is
 * `add $N, %reg` on the tick count just loaded in its block (`mov
 * jiffies(%rip), %reg`), whose sum goes to memory by the next instruction
 * that reads the register and is dead after it, flags unread: sched_init()
 * sets `calc_load_update` and each runqueue's to jiffies + LOAD_FREQ.
 * Such a value is an instant, armed once, as a timer armed before a retune
 * is: it keeps its compiled-in expiry, and what the kernel does at or after
 * it (re-arming it from the constant: calc_global_load) is code the
 * constant's other spans cover. A store of any other value (a setting or
 * a size the boot code computed, WQ_MAX_ACTIVE's argument) or any other
 * change in the function, and it is refused as boot-time code. why: the
 * note, naming the uses.
 */
static bool boot_deadline_only(const struct form_fn *fn, char *why, size_t size)
{
	int n = 0, len;

	len = snprintf(why, size, "%s %s (boot-time code, %s): the constant only "
		       "armed deadlines once (jiffies + N, stored), kept as a timer "
		       "armed before a retune is, at", fn->in->object, fn->fb->name,
		       fn->fb->sec->name);
	for (size_t i = 0; i < fn->base->nr; i++) {
		const struct xk_insn *in = &fn->base->insn[i];
		const cs_x86 *x = &in->x86;
		ssize_t def = -1, store = -1;
		bool reads, writes;
		int gpr, width;

		if (fn->other[i])
			return false;
		if (!fn->seed[i])
			continue;
		if (in->id != X86_INS_ADD || x->op_count != 2 ||
		    x->operands[0].type != X86_OP_REG ||
		    x->operands[1].type != X86_OP_IMM)
			return false;
		gpr = xk_gpr(x->operands[0].reg, &width, NULL);
		if (gpr < 0 || width != 64 || df_flags_live(fn->base, i + 1))
			return false;
		/* its input: the tick count, loaded in this block */
		for (size_t k = i; k > 0 && !fn->leader[k] && def < 0; k--) {
			df_touches_gpr(&fn->base->insn[k - 1], gpr, &reads, &writes);
			if (writes)
				def = (ssize_t)k - 1;
		}
		if (def < 0 || !loads_jiffies(fn, (size_t)def, gpr))
			return false;
		/* its output: stored, in this block, then dead */
		for (size_t k = i + 1; k < fn->base->nr && store < 0; k++) {
			const struct xk_insn *s = &fn->base->insn[k];
			const cs_x86 *sx = &s->x86;

			if (fn->leader[k])
				return false;
			df_touches_gpr(s, gpr, &reads, &writes);
			if (!reads && !writes)
				continue;
			if (s->id != X86_INS_MOV || sx->op_count != 2 ||
			    sx->operands[0].type != X86_OP_MEM ||
			    sx->operands[1].type != X86_OP_REG ||
			    sx->operands[1].reg != x->operands[0].reg ||
			    xk_gpr(sx->operands[0].mem.base, NULL, NULL) == gpr ||
			    xk_gpr(sx->operands[0].mem.index, NULL, NULL) == gpr ||
			    xk_gpr(sx->operands[0].mem.base, NULL, NULL) == XK_RSP)
				return false;
			store = (ssize_t)k;
		}
		if (store < 0 || df_reg_read(fn->base, (size_t)store + 1, gpr))
			return false;
		note_offset(why, size, &len, n++, in->off);
	}
	return n > 0 && len > 0 && (size_t)len < size;
}

/* Claims boot-time code (not by shape) of either shape above: the table
 * gets the note naming the uses. */
static int claim_boot_note(struct form_fn *fn, struct xk_scope *t)
{
	char why[sizeof(t->notes[0])];

	if (!gen_init_code(fn->fb) || fn->in->by_shape ||
	    !(fn->nr_seeds || fn->other_diff))
		return 0;
	if (!boot_log_only(fn, why, sizeof(why)) &&
	    !boot_deadline_only(fn, why, sizeof(why)))
		return 0;
	return gen_add_note(t, why) ?: 1;
}

const struct gen_form form_boot_note = {
	.name = "boot note",
	.claim = claim_boot_note,
};
