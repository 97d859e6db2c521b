// SPDX-License-Identifier: GPL-2.0
/*
 * Xk-tune: the kfunc through which eBPF policies choose values, and the
 * module's own probes that go with it (the interface: xk_kfunc.h).
 *
 * A constant loaded with a policy (xk load --policy) keeps the module's
 * rewrite probes registered but disarmed: its state is written only by
 * xk_choose, called from the policy's kprobe programs, which the module
 * runs from its own kprobes at the spans' probe points (hit_handler). What
 * a program may do there is confined:
 *
 * - Binding. xk_policy_arm() gives the constant a slot in xk_slots and a
 *   random 40-bit secret; the loader hands the module span i's program
 *   with the cookie secret | slot | i (xk_policy_set_prog), which the
 *   module puts in the run context when it runs the program. xk_choose
 *   reads the cookie of the running program from its run context
 *   (current->bpf_ctx), never from the program: a program attached by
 *   another loader (a perf kprobe: no cookie), a cookie of an earlier load
 *   of the policy (an old secret) or a program at another address is
 *   refused and counted. The cookie also names the span: no search on the
 *   hot path. The module holds the programs until the constant goes.
 * - Program kinds. The kfunc set's filter (xk_kfunc_filter) admits plain
 *   kprobe programs only: never sleepable ones (uprobe.s runs under
 *   rcu_read_lock_trace() alone, which the grace period of an unload does
 *   not wait for) and never kprobe.multi/session programs (whose run
 *   context is laid out otherwise). A uprobe program is refused at run time
 *   (its run context says so).
 * - One call per hit. The inverse forms of the scope table read the
 *   location they write, so a second write in one hit would apply the delta
 *   twice. The module registers a kprobe of its own at each span's probe
 *   point (hit_handler) that clears this CPU's `called` flag; xk_choose
 *   refuses (and counts) a call when the flag is set and sets it otherwise.
 *   The clear happens before the span's program runs, in the same handler;
 *   kprobes at one address are aggregated and all run on every hit with
 *   no other kprobe running on that CPU meanwhile, so a foreign program
 *   aggregated there runs inside the same hit (and is refused anyway).
 * - Values. Bounded to the constant's [min, max] (clamped, counted); the
 *   state written is the scope table's for that value, computed here.
 * - Pins. Where spans nest, a thread's first value holds until it leaves
 *   the safe span: module kprobes at the safe spans' exits (exit_handler)
 *   release it, and so does the task's exit (sched_process_exit), so no pin
 *   outlives its task. Only task context pins (probed_in_task): an
 *   interrupt or softirq that borrowed a thread is not that thread.
 *
 * Lifetimes: a BPF program runs xk_choose with preemption disabled inside
 * rcu_read_lock() (run_program, or trace_call_bpf for a foreign one;
 * sleepable programs are refused), so xk_policy_release() clears the slot
 * and waits for a grace period before the constant goes; a program
 * attached later finds the slot empty or another secret in it.
 */
#define pr_fmt(fmt) "xkernel: " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/filter.h>
#include <linux/kprobes.h>
#include <linux/random.h>
#include <linux/ratelimit.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>

#include <linux/utsname.h>
#include <linux/version.h>

#include "xk_internal.h"
#include "xk_kfunc.h"

atomic64_t xk_refused_outside;

/*
 * Policies need what this file confines them with: a kfunc set's filter
 * (6.9), the program's own sleepable flag and the uprobe mark of the run
 * context (6.10). An older kernel (Debian 12's 6.1) loads constants and
 * sets values; a policy is refused at load, naming the kernel.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)

/*
 * A kprobe of the module's own: at a span's probe point (hit_handler, which
 * also runs the span's program), or at a safe-span exit (exit_handler).
 */
struct xk_pol_probe {
	struct kprobe kp;
	struct xk_const *c;
	struct bpf_prog *prog;		/* the span's program; NULL: none yet */
	u64 cookie;			/* its run context's: handle | span */
};

/*
 * The state last written at a span whose programs read no register (it
 * depends on the value alone), per CPU: a policy that keeps choosing one
 * value runs no program. Written and read by xk_choose only.
 */
struct xk_pol_cache {
	s64 n;
	bool valid;
	u64 out[XK_MAX_LOCS];
};

/* A policy-driven constant's binding and probes (c->pol). */
struct xk_policy_state {
	u64 cookie;			/* secret | slot, span index 0 */
	struct xk_pol_cache __percpu *cache;	/* nr_spans per CPU */
	int slot;			/* in xk_slots, -1: none */
	bool exit_tp;			/* holds a reference on the exit probe */
	int nr;				/* probes registered */
	struct kprobe **kps;
	struct xk_pol_probe *probes;
	struct xk_pol_probe **hit;	/* span i's probe at its probe point */
	bool committed;			/* the programs run (XK_IOC_POLICY_PROG
					 * with prog_fd -1); none is added after */
};

/* the run context of the program this CPU's hit_handler runs, NULL
 * otherwise: xk_choose obeys only a call from it (bound_span) */
static DEFINE_PER_CPU(struct bpf_run_ctx *, module_run_ctx);

/* The policy-driven constants by slot; written under xk_lock, read (RCU) by
 * xk_choose and the task-exit probe. */
static struct xk_const __rcu *xk_slots[XK_POLICY_SLOTS];

static int refuse_unbound(const struct pt_regs *regs, u64 cookie,
			  const char *why)
{
	atomic64_inc(&xk_refused_outside);
	pr_warn_ratelimited("xk_choose refused at %pS (%s[%d], cookie %#llx): "
			    "%s\n", (void *)regs->ip, current->comm,
			    task_pid_nr(current), cookie, why);
	return -EPERM;
}

/*
 * The span the running program was attached for by xk load, or NULL (the
 * refusal counted). The probe point a kprobe program stopped at is one
 * int3 before its ip (an optimized probe sets ip the same way). Runs in the
 * program, under its RCU read lock.
 */
static struct xk_span *bound_span(const struct pt_regs *regs)
{
	const struct bpf_run_ctx *rc = current->bpf_ctx;
	const struct bpf_trace_run_ctx *run;
	struct xk_const *c;
	u64 cookie;
	u32 slot, idx;

	if (!rc) {
		refuse_unbound(regs, 0, "not called from a kprobe program");
		return NULL;
	}
	if (rc != this_cpu_read(module_run_ctx)) {
		refuse_unbound(regs, 0, "not a program the module runs for a "
			       "loaded policy (foreign: attached by another loader)");
		return NULL;
	}
	run = container_of(rc, struct bpf_trace_run_ctx, run_ctx);
	cookie = run->bpf_cookie;
	if (run->is_uprobe) {
		refuse_unbound(regs, cookie, "a uprobe program");
		return NULL;
	}
	slot = (cookie >> XK_COOKIE_SLOT_SHIFT) & XK_COOKIE_SLOT_MASK;
	idx = cookie & XK_COOKIE_SPAN_MASK;
	c = slot < XK_POLICY_SLOTS ? rcu_dereference(xk_slots[slot]) : NULL;
	if (!c || (cookie & ~XK_COOKIE_SPAN_MASK) != c->pol->cookie ||
	    idx >= c->nr_spans) {
		refuse_unbound(regs, cookie, "not a program xk load attached for "
			       "a loaded policy (foreign, or of an earlier load)");
		return NULL;
	}
	if (regs->ip - INT3_INSN_SIZE != c->spans[idx].probe_addr) {
		refuse_unbound(regs, cookie, "not at the probe point of its span");
		return NULL;
	}
	return &c->spans[idx];
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

/*
 * This CPU's figures of the context named by label (preemption off). The
 * label is compared as two words: a few instructions per hit.
 */
static void count_context(struct xk_policy_stats *ps, const char *label,
			  u32 size, s64 value, bool clamped)
{
	u64 name[XK_LABEL_MAX / sizeof(u64)] = {};
	struct xk_ctx_stat *st = NULL;
	int nr = ps->nr_ctxs;

	BUILD_BUG_ON(XK_LABEL_MAX != sizeof(name));
	memcpy(name, label, min_t(u32, size, sizeof(name)));
	((char *)name)[XK_LABEL_MAX - 1] = '\0';
	for (int i = 0; i < nr; i++) {
		const u64 *l = (const u64 *)ps->ctxs[i].label;

		if (l[0] == name[0] && l[1] == name[1]) {
			st = &ps->ctxs[i];
			break;
		}
	}
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
	if (c->nests) {
		unsigned long flags;

		raw_spin_lock_irqsave(&c->policy_lock, flags);
		for (int i = 0; i < c->nr_pins; i++)
			req->pol_pins += !!c->pins[i].task;
		raw_spin_unlock_irqrestore(&c->policy_lock, flags);
	}
	for_each_possible_cpu(cpu) {
		const struct xk_policy_stats *ps = per_cpu_ptr(c->stats, cpu);
		int nr = smp_load_acquire(&ps->nr_ctxs);

		req->pol_sets += READ_ONCE(ps->sets);
		req->pol_clamped += READ_ONCE(ps->clamped);
		req->pol_pinned += READ_ONCE(ps->pinned);
		req->pol_writes += READ_ONCE(ps->writes);
		req->pol_refused += READ_ONCE(ps->refused);
		req->pol_exits += READ_ONCE(ps->exits);
		req->pol_missed += READ_ONCE(ps->missed);
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

/*
 * Whether the probed code ran in the context of current as a thread, and
 * not in an interrupt, an NMI or a softirq that borrowed it. in_task()
 * cannot tell from a kprobe handler: an int3 probe runs as an NMI
 * (irqentry_nmi_enter) whatever it interrupted. On x86-64, hard interrupts,
 * NMIs and the softirqs they or local_bh_enable() run are served on other
 * stacks than the task's, and ksoftirqd's say so in the preempt count
 * (in_serving_softirq, which the probe's own entry does not change).
 */
static bool probed_in_task(const struct pt_regs *regs)
{
	unsigned long stack = (unsigned long)task_stack_page(current);

	return regs->sp - stack < THREAD_SIZE && !in_serving_softirq();
}

/*
 * A thread leaves a safe span (module kprobe at an exit, or the task exits):
 * its pin, if it holds one, is released. Any context; takes c->policy_lock.
 */
static bool release_pin(struct xk_const *c, struct task_struct *t)
{
	struct xk_pin *p;
	unsigned long flags;

	if (!READ_ONCE(c->nr_pins))
		return false;
	raw_spin_lock_irqsave(&c->policy_lock, flags);
	p = find_pin(c, t, NULL);
	if (p)
		drop_pin(c, p);
	raw_spin_unlock_irqrestore(&c->policy_lock, flags);
	return p;
}

/*
 * Runs the span's program on the registers at its probe point as the
 * kernel runs a raw tracepoint program (__bpf_trace_run): not when the same
 * program already runs on this CPU (its own per-CPU guard, prog->active;
 * counted in the constant's missed), under rcu_read_lock(), with a trace
 * run context that carries the cookie, which this CPU's module_run_ctx
 * names for xk_choose. The kernel's bpf_prog_active guard is not exported
 * (and kallsyms_lookup_name is sealed where IBT is on). Migration needs no
 * guard: a kprobe handler runs with preemption off. Pairs with
 * xk_policy_set_prog(), which publishes p->prog after p->cookie.
 */
static void run_program(struct xk_pol_probe *p, struct bpf_prog *prog,
			struct pt_regs *regs)
{
	struct bpf_trace_run_ctx run_ctx = { .bpf_cookie = p->cookie };
	struct bpf_run_ctx *old, *outer;

	if (unlikely(this_cpu_inc_return(*prog->active) != 1)) {
		this_cpu_inc(p->c->stats->missed);
		goto out;
	}
	outer = this_cpu_read(module_run_ctx);
	this_cpu_write(module_run_ctx, &run_ctx.run_ctx);
	rcu_read_lock();
	old = bpf_set_run_ctx(&run_ctx.run_ctx);
	bpf_prog_run(prog, regs);
	bpf_reset_run_ctx(old);
	rcu_read_unlock();
	this_cpu_write(module_run_ctx, outer);
out:
	this_cpu_dec(*prog->active);
}

/*
 * The module's kprobe at a span's probe point: a new hit, so xk_choose may
 * be called once more on this CPU (see the top of this file), then the
 * span's program, which chooses. Runs in the probed context, preemption
 * off; a program attached there by someone else (a perf kprobe) is
 * aggregated with it and runs after it, its calls refused.
 */
static int hit_handler(struct kprobe *kp, struct pt_regs *regs)
{
	struct xk_pol_probe *p = container_of(kp, struct xk_pol_probe, kp);
	struct bpf_prog *prog;

	this_cpu_write(p->c->stats->called, false);
	/* the programs run once the loader committed them all: no hit
	 * chooses while other spans still run the compiled-in value */
	if (!smp_load_acquire(&p->c->pol->committed))
		return 0;
	prog = READ_ONCE(p->prog);
	if (prog)
		run_program(p, prog, regs);
	return 0;
}

/* The module's kprobe at a safe-span exit: the thread's pin ends. */
static int exit_handler(struct kprobe *kp, struct pt_regs *regs)
{
	struct xk_const *c = container_of(kp, struct xk_pol_probe, kp)->c;

	if (probed_in_task(regs) && release_pin(c, current))
		this_cpu_inc(c->stats->exits);
	return 0;
}

/*
 * sched_process_exit: a task that exits still holding a pin (it left the
 * safe span without passing an exit probe: a missed kprobe, kprobes
 * disabled) has it released, so that no pin outlives its task and a new
 * task at the same address inherits nothing. Runs in the exiting task,
 * preemption off (tracepoint), which is an RCU read-side section.
 */
static void task_exit_probe(void *data, struct task_struct *t)
{
	rcu_read_lock();
	for (int i = 0; i < XK_POLICY_SLOTS; i++) {
		struct xk_const *c = rcu_dereference(xk_slots[i]);

		if (c && c->nests)
			release_pin(c, t);
	}
	rcu_read_unlock();
}

static struct tracepoint *exit_tp;
static int exit_tp_users;		/* under xk_lock */

static void find_exit_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_exit"))
		exit_tp = tp;
}

/* Under xk_lock: the task-exit probe registered while a constant pins. */
static int exit_tp_get(char *error)
{
	int err;

	if (exit_tp_users++)
		return 0;
	if (!exit_tp)
		for_each_kernel_tracepoint(find_exit_tp, NULL);
	err = exit_tp ? tracepoint_probe_register(exit_tp, task_exit_probe, NULL)
		      : -ENOENT;
	if (err) {
		exit_tp_users--;
		xk_error(error, "cannot watch task exits (sched_process_exit: %d), "
			 "which a policy's pins need", err);
	}
	return err;
}

/* Under xk_lock; waits until no task-exit probe runs. */
static void exit_tp_put(void)
{
	if (--exit_tp_users)
		return;
	tracepoint_probe_unregister(exit_tp, task_exit_probe, NULL);
	tracepoint_synchronize_unregister();
}

static void add_probe(struct xk_policy_state *ps, struct xk_const *c,
		      unsigned long addr, kprobe_pre_handler_t handler)
{
	struct xk_pol_probe *p = &ps->probes[ps->nr];

	p->c = c;
	p->kp.addr = (kprobe_opcode_t *)addr;
	p->kp.pre_handler = handler;
	ps->kps[ps->nr++] = &p->kp;
}

/*
 * At load of a policy-driven constant, its spans validated, before it goes
 * on xk_consts; under xk_lock. Registers the hit probe of each span and,
 * where spans nest, a probe at each safe-span exit and the task-exit
 * probe; takes a slot and draws the secret. *cookie gets the handle the
 * loader attaches with. On failure nothing is left registered (c->pol is
 * freed by xk_policy_release, which xk_const_destroy calls).
 */
int xk_policy_arm(struct xk_const *c, u64 *cookie, char *error)
{
	struct xk_policy_state *ps;
	int slot, nr = c->nr_spans, err;
	u64 secret;

	for (int i = 0; i < c->nr_spans && c->nests; i++)
		for (u32 j = 0; j < c->spans[i].desc.nr_exits; j++)
			nr += c->spans[i].desc.exits[j] < c->spans[i].desc.func_size;
	ps = kzalloc(sizeof(*ps), GFP_KERNEL);
	if (!ps)
		return -ENOMEM;
	ps->slot = -1;
	c->pol = ps;
	ps->probes = kcalloc(nr, sizeof(*ps->probes), GFP_KERNEL);
	ps->kps = kcalloc(nr, sizeof(*ps->kps), GFP_KERNEL);
	ps->hit = kcalloc(c->nr_spans, sizeof(*ps->hit), GFP_KERNEL);
	ps->cache = __alloc_percpu(sizeof(*ps->cache) * c->nr_spans,
				   __alignof__(*ps->cache));
	if (!ps->probes || !ps->kps || !ps->hit || !ps->cache)
		return -ENOMEM;
	for (slot = 0; slot < XK_POLICY_SLOTS; slot++)
		if (!rcu_access_pointer(xk_slots[slot]))
			break;
	if (slot == XK_POLICY_SLOTS)
		return xk_error(error, "%s: %d policy-driven constants are loaded "
				"already, the most the module takes", c->name,
				XK_POLICY_SLOTS), -ENOSPC;
	do
		secret = get_random_u64() >> XK_COOKIE_SECRET_SHIFT;	/* 40 bits */
	while (!secret);
	ps->cookie = secret << XK_COOKIE_SECRET_SHIFT |
		     (u64)slot << XK_COOKIE_SLOT_SHIFT;

	for (int i = 0; i < c->nr_spans; i++) {
		const struct xk_span *s = &c->spans[i];

		ps->hit[i] = &ps->probes[ps->nr];
		add_probe(ps, c, s->probe_addr, hit_handler);
		for (u32 j = 0; j < s->desc.nr_exits && c->nests; j++)
			/* an exit at the function's end (a path that falls off
			 * it into a noreturn call) has no instruction to probe */
			if (s->desc.exits[j] < s->desc.func_size)
				add_probe(ps, c, s->func_addr + s->desc.exits[j],
					  exit_handler);
	}
	err = register_kprobes(ps->kps, ps->nr);
	if (err) {
		ps->nr = 0;	/* register_kprobes undid its own */
		return xk_error(error, "%s: cannot register the policy's probes "
				"(%d)", c->name, err), err;
	}
	if (c->nests) {
		err = exit_tp_get(error);
		if (err)
			return err;
		ps->exit_tp = true;
	}
	ps->slot = slot;
	rcu_assign_pointer(xk_slots[slot], c);
	*cookie = ps->cookie;
	return 0;
}

/*
 * Undoes xk_policy_arm, whatever part of it was done: first thing when a
 * constant is destroyed, process context, under xk_lock. The slot emptied,
 * one grace period: no xk_choose and no task-exit probe looks at c any
 * more (programs run under rcu_read_lock(); sleepable ones never get the
 * kfunc). Unregistering the probes waits for their handlers.
 */
void xk_policy_release(struct xk_const *c)
{
	struct xk_policy_state *ps = c->pol;

	if (!ps)
		return;
	/* the programs stop first (hit_handler reads committed under the
	 * grace period below), so that none of the module's own calls meets
	 * the empty slot and is counted as foreign */
	WRITE_ONCE(ps->committed, false);
	if (ps->slot >= 0)
		RCU_INIT_POINTER(xk_slots[ps->slot], NULL);
	synchronize_rcu();
	if (ps->nr)
		unregister_kprobes(ps->kps, ps->nr);
	/* no hit handler runs any more: the programs may go */
	for (int i = 0; i < c->nr_spans && ps->hit; i++)
		if (ps->hit[i] && ps->hit[i]->prog)
			bpf_prog_put(ps->hit[i]->prog);
	if (ps->exit_tp)
		exit_tp_put();
	free_percpu(ps->cache);
	kfree(ps->hit);
	kfree(ps->kps);
	kfree(ps->probes);
	kfree(ps);
	c->pol = NULL;
}

/*
 * XK_IOC_POLICY_PROG: span idx of the constant whose handle the cookie
 * carries gets the program prog_fd names, run by its hit probe
 * (run_program) once committed; prog_fd -1 commits: the constant's
 * programs run from then on, and none is added after. Refused: a cookie
 * of no loaded policy (unknown slot, another secret, a span out of
 * range), a span that has its program already, a committed policy, a
 * locked-down kernel, anything but a plain kprobe program that cannot
 * sleep and does not override a probed function's return. On success the
 * module holds a reference until the constant is unloaded
 * (xk_policy_release). Process context, under xk_lock.
 */
int xk_policy_set_prog(u64 cookie, int prog_fd, char *error)
{
	u32 slot = (cookie >> XK_COOKIE_SLOT_SHIFT) & XK_COOKIE_SLOT_MASK;
	u32 idx = cookie & XK_COOKIE_SPAN_MASK;
	struct xk_pol_probe *p;
	struct bpf_prog *prog;
	struct xk_const *c;
	const char *why;
	int err;

	err = xk_refuse_locked_down(error);
	if (err)
		return err;
	c = slot < XK_POLICY_SLOTS ?
	    rcu_dereference_protected(xk_slots[slot], lockdep_is_held(&xk_lock)) :
	    NULL;
	if (!c || (cookie & ~XK_COOKIE_SPAN_MASK) != c->pol->cookie)
		return xk_error(error, "handle %#llx: no policy-driven constant "
				"loaded with it (unloaded, or loaded again since)",
				cookie), -ENOENT;
	if (idx >= c->nr_spans)
		return xk_error(error, "%s: no span %u (it has %d)", c->name, idx,
				c->nr_spans), -EINVAL;
	if (c->pol->committed)
		return xk_error(error, "%s: the policy's programs are committed; "
				"none is added after", c->name), -EBUSY;
	if (prog_fd == -1) {
		/* after every program's publication: hit_handler acquires */
		smp_store_release(&c->pol->committed, true);
		return 0;
	}
	p = c->pol->hit[idx];
	if (p->prog)
		return xk_error(error, "%s: span %u has its program already",
				c->name, idx), -EEXIST;
	prog = bpf_prog_get_type_dev(prog_fd, BPF_PROG_TYPE_KPROBE, false);
	if (IS_ERR(prog))
		return xk_error(error, "%s: span %u: fd %d is not a kprobe program "
				"(%ld)", c->name, idx, prog_fd, PTR_ERR(prog)),
		       PTR_ERR(prog);
	why = prog->sleepable ? "sleepable" :
	      prog->expected_attach_type ? "of another attach type" :
	      prog->kprobe_override ? "overriding returns (bpf_override_return)" :
	      NULL;
	if (why) {
		/* the message before the put, which may free the program */
		xk_error(error, "%s: span %u: program %s is %s, not a plain kprobe "
			 "program", c->name, idx, prog->aux->name, why);
		bpf_prog_put(prog);
		return -EINVAL;
	}
	p->cookie = c->pol->cookie | idx;
	p->prog = prog;
	return 0;
}

/*
 * The value for this execution: clamped to the bounds (counted); where
 * spans nest and this is a thread, the one it pinned inside the safe span,
 * or v pinned now. Runs in xk_choose.
 */
static s64 settle_value(struct xk_const *c, struct xk_policy_stats *ps,
			const struct pt_regs *regs, s64 v, bool *clamped)
{
	struct xk_pin *p, *free;
	unsigned long flags;

	*clamped = v < c->min || v > c->max;
	if (*clamped) {
		v = clamp(v, c->min, c->max);
		ps->clamped++;
	}
	if (!c->nests || !probed_in_task(regs))
		return v;
	raw_spin_lock_irqsave(&c->policy_lock, flags);
	p = find_pin(c, current, &free);
	/* a frame above the one that chose has returned: stale */
	if (p && regs->sp > p->sp) {
		free = p;
		p = NULL;
	}
	if (p) {
		v = p->value;
		ps->pinned++;
	} else if (free) {
		free->task = current;
		free->sp = regs->sp;
		free->value = v;
		if (free == &c->pins[c->nr_pins])
			c->nr_pins++;
	}
	raw_spin_unlock_irqrestore(&c->policy_lock, flags);
	if (!p && !free)
		pr_warn_ratelimited("%s: %d threads hold a pinned value: %s[%d] "
				    "chooses unpinned\n", c->name, XK_MAX_PINS,
				    current->comm, task_pid_nr(current));
	return v;
}

/*
 * Writes the span's state for value n, as a kernel built with n holds it
 * here: the scope table's programs run on the registers at the probe point;
 * a span whose programs read none reuses this CPU's last result for n. Runs
 * in xk_choose, preemption off; 0 or -EFAULT (a memory location faulted:
 * the constant is disarmed, xk_probe.c).
 */
static int write_state(struct xk_span *s, struct pt_regs *regs, s64 n)
{
	/* inputs sized for the ABI's programs; a policy's spans have no
	 * memory inputs (refused at load), so those slots stay 0 */
	static const u64 no_regs[XK_NR_INPUTS];
	struct xk_const *c = s->owner;
	u64 in[XK_NR_INPUTS] = { 0 }, out[XK_MAX_LOCS];
	struct xk_pol_cache *pc;

	if (s->const_only) {
		pc = this_cpu_ptr(c->pol->cache) + (s - c->spans);
		if (!pc->valid || pc->n != n) {
			for (u32 i = 0; i < s->desc.nr_locs; i++)
				pc->out[i] = xk_expr_eval(&s->desc.locs[i].expr,
							  no_regs, n);
			pc->n = n;
			pc->valid = true;
		}
		return xk_write_locations(s, regs, no_regs, pc->out);
	}
	xk_regs_to_array(regs, in);
	/* compute all first: a location may be another's input */
	for (u32 i = 0; i < s->desc.nr_locs; i++)
		out[i] = xk_expr_eval(&s->desc.locs[i].expr, in, n);
	return xk_write_locations(s, regs, in, out);
}

__bpf_kfunc_start_defs();

/**
 * xk_choose - give a constant a value for this execution of a span
 * @ctx: the program's context (at the probe point of a critical span)
 * @value: the value the policy wants (the compiled-in one to leave it)
 * @label: the context the value is for (a device, a flow class), counted
 * @label__sz: its size (at most XK_LABEL_MAX bytes are kept)
 *
 * Only from a program xk load attached for the span (its attach cookie),
 * once per hit. Clamps the value to the constant's bounds (counted); where
 * spans nest, a thread keeps the value it chose first until it leaves the
 * safe span; writes the span's state for the value (nothing for the
 * compiled-in one). Returns 0; -EPERM from any other program (counted in
 * refused_outside); -EBUSY for a second call in one hit and -EFAULT when a
 * write faulted (counted in refused, nothing written).
 */
__bpf_kfunc int xk_choose(struct pt_regs *ctx, s64 value, const char *label,
			  u32 label__sz)
{
	struct xk_span *s = bound_span(ctx);
	struct xk_policy_stats *ps;
	struct xk_const *c;
	bool clamped;
	s64 v;

	if (!s)
		return -EPERM;
	c = s->owner;
	ps = this_cpu_ptr(c->stats);
	if (ps->called) {
		ps->refused++;
		pr_warn_ratelimited("%s: a second xk_choose in one hit of %pS "
				    "refused (%s[%d])\n", c->name,
				    (void *)s->probe_addr, current->comm,
				    task_pid_nr(current));
		return -EBUSY;
	}
	ps->called = true;
	ps->sets++;
	v = settle_value(c, ps, ctx, value, &clamped);
	count_context(ps, label, label__sz, v, clamped);
	if (v == c->def)
		return 0;
	/* a write that faulted once disarms the constant (xk_probe.c) */
	if (READ_ONCE(c->faulted) || write_state(s, ctx, v)) {
		ps->refused++;
		return -EFAULT;
	}
	atomic64_inc(&s->hits);
	ps->writes++;
	return 0;
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(xk_kfunc_ids)
BTF_ID_FLAGS(func, xk_choose)
BTF_KFUNCS_END(xk_kfunc_ids)

/*
 * At verification of every program that calls a kfunc of the set: only
 * plain kprobe programs that cannot sleep (see the top of this file).
 * Non-zero hides the kfunc from the program: the verifier then refuses it
 * ("calling kernel function xk_choose is not allowed").
 */
static int xk_kfunc_filter(const struct bpf_prog *prog, u32 kfunc_id)
{
	if (!btf_id_set8_contains(&xk_kfunc_ids, kfunc_id))
		return 0;
	if (prog->type != BPF_PROG_TYPE_KPROBE || prog->sleepable ||
	    prog->expected_attach_type)
		return -EACCES;
	return 0;
}

static const struct btf_kfunc_id_set xk_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &xk_kfunc_ids,
	.filter = xk_kfunc_filter,
};

/*
 * Runs once at module init. A BPF program that calls the kfunc holds a
 * reference on the module, so the module outlives every caller.
 */
int xk_policy_init(void)
{
	return register_btf_kfunc_id_set(BPF_PROG_TYPE_KPROBE, &xk_kfunc_set);
}

/*
 * XK_IOC_VERSION, any time: policies can load, where the kernel gives
 * modules BTF (a kernel built without it, as small self-built ones are,
 * registers no kfunc a program can find).
 */
u32 xk_policy_features(void)
{
	return IS_ENABLED(CONFIG_DEBUG_INFO_BTF_MODULES) ? XK_FEATURE_POLICIES : 0;
}

#else	/* before 6.10: no policies */

/* XK_IOC_VERSION, any time: no policy can load. */
u32 xk_policy_features(void)
{
	return 0;
}

static int no_policies(char *error)
{
	xk_error(error, "eBPF policies need Linux 6.10 or later (the kfunc "
		 "filter and run-context marks that confine xk_choose to the "
		 "module's own kprobe programs); this kernel is %s: load the "
		 "constant without --policy and set its value", init_utsname()->release);
	return -EOPNOTSUPP;
}

/* At module init: no kfunc is registered. */
int xk_policy_init(void)
{
	return 0;
}

/* No constant has a policy: nothing to report. Under xk_lock. */
void xk_policy_status(struct xk_const *c, struct xk_ioc_status *req)
{
}

/* At load with --policy, under xk_lock: refused, naming the kernel. */
int xk_policy_arm(struct xk_const *c, u64 *cookie, char *error)
{
	return no_policies(error);
}

/* XK_IOC_POLICY_PROG, under xk_lock: no constant has a policy. */
int xk_policy_set_prog(u64 cookie, int prog_fd, char *error)
{
	return no_policies(error);
}

/* At destroy, under xk_lock: no constant was armed. */
void xk_policy_release(struct xk_const *c)
{
}

#endif
