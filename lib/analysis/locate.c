// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: where a constant lives in the target's source (a macro's
 * definition and the template of its body) and which objects may depend on
 * it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <unistd.h>

#include "build.h"


int tree_of(const struct xk_kernel *k, const struct xk_constant *c,
		   struct tree *t)
{
	memset(t, 0, sizeof(*t));
	t->module = c->module_dir[0];
	if (xk_strlcpy(t->toolchain, k->toolchain, sizeof(t->toolchain)))
		return -ENAMETOOLONG;
	if (t->module)
		return xk_strlcpy(t->src, c->module_dir, sizeof(t->src)) ?:
		       xk_strlcpy(t->cwd, k->headers, sizeof(t->cwd));
	return xk_strlcpy(t->src, k->source, sizeof(t->src)) ?:
	       xk_strlcpy(t->cwd, k->source, sizeof(t->cwd));
}


bool is_define_of(const char *line, const char *name, const char **body)
{
	size_t n = strlen(name);
	const char *p = line;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p++ != '#')
		return false;
	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, "define", 6) || (p[6] != ' ' && p[6] != '\t'))
		return false;
	p += 6;
	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, name, n) || (p[n] != ' ' && p[n] != '\t'))
		return false;
	if (body)
		*body = p + n;
	return true;
}

/* ---- integer constant expressions: (128 * 1024), (1 << 20), (HZ...) no ---- */

struct cexpr {
	const char *p;
	bool bad;
};

static long long cexpr_sum(struct cexpr *e);

static void cexpr_space(struct cexpr *e)
{
	while (*e->p == ' ' || *e->p == '\t')
		e->p++;
}

static long long cexpr_unary(struct cexpr *e)
{
	long long v = 0;
	char *end;

	cexpr_space(e);
	if (*e->p == '-') {
		e->p++;
		return -cexpr_unary(e);
	}
	if (*e->p == '(') {
		e->p++;
		v = cexpr_sum(e);
		cexpr_space(e);
		if (*e->p++ != ')')
			e->bad = true;
		return v;
	}
	if (!isdigit((unsigned char)*e->p)) {
		e->bad = true;	/* a name: not a constant expression */
		return 0;
	}
	v = strtoll(e->p, &end, 0);
	e->p = end;
	while (*e->p && strchr("uUlL", *e->p))
		e->p++;
	return v;
}

static long long cexpr_product(struct cexpr *e)
{
	long long v = cexpr_unary(e);

	for (;;) {
		char op;
		long long r;

		cexpr_space(e);
		op = *e->p;
		if (op == '<' || op == '>') {
			if (e->p[1] != op)
				return v;
			e->p += 2;
			r = cexpr_unary(e);
			if (r < 0 || r > 62) {
				e->bad = true;
				return v;
			}
			v = op == '<' ? (long long)((unsigned long long)v << r) : v >> r;
			continue;
		}
		if (op != '*' && op != '/' && op != '%')
			return v;
		e->p++;
		r = cexpr_unary(e);
		if (op != '*' && !r) {
			e->bad = true;
			return v;
		}
		v = op == '*' ? v * r : op == '/' ? v / r : v % r;
	}
}

static long long cexpr_sum(struct cexpr *e)
{
	long long v = cexpr_product(e);

	for (;;) {
		cexpr_space(e);
		if (*e->p != '+' && *e->p != '-')
			return v;
		v = *e->p++ == '+' ? v + cexpr_product(e) : v - cexpr_product(e);
	}
}

/* The value of an integer constant expression, or -EINVAL. */
static int const_expr(const char *text, long long *v)
{
	struct cexpr e = { .p = text };

	*v = cexpr_sum(&e);
	cexpr_space(&e);
	return e.bad || *e.p ? -EINVAL : 0;
}

/*
 * "(4000U) plus a comment" -> template "(%lldU)", default 4000; an integer
 * constant expression, "(128 * 1024)" -> template "(%lld)", default 131072.
 */
static int template_of(const char *body, char *tmpl, size_t size,
		       long long *def)
{
	char b[256], *p, *end;
	const char *cmt;

	xk_snprintf(b, sizeof(b), "%s", body);
	cmt = strstr(b, "/*");
	if (cmt)
		b[cmt - b] = '\0';
	cmt = strstr(b, "//");
	if (cmt)
		b[cmt - b] = '\0';
	p = xk_trim(b);
	end = p;
	while (*end && !isdigit((unsigned char)*end))
		end++;
	if (!*end)
		return -EINVAL;
	if (strpbrk(p, "*/%<>+") || strchr(end, '-')) {
		/* an expression of several numbers: the whole is the value */
		if (const_expr(p, def))
			return -EINVAL;
		return xk_snprintf(tmpl, size, "(%%lld)");
	}
	{
		char *num_end;
		long long v = strtoll(end, &num_end, 0);
		const char *rest = num_end;

		/* only one number, wrapped at most in ( ) and a suffix */
		for (const char *q = p; q < end; q++)
			if (*q != '(' && *q != ' ' && *q != '-')
				return -EINVAL;
		while (*rest && strchr("uUlL", *rest))
			rest++;
		for (const char *q = rest; *q; q++)
			if (*q != ')' && *q != ' ')
				return -EINVAL;
		if (end > p && end[-1] == '-') {
			v = -v;
			end--;
		}
		*def = v;
		return xk_snprintf(tmpl, size, "%.*s%%lld%s", (int)(end - p), p,
				   num_end);
	}
}

static int grep_lines(const struct tree *t, const char *const *argv,
		      char **out)
{
	struct xk_cmd cmd = { .argv = argv, .cwd = t->src, .capture = out,
			      .log_path = "/dev/null" };
	int st = xk_run(&cmd);

	return st < 0 ? st : 0;	/* grep: 1 means no match */
}

/* the core first; drivers and the rest only when it has none */
static const char *const define_dirs[][12] = {
	{ "block", "kernel", "mm", "net", "fs", "include", "lib", "arch/x86",
	  "io_uring", "ipc", NULL },
	{ "drivers", "crypto", "security", "sound", "virt", "init", "certs", NULL },
};

/* Writes "id file\n" at dst (never past the "file:#define id" it replaces). */
static size_t put_index_line(char *dst, const char *id, const char *file)
{
	size_t il = strlen(id), fl = strlen(file);

	memcpy(dst, id, il);
	dst[il] = ' ';
	memcpy(dst + il + 1, file, fl);
	dst[il + 1 + fl] = '\n';
	return il + fl + 2;
}

/* Whether file (fl bytes) is a word of the space-separated list. */
static bool file_listed(const char *list, const char *file, size_t fl)
{
	for (const char *q = list; *q; q += strcspn(q, " "), q += !!*q)
		if (!strncmp(q, file, fl) && (q[fl] == ' ' || !q[fl]))
			return true;
	return false;
}

/*
 * Every #define of the kernel's core directories (define_dirs[0]), "NAME
 * path" a line (300,000 lines, 17 MB), made by one grep the first time a
 * macro is looked up by name and kept in the kernel's cache directory: a
 * lookup reads it instead of walking the tree's files (seconds, and a guest
 * reading the tree over virtiofs is spared it). Drivers and the rest (five
 * million defines, four of them generated GPU registers) are searched only
 * when the core has no definition.
 */
static int defines_index(const struct xk_kernel *k, const struct tree *t,
			 char **index)
{
	const char *argv[24] = { "grep", "-rHEo", "--include=*.h", "--include=*.c",
				 "^[[:space:]]*#[[:space:]]*define[[:space:]]+[A-Za-z0-9_]+" };
	char path[XK_PATH_MAX], *hits = NULL, *out;
	size_t a = 5, o = 0;
	int err;

	err = xk_snprintf(path, sizeof(path), "%s/defines.idx", k->dir);
	if (err)
		return xk_err(err, "%s/defines.idx: path too long", k->dir);
	if (!xk_read_file(path, index, NULL))
		return 0;
	for (size_t d = 0; define_dirs[0][d]; d++)
		argv[a++] = define_dirs[0][d];
	argv[a] = NULL;
	err = grep_lines(t, argv, &hits);
	if (err)
		return err;
	/* "path:#define NAME" -> "NAME path": never longer, done in place */
	out = hits;
	for (char *line = hits; *line;) {
		char *end = strchrnul(line, '\n'), *colon = strchr(line, ':');
		char *name = colon && colon < end ? strstr(colon, "define") : NULL;
		bool last = !*end;

		*end = '\0';
		if (name) {
			char file[XK_PATH_MAX], id[256];

			name += 6;
			name += strspn(name, " \t");
			*colon = '\0';
			if (!xk_snprintf(file, sizeof(file), "%s", line) &&
			    !xk_snprintf(id, sizeof(id), "%s", name))
				o += put_index_line(out + o, id, file);
		}
		line = last ? end : end + 1;
	}
	out[o] = '\0';
	err = xk_write_file(path, out, o, 0644);
	if (err) {
		free(out);
		return xk_err(err, "cannot write %s", path);
	}
	*index = out;
	return 0;
}

/* The files defining name, from the index (a file defining it twice, under
 * #if and #else, once); space separated in *files (malloc'd). */
static int define_sites(const char *index, const char *name, char **files,
			int *nr)
{
	size_t len = strlen(name), used = 0;
	char *list = NULL;

	*nr = 0;
	for (const char *p = index; *p;) {
		const char *end = strchrnul(p, '\n'), *file = p + len + 1;
		size_t fl = end - file;

		if (!strncmp(p, name, len) && p[len] == ' ' &&
		    !(list && file_listed(list, file, fl))) {
			char *bigger = realloc(list, used + fl + 2);

			if (!bigger) {
				free(list);
				return xk_err(-ENOMEM, "%s: out of memory", __func__);
			}
			list = bigger;
			used += snprintf(list + used, fl + 2, "%s%.*s",
					 *nr ? " " : "", (int)fl, file);
			(*nr)++;
		}
		p = *end ? end + 1 : end;
	}
	*files = list ? list : calloc(1, 1);
	return *files ? 0 : xk_err(-ENOMEM, "%s: out of memory", __func__);
}

/*
 * Where a literal or a variable of the catalog is: the line of c->file
 * that holds c->code, the nearest to the line= hint when several do (a
 * kernel update moves lines, rarely the code), or, with no code=, the
 * hint itself. Either way c->text must be on that line. Runs before any
 * build; c->line is set.
 */
int locate_line(const struct tree *t, struct xk_constant *c)
{
	char path[XK_PATH_MAX + 300], *text = NULL;
	int n = 0, best = 0, err;

	err = xk_snprintf(path, sizeof(path), "%s/%s", t->src, c->file) ?:
	      xk_read_file(path, &text, NULL);
	if (err)
		return xk_err(err, "cannot read %s", path);
	for (char *line = text; *line; ) {
		char *end = strchrnul(line, '\n'), save = *end;
		bool here;

		n++;
		*end = '\0';
		here = c->code[0] ? strstr(line, c->code) != NULL : n == c->line;
		if (here && (!best || abs(n - c->line) < abs(best - c->line))) {
			best = n;
			if (!strstr(line, c->text))
				err = xk_err(-ENOENT, "'%s' is not on %s:%d%s%s%s", c->text,
					     c->file, n, c->code[0] ? " (the line that holds '" : "",
					     c->code[0] ? c->code : "", c->code[0] ? "')" : "");
			else
				err = 0;
		}
		*end = save;
		line = *end ? end + 1 : end;
	}
	free(text);
	if (!best)
		return c->code[0] ?
		       xk_err(-ENOENT, "%s: no line of %s holds '%s' (the catalog's "
			      "code=): the kernel's source differs", c->name, c->file,
			      c->code) :
		       xk_err(-ENOENT, "%s: %s has no line %d", c->name, c->file, c->line);
	if (!err)
		c->line = best;
	return err;
}

int locate_macro(const struct xk_kernel *k, const struct tree *t,
			struct xk_constant *c)
{
	char path[XK_PATH_MAX], *text = NULL;
	const char *body = NULL;
	int err, n = 0;

	/* the catalog's file= is that of the kernels it was written for: in
	 * another, the macro may live elsewhere (SHRINK_BATCH, in
	 * mm/shrinker.c since 6.7, is in mm/vmscan.c in 6.1) */
	if (c->file[0] && !t->module &&
	    !xk_snprintf(path, sizeof(path), "%s/%s", t->src, c->file) &&
	    !xk_exists(path)) {
		pr_info("%s: %s is not in the source of %s; its #define is "
			"looked up by name\n", c->name, c->file, k->release);
		c->file[0] = '\0';
	}
	if (!c->file[0]) {
		char *index = NULL, *hits = NULL;

		if (t->module)
			return xk_err(-EINVAL, "%s: a module's constant needs file=",
				      c->name);
		err = defines_index(k, t, &index) ?:
		      define_sites(index, c->name, &hits, &n);
		free(index);
		if (err)
			return err;
		if (!n) {	/* not in the core: drivers and the rest */
			char pattern[160];
			const char *argv[20] = { "grep", "-rlE", "--include=*.h",
						 "--include=*.c", pattern };
			size_t a = 5;

			xk_snprintf(pattern, sizeof(pattern),
				    "^[[:space:]]*#[[:space:]]*define[[:space:]]+%s[[:space:]]",
				    c->name);
			for (size_t d = 0; define_dirs[1][d]; d++)
				argv[a++] = define_dirs[1][d];
			argv[a] = NULL;
			free(hits);
			hits = NULL;
			err = grep_lines(t, argv, &hits);
			if (err)
				return err;
			for (char *p = hits; *p; p = strchrnul(p, '\n'), p += !!*p)
				n++;
			for (char *p = hits; *p; p++)
				if (*p == '\n')
					*p = p[1] ? ' ' : '\0';
		}
		if (n == 0) {
			free(hits);
			return xk_err(-ENOENT, "unknown constant '%s': no #define "
					       "of it in the source of %s",
				      c->name, k->release);
		}
		if (n > 1) {
			err = xk_err(-EINVAL, "ambiguous constant '%s': defined in "
					      "%s; name one with file=",
				     c->name, hits);
			free(hits);
			return err;
		}
		xk_strlcpy(c->file, hits, sizeof(c->file));
		free(hits);
	}
	err = xk_snprintf(path, sizeof(path), "%s/%s", t->src, c->file) ?:
	      xk_read_file(path, &text, NULL);
	if (err)
		return xk_err(err, "cannot read %s", path);
	n = 0;
	for (char *line = text; *line; n++) {
		char *end = strchrnul(line, '\n'), save = *end;

		*end = '\0';
		if (is_define_of(line, c->name, &body)) {
			c->line = n + 1;
			if (!c->tmpl[0]) {
				long long def;

				/* an expression of other macros, (2*HZ), is
				 * evaluated in an object's unit once the objects
				 * are known (evaluate_macro): tmpl stays empty */
				if (template_of(body, c->tmpl, sizeof(c->tmpl), &def)) {
					c->tmpl[0] = '\0';
					break;
				}
				if (!c->has_def) {
					c->def = def;
					c->has_def = true;
				}
			}
			break;
		}
		*end = save;
		line = *end ? end + 1 : end;
	}
	free(text);
	if (!err && !c->line)
		err = xk_err(-ENOENT, "%s has no #define %s", c->file, c->name);
	if (!err && !c->has_def && c->tmpl[0])
		err = xk_err(-EINVAL, "%s: no default value", c->name);
	return err;
}

/* ---- is an object built in this configuration? (Kbuild's makefiles) ---- */

/* How Kbuild builds an object in this configuration. */
enum kbuild {
	KBUILD_UNKNOWN = -1,	/* no makefile line names it */
	KBUILD_NOT = 0,		/* a line names it under a condition that is off */
	KBUILD_BUILTIN = 1,	/* into vmlinux */
	KBUILD_MODULE = 2,	/* into a module */
};

/* CONFIG_X in the kernel's .config: y, m, or off. */
static enum kbuild config_state(const char *config, const char *sym, size_t len)
{
	for (const char *p = config; (p = memmem(p, strlen(p), sym, len)); p += len) {
		if ((p == config || p[-1] == '\n') && p[len] == '=')
			return p[len + 1] == 'y' ? KBUILD_BUILTIN :
			       p[len + 1] == 'm' ? KBUILD_MODULE : KBUILD_NOT;
	}
	return KBUILD_NOT;
}

/*
 * What an assignment's left side builds: obj-y, obj-m, obj-$(CONFIG_X) (or
 * obj-${CONFIG_X}), or
 * the parts of a composite NAME.o (NAME-y, NAME-objs, NAME-$(CONFIG_X):
 * *comp is NAME.o, whose own line decides). KBUILD_UNKNOWN: not an object
 * list.
 */
static enum kbuild lhs_condition(const char *lhs, const char *config,
				 char *comp, size_t size)
{
	const char *dash = strrchr(lhs, '-');
	enum kbuild on = KBUILD_BUILTIN;

	if (!dash || !strncmp(lhs, "ccflags", 7) || !strncmp(lhs, "subdir", 6) ||
	    !strncmp(lhs, "always", 6) || !strncmp(lhs, "targets", 7) ||
	    !strncmp(lhs, "hostprogs", 9) || !strncmp(lhs, "extra", 5) ||
	    !strncmp(lhs, "asflags", 7) || !strncmp(lhs, "ldflags", 7))
		return KBUILD_UNKNOWN;
	/* obj-$(CONFIG_X), or obj-${CONFIG_X} as some makefiles write it */
	if (!strncmp(dash, "-$(CONFIG_", 10) || !strncmp(dash, "-${CONFIG_", 10)) {
		const char *sym = dash + 3, *end = strchr(sym, dash[2] == '(' ? ')' : '}');

		if (!end)
			return KBUILD_UNKNOWN;
		on = config_state(config, sym, end - sym);
	} else if (!strcmp(dash, "-m")) {
		on = KBUILD_MODULE;
	} else if (strcmp(dash, "-y") && strcmp(dash, "-objs")) {
		return KBUILD_UNKNOWN;
	}
	comp[0] = '\0';
	if (strncmp(lhs, "obj-", 4) && strncmp(lhs, "lib-", 4) &&
	    xk_snprintf(comp, size, "%.*s.o", (int)(dash - lhs), lhs))
		return KBUILD_UNKNOWN;
	return on;
}

/* Whether an assignment's right side names file (addprefix understood). */
static bool rhs_names(const char *rhs, const char *file)
{
	char prefix[128] = "";
	const char *p = rhs;

	while (*p) {
		size_t n;

		p += strspn(p, " \t");
		if (!strncmp(p, "$(addprefix", 11)) {
			const char *comma = strchr(p, ',');

			n = strcspn(p + 11, ",");
			xk_snprintf(prefix, sizeof(prefix), "%.*s", (int)n, p + 11);
			xk_trim(prefix);
			p = comma ? comma + 1 : p + strlen(p);
			continue;
		}
		n = strcspn(p, " \t)");
		if (n) {
			char word[256];

			if (!xk_snprintf(word, sizeof(word), "%s%.*s", prefix,
					 (int)n, p) && !strcmp(word, file))
				return true;
		} else if (*p == ')') {
			prefix[0] = '\0';
			n = 1;
		}
		p += n;
	}
	return false;
}

/*
 * How Kbuild builds obj (e.g. "mm/zswap.o") in this configuration: the line
 * of a makefile that lists it (its directory's, else an ancestor's, as in
 * "i915-y += gem/i915_gem_shmem.o"), and that line's condition; a part of
 * a composite object follows the composite's own line. For a module,
 * *module is its .ko's path in the tree ("fs/xfs/xfs.ko"). KBUILD_UNKNOWN
 * when no line names it: the caller builds it, and a failure is reported,
 * never hidden.
 */
static enum kbuild kbuild_state_in(const struct tree *t, const char *config,
				   const char *mkdir, const char *obj, int depth,
				   char *module, size_t size)
{
	size_t dlen = strlen(mkdir);
	const char *rel = obj + (dlen ? dlen + 1 : 0);
	char path[XK_PATH_MAX], *text = NULL;
	enum kbuild verdict = KBUILD_UNKNOWN;

	if (depth > 8 || (dlen && (strncmp(obj, mkdir, dlen) || obj[dlen] != '/')))
		return KBUILD_UNKNOWN;
	if (!xk_snprintf(path, sizeof(path), "%s/%s/Makefile", t->src, mkdir) &&
	    xk_read_file(path, &text, NULL) &&
	    !xk_snprintf(path, sizeof(path), "%s/%s/Kbuild", t->src, mkdir))
		xk_read_file(path, &text, NULL);
	/* one logical line at a time: continuations joined */
	for (char *p = text; p && *p; p++)
		if (*p == '\\' && p[1] == '\n')
			p[0] = p[1] = ' ';
	for (char *line = text; line && *line && verdict <= KBUILD_NOT;) {
		char *end = strchrnul(line, '\n'), *op, comp[256], lhs[256];
		bool last = !*end;
		enum kbuild on;

		*end = '\0';
		op = strstr(line, "+=");
		if (!op)
			op = strstr(line, ":=");
		if (!op)
			op = strchr(line, '=');
		if (op && line[0] != '#' &&
		    !xk_snprintf(lhs, sizeof(lhs), "%.*s", (int)(op - line), line)) {
			xk_trim(lhs);
			on = lhs_condition(lhs, config, comp, sizeof(comp));
			if (on != KBUILD_UNKNOWN &&
			    rhs_names(op + (op[1] == '=' ? 2 : 1), rel)) {
				char parent[512];

				if (on != KBUILD_NOT && comp[0] &&
				    !xk_snprintf(parent, sizeof(parent), "%s%s%s",
						 mkdir, dlen ? "/" : "", comp)) {
					on = kbuild_state_in(t, config, mkdir, parent,
							     depth + 1, module, size);
					/* a list named by reference: "i915-y +=
					 * $(gem-y)" (the token as rhs_names cuts it) */
					if (on == KBUILD_UNKNOWN &&
					    !xk_snprintf(parent, sizeof(parent),
							 "%s%s$(%s", mkdir,
							 dlen ? "/" : "", lhs))
						on = kbuild_state_in(t, config, mkdir,
								     parent, depth + 1,
								     module, size);
				}
				else if (on == KBUILD_MODULE &&
					 xk_snprintf(module, size, "%.*s.ko",
						     (int)strlen(obj) - 2, obj))
					on = KBUILD_UNKNOWN;
				if (on != KBUILD_UNKNOWN)
					verdict = on;
			}
		}
		line = last ? end : end + 1;
	}
	free(text);
	if (verdict == KBUILD_UNKNOWN && dlen) {
		const char *up = strrchr(mkdir, '/');
		char parent_dir[256];

		if (!xk_snprintf(parent_dir, sizeof(parent_dir), "%.*s",
				 (int)(up ? up - mkdir : 0), mkdir))
			return kbuild_state_in(t, config, parent_dir, obj, depth + 1,
					       module, size);
	}
	return verdict;
}

static enum kbuild kbuild_state(const struct tree *t, const char *config,
				const char *obj, char *module, size_t size)
{
	const char *slash = strrchr(obj, '/');
	char dir[256];

	if (xk_snprintf(dir, sizeof(dir), "%.*s", (int)(slash ? slash - obj : 0),
			obj))
		return KBUILD_UNKNOWN;
	return kbuild_state_in(t, config, dir, obj, 0, module, size);
}

/* the kernel's own code: not its tools, samples or docs */
#define GREP_EXCLUDES "--exclude-dir=tools", "--exclude-dir=samples", \
		      "--exclude-dir=Documentation", "--exclude-dir=scripts", \
		      "--exclude-dir=usr"
#define MAX_CARRIERS 16

/* The identifier a "#define ID..." line defines, in id; false if none. */
static bool defined_id(const char *line, char *id, size_t size)
{
	const char *p = line;
	size_t n;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p++ != '#')
		return false;
	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, "define", 6) || (p[6] != ' ' && p[6] != '\t'))
		return false;
	for (p += 6; *p == ' ' || *p == '\t'; p++)
		;
	n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		      "0123456789_");
	if (!n || n >= size || isdigit((unsigned char)*p))
		return false;
	memcpy(id, p, n);
	id[n] = '\0';
	return true;
}

/*
 * A "file:line:text" line of grep -n, cut after the file (hit then names
 * it) and the line's number in *line: its text, or NULL for no such line.
 */
static const char *grep_hit(char *hit, long *line)
{
	char *c1 = strchr(hit, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

	if (!c2)
		return NULL;
	*line = strtol(c1 + 1, NULL, 10);
	*c1 = '\0';
	return c2 + 1;
}

/* The lines of text as an array of pointers into it (cut at '\n'). */
static char **split_lines(char *text, long *nr)
{
	long n = 1, i = 0;
	char **lines;

	for (char *p = text; *p; p++)
		n += *p == '\n';
	lines = calloc(n + 1, sizeof(*lines));
	if (!lines)
		return NULL;
	for (char *p = text; p;) {
		char *end = strchr(p, '\n');

		lines[i++] = p;
		if (end)
			*end = '\0';
		p = end ? end + 1 : NULL;
	}
	*nr = i;
	return lines;
}

/* Whether a line is (the inside of) a comment: it starts with a comment
 * marker or the "*" of a block comment's middle line. */
static bool comment_line(const char *line)
{
	while (*line == ' ' || *line == '\t')
		line++;
	return *line == '*' || !strncmp(line, "/*", 2) || !strncmp(line, "//", 2);
}

/* The identifier right before the first '(' of text, into id. */
static bool name_before_paren(const char *text, char *id, size_t size)
{
	const char *paren = strchr(text, '('), *end, *start;

	if (!paren)
		return false;
	for (end = paren; end > text && isspace((unsigned char)end[-1]); end--)
		;
	for (start = end; start > text && (isalnum((unsigned char)start[-1]) ||
					   start[-1] == '_'); start--)
		;
	if (start == end || (size_t)(end - start) >= size ||
	    isdigit((unsigned char)*start))
		return false;
	memcpy(id, start, end - start);
	id[end - start] = '\0';
	return true;
}

/*
 * What carries a use on line n (from 0) of a header's lines into code,
 * when it is no "#define ID ..." line: the macro a definition continued
 * onto that line defines, or the static inline function whose body holds
 * the line (kernel style: its "{" alone at the start of a line, its
 * header on the lines just above, "}" at the start of a line closing
 * it). false for anything else: a declaration, a struct, an initializer.
 */
static bool carrier_of_line(char **lines, long n, char *id, size_t size)
{
	char head[512] = "";
	long j, open = -1;

	/* a continued #define: up through the lines that end in '\' */
	for (j = n; j > 0; j--) {
		size_t len = strlen(lines[j - 1]);

		if (!len || lines[j - 1][len - 1] != '\\')
			break;
	}
	if (j < n)
		return defined_id(lines[j], id, size);
	/* a function's body: its "{" above, no "}" at a line's start between */
	for (j = n; j >= 0 && open < 0; j--) {
		if (lines[j][0] == '}' && j < n)
			return false;
		if (lines[j][0] == '{')
			open = j;
	}
	if (open < 1)
		return false;
	/* its header: the lines above the "{" up to a blank line, a
	 * directive, or the end of the last declaration or comment */
	for (j = open - 1; j >= 0 && open - j <= 4; j--) {
		const char *l = lines[j];
		size_t len = strlen(l);
		char both[512];

		if (!len || l[0] == '#' || l[len - 1] == ';' || l[len - 1] == '}' ||
		    (len >= 2 && !strcmp(l + len - 2, "*/")))
			break;
		snprintf(both, sizeof(both), "%s %s", l, head);
		xk_strlcpy(head, both, sizeof(head));
	}
	return strstr(head, "static") && strstr(head, "inline") &&
	       name_before_paren(head, id, size);
}

/*
 * The names that carry macro name into code: itself and every macro of a
 * header under dir whose definition names one of them, and every static
 * inline function of such a header whose body does, transitively
 * (include/linux/swap_slots.h: #define SWAP_SLOTS_CACHE_SIZE SWAP_BATCH;
 * include/net/sock.h: SOCK_MIN_SNDBUF from TCP_SKB_MIN_TRUESIZE; an
 * inline of include/net/tcp.h that returns TCP_RTO_MAX). An object that
 * names only SWAP_SLOTS_CACHE_SIZE, or only calls such an inline, uses
 * SWAP_BATCH as much as one that names it. More than MAX_CARRIERS names:
 * -E2BIG, named.
 */
static int carrier_macros(const struct tree *t, const char *dir, const char *name,
			  char names[][64], int *nr)
{
	int err = 0;

	xk_strlcpy(names[0], name, sizeof(names[0]));
	*nr = 1;
	for (int q = 0; q < *nr && !err; q++) {
		const char *argv[] = { "grep", "-rnw", "--include=*.h", GREP_EXCLUDES,
				       "-e", names[q], dir, NULL };
		char *hits = NULL, *save = NULL, id[64], file[XK_PATH_MAX] = "";
		char *text = NULL, **lines = NULL;
		long nr_lines = 0, line;

		err = grep_lines(t, argv, &hits);
		for (char *h = hits ? strtok_r(hits, "\n", &save) : NULL; h && !err;
		     h = strtok_r(NULL, "\n", &save)) {
			const char *said = grep_hit(h, &line);
			bool known = false, got;

			if (!said || line < 1)
				continue;
			got = defined_id(said, id, sizeof(id));
			if (!got && comment_line(said))
				continue;	/* compaction.h's compact_gap() */
			if (!got && strcmp(file, h)) {	/* another header: read it */
				char path[XK_PATH_MAX];

				free(lines);
				free(text);
				lines = NULL;
				text = NULL;
				nr_lines = 0;
				xk_strlcpy(file, h, sizeof(file));
				if (!xk_snprintf(path, sizeof(path), "%s/%s", t->src, h) &&
				    !xk_read_file(path, &text, NULL))
					lines = split_lines(text, &nr_lines);
			}
			if (!got && lines && line <= nr_lines)
				got = carrier_of_line(lines, line - 1, id, sizeof(id));
			if (!got)
				continue;
			for (int i = 0; i < *nr; i++)
				known |= !strcmp(names[i], id);
			if (known)
				continue;
			if (*nr == MAX_CARRIERS) {
				err = xk_err(-E2BIG, "%s is carried into code by more "
						     "than %d macros and inline "
						     "functions (%s, %s, ...); list "
						     "its objects with objects=",
					     name, MAX_CARRIERS, names[1], names[2]);
				break;
			}
			xk_strlcpy(names[(*nr)++], id, sizeof(names[0]));
		}
		free(lines);
		free(text);
		free(hits);
	}
	if (!err && *nr > 1) {
		char list[256] = "";

		for (int i = 1; i < *nr; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list),
				 "%s%s", i > 1 ? ", " : "", names[i]);
		pr_debug("%s: objects that name %s use it too\n", name, list);
	}
	return err;
}

/*
 * The files of grep -n's "file:line:text" lines that name it in code, not
 * only in comments (net/mctp/test/route-test.c's " * clamp the minimum to
 * SOCK_MIN_RCVBUF", a file route.c includes), one "file\n" each, in
 * *files; lines freed.
 */
static int code_files(char *lines, char **files)
{
	size_t len = 0, cap = lines ? strlen(lines) + 1 : 1;
	char *out = malloc(cap), *save = NULL, last[XK_PATH_MAX] = "";

	if (!out) {
		free(lines);
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	}
	out[0] = '\0';
	for (char *l = lines ? strtok_r(lines, "\n", &save) : NULL; l;
	     l = strtok_r(NULL, "\n", &save)) {
		long line;
		const char *text = grep_hit(l, &line);

		if (!text || comment_line(text))
			continue;
		if (!strcmp(last, l))
			continue;
		xk_strlcpy(last, l, sizeof(last));
		len += snprintf(out + len, cap - len, "%s\n", l);
	}
	free(lines);
	*files = out;
	return 0;
}

/*
 * Every .c under dir (the definition's directory; the whole tree for one
 * under include/) that names macro name or a macro carrying it, as one
 * "file\n" list in *hits.
 */
static int files_naming(const struct tree *t, const char *dir, const char *name,
			char **hits)
{
	char names[MAX_CARRIERS][64];
	const char *argv[16 + 2 * MAX_CARRIERS] = { "grep", "-rnw", "--include=*.c",
						    GREP_EXCLUDES };
	char *lines = NULL;
	int nr, n = 0, err;

	while (argv[n])
		n++;
	err = carrier_macros(t, dir, name, names, &nr);
	if (err)
		return err;
	for (int i = 0; i < nr; i++) {
		argv[n++] = "-e";
		argv[n++] = names[i];
	}
	argv[n++] = dir;
	argv[n] = NULL;
	err = grep_lines(t, argv, &lines);
	if (err)
		return err;
	return code_files(lines, hits);
}

/*
 * files_naming for a macro of the kernel's own tree, kept in the kernel's
 * cache directory as users/NAME: the walk greps every header and .c of the
 * tree (seconds on the host; in a guest, reading the tree over virtiofs,
 * each file looked up holds a descriptor of the host's virtiofsd until the
 * guest forgets it, and a whole tree runs it out of them, so that every
 * later open in the guest fails with EMFILE). The first line names the
 * directory searched and the format; a file that does not match is walked
 * again. A module's tree is walked each time (it is small).
 */
#define USERS_FORMAT "xk-users 2"

static int files_naming_cached(const struct xk_kernel *k, const struct tree *t,
			       const char *dir, const char *name, char **hits)
{
	char path[XK_PATH_MAX], head[XK_PATH_MAX + 32], *text = NULL;
	size_t hl;
	int err;

	if (t->module)
		return files_naming(t, dir, name, hits);
	if (xk_snprintf(path, sizeof(path), "%s/users/%s", k->dir, name) ||
	    xk_snprintf(head, sizeof(head), USERS_FORMAT " %s\n", dir))
		return files_naming(t, dir, name, hits);
	hl = strlen(head);
	if (!xk_read_file(path, &text, NULL) && !strncmp(text, head, hl)) {
		memmove(text, text + hl, strlen(text + hl) + 1);
		*hits = text;
		return 0;
	}
	free(text);
	err = files_naming(t, dir, name, hits);
	if (err)
		return err;
	/* kept where it can be; a cache that cannot be written costs a walk */
	text = malloc(hl + strlen(*hits) + 1);
	if (text) {
		char users[XK_PATH_MAX];

		memcpy(text, head, hl);
		memcpy(text + hl, *hits, strlen(*hits) + 1);
		if (!xk_snprintf(users, sizeof(users), "%s/users", k->dir) &&
		    (xk_mkdir_p(users) ||
		     xk_write_file(path, text, strlen(text), 0644))) {
			pr_debug("%s: not kept (%s)\n", path, xk_last_error());
			xk_err_clear();
		}
		free(text);
	}
	return 0;
}

/* Where files_naming looks for a header macro's users. */
static void users_dir(const struct xk_constant *c, char *dir, size_t size)
{
	xk_snprintf(dir, size, "%.*s", (int)(strrchr(c->file, '/') ?
					     strrchr(c->file, '/') - c->file : 0),
		    c->file);
	if (!strncmp(dir, "include", 7))
		xk_strlcpy(dir, ".", size);
}

/*
 * Every .c that names the constant or a macro carrying it (a macro of a
 * header), or the catalog's objects=, or the literal's or variable's file.
 */
int find_objects(const struct xk_kernel *k, const struct tree *t,
			const struct xk_constant *c, struct xk_build_result *res)
{
	char dir[256], *hits = NULL, *save = NULL, *config = NULL;
	const char *src_list = c->objects;
	int err = 0, skipped = 0;

	if (!src_list[0]) {
		if (!strcmp(c->kind, "macro") && !strstr(c->file, ".c")) {
			users_dir(c, dir, sizeof(dir));
			err = files_naming_cached(k, t, dir, c->name, &hits);
			if (err)
				return err;
			src_list = hits;
		} else {
			src_list = c->file;
		}
	}
	/* a kernel's objects: only those this configuration builds (a
	 * catalog's objects= too), and which of them are modules */
	if (!t->module && xk_read_file(k->config, &config, NULL))
		config = NULL;
	{
		char *copy = strdup(src_list);

		if (!copy) {
			free(hits);
			free(config);
			return xk_err(-ENOMEM, "%s: out of memory", __func__);
		}
		for (char *f = strtok_r(copy, " \n", &save); f && !err;
		     f = strtok_r(NULL, " \n", &save)) {
			size_t n = strlen(f);

			if (!strncmp(f, "./", 2))
				f += 2, n -= 2;
			if (n < 3 || (strcmp(f + n - 2, ".c") && strcmp(f + n - 2, ".o")))
				continue;
			if (config) {
				char o[256], ko[256] = "";
				enum kbuild st = KBUILD_UNKNOWN;

				if (!xk_snprintf(o, sizeof(o), "%.*s.o", (int)(n - 2), f))
					st = kbuild_state(t, config, o, ko, sizeof(ko));
				if (st == KBUILD_NOT) {
					pr_debug("%s: not built in this configuration\n", o);
					skipped++;
					continue;
				}
				if (st == KBUILD_MODULE)
					xk_strlcpy(res->module[res->nr_objects], ko,
						   sizeof(res->module[0]));
			}
			if (res->nr_objects == XK_BUILD_MAX_OBJECTS) {
				err = xk_err(-E2BIG, "%s is used in more than %d "
						     "objects; list them with objects=",
					     c->name, XK_BUILD_MAX_OBJECTS);
				break;
			}
			xk_snprintf(res->object[res->nr_objects++], 128, "%.*s.o",
				    (int)(n - 2), f);
		}
		free(copy);
	}
	free(hits);
	free(config);
	if (!err && !res->nr_objects)
		err = xk_err(-ENOENT, "no object of %s uses %s%s", k->release, c->name,
			     skipped ? " (among those its configuration builds)" : "");
	return err;
}

int named_in_other_headers(const struct xk_kernel *k, const struct xk_constant *c,
			   char *hit, size_t size)
{
	const char *argv[] = { "grep", "-rlw", "--include=*.h", GREP_EXCLUDES,
			       c->name, ".", NULL };
	char *hits = NULL, *save = NULL;
	struct tree t;
	int err, found = 0;

	if (strcmp(c->kind, "macro"))
		return 0;
	err = tree_of(k, c, &t) ?: grep_lines(&t, argv, &hits);
	if (err)
		return err;
	for (char *f = strtok_r(hits, "\n", &save); f && !found;
	     f = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(f, "./", 2))
			f += 2;
		if (strcmp(f, c->file)) {
			xk_strlcpy(hit, f, size);
			found = 1;
		}
	}
	free(hits);
	return found;
}

int objects_left_out(const struct xk_kernel *k, const struct xk_constant *c,
		     char *list, size_t size)
{
	struct xk_build_result *all;
	struct xk_constant every = *c;
	char *config = NULL;
	struct tree t;
	int err, nr = 0;

	list[0] = '\0';
	if (!c->objects[0] || strcmp(c->kind, "macro") || strstr(c->file, ".c"))
		return 0;
	all = calloc(1, sizeof(*all));
	if (!all)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	every.objects[0] = '\0';
	err = tree_of(k, c, &t) ?: find_objects(k, &t, &every, all);
	if (err == -ENOENT) {	/* none named by this configuration */
		xk_err_clear();
		free(all);
		return 0;
	}
	if (err == -E2BIG) {	/* more than a build takes: say so */
		xk_err_clear();
		free(all);
		return XK_BUILD_MAX_OBJECTS + 1;
	}
	if (!err && !t.module && xk_read_file(k->config, &config, NULL))
		config = NULL;
	for (int i = 0; !err && i < all->nr_objects; i++) {
		char src[140], ko[256];
		size_t n = strlen(all->object[i]);

		/* objects= names .c or .o files */
		snprintf(src, sizeof(src), "%.*s.c", (int)(n - 2), all->object[i]);
		if (file_listed(c->objects, all->object[i], n) ||
		    file_listed(c->objects, src, strlen(src)))
			continue;
		/* only what a makefile builds: not a .c another includes
		 * (kernel/sched/loadavg.c, in build_utility.o) */
		if (!config || kbuild_state(&t, config, all->object[i], ko,
					    sizeof(ko)) <= KBUILD_NOT)
			continue;
		snprintf(list + strlen(list), size - strlen(list), "%s%s",
			 nr ? ", " : "", all->object[i]);
		nr++;
	}
	free(config);
	free(all);
	return err ? err : nr;
}

