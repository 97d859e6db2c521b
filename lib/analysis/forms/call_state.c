// SPDX-License-Identifier: GPL-2.0
/*
 * Form: state of the call. A function whose stack frame the constant
 * sizes, or the one function whose allocations it sizes (heap of one
 * call), holds the value for a whole call; its spans, whichever form made
 * them, change only when no thread is in the function.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "dataflow.h"
#include "form.h"
#include "redo.h"

/*
 * Why a function's whole code cannot be one safe span that a thread
 * leaves only at its returns and tail calls, or NULL: a branch that
 * leaves it otherwise (a .cold part the thread comes back from, an
 * indirect jump, a conditional tail call: df_unfollowable_branch, or a
 * relocated jcc), a fault whose fixup lies outside it, an exit kprobes
 * refuses (a static call's jmp __SCT__), more exits than a table holds.
 * exits: the offsets of its returns and tail calls, *nr of them.
 */
static const char *whole_call_exits(const struct form_fn *fn, uint64_t *exits,
				    int *nr, char *buf, size_t size)
{
	const char *why = df_unfollowable_branch(fn->fb, fn->base, buf, size);

	*nr = 0;
	for (size_t i = 0; i < fn->base->nr && !why; i++) {
		const struct xk_insn *in = &fn->base->insn[i];
		bool leaves = in->is_ret ||
			      (in->is_branch && !in->is_cond && in->target >= 0 &&
			       (uint64_t)in->target >= fn->fb->sym.st_size);

		if (in->is_cond && in->has_reloc && !in->alt_site)
			why = "a conditional jump out of it";
		else if (in->fixup == XK_FIXUP_ELSEWHERE)
			why = "an instruction whose fault resumes outside it";
		else if (leaves && in->unprobeable)
			why = "an exit that kprobes refuses (a static call)";
		else if (leaves && *nr == df_limits.exits)
			why = "more exits than a table may hold";
		else if (leaves)
			exits[(*nr)++] = in->off;
	}
	return why;
}

/*
 * The spans of a function whose frame the constant sizes (the slots it
 * moves set aside by the pipeline) hold state of the call: the array is filled under
 * one value and bounded by it (kfree_skb_add_bulk's `skb_count == N`). A
 * thread that had put 12 skbs in a batch of 16 would count past a new
 * bound of 8, and past the array's end, if the value changed between two
 * of its compares. So every span of the function, whichever pass made it,
 * is call_state: its safe span is the whole function, left at its
 * returns and tail calls, its value changes only when no thread is in
 * the function (the module never changes it at an instant, returns to
 * the default at unload the same way and lets no policy drive it), and
 * it is never settled. A function that cannot be one such span
 * (whole_call_exits) refuses its spans; one with no supported span of
 * its own (its uses in a callee) gets a refused one: nothing would hold
 * a value for the whole call. Runs as the form's finish.
 */
static int whole_function(const struct form_fn *fn, struct xk_scope *t, int first)
{
	uint64_t exits[XK_MAX_EXITS];
	char buf[320];
	struct xk_scope_span *sp;
	int nr = 0, any = 0, err;
	const char *why = whole_call_exits(fn, exits, &nr, buf, sizeof(buf));
	const char *cause = fn->in->heap_call ?
			    " sizes heap objects by the constant" :
			    "'s frame is sized by the constant";

	for (int k = first; k < t->nr_spans; k++) {
		sp = &t->spans[k];
		if (!gen_span_of(sp, fn->in->object, fn->fb))
			continue;
		any++;
		if (sp->cls == XK_SPAN_UNSUPPORTED || sp->cls == XK_SPAN_DATA)
			continue;
		if (why) {
			span_refuse(sp, "%s%s, so its safe span is the whole "
				    "function, which has %s", fn->fb->name, cause, why);
			continue;
		}
		sp->call_state = fn->in->heap_call ? XK_CALL_STATE_HEAP :
						    XK_CALL_STATE_FRAME;
		sp->nr_imms = 0;	/* never settled: no text poke mid-call */
		memcpy(sp->exits, exits, sizeof(exits[0]) * (size_t)nr);
		sp->nr_exits = nr;
		sp->nr_ranges = 1;
		sp->ranges[0][0] = 0;
		sp->ranges[0][1] = sp->func_size;
		sp->escapes |= XK_ESCAPE_STORE | XK_ESCAPE_CALL | XK_ESCAPE_RET;
		sp->slice_len = (uint32_t)fn->base->nr;
	}
	if (any || why)
		return 0;
	err = gen_add_span(t, fn->in, fn->fb, &sp);
	if (!err)
		span_refuse(sp, "%s%s, but no span of its own carries the value "
			    "(a callee's do): nothing would keep one value for the "
			    "whole call", fn->fb->name, cause);
	return err;
}

/* After the function's spans are made: heap of one call and a frame sized
 * by the value at once is refused; either alone makes them call state. */
static int finish_call_state(struct form_fn *fn, struct xk_scope *t)
{
	struct xk_scope_span *sp;
	int err;

	if (fn->in->heap_call && fn->frame_moved) {
		/* the bound a frame needs is lowered by the first analysis */
		err = gen_add_span(t, fn->in, fn->fb, &sp);
		if (!err)
			span_refuse(sp, "%s sizes both heap objects and its frame "
				    "by the constant", fn->fb->name);
		return err;
	}
	if (fn->frame_moved || fn->in->heap_call)
		return whole_function(fn, t, fn->first_span);
	return 0;
}

/* Whether t refuses a span of sp's function because the check build has
 * another shape there. */
static bool check_lost(const struct xk_scope *t, const struct xk_scope_span *sp)
{
	for (int i = 0; i < t->nr_spans; i++)
		if (t->spans[i].cls == XK_SPAN_UNSUPPORTED &&
		    gen_same_function(&t->spans[i], sp) &&
		    strstr(t->spans[i].why, WHY_CHECK_SHAPE))
			return true;
	return false;
}

/*
 * A function whose frame the constant sizes (an array on the stack: every
 * span of it state of the call, forms/call_state.c) never takes a value
 * above the default (bound_call_state). When its check build, above
 * the fit, has another shape there (FQ_GC_MAX's fq_gc is no longer
 * inlined into fq_enqueue at 16), the check is made where its values lie
 * instead: at the default minus one. Each object with such a refusal is
 * analysed again with that check build; a function takes the new spans
 * (gen_merge_redo) when it had such a refusal and every new span of it is
 * supported and of a frame. Runs after the first analysis.
 */
static int retry_check_below(const struct form_table *ft, struct xk_scope *t)
{
	const struct xk_kernel *k = ft->k;
	const struct xk_constant *c = ft->c;
	const struct xk_build_result *b = ft->b;
	XK_OPTS(xk_build_opts, o, .one_value = true, .skip_identity = true,
		.value = c->def - 1);
	struct xk_build_result *below = NULL;
	struct xk_scope redo = { .nr_spans = 0 };
	struct xk_constant only = *c;
	bool any = false;
	char what[64];
	int err = 0;

	for (int i = 0; i < t->nr_spans && !any; i++)
		any = t->spans[i].cls == XK_SPAN_UNSUPPORTED &&
		      strstr(t->spans[i].why, WHY_CHECK_SHAPE);
	if (!any || c->def - 1 < c->min || c->def - 1 == b->value[0] ||
	    c->def - 1 == b->value[1])
		return 0;
	snprintf(what, sizeof(what), "checked at N=%lld", c->def - 1);
	err = gen_refused_objects(c, t, &only, "the check below the default");
	if (err || !only.objects[0])
		return err;
	below = calloc(1, sizeof(*below));
	if (!below)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	err = xk_build(k, &only, &o, below);
	if (err && err != -ENOMEM) {	/* no such build: the refusals stand */
		xk_err_clear();
		err = 0;
		goto out;
	}
	for (int i = 0; !err && i < below->nr_objects; i++) {
		struct gen_input in;
		char module[64];
		int j = gen_object_index(b, below->object[i]);

		if (j < 0)
			continue;
		gen_input_checked(k, c, b, j, c->def - 1, below->variant[i][0],
				  &in, module, sizeof(module));
		err = ft->analyse_object(&in, &redo);
	}
	/* only the functions whose check was lost stay, and take the new
	 * spans when every one is a supported span of a frame */
	for (int i = 0, n, kept = 0; !err; i += n) {
		bool frame = true;

		if (i == redo.nr_spans) {
			redo.nr_spans = kept;
			break;
		}
		n = gen_function_spans(&redo, i);
		if (!check_lost(t, &redo.spans[i])) {
			for (int j = i; j < i + n; j++)
				free(redo.spans[j].replays);
			continue;
		}
		for (int j = i; j < i + n; j++)
			frame &= redo.spans[j].cls == XK_SPAN_UNSUPPORTED ||
				 redo.spans[j].call_state == XK_CALL_STATE_FRAME;
		if (!frame)
			span_refuse(&redo.spans[i], "the function's frame is not "
				    "sized by the constant (values above the "
				    "default stay possible)");
		memmove(&redo.spans[kept], &redo.spans[i], n * sizeof(redo.spans[0]));
		kept += n;
	}
	err = err ?: gen_merge_redo(t, &redo, what);
out:
	xk_scope_free(&redo);
	free(below);
	return err;
}

/*
 * A table with spans of call state (a frame the constant sizes,
 * whole_function): the compiled-in frame holds what a smaller value
 * needs, a larger one would need more stack than the function has.
 * The upper bound becomes the compiled-in value, whichever pass found
 * the frame, with a note naming the functions ("bounds: ...", which a
 * refusal of a value above quotes); the points and replays of values
 * above go. Runs on the finished table.
 */
static int check_call_state(const struct form_table *ft, struct xk_scope *t)
{
	const long long def = ft->c->def;
	char note[sizeof(t->notes[0])], funcs[120] = "";
	int nr = 0, named = 0;

	for (int i = 0; i < t->nr_spans; i++) {
		const struct xk_scope_span *s = &t->spans[i];
		bool seen = false;

		if (s->call_state != XK_CALL_STATE_FRAME ||
		    s->cls == XK_SPAN_UNSUPPORTED)
			continue;
		for (int k = 0; k < i && !seen; k++)
			seen = t->spans[k].call_state && !strcmp(t->spans[k].func, s->func);
		if (seen)
			continue;
		nr++;
		if (strlen(funcs) + strlen(s->func) + 2 < sizeof(funcs)) {
			size_t len = strlen(funcs);

			snprintf(funcs + len, sizeof(funcs) - len, "%s%s",
				 named++ ? ", " : "", s->func);
		}
	}
	if (!nr)
		return 0;
	if (t->max > def)
		t->max = def;
	gen_drop_outside_bounds(t);
	snprintf(note, sizeof(note), "bounds: at most the compiled-in %lld: the "
		 "constant sizes the frame of %s%s, which holds a smaller "
		 "value's array, not a larger one's", def, funcs,
		 nr > named ? " and others" : "");
	return gen_add_note(t, note);
}

const struct gen_form form_call_state = {
	.name = "call state",
	.finish = finish_call_state,
	.retry = retry_check_below,
	.check = check_call_state,
};
