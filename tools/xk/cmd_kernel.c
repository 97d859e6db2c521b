// SPDX-License-Identifier: GPL-2.0
/* xk kernel fetch | info: the target kernel in the cache. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int kernel_for_command(const char *release, struct xk_kernel *k)
{
	XK_OPTS(xk_kernel_opts, opts, .release = release, .offline = true);
	int err = xk_kernel_find(&opts, k);

	return err ? p_lib_err("target kernel", err) : 0;
}

/* A kernel's fields in the order they are printed (config: in JSON only). */
static const struct {
	const char *name;
	size_t off;
} fields[] = {
	{ "release", offsetof(struct xk_kernel, release) },
	{ "version", offsetof(struct xk_kernel, version) },
	{ "dir", offsetof(struct xk_kernel, dir) },
	{ "vmlinuz", offsetof(struct xk_kernel, vmlinuz) },
	{ "config", offsetof(struct xk_kernel, config) },
	{ "headers", offsetof(struct xk_kernel, headers) },
	{ "modules", offsetof(struct xk_kernel, modules) },
	{ "source", offsetof(struct xk_kernel, source) },
};

static void print_kernel(const struct xk_kernel *k, double seconds)
{
	if (json_output)
		json_begin_object(jw, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const char *value = (const char *)k + fields[i].off;
		char label[32];

		if (!strcmp(fields[i].name, "source") && !k->source_prepared)
			value = json_output ? NULL : "(not fetched; --source)";
		snprintf(label, sizeof(label), "%s:", fields[i].name);
		if (json_output)
			json_str(jw, fields[i].name, value);
		else if (strcmp(fields[i].name, "config"))
			printf("%-9s %s\n", label, value);
	}
	if (json_output && seconds >= 0)
		json_double(jw, "seconds", seconds);
	else if (seconds >= 0)
		printf("took:     %.1f s\n", seconds);
	if (json_output)
		json_end_object(jw);
}

struct kernel_args {
	const char *release, *field;
	bool no_source;
};

static int do_fetch(void *args, int argc, char **argv)
{
	struct kernel_args *a = args;
	XK_OPTS(xk_kernel_opts, o, .release = a->release,
		.with_source = !a->no_source);
	struct xk_kernel k;
	double t0 = xk_now();
	int err;

	(void)argc;
	(void)argv;
	err = xk_kernel_fetch(&o, &k);
	if (err)
		return p_lib_err("kernel fetch", err);
	print_kernel(&k, xk_now() - t0);
	return 0;
}

static int do_info(void *args, int argc, char **argv)
{
	struct kernel_args *a = args;
	struct xk_kernel k;

	(void)argc;
	(void)argv;
	if (kernel_for_command(a->release, &k))
		return XK_EXIT_FAIL;
	if (!a->field) {
		print_kernel(&k, -1);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const char *value = (const char *)&k + fields[i].off;

		if (strcmp(a->field, fields[i].name))
			continue;
		if (!value[0]) {
			p_err("kernel %s has no %s in the cache (xk kernel fetch)",
			      k.release, a->field);
			return XK_EXIT_FAIL;
		}
		printf("%s\n", value);
		return 0;
	}
	return p_usage("kernel info", "unknown field '%s'", a->field);
}

static struct kernel_args fetch_args, info_args;
static const struct cli_opt fetch_opts[] = {
	{ "release", 'r', CLI_STR, offsetof(struct kernel_args, release) },
	{ "no-source", 0, CLI_FLAG, offsetof(struct kernel_args, no_source) },
	{ NULL },
};
static const struct cli_opt info_opts[] = {
	{ "release", 'r', CLI_STR, offsetof(struct kernel_args, release) },
	{ "field", 'f', CLI_STR, offsetof(struct kernel_args, field) },
	{ NULL },
};

const struct cli_cmd cmd_kernel_fetch = {
	"kernel fetch", do_fetch, fetch_opts, &fetch_args, .max_args = 0,
};
const struct cli_cmd cmd_kernel_info = {
	"kernel info", do_info, info_opts, &info_args, .max_args = 0,
};
