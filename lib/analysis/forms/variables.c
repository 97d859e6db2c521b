// SPDX-License-Identifier: GPL-2.0
/*
 * Form: the uses of a constant that are no code. The other spans come
 * from instructions whose bytes change with the constant; a use the
 * constant makes in data (a variable it initialises, a static array it
 * sizes) or in an address (a relocation's addend: &table[N]) changes no
 * instruction byte, so without this pass it would keep the compiled value
 * while the spans run with the new one: a kernel built with neither. A
 * variable it initialises, in one field of a*N + b that only its own
 * interface writes, is a span of class data (read-only: each load of it a
 * reader span); every other such use is a refused span naming what
 * differs, so the constant is partial, never silently half-applied. The
 * comparison itself (data by size and bytes, relocations by where they
 * point) is relocs.c's.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "dataflow.h"
#include "form.h"
#include "identity.h"
#include "relocs.h"
#include "span.h"

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
	return gen_field_refs(o, y, from, to, true, reads_field, NULL, why, size,
			  reads);
}

/* What copies_made's walk keeps of copies into objects: the first one. */
struct copy_walk {
	char *object_copy;	/* "" until one is found */
	size_t size;
};

/*
 * Whether register gpr before instruction s of f comes from per-CPU data:
 * the last instruction before s that writes it names per-CPU data, or,
 * depth permitting, a register it reads does so in turn.
 */
static bool reg_per_cpu(const struct xk_sym *f, const struct xk_func_code *code,
			size_t s, int gpr, int depth)
{
	for (size_t i = s; i-- > 0;) {
		const struct xk_insn *in = &code->insn[i];
		bool reads, writes;

		/* a call keeps the callee-saved registers (rbx, rbp, r12-r15) */
		if (in->is_call && (gpr == 3 || gpr == 5 || gpr >= 12))
			continue;
		df_touches_gpr(in, gpr, &reads, &writes);
		if (!writes)
			continue;
		if (gen_insn_per_cpu(f, in))
			return true;
		for (int m = 0; depth > 0 && m < in->x86.op_count; m++) {
			const cs_x86_op *op = &in->x86.operands[m];
			int g = op->type == X86_OP_REG ? xk_gpr(op->reg, NULL, NULL) : -1;

			if (g >= 0 && reg_per_cpu(f, code, i, g, depth - 1))
				return true;
		}
		return false;
	}
	return false;
}

/*
 * Whether the store at instruction s of f writes per-CPU data: the store
 * names it, or its base register comes from it (per_cpu_ptr(&rcu_data,
 * cpu): `mov $rcu_data, %rbx`, `add %r14, %rbx` with r14 from
 * __per_cpu_offset, then `mov %rax, 0x108(%rbx)`).
 */
static bool stores_per_cpu(const struct xk_sym *f, const struct xk_func_code *code,
			   size_t s)
{
	const cs_x86_op *dst = &code->insn[s].x86.operands[0];
	int base = xk_gpr(dst->mem.base, NULL, NULL);

	return gen_insn_per_cpu(f, &code->insn[s]) ||
	       (base >= 0 && reg_per_cpu(f, code, s, base, 3));
}

/*
 * copies_made's question: whether reference n loads the field into a
 * register that a store then writes to per-CPU data, before the register
 * is written again, a call, a return or a jump (rcutree_prepare_cpu's
 * rdp->blimit = blimit: each CPU's copy is made when it comes up, then
 * read instead of the variable). A store into another object (a task's
 * rt.time_slice = sched_rr_timeslice, renewed as each slice ends) goes to
 * the walk's object_copy, the first one only.
 */
static bool copies_field(const struct xk_obj *o, const struct xk_sym *f,
			 const struct xk_func_code *code, size_t n,
			 const struct xk_rela *r, const void *arg, char *why,
			 size_t size)
{
	const struct copy_walk *walk = arg;
	const struct xk_insn *ld = &code->insn[n];
	const cs_x86 *x = &ld->x86;
	int gpr;

	(void)o;
	(void)r;
	if ((ld->id != X86_INS_MOV && ld->id != X86_INS_MOVZX &&
	     ld->id != X86_INS_MOVSX && ld->id != X86_INS_MOVSXD) ||
	    x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
	    x->operands[1].type != X86_OP_MEM)
		return false;
	gpr = xk_gpr(x->operands[0].reg, NULL, NULL);
	if (gpr < 0)
		return false;
	for (size_t i = n + 1; i < code->nr && i <= n + 16; i++) {
		const struct xk_insn *in = &code->insn[i];
		const cs_x86_op *dst = &in->x86.operands[0];
		const cs_x86_op *src = &in->x86.operands[1];
		bool reads, writes;

		if (in->is_call || in->is_ret || (in->is_branch && !in->is_cond))
			return false;
		if (in->id == X86_INS_MOV && in->x86.op_count == 2 &&
		    dst->type == X86_OP_MEM && src->type == X86_OP_REG &&
		    dst->mem.base != X86_REG_RIP &&
		    xk_gpr(src->reg, NULL, NULL) == gpr) {
			if (stores_per_cpu(f, code, i)) {
				snprintf(why, size, "%s+0x%lx %.60s", f->name,
					 (unsigned long)in->off, in->text);
				return true;
			}
			if (!walk->object_copy[0])
				snprintf(walk->object_copy, walk->size,
					 "%s+0x%lx %.60s", f->name,
					 (unsigned long)in->off, in->text);
			return false;
		}
		df_touches_gpr(in, gpr, &reads, &writes);
		if (writes)
			return false;
	}
	return false;
}

/*
 * Whether code of object o copies bytes [from, to) of data object y into
 * per-CPU data (copies_field): the copy of a CPU already up keeps the
 * compiled-in value where it is read, so the variable alone is not the
 * setting; why names the first such copy. A copy into another object
 * goes to object_copy (size bytes; "" when none): that object keeps the
 * old value until the code copies again, as any object made before a
 * retune. Runs for data_span, after boot_reads.
 */
static int copies_made(const struct xk_obj *o, const struct xk_sym *y,
		       uint64_t from, uint64_t to, char *why, size_t size,
		       char *object_copy, size_t object_size, bool *per_cpu)
{
	const struct copy_walk walk = { object_copy, object_size };

	object_copy[0] = '\0';
	return gen_field_refs(o, y, from, to, false, copies_field, &walk, why,
			      size, per_cpu);
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

/* Whether more bytes of span w are filled in by relocations (never
 * compared) than not. */
static bool too_masked(const struct func_ctx *c, const struct span_work *w)
{
	uint64_t from = c->base.insn[w->start].off;
	uint64_t to = c->base.insn[w->end].off + c->base.insn[w->end].len;
	uint64_t masked = 0;

	for (uint64_t b = from; b < to; b++)
		masked += xk_func_reloc_at(c->fb, b, 1);
	return 2 * masked > to - from;
}

/*
 * Runs for reader_spans on each instruction of function f (of object obj: the shipped module, or the baseline
 * object) that loads a field of a read-only variable the constant
 * initialises: `mov bfq_timeout(%rip), %eax` in bfq_bfqq_served, where
 * another object than the variable's own reads `const int bfq_timeout =
 * HZ / 8`. Its code is the same at every value, so no diff shows it; the
 * loaded value is y0 at the default and fit[0] * N + fit[1] at N (the
 * data's own fit, checked against every build). The span is that one
 * load, its location the register it writes, rewritten at the probe after
 * it as for an immediate (the read-only data itself is never written).
 * 0 with the span added, supported or refused with the reason; -errno on
 * failure.
 */
static int reader_span(const struct gen_input *in, const struct xk_obj *obj,
		       const struct xk_sym *f, uint64_t at, const int64_t fit[2],
		       int64_t y0, const char *object, struct xk_scope *t)
{
	struct func_ctx c = { .fb = f, .in = in, .obj = obj };
	struct span_work w = { 0 };
	struct xk_scope_span *sp;
	ssize_t i;
	int err;

	err = xk_disasm_func(f, &c.base) ?: span_mark_blocks(&c) ?:
	      gen_add_span(t, in, f, &sp);
	if (err)
		goto out;
	xk_strlcpy(sp->object, object, sizeof(sp->object));
	sp->start = at;
	i = xk_code_index(&c.base, at);
	if (i < 0) {
		span_refuse(sp, "+0x%lx: a reader's relocation is inside an "
			    "instruction the disassembly does not start there",
			    (unsigned long)at);
		goto out;
	}
	c.seed[i] = true;
	w.start = w.end = (size_t)i;
	/* the load alone compares fewer bytes than its relocated rel32: the
	 * span takes the instructions before it in its block (which run as
	 * they are), then those after it (the derived value rewritten where
	 * they leave it), until the module's rule (xk_rule_check_expect)
	 * holds */
	while (w.start > 0 && !c.leader[w.start] && too_masked(&c, &w))
		w.start--;
	while (w.end + 2 < c.base.nr && !c.leader[w.end + 1] &&
	       !c.base.insn[w.end + 1].is_branch &&
	       !c.base.insn[w.end + 1].is_call &&
	       !c.base.insn[w.end + 1].is_ret && too_masked(&c, &w))
		w.end++;
	err = sx_init(&w.s);
	if (err)
		goto out;
	w.s.no_mem_inputs = true;
	w.s.seed_is_load = true;
	w.s.seed_load_value = y0;
	for (size_t j = w.start; j <= w.end && !err; j++)
		err = sx_step(&w.s, &c.base.insn[j], c.seed[j]);
	if (err == -ENOTSUP)
		span_refuse(sp, "symbolic execution: %s", w.s.why);
	err = err ?: span_choose_locations(&c, &w, sp);
	/* the locations' programs read the registers at the probe point:
	 * none the span overwrote */
	for (int l = 0; !err && l < sp->nr_locs; l++)
		for (int r = 0; r < XK_NR_REGS; r++)
			if (w.s.reg_written[r] && sx_reads_reg(w.loc_expr[l], r)) {
				span_refuse(sp, "an input of the span is "
					    "overwritten inside it");
				err = -ENOTSUP;
				break;
			}
	if (!err) {
		sp->nr_params = w.s.nr_params;
		sp->fit[0][0] = fit[0];
		sp->fit[0][1] = fit[1];
	}
	err = err ?: span_compile_locations(&c, &w, sp);
	err = err ?: span_place_probe(&c, &w, sp);
	err = err ?: df_slice_forward(&c.base, f->sym.st_size, sp, w.end + 1);
	err = err ?: span_locate_imms(&c, &w, sp);
	err = err ?: span_obey_rules(sp);
	err = err ?: df_locate_args(&c.base, sp, w.end + 1);
	if (err == -ENOTSUP) {
		sp->start = c.base.insn[w.start].off;
		err = 0;
	}
	sx_free(&w.s);
out:
	span_free_ctx(&c);
	return err;
}

/*
 * A read-only variable the constant initialises, in one field of a*N + b
 * (data_span): its bytes are never written (the kernel maps them
 * read-only); each instruction that loads the field becomes a span whose
 * parameter is the loaded value (reader_span). The readers are found
 * in the code that holds them all: the shipped module (its relocations
 * name every reference to the variable: none may be a pointer to it, and
 * the variable must not be exported to other modules), or the baseline
 * object for a static variable of vmlinux. A global variable of vmlinux is
 * refused: any object may read it. 1 with the spans added (each supported
 * or refused), 0 with why, or -errno.
 */
static int reader_spans(const struct form_obj *o, const struct xk_sym *y,
			uint64_t off, uint32_t w, int64_t a, int64_t b,
			struct xk_scope *t, char *why, size_t size)
{
	const struct gen_input *in = o->in;
	const struct xk_obj *base = o->base;
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
			err = reader_span(in, src, f, insn, fit, a * in->def + b,
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
 * data_span's refusal of field off of y once a check found what code does
 * with it (why, which the reason quotes between before and after): 0.
 */
static int refuse_field(const struct xk_sym *y, uint64_t off,
			const char *before, const char *after, char *why,
			size_t size)
{
	char how[200];

	xk_strlcpy(how, why, sizeof(how));
	snprintf(why, size, "data: %s+0x%llx is initialised by the constant, "
		 "but %s%s%s", y->name, (unsigned long long)off, before, how,
		 after);
	return 0;
}

/*
 * A variable the constant initialises, as a span of class data: one aligned
 * field of 1, 2, 4 or 8 bytes that every build changes, holding a*N + b at
 * every build's N (an exact integer fit) and wide enough for the bounds.
 * 1 with *sp filled (the field, the compiled-in bytes, the fit); 0 with why
 * when the variable is no such setting. z: y in each build.
 */
static int data_span(const struct form_obj *o, const struct xk_sym *y,
		     const struct xk_sym *const *z, struct xk_scope *t,
		     char *why, size_t size)
{
	const struct gen_input *in = o->in;
	const struct xk_obj *base = o->base;
	uint64_t lo = UINT64_MAX, hi = 0, off = 0;
	uint32_t w;
	int64_t a = 0, b = 0;
	struct xk_scope_span *sp;
	char copy[200];
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
		return reader_spans(o, y, off, w, a, b, t, why, size);
	err = gen_code_writes(base, y, off, off + w, NULL, why, size, &writes);
	if (err)
		return err;
	if (writes)
		return refuse_field(y, off, "", ": a variable the kernel changes, "
				    "not a setting", why, size);
	err = boot_reads(base, y, off, off + w, why, size, &writes);
	if (err)
		return err;
	if (writes)
		return refuse_field(y, off, "boot-time code reads it (", "): what "
				    "it derived then keeps the compiled-in value",
				    why, size);
	err = copies_made(base, y, off, off + w, why, size, copy, sizeof(copy),
			  &writes);
	if (err)
		return err;
	if (writes)
		return refuse_field(y, off, "code copies it into per-CPU data (",
				    "): the copy of each CPU already up keeps the "
				    "compiled-in value where it is read", why, size);
	if (copy[0]) {
		char note[sizeof(t->notes[0])];

		snprintf(note, sizeof(note), "%s+0x%llx: %s copies it into an "
			 "object, which keeps the compiled-in value until the code "
			 "copies again, as every object made before the change",
			 y->name, (unsigned long long)off, copy);
		err = gen_add_note(t, note);
		if (err)
			return err;
	}
	err = gen_add_variable_span(t, in, y, off, w,
				    y->sec->data + y->sym.st_value + off, a, b, &sp);
	return err ?: 1;
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
 * The form's object pass: runs once per object, after the variants are
 * correlated, before its functions are analysed (not by shape: the first
 * analysis already refused what differs; not for the heap of one call).
 * A variable the constant initialises becomes a data span (or its readers
 * spans); any other data object, and function, whose data or addresses
 * differ in some build gets one refused span naming what differs.
 */
static int data_uses(const struct form_obj *o, struct xk_scope *t)
{
	const struct gen_input *in = o->in;
	const struct xk_obj *base = o->base, *var = o->var;

	if (in->by_shape || in->heap_call)
		return 0;
	struct gen_sym_index bx = { 0 }, vx[GEN_NR_VARIANTS] = { 0 };
	char why[sizeof(t->spans[0].why)];
	int err = gen_index_symbols(base, &bx);

	for (int v = 0; v < GEN_NR_VARIANTS && !err; v++)
		err = gen_index_symbols(&var[v], &vx[v]);
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
				if (!gen_same_relas(&bx, y, &vx[v], z, why, sizeof(why)))
					break;
			}
			if (v < GEN_NR_VARIANTS)
				err = refuse_use(t, in, y, 0, why);
			continue;
		}
		if (!gen_data_object(y))
			continue;
		for (v = 0; v < GEN_NR_VARIANTS; v++) {
			const struct xk_sym *z = gen_find_object(&var[v], y);

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
			if (!gen_same_relas(&bx, y, &vx[v], z, why, sizeof(why)))
				break;
			if (!gen_same_bytes(y, z, &at)) {
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
			int got = data_span(o, y, zs, t, why, sizeof(why));

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

const struct gen_form form_variables = {
	.name = "variables",
	.object = data_uses,
};
