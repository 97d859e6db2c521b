// SPDX-License-Identifier: GPL-2.0
/*
 * The kprobe handlers: the rewrite at a probe point, and the entry/exit
 * probes that count threads inside safe spans during a global transition.
 */
#define pr_fmt(fmt) "xkernel: " fmt

#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/sched.h>

#include "xk_internal.h"

void xk_regs_to_array(const struct pt_regs *r, u64 *a)
{
	a[XK_RAX] = r->ax; a[XK_RCX] = r->cx; a[XK_RDX] = r->dx;
	a[XK_RBX] = r->bx; a[XK_RSP] = r->sp; a[XK_RBP] = r->bp;
	a[XK_RSI] = r->si; a[XK_RDI] = r->di; a[XK_R8] = r->r8;
	a[XK_R9] = r->r9; a[XK_R10] = r->r10; a[XK_R11] = r->r11;
	a[XK_R12] = r->r12; a[XK_R13] = r->r13; a[XK_R14] = r->r14;
	a[XK_R15] = r->r15;
}

static unsigned long *reg_slot(struct pt_regs *r, int reg)
{
	switch (reg) {
	case XK_RAX: return &r->ax;
	case XK_RCX: return &r->cx;
	case XK_RDX: return &r->dx;
	case XK_RBX: return &r->bx;
	case XK_RBP: return &r->bp;
	case XK_RSI: return &r->si;
	case XK_RDI: return &r->di;
	case XK_R8: return &r->r8;
	case XK_R9: return &r->r9;
	case XK_R10: return &r->r10;
	case XK_R11: return &r->r11;
	case XK_R12: return &r->r12;
	case XK_R13: return &r->r13;
	case XK_R14: return &r->r14;
	case XK_R15: return &r->r15;
	default: return NULL;	/* rsp is never a location (validated) */
	}
}

static void write_mem(unsigned long addr, u64 v, unsigned int width)
{
	switch (width) {
	case 8: WRITE_ONCE(*(u8 *)addr, (u8)v); break;
	case 16: WRITE_ONCE(*(u16 *)addr, (u16)v); break;
	case 32: WRITE_ONCE(*(u32 *)addr, (u32)v); break;
	default: WRITE_ONCE(*(u64 *)addr, v); break;
	}
}

/*
 * Writes a span's locations: out[i] for location i; in holds the registers
 * as they were at the probe point (memory bases). Runs in the probed context
 * (the rewrite handler, or xk_write_kernel in a policy's program).
 */
void xk_write_locations(struct xk_span *s, struct pt_regs *regs,
			const u64 *in, const u64 *out)
{
	for (u32 i = 0; i < s->desc.nr_locs; i++) {
		const struct xk_ioc_loc *l = &s->desc.locs[i];
		u64 mask = xk_mask(l->width);

		if (l->kind == XK_LOC_FLAGS) {
			regs->flags = (regs->flags & ~(unsigned long)XK_EFLAGS_ARITH) |
				      (out[i] & XK_EFLAGS_ARITH);
		} else if (l->kind == XK_LOC_MEM && l->base == XK_BASE_RIP) {
			write_mem(s->mem_addr[i], out[i], l->width);
		} else if (l->kind == XK_LOC_MEM) {
			write_mem(in[l->base % XK_NR_REGS] + l->disp, out[i],
				  l->width);
		} else {
			unsigned long *slot = reg_slot(regs, l->kind);

			*slot = (*slot & ~mask) | (out[i] & mask);
		}
	}
}

static struct xk_tracked *find_tracked(struct xk_const *c, struct task_struct *t)
{
	for (int i = 0; i < XK_MAX_TRACKED; i++)
		if (c->tracked[i].task == t)
			return &c->tracked[i];
	return NULL;
}

/*
 * Runs at a probe point, before the instruction there, in the probed
 * context with preemption disabled (an int3 or a jump-optimized detour).
 * Computes each location as a kernel built with the value in force would
 * have it, from the registers here, and writes it. When the value in force
 * is the compiled-in one there is nothing to do. Pairs with
 * xk_transition(), which changes c->value (WRITE_ONCE).
 */
int xk_rewrite_handler(struct kprobe *p, struct pt_regs *regs)
{
	struct xk_span *s = container_of(p, struct xk_span, rewrite);
	struct xk_const *c = s->owner;
	s64 n = READ_ONCE(c->value);
	u64 in[XK_NR_REGS], out[XK_MAX_LOCS];
	u32 i;

	/* per-task transition: a thread that was inside keeps the old value */
	if (unlikely(READ_ONCE(c->per_task))) {
		unsigned long flags;

		raw_spin_lock_irqsave(&c->track_lock, flags);
		if (c->per_task && find_tracked(c, current))
			n = c->old_value;
		raw_spin_unlock_irqrestore(&c->track_lock, flags);
	}
	if (n == c->def)
		return 0;
	xk_regs_to_array(regs, in);
	/* compute all first: a location may be another's input */
	for (i = 0; i < s->desc.nr_locs; i++)
		out[i] = xk_expr_eval(&s->desc.locs[i].expr, in, n);
	xk_write_locations(s, regs, in, out);
	atomic64_inc(&s->hits);
	return 0;
}

/*
 * A thread enters a safe span while a global transition is pending. Runs
 * in the probed context; takes c->track_lock (raw, irqsave). Pairs with
 * xk_exit_handler() and with the stack scan in xk_transition().
 */
int xk_entry_handler(struct kprobe *p, struct pt_regs *regs)
{
	struct xk_span *s = container_of(p, struct xk_span, entry);
	struct xk_const *c = s->owner;
	struct xk_tracked *tr;
	unsigned long flags;

	if (!READ_ONCE(c->tracking) || READ_ONCE(c->tx->per_task))
		return 0;	/* per task: new entrants take the new value */
	raw_spin_lock_irqsave(&c->track_lock, flags);
	if (c->tracking) {
		tr = find_tracked(c, current);
		if (!tr)
			tr = find_tracked(c, NULL);
		if (tr) {
			tr->task = current;
			tr->depth++;
			atomic_inc(&c->tx->inside);
		} else {
			c->track_overflow = true;
		}
	}
	raw_spin_unlock_irqrestore(&c->track_lock, flags);
	return 0;
}

/*
 * A thread reaches an exit of a safe span. Only threads counted on entry
 * (or by the stack scan) count down; the last one out switches the value
 * if a transition is pending, so no thread sees both values.
 */
int xk_exit_handler(struct kprobe *p, struct pt_regs *regs)
{
	struct xk_span *s = container_of(p, struct xk_exit_probe, kp)->span;
	struct xk_const *c;
	struct xk_tracked *tr;
	unsigned long flags;
	bool wake = false;

	c = s->owner;
	if (!READ_ONCE(c->tracking))
		return 0;
	raw_spin_lock_irqsave(&c->track_lock, flags);
	tr = c->tracking ? find_tracked(c, current) : NULL;
	if (tr) {
		if (--tr->depth == 0)
			tr->task = NULL;
		/* the last thread out switches every constant of the transition */
		if (atomic_dec_and_test(&c->tx->inside) &&
		    atomic_cmpxchg(&c->tx->state, XK_TR_PENDING, XK_TR_DONE) ==
			    XK_TR_PENDING) {
			if (c->tx->per_task)
				xk_tx_drained(c->tx);
			else
				xk_tx_switch(c->tx);
			wake = true;
		}
	}
	raw_spin_unlock_irqrestore(&c->track_lock, flags);
	if (wake)
		wake_up(&c->tx->wait);
	return 0;
}
