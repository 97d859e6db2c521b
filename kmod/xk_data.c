// SPDX-License-Identifier: GPL-2.0
/*
 * Variables the constant initialises (xk_ioc_span.emulate ==
 * XK_EMULATE_DATA): `static unsigned long jiffies_lazy_flush =
 * LAZY_FLUSH_JIFFIES;`, a sysctl's default in a structure, a module
 * parameter's. No code changes with the constant there, only the bytes the
 * kernel was loaded with, so no probe serves them; nor for a variable boot
 * code derived from it (CUBIC's beta_scale, computed by its __init
 * register function, freed since). When the value in force
 * changes, the field is written as the build with the new value would have
 * initialised it, if it still holds what the previous value put there (a
 * compare-and-exchange: a value set since through the variable's own
 * interface, a sysctl or a parameter, is never overwritten, only reported).
 *
 * What a table may name here is confined (docs/security.md): a symbol
 * kallsyms knows by that name, none the kernel's security depends on
 * (xk_rule_security_variable, refused by name in check_desc), of at least
 * the table's size, whose field is aligned, lies in a page the kernel maps
 * writable and not executable, inside the kernel image's data ([_sdata,
 * _edata); its bss, [__bss_start, __bss_stop), only for a variable boot
 * code derives: never text, read-only data, data made read-only after
 * init, per-CPU or init data) or inside the data of a live module the
 * table names for it (module:name, or a bare name for an out-of-tree
 * module) other than this one (held with a reference while the constant
 * is loaded), and holds the compiled-in bytes the table expects. The value written is a*N + b
 * for N within the bounds, or per value (a derived variable) the point the
 * analysis computed for N, run from the build with N (xk_ioc_var_bytes),
 * and must fit the field.
 */
#define pr_fmt(fmt) "xkernel: " fmt

#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/pgtable.h>

#include <linux/version.h>

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

/* The kernel image's writable data and bss, and the module list: looked
 * up once (xk_lookup_symbol), under xk_lock. */
static unsigned long image_data[2], image_bss[2];
static struct list_head *module_list;

static int resolve_bounds(char *error)
{
	static const char *const names[] = {
		"_sdata", "_edata", "__bss_start", "__bss_stop", "modules",
	};
	unsigned long a[5];

	if (module_list)
		return 0;
	for (int i = 0; i < 5; i++) {
		a[i] = xk_lookup_symbol(names[i], error);
		if (!a[i])
			return -EOPNOTSUPP;	/* error says why */
	}
	if (a[0] >= a[1] || a[2] >= a[3])
		return xk_error(error, "the kernel's data bounds are malformed"),
		       -EOPNOTSUPP;
	image_data[0] = a[0];
	image_data[1] = a[1];
	image_bss[0] = a[2];
	image_bss[1] = a[3];
	module_list = (struct list_head *)a[4];
	return 0;
}

/*
 * The size a module's own ELF symbol table gives its symbol name at addr,
 * or 0 when addr is no live module's, the symbol is not there, or the
 * module list is not looked up yet (resolve_bounds: before any variable's
 * candidate is checked). Linux 6.1's kallsyms sizes a module's symbol up
 * to the next symbol or the end of the module's text, so a variable past
 * the text gets a size that wraps; its st_size is exact. Walks the module
 * list and the module's symbols as kallsyms does, preemption off. At load,
 * under xk_lock (xk_symbol_is).
 */
unsigned long xk_module_symbol_size(unsigned long addr, const char *name)
{
	unsigned long size = 0;
	struct module *mod;

	if (!module_list)
		return 0;
	preempt_disable();
	list_for_each_entry_rcu(mod, module_list, list) {
		struct mod_kallsyms *ks;

		if (!within_module(addr, mod))
			continue;
		ks = rcu_dereference_sched(mod->kallsyms);
		for (unsigned int i = 0; ks && i < ks->num_symtab; i++) {
			const Elf_Sym *es = &ks->symtab[i];

			if (es->st_value == addr && es->st_size &&
			    !strcmp(ks->strtab + es->st_name, name)) {
				size = es->st_size;
				break;
			}
		}
		break;
	}
	preempt_enable();
	return size;
}

static bool inside(unsigned long addr, u32 size, unsigned long from,
		   unsigned long to)
{
	return addr >= from && addr < to && size <= to - addr;
}

/*
 * Whether the table names module mod for a variable it calls func: as
 * "module:name" (libxk names every in-tree module's variables so), or by
 * a bare name only for an out-of-tree module (tainted O: libxk cannot tell
 * its name from the object), never an in-tree module's by its bare name.
 * At load, under xk_lock, mod held.
 */
static bool module_named(const struct module *mod, const char *func)
{
	const char *colon = strchr(func, ':');

	if (!colon)
		return test_bit(TAINT_OOT_MODULE, &mod->taints);
	return colon - func == strlen(mod->name) &&
	       !strncmp(func, mod->name, colon - func);
}

/*
 * Module mod's writable data, [*start, *end). Since 6.4 a region of its
 * own (mem[MOD_DATA]); before (Debian 12's 6.1), the part of the core
 * layout after text, read-only and read-only-after-init data, which the
 * layout's sizes count from its base.
 */
static void module_data(const struct module *mod, unsigned long *start,
			unsigned long *end)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	const struct module_memory *m = &mod->mem[MOD_DATA];

	*start = (unsigned long)m->base;
	*end = *start + m->size;
#else
	const struct module_layout *l = &mod->core_layout;

	*start = (unsigned long)l->base + l->ro_after_init_size;
	*end = (unsigned long)l->base + l->size;
#endif
}

/*
 * The live module whose data holds [field, field + size), one the table
 * names for the variable it calls func (module_named), with a reference
 * taken; NULL with why in error (no module's, another module's, one coming
 * or going, this one). Walks the module list as __module_address does (not exported),
 * preemption off. At load, under xk_lock.
 */
static struct module *data_module(unsigned long field, u32 size,
				  const char *func, int idx, char *error)
{
	struct module *mod, *found = NULL;
	bool said = false;

	preempt_disable();
	list_for_each_entry_rcu(mod, module_list, list) {
		unsigned long data, data_end;

		if (!within_module(field, mod))
			continue;
		said = true;
		module_data(mod, &data, &data_end);
		if (mod == THIS_MODULE) {
			xk_error(error, "span %d: the variable is xkernel's own", idx);
		} else if (!module_named(mod, func)) {
			xk_error(error, "span %d: %s is module %s's: the table names "
				 "it %s, not %s:%s", idx, func, mod->name, func,
				 mod->name, func);
		} else if (READ_ONCE(mod->state) != MODULE_STATE_LIVE) {
			xk_error(error, "span %d: module %s is coming or going", idx,
				 mod->name);
		} else if (!inside(field, size, data, data_end)) {
			xk_error(error, "span %d: the variable is not in module %s's "
				 "data (read-only, init or text)", idx, mod->name);
		} else if (!try_module_get(mod)) {
			xk_error(error, "span %d: module %s is going", idx, mod->name);
		} else {
			found = mod;
		}
		break;
	}
	preempt_enable();
	if (!said)
		xk_error(error, "span %d: the variable is in neither the kernel's "
			 "data or bss nor a module's data (text, read-only, init "
			 "or per-CPU data?)", idx);
	return found;
}

/*
 * Checks one candidate address of variable v: the symbol there, the page,
 * where it lies, the bytes. 0 with *mod (a module reference, or NULL for
 * the kernel image's), or -errno with why in error. sym and name hold
 * kallsyms' names (KSYM_SYMBOL_LEN, KSYM_NAME_LEN). At load, under xk_lock.
 */
static int check_candidate_at(const struct xk_var *v, int idx,
			      unsigned long obj, struct module **mod,
			      char *error, char *sym, char *name)
{
	const struct xk_ioc_span *d = &v->desc;
	const struct xk_ioc_imm *m = &d->imms[0];
	unsigned long size, field = obj + d->start;
	u8 live[8], def[8];
	int err = -ESTALE;

	*mod = NULL;
	if (!xk_symbol_is(obj, d->func, 0, d->func_size, sym, name, &size))
		return xk_error(error, "span %d: %#lx resolves to %s; the table "
				"expects the %llu-byte variable %s", idx, obj, sym,
				d->func_size, d->func), -ESTALE;
	if (within_module(field, THIS_MODULE))
		return xk_error(error, "span %d: %s is xkernel's own", idx,
				d->func), -EPERM;
	/* kernel structures, not settings (xk_rule_kernel_structure, which
	 * the analysis applied too): page tables, stacks and the zero page
	 * are page-aligned pages of .data and .bss; a module's own struct
	 * module lies in its data */
	BUILD_BUG_ON(XK_RULE_PAGE_SIZE != PAGE_SIZE);
	if (xk_rule_kernel_structure(name, !(obj & (PAGE_SIZE - 1)), size))
		return xk_error(error, "span %d: %s is a structure of the kernel, "
				"no variable a constant initialises", idx, d->func),
		       -EPERM;
	/* the image's data (an initialised variable: the compiler puts one
	 * whose bytes are not all zero there) or, for a variable boot code
	 * derives (per value), its bss too; or a live module's data, of a
	 * module the table names (a reference taken) */
	if (inside(field, d->expect_len, image_bss[0], image_bss[1]) &&
	    !d->nr_points)
		return xk_error(error, "span %d: %s is in the kernel's bss: a "
				"variable the constant initialises is in its data",
				idx, d->func), -EPERM;
	if (!inside(field, d->expect_len, image_data[0], image_data[1]) &&
	    !inside(field, d->expect_len, image_bss[0], image_bss[1])) {
		*mod = data_module(field, d->expect_len, d->func, idx, error);
		if (!*mod)
			return -EPERM;
	}
	if (!writable_data(field, d->expect_len)) {
		xk_error(error, "span %d: %s+%#llx is not in writable data "
			 "(read-only, text, freed init memory, or unaligned)",
			 idx, d->func, d->start);
		err = -EPERM;
		goto refuse;
	}
	/* the table's own fit (or point) gives the bytes it expects at the
	 * default */
	if (xk_ioc_var_bytes(m, d->points, d->nr_points, v->def, def) ||
	    memcmp(def, d->expect, d->expect_len)) {
		xk_error(error, "span %d: %s+%#llx: the expected bytes are not the "
			 "fit's at the compiled-in value", idx, d->func, d->start);
		goto refuse;
	}
	if (copy_from_kernel_nofault(live, (void *)field, d->expect_len)) {
		xk_error(error, "span %d: cannot read %s+%#llx", idx, d->func,
			 d->start);
		goto refuse;
	}
	if (memcmp(live, d->expect, d->expect_len)) {
		xk_error(error, "span %d: %s+%#llx does not hold the compiled-in "
			 "%lld: changed since boot (through its own interface?), "
			 "or another build", idx, d->func, d->start, v->def);
		goto refuse;
	}
	return 0;
refuse:
	if (*mod)
		module_put(*mod);
	*mod = NULL;
	return err;
}

/*
 * check_candidate_at with kallsyms' names on the heap: on the stack they
 * pass Debian's CONFIG_FRAME_WARN (2048) but not the 1024 of smaller
 * configurations. At load, under xk_lock.
 */
static int check_candidate(const struct xk_var *v, int idx, unsigned long obj,
			   struct module **mod, char *error)
{
	struct {
		char sym[KSYM_SYMBOL_LEN];
		char name[KSYM_NAME_LEN];
	} *w = kmalloc(sizeof(*w), GFP_KERNEL);
	int err;

	*mod = NULL;
	if (!w)
		return xk_error(error, "span %d: out of memory", idx), -ENOMEM;
	err = check_candidate_at(v, idx, obj, mod, error, w->sym, w->name);
	kfree(w);
	return err;
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
	struct module *found_mod = NULL;
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
	err = resolve_bounds(error);
	if (err)
		return xk_error(error, "span %d: cannot check where variable %s "
				"lies", idx, d->func), err;
	err = -ENOENT;
	for (u32 i = 0; i < d->nr_cands && i < XK_MAX_CANDS; i++) {
		struct module *mod;
		int e = check_candidate(v, idx, d->cands[i], &mod, error);

		if (!e && nr++) {
			if (mod)
				module_put(mod);
		} else if (!e) {
			found = d->cands[i] + d->start;
			found_mod = mod;
		} else if (err == -ENOENT || e != -ESTALE) {
			err = e;	/* the most telling refusal is kept */
		}
	}
	if (nr > 1) {
		if (found_mod)
			module_put(found_mod);
		return xk_error(error, "span %d: %d variables named %s hold the "
				"compiled-in value: which one the table means is "
				"ambiguous", idx, nr, d->func), -ENOTUNIQ;
	}
	if (!nr)
		return err;
	v->addr = found;
	v->mod = found_mod;
	v->cur = v->def;
	/* audited: every variable a table may write, by name */
	pr_info("load: span %d writes variable %pS (%u bytes) at each change\n",
		idx, (void *)found, d->expect_len);
	return 0;
}

/* Lets go of the variables' modules. At destroy, under xk_lock, once no
 * switch can run. */
void xk_var_release(struct xk_const *c)
{
	for (int i = 0; i < c->nr_vars; i++) {
		if (c->vars[i].mod)
			module_put(c->vars[i].mod);
		c->vars[i].mod = NULL;
	}
}

/*
 * The bytes variable v holds at value n (a*n + b, or its point at n among
 * those published: xk_table_add_point), as a number (little endian); NULL
 * or why not. Any context.
 */
static const char *var_bytes(const struct xk_var *v, s64 n, u64 *x)
{
	u8 b[8];
	const char *why = xk_ioc_var_bytes(&v->desc.imms[0], v->desc.points,
					   smp_load_acquire(&v->nr_points), n, b);

	if (!why)
		memcpy(x, b, sizeof(*x));
	return why;
}

/*
 * Whether every variable of c can hold value n: a*n + b fits its field
 * (-ERANGE), or per value, n has a point (-ENOKEY: user space builds and
 * hands it, then sets again). Before a transition or a load, under xk_lock.
 */
int xk_var_check_value(const struct xk_const *c, s64 n, char *error)
{
	for (int i = 0; i < c->nr_vars; i++) {
		const struct xk_ioc_imm *m = &c->vars[i].desc.imms[0];
		const char *why;
		u64 b;

		why = var_bytes(&c->vars[i], n, &b);
		/* per value: a point not handed yet (xk_table_add_point) */
		if (why && c->vars[i].desc.nr_points)
			return xk_error(error, "%s: variable %s+%#llx has no value "
					"for %lld yet: it comes from a build with the "
					"value (xk set builds it; xk gen --prepare %lld "
					"ahead of time)", c->name, c->vars[i].desc.func,
					c->vars[i].desc.start, n, n), -ENOKEY;
		if (why)
			return xk_error(error, "%s: value %lld: %s (%s+%#llx, %u "
					"bytes)", c->name, n, why, c->vars[i].desc.func,
					c->vars[i].desc.start, m->size), -ERANGE;
	}
	return 0;
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
 * c's variables take what value `to` puts there, each from the value our
 * last write left (v->cur). The commit point of a transition calls it with
 * the value in force (xk_transition.c: under tx->lock, in stop_machine, or
 * from the ioctl with xk_lock held), and so do a faulted constant's
 * disarming (back to the default, in the probed context) and destroy
 * (under xk_lock). No lock, no sleep: a compare-and-exchange per field, so
 * a value written since by anyone else stays (v->changed, reported by
 * xk_var_report). The variables' modules are held (xk_var_validate); one
 * unloaded by force is marked gone by the notifier under xk_lock before its
 * memory is freed a grace period later, which the callers without xk_lock
 * (interrupts or preemption off) hold off.
 */
void xk_var_switch(struct xk_const *c, s64 to)
{
	for (int i = 0; i < c->nr_vars; i++) {
		struct xk_var *v = &c->vars[i];
		s64 cur = READ_ONCE(v->cur);
		u64 old, new;

		if (READ_ONCE(v->gone) || !v->addr || cur == to)
			continue;
		if (var_bytes(v, cur, &old) || var_bytes(v, to, &new))
			continue;	/* xk_var_check_value refused it */
		if (exchange(v->addr, v->desc.imms[0].size, old, new)) {
			WRITE_ONCE(v->cur, to);
			atomic64_inc(&v->writes);
		} else {
			WRITE_ONCE(v->changed, true);
		}
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

		if (!v->gone && v->addr && (v->mod == mod ||
					    within_module(v->addr, mod))) {
			WRITE_ONCE(v->gone, true);
			/* unloaded by force despite our reference: the struct
			 * module goes too, never to be put */
			v->mod = NULL;
			pr_info("%s: variable %s gone with module %s\n", c->name,
				v->desc.func, mod->name);
		}
	}
}
