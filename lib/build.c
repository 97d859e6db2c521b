// SPDX-License-Identifier: GPL-2.0
/*
 * libxk: the catalog, and the objects built with other values of a constant.
 *
 * A variant object is not built by editing the source tree: the baseline
 * object's own compile command (Kbuild's .cmd file) is replayed with
 * -E -fdirectives-only, which expands #includes but keeps #define lines and
 * macro uses as written. In that one self-contained unit the constant's
 * definition (or literal text) is replaced, and the unit is compiled with
 * -fpreprocessed -fdirectives-only: the same code as a build of the edited
 * tree (checked: byte-identical text for the baseline), in parallel, with
 * no shared state. Variant objects are cached by a hash of unit + command.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gen.h"
#include "internal.h"
#include "xk/scope.h"

extern char **environ;

/* ---------------------------------------------------------------- */
/* catalog                                                           */
/* ---------------------------------------------------------------- */

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int parse_ll(const char *v, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(v, &end, 0);
	return errno || end == v || *trim(end) ? -EINVAL : 0;
}

static int set_field(struct xk_constant *c, const char *key, const char *v,
		     const char *catalog, int line)
{
	long long x;
	int err = 0;

	if (!strcmp(key, "kind"))
		err = xk_strlcpy(c->kind, v, sizeof(c->kind));
	else if (!strcmp(key, "file"))
		err = xk_strlcpy(c->file, v, sizeof(c->file));
	else if (!strcmp(key, "line"))
		err = parse_ll(v, &x) ?: (c->line = (int)x, 0);
	else if (!strcmp(key, "text"))
		err = xk_strlcpy(c->text, v, sizeof(c->text));
	else if (!strcmp(key, "template"))
		err = xk_strlcpy(c->tmpl, v, sizeof(c->tmpl));
	else if (!strcmp(key, "default"))
		err = parse_ll(v, &c->def) ?: (c->has_def = true, 0);
	else if (!strcmp(key, "min"))
		err = parse_ll(v, &c->min) ?: (c->has_bounds = true, 0);
	else if (!strcmp(key, "max"))
		err = parse_ll(v, &c->max) ?: (c->has_bounds = true, 0);
	else if (!strcmp(key, "objects"))
		err = xk_strlcpy(c->objects, v, sizeof(c->objects));
	else if (!strcmp(key, "module")) {
		const char *slash = strrchr(catalog, '/');

		if (v[0] == '/')
			err = xk_strlcpy(c->module_dir, v, sizeof(c->module_dir));
		else
			err = xk_snprintf(c->module_dir, sizeof(c->module_dir),
					  "%.*s%s", slash ? (int)(slash - catalog + 1) : 0,
					  catalog, v);
		if (!err) {
			char *abs = realpath(c->module_dir, NULL);

			if (!abs)
				return xk_err(-ENOENT, "%s:%d: no module directory %s",
					      catalog, line, c->module_dir);
			err = xk_strlcpy(c->module_dir, abs, sizeof(c->module_dir));
			free(abs);
		}
	} else if (!strcmp(key, "description"))
		err = xk_strlcpy(c->description, v, sizeof(c->description));
	else
		return xk_err(-EINVAL, "%s:%d: unknown key '%s'", catalog, line, key);
	return err ? xk_err(-EINVAL, "%s:%d: bad value for '%s'", catalog, line,
			    key) : 0;
}

static int catalog_walk(const char *catalog, const char *want,
			struct xk_constant *c, char **names)
{
	char *text, *line, *save = NULL, *list = NULL;
	size_t list_len = 0;
	bool in = false, found = false;
	int n = 0, err = 0;
	FILE *lf = NULL;

	err = xk_read_file(catalog, &text, NULL);
	if (err)
		return xk_err(err, "cannot read the catalog %s", catalog);
	if (names) {
		lf = open_memstream(&list, &list_len);
		if (!lf) {
			free(text);
			return -ENOMEM;
		}
	}
	for (line = strtok_r(text, "\n", &save); line && !err;
	     line = strtok_r(NULL, "\n", &save)) {
		char *l = trim(line), *eq;

		n++;
		if (!*l || *l == '#')
			continue;
		if (*l == '[') {
			char *end = strchr(l, ']');

			if (!end)
				err = xk_err(-EINVAL, "%s: unclosed [ on a line",
					     catalog);
			else
				*end = '\0';
			l++;
			if (lf)
				fprintf(lf, "%s\n", l);
			in = want && !strcmp(l, want);
			if (in) {
				memset(c, 0, sizeof(*c));
				xk_strlcpy(c->name, l, sizeof(c->name));
				xk_strlcpy(c->kind, "macro", sizeof(c->kind));
				found = true;
			}
			continue;
		}
		eq = strchr(l, '=');
		if (!eq) {
			err = xk_err(-EINVAL, "%s: a line without '=': %s",
				     catalog, l);
			break;
		}
		*eq = '\0';
		if (in)
			err = set_field(c, trim(l), trim(eq + 1), catalog, n);
	}
	free(text);
	if (lf) {
		fclose(lf);
		if (err)
			free(list);
		else
			*names = list;
	}
	if (!err && want && !found)
		err = xk_err(-ENOENT, "unknown constant '%s': not in the catalog "
				      "%s (xk gen --list shows it)", want, catalog);
	return err;
}

int xk_catalog_find(const char *catalog, const char *name,
		    struct xk_constant *c)
{
	return catalog_walk(catalog, name, c, NULL);
}

int xk_catalog_list(const char *catalog, char **names)
{
	return catalog_walk(catalog, NULL, NULL, names);
}

/* ---------------------------------------------------------------- */
/* where the sources are                                             */
/* ---------------------------------------------------------------- */

/*
 * A constant of the kernel lives in the prepared source tree, where Kbuild
 * runs; one of an out-of-tree module (module= in the catalog) lives in the
 * module's directory, built by Kbuild from the headers with M=.
 */
struct tree {
	char src[XK_PATH_MAX];	/* file=, objects= and .cmd files are here */
	char cwd[XK_PATH_MAX];	/* recorded commands run here */
	bool module;
};

static int tree_of(const struct xk_kernel *k, const struct xk_constant *c,
		   struct tree *t)
{
	memset(t, 0, sizeof(*t));
	t->module = c->module_dir[0];
	if (t->module)
		return xk_strlcpy(t->src, c->module_dir, sizeof(t->src)) ?:
		       xk_strlcpy(t->cwd, k->headers, sizeof(t->cwd));
	return xk_strlcpy(t->src, k->source, sizeof(t->src)) ?:
	       xk_strlcpy(t->cwd, k->source, sizeof(t->cwd));
}

/* ---------------------------------------------------------------- */
/* locating the constant in the source                               */
/* ---------------------------------------------------------------- */

static bool is_define_of(const char *line, const char *name, const char **body)
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

/* "(4000U) plus a comment" -> template "(%lldU)", default 4000. */
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
	p = trim(b);
	end = p;
	while (*end && !isdigit((unsigned char)*end))
		end++;
	if (!*end)
		return -EINVAL;
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

static int locate_macro(const struct xk_kernel *k, const struct tree *t,
			struct xk_constant *c)
{
	char pattern[160], *hits = NULL, path[XK_PATH_MAX], *text = NULL;
	const char *body = NULL;
	int err, n = 0;

	if (!c->file[0]) {
		const char *argv[] = { "grep", "-rlE", "--include=*.h",
				       "--include=*.c", pattern, "block", "kernel",
				       "mm", "net", "fs", "include", "lib",
				       "arch/x86", "drivers/block", "ipc", NULL };

		xk_snprintf(pattern, sizeof(pattern),
			    "^[[:space:]]*#[[:space:]]*define[[:space:]]+%s[[:space:]]",
			    c->name);
		if (t->module)
			return xk_err(-EINVAL, "%s: a module's constant needs file=",
				      c->name);
		err = grep_lines(t, argv, &hits);
		if (err)
			return err;
		for (char *p = hits; *p; p = strchrnul(p, '\n'), p += !!*p)
			n++;
		if (n == 0) {
			free(hits);
			return xk_err(-ENOENT, "unknown constant '%s': no #define "
					       "of it in the source of %s",
				      c->name, k->release);
		}
		if (n > 1) {
			for (char *p = hits; *p; p++)
				if (*p == '\n' && p[1])
					*p = ' ';
			err = xk_err(-EINVAL, "ambiguous constant '%s': defined in "
					      "%s; name one with file=",
				     c->name, trim(hits));
			free(hits);
			return err;
		}
		hits[strcspn(hits, "\n")] = '\0';
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

				err = template_of(body, c->tmpl, sizeof(c->tmpl), &def);
				if (err) {
					err = xk_err(-EINVAL, "%s:%d: the definition of "
							      "%s is not a number (%s); "
							      "give template= and "
							      "default= in the catalog",
						     c->file, n + 1, c->name, trim((char *)body));
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
	if (!err && !c->has_def)
		err = xk_err(-EINVAL, "%s: no default value", c->name);
	return err;
}

/* Every .c under the directory of the definition that names the constant. */
static int find_objects(const struct xk_kernel *k, const struct tree *t,
			const struct xk_constant *c, struct xk_build_result *res)
{
	char dir[256], *hits = NULL, *save = NULL;
	const char *src_list = c->objects;
	int err = 0;

	if (!src_list[0]) {
		const char *argv[] = { "grep", "-rlw", "--include=*.c", c->name,
				       dir, NULL };

		if (!strcmp(c->kind, "macro") && !strstr(c->file, ".c")) {
			xk_snprintf(dir, sizeof(dir), "%.*s",
				    (int)(strrchr(c->file, '/') ?
					  strrchr(c->file, '/') - c->file : 0),
				    c->file);
			if (!strncmp(dir, "include", 7))
				xk_strlcpy(dir, ".", sizeof(dir));
			err = grep_lines(t, argv, &hits);
			if (err)
				return err;
			src_list = hits;
		} else {
			src_list = c->file;
		}
	}
	{
		char *copy = strdup(src_list);

		if (!copy) {
			free(hits);
			return -ENOMEM;
		}
		for (char *f = strtok_r(copy, " \n", &save); f && !err;
		     f = strtok_r(NULL, " \n", &save)) {
			size_t n = strlen(f);

			if (!strncmp(f, "./", 2))
				f += 2, n -= 2;
			if (n < 3 || (strcmp(f + n - 2, ".c") && strcmp(f + n - 2, ".o")))
				continue;
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
	if (!err && !res->nr_objects)
		err = xk_err(-ENOENT, "no object of %s uses %s", k->release, c->name);
	return err;
}

/* ---------------------------------------------------------------- */
/* builds                                                            */
/* ---------------------------------------------------------------- */

static int kernel_cc_var(const struct xk_kernel *k, char *out, size_t size)
{
	char *cfg, *p;
	int err = xk_read_file(k->config, &cfg, NULL);

	if (err)
		return err;
	p = strstr(cfg, "CONFIG_CC_VERSION_TEXT=\"");
	err = p ? xk_snprintf(out, size, "CC=%.*s",
			      (int)strcspn(p + 24, " \""), p + 24) : -ENOENT;
	free(cfg);
	return err;
}

/* The compile command Kbuild recorded, without its -o/-c and dep file. */
static int recorded_command(const struct tree *t, const char *obj,
			    char **cmd, char *src, size_t src_size)
{
	char path[XK_PATH_MAX], *text, *line, *p;
	const char *base = strrchr(obj, '/');
	int err;

	base = base ? base + 1 : obj;
	err = xk_snprintf(path, sizeof(path), "%s/%.*s.%s.cmd", t->src,
			  (int)(base - obj), obj, base) ?:
	      xk_read_file(path, &text, NULL);
	if (err)
		return xk_err(err, "no Kbuild command for %s (%s)", obj, path);
	line = strstr(text, ":= ");
	if (!line) {
		free(text);
		return xk_err(-EINVAL, "%s: no recorded command", path);
	}
	line += 3;
	line[strcspn(line, "\n")] = '\0';
	/* drop " -c -o OBJ SRC" at the end, keep SRC */
	p = strstr(line, " -c -o ");
	if (!p) {
		free(text);
		return xk_err(-EINVAL, "%s: unexpected command form", path);
	}
	*p = '\0';
	p += strlen(" -c -o ");
	p += strcspn(p, " ");
	p += strspn(p, " ");
	/* the source is the next word; objtool may follow after a ';' */
	xk_snprintf(src, src_size, "%.*s", (int)strcspn(p, " ;"), p);
	/* drop -Wp,-MMD,... (the dependency file) */
	p = strstr(line, "-Wp,-MMD,");
	if (p)
		memset(p, ' ', strcspn(p, " "));
	*cmd = strdup(line);
	free(text);
	return *cmd ? 0 : -ENOMEM;
}

static int shell(const struct tree *t, const char *script, const char *log)
{
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct xk_cmd cmd = { .argv = argv, .cwd = t->cwd, .log_path = log };

	return xk_run_step("compile", &cmd);
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Replaces the value in the unit: the #define line, or the literal's text. */
static int patch_unit(const struct xk_constant *c, const char *unit,
		      long long value, char **out)
{
	char repl[160];
	const char *at = NULL, *at_end = NULL;
	const char *cur_file = NULL;
	size_t cur_file_len = 0;
	long cur_line = 0;

	if (!strcmp(c->kind, "macro")) {
		xk_snprintf(repl, sizeof(repl), c->tmpl, value);
		for (const char *line = unit; *line;) {
			const char *end = strchrnul(line, '\n'), *body;
			char buf[512];

			xk_snprintf(buf, sizeof(buf), "%.*s",
				    (int)(end - line < 511 ? end - line : 511), line);
			if (is_define_of(buf, c->name, &body)) {
				at = line + (body - buf);
				at_end = end;
				break;
			}
			line = *end ? end + 1 : end;
		}
		if (!at)
			return xk_err(-ENOENT, "the unit has no #define %s", c->name);
		return asprintf(out, "%.*s %s%s", (int)(at - unit), unit, repl,
				at_end) < 0 ? -ENOMEM : 0;
	}
	/* literal, variable: the text on file:line, tracked by line markers */
	xk_snprintf(repl, sizeof(repl), "(%lld)", value);
	for (const char *line = unit; *line;) {
		const char *end = strchrnul(line, '\n');

		if (line[0] == '#' && line[1] == ' ' && isdigit((unsigned char)line[2])) {
			const char *q = strchr(line, '"');

			cur_line = strtol(line + 2, NULL, 10);
			cur_file = q ? q + 1 : NULL;
			cur_file_len = q ? strcspn(q + 1, "\"") : 0;
		} else {
			size_t fl = strlen(c->file);
			/* markers name the file as compiled: relative in the
			 * kernel tree, absolute for an out-of-tree module */
			bool same_file = cur_file && cur_file_len >= fl &&
				!strncmp(cur_file + cur_file_len - fl, c->file, fl) &&
				(cur_file_len == fl || cur_file[cur_file_len - fl - 1] == '/');

			if (same_file && cur_line == c->line) {
				const char *t = memmem(line, end - line, c->text,
						       strlen(c->text));

				if (!t)
					return xk_err(-ENOENT, "'%s' is not on %s:%d",
						      c->text, c->file, c->line);
				return asprintf(out, "%.*s%s%s", (int)(t - unit),
						unit, repl, t + strlen(c->text)) < 0 ?
					       -ENOMEM : 0;
			}
			cur_line++;
		}
		line = *end ? end + 1 : end;
	}
	return xk_err(-ENOENT, "%s:%d is not in the unit", c->file, c->line);
}

struct job {
	pid_t pid;
	char out[XK_PATH_MAX];
	char tmp[XK_PATH_MAX];
};

static int wait_job(struct job *jobs, int *running, const char *log)
{
	int status;
	pid_t pid = wait(&status);

	for (int i = 0; i < *running; i++) {
		if (jobs[i].pid != pid)
			continue;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			char tail[1024] = "";

			xk_file_tail(log, 8, tail, sizeof(tail));
			return xk_err(-EIO, "compiling %s failed; see %s:\n%s",
				      jobs[i].out, log, tail);
		}
		if (rename(jobs[i].tmp, jobs[i].out))
			return -errno;
		jobs[i] = jobs[--*running];
		return 0;
	}
	return pid < 0 ? -errno : 0;
}

static int build_object(const struct tree *t, struct xk_constant *c,
			const char *ccvar, int idx, struct xk_build_result *res,
			struct job *jobs, int *running, int max_jobs,
			const char *cache_dir, const char *log, bool progress)
{
	const char *obj = res->object[idx];
	char src[512], unit_path[XK_PATH_MAX], script[XK_PATH_MAX * 2];
	char *cmd = NULL, *unit = NULL, *nodeps = NULL;
	size_t unit_len;
	int err;

	err = xk_snprintf(res->base[idx], XK_PATH_MAX, "%s/%s", t->src, obj);
	if (err)
		return err;
	if (!xk_exists(res->base[idx]) ||
	    recorded_command(t, obj, &cmd, src, sizeof(src))) {
		char mvar[XK_PATH_MAX + 4];
		const char *argv[] = { "make", "-s", "-C", t->cwd, ccvar,
				       t->module ? mvar : obj, NULL };
		struct xk_cmd mk = { .argv = argv, .log_path = log };

		xk_snprintf(mvar, sizeof(mvar), "M=%s", t->src);
		if (progress)
			pr_info("building the baseline %s\n", obj);
		err = xk_run_step("make (baseline object)", &mk);
		free(cmd);
		cmd = NULL;
		err = err ?: recorded_command(t, obj, &cmd, src, sizeof(src));
		if (err)
			return err;
	}
	/* the unit with includes expanded, definitions kept; keyed by the
	 * command and the baseline object, so a rebuilt source makes a new one */
	{
		struct stat st;
		uint64_t h = fnv1a(0xcbf29ce484222325ULL, cmd, strlen(cmd));

		if (stat(res->base[idx], &st))
			return xk_err(-errno, "no baseline object %s", res->base[idx]);
		h = fnv1a(h, &st.st_mtim, sizeof(st.st_mtim));
		h = fnv1a(h, &st.st_size, sizeof(st.st_size));
		err = xk_snprintf(unit_path, sizeof(unit_path), "%s/%016llx.i",
				  cache_dir, (unsigned long long)h);
	}
	if (!err && !xk_exists(unit_path)) {
		err = xk_snprintf(script, sizeof(script),
				  "%s -E -fdirectives-only -o %s.tmp %s && mv %s.tmp %s",
				  cmd, unit_path, src, unit_path, unit_path);
		err = err ?: shell(t, script, log);
	}
	err = err ?: xk_read_file(unit_path, &unit, &unit_len);
	if (err)
		goto out;
	/* compile flags for a preprocessed unit: no -include */
	nodeps = strdup(cmd);
	if (!nodeps) {
		err = -ENOMEM;
		goto out;
	}
	for (char *p; (p = strstr(nodeps, "-include "));) {
		size_t n = strlen("-include ");

		n += strcspn(p + n, " ");
		memset(p, ' ', n);
	}
	for (int v = 0; v < XK_BUILD_VARIANTS && !err; v++) {
		char *patched = NULL;
		uint64_t h;
		struct job *j;
		char *out = res->variant[idx][v];

		err = patch_unit(c, unit, res->value[v], &patched);
		if (err)
			break;
		h = fnv1a(0xcbf29ce484222325ULL, patched, strlen(patched));
		h = fnv1a(h, nodeps, strlen(nodeps));
		xk_snprintf(out, XK_PATH_MAX, "%s/%016llx.o", cache_dir,
			    (unsigned long long)h);
		if (xk_exists(out)) {
			res->cached++;
			free(patched);
			continue;
		}
		while (*running >= max_jobs && !err)
			err = wait_job(jobs, running, log);
		if (err) {
			free(patched);
			break;
		}
		j = &jobs[*running];
		xk_snprintf(j->out, sizeof(j->out), "%s", out);
		xk_snprintf(j->tmp, sizeof(j->tmp), "%s.tmp", out);
		xk_snprintf(unit_path, sizeof(unit_path), "%s.i", j->tmp);
		err = xk_write_file(unit_path, patched, strlen(patched), 0644);
		free(patched);
		if (err)
			break;
		xk_snprintf(script, sizeof(script),
			    "%s -fpreprocessed -fdirectives-only -c -o %s %s && rm -f %s",
			    nodeps, j->tmp, unit_path, unit_path);
		{
			const char *argv[] = { "/bin/sh", "-c", script, NULL };
			posix_spawn_file_actions_t fa;

			posix_spawn_file_actions_init(&fa);
			posix_spawn_file_actions_addchdir_np(&fa, t->cwd);
			posix_spawn_file_actions_addopen(&fa, 1, log,
							 O_WRONLY | O_CREAT | O_APPEND, 0644);
			posix_spawn_file_actions_adddup2(&fa, 1, 2);
			err = -posix_spawn(&j->pid, "/bin/sh", &fa, NULL,
					   (char *const *)argv, environ);
			posix_spawn_file_actions_destroy(&fa);
		}
		if (err)
			break;
		(*running)++;
		res->compiled++;
		if (progress)
			pr_info("compiling %s with %s = %lld\n", obj, c->name,
				res->value[v]);
	}
out:
	free(cmd);
	free(unit);
	free(nodeps);
	return err;
}

int xk_build(const struct xk_kernel *k, struct xk_constant *c,
	     const struct xk_build_opts *opts, struct xk_build_result *res)
{
	int jobs_max = OPTS_GET(opts, jobs, 0) ?: (int)sysconf(_SC_NPROCESSORS_ONLN);
	bool progress = OPTS_GET(opts, progress, false);
	char ccvar[96], cache_dir[XK_PATH_MAX], log[XK_PATH_MAX];
	struct job jobs[64];
	int running = 0, err;
	long long step;
	double t0 = xk_now();

	if (!OPTS_VALID(opts, xk_build_opts))
		return xk_err(-EINVAL, "invalid xk_build_opts");
	memset(res, 0, sizeof(*res));
	struct tree tree;

	if (!k->source_prepared && !c->module_dir[0])
		return xk_err(-ENOENT, "kernel %s has no prepared source tree: run "
				       "'xk kernel fetch' (without --no-source)",
			      k->release);
	err = tree_of(k, c, &tree);
	if (err)
		return xk_err(err, "path too long");
	if (jobs_max > 64)
		jobs_max = 64;
	if (!strcmp(c->kind, "macro"))
		err = locate_macro(k, &tree, c);
	else if (!strcmp(c->kind, "literal") || !strcmp(c->kind, "variable"))
		err = c->file[0] && c->line > 0 && c->text[0] && c->has_def ? 0 :
		      xk_err(-EINVAL, "%s: a %s needs file=, line=, text= and "
				      "default=", c->name, c->kind);
	else
		err = xk_err(-EINVAL, "%s: unknown kind '%s' (macro, literal, "
				      "variable)", c->name, c->kind);
	if (err)
		return err;
	if (!strcmp(c->kind, "macro")) {
		const char *pct = strchr(c->tmpl, '%');

		if (!pct || strncmp(pct, "%lld", 4) || strchr(pct + 4, '%'))
			return xk_err(-EINVAL, "%s: template '%s' must hold exactly "
					       "one %%lld", c->name, c->tmpl);
	}
	if (!c->has_bounds) {
		c->min = c->def > 0 ? 1 : c->def;
		c->max = c->def > 0 ? c->def * 16 : 16;
	}
	/* fit variants near the default keep the instruction forms; the
	 * check variant, farther away, often does not: it is checked by value */
	step = llabs(c->def) / 8 ?: 1;
	res->value[0] = c->def + step;
	res->value[1] = c->def + 2 * step;
	/* twice the default, or farther if that is one of the fit values */
	res->value[2] = c->def * 2 > c->def + 3 * step ? c->def * 2 :
			c->def + 4 * step;
	err = find_objects(k, &tree, c, res) ?:
	      kernel_cc_var(k, ccvar, sizeof(ccvar)) ?:
	      xk_snprintf(cache_dir, sizeof(cache_dir), "%s/xk-build", k->dir) ?:
	      xk_mkdir_p(cache_dir) ?:
	      xk_snprintf(log, sizeof(log), "%s/build.log", cache_dir);
	for (int i = 0; i < res->nr_objects && !err; i++)
		err = build_object(&tree, c, ccvar, i, res, jobs, &running,
				   jobs_max, cache_dir, log, progress);
	while (running > 0) {
		int e = wait_job(jobs, &running, log);

		if (e && !err)
			err = e;
		if (e == -ECHILD)
			break;
	}
	/* the baselines must be the shipped code, function by function */
	for (int i = 0; i < res->nr_objects && !err && !tree.module &&
			!OPTS_GET(opts, skip_identity, false); i++) {
		int checked = 0;

		err = xk_identity_check(k, res->base[i], res->object[i], &checked);
		res->identical += checked;
	}
	res->seconds = xk_now() - t0;
	return err;
}

/* ---------------------------------------------------------------- */
/* analysis                                                          */
/* ---------------------------------------------------------------- */

int xk_gen(const struct xk_kernel *k, const struct xk_constant *c,
	   const struct xk_build_result *b, struct xk_scope *t)
{
	int err = 0;

	memset(t, 0, sizeof(*t));
	xk_strlcpy(t->constant, c->name, sizeof(t->constant));
	xk_strlcpy(t->kind, c->kind, sizeof(t->kind));
	xk_snprintf(t->source, sizeof(t->source), "%s:%d", c->file, c->line);
	xk_strlcpy(t->release, k->release, sizeof(t->release));
	xk_strlcpy(t->version, k->version, sizeof(t->version));
	t->def = c->def;
	t->min = c->min;
	t->max = c->max;
	for (int i = 0; i < b->nr_objects && !err; i++) {
		struct gen_input in = { .object = b->object[i], .def = c->def };

		xk_strlcpy(in.base_path, b->base[i], sizeof(in.base_path));
		for (int v = 0; v < GEN_NR_VARIANTS; v++) {
			in.variant[v].value = b->value[v];
			xk_strlcpy(in.variant[v].path, b->variant[i][v],
				   sizeof(in.variant[v].path));
		}
		err = gen_object(&in, t);
	}
	if (err)
		xk_scope_free(t);
	else if (!c->module_dir[0])	/* a module's names are not recorded */
		xk_count_copies(k, t);
	return err;
}

/* Disassembly of [from, to) of a function of an object, one line each. */
int xk_disasm_range(const char *obj_path, const char *func,
		    unsigned long long from, unsigned long long to, char **text)
{
	struct xk_obj o;
	struct xk_func_code code;
	struct xk_sym *f;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int err;

	err = xk_obj_open(&o, obj_path);
	if (err)
		return err;
	f = xk_obj_find_func(&o, func, NULL);
	if (!f) {
		xk_obj_close(&o);
		return xk_err(-ENOENT, "%s has no function %s", obj_path, func);
	}
	err = xk_disasm_func(f, &code);
	if (err) {
		xk_obj_close(&o);
		return err;
	}
	m = open_memstream(&buf, &len);
	if (!m) {
		err = -ENOMEM;
	} else {
		for (size_t i = 0; i < code.nr; i++) {
			const struct xk_insn *in = &code.insn[i];
			char hex[48] = "";

			if (in->off < from || in->off >= to)
				continue;
			for (int b = 0; b < in->len && b < 15; b++)
				snprintf(hex + strlen(hex), sizeof(hex) - strlen(hex),
					 "%02x ", in->bytes[b]);
			fprintf(m, "%6llx:  %-30s %s\n", (unsigned long long)in->off,
				hex, in->text);
		}
		fclose(m);
		*text = buf;
	}
	xk_func_code_free(&code);
	xk_obj_close(&o);
	return err;
}
