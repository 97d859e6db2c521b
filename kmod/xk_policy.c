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
#include "xk/policy.h"

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

/* Under c->policy_lock. */
static struct xk_pin *find_pin(struct xk_const *c, struct task_struct *t)
{
	for (int i = 0; i < XK_MAX_PINS; i++)
		if (c->pins[i].task == t)
			return &c->pins[i];
	return NULL;
}

/* Under c->policy_lock: the figures of the context named by label. */
static void count_context(struct xk_const *c, const char *label, u32 size,
			  s64 value, bool clamped)
{
	char name[XK_LABEL_MAX] = {};
	struct xk_ctx_stat *st = NULL;

	for (u32 i = 0; i < size && i < XK_LABEL_MAX - 1 && label[i]; i++)
		name[i] = label[i];
	for (int i = 0; i < c->nr_ctxs && !st; i++)
		if (!strcmp(c->ctxs[i].label, name))
			st = &c->ctxs[i];
	if (!st && c->nr_ctxs < XK_MAX_CONTEXTS) {
		st = &c->ctxs[c->nr_ctxs++];
		memcpy(st->label, name, sizeof(name));
	}
	if (!st) {
		c->other_ctxs++;
		return;
	}
	st->value = value;
	st->hits++;
	st->clamped += clamped;
}

__bpf_kfunc_start_defs();

/**
 * xk_set - choose the value of a constant for this execution of a span
 * @ctx: the program's context (at the probe point of a critical span)
 * @value: in: the value the policy wants; out: the value to write
 * @label: the context the value is for (a device, a flow class), counted
 * @label__sz: its size (at most XK_POLICY_LABEL_MAX bytes are kept)
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
	struct xk_const *c;
	unsigned long flags;
	bool clamped = false;
	s64 v;

	if (!s)
		return refuse_outside(ctx, "xk_set");
	c = s->owner;
	v = *value;
	if (v < c->min || v > c->max) {
		v = clamp(v, c->min, c->max);
		clamped = true;
		atomic64_inc(&c->pol_clamped);
	}
	atomic64_inc(&c->pol_sets);
	raw_spin_lock_irqsave(&c->policy_lock, flags);
	if (c->nests) {
		struct xk_pin *p = find_pin(c, current);

		/* a frame above the one that chose has returned: stale */
		if (p && ctx->sp > p->sp)
			p->task = NULL, p = NULL;
		if (p) {
			v = p->value;
			atomic64_inc(&c->pol_pinned);
		} else if ((p = find_pin(c, NULL))) {
			p->task = current;
			p->sp = ctx->sp;
			p->value = v;
		}
	}
	count_context(c, label, label__sz, v, clamped);
	raw_spin_unlock_irqrestore(&c->policy_lock, flags);
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
 * -EINVAL for a content other than the table's program gives.
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
		atomic64_inc(&c->pol_refused);
		return -ERANGE;
	}
	xk_regs_to_array(ctx, in);
	for (u32 i = 0; i < n; i++) {
		const struct xk_ioc_loc *l = &s->desc.locs[i];
		const struct xk_write *w = &writes[i];
		u64 mask = l->kind == XK_LOC_FLAGS ? XK_EFLAGS_ARITH : xk_mask(l->width);
		bool mem = l->kind == XK_IOC_LOC_MEM;

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
			atomic64_inc(&c->pol_refused);
			return -EINVAL;
		}
	}
	xk_write_locations(s, ctx, in, out);
	atomic64_inc(&s->hits);
	atomic64_inc(&c->pol_writes);
	return 0;

refused:
	atomic64_inc(&c->pol_refused);
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
		atomic64_inc(&c->pol_exits);
		if (c->nests) {
			struct xk_pin *p;

			raw_spin_lock_irqsave(&c->policy_lock, flags);
			p = find_pin(c, current);
			if (p)
				p->task = NULL;
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
