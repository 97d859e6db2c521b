// SPDX-License-Identifier: GPL-2.0
/*
 * libxk: the object model of a relocatable object (sections, symbols,
 * relocations), with twin pointers between a baseline object and a variant
 * built with another value of the constant.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "object.h"

static int load_sections(struct xk_obj *o)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrnum(o->elf, &o->nr_secs) || elf_getshdrstrndx(o->elf, &shstrndx))
		return -EINVAL;
	o->secs = calloc(o->nr_secs, sizeof(*o->secs));
	if (!o->secs)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	for (size_t i = 0; i < o->nr_secs; i++) {
		o->secs[i].name = "";
		o->secs[i].obj = o;
	}
	while ((scn = elf_nextscn(o->elf, scn))) {
		size_t i = elf_ndxscn(scn);
		struct xk_sec *s = &o->secs[i];
		Elf_Data *d;

		if (!gelf_getshdr(scn, &s->sh))
			return -EINVAL;
		s->index = i;
		s->name = elf_strptr(o->elf, shstrndx, s->sh.sh_name) ?: "";
		if (s->sh.sh_type != SHT_NOBITS && (d = elf_getdata(scn, NULL)))
			s->data = d->d_buf;
	}
	return 0;
}

static int load_symbols(struct xk_obj *o)
{
	for (size_t i = 0; i < o->nr_secs; i++) {
		struct xk_sec *s = &o->secs[i];
		Elf_Data *d;

		if (s->sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(elf_getscn(o->elf, i), NULL);
		if (!d)
			return -EINVAL;
		o->nr_syms = s->sh.sh_size / s->sh.sh_entsize;
		o->syms = calloc(o->nr_syms, sizeof(*o->syms));
		if (!o->syms)
			return xk_err(-ENOMEM, "%s: out of memory", __func__);
		for (size_t j = 0; j < o->nr_syms; j++) {
			struct xk_sym *y = &o->syms[j];

			gelf_getsym(d, j, &y->sym);
			y->index = j;
			y->name = elf_strptr(o->elf, s->sh.sh_link, y->sym.st_name) ?: "";
			if (y->sym.st_shndx > 0 && y->sym.st_shndx < o->nr_secs)
				y->sec = &o->secs[y->sym.st_shndx];
			y->is_func = GELF_ST_TYPE(y->sym.st_info) == STT_FUNC &&
				     y->sym.st_size && y->sec && y->sec->data;
		}
		return 0;
	}
	return -ENOENT;
}

static int load_relocations(struct xk_obj *o)
{
	for (size_t i = 0; i < o->nr_secs; i++) {
		struct xk_sec *rs = &o->secs[i], *target;
		Elf_Data *d;
		size_t n;

		if (rs->sh.sh_type != SHT_RELA || rs->sh.sh_info >= o->nr_secs)
			continue;
		target = &o->secs[rs->sh.sh_info];
		d = elf_getdata(elf_getscn(o->elf, i), NULL);
		if (!d)
			return -EINVAL;
		n = rs->sh.sh_size / rs->sh.sh_entsize;
		target->relas = calloc(n, sizeof(*target->relas));
		if (!target->relas)
			return xk_err(-ENOMEM, "%s: out of memory", __func__);
		for (size_t j = 0; j < n; j++) {
			GElf_Rela r;
			size_t symi;

			gelf_getrela(d, j, &r);
			symi = GELF_R_SYM(r.r_info);
			target->relas[j] = (struct xk_rela){
				.offset = r.r_offset,
				.type = GELF_R_TYPE(r.r_info),
				.addend = r.r_addend,
				.sym = symi < o->nr_syms ? &o->syms[symi] : NULL,
			};
		}
		target->nr_relas = n;
		target->relas_sorted = true;
		for (size_t j = 1; j < n; j++)
			if (target->relas[j - 1].offset > target->relas[j].offset)
				target->relas_sorted = false;
	}
	return 0;
}

/*
 * Jump-label sites, from __jump_table: objtool makes them NOPs at link time.
 * Entries are 16 bytes: the site (pc32), its target (pc32), the key (pc64);
 * a pc32 field's relocation names the place itself (symbol + addend).
 * Another layout (an older kernel's absolute entries) is refused: sites it
 * would miss would be taken for plain NOPs.
 */
static int load_jump_labels(struct xk_obj *o)
{
	for (size_t i = 0; i < o->nr_secs; i++) {
		struct xk_sec *s = &o->secs[i];
		size_t nr = s->sh.sh_size / 16, first = o->nr_jump_labels;
		struct xk_jump_label *jl;

		if (strcmp(s->name, "__jump_table") || !s->sh.sh_size)
			continue;
		if (s->sh.sh_size % 16)
			return xk_err(-EINVAL, "%s: __jump_table of %llu bytes: not "
				      "16-byte entries", o->path,
				      (unsigned long long)s->sh.sh_size);
		jl = realloc(o->jump_labels, (first + nr) * sizeof(*jl));
		if (!jl)
			return xk_err(-ENOMEM, "%s: out of memory", o->path);
		o->jump_labels = jl;
		for (size_t e = 0; e < nr; e++) {
			jl[first + e].sec = SIZE_MAX;
			jl[first + e].target_sec = SIZE_MAX;
		}
		for (size_t r = 0; r < s->nr_relas; r++) {
			const struct xk_rela *rel = &s->relas[r];
			struct xk_jump_label *e;
			uint64_t at;

			if (rel->offset % 16 < 8 && rel->type != R_X86_64_PC32)
				return xk_err(-EINVAL, "%s: __jump_table+0x%llx: "
					      "relocation type %u, not PC32", o->path,
					      (unsigned long long)rel->offset,
					      rel->type);
			if (rel->offset / 16 >= nr || !rel->sym || !rel->sym->sec)
				continue;
			e = &jl[first + rel->offset / 16];
			at = rel->sym->sym.st_value + rel->addend;
			if (rel->offset % 16 == 0) {
				e->sec = rel->sym->sec->index;
				e->off = at;
			} else if (rel->offset % 16 == 4) {
				e->target_sec = rel->sym->sec->index;
				e->target = at;
			}
		}
		/* keep the entries whose site was found */
		o->nr_jump_labels = first;
		for (size_t e = 0; e < nr; e++)
			if (jl[first + e].sec != SIZE_MAX)
				jl[o->nr_jump_labels++] = jl[first + e];
	}
	return 0;
}

/*
 * Alternatives' sites, from .altinstructions: the kernel replaces their
 * bytes at boot (vmlinux) or load (a module) when the CPU has a feature,
 * so the bytes are not known offline (Linux 6.1's TASK_SIZE_MAX is a movabs
 * whose immediate changes with 5-level paging). An entry starts with the
 * site and its replacement (two pc32 fields, each relocated) and ends with
 * the site's and the replacement's lengths (a byte each); its size varies
 * by kernel (12 bytes in 6.1, 14 in 6.12: the feature field grew), so it is
 * found from the relocations: two per entry. Another layout (an older
 * kernel's 13 bytes, with a padding length) is refused. A site may have
 * several entries (ALTERNATIVE_2: one per replacement, nested in 6.12).
 */
static int load_alternatives(struct xk_obj *o)
{
	for (size_t i = 0; i < o->nr_secs; i++) {
		struct xk_sec *s = &o->secs[i];
		size_t nr, size, first = o->nr_alt_sites;
		struct xk_alt_site *a;

		if (strcmp(s->name, ".altinstructions") || !s->sh.sh_size)
			continue;
		nr = s->nr_relas / 2;
		size = nr ? s->sh.sh_size / nr : 0;
		if (!s->data || s->nr_relas % 2 || (size != 12 && size != 14) ||
		    size * nr != s->sh.sh_size)
			return xk_err(-EINVAL, "%s: .altinstructions of %llu bytes "
				      "with %zu relocations: not 12- or 14-byte "
				      "entries of two relocated fields", o->path,
				      (unsigned long long)s->sh.sh_size, s->nr_relas);
		a = realloc(o->alt_sites, (first + nr) * sizeof(*a));
		if (!a)
			return xk_err(-ENOMEM, "%s: out of memory", o->path);
		o->alt_sites = a;
		for (size_t e = 0; e < nr; e++)
			a[first + e] = (struct xk_alt_site) {
				.sec = SIZE_MAX, .repl_sec = SIZE_MAX,
				.len = s->data[e * size + size - 2],
				.repl_len = s->data[e * size + size - 1],
			};
		for (size_t r = 0; r < s->nr_relas; r++) {
			const struct xk_rela *rel = &s->relas[r];
			struct xk_alt_site *e;

			if (rel->offset / size >= nr ||
			    (rel->offset % size != 0 && rel->offset % size != 4) ||
			    rel->type != R_X86_64_PC32)
				return xk_err(-EINVAL, "%s: .altinstructions+0x%llx: "
					      "relocation type %u in an entry of %zu "
					      "bytes: another layout", o->path,
					      (unsigned long long)rel->offset,
					      rel->type, size);
			if (!rel->sym || !rel->sym->sec)
				continue;
			e = &a[first + rel->offset / size];
			if (rel->offset % size == 0) {
				e->sec = rel->sym->sec->index;
				e->off = rel->sym->sym.st_value + rel->addend;
			} else {
				e->repl_sec = rel->sym->sec->index;
				e->repl_off = rel->sym->sym.st_value + rel->addend;
			}
		}
		/* keep the entries whose site was found */
		o->nr_alt_sites = first;
		for (size_t e = 0; e < nr; e++)
			if (a[first + e].sec != SIZE_MAX)
				a[o->nr_alt_sites++] = a[first + e];
	}
	return 0;
}

unsigned int xk_alternative_in(const struct xk_obj *o, const struct xk_sym *f,
			       uint64_t start, uint64_t end, uint64_t *site_off)
{
	uint64_t lo = f->sym.st_value + start, hi = f->sym.st_value + end;

	for (size_t i = 0; o && i < o->nr_alt_sites; i++) {
		const struct xk_alt_site *a = &o->alt_sites[i];

		if (a->sec == f->sec->index && a->off < hi && lo < a->off + a->len) {
			if (site_off)
				*site_off = a->off - f->sym.st_value;
			return a->len;
		}
	}
	return 0;
}

const struct xk_alt_site *xk_alternative_site(const struct xk_sym *f, uint64_t off,
					      const struct xk_alt_site *after)
{
	const struct xk_obj *o = f->sec->obj;
	uint64_t abs = f->sym.st_value + off;
	size_t i = after && o ? (size_t)(after - o->alt_sites) + 1 : 0;

	for (; o && i < o->nr_alt_sites; i++)
		if (o->alt_sites[i].sec == f->sec->index && o->alt_sites[i].off == abs)
			return &o->alt_sites[i];
	return NULL;
}

unsigned int xk_alternative_at(const struct xk_obj *o, const struct xk_sym *f,
			       uint64_t off, uint64_t *site_off)
{
	return xk_alternative_in(o, f, off, off + 1, site_off);
}

void xk_func_fixed_bytes(const struct xk_obj *o, const struct xk_sym *f,
			 uint64_t start, uint32_t len, uint8_t *mask)
{
	for (uint32_t b = 0; b < len; b++)
		mask[b] = xk_func_reloc_at(f, start + b, 1) ||
			  xk_jump_label_at(o, f, start + b) ||
			  xk_alternative_at(o, f, start + b, NULL) ? 0 : 0xff;
}

int64_t xk_rela_in_func(const struct xk_rela *r, const struct xk_sym *f)
{
	int64_t at;

	if (!r->sym || r->sym->sec != f->sec)
		return -1;
	at = (int64_t)(r->sym->sym.st_value - f->sym.st_value) + r->addend;
	return at >= 0 && at < (int64_t)f->sym.st_size ? at : -1;
}

bool xk_func_has_extable(const struct xk_obj *o, const struct xk_sym *f)
{
	for (size_t i = 0; i < o->nr_secs; i++) {
		const struct xk_sec *s = &o->secs[i];

		if (strcmp(s->name, "__ex_table"))
			continue;
		/* entries are 12 bytes: insn (pc32), fixup (pc32), data */
		for (size_t r = 0; r < s->nr_relas; r++)
			if (!(s->relas[r].offset % 12) &&
			    xk_rela_in_func(&s->relas[r], f) >= 0)
				return true;
	}
	return false;
}

bool xk_jump_label_at(const struct xk_obj *o, const struct xk_sym *f,
		      uint64_t off)
{
	uint64_t abs = f->sym.st_value + off;
	const uint8_t *code = f->sec->data;

	for (size_t i = 0; i < o->nr_jump_labels; i++) {
		uint64_t at = o->jump_labels[i].off;
		unsigned int len;

		if (o->jump_labels[i].sec != f->sec->index || abs < at)
			continue;
		/* a short jump or its 2-byte NOP (66 90), else 5 bytes */
		len = code && at + 1 < f->sec->sh.sh_size &&
		      (code[at] == 0xeb ||
		       (code[at] == 0x66 && code[at + 1] == 0x90)) ? 2 : 5;
		if (abs < at + len)
			return true;
	}
	return false;
}

const struct xk_jump_label *xk_jump_label_site(const struct xk_sym *f,
					       uint64_t off)
{
	const struct xk_obj *o = f->sec->obj;
	uint64_t abs = f->sym.st_value + off;

	for (size_t i = 0; o && i < o->nr_jump_labels; i++)
		if (o->jump_labels[i].sec == f->sec->index &&
		    o->jump_labels[i].off == abs)
			return &o->jump_labels[i];
	return NULL;
}

int xk_obj_open(struct xk_obj *o, const char *path)
{
	int err;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	err = xk_strlcpy(o->path, path, sizeof(o->path));
	if (err)
		return err;
	elf_version(EV_CURRENT);
	o->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (o->fd < 0)
		return xk_err(-errno, "cannot open %s", path);
	o->elf = elf_begin(o->fd, ELF_C_READ, NULL);
	if (!o->elf || elf_kind(o->elf) != ELF_K_ELF) {
		xk_obj_close(o);
		return xk_err(-EINVAL, "%s is not an ELF object", path);
	}
	err = load_sections(o) ?: load_symbols(o) ?: load_relocations(o);
	if (err) {
		xk_obj_close(o);
		return xk_err(err, "%s: malformed ELF object", path);
	}
	err = load_jump_labels(o) ?: load_alternatives(o);
	if (err)
		xk_obj_close(o);
	return err;
}

void xk_obj_close(struct xk_obj *o)
{
	for (size_t i = 0; o->secs && i < o->nr_secs; i++)
		free(o->secs[i].relas);
	free(o->secs);
	free(o->syms);
	free(o->jump_labels);
	free(o->alt_sites);
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	memset(o, 0, sizeof(*o));
	o->fd = -1;
}

struct xk_sym *xk_obj_find_func(struct xk_obj *o, const char *name,
				const char *secname)
{
	for (size_t i = 0; i < o->nr_syms; i++) {
		struct xk_sym *y = &o->syms[i];

		if (y->is_func && !strcmp(y->name, name) &&
		    (!secname || !strcmp(y->sec->name, secname)))
			return y;
	}
	return NULL;
}

/* "foo.constprop.3" -> length of "foo.constprop" (clone numbers vary). */
static size_t stem_len(const char *name)
{
	size_t n = strlen(name);

	while (n && name[n - 1] >= '0' && name[n - 1] <= '9')
		n--;
	if (n && n < strlen(name) && name[n - 1] == '.')
		return n - 1;
	return strlen(name);
}

void xk_obj_correlate(struct xk_obj *a, struct xk_obj *b)
{
	/* first by exact name and section, then by name without clone number */
	for (size_t i = 0; i < a->nr_syms; i++) {
		struct xk_sym *x = &a->syms[i];

		if (x->is_func)
			x->twin = xk_obj_find_func(b, x->name, x->sec->name);
		if (x->twin)
			x->twin->twin = x;
	}
	for (size_t i = 0; i < a->nr_syms; i++) {
		struct xk_sym *x = &a->syms[i];
		size_t n = stem_len(x->name);

		if (!x->is_func || x->twin || n == strlen(x->name))
			continue;
		for (size_t j = 0; j < b->nr_syms; j++) {
			struct xk_sym *y = &b->syms[j];

			if (y->is_func && !y->twin && stem_len(y->name) == n &&
			    !strncmp(x->name, y->name, n)) {
				x->twin = y;
				y->twin = x;
				break;
			}
		}
	}
}

const struct xk_rela *xk_insn_rela(const struct xk_sym *f,
				   const struct xk_insn *in)
{
	uint64_t start = f->sym.st_value + in->off;

	return xk_rela_in(f->sec, start, start + in->len);
}

const uint8_t *xk_func_bytes(const struct xk_sym *f)
{
	return f->sec->data + f->sym.st_value;
}

const struct xk_rela *xk_rela_in(const struct xk_sec *sec, uint64_t start,
				 uint64_t end)
{
	for (size_t i = 0; i < sec->nr_relas; i++)
		if (sec->relas[i].offset >= start && sec->relas[i].offset < end)
			return &sec->relas[i];
	return NULL;
}

int64_t xk_insn_rela_place(const struct xk_sym *f, const struct xk_insn *in,
			   const struct xk_rela *r)
{
	int64_t place = (int64_t)r->sym->sym.st_value + r->addend;

	if (r->type == R_X86_64_PC32 || r->type == R_X86_64_PLT32)
		place += (int64_t)(f->sym.st_value + in->off + in->len - r->offset);
	return place;
}

bool xk_func_reloc_at(const struct xk_sym *f, uint64_t off, unsigned int len)
{
	uint64_t start = f->sym.st_value + off, end = start + len;

	for (size_t i = 0; i < f->sec->nr_relas; i++) {
		const struct xk_rela *r = &f->sec->relas[i];
		unsigned int size = r->type == R_X86_64_64 ? 8 : 4;

		if (r->offset < end && r->offset + size > start)
			return true;
	}
	return false;
}
