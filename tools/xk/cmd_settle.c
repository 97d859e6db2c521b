// SPDX-License-Identifier: GPL-2.0
/* xk settle: a constant's value written into the kernel text, probes gone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "xk/runtime.h"

void json_settle_fields(const struct xk_rt_settle_result *r)
{
	json_int(jw, "settled_spans", r->nr_settled);
	json_int(jw, "probed_spans", r->nr_kept);
	json_double(jw, "settle_ms", r->settle_ns / 1e6);
}

void print_settled(const char *name, long long value,
		   const struct xk_rt_settle_result *r)
{
	if (quiet)
		return;
	printf("settle %s = %lld: %u span%s in the text, %u keep%s a probe "
	       "(%.2f ms)\n", name, value, r->nr_settled,
	       r->nr_settled == 1 ? "" : "s", r->nr_kept,
	       r->nr_kept == 1 ? "s" : "", r->settle_ns / 1e6);
}

/* What the module says of a loaded constant (NULL: not loaded). */
static struct xk_ioc_status *find_status(int fd, const char *name)
{
	struct xk_ioc_status *st = calloc(1, sizeof(*st));

	for (unsigned int i = 0; st && !xk_rt_status(fd, i, st); i++)
		if (!strcmp(st->name, name))
			return st;
	free(st);
	return NULL;
}

/* The settle of one constant, with each span that keeps a probe and why. */
static void print_settle(int fd, const char *name,
			 const struct xk_rt_settle_result *r)
{
	struct xk_ioc_status *st = find_status(fd, name);

	print_settled(name, st ? st->value : 0, r);
	for (unsigned int s = 0; st && s < st->nr_spans && s < XK_MAX_SPANS; s++)
		if (st->spans[s].variable)
			printf("  %s+%#llx: a variable (no probe, nothing to settle)\n",
			       st->spans[s].func,
			       (unsigned long long)st->spans[s].probe);
		else if (st->spans[s].settle > XK_SETTLE_DONE)
			printf("  %s+%#llx keeps its probe: %s\n", st->spans[s].func,
			       (unsigned long long)st->spans[s].probe,
			       xk_settle_state_name(st->spans[s].settle));
	free(st);
}

struct settle_args {
	bool undo;
};

static int do_settle(void *args, int argc, char **argv)
{
	const struct settle_args *a = args;
	struct xk_rt_settle_result r;
	int fd, err = 0;

	if (argc < 1)
		return p_usage("settle", "name the constants to settle");
	fd = xk_rt_open();
	if (fd < 0)
		return p_lib_err("settle", fd);
	if (json_output)
		json_begin_array(jw, NULL);
	for (int i = 0; i < argc && !err; i++) {
		err = xk_rt_settle(fd, argv[i], a->undo, &r);
		if (err)
			break;
		if (json_output) {
			json_begin_object(jw, NULL);
			json_str(jw, "constant", argv[i]);
			json_bool(jw, "undone", a->undo);
			json_settle_fields(&r);
			json_end_object(jw);
		} else if (a->undo && !quiet) {
			printf("unsettle %s: compiled-in bytes and probes back "
			       "(%.2f ms)\n", argv[i], r.settle_ns / 1e6);
		} else if (!quiet) {
			print_settle(fd, argv[i], &r);
		}
	}
	if (json_output)
		json_end_array(jw);
	close(fd);
	return err ? p_lib_err(a->undo ? "unsettle" : "settle", err) : 0;
}

static struct settle_args settle_args;
static const struct cli_opt settle_opts[] = {
	{ "undo", 0, CLI_FLAG, offsetof(struct settle_args, undo) },
	{ NULL },
};

const struct cli_cmd cmd_settle = { "settle", do_settle, settle_opts,
				    &settle_args, -1 };
