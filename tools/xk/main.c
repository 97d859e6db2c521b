// SPDX-License-Identifier: GPL-2.0
/*
 * xk: the xkernel command-line tool.
 *
 *   xk [-j] [-q] OBJECT COMMAND [ARGS]
 *
 * Objects follow the flow of one constant: kernel (provision the target),
 * vm (the guest harness). Every command has a help page (xk help OBJECT
 * COMMAND) and a JSON form of its output (-j).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool json_output;
bool quiet;
static struct json json_writer;
struct json *jw = &json_writer;

void p_err(const char *fmt, ...)
{
	char msg[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (json_output) {
		struct json j = { .f = stdout };

		json_begin_object(&j, NULL);
		json_str(&j, "error", msg);
		json_end_object(&j);
	} else {
		fprintf(stderr, "xk: error: %s\n", msg);
	}
}

int p_lib_err(const char *what, int err)
{
	p_err("%s: %s", what, xk_last_error()[0] && err ? xk_last_error()
							 : strerror(-err));
	return XK_EXIT_FAIL;
}

int p_usage(const char *topic, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p_err("%s (see 'xk help %s')", msg, topic);
	return XK_EXIT_USAGE;
}

int cmd_select(const struct cmd *cmds, int argc, char **argv,
	       const char *topic)
{
	if (argc < 1)
		return p_usage(topic, "'xk %s' needs a command", topic);
	for (const struct cmd *c = cmds; c->name; c++)
		if (!strcmp(argv[0], c->name))
			return c->fn(argc, argv);
	return p_usage(topic, "unknown command '%s %s'", topic, argv[0]);
}

static int print_level(enum xk_print_level level, const char *fmt, va_list ap)
{
	if (level == XK_DEBUG && !getenv("XK_DEBUG"))
		return 0;
	if (quiet && level != XK_WARN)
		return 0;
	fputs("xk: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

static int do_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (json_output) {
		json_begin_object(jw, NULL);
		json_str(jw, "version", XK_VERSION);
		json_end_object(jw);
	} else {
		printf("xk %s\n", XK_VERSION);
	}
	return 0;
}

static const struct cmd objects[] = {
	{ "kernel", do_kernel },
	{ "vm", do_vm },
	{ "build", do_build_cmd },
	{ "gen", do_gen_cmd },
	{ "load", do_load_cmd },
	{ "set", do_set_cmd },
	{ "unload", do_unload_cmd },
	{ "status", do_status_cmd },
	{ "help", do_help },
	{ "version", do_version },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	json_writer.f = stdout;
	xk_set_print(print_level);
	while ((c = getopt_long(argc, argv, "+jqhV", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json_output = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			return print_help("") ? XK_EXIT_FAIL : 0;
		case 'V':
			return do_version(0, NULL);
		default:
			return p_usage("", "unknown option");
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		print_help("");
		return XK_EXIT_USAGE;
	}
	return cmd_select(objects, argc, argv, "");
}
