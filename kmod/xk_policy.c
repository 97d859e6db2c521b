// SPDX-License-Identifier: GPL-2.0
/*
 * Xk-tune: the kfuncs through which eBPF policies choose values and write
 * kernel state (the interface is described in include/xk/policy.h).
 *
 * A constant loaded with a policy (xk load --policy) keeps the module's own
 * rewrite probes registered but disarmed: its state is written only by the
 * policy's kprobe programs, attached by user space at the same probe points.
 * Every kfunc here runs inside such a program: in the probed context, with
 * preemption disabled and inside an RCU read-side section (trace_call_bpf),
 * so it walks xk_consts with the RCU list primitives; xk_table.c removes a
 * constant with list_del_rcu() and frees it after a grace period.
 *
 * What a policy may write is confined: only at the probe point of a span of
 * a policy-driven constant (the context's ip says where the program's kprobe
 * stopped), only that span's locations, only a value within the constant's
 * bounds, and only the state the scope table's update program gives for
 * that value. Anything else is refused, counted and
 * logged (rate-limited); nothing is written.
 */
#define pr_fmt(fmt) "xkernel: " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/kprobes.h>
#include <linux/ratelimit.h>
#include <linux/rculist.h>
#include <linux/sched.h>

#include "xk_internal.h"
#include "xk_kfunc.h"

atomic64_t xk_refused_outside;

/*
 * The probe point a kprobe program stopped at: ip is just past the int3 (an
 * optimized probe sets it the same way). Other kinds of the program type
 * cannot pass for one at a span's probe point: a uprobe's ip is a user
 * address, a kretprobe's is the end of a call (never one byte past an
 * instruction's start), and kprobe programs have no test run.
 */
static unsigned long probe_point(const struct pt_regs *regs)
{
	return regs->ip - INT3_INSN_SIZE;
}

/*
 * The span of a policy-driven constant whose probe point the program is
 * at, or NULL. Runs under the RCU read lock of the BPF program.
 */
static struct xk_span *span_at(const struct pt_regs *regs)
{
	unsigned long addr = probe_point(regs);
	struct xk_const *c;

	list_for_each_entry_rcu(c, &xk_consts, node) {
		if (!c->policy[0])
			continue;
		for (int i = 0; i < c->nr_spans; i++)
			if (c->spans[i].probe_addr == addr)
				return &c->spans[i];
	}
	return NULL;
}

static int refuse_outside(const struct pt_regs *regs, const char *what)
{
	atomic64_inc(&xk_refused_outside);
	pr_warn_ratelimited("%s refused at %pS (%s[%d]): not the probe point of "
			    "a policy-driven span\n", what,
			    (void *)regs->ip, current->comm,
			    task_pid_nr(current));
	return -EPERM;
}

/*
 * Under c->policy_lock: the pin of task t, or NULL; *free (if asked) gets a
 * free slot. Only the slots below c->nr_pins are looked at: usually a few.
 */
static struct xk_pin *find_pin(struct xk_const *c, struct task_struct *t,
			       struct xk_pin **free)
{
	if (free)
		*free = c->nr_pins < XK_MAX_PINS ? &c->pins[c->nr_pins] : NULL;
	for (int i = 0; i < c->nr_pins; i++) {
		if (c->pins[i].task == t)
			return &c->pins[i];
		if (free && !c->pins[i].task)
			*free = &c->pins[i];
	}
	return NULL;
}

/* Under c->policy_lock: frees a pin; the slots in use stay below nr_pins. */
static void drop_pin(struct xk_const *c, struct xk_pin *p)
{
	p->task = NULL;
	while (c->nr_pins && !c->pins[c->nr_pins - 1].task)
		c->nr_pins--;
}

/* This CPU's figures of the context named by label (preemption off). */
static void count_context(struct xk_policy_stats *ps, const char *label,
			  u32 size, s64 value, bool clamped)
{
	char name[XK_LABEL_MAX] = {};
	struct xk_ctx_stat *st = NULL;
	int nr = ps->nr_ctxs;

	for (u32 i = 0; i < size && i < XK_LABEL_MAX - 1 && label[i]; i++)
		name[i] = label[i];
	for (int i = 0; i < nr && !st; i++)
		if (!memcmp(ps->ctxs[i].label, name, sizeof(name)))
			st = &ps->ctxs[i];
	if (!st && nr < XK_MAX_CONTEXTS) {
		st = &ps->ctxs[nr];
		memcpy(st->label, name, sizeof(name));
		/* status reads the entry once it sees the count */
		smp_store_release(&ps->nr_ctxs, nr + 1);
	}
	if (!st) {
		ps->other_ctxs++;
		return;
	}
	WRITE_ONCE(st->value, value);
	WRITE_ONCE(st->last, jiffies);
	st->hits++;
	st->clamped += clamped;
}

/* The status entry of a label, added if new; -1 when they are all taken. */
static int context_index(struct xk_ioc_status *req, const char *label)
{
	for (u32 k = 0; k < req->nr_contexts; k++)
		if (!memcmp(req->contexts[k].label, label, XK_LABEL_MAX))
			return k;
	if (req->nr_contexts == XK_MAX_CONTEXTS)
		return -1;
	memcpy(req->contexts[req->nr_contexts].label, label, XK_LABEL_MAX);
	return req->nr_contexts++;
}

/*
 * Status of a policy-driven constant: every CPU's figures summed, contexts
 * merged by label (the value: the one chosen last). Runs under xk_lock.
 */
void xk_policy_status(struct xk_const *c, struct xk_ioc_status *req)
{
	unsigned long last[XK_MAX_CONTEXTS] = {};
	int cpu;

	strscpy(req->policy, c->policy, sizeof(req->policy));
	for_each_possible_cpu(cpu) {
		const struct xk_policy_stats *ps = per_cpu_ptr(c->stats, cpu);
		int nr = smp_load_acquire(&ps->nr_ctxs);

		req->pol_sets += READ_ONCE(ps->sets);
		req->pol_clamped += READ_ONCE(ps->clamped);
		req->pol_pinned += READ_ONCE(ps->pinned);
		req->pol_writes += READ_ONCE(ps->writes);
		req->pol_refused += READ_ONCE(ps->refused);
		req->pol_exits += READ_ONCE(ps->exits);
		req->pol_other_contexts += READ_ONCE(ps->other_ctxs);
		for (int i = 0; i < nr; i++) {
			const struct xk_ctx_stat *st = &ps->ctxs[i];
			struct xk_ioc_context *out;
			int k = context_index(req, st->label);

			if (k < 0) {
				req->pol_other_contexts += READ_ONCE(st->hits);
				continue;
			}
			out = &req->contexts[k];
			out->hits += READ_ONCE(st->hits);
			out->clamped += READ_ONCE(st->clamped);
			if (!last[k] || time_after(READ_ONCE(st->last), last[k])) {
				last[k] = READ_ONCE(st->last);
				out->value = READ_ONCE(st->value);
			}
		}
	}
}

__bpf_kfunc_start_defs();

/**
 * xk_set - choose the value of a constant for this execution of a span
 * @ctx: the program's context (at the probe point of a critical span)
 * @value: in: the value the policy wants; out: the value to write
 * @label: the context the value is for (a device, a flow class), counted
 * @label__sz: its size (at most XK_LABEL_MAX bytes are kept)
 *
 * Clamps to the constant's bounds (counted). When a thread inside a safe
 * span may reach another span of the constant (c->nests), it keeps the value
 * it chose first until it leaves the safe span (xk_transition_done, or its
 * frame returned): *value is then that one.
 * Returns 0, or -EPERM when the program is not at a policy-driven span.
 */
__bpf_kfunc int xk_set(struct pt_regs *ctx, s64 *value, const char *label,
		       u32 label__sz)
{
	struct xk_span *s = span_at(ctx);
	struct xk_policy_stats *ps;
	struct xk_const *c;
	bool clamped = false;
	s64 v;

	if (!s)
		return refuse_outside(ctx, "xk_set");
	c = s->owner;
	ps = this_cpu_ptr(c->stats);
	v = *value;
	if (v < c->min || v > c->max) {
		v = clamp(v, c->min, c->max);
		clamped = true;
		ps->clamped++;
	}
	ps->sets++;
	if (c->nests) {
		struct xk_pin *p, *free;
		unsigned long flags;

		raw_spin_lock_irqsave(&c->policy_lock, flags);
		p = find_pin(c, current, &free);
		/* a frame above the one that chose has returned: stale */
		if (p && ctx->sp > p->sp) {
			free = p;
			p = NULL;
		}
		if (p) {
			v = p->value;
			ps->pinned++;
		} else if (free) {
			free->task = current;
			free->sp = ctx->sp;
			free->value = v;
			if (free == &c->pins[c->nr_pins])
				c->nr_pins++;
		}
		raw_spin_unlock_irqrestore(&c->policy_lock, flags);
	}
	count_context(ps, label, label__sz, v, clamped);
	*value = v;
	return 0;
}

/**
 * xk_write_kernel - write a span's state as if @value had been compiled in
 * @ctx: the program's context (at the probe point of a critical span)
 * @value: the constant's value (within bounds)
 * @writes: one entry per location of the span, in the scope table's order
 * @writes__sz: their size in bytes
 *
 * The one way a policy changes kernel state. Refused (nothing written,
 * counted): -EPERM away from a policy-driven probe point or for a target
 * that is not the span's location; -ERANGE for a value out of bounds;
 * -EINVAL for a content other than the table's program gives; -EFAULT
 * when a memory location faulted (now or before: the constant is disarmed).
 */
__bpf_kfunc int xk_write_kernel(struct pt_regs *ctx, s64 value,
				const struct xk_write *writes, u32 writes__sz)
{
	struct xk_span *s = span_at(ctx);
	u64 in[XK_NR_REGS], out[XK_MAX_LOCS];
	struct xk_const *c;
	u32 n = writes__sz / sizeof(*writes);

	if (!s)
		return refuse_outside(ctx, "xk_write_kernel");
	c = s->owner;
	if (n != s->desc.nr_locs || writes__sz % sizeof(*writes)) {
		pr_warn_ratelimited("write to %s refused at %pS: %u locations given, "
				    "the span has %u\n", c->name, (void *)s->probe_addr,
				    n, s->desc.nr_locs);
		goto refused;
	}
	if (value < c->min || value > c->max) {
		pr_warn_ratelimited("write to %s refused: value %lld out of bounds "
				    "[%lld, %lld]\n", c->name, value, c->min, c->max);
		this_cpu_inc(c->stats->refused);
		return -ERANGE;
	}
	xk_regs_to_array(ctx, in);
	for (u32 i = 0; i < n; i++) {
		const struct xk_ioc_loc *l = &s->desc.locs[i];
		const struct xk_write *w = &writes[i];
		u64 mask = l->kind == XK_LOC_FLAGS ? XK_EFLAGS_ARITH : xk_mask(l->width);
		bool mem = l->kind == XK_LOC_MEM;

		if (w->kind != l->kind ||
		    (mem && (w->base != l->base || w->disp != l->disp))) {
			pr_warn_ratelimited("write to %s refused at %pS: target %d is "
					    "not the span's location %u\n", c->name,
					    (void *)s->probe_addr, w->kind, i);
			goto refused;
		}
		out[i] = xk_expr_eval(&l->expr, in, value);
		if ((out[i] ^ w->content) & mask) {
			pr_warn_ratelimited("write to %s refused at %pS: %#llx is not "
					    "the state value %lld gives (%#llx)\n",
					    c->name, (void *)s->probe_addr,
					    w->content & mask, value, out[i] & mask);
			this_cpu_inc(c->stats->refused);
			return -EINVAL;
		}
	}
	/* a write that faulted once disarms the constant (xk_probe.c) */
	if (READ_ONCE(c->faulted) || xk_write_locations(s, ctx, in, out)) {
		this_cpu_inc(c->stats->refused);
		return -EFAULT;
	}
	atomic64_inc(&s->hits);
	this_cpu_inc(c->stats->writes);
	return 0;

refused:
	this_cpu_inc(c->stats->refused);
	return -EPERM;
}

/**
 * xk_transition_done - the thread leaves a safe span
 * @ctx: the program's context, at an exit of a policy-driven safe span
 *
 * Ends the thread's pin (xk_set), so that its next execution of the span
 * chooses afresh. Returns 0, or -EPERM away from such an exit.
 */
__bpf_kfunc int xk_transition_done(struct pt_regs *ctx)
{
	unsigned long addr = probe_point(ctx), flags;
	struct xk_const *c;

	list_for_each_entry_rcu(c, &xk_consts, node) {
		bool here = false;

		if (!c->policy[0])
			continue;
		for (int i = 0; i < c->nr_spans && !here; i++)
			for (u32 j = 0; j < c->spans[i].desc.nr_exits && !here; j++)
				here = c->spans[i].func_addr +
					       c->spans[i].desc.exits[j] == addr;
		if (!here)
			continue;
		this_cpu_inc(c->stats->exits);
		if (c->nests) {
			struct xk_pin *p;

			raw_spin_lock_irqsave(&c->policy_lock, flags);
			p = find_pin(c, current, NULL);
			if (p)
				drop_pin(c, p);
			raw_spin_unlock_irqrestore(&c->policy_lock, flags);
		}
		return 0;
	}
	return refuse_outside(ctx, "xk_transition_done");
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(xk_kfunc_ids)
BTF_ID_FLAGS(func, xk_set)
BTF_ID_FLAGS(func, xk_write_kernel)
BTF_ID_FLAGS(func, xk_transition_done)
BTF_KFUNCS_END(xk_kfunc_ids)

static const struct btf_kfunc_id_set xk_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &xk_kfunc_ids,
};

/*
 * Runs once at module init. Kprobe programs only: the kfuncs read the
 * probe point from the context. A BPF program that calls them holds a
 * reference on the module, so the module outlives every caller.
 */
int xk_policy_init(void)
{
	return register_btf_kfunc_id_set(BPF_PROG_TYPE_KPROBE, &xk_kfunc_set);
}
