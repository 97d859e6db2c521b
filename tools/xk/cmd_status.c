// SPDX-License-Identifier: GPL-2.0
/* xk status: the constants loaded, their values, probes and policies. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "xk/runtime.h"
#include "xk/scope.h"

/* A policy-driven constant's figures, per context. */
static void print_policy(const struct xk_ioc_status *st)
{
	const struct { const char *key; unsigned long long n; } counts[] = {
		{ "choices", st->pol_sets }, { "clamped", st->pol_clamped },
		{ "pinned", st->pol_pinned }, { "writes", st->pol_writes },
		{ "refused", st->pol_refused }, { "exits", st->pol_exits },
		{ "pins", st->pol_pins }, { "missed", st->pol_missed },
		{ "other_contexts", st->pol_other_contexts },
		{ "refused_outside", st->refused_outside },
	};
	unsigned int nr = st->nr_contexts < XK_MAX_CONTEXTS ? st->nr_contexts
							     : XK_MAX_CONTEXTS;

	if (json_output) {
		for (size_t i = 0; i < ARRAY_SIZE(counts); i++)
			json_int(jw, counts[i].key, counts[i].n);
		json_begin_array(jw, "contexts");
		for (unsigned int i = 0; i < nr; i++) {
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
	       "%llu refused, %llu exits, %llu pins held\n", st->policy, counts[0].n,
	       counts[1].n, counts[2].n, counts[3].n, counts[4].n, counts[5].n,
	       counts[6].n);
	for (unsigned int i = 0; i < nr; i++)
		printf("    %-16s %lld (%llu choices, %llu clamped)\n",
		       st->contexts[i].label[0] ? st->contexts[i].label : "(unnamed)",
		       (long long)st->contexts[i].value,
		       (unsigned long long)st->contexts[i].hits,
		       (unsigned long long)st->contexts[i].clamped);
	if (st->pol_missed)
		printf("    %llu hits ran no program (another BPF program was "
		       "running on that CPU)\n", (unsigned long long)st->pol_missed);
	if (st->pol_other_contexts)
		printf("    %-16s (%llu choices)\n", "(others)",
		       (unsigned long long)st->pol_other_contexts);
}

static void print_probes(const struct xk_ioc_status *st)
{
	for (unsigned int s = 0; s < st->nr_spans && s < XK_MAX_SPANS; s++) {
		const struct xk_ioc_span_status *p = &st->spans[s];
		bool settled = p->settle == XK_SETTLE_DONE;
		bool var = p->variable;
		/* no address: the module hides it from this caller (and
		 * kprobes/list would show zeros) */
		int opt = settled || var || !p->addr ? -1 :
			  xk_rt_probe_optimized(p->addr);
		const char *state = settled ? "none (settled)" :
				    p->settle == XK_SETTLE_GONE ? "gone" :
				    var ? "none (a variable)" :
				    opt == 1 ? "optimized" : opt == 0 ? "int3" : "?";

		if (json_output) {
			json_begin_object(jw, NULL);
			json_str(jw, "function", p->func);
			json_int(jw, "offset", p->probe);
			json_int(jw, "hits", p->hits);
			json_str(jw, "probe", state);
			json_bool(jw, "settled", settled);
			json_bool(jw, "variable", var);
			json_str(jw, "settle", xk_settle_state_name(p->settle));
			json_end_object(jw);
		} else {
			printf("  %s+%#llx: %llu %s, %s", p->func,
			       (unsigned long long)p->probe,
			       (unsigned long long)p->hits,
			       var ? "writes" : st->policy[0] ? "policy writes" :
			       "rewrites", state);
			if (p->settle > XK_SETTLE_DONE && p->settle != XK_SETTLE_GONE &&
			    !var)
				printf(", not settled: %s",
				       xk_settle_state_name(p->settle));
			putchar('\n');
		}
	}
}

/*
 * What the table of a loaded constant says the retune leaves, from the
 * table in the cache, or the one shipped for this release (nothing when
 * the table came from elsewhere): the uses that keep the compiled-in value
 * when it was loaded with --partial (its unsupported spans), and its notes
 * (what boot-time code computed, state of objects made before the change,
 * bounds narrowed), and the values a proved table takes, or whether an
 * unproved one's bounds were checked at their ends.
 */
static void print_table_extras(const struct xk_ioc_status *st)
{
	char path[XK_PATH_MAX + 64];
	struct xk_scope t;
	int nr = 0;

	running_table_path(st->name, path, sizeof(path));
	if (access(path, R_OK) || xk_scope_read(path, &t))
		return;
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *s = &t.spans[i];

		if (s->cls != XK_SPAN_UNSUPPORTED)
			continue;
		if (!nr++ && json_output)
			json_begin_array(jw, "kept");
		if (json_output) {
			json_begin_object(jw, NULL);
			json_str(jw, "function", s->func);
			json_int(jw, "offset", s->start);
			json_str(jw, "why", s->why);
			json_end_object(jw);
		} else if (!strcmp(s->func, XK_SPAN_EVERY_USE)) {
			printf("  %s: keeps %lld (%s)\n", xk_scope_left_out_name(s),
			       st->def, s->why);
		} else {
			printf("  %s+%#llx: keeps %lld (%s)\n", s->func,
			       (unsigned long long)s->start, st->def, s->why);
		}
	}
	if (nr && json_output)
		json_end_array(jw);
	/* a proved table: the values it takes (xk gen --prove) */
	if (t.nr_proved && json_output) {
		json_int(jw, "proved", t.nr_proved);
		json_bool(jw, "proved_every", t.proved_every);
		json_table_values("values", &t);
	} else if (t.nr_proved) {
		char values[400];

		xk_scope_values_text(&t, values, sizeof(values));
		printf("  values: %s (proved: %d value%s built, %s)\n", values,
		       t.nr_proved, t.nr_proved == 1 ? "" : "s",
		       t.proved_every ? "every one of the bounds" :
		       "a sample of the bounds");
	}
	/* an unproved table: whether xk gen checked the bounds' ends */
	if (!t.nr_proved && json_output)
		json_bool(jw, "ends_checked", t.ends_checked);
	else if (!t.nr_proved)
		printf("  bounds: %s\n", t.ends_checked ?
		       "the fits checked at both ends by builds" :
		       "not checked at the ends (xk gen again checks them)");
	if (t.nr_notes && json_output)
		json_begin_array(jw, "notes");
	for (int i = 0; i < t.nr_notes; i++) {
		if (json_output)
			json_str(jw, NULL, t.notes[i]);
		else
			printf("  note: %s\n", t.notes[i]);
	}
	if (t.nr_notes && json_output)
		json_end_array(jw);
	xk_scope_free(&t);
}

/* Spans whose value is in the text (settled): a fault leaves them so. */
static unsigned int settled_spans(const struct xk_ioc_status *st)
{
	unsigned int n = 0;

	for (unsigned int s = 0; s < st->nr_spans && s < XK_MAX_SPANS; s++)
		n += st->spans[s].settle == XK_SETTLE_DONE;
	return n;
}

static void print_constant(const struct xk_ioc_status *st)
{
	bool faulted = st->flags & XK_STATUS_FAULTED;
	unsigned int settled = settled_spans(st);

	if (json_output) {
		json_begin_object(jw, NULL);
		json_str(jw, "constant", st->name);
		json_int(jw, "value", st->value);
		json_int(jw, "default", st->def);
		json_int(jw, "min", st->min);
		json_int(jw, "max", st->max);
		json_double(jw, "last_transition_ms", st->last_transition_ns / 1e6);
		json_bool(jw, "faulted", faulted);
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
	if (faulted && !json_output)
		printf("  disarmed after a write faulted: every probe runs the "
		       "compiled-in value%s; xk unload it\n", settled ?
		       ", but settled spans keep the value they were settled at "
		       "in the text until then" : "");
	print_probes(st);
	if (json_output)
		json_end_array(jw);
	print_table_extras(st);
	if (st->policy[0])
		print_policy(st);
	if (json_output)
		json_end_object(jw);
}

static int do_status(void *args, int argc, char **argv)
{
	struct xk_ioc_status *st = calloc(1, sizeof(*st));
	unsigned long long refused_outside = 0;
	int fd, err = 0;

	(void)args;
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
		print_constant(st);
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

const struct cli_cmd cmd_status = { "status", do_status, .max_args = 0 };
