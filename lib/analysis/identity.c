// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: build identity. The baseline objects xk build makes from the
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

#include "identity.h"
#include "object.h"

/*
 * How many functions of each span's name the target kernel has (from the
 * kallsyms recorded at fetch). Leaves 0 (unknown) when there is no record
 * or the name is not there (a module's function).
 */
int xk_count_copies(const struct xk_kernel *k, struct xk_scope *t)
{
	char path[XK_PATH_MAX + 16];
	struct xk_kallsyms ks;
	int err;

	err = xk_snprintf(path, sizeof(path), "%s/kallsyms", k->dir);
	if (err)
		return xk_err(err, "%s/kallsyms: path too long", k->dir);
	if (!xk_exists(path))
		return 0;	/* recorded at fetch; without it copies stay unknown */
	err = xk_kallsyms_read(path, true, &ks);
	if (err)
		return err;
	for (int i = 0; i < t->nr_spans; i++) {
		const struct xk_ksym *first;

		/* module:function names one function */
		if (strchr(t->spans[i].func, ':')) {
			t->spans[i].copies = 1;
			continue;
		}
		t->spans[i].copies = (int)xk_kallsyms_lookup(&ks, t->spans[i].func,
							    &first);
	}
	xk_kallsyms_free(&ks);
	return 0;
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
static void build_mask(const struct xk_obj *o, const struct xk_sym *f,
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
	for (uint64_t b = 0; b < size; b++)
		if (xk_jump_label_at(o, f, b))
			mask[b] = 0;
}

/* A function the identity check compares: code, not objtool's padding,
 * not __weak (another definition may replace it at link time). */
static bool comparable(const struct xk_sym *f)
{
	return f->is_func && strncmp(f->name, "__pfx_", 6) &&
	       (f->sec->sh.sh_flags & SHF_EXECINSTR) &&
	       GELF_ST_BIND(f->sym.st_info) != STB_WEAK;
}

/*
 * Whether f's bytes equal shipped ones, under f's mask and the shipped
 * code's own mask (NULL: none). 1 same, 0 not, -ENOMEM.
 */
static int same_code(const struct xk_obj *o, const struct xk_sym *f,
		     const uint8_t *shipped, const uint8_t *shipped_mask)
{
	uint8_t *mask = malloc(f->sym.st_size ?: 1);
	int same = 1;

	if (!mask)
		return xk_err(-ENOMEM, "%s: out of memory", o->path);
	build_mask(o, f, mask);
	for (uint64_t b = 0; b < f->sym.st_size && same; b++)
		if ((xk_func_bytes(f)[b] ^ shipped[b]) & mask[b] &
		    (shipped_mask ? shipped_mask[b] : 0xff))
			same = 0;
	free(mask);
	return same;
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
	struct xk_kallsyms t;
	struct xk_obj o;
	Elf *e = NULL;
	int fd = -1, err, nr_bad = 0;

	*checked = 0;
	err = xk_snprintf(syms_path, sizeof(syms_path), "%s/kallsyms", k->dir) ?:
	      xk_snprintf(vml_path, sizeof(vml_path), "%s/vmlinux", k->dir);
	if (err)
		return err;
	if (!xk_exists(syms_path))
		return xk_err(-ENOENT, "no symbols of the shipped kernel (%s): run "
				       "'xk kernel fetch' to record them", syms_path);
	err = xk_kallsyms_read(syms_path, true, &t);
	if (err)
		return err;
	if (!t.text_addr) {
		err = xk_err(-EINVAL, "%s has no _text: not a kallsyms listing",
			     syms_path);
		goto out_syms;
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
	for (size_t i = 0; i < o.nr_syms && !err; i++) {
		const struct xk_sym *f = &o.syms[i];
		const struct xk_ksym *hit;
		size_t nr_hits;
		uint8_t *live;
		int same = 0;
		bool tried = false;

		if (!comparable(f))
			continue;
		nr_hits = xk_kallsyms_lookup(&t, f->name, &hit);
		if (!nr_hits)
			continue;
		live = malloc(f->sym.st_size ?: 1);
		if (!live) {
			err = xk_err(-ENOMEM, "%s: out of memory", obj_name);
			break;
		}
		/* static functions may share a name: any copy may be ours */
		for (; nr_hits && same == 0; nr_hits--, hit++) {
			unsigned long long link = hit->addr - t.text_addr +
						  0xffffffff81000000ULL;
			off_t off;

			if (vmlinux_offset(e, link, f->sym.st_size, &off) ||
			    pread(fd, live, f->sym.st_size, off) !=
				    (ssize_t)f->sym.st_size)
				continue;
			tried = true;
			same = same_code(&o, f, live, NULL);
		}
		free(live);
		if (same < 0) {
			err = same;
			break;
		}
		if (!tried)
			continue;
		(*checked)++;
		if (!same && nr_bad++ < 12)
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), " %s",
				 f->name);
	}
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
	xk_kallsyms_free(&t);
	return err;
}

int xk_identity_check_module(const struct xk_kernel *k, const char *obj_path,
			     const char *obj_name, const char *ko, int *checked)
{
	char shipped[XK_PATH_MAX], bad[1024] = "";
	struct xk_obj o, m;
	int err, nr_bad = 0;

	*checked = 0;
	err = xk_shipped_module(k, ko, shipped, sizeof(shipped));
	if (err)
		return err;
	err = xk_obj_open(&o, obj_path);
	if (err)
		return err;
	err = xk_obj_open(&m, shipped);
	if (err) {
		xk_obj_close(&o);
		return err;
	}
	for (size_t i = 0; i < o.nr_syms && !err; i++) {
		const struct xk_sym *f = &o.syms[i], *g;
		int same = 0;

		if (!comparable(f))
			continue;
		g = xk_obj_find_func(&m, f->name, NULL);
		if (!g || !g->sec->data || !f->sec->data)
			continue;	/* inlined away at link, or NOBITS */
		(*checked)++;
		if (g->sym.st_size == f->sym.st_size) {
			uint8_t *mask_m = malloc(g->sym.st_size ?: 1);

			if (!mask_m) {
				err = xk_err(-ENOMEM, "%s: out of memory", obj_name);
				break;
			}
			build_mask(&m, g, mask_m);
			same = same_code(&o, f, xk_func_bytes(g), mask_m);
			free(mask_m);
			if (same < 0) {
				err = same;
				break;
			}
		}
		if (!same && nr_bad++ < 12)
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), " %s",
				 f->name);
	}
	xk_obj_close(&m);
	xk_obj_close(&o);
	if (!err && nr_bad)
		err = xk_err(-ESTALE, "%s built from the source differs from the "
				      "shipped module %s in %d of %d functions:%s%s",
			     obj_name, ko, nr_bad, *checked, bad,
			     nr_bad > 12 ? " ..." : "");
	return err;
}

