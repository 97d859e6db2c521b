// SPDX-License-Identifier: GPL-2.0
/*
 * libxk core: the kernel's own listings, parsed once: kallsyms (the live
 * /proc/kallsyms, or the copy recorded at fetch time) and the kprobes list
 * of debugfs. Lines that do not parse are skipped; a listing that yields
 * nothing useful is an error, never an empty success.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "internal.h"

static int cmp_ksym(const void *a, const void *b)
{
	const struct xk_ksym *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	/* equal names keep the listing's order (addresses ascend in it) */
	return c ?: (x->addr > y->addr) - (x->addr < y->addr);
}

/* Splits "addr type name [module]" in place; false when it is not that. */
static bool parse_ksym_line(char *line, struct xk_ksym *s)
{
	char *name, *mod;

	s->addr = strtoull(line, &name, 16);
	if (name == line || name[0] != ' ' || !name[1] || name[2] != ' ')
		return false;
	s->type = name[1];
	name += 3;
	mod = name + strcspn(name, " \t");
	s->module = NULL;
	if (*mod) {
		*mod++ = '\0';
		mod += strspn(mod, " \t");
		if (*mod == '[') {
			mod++;
			mod[strcspn(mod, "]")] = '\0';
			s->module = mod;
		}
	}
	s->name = name;
	return *name != '\0';
}

int xk_kallsyms_read(const char *path, bool text_only, struct xk_kallsyms *ks)
{
	size_t cap = 0;
	int err;

	memset(ks, 0, sizeof(*ks));
	err = xk_read_file(path, &ks->text, NULL);
	if (err)
		return xk_err(err, "cannot read %s: %s", path, strerror(-err));
	for (char *line = ks->text; *line;) {
		char *end = strchrnul(line, '\n');
		bool last = !*end;
		struct xk_ksym s;

		*end = '\0';
		if (parse_ksym_line(line, &s)) {
			if (!strcmp(s.name, "_text") && !s.module)
				ks->text_addr = s.addr;
			if (!text_only || s.type == 't' || s.type == 'T') {
				if (ks->nr == cap) {
					struct xk_ksym *bigger;

					cap = cap ? cap * 2 : 65536;
					bigger = realloc(ks->syms, cap * sizeof(*bigger));
					if (!bigger) {
						xk_kallsyms_free(ks);
						return xk_err(-ENOMEM, "%s: out of memory",
							      path);
					}
					ks->syms = bigger;
				}
				ks->syms[ks->nr++] = s;
			}
		}
		line = last ? end : end + 1;
	}
	if (!ks->nr) {
		xk_kallsyms_free(ks);
		return xk_err(-EINVAL, "%s lists no symbols (not readable as root?)",
			      path);
	}
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), cmp_ksym);
	return 0;
}

size_t xk_kallsyms_lookup(const struct xk_kallsyms *ks, const char *name,
			  const struct xk_ksym **first)
{
	size_t lo = 0, hi = ks->nr, n = 0;

	/* the first entry not below name */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ks->syms[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo < ks->nr ? &ks->syms[lo] : NULL;
	while (lo + n < ks->nr && !strcmp(ks->syms[lo + n].name, name))
		n++;
	return n;
}

void xk_kallsyms_free(struct xk_kallsyms *ks)
{
	free(ks->syms);
	free(ks->text);
	memset(ks, 0, sizeof(*ks));
}

/* "ffffffff81234567  k  func+0x12    [DISABLED][OPTIMIZED]" */
static bool parse_kprobe_line(const char *line, struct xk_kprobe *p)
{
	char type[8], where[XK_KPROBE_SYM_MAX + 32];
	const char *plus;

	memset(p, 0, sizeof(*p));
	if (sscanf(line, "%llx %7s %159s", &p->addr, type, where) != 3)
		return false;
	p->type = type[0];
	plus = strchr(where, '+');
	if (plus)
		p->offset = strtoull(plus + 1, NULL, 0);
	if (xk_snprintf(p->sym, sizeof(p->sym), "%.*s",
			(int)(plus ? plus - where : (long)strlen(where)), where))
		return false;
	p->disabled = strstr(line, "[DISABLED]") != NULL;
	p->optimized = strstr(line, "[OPTIMIZED]") != NULL;
	p->gone = strstr(line, "[GONE]") != NULL;
	return true;
}

int xk_kprobes_list(struct xk_kprobe **list, size_t *nr)
{
	char *text;
	size_t cap = 0;
	int err = xk_read_file(XK_KPROBES_LIST, &text, NULL);

	*list = NULL;
	*nr = 0;
	if (err)
		return xk_err(err, "cannot read %s (debugfs not mounted?): %s",
			      XK_KPROBES_LIST, strerror(-err));
	for (char *line = text; *line;) {
		char *end = strchrnul(line, '\n');
		bool last = !*end;
		struct xk_kprobe p;

		*end = '\0';
		if (parse_kprobe_line(line, &p)) {
			if (*nr == cap) {
				struct xk_kprobe *bigger;

				cap = cap ? cap * 2 : 64;
				bigger = realloc(*list, cap * sizeof(*bigger));
				if (!bigger) {
					free(text);
					free(*list);
					*list = NULL;
					*nr = 0;
					return xk_err(-ENOMEM, "%s: out of memory",
						      XK_KPROBES_LIST);
				}
				*list = bigger;
			}
			(*list)[(*nr)++] = p;
		}
		line = last ? end : end + 1;
	}
	free(text);
	return 0;
}
