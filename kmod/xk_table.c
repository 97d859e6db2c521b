// SPDX-License-Identifier: GPL-2.0
/*
 * Loading a scope table: validation against the running kernel, arming,
 * and unloading. Every function here runs in process context with xk_lock
 * held (taken by the ioctl dispatcher in xk_main.c).
 */
#define pr_fmt(fmt) "xkernel: " fmt

#include <linux/cred.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "xk_internal.h"

LIST_HEAD(xk_consts);

/*
 * Whether value n may be put in force for c: every per-value span has a
 * point for it (the compiled-in value always has). Runs under xk_lock
 * (xk_transition_many, before anything changes).
 */
int xk_value_prepared(const struct xk_const *c, s64 n, char *error)
{
	for (int i = 0; i < c->nr_spans; i++) {
		const struct xk_span *s = &c->spans[i];

		if (n != c->def && s->desc.nr_points && !xk_span_params(s, n))
			return xk_error(error, "%s: span %d (%s+%#llx) has no code for "
					"value %lld yet: its parameters come from a "
					"build with the value (xk set builds it; xk "
					"gen --prepare %lld ahead of time)", c->name,
					i, s->desc.func, s->desc.probe, n, n),
			       -ENOKEY;
		if (n != c->def && s->desc.emulate == XK_EMULATE_REPLAY &&
		    !xk_span_replay(s, n))
			return xk_error(error, "%s: span %d (%s+%#llx) has no code for "
					"value %lld yet: it replays a build with the "
					"value (xk set builds it; xk gen --prepare %lld "
					"ahead of time)", c->name, i, s->desc.func,
					s->desc.probe, n, n),
			       -ENOKEY;
	}
	return xk_var_check_value(c, n, error);
}

/*
 * The loaded constant a request names (name terminated here), for a
 * request that adds to it: refused under lockdown like every write of
 * kernel state. Runs under xk_lock; 0 with *out, or -errno with error set.
 */
static int loaded_const(char *name, char *error, struct xk_const **out)
{
	int err;

	name[XK_NAME_MAX - 1] = '\0';
	err = xk_refuse_locked_down(error);
	if (err)
		return err;
	*out = xk_find_const(name);
	if (!*out)
		return xk_error(error, "%s is not loaded (xk load first)", name),
		       -ENOENT;
	return 0;
}

/*
 * Whether some span of c is replayed or holds state of the call
 * (xk_ioc_span.emulate, .call_state): a thread inside holds what the old
 * value shaped, so the value changes only globally or per task, and goes
 * back to the default that way at unload. Under xk_lock, or from c's
 * handlers (c's spans do not change while it is loaded).
 */
bool xk_const_never_immediate(const struct xk_const *c)
{
	for (int i = 0; i < c->nr_spans; i++)
		if (c->spans[i].desc.emulate == XK_EMULATE_REPLAY ||
		    c->spans[i].desc.call_state)
			return true;
	return false;
}

/* The used entries of two replays are the same (programs by their length). */
static bool same_replay(const struct xk_ioc_replay *a, const struct xk_ioc_replay *b)
{
	if (a->nr_locs != b->nr_locs || a->nr_mem_in != b->nr_mem_in)
		return false;
	for (u32 k = 0; k < a->nr_mem_in && k < XK_MAX_MEM_INPUTS; k++)
		if (a->mem_in[k].base != b->mem_in[k].base ||
		    a->mem_in[k].width != b->mem_in[k].width ||
		    a->mem_in[k].disp != b->mem_in[k].disp ||
		    a->mem_in[k].index != b->mem_in[k].index ||
		    a->mem_in[k].scale != b->mem_in[k].scale)
			return false;
	for (u32 i = 0; i < a->nr_locs && i < XK_REPLAY_MAX_LOCS; i++) {
		const struct xk_ioc_loc *x = &a->locs[i], *y = &b->locs[i];

		if (x->kind != y->kind || x->base != y->base || x->disp != y->disp ||
		    x->width != y->width || x->expr.len != y->expr.len)
			return false;
		for (u32 k = 0; k < x->expr.len && k < XK_EXPR_MAX_INSNS; k++)
			if (x->expr.insn[k].op != y->expr.insn[k].op ||
			    x->expr.insn[k].width != y->expr.insn[k].width ||
			    x->expr.insn[k].reg != y->expr.insn[k].reg ||
			    x->expr.insn[k].imm != y->expr.insn[k].imm ||
			    x->expr.insn[k].imm2 != y->expr.insn[k].imm2)
				return false;
	}
	return true;
}

/*
 * XK_IOC_REPLAY: what a replayed span leaves at one value. Runs in process
 * context under xk_lock while the handlers may run: the replay is copied
 * and checked whole, stored in a slot past the published count, then the
 * count is raised (release; xk_span_replay acquires it). Replays are never
 * changed or removed before unload (xk_table_unload frees them after the
 * probes are gone).
 */
int xk_table_add_replay(struct xk_ioc_replay *req)
{
	struct xk_ioc_replay *copy;
	const struct xk_ioc_replay *have;
	struct xk_const *c;
	struct xk_span *s;
	const char *why;
	int err;

	err = loaded_const(req->name, req->error, &c);
	if (err)
		return err;
	if (req->span >= (u32)c->nr_spans ||
	    c->spans[req->span].desc.emulate != XK_EMULATE_REPLAY)
		return xk_error(req->error, "%s: span %u is not a replayed span",
				c->name, req->span), -EINVAL;
	s = &c->spans[req->span];
	if (req->value < c->min || req->value > c->max || req->value == c->def)
		return xk_error(req->error, "%s: a replay for value %lld, out of "
				"bounds [%lld, %lld] or the compiled-in one",
				c->name, req->value, c->min, c->max), -ERANGE;
	why = xk_ioc_replay_check(req);
	if (!why)
		why = xk_rule_replay_stores(s->desc.expect, s->desc.expect_mask,
					    s->desc.start, s->desc.probe, req);
	if (why)
		return xk_error(req->error, "%s: span %u's replay for value %lld: %s",
				c->name, req->span, req->value, why), -EINVAL;
	have = xk_span_replay(s, req->value);
	if (have) {
		/* the same build gives the same replay: only its programs and
		 * locations are compared */
		if (!same_replay(have, req))
			return xk_error(req->error, "%s: span %u already replays "
					"other code for value %lld", c->name,
					req->span, req->value), -EINVAL;
		return 0;
	}
	if (s->nr_replays == XK_MAX_POINTS)
		return xk_error(req->error, "%s: span %u holds %d values already, "
				"the limit (xk unload and load it again)", c->name,
				req->span, XK_MAX_POINTS), -ENOSPC;
	copy = kmemdup(req, sizeof(*req), GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	s->replays[s->nr_replays] = copy;
	smp_store_release(&s->nr_replays, s->nr_replays + 1);
	return 0;
}

/* The point of variable v at value n among those published, or NULL
 * (xk_var_bytes reads them too). Any context. */
static const struct xk_point *var_point(const struct xk_var *v, s64 n)
{
	u32 nr = smp_load_acquire(&v->nr_points);

	for (u32 j = 0; j < nr; j++)
		if (v->desc.points[j].n == n)
			return &v->desc.points[j];
	return NULL;
}

/*
 * XK_IOC_POINT: value req->value's parameters for every per-value span of
 * a loaded constant, all or none: a row per span of code, then per
 * variable (a variable's p[0] is its field at that value). Runs in process
 * context under xk_lock, while the handlers and switches may run: a point
 * is filled in a slot past the published count, then the count is raised
 * (release; xk_span_params and var_point acquire it). Points are never
 * changed or removed before unload, so no reader sees one half-written.
 */
int xk_table_add_point(struct xk_ioc_point *req)
{
	s64 (*rows)[XK_MAX_PARAMS] = NULL;
	struct xk_const *c;
	int err = 0, i, nr;

	req->nr_added = 0;
	err = loaded_const(req->name, req->error, &c);
	if (err)
		return err;
	/* one row per span of code, then one per variable, in the load's order */
	nr = c->nr_spans + c->nr_vars;
	if (req->nr_spans != nr)
		return xk_error(req->error, "%s: %u rows of parameters for %d spans",
				c->name, req->nr_spans, nr), -EINVAL;
	if (req->value < c->min || req->value > c->max)
		return xk_error(req->error, "%s: value %lld is out of bounds [%lld, "
				"%lld]", c->name, req->value, c->min, c->max), -ERANGE;
	if (c->policy[0])
		return xk_error(req->error, "%s: its values are chosen by policy %s",
				c->name, c->policy), -EBUSY;
	rows = kvcalloc(nr, sizeof(*rows), GFP_KERNEL);
	if (!rows)
		return -ENOMEM;
	if (copy_from_user(rows, u64_to_user_ptr(req->params),
			   nr * sizeof(*rows))) {
		err = -EFAULT;
		goto out;
	}
	/* all checked before any span takes it */
	for (i = 0; i < nr; i++) {
		const struct xk_span *s = i < c->nr_spans ? &c->spans[i] : NULL;
		const struct xk_var *v = s ? NULL : &c->vars[i - c->nr_spans];
		const struct xk_ioc_span *d = s ? &s->desc : &v->desc;
		const s64 *have;
		u32 published;
		u8 b[8];

		if (!d->nr_points)
			continue;
		if (s) {
			have = xk_span_params(s, req->value);
			published = s->nr_points;
		} else {
			const struct xk_point *pt = var_point(v, req->value);

			have = pt ? pt->p : NULL;
			published = v->nr_points;
			if (xk_rule_data_bytes(0, rows[i][0], 0, d->imms[0].size, b)) {
				xk_error(req->error, "%s: variable %s: value %lld's "
					 "%lld does not fit its %u bytes", c->name,
					 d->func, req->value, rows[i][0],
					 d->imms[0].size);
				err = -EINVAL;
				goto out;
			}
		}
		if (have && memcmp(have, rows[i], sizeof(rows[i]))) {
			xk_error(req->error, "%s: span %d already has other parameters "
				 "for value %lld", c->name, i, req->value);
			err = -EINVAL;
			goto out;
		}
		if (!have && published == XK_MAX_POINTS) {
			xk_error(req->error, "%s: span %d holds %d values already, the "
				 "limit (xk unload and load it again)", c->name, i,
				 XK_MAX_POINTS);
			err = -ENOSPC;
			goto out;
		}
	}
	for (i = 0; i < nr; i++) {
		struct xk_span *s = i < c->nr_spans ? &c->spans[i] : NULL;
		struct xk_var *v = s ? NULL : &c->vars[i - c->nr_spans];
		struct xk_point *pt;

		if (s) {
			if (!s->desc.nr_points || xk_span_params(s, req->value))
				continue;
			pt = &s->desc.points[s->nr_points];
		} else {
			if (!v->desc.nr_points || var_point(v, req->value))
				continue;
			pt = &v->desc.points[v->nr_points];
		}
		pt->n = req->value;
		memcpy(pt->p, rows[i], sizeof(pt->p));
		if (s)
			smp_store_release(&s->nr_points, s->nr_points + 1);
		else
			smp_store_release(&v->nr_points, v->nr_points + 1);
		req->nr_added++;
	}
	pr_info("point %s: value %lld prepared in %u spans by %s[%d]\n", c->name,
		req->value, req->nr_added, current->comm, task_pid_nr(current));
out:
	kvfree(rows);
	return err;
}

struct xk_const *xk_find_const(const char *name)
{
	struct xk_const *c;

	list_for_each_entry(c, &xk_consts, node)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/*
 * The shape of a span, before anything touches the kernel: the rules libxk
 * applied when it wrote the table (xk_ioc_span_check), applied again here
 * to what user space handed in.
 */
static int check_desc(const struct xk_ioc_span *d, int idx, char *error)
{
	const char *why = xk_ioc_span_check(d);

	if (why)
		return xk_error(error, "span %d: malformed: %s", idx, why), -EINVAL;
	return 0;
}

/*
 * Registers the rewrite probe disabled (nothing in the text changes yet),
 * then checks that the live kernel is the one the table was made for: the
 * symbol and its size, and the bytes from the span's start to the end of
 * the probed instruction.
 */
static int validate_at(struct xk_span *s, int idx, unsigned long func_addr,
		       char *error);

/*
 * Resolves the span's function: by name, or, when the name repeats, the
 * copy among the candidates whose symbol, size and bytes all match.
 */
static int validate_span(struct xk_span *s, int idx, char *error)
{
	int err = -ESTALE;

	if (!s->desc.nr_cands)
		return validate_at(s, idx, 0, error);
	if (s->desc.nr_cands > XK_MAX_CANDS)
		return xk_error(error, "span %d: %u candidates", idx,
				s->desc.nr_cands), -EINVAL;
	for (u32 i = 0; i < s->desc.nr_cands && err; i++) {
		err = validate_at(s, idx, s->desc.cands[i], error);
		if (err && s->rewrite_registered) {
			unregister_kprobe(&s->rewrite);
			s->rewrite_registered = false;
		}
	}
	if (err)
		xk_error(error, "span %d: none of the %u functions named %s holds the "
			 "expected bytes: the table was made for another kernel build",
			 idx, s->desc.nr_cands, s->desc.func);
	return err;
}

/*
 * Whether addr is an instruction boundary, as the kprobes core decodes its
 * function (the x86 instruction decoder is not exported to modules): a
 * disabled kprobe is registered there and unregistered at once; it never
 * arms, so the text never changes. Runs at load, under xk_lock.
 */
static bool insn_boundary(unsigned long addr)
{
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)addr,
		.flags = KPROBE_FLAG_DISABLED,
	};

	if (register_kprobe(&kp))
		return false;
	unregister_kprobe(&kp);
	return true;
}

/*
 * A memory location is written only where the span's own code stores:
 * some compared instruction before the probe point, at an instruction
 * boundary of the live function, is a mov to exactly that [base + disp]
 * (or that rip-relative field) with that width (xk_rule_find_store).
 * Runs at load, under xk_lock, once the expected bytes matched the live
 * text; every kprobe it registers is gone when it returns.
 */
static int check_store(struct xk_span *s, const struct xk_ioc_loc *l, int idx,
		       char *error)
{
	const struct xk_ioc_span *d = &s->desc;
	const char *why = NULL;
	u32 q;

	for (q = 0;; q++) {
		why = xk_rule_find_store(d->expect, d->expect_mask, d->expect_len,
					 d->start, d->probe, l->base, l->disp,
					 l->rip_end, l->width, &q);
		if (why || insn_boundary(s->start_addr + q))
			break;
	}
	if (why)
		return xk_error(error, "span %d: %s+%#llx: %s at an instruction "
				"boundary", idx, d->func, d->start, why), -EINVAL;
	/* written after the span, at the probe point: from the store (an
	 * instruction boundary) on, its base register is kept */
	if (!d->emulate && l->base < XK_NR_REGS) {
		why = xk_rule_base_kept(d->expect, d->expect_mask, q,
					d->probe - d->start, l->base);
		if (why)
			return xk_error(error, "span %d: %s+%#llx: %s", idx, d->func,
					d->start, why), -EINVAL;
	}
	return 0;
}

/*
 * Whether the symbol sprint_symbol() printed ("name+off/size", a module's
 * with " [module]" after it) is the span's function: "name", or
 * "module:name" (a module built from the kernel's tree). Runs at load,
 * under xk_lock.
 */
static bool same_symbol(const char *func, const char *name, const char *printed)
{
	const char *colon = strchr(func, ':'), *mod;
	size_t n;

	if (!colon)	/* a bare name: vmlinux's, or an out-of-tree module's */
		return !strcmp(name, func);
	n = colon - func;
	mod = strchr(printed, '[');
	return !strcmp(name, colon + 1) && mod && !strncmp(mod + 1, func, n) &&
	       mod[n + 1] == ']';
}

/*
 * Whether addr is func+off, func a symbol of the table's func_size bytes
 * (kallsyms' size runs to the next symbol: alignment padding included, up
 * to 63 bytes; a module's symbol that kallsyms sizes wrongly is taken at
 * its ELF size, xk_module_symbol_size). sym (KSYM_SYMBOL_LEN) gets what sprint_symbol() printed,
 * name (KSYM_NAME_LEN) the symbol's name, *size kallsyms' size. At load,
 * under xk_lock: function spans and variables (xk_data.c).
 */
bool xk_symbol_is(unsigned long addr, const char *func, unsigned long off,
		  u64 func_size, char *sym, char *name, unsigned long *size)
{
	unsigned long at, elf_size;

	sprint_symbol(sym, addr);
	if (sscanf(sym, "%127[^+]+%lx/%lx", name, &at, size) != 3 ||
	    !same_symbol(func, name, sym) || at != off)
		return false;
	if (*size >= func_size && *size < func_size + 64)
		return true;
	/* a module's symbol kallsyms sized past its section (Linux 6.1) */
	elf_size = xk_module_symbol_size(addr - off, name);
	if (!elf_size || elf_size < func_size || elf_size >= func_size + 64)
		return false;
	*size = elf_size;
	return true;
}

/*
 * Whether span d writes a register or the flags (a location of that kind,
 * which xk_rule_loc_written confined to what its instructions write). At
 * load, under xk_lock.
 */
static bool regs_written(const struct xk_ioc_span *d)
{
	for (u32 i = 0; i < d->nr_locs && i < XK_MAX_LOCS; i++)
		if (d->locs[i].kind != XK_LOC_MEM)
			return true;
	return false;
}

/*
 * Whether the registered probe sits in the function the table names, of
 * its size. kallsyms' names are read into the heap: two such buffers on
 * validate_at's stack pass Debian's CONFIG_FRAME_WARN (2048) but not the
 * 1024 of smaller configurations. At load, under xk_lock.
 */
static int check_symbol(const struct xk_span *s, int idx, u64 at, char *error)
{
	const struct xk_ioc_span *d = &s->desc;
	struct {
		char sym[KSYM_SYMBOL_LEN];
		char name[KSYM_NAME_LEN];
	} *w = kmalloc(sizeof(*w), GFP_KERNEL);
	unsigned long size;
	int err = 0;

	if (!w)
		return xk_error(error, "span %d: out of memory", idx), -ENOMEM;
	if (!xk_symbol_is((unsigned long)s->rewrite.addr, d->func, at,
			  d->func_size, w->sym, w->name, &size)) {
		xk_error(error, "span %d: %s+%#llx resolves to %s; the table "
			 "expects a %llu-byte function (another build?)", idx,
			 d->func, at, w->sym, d->func_size);
		err = -ESTALE;
	}
	kfree(w);
	return err;
}

static int validate_at(struct xk_span *s, int idx, unsigned long func_addr,
		       char *error)
{
	const struct xk_ioc_span *d = &s->desc;
	/* where the rewrite probe sits: the probe point, the span's last
	 * instruction (post_len: xk_rule_check_post kept it inside the span),
	 * or its first (emulated) */
	u64 at = d->emulate ? d->start : d->probe - d->post_len;
	u8 live[XK_MAX_EXPECT];
	int err;
	u32 i, p;

	memset(&s->rewrite, 0, sizeof(s->rewrite));
	if (func_addr) {
		s->rewrite.addr = (kprobe_opcode_t *)(func_addr + at);
	} else {
		s->rewrite.symbol_name = d->func;
		s->rewrite.offset = at;
	}
	if (d->emulate) {
		s->rewrite.pre_handler = xk_emulate_handler;
		s->rewrite.post_handler = xk_emulate_post;
	} else if (d->post_len) {
		s->rewrite.post_handler = xk_rewrite_post;
	} else {
		s->rewrite.pre_handler = xk_rewrite_handler;
	}
	s->rewrite.flags = KPROBE_FLAG_DISABLED;
	err = register_kprobe(&s->rewrite);
	if (err && strchr(d->func, ':'))
		return xk_error(error, "span %d: cannot probe %s+%#llx (%d): is "
				"module %.*s loaded?", idx, d->func, at, err,
				(int)(strchr(d->func, ':') - d->func), d->func), err;
	if (err)
		return xk_error(error, "span %d: cannot probe %s+%#llx (%d): no such "
				"function, or not an instruction boundary", idx,
				d->func, at, err), err;
	s->rewrite_registered = true;
	err = check_symbol(s, idx, at, error);
	if (err)
		return err;
	/* kprobes decoded the instruction it copied: it must end exactly at
	 * the probe point, or the post handler would rewrite elsewhere */
	if (d->post_len && s->rewrite.ainsn.size != d->post_len)
		return xk_error(error, "span %d: the instruction at %s+%#llx is %u "
				"bytes long where the table says %u", idx, d->func,
				at, s->rewrite.ainsn.size, d->post_len), -ESTALE;
	s->probe_addr = (unsigned long)s->rewrite.addr;
	s->start_addr = s->probe_addr - (at - d->start);
	s->func_addr = s->start_addr - d->start;
	s->resume_addr = s->func_addr + d->probe;
	/* an emulated span resumes there: the kprobes core must agree it is
	 * an instruction boundary, as the rules' decoder found */
	if (d->emulate && !insn_boundary(s->resume_addr))
		return xk_error(error, "span %d: %s+%#llx, where the emulated span "
				"resumes, is no instruction boundary", idx, d->func,
				d->probe), -ESTALE;
	/* a register or the flags are written only where the span's own
	 * instructions write them (xk_rule_loc_written, in check_desc), as
	 * the rules' decoder reads them from the span's start: the kprobes
	 * core must agree the start is an instruction boundary, or what was
	 * decoded is no instruction the kernel runs */
	if (at != d->start && regs_written(d) && !insn_boundary(s->start_addr))
		return xk_error(error, "span %d: %s+%#llx, the span's start, is no "
				"instruction boundary: its register writes cannot "
				"be checked", idx, d->func, d->start), -ESTALE;
	if (copy_from_kernel_nofault(live, (void *)s->start_addr, d->expect_len))
		return xk_error(error, "span %d: cannot read %s+%#llx", idx,
				d->func, d->start), -EFAULT;
	/*
	 * kprobes may own the bytes at the probe point: another armed probe
	 * there (int3), or an optimized one (a jump) that an unload a moment
	 * ago left for the optimizer to take out, which our registration then
	 * reused and keeps. Our probe shares its copy of the original
	 * instruction (kprobes' ainsn): the probed instruction is compared
	 * from there. A rip-relative operand is adjusted in the copy, so its
	 * bytes then differ (refused, never accepted wrongly).
	 */
	p = at - d->start;
	if ((live[p] == 0xe9 || live[p] == INT3_INSN_OPCODE) &&
	    d->expect[p] != live[p]) {
		const void *copy = s->rewrite.ainsn.insn;
		u32 len = d->post_len ?: d->expect_len - p;

		if (!copy || s->rewrite.ainsn.size != len ||
		    copy_from_kernel_nofault(live + p, copy, len))
			return xk_error(error, "span %d: %s+%#llx: another kprobe owns "
					"the probed instruction", idx, d->func,
					at), -EBUSY;
	}
	/*
	 * An emulated span's table bytes are compared up to the resume point:
	 * the instruction there is not probed by this span and runs as the
	 * kernel has it (the next span of the same constant may probe it)
	 */
	for (i = 0; i < (d->emulate ? d->probe - d->start : d->expect_len); i++) {
		if ((live[i] & d->expect_mask[i]) == (d->expect[i] & d->expect_mask[i]))
			continue;
		return xk_error(error, "span %d: %s+%#llx holds %02x where the table "
				"expects %02x: the table was made for another kernel "
				"build", idx, d->func, d->start + i, live[i],
				d->expect[i]), -ESTALE;
	}
	/* an uncompared probed instruction (xk_rule_check_expect) must be a
	 * site that boot-time patching rewrites; after a span probed on its
	 * last instruction (post_len), the uncompared instruction it resumes
	 * at is no probe's and runs as the kernel has it (a jump label's, an
	 * alternative's: whatever the boot chose) */
	if (!d->emulate && !d->post_len &&
	    d->expect_mask[d->probe - d->start] != 0xff &&
	    !xk_rule_patched_site_byte(live[d->probe - d->start]))
		return xk_error(error, "span %d: %s+%#llx holds %02x: not a call, jump "
				"or patched site as the table's uncompared bytes say",
				idx, d->func, d->probe,
				live[d->probe - d->start]), -ESTALE;
	for (i = 0; i < d->nr_locs; i++) {
		const struct xk_ioc_loc *l = &d->locs[i];
		u64 field;
		s32 rel;

		if (l->kind != XK_LOC_MEM)
			continue;
		err = check_store(s, l, idx, error);
		if (err)
			return err;
		if (l->base != XK_BASE_RIP)
			continue;
		/* rip-relative: the address, from the relocated live rel32;
		 * xk_rule_check_loc put the field inside live[] (unsigned) */
		field = (u64)l->disp - d->start;
		if (d->expect_len < sizeof(rel) ||
		    field > d->expect_len - sizeof(rel))
			return xk_error(error, "span %d: rel32 outside the compared "
					"bytes", idx), -EINVAL;
		memcpy(&rel, live + field, sizeof(rel));
		s->mem_addr[i] = s->start_addr - d->start + l->rip_end + (long)rel;
	}
	return 0;
}

/* Span i as the nesting rule reads it; a function is its live address. */
static int span_view(const void *ctx, u32 i, struct xk_rule_span_view *v)
{
	const struct xk_span *s = &((const struct xk_const *)ctx)->spans[i];

	v->escapes = s->desc.escapes;
	v->nr_ranges = s->desc.nr_ranges;
	v->ranges = (const __u64 (*)[2])s->desc.ranges;
	v->probe = s->desc.probe;
	v->func_id = s->func_addr;
	return 0;
}

/*
 * Whether a thread inside one span's safe span may execute another span of
 * the constant (xk_rule_spans_nest, the rule libxk's glue follows). Policies
 * then pin a thread's first value (xk_policy.c). Runs once the spans are
 * validated (func_addr known), under xk_lock.
 */
static bool spans_nest(const struct xk_const *c)
{
	return xk_rule_spans_nest(span_view, c, c->nr_spans);
}

/* Unregisters what a span registered; safe on a partly armed span. */
static void disarm_span(struct xk_span *s)
{
	if (s->rewrite_registered) {
		unregister_kprobe(&s->rewrite);
		s->rewrite_registered = false;
	}
}

/*
 * Frees a constant that is off the list (or never was on it): every probe
 * it registered (rewrite, entry, exits) unregistered in one batch, one RCU
 * grace period for all (then no handler of theirs runs), then its memory.
 * Process context, under xk_lock.
 */
void xk_const_destroy(struct xk_const *c)
{
	struct kprobe **kps;
	int i, n = 0;

	xk_policy_release(c);	/* a policy's binding and probes first */
	xk_tracking_cancel(c);
	kps = kmalloc_array(c->nr_spans * (2 + XK_MAX_EXITS) + 1, sizeof(*kps),
			    GFP_KERNEL);
	if (!kps) {	/* no memory: one at a time, slower */
		xk_tracking_release(c);
		for (i = 0; i < c->nr_spans; i++)
			disarm_span(&c->spans[i]);
	}
	for (i = 0; i < c->nr_spans && kps; i++) {
		struct xk_span *s = &c->spans[i];

		if (s->rewrite_registered)
			kps[n++] = &s->rewrite;
		if (s->entry_registered)
			kps[n++] = &s->entry;
		for (int k = 0; k < s->nr_exit_registered; k++)
			kps[n++] = &s->exit[k].kp;
		s->rewrite_registered = s->entry_registered = false;
		s->nr_exit_registered = 0;
	}
	if (n)
		unregister_kprobes(kps, n);
	kfree(kps);
	c->tracking_ready = false;
	/* an orphaned per-task transition lets go of it (xk_transition.c) */
	xk_transition_release(c);
	/*
	 * No handler runs now, so no transition can switch the variables
	 * again: back to the compiled-in value (a faulted constant's went
	 * back when it faulted; a load that failed wrote none)
	 */
	xk_var_switch(c, c->def);
	xk_var_report(c);
	xk_var_release(c);
	/* the probes are gone and their handlers done: nothing reads these */
	for (i = 0; i < c->nr_spans; i++) {
		kfree(rcu_dereference_protected(c->spans[i].fast, 1));
		for (u32 k = 0; k < c->spans[i].nr_replays; k++)
			kfree(c->spans[i].replays[k]);
	}
	free_percpu(c->stats);
	kvfree(c->vars);
	kvfree(c->spans);
	/* last: nothing of c's runs any more (pairs with xk_table_load) */
	if (c->module_ref)
		module_put(THIS_MODULE);
	kfree(c);
}

/*
 * Why a policy cannot drive span d (its kfunc runs the programs on the
 * registers alone, at the probe point itself), or NULL. Runs at load.
 */
static const char *policy_refusal(const struct xk_ioc_span *d)
{
	if (d->post_len)
		return "its probe point is a branch target (the module rewrites "
		       "after the span's last instruction), which policies do "
		       "not support";
	if (d->nr_mem_in)
		return "its programs read memory, which policies do not support yet";
	if (d->nr_points)
		return "its parameters come from a build per value (per-value "
		       "form), which a policy choosing values as it runs cannot have";
	if (d->emulate)
		return "the module emulates it from its first instruction "
		       "(emulated form), which policies do not support";
	if (d->call_state)
		return "its function keeps state of the call that the value "
		       "shapes (a frame or heap objects the constant sizes), "
		       "which a value chosen per execution could overrun";
	return NULL;
}

/*
 * Whether one of a's probes (its rewrite probes, and the entry and exit
 * probes transitions arm) sits in [from, to), other than the rewrite
 * probe of span `self` and, with self (a's own emulated span), an exit at
 * from, which self's handler takes over (NULL: none excepted).
 */
static bool probe_within(const struct xk_const *a, unsigned long from,
			 unsigned long to, const struct xk_span *self)
{
	for (int i = 0; i < a->nr_spans; i++) {
		const struct xk_span *s = &a->spans[i];

		if (s != self && s->probe_addr >= from && s->probe_addr < to)
			return true;
		if (!s->desc.emulate && s->start_addr >= from && s->start_addr < to)
			return true;
		for (u32 k = 0; k < s->desc.nr_exits; k++) {
			unsigned long e = s->func_addr + s->desc.exits[k];

			/* an exit of the same constant at the emulated span's
			 * first byte: its rewrite handler does that exit's
			 * bookkeeping (xk_emulate_handler, exits_at in
			 * xk_probe.c) */
			if (self && e == from)
				continue;
			if (s->desc.exits[k] < s->desc.func_size && e >= from && e < to)
				return true;
		}
	}
	return false;
}

/*
 * An emulated span's probe returns 1 with ip at the probe point: kprobes
 * then runs no other handler of that address, and nothing inside the
 * span ever runs. None of the module's own probes (rewrite, entry, exit;
 * of c or of a loaded constant) may sit in an emulated span's bytes
 * [start, probe point), but for the span's own rewrite probe and an exit
 * of c's own at its first byte (the handler does that exit's bookkeeping;
 * transitions register no probe there: xk_emulated_start). Both ways:
 * c's emulated spans against every probe, and c's probes against the
 * loaded constants' emulated spans. Runs at load, under xk_lock, once
 * every span of c is validated (addresses known).
 */
static int emulated_alone(const struct xk_const *c, char *error)
{
	const struct xk_const *o;

	for (int i = 0; i < c->nr_spans; i++) {
		const struct xk_span *s = &c->spans[i];
		bool clash = false;

		if (!s->desc.emulate)
			continue;
		clash = probe_within(c, s->start_addr, s->resume_addr, s);
		list_for_each_entry(o, &xk_consts, node)
			clash = clash || probe_within(o, s->start_addr,
						      s->resume_addr, NULL);
		if (clash)
			return xk_error(error, "span %d: another probe would sit in "
					"the bytes the module emulates (%s+%#llx to "
					"+%#llx)", i, s->desc.func, s->desc.start,
					s->desc.probe), -EBUSY;
	}
	list_for_each_entry(o, &xk_consts, node) {
		for (int i = 0; i < o->nr_spans; i++) {
			const struct xk_span *t = &o->spans[i];

			if (t->desc.emulate &&
			    probe_within(c, t->start_addr, t->resume_addr, NULL))
				return xk_error(error, "a probe would sit in the "
						"bytes %s's span %d is emulated from", o->name,
						i), -EBUSY;
		}
	}
	return 0;
}

/* How many constants are loaded; under xk_lock. */
static int nr_loaded(void)
{
	const struct xk_const *c;
	int n = 0;

	list_for_each_entry(c, &xk_consts, node)
		n++;
	return n;
}

/*
 * One span per probe address within a constant: two would both write at
 * one hit (the second on what the first wrote, a policy's kfunc called
 * twice), where "one write per hit" holds per probe. The generator emits
 * one span per critical instruction; a table with two at one address is
 * malformed. At load, once every span is validated (its address known),
 * under xk_lock.
 */
static int spans_apart(struct xk_const *c, char *error)
{
	for (int i = 0; i < c->nr_spans; i++)
		for (int k = 0; k < i; k++)
			if (c->spans[i].probe_addr == c->spans[k].probe_addr)
				return xk_error(error, "span %d: malformed: at the "
						"address of span %d (%s+%#llx): one span "
						"per probe point", i, k,
						c->spans[k].desc.func,
						c->spans[k].desc.probe), -EINVAL;
	return 0;
}

int xk_table_load(struct xk_ioc_load *req, const struct xk_ioc_span __user *uspans)
{
	struct xk_const *c;
	ktime_t t0 = ktime_get();
	const char *why;
	u64 tr_ns = 0;
	int i, err;

	req->name[XK_NAME_MAX - 1] = '\0';
	err = xk_refuse_locked_down(req->error);
	if (err)
		return err;
	if (!req->name[0])
		return xk_error(req->error, "no constant name"), -EINVAL;
	if (req->nr_spans < 1 || req->nr_spans > XK_MAX_SPANS)
		return xk_error(req->error, "%s: %u spans (1 to %d)", req->name,
				req->nr_spans, XK_MAX_SPANS), -EINVAL;
	if (req->min > req->def || req->def > req->max)
		return xk_error(req->error, "%s: bounds [%lld, %lld] exclude the "
				"default %lld", req->name, req->min, req->max,
				req->def), -EINVAL;
	if (req->value < req->min || req->value > req->max)
		return xk_error(req->error, "%s: value %lld is out of bounds [%lld, "
				"%lld]", req->name, req->value, req->min, req->max),
		       -ERANGE;
	req->policy[XK_NAME_MAX - 1] = '\0';
	if (req->policy[0] && req->value != req->def)
		return xk_error(req->error, "%s: a policy chooses the values; load it "
				"at its default %lld", req->name, req->def), -EINVAL;
	if (req->mode > XK_MODE_PER_TASK)
		return xk_error(req->error, "unknown mode %u", req->mode), -EINVAL;
	err = xk_check_timeout(req->timeout_ms, req->error);
	if (err)
		return err;
	if (xk_find_const(req->name))
		return xk_error(req->error, "%s is already loaded (xk set changes its "
				"value, xk unload removes it)", req->name), -EEXIST;
	if (nr_loaded() >= XK_MAX_CONSTANTS)
		return xk_error(req->error, "%s: %d constants are loaded, the most "
				"the module holds at once", req->name,
				XK_MAX_CONSTANTS), -ENOSPC;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	INIT_DELAYED_WORK(&c->tracking_work, xk_tracking_work);
	c->spans = kvcalloc(req->nr_spans, sizeof(*c->spans), GFP_KERNEL);
	c->vars = kvcalloc(req->nr_spans, sizeof(*c->vars), GFP_KERNEL);
	if (!c->spans || !c->vars) {
		kvfree(c->spans);
		kvfree(c->vars);
		kfree(c);
		return -ENOMEM;
	}
	strscpy(c->name, req->name, sizeof(c->name));
	c->def = c->value = req->def;
	c->min = req->min;
	c->max = req->max;
	c->nr_spans = req->nr_spans;
	raw_spin_lock_init(&c->policy_lock);
	strscpy(c->policy, req->policy, sizeof(c->policy));
	if (c->policy[0]) {
		c->stats = alloc_percpu(struct xk_policy_stats);
		if (!c->stats) {
			err = -ENOMEM;
			goto err_destroy;
		}
	}

	for (i = 0; i < c->nr_spans; i++) {
		struct xk_span *s = &c->spans[i];

		s->owner = c;
		if (copy_from_user(&s->desc, &uspans[i], sizeof(s->desc))) {
			err = -EFAULT;
			goto err_destroy;
		}
		s->desc.func[XK_FUNC_MAX - 1] = '\0';
		err = check_desc(&s->desc, i, req->error);
		if (err)
			goto err_destroy;
		why = xk_rule_check_points(s->desc.points, s->desc.nr_points,
					   c->def, c->min, c->max,
					   s->desc.emulate == XK_EMULATE_DATA ?
					   0 : s->desc.nr_imms);
		if (why) {
			xk_error(req->error, "span %d: malformed: %s", i, why);
			err = -EINVAL;
			goto err_destroy;
		}
		/* a frame the constant sizes holds the default's array, no
		 * larger one: the module holds the table to it */
		if (s->desc.call_state == XK_CALL_STATE_FRAME && c->max > c->def) {
			xk_error(req->error, "span %d: malformed: a call-state span "
				 "(a frame the constant sizes) with an upper bound "
				 "%lld above the default %lld", i, c->max, c->def);
			err = -EINVAL;
			goto err_destroy;
		}
		/* not armed yet: no handler reads it */
		s->nr_points = s->desc.nr_points;
	}
	/* the variables apart (xk_data.c), after every span of code: the
	 * code's indices are the load's (replays and points name them) */
	for (i = 0; i < c->nr_spans; i++) {
		struct xk_span *s = &c->spans[i];

		if (s->desc.emulate == XK_EMULATE_DATA) {
			c->vars[c->nr_vars].def = c->def;
			c->vars[c->nr_vars].nr_points = s->desc.nr_points;
			c->vars[c->nr_vars++].desc = s->desc;
		} else if (c->nr_vars) {
			xk_error(req->error, "span %d: code after a variable (the "
				 "variables come last)", i);
			err = -EINVAL;
			goto err_destroy;
		}
	}
	c->nr_spans -= c->nr_vars;
	if (c->nr_vars && c->policy[0]) {
		xk_error(req->error, "span %d: %s is a variable, one value for every "
			 "device, flow and task, which a policy cannot choose",
			 c->nr_spans, c->vars[0].desc.func);
		err = -EOPNOTSUPP;
		goto err_destroy;
	}
	for (i = 0; i < c->nr_spans; i++) {
		err = validate_span(&c->spans[i], i, req->error);
		if (err)
			goto err_destroy;
	}
	err = spans_apart(c, req->error);
	if (err)
		goto err_destroy;
	for (i = 0; i < c->nr_vars; i++) {
		err = xk_var_validate(&c->vars[i], c->nr_spans + i, req->error);
		if (err)
			goto err_destroy;
	}
	/* a policy's kfuncs run the programs on the registers alone, at the
	 * probe point itself */
	for (i = 0; i < c->nr_spans && c->policy[0]; i++) {
		why = policy_refusal(&c->spans[i].desc);
		if (why) {
			xk_error(req->error, "span %d: %s", i, why);
			err = -EOPNOTSUPP;
			goto err_destroy;
		}
	}
	err = emulated_alone(c, req->error);
	if (err)
		goto err_destroy;
	c->nests = spans_nest(c);
	for (i = 0; i < c->nr_spans; i++)
		c->spans[i].const_only = xk_fast_possible(&c->spans[i]);
	if (c->policy[0]) {
		err = xk_policy_arm(c, &req->policy_cookie, req->error);
		if (err)
			goto err_destroy;
	}
	/* everything matched: arm (a policy's own programs write instead) */
	for (i = 0; i < c->nr_spans && !c->policy[0]; i++) {
		err = enable_kprobe(&c->spans[i].rewrite);
		if (err) {
			xk_error(req->error, "span %d: cannot arm %s+%#llx (%d)", i,
				 c->spans[i].desc.func, c->spans[i].desc.probe, err);
			goto err_destroy;
		}
	}
	c->loaded_ns = ktime_get_ns();
	/*
	 * Loaded: its probes call into this module's text until it is
	 * destroyed, and an unload may refuse (a thread inside a never-
	 * immediate constant's safe span, text that cannot go back), so the
	 * module may not go before it: rmmod says "in use" instead. Our own
	 * reference cannot be the one that keeps the module from going away
	 * mid-call: the open control device holds another (xk_fops.owner).
	 */
	__module_get(THIS_MODULE);
	c->module_ref = true;
	list_add_tail_rcu(&c->node, &xk_consts);
	req->load_ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	pr_info("load %s: %d spans %s, %d variables, by %s[%d] uid %u (%llu us)\n",
		c->name, c->nr_spans,
		c->policy[0] ? "validated for a policy" : "armed", c->nr_vars,
		current->comm, task_pid_nr(current),
		from_kuid(&init_user_ns, current_uid()), req->load_ns / 1000);
	if (c->policy[0])
		pr_info("load %s: values chosen by policy %s\n", c->name, c->policy);

	if (req->value != c->def) {
		err = xk_transition(c, req->value, req->mode, req->timeout_ms,
				    req->error, &tr_ns);
		req->transition_ns = tr_ns;
		if (err && c->tx) {
			/*
			 * Per task, rolled back (or ending forward: an entrant
			 * could not be tracked): threads that took the new
			 * value are still inside and keep it until they leave.
			 * Destroying the constant now would have them finish
			 * their safe span with the compiled-in value, so it
			 * stays loaded, every other thread at the default, as
			 * after a per-task set that failed; xk unload once they
			 * have left (it refuses a never-immediate constant
			 * while they are inside).
			 */
			size_t n = strlen(req->error);

			snprintf(req->error + n, XK_ERROR_MAX - n, "; %s stays "
				 "loaded until then", c->name);
			pr_info("load %s: transition failed, kept loaded for the "
				"threads inside\n", c->name);
			return err;
		}
		if (err) {
			/* nothing half-applied: a table that cannot take its
			 * value is removed again */
			list_del_rcu(&c->node);
			synchronize_rcu();
			pr_info("load %s: transition failed, unloaded\n", c->name);
			xk_const_destroy(c);
			return err;
		}
		/* out: the mode used (replayed, call state: never immediate) */
		req->mode = c->last_mode;
	}
	/* the probes of a first transition, registered before it is asked */
	if (!c->policy[0])
		xk_tracking_prepare(c);
	return 0;

err_destroy:
	/* ratelimited: a caller may send refused tables as fast as it likes */
	pr_notice_ratelimited("load %s refused: %s\n", c->name, req->error);
	xk_const_destroy(c);
	return err;
}

/*
 * Takes the constants off the list first, then waits for a grace period:
 * a policy's program may be inside a kfunc looking at them (RCU reader).
 */
int xk_table_unload(const char *name, bool all, char *error, u32 *nr)
{
	struct xk_const *c, *tmp;
	LIST_HEAD(gone);

	int err = 0;

	*nr = 0;
	/* nothing goes while a transition of it waits, its ioctl drops xk_lock */
	list_for_each_entry(c, &xk_consts, node)
		if ((all || !strcmp(c->name, name)) && xk_transition_waited(c, error))
			return -EBUSY;
	/*
	 * A replayed constant, or one with state of the call, goes back to
	 * its default globally first: with its probes gone at once, a thread
	 * between two of its regions would run the baseline's code on the
	 * variant's registers, one in the middle of a call would count a
	 * batch filled under the new bound against the old one. The wait drops
	 * xk_lock (nothing of these goes meanwhile: xk_transition_waited); a
	 * thread that stays inside past the timeout keeps it loaded.
	 */
	list_for_each_entry(c, &xk_consts, node) {
		u64 ns;

		if ((!all && strcmp(c->name, name)) || c->policy[0] ||
		    !xk_const_never_immediate(c))
			continue;
		/* threads of a failed per-task transition that took another
		 * value are inside: they leave first */
		err = xk_transition_busy(c, error);
		/* settled spans probed again first, as a set does: the
		 * transition then switches every span together */
		err = err ?: xk_settle_undo(c, error);
		if (!err && c->value != c->def)
			err = xk_transition(c, c->def, XK_MODE_GLOBAL, 0, error, &ns);
		if (err)
			return err;
	}
	list_for_each_entry_safe(c, tmp, &xk_consts, node) {
		if (!all && strcmp(c->name, name))
			continue;
		/* the compiled-in text back first; if it cannot be, it stays */
		if (xk_settle_undo(c, error)) {
			err = -EBUSY;
			continue;
		}
		list_del_rcu(&c->node);
		pr_info("unload %s by %s[%d] uid %u: value %lld -> %lld (compiled-in)%s%s\n",
			c->name, current->comm, task_pid_nr(current),
			from_kuid(&init_user_ns, current_uid()), c->value, c->def,
			c->policy[0] ? ", policy " : "", c->policy);
		list_add(&c->gone_node, &gone);
		(*nr)++;
	}
	if (!all && !*nr && !err)
		return xk_error(error, "%s is not loaded", name), -ENOENT;
	if (*nr)
		synchronize_rcu();
	list_for_each_entry_safe(c, tmp, &gone, gone_node)
		xk_const_destroy(c);
	return err;
}
