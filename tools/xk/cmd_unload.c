// SPDX-License-Identifier: GPL-2.0
/* xk unload: a constant's probes removed, or every constant's (--all). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "xk/runtime.h"

/*
 * The policies driving name (NULL: every policy): each is detached first,
 * then all its constants unloaded. *nr counts those constants.
 */
static int unload_policies(int fd, const char *name, int *nr, double *detach_s)
{
	struct xk_ioc_status *st = calloc(1, sizeof(*st));
	char ids[XK_TX_MAX * 4][XK_NAME_MAX];
	int nr_ids = 0, err = 0;

	*nr = 0;
	if (!st)
		return -ENOMEM;
	for (unsigned int i = 0; !xk_rt_status(fd, i, st); i++) {
		bool seen = false;

		if (!st->policy[0] || (name && strcmp(name, st->name)))
			continue;
		for (int k = 0; k < nr_ids; k++)
			seen = seen || !strcmp(ids[k], st->policy);
		if (!seen && nr_ids < (int)ARRAY_SIZE(ids))
			snprintf(ids[nr_ids++], sizeof(ids[0]), "%s", st->policy);
	}
	free(st);
	for (int k = 0; k < nr_ids && !err; k++) {
		double t0 = xk_now();
		int n = 0;

		err = xk_policy_unload(fd, ids[k], &n);
		*detach_s += xk_now() - t0;
		*nr += n;
		if (!err && !json_output && !quiet)
			printf("policy %s detached\n", ids[k]);
	}
	return err;
}

struct unload_args {
	bool all;
};

static int do_unload(void *args, int argc, char **argv)
{
	const struct unload_args *a = args;
	const char *name = a->all ? NULL : argv[0];
	int fd, err, nr = 0, n = 0;
	double detach_s = 0;

	if (a->all == (argc > 0) || argc > 1)
		return p_usage("unload", "name one constant, or --all");
	fd = xk_rt_open();
	if (fd < 0 && !(a->all && fd == -ENOENT))	/* no module: none loaded */
		return p_lib_err("unload", fd);
	if (fd < 0)
		err = 0;
	else
		err = unload_policies(fd, name, &nr, &detach_s);
	if (!err && fd >= 0 && (a->all || !nr))
		err = xk_rt_unload(fd, name, &n);
	nr += n;
	if (a->all && err == -ENOENT)
		err = 0;
	if (fd >= 0)
		close(fd);
	if (err)
		return p_lib_err("unload", err);
	if (json_output) {
		json_begin_object(jw, NULL);
		json_int(jw, "unloaded", nr);
		json_double(jw, "policy_detach_ms", detach_s * 1e3);
		json_end_object(jw);
	} else {
		printf("unloaded %d constant%s\n", nr, nr == 1 ? "" : "s");
	}
	return 0;
}

static struct unload_args unload_args;
static const struct cli_opt unload_opts[] = {
	{ "all", 'a', CLI_FLAG, offsetof(struct unload_args, all) },
	{ NULL },
};

const struct cli_cmd cmd_unload = {
	"unload", do_unload, unload_opts, &unload_args, -1,
};
