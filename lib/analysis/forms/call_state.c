// SPDX-License-Identifier: GPL-2.0
/*
 * Form: state of the call. A function whose stack frame the constant
 * sizes, or the one function whose allocations it sizes (heap of one
 * call), holds the value for a whole call; its spans, whichever form made
 * them, change only when no thread is in the function.
 */
#include "dataflow.h"
#include "form.h"

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

const struct gen_form form_call_state = {
	.name = "call state",
	.finish = finish_call_state,
};
