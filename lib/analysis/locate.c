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
	p = xk_trim(b);
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

int locate_macro(const struct xk_kernel *k, const struct tree *t,
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
				     c->name, xk_trim(hits));
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
						     c->file, n + 1, c->name, xk_trim((char *)body));
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
int find_objects(const struct xk_kernel *k, const struct tree *t,
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
			return xk_err(-ENOMEM, "%s: out of memory", __func__);
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

