// SPDX-License-Identifier: GPL-2.0
/* xk load: a scope table armed in the running kernel, or a policy driving
 * tables; and what xk set shares with it (options, the module, reports). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "xk/runtime.h"
#include "xk/scope.h"

/* indexed by enum xk_mode */
static const char *const mode_names[] = {
	"immediate", "global", "per-task", NULL,
};

const struct cli_opt load_opts[] = {
	{ "value", 'v', CLI_NUM, offsetof(struct load_args, value) },
	CLI_TRANSITION_OPTS(struct load_args, mode_names),
	{ "catalog", 'c', CLI_STR, offsetof(struct load_args, catalog) },
	{ "policy", 'p', CLI_STR, offsetof(struct load_args, policy) },
	{ "param", 'P', CLI_LIST, offsetof(struct load_args, params) },
	{ "no-build", 0, CLI_FLAG, offsetof(struct load_args, no_build) },
	{ NULL },
};

/* set: load's options (a constant not loaded yet is loaded) and --settle */
const struct cli_opt set_opts[] = {
	{ "value", 'v', CLI_NUM, offsetof(struct load_args, value) },
	CLI_TRANSITION_OPTS(struct load_args, mode_names),
	{ "catalog", 'c', CLI_STR, offsetof(struct load_args, catalog) },
	{ "settle", 0, CLI_FLAG, offsetof(struct load_args, settle) },
	{ "no-build", 0, CLI_FLAG, offsetof(struct load_args, no_build) },
	{ NULL },
};

const char *mode_name(int mode)
{
	return mode_names[mode];
}

/* kmod/xkernel.ko of the development tree whose build/xk runs. */
static bool dev_tree_module(char *ko, size_t size)
{
	char top[PATH_MAX];

	if (!dev_tree(top, sizeof(top)))
		return false;
	snprintf(ko, size, "%s/kmod/xkernel.ko", top);
	return !access(ko, R_OK);
}

/*
 * /dev/xkernel; when it is missing, the module is loaded as other tools
 * load theirs (modprobe xkernel: a packaged or DKMS-built module), and only
 * after that fails, in a development tree, from kmod/xkernel.ko beside
 * build/xk. The cause is reported here; returns the fd or -errno.
 */
int open_runtime(void)
{
	const char *modprobe[] = { "modprobe", "xkernel", NULL };
	char ko[PATH_MAX + 32], why[512], dev_why[512] = "";
	int fd = xk_rt_open();

	if (fd >= 0)
		return fd;
	if (fd != -ENOENT) {
		p_lib_err("xkernel", fd);
		return fd;
	}
	if (!cli_run(modprobe, why, sizeof(why)) && (fd = xk_rt_open()) >= 0)
		return fd;
	if (dev_tree_module(ko, sizeof(ko))) {
		const char *insmod[] = { "insmod", ko, NULL };

		if (!cli_run(insmod, dev_why, sizeof(dev_why)) &&
		    (fd = xk_rt_open()) >= 0)
			return fd;
	}
	if (fd != -ENOENT) {
		p_lib_err("xkernel", fd);
		return fd;
	}
	p_err("/dev/xkernel is missing and xkernel.ko could not be loaded: "
	      "modprobe xkernel: %s%s%s%s%s", why[0] ? why : "failed",
	      dev_why[0] ? "; insmod " : "", dev_why[0] ? ko : "",
	      dev_why[0] ? ": " : "", dev_why);
	return -ENOENT;
}

void report_change(const char *verb, const char *name, long long from,
		   long long to, const struct xk_rt_result *r, int mode,
		   const struct xk_rt_settle_result *settled)
{
	if (json_output) {
		json_begin_object(jw, NULL);
		json_str(jw, "constant", name);
		json_int(jw, "old_value", from);
		json_int(jw, "value", to);
		json_str(jw, "mode", mode_name(mode));
		if (r->nr_spans)
			json_int(jw, "spans", r->nr_spans);
		json_double(jw, "load_ms", r->load_ns / 1e6);
		json_double(jw, "transition_ms", r->transition_ns / 1e6);
		if (settled)
			json_settle_fields(settled);
		json_end_object(jw);
		return;
	}
	printf("%s %s: %lld -> %lld (%s", verb, name, from, to,
	       mode_name(mode));
	if (r->nr_spans)
		printf(", %d span%s, load %.2f ms", r->nr_spans,
		       r->nr_spans == 1 ? "" : "s", r->load_ns / 1e6);
	printf(", transition %.2f ms)\n", r->transition_ns / 1e6);
	if (settled)
		print_settled(name, to, settled);
}

int load_table(const char *arg, const struct load_args *a)
{
	struct xk_rt_result r;
	struct xk_scope t;
	char path[XK_PATH_MAX + 64];
	long long value;
	int fd, err;

	if (table_load(arg, a->catalog, &t, path, sizeof(path)))
		return XK_EXIT_FAIL;
	fd = open_runtime();
	if (fd < 0) {
		xk_scope_free(&t);
		return XK_EXIT_FAIL;
	}
	/* without --value, the probes are armed at the compiled-in value */
	value = a->value.given ? a->value.n : t.def;
	if (!table_has_value(&t, value) &&
	    table_prepare_value(&t, path, a->catalog, value, -1, a->no_build)) {
		close(fd);
		xk_scope_free(&t);
		return XK_EXIT_FAIL;
	}
	{
		XK_OPTS(xk_rt_load_opts, o, .mode = a->mode,
			.timeout_ms = a->timeout_ms, .partial = a->partial);

		err = xk_rt_load(fd, &t, value, &o, &r);
	}
	close(fd);
	if (!err && !a->silent)
		report_change("load", t.constant, t.def, value, &r, r.mode,
			      NULL);
	xk_scope_free(&t);
	return err ? p_lib_err("load", err) : 0;
}

static void print_policy_loaded(const struct xk_policy_result *r,
				const struct xk_scope *tables, int nr)
{
	const struct { const char *key; double s; } phases[] = {
		{ "open_ms", r->open_s }, { "verify_ms", r->verify_s },
		{ "tables_ms", r->tables_s }, { "attach_ms", r->attach_s },
		{ "pin_ms", r->pin_s },
	};

	if (!json_output) {
		printf("policy %s: %d program%s attached for", r->id, r->nr_programs,
		       r->nr_programs == 1 ? "" : "s");
		for (int i = 0; i < nr; i++)
			printf(" %s", tables[i].constant);
		printf(" (%d span%s validated, %.2f ms)\n", r->nr_spans,
		       r->nr_spans == 1 ? "" : "s", r->load_ns / 1e6);
		return;
	}
	json_begin_object(jw, NULL);
	json_str(jw, "policy", r->id);
	json_begin_array(jw, "constants");
	for (int i = 0; i < nr; i++)
		json_str(jw, NULL, tables[i].constant);
	json_end_array(jw);
	json_int(jw, "programs", r->nr_programs);
	json_int(jw, "spans", r->nr_spans);
	json_double(jw, "load_ms", r->load_ns / 1e6);
	for (size_t i = 0; i < ARRAY_SIZE(phases); i++)
		json_double(jw, phases[i].key, phases[i].s * 1e3);
	json_end_object(jw);
}

/* xk load NAME... --policy OBJ: the tables, then the policy driving them. */
static int load_policy(int nr, char **names, const struct load_args *a)
{
	XK_OPTS(xk_policy_opts, po, .params = a->params.v,
		.nr_params = a->params.n, .partial = a->partial);
	struct xk_policy_result r;
	struct xk_scope tables[XK_TX_MAX];
	char path[XK_PATH_MAX + 64];
	int n = 0, fd = -1, err = 0;

	if (nr > XK_TX_MAX)
		return p_usage("load", "a policy drives at most %d constants", XK_TX_MAX);
	if (a->value.given)
		return p_usage("load", "--value and --policy: the policy chooses the values");
	/* privileges first: nothing else matters without them */
	fd = open_runtime();
	if (fd < 0)
		return XK_EXIT_FAIL;
	for (; n < nr && !err; n++) {
		err = table_load(names[n], a->catalog, &tables[n], path, sizeof(path));
		if (err)
			break;
	}
	if (!err) {
		err = xk_policy_load(fd, a->policy, tables, nr, &po, &r);
		if (err)
			err = p_lib_err("load", err);
	}
	if (!err)
		print_policy_loaded(&r, tables, nr);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < n; i++)
		xk_scope_free(&tables[i]);
	return err < 0 ? XK_EXIT_FAIL : err;
}

static int do_load(void *args, int argc, char **argv)
{
	const struct load_args *a = args;

	if (a->policy && argc > 0)
		return load_policy(argc, argv, a);
	if (a->params.n)
		return p_usage("load", "--param sets a parameter of a --policy");
	if (argc != 1)
		return p_usage("load", "name one scope table or constant (several "
				       "with --policy)");
	return load_table(argv[0], a);
}

static struct load_args load_args = { .timeout_ms = 1000 };

const struct cli_cmd cmd_load = { "load", do_load, load_opts, &load_args, -1 };
