// SPDX-License-Identifier: GPL-2.0
/*
 * xk kernel fetch | info | list | use: the kernels in the cache and the
 * target, the one the other commands act on (the rules: xk help kernel,
 * include/xk/provision.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int kernel_for_command(const char *release, struct xk_kernel *k)
{
	XK_OPTS(xk_kernel_opts, opts, .release = release, .offline = true);
	int err = xk_kernel_find(&opts, k);

	return err ? p_lib_err("target kernel", err) : 0;
}

/* What the target is, after a fetch or for info: JSON fields, or a line. */
static void print_target(const struct xk_kernel *k)
{
	struct xk_kernel_list l;
	const char *other = NULL;
	bool listed;

	if (k->why) {
		if (json_output) {
			json_bool(jw, "target", true);
			json_str(jw, "target_why", xk_target_why_name(k->why));
		} else {
			printf("%-9s yes (%s)\n", "target:", xk_target_why_text(k->why));
		}
		return;
	}
	listed = !xk_kernel_list(NULL, &l);
	if (listed && l.target >= 0)
		other = l.kernels[l.target].release;
	if (json_output) {
		json_bool(jw, "target", false);
		json_str(jw, "target_why", NULL);
		json_str(jw, "other_target", other);
	} else if (other) {
		printf("%-9s no: the target is %s (%s); this one with --release "
		       "%s, XK_RELEASE or 'xk kernel use'\n", "target:", other,
		       xk_target_why_text(l.kernels[l.target].why), k->release);
	} else {
		printf("%-9s no: %s\n", "target:", listed ? l.problem : xk_last_error());
	}
	if (listed)
		xk_kernel_list_free(&l);
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
	{ "toolchain", offsetof(struct xk_kernel, toolchain) },
};

/* The GNU build id of the kernel's vmlinux (extracted at fetch), or "". */
static void kernel_build_id(const struct xk_kernel *k, char *hex, size_t size)
{
	if (xk_kernel_build_id(k, hex, size))
		hex[0] = '\0';
}

static void print_kernel(const struct xk_kernel *k, double seconds)
{
	char id[2 * XK_BUILD_ID_MAX + 1];

	if (json_output)
		json_begin_object(jw, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const char *value = (const char *)k + fields[i].off;
		char label[32];

		if (!strcmp(fields[i].name, "source") && !k->source_prepared)
			value = json_output ? NULL : "(not fetched; --source)";
		if (!strcmp(fields[i].name, "toolchain") && !value[0])
			value = json_output ? NULL : "this host's";
		snprintf(label, sizeof(label), "%s:", fields[i].name);
		if (json_output)
			json_str(jw, fields[i].name, value);
		else if (strcmp(fields[i].name, "config"))
			printf("%-9s %s\n", label, value);
	}
	kernel_build_id(k, id, sizeof(id));
	if (json_output)
		json_str(jw, "build_id", id[0] ? id : NULL);
	else if (id[0])
		printf("build id: %s\n", id);
	print_target(k);
	if (json_output && seconds >= 0)
		json_double(jw, "seconds", seconds);
	else if (seconds >= 0)
		printf("took:     %.1f s\n", seconds);
	if (json_output)
		json_end_object(jw);
}

struct kernel_args {
	const char *release, *field, *build_dir;
	bool no_source, clear;
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
	if (!strcmp(a->field, "build_id")) {
		char id[2 * XK_BUILD_ID_MAX + 1];

		kernel_build_id(&k, id, sizeof(id));
		if (!id[0]) {
			p_err("kernel %s has no vmlinux with a build id in the cache "
			      "(xk kernel fetch, with the source)", k.release);
			return XK_EXIT_FAIL;
		}
		printf("%s\n", id);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const char *value = (const char *)&k + fields[i].off;

		if (strcmp(a->field, fields[i].name))
			continue;
		if (!value[0] && !strcmp(a->field, "toolchain")) {
			printf("\n");	/* this host's */
			return 0;
		}
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

static void json_cached(const struct xk_kernel_list *l, int i)
{
	const struct xk_cached_kernel *c = &l->kernels[i];
	char dir[XK_PATH_MAX + 160];

	snprintf(dir, sizeof(dir), "%s/kernels/%s", l->cache, c->release);
	json_begin_object(jw, NULL);
	json_str(jw, "release", c->release);
	json_str(jw, "version", c->version[0] ? c->version : NULL);
	json_str(jw, "dir", dir);
	json_bool(jw, "complete", c->complete);
	json_bool(jw, "target", i == l->target);
	json_str(jw, "target_why", xk_target_why_name(c->why));
	json_bool(jw, "source_prepared", c->source_prepared);
	json_int(jw, "tables", c->nr_tables);
	json_end_object(jw);
}

static int do_list(void *args, int argc, char **argv)
{
	struct kernel_args *a = args;
	XK_OPTS(xk_kernel_opts, o, .release = a->release);
	struct xk_kernel_list l;
	int wr = 0, wv = 0, err;

	(void)argc;
	(void)argv;
	err = xk_kernel_list(&o, &l);
	if (err)
		return p_lib_err("kernel list", err);
	if (json_output) {
		json_begin_object(jw, NULL);
		json_str(jw, "cache", l.cache);
		json_str(jw, "target", l.target >= 0 ? l.kernels[l.target].release : NULL);
		json_str(jw, "target_why", l.target >= 0 ?
			 xk_target_why_name(l.kernels[l.target].why) : NULL);
		json_str(jw, "chosen", l.chosen[0] ? l.chosen : NULL);
		json_str(jw, "problem", l.target < 0 ? l.problem : NULL);
		json_begin_array(jw, "kernels");
		for (int i = 0; i < l.nr; i++)
			json_cached(&l, i);
		json_end_array(jw);
		json_end_object(jw);
		xk_kernel_list_free(&l);
		return 0;
	}
	for (int i = 0; i < l.nr; i++) {
		int r = strlen(l.kernels[i].release), v = strlen(l.kernels[i].version);

		wr = r > wr ? r : wr;
		wv = v > wv ? v : wv;
	}
	for (int i = 0; i < l.nr; i++) {
		const struct xk_cached_kernel *c = &l.kernels[i];

		printf("%c %-*s  %-*s  ", i == l.target ? '*' : ' ', wr, c->release,
		       wv ? wv : 1, c->version[0] ? c->version : "-");
		if (!c->complete)
			printf("incomplete (its fetch did not finish)\n");
		else
			printf("%-15s  %d table%s%s%s\n",
			       c->source_prepared ? "source prepared" : "no source",
			       c->nr_tables, c->nr_tables == 1 ? "" : "s",
			       i == l.target ? "  target: " : "",
			       i == l.target ? xk_target_why_text(c->why) : "");
	}
	if (l.target < 0)
		printf("%sno target: %s\n", l.nr ? "\n" : "", l.problem);
	xk_kernel_list_free(&l);
	return 0;
}

static int do_use(void *args, int argc, char **argv)
{
	struct kernel_args *a = args;
	const char *env = getenv("XK_RELEASE");
	int err;

	if (a->build_dir) {
		struct xk_kernel k;
		double t0 = xk_now();

		if (a->clear || argc)
			return p_usage("kernel use", "--build-dir takes no "
				       "release and no --clear");
		err = xk_kernel_add_build(NULL, a->build_dir, &k);
		if (err)
			return p_lib_err("kernel use", err);
		print_kernel(&k, xk_now() - t0);
		return 0;
	}
	if (a->clear == (argc == 1))
		return p_usage("kernel use", "name one kernel release, or --clear");
	err = xk_kernel_choose(NULL, a->clear ? NULL : argv[0]);
	if (err)
		return p_lib_err("kernel use", err);
	if (json_output) {
		json_begin_object(jw, NULL);
		json_str(jw, "chosen", a->clear ? NULL : argv[0]);
		json_end_object(jw);
	} else if (a->clear) {
		printf("no kernel chosen: the running kernel when it is cached, "
		       "else the only one, is the target\n");
	} else {
		printf("target: %s (chosen with 'xk kernel use')\n", argv[0]);
	}
	if (!quiet && !json_output && env && *env)
		fprintf(stderr, "xk: note: XK_RELEASE=%s is set: it overrides the "
			"choice where it is set\n", env);
	return 0;
}

/*
 * xk kernel exec -- CMD...: CMD where the target kernel's builds run (its
 * toolchain root, or this host), with the standard streams; its status.
 */
static int do_exec(void *args, int argc, char **argv)
{
	struct kernel_args *a = args;
	struct xk_cmd cmd = { .argv = (const char *const *)argv,
			      .inherit_stdin = true };
	struct xk_kernel k;
	int st;

	if (argc < 1)
		return p_usage("kernel exec", "no command to run");
	if (kernel_for_command(a->release, &k))
		return XK_EXIT_FAIL;
	cmd.root = k.toolchain;
	st = xk_run(&cmd);
	return st < 0 ? p_lib_err("kernel exec", st) : st;
}

static struct kernel_args fetch_args, info_args, list_args, use_args,
	exec_args;
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

static const struct cli_opt list_opts[] = {
	{ "release", 'r', CLI_STR, offsetof(struct kernel_args, release) },
	{ NULL },
};
static const struct cli_opt exec_opts[] = {
	{ "release", 'r', CLI_STR, offsetof(struct kernel_args, release) },
	{ NULL },
};
static const struct cli_opt use_opts[] = {
	{ "clear", 0, CLI_FLAG, offsetof(struct kernel_args, clear) },
	{ "build-dir", 'b', CLI_STR, offsetof(struct kernel_args, build_dir) },
	{ NULL },
};

const struct cli_cmd cmd_kernel_fetch = {
	"kernel fetch", do_fetch, fetch_opts, &fetch_args, .max_args = 0,
};
const struct cli_cmd cmd_kernel_info = {
	"kernel info", do_info, info_opts, &info_args, .max_args = 0,
};
const struct cli_cmd cmd_kernel_list = {
	"kernel list", do_list, list_opts, &list_args, .max_args = 0,
};
const struct cli_cmd cmd_kernel_exec = {
	"kernel exec", do_exec, exec_opts, &exec_args, .max_args = -1,
	.args_end_options = true,
};
const struct cli_cmd cmd_kernel_use = {
	"kernel use", do_use, use_opts, &use_args, .max_args = 1,
};
