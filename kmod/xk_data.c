// SPDX-License-Identifier: GPL-2.0
/*
 * Variables the constant initialises (xk_ioc_span.emulate ==
 * XK_EMULATE_DATA): `static unsigned long jiffies_lazy_flush =
 * LAZY_FLUSH_JIFFIES;`, a sysctl's default in a structure, a module
 * parameter's. No code changes with the constant there, only the bytes the
 * kernel was loaded with, so no probe serves them: when the value in force
 * changes, the field is written as the build with the new value would have
 * initialised it, if it still holds what the previous value put there (a
 * compare-and-exchange: a value set since through the variable's own
 * interface, a sysctl or a parameter, is never overwritten, only reported).
 *
 * What a table may name here is confined (docs/security.md): a symbol
 * kallsyms knows by that name, of at least the table's size, whose field
 * is aligned, lies in a page the kernel maps writable and not executable
 * (never text, read-only data or data made read-only after init; never
 * freed init memory, which is unmapped) and holds the compiled-in bytes the
 * table expects; never this module's own. The value written is a*N + b for
 * N within the bounds, and must fit the field.
 */
#define pr_fmt(fmt) "xkernel: " fmt

#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <asm/pgtable.h>

#include "xk_internal.h"

/*
 * Whether the kernel maps [addr, addr + size) writable and not executable.
 * lookup_address() walks init_mm; a large page's entry is read as a pte, as
 * the kernel's own set_memory code does. Runs at load, under xk_lock.
 */
static bool writable_data(unsigned long addr, u32 size)
{
	unsigned int level;
	pte_t *pte = lookup_address(addr, &level);

	if (!pte || !pte_present(*pte) || !pte_write(*pte) || pte_exec(*pte))
		return false;
	/* an aligned field of at most 8 bytes never crosses a page */
	return (addr & (size - 1)) == 0;
}

/*
 * Checks one candidate address of variable v: the symbol there, the page,
 * the bytes. 0, or -ESTALE with why in error. At load, under xk_lock.
 */
static int check_candidate(const struct xk_var *v, int idx, unsigned long obj,
			   char *error)
{
	const struct xk_ioc_span *d = &v->desc;
	char sym[KSYM_SYMBOL_LEN], name[KSYM_NAME_LEN];
	unsigned long off, size, field = obj + d->start;
	u8 live[8];

	sprint_symbol(sym, obj);
	/* kallsyms sizes run to the next symbol: alignment padding included */
	if (sscanf(sym, "%127[^+]+%lx/%lx", name, &off, &size) != 3 ||
	    !xk_same_symbol(d->func, name, sym) || off != 0 ||
	    size < d->func_size || size >= d->func_size + 64)
		return xk_error(error, "span %d: %#lx resolves to %s; the table "
				"expects the %llu-byte variable %s", idx, obj, sym,
				d->func_size, d->func), -ESTALE;
	if (within_module(field, THIS_MODULE))
		return xk_error(error, "span %d: %s is xkernel's own", idx,
				d->func), -EPERM;
	if (!writable_data(field, d->expect_len))
		return xk_error(error, "span %d: %s+%#llx is not in writable data "
				"(read-only, text, freed init memory, or unaligned)",
				idx, d->func, d->start), -EPERM;
	if (copy_from_kernel_nofault(live, (void *)field, d->expect_len))
		return xk_error(error, "span %d: cannot read %s+%#llx", idx, d->func,
				d->start), -EFAULT;
	if (memcmp(live, d->expect, d->expect_len)) {
		u64 now = 0, want = 0;

		memcpy(&now, live, d->expect_len);	/* little endian */
		memcpy(&want, d->expect, d->expect_len);
		return xk_error(error, "span %d: %s+%#llx holds %llu, not the "
				"compiled-in %llu: changed since boot (through its "
				"own interface?), or another build", idx, d->func,
				d->start, now, want), -ESTALE;
	}
	return 0;
}

/*
 * Resolves variable v among the addresses user space read from kallsyms:
 * exactly one must pass check_candidate. At load, under xk_lock, after
 * check_desc.
 */
int xk_var_validate(struct xk_var *v, int idx, char *error)
{
	const struct xk_ioc_span *d = &v->desc;
	const char *colon = strchr(d->func, ':');
	unsigned long found = 0;
	int err = -ENOENT, nr = 0;

	if (!d->nr_cands) {
		if (colon)
			return xk_error(error, "span %d: variable %s not found: is "
					"module %.*s loaded?", idx, d->func,
					(int)(colon - d->func), d->func), -ENOENT;
		return xk_error(error, "span %d: variable %s not found in kallsyms",
				idx, d->func), -ENOENT;
	}
	for (u32 i = 0; i < d->nr_cands && i < XK_MAX_CANDS; i++) {
		int e = check_candidate(v, idx, d->cands[i], error);

		if (!e) {
			found = d->cands[i] + d->start;
			nr++;
		} else if (err == -ENOENT || e != -ESTALE) {
			err = e;	/* the most telling refusal is kept */
		}
	}
	if (nr > 1)
		return xk_error(error, "span %d: %d variables named %s hold the "
				"compiled-in value: which one the table means is "
				"ambiguous", idx, nr, d->func), -ENOTUNIQ;
	if (!nr)
		return err;
	v->addr = found;
	/* audited: every variable a table may write, by name */
	pr_info("load: span %d writes variable %pS (%u bytes) at each change\n",
		idx, (void *)found, d->expect_len);
	return 0;
}

/*
 * Whether every variable of c can hold a*n + b (its field's width).
 * Before a transition or a load, under xk_lock.
 */
int xk_var_check_value(const struct xk_const *c, s64 n, char *error)
{
	for (int i = 0; i < c->nr_vars; i++) {
		const struct xk_ioc_imm *m = &c->vars[i].desc.imms[0];
		const char *why;
		u8 b[8];

		why = xk_rule_data_bytes(m->a, m->b, n, m->size, b);
		if (why)
			return xk_error(error, "%s: value %lld: %s (%s+%#llx, %u "
					"bytes)", c->name, n, why, c->vars[i].desc.func,
					c->vars[i].desc.start, m->size), -ERANGE;
	}
	return 0;
}

/* The field's bytes at value n as a number (little endian); 0 if none. */
static u64 field_at(const struct xk_var *v, s64 n)
{
	const struct xk_ioc_imm *m = &v->desc.imms[0];
	u8 b[8];
	u64 x = 0;

	if (!xk_rule_data_bytes(m->a, m->b, n, m->size, b))
		memcpy(&x, b, sizeof(x));
	return x;
}

static bool exchange(unsigned long addr, u32 size, u64 old, u64 new)
{
	switch (size) {
	case 1:
		return cmpxchg((u8 *)addr, (u8)old, (u8)new) == (u8)old;
	case 2:
		return cmpxchg((u16 *)addr, (u16)old, (u16)new) == (u16)old;
	case 4:
		return cmpxchg((u32 *)addr, (u32)old, (u32)new) == (u32)old;
	default:
		return cmpxchg((u64 *)addr, old, new) == old;
	}
}

/*
 * c's variables go from what value `from` put there to what `to` puts.
 * The commit point of a transition calls it with the value in force
 * (xk_transition.c: under tx->lock, in stop_machine, or from the ioctl
 * with xk_lock held), a faulted constant's disarming, and unload. No lock,
 * no sleep: a compare-and-exchange per field, so a value written since by
 * anyone else stays (v->changed, reported by xk_var_report). A variable of
 * a module that went away is skipped: xk_var_module_going marks it before
 * the module's memory is freed, which waits for a grace period that this
 * function (preemption or interrupts off at every caller) holds off.
 */
void xk_var_switch(struct xk_const *c, s64 from, s64 to)
{
	if (from == to)
		return;
	for (int i = 0; i < c->nr_vars; i++) {
		struct xk_var *v = &c->vars[i];

		if (READ_ONCE(v->gone) || !v->addr)
			continue;
		if (exchange(v->addr, v->desc.imms[0].size, field_at(v, from),
			     field_at(v, to)))
			atomic64_inc(&v->writes);
		else
			WRITE_ONCE(v->changed, true);
	}
}

/*
 * Logs the variables a switch left as someone else had set them, once.
 * After a transition and at unload, under xk_lock.
 */
void xk_var_report(struct xk_const *c)
{
	for (int i = 0; i < c->nr_vars; i++) {
		struct xk_var *v = &c->vars[i];
		u64 now = 0;

		if (!READ_ONCE(v->changed))
			continue;
		WRITE_ONCE(v->changed, false);
		if (!READ_ONCE(v->gone) &&
		    copy_from_kernel_nofault(&now, (void *)v->addr,
					     v->desc.imms[0].size))
			now = 0;
		pr_notice("%s: %s+%#llx was changed since xkernel wrote it: left "
			  "as it is (now %llu)\n", c->name, v->desc.func,
			  v->desc.start, now);
	}
}

/*
 * Module mod is going (MODULE_STATE_GOING, its memory still there): c's
 * variables inside it are never written again. Under xk_lock, from the
 * module notifier (xk_settle.c).
 */
void xk_var_module_going(struct xk_const *c, struct module *mod)
{
	for (int i = 0; i < c->nr_vars; i++) {
		struct xk_var *v = &c->vars[i];

		if (!v->gone && v->addr && within_module(v->addr, mod)) {
			WRITE_ONCE(v->gone, true);
			pr_info("%s: variable %s gone with module %s\n", c->name,
				v->desc.func, mod->name);
		}
	}
}
