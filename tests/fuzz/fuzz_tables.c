// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_tables: a scope table is an adversary's data. Starting from a valid
 * table (its text format, docs/scope-table.md, read here by a small parser
 * of the fields the ioctl needs), sends mutated XK_IOC_LOAD requests to
 * /dev/xkernel: bit flips, every field at its boundaries, truncated and
 * oversized requests, huge span counts, overflowing displacements, masks
 * all zero, bogus user pointers. Each must be refused with an error or
 * applied safely; an applied one is unloaded at once. Prints the count of
 * each outcome (refused per errno, applied).
 *
 *   fuzz_tables --check TABLE...     the ABI rules on each span (no device)
 *   fuzz_tables --cases TABLE        one request per rule: the refusal named
 *   fuzz_tables --replays [-n N] [-s SEED] TABLE
 *                                    mutated XK_IOC_REPLAY requests to a
 *                                    loaded replayed table
 *   fuzz_tables [-n N] [-s SEED] TABLE
 *
 * Plain C with the ABI headers only: gcc -O2 -Wall -Iinclude/xk/abi.
 * Mutated spans are loaded at the default value (nothing is rewritten:
 * the module cannot check what a register means, docs/security.md), most
 * of them for a policy (validated in full, probes left disarmed); the
 * value and bounds are mutated only with the table's own spans.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "xk_ioctl.h"

/* ---- the table's text format, the fields the ioctl carries ---- */

struct table {
	char name[XK_NAME_MAX];
	long long def, min, max;
	unsigned int nr_spans;
	struct xk_ioc_span spans[XK_MAX_SPANS];
	/* replayed spans' replays (--replays), span index in span */
	unsigned int nr_replays;
	struct xk_ioc_replay replays[64];
};

static const char *const reg_names[XK_NR_REGS] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

static int reg_of(const char *s)
{
	for (int r = 0; r < XK_NR_REGS; r++)
		if (!strcmp(s, reg_names[r]))
			return r;
	return -1;
}

static int parse_loc(char *p, struct xk_ioc_loc *l)
{
	char *name = strtok(p, " "), *w = strtok(NULL, " "), *tok;

	if (!name || !w)
		return -1;
	memset(l, 0, sizeof(*l));
	l->width = atoi(w);
	if (!strcmp(name, "flags")) {
		l->kind = XK_LOC_FLAGS;
	} else if (!strncmp(name, "mem:rip:", 8)) {
		l->kind = XK_LOC_MEM;
		l->base = XK_BASE_RIP;
		if (sscanf(name + 8, "%lld:%u", (long long *)&l->disp, &l->rip_end) != 2)
			return -1;
	} else if (!strncmp(name, "mem:", 4)) {
		char reg[8];

		l->kind = XK_LOC_MEM;
		if (sscanf(name + 4, "%7[a-z0-9]:%lld", reg, (long long *)&l->disp) != 2 ||
		    (l->base = reg_of(reg)) < 0)
			return -1;
	} else if ((l->kind = reg_of(name)) < 0) {
		return -1;
	}
	while ((tok = strtok(NULL, " ")) && l->expr.len < XK_EXPR_MAX_INSNS) {
		struct xk_expr_insn *in = &l->expr.insn[l->expr.len++];
		char op[16];
		unsigned int width, reg;
		long long imm, imm2;

		if (sscanf(tok, "%15[a-z_]:%u:%u:%lld:%lld", op, &width, &reg, &imm,
			   &imm2) != 5)
			return -1;
		for (in->op = 1; in->op < XK_OP_MAX && strcmp(op, xk_op_name(in->op));
		     in->op++)
			;
		if (in->op == XK_OP_MAX)
			return -1;
		in->width = width;
		in->reg = reg;
		in->imm = imm;
		in->imm2 = imm2;
	}
	return 0;
}

static int parse_table(const char *path, struct table *t)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	struct xk_ioc_span *s = NULL;
	struct xk_ioc_replay *replay = NULL;	/* its lines follow "replay" */
	int bad = 0;

	if (!f)
		return perror(path), -1;
	memset(t, 0, sizeof(*t));
	while (fgets(line, sizeof(line), f) && !bad) {
		char *v = strchr(line, ' ');

		line[strcspn(line, "\n")] = '\0';
		if (v)
			*v++ = '\0';
		else
			v = line + strlen(line);
		if (!strcmp(line, "constant")) {
			snprintf(t->name, sizeof(t->name), "%s", v);
		} else if (!strcmp(line, "default")) {
			t->def = strtoll(v, NULL, 10);
		} else if (!strcmp(line, "bounds")) {
			bad = sscanf(v, "%lld %lld", &t->min, &t->max) != 2;
		} else if (!strcmp(line, "span")) {
			replay = NULL;
			if (t->nr_spans == XK_MAX_SPANS)
				bad = 1;
			else
				s = &t->spans[t->nr_spans++];
		} else if (!s) {
			continue;
		} else if (!strcmp(line, "function")) {
			bad = sscanf(v, "%127s %llu", s->func,
				     (unsigned long long *)&s->func_size) != 2;
		} else if (!strcmp(line, "class")) {
			bad = !strcmp(v, "unsupported");
		} else if (!strcmp(line, "start")) {
			s->start = strtoull(v, NULL, 16);
		} else if (!strcmp(line, "probe")) {
			s->probe = strtoull(v, NULL, 16);
		} else if (!strcmp(line, "expect")) {
			for (char *b = strtok(v, " "); b && s->expect_len < XK_MAX_EXPECT;
			     b = strtok(NULL, " ")) {
				int masked = !strcmp(b, "??");

				s->expect[s->expect_len] = masked ? 0 : strtoul(b, NULL, 16);
				s->expect_mask[s->expect_len++] = masked ? 0 : 0xff;
			}
		} else if (!strcmp(line, "emulate")) {
			s->emulate = !strcmp(v, "replay") ? XK_EMULATE_REPLAY :
				     XK_EMULATE_SPAN;
		} else if (!strcmp(line, "replay")) {
			struct xk_ioc_replay *r = &t->replays[t->nr_replays];

			if (t->nr_replays == sizeof(t->replays) / sizeof(t->replays[0])) {
				replay = NULL;	/* more than kept: ignored */
				continue;
			}
			memset(r, 0, sizeof(*r));
			r->size = sizeof(*r);
			r->span = t->nr_spans - 1;
			r->value = strtoll(v, NULL, 10);
			memcpy(r->name, t->name, sizeof(r->name));
			replay = r;
			t->nr_replays++;
		} else if (!strcmp(line, "input") && replay) {
			struct xk_ioc_mem_in *m = &replay->mem_in[replay->nr_mem_in];
			char reg[8], idx[8];
			int k, n = 0;
			long long disp;

			bad = replay->nr_mem_in == XK_MAX_MEM_INPUTS ||
			      (n = sscanf(v, "%d %7s %lld %u %7s %u", &k, reg, &disp,
					  &m->width, idx, &m->scale)) < 4 || n == 5 ||
			      (m->base = reg_of(reg)) < 0 ||
			      (n == 6 && (m->index = reg_of(idx)) < 0);
			m->disp = disp;
			replay->nr_mem_in++;
		} else if (!strcmp(line, "loc") && replay) {
			if (replay->nr_locs == XK_REPLAY_MAX_LOCS ||
			    parse_loc(v, &replay->locs[replay->nr_locs++]))
				bad = 1;
		} else if (!strcmp(line, "loc")) {
			if (s->nr_locs == XK_MAX_LOCS ||
			    parse_loc(v, &s->locs[s->nr_locs++]))
				bad = 1;
		} else if (!strcmp(line, "safe")) {
			for (char *x = strtok(v, " "); x && s->nr_exits < XK_MAX_EXITS;
			     x = strtok(NULL, " "))
				s->exits[s->nr_exits++] = strtoull(x, NULL, 16);
		} else if (!strcmp(line, "ranges")) {
			unsigned long long a, b;
			int used;

			while (s->nr_ranges < XK_MAX_RANGES &&
			       sscanf(v, " %llx-%llx%n", &a, &b, &used) == 2) {
				s->ranges[s->nr_ranges][0] = a;
				s->ranges[s->nr_ranges++][1] = b;
				v += used;
			}
		} else if (!strcmp(line, "escapes")) {
			s->escapes = (strstr(v, "store") ? XK_ESCAPE_STORE : 0) |
				     (strstr(v, "call") ? XK_ESCAPE_CALL : 0) |
				     (strstr(v, "ret") ? XK_ESCAPE_RET : 0);
		} else if (!strcmp(line, "fit")) {
			int k;
			long long a, b;

			bad = sscanf(v, "%d %lld %lld", &k, &a, &b) != 3 ||
			      k < 0 || k >= XK_MAX_PARAMS;
			if (!bad) {
				s->imms[k].a = a;
				s->imms[k].b = b;
			}
		} else if (!strcmp(line, "imm")) {
			struct xk_ioc_imm *m = &s->imms[s->nr_imms];
			unsigned long long insn, field;
			int k;

			bad = s->nr_imms == XK_MAX_PARAMS ||
			      sscanf(v, "%d %llx %u %llx %u %u", &k, &insn,
				     &m->insn_len, &field, &m->size, &m->width) != 6 ||
			      k != (int)s->nr_imms;
			if (!bad) {
				m->insn = insn;
				m->field = field;
				s->nr_imms++;
			}
		} else if (!strcmp(line, "copies")) {
			bad = atoi(v) != 1;	/* candidates: not modelled here */
		}
	}
	fclose(f);
	if (bad || !t->nr_spans || !t->name[0]) {
		fprintf(stderr, "%s: not a table this fuzzer reads (unsupported span, "
			"copies, or malformed)\n", path);
		return -1;
	}
	return 0;
}

/* ---- --check: the rules both halves apply, on each span of each table ---- */

static int check_tables(int argc, char **argv)
{
	static struct table t;
	int bad = 0;

	for (int i = 0; i < argc; i++) {
		if (parse_table(argv[i], &t)) {
			printf("skip %s\n", argv[i]);
			continue;
		}
		for (unsigned int k = 0; k < t.nr_spans; k++) {
			const char *why = xk_ioc_span_check(&t.spans[k]);

			printf("%s %s span %u%s%s\n", why ? "REFUSED" : "ok", t.name, k,
			       why ? ": " : "", why ? why : "");
			bad |= !!why;
		}
	}
	return bad;
}

/* ---- --cases: one request per rule, the refusal it must get ---- */

struct load_buf {
	struct xk_ioc_load req;
	struct xk_ioc_span spans[XK_MAX_SPANS];
};

static void base_request(struct load_buf *b, const struct table *t)
{
	memset(b, 0, sizeof(*b));
	b->req.size = sizeof(b->req);
	b->req.nr_spans = t->nr_spans;
	snprintf(b->req.name, sizeof(b->req.name), "%s", t->name);
	b->req.def = b->req.value = t->def;
	b->req.min = t->min;
	b->req.max = t->max;
	b->req.mode = XK_MODE_IMMEDIATE;
	memcpy(b->spans, t->spans, t->nr_spans * sizeof(b->spans[0]));
	b->req.spans = (uintptr_t)b->spans;
}

/*
 * A symbol's address in /proc/kallsyms (of module mod, or vmlinux's when
 * NULL) and its size there (to the next symbol's address); 0 if none.
 */
static unsigned long long ksym(const char *name, const char *mod,
			       unsigned long long *size)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long a, found = 0, next = ~0ULL;
	char line[512], type, sym[256], m[64];

	*size = 0;
	if (!f)
		return 0;
	/* first the symbol, then the nearest address above it */
	for (int pass = 0; pass < 2; pass++) {
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			int n = sscanf(line, "%llx %c %255s [%63[^]]]", &a, &type, sym, m);

			if (n < 3)
				continue;
			if (!pass && !found && !strcmp(sym, name) &&
			    (mod ? n == 4 && !strcmp(m, mod) : n == 3))
				found = a;
			if (pass && found && a > found && a < next)
				next = a;
		}
		if (!found)
			break;
	}
	fclose(f);
	*size = found && next != ~0ULL ? next - found : 0;
	return found;
}

/* Span s made a variable's (XK_EMULATE_DATA): a 4-byte field at start of
 * the size-byte object name at addr (0: no address), expecting bytes. */
static void make_variable(struct xk_ioc_span *s, const char *name,
			  unsigned long long size, unsigned long long addr,
			  const char *bytes)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->func, sizeof(s->func), "%s", name);
	s->func_size = size ? size : 8;
	s->probe = 4;
	s->expect_len = 4;
	memcpy(s->expect, bytes, 4);
	memset(s->expect_mask, 0xff, 4);
	s->emulate = XK_EMULATE_DATA;
	s->nr_imms = 1;
	s->imms[0] = (struct xk_ioc_imm){ .insn = 0, .field = 0, .insn_len = 4,
					  .size = 4, .width = 32, .a = 1, .b = 0 };
	s->nr_cands = addr ? 1 : 0;
	s->cands[0] = addr;
}

/* Span s made the variable name (of module mod, or vmlinux's) as kallsyms
 * has it now: its address and size, a 4-byte field at 0 expecting bytes. */
static void live_variable(struct xk_ioc_span *s, const char *name,
			  const char *mod, const char *bytes)
{
	unsigned long long size, addr = ksym(name, mod, &size);
	char func[XK_FUNC_MAX];

	snprintf(func, sizeof(func), "%s%s%s", mod ? mod : "", mod ? ":" : "",
		 name);
	make_variable(s, func, size, addr, bytes);
}

/* The name bss_variable or module_variable found. */
static char found_name[XK_FUNC_MAX];

/*
 * The first variable of the kernel's bss (type b, between __bss_start and
 * __bss_stop) of 4 to 64 bytes, not page-aligned and no name the deny list
 * refuses first: its address, *size, found_name; 0 if none.
 */
static unsigned long long bss_variable(unsigned long long *size)
{
	unsigned long long from, to, a, s;
	char line[512], type, sym[256];
	FILE *f;

	from = ksym("__bss_start", NULL, &s);
	to = ksym("__bss_stop", NULL, &s);
	f = fopen("/proc/kallsyms", "r");
	if (!f || !from || !to)
		return f ? fclose(f), 0 : 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) != 3 ||
		    strchr(line, '[') || type != 'b' || a <= from || a >= to ||
		    !(a & 0xfff) || strlen(sym) >= XK_FUNC_MAX ||
		    xk_rule_security_variable(sym))
			continue;
		if (ksym(sym, NULL, size) != a || *size < 4 || *size > 64)
			continue;
		snprintf(found_name, sizeof(found_name), "%s", sym);
		fclose(f);
		return a;
	}
	fclose(f);
	return 0;
}

/*
 * The first data variable (d) of an in-tree module (no taint in
 * /sys/module/M/taint) of 4 to 64 bytes, no name the deny list refuses:
 * its address, *size, found_name (bare); 0 if none.
 */
static unsigned long long module_variable(unsigned long long *size)
{
	char line[512], type, sym[256], m[64], path[128], taint[16];
	unsigned long long a;
	FILE *f = fopen("/proc/kallsyms", "r"), *t;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s [%63[^]]]", &a, &type, sym, m) != 4 ||
		    type != 'd' || strlen(sym) >= XK_FUNC_MAX ||
		    xk_rule_security_variable(sym) || !strcmp(m, "xkernel"))
			continue;
		snprintf(path, sizeof(path), "/sys/module/%s/taint", m);
		t = fopen(path, "r");
		taint[0] = '\0';
		if (!t || !fgets(taint, sizeof(taint), t) ||
		    (taint[0] != '\n' && taint[0] != '\0')) {
			if (t)
				fclose(t);
			continue;
		}
		fclose(t);
		/* a bare name: the first of that name must be this one */
		if (ksym(sym, m, size) != a || *size < 4 || *size > 64)
			continue;
		snprintf(found_name, sizeof(found_name), "%s", sym);
		fclose(f);
		return a;
	}
	if (f)
		fclose(f);
	return 0;
}

/*
 * The cap on loaded constants: the base table under XK_MAX_CONSTANTS names
 * loads, one more is refused (ENOSPC, naming the cap), and all go again.
 * Returns the number of failures (0 or 1).
 */
static int cap_case(int fd, const struct table *t, struct load_buf *b)
{
	struct xk_ioc_unload u = { .size = sizeof(u), .all = 1 };
	int loaded = 0, ret, err;

	for (int i = 0; i <= XK_MAX_CONSTANTS; i++) {
		base_request(b, t);
		snprintf(b->req.name, sizeof(b->req.name), "XK_CAP_%d", i);
		ret = ioctl(fd, XK_IOC_LOAD, &b->req);
		err = ret ? errno : 0;
		if (ret)
			break;
		loaded++;
	}
	ioctl(fd, XK_IOC_UNLOAD, &u);
	if (loaded == XK_MAX_CONSTANTS && err == ENOSPC &&
	    strstr(b->req.error, "the most the module holds at once")) {
		printf("ok case cap: %d constants loaded, one more refused: %s\n",
		       loaded, b->req.error);
		return 0;
	}
	printf("FAIL case cap: %d constants loaded, then %s: %s\n", loaded,
	       err ? strerror(err) : "no refusal", b->req.error);
	return 1;
}

/*
 * Each case breaks one rule of a valid table and names the errno and the
 * words the refusal must carry. Prints "ok CASE" or "FAIL CASE ..." and
 * returns the number of failures. Span 1 of BLK_MAX_REQUEST_COUNT:
 * mov $0x20,%edx (5 bytes) then, probed, movq $0x0,0x20(%rdi).
 */
static int run_cases(int fd, const struct table *t)
{
	static struct load_buf b;
	int failed = 0;

	for (int c = 0;; c++) {
		struct xk_ioc_span *s = &b.spans[t->nr_spans > 1 ? 1 : 0];
		struct xk_ioc_loc *l = &s->locs[0];
		const char *name, *want;
		int want_errno = EINVAL, ret, err;

		base_request(&b, t);
		switch (c) {
		case 0:
			name = "masks all zero";
			memset(s->expect_mask, 0, sizeof(s->expect_mask));
			want = "not compared";
			break;
		case 1:
			name = "the probe byte not compared";
			s->expect_mask[s->probe - s->start] = 0;
			want = "the byte under the probe point is not compared";
			break;
		case 2:
			name = "a byte masked in part";
			s->expect_mask[0] = 0xf0;
			want = "masked in part";
			break;
		case 3:
			name = "rip-relative disp S64_MAX";
			l->kind = XK_LOC_MEM;
			l->base = XK_BASE_RIP;
			l->disp = INT64_MAX;
			l->rip_end = s->start + 5;
			want = "outside the compared bytes";
			break;
		case 4:
			name = "rip-relative disp S64_MIN";
			l->kind = XK_LOC_MEM;
			l->base = XK_BASE_RIP;
			l->disp = INT64_MIN;
			want = "outside the compared bytes";
			break;
		case 5:
			name = "rip-relative end before the field";
			l->kind = XK_LOC_MEM;
			l->base = XK_BASE_RIP;
			l->disp = s->start + 1;
			l->rip_end = s->start + 2;
			want = "outside the compared bytes";
			break;
		case 6:
			name = "rip-relative field that is no store's";
			l->kind = XK_LOC_MEM;
			l->base = XK_BASE_RIP;
			l->width = 32;
			l->disp = s->start + 1;
			l->rip_end = s->start + 5;
			want = "no compared instruction of the span stores";
			break;
		case 7:
			name = "[rdi + 4096]";
			l->kind = XK_LOC_MEM;
			l->base = XK_RDI;
			l->disp = 4096;
			want = "displacement is out of bounds";
			break;
		case 8:
			name = "[rdi - S64_MIN]";
			l->kind = XK_LOC_MEM;
			l->base = XK_RDI;
			l->disp = INT64_MIN;
			want = "displacement is out of bounds";
			break;
		case 9:
			/* the probed instruction stores there, not the span */
			name = "[rdi + 0x20], stored only after the probe point";
			l->kind = XK_LOC_MEM;
			l->base = XK_RDI;
			l->disp = 0x20;
			l->width = 64;
			want = "no compared instruction of the span stores";
			break;
		case 10:
			name = "[rbx + 0], no store at all";
			l->kind = XK_LOC_MEM;
			l->base = XK_RBX;
			l->disp = 0;
			want = "no compared instruction of the span stores";
			break;
		case 11:
			name = "function larger than the limit";
			s->func_size = XK_MAX_FUNC_SIZE + 1;
			want = "larger than the limit";
			break;
		case 12:
			name = "start near U64_MAX";
			s->start = UINT64_MAX - 2;
			want = "the probe point is not inside";
			break;
		case 13:
			name = "expect_len past the limit";
			s->expect_len = XK_MAX_EXPECT + 1;
			want = "more expected bytes than the limit";
			break;
		case 14:
			name = "the stack pointer";
			l->kind = XK_RSP;
			want = "stack pointer";
			break;
		case 15:
			name = "timeout above the limit";
			b.req.timeout_ms = XK_MAX_TIMEOUT_MS + 1;
			b.req.mode = XK_MODE_GLOBAL;
			want = "above the limit";
			break;
		case 16:
			name = "nr_spans U32_MAX";
			b.req.nr_spans = UINT32_MAX;
			want = "spans (1 to";
			break;
		case 17:
			/* the module ends it; no such function */
			name = "a span's function name without its end";
			memset(s->func, 'x', sizeof(s->func));
			want_errno = ENOENT;
			want = "cannot probe";
			break;
		case 18:
			/* settling: the first byte is the borrow probe's */
			name = "an immediate field at its instruction's first byte";
			s->imms[0].field = s->imms[0].insn;
			want = "an immediate field is not the last bytes of its instruction";
			break;
		case 19:
			name = "a settled instruction past the probe point";
			s->imms[0].insn = s->probe;
			want = "a settled instruction lies outside the span";
			break;
		case 20:
			name = "an immediate of 3 bytes";
			s->imms[0].size = 3;
			s->imms[0].field = s->imms[0].insn + s->imms[0].insn_len - 3;
			want = "size or operand width is malformed";
			break;
		case 21:
			name = "more immediates than the limit";
			s->nr_imms = XK_MAX_PARAMS + 1;
			want = "more settleable immediates than the limit";
			break;
		case 22:
			name = "a settled instruction not compared in full";
			s->expect_mask[s->imms[0].insn + s->imms[0].insn_len - 1 -
				       s->start] = 0;
			want = "not compared in full";
			break;
		case 23:
			/* mov r/m, r (89): its last bytes are a displacement */
			name = "a settled field in an instruction without an immediate";
			s->expect[s->imms[0].insn - s->start] = 0x89;
			want = "a settled instruction's opcode carries no immediate";
			break;
		case 24:
			name = "an emulated form other than 0 to 3";
			s->emulate = 4;
			want = "malformed emulated form";
			break;
		case 25:
			name = "an emulated span with settleable immediates";
			s->emulate = 1;
			want = "an emulated span is probed on its last instruction or settleable";
			break;
		case 26:
			/* the span's first instruction made a call */
			name = "an emulated span that skips a call";
			s->emulate = 1;
			s->nr_imms = 0;
			s->expect[0] = 0xe8;
			want = "an instruction it may not skip";
			break;
		case 27:
			name = "an emulated span that moves rsp";
			s->emulate = 1;
			s->nr_imms = 0;
			memcpy(s->expect, "\x48\x83\xec\x18", 4);
			want = "an instruction it may not skip";
			break;
		case 28:
			name = "more points than the limit";
			s->nr_imms = 0;
			s->nr_points = XK_MAX_POINTS + 1;
			want = "more points than the limit";
			break;
		case 29:
			name = "points without the compiled-in value";
			s->nr_imms = 0;
			s->nr_points = 1;
			s->points[0].n = b.req.def + 1;
			want = "no point at the compiled-in value";
			break;
		case 30:
			name = "a point outside the bounds";
			s->nr_imms = 0;
			s->nr_points = 2;
			s->points[0].n = b.req.def;
			s->points[1].n = b.req.max + 1;
			want = "a point lies outside the bounds";
			break;
		/* variables (XK_EMULATE_DATA): what a table may write there */
		case 31:
			name = "a variable's field of 3 bytes";
			make_variable(s, "min_mem_pcpu_rsv", 4, 0, "/sbi");
			s->imms[0].size = s->imms[0].insn_len = 3;
			s->imms[0].width = 24;
			want = "not of 1, 2, 4 or 8 bytes";
			break;
		case 32:
			name = "an unaligned variable field";
			make_variable(s, "min_mem_pcpu_rsv", 4, 0, "/sbi");
			s->start = s->imms[0].insn = s->imms[0].field = 2;
			s->probe = 6;
			want = "unaligned, outside it or malformed";
			break;
		case 33:
			name = "a variable's span with a location";
			make_variable(s, "min_mem_pcpu_rsv", 4, 0, "/sbi");
			s->nr_locs = 1;
			want = "has locations, exits, ranges or inputs";
			break;
		case 34:
			name = "a variable's field that does not depend on the value";
			make_variable(s, "min_mem_pcpu_rsv", 4, 0, "/sbi");
			s->imms[0].a = 0;
			want = "does not depend on the value";
			break;
		case 35:
			name = "a variable without an address";
			make_variable(s, "min_mem_pcpu_rsv", 4, 0, "/sbi");
			want_errno = ENOENT;
			want = "not found in kallsyms";
			break;
		case 36:
			name = "a variable in the kernel's text";
			live_variable(s, "vfs_read", NULL, "\xf3\x0f\x1e\xfa");
			want_errno = EPERM;
			want = "in neither the kernel's data or bss nor a module's";
			break;
		case 37:
			name = "a variable in read-only data";
			live_variable(s, "linux_banner", NULL, "Linu");
			want_errno = EPERM;
			want = "in neither the kernel's data or bss nor a module's";
			break;
		case 38:
			name = "xkernel's own variable";
			live_variable(s, "xk_consts", "xkernel", "\0\0\0\0");
			want_errno = EPERM;
			want = "is xkernel's own";
			break;
		case 39:
			/* the fit's bytes at the default, not the variable's */
			name = "a variable that does not hold the expected bytes";
			live_variable(s, "min_mem_pcpu_rsv", NULL, "XXXX");
			s->imms[0].b = 0x58585858 - b.req.def;
			want_errno = ESTALE;
			want = "does not hold the compiled-in";
			break;
		case 40:
			name = "a variable's address inside it";
			live_variable(s, "min_mem_pcpu_rsv", NULL, "\0\x01\0\0");
			s->cands[0] += 2;
			want_errno = ESTALE;
			want = "resolves to min_mem_pcpu_rsv+0x2";
			break;
		case 42:
			name = "expected bytes that are not the fit's at the default";
			live_variable(s, "min_mem_pcpu_rsv", NULL, "\0\x02\0\0");
			want_errno = ESTALE;
			want = "not the fit's at the compiled-in value";
			break;
		case 43:
			/* func_size - size would wrap: any start passed */
			name = "a variable smaller than its field, a field far past it";
			make_variable(s, "min_mem_pcpu_rsv", 1, 0, "/sbi");
			s->imms[0].size = s->imms[0].insn_len = 8;
			s->imms[0].width = 64;
			s->expect_len = 8;
			s->start = s->imms[0].insn = s->imms[0].field = 0x1000;
			s->probe = 0x1008;
			memset(s->expect_mask, 0xff, 8);
			want = "unaligned, outside it or malformed";
			break;
		case 44:
			/* freed at boot; its page may still be mapped writable */
			name = "a variable in init data (freed)";
			live_variable(s, "boot_command_line", NULL, "\x20\0\0\0");
			want_errno = EPERM;
			want = "in neither the kernel's data or bss nor a module's";
			break;
		case 45:
			/* a page of .data: a page table of the kernel's mapping */
			name = "a page table in the kernel's data";
			live_variable(s, "level2_kernel_pgt", NULL, "\x20\0\0\0");
			want_errno = EPERM;
			want = "is a structure of the kernel";
			break;
		case 46:
			/* by name (init_*), before any address is looked at */
			name = "init's credentials";
			live_variable(s, "init_cred", NULL, "\x20\0\0\0");
			if (s->func_size > 64)	/* padding up to the next symbol */
				s->func_size -= 32;
			want = "security depends on";
			break;
		case 47:
			name = "a memory input indexed by rsp";
			s->nr_mem_in = 1;
			s->mem_in[0].base = XK_RDI;
			s->mem_in[0].width = 64;
			s->mem_in[0].index = XK_RSP;
			s->mem_in[0].scale = 1;
			want = "index is not a general register but rsp";
			break;
		case 48:
			name = "a memory input scaled by 3";
			s->nr_mem_in = 1;
			s->mem_in[0].base = XK_RDI;
			s->mem_in[0].width = 64;
			s->mem_in[0].index = XK_RSI;
			s->mem_in[0].scale = 3;
			want = "scale is not 1, 2, 4 or 8";
			break;
		case 49:
			/* per value (a variable boot code derives): points, no fit */
			name = "a per-value variable with a fit too";
			make_variable(s, "min_mem_pcpu_rsv", 4, 0, "/sbi");
			s->nr_points = 1;
			s->points[0].n = b.req.def;
			s->points[0].p[0] = 0x6962732f;
			want = "a per-value variable has a fit too";
			break;
		case 50:
			name = "a variable's point that does not fit its field";
			make_variable(s, "min_mem_pcpu_rsv", 4, 0, "/sbi");
			s->imms[0].a = 0;
			s->nr_points = 1;
			s->points[0].n = b.req.def;
			s->points[0].p[0] = 1LL << 40;
			want = "a variable's point does not fit its field";
			break;
		/* registers and flags: only what the span's instructions
		 * write (span 1 writes edx, then its probed store writes
		 * [rdi + 0x20]) */
		case 51:
			name = "a register the span only reads (the store's base)";
			l->kind = XK_RDI;
			want = "register rdi is not written by the span's instructions";
			break;
		case 52:
			name = "a register the span does not touch";
			l->kind = XK_RBX;
			want = "register rbx is not written by the span's instructions";
			break;
		case 53:
			name = "the flags of a span that writes none";
			l->kind = XK_LOC_FLAGS;
			want = "the flags are not written by the span's instructions";
			break;
		case 54:
			/* emulated: the span's one mov to edx is all it skips */
			name = "an emulated span's register it does not write";
			s->emulate = 1;
			s->nr_imms = 0;
			l->kind = XK_RCX;
			want = "register rcx is not written by the span's instructions";
			break;
		/* variables security depends on: refused by name */
		case 55:
			name = "a variable: sig_enforce";
			live_variable(s, "sig_enforce", NULL, "\0\0\0\0");
			want = "security depends on";
			break;
		case 56:
			name = "a variable: kernel_locked_down";
			live_variable(s, "kernel_locked_down", NULL, "\0\0\0\0");
			want = "security depends on";
			break;
		case 57:
			name = "a variable: an LSM's (selinux_enabled_boot)";
			live_variable(s, "selinux_enabled_boot", NULL, "\x01\0\0\0");
			want = "security depends on";
			break;
		case 58:
			name = "a variable: modprobe_path";
			live_variable(s, "modprobe_path", NULL, "/sbi");
			want = "security depends on";
			break;
		case 59:
			name = "a module's variable by its module's name too";
			live_variable(s, "sig_enforce", "module", "\0\0\0\0");
			want = "security depends on";
			break;
		case 60: {
			/* another object's data: a variable of the kernel's bss
			 * (no initialised variable lies there) */
			unsigned long long size, addr = bss_variable(&size);

			name = "a variable in the kernel's bss";
			if (!addr) {
				printf("skip case %d: no variable in the bss\n", c);
				continue;
			}
			make_variable(s, found_name, size, addr, "\0\0\0\0");
			want_errno = EPERM;
			want = "is in the kernel's bss";
			break;
		}
		case 61: {
			/* another module's data by its bare name */
			unsigned long long size, addr = module_variable(&size);

			name = "an in-tree module's variable by its bare name";
			if (!addr) {
				printf("skip case %d: no in-tree module's variable\n", c);
				continue;
			}
			make_variable(s, found_name, size, addr, "\0\0\0\0");
			want_errno = EPERM;
			want = "the table names it";
			break;
		}
		case 62:
			/* span 1 once more, at the end: two probes at one
			 * address would both write at one hit */
			name = "two spans at one probe point";
			if (t->nr_spans >= XK_MAX_SPANS) {
				printf("skip case %d: the table is full\n", c);
				continue;
			}
			b.spans[t->nr_spans] = *s;
			b.req.nr_spans = t->nr_spans + 1;
			want = "one span per probe point";
			break;
		case 41:
			name = "a span of code after a variable";
			b.spans[0] = b.spans[1];
			make_variable(&b.spans[0], "min_mem_pcpu_rsv", 4, 0, "/sbi");
			want = "code after a variable";
			break;
		default:
			return failed + cap_case(fd, t, &b);
		}
		ret = ioctl(fd, XK_IOC_LOAD, &b.req);
		err = ret ? errno : 0;
		if (ret == 0) {
			struct xk_ioc_unload u = { .size = sizeof(u) };

			snprintf(u.name, sizeof(u.name), "%s", t->name);
			ioctl(fd, XK_IOC_UNLOAD, &u);
		}
		if (err == want_errno && strstr(b.req.error, want)) {
			printf("ok case %d: %s: %s\n", c, name, b.req.error);
		} else {
			printf("FAIL case %d: %s: %s (%s), want %s and \"%s\"\n", c, name,
			       ret ? strerror(err) : "loaded", b.req.error,
			       strerror(want_errno), want);
			failed++;
		}
	}
}

/* ---- the fuzzer ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the seed */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static const uint64_t boundary[] = {
	0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 255,
	256, 4095, 4096, 4097, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff,
	0x80000000, 0xffffffff, 0x100000000ULL, 0x100000, 0x100001,
	0x7fffffffffffffffULL, 0x8000000000000000ULL, 0xffffffffffffffffULL,
	0xfffffffffffffffcULL, 0xfffffffffffff000ULL, 0x7ffffffffffffffcULL,
	0xffffffff81000000ULL, 0xffff888000000000ULL, 0x0000800000000000ULL,
};
#define NR_BOUNDARY (sizeof(boundary) / sizeof(boundary[0]))

static uint64_t pick_boundary(uint64_t cur)
{
	switch (rnd() % 4) {
	case 0: return cur + 1;
	case 1: return cur - 1;
	default: return boundary[rnd() % NR_BOUNDARY];
	}
}

/* set a field of any size to v (truncated) */
#define SETF(field, v) do { (field) = (__typeof__(field))(v); } while (0)

/* Sets one field of span s at a boundary value. */
/* An index in use, or the first past them (unused slots only load). */
static unsigned int used_index(unsigned int nr, unsigned int max)
{
	unsigned int n = nr < max ? nr + 1 : max;

	return rnd() % (n ? n : 1);
}

static void mutate_span_field(struct xk_ioc_span *s)
{
	struct xk_ioc_loc *l = &s->locs[used_index(s->nr_locs, XK_MAX_LOCS)];
	struct xk_expr_insn *in = &l->expr.insn[used_index(l->expr.len,
							   XK_EXPR_MAX_INSNS)];
	struct xk_ioc_imm *m = &s->imms[used_index(s->nr_imms, XK_MAX_PARAMS)];
	unsigned int k = rnd() % 30;

	switch (k) {
	case 22: SETF(s->nr_imms, pick_boundary(s->nr_imms)); break;
	case 23: SETF(m->insn, pick_boundary(m->insn)); break;
	case 24: SETF(m->field, pick_boundary(m->field)); break;
	case 25: SETF(m->insn_len, pick_boundary(m->insn_len)); break;
	case 26: SETF(m->size, pick_boundary(m->size)); break;
	case 27: SETF(m->width, pick_boundary(m->width)); break;
	case 28: SETF(m->a, pick_boundary(m->a)); break;
	case 29: SETF(m->b, pick_boundary(m->b)); break;
	case 0: SETF(s->func_size, pick_boundary(s->func_size)); break;
	case 1: SETF(s->start, pick_boundary(s->start)); break;
	case 2: SETF(s->probe, pick_boundary(s->probe)); break;
	case 3: SETF(s->expect_len, pick_boundary(s->expect_len)); break;
	case 4: SETF(s->nr_locs, pick_boundary(s->nr_locs)); break;
	case 5: SETF(l->kind, pick_boundary(l->kind)); break;
	case 6: SETF(l->base, pick_boundary(l->base)); break;
	case 7: SETF(l->disp, pick_boundary(l->disp)); break;
	case 8: SETF(l->width, pick_boundary(l->width)); break;
	case 9: SETF(l->rip_end, pick_boundary(l->rip_end)); break;
	case 10: SETF(s->nr_exits, pick_boundary(s->nr_exits)); break;
	case 11: SETF(s->exits[used_index(s->nr_exits, XK_MAX_EXITS)], pick_boundary(0)); break;
	case 12: SETF(s->nr_ranges, pick_boundary(s->nr_ranges)); break;
	case 13: SETF(s->ranges[used_index(s->nr_ranges, XK_MAX_RANGES)][rnd() % 2], pick_boundary(0)); break;
	case 14: SETF(s->nr_cands, pick_boundary(s->nr_cands)); break;
	case 15: SETF(s->cands[used_index(s->nr_cands, XK_MAX_CANDS)], pick_boundary(0)); break;
	case 16: SETF(l->expr.len, pick_boundary(l->expr.len)); break;
	case 17: SETF(in->op, pick_boundary(in->op)); break;
	case 18: SETF(in->width, pick_boundary(in->width)); break;
	case 19: SETF(in->reg, pick_boundary(in->reg)); break;
	case 20: SETF(in->imm, pick_boundary(in->imm)); break;
	default: SETF(s->escapes, pick_boundary(s->escapes)); break;
	}
}

/* A location turned into memory: every register base, displacements at
 * and past the bounds, rip-relative fields that overflow. */
static void mutate_memory(struct xk_ioc_span *s)
{
	struct xk_ioc_loc *l = &s->locs[rnd() % (s->nr_locs ? s->nr_locs : 1)];
	static const int64_t disps[] = {
		0, 8, -8, 0x20, 4095, -4095, 4096, -4096, INT64_MAX, INT64_MIN,
		INT64_MAX - 3, INT64_MIN + 1, (int64_t)0x7fffffff, -0x80000000LL,
	};

	l->kind = XK_LOC_MEM;
	l->width = 8u << (rnd() % 4);
	if (rnd() % 2) {
		l->base = XK_BASE_RIP;
		l->disp = rnd() % 3 ? (int64_t)(s->start + rnd() % 70) :
			  disps[rnd() % (sizeof(disps) / sizeof(disps[0]))];
		l->rip_end = rnd() % 3 ? (uint32_t)(l->disp + 4 + rnd() % 5) :
			     (uint32_t)pick_boundary(0);
	} else {
		l->base = rnd() % 18;
		l->disp = rnd() % 3 ? (int64_t)(rnd() % 0x40) - 0x20 :
			  disps[rnd() % (sizeof(disps) / sizeof(disps[0]))];
	}
}

/* Masks: all zero, a byte in part, the probe byte, long runs. */
static void mutate_mask(struct xk_ioc_span *s)
{
	uint32_t n = s->expect_len < XK_MAX_EXPECT ? s->expect_len : XK_MAX_EXPECT;

	switch (rnd() % 5) {
	case 0:
		memset(s->expect_mask, 0, sizeof(s->expect_mask));
		break;
	case 1:
		if (n)
			s->expect_mask[rnd() % n] = 1 + rnd() % 254;
		break;
	case 2:
		if (s->probe > s->start && s->probe - s->start < XK_MAX_EXPECT)
			s->expect_mask[s->probe - s->start] = 0;
		break;
	case 3: {
		uint32_t from = n ? rnd() % n : 0, len = 1 + rnd() % 16;

		for (uint32_t i = from; i < from + len && i < XK_MAX_EXPECT; i++)
			s->expect_mask[i] = 0;
		break;
	}
	default:
		if (n)
			s->expect[rnd() % n] ^= 1u << (rnd() % 8);
		break;
	}
}

static void flip_bits(void *buf, size_t size, int n)
{
	for (int i = 0; i < n; i++) {
		size_t b = rnd() % (size * 8);

		((uint8_t *)buf)[b / 8] ^= 1u << (b % 8);
	}
}

struct counts {
	unsigned long applied, refused[256], other, requests;
	unsigned long settled, settle_refused;	/* spans; requests */
};

static void count(struct counts *c, int ret, int err)
{
	c->requests++;
	if (ret == 0)
		c->applied++;
	else if (err > 0 && err < 256)
		c->refused[err]++;
	else
		c->other++;
}

static void unload(int fd, const char *name)
{
	struct xk_ioc_unload u = { .size = sizeof(u) };

	snprintf(u.name, sizeof(u.name), "%s", name);
	if (ioctl(fd, XK_IOC_UNLOAD, &u) && errno != ENOENT)
		fprintf(stderr, "unload %s: %s\n", name, strerror(errno));
}

/*
 * --replays: a table with replayed spans is loaded at its default (nothing
 * is replayed then), its own replays must be taken, then n mutated
 * XK_IOC_REPLAY requests (span index, value, locations, programs, memory
 * inputs, counts and sizes at and past their limits, random bytes) must
 * each be refused or taken; the value is never set to a fuzzed one (a
 * replay may write any register but rsp: docs/security.md). Then the
 * slots' limit (ENOSPC) and an unload. Prints the outcomes; 1 when the
 * table's own replays or the limit misbehave.
 */
static int fuzz_replays(int fd, const struct table *t, unsigned long n)
{
	static struct load_buf b;
	struct xk_ioc_replay *r = calloc(1, sizeof(*r) + 64);
	struct counts cnt = { 0 };
	unsigned int taken = 0, bad = 0;
	struct xk_ioc_unload u = { .size = sizeof(u) };

	if (!r || !t->nr_replays)
		return fprintf(stderr, "no replay in the table\n"), 1;
	base_request(&b, t);
	if (ioctl(fd, XK_IOC_LOAD, &b.req))
		return fprintf(stderr, "load: %s (%s)\n", strerror(errno),
			       b.req.error), 1;
	for (unsigned int i = 0; i < t->nr_replays; i++) {
		*r = t->replays[i];
		if (ioctl(fd, XK_IOC_REPLAY, r)) {
			fprintf(stderr, "the table's replay %u refused: %s (%s)\n", i,
				strerror(errno), r->error);
			bad = 1;
		}
	}
	for (unsigned long i = 0; i < n; i++) {
		unsigned int kind = rnd() % 8;
		int ret;

		*r = t->replays[rnd() % t->nr_replays];
		switch (kind) {
		case 0:	/* bit flips anywhere */
			for (int k = 0; k < 1 + (int)(rnd() % 8); k++)
				((uint8_t *)r)[rnd() % sizeof(*r)] ^= 1 << (rnd() % 8);
			break;
		case 1:	/* the span and the value at and past their limits */
			r->span = rnd() % 3 ? rnd() % (t->nr_spans + 2) : (uint32_t)rnd();
			r->value = rnd() % 2 ? t->def : (long long)rnd();
			break;
		case 2: {	/* a location of any kind, base and width */
			struct xk_ioc_loc *l = &r->locs[rnd() % XK_REPLAY_MAX_LOCS];

			l->kind = (int)(rnd() % 40) - 4;
			l->base = (int)(rnd() % 24) - 2;
			l->width = (uint32_t)(rnd() % 3 ? 1u << (rnd() % 8) : rnd());
			l->disp = (int64_t)rnd() >> (rnd() % 64);
			if (rnd() % 2)
				r->nr_locs = rnd() % (XK_REPLAY_MAX_LOCS + 3);
			break;
		}
		case 3: {	/* a program of random instructions */
			struct xk_ioc_loc *l = &r->locs[rnd() % XK_REPLAY_MAX_LOCS];

			l->expr.len = rnd() % (XK_EXPR_MAX_INSNS + 4);
			for (uint32_t k = 0; k < XK_EXPR_MAX_INSNS; k++) {
				l->expr.insn[k].op = rnd() % (XK_OP_MAX + 2);
				l->expr.insn[k].width = 8 << (rnd() % 4);
				l->expr.insn[k].reg = rnd() % 24;
				l->expr.insn[k].imm = (int64_t)rnd();
			}
			break;
		}
		case 4:	/* memory inputs past their limits */
			r->nr_mem_in = rnd() % (XK_MAX_MEM_INPUTS + 3);
			for (int k = 0; k < XK_MAX_MEM_INPUTS; k++) {
				r->mem_in[k].base = (int)(rnd() % 24) - 2;
				r->mem_in[k].width = 1u << (rnd() % 8);
				r->mem_in[k].disp = (int64_t)rnd() >> (rnd() % 64);
				r->mem_in[k].index = (int)(rnd() % 24) - 2;
				r->mem_in[k].scale = rnd() % 10;
			}
			break;
		case 5: {	/* stores first (up to one too many), anywhere */
			unsigned int k = rnd() % (XK_REPLAY_MAX_STORES + 2);

			for (unsigned int j = 0; j < k && j < XK_REPLAY_MAX_LOCS; j++) {
				r->locs[j].kind = XK_LOC_MEM;
				r->locs[j].base = rnd() % XK_NR_REGS;
				r->locs[j].disp = (int64_t)(rnd() % 512) - 256;
				r->locs[j].width = 8 << (rnd() % 4);
			}
			if (r->nr_locs < k)
				r->nr_locs = k;
			break;
		}
		case 6:	/* a wrong size */
			r->size = sizeof(*r) + (rnd() % 2 ? 8 : -8);
			break;
		default:	/* another value of the bounds, valid otherwise */
			r->value = t->min + (long long)(rnd() % (uint64_t)(t->max - t->min + 1));
			break;
		}
		ret = ioctl(fd, XK_IOC_REPLAY, r);
		count(&cnt, ret, ret ? errno : 0);
		taken += !ret;
	}
	/* past the slots: every span holds XK_MAX_POINTS values at most */
	{
		int full = 0;

		for (long long v = t->min; v <= t->max && !full; v++) {
			*r = t->replays[0];
			r->value = v;
			if (ioctl(fd, XK_IOC_REPLAY, r) && errno == ENOSPC)
				full = 1;
		}
		if (!full && t->max - t->min > 2 * XK_MAX_POINTS) {
			fprintf(stderr, "no span ran out of replay slots\n");
			bad = 1;
		}
	}
	snprintf(u.name, sizeof(u.name), "%s", t->name);
	if (ioctl(fd, XK_IOC_UNLOAD, &u)) {
		fprintf(stderr, "unload: %s (%s)\n", strerror(errno), u.error);
		bad = 1;
	}
	printf("replay requests %lu, taken %u\n", cnt.requests, taken);
	for (int e = 1; e < 256; e++)
		if (cnt.refused[e])
			printf("refused %s (%d) %lu\n", strerrorname_np(e) ?: "?", e,
			       cnt.refused[e]);
	free(r);
	return bad;
}

int main(int argc, char **argv)
{
	static struct table t;
	unsigned long n = 10000, seed = 1;
	struct xk_ioc_load *req;
	struct xk_ioc_span *spans;
	struct counts cnt = { 0 };
	struct timespec t0, t1;
	uint8_t *guard;
	long page = sysconf(_SC_PAGESIZE);
	size_t mapped;
	size_t spans_size = (XK_MAX_SPANS + 1) * sizeof(*spans);
	int opt, fd, cases = 0;

	if (argc > 1 && !strcmp(argv[1], "--check"))
		return check_tables(argc - 2, argv + 2);
	if (argc > 1 && !strcmp(argv[1], "--replays")) {
		cases = 2;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc > 1 && !strcmp(argv[1], "--cases")) {
		cases = 1;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	while ((opt = getopt(argc, argv, "n:s:")) != -1) {
		if (opt == 'n')
			n = strtoul(optarg, NULL, 0);
		else if (opt == 's')
			seed = strtoul(optarg, NULL, 0);
		else
			return fprintf(stderr, "usage: %s [-n N] [-s SEED] TABLE\n", argv[0]), 2;
	}
	if (optind != argc - 1 || parse_table(argv[optind], &t))
		return 2;
	if (cases) {
		fd = open(XK_DEVICE, O_RDWR);
		if (fd < 0)
			return perror(XK_DEVICE), 2;
		rng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
		if (cases == 2)
			return fuzz_replays(fd, &t, n) ? 1 : 0;
		return run_cases(fd, &t) ? 1 : 0;
	}
	rng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	fd = open(XK_DEVICE, O_RDWR);
	if (fd < 0)
		return perror(XK_DEVICE), 2;
	/* mapped pages a span or a request fits in, then one unmapped: a
	 * buffer that ends at the hole faults in copy_from_user (a span is
	 * larger than a page) */
	mapped = (sizeof(*spans) + sizeof(*req) + 128 + page - 1) / page * page;
	guard = mmap(NULL, mapped + page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard == MAP_FAILED || munmap(guard + mapped, page))
		return perror("mmap"), 2;
	req = calloc(1, sizeof(*req));
	spans = calloc(1, spans_size);
	if (!req || !spans)
		return 2;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned long i = 0; i < n; i++) {
		unsigned int kind = i == 0 ? 99 : rnd() % 10;
		void *arg = req;
		int ret, err;

		memset(req, 0, sizeof(*req));
		req->size = sizeof(*req);
		req->nr_spans = t.nr_spans;
		snprintf(req->name, sizeof(req->name), "%s", t.name);
		req->def = req->value = t.def;
		req->min = t.min;
		req->max = t.max;
		req->mode = XK_MODE_IMMEDIATE;
		memset(spans, 0, spans_size);
		memcpy(spans, t.spans, t.nr_spans * sizeof(*spans));
		req->spans = (uintptr_t)spans;

		switch (kind) {
		case 99:	/* the table itself, at another value: applied */
			req->value = t.def > t.min ? t.def - 1 : t.def + 1;
			break;
		case 0:		/* bit flips anywhere in the spans */
			flip_bits(spans, t.nr_spans * sizeof(*spans), 1 + rnd() % 8);
			break;
		case 1: {	/* ... in what the module reads first (most of a
				 * span is unused slots: flips there just load) */
			struct xk_ioc_span *sp = &spans[rnd() % t.nr_spans];
			struct xk_ioc_loc *l = &sp->locs[0];

			switch (rnd() % 3) {
			case 0:
				flip_bits(sp, offsetof(struct xk_ioc_span, locs),
					  1 + rnd() % 4);
				break;
			case 1:
				flip_bits(l, offsetof(struct xk_ioc_loc, expr) +
					  8 + l->expr.len * sizeof(l->expr.insn[0]),
					  1 + rnd() % 4);
				break;
			default:
				flip_bits(&sp->nr_exits, 8, 1 + rnd() % 2);
				flip_bits(&sp->nr_ranges, 8, rnd() % 2);
				flip_bits(&sp->nr_cands, 8, rnd() % 2);
				break;
			}
			break;
		}
		case 2: case 3:	/* one span field at a boundary */
			for (int k = 1 + rnd() % 3; k > 0; k--)
				mutate_span_field(&spans[rnd() % t.nr_spans]);
			break;
		case 4:		/* memory locations */
			mutate_memory(&spans[rnd() % t.nr_spans]);
			break;
		case 5:		/* masks and expected bytes */
			mutate_mask(&spans[rnd() % t.nr_spans]);
			break;
		case 6:		/* the request's own fields (spans intact) */
			switch (rnd() % 9) {
			case 0: SETF(req->size, pick_boundary(req->size)); break;
			case 1: SETF(req->nr_spans, pick_boundary(req->nr_spans)); break;
			case 2: SETF(req->min, pick_boundary(req->min)); break;
			case 3: SETF(req->max, pick_boundary(req->max)); break;
			case 4: SETF(req->def, pick_boundary(req->def)); break;
			case 5: SETF(req->value, pick_boundary(req->value)); break;
			case 6: SETF(req->mode, pick_boundary(req->mode)); break;
			case 7: SETF(req->timeout_ms, pick_boundary(req->timeout_ms)); break;
			default: memset(req->name, 'A', sizeof(req->name)); break;
			}
			/* a value in force needs a transition: keep it quick */
			if (req->mode != XK_MODE_IMMEDIATE && req->timeout_ms > 100)
				req->timeout_ms = 100;
			break;
		case 7:		/* bit flips in the request (not its pointer) */
			flip_bits(req, offsetof(struct xk_ioc_load, spans), 1 + rnd() % 4);
			req->value = req->def;	/* the spans are intact, the value may not be */
			break;
		case 8:		/* bogus user pointers */
			switch (rnd() % 7) {
			case 0: req->spans = 0; break;
			case 1: req->spans = 1; break;
			case 2: req->spans = pick_boundary(0); break;
			case 3:	/* the spans run into the unmapped page */
				/* span 0 intact, span 1 crosses into the hole */
				memcpy(guard + mapped - 64 - sizeof(*spans), spans,
				       sizeof(*spans));
				req->spans = (uintptr_t)(guard + mapped - 64 -
							 sizeof(*spans));
				req->nr_spans = 1 + rnd() % 3;
				break;
			case 4:	/* the request itself truncated by the guard */
				memcpy(guard + mapped - sizeof(*req) + 16, req, sizeof(*req) - 16);
				arg = guard + mapped - sizeof(*req) + 16;
				break;
			case 5: arg = NULL; break;
			default: arg = (void *)(uintptr_t)pick_boundary(0); break;
			}
			break;
		default:	/* huge or extra spans, and a clobbered name */
			req->nr_spans = rnd() % 2 ? (uint32_t)pick_boundary(0) :
				       XK_MAX_SPANS + 1;
			if (rnd() % 2)
				memset(spans[0].func, 'x', sizeof(spans[0].func));
			break;
		}
		/* most mutated tables for a policy: validated in full, the
		 * module's probes left disarmed (arming and the optimizer's
		 * text patching cost ~0.1 s a load under TCG); some armed */
		if (kind != 99 && kind != 6 && rnd() % 32)
			snprintf(req->policy, sizeof(req->policy), "fuzz");
		ret = ioctl(fd, XK_IOC_LOAD, arg);
		err = ret ? errno : 0;
		count(&cnt, ret, err);
		if (ret == 0) {
			/* applied: what was loaded must be unloaded at once;
			 * an armed one settled first, now and then (the
			 * module writes text only where the table's immediate
			 * records hold; the guest test compares the text
			 * before and after the run) */
			char name[XK_NAME_MAX];

			snprintf(name, sizeof(name), "%.*s", XK_NAME_MAX - 1,
				 arg == req ? req->name : t.name);
			/* one in sixteen: a settle waits an RCU Tasks grace
			 * period, slow under TCG */
			if (!req->policy[0] && arg == req && rnd() % 16 == 0) {
				struct xk_ioc_settle st = { .size = sizeof(st) };

				snprintf(st.name, sizeof(st.name), "%s", name);
				ret = ioctl(fd, XK_IOC_SETTLE, &st);
				if (ret)
					cnt.settle_refused++;
				else
					cnt.settled += st.nr_settled;
			}
			unload(fd, name);
		}
		if (i == 0 && ret)
			fprintf(stderr, "the table itself was refused: %s (%s)\n",
				strerror(err), req->error);
	}
	/* junk through the other ioctls too: cheap, and they share the lock */
	for (int i = 0; i < 25; i++) {
		int ret;
		union {
			struct xk_ioc_set set;
			struct xk_ioc_set_many many;
			struct xk_ioc_unload unl;
			struct xk_ioc_status st;
		} u;
		static const unsigned long cmds[] = {
			XK_IOC_SET, XK_IOC_SET_MANY, XK_IOC_UNLOAD, XK_IOC_STATUS,
		};
		static const uint32_t sizes[] = {
			sizeof(u.set), sizeof(u.many), sizeof(u.unl), sizeof(u.st),
		};
		int c = rnd() % 4;

		for (size_t b = 0; b < sizeof(u); b += 8) {
			uint64_t r = rnd();

			memcpy((char *)&u + b, &r, sizeof(u) - b < 8 ? sizeof(u) - b : 8);
		}
		if (rnd() % 4)
			u.set.size = sizes[c];
		if (c == 1 && rnd() % 2)
			u.many.timeout_ms %= 200;	/* a quick transition */
		if (c == 0 && rnd() % 2)
			u.set.timeout_ms %= 200;
		ret = ioctl(fd, cmds[c], &u);
		count(&cnt, ret, ret ? errno : 0);
	}
	unload(fd, t.name);
	clock_gettime(CLOCK_MONOTONIC, &t1);

	printf("requests %lu in %.1f s (seed %lu)\n", cnt.requests,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, seed);
	printf("applied %lu\n", cnt.applied);
	printf("settled %lu spans, settle refused %lu\n", cnt.settled,
	       cnt.settle_refused);
	for (int e = 1; e < 256; e++)
		if (cnt.refused[e])
			printf("refused %s (%d) %lu\n", strerrorname_np(e) ?: "?", e,
			       cnt.refused[e]);
	if (cnt.other)
		printf("other %lu\n", cnt.other);
	close(fd);
	return 0;
}
