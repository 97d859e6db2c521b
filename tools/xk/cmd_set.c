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

/*
 * A loaded constant whose per-value spans lack value (the module said
 * -ENOKEY): the table gets the point (built if needed) and the module
 * with it. 0, or the error reported.
 */
int prepare_loaded(const char *name, const struct load_args *a,
		   long long value, int fd)
{
	char path[XK_PATH_MAX + 64];
	struct xk_scope t;
	int err = table_load(name, a->catalog, &t, path, sizeof(path));

	if (err)
		return err;
	err = table_prepare_value(&t, path, a->catalog, value, fd, a->no_build);
	xk_scope_free(&t);
	return err;
}

bool is_loaded(const char *name, struct xk_ioc_status *st)
{
	int fd = xk_rt_open();
	bool loaded = false;

	for (unsigned int k = 0; fd >= 0 && !loaded && !xk_rt_status(fd, k, st); k++)
		loaded = !strcmp(st->name, name);
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

/* Loads it[i] at its compiled-in value unless it is loaded; checks it. */
static int prepare_item(const struct load_args *a, struct tx_item *it,
			bool keep_going, struct xk_ioc_status *st)
{
	struct load_args la = { .catalog = a->catalog, .timeout_ms = a->timeout_ms,
				.partial = a->partial, .silent = true };
	int err;

	it->why[0] = '\0';
	if (!is_loaded(it->name, st)) {
		struct err_capture prev = { 0 };

		if (keep_going)
			prev = p_err_capture(it->why, sizeof(it->why));
		err = load_table(it->name, &la);
		if (keep_going)
			p_err_capture(prev.buf, prev.size);
		if (err) {
			if (keep_going && !it->why[0])
				snprintf(it->why, sizeof(it->why), "cannot be loaded");
			return XK_EXIT_FAIL;
		}
		it->loaded = true;
		if (!keep_going || !is_loaded(it->name, st))
			return 0;
	}
	if (!keep_going)
		return 0;
	if (st->policy[0])
		snprintf(it->why, sizeof(it->why), "its values are chosen by "
			 "policy %s (xk unload %s first)", st->policy, it->name);
	else if (it->value < st->min || it->value > st->max)
		snprintf(it->why, sizeof(it->why), "value %lld is out of its "
			 "bounds [%lld, %lld]", it->value, st->min, st->max);
	return it->why[0] ? XK_EXIT_FAIL : 0;
}

int set_transaction(const struct load_args *a, struct tx_item *it, int n,
		    bool keep_going, struct xk_rt_result *r)
{
	const char *names[XK_TX_MAX];
	long long values[XK_TX_MAX];
	struct xk_ioc_status *st;
	int fd, err = 0, nr = 0;

	if (n > XK_TX_MAX) {
		p_err("at most %d constants in one transaction, not %d",
		      XK_TX_MAX, n);
		return XK_EXIT_FAIL;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return XK_EXIT_FAIL;
	for (int i = 0; i < n && !err; i++) {
		it[i].loaded = false;
		if (prepare_item(a, &it[i], keep_going, st) && !keep_going)
			err = XK_EXIT_FAIL;
		else if (!it[i].why[0]) {
			names[nr] = it[i].name;
			values[nr++] = it[i].value;
		}
	}
	free(st);
	memset(r, 0, sizeof(*r));
	if (err || !nr)
		goto undo;
	fd = open_runtime();
	if (fd < 0) {
		err = XK_EXIT_FAIL;
		goto undo;
	}
	err = xk_rt_set_many(fd, nr, names, values, a->mode, a->timeout_ms, r);
	/* a value not prepared for a per-value span: built, handed, again */
	if (err == -ENOKEY) {
		bool prepared = true;

		for (int i = 0; i < nr && prepared; i++)
			prepared = !prepare_loaded(names[i], a, values[i], fd);
		if (!prepared) {	/* reported */
			close(fd);
			err = XK_EXIT_FAIL;
			goto undo;
		}
		err = xk_rt_set_many(fd, nr, names, values, a->mode,
				     a->timeout_ms, r);
	}
	close(fd);
	if (err)
		err = p_lib_err("set", err);
undo:
	/* what this transaction loaded and did not switch goes again */
	fd = xk_rt_open();
	for (int i = 0; i < n && fd >= 0; i++)
		if (it[i].loaded && (err || it[i].why[0]))
			xk_rt_unload(fd, it[i].name, &nr);
	if (fd >= 0)
		close(fd);
	return err;
}

/* set --settle A=1 B=2: each settled once all are in force */
static int settle_each(int n, const struct tx_item *it)
{
	struct xk_rt_settle_result sr;
	int fd = xk_rt_open(), err = 0;

	if (fd < 0)
		return p_lib_err("settle", fd);
	for (int i = 0; i < n && !err; i++) {
		err = xk_rt_settle(fd, it[i].name, false, &sr);
		if (!err && !json_output)
			print_settled(it[i].name, it[i].value, &sr);
	}
	close(fd);
	return err ? p_lib_err("settle", err) : 0;
}

/* NAME=VALUE...: one transaction */
static int set_many(const struct load_args *a, int n, char **args)
{
	char names[XK_TX_MAX][XK_NAME_MAX];
	struct tx_item it[XK_TX_MAX];
	struct xk_rt_result r;

	if (n > XK_TX_MAX)
		return p_usage("set", "at most %d constants in one transaction",
			       XK_TX_MAX);
	for (int i = 0; i < n; i++) {
		if (parse_assignment(args[i], names[i], sizeof(names[i]),
				     &it[i].value))
			return XK_EXIT_USAGE;
		it[i].name = names[i];
	}
	if (set_transaction(a, it, n, false, &r))
		return XK_EXIT_FAIL;
	report_transaction(n, r.mode, &r);
	return a->settle ? settle_each(n, it) : 0;
}

/*
 * The report of a set that succeeded on fd (closed here), settled first
 * when --settle asks: a settle that fails leaves the value set, probed,
 * and says so (exit status 1).
 */
static int settle_after(int fd, const struct load_args *a, const char *name,
			long long from, long long to,
			const struct xk_rt_result *r)
{
	struct xk_rt_settle_result sr;
	int err = 0;

	if (a->settle)
		err = xk_rt_settle(fd, name, false, &sr);
	close(fd);
	report_change("set", name, from, to, r, r->mode,
		      a->settle && !err ? &sr : NULL);
	return err ? p_lib_err("settle", err) : 0;
}

/*
 * The module refused a loaded constant's value as out of bounds: its
 * message, with the reason name's table gives for its bounds when it
 * gives one (a frame the constant sizes: "bounds: ..." note). The
 * module's message is kept before the table is read (which may set
 * another error).
 */
static int p_bounds_err(const char *name, const struct load_args *a, int err)
{
	char msg[XK_ERROR_MAX + 8], path[XK_PATH_MAX + 64];
	const char *why = "";
	struct xk_scope t;
	bool read;

	snprintf(msg, sizeof(msg), "%s", xk_last_error()[0] ? xk_last_error() :
		 strerror(-err));
	read = !table_load(name, a->catalog, &t, path, sizeof(path));
	if (read)
		why = xk_scope_bounds_why(&t);
	p_err("set: %s%s%s", msg, why[0] ? ": " : "", why);
	if (read)
		xk_scope_free(&t);
	return XK_EXIT_FAIL;
}

static int do_set(void *args, int argc, char **argv)
{
	struct load_args *a = args;
	struct xk_rt_settle_result sr;
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
		if (err == -ENOKEY) {
			err = prepare_loaded(name, a, value, fd);
			if (err) {
				close(fd);
				return XK_EXIT_FAIL;
			}
			err = xk_rt_set(fd, name, value, a->mode, a->timeout_ms, &r);
		}
		if (!err)
			return settle_after(fd, a, name, r.old_value, value, &r);
		close(fd);
		if (err == -ERANGE)
			return p_bounds_err(name, a, err);
		if (err != -ENOENT)
			return p_lib_err("set", err);
	}
	/* not loaded yet: analyse if needed, then load with the value */
	a->value.n = value;
	a->value.given = true;
	err = load_table(name, a);
	if (err || !a->settle)
		return err;
	fd = xk_rt_open();
	if (fd < 0)
		return p_lib_err("settle", fd);
	err = xk_rt_settle(fd, name, false, &sr);
	close(fd);
	if (err)
		return p_lib_err("settle", err);
	if (json_output)
		json_begin_object(jw, NULL), json_str(jw, "constant", name),
		json_settle_fields(&sr), json_end_object(jw);
	else
		print_settled(name, value, &sr);
	return 0;
}

static struct load_args set_args = { .timeout_ms = 1000 };

const struct cli_cmd cmd_set = { "set", do_set, set_opts, &set_args, -1 };
