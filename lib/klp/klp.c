// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: a livepatch module that compiles another value of a
 * constant in, built the kpatch way, for the side-by-side comparison of
 * bench/compare.sh. It is a bench-support tool, not a second runtime.
 *
 *  1. Each object holding one of the table's spans is compiled twice from
 *     its preprocessed unit (variants.c), with the default and with the new
 *     value, both with -ffunction-sections -fdata-sections.
 *  2. The two are compared function by function (bytes with relocated
 *     fields masked, relocations by target); the functions that differ must
 *     be exactly those of the spans, and no data section may differ. With
 *     the default value nothing differs, and the spans' functions are taken
 *     as they are: a patch that changes nothing, the mechanism's cost alone.
 *  3. The changed functions are copied into one relocatable object, with
 *     the rodata they read, and the entries of __jump_table, __bug_table,
 *     __ex_table, __mcount_loc, .altinstructions and .smp_locks that name
 *     them. A reference to an exported symbol stays a plain undefined
 *     symbol; any other reference to vmlinux becomes an undefined symbol
 *     .klp.sym.vmlinux.NAME,POS (Documentation/livepatch/module-elf-format.rst).
 *  4. Kbuild links it with a generated klp_patch (objtool runs on the
 *     linked module as for any module of this kernel: ORC, return sites).
 *  5. In the .ko, the .klp.sym symbols get SHN_LIVEPATCH and their
 *     relocations move to .klp.rela.vmlinux.SECTION sections
 *     (SHF_RELA_LIVEPATCH), which the module loader applies at load.
 * Static calls in the copied code call their trampoline (objtool does not
 * see a .klp.sym name as a static call): correct, one jump longer.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <capstone/capstone.h>

#include "build.h"
#include "klp.h"

#ifndef SHF_RELA_LIVEPATCH
#define SHF_RELA_LIVEPATCH 0x00100000
#endif
#ifndef SHN_LIVEPATCH
#define SHN_LIVEPATCH 0xff20
#endif
#define KLP_SYM_PREFIX ".klp.sym.vmlinux."

/* ---- what vmlinux offers ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Runs once per build, before the objects are read. */
int klp_vmlinux_load(const struct xk_kernel *k, struct klp_vmlinux *vm)
{
	char path[XK_PATH_MAX];
	size_t cap = 0;
	int err;

	memset(vm, 0, sizeof(*vm));
	err = xk_snprintf(path, sizeof(path), "%s/kallsyms", k->dir) ?:
	      xk_kallsyms_read(path, false, &vm->ks) ?:
	      xk_snprintf(path, sizeof(path), "%s/Module.symvers", k->headers) ?:
	      xk_read_file(path, &vm->symvers, NULL);
	if (err)
		goto out;
	/* crc TAB name TAB module TAB export [TAB namespace] */
	for (char *line = vm->symvers; *line;) {
		char *end = strchrnul(line, '\n'), *name, *mod;
		bool last = !*end;

		*end = '\0';
		name = strchr(line, '\t');
		mod = name ? strchr(name + 1, '\t') : NULL;
		if (mod) {
			*mod++ = '\0';
			if (!strncmp(mod, "vmlinux\t", 8)) {
				if (vm->nr_exports == cap) {
					const char **n;

					cap = cap ? cap * 2 : 16384;
					n = realloc(vm->exports, cap * sizeof(*n));
					if (!n) {
						err = xk_err(-ENOMEM, "%s: out of memory", __func__);
						goto out;
					}
					vm->exports = n;
				}
				vm->exports[vm->nr_exports++] = name + 1;
			}
		}
		line = last ? end : end + 1;
	}
	if (!vm->nr_exports) {
		err = xk_err(-EINVAL, "%s lists no export of vmlinux", path);
		goto out;
	}
	qsort(vm->exports, vm->nr_exports, sizeof(*vm->exports), cmp_str);
out:
	if (err)
		klp_vmlinux_free(vm);
	return err;
}

void klp_vmlinux_free(struct klp_vmlinux *vm)
{
	xk_kallsyms_free(&vm->ks);
	free(vm->symvers);
	free(vm->exports);
	memset(vm, 0, sizeof(*vm));
}

bool klp_exported(const struct klp_vmlinux *vm, const char *name)
{
	return bsearch(&name, vm->exports, vm->nr_exports, sizeof(*vm->exports),
		       cmp_str) != NULL;
}

/* ---- one relocation ---- */

static bool reloc_type_ok(uint32_t type)
{
	/* what arch/x86/kernel/module.c applies */
	return type == R_X86_64_64 || type == R_X86_64_32 ||
	       type == R_X86_64_32S || type == R_X86_64_PC32 ||
	       type == R_X86_64_PLT32 || type == R_X86_64_PC64;
}

/* A function or data object with a name: what a reference can name. */
static bool named_kind(const struct xk_sym *y)
{
	int type = GELF_ST_TYPE(y->sym.st_info);

	return y->name[0] && (type == STT_FUNC || type == STT_OBJECT);
}

/* Object o's function or data object called name, or NULL. */
static const struct xk_sym *named_symbol(const struct xk_obj *o, const char *name)
{
	for (size_t i = 0; i < o->nr_syms; i++)
		if (named_kind(&o->syms[i]) && !strcmp(o->syms[i].name, name))
			return &o->syms[i];
	return NULL;
}

/* The section of o whose relocation r is. */
static const struct xk_sec *rela_section(const struct xk_obj *o,
					 const struct xk_rela *r)
{
	for (size_t i = 1; i < o->nr_secs; i++)
		if (o->secs[i].nr_relas && r >= o->secs[i].relas &&
		    r < o->secs[i].relas + o->secs[i].nr_relas)
			return &o->secs[i];
	return NULL;
}

/*
 * The offset from its symbol that relocation r of object o reads or names.
 * A PC-relative field of an instruction counts from the instruction's end,
 * which an immediate after the field moves (cmpb $0, x(%rip): addend -5
 * for x itself): the instruction is decoded to find it. Elsewhere (data,
 * absolute fields) the addend is the offset. -ENOTSUP when the instruction
 * holding the field cannot be found.
 */
static int reference_offset(const struct xk_obj *o, const struct xk_rela *r,
			    int64_t *off)
{
	const struct xk_sec *s = rela_section(o, r);
	const uint8_t *code;
	uint64_t addr = 0;
	size_t size;
	cs_insn *insn;
	csh h;
	int err = -ENOTSUP;

	*off = r->addend;
	if ((r->type != R_X86_64_PC32 && r->type != R_X86_64_PLT32) || !s ||
	    !(s->sh.sh_flags & SHF_EXECINSTR))
		return 0;
	if (!s->data || cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return xk_err(-ENOTSUP, "%s: cannot decode %s", o->path, s->name);
	code = s->data;
	size = s->sh.sh_size;
	insn = cs_malloc(h);
	while (insn && cs_disasm_iter(h, &code, &size, &addr, insn)) {
		if (insn->address + insn->size <= r->offset)
			continue;
		if (insn->address < r->offset &&
		    r->offset + 4 <= insn->address + insn->size) {
			*off = r->addend + (int64_t)(insn->address + insn->size - r->offset);
			err = 0;
		}
		break;
	}
	if (insn)
		cs_free(insn, 1);
	cs_close(&h);
	return err ? xk_err(err, "%s: no instruction of %s holds the field at 0x%llx",
			    o->path, s->name, (unsigned long long)r->offset) : 0;
}

/*
 * The symbol of section s that holds offset off, for a reference through
 * the section's symbol to a section holding several (a named section such
 * as .data..read_mostly, __dyndbg or .data..percpu, which -fdata-sections
 * does not split): the one whose bytes cover off, or NULL when none or
 * several do. The linker keeps an input section whole, so any symbol of it
 * resolves the reference to the same address.
 */
static const struct xk_sym *symbol_at(const struct xk_obj *o,
				      const struct xk_sec *s, int64_t off)
{
	const struct xk_sym *found = NULL;

	for (size_t i = 0; i < o->nr_syms; i++) {
		const struct xk_sym *y = &o->syms[i];

		if (y->sec != s || !named_kind(y) ||
		    off < (int64_t)y->sym.st_value ||
		    off >= (int64_t)(y->sym.st_value + y->sym.st_size))
			continue;
		if (found && found->sym.st_value != y->sym.st_value)
			return NULL;
		if (!found || GELF_ST_BIND(y->sym.st_info) == STB_GLOBAL)
			found = y;
	}
	return found;
}

/* How many of kallsyms' symbols called name are vmlinux's (no module's). */
static size_t vmlinux_count(const struct klp_vmlinux *vm, const char *name)
{
	const struct xk_ksym *first;
	size_t n = 0;

	for (size_t i = xk_kallsyms_lookup(&vm->ks, name, &first); i-- > 0;)
		n += !first[i].module;
	return n;
}

/*
 * Which of vmlinux's own symbols called name object orig's is: its position,
 * 1-based in kallsyms order (address), as the livepatch core counts
 * (klp_find_object_symbol); own is how many vmlinux has. The object as the
 * kernel compiled it (orig: without -fdata-sections, as shipped) places y
 * in its section beside the section's other symbols, and the linker keeps
 * an input section whole: a candidate is the one, of the same kind (text
 * for a function, data otherwise), when every other symbol of that section
 * that vmlinux lists lies at the same distance from it there. Refuses
 * (-ENOTSUP) when no candidate or several fit.
 */
static int local_position(const struct klp_vmlinux *vm, const struct xk_obj *orig,
			  const char *name, size_t own, size_t *pos)
{
	const struct xk_sym *at = orig ? named_symbol(orig, name) : NULL;
	const struct xk_ksym *first;
	size_t n, k = 0, fits = 0;

	if (!at || !at->sec)
		return xk_err(-ENOTSUP, "vmlinux has %zu symbols named %s: cannot "
					"tell its position (not in the object as built)",
			      own, name);
	n = xk_kallsyms_lookup(&vm->ks, name, &first);
	for (size_t c = 0; c < n; c++) {
		unsigned long long base = first[c].addr - at->sym.st_value;
		bool fit;

		if (first[c].module)
			continue;
		k++;
		/* a function is text (t, T), anything else is not */
		fit = (GELF_ST_TYPE(at->sym.st_info) == STT_FUNC) ==
		      (tolower((unsigned char)first[c].type) == 't');
		for (size_t i = 0; i < orig->nr_syms && fit; i++) {
			const struct xk_sym *a = &orig->syms[i];
			const struct xk_ksym *ka;
			size_t na;
			bool listed = false, there = false;

			/* a weak definition another overrides is not listed
			 * under its name where it lies */
			if (a->sec != at->sec || a == at || !named_kind(a) ||
			    GELF_ST_BIND(a->sym.st_info) == STB_WEAK)
				continue;
			na = xk_kallsyms_lookup(&vm->ks, a->name, &ka);
			for (size_t j = 0; j < na; j++) {
				if (ka[j].module)
					continue;
				listed = true;
				there |= ka[j].addr == base + a->sym.st_value;
			}
			fit = !listed || there;
		}
		if (fit) {
			*pos = k;
			fits++;
		}
	}
	if (fits != 1)
		return xk_err(-ENOTSUP, "vmlinux has %zu symbols named %s and %zu "
					"fit its place among the other symbols of %s: "
					"cannot tell its position", own, name, fits,
			      at->sec->name);
	return 0;
}

/*
 * The old function a changed one of object orig replaces: its position
 * among vmlinux's functions of that name (0: the only one, the livepatch's
 * old_sympos), or -ENOTSUP when vmlinux has none or cannot tell which.
 */
static int old_position(const struct klp_vmlinux *vm, const struct xk_obj *orig,
			const char *name, size_t *pos)
{
	size_t own = vmlinux_count(vm, name);

	*pos = 0;
	if (!own)
		return xk_err(-ENOTSUP, "vmlinux has no function named %s", name);
	return own == 1 ? 0 : local_position(vm, orig, name, own, pos);
}

/* The one symbol a section holds (its section symbol aside), or NULL. */
static const struct xk_sym *only_symbol(const struct xk_obj *o,
					const struct xk_sec *s)
{
	const struct xk_sym *found = NULL;

	for (size_t i = 0; i < o->nr_syms; i++) {
		const struct xk_sym *y = &o->syms[i];
		int type = GELF_ST_TYPE(y->sym.st_info);

		if (y->sec != s || type == STT_SECTION || !y->name[0] ||
		    (type != STT_FUNC && type != STT_OBJECT))
			continue;
		if (found && found->sym.st_value != y->sym.st_value)
			return NULL;	/* two things: which one is meant? */
		if (!found || GELF_ST_BIND(y->sym.st_info) == STB_GLOBAL)
			found = y;	/* an alias: the global name */
	}
	return found;
}

/*
 * The named symbol relocation r of object o reaches through its section's
 * symbol: the one symbol that section holds, else the one whose bytes the
 * reference reads; NULL when neither can be told. -ENOTSUP when the
 * instruction holding the field cannot be decoded.
 */
static int section_target(const struct xk_obj *o, const struct xk_rela *r,
			  const struct xk_sym **named)
{
	const struct xk_sec *s = r->sym->sec;
	int64_t off;
	int err;

	*named = s ? only_symbol(o, s) : NULL;
	if (*named || !s)
		return 0;
	err = reference_offset(o, r, &off);
	if (!err)
		*named = symbol_at(o, s, off);
	return err;
}

int klp_classify(const struct klp_vmlinux *vm, const struct xk_obj *o,
		 const struct xk_obj *orig, const bool *copied,
		 const struct xk_rela *r, struct klp_ref *ref)
{
	const struct xk_sym *y = r->sym;
	size_t n, pos = 0;

	memset(ref, 0, sizeof(*ref));
	ref->addend = r->addend;
	if (!reloc_type_ok(r->type))
		return xk_err(-ENOTSUP, "%s: relocation type %u at 0x%llx is not "
					"one the module loader applies", o->path,
			      r->type, (unsigned long long)r->offset);
	if (!y || !y->index)
		return xk_err(-ENOTSUP, "%s: relocation at 0x%llx names no symbol",
			      o->path, (unsigned long long)r->offset);
	if (y->sec && copied[y->sec->index]) {
		ref->kind = KLP_REF_SECTION;
		ref->sec = y->sec;
		if (GELF_ST_TYPE(y->sym.st_info) != STT_SECTION)
			ref->addend += y->sym.st_value;
		return 0;
	}
	if (GELF_ST_TYPE(y->sym.st_info) == STT_SECTION) {
		const struct xk_sym *named;
		int err = section_target(o, r, &named);

		if (err)
			return err;
		if (!named)
			return xk_err(-ENOTSUP, "%s: a reference to section %s, "
						"which holds no single symbol",
				      o->path, y->sec ? y->sec->name : "?");
		ref->addend -= named->sym.st_value;
		y = named;
	}
	/* a static of this object is not another's export of its name */
	if (GELF_ST_BIND(y->sym.st_info) != STB_LOCAL && klp_exported(vm, y->name)) {
		ref->kind = KLP_REF_EXPORTED;
		return xk_strlcpy(ref->name, y->name, sizeof(ref->name));
	}
	n = vmlinux_count(vm, y->name);
	if (!n)
		return xk_err(-ENOTSUP, "%s: %s is neither exported nor in vmlinux's "
					"kallsyms", o->path, y->name);
	if (n > 1) {
		int err = local_position(vm, orig, y->name, n, &pos);

		if (err)
			return err;
	}
	ref->kind = KLP_REF_KLP;
	return xk_snprintf(ref->name, sizeof(ref->name), KLP_SYM_PREFIX "%s,%zu",
			   y->name, pos);
}

/* ---- building the two objects ---- */

struct klp_pair {
	char base[XK_PATH_MAX], new[XK_PATH_MAX];
	char orig[XK_PATH_MAX];	/* the default, as the kernel compiled it */
};

static int run_sh(const struct tree *t, const char *script, const char *log)
{
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct xk_cmd cmd = { .argv = argv, .cwd = t->cwd, .log_path = log,
			      .root = t->toolchain };

	return xk_run_step("compile", &cmd);
}

/* Compiles obj with the default and with value into dir: one unit, twice. */
static int build_pair(const struct tree *t, const struct xk_constant *c,
		      const char *obj, long long value, const char *dir,
		      struct klp_pair *p)
{
	char src[512], unit_path[XK_PATH_MAX], log[XK_PATH_MAX], stem[128];
	char *cmd = NULL, *unit = NULL, *patched = NULL, *script = NULL;
	const char *base = strrchr(obj, '/');
	int err;

	base = base ? base + 1 : obj;
	xk_snprintf(stem, sizeof(stem), "%.*s", (int)strcspn(base, "."), base);
	err = xk_snprintf(log, sizeof(log), "%s/build.log", dir) ?:
	      xk_snprintf(unit_path, sizeof(unit_path), "%s/%s.i", dir, stem) ?:
	      xk_snprintf(p->base, sizeof(p->base), "%s/%s.base.o", dir, stem) ?:
	      xk_snprintf(p->new, sizeof(p->new), "%s/%s.new.o", dir, stem) ?:
	      xk_snprintf(p->orig, sizeof(p->orig), "%s/%s.orig.o", dir, stem) ?:
	      recorded_command(t, obj, &cmd, src, sizeof(src));
	if (err)
		goto out;
	/* the unit, includes expanded and definitions kept, as variants.c */
	if (asprintf(&script, "%s -E -fdirectives-only -o %s %s", cmd,
		     unit_path, src) < 0) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		goto out;
	}
	err = run_sh(t, script, log) ?: xk_read_file(unit_path, &unit, NULL) ?:
	      patch_unit(c, unit, c->def, &patched) ?:
	      xk_write_file(unit_path, patched, strlen(patched), 0644);
	if (err)
		goto out;
	for (char *q; (q = strstr(cmd, "-include "));)
		memset(q, ' ', strlen("-include ") + strcspn(q + 9, " "));
	/* the default as the kernel compiled it: where local data lies in
	 * its sections (local_position) */
	free(script);
	script = NULL;
	if (asprintf(&script, "%s -fpreprocessed -fdirectives-only -c -o %s %s",
		     cmd, p->orig, unit_path) < 0)
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
	err = err ?: run_sh(t, script, log);
	for (int v = 0; v < 2 && !err; v++) {
		free(script);
		script = NULL;
		if (v == 1) {
			free(patched);
			patched = NULL;
			err = patch_unit(c, unit, value, &patched) ?:
			      xk_write_file(unit_path, patched, strlen(patched), 0644);
			if (err)
				break;
		}
		if (asprintf(&script, "%s -ffunction-sections -fdata-sections "
			     "-fpreprocessed -fdirectives-only -c -o %s %s", cmd,
			     v ? p->new : p->base, unit_path) < 0) {
			err = xk_err(-ENOMEM, "%s: out of memory", __func__);
			break;
		}
		err = run_sh(t, script, log);
	}
out:
	free(cmd);
	free(unit);
	free(patched);
	free(script);
	return err;
}

/* ---- which functions changed ---- */

static const char *target_name(const struct xk_rela *r)
{
	if (!r->sym)
		return "";
	if (GELF_ST_TYPE(r->sym->sym.st_info) == STT_SECTION && r->sym->sec)
		return r->sym->sec->name;
	return r->sym->name;
}

/* Same bytes (relocated fields aside) and the same relocations. */
static bool same_section(const struct xk_sec *a, const struct xk_sec *b)
{
	if (a->sh.sh_size != b->sh.sh_size || a->nr_relas != b->nr_relas ||
	    !a->data != !b->data)
		return false;
	for (size_t i = 0; i < a->nr_relas; i++) {
		const struct xk_rela *x = &a->relas[i], *y = &b->relas[i];

		if (x->offset != y->offset || x->type != y->type ||
		    x->addend != y->addend || strcmp(target_name(x), target_name(y)))
			return false;
	}
	for (size_t off = 0; a->data && off < a->sh.sh_size; off++) {
		bool masked = false;

		if (a->data[off] == b->data[off])
			continue;
		for (size_t i = 0; i < a->nr_relas && !masked; i++)
			masked = off >= a->relas[i].offset &&
				 off < a->relas[i].offset +
				 (a->relas[i].type == R_X86_64_64 ||
				  a->relas[i].type == R_X86_64_PC64 ? 8 : 4);
		if (!masked)
			return false;
	}
	return true;
}

static bool diffed_section(const struct xk_sec *s)
{
	static const char *const skip[] = { ".debug", ".rela", ".note", ".comment",
					    ".discard", ".symtab", ".strtab",
					    ".shstrtab", ".group", NULL };

	if (!s->name[0] || s->sh.sh_type == SHT_RELA || s->sh.sh_type == SHT_SYMTAB ||
	    s->sh.sh_type == SHT_STRTAB)
		return false;
	for (int i = 0; skip[i]; i++)
		if (!strncmp(s->name, skip[i], strlen(skip[i])))
			return false;
	return true;
}

/*
 * Marks in changed[] (by section of n) each function section of n that
 * differs from its twin in b. Anything else that differs (data, the tables
 * that name code, a function that appears or vanishes) is refused: the
 * patch would be more than functions.
 */
static int diff_objects(const struct xk_obj *b, const struct xk_obj *n,
			bool *changed, int *nr_changed)
{
	*nr_changed = 0;
	for (size_t i = 1; i < n->nr_secs; i++) {
		const struct xk_sec *s = &n->secs[i], *t = NULL;

		if (!diffed_section(s))
			continue;
		for (size_t j = 1; j < b->nr_secs && !t; j++)
			if (!strcmp(b->secs[j].name, s->name))
				t = &b->secs[j];
		if (!t)
			return xk_err(-ENOTSUP, "%s: section %s appears with the "
						"new value", n->path, s->name);
		if (same_section(t, s))
			continue;
		if (!strncmp(s->name, ".text.", 6) && only_symbol(n, s)) {
			changed[i] = true;
			++*nr_changed;
			continue;
		}
		/* the tables that name code move when a function's size
		 * does; their entries for the changed functions are copied */
		if (!strcmp(s->name, "__jump_table") || !strcmp(s->name, "__bug_table") ||
		    !strcmp(s->name, "__ex_table") || !strcmp(s->name, "__mcount_loc") ||
		    !strcmp(s->name, "__patchable_function_entries") ||
		    !strcmp(s->name, ".altinstructions") ||
		    !strcmp(s->name, ".altinstr_replacement") ||
		    !strcmp(s->name, ".smp_locks"))
			continue;
		return xk_err(-ENOTSUP, "%s: section %s differs with the new value: "
					"not a patch of functions alone", n->path,
			      s->name);
	}
	for (size_t j = 1; j < b->nr_secs; j++) {
		bool found = false;

		if (!diffed_section(&b->secs[j]))
			continue;
		for (size_t i = 1; i < n->nr_secs && !found; i++)
			found = !strcmp(b->secs[j].name, n->secs[i].name);
		if (!found)
			return xk_err(-ENOTSUP, "%s: section %s vanishes with the new "
						"value", n->path, b->secs[j].name);
	}
	return 0;
}

/* ---- the patch object ---- */

struct out_rela {
	uint64_t off;
	uint32_t type;
	int64_t addend;
	bool to_sec;		/* sym: an out section's symbol, else a global */
	size_t sym;
};

struct out_sec {
	char name[160];
	GElf_Shdr sh;
	uint8_t *data;
	size_t size;
	struct out_rela *relas;
	size_t nr_relas, cap;
	const struct xk_sec *from;	/* copied whole from this, or NULL */
};

struct out_glob {
	char name[192];
	size_t sec;		/* out section + 1, 0: undefined */
	uint64_t value, size;
	bool func;
};

struct patch {
	const struct klp_vmlinux *vm;
	const struct xk_obj *orig;	/* the object being added, as built */
	struct out_sec secs[64];
	size_t nr_secs;
	struct out_glob globs[256];
	size_t nr_globs;
	struct xk_klp_result *res;
};

static int add_sec(struct patch *p, const char *name, const GElf_Shdr *sh,
		   const struct xk_sec *from, size_t *idx)
{
	struct out_sec *s;

	if (p->nr_secs == ARRAY_SIZE(p->secs))
		return xk_err(-E2BIG, "the patch needs more than %zu sections",
			      ARRAY_SIZE(p->secs));
	s = &p->secs[p->nr_secs];
	memset(s, 0, sizeof(*s));
	s->sh = *sh;
	s->from = from;
	*idx = p->nr_secs++;
	return xk_strlcpy(s->name, name, sizeof(s->name));
}

static int add_glob(struct patch *p, const char *name, size_t sec,
		    uint64_t value, uint64_t size, bool func, size_t *idx)
{
	for (size_t i = 0; i < p->nr_globs; i++)
		if (!strcmp(p->globs[i].name, name)) {
			/* two functions of one name (statics of two objects,
			 * foo.part.0 and foo_part_0) would share one new code */
			if (sec || p->globs[i].sec)
				return xk_err(-ENOTSUP, "two symbols named %s in the "
							"patch", name);
			*idx = i;
			return 0;
		}
	if (p->nr_globs == ARRAY_SIZE(p->globs))
		return xk_err(-E2BIG, "the patch needs more than %zu symbols",
			      ARRAY_SIZE(p->globs));
	*idx = p->nr_globs++;
	p->globs[*idx] = (struct out_glob){ .sec = sec, .value = value,
					    .size = size, .func = func };
	return xk_strlcpy(p->globs[*idx].name, name, sizeof(p->globs[*idx].name));
}

static int append(struct out_sec *s, const void *buf, size_t len)
{
	uint8_t *n = realloc(s->data, s->size + len);

	if (!n)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	memcpy(n + s->size, buf, len);
	s->data = n;
	s->size += len;
	return 0;
}

/* The out section a copied section of o became, or -1. */
static ssize_t out_of(const struct patch *p, const struct xk_sec *s)
{
	for (size_t i = 0; i < p->nr_secs; i++)
		if (p->secs[i].from == s)
			return i;
	return -1;
}

/* Relocation r of o, at off in out section s, resolved for the patch. */
static int add_rela(struct patch *p, const struct xk_obj *o, const bool *copied,
		    struct out_sec *s, const struct xk_rela *r, uint64_t off)
{
	struct out_rela *or;
	struct klp_ref ref;
	size_t sym = 0;
	int err = klp_classify(p->vm, o, p->orig, copied, r, &ref);

	if (err)
		return err;
	if (ref.kind == KLP_REF_SECTION) {
		ssize_t i = out_of(p, ref.sec);

		if (i < 0)
			return xk_err(-EINVAL, "%s: section %s copied but not out",
				      o->path, ref.sec->name);
		sym = i;
		p->res->relocs_section++;
	} else {
		err = add_glob(p, ref.name, 0, 0, 0, false, &sym);
		if (err)
			return err;
		if (ref.kind == KLP_REF_EXPORTED)
			p->res->relocs_exported++;
		else
			p->res->relocs_klp++;
	}
	if (s->nr_relas == s->cap) {
		struct out_rela *n;

		s->cap = s->cap ? s->cap * 2 : 32;
		n = realloc(s->relas, s->cap * sizeof(*n));
		if (!n)
			return xk_err(-ENOMEM, "%s: out of memory", __func__);
		s->relas = n;
	}
	or = &s->relas[s->nr_relas++];
	*or = (struct out_rela){ .off = off, .type = r->type, .addend = ref.addend,
				 .to_sec = ref.kind == KLP_REF_SECTION, .sym = sym };
	return 0;
}

/* The tables whose entries name code: entry size; the first field names it. */
static const struct {
	const char *name;
	size_t entsize;
} special[] = {
	{ "__jump_table", 16 },		/* code, target, key */
	{ "__bug_table", 12 },		/* bug_addr, file, line, flags */
	{ "__ex_table", 12 },		/* insn, fixup, data */
	{ "__mcount_loc", 8 },		/* the __fentry__ call */
	{ ".altinstructions", 14 },	/* instr, replacement, flags, lens */
	{ ".smp_locks", 4 },		/* a lock prefix */
};

static bool ignored_referrer(const struct xk_sec *s)
{
	/* code calling a changed function stays in vmlinux and is
	 * redirected there; debug info is not copied; data holding a
	 * function's address reaches the old one, redirected too */
	return (s->sh.sh_flags & SHF_EXECINSTR) || !strncmp(s->name, ".debug", 6) ||
	       !strncmp(s->name, ".discard", 8) || !strncmp(s->name, ".data", 5) ||
	       !strncmp(s->name, ".rodata", 7) || !strcmp(s->name, ".export_symbol") ||
	       !strcmp(s->name, "__patchable_function_entries");
}

/* Whether entry e of special section s names a copied function. */
static bool entry_copied(const struct xk_sec *s, size_t e, size_t es,
			 const bool *copied)
{
	for (size_t r = 0; r < s->nr_relas; r++) {
		const struct xk_rela *a = &s->relas[r];

		if (a->offset == e * es)
			return a->sym && a->sym->sec && copied[a->sym->sec->index] &&
			       (a->sym->sec->sh.sh_flags & SHF_EXECINSTR);
	}
	return false;
}

/*
 * Copies into p the entries of the special sections of o that name a
 * changed function, and refuses any other section that names one. Run
 * twice: first (emit false) to mark what those entries read (strings,
 * replacement code) to be copied whole, then to copy them.
 */
static int copy_special(struct patch *p, const struct xk_obj *o, bool *copied,
			bool emit)
{
	for (size_t i = 1; i < o->nr_secs; i++) {
		const struct xk_sec *s = &o->secs[i];
		size_t es = 0, idx = 0;
		bool names_changed = false;
		int err = 0;

		for (size_t r = 0; r < s->nr_relas && !names_changed; r++)
			names_changed = s->relas[r].sym && s->relas[r].sym->sec &&
					copied[s->relas[r].sym->sec->index] &&
					(s->relas[r].sym->sec->sh.sh_flags & SHF_EXECINSTR);
		if (!names_changed || copied[i] || ignored_referrer(s))
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(special); k++)
			if (!strcmp(s->name, special[k].name))
				es = special[k].entsize;
		if (!es || s->sh.sh_size % es)
			return xk_err(-ENOTSUP, "%s: section %s names a changed "
						"function and is not one the patch "
						"knows how to carry", o->path, s->name);
		if (emit)
			err = add_sec(p, s->name, &s->sh, NULL, &idx);
		for (size_t e = 0; e < s->sh.sh_size / es && !err; e++) {
			struct out_sec *os = &p->secs[idx];
			size_t at = os->size;

			if (!entry_copied(s, e, es, copied))
				continue;
			if (emit) {
				err = append(os, s->data + e * es, es);
				p->res->special_entries++;
			}
			for (size_t r = 0; r < s->nr_relas && !err; r++) {
				const struct xk_rela *x = &s->relas[r];
				const struct xk_sec *t = x->sym ? x->sym->sec : NULL;

				if (x->offset < e * es || x->offset >= (e + 1) * es)
					continue;
				if (emit)
					err = add_rela(p, o, copied, os, x,
						       at + x->offset - e * es);
				else if (t && !(t->sh.sh_flags & SHF_WRITE) &&
					 t->sh.sh_type == SHT_PROGBITS &&
					 ((!strncmp(t->name, ".rodata", 7) &&
					   !(t->sh.sh_flags & SHF_EXECINSTR)) ||
					  !strcmp(t->name, ".altinstr_replacement")))
					copied[t->index] = true;
			}
		}
		if (err)
			return err;
		if (emit)
			p->secs[idx].sh.sh_size = p->secs[idx].size;
	}
	return 0;
}

/* Adds the sections of o marked copied[] and not yet out, whole. */
static int copy_whole(struct patch *p, const struct xk_obj *o, const bool *copied,
		      size_t *first_new)
{
	*first_new = p->nr_secs;
	for (size_t i = 1; i < o->nr_secs; i++) {
		const struct xk_sec *s = &o->secs[i];
		size_t idx;
		int err;

		if (!copied[i] || out_of(p, s) >= 0)
			continue;
		err = add_sec(p, s->name, &s->sh, s, &idx);
		if (!err && s->data)
			err = append(&p->secs[idx], s->data, s->sh.sh_size);
		if (err)
			return err;
		p->secs[idx].size = s->sh.sh_size;
	}
	return 0;
}

/* Read-only data the copied code reads is copied with it (strings, tables). */
static void mark_rodata(const struct xk_obj *o, bool *copied)
{
	for (bool more = true; more;) {
		more = false;
		for (size_t i = 1; i < o->nr_secs; i++) {
			const struct xk_sec *s = &o->secs[i];

			if (!copied[i])
				continue;
			for (size_t r = 0; r < s->nr_relas; r++) {
				const struct xk_sec *t = s->relas[r].sym ?
							 s->relas[r].sym->sec : NULL;

				if (!t || copied[t->index] || t->sh.sh_type != SHT_PROGBITS ||
				    (t->sh.sh_flags & (SHF_WRITE | SHF_EXECINSTR)) ||
				    !(t->sh.sh_flags & SHF_ALLOC) ||
				    strncmp(t->name, ".rodata", 7))
					continue;
				copied[t->index] = true;
				more = true;
			}
		}
	}
}

/* The relocations of the sections copied whole, from first on. */
static int relocate_whole(struct patch *p, const struct xk_obj *o,
			  const bool *copied, size_t first)
{
	for (size_t i = first; i < p->nr_secs; i++) {
		const struct xk_sec *s = p->secs[i].from;

		for (size_t r = 0; s && r < s->nr_relas; r++) {
			int err = add_rela(p, o, copied, &p->secs[i], &s->relas[r],
					   s->relas[r].offset);

			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * A function's static of its own that only records that something was done
 * (a warning given once, a rate limit's state, a lock class key): the
 * patch gets a fresh one, as kpatch does, rather than the kernel's, whose
 * place in vmlinux the name cannot tell (vmlinux has dozens of
 * __already_done.1). A warning the kernel gave may be given once more.
 */
static bool fresh_static(const char *name)
{
	static const char *const names[] = { "__key", "__warned", "__already_done",
					     "__print_once", "_rs" };
	size_t len = strcspn(name, ".");

	if (!name[len])
		return false;	/* a function's static is NAME.N */
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == len && !strncmp(name, names[i], len))
			return true;
	return false;
}

/*
 * Whether every named symbol of section s is a fresh static: only such a
 * section is copied whole (.data..once); one that holds other data too
 * (.data..read_mostly) keeps the kernel's, placed by local_position.
 */
static bool only_fresh_statics(const struct xk_obj *o, const struct xk_sec *s)
{
	for (size_t i = 0; i < o->nr_syms; i++)
		if (o->syms[i].sec == s && named_kind(&o->syms[i]) &&
		    !fresh_static(o->syms[i].name))
			return false;
	return true;
}

/* Marks copied the sections of the fresh statics the changed code names. */
static void mark_fresh_statics(struct patch *p, const struct xk_obj *o,
			       const bool *changed, bool *copied)
{
	for (size_t i = 1; i < o->nr_secs; i++) {
		const struct xk_sec *s = &o->secs[i];

		for (size_t r = 0; changed[i] && r < s->nr_relas; r++) {
			const struct xk_rela *x = &s->relas[r];
			const struct xk_sym *y = x->sym;

			/* one that cannot be told is refused by klp_classify */
			if (y && y->sec && GELF_ST_TYPE(y->sym.st_info) == STT_SECTION &&
			    section_target(o, x, &y))
				continue;
			if (!y || !y->sec || copied[y->sec->index] ||
			    (y->sec->sh.sh_flags & SHF_EXECINSTR) || !fresh_static(y->name) ||
			    !only_fresh_statics(o, y->sec))
				continue;
			copied[y->sec->index] = true;
			p->res->fresh_statics++;
		}
	}
}

/*
 * The name the patch gives function name's new code: xk_klp_NAME, with
 * what C does not allow in a name ('.' of a .constprop.0 or .isra.0 copy)
 * made '_', for the klp_func table of the generated source.
 */
static int new_func_name(const char *name, char *buf, size_t size)
{
	int err = xk_snprintf(buf, size, "xk_klp_%s", name);

	for (char *q = buf; !err && *q; q++)
		if (!isalnum((unsigned char)*q) && *q != '_')
			*q = '_';
	return err;
}

/* Adds object o's changed functions (changed[] by section) to the patch. */
static int add_object(struct patch *p, const struct xk_obj *o, const bool *changed)
{
	bool *copied = calloc(o->nr_secs, sizeof(*copied));
	size_t first, first2;
	int err = 0;

	if (!copied)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	memcpy(copied, changed, o->nr_secs * sizeof(*copied));
	mark_fresh_statics(p, o, changed, copied);
	mark_rodata(o, copied);
	err = copy_whole(p, o, copied, &first);
	/* the new functions, global, for the klp_func table */
	for (size_t i = first; i < p->nr_secs && !err; i++) {
		const struct xk_sym *f = p->secs[i].from && changed[p->secs[i].from->index] ?
					 only_symbol(o, p->secs[i].from) : NULL;
		char name[192];
		size_t g;

		if (!f)
			continue;
		err = new_func_name(f->name, name, sizeof(name)) ?:
		      add_glob(p, name, i + 1, f->sym.st_value, f->sym.st_size, true, &g);
	}
	/* what the special entries read (strings, replacement code), and
	 * what that reads, before any relocation is resolved */
	err = err ?: copy_special(p, o, copied, false);
	if (!err)
		mark_rodata(o, copied);
	err = err ?: copy_whole(p, o, copied, &first2) ?:
	      relocate_whole(p, o, copied, first) ?:
	      copy_special(p, o, copied, true);
	free(copied);
	return err;
}

/* Appends prefix and name, NUL-terminated, at *len of buf (sized for it). */
static size_t put_str(char *buf, size_t *len, const char *prefix, const char *name)
{
	size_t at = *len, a = strlen(prefix), b = strlen(name);

	memcpy(buf + at, prefix, a);
	memcpy(buf + at + a, name, b + 1);
	*len += a + b + 1;
	return at;
}

/* Writes the patch as a relocatable object (locals, then globals). */
static int write_patch(const struct patch *p, const char *path)
{
	size_t nsec = p->nr_secs, nrel = 0, strsz = 1, shstrsz = 1;
	size_t symtab, strtab, shstrtab, nsyms = 1 + nsec + p->nr_globs;
	char *strs = NULL, *shstrs = NULL;
	GElf_Sym *syms = NULL;
	Elf *e = NULL;
	int fd = -1, err = 0;
	size_t *rel_of = calloc(nsec, sizeof(*rel_of));
	GElf_Ehdr eh;

	for (size_t i = 0; i < nsec; i++)
		if (p->secs[i].nr_relas)
			rel_of[i] = 1 + nsec + nrel++;
	symtab = 1 + nsec + nrel;
	strtab = symtab + 1;
	shstrtab = strtab + 1;
	strs = calloc(1, 1 + p->nr_globs * 192);
	shstrs = calloc(1, 64 + nsec * 2 * 170);
	syms = calloc(nsyms, sizeof(*syms));
	if (!rel_of || !strs || !shstrs || !syms) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		goto out;
	}
	for (size_t i = 0; i < nsec; i++)
		syms[1 + i] = (GElf_Sym){ .st_info = GELF_ST_INFO(STB_LOCAL, STT_SECTION),
					  .st_shndx = 1 + i };
	for (size_t g = 0; g < p->nr_globs; g++) {
		const struct out_glob *gl = &p->globs[g];

		syms[1 + nsec + g] = (GElf_Sym){
			.st_name = put_str(strs, &strsz, "", gl->name),
			.st_info = GELF_ST_INFO(STB_GLOBAL, gl->func ? STT_FUNC : STT_NOTYPE),
			.st_shndx = gl->sec, .st_value = gl->value, .st_size = gl->size,
		};
	}
	elf_version(EV_CURRENT);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = xk_err(-errno, "cannot create %s", path);
		goto out;
	}
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!e || !gelf_newehdr(e, ELFCLASS64) || !gelf_getehdr(e, &eh)) {
		err = xk_err(-EIO, "%s: %s", path, elf_errmsg(-1));
		goto out;
	}
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh.e_type = ET_REL;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_shstrndx = shstrtab;
	gelf_update_ehdr(e, &eh);
	for (size_t i = 0; i < nsec + nrel + 3 && !err; i++) {
		Elf_Scn *scn = elf_newscn(e);
		Elf_Data *d = scn ? elf_newdata(scn) : NULL;
		GElf_Shdr sh = { 0 };

		if (!d) {
			err = xk_err(-EIO, "%s: %s", path, elf_errmsg(-1));
			break;
		}
		if (i < nsec) {			/* content */
			const struct out_sec *s = &p->secs[i];

			sh = s->sh;
			sh.sh_name = put_str(shstrs, &shstrsz, "", s->name);
			sh.sh_offset = 0;
			sh.sh_link = 0;	/* SHF_LINK_ORDER is not kept */
			sh.sh_flags &= ~(uint64_t)SHF_LINK_ORDER;
			sh.sh_size = s->size;
			d->d_buf = s->data;
			d->d_size = s->size;
			d->d_type = ELF_T_BYTE;
			d->d_align = sh.sh_addralign ?: 1;
		} else if (i < nsec + nrel) {	/* relocations */
			size_t j = 0;
			GElf_Rela *ra;
			const struct out_sec *s;

			while (!rel_of[j] || rel_of[j] != 1 + i)
				j++;
			s = &p->secs[j];
			ra = calloc(s->nr_relas, sizeof(*ra));
			if (!ra) {
				err = xk_err(-ENOMEM, "%s: out of memory", __func__);
				break;
			}
			for (size_t r = 0; r < s->nr_relas; r++) {
				const struct out_rela *x = &s->relas[r];
				size_t sym = x->to_sec ? 1 + x->sym : 1 + nsec + x->sym;

				ra[r] = (GElf_Rela){ .r_offset = x->off,
						     .r_info = GELF_R_INFO(sym, x->type),
						     .r_addend = x->addend };
			}
			sh.sh_name = put_str(shstrs, &shstrsz, ".rela", s->name);
			sh.sh_type = SHT_RELA;
			sh.sh_flags = SHF_INFO_LINK;
			sh.sh_link = symtab;
			sh.sh_info = 1 + j;
			sh.sh_entsize = sizeof(Elf64_Rela);
			sh.sh_addralign = 8;
			d->d_buf = ra;	/* freed with the patch below */
			d->d_size = s->nr_relas * sizeof(*ra);
			d->d_type = ELF_T_RELA;
			d->d_align = 8;
		} else if (i == symtab - 1) {
			sh.sh_name = put_str(shstrs, &shstrsz, "", ".symtab");
			sh.sh_type = SHT_SYMTAB;
			sh.sh_link = strtab;
			sh.sh_info = 1 + nsec;	/* the first global */
			sh.sh_entsize = sizeof(Elf64_Sym);
			sh.sh_addralign = 8;
			d->d_buf = syms;
			d->d_size = nsyms * sizeof(*syms);
			d->d_type = ELF_T_SYM;
			d->d_align = 8;
		} else if (i == strtab - 1) {
			sh.sh_name = put_str(shstrs, &shstrsz, "", ".strtab");
			sh.sh_type = SHT_STRTAB;
			sh.sh_addralign = 1;
			d->d_buf = strs;
			d->d_size = strsz;
			d->d_type = ELF_T_BYTE;
		} else {
			sh.sh_name = put_str(shstrs, &shstrsz, "", ".shstrtab");
			sh.sh_type = SHT_STRTAB;
			sh.sh_addralign = 1;
			d->d_buf = shstrs;
			d->d_size = shstrsz;
			d->d_type = ELF_T_BYTE;
		}
		if (!gelf_update_shdr(scn, &sh))
			err = xk_err(-EIO, "%s: %s", path, elf_errmsg(-1));
	}
	if (!err && elf_update(e, ELF_C_WRITE) < 0)
		err = xk_err(-EIO, "cannot write %s: %s", path, elf_errmsg(-1));
out:
	if (e) {
		/* the relocation buffers were allocated here */
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *d = elf_getdata(scn, NULL);

			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA && d)
				free(d->d_buf);
		}
		elf_end(e);
	}
	if (fd >= 0)
		close(fd);
	free(rel_of);
	free(strs);
	free(shstrs);
	free(syms);
	return err;
}

/* ---- the module ---- */

static int write_main(const struct xk_klp_result *res, const struct xk_constant *c,
		      long long value, const char *path)
{
	char *text = NULL, *funcs = NULL, *decls = NULL;
	int err = 0;

	for (int i = 0; i < res->nr_funcs && !err; i++) {
		char *f = funcs, *d = decls, name[192];

		err = new_func_name(res->func[i], name, sizeof(name));
		if (err)
			break;
		if (asprintf(&funcs, "%s\t{ .old_name = \"%s\", .new_func = %s, "
			     ".old_sympos = %zu },\n", f ?: "", res->func[i], name,
			     res->sympos[i]) < 0 ||
		    asprintf(&decls, "%svoid %s(void);\n", d ?: "", name) < 0)
			err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		free(f);
		free(d);
	}
	if (!err && asprintf(&text,
		"// SPDX-License-Identifier: GPL-2.0\n"
		"/* Generated by xk klp: %s = %lld compiled in (bench/compare.sh). */\n"
		"#include <linux/kernel.h>\n#include <linux/livepatch.h>\n"
		"#include <linux/module.h>\n\n"
		"/* the changed functions, in xk_klp_diff.o (never called directly) */\n"
		"%s\nstatic struct klp_func funcs[] = {\n%s\t{ }\n};\n\n"
		"static struct klp_object objs[] = {\n\t{ .funcs = funcs },\t/* vmlinux */\n"
		"\t{ }\n};\n\n"
		"static struct klp_patch patch = {\n\t.mod = THIS_MODULE,\n\t.objs = objs,\n};\n\n"
		"static int __init xk_klp_patch_init(void)\n{\n\treturn klp_enable_patch(&patch);\n}\n\n"
		"static void __exit xk_klp_patch_exit(void)\n{\n}\n\n"
		"module_init(xk_klp_patch_init);\nmodule_exit(xk_klp_patch_exit);\n"
		"MODULE_LICENSE(\"GPL\");\n"
		"MODULE_DESCRIPTION(\"%s = %lld, the kpatch way, for comparison\");\n"
		"MODULE_INFO(livepatch, \"Y\");\n",
		c->name, value, decls, funcs, c->name, value) < 0)
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
	err = err ?: xk_write_file(path, text, strlen(text), 0644);
	free(text);
	free(funcs);
	free(decls);
	return err;
}

/*
 * Makes the undefined .klp.sym.* symbols of the linked module livepatch
 * symbols (SHN_LIVEPATCH) and moves the relocations against them from
 * .rela<S> to a new .klp.rela.vmlinux<S> (SHF_RELA_LIVEPATCH, SHF_ALLOC),
 * keeping the symbol table's order, which those relocations index.
 */
static int klp_fixup_ko(const char *path, int *moved)
{
	size_t nsecs, shstrndx, symtab = 0, nr = 0, cap = 0;
	struct { size_t rel; GElf_Rela *keep, *klp; size_t nk, nl; } *todo = NULL;
	Elf_Scn *scn = NULL;
	Elf_Data *symd = NULL, *shd;
	GElf_Shdr sh;
	char *shstrs = NULL;
	size_t shsize;
	Elf *e;
	int fd, err = 0;

	*moved = 0;
	elf_version(EV_CURRENT);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return xk_err(-errno, "cannot open %s", path);
	e = elf_begin(fd, ELF_C_RDWR, NULL);
	if (!e || elf_getshdrnum(e, &nsecs) || elf_getshdrstrndx(e, &shstrndx)) {
		err = xk_err(-EINVAL, "%s: %s", path, elf_errmsg(-1));
		goto out;
	}
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
			symtab = elf_ndxscn(scn);
			symd = elf_getdata(scn, NULL);
		}
	if (!symd) {
		err = xk_err(-EINVAL, "%s has no symbol table", path);
		goto out;
	}
	{
		GElf_Shdr ssh;
		Elf_Scn *ss = elf_getscn(e, symtab);

		gelf_getshdr(ss, &ssh);
		for (size_t i = 0; i < symd->d_size / sizeof(Elf64_Sym); i++) {
			GElf_Sym y;
			const char *name;

			gelf_getsym(symd, i, &y);
			name = elf_strptr(e, ssh.sh_link, y.st_name);
			if (!name || strncmp(name, ".klp.sym.", 9))
				continue;
			if (y.st_shndx != SHN_UNDEF && y.st_shndx != SHN_LIVEPATCH) {
				err = xk_err(-EINVAL, "%s: %s is defined", path, name);
				goto out;
			}
			y.st_shndx = SHN_LIVEPATCH;
			gelf_update_sym(symd, i, &y);
		}
		elf_flagdata(symd, ELF_C_SET, ELF_F_DIRTY);
	}
	/* split each relocation section */
	scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		size_t n, nk = 0, nl = 0;
		GElf_Rela *keep, *klp;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_link != symtab || !(d = elf_getdata(scn, NULL)))
			continue;
		n = d->d_size / sizeof(Elf64_Rela);
		keep = calloc(n + 1, sizeof(*keep));
		klp = calloc(n + 1, sizeof(*klp));
		if (!keep || !klp) {
			free(keep);
			free(klp);
			err = xk_err(-ENOMEM, "%s: out of memory", __func__);
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			GElf_Sym y;

			gelf_getrela(d, i, &r);
			gelf_getsym(symd, GELF_R_SYM(r.r_info), &y);
			if (y.st_shndx == SHN_LIVEPATCH)
				klp[nl++] = r;
			else
				keep[nk++] = r;
		}
		if (!nl) {
			free(keep);
			free(klp);
			continue;
		}
		if (nr == cap) {
			void *t;

			cap = cap ? cap * 2 : 8;
			t = realloc(todo, cap * sizeof(*todo));
			if (!t) {
				free(keep);
				free(klp);
				err = xk_err(-ENOMEM, "%s: out of memory", __func__);
				goto out;
			}
			todo = t;
		}
		todo[nr].rel = elf_ndxscn(scn);
		todo[nr].keep = keep;
		todo[nr].klp = klp;
		todo[nr].nk = nk;
		todo[nr++].nl = nl;
	}
	/* the new sections' names, after the old ones */
	shd = elf_getdata(elf_getscn(e, shstrndx), NULL);
	shsize = shd->d_size;
	shstrs = malloc(shsize + nr * 256);
	if (!shstrs) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		goto out;
	}
	memcpy(shstrs, shd->d_buf, shsize);
	for (size_t t = 0; t < nr; t++) {
		Elf_Scn *old = elf_getscn(e, todo[t].rel), *target, *nscn;
		GElf_Shdr osh, tsh, nsh;
		const char *tname;
		Elf_Data *od = elf_getdata(old, NULL), *nd;

		gelf_getshdr(old, &osh);
		target = elf_getscn(e, osh.sh_info);
		gelf_getshdr(target, &tsh);
		tname = elf_strptr(e, shstrndx, tsh.sh_name) ?: "";
		nscn = elf_newscn(e);
		nd = nscn ? elf_newdata(nscn) : NULL;
		if (!nd) {
			err = xk_err(-EIO, "%s: %s", path, elf_errmsg(-1));
			goto out;
		}
		od->d_buf = todo[t].keep;
		od->d_size = todo[t].nk * sizeof(Elf64_Rela);
		for (size_t i = 0; i < todo[t].nk; i++)
			gelf_update_rela(od, i, &todo[t].keep[i]);
		elf_flagdata(od, ELF_C_SET, ELF_F_DIRTY);
		nd->d_buf = todo[t].klp;
		nd->d_size = todo[t].nl * sizeof(Elf64_Rela);
		nd->d_type = ELF_T_RELA;
		nd->d_align = 8;
		nsh = osh;
		nsh.sh_name = shsize;
		shsize += snprintf(shstrs + shsize, 256, ".klp.rela.vmlinux.%.200s",
				   tname) + 1;
		nsh.sh_flags = SHF_ALLOC | SHF_INFO_LINK | SHF_RELA_LIVEPATCH;
		nsh.sh_size = nd->d_size;
		gelf_update_shdr(nscn, &nsh);
		osh.sh_size = od->d_size;
		gelf_update_shdr(old, &osh);
		*moved += todo[t].nl;
	}
	shd->d_buf = shstrs;
	shd->d_size = shsize;
	elf_flagdata(shd, ELF_C_SET, ELF_F_DIRTY);
	if (elf_update(e, ELF_C_WRITE) < 0)
		err = xk_err(-EIO, "cannot rewrite %s: %s", path, elf_errmsg(-1));
out:
	if (e)
		elf_end(e);
	close(fd);
	for (size_t t = 0; t < nr; t++) {
		free(todo[t].keep);
		free(todo[t].klp);
	}
	free(todo);
	free(shstrs);
	return err;
}

static int kbuild(const struct xk_kernel *k, const char *dir, const char *log)
{
	char mvar[XK_PATH_MAX + 4];
	const char *argv[] = { "make", "-C", k->headers, mvar,
			       "KBUILD_MODPOST_WARN=1", "modules", NULL };
	struct xk_cmd cmd = { .argv = argv, .log_path = log,
			      .root = k->toolchain };

	xk_snprintf(mvar, sizeof(mvar), "M=%s", dir);
	return xk_run_step("make (livepatch module)", &cmd);
}

static int xk_klp_build_impl(const struct xk_kernel *k, struct xk_constant *c,
			     const struct xk_scope *t, long long value,
			     const char *dir, struct xk_klp_result *res)
{
	struct patch *p = calloc(1, sizeof(*p));
	struct klp_vmlinux vm;
	struct tree tree;
	char path[XK_PATH_MAX], log[XK_PATH_MAX], objs[16][128];
	int nr_objs = 0, err, moved = 0;
	double t0 = xk_now();

	memset(res, 0, sizeof(*res));
	if (!p)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	err = klp_vmlinux_load(k, &vm);
	if (err) {
		free(p);
		return err;
	}
	p->vm = &vm;
	p->res = res;
	err = tree_of(k, c, &tree);
	if (!err && tree.module)
		err = xk_err(-ENOTSUP, "%s: a constant of a module; the livepatch "
				       "is built for vmlinux only", c->name);
	err = err ?: strcmp(c->kind, "macro") ? 0 : locate_macro(k, &tree, c);
	/* a body that is an expression, (2*HZ): its template as xk_build
	 * derives it, from the unit of the first span's object */
	if (!err && !strcmp(c->kind, "macro") && !c->tmpl[0]) {
		char ccvar[96], cache_dir[XK_PATH_MAX], build_log[XK_PATH_MAX];

		err = !t->nr_spans ?
		      xk_err(-ENOENT, "%s: the table has no span", c->name) :
		      kernel_cc_var(k, ccvar, sizeof(ccvar)) ?:
		      xk_snprintf(cache_dir, sizeof(cache_dir), "%s/xk-build", k->dir) ?:
		      xk_mkdir_p(cache_dir) ?:
		      xk_snprintf(build_log, sizeof(build_log), "%s/build.log", cache_dir) ?:
		      evaluate_macro(&tree, c, t->spans[0].object, ccvar, cache_dir,
				     build_log, false);
	}
	err = err ?: xk_mkdir_p(dir) ?:
	      xk_snprintf(log, sizeof(log), "%s/build.log", dir) ?:
	      xk_snprintf(res->name, sizeof(res->name), "xk_klp_%s_%s%lld", c->name,
			  value < 0 ? "m" : "", llabs(value));
	for (char *q = res->name; *q; q++)
		*q = tolower((unsigned char)*q);
	/* the objects of the spans, each once; an object the catalog's
	 * objects= left out (a refused span of every use) is neither built
	 * nor patched: it keeps the compiled-in value in both arms */
	for (int i = 0; i < t->nr_spans && !err; i++) {
		bool seen = !strcmp(t->spans[i].func, XK_SPAN_EVERY_USE);

		for (int j = 0; j < nr_objs; j++)
			seen |= !strcmp(objs[j], t->spans[i].object);
		if (seen)
			continue;
		if (nr_objs == (int)ARRAY_SIZE(objs)) {
			err = xk_err(-E2BIG, "more than %zu objects", ARRAY_SIZE(objs));
			break;
		}
		err = xk_strlcpy(objs[nr_objs++], t->spans[i].object, sizeof(objs[0]));
	}
	for (int i = 0; i < nr_objs && !err; i++) {
		struct klp_pair pair;
		struct xk_obj b, n, orig;
		bool *changed = NULL;
		int nr_changed = 0;

		pr_info("compiling %s with %s = %lld and %lld\n", objs[i], c->name,
			c->def, value);
		err = build_pair(&tree, c, objs[i], value, dir, &pair);
		if (err)
			break;
		err = xk_obj_open(&b, pair.base);
		if (err)
			break;
		err = xk_obj_open(&n, pair.new);
		if (err) {
			xk_obj_close(&b);
			break;
		}
		err = xk_obj_open(&orig, pair.orig);
		if (err) {
			xk_obj_close(&n);
			xk_obj_close(&b);
			break;
		}
		p->orig = &orig;
		changed = calloc(n.nr_secs, sizeof(*changed));
		err = changed ? diff_objects(&b, &n, changed, &nr_changed) :
				xk_err(-ENOMEM, "%s: out of memory", __func__);
		/* the default itself: nothing changes, and the patch replaces
		 * the spans' functions as compiled (the mechanism's cost alone) */
		if (!err && value == c->def && nr_changed)
			err = xk_err(-EINVAL, "%s: code changes with the default value",
				     objs[i]);
		for (int j = 0; j < t->nr_spans && !err && value == c->def; j++) {
			const struct xk_sym *f = strcmp(t->spans[j].object, objs[i]) ? NULL :
						 xk_obj_find_func(&n, t->spans[j].func, NULL);

			if (f && f->sec)
				changed[f->sec->index] = true;
		}
		/* the changed functions must be the spans' functions */
		for (size_t s = 1; s < n.nr_secs && !err; s++) {
			const struct xk_sym *f = changed[s] ? only_symbol(&n, &n.secs[s]) : NULL;
			bool spanned = false;

			if (!f)
				continue;
			for (int j = 0; j < t->nr_spans; j++)
				spanned |= !strcmp(t->spans[j].object, objs[i]) &&
					   !strcmp(t->spans[j].func, f->name);
			if (!spanned)
				err = xk_err(-ENOTSUP, "%s: %s changes with the value but "
						       "holds no span of the table",
					     objs[i], f->name);
			else if (res->nr_funcs == XK_KLP_MAX_FUNCS)
				err = xk_err(-E2BIG, "more than %d functions",
					     XK_KLP_MAX_FUNCS);
			else
				err = old_position(&vm, &orig, f->name,
						   &res->sympos[res->nr_funcs]) ?:
				      xk_strlcpy(res->func[res->nr_funcs], f->name,
						 sizeof(res->func[0])) ?:
				      xk_strlcpy(res->object[res->nr_funcs++], objs[i],
						 sizeof(res->object[0]));
		}
		for (int j = 0; j < t->nr_spans && !err; j++) {
			bool found = false;

			for (int f = 0; f < res->nr_funcs; f++)
				found |= !strcmp(res->func[f], t->spans[j].func);
			if (!strcmp(t->spans[j].object, objs[i]) && !found)
				err = xk_err(-ENOTSUP, "%s: %s holds a span but its code "
						       "does not change with the value",
					     objs[i], t->spans[j].func);
		}
		err = err ?: add_object(p, &n, changed);
		p->orig = NULL;
		free(changed);
		xk_obj_close(&orig);
		xk_obj_close(&n);
		xk_obj_close(&b);
	}
	err = err ?: xk_snprintf(path, sizeof(path), "%s/xk_klp_diff.o", dir) ?:
	      write_patch(p, path) ?:
	      xk_snprintf(path, sizeof(path), "%s/xk_klp_main.c", dir) ?:
	      write_main(res, c, value, path) ?:
	      xk_snprintf(path, sizeof(path), "%s/Kbuild", dir);
	if (!err) {
		char kb[512];

		xk_snprintf(kb, sizeof(kb), "obj-m := %s.o\n%s-y := xk_klp_main.o "
			    "xk_klp_diff.o\n", res->name, res->name);
		err = xk_write_file(path, kb, strlen(kb), 0644) ?:
		      xk_snprintf(path, sizeof(path), "%s/.xk_klp_diff.o.cmd", dir);
		/* modpost reads each object's .cmd file (srcversion) */
		xk_snprintf(kb, sizeof(kb), "savedcmd_xk_klp_diff.o := klp-build\n");
		err = err ?: xk_write_file(path, kb, strlen(kb), 0644);
	}
	if (!err) {
		pr_info("linking %s with Kbuild\n", res->name);
		/* a module left by an earlier build was rewritten already:
		 * Kbuild links it again */
		err = xk_snprintf(res->ko, sizeof(res->ko), "%s/%s.ko", dir, res->name);
		if (!err && unlink(res->ko) && errno != ENOENT)
			err = xk_err(-errno, "cannot remove %s", res->ko);
		err = err ?: kbuild(k, dir, log) ?: klp_fixup_ko(res->ko, &moved);
	}
	if (!err && moved != res->relocs_klp)
		err = xk_err(-EINVAL, "%s: %d livepatch relocations in the module, "
				      "%d made", res->ko, moved, res->relocs_klp);
	for (size_t i = 0; i < p->nr_secs; i++) {
		free(p->secs[i].data);
		free(p->secs[i].relas);
	}
	free(p);
	klp_vmlinux_free(&vm);
	res->seconds = xk_now() - t0;
	return err;
}

int xk_klp_build(const struct xk_kernel *k, struct xk_constant *c,
		 const struct xk_scope *t, long long value, const char *dir,
		 struct xk_klp_result *res)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_klp_build_impl(k, c, t, value, dir, res));
}
