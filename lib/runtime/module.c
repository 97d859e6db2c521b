// SPDX-License-Identifier: GPL-2.0
/* libxk runtime: talking to xkernel.ko through /dev/xkernel. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"
#include "xk/runtime.h"
#include "xk/scope.h"

static int xk_rt_open_impl(void)
{
	int fd = open(XK_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == ENOENT || errno == ENXIO || errno == ENODEV)
		return xk_err(-ENOENT, "%s does not exist: xkernel.ko is not "
				       "loaded", XK_DEVICE);
	if (errno == EACCES || errno == EPERM)
		return xk_err(-EPERM, "opening %s needs CAP_SYS_ADMIN (run as "
				      "root)", XK_DEVICE);
	return xk_err(-errno, "cannot open %s: %s", XK_DEVICE, strerror(errno));
}

int xk_rt_open(void)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_rt_open_impl());
}

static int ioctl_err(const char *what, const char *error)
{
	int e = errno;

	if (error && error[0])
		return xk_err(-e, "%s", error);
	return xk_err(-e, "%s: %s", what, strerror(e));
}

/*
 * A function whose name the kernel has more than once (static functions
 * of several files): every copy's address, for the module to choose by
 * bytes. A name with more copies than the ABI carries is refused, not cut
 * short; a unique name the module resolves itself.
 */
static int add_function_copies(const struct xk_kallsyms *ks,
			       struct xk_ioc_span *d)
{
	const struct xk_ksym *first;
	size_t nr = xk_kallsyms_lookup(ks, d->func, &first), copies = 0;

	d->nr_cands = 0;
	for (size_t k = 0; k < nr; k++) {
		if (first[k].type != 't' && first[k].type != 'T')
			continue;	/* a variable of that name */
		if (copies < XK_MAX_CANDS)
			d->cands[copies] = first[k].addr;
		copies++;
	}
	if (copies > XK_MAX_CANDS)
		return xk_err(-E2BIG, "%s: the kernel has %zu functions of this "
				      "name, more than the %d a table may name",
			      d->func, copies, XK_MAX_CANDS);
	d->nr_cands = copies < 2 ? 0 : (__u32)copies;
	return 0;
}

/*
 * The addresses of a variable's object (xk_ioc_span.emulate ==
 * XK_EMULATE_DATA: "name", or "module:name" for a module's), for the
 * module to check: every data symbol of that name in vmlinux or that
 * module. None is an error naming the cause (a module not loaded).
 */
static int add_variable_addresses(const struct xk_kallsyms *ks,
				  struct xk_ioc_span *d)
{
	const char *colon = strchr(d->func, ':');
	const char *name = colon ? colon + 1 : d->func;
	size_t mod_len = colon ? (size_t)(colon - d->func) : 0;
	const struct xk_ksym *first;
	size_t nr = xk_kallsyms_lookup(ks, name, &first);

	d->nr_cands = 0;
	for (size_t k = 0; k < nr; k++) {
		const struct xk_ksym *y = &first[k];
		/* a bare name: vmlinux's, or an out-of-tree module's */
		bool same_mod = !colon || (y->module && strlen(y->module) == mod_len &&
					   !strncmp(y->module, d->func, mod_len));

		if (!same_mod || y->type == 't' || y->type == 'T')
			continue;
		if (d->nr_cands == XK_MAX_CANDS)
			return xk_err(-E2BIG, "%s: the kernel has more than %d "
					      "variables of this name", d->func,
				      XK_MAX_CANDS);
		d->cands[d->nr_cands++] = y->addr;
	}
	if (!d->nr_cands && colon)
		return xk_err(-ENOENT, "%s: no such variable: is module %.*s "
				       "loaded?", d->func, (int)mod_len, d->func);
	if (!d->nr_cands)
		return xk_err(-ENOENT, "%s: no such variable in /proc/kallsyms",
			      d->func);
	return 0;
}

/*
 * The addresses the module needs from kallsyms, in one read of
 * /proc/kallsyms (it costs more than the rest of a load): the copies of
 * repeated function names (funcs) and every variable's (vars; kprobes
 * resolve no data), all symbols read only for those.
 */
static int add_addresses(struct xk_ioc_span *spans, int n, bool funcs,
			 bool vars)
{
	struct xk_kallsyms ks;
	int err = xk_kallsyms_read("/proc/kallsyms", !vars, &ks);

	if (err)
		return err;
	for (int i = 0; i < n && !err; i++) {
		if (spans[i].emulate == XK_EMULATE_DATA)
			err = add_variable_addresses(&ks, &spans[i]);
		else if (funcs)
			err = add_function_copies(&ks, &spans[i]);
	}
	xk_kallsyms_free(&ks);
	return err;
}

/* Whether span s is loaded as a span of code: the module keeps variables
 * apart, after the code's spans, whose indices replays and points use. */
static bool loaded_as_code(const struct xk_scope_span *s)
{
	return s->cls != XK_SPAN_UNSUPPORTED && s->emulate != XK_EMULATE_DATA;
}

/* A refused use of t that sizes an object, static or on the heap (its
 * compiled size stays: check_complete), or NULL. */
static const struct xk_scope_span *sized_by(const struct xk_scope *t)
{
	for (int i = 0; i < t->nr_spans; i++)
		if (t->spans[i].cls == XK_SPAN_UNSUPPORTED &&
		    (!strncmp(t->spans[i].why, XK_WHY_SIZED, strlen(XK_WHY_SIZED)) ||
		     strstr(t->spans[i].why, XK_WHY_HEAP)))
			return &t->spans[i];
	return NULL;
}

/*
 * Never half-applied: a table with a refused use would run some uses with
 * the new value and the others with the compiled-in one, a kernel built
 * with neither. Refused, naming the uses, unless the caller accepts it.
 */

static int check_complete(const struct xk_scope *t,
			  const struct xk_scope_span *sized, int64_t value,
			  bool partial)
{
	char list[512] = "";
	int nr = 0;

	for (int i = 0; i < t->nr_spans; i++) {
		const struct xk_scope_span *s = &t->spans[i];

		if (s->cls != XK_SPAN_UNSUPPORTED)
			continue;
		if (nr++ < 3 && !strcmp(s->func, XK_SPAN_EVERY_USE))
			snprintf(list + strlen(list), sizeof(list) - strlen(list),
				 "%s%s, every use (%.100s)", nr > 1 ? "; " : "",
				 xk_scope_left_out_name(s), s->why);
		else if (nr <= 3)
			snprintf(list + strlen(list), sizeof(list) - strlen(list),
				 "%s%s+%#llx (%.100s)", nr > 1 ? "; " : "", s->func,
				 (unsigned long long)s->start, s->why);
	}
	/* a function that holds state of the call runs each call under one
	 * value: a refused use in it would keep the compiled-in one in the
	 * same call as the others' new value */
	for (int i = 0; i < t->nr_spans && value != t->def; i++) {
		const struct xk_scope_span *s = &t->spans[i];

		if (s->cls != XK_SPAN_UNSUPPORTED)
			continue;
		for (int k = 0; k < t->nr_spans; k++)
			if (t->spans[k].call_state && !strcmp(t->spans[k].func, s->func))
				return xk_err(-ENOTSUP, "%s: %s holds state of the call "
					      "(a frame or heap objects the constant "
					      "sizes) and its use "
					      "at +%#llx cannot be retuned (%.120s): one "
					      "call would run with two values; refused, "
					      "--partial or not", t->constant, s->func,
					      (unsigned long long)s->start, s->why);
	}
	/*
	 * A static object sized by the constant keeps its compiled size
	 * whatever is accepted, and so does a heap object allocated before
	 * the change (one allocated during it has the new size, which the
	 * compiled-in value would overrun after unload). Above the
	 * compiled-in value the code would run past it; below, state
	 * already there (a cache holding more entries than the new size,
	 * napi_skb_cache_put's `count == N` then never true) can carry it
	 * past the end too. Refused, --partial or not.
	 */
	if (sized && value != t->def)
		return xk_err(-ENOTSUP, "%s: %s keeps its compiled size (%.120s): "
			      "the code would run past it with another value, "
			      "or with what it holds now; refused, --partial or "
			      "not", t->constant, sized->func, sized->why);
	if (!nr || partial)
		return 0;
	return xk_err(-ENOTSUP, "%s: %d of %d uses cannot be retuned: %s%s; "
				"retuning the others would run a kernel built with "
				"neither value (--partial accepts that; xk status "
				"then lists the uses that keep %lld)",
		      t->constant, nr, t->nr_spans, list, nr > 3 ? "; ..." : "",
		      (long long)t->def);
}

/* Whether some supported span of t is replayed (xk_ioc_span.emulate). */
static bool has_replays(const struct xk_scope *t)
{
	for (int i = 0; i < t->nr_spans; i++)
		if (t->spans[i].cls != XK_SPAN_UNSUPPORTED &&
		    t->spans[i].emulate == XK_EMULATE_REPLAY)
			return true;
	return false;
}

/*
 * The replays of a loaded constant's replayed spans (XK_IOC_REPLAY): every
 * one (value LLONG_MIN) or value's, each span by its index among the
 * supported ones (the load's order). The first refusal ends it.
 */
static int send_replays(int fd, const struct xk_scope *t, long long value)
{
	struct xk_ioc_replay *req = malloc(sizeof(*req));
	int n = 0, err = 0;

	if (!req)
		return xk_err(-ENOMEM, "%s: out of memory", t->constant);
	for (int i = 0; i < t->nr_spans && !err; i++) {
		const struct xk_scope_span *s = &t->spans[i];

		if (!loaded_as_code(s))
			continue;
		for (int j = 0; j < s->nr_replays && !err; j++) {
			if (value != LLONG_MIN && s->replays[j].n != value)
				continue;
			xk_scope_replay_to_ioc(&s->replays[j], req);
			req->span = (__u32)n;
			xk_strlcpy(req->name, t->constant, sizeof(req->name));
			if (ioctl(fd, XK_IOC_REPLAY, req))
				err = ioctl_err("replay", req->error);
		}
		n++;
	}
	free(req);
	return err;
}

static int xk_rt_load_impl(int fd, const struct xk_scope *t, long long value,
			   const struct xk_rt_load_opts *opts,
			   struct xk_rt_result *res)
{
	const char *policy = OPTS_GET(opts, policy, NULL);
	const struct xk_scope_span *sized = sized_by(t);
	struct xk_ioc_load req = { .size = sizeof(req) };
	struct xk_ioc_span *spans;
	bool replayed, funcs = false, vars = false;
	int n = 0, err = 0;

	memset(res, 0, sizeof(*res));
	if (!OPTS_VALID(opts, xk_rt_load_opts))
		return xk_err(-EINVAL, "invalid xk_rt_load_opts");
	if (policy)
		value = t->def;
	err = xk_scope_check_value(t, value) ?:
	      check_complete(t, sized, value, OPTS_GET(opts, partial, false));
	if (err)
		return err;
	spans = calloc(t->nr_spans ? t->nr_spans : 1, sizeof(*spans));
	if (!spans)
		return xk_err(-ENOMEM, "%s: out of memory", t->constant);
	/* the code's spans first, then the variables (loaded_as_code) */
	for (int i = 0; i < t->nr_spans; i++)
		if (loaded_as_code(&t->spans[i]))
			xk_scope_span_to_ioc(&t->spans[i], &spans[n++]);
	for (int i = 0; i < t->nr_spans; i++)
		if (t->spans[i].cls == XK_SPAN_DATA)
			xk_scope_span_to_ioc(&t->spans[i], &spans[n++]);
	if (!n) {
		const struct xk_scope_span *r = t->nr_spans ? &t->spans[0] : NULL;

		free(spans);
		/* every use refused: the first one's reason says why */
		return xk_err(-ENOTSUP, "%s: the scope table has no supported "
				       "span%s%s%s%.300s%s", t->constant,
			      r ? " (" : "", r ? r->func : "", r ? ": " : "",
			      r ? r->why : "", r ? ")" : "");
	}
	if (n > XK_MAX_SPANS) {
		free(spans);
		return xk_err(-E2BIG, "%s: %d spans, the module takes %d",
			      t->constant, n, XK_MAX_SPANS);
	}
	/* kallsyms only when a function's name may repeat, or for a variable */
	for (int i = 0; i < t->nr_spans; i++) {
		funcs |= loaded_as_code(&t->spans[i]) && t->spans[i].copies != 1;
		vars |= t->spans[i].cls == XK_SPAN_DATA;
	}
	if (funcs || vars)
		err = add_addresses(spans, n, funcs, vars);
	if (err) {
		free(spans);
		return err;
	}
	xk_strlcpy(req.name, t->constant, sizeof(req.name));
	req.nr_spans = n;
	req.def = t->def;
	/* a constant that sizes an object takes no other value, later sets
	 * included: the module's bounds say so (check_complete) */
	req.min = sized ? t->def : t->min;
	req.max = sized ? t->def : t->max;
	req.value = value;
	req.mode = policy ? XK_MODE_IMMEDIATE : OPTS_GET(opts, mode, XK_MODE_IMMEDIATE);
	req.timeout_ms = OPTS_GET(opts, timeout_ms, 0);
	req.spans = (unsigned long)spans;
	if (policy && xk_strlcpy(req.policy, policy, sizeof(req.policy))) {
		free(spans);
		return xk_err(-ENAMETOOLONG, "policy name %s is too long", policy);
	}
	/* replayed spans take their replays once loaded: until then only
	 * the compiled-in value can be in force */
	replayed = has_replays(t);
	if (replayed)
		req.value = t->def;
	if (ioctl(fd, XK_IOC_LOAD, &req))
		err = ioctl_err("load", req.error);
	res->load_ns = req.load_ns;
	res->transition_ns = req.transition_ns;
	res->nr_spans = n;
	res->policy_cookie = req.policy_cookie;
	res->mode = (int)req.mode;
	free(spans);
	if (err || !replayed)
		return err;
	err = send_replays(fd, t, LLONG_MIN);
	if (!err && value != t->def) {
		struct xk_ioc_set set = { .size = sizeof(set), .mode = req.mode,
					  .value = value,
					  .timeout_ms = req.timeout_ms };

		xk_strlcpy(set.name, t->constant, sizeof(set.name));
		if (ioctl(fd, XK_IOC_SET, &set))
			err = ioctl_err("set", set.error);
		res->transition_ns = set.transition_ns;
		res->mode = (int)set.mode;
	}
	if (err) {	/* nothing half-loaded: the constant goes again */
		struct xk_ioc_unload un = { .size = sizeof(un) };

		xk_strlcpy(un.name, t->constant, sizeof(un.name));
		ioctl(fd, XK_IOC_UNLOAD, &un);
	}
	return err;
}

int xk_rt_load(int fd, const struct xk_scope *t, long long value,
	       const struct xk_rt_load_opts *opts, struct xk_rt_result *res)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_rt_load_impl(fd, t, value, opts, res));
}

static int xk_rt_set_impl(int fd, const char *name, long long value, int mode,
			  unsigned int timeout_ms, struct xk_rt_result *res)
{
	struct xk_ioc_set req = { .size = sizeof(req), .mode = mode,
				  .value = value, .timeout_ms = timeout_ms };

	memset(res, 0, sizeof(*res));
	xk_strlcpy(req.name, name, sizeof(req.name));
	if (ioctl(fd, XK_IOC_SET, &req))
		return ioctl_err("set", req.error);
	res->transition_ns = req.transition_ns;
	res->old_value = req.old_value;
	res->mode = (int)req.mode;
	return 0;
}

int xk_rt_set(int fd, const char *name, long long value, int mode,
	      unsigned int timeout_ms, struct xk_rt_result *res)
{
	xk_err_clear();
	return xk_api_return(__func__,
			     xk_rt_set_impl(fd, name, value, mode, timeout_ms, res));
}

/*
 * The table's parameters at value for a loaded constant's per-value spans
 * (the table must have the point: xk_gen_point), one row per supported
 * span in the order xk_rt_load gave them (spans of code, then variables).
 */
static int xk_rt_add_point_impl(int fd, const struct xk_scope *t, long long value,
				int *added)
{
	struct xk_ioc_point req = { .size = sizeof(req), .value = value };
	__s64 (*rows)[XK_MAX_PARAMS];
	int n = 0, err = 0;

	*added = 0;
	rows = calloc(t->nr_spans ? t->nr_spans : 1, sizeof(*rows));
	if (!rows)
		return xk_err(-ENOMEM, "%s: out of memory", t->constant);
	/* the spans of code, then the variables: the load's order */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < t->nr_spans && !err; i++) {
			const struct xk_scope_span *s = &t->spans[i];
			bool found = xk_scope_span_has_value(s, value, t->def);

			if (pass ? s->cls != XK_SPAN_DATA : !loaded_as_code(s))
				continue;
			for (int j = 0; j < s->nr_points; j++)
				if (s->points[j].n == value)
					memcpy(rows[n], s->points[j].p,
					       sizeof(rows[n]));
			if (!found)
				err = xk_err(-ENOKEY, "%s: span %d has no point "
					     "for %lld", t->constant, i, value);
			n++;
		}
	}
	if (!err) {
		xk_strlcpy(req.name, t->constant, sizeof(req.name));
		req.nr_spans = (__u32)n;
		req.params = (__u64)(uintptr_t)rows;
		if (ioctl(fd, XK_IOC_POINT, &req))
			err = ioctl_err("point", req.error);
		*added = (int)req.nr_added;
	}
	if (!err && value != t->def && has_replays(t))
		err = send_replays(fd, t, value);
	free(rows);
	return err;
}

int xk_rt_add_point(int fd, const struct xk_scope *t, long long value, int *added)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_rt_add_point_impl(fd, t, value, added));
}

static int xk_rt_settle_impl(int fd, const char *name, bool undo,
			     struct xk_rt_settle_result *res)
{
	struct xk_ioc_settle req = { .size = sizeof(req), .undo = undo };

	memset(res, 0, sizeof(*res));
	xk_strlcpy(req.name, name, sizeof(req.name));
	if (ioctl(fd, XK_IOC_SETTLE, &req))
		return ioctl_err(undo ? "unsettle" : "settle", req.error);
	res->nr_settled = req.nr_settled;
	res->nr_kept = req.nr_kept;
	res->settle_ns = req.settle_ns;
	return 0;
}

int xk_rt_settle(int fd, const char *name, bool undo,
		 struct xk_rt_settle_result *res)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_rt_settle_impl(fd, name, undo, res));
}

static int xk_rt_set_many_impl(int fd, int nr, const char *const *names,
			       const long long *values, int mode, unsigned int timeout_ms,
			       struct xk_rt_result *res)
{
	struct xk_ioc_set_many *req = calloc(1, sizeof(*req));
	int err = 0;

	memset(res, 0, sizeof(*res));
	if (!req)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	if (nr < 1 || nr > XK_TX_MAX) {
		free(req);
		return xk_err(-EINVAL, "a transaction has 1 to %d constants", XK_TX_MAX);
	}
	req->size = sizeof(*req);
	req->mode = mode;
	req->timeout_ms = timeout_ms;
	req->nr = nr;
	for (int i = 0; i < nr; i++) {
		xk_strlcpy(req->names[i], names[i], sizeof(req->names[i]));
		req->values[i] = values[i];
	}
	if (ioctl(fd, XK_IOC_SET_MANY, req))
		err = ioctl_err("set", req->error);
	res->transition_ns = req->transition_ns;
	res->mode = (int)req->mode;
	free(req);
	return err;
}

int xk_rt_set_many(int fd, int nr, const char *const *names,
		   const long long *values, int mode, unsigned int timeout_ms,
		   struct xk_rt_result *res)
{
	xk_err_clear();
	return xk_api_return(__func__,
			     xk_rt_set_many_impl(fd, nr, names, values, mode, timeout_ms, res));
}

static int xk_rt_unload_impl(int fd, const char *name, int *nr)
{
	struct xk_ioc_unload req = { .size = sizeof(req), .all = !name };

	if (name)
		xk_strlcpy(req.name, name, sizeof(req.name));
	if (ioctl(fd, XK_IOC_UNLOAD, &req))
		return ioctl_err("unload", req.error);
	if (nr)
		*nr = req.nr_unloaded;
	return 0;
}

int xk_rt_unload(int fd, const char *name, int *nr)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_rt_unload_impl(fd, name, nr));
}

static int xk_rt_status_impl(int fd, unsigned int index, struct xk_ioc_status *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->index = index;
	if (ioctl(fd, XK_IOC_STATUS, st))
		return ioctl_err("status", NULL);
	return st->found ? 0 : -ENOENT;
}

int xk_rt_status(int fd, unsigned int index, struct xk_ioc_status *st)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_rt_status_impl(fd, index, st));
}

/* Is the kprobe at addr jump-optimized? From debugfs; -ENOENT if unlisted. */
static int xk_rt_probe_optimized_impl(unsigned long long addr)
{
	struct xk_kprobe *list;
	size_t nr;
	int err = xk_kprobes_list(&list, &nr);

	if (err)
		return err;
	err = -ENOENT;
	/* several probes at one address (a policy's and the module's disarmed
	 * one) share the state of the aggregate: any line may say it */
	for (size_t i = 0; i < nr && err != 1; i++)
		if (list[i].addr == addr)
			err = list[i].optimized ? 1 : 0;
	free(list);
	return err;
}

int xk_rt_probe_optimized(unsigned long long addr)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_rt_probe_optimized_impl(addr));
}
