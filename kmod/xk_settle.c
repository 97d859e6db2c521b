// SPDX-License-Identifier: GPL-2.0
/*
 * Settling: once a constant's value is in force for every thread, the
 * immediates of its spans are rewritten in the live text to the value (as
 * the compiler would have emitted them), and the spans' probes go away:
 * the steady-state cost is zero. Undone (the compiled-in bytes and the
 * probes back) before any new value, and at unload.
 *
 * The text changes the way text_poke_bp() changes it, with a kprobe of
 * ours as the int3: a "borrow" probe (int3, never jump-optimized) on the
 * instruction that holds the immediate; CPUs that reach it execute the
 * kprobe's copy of the old instruction out of line, and the span's rewrite
 * probe after it writes the value in force, as it always does. Under that
 * int3 the immediate bytes (never the first byte) are poked with
 * text_poke() under text_mutex and every CPU serialised; unregistering the
 * borrow probe puts the first byte back. At no instant can a thread see
 * another value than the one in force: before, through the borrow probe
 * and after, the text or the rewrite probe give the same value. That
 * holds only for spans whose programs compute their locations afresh
 * (no program reads a register the span writes): the rewrite is then
 * idempotent over the new text; other spans keep their probes.
 *
 * text_poke() and text_mutex are not exported to modules; they are looked
 * up through kallsyms_lookup_name(), itself found with a kprobe that is
 * registered disabled (never armed). Where IBT seals a function against
 * indirect calls, settling is refused. Everything here runs in process
 * context with xk_lock held.
 */
#define pr_fmt(fmt) "xkernel: " fmt

#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/rcupdate_wait.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <asm/cpufeature.h>
#include <asm/ibt.h>
#include <asm/sync_core.h>

#include "xk_internal.h"

static void *(*poke_text)(void *addr, const void *opcode, size_t len);
static struct mutex *poke_mutex;

/* An address that an indirect call may reach: IBT has not sealed it. */
static bool callable(unsigned long addr)
{
	u32 insn;

	if (!addr)
		return false;
	if (!cpu_feature_enabled(X86_FEATURE_IBT))
		return true;
	return !copy_from_kernel_nofault(&insn, (void *)addr, sizeof(insn)) &&
	       is_endbr(insn);
}

static unsigned long (*lookup_name)(const char *name);

/*
 * The address of a kernel symbol the kernel does not export, through
 * kallsyms_lookup_name (itself not exported: found once with a disabled
 * kprobe, which resolves symbol names). 0 with the reason in error when
 * kprobes cannot find it, IBT seals it, or the name is unknown. Process
 * context, under xk_lock (which guards lookup_name).
 */
unsigned long xk_lookup_symbol(const char *name, char *error)
{
	struct kprobe kp = {
		.symbol_name = "kallsyms_lookup_name",
		.flags = KPROBE_FLAG_DISABLED,
	};
	unsigned long addr;

	if (!lookup_name) {
		if (register_kprobe(&kp)) {
			xk_error(error, "kallsyms_lookup_name, which %s needs, "
				 "cannot be found by kprobes here", name);
			return 0;
		}
		addr = (unsigned long)kp.addr;
		unregister_kprobe(&kp);
		if (!callable(addr)) {
			xk_error(error, "IBT seals kallsyms_lookup_name against "
				 "indirect calls (%s cannot be found)", name);
			return 0;
		}
		lookup_name = (void *)addr;
	}
	addr = lookup_name(name);
	if (!addr)
		xk_error(error, "the kernel has no symbol %s", name);
	return addr;
}

/*
 * text_poke and text_mutex, once per module load. Runs under xk_lock
 * (which also guards the two pointers); -EOPNOTSUPP with the reason.
 */
static int resolve_text_poke(char *error)
{
	unsigned long poke, mutex;

	if (poke_text && poke_mutex)
		return 0;
	poke = xk_lookup_symbol("text_poke", error);
	mutex = poke ? xk_lookup_symbol("text_mutex", error) : 0;
	if (!poke || !mutex)
		return -EOPNOTSUPP;
	if (!callable(poke))
		return xk_error(error, "settling is unavailable: IBT seals "
				"text_poke against indirect calls"), -EOPNOTSUPP;
	poke_text = (void *)poke;
	poke_mutex = (struct mutex *)mutex;
	return 0;
}

/*
 * Whether rewriting a span's locations is idempotent over its own result:
 * no program reads a register the span writes (the inverse form adds to
 * what the text computed, and would add twice over settled text).
 */
static bool rewrite_idempotent(const struct xk_span *s)
{
	const struct xk_ioc_span *d = &s->desc;

	/* a memory input may be what the span itself stored or addressed
	 * through a register it writes: not proven idempotent */
	if (d->nr_mem_in)
		return false;

	for (u32 i = 0; i < d->nr_locs; i++)
		for (u32 k = 0; k < d->locs[i].expr.len; k++) {
			const struct xk_expr_insn *in = &d->locs[i].expr.insn[k];

			if (in->op != XK_OP_REG)
				continue;
			for (u32 j = 0; j < d->nr_locs; j++)
				if (d->locs[j].kind == (s32)in->reg)
					return false;
		}
	return true;
}

/*
 * The programs' parameters are the span's immediates: each (a, b) of a
 * param op is one of the imm records' (a table whose records disagree with
 * its programs would settle to another value than the probe writes).
 */
static bool imms_match_programs(const struct xk_span *s)
{
	const struct xk_ioc_span *d = &s->desc;

	for (u32 i = 0; i < d->nr_locs; i++)
		for (u32 k = 0; k < d->locs[i].expr.len; k++) {
			const struct xk_expr_insn *in = &d->locs[i].expr.insn[k];
			bool found = false;

			if (in->op != XK_OP_PARAM)
				continue;
			for (u32 m = 0; m < d->nr_imms; m++)
				found |= d->imms[m].a == in->imm &&
					 d->imms[m].b == in->imm2;
			if (!found)
				return false;
		}
	return true;
}

/* The span's bytes at its immediates for value n into bytes[]; a state. */
static u32 imm_bytes(const struct xk_span *s, s64 n, u8 bytes[][8])
{
	for (u32 m = 0; m < s->desc.nr_imms; m++) {
		const struct xk_ioc_imm *im = &s->desc.imms[m];

		if (xk_rule_imm_bytes(im->a, im->b, n, im->size, im->width,
				      bytes[m]))
			return XK_SETTLE_TOO_WIDE;
	}
	return XK_SETTLE_DONE;
}

/*
 * Whether the live instruction of immediate m holds the table's bytes with
 * field bytes `field` (the compiled-in value, or the settled one): nobody
 * else's int3 or jump is in it.
 */
static bool live_matches(const struct xk_span *s, u32 m, const u8 *field)
{
	const struct xk_ioc_imm *im = &s->desc.imms[m];
	u64 from = im->insn - s->desc.start;
	u8 live[16];

	if (copy_from_kernel_nofault(live, (void *)(s->func_addr + im->insn),
				     im->insn_len))
		return false;
	for (u32 i = 0; i < im->insn_len; i++) {
		u64 at = im->insn + i;
		u8 want = s->desc.expect[from + i];

		if (at >= im->field && at < im->field + im->size)
			want = field[at - im->field];
		if (live[i] != want)
			return false;
	}
	return true;
}

static void no_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
}

static void sync_core_ipi(void *unused)
{
	sync_core();
}

/*
 * Pokes every listed span's immediates to the bytes for value `to`, each
 * under a borrow probe's int3 (see the top of the file). The spans' rewrite
 * probes must be armed throughout (they give the value in force whichever
 * bytes a CPU executes). Returns 0, or a negative errno with nothing
 * poked; spans whose instruction another kprobe already holds are marked
 * XK_SETTLE_OWNED in st[] and left as they are, unless restore (the
 * compiled-in bytes go back under the other probe's int3 all the same).
 * Process context, xk_lock held.
 */
static int poke_spans(struct xk_span **spans, u32 nr, s64 from, s64 to,
		      u32 *st, bool restore, char *error)
{
	struct kprobe *borrow, **kps;
	unsigned long *borrow_addr;
	u32 nr_kps = 0, i, m, k;
	u8 bytes[XK_MAX_PARAMS][8];
	int err;

	for (i = 0; i < nr && (st[i] != XK_SETTLE_DONE && !restore); i++)
		;
	if (i == nr)
		return 0;	/* nothing to poke */
	borrow = kcalloc(nr * XK_MAX_PARAMS, sizeof(*borrow), GFP_KERNEL);
	kps = kcalloc(nr * XK_MAX_PARAMS, sizeof(*kps), GFP_KERNEL);
	borrow_addr = kcalloc(nr * XK_MAX_PARAMS, sizeof(*borrow_addr), GFP_KERNEL);
	err = borrow && kps && borrow_addr ? 0 : -ENOMEM;
	for (i = 0; i < nr && !err; i++) {
		if (st[i] != XK_SETTLE_DONE && !restore)
			continue;	/* not poked: no probe */
		for (m = 0; m < spans[i]->desc.nr_imms; m++) {
			struct kprobe *kp = &borrow[nr_kps];

			kp->addr = (void *)(spans[i]->func_addr +
					    spans[i]->desc.imms[m].insn);
			kp->pre_handler = NULL;
			kp->post_handler = no_post;	/* never jump-optimized */
			kps[nr_kps++] = kp;
		}
	}
	/* one instruction may hold two spans' immediates: one probe each time */
	for (i = 0; i < nr_kps && !err; i++)
		for (k = 0; k < i; k++)
			if (kps[k] && kps[i] && kps[k]->addr == kps[i]->addr)
				kps[i] = NULL;
	for (i = 0, k = 0; i < nr_kps; i++)
		if (kps[i])
			kps[k++] = kps[i];
	nr_kps = k;
	for (k = 0; k < nr_kps; k++)
		borrow_addr[k] = (unsigned long)kps[k]->addr;
	for (k = 0; k < nr_kps && !err; k++) {
		/*
		 * kprobes decodes the function up to the address from the live
		 * text; another patch under way there (an int3 of text_poke_bp)
		 * fails it for a moment: tried again, at most three times
		 */
		for (int tries = 0; tries < 3; tries++) {
			err = register_kprobe(kps[k]);
			if (err != -EINVAL && err != -EILSEQ)
				break;
			memset(kps[k], 0, sizeof(*kps[k]));
			kps[k]->addr = (void *)borrow_addr[k];
			kps[k]->post_handler = no_post;
			msleep(20);
		}
		if (err) {
			xk_error(error, "cannot place the probe that guards %pS while "
				 "it changes (%d)", kps[k]->addr, err);
			if (k)
				unregister_kprobes(kps, k);
		}
	}
	if (err)
		goto out;
	/*
	 * A kprobe already at the instruction (even disabled) aggregates ours
	 * (ours then shares the aggregate's list with it) and keeps its own
	 * copy of the old bytes: that span stays probed. So does one whose
	 * int3 is not in the text (kprobes disarmed globally): nothing would
	 * shield the bytes while they change.
	 */
	for (k = 0; k < nr_kps; k++) {
		u8 first = 0;
		/* alone, or the one member of the aggregate kprobes wraps
		 * every optimizable probe in (head -> us -> head) */
		bool alone = (list_empty(&kps[k]->list) ||
			      kps[k]->list.next == kps[k]->list.prev) &&
			     !copy_from_kernel_nofault(&first, kps[k]->addr, 1) &&
			     first == INT3_INSN_OPCODE;

		for (i = 0; i < nr; i++)
			for (m = 0; m < spans[i]->desc.nr_imms; m++)
				if (spans[i]->func_addr + spans[i]->desc.imms[m].insn ==
					    (unsigned long)kps[k]->addr &&
				    (!alone || !kps[k]->ainsn.insn ||
				     kps[k]->ainsn.size != spans[i]->desc.imms[m].insn_len))
					st[i] = XK_SETTLE_OWNED;
	}
	mutex_lock(poke_mutex);
	/*
	 * Under text_mutex, nobody else's text_poke can come between: every
	 * field must still hold the bytes for `from` (what this module
	 * wrote, or the compiled-in ones), else another patch changed the
	 * text since, and writing over it would undo that patch: nothing
	 * written at all
	 */
	for (i = 0; i < nr && !err; i++) {
		if (st[i] != XK_SETTLE_DONE && !restore)
			continue;
		imm_bytes(spans[i], from, bytes);
		for (m = 0; m < spans[i]->desc.nr_imms && !err; m++) {
			const struct xk_ioc_imm *im = &spans[i]->desc.imms[m];
			u8 live[8];

			if (copy_from_kernel_nofault(live, (void *)(spans[i]->func_addr +
						     im->field), im->size) ||
			    memcmp(live, bytes[m], im->size)) {
				xk_error(error, "%s+%#llx: the text there is no longer "
					 "what was compiled or settled (another patch "
					 "changed it); nothing written",
					 spans[i]->desc.func, im->field);
				err = -EBUSY;
			}
		}
	}
	for (i = 0; i < nr && !err; i++) {
		if (st[i] != XK_SETTLE_DONE && !restore)
			continue;
		imm_bytes(spans[i], to, bytes);
		for (m = 0; m < spans[i]->desc.nr_imms; m++) {
			const struct xk_ioc_imm *im = &spans[i]->desc.imms[m];

			poke_text((void *)(spans[i]->func_addr + im->field),
				  bytes[m], im->size);
		}
	}
	mutex_unlock(poke_mutex);
	if (!err)
		on_each_cpu(sync_core_ipi, NULL, 1);
	unregister_kprobes(kps, nr_kps);	/* the first bytes back */
out:
	kfree(borrow_addr);
	kfree(kps);
	kfree(borrow);
	return err;
}

/* The spans of c that are settled (st DONE) or may be (st candidates). */
static u32 collect(struct xk_const *c, bool settled, struct xk_span **spans)
{
	u32 nr = 0;

	for (int i = 0; i < c->nr_spans; i++)
		if ((c->spans[i].settle == XK_SETTLE_DONE) == settled &&
		    c->spans[i].settle != XK_SETTLE_GONE)
			spans[nr++] = &c->spans[i];
	return nr;
}

/* a state of one settle only: poked, then another probe spoiled it */
#define XK_SETTLE_POKED_OWNED (XK_SETTLE_NR + 1)

/*
 * Whether a rewrite probe of any loaded constant lies in the 16 bytes
 * before addr: if the kprobes optimizer turns it into a jump, its detour
 * holds copies of the instructions it displaces, made before a settle (or
 * an undo) changed them. Under xk_lock.
 */
static bool probe_near(unsigned long addr)
{
	struct xk_const *c;

	list_for_each_entry(c, &xk_consts, node)
		for (int i = 0; i < c->nr_spans; i++)
			if (c->spans[i].rewrite_registered &&
			    c->spans[i].probe_addr < addr &&
			    addr - c->spans[i].probe_addr < 16)
				return true;
	return false;
}

/*
 * A poked instruction that lies in another span of c which keeps its probe
 * and whose rewrite is not idempotent (it adds to what the text computed):
 * that rewrite would add to the new bytes' result. Such candidates stay
 * probed too. Under xk_lock.
 */
static void demote_shared(struct xk_const *c, struct xk_span **spans, u32 nr,
			  u32 *st)
{
	for (u32 i = 0; i < nr; i++) {
		for (u32 m = 0; m < spans[i]->desc.nr_imms && st[i] == XK_SETTLE_DONE; m++) {
			unsigned long a = spans[i]->func_addr + spans[i]->desc.imms[m].insn;

			for (int j = 0; j < c->nr_spans; j++) {
				const struct xk_span *o = &c->spans[j];
				bool kept = o->settle != XK_SETTLE_DONE;

				for (u32 k = 0; k < nr; k++)
					if (spans[k] == o)
						kept = st[k] != XK_SETTLE_DONE;
				if (o != spans[i] && kept && !rewrite_idempotent(o) &&
				    a >= o->start_addr && a < o->probe_addr)
					st[i] = XK_SETTLE_NO_IMM;
			}
		}
	}
}

/*
 * xk settle: the value in force written into every span that can hold it,
 * their rewrite probes unregistered. Runs from the SETTLE ioctl under
 * xk_lock, for a constant that no transition is changing; pairs with
 * xk_settle_undo(). Spans that cannot be settled keep their probes and say
 * why in their state; *nr_settled and *nr_kept count the spans.
 */
int xk_settle(struct xk_const *c, char *error, u32 *nr_settled, u32 *nr_kept)
{
	struct xk_span **spans;
	struct kprobe **rw;
	u8 bytes[XK_MAX_PARAMS][8], def[XK_MAX_PARAMS][8];
	u32 *st, nr, i, m, n_rw = 0;
	int err;

	*nr_settled = *nr_kept = 0;
	if (c->policy[0])
		return xk_error(error, "%s: a policy chooses its values per context; "
				"only a single value in force can be settled",
				c->name), -EBUSY;
	if (c->per_task || c->tx)
		return xk_error(error, "%s: a transition is still under way", c->name),
		       -EBUSY;
	err = resolve_text_poke(error);
	if (err)
		return err;
	/* the last transition's entry and exit probes (disarmed, kept for the
	 * next one) would aggregate with the probe that guards an immediate
	 * they share an address with, and keep that span probed */
	xk_tracking_cancel(c);
	if (c->tracking_ready)
		xk_tracking_release(c);
	spans = kcalloc(c->nr_spans, sizeof(*spans), GFP_KERNEL);
	st = kcalloc(c->nr_spans, sizeof(*st), GFP_KERNEL);
	rw = kcalloc(c->nr_spans, sizeof(*rw), GFP_KERNEL);
	if (!spans || !st || !rw) {
		err = -ENOMEM;
		goto out;
	}
	nr = collect(c, false, spans);
	for (i = 0; i < nr; i++) {
		struct xk_span *s = spans[i];

		st[i] = XK_SETTLE_DONE;
		if (!s->desc.nr_imms || !rewrite_idempotent(s) ||
		    !imms_match_programs(s) || !s->rewrite_registered)
			st[i] = XK_SETTLE_NO_IMM;
		else if (imm_bytes(s, c->value, bytes) != XK_SETTLE_DONE ||
			 imm_bytes(s, c->def, def) != XK_SETTLE_DONE)
			st[i] = XK_SETTLE_TOO_WIDE;
		for (m = 0; m < s->desc.nr_imms && st[i] == XK_SETTLE_DONE; m++)
			if (!live_matches(s, m, def[m]) ||
			    probe_near(s->func_addr + s->desc.imms[m].insn))
				st[i] = XK_SETTLE_OWNED;
	}
	demote_shared(c, spans, nr, st);
	err = poke_spans(spans, nr, c->def, c->value, st, false, error);
	if (err)
		goto out;
	for (i = 0; i < nr; i++) {
		struct xk_span *s = spans[i];

		if (st[i] != XK_SETTLE_DONE)
			continue;
		imm_bytes(s, c->value, bytes);
		for (m = 0; m < s->desc.nr_imms; m++)
			if (!live_matches(s, m, bytes[m]))
				st[i] = XK_SETTLE_POKED_OWNED;
	}
	/*
	 * A span whose poke another probe spoiled (its int3 came in between):
	 * the compiled-in bytes back at once, under that probe's int3; its
	 * rewrite probe, armed throughout, stays.
	 */
	for (i = 0; i < nr; i++) {
		u32 one = XK_SETTLE_DONE;

		if (st[i] != XK_SETTLE_POKED_OWNED)
			continue;
		st[i] = XK_SETTLE_OWNED;
		if (poke_spans(&spans[i], 1, c->value, c->def, &one, true, error))
			pr_warn("settle %s: %s+%#llx: the compiled-in bytes could not "
				"be put back\n", c->name, spans[i]->desc.func,
				spans[i]->desc.probe);
	}
	for (i = 0; i < nr; i++) {
		struct xk_span *s = spans[i];

		if (st[i] != XK_SETTLE_DONE) {
			s->settle = st[i];
			(*nr_kept)++;
			continue;
		}
		rw[n_rw++] = &s->rewrite;
	}
	/*
	 * A thread that ran an old immediate (the text's, or the borrow
	 * probe's copy) and was preempted before the probe point still needs
	 * its rewrite: the rewrite probes go only once every task has passed
	 * through a voluntary context switch, user mode or idle since the
	 * bytes changed (RCU Tasks, as kprobes' optimizer waits for tasks
	 * preempted on a detour). Nothing in [immediate, probe) is a call
	 * (xk_rule_check_imm: compared in full), so no task sleeps there.
	 */
	if (n_rw) {
		synchronize_rcu_tasks();
		unregister_kprobes(rw, n_rw);
	}
	for (i = 0; i < n_rw; i++) {
		struct xk_span *s = container_of(rw[i], struct xk_span, rewrite);

		s->rewrite_registered = false;
		s->settle = XK_SETTLE_DONE;
		(*nr_settled)++;
	}
	if (*nr_settled && !c->settle_ref) {
		__module_get(THIS_MODULE);	/* rmmod only after xk unload */
		c->settle_ref = true;
	}
	pr_info("settle %s = %lld: %u spans settled, %u keep their probes\n",
		c->name, c->value, *nr_settled, *nr_kept);
out:
	kfree(rw);
	kfree(st);
	kfree(spans);
	return err;
}

/* A rewrite probe registered again at its span's probe point, armed. */
static void rewrite_probe_reset(struct xk_span *s)
{
	memset(&s->rewrite, 0, sizeof(s->rewrite));
	s->rewrite.addr = (kprobe_opcode_t *)s->probe_addr;
	if (s->desc.post_len)	/* never settled (no immediates); for safety */
		s->rewrite.post_handler = xk_rewrite_post;
	else
		s->rewrite.pre_handler = xk_rewrite_handler;
}

/*
 * The compiled-in bytes and the rewrite probes back for every settled span
 * of c, before a new value or at unload. The rewrite probes come first:
 * they give the value in force over either bytes. Runs under xk_lock;
 * pairs with xk_settle(). On an error nothing changed (the spans stay
 * settled, the value in force) and the caller refuses its request.
 */
int xk_settle_undo(struct xk_const *c, char *error)
{
	struct xk_span **spans;
	struct kprobe **rw;
	u32 *st, nr, i;
	int err = 0;

	/* nothing settled (every set comes here): no allocation on that path */
	for (i = 0; i < (u32)c->nr_spans; i++)
		if (c->spans[i].settle == XK_SETTLE_DONE)
			break;
	if (i == (u32)c->nr_spans) {
		for (i = 0; i < (u32)c->nr_spans; i++)
			if (c->spans[i].settle != XK_SETTLE_GONE)
				c->spans[i].settle = XK_SETTLE_NO;
		return 0;	/* settle_ref is held only while a span is */
	}
	spans = kcalloc(c->nr_spans, sizeof(*spans), GFP_KERNEL);
	st = kcalloc(c->nr_spans, sizeof(*st), GFP_KERNEL);
	rw = kcalloc(c->nr_spans, sizeof(*rw), GFP_KERNEL);
	if (!spans || !st || !rw) {
		err = -ENOMEM;
		goto out;
	}
	nr = collect(c, true, spans);
	for (i = 0; i < nr; i++) {
		rewrite_probe_reset(spans[i]);
		rw[i] = &spans[i]->rewrite;
		st[i] = XK_SETTLE_DONE;
	}
	err = register_kprobes(rw, nr);
	if (err) {
		xk_error(error, "%s: cannot put the probes of its settled spans back "
			 "(%d); it stays settled at %lld", c->name, err, c->value);
		goto out;
	}
	for (i = 0; i < nr; i++)
		spans[i]->rewrite_registered = true;
	err = poke_spans(spans, nr, c->value, c->def, st, true, error);
	if (err) {
		unregister_kprobes(rw, nr);
		for (i = 0; i < nr; i++)
			spans[i]->rewrite_registered = false;
		goto out;
	}
	for (i = 0; i < nr; i++) {
		/* a foreign probe at the instruction (OWNED): its int3
		 * shielded the bytes, but its copy keeps the settled ones */
		if (st[i] != XK_SETTLE_DONE)
			pr_warn("unsettle %s: %s+%#llx: another kprobe holds a copy "
				"of the settled instruction\n", c->name,
				spans[i]->desc.func, spans[i]->desc.probe);
		spans[i]->settle = XK_SETTLE_NO;
	}
	pr_info("unsettle %s: %u spans probed again, compiled bytes back\n",
		c->name, nr);
	for (i = 0; i < (u32)c->nr_spans; i++)
		if (c->spans[i].settle != XK_SETTLE_GONE)
			c->spans[i].settle = XK_SETTLE_NO;
	if (c->settle_ref) {
		module_put(THIS_MODULE);
		c->settle_ref = false;
	}
out:
	kfree(rw);
	kfree(st);
	kfree(spans);
	return err;
}

/*
 * A module is going away: spans inside it lose their text (settled bytes
 * included) and their probes (kprobes marks them gone). They are marked
 * gone, so that nothing is restored into freed text and xk status says so.
 * Runs in the unloading task's context; takes xk_lock.
 */
static int module_going(struct notifier_block *nb, unsigned long action,
			void *data)
{
	struct module *mod = data;
	struct xk_const *c;

	if (action != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&xk_lock);
	list_for_each_entry(c, &xk_consts, node) {
		bool settled = false;

		for (int i = 0; i < c->nr_spans; i++) {
			struct xk_span *s = &c->spans[i];

			if (s->settle != XK_SETTLE_GONE &&
			    within_module(s->probe_addr, mod)) {
				s->settle = XK_SETTLE_GONE;
				pr_info("%s: span %d (%s) gone with module %s\n",
					c->name, i, s->desc.func, mod->name);
			}
			settled |= s->settle == XK_SETTLE_DONE;
		}
		if (!settled && c->settle_ref) {
			module_put(THIS_MODULE);
			c->settle_ref = false;
		}
		xk_var_module_going(c, mod);
	}
	mutex_unlock(&xk_lock);
	return NOTIFY_DONE;
}

static struct notifier_block module_nb = {
	.notifier_call = module_going,
	.priority = 1,	/* before kprobes' own (0) */
};

int xk_settle_init(void)
{
	return register_module_notifier(&module_nb);
}

void xk_settle_exit(void)
{
	unregister_module_notifier(&module_nb);
}
