// SPDX-License-Identifier: GPL-2.0
/* xk set: a constant's value changed live, several in one transaction. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "xk/runtime.h"

/* NAME=VALUE: 0, or a usage error reported */
static int parse_assignment(const char *arg, char *name, size_t size,
			    long long *value)
{
	const char *eq = strchr(arg, '=');

	if (!eq)
		return p_usage("set", "'%s' is not NAME=VALUE", arg);
	snprintf(name, size, "%.*s", (int)(eq - arg), arg);
	return cli_number("set", eq + 1, value);
}

/* Whether constant name is loaded. */
static bool is_loaded(const char *name, struct xk_ioc_status *st)
{
	int fd = xk_rt_open();
	bool loaded = false;

	for (unsigned int k = 0; fd >= 0 && !xk_rt_status(fd, k, st); k++)
		loaded = loaded || !strcmp(st->name, name);
	if (fd >= 0)
		close(fd);
	return loaded;
}

static void report_transaction(int n, int mode, const struct xk_rt_result *r)
{
	if (!json_output) {
		printf("set %d constants in one transaction (%s, transition %.2f ms)\n",
		       n, mode_name(mode), r->transition_ns / 1e6);
		return;
	}
	json_begin_object(jw, NULL);
	json_int(jw, "constants", n);
	json_str(jw, "mode", mode_name(mode));
	json_double(jw, "transition_ms", r->transition_ns / 1e6);
	json_end_object(jw);
}

/* Several NAME=VALUE: one transaction; constants not loaded are loaded
 * first at their compiled-in value, so nothing changes until it commits. */
static int set_many(const struct load_args *a, int n, char **args)
{
	char names[XK_TX_MAX][XK_NAME_MAX];
	const char *name_ptr[XK_TX_MAX];
	long long values[XK_TX_MAX];
	struct xk_rt_result r;
	struct xk_ioc_status *st;
	int fd, err;

	if (n > XK_TX_MAX)
		return p_usage("set", "at most %d constants in one transaction",
			       XK_TX_MAX);
	for (int i = 0; i < n; i++) {
		if (parse_assignment(args[i], names[i], sizeof(names[i]), &values[i]))
			return XK_EXIT_USAGE;
		name_ptr[i] = names[i];
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return XK_EXIT_FAIL;
	for (int i = 0; i < n; i++) {
		struct load_args la = { .catalog = a->catalog,
					.timeout_ms = a->timeout_ms };

		if (!is_loaded(names[i], st) && load_table(names[i], &la)) {
			free(st);
			return XK_EXIT_FAIL;
		}
	}
	free(st);
	fd = open_runtime();
	if (fd < 0)
		return XK_EXIT_FAIL;
	err = xk_rt_set_many(fd, n, name_ptr, values, a->mode, a->timeout_ms, &r);
	close(fd);
	if (err)
		return p_lib_err("set", err);
	report_transaction(n, a->mode, &r);
	return 0;
}

static int do_set(void *args, int argc, char **argv)
{
	struct load_args *a = args;
	struct xk_rt_result r;
	char name[XK_NAME_MAX];
	long long value;
	int fd, err;

	if (argc > 1)
		return set_many(a, argc, argv);
	if (argc != 1 || !strchr(argv[0], '='))
		return p_usage("set", "give NAME=VALUE");
	if (parse_assignment(argv[0], name, sizeof(name), &value))
		return XK_EXIT_USAGE;
	fd = xk_rt_open();	/* not there: nothing loaded yet */
	if (fd >= 0) {
		err = xk_rt_set(fd, name, value, a->mode, a->timeout_ms, &r);
		close(fd);
		if (!err) {
			report_change("set", name, r.old_value, value, &r, a->mode);
			return 0;
		}
		if (err != -ENOENT)
			return p_lib_err("set", err);
	}
	/* not loaded yet: analyse if needed, then load with the value */
	a->value.n = value;
	a->value.given = true;
	return load_table(name, a);
}

static struct load_args set_args = { .timeout_ms = 1000 };

const struct cli_cmd cmd_set = { "set", do_set, load_opts, &set_args, -1 };
