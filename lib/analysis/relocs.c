// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: data and relocations compared between builds, and which
 * code refers to a field. What no instruction byte shows (a variable the
 * constant initialises, &table[N] in a relocation's addend) is found by
 * comparing, for each build: every named data object (STT_OBJECT in an
 * allocated section that holds no code, metadata sections excepted) by
 * size and by bytes outside relocations; and the relocations of every
 * function and data object, by the symbol they name and the offset in it
 * (a section symbol is resolved to the named symbol that holds its
 * addend, as layouts move with other code; a string by its text). The
 * variables form (forms/variables.c) and the pipeline's seeds use it.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "dataflow.h"
#include "relocs.h"

#define MAX_COMPARED_RELAS 4096
#define TARGET_TEXT 160

/* Sections whose contents are metadata about code, not data it reads. */
static bool metadata_section(const char *name)
{
	static const char *const prefixes[] = {
		".discard", ".note", ".comment", ".debug", ".BTF", ".orc",
		"__mcount_loc", "__patchable_function_entries", "__bug_table",
		"__ex_table", "__jump_table", ".altinstr", ".static_call",
		".retpoline_sites", ".return_sites", ".call_sites",
		".ibt_endbr_seal", "__ksymtab", "__kcrctab", ".modinfo",
		".gnu.linkonce.this_module", "__versions", ".rela", ".symtab",
		".strtab", ".shstrtab", ".eh_frame", ".initcall", "__param",
		"__tracepoints", "_ftrace", "__bpf_raw_tp", ".export_symbol",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

bool gen_data_object(const struct xk_sym *y)
{
	return GELF_ST_TYPE(y->sym.st_info) == STT_OBJECT && y->sec &&
	       (y->sec->sh.sh_flags & SHF_ALLOC) &&
	       !(y->sec->sh.sh_flags & SHF_EXECINSTR) &&
	       !metadata_section(y->sec->name);
}

/* The data object named like y (and in a section of the same name) in o. */
const struct xk_sym *gen_find_object(const struct xk_obj *o,
				     const struct xk_sym *y)
{
	for (size_t i = 0; i < o->nr_syms; i++) {
		const struct xk_sym *z = &o->syms[i];

		if (GELF_ST_TYPE(z->sym.st_info) == STT_OBJECT && z->sec &&
		    !strcmp(z->name, y->name) && !strcmp(z->sec->name, y->sec->name))
			return z;
	}
	return NULL;
}

static int by_place(const void *x, const void *y)
{
	const struct xk_sym *a = *(const struct xk_sym *const *)x;
	const struct xk_sym *b = *(const struct xk_sym *const *)y;

	if (a->sec != b->sec)
		return a->sec < b->sec ? -1 : 1;
	if (a->sym.st_value != b->sym.st_value)
		return a->sym.st_value < b->sym.st_value ? -1 : 1;
	return 0;
}

int gen_index_symbols(const struct xk_obj *o, struct gen_sym_index *x)
{
	x->o = o;
	x->nr = 0;
	x->sym = calloc(o->nr_syms + 1, sizeof(*x->sym));
	if (!x->sym)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	for (size_t i = 0; i < o->nr_syms; i++) {
		int type = GELF_ST_TYPE(o->syms[i].sym.st_info);

		if (o->syms[i].sec && (type == STT_FUNC || type == STT_OBJECT))
			x->sym[x->nr++] = &o->syms[i];
	}
	qsort(x->sym, x->nr, sizeof(*x->sym), by_place);
	return 0;
}

/* The named symbol of section sec that holds address at, or NULL. */
static const struct xk_sym *holder(const struct gen_sym_index *x,
				   const struct xk_sec *sec, int64_t at)
{
	size_t lo = 0, hi = x->nr;

	/* the first symbol past (sec, at) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct xk_sym *z = x->sym[mid];

		if (z->sec < sec || (z->sec == sec && (int64_t)z->sym.st_value <= at))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* those before it that start at or below at: the nearest that
	 * holds it (aliases and nested symbols share a start) */
	while (lo-- > 0) {
		const struct xk_sym *z = x->sym[lo];

		if (z->sec != sec)
			break;
		if (at < (int64_t)(z->sym.st_value + (z->sym.st_size ?: 1)))
			return z;
	}
	return NULL;
}

/* The same, without an index: a scan of the section's object. */
const struct xk_sym *gen_holder_in(const struct xk_sec *sec, int64_t at)
{
	const struct xk_obj *o = sec ? sec->obj : NULL;

	for (size_t i = 0; o && i < o->nr_syms; i++) {
		const struct xk_sym *z = &o->syms[i];
		int type = GELF_ST_TYPE(z->sym.st_info);

		if (z->sec == sec && (type == STT_FUNC || type == STT_OBJECT) &&
		    at >= (int64_t)z->sym.st_value &&
		    at < (int64_t)(z->sym.st_value + (z->sym.st_size ?: 1)))
			return z;
	}
	return NULL;
}

/*
 * Where relocation r points, as text that does not depend on the layout
 * of its section: "name+off" for a named symbol (a section symbol resolved
 * to the named function or object holding the address), the string itself
 * in a string section, else the section's name alone (an anonymous table:
 * its own relocations are compared where it is named).
 */
static void rela_target(const struct gen_sym_index *x, const struct xk_rela *r,
			char *buf, size_t size)
{
	const struct xk_sym *s = r->sym, *z;
	int64_t at;

	if (!s) {
		snprintf(buf, size, "?");
		return;
	}
	/* a pc-relative field's addend is the target less the bytes after
	 * the field (-4 for a rel32 at an instruction's end, down to -8):
	 * shown as the target for a rel32 at the end */
	at = r->addend;
	if (r->type == R_X86_64_PC32 || r->type == R_X86_64_PLT32)
		at += 4;
	if (GELF_ST_TYPE(s->sym.st_info) != STT_SECTION) {
		snprintf(buf, size, "%s%+lld", s->name, (long long)at);
		return;
	}
	z = x ? holder(x, s->sec, at) : gen_holder_in(s->sec, at);
	if (z) {
		snprintf(buf, size, "%s%+lld", z->name,
			 (long long)(at - (int64_t)z->sym.st_value));
		return;
	}
	if (s->sec && (s->sec->sh.sh_flags & SHF_STRINGS) && s->sec->data &&
	    at >= 0 && (uint64_t)at < s->sec->sh.sh_size) {
		snprintf(buf, size, "\"%.*s\"", (int)(s->sec->sh.sh_size - at),
			 (const char *)s->sec->data + at);
		return;
	}
	snprintf(buf, size, "%s", s->sec ? s->sec->name : "?");
}

/* The relocations inside [start, start+size) of section sec, in order. */
static size_t relas_in(const struct xk_sec *sec, uint64_t start, uint64_t size,
		       const struct xk_rela **out, size_t max)
{
	size_t n = 0, lo = 0, hi = sec->nr_relas;
	bool sorted = sec->relas_sorted;

	/* the assembler emits them in offset order: find the first by
	 * bisection when they are, else scan them all */
	if (sorted) {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (sec->relas[mid].offset < start)
				lo = mid + 1;
			else
				hi = mid;
		}
	} else {
		lo = 0;
	}
	for (size_t i = lo; i < sec->nr_relas; i++) {
		if (sec->relas[i].offset >= start + size && sorted)
			break;
		if (sec->relas[i].offset >= start &&
		    sec->relas[i].offset < start + size) {
			if (n < max)
				out[n] = &sec->relas[i];
			n++;
		}
	}
	return n;
}

/*
 * Whether relocation ra, oa bytes into its symbol or instruction, and rb,
 * ob bytes into its, fill the same field to the same place; when not, ta
 * and tb (TARGET_TEXT bytes) say where each points. xa, xb: the objects'
 * indexes for rela_target, or NULL.
 */
static bool same_place(const struct gen_sym_index *xa, const struct xk_rela *ra,
		       uint64_t oa, const struct gen_sym_index *xb,
		       const struct xk_rela *rb, uint64_t ob, char *ta, char *tb)
{
	/* a named symbol and the same addend: the same place; a section
	 * symbol is resolved, its layout may differ */
	if (oa == ob && ra->type == rb->type && ra->sym && rb->sym &&
	    ra->addend == rb->addend &&
	    GELF_ST_TYPE(ra->sym->sym.st_info) != STT_SECTION &&
	    GELF_ST_TYPE(rb->sym->sym.st_info) != STT_SECTION &&
	    !strcmp(ra->sym->name, rb->sym->name))
		return true;
	rela_target(xa, ra, ta, TARGET_TEXT);
	rela_target(xb, rb, tb, TARGET_TEXT);
	return oa == ob && ra->type == rb->type && !strcmp(ta, tb);
}

/*
 * Whether the relocations of symbol a (in base) and b (in variant), at the
 * same offsets, point at the same places; the first that differs in why.
 * Symbols of more than MAX_COMPARED_RELAS relocations are refused as such:
 * a cap never passes a comparison it did not make.
 */
int gen_same_relas(const struct gen_sym_index *base, const struct xk_sym *a,
		   const struct gen_sym_index *var, const struct xk_sym *b,
		   char *why, size_t size)
{
	static const struct xk_rela *ra[MAX_COMPARED_RELAS], *rb[MAX_COMPARED_RELAS];
	size_t na = relas_in(a->sec, a->sym.st_value, a->sym.st_size, ra,
			     MAX_COMPARED_RELAS);
	size_t nb = relas_in(b->sec, b->sym.st_value, b->sym.st_size, rb,
			     MAX_COMPARED_RELAS);
	char ta[TARGET_TEXT], tb[TARGET_TEXT];

	if (na > MAX_COMPARED_RELAS || nb > MAX_COMPARED_RELAS) {
		snprintf(why, size, "%s has more than %d relocations to compare",
			 a->name, MAX_COMPARED_RELAS);
		return false;
	}
	if (na != nb) {
		snprintf(why, size, "%s has %zu relocations, %zu in a build with "
			 "another value", a->name, na, nb);
		return false;
	}
	for (size_t i = 0; i < na; i++) {
		uint64_t oa = ra[i]->offset - a->sym.st_value;
		uint64_t ob = rb[i]->offset - b->sym.st_value;

		if (!same_place(base, ra[i], oa, var, rb[i], ob, ta, tb)) {
			snprintf(why, size, "%s+0x%llx refers to %.60s, to %.60s "
				 "in a build with another value", a->name,
				 (unsigned long long)oa, ta, tb);
			return false;
		}
	}
	return true;
}

/* Whether the bytes of objects a and b agree outside their relocations;
 * else the first that differs in *at. */
bool gen_same_bytes(const struct xk_sym *a, const struct xk_sym *b,
		    uint64_t *at)
{
	const uint8_t *pa, *pb;

	if (!a->sec->data || !b->sec->data)	/* NOBITS: zeros */
		return !a->sec->data == !b->sec->data;
	pa = a->sec->data + a->sym.st_value;
	pb = b->sec->data + b->sym.st_value;
	for (uint64_t k = 0; k < a->sym.st_size; k++) {
		uint64_t off = a->sym.st_value + k;
		const struct xk_rela *r[8];
		bool masked = false;
		size_t n;

		if (pa[k] == pb[k])
			continue;
		/* a relocated field (8 bytes at most) covering the byte */
		n = relas_in(a->sec, off >= 7 ? off - 7 : 0, off >= 7 ? 8 : off + 1,
			     r, 8);
		for (size_t i = 0; i < n && i < 8 && !masked; i++) {
			unsigned int w = r[i]->type == R_X86_64_64 ? 8 : 4;

			masked = off >= r[i]->offset && off < r[i]->offset + w;
		}
		if (!masked) {
			*at = k;
			return false;
		}
	}
	return true;
}

/*
 * Where an instruction of function f, whose relocation r names data
 * object y, points inside y: the exact offset (xk_insn_rela_place: a
 * rip-relative field's addend is corrected by the instruction's tail),
 * or false when it points elsewhere or is no field of the instruction.
 */
static bool points_into(const struct xk_sym *f, const struct xk_insn *in,
			const struct xk_rela *r, const struct xk_sym *y,
			int64_t *off)
{
	int64_t at;

	if (!r->sym || (r->sym != y && (GELF_ST_TYPE(r->sym->sym.st_info) !=
					STT_SECTION || r->sym->sec != y->sec)))
		return false;
	at = xk_insn_rela_place(f, in, r) - (int64_t)y->sym.st_value;
	*off = at;
	return at >= 0 && (uint64_t)at < y->sym.st_size;
}

/*
 * Whether function f (code) is a setter: it stores one of its argument
 * registers and returns, nothing else (endbr64, the __fentry__ call and
 * nops aside): rcu_set_jiffies_lazy_flush(j) { jiffies_lazy_flush = j; }.
 * Such a store is the variable's own interface, like a sysctl's.
 */
static bool is_setter(const struct xk_sym *f, const struct xk_func_code *code)
{
	int stores = 0;

	for (size_t n = 0; n < code->nr; n++) {
		const struct xk_insn *in = &code->insn[n];
		const cs_x86 *x = &in->x86;

		if (in->id == X86_INS_ENDBR64 || in->id == X86_INS_NOP ||
		    in->is_ret)
			continue;
		if (in->is_call || (in->is_branch && !in->is_cond)) {
			const struct xk_rela *r[1];

			/* the __fentry__ call, the return thunk */
			if (relas_in(f->sec, f->sym.st_value + in->off, in->len, r, 1) == 1 &&
			    r[0]->sym && (!strcmp(r[0]->sym->name, "__fentry__") ||
					  !strcmp(r[0]->sym->name, "__x86_return_thunk")))
				continue;
			return false;
		}
		if (in->id != X86_INS_MOV || x->op_count != 2 ||
		    x->operands[0].type != X86_OP_MEM ||
		    x->operands[1].type != X86_OP_REG || stores++)
			return false;
		switch (xk_gpr(x->operands[1].reg, NULL, NULL)) {
		case XK_RDI: case XK_RSI: case XK_RDX: case XK_RCX:
		case XK_R8: case XK_R9:
			break;
		default:
			return false;
		}
	}
	return stores == 1;
}

/*
 * Whether function f of object o is a sysctl handler: it calls one of the
 * kernel's proc_do* parsers (proc_dointvec, proc_douintvec_minmax, ...) and
 * data of o holds its address (a ctl_table's .proc_handler). Its stores run
 * when an administrator writes the sysctl, with what was written or a
 * default the constant gives (sched_rr_handler stores sched_rr_timeslice
 * and sysctl_sched_rr_timeslice): the setting's own interface, like a
 * setter's. The module changes such a variable only from the value it put
 * there (compare-and-exchange), so an administrator's value stays.
 */
static bool is_sysctl_handler(const struct xk_obj *o, const struct xk_sym *f)
{
	bool parses = false, in_table = false;

	for (size_t k = 0; k < f->sec->nr_relas && !parses; k++) {
		const struct xk_rela *r = &f->sec->relas[k];

		parses = r->offset >= f->sym.st_value &&
			 r->offset < f->sym.st_value + f->sym.st_size &&
			 r->sym && r->sym->sec == NULL &&
			 !strncmp(r->sym->name, "proc_do", 7);
	}
	for (size_t i = 0; i < o->nr_secs && parses && !in_table; i++) {
		const struct xk_sec *s = &o->secs[i];

		if (s->sh.sh_flags & SHF_EXECINSTR || !(s->sh.sh_flags & SHF_ALLOC))
			continue;
		for (size_t k = 0; k < s->nr_relas && !in_table; k++) {
			const struct xk_rela *r = &s->relas[k];

			in_table = r->sym && (r->sym == f ||
				   (GELF_ST_TYPE(r->sym->sym.st_info) == STT_SECTION &&
				    r->sym->sec == f->sec &&
				    r->addend == (int64_t)f->sym.st_value));
		}
	}
	return parses && in_table;
}

/* A cheap look before a disassembly: whether a relocation in function f
 * names data object y, or its section near it. */
static bool relocs_near(const struct xk_sym *f, const struct xk_sym *y)
{
	for (size_t k = 0; k < f->sec->nr_relas; k++) {
		const struct xk_rela *r = &f->sec->relas[k];

		if (r->offset >= f->sym.st_value &&
		    r->offset < f->sym.st_value + f->sym.st_size &&
		    r->sym && (r->sym == y ||
			       (GELF_ST_TYPE(r->sym->sym.st_info) == STT_SECTION &&
				r->sym->sec == y->sec &&
				r->addend + 16 >= (int64_t)y->sym.st_value &&
				r->addend < (int64_t)(y->sym.st_value +
						      y->sym.st_size) + 16)))
			return true;
	}
	return false;
}

/*
 * Whether instruction in of function f names per-CPU data: a %gs operand
 * (this_cpu_*), or a relocation to __per_cpu_offset, this_cpu_off or a
 * symbol of .data..percpu (per_cpu(), per_cpu_ptr()).
 */
bool gen_insn_per_cpu(const struct xk_sym *f, const struct xk_insn *in)
{
	const struct xk_rela *r[4];
	size_t nr;

	for (int m = 0; m < in->x86.op_count; m++)
		if (in->x86.operands[m].type == X86_OP_MEM &&
		    in->x86.operands[m].mem.segment == X86_REG_GS)
			return true;
	nr = relas_in(f->sec, f->sym.st_value + in->off, in->len, r, 4);
	for (size_t k = 0; k < nr && k < 4; k++) {
		const struct xk_sym *y = r[k]->sym;

		if (y && (!strcmp(y->name, "__per_cpu_offset") ||
			  !strcmp(y->name, "this_cpu_off") ||
			  (y->sec && !strncmp(y->sec->name, ".data..percpu", 13))))
			return true;
	}
	return false;
}

/*
 * Walks the instructions of the functions of object o that refer to bytes
 * [from, to) of data object y (an instruction's extent there: its memory
 * operand's width, 8 without one), each given to fn until it returns true
 * (*found then). boot_only: only boot-time code (.init.text).
 */
int gen_field_refs(const struct xk_obj *o, const struct xk_sym *y,
		   uint64_t from, uint64_t to, bool boot_only,
		   gen_field_ref_fn fn, const void *arg, char *why, size_t size,
		   bool *found)
{
	*found = false;
	for (size_t i = 0; i < o->nr_syms && !*found; i++) {
		const struct xk_sym *f = &o->syms[i];
		struct xk_func_code code = { 0 };
		int err;

		if (!f->is_func || !f->sec || !f->sym.st_size ||
		    (boot_only && strncmp(f->sec->name, ".init.text", 10)) ||
		    !relocs_near(f, y))
			continue;
		err = xk_disasm_func(f, &code);
		if (err)
			return err;
		for (size_t n = 0; n < code.nr && !*found; n++) {
			const struct xk_insn *in = &code.insn[n];
			const struct xk_rela *r[4];
			size_t nr = relas_in(f->sec, f->sym.st_value + in->off, in->len,
					     r, 4);

			for (size_t k = 0; k < nr && k < 4 && !*found; k++) {
				unsigned int width = 8;
				int64_t at;

				if (!points_into(f, in, r[k], y, &at))
					continue;
				for (int m = 0; m < in->x86.op_count; m++)
					if (in->x86.operands[m].type == X86_OP_MEM)
						width = in->x86.operands[m].size ?: 8;
				if ((uint64_t)at >= to || (uint64_t)at + width <= from)
					continue;
				*found = fn(o, f, &code, n, r[k], arg, why, size);
			}
		}
		xk_func_code_free(&code);
	}
	return 0;
}

/* gen_code_writes' question: whether reference n stores to the field or
 * takes its address, the variable's own interface and the function arg
 * (and its aliases) aside. */
static bool writes_field(const struct xk_obj *o, const struct xk_sym *f,
			 const struct xk_func_code *code, size_t n,
			 const struct xk_rela *r, const void *arg, char *why,
			 size_t size)
{
	const struct xk_sym *skip = arg;
	const struct xk_insn *in = &code->insn[n];
	bool store = false, address = in->id == X86_INS_LEA;

	/* skip, or an alias of it (init_module of golden_init) */
	if (skip && f->sec == skip->sec && f->sym.st_value == skip->sym.st_value)
		return false;
	for (int m = 0; m < in->x86.op_count; m++) {
		const cs_x86_op *op = &in->x86.operands[m];

		if (op->type == X86_OP_MEM) {
			store |= (op->access & CS_AC_WRITE) &&
				 in->id != X86_INS_CMP && in->id != X86_INS_TEST &&
				 in->id != X86_INS_BT;
		} else if (op->type == X86_OP_IMM) {
			/* mov $var, %reg: the relocation is the immediate's,
			 * not a store's displacement (movl $0x19, var(%rip)) */
			address |= !in->x86.encoding.imm_offset ||
				   r->offset - f->sym.st_value - in->off ==
					   in->x86.encoding.imm_offset;
		}
	}
	if (store && !address && (is_setter(f, code) || is_sysctl_handler(o, f)))
		return false;	/* its own interface */
	if (!store && !address)
		return false;
	snprintf(why, size, "%s+0x%lx %.60s %s it", f->name,
		 (unsigned long)in->off, in->text,
		 store ? "stores to" : "takes the address of");
	return true;
}

/*
 * Whether the code of object o writes bytes [from, to) of data object y,
 * or takes an address inside them (a pointer the analysis cannot follow):
 * then the variable is state the kernel changes as it runs, not a setting,
 * and why names the instruction. Its data's references (a sysctl table's
 * .data = &var, a module parameter's), a setter's store (is_setter) and a
 * sysctl handler's (is_sysctl_handler) are the variable's own interface and
 * no reason. Code of other objects writing a global variable is not seen
 * (docs/design.md, Limits).
 */
int gen_code_writes(const struct xk_obj *o, const struct xk_sym *y,
		    uint64_t from, uint64_t to, const struct xk_sym *skip,
		    char *why, size_t size, bool *writes)
{
	return gen_field_refs(o, y, from, to, false, writes_field, skip, why, size,
			      writes);
}

/*
 * Whether instruction a of function fa and b of fb, whose text is the
 * same, relocate the same fields to the same places (find_seeds in
 * spans.c: the text masks what a relocation fills in, so &table[N] reads
 * the same at every value); when not, what differs in why.
 */
bool gen_same_relocs(const struct xk_sym *fa, const struct xk_insn *a,
		     const struct xk_sym *fb, const struct xk_insn *b,
		     char *why, size_t size)
{
	const struct xk_rela *ra[4], *rb[4];
	size_t na = relas_in(fa->sec, fa->sym.st_value + a->off, a->len, ra, 4);
	size_t nb = relas_in(fb->sec, fb->sym.st_value + b->off, b->len, rb, 4);
	char ta[TARGET_TEXT], tb[TARGET_TEXT];

	if (na != nb || na > 4) {
		snprintf(why, size, "+0x%lx %.60s: %zu relocations, %zu in a "
			 "build with another value", (unsigned long)a->off,
			 a->text, na, nb);
		return false;
	}
	for (size_t i = 0; i < na; i++) {
		if (!same_place(NULL, ra[i], ra[i]->offset - fa->sym.st_value - a->off,
				NULL, rb[i], rb[i]->offset - fb->sym.st_value - b->off,
				ta, tb)) {
			snprintf(why, size, "+0x%lx %.60s: refers to %.50s, to "
				 "%.50s in a build with another value (an address "
				 "that depends on the constant)",
				 (unsigned long)a->off, a->text, ta, tb);
			return false;
		}
	}
	return true;
}
