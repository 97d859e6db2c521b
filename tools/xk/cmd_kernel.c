// SPDX-License-Identifier: GPL-2.0
/* xk kernel fetch | info: the target kernel in the cache. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int kernel_for_command(const char *release, struct xk_kernel *k)
{
	XK_OPTS(xk_kernel_opts, opts, .release = release, .offline = true);
	int err = xk_kernel_find(&opts, k);

	return err ? p_lib_err("target kernel", err) : 0;
}

static void print_kernel(const struct xk_kernel *k, double seconds)
{
	if (json_output) {
		json_begin_object(jw, NULL);
		json_str(jw, "release", k->release);
		json_str(jw, "version", k->version);
		json_str(jw, "dir", k->dir);
		json_str(jw, "vmlinuz", k->vmlinuz);
		json_str(jw, "config", k->config);
		json_str(jw, "headers", k->headers);
		json_str(jw, "modules", k->modules);
		json_str(jw, "source", k->source_prepared ? k->source : NULL);
		if (seconds >= 0)
			json_double(jw, "seconds", seconds);
		json_end_object(jw);
		return;
	}
	printf("release:  %s\n", k->release);
	printf("version:  %s\n", k->version);
	printf("dir:      %s\n", k->dir);
	printf("vmlinuz:  %s\n", k->vmlinuz);
	printf("headers:  %s\n", k->headers);
	printf("modules:  %s\n", k->modules);
	printf("source:   %s\n", k->source_prepared ? k->source
						    : "(not fetched; --source)");
	if (seconds >= 0)
		printf("took:     %.1f s\n", seconds);
}

static int do_fetch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "release", required_argument, NULL, 'r' },
		{ "no-source", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const char *release = NULL;
	bool with_source = true;
	struct xk_kernel k;
	double t0 = xk_now();
	int c, err;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+r:", opts, NULL)) != -1) {
		if (c == 'r')
			release = optarg;
		else if (c == 'n')
			with_source = false;
		else
			return p_usage("kernel fetch", "bad option");
	}
	if (optind < argc)
		return p_usage("kernel fetch", "unexpected argument '%s'",
			       argv[optind]);
	{
		XK_OPTS(xk_kernel_opts, o, .release = release,
			.with_source = with_source);

		err = xk_kernel_fetch(&o, &k);
	}
	if (err)
		return p_lib_err("kernel fetch", err);
	print_kernel(&k, xk_now() - t0);
	return 0;
}

static int do_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "release", required_argument, NULL, 'r' },
		{ "field", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	const char *release = NULL, *field = NULL;
	struct xk_kernel k;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+r:f:", opts, NULL)) != -1) {
		if (c == 'r')
			release = optarg;
		else if (c == 'f')
			field = optarg;
		else
			return p_usage("kernel info", "bad option");
	}
	if (kernel_for_command(release, &k))
		return XK_EXIT_FAIL;
	if (field) {
		const struct { const char *name, *value; } fields[] = {
			{ "release", k.release }, { "version", k.version },
			{ "dir", k.dir }, { "vmlinuz", k.vmlinuz },
			{ "config", k.config }, { "headers", k.headers },
			{ "modules", k.modules }, { "source", k.source },
		};

		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			if (strcmp(field, fields[i].name))
				continue;
			if (!fields[i].value[0]) {
				p_err("kernel %s has no %s in the cache (xk "
				      "kernel fetch)", k.release, field);
				return XK_EXIT_FAIL;
			}
			printf("%s\n", fields[i].value);
			return 0;
		}
		return p_usage("kernel info", "unknown field '%s'", field);
	}
	print_kernel(&k, -1);
	return 0;
}

static const struct cmd kernel_cmds[] = {
	{ "fetch", do_fetch },
	{ "info", do_info },
	{ NULL, NULL },
};

int do_kernel(int argc, char **argv)
{
	return cmd_select(kernel_cmds, argc - 1, argv + 1, "kernel");
}
