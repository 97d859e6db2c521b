// SPDX-License-Identifier: GPL-2.0
/*
 * The kprobe handlers: the rewrite at a probe point, and the entry/exit
 * probes that count threads inside safe spans during a global or per-task
 * transition (xk_transition.c).
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
 * Whether [addr, addr + bytes) may be accessed nofault from the probed
 * context: above user space and the guard page, canonical at both ends,
 * not wrapping. Shared by the readers and the writer below.
 */
static bool kernel_range(unsigned long addr, unsigned int bytes)
{
	unsigned long last = addr + bytes - 1;

	return addr >= TASK_SIZE_MAX + PAGE_SIZE && last >= addr &&
	       __is_canonical_address(addr, boot_cpu_data.x86_virt_bits) &&
	       __is_canonical_address(last, boot_cpu_data.x86_virt_bits);
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

	if (!kernel_range(addr, width / 8))
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
 * Reads width bits at addr into *v (zero-extended), with write_mem_nofault's
 * checks: what a replay's store is about to overwrite. Runs in the probed
 * context; 0 or -EFAULT.
 */
static int read_mem_nofault(unsigned long addr, u64 *v, unsigned int width)
{
	*v = 0;
	if (!kernel_range(addr, width / 8) ||
	    copy_from_kernel_nofault(v, (void *)addr, width / 8))
		return -EFAULT;
	return 0;
}

/*
 * Reads a span's memory inputs into in[XK_NR_REGS + k] from the registers
 * in in[]: [base + disp], width bits, zero-extended, with the same checks
 * and fault handling as write_mem_nofault (the mm/maccess.c reader is
 * exported, but not for an address computed in the probed context without
 * these checks first). Runs in the probed context; 0, or the faulting
 * address's -EFAULT with *bad set.
 */
static int read_inputs(const struct xk_ioc_mem_in *mem_in, u32 nr, u64 *in,
		       unsigned long *bad)
{
	for (u32 k = 0; k < nr && k < XK_MAX_MEM_INPUTS; k++) {
		const struct xk_ioc_mem_in *m = &mem_in[k];
		/* [base + index * scale + disp], as the CPU computes it */
		unsigned long addr = in[m->base % XK_NR_REGS] + (u64)m->disp +
				     (m->scale ? in[m->index % XK_NR_REGS] *
						 (u64)m->scale : 0);
		u64 v = 0;

		if (!kernel_range(addr, m->width / 8) ||
		    copy_from_kernel_nofault(&v, (void *)addr, m->width / 8)) {
			*bad = addr;
			return -EFAULT;
		}
		in[XK_NR_REGS + k] = v;	/* little endian: zero-extended */
	}
	return 0;
}

static int read_mem_inputs(const struct xk_span *s, u64 *in, unsigned long *bad)
{
	return read_inputs(s->desc.mem_in, s->desc.nr_mem_in, in, bad);
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
	/* the compiled-in value in force: its variables too, once */
	if (!xchg(&c->faulted, true))
		xk_var_switch(c, c->def);
	/* %p: the address hashed, as every log line gives one (the log
	 * may be readable where kernel addresses must not be) */
	pr_warn_ratelimited("%s: an access to %p at %pS faulted: constant disarmed "
			    "(compiled-in value in force; xk unload it)\n",
			    c->name, (void *)addr, (void *)s->probe_addr);
}

/*
 * A per-value span's parameters at value n: the point of n, or NULL (an
 * affine span, or no point for n). Runs in the rewrite handler (any
 * context) and under xk_lock; pairs with xk_table_add_point(), which fills
 * a point before it publishes the count (release/acquire). Points are
 * never changed or removed while the constant is loaded.
 */
const s64 *xk_span_params(const struct xk_span *s, s64 n)
{
	u32 nr = smp_load_acquire(&s->nr_points);

	for (u32 j = 0; j < nr && j < XK_MAX_POINTS; j++)
		if (s->desc.points[j].n == n)
			return s->desc.points[j].p;
	return NULL;
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
static noinline bool rewrite_general(struct xk_span *s, struct pt_regs *regs,
				     s64 n)
{
	const s64 *pv = xk_span_params(s, n);
	u64 in[XK_NR_INPUTS] = { 0 }, out[XK_MAX_LOCS];
	unsigned long bad;
	u32 i;

	xk_regs_to_array(regs, in);
	/* a memory input that cannot be read: the table does not describe
	 * this code; disarmed like a faulting write, nothing written */
	if (s->desc.nr_mem_in && read_mem_inputs(s, in, &bad)) {
		write_faulted(s, bad);
		return false;
	}
	/* a per-value span: its parameters at n (a value with no point never
	 * gets in force; should one, the constant is disarmed, not guessed) */
	if (s->desc.nr_points && !pv) {
		write_faulted(s, (unsigned long)n);
		return false;
	}
	/* compute all first: a location may be another's input */
	for (i = 0; i < s->desc.nr_locs; i++)
		out[i] = xk_expr_eval_pv(&s->desc.locs[i].expr, in, n, pv);
	if (xk_write_locations(s, regs, in, out))
		return false;
	atomic64_inc(&s->hits);
	return true;
}

/*
 * Per task: the value of the thread here. A thread found inside when the
 * transition began keeps the old value, one that entered afterwards the
 * new one (even after a rollback, until it leaves); any other thread the
 * constant's value. Runs in the rewrite handler (preemption off: c->tx
 * stays until a grace period after it is cleared); takes tx->lock. In NMI
 * context with the lock taken on this CPU: the constant's value.
 */
static noinline s64 per_task_value(struct xk_const *c, s64 n)
{
	struct xk_tx *tx = READ_ONCE(c->tx);
	struct xk_tracked *tr;
	unsigned long flags;
	int idx;

	if (!tx || !xk_tx_lock(tx, &flags))
		return n;
	n = READ_ONCE(c->value);
	idx = READ_ONCE(c->tx_idx);
	/* a handler that read c->tx just before it was cleared may still run
	 * when the next transition has set tx_idx for its own tx (a finished
	 * tx is freed only after a grace period): only c's own slot counts */
	tr = READ_ONCE(c->per_task) && idx < tx->nr && tx->c[idx] == c ?
	     xk_tx_find(tx, current) : NULL;
	if (tr)
		n = tr->took_new ? tx->value[idx] : tx->old[idx];
	xk_tx_unlock(tx, flags);
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
	/* a write faulted once: the compiled-in value, for every span but
	 * one of call state, which keeps the value of the call it is in
	 * (the module puts the default back globally, at unload) */
	if (n == c->def || (READ_ONCE(c->faulted) && !s->desc.call_state))
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
 * The rewrite of a span probed on its last instruction (desc.post_len: its
 * probe point is a branch target): kprobes calls it once that instruction
 * has run, regs->ip at the next one. The state there is the probe point's
 * only when it fell through to it (an exception's fixup, or a branch,
 * leaves elsewhere: nothing to rewrite). Same context as
 * xk_rewrite_handler (kprobe, preemption and interrupts off).
 */
void xk_rewrite_post(struct kprobe *p, struct pt_regs *regs,
		     unsigned long flags)
{
	struct xk_span *s = container_of(p, struct xk_span, rewrite);

	if (regs->ip == s->probe_addr + s->desc.post_len)
		xk_rewrite_handler(p, regs);
}

/*
 * A replayed span's replay at value n, or NULL. Runs in the handler (any
 * context) and under xk_lock; pairs with xk_table_add_replay(), which
 * stores a replay before it publishes the count (release/acquire).
 */
const struct xk_ioc_replay *xk_span_replay(const struct xk_span *s, s64 n)
{
	u32 nr = smp_load_acquire(&s->nr_replays);

	for (u32 j = 0; j < nr && j < XK_MAX_POINTS; j++)
		if (s->replays[j]->value == n)
			return s->replays[j];
	return NULL;
}

/*
 * A replayed span at value n: every register and the flags the build with
 * n leaves there, computed from the registers at the span's start (and its
 * memory inputs), written all at once. A value without a replay (never in
 * force: xk_value_prepared) or an input that cannot be read disarms the
 * constant; nothing is written then. Runs in the emulate handler, int3
 * context, preemption off.
 */
static noinline bool replay_general(struct xk_span *s, struct pt_regs *regs,
				    s64 n)
{
	const struct xk_ioc_replay *r = xk_span_replay(s, n);
	u64 in[XK_NR_INPUTS] = { 0 }, out[XK_REPLAY_MAX_LOCS];
	u64 old[XK_REPLAY_MAX_STORES];
	unsigned long bad, addr[XK_REPLAY_MAX_STORES];
	u32 i;

	if (!r) {
		write_faulted(s, (unsigned long)n);
		return false;
	}
	xk_regs_to_array(regs, in);
	if (r->nr_mem_in && read_inputs(r->mem_in, r->nr_mem_in, in, &bad)) {
		write_faulted(s, bad);
		return false;
	}
	for (i = 0; i < r->nr_locs && i < XK_REPLAY_MAX_LOCS; i++)
		out[i] = xk_expr_eval_pv(&r->locs[i].expr, in, n, NULL);
	/* the stores first, in the build's order (xk_ioc_replay_check: they
	 * lead the locations), each where the span's own code stores
	 * (xk_rule_replay_stores), what each held read first. If one faults,
	 * those written are put back, last first (overlapping ones too), no
	 * register is written, and the span runs as compiled: nothing of the
	 * replay is left */
	for (i = 0; i < r->nr_locs && i < XK_REPLAY_MAX_STORES &&
		    r->locs[i].kind == XK_LOC_MEM; i++) {
		const struct xk_ioc_loc *l = &r->locs[i];

		addr[i] = in[l->base % XK_NR_REGS] + (u64)l->disp;
		if (read_mem_nofault(addr[i], &old[i], l->width) ||
		    write_mem_nofault(addr[i], out[i], l->width)) {
			bad = addr[i];
			while (i--)
				write_mem_nofault(addr[i], old[i], r->locs[i].width);
			write_faulted(s, bad);
			return false;
		}
	}
	for (i = 0; i < r->nr_locs && i < XK_REPLAY_MAX_LOCS; i++) {
		const struct xk_ioc_loc *l = &r->locs[i];
		unsigned long *slot;

		if (l->kind == XK_LOC_MEM)
			continue;
		if (l->kind == XK_LOC_FLAGS) {
			regs->flags = (regs->flags & ~(unsigned long)XK_EFLAGS_ARITH) |
				      (out[i] & XK_EFLAGS_ARITH);
			continue;
		}
		slot = reg_slot(regs, l->kind);
		if (slot)	/* never rsp (xk_ioc_replay_check) */
			*slot = out[i];
	}
	atomic64_inc(&s->hits);
	return true;
}

/*
 * Whether the compared bytes after an emulated span's first (where its
 * own int3 is) still equal the table's, up to the probe point where the
 * thread resumes. Runs in its rewrite handler, preemption off.
 */
static bool emulated_text_intact(const struct xk_span *s)
{
	const struct xk_ioc_span *d = &s->desc;
	u8 live[XK_MAX_EXPECT];

	/* the skipped bytes only: the instruction at the resume point runs
	 * as the kernel has it (another span's probe may sit there) */
	if (copy_from_kernel_nofault(live, (void *)s->start_addr,
				     d->probe - d->start))
		return false;
	for (u32 i = 1; i < d->probe - d->start; i++)
		if ((live[i] ^ d->expect[i]) & d->expect_mask[i])
			return false;
	return true;
}

static void exits_at(struct xk_const *c, unsigned long addr,
		     struct pt_regs *regs);

/*
 * The rewrite of an emulated span (desc.emulate): kprobes calls it at the
 * span's first instruction, in the probed context with preemption off (an
 * int3: a probe with a post handler is never optimized). The thread
 * enters the safe span here, so the entry is counted first (the span has
 * no entry probe of its own: this one returns 1), after the exits of the
 * constant's other safe spans at this byte (exits_at: no probe of their
 * own either). Then, for a value other
 * than the compiled-in one, everything the span leaves is written from
 * the registers here and the thread resumes at the probe point: the span
 * does not run. A failed write (the constant is disarmed) runs the span
 * as compiled.
 */
int xk_emulate_handler(struct kprobe *p, struct pt_regs *regs)
{
	struct xk_span *s = container_of(p, struct xk_span, rewrite);
	struct xk_const *c = s->owner;
	s64 n;
	bool replay = s->desc.emulate == XK_EMULATE_REPLAY;
	bool keep = replay || s->desc.call_state;

	exits_at(c, s->start_addr, regs);
	xk_entry_handler(&s->entry, regs);
	n = READ_ONCE(c->value);
	if (unlikely(READ_ONCE(c->per_task)))
		n = per_task_value(c, n);
	/* a replayed span keeps replaying a disarmed constant's value: the
	 * thread may have run its other regions with it (the module puts the
	 * default back globally, at unload); a call-state span the same way */
	if (n == c->def || (READ_ONCE(c->faulted) && !keep))
		return 0;
	/* the bytes skipped are still those the rules allowed (a text patch
	 * since, another tool's probe or optimized jump inside: disarmed; a
	 * replayed span still skips them, for the same reason) */
	if (!emulated_text_intact(s)) {
		write_faulted(s, s->start_addr);
		if (!replay)
			return 0;
	}
	if (s->desc.emulate == XK_EMULATE_REPLAY ? !replay_general(s, regs, n) :
	    !rewrite_general(s, regs, n))
		return 0;
	instruction_pointer_set(regs, s->resume_addr);
	return 1;
}

/* Keeps kprobes from optimizing an emulated span's probe (it changes ip). */
void xk_emulate_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}

/* Whether a transition counts threads now (else the handlers do nothing). */
static struct xk_tx *counting(struct xk_const *c)
{
	struct xk_tx *tx = READ_ONCE(c->tx);
	int state;

	if (!tx)
		return NULL;
	state = atomic_read(&tx->state);
	return state == XK_TR_PENDING || state == XK_TR_REVERTING ? tx : NULL;
}

/*
 * A thread enters a safe span (at the span's start) while a transition
 * counts. Global, or per task while pending: one more frame of it inside
 * (recorded if new: per task, it takes the new value). Rolled back: only a
 * thread that took the new value is counted again. A thread that cannot be
 * recorded (the table is full) aborts a global transition at once (it never
 * switched, nothing half-applied) and makes a per-task one impossible to
 * roll back. Runs in the probed context with preemption off; takes
 * tx->lock; wakes the waiter through the irq_work. Pairs with
 * xk_exit_handler() and the stack scan (xk_transition.c).
 */
int xk_entry_handler(struct kprobe *p, struct pt_regs *regs)
{
	struct xk_span *s = container_of(p, struct xk_span, entry);
	struct xk_tx *tx = counting(s->owner);
	struct xk_tracked *tr;
	unsigned long flags;
	bool wake = false;
	int state;

	if (!tx)
		return 0;
	if (!xk_tx_lock(tx, &flags)) {
		tr = NULL;	/* NMI, lock busy: cannot be counted */
		goto untracked;
	}
	state = atomic_read(&tx->state);
	tr = xk_tx_find(tx, current);
	if (state == XK_TR_PENDING && !tr)
		tr = xk_tx_insert(tx, current, tx->per_task);
	else if (state == XK_TR_REVERTING && tr && !tr->took_new)
		tr = NULL;	/* rolled back: the old value is everyone's */
	else if (state != XK_TR_PENDING && state != XK_TR_REVERTING)
		goto unlock;	/* ended meanwhile */
	if (tr) {
		tr->depth++;
		if (tr->took_new)
			tx->inside_new++;
		else
			tx->inside++;
	} else if (state == XK_TR_PENDING) {
		tx->overflow = true;
		if (tx->per_task) {
			tx->no_rollback = true;
		} else {
			atomic_set(&tx->state, XK_TR_ABORTED);
			wake = true;
		}
	}
unlock:
	xk_tx_unlock(tx, flags);
	if (wake)
		irq_work_queue(&tx->wake_work);
	return 0;
untracked:
	/* the thread runs uncounted: a global transition must not switch
	 * (xk_tx_end_if_left aborts it instead), a per-task one cannot roll back */
	WRITE_ONCE(tx->nmi_missed, true);
	return 0;
}

/*
 * A thread reaches an exit of a safe span while a transition counts. Only
 * a recorded thread matters: its stack is walked again from here (the
 * leaving frame not counted), and what the walk finds is its depth, so a
 * nested or recursive exit, or an exit reached on a path that skipped the
 * entry, never undercounts. A walk that cannot be trusted leaves the count
 * as it was (counted in tx->unreliable: the transition may then time out,
 * never switch early). The last thread out ends the transition
 * (xk_tx_end_if_left) and wakes the waiter through the irq_work: no wake_up()
 * from probe context. Runs in the probed context with preemption off;
 * takes tx->lock, not while walking (only this thread changes its record).
 */
static void leave_span(struct xk_span *s, unsigned long addr,
		       struct pt_regs *regs)
{
	struct xk_tx *tx = counting(s->owner);
	struct xk_tracked *tr;
	struct pt_regs here;
	unsigned long flags;
	bool wake = false;
	int depth;

	if (!tx || !xk_tx_lock(tx, &flags))
		return;	/* NMI, lock busy: the count stays (conservative) */
	tr = xk_tx_find(tx, current);
	xk_tx_unlock(tx, flags);
	if (!tr)
		return;
	/* the probed instruction has not run: unwind from it, not from the
	 * int3's address after it */
	here = *regs;
	here.ip = addr;
	depth = xk_tx_depth(tx, current, &here);
	if (!xk_tx_lock(tx, &flags))
		return;
	tr = xk_tx_find(tx, current);
	if (tr) {
		int delta;

		if (depth < 0) {
			atomic_inc(&tx->unreliable);
			depth = tr->depth;
		}
		delta = depth - tr->depth;
		tr->depth = depth;
		if (tr->took_new)
			tx->inside_new += delta;
		else
			tx->inside += delta;
		if (!depth)
			xk_tx_remove(tx, tr);
		wake = xk_tx_end_if_left(tx);
	}
	xk_tx_unlock(tx, flags);
	if (wake)
		irq_work_queue(&tx->wake_work);
}

int xk_exit_handler(struct kprobe *p, struct pt_regs *regs)
{
	leave_span(container_of(p, struct xk_exit_probe, kp)->span,
		   (unsigned long)p->addr, regs);
	return 0;
}

/*
 * Whether an emulated span of c starts at addr: an exit of c's own there
 * gets no probe of its own (its aggregate would stop at the rewrite
 * handler, which returns 1), the handler does its bookkeeping
 * (exits_at). Under xk_lock, or from c's probe handlers (c's spans do
 * not change while it is loaded).
 */
bool xk_emulated_start(const struct xk_const *c, unsigned long addr)
{
	for (int i = 0; i < c->nr_spans; i++)
		if (c->spans[i].desc.emulate && c->spans[i].start_addr == addr)
			return true;
	return false;
}

/*
 * The exits of c's safe spans at addr, an emulated span's first byte,
 * taken while a transition counts: the thread leaves those spans here
 * before it enters the emulated one. Runs in that span's rewrite handler,
 * preemption off; leave_span takes tx->lock as xk_exit_handler does.
 */
static void exits_at(struct xk_const *c, unsigned long addr,
			struct pt_regs *regs)
{
	if (!counting(c))
		return;
	for (int i = 0; i < c->nr_spans; i++) {
		struct xk_span *s = &c->spans[i];

		for (u32 k = 0; k < s->desc.nr_exits; k++)
			if (s->desc.exits[k] < s->desc.func_size &&
			    s->func_addr + s->desc.exits[k] == addr) {
				leave_span(s, addr, regs);
				break;
			}
	}
}

/*
 * Whether a span's writes depend on the value alone: no program reads a
 * register and no location is memory (a memory write needs its base and
 * the fault handling of xk_write_locations). Runs at load, under xk_lock.
 */
bool xk_fast_possible(const struct xk_span *s)
{
	if (s->desc.emulate)
		return false;	/* its handler takes the general path */
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
		/* a per-value span without a point for n: the general path
		 * (which then disarms; xk_value_prepared refused such an n) */
		if (s->desc.nr_points && !xk_span_params(s, n))
			f = NULL;
		else
			f = kzalloc(sizeof(*f), GFP_KERNEL);
		if (f) {
			f->n = n;
			f->nr = s->desc.nr_locs;
			for (u32 l = 0; l < s->desc.nr_locs; l++) {
				const struct xk_ioc_loc *loc = &s->desc.locs[l];
				unsigned long mask = loc->kind == XK_LOC_FLAGS ?
						     XK_EFLAGS_ARITH : xk_mask(loc->width);
				u64 out = xk_expr_eval_pv(&loc->expr, no_regs, n,
							  xk_span_params(s, n));

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
