// SPDX-License-Identifier: GPL-2.0
/* xk load | set | unload | status: the runtime half. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli.h"
#include "xk/runtime.h"
#include "xk/scope.h"

struct load_args {
	const char *catalog;
	long long value;
	bool has_value;
	int mode;
	unsigned int timeout_ms;
	bool all;
	const char *policy;		/* load: a BPF object */
	const char *params[32];		/* load --param NAME=VALUE */
	int nr_params;
};

static int parse_mode(const char *topic, const char *s, int *mode)
{
	if (!strcmp(s, "immediate"))
		*mode = XK_MODE_IMMEDIATE;
	else if (!strcmp(s, "global"))
		*mode = XK_MODE_GLOBAL;
	else if (!strcmp(s, "per-task"))
		*mode = XK_MODE_PER_TASK;
	else
		return p_usage(topic, "--mode is immediate, global or per-task, "
				      "not '%s'", s);
	return 0;
}

static const char *mode_name(int mode)
{
	return mode == XK_MODE_GLOBAL ? "global" :
	       mode == XK_MODE_PER_TASK ? "per-task" : "immediate";
}

static int parse_value(const char *topic, const char *s, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 0);
	if (errno || end == s || *end)
		return p_usage(topic, "'%s' is not a number", s);
	return 0;
}

static int parse_load_args(const char *topic, int argc, char **argv,
			   struct load_args *a)
{
	static const struct option opts[] = {
		{ "value", required_argument, NULL, 'v' },
		{ "mode", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		{ "catalog", required_argument, NULL, 'c' },
		{ "all", no_argument, NULL, 'a' },
		{ "policy", required_argument, NULL, 'p' },
		{ "param", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	a->timeout_ms = 1000;
	optind = 0;
	while ((c = getopt_long(argc, argv, "v:m:t:c:ap:P:", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			if (parse_value(topic, optarg, &a->value))
				return -1;
			a->has_value = true;
			break;
		case 'm':
			if (parse_mode(topic, optarg, &a->mode))
				return -1;
			break;
		case 't': {
			long long t;

			if (parse_value(topic, optarg, &t))
				return -1;
			if (t < 1 || t > 600000) {
				p_usage(topic, "--timeout is 1 to 600000 ms");
				return -1;
			}
			a->timeout_ms = t;
			break;
		}
		case 'c':
			a->catalog = optarg;
			break;
		case 'a':
			a->all = true;
			break;
		case 'p':
			a->policy = optarg;
			break;
		case 'P':
			if (a->nr_params == (int)(sizeof(a->params) / sizeof(a->params[0]))) {
				p_usage(topic, "too many --param");
				return -1;
			}
			a->params[a->nr_params++] = optarg;
			break;
		default:
			p_usage(topic, "bad option");
			return -1;
		}
	}
	return optind;
}

/* /dev/xkernel, loading the module built beside xk if it is not there. */
static int open_runtime(void)
{
	char exe[PATH_MAX], ko[PATH_MAX + 32];
	ssize_t n;
	int fd = xk_rt_open();

	if (fd != -ENOENT)
		return fd;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(ko, sizeof(ko), "%s/../kmod/xkernel.ko", exe);
		if (!access(ko, R_OK)) {
			char cmd[PATH_MAX + 64];
			FILE *p;

			snprintf(cmd, sizeof(cmd), "insmod '%s' 2>&1", ko);
			p = popen(cmd, "r");
			if (p && pclose(p) == 0)
				return xk_rt_open();
		}
	}
	return fd;
}

/* The scope table: a path, or NAME's table in the cache (made if missing). */
static int find_table(const char *arg, const char *catalog, struct xk_scope *t,
		      char *path, size_t size)
{
	struct xk_kernel k;
	int err;

	if (strchr(arg, '/') || strstr(arg, ".scope")) {
		snprintf(path, size, "%s", arg);
	} else {
		if (kernel_for_command(NULL, &k))
			return -ENOENT;
		snprintf(path, size, "%s/scopes/%s.scope", k.dir, arg);
		if (access(path, R_OK)) {
			struct xk_build_result *b = calloc(1, sizeof(*b));
			struct xk_constant c;
			struct xk_scope fresh;
			char dir[XK_PATH_MAX + 16];

			if (!b)
				return -ENOMEM;
			err = xk_catalog_find(catalog_path(catalog), arg, &c);
			err = err ?: xk_build(&k, &c, NULL, b);
			err = err ?: xk_gen(&k, &c, b, &fresh);
			free(b);
			if (err)
				return p_lib_err("analysis", err), err;
			snprintf(dir, sizeof(dir), "%s/scopes", k.dir);
			mkdir(dir, 0755);
			err = xk_scope_write(&fresh, path);
			xk_scope_free(&fresh);
			if (err)
				return p_lib_err("analysis", err), err;
		}
	}
	err = xk_scope_read(path, t);
	if (err)
		p_lib_err("scope table", err);
	return err;
}

static int check_release(const struct xk_scope *t)
{
	struct utsname u;

	uname(&u);
	if (strcmp(u.release, t->release)) {
		p_err("the scope table of %s was made for kernel %s; this kernel "
		      "is %s", t->constant, t->release, u.release);
		return -ESTALE;
	}
	return 0;
}

static void report(const char *verb, const char *name, long long from,
		   long long to, const struct xk_rt_result *r, int mode)
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
		json_end_object(jw);
		return;
	}
	printf("%s %s: %lld -> %lld (%s", verb, name, from, to,
	       mode_name(mode));
	if (r->nr_spans)
		printf(", %d span%s, load %.2f ms", r->nr_spans,
		       r->nr_spans == 1 ? "" : "s", r->load_ns / 1e6);
	printf(", transition %.2f ms)\n", r->transition_ns / 1e6);
}

static int load_table(const char *arg, struct load_args *a)
{
	struct xk_rt_result r;
	struct xk_scope t;
	char path[XK_PATH_MAX + 64];
	long long value;
	int fd, err;

	if (find_table(arg, a->catalog, &t, path, sizeof(path)))
		return XK_EXIT_FAIL;
	if (check_release(&t)) {
		xk_scope_free(&t);
		return XK_EXIT_FAIL;
	}
	fd = open_runtime();
	if (fd < 0) {
		xk_scope_free(&t);
		return p_lib_err("load", fd);
	}
	/* without --value, the probes are armed at the compiled-in value */
	value = a->has_value ? a->value : t.def;
	err = xk_rt_load(fd, &t, value, a->mode, a->timeout_ms, &r);
	close(fd);
	if (!err)
		report("load", t.constant, t.def, value, &r, a->mode);
	xk_scope_free(&t);
	return err ? p_lib_err("load", err) : 0;
}

/* xk load NAME... --policy OBJ: the tables, then the policy driving them. */
static int load_policy(int nr, char **names, struct load_args *a)
{
	XK_OPTS(xk_policy_opts, po, .params = a->params, .nr_params = a->nr_params);
	struct xk_policy_result r;
	struct xk_scope tables[XK_TX_MAX];
	char path[XK_PATH_MAX + 64];
	int n = 0, fd = -1, err = 0;

	if (nr > XK_TX_MAX)
		return p_usage("load", "a policy drives at most %d constants", XK_TX_MAX);
	if (a->has_value)
		return p_usage("load", "--value and --policy: the policy chooses the values");
	/* privileges first: nothing else matters without them */
	fd = open_runtime();
	if (fd < 0)
		return p_lib_err("load", fd);
	for (; n < nr && !err; n++) {
		err = find_table(names[n], a->catalog, &tables[n], path, sizeof(path));
		if (!err && (err = check_release(&tables[n])))
			xk_scope_free(&tables[n]);
		if (err)
			break;
	}
	if (!err) {
		err = xk_policy_load(fd, a->policy, tables, nr, &po, &r);
		if (err)
			err = p_lib_err("load", err);
	}
	if (!err && json_output) {
		json_begin_object(jw, NULL);
		json_str(jw, "policy", r.id);
		json_begin_array(jw, "constants");
		for (int i = 0; i < nr; i++)
			json_str(jw, NULL, tables[i].constant);
		json_end_array(jw);
		json_int(jw, "programs", r.nr_programs);
		json_int(jw, "spans", r.nr_spans);
		json_double(jw, "load_ms", r.load_ns / 1e6);
		json_double(jw, "open_ms", r.open_s * 1e3);
		json_double(jw, "verify_ms", r.verify_s * 1e3);
		json_double(jw, "tables_ms", r.tables_s * 1e3);
		json_double(jw, "attach_ms", r.attach_s * 1e3);
		json_double(jw, "pin_ms", r.pin_s * 1e3);
		json_end_object(jw);
	} else if (!err) {
		printf("policy %s: %d program%s attached for", r.id, r.nr_programs,
		       r.nr_programs == 1 ? "" : "s");
		for (int i = 0; i < nr; i++)
			printf(" %s", tables[i].constant);
		printf(" (%d span%s validated, %.2f ms)\n", r.nr_spans,
		       r.nr_spans == 1 ? "" : "s", r.load_ns / 1e6);
	}
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < n; i++)
		xk_scope_free(&tables[i]);
	return err;
}

static int do_load(int argc, char **argv)
{
	struct load_args a = { 0 };
	int first = parse_load_args("load", argc, argv, &a);

	if (first < 0)
		return XK_EXIT_USAGE;
	if (a.policy && first < argc)
		return load_policy(argc - first, argv + first, &a);
	if (a.nr_params)
		return p_usage("load", "--param sets a parameter of a --policy");
	if (first != argc - 1)
		return p_usage("load", "name one scope table or constant (several "
				       "with --policy)");
	return load_table(argv[first], &a);
}

/* Several NAME=VALUE: one transaction; constants not loaded are loaded
 * first at their compiled-in value, so nothing changes until it commits. */
static int set_many(struct load_args *a, int n, char **args)
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
		char *eq = strchr(args[i], '=');

		if (!eq)
			return p_usage("set", "'%s' is not NAME=VALUE", args[i]);
		snprintf(names[i], sizeof(names[i]), "%.*s", (int)(eq - args[i]),
			 args[i]);
		name_ptr[i] = names[i];
		if (parse_value("set", eq + 1, &values[i]))
			return XK_EXIT_USAGE;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return XK_EXIT_FAIL;
	for (int i = 0; i < n; i++) {
		bool loaded = false;

		fd = xk_rt_open();
		for (unsigned int k = 0; fd >= 0 && !xk_rt_status(fd, k, st); k++)
			loaded = loaded || !strcmp(st->name, names[i]);
		if (fd >= 0)
			close(fd);
		if (!loaded) {
			struct load_args la = { .catalog = a->catalog,
						.timeout_ms = a->timeout_ms };

			if (load_table(names[i], &la)) {
				free(st);
				return XK_EXIT_FAIL;
			}
		}
	}
	free(st);
	fd = open_runtime();
	if (fd < 0)
		return p_lib_err("set", fd);
	err = xk_rt_set_many(fd, n, name_ptr, values, a->mode, a->timeout_ms, &r);
	close(fd);
	if (err)
		return p_lib_err("set", err);
	if (json_output) {
		json_begin_object(jw, NULL);
		json_int(jw, "constants", n);
		json_str(jw, "mode", mode_name(a->mode));
		json_double(jw, "transition_ms", r.transition_ns / 1e6);
		json_end_object(jw);
	} else {
		printf("set %d constants in one transaction (%s, transition %.2f ms)\n",
		       n, mode_name(a->mode),
		       r.transition_ns / 1e6);
	}
	return 0;
}

static int do_set(int argc, char **argv)
{
	struct load_args a = { 0 };
	struct xk_rt_result r;
	char name[XK_NAME_MAX], *eq;
	long long value;
	int first = parse_load_args("set", argc, argv, &a), fd, err;

	if (first < 0)
		return XK_EXIT_USAGE;
	if (argc - first > 1)
		return set_many(&a, argc - first, argv + first);
	if (first != argc - 1 || !(eq = strchr(argv[first], '=')))
		return p_usage("set", "give NAME=VALUE");
	snprintf(name, sizeof(name), "%.*s", (int)(eq - argv[first]), argv[first]);
	if (parse_value("set", eq + 1, &value))
		return XK_EXIT_USAGE;
	fd = open_runtime();
	if (fd >= 0) {
		err = xk_rt_set(fd, name, value, a.mode, a.timeout_ms, &r);
		close(fd);
		if (!err) {
			report("set", name, r.old_value, value, &r, a.mode);
			return 0;
		}
		if (err != -ENOENT)
			return p_lib_err("set", err);
	}
	/* not loaded yet: analyse if needed, then load with the value */
	a.value = value;
	a.has_value = true;
	return load_table(name, &a);
}

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
		if (!seen && nr_ids < (int)(sizeof(ids) / sizeof(ids[0])))
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

static int do_unload(int argc, char **argv)
{
	struct load_args a = { 0 };
	int first = parse_load_args("unload", argc, argv, &a), fd, err, nr = 0, n = 0;
	double detach_s = 0;

	if (first < 0)
		return XK_EXIT_USAGE;
	if (a.all == (first < argc))
		return p_usage("unload", "name one constant, or --all");
	fd = xk_rt_open();
	if (fd < 0)
		return p_lib_err("unload", fd);
	err = unload_policies(fd, a.all ? NULL : argv[first], &nr, &detach_s);
	if (!err && (a.all || !nr))
		err = xk_rt_unload(fd, a.all ? NULL : argv[first], &n);
	nr += n;
	if (a.all && err == -ENOENT)
		err = 0;
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

/* A policy-driven constant's figures, per context. */
static void print_policy(const struct xk_ioc_status *st)
{
	if (json_output) {
		json_int(jw, "choices", st->pol_sets);
		json_int(jw, "clamped", st->pol_clamped);
		json_int(jw, "pinned", st->pol_pinned);
		json_int(jw, "writes", st->pol_writes);
		json_int(jw, "refused", st->pol_refused);
		json_int(jw, "exits", st->pol_exits);
		json_int(jw, "other_contexts", st->pol_other_contexts);
		json_int(jw, "refused_outside", st->refused_outside);
		json_begin_array(jw, "contexts");
		for (unsigned int i = 0; i < st->nr_contexts && i < XK_MAX_CONTEXTS; i++) {
			json_begin_object(jw, NULL);
			json_str(jw, "label", st->contexts[i].label);
			json_int(jw, "value", st->contexts[i].value);
			json_int(jw, "choices", st->contexts[i].hits);
			json_int(jw, "clamped", st->contexts[i].clamped);
			json_end_object(jw);
		}
		json_end_array(jw);
		return;
	}
	printf("  policy %s: %llu choices (%llu clamped, %llu pinned), %llu writes, "
	       "%llu refused, %llu exits\n", st->policy,
	       (unsigned long long)st->pol_sets, (unsigned long long)st->pol_clamped,
	       (unsigned long long)st->pol_pinned, (unsigned long long)st->pol_writes,
	       (unsigned long long)st->pol_refused, (unsigned long long)st->pol_exits);
	for (unsigned int i = 0; i < st->nr_contexts && i < XK_MAX_CONTEXTS; i++)
		printf("    %-16s %lld (%llu choices, %llu clamped)\n",
		       st->contexts[i].label[0] ? st->contexts[i].label : "(unnamed)",
		       (long long)st->contexts[i].value,
		       (unsigned long long)st->contexts[i].hits,
		       (unsigned long long)st->contexts[i].clamped);
	if (st->pol_other_contexts)
		printf("    %-16s (%llu choices)\n", "(others)",
		       (unsigned long long)st->pol_other_contexts);
}

static int do_status(int argc, char **argv)
{
	struct xk_ioc_status *st = calloc(1, sizeof(*st));
	unsigned long long refused_outside = 0;
	int fd, err = 0;

	(void)argc;
	(void)argv;
	if (!st)
		return XK_EXIT_FAIL;
	fd = xk_rt_open();
	if (fd < 0) {
		free(st);
		return p_lib_err("status", fd);
	}
	if (json_output)
		json_begin_array(jw, NULL);
	for (unsigned int i = 0; !(err = xk_rt_status(fd, i, st)); i++) {
		if (json_output) {
			json_begin_object(jw, NULL);
			json_str(jw, "constant", st->name);
			json_int(jw, "value", st->value);
			json_int(jw, "default", st->def);
			json_int(jw, "min", st->min);
			json_int(jw, "max", st->max);
			json_double(jw, "last_transition_ms", st->last_transition_ns / 1e6);
			if (st->policy[0])
				json_str(jw, "policy", st->policy);
			json_begin_array(jw, "probes");
		} else if (st->policy[0]) {
			printf("%s: values chosen by policy %s (compiled-in %lld, bounds "
			       "[%lld, %lld])\n", st->name, st->policy, st->def,
			       st->min, st->max);
		} else {
			printf("%s = %lld (compiled-in %lld, bounds [%lld, %lld]), last "
			       "transition %.3f ms\n", st->name, st->value, st->def,
			       st->min, st->max, st->last_transition_ns / 1e6);
		}
		for (unsigned int s = 0; s < st->nr_spans && s < XK_MAX_SPANS; s++) {
			const struct xk_ioc_span_status *p = &st->spans[s];
			int opt = xk_rt_probe_optimized(p->addr);
			const char *state = opt == 1 ? "optimized" : opt == 0 ? "int3" : "?";

			if (json_output) {
				json_begin_object(jw, NULL);
				json_str(jw, "function", p->func);
				json_int(jw, "offset", p->probe);
				json_int(jw, "hits", p->hits);
				json_str(jw, "probe", state);
				json_end_object(jw);
			} else {
				printf("  %s+%#llx: %llu %s, %s\n", p->func,
				       (unsigned long long)p->probe,
				       (unsigned long long)p->hits,
				       st->policy[0] ? "policy writes" : "rewrites", state);
			}
		}
		if (json_output)
			json_end_array(jw);
		if (st->policy[0])
			print_policy(st);
		if (json_output)
			json_end_object(jw);
		refused_outside = st->refused_outside;
	}
	if (json_output)
		json_end_array(jw);
	else if (refused_outside)
		printf("kfunc calls refused away from a policy-driven span: %llu\n",
		       refused_outside);
	close(fd);
	free(st);
	return err == -ENOENT ? 0 : p_lib_err("status", err);
}

int do_load_cmd(int argc, char **argv) { return do_load(argc, argv); }
int do_set_cmd(int argc, char **argv) { return do_set(argc, argv); }
int do_unload_cmd(int argc, char **argv) { return do_unload(argc, argv); }
int do_status_cmd(int argc, char **argv) { return do_status(argc, argv); }
