// SPDX-License-Identifier: GPL-2.0
/*
 * Transitions: when a new value of a constant takes effect.
 *
 * Immediate: at once. Global: only at a moment when no thread is inside any
 * safe span of the constant, so that no thread computes with data derived
 * from both values. One stop_machine() finds the threads inside from their
 * stacks and starts counting; entry and exit probes keep the count; the
 * last thread out switches the value in its exit probe. A timeout aborts
 * the transition and leaves the old value in force.
 */
#define pr_fmt(fmt) "xkernel: " fmt

#include <linux/cred.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include <linux/stacktrace.h>
#include <linux/stop_machine.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "xk_internal.h"

#define SCAN_DEPTH 64

/*
 * Unregisters a constant's entry and exit probes, one at a time: after a
 * failed registration, or at unload when xk_const_destroy() cannot make its
 * batch. When it returns no handler of theirs runs. Process context, under
 * xk_lock.
 */
static void unregister_tracking(struct xk_const *c)
{
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

		err = register_tracking_probe(&s->entry, s->start_addr,
					      xk_entry_handler, flags);
		if (err) {
			xk_error(error, "cannot probe the entry of the safe span %s+%#llx (%d)",
				 s->desc.func, s->desc.start, err);
			goto fail;
		}
		s->entry_registered = true;
		for (u32 k = 0; k < s->desc.nr_exits; k++) {
			struct xk_exit_probe *e = &s->exit[s->nr_exit_registered];

			if (s->desc.exits[k] >= s->desc.func_size)
				continue;	/* falls off the end: no instruction */
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

/* At unload, when the batch of xk_const_destroy() cannot be made. */
void xk_tracking_release(struct xk_const *c)
{
	unregister_tracking(c);
	c->tracking_ready = false;
}

/* Calls fn on every registered entry and exit probe of c. */
static int for_each_tracking(struct xk_const *c, int (*fn)(struct kprobe *))
{
	int err = 0;

	for (int i = 0; i < c->nr_spans && !err; i++) {
		struct xk_span *s = &c->spans[i];

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

/*
 * Is a stack entry inside a safe span? Return addresses point after the
 * call, so an ip equal to a range's end still belongs to it.
 */
static bool in_some_span(struct xk_const *c, unsigned long ip)
{
	for (int i = 0; i < c->nr_spans; i++) {
		const struct xk_span *s = &c->spans[i];
		unsigned long off = ip - s->func_addr;

		if (ip < s->func_addr || off > s->desc.func_size)
			continue;
		for (u32 r = 0; r < s->desc.nr_ranges; r++)
			if (off > s->desc.ranges[r][0] && off <= s->desc.ranges[r][1])
				return true;
		if (!s->desc.nr_ranges && off >= s->desc.start)
			return true;	/* no ranges: to the end, conservatively */
	}
	return false;
}

/*
 * Switches every constant of a transition. Runs in stop_machine() or in the
 * exit probe of the last thread out (after winning the cmpxchg to DONE):
 * exactly once per transition.
 */
void xk_tx_switch(struct xk_tx *tx)
{
	for (int i = 0; i < tx->nr; i++) {
		WRITE_ONCE(tx->c[i]->value, tx->value[i]);
		WRITE_ONCE(tx->c[i]->tracking, false);
	}
}

/*
 * Runs on one CPU with every other CPU stopped and interrupts off
 * (stop_machine). Counts the threads whose stack shows them inside a safe
 * span of any constant of the transition and turns tracking on; if none is
 * inside, switches at once.
 */
static int scan_stacks(void *data)
{
	struct xk_tx *tx = data;
	unsigned long entries[SCAN_DEPTH];
	struct task_struct *g, *t;
	int n[XK_TX_MAX] = { 0 };

	for (int i = 0; i < tx->nr; i++) {
		memset(tx->c[i]->tracked, 0, sizeof(tx->c[i]->tracked));
		tx->c[i]->track_overflow = false;
	}
	atomic_set(&tx->inside, 0);
	rcu_read_lock();
	for_each_process_thread(g, t) {
		unsigned int nr = stack_trace_save_tsk(t, entries, SCAN_DEPTH, 0);

		for (int i = 0; i < tx->nr; i++) {
			struct xk_const *c = tx->c[i];

			for (unsigned int k = 0; k < nr; k++) {
				if (!in_some_span(c, entries[k]))
					continue;
				if (n[i] == XK_MAX_TRACKED) {
					c->track_overflow = true;
					break;
				}
				c->tracked[n[i]].task = t;
				c->tracked[n[i]++].depth = 1;
				atomic_inc(&tx->inside);
				break;
			}
		}
	}
	rcu_read_unlock();
	if (atomic_read(&tx->inside) == 0) {
		atomic_set(&tx->state, XK_TR_DONE);
		xk_tx_switch(tx);
	} else if (tx->per_task) {
		/* the new value now, except for the threads found inside */
		for (int i = 0; i < tx->nr; i++) {
			tx->c[i]->old_value = tx->c[i]->value;
			WRITE_ONCE(tx->c[i]->per_task, true);
			WRITE_ONCE(tx->c[i]->tracking, true);
			WRITE_ONCE(tx->c[i]->value, tx->value[i]);
		}
	} else {
		for (int i = 0; i < tx->nr; i++)
			WRITE_ONCE(tx->c[i]->tracking, true);
	}
	return 0;
}

/* Per task: the last old thread left; every thread now uses the new value. */
void xk_tx_drained(struct xk_tx *tx)
{
	for (int i = 0; i < tx->nr; i++) {
		WRITE_ONCE(tx->c[i]->per_task, false);
		WRITE_ONCE(tx->c[i]->tracking, false);
	}
}

/* Immediate: every constant switches while every CPU is stopped. */
static int switch_now(void *data)
{
	xk_tx_switch(data);
	return 0;
}

static void audit(struct xk_tx *tx, const s64 *old, u32 mode, u64 ns,
		  const char *error)
{
	for (int i = 0; i < tx->nr; i++) {
		if (error)
			pr_notice("set %s by %s[%d] uid %u: %lld -> %lld failed: %s\n",
				  tx->c[i]->name, current->comm, task_pid_nr(current),
				  from_kuid(&init_user_ns, current_uid()), old[i],
				  tx->value[i], error);
		else
			pr_info("set %s by %s[%d] uid %u: %lld -> %lld (%s%s, %llu us)\n",
				tx->c[i]->name, current->comm, task_pid_nr(current),
				from_kuid(&init_user_ns, current_uid()), old[i],
				tx->value[i], mode == XK_MODE_GLOBAL ? "global" :
				mode == XK_MODE_PER_TASK ? "per task" : "immediate",
				tx->nr > 1 ? ", one transaction" : "", ns / 1000);
	}
}

/*
 * A transition's wait is bounded: 0 means XK_DEFAULT_TIMEOUT_MS, and more
 * than XK_MAX_TIMEOUT_MS is refused (the wait holds xk_lock). Runs in
 * process context before anything changes; 0 or -EINVAL with the cause.
 */
int xk_check_timeout(u32 timeout_ms, char *error)
{
	if (timeout_ms <= XK_MAX_TIMEOUT_MS)
		return 0;
	return xk_error(error, "timeout %u ms is above the limit of %u ms",
			timeout_ms, XK_MAX_TIMEOUT_MS), -EINVAL;
}

/*
 * Called with xk_lock held, in process context. Returns 0 when every value
 * is in force; otherwise none changed (-ETIMEDOUT: threads stayed inside;
 * -EINTR: a fatal signal ended the wait). The wait is killable and bounded
 * (xk_check_timeout); aborting it takes the same path as a timeout: the
 * cmpxchg to ABORTED decides against the last thread out's switch, and the
 * old values stay (or, per task, are put back) in force.
 */
int xk_transition_many(struct xk_tx *tx, u32 mode, u32 timeout_ms, char *error,
		       u64 *ns)
{
	ktime_t t0 = ktime_get();
	s64 old[XK_TX_MAX];
	int err = 0, inside = 0, i;
	long left;

	err = xk_check_timeout(timeout_ms, error);
	if (err)
		return err;
	timeout_ms = timeout_ms ?: XK_DEFAULT_TIMEOUT_MS;
	for (i = 0; i < tx->nr; i++) {
		struct xk_const *c = tx->c[i];

		old[i] = c->value;
		if (tx->value[i] < c->min || tx->value[i] > c->max)
			return xk_error(error, "%s: value %lld is out of bounds [%lld, %lld]",
					c->name, tx->value[i], c->min, c->max), -ERANGE;
	}
	/* the new values' writes precomputed before any thread may see them */
	for (i = 0; i < tx->nr; i++)
		xk_fast_prepare(tx->c[i], tx->value[i]);
	init_waitqueue_head(&tx->wait);
	if (mode == XK_MODE_IMMEDIATE) {
		if (tx->nr == 1)
			xk_tx_switch(tx);
		else
			err = stop_machine(switch_now, tx, NULL);
	} else if (mode == XK_MODE_GLOBAL || mode == XK_MODE_PER_TASK) {
		tx->per_task = mode == XK_MODE_PER_TASK;
		for (i = 0; i < tx->nr && !err; i++) {
			tx->c[i]->tx = tx;
			err = arm_tracking(tx->c[i], error);
		}
		if (err) {
			disarm_tracking_of(tx->c, i - 1);
			while (i-- > 0)
				tx->c[i]->tx = NULL;
			return err;
		}
		atomic_set(&tx->state, XK_TR_PENDING);
		err = stop_machine(scan_stacks, tx, NULL);
		left = err ? 1 : wait_event_killable_timeout(tx->wait,
				atomic_read(&tx->state) != XK_TR_PENDING,
				msecs_to_jiffies(timeout_ms));
		if (left <= 0 &&
		    atomic_cmpxchg(&tx->state, XK_TR_PENDING, XK_TR_ABORTED) ==
			    XK_TR_PENDING) {
			inside = atomic_read(&tx->inside);
			err = left < 0 ? -EINTR : -ETIMEDOUT;
		}
		for (i = 0; i < tx->nr; i++) {
			if (!err && tx->c[i]->track_overflow)
				err = -ENOSPC;
			WRITE_ONCE(tx->c[i]->tracking, false);
			WRITE_ONCE(tx->c[i]->per_task, false);
		}
		/* per task, not drained in time: back to the old value for all,
		 * nothing half-applied */
		if (err && tx->per_task)
			for (i = 0; i < tx->nr; i++)
				WRITE_ONCE(tx->c[i]->value, old[i]);
		/* waits for running handlers: then tx may go */
		disarm_tracking_of(tx->c, tx->nr);
		for (i = 0; i < tx->nr; i++)
			tx->c[i]->tx = NULL;
		if (err == -ENOSPC && atomic_read(&tx->state) == XK_TR_DONE &&
		    !tx->per_task)
			for (i = 0; i < tx->nr; i++)	/* not half-applied */
				WRITE_ONCE(tx->c[i]->value, old[i]);
		if (err == -ETIMEDOUT)
			xk_error(error, "%s: %d thread%s still inside a safe span after "
				 "%u ms; the old value%s %lld%s stay%s in force",
				 tx->c[0]->name, inside, inside == 1 ? "" : "s",
				 timeout_ms, tx->nr > 1 ? "s" : "", old[0],
				 tx->nr > 1 ? ", ..." : "", tx->nr > 1 ? "" : "s");
		else if (err == -EINTR)
			xk_error(error, "%s: the transition was killed with %d thread%s "
				 "inside a safe span; the old value%s %lld%s stay%s in "
				 "force", tx->c[0]->name, inside, inside == 1 ? "" : "s",
				 tx->nr > 1 ? "s" : "", old[0],
				 tx->nr > 1 ? ", ..." : "", tx->nr > 1 ? "" : "s");
		else if (err == -ENOSPC)
			xk_error(error, "%s: more than %d threads inside safe spans",
				 tx->c[0]->name, XK_MAX_TRACKED);
		else if (err)
			xk_error(error, "%s: stop_machine failed (%d)", tx->c[0]->name, err);
	} else {
		return xk_error(error, "unknown mode %u", mode), -EINVAL;
	}
	*ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	audit(tx, old, mode, *ns, err ? error : NULL);
	if (err)
		return err;
	for (i = 0; i < tx->nr; i++) {
		tx->c[i]->last_transition_ns = *ns;
		tx->c[i]->last_mode = mode;
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
