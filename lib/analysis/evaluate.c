// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: a macro whose body is an expression of other macros,
 * (2*HZ), (100 * NSEC_PER_MSEC), HPAGE_PMD_NR, evaluated in the kernel's
 * configuration by the kernel's own compiler, and the template that makes
 * its value the number an engineer would edit in the source.
 *
 * The body is the one an object's unit holds (variants.c: the #if branches
 * of this configuration taken, continued lines joined, comments gone).
 * Probe variables are appended to a unit, initialised with the body and its
 * parts, and the unit is compiled to assembly with the object's own flags;
 * the numbers are read back from the variables' data. The unit's #define
 * and #undef lines alone are tried first (a tenth of a second, and enough
 * for HZ, USEC_PER_MSEC, PAGE_SHIFT: a body that compiles without the
 * declarations has the same value with them); a body that needs
 * declarations (sizeof a struct, an enum) gets the whole unit (seconds).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <unistd.h>

#include "build.h"

/* ---- the body's shape ---- */

/* Whether text[0..n) is an integer literal ("2", "0x10", "5UL"); *digits
 * is the length of its number, without the suffix. */
static bool int_literal(const char *text, size_t n, long long *v, size_t *digits)
{
	char buf[64], *end;

	while (n && isspace((unsigned char)*text))
		text++, n--;
	while (n && isspace((unsigned char)text[n - 1]))
		n--;
	if (!n || n >= sizeof(buf) || !isdigit((unsigned char)*text))
		return false;
	memcpy(buf, text, n);
	buf[n] = '\0';
	errno = 0;
	*v = strtoll(buf, &end, 0);
	if (errno)
		return false;
	*digits = end - buf;
	while (*end && strchr("uUlL", *end))
		end++;
	return !*end;
}

/* The index of the parenthesis that closes the one at b[open], or -1. */
static int closing_paren(const char *b, int open, int len)
{
	int depth = 0;

	for (int i = open; i < len; i++) {
		depth += b[i] == '(';
		depth -= b[i] == ')';
		if (!depth)
			return i;
	}
	return -1;
}

int body_shape(const char *body, struct body_shape *s)
{
	char b[256], op = 0;
	int len, lo = 0, hi, depth = 0, nr_lit = 0, nr_operands = 0;
	int lit_at = -1, start;
	size_t lit_digits = 0;
	long long lit = 0;

	memset(s, 0, sizeof(*s));
	s->form = BODY_WHOLE;
	if (xk_snprintf(b, sizeof(b), "%s", body))
		return 0;	/* too long to take apart: a whole value */
	len = strlen(xk_trim(b));
	memmove(b, xk_trim(b), len + 1);
	/* '%' would be read as a conversion in the template; quotes hide
	 * operators: both are left whole */
	if (strpbrk(b, "%\"'"))
		return 0;
	hi = len;
	/* parentheses around the whole body: "(2*HZ)" is split as "2*HZ" */
	while (lo < hi && b[lo] == '(' && closing_paren(b, lo, hi) == hi - 1) {
		lo++;
		hi--;
		while (lo < hi && isspace((unsigned char)b[lo]))
			lo++;
		while (hi > lo && isspace((unsigned char)b[hi - 1]))
			hi--;
	}
	/* the operators at the top level: all '*', or all '+', or neither form */
	for (int i = lo; i < hi; i++) {
		depth += b[i] == '(';
		depth -= b[i] == ')';
		if (depth || !strchr("*/%+-<>&|^?:!~=,", b[i]))
			continue;
		if (op && b[i] != op)
			return 0;
		op = b[i];
	}
	if (op != '*' && op != '+')
		return 0;
	s->form = op == '*' ? BODY_SCALED : BODY_OFFSET;
	/* its operands: exactly one integer literal, the value */
	start = lo;
	for (int i = lo; i <= hi; i++) {
		long long v;
		size_t digits;

		depth += i < hi && b[i] == '(';
		depth -= i < hi && b[i] == ')';
		if (i < hi && (depth || b[i] != op))
			continue;
		nr_operands++;
		if (int_literal(b + start, i - start, &v, &digits)) {
			nr_lit++;
			lit = v;
			lit_digits = digits;
			lit_at = start + (int)strspn(b + start, " \t");
		} else {
			int a = start, e = i;
			size_t used = strlen(s->rest);

			while (a < e && isspace((unsigned char)b[a]))
				a++;
			while (e > a && isspace((unsigned char)b[e - 1]))
				e--;
			if (xk_snprintf(s->rest + used, sizeof(s->rest) - used,
					"%s%.*s", used ? (op == '*' ? " * " : " + ") : "",
					e - a, b + a))
				nr_lit = 0;	/* too long to name: whole */
		}
		start = i + 1;
	}
	if (nr_lit != 1 || nr_operands < 2 ||
	    xk_snprintf(s->tmpl, sizeof(s->tmpl), "%.*s%%lld%s", lit_at, b,
			b + lit_at + lit_digits)) {
		memset(s, 0, sizeof(*s));
		s->form = BODY_WHOLE;
		return 0;
	}
	s->literal = lit;
	return 0;
}

/* ---- the body's definition in the unit ---- */

/*
 * The body of the #define of c->name in obj's unit, preferring one made in
 * c->file (a unit holds every header's definitions); *line is that
 * definition's line in its file, from the unit's line markers.
 */
static int unit_define(const char *unit, const char *obj,
		       const struct xk_constant *c, char *body, size_t size,
		       int *line)
{
	const char *cur_file = NULL;
	size_t fl = strlen(c->file), cur_len = 0, nl = strlen(c->name);
	long cur_line = 0;
	bool found = false, own = false;
	int err = 0;

	for (const char *p = unit; *p && !own;) {
		const char *end = strchrnul(p, '\n');
		const char *q = p + strspn(p, " \t");

		if (p[0] == '#' && p[1] == ' ' && isdigit((unsigned char)p[2])) {
			const char *quote = strchr(p, '"');

			cur_line = strtol(p + 2, NULL, 10);
			cur_file = quote && quote < end ? quote + 1 : NULL;
			cur_len = cur_file ? strcspn(cur_file, "\"") : 0;
			p = *end ? end + 1 : end;
			continue;
		}
		if (*q == '#' && memmem(q, end - q, c->name, nl)) {
			char *copy = strndup(p, end - p);
			const char *b;

			if (!copy)
				return xk_err(-ENOMEM, "%s: out of memory", __func__);
			if (is_define_of(copy, c->name, &b)) {
				bool in_own = cur_file && cur_len >= fl && fl &&
					!strncmp(cur_file + cur_len - fl, c->file, fl) &&
					(cur_len == fl || cur_file[cur_len - fl - 1] == '/');

				if (!found || in_own) {
					err = xk_snprintf(body, size, "%s", b);
					*line = (int)cur_line;
					found = true;
					own = in_own;
				}
			}
			free(copy);
			if (err)
				return xk_err(err, "the definition of %s is longer than "
					      "%zu characters", c->name, size - 1);
		}
		cur_line++;
		p = *end ? end + 1 : end;
	}
	if (!found)
		return xk_err(-ENOENT, "%s:%d: %s is not defined in the unit of %s: "
			      "its definition is under an #if this configuration "
			      "leaves out", c->file, c->line, c->name, obj);
	memmove(body, xk_trim(body), strlen(xk_trim(body)) + 1);
	return 0;
}

/* ---- probes: expressions compiled with the object's flags ---- */

#define MAX_PROBES 10

struct probe {
	char expr[400];		/* a C expression of the unit */
	long long value;
	char error[256];	/* the compiler's first error on its line */
};

/* The C type of an expression, as a number _Generic picks (0: another). */
static const char *const type_names[] = {
	NULL, "_Bool", "char", "signed char", "unsigned char", "short",
	"unsigned short", "int", "unsigned int", "long", "unsigned long",
	"long long", "unsigned long long",
};
#define TYPE_INT 7

static int type_probe(char *expr, size_t size, const char *body)
{
	char assoc[512] = "";
	size_t used = 0;

	for (size_t i = 1; i < ARRAY_SIZE(type_names); i++)
		used += snprintf(assoc + used, sizeof(assoc) - used, "%s: %zu, ",
				 type_names[i], i);
	return xk_snprintf(expr, size, "_Generic((%s), %sdefault: 0)", body, assoc);
}

/* The number after "name:" in the assembly: .quad/.long/.zero */
static int read_probe(const char *asm_text, int i, long long *v)
{
	char label[48], *end;
	const char *p;

	snprintf(label, sizeof(label), "\n__xk_probe_%d:\n", i);
	p = strstr(asm_text, label);
	if (!p)
		return -ENOENT;
	p += strlen(label);
	p += strspn(p, " \t");
	if (!strncmp(p, ".zero", 5)) {	/* zero: gcc puts it in .bss */
		*v = 0;
		return 0;
	}
	if (strncmp(p, ".quad", 5))
		return -EINVAL;
	errno = 0;
	*v = strtoll(p + 5, &end, 0);
	return errno || end == p + 5 ? -EINVAL : 0;
}

/*
 * Compiles the probes appended to the unit (only its #define and #undef
 * lines when defines_only) with the unit's command: 0 with every value,
 * -EINVAL when the compiler refused (each probe's error filled), or
 * another -errno.
 */
static int compile_probes(const struct tree *t, const char *command,
			  const char *unit, bool defines_only,
			  const char *cache_dir, struct probe *pr, int n)
{
	char path_i[XK_PATH_MAX], path_s[XK_PATH_MAX], path_log[XK_PATH_MAX];
	char *script = NULL, *text = NULL, *diag = NULL;
	size_t cap = 0;
	FILE *f;
	int err, st;

	err = xk_snprintf(path_i, sizeof(path_i), "%s/probe-%d.i", cache_dir,
			  (int)getpid()) ?:
	      xk_snprintf(path_s, sizeof(path_s), "%s/probe-%d.s", cache_dir,
			  (int)getpid()) ?:
	      xk_snprintf(path_log, sizeof(path_log), "%s/probe-%d.log",
			  cache_dir, (int)getpid());
	if (err)
		return xk_err(err, "%s: path too long", cache_dir);
	f = open_memstream(&text, &cap);
	if (!f)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	if (!defines_only) {
		fputs(unit, f);
	} else {
		for (const char *p = unit; *p;) {
			const char *end = strchrnul(p, '\n');
			const char *q = p + strspn(p, " \t");

			if (*q == '#') {
				q += 1 + strspn(q + 1, " \t");
				if (!strncmp(q, "define", 6) || !strncmp(q, "undef", 5))
					fprintf(f, "%.*s\n", (int)(end - p), p);
			}
			p = *end ? end + 1 : end;
		}
	}
	/* probe i on line i + 1 of "<xk-probe>": errors name their probe */
	fputs("\n# 1 \"<xk-probe>\"\n", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "long long __xk_probe_%d = (long long)(%s);\n", i,
			pr[i].expr);
	if (fclose(f)) {
		free(text);
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	}
	err = xk_write_file(path_i, text, strlen(text), 0644);
	free(text);
	text = NULL;
	if (err)
		return xk_err(err, "cannot write %s", path_i);
	unlink(path_log);
	/* -w: only what stops the compiler matters, not the kernel's warnings */
	if (asprintf(&script, "%s -w -fpreprocessed -fdirectives-only -S -o %s %s",
		     command, path_s, path_i) < 0)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	{
		const char *argv[] = { "/bin/sh", "-c", script, NULL };
		struct xk_cmd cmd = { .argv = argv, .cwd = t->cwd,
				      .log_path = path_log,
				      .root = t->toolchain };

		st = xk_run(&cmd);
	}
	free(script);
	unlink(path_i);
	if (st < 0) {
		unlink(path_log);
		return st;
	}
	if (st) {
		bool any = false;

		xk_read_file(path_log, &diag, NULL);
		unlink(path_log);
		unlink(path_s);
		for (char *line = diag; line && *line;) {
			char *end = strchrnul(line, '\n'), *e;
			bool last = !*end;
			long at;

			*end = '\0';
			e = strstr(line, ": error: ");
			if (!strncmp(line, "<xk-probe>:", 11) && e) {
				at = strtol(line + 11, NULL, 10);
				if (at >= 1 && at <= n && !pr[at - 1].error[0]) {
					snprintf(pr[at - 1].error, sizeof(pr[0].error),
						 "%s", e + 9);
					any = true;
				}
			} else if (e && !any && !pr[0].error[0]) {
				/* the unit itself: named on the first probe */
				snprintf(pr[0].error, sizeof(pr[0].error), "%s", e + 9);
			}
			line = last ? end : end + 1;
		}
		free(diag);
		if (!pr[0].error[0] && !any)
			snprintf(pr[0].error, sizeof(pr[0].error),
				 "the compiler exited with status %d", st);
		return -EINVAL;
	}
	unlink(path_log);
	err = xk_read_file(path_s, &text, NULL);
	unlink(path_s);
	if (err)
		return xk_err(err, "cannot read %s", path_s);
	for (int i = 0; i < n && !err; i++)
		if (read_probe(text, i, &pr[i].value))
			err = xk_err(-EINVAL, "the compiler's assembly has no value "
				     "for %s", pr[i].expr);
	free(text);
	return err;
}

/* ---- what stopped an evaluation ---- */

static bool c_keyword(const char *w, size_t n)
{
	static const char *const kw[] = {
		"unsigned", "signed", "int", "long", "short", "char", "_Bool",
		"const", "volatile", "struct", "union", "enum", "void",
	};

	for (size_t i = 0; i < ARRAY_SIZE(kw); i++)
		if (strlen(kw[i]) == n && !strncmp(w, kw[i], n))
			return true;
	return false;
}

/*
 * The parts of a body that can fail on their own: each call, sizeof
 * included, with its arguments ("msecs_to_jiffies(2)"), and each name
 * that is not a type ("HZ"; not "u32" in "(u32)x", nor "struct page").
 */
static int body_parts(const char *b, struct probe *pr, int max)
{
	int n = 0;

	for (const char *p = b; *p && n < max;) {
		const char *w = p, *after;
		size_t len;

		if (!isalpha((unsigned char)*p) && *p != '_') {
			/* a number's letters ("0x1fUL") are not names */
			if (isdigit((unsigned char)*p))
				while (isalnum((unsigned char)*p) || *p == '_')
					p++;
			else
				p++;
			continue;
		}
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		len = p - w;
		after = p + strspn(p, " \t");
		if (c_keyword(w, len)) {
			/* the name after struct/union/enum is a tag */
			if (!strncmp(w, "struct", len) || !strncmp(w, "union", len) ||
			    !strncmp(w, "enum", len)) {
				p = after;
				while (isalnum((unsigned char)*p) || *p == '_')
					p++;
			}
			continue;
		}
		if (*after == '(') {
			int close = closing_paren(after, 0, strlen(after));

			if (close < 0)
				break;
			p = after + close + 1;
		} else if (w > b && w[-1] == '(' && *after == ')') {
			continue;	/* (type) of a cast */
		}
		if (!xk_snprintf(pr[n].expr, sizeof(pr[0].expr), "%.*s",
				 (int)(p - w), w))
			n++;
	}
	return n;
}

/* Why the body could not be evaluated: its first part that fails alone,
 * else the compiler's error on the whole. */
static int refuse_body(const struct tree *t, const char *command,
		       const char *unit, const char *cache_dir,
		       const struct xk_constant *c, const char *body,
		       const char *why)
{
	struct probe parts[MAX_PROBES];
	const char *part = body, *error = why;
	int n;

	memset(parts, 0, sizeof(parts));
	n = body_parts(body, parts, MAX_PROBES);
	if (n && compile_probes(t, command, unit, false, cache_dir, parts, n) == -EINVAL) {
		for (int i = 0; i < n; i++) {
			if (parts[i].error[0]) {
				part = parts[i].expr;
				error = parts[i].error;
				break;
			}
		}
	}
	if (strstr(error, "not constant") || strstr(error, "not computable"))
		return xk_err(-EINVAL, "%s:%d: %s = %s cannot be evaluated: %s is not "
			      "a compile-time constant (the compiler: %s); give "
			      "template= and default= in the catalog",
			      c->file, c->line, c->name, body, part, error);
	return xk_err(-EINVAL, "%s:%d: %s = %s cannot be evaluated: %s: %s; give "
		      "template= and default= in the catalog", c->file, c->line,
		      c->name, body, part, error);
}

/* ---- the template and what its value counts ---- */

/* The unit a well-known factor counts in, for the explanation. */
static const char *unit_name(const char *rest)
{
	static const char *const units[][2] = {
		{ "HZ", "jiffies" }, { "USEC_PER_MSEC", "us" },
		{ "USEC_PER_SEC", "us" }, { "NSEC_PER_USEC", "ns" },
		{ "NSEC_PER_MSEC", "ns" }, { "NSEC_PER_SEC", "ns" },
		{ "MSEC_PER_SEC", "ms" }, { "PAGE_SIZE", "bytes" },
		{ "SZ_1K", "bytes" }, { "SZ_1M", "bytes" }, { "SZ_1G", "bytes" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(rest, units[i][0]))
			return units[i][1];
	return NULL;
}

/* "NAME=V builds BODY-with-V": the template with V for %lld */
static void template_with_v(const char *tmpl, char *out, size_t size)
{
	const char *pct = strstr(tmpl, "%lld");

	if (pct)
		snprintf(out, size, "%.*sV%s", (int)(pct - tmpl), tmpl, pct + 4);
	else
		snprintf(out, size, "%s", tmpl);
}

static int set_template(struct xk_constant *c, const char *body,
			const struct body_shape *shape, const struct probe *pr)
{
	long long value = pr[0].value;
	long type = pr[1].value;
	char means[160];
	const char *name = NULL;
	int err;

	if (shape->form == BODY_SCALED) {
		name = unit_name(shape->rest);
		err = xk_strlcpy(c->tmpl, shape->tmpl, sizeof(c->tmpl));
		template_with_v(c->tmpl, means, sizeof(means));
		err = err ?: xk_snprintf(c->unit, sizeof(c->unit),
			"%lld in units of %s (%lld%s%s each here): %s = %lld%s%s; "
			"%s=V builds %s", shape->literal, shape->rest, pr[2].value,
			name ? " " : "", name ?: "", body, value, name ? " " : "",
			name ?: "", c->name, means);
	} else if (shape->form == BODY_OFFSET) {
		err = xk_strlcpy(c->tmpl, shape->tmpl, sizeof(c->tmpl));
		template_with_v(c->tmpl, means, sizeof(means));
		err = err ?: xk_snprintf(c->unit, sizeof(c->unit),
			"%lld added to %s (%lld here): %s = %lld; %s=V builds %s",
			shape->literal, shape->rest, pr[2].value, body, value,
			c->name, means);
	} else {
		/* the body's type kept: (PAGE_SIZE / 2) compares unsigned */
		err = type == TYPE_INT || type <= 0 ||
		      type >= (long)ARRAY_SIZE(type_names) ?
		      xk_strlcpy(c->tmpl, "(%lld)", sizeof(c->tmpl)) :
		      xk_snprintf(c->tmpl, sizeof(c->tmpl), "((%s)%%lld)",
				  type_names[type]);
		template_with_v(c->tmpl, means, sizeof(means));
		err = err ?: xk_snprintf(c->unit, sizeof(c->unit),
			"%lld, the whole of %s in this configuration; %s=V builds %s",
			value, body, c->name, means);
	}
	if (err)
		return xk_err(err, "%s: the template of %s does not fit", c->name, body);
	if (!c->has_def) {
		c->def = shape->form == BODY_WHOLE ? value : shape->literal;
		c->has_def = true;
	}
	return 0;
}

int evaluate_macro(const struct tree *t, struct xk_constant *c,
		   const char *obj, const char *ccvar, const char *cache_dir,
		   const char *log, bool progress)
{
	char base[XK_PATH_MAX], src[512], unit_path[XK_PATH_MAX], body[384];
	char *cmd = NULL, *command = NULL, *unit = NULL;
	struct probe pr[3];
	struct body_shape shape;
	int err, line = 0, n;

	memset(pr, 0, sizeof(pr));
	err = object_unit(t, obj, ccvar, cache_dir, log, progress, base, &cmd,
			  src, sizeof(src), unit_path) ?:
	      xk_read_file(unit_path, &unit, NULL) ?:
	      unit_command(cmd, &command) ?:
	      unit_define(unit, obj, c, body, sizeof(body), &line);
	if (err)
		goto out;
	if (line > 0)
		c->line = line;	/* the definition this configuration takes */
	body_shape(body, &shape);
	n = shape.form == BODY_WHOLE ? 2 : 3;
	err = xk_snprintf(pr[0].expr, sizeof(pr[0].expr), "%s", body) ?:
	      type_probe(pr[1].expr, sizeof(pr[1].expr), body) ?:
	      xk_snprintf(pr[2].expr, sizeof(pr[2].expr), "%s", shape.rest);
	if (err) {
		err = xk_err(err, "%s: its body is too long to evaluate", c->name);
		goto out;
	}
	if (progress)
		pr_info("evaluating %s = %s with the flags of %s\n", c->name, body, obj);
	err = compile_probes(t, command, unit, true, cache_dir, pr, n);
	if (err == -EINVAL) {	/* it needs the declarations: the whole unit */
		pr_debug("%s = %s needs the declarations of %s's unit (%s)\n",
			 c->name, body, obj, pr[0].error[0] ? pr[0].error :
			 pr[1].error[0] ? pr[1].error : pr[2].error);
		for (int i = 0; i < n; i++)
			pr[i].error[0] = '\0';
		err = compile_probes(t, command, unit, false, cache_dir, pr, n);
	}
	if (err == -EINVAL) {
		const char *why = pr[0].error[0] ? pr[0].error :
				  pr[1].error[0] ? pr[1].error : pr[2].error;

		err = refuse_body(t, command, unit, cache_dir, c, body, why);
		goto out;
	}
	if (err)
		goto out;
	/* the literal and the rest must make the body: else it is one value
	 * (an unsigned wrap, a cast of the product's type) */
	if ((shape.form == BODY_SCALED &&
	     (unsigned long long)shape.literal * (unsigned long long)pr[2].value !=
	     (unsigned long long)pr[0].value) ||
	    (shape.form == BODY_OFFSET &&
	     (unsigned long long)shape.literal + (unsigned long long)pr[2].value !=
	     (unsigned long long)pr[0].value))
		shape.form = BODY_WHOLE;
	err = set_template(c, body, &shape, pr);
out:
	free(cmd);
	free(command);
	free(unit);
	return err;
}
