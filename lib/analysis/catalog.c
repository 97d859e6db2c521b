// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: the catalog of constants (catalog/constants.conf): what a
 * constant is called, where it is defined, its bounds. The format is
 * documented in docs/adding-a-constant.md.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>

#include "build.h"


static int parse_ll(const char *v, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(v, &end, 0);
	return errno || end == v || *xk_trim(end) ? -EINVAL : 0;
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
	else if (!strcmp(key, "code"))
		err = xk_strlcpy(c->code, v, sizeof(c->code));
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
			return xk_err(-ENOMEM, "%s: out of memory", __func__);
		}
	}
	for (line = strtok_r(text, "\n", &save); line && !err;
	     line = strtok_r(NULL, "\n", &save)) {
		char *l = xk_trim(line), *eq;

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
			err = set_field(c, xk_trim(l), xk_trim(eq + 1), catalog, n);
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

static int xk_catalog_find_impl(const char *catalog, const char *name,
				struct xk_constant *c)
{
	return catalog_walk(catalog, name, c, NULL);
}

int xk_catalog_find(const char *catalog, const char *name,
		    struct xk_constant *c)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_catalog_find_impl(catalog, name, c));
}

static int xk_catalog_list_impl(const char *catalog, char **names)
{
	return catalog_walk(catalog, NULL, NULL, names);
}

int xk_catalog_list(const char *catalog, char **names)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_catalog_list_impl(catalog, names));
}

/* A C identifier in capitals, digits and underscores: a macro's name. */
static bool macro_name(const char *name)
{
	if (!name[0] || isdigit((unsigned char)name[0]))
		return false;
	for (const char *p = name; *p; p++)
		if (!isupper((unsigned char)*p) && !isdigit((unsigned char)*p) &&
		    *p != '_')
			return false;
	return true;
}

static int xk_constant_resolve_impl(const char *catalog, const char *name,
				    struct xk_constant *c)
{
	int err = catalog_walk(catalog, name, c, NULL);

	if (err != -ENOENT || !macro_name(name))
		return err;
	/* not catalogued: a macro found by its name (xk build locates it) */
	xk_err_clear();
	memset(c, 0, sizeof(*c));
	return xk_strlcpy(c->name, name, sizeof(c->name)) ?:
	       xk_strlcpy(c->kind, "macro", sizeof(c->kind));
}

int xk_constant_resolve(const char *catalog, const char *name,
			struct xk_constant *c)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_constant_resolve_impl(catalog, name, c));
}

