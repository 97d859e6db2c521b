// SPDX-License-Identifier: GPL-2.0
/* libxk: the disassembler (capstone) behind a small interface. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "object.h"

static const struct {
	unsigned int reg;
	int gpr, width;
	bool high8;
} gprs[] = {
#define R4(g, q, d, w, b) { X86_REG_##q, g, 64, 0 }, { X86_REG_##d, g, 32, 0 }, \
			  { X86_REG_##w, g, 16, 0 }, { X86_REG_##b, g, 8, 0 }
	R4(XK_RAX, RAX, EAX, AX, AL), R4(XK_RCX, RCX, ECX, CX, CL),
	R4(XK_RDX, RDX, EDX, DX, DL), R4(XK_RBX, RBX, EBX, BX, BL),
	R4(XK_RSP, RSP, ESP, SP, SPL), R4(XK_RBP, RBP, EBP, BP, BPL),
	R4(XK_RSI, RSI, ESI, SI, SIL), R4(XK_RDI, RDI, EDI, DI, DIL),
	R4(XK_R8, R8, R8D, R8W, R8B), R4(XK_R9, R9, R9D, R9W, R9B),
	R4(XK_R10, R10, R10D, R10W, R10B), R4(XK_R11, R11, R11D, R11W, R11B),
	R4(XK_R12, R12, R12D, R12W, R12B), R4(XK_R13, R13, R13D, R13W, R13B),
	R4(XK_R14, R14, R14D, R14W, R14B), R4(XK_R15, R15, R15D, R15W, R15B),
	{ X86_REG_AH, XK_RAX, 8, 1 }, { X86_REG_CH, XK_RCX, 8, 1 },
	{ X86_REG_DH, XK_RDX, 8, 1 }, { X86_REG_BH, XK_RBX, 8, 1 },
#undef R4
};

int xk_gpr(unsigned int cs_reg, int *width, bool *high8)
{
	for (size_t i = 0; i < ARRAY_SIZE(gprs); i++) {
		if (gprs[i].reg == cs_reg) {
			if (width)
				*width = gprs[i].width;
			if (high8)
				*high8 = gprs[i].high8;
			return gprs[i].gpr;
		}
	}
	return -1;
}

/*
 * A static_cpu_has() site (arch/x86/include/asm/cpufeature.h): its jmp r
 * into .altinstr_aux, where `testb $bit, cap_byte; jnz t_yes; jmp t_no`
 * runs until alternatives patch the jmp at boot, for good, into NOPs (the
 * feature is there: fall through) or `jmp t_no`. So once the kernel runs,
 * the site is a conditional jump to t_no: the offset of t_no in f, or -1
 * when the aux code is not that form (a label outside f, a store, no jmp
 * within 64 bytes).
 */
static int64_t alt_site_target(csh h, const struct xk_sym *f, uint64_t in_end,
			       const struct xk_rela *r)
{
	const struct xk_sec *aux = r->sym->sec;
	uint64_t at = r->sym->sym.st_value + (uint64_t)r->addend + (in_end - r->offset);
	int64_t target = -1;
	size_t n;
	cs_insn *ci;

	if (!aux->data || at >= aux->sh.sh_size)
		return -1;
	n = cs_disasm(h, aux->data + at, aux->sh.sh_size - at < 64 ?
		      aux->sh.sh_size - at : 64, at, 0, &ci);
	for (size_t i = 0; i < n; i++) {
		const cs_x86 *x = &ci[i].detail->x86;
		bool jump = cs_insn_group(h, &ci[i], X86_GRP_JUMP);
		const struct xk_rela *ra;
		uint64_t t;

		if (!jump) {
			bool store = cs_insn_group(h, &ci[i], X86_GRP_CALL) ||
				     cs_insn_group(h, &ci[i], X86_GRP_RET);

			for (int k = 0; k < x->op_count; k++)
				store |= x->operands[k].type == X86_OP_MEM &&
					 (x->operands[k].access & CS_AC_WRITE) &&
					 ci[i].id != X86_INS_TEST &&
					 ci[i].id != X86_INS_CMP;
			if (store)
				break;
			continue;
		}
		if (ci[i].id != X86_INS_JMP)
			continue;	/* jnz t_yes: the boot-time path only */
		ra = xk_rela_in(aux, ci[i].address, ci[i].address + ci[i].size);
		if (!ra || !ra->sym || ra->sym->sec != f->sec)
			break;
		t = ra->sym->sym.st_value + (uint64_t)ra->addend +
		    (ci[i].address + ci[i].size - ra->offset);
		if (t >= f->sym.st_value && t < f->sym.st_value + f->sym.st_size)
			target = (int64_t)(t - f->sym.st_value);
		break;
	}
	if (n)
		cs_free(ci, n);
	return target;
}

static void fill_insn(csh h, const cs_insn *ci, uint64_t base,
		      const struct xk_sym *f, struct xk_insn *in)
{
	const cs_x86 *x = &ci->detail->x86;
	cs_regs rr, ww;
	uint8_t nr = 0, nw = 0;

	memset(in, 0, sizeof(*in));
	in->off = ci->address - base;
	in->len = ci->size;
	memcpy(in->bytes, ci->bytes, ci->size < 16 ? ci->size : 16);
	in->id = ci->id;
	snprintf(in->text, sizeof(in->text), "%s%s%s", ci->mnemonic,
		 ci->op_str[0] ? " " : "", ci->op_str);
	in->x86 = *x;
	in->target = -1;
	in->fixup = -1;
	in->is_call = cs_insn_group(h, ci, X86_GRP_CALL);
	in->is_ret = cs_insn_group(h, ci, X86_GRP_RET) ||
		     cs_insn_group(h, ci, X86_GRP_IRET);
	in->is_branch = cs_insn_group(h, ci, X86_GRP_JUMP);
	in->is_cond = in->is_branch && ci->id != X86_INS_JMP;
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_IMM && !in->has_imm) {
			in->has_imm = true;
			in->imm = op->imm;
		}
		if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP)
			in->rip_relative = true;
	}
	if ((in->is_branch || in->is_call) && x->op_count == 1 &&
	    x->operands[0].type == X86_OP_IMM) {
		in->target = x->operands[0].imm - base;
		in->has_imm = false;	/* a target, not a constant */
	}
	in->has_reloc = xk_func_reloc_at(f, in->off, in->len);
	in->reloc_imm = in->has_reloc && x->encoding.imm_offset &&
			xk_func_reloc_at(f, in->off + x->encoding.imm_offset,
					 x->encoding.imm_size);
	in->reloc_disp = in->has_reloc && x->encoding.disp_offset &&
			 xk_func_reloc_at(f, in->off + x->encoding.disp_offset,
					  x->encoding.disp_size);
	/* a relocated jump leaves the function: a tail call or the return
	 * thunk (RETHUNK builds turn ret into jmp __x86_return_thunk); but a
	 * static_cpu_has() site stays in it (alt_site_target), and one whose
	 * labels are not found goes anywhere (as an indirect jump) */
	if (in->is_branch && in->has_reloc) {
		uint64_t start = f->sym.st_value + in->off;
		const struct xk_rela *r = xk_insn_rela(f, in);

		in->target = -1;
		if (r && r->sym && r->sym->sec &&
		    !strcmp(r->sym->sec->name, ".altinstr_aux") &&
		    ci->id == X86_INS_JMP) {
			in->target = alt_site_target(h, f, start + in->len, r);
			in->alt_site = in->target >= 0;
			in->is_cond = in->alt_site;
		} else if (!in->is_cond) {
			in->is_ret = true;
			in->tail_call = !r || !r->sym || !r->sym->name ||
					strcmp(r->sym->name, "__x86_return_thunk");
		}
	} else if (ci->id == X86_INS_JMP && x->op_count == 1 &&
		   x->operands[0].type == X86_OP_IMM &&
		   (in->target < 0 || in->target >= (int64_t)f->sym.st_size)) {
		/* a direct jmp out of the function's bytes (to another
		 * function of the same section, resolved by the assembler):
		 * a tail call as well */
		in->tail_call = true;
	}
	/* a static call (call __SCT__name): patched by static_call_update(),
	 * and kprobes refuses its site (static_call_text_reserved()) */
	if (in->is_call && in->has_reloc) {
		const struct xk_rela *r = xk_insn_rela(f, in);

		if (r && r->sym && r->sym->name && !strncmp(r->sym->name, "__SCT__", 7))
			in->unprobeable = true;
	}
	/* the diff's view: targets and relocated fields do not count */
	if (in->target >= 0 || (in->is_call && in->has_reloc))
		snprintf(in->norm, sizeof(in->norm), "%s <T>", ci->mnemonic);
	else
		memcpy(in->norm, in->text, sizeof(in->norm));
	if (!cs_regs_access(h, ci, rr, &nr, ww, &nw)) {
		in->nr_read = nr < 20 ? nr : 20;
		in->nr_write = nw < 20 ? nw : 20;
		memcpy(in->regs_read, rr, in->nr_read * sizeof(rr[0]));
		memcpy(in->regs_write, ww, in->nr_write * sizeof(ww[0]));
	}
}

/*
 * The exception table's edges of f: an entry (12 bytes: insn and fixup as
 * pc32, data) whose instruction is in f makes a fault there resume at its
 * fixup (uaccess, *_safe MSR reads), a successor the control-flow graph
 * must have. A fixup outside f, or on no instruction of it, is
 * XK_FIXUP_ELSEWHERE: a safe span that reaches the instruction is refused.
 */
static int add_fixups(const struct xk_sym *f, struct xk_func_code *code)
{
	const struct xk_obj *o = f->sec->obj;

	for (size_t i = 0; o && i < o->nr_secs; i++) {
		const struct xk_sec *s = &o->secs[i];

		if (strcmp(s->name, "__ex_table"))
			continue;
		for (size_t r = 0; r < s->nr_relas; r++) {
			const struct xk_rela *ri = &s->relas[r], *rf = NULL;
			int64_t at, to;
			ssize_t k, t;

			at = ri->offset % 12 ? -1 : xk_rela_in_func(ri, f);
			if (at < 0)
				continue;
			/* the fixup's relocation: the next one, as assemblers
			 * emit them, else found by a scan */
			if (r + 1 < s->nr_relas && s->relas[r + 1].offset == ri->offset + 4)
				rf = &s->relas[r + 1];
			for (size_t q = 0; q < s->nr_relas && !rf; q++)
				if (s->relas[q].offset == ri->offset + 4)
					rf = &s->relas[q];
			to = rf ? xk_rela_in_func(rf, f) : -1;
			k = xk_code_index(code, (uint64_t)at);
			t = to >= 0 ? xk_code_index(code, (uint64_t)to) : -1;
			if (k >= 0)
				code->insn[k].fixup = t >= 0 ?
					(int64_t)code->insn[t].off : XK_FIXUP_ELSEWHERE;
		}
	}
	return 0;
}

/*
 * Static branches of f: a jump-label site is a NOP or a jump in the shipped
 * object, and the kernel patches it between the two whenever its key
 * changes (a tracepoint enabled, a static key flipped by a sysctl), so both
 * ways are successors: a jcc to the entry's target. The variants keep the
 * compiler's jump where objtool made the baseline's a NOP; both have the
 * same text for the diff. A target outside f (never seen in C) is an
 * unknown jump: a span reaching it with derived data live is refused.
 */
static void add_jump_labels(const struct xk_sym *f, struct xk_func_code *code)
{
	for (size_t i = 0; i < code->nr; i++) {
		struct xk_insn *in = &code->insn[i];
		const struct xk_jump_label *jl = xk_jump_label_site(f, in->off);
		int64_t to;

		if (!jl)
			continue;
		to = jl->target_sec == f->sec->index ?
		     (int64_t)(jl->target - f->sym.st_value) : -1;
		in->jump_label = true;
		in->unprobeable = true;
		in->is_branch = true;
		in->is_ret = false;
		in->tail_call = false;
		in->has_imm = false;
		in->is_cond = to >= 0 && to < (int64_t)f->sym.st_size &&
			      xk_code_index(code, (uint64_t)to) >= 0;
		in->target = in->is_cond ? to : -1;
		snprintf(in->norm, sizeof(in->norm), "jump_label <T>");
	}
}

/*
 * BUG() and WARN() sites of f: their ud2, named by __bug_table entries
 * (12 bytes: the address as pc32 first), which kprobes refuses to probe
 * (find_bug()); a probe point or an exit of a span must not be one.
 */
static void add_bug_sites(const struct xk_sym *f, struct xk_func_code *code)
{
	const struct xk_obj *o = f->sec->obj;

	for (size_t i = 0; o && i < o->nr_secs; i++) {
		const struct xk_sec *s = &o->secs[i];

		if (strcmp(s->name, "__bug_table"))
			continue;
		for (size_t r = 0; r < s->nr_relas; r++) {
			int64_t at = s->relas[r].offset % 12 ? -1 :
				     xk_rela_in_func(&s->relas[r], f);
			ssize_t k;

			if (at < 0)
				continue;
			k = xk_code_index(code, (uint64_t)at);
			if (k >= 0)
				code->insn[k].unprobeable = true;
		}
	}
}

/* What instructions do to data, as far as a slice cares: the GPRs (by
 * XK_RAX..XK_R15) and the flags (bit 16) they read and write, memory they
 * read or write, and whether they branch, call or return. */
#define ALT_FLAGS (1u << 16)
#define ALT_RSP (1u << XK_RSP)
#define ALT_CALL_CLOBBERS ((1u << XK_RAX) | (1u << XK_RCX) | (1u << XK_RDX) | \
			   (1u << XK_RSI) | (1u << XK_RDI) | (1u << XK_R8) | \
			   (1u << XK_R9) | (1u << XK_R10) | (1u << XK_R11))
struct data_effect {
	uint32_t read, write;
	bool mem_read, mem_write, call, flow;
};

static void add_effect(csh h, cs_insn *ci, struct data_effect *e)
{
	cs_regs rr, ww;
	uint8_t nr = 0, nw = 0;

	/* no data: NOPs, fences, and stac/clac (the AC flag alone, which no
	 * code of the slice tests) */
	if (ci->id == X86_INS_NOP || ci->id == X86_INS_LFENCE ||
	    ci->id == X86_INS_MFENCE || ci->id == X86_INS_SFENCE ||
	    ci->id == X86_INS_CLAC || ci->id == X86_INS_STAC)
		return;
	if (cs_insn_group(h, ci, CS_GRP_CALL))
		e->call = true;
	else if (cs_insn_group(h, ci, CS_GRP_JUMP) || cs_insn_group(h, ci, CS_GRP_RET) ||
		 cs_insn_group(h, ci, CS_GRP_INT) || cs_insn_group(h, ci, CS_GRP_IRET))
		e->flow = true;
	if (cs_regs_access(h, ci, rr, &nr, ww, &nw)) {
		e->flow = true;		/* not known: as a branch */
		return;
	}
	for (int k = 0; k < nr + nw; k++) {
		unsigned int reg = k < nr ? rr[k] : ww[k - nr];
		uint32_t *set = k < nr ? &e->read : &e->write;
		int width, g;
		bool high8;

		if (reg == X86_REG_EFLAGS) {
			*set |= ALT_FLAGS;
		} else if ((g = xk_gpr(reg, &width, &high8)) >= 0) {
			*set |= 1u << g;
			/* an 8- or 16-bit write keeps the rest: a read too */
			if (k >= nr && width < 32)
				e->read |= 1u << g;
		}
	}
	for (int k = 0; ci->id != X86_INS_LEA && k < ci->detail->x86.op_count; k++) {
		const cs_x86_op *op = &ci->detail->x86.operands[k];

		if (op->type != X86_OP_MEM)
			continue;
		e->mem_read |= !!(op->access & CS_AC_READ);
		e->mem_write |= !!(op->access & CS_AC_WRITE);
	}
}

/*
 * Why the replacement of entry a moves data otherwise than the site's own
 * instructions (their effect: site), or NULL. The same effect: no branch,
 * call or return in either, the same registers and flags written, none
 * read that the site does not read, and no memory operand in either (the
 * slice follows stack slots, which another address would move; Linux
 * 6.1's TASK_SIZE_MAX is a movabs for another movabs). A call (a paravirt
 * op) may become another call or native code that writes only what a
 * call may clobber and reads no register, so no data the slice may hold
 * derived (a direct call, sti, cli); it may read the flags, as the op's
 * own function does (pushf; pop %rax for save_fl: its result is the
 * call's, which the slice takes for no derived data either way).
 */
static const char *replacement_differs(csh h, const struct xk_obj *o,
				       const struct xk_alt_site *a,
				       const struct data_effect *site, bool site_call)
{
	struct data_effect repl = {};
	const struct xk_sec *rs;
	size_t n, size;
	cs_insn *ci;

	if (a->repl_len) {
		if (a->repl_sec >= o->nr_secs || !o->secs[a->repl_sec].data)
			return "its replacement is not in the object";
		rs = &o->secs[a->repl_sec];
		size = rs->sh.sh_size;
		if (a->repl_off > size || a->repl_len > size - a->repl_off)
			return "its replacement is not in the object";
		n = cs_disasm(h, rs->data + a->repl_off, a->repl_len, 0, 0, &ci);
		if (!n)
			return "its replacement does not disassemble";
		for (size_t k = 0; k < n; k++)
			add_effect(h, &ci[k], &repl);
		cs_free(ci, n);
		/* relocated: a call's target is the call's business;
		 * anything else, an address the slice cannot read */
		for (size_t r = 0; !repl.call && r < rs->nr_relas; r++)
			if (rs->relas[r].offset >= a->repl_off &&
			    rs->relas[r].offset < a->repl_off + a->repl_len)
				return "its replacement is relocated (a jump or an "
				       "address)";
	}
	if (site_call && !repl.flow) {
		if (repl.write & ~(ALT_CALL_CLOBBERS | ALT_RSP | ALT_FLAGS))
			return "its replacement of a call writes registers a call "
			       "keeps";
		if ((repl.read & ~(ALT_RSP | ALT_FLAGS)) || repl.mem_read ||
		    repl.mem_write)
			return "its replacement of a call reads registers or memory "
			       "(it may move derived data where the slice does not "
			       "look)";
		return NULL;
	}
	if (site->flow || repl.flow || site->call || repl.call)
		return "it or its replacement branches, calls or returns";
	if (repl.read & ~site->read)
		return "its replacement reads registers the site does not";
	if (site->write != repl.write)
		return "its replacement writes other registers or flags";
	if (site->mem_read || site->mem_write || repl.mem_read || repl.mem_write)
		return "it or its replacement accesses memory";
	return NULL;
}

/*
 * Alternatives' sites of f whose replacements move data otherwise than the
 * site's own instructions: the slice reads the object's instructions, the
 * kernel may run any replacement (the CPU's features choose at boot or
 * load). Every entry of a site is compared (ALTERNATIVE_2 has one per
 * replacement), over the longest of their lengths. A static_cpu_has() site
 * is a branch the slice follows both ways already (alt_site).
 */
static void add_alternatives(csh h, const struct xk_sym *f, struct xk_func_code *code)
{
	const struct xk_obj *o = f->sec->obj;

	for (size_t i = 0; o && i < code->nr; i++) {
		const struct xk_alt_site *a = xk_alternative_site(f, code->insn[i].off, NULL);
		struct data_effect site = {};
		const char *why = NULL;
		unsigned int len = 0;
		size_t end = i, n;
		cs_insn *ci;

		if (!a || code->insn[i].alt_site)
			continue;
		for (const struct xk_alt_site *e = a; e;
		     e = xk_alternative_site(f, code->insn[i].off, e))
			len = e->len > len ? e->len : len;
		while (end < code->nr && code->insn[end].off < code->insn[i].off + len)
			end++;
		if (code->insn[i].off + len > f->sym.st_size) {
			why = "it runs past the function";
		} else if (len) {
			n = cs_disasm(h, xk_func_bytes(f) + code->insn[i].off, len, 0, 0, &ci);
			for (size_t k = 0; k < n; k++)
				add_effect(h, &ci[k], &site);
			if (n)
				cs_free(ci, n);
		}
		for (const struct xk_alt_site *e = a; e && !why;
		     e = xk_alternative_site(f, code->insn[i].off, e))
			why = replacement_differs(h, o, e, &site, code->insn[i].is_call);
		for (size_t k = i; why && k < end; k++)
			code->insn[k].alt_differs = why;
		i = end > i ? end - 1 : i;
	}
}

int xk_disasm_func(const struct xk_sym *f, struct xk_func_code *code)
{
	const uint8_t *bytes = xk_func_bytes(f);
	uint64_t base = 0;	/* offsets in the function are what count */
	size_t size = f->sym.st_size, n;
	cs_insn *ci;
	csh h;

	memset(code, 0, sizeof(*code));
	code->sym = f;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return xk_err(-EINVAL, "capstone: cannot open x86-64");
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	cs_option(h, CS_OPT_SKIPDATA, CS_OPT_ON);
	n = cs_disasm(h, bytes, size, base, 0, &ci);
	if (!n) {
		cs_close(&h);
		return xk_err(-EINVAL, "cannot disassemble %s", f->name);
	}
	code->insn = calloc(n, sizeof(*code->insn));
	if (!code->insn) {
		cs_free(ci, n);
		cs_close(&h);
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	}
	for (size_t i = 0; i < n; i++)
		if (ci[i].detail)
			fill_insn(h, &ci[i], base, f, &code->insn[code->nr++]);
	cs_free(ci, n);
	add_alternatives(h, f, code);
	cs_close(&h);
	add_jump_labels(f, code);
	add_bug_sites(f, code);
	return add_fixups(f, code);
}

void xk_func_code_free(struct xk_func_code *code)
{
	free(code->insn);
	memset(code, 0, sizeof(*code));
}

ssize_t xk_code_index(const struct xk_func_code *c, uint64_t off)
{
	size_t lo = 0, hi = c->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->insn[mid].off == off)
			return mid;
		if (c->insn[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

const char *xk_callee_name(const struct xk_sym *f, const struct xk_insn *in)
{
	const struct xk_rela *r;
	uint64_t at;

	if (!f || !f->sec || in->len != 5 ||
	    (in->bytes[0] != 0xe8 && in->bytes[0] != 0xe9))	/* call, jmp */
		return NULL;
	at = f->sym.st_value + in->off;
	r = xk_rela_in(f->sec, at + 1, at + 5);
	return r && r->sym ? r->sym->name : NULL;
}
