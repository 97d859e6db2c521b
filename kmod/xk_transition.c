// SPDX-License-Identifier: GPL-2.0
/*
 * Transitions: when a new value of a constant takes effect.
 *
 * Immediate: at once. Global: only at a moment when no thread is inside any
 * safe span of the constants, so that no thread computes with data derived
 * from both values. Per task: each thread switches as it leaves them.
 *
 * The threads inside are found as livepatch finds them
 * (klp_try_switch_task): a reliable walk of every task's stack, done as
 * arch_stack_walk_reliable() does with the ORC unwinder (which modules may
 * call; the reliable walker itself is not exported), every frame counted
 * (recursion included), never cut short; a stack that cannot be walked
 * reliably fails the scan, which is retried until the timeout. A module
 * cannot lock a task's runqueue (task_call_func), so the walk runs in
 * stop_machine(): every task is off its CPU and the count is one instant.
 * From there the entry probes count threads coming in, and the exit probes
 * walk the leaving thread's own stack again (its true depth, whatever path
 * it took); the last thread out switches the value and wakes the waiter
 * through an irq_work, never from the probe's context itself.
 *
 * The waiter holds no global lock while it waits: its constants carry the
 * transition (c->tx), and any other request on them gets -EBUSY until it
 * ends. A failure restores the old value as safely as the switch: global,
 * nothing was switched; per task, the new entrants take the old value again
 * while threads that took the new one keep it until they leave (the
 * transition then ends in the background, see xk_transition_busy()).
 */
#define pr_fmt(fmt) "xkernel: " fmt

#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/stop_machine.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <asm/unwind.h>

#include "xk_internal.h"

/* the module's workqueue: frees retired transitions (tx_retire) and
 * registers a loaded constant's entry and exit probes (xk_tracking_work) */
static struct workqueue_struct *xk_wq;

/* a scan that met an unreliable stack is retried after this, until the
 * transition's timeout */
#define XK_SCAN_RETRY_MS 20
/* the tracking table holds at most this many threads (1 Mi records,
 * 48 MiB); more threads than that: the transition is refused */
#define XK_TRACK_MAX (1u << 20)

/*
 * Unregisters a constant's entry and exit probes: in one batch (one grace
 * period), or one at a time when the batch cannot be allocated. After a
 * failed registration, before a settle (xk_tracking_release), or at unload
 * when xk_const_destroy() cannot make its own batch. When it returns no
 * handler of theirs runs. Process context, under xk_lock.
 */
static void unregister_tracking(struct xk_const *c)
{
	struct kprobe **kps = kmalloc_array(c->nr_spans * (1 + XK_MAX_EXITS),
					    sizeof(*kps), GFP_KERNEL);
	int n = 0;

	for (int i = 0; i < c->nr_spans && kps; i++) {
		struct xk_span *s = &c->spans[i];

		for (int k = 0; k < s->nr_exit_registered; k++)
			kps[n++] = &s->exit[k].kp;
		s->nr_exit_registered = 0;
		if (s->entry_registered)
			kps[n++] = &s->entry;
		s->entry_registered = false;
	}
	if (n)
		unregister_kprobes(kps, n);
	kfree(kps);
	for (int i = 0; i < c->nr_spans; i++) {
		struct xk_span *s = &c->spans[i];

		for (int k = 0; k < s->nr_exit_registered; k++)
			unregister_kprobe(&s->exit[k].kp);
		s->nr_exit_registered = 0;
		if (s->entry_registered)
			unregister_kprobe(&s->entry);
		s->entry_registered = false;
	}
}

static void no_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}

/* One entry or exit probe, never optimized (see below). */
static int register_tracking_probe(struct kprobe *kp, unsigned long addr,
				   kprobe_pre_handler_t pre, u32 flags)
{
	memset(kp, 0, sizeof(*kp));
	kp->addr = (kprobe_opcode_t *)addr;
	kp->pre_handler = pre;
	kp->post_handler = no_post;
	kp->flags = flags;
	return register_kprobe(kp);
}

/*
 * Registers a constant's entry and exit probes, disabled (flags) or armed.
 * They have a (no-op) post handler, which keeps kprobes from optimizing
 * them: no optimizer work and no jump to take out again, for probes that
 * are only armed during a transition. Process context, under xk_lock.
 */
static int register_tracking_flags(struct xk_const *c, u32 flags, char *error)
{
	for (int i = 0; i < c->nr_spans; i++) {
		struct xk_span *s = &c->spans[i];
		int err;

		if (s->settle == XK_SETTLE_GONE)
			continue;	/* its module went away: no text to probe */
		/* an emulated span's rewrite probe counts its entry itself */
		err = s->desc.emulate ? 0 :
		      register_tracking_probe(&s->entry, s->start_addr,
					      xk_entry_handler, flags);
		if (err) {
			xk_error(error, "cannot probe the entry of the safe span %s+%#llx (%d)",
				 s->desc.func, s->desc.start, err);
			goto fail;
		}
		s->entry_registered = !s->desc.emulate;
		for (u32 k = 0; k < s->desc.nr_exits; k++) {
			struct xk_exit_probe *e = &s->exit[s->nr_exit_registered];

			if (s->desc.exits[k] >= s->desc.func_size)
				continue;	/* falls off the end: no instruction */
			if (xk_emulated_start(c, s->func_addr + s->desc.exits[k]))
				continue;	/* that span's rewrite handler does it */
			memset(e, 0, sizeof(*e));
			e->span = s;
			err = register_tracking_probe(&e->kp, s->func_addr +
						      s->desc.exits[k],
						      xk_exit_handler, flags);
			if (err) {
				xk_error(error, "cannot probe the exit %s+%#llx (%d)",
					 s->desc.func, s->desc.exits[k], err);
				goto fail;
			}
			s->nr_exit_registered++;
		}
	}
	return 0;
fail:
	unregister_tracking(c);
	return -EINVAL;
}

/*
 * The entry and exit probes go (the next transition registers them
 * again): before a settle, whose probe at an immediate must be alone
 * there, and at unload when the batch of xk_const_destroy() cannot be
 * made. Process context, under xk_lock, no transition under way.
 */
void xk_tracking_release(struct xk_const *c)
{
	unregister_tracking(c);
	c->tracking_ready = false;
}

/*
 * Whether a disarmed entry or exit probe at addr would be in another
 * probe's way: one at a span's probe point (a rewrite or policy probe,
 * which a probe with a post handler in its aggregate keeps from being
 * optimized), or inside a settled span's bytes (kprobes would copy the
 * settled instruction). Under xk_lock.
 */
static bool tracking_in_the_way(unsigned long addr)
{
	struct xk_const *o;

	list_for_each_entry(o, &xk_consts, node) {
		for (int i = 0; i < o->nr_spans; i++) {
			const struct xk_span *t = &o->spans[i];

			if (addr == t->probe_addr ||
			    (t->settle == XK_SETTLE_DONE && addr >= t->start_addr &&
			     addr < t->start_addr + t->desc.expect_len))
				return true;
		}
	}
	return false;
}

/* Whether any of c's entry and exit probes would be in another's way. */
static bool tracking_conflicts(const struct xk_const *c)
{
	for (int i = 0; i < c->nr_spans; i++) {
		const struct xk_span *s = &c->spans[i];

		if (s->settle == XK_SETTLE_GONE)
			continue;
		if (!s->desc.emulate && tracking_in_the_way(s->start_addr))
			return true;
		for (u32 k = 0; k < s->desc.nr_exits; k++)
			if (s->desc.exits[k] < s->desc.func_size &&
			    !xk_emulated_start(c, s->func_addr + s->desc.exits[k]) &&
			    tracking_in_the_way(s->func_addr + s->desc.exits[k]))
				return true;
	}
	return false;
}

/*
 * The entry and exit probes of a constant just loaded, registered disarmed
 * in the background (tracking_work on the module's workqueue), so that its
 * first global or per-task transition does not pay for the registration:
 * register_kprobe() scans the kernel's jump and static-call tables and
 * prepares an (unused) optimized copy, ~50 ms of guest time per probe
 * under TCG -icount. A transition that comes first registers them itself,
 * and so does the first transition of a constant whose probes would be in
 * another probe's way (tracking_conflicts): then only a user of global or
 * per-task transitions pays for it, as before. The work only tries
 * xk_lock (xk_tracking_cancel runs under it) and comes back a jiffy later
 * when it is taken; it leaves a settled constant alone.
 */
void xk_tracking_work(struct work_struct *work)
{
	struct xk_const *c = container_of(to_delayed_work(work), struct xk_const,
					  tracking_work);
	char error[XK_ERROR_MAX];

	if (!mutex_trylock(&xk_lock)) {
		queue_delayed_work(xk_wq, &c->tracking_work, 1);
		return;
	}
	if (!c->tracking_ready && !c->tx && !c->settle_ref && !c->faulted &&
	    !tracking_conflicts(c) &&
	    !register_tracking_flags(c, KPROBE_FLAG_DISABLED, error))
		c->tracking_ready = true;
	mutex_unlock(&xk_lock);
}

/* After a load (not for a policy); under xk_lock. */
void xk_tracking_prepare(struct xk_const *c)
{
	queue_delayed_work(xk_wq, &c->tracking_work, 0);
}

/*
 * Before a settle and when the constant goes; under xk_lock. The work
 * never waits for xk_lock, so it cannot be blocked on the caller; it may
 * have queued itself again, which the cancel covers.
 */
void xk_tracking_cancel(struct xk_const *c)
{
	cancel_delayed_work_sync(&c->tracking_work);
}

/*
 * Calls fn on every registered entry and exit probe of c, except those of
 * spans whose module went away (kprobes marked them gone: they cannot be
 * armed, and nothing runs there).
 */
static int for_each_tracking(struct xk_const *c, int (*fn)(struct kprobe *))
{
	int err = 0;

	for (int i = 0; i < c->nr_spans && !err; i++) {
		struct xk_span *s = &c->spans[i];

		if (s->settle == XK_SETTLE_GONE)
			continue;
		if (s->entry_registered)
			err = fn(&s->entry);
		for (int k = 0; k < s->nr_exit_registered && !err; k++)
			err = fn(&s->exit[k].kp);
	}
	return err;
}

/*
 * The entry and exit probes for one transition, armed. The first global or
 * per-task transition of a constant registers them (disarmed, then armed);
 * later ones only arm them again: no registration and no grace period on
 * their path. Process context, under xk_lock; they go at unload.
 */
static int arm_tracking(struct xk_const *c, char *error)
{
	int err;

	if (!c->tracking_ready) {
		err = register_tracking_flags(c, KPROBE_FLAG_DISABLED, error);
		if (err)
			return err;
		c->tracking_ready = true;
	}
	err = for_each_tracking(c, enable_kprobe);
	if (err) {
		for_each_tracking(c, disable_kprobe);
		xk_error(error, "%s: cannot arm the safe spans' probes (%d)",
			 c->name, err);
	}
	return err;
}

/*
 * After a transition: the probes disarmed, kept for the next one; their
 * handlers, which read c->tx, are done when this returns (a grace period:
 * they run with preemption off), so tx may go.
 */
static void disarm_tracking_of(struct xk_const *const *c, int nr)
{
	for (int i = 0; i < nr; i++)
		if (c[i]->tracking_ready)
			for_each_tracking(c[i], disable_kprobe);
	synchronize_rcu();
}

/* ---- the tracked threads: a hash table by task pointer ---- */

static u32 slot_of(const struct xk_tx *tx, const struct task_struct *t)
{
	return hash_ptr(t, ilog2(tx->slots));
}

/* The record of t, or NULL. Under tx->lock (or with the table not in use). */
struct xk_tracked *xk_tx_find(struct xk_tx *tx, struct task_struct *t)
{
	u32 m = tx->slots - 1, i = slot_of(tx, t);

	for (u32 n = 0; n < tx->slots; n++, i = (i + 1) & m) {
		if (tx->table[i].task == t)
			return &tx->table[i];
		if (!tx->table[i].task)
			break;
	}
	return NULL;
}

/*
 * A record for t (not in the table), depth 0, holding a reference on t;
 * NULL when the table is full (the caller fails loudly). Under tx->lock.
 */
struct xk_tracked *xk_tx_insert(struct xk_tx *tx, struct task_struct *t,
				bool took_new)
{
	u32 m = tx->slots - 1, i = slot_of(tx, t);
	struct xk_tracked *tr;

	if (tx->used >= tx->cap)
		return NULL;
	while (tx->table[i].task)
		i = (i + 1) & m;
	tr = &tx->table[i];
	get_task_struct(t);
	tr->task = t;
	tr->depth = 0;
	tr->took_new = took_new;
	tx->used++;
	if (took_new)
		tx->threads_new++;
	else
		tx->threads++;
	return tr;
}

/*
 * Removes a record (backward-shift deletion: no tombstones, so lookups
 * stay short however many threads come and go). Under tx->lock, from the
 * handler of the record's own task (its reference is never the last: the
 * task runs), or in process context.
 */
void xk_tx_remove(struct xk_tx *tx, struct xk_tracked *tr)
{
	u32 m = tx->slots - 1, i = tr - tx->table, j = i;

	if (tr->took_new)
		tx->threads_new--;
	else
		tx->threads--;
	put_task_struct(tr->task);
	for (;;) {
		u32 k;

		j = (j + 1) & m;
		if (!tx->table[j].task)
			break;
		k = slot_of(tx, tx->table[j].task);
		/* j stays if its home slot k lies cyclically in (i, j] */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		tx->table[i] = tx->table[j];
		i = j;
	}
	memset(&tx->table[i], 0, sizeof(tx->table[i]));
	tx->used--;
}

/*
 * Empties the table, dropping its references. Process context, with no
 * handler using the table (state IDLE, or the probes disarmed and a grace
 * period passed).
 */
static void empty_table(struct xk_tx *tx)
{
	for (u32 i = 0; tx->table && i < tx->slots; i++)
		if (tx->table[i].task)
			put_task_struct(tx->table[i].task);
	if (tx->table)
		memset(tx->table, 0, tx->slots * sizeof(*tx->table));
	tx->used = tx->threads = tx->threads_new = 0;
	tx->inside = tx->inside_new = 0;
}

/*
 * A table for every thread there is now, and half as many again (threads
 * forked meanwhile), or twice the last one (grow: the last scan found it
 * full). Process context, no lock; the table not in use.
 */
static int alloc_table(struct xk_tx *tx, bool grow, char *error)
{
	struct task_struct *g, *t;
	u32 n = 0, cap;

	rcu_read_lock();
	for_each_process_thread(g, t)
		n++;
	rcu_read_unlock();
	cap = n + n / 2 + 64;
	if (grow)
		cap = max(cap, tx->cap * 2);
	if (cap > XK_TRACK_MAX)
		return xk_error(error, "%s: %u threads: more than the %u a transition "
				"tracks", tx->c[0]->name, n, XK_TRACK_MAX), -ENOSPC;
	if (tx->table && cap <= tx->cap)
		return 0;
	empty_table(tx);
	kvfree(tx->table);
	tx->slots = roundup_pow_of_two(cap * 2);
	tx->table = kvcalloc(tx->slots, sizeof(*tx->table), GFP_KERNEL);
	tx->cap = cap;
	if (!tx->table)
		return xk_error(error, "%s: no memory to track %u threads",
				tx->c[0]->name, cap), -ENOMEM;
	return 0;
}

/* the transition whose lock this CPU holds (interrupts are off meanwhile) */
static DEFINE_PER_CPU(struct xk_tx *, tx_lock_owner);

/*
 * tx->lock, with interrupts off. Kprobe handlers run in NMI context (int3)
 * but never nest on a CPU (kprobes skips a probe hit inside a handler), so
 * they may spin. A real NMI may interrupt a holder on its own CPU, though
 * (a process-context waiter, or a kprobe handler): then it must not spin,
 * false comes back and the handler does the conservative thing. Any lock
 * held on this CPU counts, not only tx's: an NMI that spun on another
 * transition's lock while its CPU's interrupted context held this one
 * could wait for a CPU whose NMI waits for it (two locks, two CPUs), and
 * one that took it would have to restore the slot it overwrote. Nothing
 * takes two transition locks at once, so the slot is NULL or the one
 * lock this CPU holds. Pairs with xk_tx_unlock().
 */
bool xk_tx_lock(struct xk_tx *tx, unsigned long *flags)
{
	local_irq_save(*flags);
	if (in_nmi() && this_cpu_read(tx_lock_owner)) {
		local_irq_restore(*flags);
		return false;
	}
	this_cpu_write(tx_lock_owner, tx);	/* first: an NMI then never spins */
	raw_spin_lock(&tx->lock);
	return true;
}

void xk_tx_unlock(struct xk_tx *tx, unsigned long flags)
{
	this_cpu_write(tx_lock_owner, NULL);
	raw_spin_unlock(&tx->lock);
	local_irq_restore(flags);
}

/* ---- where a thread is: safe spans on its stack ---- */

/* Whether one of s's ranges begins before its start (span_holds). */
static bool range_before_start(const struct xk_span *s)
{
	for (u32 r = 0; r < s->desc.nr_ranges && r < XK_MAX_RANGES; r++)
		if (s->desc.ranges[r][0] < s->desc.start &&
		    s->desc.ranges[r][1] > s->desc.start)
			return true;
	return false;
}

/*
 * Whether a frame of the stack lies in a safe span of s. A return address
 * (ip is false) points after its call: the call lies in a range [from, to)
 * when the address is in (from, to]. An interrupted instruction (ip true)
 * has not run yet: inside when it is in a range, except at the span's
 * start, where the armed entry probe counts the thread when it resumes,
 * unless a range holds code before the start (a call-state or replayed
 * span's whole function: the thread may have run the function's earlier
 * part with the old value, a loop back to the start included).
 */
static bool span_holds(const struct xk_span *s, unsigned long addr, bool ip)
{
	unsigned long off = addr - s->func_addr;

	if (addr < s->func_addr || off > s->desc.func_size)
		return false;
	if (ip && off == s->desc.start && !range_before_start(s))
		return false;
	for (u32 r = 0; r < s->desc.nr_ranges; r++) {
		if (ip ? off >= s->desc.ranges[r][0] && off < s->desc.ranges[r][1] :
			 off > s->desc.ranges[r][0] && off <= s->desc.ranges[r][1])
			return true;
	}
	/* no ranges: to the end, conservatively */
	return !s->desc.nr_ranges && off > s->desc.start;
}

static bool tx_holds(struct xk_tx *tx, unsigned long addr, bool ip)
{
	for (int i = 0; i < tx->nr; i++) {
		struct xk_const *c = tx->c[i];

		for (int k = 0; c && k < c->nr_spans; k++)
			if (span_holds(&c->spans[k], addr, ip))
				return true;
	}
	return false;
}

/*
 * How many frames of t's stack lie inside safe spans of the transition's
 * constants (each frame of a recursion counts), or -EAGAIN when the stack
 * cannot be walked reliably. The walk is arch_stack_walk_reliable()'s with
 * the ORC unwinder: an unwinder error, or a frame whose address is not
 * kernel text (generated code, a kprobe's out-of-line copy), fails it; no
 * frame limit. Registers met in the middle (an interrupt or exception in
 * the kernel) are followed, ORC describes them exactly; the instruction
 * they interrupted is judged as an instruction, not as a return address.
 * A user task's walk must end at its user-mode registers (a task that never
 * ran has only ret_from_fork's frame); a kernel thread's ends at the end
 * of stack mark, which the unwinder reports as done without error.
 *
 * regs NULL: t is off its CPU (stop_machine). regs set: t is current, in an
 * exit probe, and regs the probed context's (ip at the probed instruction):
 * the walk starts at its caller, the leaving frame is not counted.
 */
int xk_tx_depth(struct xk_tx *tx, struct task_struct *t, struct pt_regs *regs)
{
	bool user = !(t->flags & (PF_KTHREAD | PF_USER_WORKER));
	struct unwind_state st;
	int depth = 0, frames = 0;

	for (unwind_start(&st, t, regs, NULL);
	     !unwind_done(&st) && !unwind_error(&st); unwind_next_frame(&st)) {
		struct pt_regs *r = unwind_get_entry_regs(&st, NULL);
		unsigned long addr;

		if (r && user_mode(r))
			return depth;
		addr = unwind_get_return_address(&st);
		if (!addr)
			return -EAGAIN;
		frames++;
		depth += tx_holds(tx, addr, st.signal);
	}
	if (unwind_error(&st))
		return -EAGAIN;
	if (user && !regs && frames > 1)
		return -EAGAIN;	/* ended before the user-mode registers */
	return depth;
}

/* ---- switching ---- */

/* How many hits the constants' entry probes missed so far (kprobes skips a
 * probe hit while another kprobe runs on that CPU). */
static unsigned long entries_missed(struct xk_tx *tx)
{
	unsigned long n = 0;

	for (int i = 0; i < tx->nr; i++) {
		struct xk_const *c = tx->c[i];

		for (int k = 0; c && k < c->nr_spans; k++) {
			if (c->spans[k].entry_registered)
				n += READ_ONCE(c->spans[k].entry.nmissed);
			/* an emulated span's rewrite probe counts its entries */
			else if (c->spans[k].desc.emulate && c->spans[k].rewrite_registered)
				n += READ_ONCE(c->spans[k].rewrite.nmissed);
		}
	}
	return n;
}

/*
 * Whether a thread may have entered a safe span uncounted since the scan:
 * an entry probe missed a hit, or an entry in NMI context could not take
 * the lock. Then a global transition must not switch, nor a per-task one
 * roll back. Under tx->lock.
 */
static bool tx_missed(struct xk_tx *tx)
{
	return READ_ONCE(tx->nmi_missed) || entries_missed(tx) != tx->nmissed0;
}

/*
 * c's value in force becomes v, its variables (xk_data.c) with it; the
 * handlers read c->value. Idempotent. Wherever a transition commits or
 * rolls back: under tx->lock, in stop_machine(), or under xk_lock.
 */
static void set_value(struct xk_const *c, s64 v)
{
	/* a faulted constant's variables stay compiled-in (xk_probe.c) */
	if (!READ_ONCE(c->faulted) || v == c->def)
		xk_var_switch(c, v);
	WRITE_ONCE(c->value, v);
	/* a fault between the check and the switch (its xchg pairs with
	 * this barrier): the variables back to the compiled-in value */
	smp_mb();
	if (READ_ONCE(c->faulted) && v != c->def)
		xk_var_switch(c, c->def);
}

/*
 * Every constant of the transition takes its new value. Under tx->lock, or
 * in stop_machine(); exactly once per transition (its state says so).
 */
static void tx_switch(struct xk_tx *tx)
{
	for (int i = 0; i < tx->nr; i++)
		if (tx->c[i])
			set_value(tx->c[i], tx->value[i]);
}

/* Per task: every thread uses the constants' own values again. */
static void tx_per_task_off(struct xk_tx *tx)
{
	for (int i = 0; i < tx->nr; i++)
		if (tx->c[i])
			WRITE_ONCE(tx->c[i]->per_task, false);
}

/*
 * After a count changed: the transition ends if its threads have left.
 * Global: the last one out switches every constant. Per task: the last old
 * thread out lets every thread use the new values; rolled back, the last
 * thread that took the new values does the same for the old ones. Returns
 * whether it ended (the caller wakes the waiter: irq_work). Under tx->lock,
 * from an exit probe or the waiter.
 */
bool xk_tx_end_if_left(struct xk_tx *tx)
{
	switch (atomic_read(&tx->state)) {
	case XK_TR_PENDING:
		if (tx->inside > 0)
			return false;
		if (!tx->per_task && tx_missed(tx)) {
			/* a thread entered uncounted: switching could mix */
			tx->missed = true;
			atomic_set(&tx->state, XK_TR_ABORTED);
			return true;
		}
		/* per task, the scan switched only when a thread was inside:
		 * with nobody inside the values switch here (idempotent) */
		tx_switch(tx);
		if (tx->per_task)
			tx_per_task_off(tx);
		atomic_set(&tx->state, XK_TR_DONE);
		return true;
	case XK_TR_REVERTING:
		if (tx->inside_new > 0)
			return false;
		tx_per_task_off(tx);
		atomic_set(&tx->state, XK_TR_REVERTED);
		return true;
	default:
		return false;
	}
}

/*
 * Runs on one CPU with every other CPU stopped and interrupts off
 * (stop_machine): every task is off its CPU but the stoppers (skipped: they
 * run multi_cpu_stop) and tasks whose stack is gone (exited). Walks each
 * stack reliably and records the threads inside; any unreliable stack or a
 * full table fails the whole scan (tx->scan_err; the state stays IDLE, the
 * handlers ignore it, the caller empties the table and retries). Otherwise
 * the count starts (PENDING): nothing inside switches at once; per task,
 * every thread not recorded takes the new values now.
 */
static int scan_stacks(void *data)
{
	struct xk_tx *tx = data;
	struct task_struct *g, *t;
	u64 t0 = ktime_get_ns();
	unsigned long flags;
	int err = 0;

	rcu_read_lock();
	for_each_process_thread(g, t) {
		struct xk_tracked *tr;
		int d;

		if (t == current || READ_ONCE(t->on_cpu) ||
		    !refcount_read(&t->stack_refcount))
			continue;
		d = xk_tx_depth(tx, t, NULL);
		if (d < 0) {
			err = d;
			tx->unreliable_pid = task_pid_nr(t);
			/* no task_lock with every CPU stopped: a racy copy */
			memcpy(tx->unreliable_comm, t->comm, TASK_COMM_LEN);
			tx->unreliable_comm[TASK_COMM_LEN - 1] = '\0';
			break;
		}
		if (!d)
			continue;
		tr = xk_tx_insert(tx, t, false);
		if (!tr) {
			err = -ENOSPC;
			break;
		}
		tr->depth = d;
		tx->inside += d;
	}
	rcu_read_unlock();
	tx->scan_ns = ktime_get_ns() - t0;
	tx->scan_err = err;
	if (err)
		return 0;
	/*
	 * NMIs still run on the other CPUs: from PENDING on, their handlers
	 * count entries and exits under tx->lock, so the state and the end
	 * change under it too (this CPU is not in NMI: it takes the lock).
	 */
	xk_tx_lock(tx, &flags);
	tx->nmissed0 = entries_missed(tx);
	if (tx->per_task && tx->inside) {
		for (int i = 0; i < tx->nr; i++)
			WRITE_ONCE(tx->c[i]->per_task, true);
		tx_switch(tx);
	}
	atomic_set(&tx->state, XK_TR_PENDING);
	xk_tx_end_if_left(tx);	/* nobody inside: done at once */
	xk_tx_unlock(tx, flags);
	return 0;
}

/* Immediate: every constant switches while every CPU is stopped. */
static int switch_now(void *data)
{
	tx_switch(data);
	return 0;
}

/* The irq_work the handlers queue: wakes the waiter (hard irq context). */
static void tx_wake(struct irq_work *w)
{
	wake_up(&container_of(w, struct xk_tx, wake_work)->wait);
}

/*
 * Scans until a scan succeeds (every stack walked reliably), the deadline
 * passes (-EAGAIN), a fatal signal arrives (-EINTR) or memory runs out.
 * Process context, no lock held; sleeps XK_SCAN_RETRY_MS between tries,
 * as livepatch retries its transition.
 */
static int scan_until(struct xk_tx *tx, unsigned long deadline, char *error)
{
	bool grow = false;
	int err;

	for (;;) {
		err = alloc_table(tx, grow, error);
		if (err)
			return err;
		err = stop_machine(scan_stacks, tx, NULL);
		if (err)
			return xk_error(error, "%s: stop_machine failed (%d)",
					tx->c[0]->name, err), err;
		if (!tx->scan_err)
			return 0;
		empty_table(tx);
		tx->retries++;
		grow = tx->scan_err == -ENOSPC;
		if (grow)
			continue;
		if (time_after(jiffies + msecs_to_jiffies(XK_SCAN_RETRY_MS), deadline))
			return -EAGAIN;
		schedule_timeout_killable(msecs_to_jiffies(XK_SCAN_RETRY_MS));
		if (fatal_signal_pending(current))
			return -EINTR;
	}
}

/*
 * A transition that no thread still needs lets go of its constants: the
 * entry and exit probes disarmed (kept for the next one) and c->tx
 * cleared. Handlers that read c->tx just before may still run (preemption
 * off) and use tx: it is freed only by tx_retire(), after a grace period,
 * so no synchronize_rcu() is on the path of a transition (it was ~10 of
 * the ~12 ms of a global one in the deterministic guest). Process context,
 * under xk_lock.
 */
static void tx_detach_all(struct xk_tx *tx)
{
	for (int i = 0; i < tx->nr; i++) {
		struct xk_const *c = tx->c[i];

		if (!c)
			continue;
		if (c->tracking_ready)
			for_each_tracking(c, disable_kprobe);
		WRITE_ONCE(c->per_task, false);
		WRITE_ONCE(c->tx, NULL);
	}
}

/* Frees a transition nothing uses (after a grace period and its irq_work). */
static void tx_free(struct xk_tx *tx)
{
	empty_table(tx);
	kvfree(tx->table);
	kfree(tx);
}

/* The free of a retired transition: a grace period after tx_retire(), in
 * process context (irq_work_sync may sleep). Pairs with tx_retire(). */
static void tx_free_work(struct work_struct *work)
{
	struct xk_tx *tx = container_of(to_rcu_work(work), struct xk_tx,
					free_work);

	irq_work_sync(&tx->wake_work);
	tx_free(tx);
}

/*
 * A detached transition (tx_detach_all) is freed once every handler that
 * may have read it is done: after a grace period (the handlers run with
 * preemption off), then its irq_work synced, on xk_wq, which module
 * exit drains (xk_transition_exit). Process context, under xk_lock.
 */
static void tx_retire(struct xk_tx *tx)
{
	INIT_RCU_WORK(&tx->free_work, tx_free_work);
	queue_rcu_work(xk_wq, &tx->free_work);
}

static void tx_teardown(struct xk_tx *tx)
{
	tx_detach_all(tx);
	tx_retire(tx);
}

/* Module init: the workqueue (tx_retire, xk_tracking_work). */
int xk_transition_init(void)
{
	xk_wq = alloc_workqueue("xkernel", WQ_UNBOUND, 0);
	return xk_wq ? 0 : -ENOMEM;
}

/*
 * Module exit, once every constant is unloaded (no transition is left to
 * retire): the grace periods of the retired ones end (rcu_barrier: their
 * callbacks queued the frees), then the frees run (destroy drains).
 */
void xk_transition_exit(void)
{
	rcu_barrier();
	destroy_workqueue(xk_wq);
}

/*
 * Runs in stop_machine() (every task off its CPU, no handler running): an
 * orphan's tracked threads whose stacks no longer hold a frame inside its
 * safe spans are dropped from the count, and the transition ends if they
 * were the last. A thread leaves without an exit probe seeing it when it
 * dies inside (do_exit from a span: an oops, kthread_exit), or when an
 * exception fixup or a longjmp-like path carries it out; its record would
 * otherwise keep a never-immediate constant loaded for good. A thread whose
 * stack is gone (exited) has left; one whose stack cannot be walked
 * reliably stays counted (conservative). Pairs with leave_span()
 * (xk_probe.c), which does the same for a thread at an exit probe.
 */
static int reap_departed(void *data)
{
	struct xk_tx *tx = data;
	unsigned long flags;
	u32 i = 0, seen = 0;

	if (!xk_tx_lock(tx, &flags))
		return 0;
	/* a removal shifts a later record into slot i: look at it again;
	 * at most every slot once more than there are records */
	while (i < tx->slots && seen++ < 2 * tx->slots) {
		struct xk_tracked *tr = &tx->table[i];
		struct task_struct *t = tr->task;
		int depth = 0;

		if (!t) {
			i++;
			continue;
		}
		if (refcount_read(&t->stack_refcount))
			depth = xk_tx_depth(tx, t, NULL);
		if (depth) {		/* inside, or not walkable: stays */
			i++;
			continue;
		}
		if (tr->took_new)
			tx->inside_new -= tr->depth;
		else
			tx->inside -= tr->depth;
		tx->reaped++;
		xk_tx_remove(tx, tr);
	}
	xk_tx_end_if_left(tx);
	xk_tx_unlock(tx, flags);
	return 0;
}

int xk_transition_busy(struct xk_const *c, char *error)
{
	struct xk_tx *tx = c->tx;
	unsigned long flags;
	u32 threads;
	int state;

	if (!tx)
		return 0;
	if (tx->waiter)
		return xk_error(error, "%s: another transition of it is under way; "
				"retry when it ends", c->name), -EBUSY;
	state = atomic_read(&tx->state);
	if (state == XK_TR_PENDING || state == XK_TR_REVERTING) {
		/* threads that left unseen (died inside) no longer hold it */
		u32 before = tx->reaped;

		stop_machine(reap_departed, tx, NULL);
		if (tx->reaped != before)
			pr_info("%s: %u thread%s of an earlier per-task transition "
				"left its safe spans unseen (exited inside)\n",
				c->name, tx->reaped - before,
				tx->reaped - before == 1 ? "" : "s");
		state = atomic_read(&tx->state);
	}
	if (state != XK_TR_PENDING && state != XK_TR_REVERTING) {
		tx_teardown(tx);	/* an orphan that has ended: reaped */
		return 0;
	}
	xk_tx_lock(tx, &flags);
	threads = state == XK_TR_REVERTING ? tx->threads_new : tx->threads;
	xk_tx_unlock(tx, flags);
	return xk_error(error, "%s: %u thread%s of an earlier per-task transition "
			"that failed %s inside a safe span with value %lld; retry "
			"when %s, or xk unload it", c->name, threads,
			threads == 1 ? "" : "s", threads == 1 ? "is still" : "are still",
			state == XK_TR_REVERTING ? tx->value[c->tx_idx] :
			tx->old[c->tx_idx], threads == 1 ? "it leaves" : "they leave"),
	       -EBUSY;
}

int xk_transition_waited(struct xk_const *c, char *error)
{
	if (!c->tx || !c->tx->waiter)
		return 0;
	return xk_error(error, "%s: a transition of it is under way; unload it when "
			"it ends", c->name), -EBUSY;
}

void xk_transition_release(struct xk_const *c)
{
	struct xk_tx *tx = c->tx;
	unsigned long flags;
	bool last;

	if (!tx)
		return;
	xk_tx_lock(tx, &flags);
	tx->c[c->tx_idx] = NULL;
	last = --tx->attached == 0;
	xk_tx_unlock(tx, flags);
	WRITE_ONCE(c->tx, NULL);
	/* the other constants' handlers may have read tx->c[] before: c is
	 * freed after they are done (they run with preemption off) */
	synchronize_rcu();
	if (!last)
		return;
	irq_work_sync(&tx->wake_work);
	tx_free(tx);
}

static void audit(struct xk_tx *tx, const s64 *old, u32 mode, u64 ns,
		  const char *error)
{
	for (int i = 0; i < tx->nr; i++) {
		xk_var_report(tx->c[i]);
		if (error)
			pr_notice("set %s by %s[%d] uid %u: %lld -> %lld failed: %s "
				  "(%u scan retries, %d unreliable exit walks)\n",
				  tx->c[i]->name, current->comm, task_pid_nr(current),
				  from_kuid(&init_user_ns, current_uid()), old[i],
				  tx->value[i], error, tx->retries,
				  atomic_read(&tx->unreliable));
		else
			pr_info("set %s by %s[%d] uid %u: %lld -> %lld (%s%s, %llu us; "
				"scan %llu us, %u retries, %d unreliable exit walks)\n",
				tx->c[i]->name, current->comm, task_pid_nr(current),
				from_kuid(&init_user_ns, current_uid()), old[i],
				tx->value[i], mode == XK_MODE_GLOBAL ? "global" :
				mode == XK_MODE_PER_TASK ? "per task" : "immediate",
				tx->nr > 1 ? ", one transaction" : "", ns / 1000,
				tx->scan_ns / 1000, tx->retries,
				atomic_read(&tx->unreliable));
	}
}

/*
 * A transition's wait is bounded: 0 means XK_DEFAULT_TIMEOUT_MS, and more
 * than XK_MAX_TIMEOUT_MS is refused. Runs in process context before
 * anything changes; 0 or -EINVAL with the cause.
 */
int xk_check_timeout(u32 timeout_ms, char *error)
{
	if (timeout_ms <= XK_MAX_TIMEOUT_MS)
		return 0;
	return xk_error(error, "timeout %u ms is above the limit of %u ms",
			timeout_ms, XK_MAX_TIMEOUT_MS), -EINVAL;
}

/*
 * "the old value 64 stays in force" / "the old values 3, ... stay in
 * force"; per task (again): "the old value 70 is in force again".
 */
static void old_values(const struct xk_tx *tx, char *buf, size_t len,
		       bool again)
{
	bool many = tx->nr > 1;

	snprintf(buf, len, "the old value%s %lld%s %s in force%s", many ? "s" : "",
		 tx->old[0], many ? ", ..." : "",
		 again ? (many ? "are" : "is") : (many ? "stay" : "stays"),
		 again ? " again" : "");
}

/*
 * After the wait: what became of the transition. Global, not ended: never
 * switched, aborted. Per task, not ended: rolled back, every thread not
 * inside with the new values takes the old ones again; those inside keep
 * the new ones until they leave (REVERTING; or, when an entrant could not
 * be tracked, the transition stays as it is and ends forward). Returns 0
 * (ended) or the error with its cause. Process context, no lock held; takes
 * tx->lock.
 */
static int tx_conclude(struct xk_tx *tx, int why, u32 timeout_ms, char *error)
{
	const char *name = tx->c[0]->name;
	char oldv[96];
	unsigned long flags;
	u32 threads, threads_new;
	int state, err = 0;

	xk_tx_lock(tx, &flags);
	state = atomic_read(&tx->state);
	threads = tx->threads;
	threads_new = tx->threads_new;
	if (state == XK_TR_PENDING && !tx->per_task) {
		atomic_set(&tx->state, XK_TR_ABORTED);
	} else if (state == XK_TR_PENDING && !tx->no_rollback && !tx_missed(tx)) {
		tx->rolled_back = true;
		for (int i = 0; i < tx->nr; i++)
			set_value(tx->c[i], tx->old[i]);
		atomic_set(&tx->state, XK_TR_REVERTING);
		xk_tx_end_if_left(tx);	/* none took the new values: over */
	}
	xk_tx_unlock(tx, flags);
	if (state == XK_TR_DONE)
		return 0;
	if (state == XK_TR_ABORTED) {	/* aborted by a handler */
		old_values(tx, oldv, sizeof(oldv), false);
		if (tx->missed)
			return xk_error(error, "%s: a thread entered a safe span "
					"uncounted (an entry probe missed it: another "
					"kprobe or an NMI was running on its CPU); %s",
					name, oldv), -EAGAIN;
		return xk_error(error, "%s: more than %u threads in safe spans during "
				"the transition (the tracking table is full); %s",
				name, tx->cap, oldv), -ENOSPC;
	}
	err = why;
	if (tx->per_task && !tx->rolled_back) {
		xk_error(error, "%s: %u thread%s still inside a safe span after %u ms, "
			 "and the transition cannot be rolled back (a thread could "
			 "not be tracked): it ends when %s", name, threads,
			 threads == 1 ? "" : "s", timeout_ms,
			 threads == 1 ? "it leaves" : "they leave");
		return err;
	}
	old_values(tx, oldv, sizeof(oldv), tx->per_task);
	if (why == -EINTR)
		xk_error(error, "%s: the transition was killed with %u thread%s inside "
			 "a safe span; %s", name, threads, threads == 1 ? "" : "s",
			 oldv);
	else
		xk_error(error, "%s: %u thread%s still inside a safe span after %u ms; "
			 "%s", name, threads, threads == 1 ? "" : "s", timeout_ms,
			 oldv);
	if (tx->per_task && atomic_read(&tx->state) == XK_TR_REVERTING) {
		size_t n = strlen(error);

		snprintf(error + n, XK_ERROR_MAX - n, " (%u thread%s that took the new "
			 "value keep%s it until %s)", threads_new,
			 threads_new == 1 ? "" : "s", threads_new == 1 ? "s" : "",
			 threads_new == 1 ? "it leaves" : "they leave");
	}
	return err;
}

/*
 * Called with xk_lock held, in process context; drops it while it scans
 * and waits (the constants carry the transition meanwhile: c->tx, so other
 * requests on them get -EBUSY and unload refuses them) and holds it again
 * when it returns. Returns 0 when every value is in force; otherwise none
 * changed for any thread that did not already leave with it: -ETIMEDOUT
 * (threads stayed inside), -EINTR (a fatal signal ended the wait), -EAGAIN
 * (a stack could not be walked reliably before the timeout), -ENOSPC (more
 * threads than the table). Every wait is killable and ends by the timeout
 * (xk_check_timeout), the scans' retries included. tx is the caller's
 * description (nr, c, value): the transition is a copy.
 */
int xk_transition_many(struct xk_tx *req, u32 mode, u32 timeout_ms,
		       char *error, u64 *ns)
{
	ktime_t t0 = ktime_get();
	unsigned long deadline;
	struct xk_tx *tx;
	s64 old[XK_TX_MAX];
	int err = 0, i, state;
	long left;

	err = xk_check_timeout(timeout_ms, error);
	if (err)
		return err;
	timeout_ms = timeout_ms ?: XK_DEFAULT_TIMEOUT_MS;
	deadline = jiffies + msecs_to_jiffies(timeout_ms);
	for (i = 0; i < req->nr; i++) {
		struct xk_const *c = req->c[i];

		old[i] = c->value;
		err = xk_transition_busy(c, error);
		if (err)
			return err;
		if (req->value[i] < c->min || req->value[i] > c->max)
			return xk_error(error, "%s: value %lld is out of bounds [%lld, %lld]",
					c->name, req->value[i], c->min, c->max), -ERANGE;
		err = xk_value_prepared(c, req->value[i], error);
		if (err)
			return err;
	}
	if (mode > XK_MODE_PER_TASK)
		return xk_error(error, "unknown mode %u", mode), -EINVAL;
	/* a thread between two replayed regions holds the registers of the
	 * build with the old value, one inside a call-state function a batch
	 * filled under the old bound: such a constant never changes at an
	 * instant, only when no thread is inside (xk_ioc_span.emulate,
	 * .call_state) */
	for (i = 0; i < req->nr && mode == XK_MODE_IMMEDIATE; i++)
		if (req->value[i] != old[i] && xk_const_never_immediate(req->c[i]))
			mode = XK_MODE_GLOBAL;
	/* a variable is one for every thread: per task it would change under
	 * the threads still running the old value's code (xk_data.c) */
	for (i = 0; i < req->nr && mode == XK_MODE_PER_TASK; i++)
		if (req->value[i] != old[i] && req->c[i]->nr_vars)
			mode = XK_MODE_GLOBAL;
	/* the new values' writes precomputed before any thread may see them */
	for (i = 0; i < req->nr; i++)
		xk_fast_prepare(req->c[i], req->value[i]);
	if (mode == XK_MODE_IMMEDIATE) {
		if (req->nr == 1)
			switch_now(req);
		else
			err = stop_machine(switch_now, req, NULL);
		if (err)
			xk_error(error, "%s: stop_machine failed (%d)", req->c[0]->name, err);
		*ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
		audit(req, old, mode, *ns, err ? error : NULL);
		goto out;
	}

	/*
	 * Where a thread is comes from its stack: only ORC's walk is exact
	 * (registers met in the middle, no guessed frames; the guess unwinder
	 * reads any text address on the stack as a frame, and frame pointers
	 * miss a caller whose frame is not set up yet). Another unwinder: no
	 * scoped transition, named.
	 */
	if (!IS_ENABLED(CONFIG_UNWINDER_ORC))
		return xk_error(error, "%s: this kernel's unwinder is not ORC "
				"(CONFIG_UNWINDER_ORC is off): a %s transition needs "
				"its reliable stack walks%s", req->c[0]->name,
				mode == XK_MODE_PER_TASK ? "per-task" : "global",
				xk_const_never_immediate(req->c[0]) ? "" :
				"; --mode immediate changes it at an instant"),
		       -EOPNOTSUPP;
	tx = kzalloc(sizeof(*tx), GFP_KERNEL);
	if (!tx)
		return -ENOMEM;
	tx->nr = req->nr;
	memcpy(tx->c, req->c, sizeof(tx->c));
	memcpy(tx->value, req->value, sizeof(tx->value));
	memcpy(tx->old, old, sizeof(tx->old));
	raw_spin_lock_init(&tx->lock);
	init_waitqueue_head(&tx->wait);
	init_irq_work(&tx->wake_work, tx_wake);
	atomic_set(&tx->state, XK_TR_IDLE);
	tx->per_task = mode == XK_MODE_PER_TASK;
	tx->waiter = true;
	for (i = 0; i < tx->nr && !err; i++)
		err = arm_tracking(tx->c[i], error);
	if (err) {
		disarm_tracking_of(tx->c, i - 1);
		kfree(tx);
		return err;
	}
	for (i = 0; i < tx->nr; i++) {
		tx->c[i]->tx_idx = i;
		WRITE_ONCE(tx->c[i]->tx, tx);
	}
	tx->attached = tx->nr;

	mutex_unlock(&xk_lock);
	err = scan_until(tx, deadline, error);
	if (!err) {
		left = (long)deadline - (long)jiffies;
		left = wait_event_killable_timeout(tx->wait,
				atomic_read(&tx->state) != XK_TR_PENDING,
				max(left, 1L));
		err = tx_conclude(tx, left < 0 ? -EINTR : -ETIMEDOUT, timeout_ms,
				  error);
	} else if (err == -EAGAIN || err == -EINTR) {
		char oldv[96];

		old_values(tx, oldv, sizeof(oldv), false);
		if (err == -EAGAIN)
			xk_error(error, "%s: the stack of %s[%d] could not be walked "
				 "reliably in %u tries over %u ms; %s",
				 tx->c[0]->name, tx->unreliable_comm,
				 tx->unreliable_pid, tx->retries, timeout_ms, oldv);
		else
			xk_error(error, "%s: the transition was killed while its stack "
				 "scans were retried; %s", tx->c[0]->name, oldv);
	}
	mutex_lock(&xk_lock);

	state = atomic_read(&tx->state);
	if (state == XK_TR_PENDING || state == XK_TR_REVERTING)
		tx->waiter = false;	/* an orphan: ends in the background */
	else
		tx_detach_all(tx);
	/* the whole request: arming, scans, the drain, disarming */
	*ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	audit(tx, old, mode, *ns, err ? error : NULL);
	if (state != XK_TR_PENDING && state != XK_TR_REVERTING)
		tx_retire(tx);
out:
	if (err)
		return err;
	for (i = 0; i < req->nr; i++) {
		req->c[i]->last_transition_ns = *ns;
		req->c[i]->last_mode = mode;
	}
	return 0;
}

int xk_transition(struct xk_const *c, s64 value, u32 mode, u32 timeout_ms,
		  char *error, u64 *ns)
{
	struct xk_tx *tx = kzalloc(sizeof(*tx), GFP_KERNEL);
	int err;

	if (!tx)
		return -ENOMEM;
	tx->nr = 1;
	tx->c[0] = c;
	tx->value[0] = value;
	err = xk_transition_many(tx, mode, timeout_ms, error, ns);
	kfree(tx);
	return err;
}
