// SPDX-License-Identifier: GPL-2.0
/*
 * The cache of scope tables: $XK_CACHE/kernels/RELEASE/scopes/NAME.scope,
 * one per constant of the target kernel. xk gen writes there; xk load and
 * xk set find a constant's table there by its name, else among the tables
 * a package ships for the running release (xkernel-scopes-RELEASE:
 * /usr/lib/xkernel/scopes/RELEASE/, checked against the running kernel's
 * build id), and on a miss make it (build, then gen, as xk gen would) so
 * that `xk set NAME=VALUE` works on a constant never analysed. A table is
 * only used on the kernel it was made for: the running kernel's release is
 * looked up first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli.h"
#include "xk/runtime.h"
#include "xk/scope.h"

void table_cache_path(const struct xk_kernel *k, const char *name,
		      char *path, size_t size)
{
	char dir[XK_PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "%s/scopes", k->dir);
	mkdir(dir, 0755);
	snprintf(path, size, "%s/%s.scope", dir, name);
}

/* Analyses constant name into its cached table at path. */
static int make_table(const struct xk_kernel *k, const char *name,
		      const char *catalog, const char *path)
{
	struct xk_build_result *b = calloc(1, sizeof(*b));
	struct xk_bounds_check ends;
	struct xk_constant c;
	struct xk_scope fresh;
	int err;

	if (!b)
		return -ENOMEM;
	err = xk_constant_resolve(catalog_path(catalog), name, &c);
	err = err ?: xk_build(k, &c, NULL, b);
	err = err ?: xk_gen(k, &c, b, &fresh);
	if (err) {
		free(b);
		return p_lib_err("analysis", err), err;
	}
	/* as xk gen: the bounds' ends built and checked */
	err = xk_gen_check_bounds(k, &c, b, &fresh, &ends);
	free(b);
	if (err) {
		xk_scope_free(&fresh);
		return p_lib_err("analysis", err), err;
	}
	err = xk_scope_write(&fresh, path);
	xk_scope_free(&fresh);
	if (err)
		return p_lib_err("analysis", err), err;
	return 0;
}

static int check_release(const struct xk_scope *t)
{
	struct utsname u;

	uname(&u);
	if (strcmp(u.release, t->release)) {
		p_err("the scope table of %s was made for kernel %s; this kernel "
		      "is %s", t->constant, t->release, u.release);
		return -ESTALE;
	}
	return 0;
}

/* Where packages ship tables (xkernel-scopes-RELEASE): DIR/RELEASE/. */
static const char *shipped_dir(void)
{
	const char *d = getenv("XK_SCOPES_DIR");

	return d && *d ? d : XK_SHIPPED_SCOPES;
}

/*
 * The kernel whose tables apply here: the running one (a table is only
 * loaded on the kernel it was made for), so the rules of the target do not
 * apply; to make a table it must be in the cache. 0, or -ENOENT reported.
 */
static int kernel_for_tables(struct xk_kernel *k, const char *name)
{
	XK_OPTS(xk_kernel_opts, o, .offline = true);
	struct xk_kernel_list l;
	char names[1024] = "";
	struct utsname u;
	size_t n = 0;

	if (uname(&u))
		return p_err("uname: %s", strerror(errno)), -errno;
	o.release = u.release;
	if (!xk_kernel_find(&o, k))
		return 0;
	if (!xk_kernel_list(NULL, &l)) {
		for (int i = 0; i < l.nr && n < sizeof(names); i++)
			if (l.kernels[i].complete)
				n += snprintf(names + n, sizeof(names) - n, "%s%s",
					      n ? ", " : "", l.kernels[i].release);
		xk_kernel_list_free(&l);
	}
	if (name)	/* looked for in the cache and among the shipped ones */
		p_err("no scope table of %s for the running kernel %s: none in "
		      "the cache %s, none shipped in %s/%s (xkernel-scopes-%s), "
		      "and to make one the kernel must be in the cache (cached: "
		      "%s): 'xk kernel fetch --release %s' fetches it", name,
		      u.release, xk_cache_dir(NULL), shipped_dir(), u.release,
		      u.release, names[0] ? names : "none", u.release);
	else
		p_err("scope tables are made for the running kernel %s, which is "
		      "not in the cache %s (cached: %s): 'xk kernel fetch "
		      "--release %s' fetches it", u.release, xk_cache_dir(NULL),
		      names[0] ? names : "none", u.release);
	return -ENOENT;
}

bool running_table_path(const char *name, char *path, size_t size)
{
	char shipped[XK_PATH_MAX + 256];
	struct utsname u;

	uname(&u);
	snprintf(path, size, "%s/kernels/%s/scopes/%s.scope", xk_cache_dir(NULL),
		 u.release, name);
	if (!access(path, R_OK))
		return false;
	snprintf(shipped, sizeof(shipped), "%s/%s/%s.scope", shipped_dir(),
		 u.release, name);
	if (access(shipped, R_OK))
		return false;
	snprintf(path, size, "%s", shipped);
	return true;
}

/*
 * A shipped table is made from the Debian image of its release: it holds
 * only on that very build. The package's build-id file (beside the
 * tables) against the running kernel's (/sys/kernel/notes). 0, or -errno
 * reported naming both.
 */
static int check_shipped_build(const char *table)
{
	char file[XK_PATH_MAX + 16], want[2 * XK_BUILD_ID_MAX + 2];
	char have[2 * XK_BUILD_ID_MAX + 1], *slash;
	FILE *f;

	snprintf(file, sizeof(file), "%s", table);
	slash = strrchr(file, '/');
	snprintf(slash + 1, sizeof(file) - (size_t)(slash + 1 - file), "build-id");
	f = fopen(file, "re");
	if (!f || !fgets(want, sizeof(want), f)) {
		if (f)
			fclose(f);
		p_err("%s: no build id beside the shipped table %s: the package "
		      "is damaged", file, table);
		return -ENOENT;
	}
	fclose(f);
	want[strcspn(want, "\n")] = '\0';
	if (xk_build_id_running(have, sizeof(have)))
		return p_lib_err("shipped table", -ENOKEY), -ENOKEY;
	if (strcmp(want, have)) {
		p_err("the shipped table %s was made for the build %s of this "
		      "release; the running kernel is the build %s (built "
		      "separately under the same release): its tables must be "
		      "made for it (xk kernel fetch, then xk gen)", table, want,
		      have);
		return -ESTALE;
	}
	return 0;
}

/*
 * arg is a path (it has a '/' or ends in .scope) or a constant's name: its
 * table in the cache for the running kernel ($XK_CACHE/kernels/RELEASE/
 * scopes/NAME.scope, usable without the kernel itself in the cache, so that
 * tables can be installed there), else made from the target kernel.
 * 0, or -errno with the cause reported.
 */
int table_load(const char *arg, const char *catalog, struct xk_scope *t,
	       char *path, size_t size)
{
	struct xk_kernel k;
	int err;

	if (strchr(arg, '/') || strstr(arg, ".scope")) {
		snprintf(path, size, "%s", arg);
	} else if (running_table_path(arg, path, size)) {
		err = check_shipped_build(path);
		if (err)
			return err;
	} else {
		if (access(path, R_OK)) {
			if (kernel_for_tables(&k, arg))
				return -ENOENT;
			table_cache_path(&k, arg, path, size);
			err = access(path, R_OK) ? make_table(&k, arg, catalog, path) : 0;
			if (err)
				return err;
		}
	}
	err = xk_scope_read(path, t);
	if (err)
		return p_lib_err("scope table", err), err;
	err = check_release(t);
	if (err)
		xk_scope_free(t);
	return err;
}

/*
 * Value for the table's per-value spans (docs/scope-table.md): when some
 * span has no point at value, the objects holding them are built with it
 * and the new points checked and written back to path (the cache; a table
 * that cannot be written keeps them for this command only). And when the
 * constant is loaded, the module gets them (fd >= 0). 0, or -errno with
 * the cause reported (a value whose build has another shape is refused,
 * naming the span).
 */
int table_prepare_value(struct xk_scope *t, const char *path,
			const char *catalog, long long value, int fd,
			bool no_build)
{
	struct xk_constant c;
	struct xk_kernel k;
	double t0 = xk_now();
	int added = 0, err;

	/* a value a proof refused (xk gen --prove) is named, not built */
	err = xk_scope_check_value(t, value);
	if (err)
		return p_lib_err("prepare", err), err;
	if (no_build && !table_has_value(t, value)) {
		p_err("%s = %lld: spans of the per-value form have no parameters "
		      "for this value and --no-build forbids building them (xk gen "
		      "--prepare %lld %s makes them ahead of time)", t->constant,
		      value, value, t->constant);
		return -ENOKEY;
	}
	if (table_has_value(t, value))
		goto hand;
	err = kernel_for_tables(&k, NULL);
	if (err)
		return err;
	err = xk_constant_resolve(catalog_path(catalog), t->constant, &c);
	err = err ?: xk_gen_point(&k, &c, t, value, &added);
	if (err)
		return p_lib_err("prepare", err), err;
	if (added) {
		if (!json_output)
			fprintf(stderr, "%s = %lld: per-value parameters of %d span%s "
				"built and checked (%.1f s)\n", t->constant, value,
				added, added == 1 ? "" : "s", xk_now() - t0);
		if (xk_scope_write(t, path))
			fprintf(stderr, "%s: not kept in %s\n", t->constant, path);
	}
hand:
	if (fd >= 0) {
		err = xk_rt_add_point(fd, t, value, &added);
		if (err)
			return p_lib_err("prepare", err), err;
	}
	return 0;
}

/* Whether every per-value span of t has a point at value. */
bool table_has_value(const struct xk_scope *t, long long value)
{
	for (int i = 0; i < t->nr_spans; i++)
		if (!xk_scope_span_has_value(&t->spans[i], value, t->def))
			return false;
	return true;
}

void json_table_values(const char *name, const struct xk_scope *t)
{
	json_begin_array(jw, name);
	for (int i = 0; i < (t->nr_ranges ? t->nr_ranges : 1); i++) {
		json_begin_array(jw, NULL);
		json_int(jw, NULL, t->nr_ranges ? t->ranges[i][0] : t->min);
		json_int(jw, NULL, t->nr_ranges ? t->ranges[i][1] : t->max);
		json_end_array(jw);
	}
	json_end_array(jw);
}
