// SPDX-License-Identifier: GPL-2.0
/*
 * klp-build: a bench-support tool (bench/compare.sh, docs/compare.md).
 * Builds, the kpatch way, a livepatch module that compiles NAME = VALUE into
 * the functions holding NAME's spans (lib/klp/klp.c):
 *
 *   build/klp-build [-c CATALOG] [-r RELEASE] [-t TABLE] -o DIR NAME=VALUE
 *
 * NAME's scope table (TABLE, by default the cache's: build/xk gen NAME)
 * names the functions the livepatch replaces. Prints what it built,
 * one "key value" a line, the module's path on the line "ko PATH".
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xk/xk.h"
#include "xk/klp.h"

static int print_cb(enum xk_print_level level, const char *fmt, va_list ap)
{
	if (level == XK_DEBUG)
		return 0;
	fputs("klp-build: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

static int usage(void)
{
	fprintf(stderr, "usage: klp-build [-c CATALOG] [-r RELEASE] [-t TABLE] -o DIR NAME=VALUE\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *catalog = NULL, *release = NULL, *dir = NULL, *table_arg = NULL;
	char name[64], table[XK_PATH_MAX + 128], def_catalog[PATH_MAX + 64];
	struct xk_klp_result res;
	struct xk_constant c;
	struct xk_kernel k;
	struct xk_scope t;
	long long value;
	char *eq, *end;
	int opt, err;

	while ((opt = getopt(argc, argv, "c:r:o:t:h")) != -1) {
		switch (opt) {
		case 'c': catalog = optarg; break;
		case 'r': release = optarg; break;
		case 'o': dir = optarg; break;
		case 't': table_arg = optarg; break;
		default: return usage();
		}
	}
	if (optind != argc - 1 || !dir)
		return usage();
	eq = strchr(argv[optind], '=');
	if (!eq || eq == argv[optind] || (size_t)(eq - argv[optind]) >= sizeof(name))
		return usage();
	snprintf(name, sizeof(name), "%.*s", (int)(eq - argv[optind]), argv[optind]);
	errno = 0;
	value = strtoll(eq + 1, &end, 0);
	if (errno || end == eq + 1 || *end) {
		fprintf(stderr, "klp-build: '%s' is not a number\n", eq + 1);
		return 2;
	}
	if (!catalog) {
		/* the catalog beside the build: build/klp-build -> catalog/ */
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n <= 0)
			return usage();
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(def_catalog, sizeof(def_catalog), "%s/../catalog/constants.conf", exe);
		catalog = def_catalog;
	}
	xk_set_print(print_cb);
	{
		XK_OPTS(xk_kernel_opts, ko, .release = release, .offline = true);

		err = xk_kernel_find(&ko, &k);
	}
	if (err) {
		fprintf(stderr, "klp-build: %s\n", xk_last_error());
		return 1;
	}
	if (table_arg)
		snprintf(table, sizeof(table), "%s", table_arg);
	else
		snprintf(table, sizeof(table), "%s/scopes/%s.scope", k.dir, name);
	err = xk_constant_resolve(catalog, name, &c);
	if (!err) {
		err = xk_scope_read(table, &t);
		if (err)
			fprintf(stderr, "klp-build: no scope table of %s at %s (xk gen)\n",
				name, table);
		else if (strcmp(t.constant, name)) {
			fprintf(stderr, "klp-build: %s is the table of %s\n", table,
				t.constant);
			xk_scope_free(&t);
			return 1;
		}
	}
	if (err) {
		fprintf(stderr, "klp-build: %s\n", xk_last_error());
		return 1;
	}
	err = xk_klp_build(&k, &c, &t, value, dir, &res);
	xk_scope_free(&t);
	if (err) {
		fprintf(stderr, "klp-build: %s\n", xk_last_error());
		return 1;
	}
	printf("name %s\n", res.name);
	for (int i = 0; i < res.nr_funcs; i++)
		printf("function %s %s\n", res.object[i], res.func[i]);
	printf("relocations section=%d exported=%d livepatch=%d\n",
	       res.relocs_section, res.relocs_exported, res.relocs_klp);
	printf("special_entries %d\n", res.special_entries);
	printf("fresh_statics %d\n", res.fresh_statics);
	printf("seconds %.1f\n", res.seconds);
	printf("ko %s\n", res.ko);
	return 0;
}
