// SPDX-License-Identifier: GPL-2.0
/*
 * libxk scope: the scope table, read and written in one place (format:
 * docs/scope-table.md). Every consumer (xk load, xk status, the tests)
 * parses a table through xk_scope_read(), which refuses anything malformed
 * with the line that is wrong; a supported span must also obey the rules
 * the module applies (xk_ioc_span_check of xk/abi), on writing and on
 * reading, so a table the module would refuse never leaves `xk gen`.
 * No capstone, no libelf: the runtime links this.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "internal.h"
#include "xk/scope.h"

static const char *const class_names[] = {
	[XK_SPAN_UNSUPPORTED] = "unsupported", [XK_SPAN_REGISTER] = "register",
	[XK_SPAN_FLAGS] = "flags", [XK_SPAN_MEMORY] = "memory",
	[XK_SPAN_DUAL] = "dual", [XK_SPAN_DATA] = "data",
};

const char *xk_span_class_name(enum xk_span_class c)
{
	return c <= XK_SPAN_DATA ? class_names[c] : "?";
}

int xk_scope_nr_supported(const struct xk_scope *t)
{
	int n = 0;

	for (int i = 0; i < t->nr_spans; i++)
		n += t->spans[i].cls != XK_SPAN_UNSUPPORTED;
	return n;
}

static void loc_name(const struct xk_scope_loc *l, char *buf, size_t size)
{
	if (l->kind == XK_LOC_MEM && l->base == XK_BASE_RIP)
		snprintf(buf, size, "mem:rip:%lld:%lld", (long long)l->disp,
			 (long long)l->rip_end);
	else if (l->kind == XK_LOC_MEM)
		snprintf(buf, size, "mem:%s:%lld", xk_reg_name(l->base),
			 (long long)l->disp);
	else
		snprintf(buf, size, "%s", xk_reg_name(l->kind));
}

/* The rules of xk/abi a supported span obeys; -EINVAL naming the span. */
static int check_span_rules(const char *where, const struct xk_scope *t,
			    int idx, const struct xk_scope_span *s)
{
	struct xk_ioc_span d;
	const char *why;

	if (s->cls == XK_SPAN_UNSUPPORTED)
		return 0;
	if (s->nr_locs > XK_MAX_LOCS || s->nr_exits > XK_MAX_EXITS ||
	    s->nr_ranges > XK_MAX_RANGES || s->nr_params > XK_MAX_PARAMS ||
	    s->nr_imms > XK_MAX_PARAMS || s->nr_mem_in > XK_MAX_MEM_INPUTS)
		return xk_err(-EINVAL, "%s: span %d (%s): more locations, exits, "
				       "ranges or fits than the limits", where,
			      idx, s->func);
	xk_scope_span_to_ioc(s, &d);
	why = xk_ioc_span_check(&d);
	if (!why)
		why = xk_rule_check_points(s->points, s->nr_points, t->def, t->min,
					   t->max, s->emulate == XK_EMULATE_DATA ?
					   0 : s->nr_imms);
	for (int l = 0; !why && s->nr_points && l < s->nr_locs; l++)
		for (uint32_t i = 0; i < s->locs[l].expr.len; i++)
			if (s->locs[l].expr.insn[i].op == XK_OP_PARAM &&
			    s->locs[l].expr.insn[i].reg >= s->nr_params)
				why = "a program names a parameter the span lacks";
	if (!why && s->emulate == XK_EMULATE_REPLAY && !s->nr_replays)
		why = "a replayed span without a replay";
	for (int j = 0; !why && j < s->nr_replays; j++) {
		struct xk_ioc_replay r;

		xk_scope_replay_to_ioc(&s->replays[j], &r);
		why = xk_ioc_replay_check(&r);
		if (!why)
			why = xk_rule_replay_stores(s->expect, s->expect_mask,
						    s->start, s->probe, &r);
		if (!why && (s->replays[j].n == t->def || s->replays[j].n < t->min ||
			     s->replays[j].n > t->max))
			why = "a replay at the compiled-in value or out of bounds";
		for (int k = 0; !why && k < j; k++)
			if (s->replays[k].n == s->replays[j].n)
				why = "a value has two replays";
	}
	if (why)
		return xk_err(-EINVAL, "%s: span %d (%s+%#llx) breaks the module's "
				       "rules: %s", where, idx, s->func,
			      (unsigned long long)s->probe, why);
	return 0;
}

/* Whether some memory input of t has an index (format version 2). */
static bool indexed_inputs(const struct xk_scope *t)
{
	for (int i = 0; i < t->nr_spans; i++) {
		const struct xk_scope_span *s = &t->spans[i];

		for (int k = 0; k < s->nr_mem_in; k++)
			if (s->mem_in[k].scale)
				return true;
		for (int j = 0; j < s->nr_replays; j++)
			for (int k = 0; k < s->replays[j].nr_mem_in; k++)
				if (s->replays[j].mem_in[k].scale)
					return true;
	}
	return false;
}

/* input K BASE DISP WIDTH, then INDEX SCALE when the address has one */
static void write_mem_in(FILE *f, int k, const struct xk_scope_mem_in *m)
{
	fprintf(f, "input %d %s %lld %d", k, xk_reg_name(m->base),
		(long long)m->disp, m->width);
	if (m->scale)
		fprintf(f, " %s %d", xk_reg_name(m->index), m->scale);
	fputc('\n', f);
}

static void write_loc(FILE *f, const struct xk_scope_loc *loc)
{
	char name[64];

	loc_name(loc, name, sizeof(name));
	fprintf(f, "loc %s %d", name, loc->width);
	for (uint32_t i = 0; i < loc->expr.len; i++) {
		const struct xk_expr_insn *in = &loc->expr.insn[i];

		fprintf(f, " %s:%u:%u:%lld:%lld", xk_op_name(in->op), in->width,
			in->reg, (long long)in->imm, (long long)in->imm2);
	}
	fputc('\n', f);
	fprintf(f, "text %s = %s\n", name, loc->text);
}

static void write_span(FILE *f, int idx, const struct xk_scope_span *s)
{

	fprintf(f, "span %d\n", idx);
	fprintf(f, "object %s\n", s->object);
	fprintf(f, "function %s %llu\n", s->func, (unsigned long long)s->func_size);
	fprintf(f, "class %s\n", xk_span_class_name(s->cls));
	fprintf(f, "start 0x%llx\n", (unsigned long long)s->start);
	if (s->cls == XK_SPAN_UNSUPPORTED) {
		fprintf(f, "why %s\n", s->why);
		fputs("end\n", f);
		return;
	}
	fprintf(f, "probe 0x%llx\n", (unsigned long long)s->probe);
	fputs("expect", f);
	for (uint32_t i = 0; i < s->expect_len; i++) {
		if (s->expect_mask[i])
			fprintf(f, " %02x", s->expect[i]);
		else
			fputs(" ??", f);
	}
	fputc('\n', f);
	fprintf(f, "optimizable %s\n", s->optimizable ? "yes" : "no");
	if (s->post_len)
		fprintf(f, "post %u\n", s->post_len);
	if (s->emulate == XK_EMULATE_REPLAY)
		fputs("emulate replay\n", f);
	else if (s->emulate == XK_EMULATE_DATA)
		fputs("emulate data\n", f);
	else if (s->emulate)
		fputs("emulate\n", f);
	if (s->call_state)
		fputs(s->call_state == XK_CALL_STATE_HEAP ? "call-state heap\n" :
		      "call-state\n", f);
	for (int k = 0; k < s->nr_params; k++)
		fprintf(f, "fit %d %lld %lld\n", k, (long long)s->fit[k][0],
			(long long)s->fit[k][1]);
	if (s->nr_points) {
		fputs("pervalue", f);
		for (int k = 0; k < s->nr_params; k++)
			fprintf(f, " 0x%llx", (unsigned long long)s->param_insn[k]);
		fputc('\n', f);
	}
	for (int j = 0; j < s->nr_points; j++) {
		fprintf(f, "point %lld", (long long)s->points[j].n);
		for (int k = 0; k < s->nr_params; k++)
			fprintf(f, " %lld", (long long)s->points[j].p[k]);
		fputc('\n', f);
	}
	for (int k = 0; k < s->nr_imms; k++)
		fprintf(f, "imm %d 0x%llx %u 0x%llx %u %u\n", k,
			(unsigned long long)s->imm[k].insn, s->imm[k].insn_len,
			(unsigned long long)s->imm[k].field, s->imm[k].size,
			s->imm[k].width);
	for (int k = 0; k < s->nr_mem_in; k++)
		write_mem_in(f, k, &s->mem_in[k]);
	for (int l = 0; l < s->nr_locs; l++)
		write_loc(f, &s->locs[l]);
	for (int j = 0; j < s->nr_replays; j++) {
		const struct xk_scope_replay *r = &s->replays[j];

		fprintf(f, "replay %lld\n", (long long)r->n);
		for (int k = 0; k < r->nr_mem_in; k++)
			write_mem_in(f, k, &r->mem_in[k]);
		for (int l = 0; l < r->nr_locs; l++)
			write_loc(f, &r->locs[l]);
	}
	fputs("safe", f);
	for (int i = 0; i < s->nr_exits; i++)
		fprintf(f, " 0x%llx", (unsigned long long)s->exits[i]);
	fputs("\nranges", f);
	for (int i = 0; i < s->nr_ranges; i++)
		fprintf(f, " 0x%llx-0x%llx", (unsigned long long)s->ranges[i][0],
			(unsigned long long)s->ranges[i][1]);
	fprintf(f, "\nescapes%s%s%s%s\n", s->escapes ? "" : " none",
		s->escapes & XK_ESCAPE_STORE ? " store" : "",
		s->escapes & XK_ESCAPE_CALL ? " call" : "",
		s->escapes & XK_ESCAPE_RET ? " ret" : "");
	fprintf(f, "slice %u\n", s->slice_len);
	if (s->copies > 0)
		fprintf(f, "copies %d\n", s->copies);
	fputs("args", f);
	for (int a = 0; a < XK_MAX_ARGS; a++)
		if (s->arg_reg[a] >= 0)
			fprintf(f, " %d:%s", a, xk_reg_name(s->arg_reg[a]));
	fputs("\nend\n", f);
}

/* " A..B", or " A" for a range of one value. */
static void write_range(FILE *f, const int64_t r[2])
{
	if (r[0] == r[1])
		fprintf(f, " %lld", (long long)r[0]);
	else
		fprintf(f, " %lld..%lld", (long long)r[0], (long long)r[1]);
}

static int xk_scope_write_impl(const struct xk_scope *t, const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err = 0;

	for (int i = 0; i < t->nr_spans && !err; i++)
		err = check_span_rules(path, t, i, &t->spans[i]);
	if (err)
		return err;
	f = open_memstream(&buf, &len);
	if (!f)
		return xk_err(-ENOMEM, "writing %s: out of memory", path);
	fprintf(f, "%s %d\n", XK_SCOPE_MAGIC, indexed_inputs(t) ?
		XK_SCOPE_VERSION_INDEX : 1);
	fprintf(f, "constant %s\n", t->constant);
	fprintf(f, "kind %s\n", t->kind);
	fprintf(f, "source %s\n", t->source);
	fprintf(f, "kernel %s %s\n", t->release, t->version);
	fprintf(f, "default %lld\n", (long long)t->def);
	fprintf(f, "bounds %lld %lld\n", (long long)t->min, (long long)t->max);
	if (t->ends_checked)
		fputs("checked ends\n", f);
	if (t->nr_proved)
		fprintf(f, "proved %s %d\n", t->proved_every ? "every" : "sampled",
			t->nr_proved);
	if (t->nr_ranges) {
		fputs("values", f);
		for (int i = 0; i < t->nr_ranges; i++)
			write_range(f, t->ranges[i]);
		fputc('\n', f);
	}
	fprintf(f, "spans %d\n", t->nr_spans);
	for (int i = 0; i < t->nr_spans; i++)
		write_span(f, i, &t->spans[i]);
	for (int i = 0; i < t->nr_notes; i++)
		fprintf(f, "note %s\n", t->notes[i]);
	if (fclose(f)) {
		free(buf);
		return xk_err(-ENOMEM, "writing %s: out of memory", path);
	}
	err = xk_write_file(path, buf, len, 0644);
	free(buf);
	return err ? xk_err(err, "cannot write %s", path) : 0;
}

int xk_scope_write(const struct xk_scope *t, const char *path)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_scope_write_impl(t, path));
}

/* ---- reading ---- */

struct reader {
	const char *path;
	char *text, *pos;
	int line;
	int version;		/* of the table's format */
	char cur[4096];
};

static int next_line(struct reader *r)
{
	char *end;

	if (!*r->pos)
		return -ENOENT;
	end = strchrnul(r->pos, '\n');
	if ((size_t)(end - r->pos) >= sizeof(r->cur))
		return -E2BIG;
	memcpy(r->cur, r->pos, end - r->pos);
	r->cur[end - r->pos] = '\0';
	r->pos = *end ? end + 1 : end;
	r->line++;
	return 0;
}

static int bad(struct reader *r, const char *what)
{
	return xk_err(-EINVAL, "%s:%d: malformed scope table: %s (line: '%.80s')",
		      r->path, r->line, what, r->cur);
}

/* Reads the next line, which must start with key; returns its value. */
static int expect_key(struct reader *r, const char *key, const char **value)
{
	size_t n = strlen(key);

	if (next_line(r))
		return xk_err(-EINVAL, "%s: malformed scope table: ends before "
				       "'%s' (line %d)", r->path, key, r->line);
	if (strncmp(r->cur, key, n) || (r->cur[n] != ' ' && r->cur[n] != '\0'))
		return bad(r, key);
	*value = r->cur[n] ? r->cur + n + 1 : r->cur + n;
	return 0;
}

/*
 * A `values` line's ranges (after "values "): sorted, disjoint and apart,
 * from the bounds' minimum to their maximum, the default in one.
 */
static int parse_values(struct reader *r, const char *v, struct xk_scope *t)
{
	const char *p = v;

	if (!t->nr_proved)
		return bad(r, "values without a proved line before it");
	if (t->nr_ranges)
		return bad(r, "a second values line");
	while (*p) {
		long long a, b;
		int n = 0;

		if (t->nr_ranges == XK_SCOPE_MAX_RANGES)
			return bad(r, "more than " XK_STR(XK_SCOPE_MAX_RANGES)
				      " ranges of values");
		if (sscanf(p, "%lld..%lld%n", &a, &b, &n) == 2 && n)
			;
		else if (sscanf(p, "%lld%n", &a, &n) == 1 && n)
			b = a;
		else
			return bad(r, "values A..B or A, space-separated");
		p += n;
		if (*p && *p++ != ' ')
			return bad(r, "values A..B or A, space-separated");
		if (a > b || (t->nr_ranges && a <= t->ranges[t->nr_ranges - 1][1] + 1))
			return bad(r, "values in order, each range apart from the last");
		t->ranges[t->nr_ranges][0] = a;
		t->ranges[t->nr_ranges][1] = b;
		t->nr_ranges++;
	}
	if (!t->nr_ranges || t->ranges[0][0] != t->min ||
	    t->ranges[t->nr_ranges - 1][1] != t->max)
		return bad(r, "values from the lower bound to the upper bound");
	for (int i = 0; i < t->nr_ranges; i++)
		if (t->def >= t->ranges[i][0] && t->def <= t->ranges[i][1])
			return 0;
	return bad(r, "values without the default");
}

/*
 * The optional lines between bounds and spans (`checked ends`: xk gen;
 * `proved`, `values`: xk gen --prove), then the spans line, whose value goes to *spans.
 */
static int read_proof(struct reader *r, struct xk_scope *t, const char **spans)
{
	char how[16];
	int n, err;

	for (;;) {
		if (next_line(r))
			return xk_err(-EINVAL, "%s: malformed scope table: ends "
					       "before 'spans' (line %d)",
				      r->path, r->line);
		if (!strncmp(r->cur, "spans ", 6)) {
			*spans = r->cur + 6;
			return 0;
		}
		if (!strcmp(r->cur, "checked ends")) {
			if (t->ends_checked || t->nr_proved || t->nr_ranges)
				return bad(r, "a second checked line, or one after proved");
			t->ends_checked = true;
			continue;
		}
		if (!strncmp(r->cur, "proved ", 7)) {
			if (t->nr_proved || t->nr_ranges)
				return bad(r, "a second proved line, or one after values");
			if (sscanf(r->cur + 7, "%15s %d", how, &n) != 2 || n < 1 ||
			    (strcmp(how, "every") && strcmp(how, "sampled")))
				return bad(r, "proved every|sampled N");
			t->nr_proved = n;
			t->proved_every = !strcmp(how, "every");
			continue;
		}
		if (!strncmp(r->cur, "values ", 7)) {
			err = parse_values(r, r->cur + 7, t);
			if (err)
				return err;
			continue;
		}
		return bad(r, "spans");
	}
}

static void loc_to_ioc(const struct xk_scope_loc *l, struct xk_ioc_loc *d)
{
	d->kind = l->kind;
	d->base = l->base;
	d->disp = l->disp;
	d->width = l->width;
	d->rip_end = l->rip_end;
	d->expr = l->expr;
}

static void mem_in_to_ioc(const struct xk_scope_mem_in *m,
			  struct xk_ioc_mem_in *d)
{
	d->base = m->base;
	d->width = m->width;
	d->disp = m->disp;
	d->index = m->scale ? m->index : 0;
	d->scale = m->scale;
}

void xk_scope_span_to_ioc(const struct xk_scope_span *s, struct xk_ioc_span *d)
{
	memset(d, 0, sizeof(*d));
	xk_strlcpy(d->func, s->func, sizeof(d->func));
	d->func_size = s->func_size;
	d->start = s->start;
	d->probe = s->probe;
	d->expect_len = s->expect_len;
	memcpy(d->expect, s->expect, sizeof(d->expect));
	memcpy(d->expect_mask, s->expect_mask, sizeof(d->expect_mask));
	d->nr_locs = s->nr_locs;
	for (int l = 0; l < s->nr_locs && l < XK_MAX_LOCS; l++)
		loc_to_ioc(&s->locs[l], &d->locs[l]);
	d->nr_exits = s->nr_exits;
	d->escapes = s->escapes;
	memcpy(d->exits, s->exits, sizeof(d->exits));
	d->nr_ranges = s->nr_ranges;
	memcpy(d->ranges, s->ranges, sizeof(d->ranges));
	d->post_len = s->post_len;
	d->emulate = s->emulate;
	d->call_state = s->call_state;
	d->nr_points = s->nr_points > 0 ? s->nr_points : 0;
	for (int j = 0; j < s->nr_points && j < XK_MAX_POINTS; j++)
		d->points[j] = s->points[j];
	d->nr_mem_in = s->nr_mem_in;
	for (int k = 0; k < s->nr_mem_in && k < XK_MAX_MEM_INPUTS; k++)
		mem_in_to_ioc(&s->mem_in[k], &d->mem_in[k]);
	d->nr_imms = s->nr_imms;
	for (int k = 0; k < s->nr_imms && k < XK_MAX_PARAMS; k++) {
		d->imms[k].insn = s->imm[k].insn;
		d->imms[k].field = s->imm[k].field;
		d->imms[k].insn_len = s->imm[k].insn_len;
		d->imms[k].size = s->imm[k].size;
		d->imms[k].width = s->imm[k].width;
		d->imms[k].a = s->fit[k][0];
		d->imms[k].b = s->fit[k][1];
	}
}

/* The rule's reading of span i: unsupported spans are never loaded. */
static int span_view(const void *ctx, __u32 i, struct xk_rule_span_view *v)
{
	const struct xk_scope *t = ctx;
	const struct xk_scope_span *s = &t->spans[i];

	/* unsupported spans are never loaded; a variable is no code */
	if (s->cls == XK_SPAN_UNSUPPORTED || s->cls == XK_SPAN_DATA)
		return 1;
	v->escapes = s->escapes;
	v->nr_ranges = s->nr_ranges;
	v->ranges = (const __u64 (*)[2])s->ranges;
	v->probe = s->probe;
	/* one function: the first span of the same object and name */
	v->func_id = i;
	for (__u32 j = 0; j < i; j++)
		if (!strcmp(t->spans[j].object, s->object) &&
		    !strcmp(t->spans[j].func, s->func)) {
			v->func_id = j;
			break;
		}
	return 0;
}

bool xk_scope_spans_nest(const struct xk_scope *t)
{
	return xk_rule_spans_nest(span_view, t, (__u32)t->nr_spans);
}

const char *xk_reg_name(int reg)
{
	static const char *const names[XK_LOC_FLAGS + 1] = {
		"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "flags",
	};

	return reg >= 0 && reg <= XK_LOC_FLAGS ? names[reg] : "?";
}

static int parse_reg(const char *s)
{
	for (int g = 0; g <= XK_LOC_FLAGS; g++)
		if (!strcmp(s, xk_reg_name(g)))
			return g;
	return -1;
}

/* "K BASE DISP WIDTH [INDEX SCALE]" into m, K being want, nothing after;
 * 0 or -EINVAL. An index needs format version XK_SCOPE_VERSION_INDEX. The
 * rules (xk_rule_check_mem_in) check the values at load. */
static int parse_mem_in(const struct reader *r, const char *v, int want,
			struct xk_scope_mem_in *m)
{
	char base[16], index[16];
	long long disp;
	int k, n, end4 = -1, end6 = -1;

	memset(m, 0, sizeof(*m));
	n = sscanf(v, "%d %15s %lld %d%n %15s %d%n", &k, base, &disp, &m->width,
		   &end4, index, &m->scale, &end6);
	if ((n == 4 && v[end4] != '\0') || (n == 6 && v[end6] != '\0') ||
	    (n == 6 && r->version < XK_SCOPE_VERSION_INDEX))
		return -EINVAL;
	if ((n != 4 && n != 6) || k != want ||
	    (m->base = parse_reg(base)) < 0 || m->base >= XK_NR_REGS)
		return -EINVAL;
	if (n == 6 && ((m->index = parse_reg(index)) < 0 ||
		       m->index >= XK_NR_REGS || m->scale <= 0))
		return -EINVAL;
	m->disp = disp;
	return 0;
}

static int parse_loc(struct reader *r, const char *v, struct xk_scope_loc *l)
{
	char name[64], *tok, *save = NULL, *copy;
	int consumed = 0, err = 0;

	if (sscanf(v, "%63s %d %n", name, &l->width, &consumed) < 2)
		return bad(r, "loc NAME WIDTH PROGRAM");
	if (!strncmp(name, "mem:", 4)) {
		char base[16];
		long long disp;

		long long end;

		if (!strncmp(name + 4, "rip:", 4)) {
			if (sscanf(name + 8, "%lld:%lld", &disp, &end) != 2 ||
			    disp < 0 || end < disp + 4)
				return bad(r, "rip-relative memory location");
			l->base = XK_BASE_RIP;
			l->rip_end = end;
		} else if (sscanf(name + 4, "%15[^:]:%lld", base, &disp) != 2 ||
			   (l->base = parse_reg(base)) < 0 || l->base >= XK_NR_REGS) {
			return bad(r, "memory location");
		}
		l->kind = XK_LOC_MEM;
		l->disp = disp;
	} else if ((l->kind = parse_reg(name)) < 0) {
		return bad(r, "unknown location");
	}
	if (l->width != 8 && l->width != 16 && l->width != 32 && l->width != 64)
		return bad(r, "location width");
	copy = strdup(v + consumed);
	if (!copy)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	l->expr.len = 0;
	for (tok = strtok_r(copy, " ", &save); tok && !err;
	     tok = strtok_r(NULL, " ", &save)) {
		struct xk_expr_insn *in;
		char op[16];
		unsigned int w, reg;
		long long imm, imm2;
		int o;

		if (l->expr.len == XK_EXPR_MAX_INSNS) {
			err = bad(r, "program too long");
			break;
		}
		in = &l->expr.insn[l->expr.len++];
		if (sscanf(tok, "%15[a-z_]:%u:%u:%lld:%lld", op, &w, &reg, &imm,
			   &imm2) != 5) {
			err = bad(r, "program instruction");
			break;
		}
		for (o = 1; o < XK_OP_MAX && strcmp(op, xk_op_name(o)); o++)
			;
		if (o == XK_OP_MAX) {
			err = bad(r, "unknown program operation");
			break;
		}
		in->op = o;
		in->width = w;
		in->reg = reg;
		in->imm = imm;
		in->imm2 = imm2;
	}
	free(copy);
	if (!err && xk_expr_validate(&l->expr))
		err = bad(r, "invalid program");
	return err;
}

static int parse_span(struct reader *r, struct xk_scope_span *s, int idx)
{
	const char *v;
	unsigned long long x;
	int err, n, c;

	memset(s->arg_reg, -1, sizeof(s->arg_reg));
	err = expect_key(r, "span", &v);
	if (err)
		return err;
	if (sscanf(v, "%d", &n) != 1 || n != idx)
		return bad(r, "span number");
	err = expect_key(r, "object", &v) ?: xk_strlcpy(s->object, v, sizeof(s->object));
	err = err ?: expect_key(r, "function", &v);
	if (err)
		return err == -ENAMETOOLONG ? bad(r, "too long") : err;
	{
		char fn[128];

		if (sscanf(v, "%127s %llu", fn, &x) != 2)
			return bad(r, "function NAME SIZE");
		xk_strlcpy(s->func, fn, sizeof(s->func));
		s->func_size = x;
	}
	err = expect_key(r, "class", &v);
	if (err)
		return err;
	for (c = 0; c <= XK_SPAN_DATA && strcmp(v, class_names[c]); c++)
		;
	if (c > XK_SPAN_DATA)
		return bad(r, "unknown class");
	s->cls = c;
	err = expect_key(r, "start", &v);
	if (err)
		return err;
	if (sscanf(v, "%llx", &x) != 1)
		return bad(r, "start offset");
	s->start = x;
	if (s->cls == XK_SPAN_UNSUPPORTED) {
		err = expect_key(r, "why", &v);
		if (!err)
			xk_strlcpy(s->why, v, sizeof(s->why));
		return err ?: expect_key(r, "end", &v);
	}
	err = expect_key(r, "probe", &v);
	if (err)
		return err;
	/* a variable's field may end where the variable does */
	if (sscanf(v, "%llx", &x) != 1 || x <= s->start ||
	    x > s->func_size - (s->cls != XK_SPAN_DATA))
		return bad(r, "probe offset (after start, inside the function)");
	s->probe = x;
	err = expect_key(r, "expect", &v);
	if (err)
		return err;
	s->expect_len = 0;
	for (const char *p = v; *p;) {
		unsigned int byte;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (s->expect_len == XK_MAX_EXPECT)
			return bad(r, "too many expected bytes");
		if (!strncmp(p, "??", 2)) {
			s->expect_mask[s->expect_len] = 0;
			s->expect[s->expect_len++] = 0;
		} else if (sscanf(p, "%2x", &byte) == 1 && p[1] && (p[2] == ' ' || !p[2])) {
			s->expect_mask[s->expect_len] = 0xff;
			s->expect[s->expect_len++] = byte;
		} else {
			return bad(r, "expected bytes");
		}
		p += 2;
	}
	/* a variable's bytes are its field, [start, probe) */
	if (s->cls == XK_SPAN_DATA ? s->expect_len != s->probe - s->start :
				     s->expect_len <= s->probe - s->start)
		return bad(r, "expected bytes must cover the probe point");
	err = expect_key(r, "optimizable", &v);
	if (err)
		return err;
	s->optimizable = !strcmp(v, "yes");
	s->nr_params = 0;
	s->nr_locs = 0;
	for (;;) {
		if (next_line(r))
			return bad(r, "span ends early");
		if (!strncmp(r->cur, "fit ", 4)) {
			int k;
			long long a, b;

			if (sscanf(r->cur + 4, "%d %lld %lld", &k, &a, &b) != 3 ||
			    k != s->nr_params || k >= XK_MAX_PARAMS)
				return bad(r, "fit K A B");
			s->fit[k][0] = a;
			s->fit[k][1] = b;
			s->nr_params++;
		} else if (!strncmp(r->cur, "pervalue", 8) &&
			   (r->cur[8] == ' ' || !r->cur[8])) {
			const char *p = r->cur + 8;
			int k = 0, used;
			unsigned long long off;

			if (s->nr_points)
				return bad(r, "pervalue after its points");
			while (sscanf(p, " 0x%llx%n", &off, &used) == 1) {
				if (k == s->nr_params)
					return bad(r, "pervalue: more offsets than fits");
				s->param_insn[k++] = off;
				p += used;
			}
			if (*p || k != s->nr_params || !k)
				return bad(r, "pervalue INSN... (one offset per fit, "
					   "after the fits)");
			s->nr_points = -1;	/* points follow */
		} else if (!strncmp(r->cur, "point ", 6)) {
			const char *p = r->cur + 6;
			long long pn, pval;
			int k = 0, used, j = s->nr_points < 0 ? 0 : s->nr_points;

			if (!s->nr_points)
				return bad(r, "point before pervalue");
			if (j == XK_MAX_POINTS)
				return bad(r, "more points than the limit");
			if (sscanf(p, "%lld%n", &pn, &used) != 1)
				return bad(r, "point N P0 P1 ...");
			p += used;
			s->points[j].n = pn;
			while (sscanf(p, " %lld%n", &pval, &used) == 1) {
				if (k == s->nr_params)
					return bad(r, "point: more parameters than fits");
				s->points[j].p[k++] = pval;
				p += used;
			}
			if (*p || k != s->nr_params)
				return bad(r, "point N P0 P1 ... (one per fit)");
			s->nr_points = j + 1;
		} else if (!strcmp(r->cur, "emulate")) {
			s->emulate = XK_EMULATE_SPAN;
		} else if (!strcmp(r->cur, "emulate replay")) {
			s->emulate = XK_EMULATE_REPLAY;
		} else if (!strcmp(r->cur, "emulate data")) {
			s->emulate = XK_EMULATE_DATA;
		} else if (!strcmp(r->cur, "call-state")) {
			s->call_state = XK_CALL_STATE_FRAME;
		} else if (!strcmp(r->cur, "call-state heap")) {
			s->call_state = XK_CALL_STATE_HEAP;
		} else if (!strncmp(r->cur, "replay ", 7)) {
			struct xk_scope_replay rp = { .nr_locs = 0 };
			long long value;

			if (s->emulate != XK_EMULATE_REPLAY || s->nr_locs ||
			    s->nr_mem_in)
				return bad(r, "replay without 'emulate replay', or "
					   "after the span's own locs");
			if (sscanf(r->cur + 7, "%lld", &value) != 1)
				return bad(r, "replay N");
			if (s->nr_replays == XK_MAX_POINTS)
				return bad(r, "more replays than the limit");
			rp.n = value;
			err = xk_scope_add_replay(s, &rp);
			if (err)
				return err;
		} else if (s->nr_replays && !strncmp(r->cur, "input ", 6)) {
			struct xk_scope_replay *rp = &s->replays[s->nr_replays - 1];

			if (rp->nr_mem_in == XK_MAX_MEM_INPUTS || rp->nr_locs ||
			    parse_mem_in(r, r->cur + 6, rp->nr_mem_in,
					 &rp->mem_in[rp->nr_mem_in]))
				return bad(r, "input K REGISTER DISP WIDTH [INDEX SCALE] "
					   "(before the replay's locs)");
			rp->nr_mem_in++;
		} else if (s->nr_replays && !strncmp(r->cur, "loc ", 4)) {
			struct xk_scope_replay *rp = &s->replays[s->nr_replays - 1];

			if (rp->nr_locs == XK_REPLAY_MAX_LOCS)
				return bad(r, "too many locations in a replay");
			err = parse_loc(r, r->cur + 4, &rp->locs[rp->nr_locs]);
			if (err)
				return err;
			rp->nr_locs++;
		} else if (s->nr_replays && !strncmp(r->cur, "text ", 5)) {
			struct xk_scope_replay *rp = &s->replays[s->nr_replays - 1];

			if (!rp->nr_locs)
				return bad(r, "text before loc");
			xk_strlcpy(rp->locs[rp->nr_locs - 1].text, r->cur + 5,
				   sizeof(rp->locs[0].text));
		} else if (!strncmp(r->cur, "post ", 5)) {
			unsigned int len;

			if (sscanf(r->cur + 5, "%u", &len) != 1 || !len || len > 15 ||
			    len > s->probe - s->start)
				return bad(r, "post LEN (the span's last instruction, "
					   "1 to 15 bytes)");
			s->post_len = len;
		} else if (!strncmp(r->cur, "input ", 6)) {
			if (s->nr_mem_in == XK_MAX_MEM_INPUTS ||
			    parse_mem_in(r, r->cur + 6, s->nr_mem_in,
					 &s->mem_in[s->nr_mem_in]))
				return bad(r, "input K REGISTER DISP WIDTH [INDEX SCALE] "
					   "(before the locs)");
			s->nr_mem_in++;
		} else if (!strncmp(r->cur, "imm ", 4)) {
			struct xk_scope_imm *m = &s->imm[s->nr_imms];
			unsigned long long insn, field;
			int k;

			if (sscanf(r->cur + 4, "%d %llx %u %llx %u %u", &k, &insn,
				   &m->insn_len, &field, &m->size, &m->width) != 6 ||
			    k != s->nr_imms || k >= s->nr_params)
				return bad(r, "imm K INSN LEN FIELD SIZE WIDTH (after its fit)");
			m->insn = insn;
			m->field = field;
			s->nr_imms++;
		} else if (!strncmp(r->cur, "loc ", 4)) {
			if (s->nr_locs == XK_MAX_LOCS)
				return bad(r, "too many locations");
			err = parse_loc(r, r->cur + 4, &s->locs[s->nr_locs]);
			if (err)
				return err;
			s->nr_locs++;
		} else if (!strncmp(r->cur, "text ", 5)) {
			if (!s->nr_locs)
				return bad(r, "text before loc");
			xk_strlcpy(s->locs[s->nr_locs - 1].text, r->cur + 5,
				   sizeof(s->locs[0].text));
		} else if (!strncmp(r->cur, "safe", 4)) {
			char *p = r->cur + 4, *endp;

			s->nr_exits = 0;
			while (*p) {
				x = strtoull(p, &endp, 16);
				if (endp == p)
					break;
				if (s->nr_exits == XK_MAX_EXITS)
					return bad(r, "too many safe-span exits");
				s->exits[s->nr_exits++] = x;
				p = endp;
			}
		} else if (!strncmp(r->cur, "ranges", 6)) {
			char *p = r->cur + 6;
			unsigned long long a, b;
			int used;

			s->nr_ranges = 0;
			while (sscanf(p, " %llx-%llx%n", &a, &b, &used) == 2) {
				if (s->nr_ranges == XK_MAX_RANGES || a >= b ||
				    b > s->func_size)
					return bad(r, "safe-span range");
				s->ranges[s->nr_ranges][0] = a;
				s->ranges[s->nr_ranges++][1] = b;
				p += used;
			}
		} else if (!strncmp(r->cur, "escapes", 7)) {
			s->escapes = (strstr(r->cur, "store") ? XK_ESCAPE_STORE : 0) |
				     (strstr(r->cur, "call") ? XK_ESCAPE_CALL : 0) |
				     (strstr(r->cur, " ret") ? XK_ESCAPE_RET : 0);
		} else if (!strncmp(r->cur, "slice ", 6)) {
			s->slice_len = strtoul(r->cur + 6, NULL, 10);
		} else if (!strncmp(r->cur, "copies ", 7)) {
			s->copies = (int)strtol(r->cur + 7, NULL, 10);
			if (s->copies < 0)
				return bad(r, "copies N");
		} else if (!strncmp(r->cur, "args", 4) &&
			   (r->cur[4] == ' ' || !r->cur[4])) {
			char reg[16];
			int a, used, g;

			for (const char *p = r->cur + 4;
			     sscanf(p, " %d:%15[a-z0-9]%n", &a, reg, &used) == 2;
			     p += used) {
				g = parse_reg(reg);
				if (a < 0 || a >= XK_MAX_ARGS || g < 0 ||
				    g >= XK_NR_REGS || g == XK_RSP)
					return bad(r, "args I:REGISTER");
				s->arg_reg[a] = g;
			}
		} else if (!strcmp(r->cur, "end")) {
			break;
		} else {
			return bad(r, "unknown key in span");
		}
	}
	if ((s->emulate == XK_EMULATE_DATA) != (s->cls == XK_SPAN_DATA))
		return bad(r, "class data and emulate data go together");
	if (!s->nr_locs && s->emulate != XK_EMULATE_REPLAY &&
	    s->emulate != XK_EMULATE_DATA)
		return bad(r, "a supported span needs a loc");
	if (s->emulate == XK_EMULATE_REPLAY && !s->nr_replays)
		return bad(r, "a replayed span needs a replay");
	if (s->nr_points < 0)
		return bad(r, "pervalue without a point");
	if (s->nr_imms && s->nr_imms != s->nr_params)
		return bad(r, "an imm line for every fit, or none");
	for (int l = 0; l < s->nr_locs; l++)
		for (uint32_t i = 0; i < s->locs[l].expr.len; i++)
			if (s->locs[l].expr.insn[i].op == XK_OP_PARAM &&
			    s->nr_params == 0)
				return bad(r, "program uses a parameter without a fit");
	return 0;
}

static int xk_scope_read_impl(const char *path, struct xk_scope *t)
{
	struct reader r = { .path = path };
	const char *v;
	long long a, b;
	int err, n, version;

	memset(t, 0, sizeof(*t));
	err = xk_read_file(path, &r.text, NULL);
	if (err)
		return xk_err(err, "cannot read scope table %s: %s", path,
			      strerror(-err));
	r.pos = r.text;
	err = expect_key(&r, XK_SCOPE_MAGIC, &v);
	if (err) {
		err = xk_err(-EINVAL, "%s is not a scope table (no '%s' line)",
			     path, XK_SCOPE_MAGIC);
		goto out;
	}
	if (sscanf(v, "%d", &version) != 1 || version < 1 ||
	    version > XK_SCOPE_VERSION) {
		err = xk_err(-EINVAL, "%s: scope table version %s, this xk reads "
				      "versions 1 to %d", path, v, XK_SCOPE_VERSION);
		goto out;
	}
	r.version = version;
	err = expect_key(&r, "constant", &v) ?: xk_strlcpy(t->constant, v, sizeof(t->constant));
	err = err ?: expect_key(&r, "kind", &v) ?: xk_strlcpy(t->kind, v, sizeof(t->kind));
	err = err ?: expect_key(&r, "source", &v) ?: xk_strlcpy(t->source, v, sizeof(t->source));
	err = err ?: expect_key(&r, "kernel", &v);
	if (!err && sscanf(v, "%127s %127s", t->release, t->version) != 2)
		err = bad(&r, "kernel RELEASE VERSION");
	err = err ?: expect_key(&r, "default", &v);
	if (!err && sscanf(v, "%lld", &a) != 1)
		err = bad(&r, "default N");
	t->def = a;
	err = err ?: expect_key(&r, "bounds", &v);
	if (!err && (sscanf(v, "%lld %lld", &a, &b) != 2 || a > b ||
		     t->def < a || t->def > b))
		err = bad(&r, "bounds MIN MAX around the default");
	t->min = a;
	t->max = b;
	err = err ?: read_proof(&r, t, &v);
	if (!err && (sscanf(v, "%d", &n) != 1 || n < 0 || n > 4096))
		err = bad(&r, "spans N");
	if (err)
		goto out;
	t->spans = calloc(n ? n : 1, sizeof(*t->spans));
	if (!t->spans) {
		err = xk_err(-ENOMEM, "reading %s: out of memory", path);
		goto out;
	}
	for (int i = 0; i < n && !err; i++) {
		err = parse_span(&r, &t->spans[i], i) ?:
		      check_span_rules(path, t, i, &t->spans[i]);
		t->nr_spans = i + 1;
	}
	/* notes follow the spans, one a line */
	while (!err && !next_line(&r)) {
		if (!r.cur[0])
			continue;
		if (strncmp(r.cur, "note ", 5))
			err = bad(&r, "text after the last span");
		else if (t->nr_notes >= XK_SCOPE_MAX_NOTES)
			err = bad(&r, "more than " XK_STR(XK_SCOPE_MAX_NOTES) " notes");
		else if (xk_strlcpy(t->notes[t->nr_notes++], r.cur + 5,
				    sizeof(t->notes[0])))
			err = bad(&r, "a note longer than 255 characters");
	}
out:
	free(r.text);
	if (err)
		xk_scope_free(t);
	return err;
}

int xk_scope_read(const char *path, struct xk_scope *t)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_scope_read_impl(path, t));
}

const char *xk_scope_bounds_why(const struct xk_scope *t)
{
	for (int i = 0; i < t->nr_notes; i++)
		if (!strncmp(t->notes[i], "bounds: ", 8))
			return t->notes[i] + 8;
	return "";
}

/* The text of t's "values: " note (why some values of the bounds are not
 * among its values), or "". */
static const char *values_why(const struct xk_scope *t)
{
	for (int i = 0; i < t->nr_notes; i++)
		if (!strncmp(t->notes[i], "values: ", 8))
			return t->notes[i] + 8;
	return "";
}

void xk_scope_values_text(const struct xk_scope *t, char *buf, size_t size)
{
	const int64_t bounds[1][2] = { { t->min, t->max } };
	const int64_t (*r)[2] = t->nr_ranges ? t->ranges : bounds;
	int nr = t->nr_ranges ? t->nr_ranges : 1;
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < nr && len < size; i++) {
		if (r[i][0] == r[i][1])
			snprintf(buf + len, size - len, "%s%lld", i ? ", " : "",
				 (long long)r[i][0]);
		else
			snprintf(buf + len, size - len, "%s%lld..%lld",
				 i ? ", " : "", (long long)r[i][0],
				 (long long)r[i][1]);
		len = strlen(buf);
	}
}

bool xk_scope_takes_value(const struct xk_scope *t, long long value)
{
	if (value < t->min || value > t->max)
		return false;
	for (int i = 0; i < t->nr_ranges; i++)
		if (value >= t->ranges[i][0] && value <= t->ranges[i][1])
			return true;
	return !t->nr_ranges;
}

const char *xk_scope_left_out_name(const struct xk_scope_span *sp)
{
	return strcmp(sp->object, "*") ? sp->object : "objects left out";
}

int xk_scope_check_value(const struct xk_scope *t, long long value)
{
	const char *why = xk_scope_bounds_why(t);
	char values[400];

	if (value < t->min || value > t->max)
		return xk_err(-ERANGE, "%s: value %lld is out of bounds [%lld, "
				       "%lld]%s%s", t->constant, value,
			      (long long)t->min, (long long)t->max,
			      why[0] ? ": " : "", why);
	if (xk_scope_takes_value(t, value))
		return 0;
	why = values_why(t);
	xk_scope_values_text(t, values, sizeof(values));
	return xk_err(-ERANGE, "%s: value %lld is not among the values proved "
			       "for this table (%s)%s%s", t->constant, value,
		      values, why[0] ? ": " : "", why);
}

void xk_scope_free(struct xk_scope *t)
{
	for (int i = 0; t->spans && i < t->nr_spans; i++)
		free(t->spans[i].replays);
	free(t->spans);
	t->spans = NULL;
	t->nr_spans = 0;
	t->nr_notes = 0;
}

void xk_scope_replay_to_ioc(const struct xk_scope_replay *r,
			    struct xk_ioc_replay *d)
{
	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	d->value = r->n;
	d->nr_locs = r->nr_locs;
	for (int l = 0; l < r->nr_locs && l < XK_REPLAY_MAX_LOCS; l++)
		loc_to_ioc(&r->locs[l], &d->locs[l]);
	d->nr_mem_in = r->nr_mem_in;
	for (int k = 0; k < r->nr_mem_in && k < XK_MAX_MEM_INPUTS; k++)
		mem_in_to_ioc(&r->mem_in[k], &d->mem_in[k]);
}

const struct xk_scope_replay *xk_scope_replay_of(const struct xk_scope_span *sp,
						 int64_t n)
{
	for (int j = 0; j < sp->nr_replays; j++)
		if (sp->replays[j].n == n)
			return &sp->replays[j];
	return NULL;
}

int xk_scope_add_replay(struct xk_scope_span *sp, const struct xk_scope_replay *r)
{
	if (!sp->replays) {
		sp->replays = calloc(XK_MAX_POINTS, sizeof(*sp->replays));
		if (!sp->replays)
			return xk_err(-ENOMEM, "%s: out of memory", __func__);
	}
	if (sp->nr_replays == XK_MAX_POINTS) {
		memmove(&sp->replays[0], &sp->replays[1],
			(XK_MAX_POINTS - 1) * sizeof(sp->replays[0]));
		sp->nr_replays--;
	}
	sp->replays[sp->nr_replays++] = *r;
	return 0;
}

bool xk_scope_span_has_value(const struct xk_scope_span *sp, int64_t n,
			     int64_t def)
{
	if (sp->cls == XK_SPAN_UNSUPPORTED || n == def)
		return true;
	if (sp->emulate == XK_EMULATE_REPLAY)
		return xk_scope_replay_of(sp, n) != NULL;
	if (sp->nr_points <= 0)
		return true;
	for (int j = 0; j < sp->nr_points; j++)
		if (sp->points[j].n == n)
			return true;
	return false;
}
