// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: the uses of a constant that are no code. The spans come
 * from instructions whose bytes change with the constant; a use the
 * constant makes in data (a variable it initialises, a static array it
 * sizes) or in an address (a relocation's addend: &table[N]) changes no
 * instruction byte, so without this pass it would keep the compiled value
 * while the spans run with the new one: a kernel built with neither. Each
 * such use is a refused span naming what differs, so the constant is
 * partial, never silently half-applied.
 *
 * Compared, for each build: every named data object (STT_OBJECT in an
 * allocated section that holds no code, metadata sections excepted) by
 * size and by bytes outside relocations; and the relocations of every
 * function and data object, by the symbol they name and the offset in it
 * (a section symbol is resolved to the named symbol that holds its
 * addend, as layouts move with other code; a string by its text).
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "dataflow.h"
#include "identity.h"
#include "spans.h"

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

static bool data_object(const struct xk_sym *y)
{
	return GELF_ST_TYPE(y->sym.st_info) == STT_OBJECT && y->sec &&
	       (y->sec->sh.sh_flags & SHF_ALLOC) &&
	       !(y->sec->sh.sh_flags & SHF_EXECINSTR) &&
	       !metadata_section(y->sec->name);
}

/* The data object named like y (and in a section of the same name) in o. */
static const struct xk_sym *find_object(const struct xk_obj *o,
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

/* The functions and data objects of an object, by section and address. */
struct sym_index {
	const struct xk_obj *o;
	const struct xk_sym **sym;
	size_t nr;
};

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

static int index_symbols(const struct xk_obj *o, struct sym_index *x)
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
static const struct xk_sym *holder(const struct sym_index *x,
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
static void rela_target(const struct sym_index *x, const struct xk_rela *r,
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

#define MAX_COMPARED_RELAS 4096
#define TARGET_TEXT 160

/*
 * Whether relocation ra, oa bytes into its symbol or instruction, and rb,
 * ob bytes into its, fill the same field to the same place; when not, ta
 * and tb (TARGET_TEXT bytes) say where each points. xa, xb: the objects'
 * indexes for rela_target, or NULL.
 */
static bool same_place(const struct sym_index *xa, const struct xk_rela *ra,
		       uint64_t oa, const struct sym_index *xb,
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
static int same_relas(const struct sym_index *base, const struct xk_sym *a,
		       const struct sym_index *var, const struct xk_sym *b,
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

/* Whether the bytes of objects a and b differ outside their relocations. */
static bool same_bytes(const struct xk_sym *a, const struct xk_sym *b,
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

/* Sections of data the kernel never writes after boot, or not at all. */
static bool frozen_section(const char *name)
{
	static const char *const prefixes[] = {
		".data..ro_after_init", ".init", ".exit", ".data..percpu",
		".ref.", ".meminit", ".cpuinit", ".devinit",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* The number an object's bytes [off, off + size) hold (little endian). */
static uint64_t field_value(const struct xk_sym *y, uint64_t off, uint32_t size)
{
	uint64_t v = 0;

	for (uint32_t i = 0; i < size; i++)
		v |= (uint64_t)y->sec->data[y->sym.st_value + off + i] << (8 * i);
	return v;
}

/* The first byte of y and z (same size) that differs, from `from`; or size. */
static uint64_t next_diff(const struct xk_sym *y, const struct xk_sym *z,
			  uint64_t from)
{
	const uint8_t *a = y->sec->data + y->sym.st_value;
	const uint8_t *b = z->sec->data + z->sym.st_value;

	while (from < y->sym.st_size && a[from] == b[from])
		from++;
	return from;
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
 * What field_refs() asks of one reference of code to a field: instruction
 * n of function f (code), whose relocation r points into it, arg the
 * caller's. True when it is the reference sought (why naming it), which
 * ends the walk.
 */
typedef bool (*field_ref_fn)(const struct xk_obj *o, const struct xk_sym *f,
			     const struct xk_func_code *code, size_t n,
			     const struct xk_rela *r, const void *arg, char *why,
			     size_t size);

/*
 * Walks the instructions of the functions of object o that refer to bytes
 * [from, to) of data object y (an instruction's extent there: its memory
 * operand's width, 8 without one), each given to fn until it returns true
 * (*found then). boot_only: only boot-time code (.init.text).
 */
static int field_refs(const struct xk_obj *o, const struct xk_sym *y,
		      uint64_t from, uint64_t to, bool boot_only,
		      field_ref_fn fn, const void *arg, char *why, size_t size,
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
	return field_refs(o, y, from, to, false, writes_field, skip, why, size,
			  writes);
}

/*
 * Whether instruction n of boot-time code f, a load of a variable into a
 * register, feeds the kernel log alone: the register is read by nothing
 * but a compare (and a forward jcc past the message, where it is dead)
 * before a call of printk, which takes it as an argument and clobbers it.
 * rcu_init() prints a parameter that differs from its default that way
 * (if (qhimark != DEFAULT_RCU_QHIMARK) pr_info("... %ld", qhimark)).
 */
static bool log_only_read(const struct xk_sym *f, const struct xk_func_code *code,
			  size_t n)
{
	const cs_x86 *x = &code->insn[n].x86;
	int gpr;

	if (code->insn[n].id != X86_INS_MOV || x->op_count != 2 ||
	    x->operands[0].type != X86_OP_REG)
		return false;
	gpr = xk_gpr(x->operands[0].reg, NULL, NULL);
	if (gpr < 0)
		return false;
	for (size_t i = n + 1; i < code->nr && i <= n + 16; i++) {
		const struct xk_insn *in = &code->insn[i];
		const char *callee;
		bool reads, writes;

		if (in->is_call) {
			callee = xk_callee_name(f, in);
			return callee && !strcmp(callee, "_printk");
		}
		if (in->is_cond) {
			ssize_t t = in->target > (int64_t)in->off ?
				    xk_code_index(code, (uint64_t)in->target) : -1;

			if (t < 0 || df_reg_read(code, (size_t)t, gpr))
				return false;
			continue;
		}
		if (in->is_branch || in->is_ret)
			return false;
		df_touches_gpr(in, gpr, &reads, &writes);
		if (writes || (reads && in->id != X86_INS_CMP &&
			       in->id != X86_INS_TEST))
			return false;
	}
	return false;
}

/* boot_reads' question: whether reference n reads the field for more than
 * a boot message. */
static bool reads_field(const struct xk_obj *o, const struct xk_sym *f,
			const struct xk_func_code *code, size_t n,
			const struct xk_rela *r, const void *arg, char *why,
			size_t size)
{
	(void)o;
	(void)r;
	(void)arg;
	if (log_only_read(f, code, n))
		return false;
	snprintf(why, size, "%s+0x%lx %.60s", f->name,
		 (unsigned long)code->insn[n].off, code->insn[n].text);
	return true;
}

/*
 * Whether boot-time code of object o (.init.text, run once and freed)
 * refers to bytes [from, to) of data object y other than to log them
 * (log_only_read): what it derived from the variable then (rcu_init's
 * qovld_calc = qovld) keeps the compiled-in value, whatever the variable
 * holds after a retune. why names the first such reference. Runs for
 * data_span, after gen_code_writes.
 */
static int boot_reads(const struct xk_obj *o, const struct xk_sym *y,
		      uint64_t from, uint64_t to, char *why, size_t size,
		      bool *reads)
{
	return field_refs(o, y, from, to, true, reads_field, NULL, why, size,
			  reads);
}

/* Whether object o has a function of that name. */
static bool function_named(const struct xk_obj *o, const char *name)
{
	for (size_t i = 0; i < o->nr_syms; i++)
		if (o->syms[i].is_func && !strcmp(o->syms[i].name, name))
			return true;
	return false;
}

/*
 * The function of src whose text holds byte off of section sec, or NULL.
 */
static const struct xk_sym *function_at(const struct xk_obj *src,
					const struct xk_sec *sec, uint64_t off)
{
	for (size_t i = 0; i < src->nr_syms; i++) {
		const struct xk_sym *f = &src->syms[i];

		if (f->is_func && f->sec == sec && off >= f->sym.st_value &&
		    off - f->sym.st_value < f->sym.st_size)
			return f;
	}
	return NULL;
}

/*
 * What relocation r at a byte of function f names of variable v, whose
 * w-byte field at off is the setting: 1 when its instruction loads that
 * field into a register (`mov v+off(%rip), %reg`, or its zero- or
 * sign-extending form; *insn its offset in f), 0 when it reaches no byte
 * of v (a neighbour's), -1 when it refers to v otherwise (why says how).
 * The place a pc-relative field names is xk_insn_rela_place's.
 */
static int loads_field(const struct xk_sym *f, const struct xk_rela *r,
		       const struct xk_sym *v, uint64_t off, uint32_t w,
		       uint64_t *insn, char *why, size_t size)
{
	struct xk_func_code code;
	uint64_t at = r->offset - f->sym.st_value;
	int ret = -1;

	snprintf(why, size, "data: %s+0x%lx refers to %s other than by a load "
		 "of the field into a register", f->name, (unsigned long)at,
		 v->name);
	if (xk_disasm_func(f, &code))
		return -1;
	for (size_t i = 0; i < code.nr; i++) {
		const struct xk_insn *in = &code.insn[i];
		const cs_x86_op *dst = &in->x86.operands[0];
		const cs_x86_op *src = &in->x86.operands[1];
		bool pcrel = r->type == R_X86_64_PC32 || r->type == R_X86_64_PLT32;
		int64_t place;
		uint32_t width = 1;

		if (at < in->off || at >= in->off + in->len)
			continue;
		*insn = in->off;
		place = xk_insn_rela_place(f, in, r) - (int64_t)v->sym.st_value;
		for (int o = 0; o < in->x86.op_count; o++)
			if (in->x86.operands[o].type == X86_OP_MEM)
				width = in->x86.operands[o].size ?: 1;
		/* [place, place + width) misses v: another variable's */
		if (place + (int64_t)width <= 0 || place >= (int64_t)v->sym.st_size) {
			ret = 0;
			break;
		}
		snprintf(why, size, "data: %s+0x%lx %.60s refers to %s other than "
			 "by a load of the field into a register", f->name,
			 (unsigned long)in->off, in->text, v->name);
		if (!pcrel || (in->id != X86_INS_MOV && in->id != X86_INS_MOVZX &&
			       in->id != X86_INS_MOVSX && in->id != X86_INS_MOVSXD) ||
		    in->x86.op_count != 2 || dst->type != X86_OP_REG ||
		    src->type != X86_OP_MEM || src->mem.base != X86_REG_RIP ||
		    src->mem.index != X86_REG_INVALID ||
		    at != in->off + in->x86.encoding.disp_offset)
			break;
		if (place != (int64_t)off || src->size != w) {
			snprintf(why, size, "data: %s+0x%lx %.60s reads %u bytes at "
				 "%s+%lld, the setting is %u bytes at +%llu",
				 f->name, (unsigned long)in->off, in->text,
				 src->size, v->name, (long long)place, w,
				 (unsigned long long)off);
			break;
		}
		ret = 1;
		break;
	}
	xk_func_code_free(&code);
	return ret;
}

/*
 * A read-only variable the constant initialises, in one field of a*N + b
 * (data_span): its bytes are never written (the kernel maps them
 * read-only); each instruction that loads the field becomes a span whose
 * parameter is the loaded value (gen_reader_span). The readers are found
 * in the code that holds them all: the shipped module (its relocations
 * name every reference to the variable: none may be a pointer to it, and
 * the variable must not be exported to other modules), or the baseline
 * object for a static variable of vmlinux. A global variable of vmlinux is
 * refused: any object may read it. 1 with the spans added (each supported
 * or refused), 0 with why, or -errno.
 */
static int reader_spans(const struct gen_input *in, const struct xk_obj *base,
			const struct xk_sym *y, uint64_t off, uint32_t w,
			int64_t a, int64_t b, struct xk_scope *t, char *why,
			size_t size)
{
	struct xk_obj ko;
	const struct xk_obj *src = base;
	const struct xk_sym *v = y;
	const char *object = in->object;
	int64_t fit[2] = { a, b };
	char path[XK_PATH_MAX], note[sizeof(t->notes[0])];
	bool opened = false;
	int err = 0, nr = 0, got = 1;

	if (in->ko && in->ko[0] && in->kernel) {
		char exported[XK_FUNC_MAX];
		int same = 0;

		/* no shipped module to read: refused, the analysis goes on */
		if (xk_shipped_module(in->kernel, in->ko, path, sizeof(path)) ||
		    xk_obj_open(&ko, path)) {
			snprintf(why, size, "data: %s holds a value that depends on "
				 "the constant, in %s, and the shipped %s, whose "
				 "code reads it, cannot be read: %.200s", y->name,
				 y->sec->name, in->ko, xk_last_error());
			xk_err_clear();
			return 0;
		}
		opened = true;
		src = &ko;
		object = in->ko;
		v = NULL;
		xk_snprintf(exported, sizeof(exported), "__ksymtab_%s", y->name);
		for (size_t i = 0; i < ko.nr_syms; i++) {
			const struct xk_sym *z = &ko.syms[i];

			if (!strcmp(z->name, exported)) {
				snprintf(why, size, "data: %s holds a value that "
					 "depends on the constant, in %s, and %s "
					 "exports it: other modules may read it",
					 y->name, y->sec->name, in->ko);
				got = 0;
				goto out;
			}
			/* the shipped copy: its name, size, section and bytes
			 * (a static of the same name in another object of the
			 * module is not it) */
			if (!z->is_func && z->sec && z->sec->data &&
			    !strcmp(z->name, y->name) &&
			    z->sym.st_size == y->sym.st_size &&
			    !strncmp(z->sec->name, ".rodata", 7) &&
			    z->sym.st_value + z->sym.st_size <= z->sec->sh.sh_size &&
			    !memcmp(z->sec->data + z->sym.st_value,
				    y->sec->data + y->sym.st_value, y->sym.st_size)) {
				v = z;
				same++;
			}
		}
		if (same != 1) {
			snprintf(why, size, "data: the shipped %s has %s %llu-byte "
				 "%s in read-only data with the compiled-in bytes",
				 in->ko, same ? "more than one" : "no",
				 (unsigned long long)y->sym.st_size, y->name);
			got = 0;
			goto out;
		}
	} else if (GELF_ST_BIND(y->sym.st_info) != STB_LOCAL) {
		snprintf(why, size, "data: %s holds a value that depends on the "
			 "constant, in %s, and is a global of vmlinux (or of a "
			 "module with no shipped .ko): the code that reads it "
			 "may lie in any object", y->name,
			 y->sec->name);
		return 0;
	}
	/* every relocation that names a byte of v, through any symbol of its
	 * section: a load of the field is a span; anything else refuses */
	for (size_t s = 0; s < src->nr_secs && !err; s++) {
		const struct xk_sec *sec = &src->secs[s];

		if (!(sec->sh.sh_flags & SHF_ALLOC))
			continue;	/* debug information: never run */
		for (size_t k = 0; k < sec->nr_relas && !err; k++) {
			const struct xk_rela *r = &sec->relas[k];
			int64_t place;
			const struct xk_sym *f;
			const char *reader_object;
			uint64_t insn = 0;
			int load;

			if (!r->sym || r->sym->sec != v->sec)
				continue;
			place = (int64_t)r->sym->sym.st_value + r->addend -
				(int64_t)v->sym.st_value;
			/* at most 16 bytes before v: an instruction's tail
			 * after a pc-relative field (loads_field tells) */
			if (place < -16 || place >= (int64_t)v->sym.st_size)
				continue;
			if (r->type != R_X86_64_PC32 && r->type != R_X86_64_PLT32 &&
			    r->type != R_X86_64_32 && r->type != R_X86_64_32S &&
			    r->type != R_X86_64_64) {
				snprintf(why, size, "data: %s holds a value that "
					 "depends on the constant, and a relocation "
					 "of type %u in %s may name it", y->name,
					 r->type, sec->name);
				got = 0;
				goto out;
			}
			if (!(sec->sh.sh_flags & SHF_EXECINSTR)) {
				if (place < 0)
					continue;	/* pc-relative data: none */
				snprintf(why, size, "data: %s holds a value that "
					 "depends on the constant, and %s stores "
					 "its address (a pointer the readers of "
					 "which cannot be followed)", y->name,
					 sec->name);
				got = 0;
				goto out;
			}
			f = function_at(src, sec, r->offset);
			if (!f) {
				snprintf(why, size, "data: %s is read outside any "
					 "function (%s+0x%llx)", y->name, sec->name,
					 (unsigned long long)r->offset);
				got = 0;
				goto out;
			}
			load = loads_field(f, r, v, off, w, &insn, note, sizeof(note));
			if (!load)
				continue;	/* another variable's bytes */
			nr++;
			if (gen_init_code(f)) {
				snprintf(why, size, "data: %s is read by %s in %s, "
					 "code run once (%s) and freed", y->name,
					 f->name, f->sec->name, opened ?
					 "at the module's load or unload" : "at boot");
				got = 0;
				goto out;
			}
			/* a function of the variable's own object is named by
			 * that object, as its other spans are (one function,
			 * one name: overlaps and nesting are checked by it) */
			reader_object = object;
			if (opened && function_named(base, f->name))
				reader_object = in->object;
			if (load < 0) {
				struct xk_scope_span *sp;

				err = gen_add_span(t, in, f, &sp);
				if (!err) {
					xk_strlcpy(sp->object, reader_object,
						   sizeof(sp->object));
					sp->start = insn;
					span_refuse(sp, "%s", note);
				}
				continue;
			}
			err = gen_reader_span(in, src, f, insn, fit, a * in->def + b,
					      reader_object, t);
		}
	}
	if (!err && !nr) {
		snprintf(note, sizeof(note), "%s: read-only, and no code of %s "
			 "refers to it (every use folded in)", y->name, object);
		err = gen_add_note(t, note);
	}
out:
	if (opened)
		xk_obj_close(&ko);
	return err ?: got;
}

/*
 * A variable the constant initialises, as a span of class data: one aligned
 * field of 1, 2, 4 or 8 bytes that every build changes, holding a*N + b at
 * every build's N (an exact integer fit) and wide enough for the bounds.
 * 1 with *sp filled (the field, the compiled-in bytes, the fit); 0 with why
 * when the variable is no such setting. z: y in each build.
 */
static int data_span(const struct gen_input *in, const struct xk_obj *base,
		     const struct xk_sym *y, const struct xk_sym *const *z,
		     struct xk_scope *t, char *why, size_t size)
{
	uint64_t lo = UINT64_MAX, hi = 0, off = 0;
	uint32_t w;
	int64_t a = 0, b = 0;
	struct xk_scope_span *sp;
	bool writes;
	int err;

	/* read-only data (`const int bfq_timeout = HZ / 8;`) is never
	 * written: the code that reads it is (reader_spans) */
	bool read_only = !(y->sec->sh.sh_flags & SHF_WRITE) ||
			 frozen_section(y->sec->name);

	if (read_only && strncmp(y->sec->name, ".rodata", 7)) {
		snprintf(why, size, "data: %s holds a value that depends on the "
			 "constant, in %s, which the kernel does not write after "
			 "boot", y->name, y->sec->name);
		return 0;
	}
	/* the boot task and the first credentials are objects of a kind
	 * the kernel makes at run time (fork, prepare_creds): what the
	 * constant put in them is that object's state, as every other
	 * task's or cred's copy of the field is what the code that made it
	 * gave it. A retune changes that code, not the objects made before
	 * (*State of the boot task*): a note, no span; the module refuses
	 * writes to them anyway */
	if (!read_only && (!strcmp(y->name, "init_task") ||
			   !strcmp(y->name, "init_cred"))) {
		char note[sizeof(t->notes[0])];
		bool task = !strcmp(y->name, "init_task");

		snprintf(note, sizeof(note), "%s+0x%lx: the constant initialises "
			 "the boot %s's own state, kept as every %s made before "
			 "the change keeps its own (the code that gives new ones "
			 "the value is retuned)", y->name,
			 (unsigned long)next_diff(y, z[0], 0),
			 task ? "task" : "credentials", task ? "task" : "cred");
		return gen_add_note(t, note) ?: 1;
	}
	/* what the module refuses as the kernel's own structures
	 * (kmod/xk_data.c, check_candidate) is refused here first: a
	 * module's own record, a page of the kernel's tables
	 * (xk_rule_kernel_structure) */
	if (!read_only && xk_rule_kernel_structure(y->name,
				     y->sec->sh.sh_addralign >= XK_RULE_PAGE_SIZE &&
				     !(y->sym.st_value & (XK_RULE_PAGE_SIZE - 1)),
				     y->sym.st_size)) {
		snprintf(why, size, "data: %s+0x%lx is initialised by the "
			 "constant, but %s is a structure of the kernel's own "
			 "(a task, credentials, a page of its tables) the module "
			 "does not write", y->name, (unsigned long)next_diff(y, z[0], 0),
			 y->name);
		return 0;
	}
	/* nor one the kernel's security depends on (the module's deny list,
	 * xk_rule_security_variable) */
	if (!read_only && xk_rule_security_variable(y->name)) {
		snprintf(why, size, "data: %s+0x%lx is initialised by the "
			 "constant, but %s is one the kernel's security depends "
			 "on (lockdown, module signing, an LSM, BPF, ...), which "
			 "the module never writes", y->name,
			 (unsigned long)next_diff(y, z[0], 0), y->name);
		return 0;
	}
	for (int v = 0; v < GEN_NR_VARIANTS; v++) {
		uint64_t d = next_diff(y, z[v], 0);

		if (d == y->sym.st_size)
			continue;
		lo = d < lo ? d : lo;
		for (; d < y->sym.st_size; d = next_diff(y, z[v], d + 1))
			hi = d > hi ? d : hi;
	}
	/* an aligned field that covers the bytes that change and holds the
	 * fit at both bounds: a scalar variable whole; in a structure or an
	 * array, an int first (sysctls' type), then a long, a short, a byte */
	static const uint32_t in_struct[] = { 4, 8, 2, 1 };
	uint32_t whole[1] = { (uint32_t)y->sym.st_size };
	bool scalar = y->sym.st_size == 1 || y->sym.st_size == 2 ||
		      y->sym.st_size == 4 || y->sym.st_size == 8;
	const uint32_t *widths = scalar ? whole : in_struct;
	int nr_widths = scalar ? 1 : 4, k;

	for (k = 0; k < nr_widths; k++) {
		w = widths[k];
		uint64_t v0, dv;
		int64_t dn;
		uint8_t enc[8];
		bool fits = true;

		off = lo & ~(uint64_t)(w - 1);
		if (hi >= off + w || off + w > y->sym.st_size)
			continue;
		/* a and b from the baseline and the first build that differs */
		v0 = field_value(y, off, w);
		a = 0;
		for (int v = 0; v < GEN_NR_VARIANTS && !a; v++) {
			dv = field_value(z[v], off, w) - v0;
			dn = in->variant[v].value - in->def;
			if (!dn)
				continue;
			/* both zero-extended: the difference is exact */
			if ((int64_t)dv % dn)
				break;
			a = (int64_t)dv / dn;
		}
		if (!a)
			break;
		b = (int64_t)v0 - a * in->def;
		/* every build's field is the fit's encoding */
		for (int v = 0; v < GEN_NR_VARIANTS && fits; v++)
			fits = !xk_rule_data_bytes(a, b, in->variant[v].value, w, enc) &&
			       !memcmp(enc, z[v]->sec->data + z[v]->sym.st_value + off, w);
		fits = fits && !xk_rule_data_bytes(a, b, in->def, w, enc) &&
		       !memcmp(enc, y->sec->data + y->sym.st_value + off, w) &&
		       !xk_rule_data_bytes(a, b, in->min, w, enc) &&
		       !xk_rule_data_bytes(a, b, in->max, w, enc);
		if (fits)
			break;
		a = 0;
	}
	if (!a || k == nr_widths) {
		snprintf(why, size, "data: %s+0x%llx holds a value that depends on "
			 "the constant but is no a*N + b of it in one field of 1 to "
			 "8 bytes that holds the bounds", y->name,
			 (unsigned long long)lo);
		return 0;
	}
	if (read_only)
		return reader_spans(in, base, y, off, w, a, b, t, why, size);
	err = gen_code_writes(base, y, off, off + w, NULL, why, size, &writes);
	if (err)
		return err;
	if (writes) {
		char how[200];

		xk_strlcpy(how, why, sizeof(how));
		snprintf(why, size, "data: %s+0x%llx is initialised by the constant, "
			 "but %s: a variable the kernel changes, not a setting",
			 y->name, (unsigned long long)off, how);
		return 0;
	}
	err = boot_reads(base, y, off, off + w, why, size, &writes);
	if (err)
		return err;
	if (writes) {
		char how[200];

		xk_strlcpy(how, why, sizeof(how));
		snprintf(why, size, "data: %s+0x%llx is initialised by the constant, "
			 "but boot-time code reads it (%s): what it derived then "
			 "keeps the compiled-in value", y->name,
			 (unsigned long long)off, how);
		return 0;
	}
	err = gen_add_variable_span(t, in, y, off, w,
				    y->sec->data + y->sym.st_value + off, a, b, &sp);
	return err ?: 1;
}

int gen_add_variable_span(struct xk_scope *t, const struct gen_input *in,
			  const struct xk_sym *y, uint64_t off, uint32_t w,
			  const uint8_t *expect, int64_t a, int64_t b,
			  struct xk_scope_span **out)
{
	struct xk_scope_span *sp;
	int err = gen_add_span(t, in, y, &sp);

	if (err)
		return err;
	sp->cls = XK_SPAN_DATA;
	sp->emulate = XK_EMULATE_DATA;
	sp->start = off;
	sp->probe = off + w;
	sp->expect_len = w;
	memcpy(sp->expect, expect, w);
	memset(sp->expect_mask, 0xff, w);
	sp->nr_params = 1;
	sp->fit[0][0] = a;
	sp->fit[0][1] = b;
	sp->nr_imms = 1;
	sp->imm[0].insn = sp->imm[0].field = off;
	sp->imm[0].insn_len = sp->imm[0].size = w;
	sp->imm[0].width = w * 8;
	sp->copies = 0;	/* the module picks the copy by its bytes */
	*out = sp;
	return 0;
}

static int refuse_use(struct xk_scope *t, const struct gen_input *in,
		      const struct xk_sym *y, uint64_t off, const char *why)
{
	struct xk_scope_span *sp;
	int err = gen_add_span(t, in, y, &sp);

	if (err)
		return err;
	sp->start = off;
	span_refuse(sp, "%s", why);
	return 0;
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

/*
 * Runs once per object, after the variants are correlated, for gen_object
 * (not by shape: the first analysis already refused what differs). Adds
 * one refused span per data object, and per function, whose data or
 * addresses differ in some build.
 */
int gen_data_uses(const struct gen_input *in, const struct xk_obj *base,
		  const struct xk_obj *var, struct xk_scope *t)
{
	struct sym_index bx = { 0 }, vx[GEN_NR_VARIANTS] = { 0 };
	char why[sizeof(t->spans[0].why)];
	int err = index_symbols(base, &bx);

	for (int v = 0; v < GEN_NR_VARIANTS && !err; v++)
		err = index_symbols(&var[v], &vx[v]);
	for (size_t i = 0; i < base->nr_syms && !err; i++) {
		const struct xk_sym *y = &base->syms[i];
		const struct xk_sym *zs[GEN_NR_VARIANTS] = { NULL };
		bool bytes_differ = false;
		uint64_t at = 0, first_at = 0;
		int nr_absent = 0, v;

		why[0] = '\0';
		if (y->is_func && strncmp(y->name, "__pfx_", 6)) {
			for (v = 0; v < GEN_NR_VARIANTS; v++) {
				const struct xk_sym *z = y->twin_v[v];

				/* one whose bytes differ is the spans': the
				 * diff compares its relocations (find_seeds) */
				if (!z || z->sym.st_size != y->sym.st_size ||
				    memcmp(xk_func_bytes(z), xk_func_bytes(y),
					   y->sym.st_size))
					continue;
				if (!same_relas(&bx, y, &vx[v], z, why, sizeof(why)))
					break;
			}
			if (v < GEN_NR_VARIANTS)
				err = refuse_use(t, in, y, 0, why);
			continue;
		}
		if (!data_object(y))
			continue;
		for (v = 0; v < GEN_NR_VARIANTS; v++) {
			const struct xk_sym *z = find_object(&var[v], y);

			/* absent: the build's code no longer reads it (folded);
			 * the functions that did differ and are analysed */
			zs[v] = z;
			if (!z) {
				nr_absent++;
				continue;
			}
			if (z->sym.st_size != y->sym.st_size) {
				snprintf(why, sizeof(why), XK_WHY_SIZED "%s "
					 "depends on the constant (%llu bytes; %llu "
					 "with N=%lld): an object sized by it cannot "
					 "be resized", y->name,
					 (unsigned long long)y->sym.st_size,
					 (unsigned long long)z->sym.st_size,
					 (long long)in->variant[v].value);
				break;
			}
			if (!same_relas(&bx, y, &vx[v], z, why, sizeof(why)))
				break;
			if (!same_bytes(y, z, &at)) {
				if (!bytes_differ)
					first_at = at;
				bytes_differ = true;
			}
		}
		if (!why[0] && !bytes_differ)
			continue;
		/* a variable it initialises: a setting the module writes, if
		 * every build has it and it is one field of a*N + b */
		if (!why[0] && !nr_absent) {
			int got = data_span(in, base, y, zs, t, why, sizeof(why));

			if (got < 0)
				err = got;
			if (got)
				continue;
		} else if (!why[0]) {
			snprintf(why, sizeof(why), "data: %s+0x%llx holds a value that "
				 "depends on the constant, and a build has no %s",
				 y->name, (unsigned long long)first_at, y->name);
		}
		err = refuse_use(t, in, y, first_at, why);
	}
	free(bx.sym);
	for (int v = 0; v < GEN_NR_VARIANTS; v++)
		free(vx[v].sym);
	return err;
}
