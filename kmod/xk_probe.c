// SPDX-License-Identifier: GPL-2.0
/*
 * The kprobe handlers: the rewrite at a probe point, and the entry/exit
 * probes that count threads inside safe spans during a global transition.
 */
#define pr_fmt(fmt) "xkernel: " fmt

#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <asm/page.h>
#include <asm/processor.h>

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

/*
 * Stores width bits of v at a kernel address without trusting it: the
 * address must be in the kernel half and canonical (a #GP in a fixed-up
 * access would still warn), and a page fault (unmapped, read-only text or
 * rodata) is fixed up through the exception table, never an oops. The
 * nofault store of mm/maccess.c (copy_to_kernel_nofault) is not exported
 * to modules; this is its body for one aligned-or-not scalar. Runs in the
 * probed context, preemption off; 0 or -EFAULT.
 */
static int write_mem_nofault(unsigned long addr, u64 v, unsigned int width)
{
	u8 v8 = v;
	u16 v16 = v;
	u32 v32 = v;
	unsigned long last = addr + width / 8 - 1;

	if (addr < TASK_SIZE_MAX + PAGE_SIZE || last < addr ||
	    !__is_canonical_address(addr, boot_cpu_data.x86_virt_bits) ||
	    !__is_canonical_address(last, boot_cpu_data.x86_virt_bits))
		return -EFAULT;
	pagefault_disable();
	switch (width) {
	case 8: __put_kernel_nofault((void *)addr, &v8, u8, fault); break;
	case 16: __put_kernel_nofault((void *)addr, &v16, u16, fault); break;
	case 32: __put_kernel_nofault((void *)addr, &v32, u32, fault); break;
	default: __put_kernel_nofault((void *)addr, &v, u64, fault); break;
	}
	pagefault_enable();
	return 0;
fault:
	pagefault_enable();
	return -EFAULT;
}

/*
 * Reads a span's memory inputs into in[XK_NR_REGS + k] from the registers
 * in in[]: [base + disp], width bits, zero-extended, with the same checks
 * and fault handling as write_mem_nofault (the mm/maccess.c reader is
 * exported, but not for an address computed in the probed context without
 * these checks first). Runs in the probed context; 0, or the faulting
 * address's -EFAULT with *bad set.
 */
static int read_mem_inputs(const struct xk_span *s, u64 *in, unsigned long *bad)
{
	for (u32 k = 0; k < s->desc.nr_mem_in && k < XK_MAX_MEM_INPUTS; k++) {
		const struct xk_ioc_mem_in *m = &s->desc.mem_in[k];
		unsigned long addr = in[m->base % XK_NR_REGS] + (u64)m->disp;
		unsigned long last = addr + m->width / 8 - 1;
		u64 v = 0;

		if (addr < TASK_SIZE_MAX + PAGE_SIZE || last < addr ||
		    !__is_canonical_address(addr, boot_cpu_data.x86_virt_bits) ||
		    !__is_canonical_address(last, boot_cpu_data.x86_virt_bits) ||
		    copy_from_kernel_nofault(&v, (void *)addr, m->width / 8)) {
			*bad = addr;
			return -EFAULT;
		}
		in[XK_NR_REGS + k] = v;	/* little endian: zero-extended */
	}
	return 0;
}

/*
 * A write to memory faulted: the constant is disarmed (every span of it
 * writes nothing from now on: the kernel runs with its compiled-in value,
 * which status then reports) and the fault counted and logged. Runs in the
 * probed context; pairs with the READ_ONCE(c->faulted) in the handlers and
 * with ioctl_set, which refuses a disarmed constant.
 */
static void write_faulted(struct xk_span *s, unsigned long addr)
{
	struct xk_const *c = s->owner;

	atomic64_inc(&s->faults);
	WRITE_ONCE(c->faulted, true);
	pr_warn_ratelimited("%s: an access to %#lx at %pS faulted: constant disarmed "
			    "(compiled-in value in force; xk unload it)\n",
			    c->name, addr, (void *)s->probe_addr);
}

/*
 * Writes a span's locations: out[i] for location i; in holds the registers
 * as they were at the probe point (memory bases). Runs in the probed context
 * (the rewrite handler, or xk_write_kernel in a policy's program). Memory
 * first (a span has at most one store): if it faults, no register is
 * written either, nothing half-applied, and -EFAULT comes back.
 */
/* The register and flags locations of a span: out[i] for location i. */
static void write_registers(const struct xk_span *s, struct pt_regs *regs,
			    const u64 *out)
{
	for (u32 i = 0; i < s->desc.nr_locs; i++) {
		const struct xk_ioc_loc *l = &s->desc.locs[i];
		u64 mask = xk_mask(l->width);

		if (l->kind == XK_LOC_FLAGS) {
			regs->flags = (regs->flags & ~(unsigned long)XK_EFLAGS_ARITH) |
				      (out[i] & XK_EFLAGS_ARITH);
		} else if (l->kind != XK_LOC_MEM) {
			unsigned long *slot = reg_slot(regs, l->kind);

			if (slot)	/* rsp is never a location (validated) */
				*slot = (*slot & ~mask) | (out[i] & mask);
		}
	}
}

int xk_write_locations(struct xk_span *s, struct pt_regs *regs,
		       const u64 *in, const u64 *out)
{
	u32 i;

	for (i = 0; i < s->desc.nr_locs; i++) {
		const struct xk_ioc_loc *l = &s->desc.locs[i];
		unsigned long addr;

		if (l->kind != XK_LOC_MEM)
			continue;
		addr = l->base == XK_BASE_RIP ? s->mem_addr[i] :
		       (unsigned long)(in[l->base % XK_NR_REGS] + (u64)l->disp);
		if (write_mem_nofault(addr, out[i], l->width)) {
			write_faulted(s, addr);
			return -EFAULT;
		}
	}
	write_registers(s, regs, out);
	return 0;
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
/*
 * The general path of a rewrite: the span's programs run on the registers
 * at the probe point, for a value the fast path has not precomputed (a
 * register-reading program, memory, a thread that keeps the old value).
 * Out of line, so the fast path's frame stays small.
 */
static noinline void rewrite_general(struct xk_span *s, struct pt_regs *regs,
				     s64 n)
{
	u64 in[XK_NR_INPUTS] = { 0 }, out[XK_MAX_LOCS];
	unsigned long bad;
	u32 i;

	xk_regs_to_array(regs, in);
	/* a memory input that cannot be read: the table does not describe
	 * this code; disarmed like a faulting write, nothing written */
	if (s->desc.nr_mem_in && read_mem_inputs(s, in, &bad)) {
		write_faulted(s, bad);
		return;
	}
	/* compute all first: a location may be another's input */
	for (i = 0; i < s->desc.nr_locs; i++)
		out[i] = xk_expr_eval(&s->desc.locs[i].expr, in, n);
	if (!xk_write_locations(s, regs, in, out))
		atomic64_inc(&s->hits);
}

/* A thread inside the safe spans when a per-task transition began. */
static noinline s64 per_task_value(struct xk_const *c, s64 n)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&c->track_lock, flags);
	if (c->per_task && find_tracked(c, current))
		n = c->old_value;
	raw_spin_unlock_irqrestore(&c->track_lock, flags);
	return n;
}

int xk_rewrite_handler(struct kprobe *p, struct pt_regs *regs)
{
	struct xk_span *s = container_of(p, struct xk_span, rewrite);
	struct xk_const *c = s->owner;
	s64 n = READ_ONCE(c->value);
	const struct xk_fast *f;

	/* per-task transition: a thread that was inside keeps the old value */
	if (unlikely(READ_ONCE(c->per_task)))
		n = per_task_value(c, n);
	/* a write faulted once: the compiled-in value, for every span */
	if (n == c->def || READ_ONCE(c->faulted))
		return 0;
	/* the writes precomputed for this value: no program to run */
	f = rcu_dereference_sched(s->fast);
	if (likely(f && f->n == n)) {
		for (u32 i = 0; i < f->nr; i++) {
			unsigned long *slot = (void *)regs + f->w[i].off;

			*slot = (*slot & f->w[i].keep) | f->w[i].val;
		}
		atomic64_inc(&s->hits);
		return 0;
	}
	rewrite_general(s, regs, n);
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

/*
 * Whether a span's writes depend on the value alone: no program reads a
 * register and no location is memory (a memory write needs its base and
 * the fault handling of xk_write_locations). Runs at load, under xk_lock.
 */
bool xk_fast_possible(const struct xk_span *s)
{
	for (u32 i = 0; i < s->desc.nr_locs; i++) {
		const struct xk_ioc_loc *l = &s->desc.locs[i];

		if (l->kind == XK_LOC_MEM || l->kind == XK_RSP)
			return false;
		for (u32 k = 0; k < l->expr.len; k++)
			if (l->expr.insn[k].op == XK_OP_REG)
				return false;
	}
	return true;
}

/*
 * Publishes, for every span that allows it, its writes for value n, before
 * n is put in force (xk_transition_many). Runs in process context under
 * xk_lock; pairs with the rcu_dereference_sched() in xk_rewrite_handler().
 * Out of memory only leaves the span on the general path.
 */
void xk_fast_prepare(struct xk_const *c, s64 n)
{
	static const u64 no_regs[XK_NR_INPUTS];
	struct pt_regs dummy;	/* where each register lives in pt_regs */

	for (int i = 0; i < c->nr_spans; i++) {
		struct xk_span *s = &c->spans[i];
		struct xk_fast *f, *old;

		if (!s->const_only)
			continue;
		old = rcu_dereference_protected(s->fast, 1);
		if (old && old->n == n)
			continue;
		f = kzalloc(sizeof(*f), GFP_KERNEL);
		if (f) {
			f->n = n;
			f->nr = s->desc.nr_locs;
			for (u32 l = 0; l < s->desc.nr_locs; l++) {
				const struct xk_ioc_loc *loc = &s->desc.locs[l];
				unsigned long mask = loc->kind == XK_LOC_FLAGS ?
						     XK_EFLAGS_ARITH : xk_mask(loc->width);
				u64 out = xk_expr_eval(&loc->expr, no_regs, n);

				f->w[l].off = loc->kind == XK_LOC_FLAGS ?
					      offsetof(struct pt_regs, flags) :
					      (void *)reg_slot(&dummy, loc->kind) -
					      (void *)&dummy;
				f->w[l].keep = ~mask;
				f->w[l].val = out & mask;
			}
		}
		rcu_assign_pointer(s->fast, f);
		if (old)
			kfree_rcu(old, rcu);
	}
}
