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
#include <linux/wait.h>

#include "xk_internal.h"

#define SCAN_DEPTH 64

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

/* Entry and exit probes, for the duration of one global transition. */
static int register_tracking(struct xk_const *c, char *error)
{
	for (int i = 0; i < c->nr_spans; i++) {
		struct xk_span *s = &c->spans[i];
		int err;

		memset(&s->entry, 0, sizeof(s->entry));
		s->entry.addr = (kprobe_opcode_t *)s->start_addr;
		s->entry.pre_handler = xk_entry_handler;
		err = register_kprobe(&s->entry);
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
			e->kp.addr = (kprobe_opcode_t *)(s->start_addr - s->desc.start +
							 s->desc.exits[k]);
			e->kp.pre_handler = xk_exit_handler;
			err = register_kprobe(&e->kp);
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
 * Runs on one CPU with every other CPU stopped and interrupts off
 * (stop_machine). Counts the threads whose stack shows them inside a safe
 * span and turns tracking on; if none is inside, switches at once.
 */
static int scan_stacks(void *data)
{
	struct xk_const *c = data;
	unsigned long entries[SCAN_DEPTH];
	struct task_struct *g, *t;
	int n = 0;

	memset(c->tracked, 0, sizeof(c->tracked));
	c->track_overflow = false;
	atomic_set(&c->inside, 0);
	rcu_read_lock();
	for_each_process_thread(g, t) {
		unsigned int nr = stack_trace_save_tsk(t, entries, SCAN_DEPTH, 0);

		for (unsigned int k = 0; k < nr; k++) {
			if (!in_some_span(c, entries[k]))
				continue;
			if (n == XK_MAX_TRACKED) {
				c->track_overflow = true;
				break;
			}
			c->tracked[n].task = t;
			c->tracked[n++].depth = 1;
			atomic_inc(&c->inside);
			break;
		}
	}
	rcu_read_unlock();
	if (atomic_read(&c->inside) == 0) {
		WRITE_ONCE(c->value, c->pending_value);
		atomic_set(&c->tr_state, XK_TR_DONE);
	} else {
		WRITE_ONCE(c->tracking, true);
	}
	return 0;
}

/*
 * Called with xk_lock held, in process context. Returns 0 when the value
 * is in force, -ETIMEDOUT (old value in force) when threads stayed inside.
 */
int xk_transition(struct xk_const *c, s64 value, u32 mode, u32 timeout_ms,
		  char *error, u64 *ns)
{
	ktime_t t0 = ktime_get();
	s64 old = c->value;
	int err = 0, inside = 0;

	if (value < c->min || value > c->max)
		return xk_error(error, "%s: value %lld is out of bounds [%lld, %lld]",
				c->name, value, c->min, c->max), -ERANGE;
	if (mode == XK_MODE_IMMEDIATE) {
		WRITE_ONCE(c->value, value);
	} else if (mode == XK_MODE_GLOBAL) {
		err = register_tracking(c, error);
		if (err)
			return err;
		c->pending_value = value;
		atomic_set(&c->tr_state, XK_TR_PENDING);
		err = stop_machine(scan_stacks, c, NULL);
		if (!err && !wait_event_timeout(c->tr_wait,
						atomic_read(&c->tr_state) != XK_TR_PENDING,
						msecs_to_jiffies(timeout_ms ?: 1000)) &&
		    atomic_cmpxchg(&c->tr_state, XK_TR_PENDING, XK_TR_ABORTED) ==
			    XK_TR_PENDING) {
			unsigned long flags;

			raw_spin_lock_irqsave(&c->track_lock, flags);
			c->tracking = false;
			inside = atomic_read(&c->inside);
			raw_spin_unlock_irqrestore(&c->track_lock, flags);
			err = -ETIMEDOUT;
		}
		if (!err && c->track_overflow)
			err = -ENOSPC;
		unregister_tracking(c);
		WRITE_ONCE(c->tracking, false);
		atomic_set(&c->tr_state, XK_TR_IDLE);
		if (err == -ETIMEDOUT)
			xk_error(error, "%s: %d thread%s still inside a safe span after "
				 "%u ms; the old value %lld stays in force", c->name,
				 inside, inside == 1 ? "" : "s", timeout_ms ?: 1000, old);
		else if (err == -ENOSPC)
			xk_error(error, "%s: more than %d threads inside safe spans",
				 c->name, XK_MAX_TRACKED);
		else if (err)
			xk_error(error, "%s: stop_machine failed (%d)", c->name, err);
	} else {
		return xk_error(error, "unknown mode %u", mode), -EINVAL;
	}
	*ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	if (err) {
		pr_notice("set %s by %s[%d] uid %u: %lld -> %lld failed: %s\n", c->name,
			  current->comm, task_pid_nr(current),
			  from_kuid(&init_user_ns, current_uid()), old, value, error);
		return err;
	}
	c->last_transition_ns = *ns;
	c->last_mode = mode;
	pr_info("set %s by %s[%d] uid %u: %lld -> %lld (%s, %llu us)\n", c->name,
		current->comm, task_pid_nr(current),
		from_kuid(&init_user_ns, current_uid()), old, value,
		mode == XK_MODE_GLOBAL ? "global" : "immediate", *ns / 1000);
	return 0;
}
