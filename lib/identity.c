// SPDX-License-Identifier: GPL-2.0
/*
 * libxk: build identity. The baseline objects xk build makes from the
 * source package must be, function by function, the code of the shipped
 * kernel: otherwise every offset and byte of a scope table would be wrong.
 *
 * The shipped code is the vmlinux inside the image's vmlinuz (extracted at
 * fetch time); where each function is comes from /proc/kallsyms of the
 * target booted once in the guest (the image ships no System.map), shifted
 * by _text, as KASLR moves the whole text. Compared bytes leave out what the
 * link and boot legitimately change: relocated fields, the opcode of a
 * relocated call or jump (__fentry__ calls become NOPs), and jump-label
 * sites (objtool turns their jumps into NOPs at link time).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "gen.h"

struct ksym {
	unsigned long long addr;
	char *name;
};

struct symtab {
	struct ksym *syms;
	size_t nr;
	char *text;
	unsigned long long text_rt;	/* _text at run time */
};

static int cmp_ksym(const void *a, const void *b)
{
	return strcmp(((const struct ksym *)a)->name, ((const struct ksym *)b)->name);
}

static int load_kallsyms(const char *path, struct symtab *t)
{
	size_t cap = 0;
	int err = xk_read_file(path, &t->text, NULL);

	if (err)
		return err;
	t->nr = 0;
	t->syms = NULL;
	for (char *line = t->text; *line;) {
		char *end = strchrnul(line, '\n'), *name, type;
		unsigned long long addr;
		bool last = !*end;

		*end = '\0';
		addr = strtoull(line, &name, 16);
		if (name[0] == ' ' && name[1] && name[2] == ' ') {
			type = name[1];
			name += 3;
			if (name[strcspn(name, " \t")])
				name[strcspn(name, " \t")] = '\0';	/* [module] */
			if (!strcmp(name, "_text"))
				t->text_rt = addr;
			if (type == 't' || type == 'T') {
				if (t->nr == cap) {
					struct ksym *bigger;

					cap = cap ? cap * 2 : 65536;
					bigger = realloc(t->syms, cap * sizeof(*bigger));
					if (!bigger)
						return -ENOMEM;
					t->syms = bigger;
				}
				t->syms[t->nr++] = (struct ksym){ addr, name };
			}
		}
		line = last ? end : end + 1;
	}
	if (!t->text_rt || !t->nr)
		return -EINVAL;
	qsort(t->syms, t->nr, sizeof(*t->syms), cmp_ksym);
	return 0;
}

static void free_symtab(struct symtab *t);

/*
 * How many functions of each span's name the target kernel has (from the
 * kallsyms recorded at fetch). Leaves 0 (unknown) when there is no record
 * or the name is not there (a module's function).
 */
void xk_count_copies(const struct xk_kernel *k, struct xk_scope *t)
{
	char path[XK_PATH_MAX + 16];
	struct symtab st = { 0 };

	if (xk_snprintf(path, sizeof(path), "%s/kallsyms", k->dir) ||
	    load_kallsyms(path, &st)) {
		free_symtab(&st);
		return;
	}
	for (int i = 0; i < t->nr_spans; i++) {
		struct ksym key = { .name = t->spans[i].func };
		const struct ksym *hit = bsearch(&key, st.syms, st.nr, sizeof(*st.syms),
						 cmp_ksym);
		size_t lo, hi;

		if (!hit)
			continue;
		lo = hi = hit - st.syms;
		while (lo > 0 && !strcmp(st.syms[lo - 1].name, key.name))
			lo--;
		while (hi + 1 < st.nr && !strcmp(st.syms[hi + 1].name, key.name))
			hi++;
		t->spans[i].copies = (int)(hi - lo + 1);
	}
	free_symtab(&st);
}

static void free_symtab(struct symtab *t)
{
	free(t->syms);
	free(t->text);
}

/* The file offset of a link-time address in vmlinux, from its headers. */
static int vmlinux_offset(Elf *e, unsigned long long vaddr, size_t len,
			  off_t *off)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr + len <= ph.p_vaddr + ph.p_filesz) {
			*off = ph.p_offset + (vaddr - ph.p_vaddr);
			return 0;
		}
	}
	return -ERANGE;
}

/* Which bytes of a function may differ from the shipped kernel. */
static void build_mask(const struct xk_sym *f, const struct gen_input *jl,
		       uint8_t *mask)
{
	uint64_t start = f->sym.st_value, size = f->sym.st_size;
	const uint8_t *code = xk_func_bytes(f);

	memset(mask, 0xff, size);
	for (size_t i = 0; i < f->sec->nr_relas; i++) {
		const struct xk_rela *r = &f->sec->relas[i];
		unsigned int w = r->type == R_X86_64_64 ? 8 : 4;

		if (r->offset < start || r->offset >= start + size)
			continue;
		for (unsigned int b = 0; b < w && r->offset - start + b < size; b++)
			mask[r->offset - start + b] = 0;
		/* call/jmp rel32: the opcode may become a NOP at link time */
		if (r->offset > start && (code[r->offset - start - 1] == 0xe8 ||
					  code[r->offset - start - 1] == 0xe9))
			mask[r->offset - start - 1] = 0;
	}
	for (size_t i = 0; i < jl->nr_jump_labels; i++) {
		uint64_t o = jl->jump_labels[i].off;

		if (jl->jump_labels[i].sec != f->sec->index || o < start ||
		    o >= start + size)
			continue;
		for (int b = 0; b < 5 && o - start + b < size; b++)
			mask[o - start + b] = 0;
	}
}

/*
 * Compares every function of a baseline object with the shipped kernel.
 * Functions absent from kallsyms (inlined everywhere, or in a module) are
 * not compared. On a mismatch, -ESTALE with the functions named.
 */
int xk_identity_check(const struct xk_kernel *k, const char *obj_path,
		      const char *obj_name, int *checked)
{
	char syms_path[XK_PATH_MAX], vml_path[XK_PATH_MAX], bad[1024] = "";
	struct gen_input jl = { 0 };
	struct symtab t = { 0 };
	struct xk_obj o;
	Elf *e = NULL;
	int fd = -1, err, nr_bad = 0;

	*checked = 0;
	err = xk_snprintf(syms_path, sizeof(syms_path), "%s/kallsyms", k->dir) ?:
	      xk_snprintf(vml_path, sizeof(vml_path), "%s/vmlinux", k->dir);
	if (err)
		return err;
	if (load_kallsyms(syms_path, &t)) {
		free_symtab(&t);
		return xk_err(-ENOENT, "no symbols of the shipped kernel (%s): run "
				       "'xk kernel fetch' to record them", syms_path);
	}
	elf_version(EV_CURRENT);
	fd = open(vml_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !(e = elf_begin(fd, ELF_C_READ, NULL))) {
		err = xk_err(-ENOENT, "no shipped vmlinux at %s: run 'xk kernel "
				      "fetch'", vml_path);
		goto out_syms;
	}
	err = xk_obj_open(&o, obj_path);
	if (err)
		goto out_elf;
	err = gen_collect_jump_labels(&o, &jl);
	for (size_t i = 0; i < o.nr_syms && !err; i++) {
		const struct xk_sym *f = &o.syms[i];
		struct ksym key = { 0, f->name }, *hit;
		uint8_t *live, *mask;
		bool same = false, tried = false;

		/* a __weak definition may be replaced by another at link time */
		if (!f->is_func || !strncmp(f->name, "__pfx_", 6) ||
		    !(f->sec->sh.sh_flags & SHF_EXECINSTR) ||
		    GELF_ST_BIND(f->sym.st_info) == STB_WEAK)
			continue;
		hit = bsearch(&key, t.syms, t.nr, sizeof(*t.syms), cmp_ksym);
		if (!hit)
			continue;
		while (hit > t.syms && !strcmp(hit[-1].name, f->name))
			hit--;
		live = malloc(f->sym.st_size);
		mask = malloc(f->sym.st_size);
		if (!live || !mask) {
			free(live);
			free(mask);
			err = -ENOMEM;
			break;
		}
		build_mask(f, &jl, mask);
		/* static functions may share a name: any copy may be ours */
		for (; hit < t.syms + t.nr && !strcmp(hit->name, f->name) && !same;
		     hit++) {
			unsigned long long link = hit->addr - t.text_rt +
						  0xffffffff81000000ULL;
			off_t off;

			if (vmlinux_offset(e, link, f->sym.st_size, &off) ||
			    pread(fd, live, f->sym.st_size, off) !=
				    (ssize_t)f->sym.st_size)
				continue;
			tried = true;
			same = true;
			for (uint64_t b = 0; b < f->sym.st_size && same; b++)
				if ((live[b] ^ xk_func_bytes(f)[b]) & mask[b])
					same = false;
		}
		free(live);
		free(mask);
		if (!tried)
			continue;
		(*checked)++;
		if (!same && nr_bad++ < 12)
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), " %s",
				 f->name);
	}
	free(jl.jump_labels);
	xk_obj_close(&o);
	if (!err && nr_bad)
		err = xk_err(-ESTALE, "%s built from the source differs from the "
				      "shipped kernel in %d of %d functions:%s%s",
			     obj_name, nr_bad, *checked, bad,
			     nr_bad > 12 ? " ..." : "");
out_elf:
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
out_syms:
	free_symtab(&t);
	return err;
}
