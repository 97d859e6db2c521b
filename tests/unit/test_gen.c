// SPDX-License-Identifier: GPL-2.0
/*
 * xk build + xk gen, end to end on real objects (kpatch-style golden
 * tests): the golden fixture module (tests/fixtures/golden), compiled with
 * the target kernel's compiler and flags, and the catalog's constants of the
 * stock kernel. Each case names the spans that must come out, with their
 * class and fit, or the refusal that must be reported. Needs the fetched
 * kernel (scripts/setup.sh); run from the top of the tree.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "dataflow.h"
#include "identity.h"
#include "object.h"
#include "internal.h"
#include "forms/form.h"
#include "spans.h"
#include "symexec.h"
#include "unit.h"
#include "build.h"
#include "unit_kernel.h"
#include "xk/scope.h"


struct want {
	const char *func;		/* prefix of the function name */
	enum xk_span_class cls;
	long long a, b;			/* fit of the first parameter */
	const char *why;		/* unsupported: text in the reason */
};

/* Every wanted span is found, and nothing else is. */
static int expect(const char *catalog, const char *name, const struct want *w,
		  int n)
{
	struct xk_scope t;
	int ok = 1;

	if (gen(catalog, name, &t))
		return 1;
	if (t.nr_spans != n) {
		printf("#   %s: %d spans, want %d\n", name, t.nr_spans, n);
		ok = 0;
	}
	for (int i = 0; i < n && ok; i++) {
		const struct xk_scope_span *s = NULL;

		for (int j = 0; j < t.nr_spans; j++)
			if (!strncmp(t.spans[j].func, w[i].func, strlen(w[i].func)) &&
			    (!s || (t.spans[j].nr_params &&
				    t.spans[j].fit[0][0] == w[i].a)))
				s = &t.spans[j];
		if (!s) {
			printf("#   %s: no span in %s\n", name, w[i].func);
			ok = 0;
			break;
		}
		if (s->cls != w[i].cls) {
			printf("#   %s: %s is %s, want %s (%s)\n", name, s->func,
			       xk_span_class_name(s->cls),
			       xk_span_class_name(w[i].cls), s->why);
			ok = 0;
		} else if (s->cls == XK_SPAN_UNSUPPORTED) {
			if (!strstr(s->why, w[i].why)) {
				printf("#   %s: reason '%s' lacks '%s'\n", name,
				       s->why, w[i].why);
				ok = 0;
			}
		} else if (!s->nr_params || s->fit[0][0] != w[i].a ||
			   s->fit[0][1] != w[i].b) {
			printf("#   %s: %s fit %lld*N%+lld, want %lld*N%+lld\n",
			       name, s->func, (long long)s->fit[0][0],
			       (long long)s->fit[0][1], w[i].a, w[i].b);
			ok = 0;
		} else if (s->probe <= s->start || !s->expect_len) {
			printf("#   %s: %s has no probe point\n", name, s->func);
			ok = 0;
		}
	}
	xk_scope_free(&t);
	return !ok;
}

#define EXPECT(cat, name, ...)                                              \
	static int name##_spans(void)                                       \
	{                                                                   \
		static const struct want w[] = { __VA_ARGS__ };             \
		return expect(cat, #name, w, sizeof(w) / sizeof(w[0]));      \
	}

/* golden: < becomes <= N-1; <= stays; folding */
EXPECT(GOLDEN, G_LT, { "golden_lt", XK_SPAN_FLAGS, 1, -1, NULL })
EXPECT(GOLDEN, G_LE, { "golden_le", XK_SPAN_FLAGS, 1, 0, NULL })
EXPECT(GOLDEN, G_FOLD, { "golden_fold", XK_SPAN_REGISTER, 4, 3, NULL })
/* x * 12 as lea and shl (13 as imul, 24 as lea and shl 3): no immediate
 * moves, but the region is a product of rdi: the multiply form, emulated */
EXPECT(GOLDEN, G_SCALE, { "golden_scale", XK_SPAN_REGISTER, 1, 0, NULL })
EXPECT(GOLDEN, G_TWICE, { "golden_twice_a", XK_SPAN_REGISTER, 1, 0, NULL },
			{ "golden_twice_b", XK_SPAN_FLAGS, 1, 0, NULL })
EXPECT(GOLDEN, G_STORE, { "golden_store", XK_SPAN_MEMORY, 1, 0, NULL })
/* o->limit += N: `add $N, 4(%rdi)` read-modify-writes memory; emulated,
 * the old value read where the span starts */
EXPECT(GOLDEN, G_RMW, { "golden_rmw", XK_SPAN_MEMORY, 1, 0, NULL })
/* golden_fill(arr, arr + N, x): `lea N(%rsp), %rsi` fits a*N+b, but a stack
 * address moved by the constant is refused (past the object, or, for an
 * array sized by it, below rsp: the frame is the compiled one) */
static int G_STACK_spans(void)
{
	static const struct want w[] = {
		{ "golden_stack", XK_SPAN_UNSUPPORTED, 0, 0,
		  "a stack address that moves with the constant" },
	};
	struct xk_scope t;
	int err;

	/* the first analysis refuses it ... */
	gen_replay_off = true;
	err = expect(GOLDEN, "G_STACK", w, 1);
	gen_replay_off = false;
	CHECK(!err);
	/* ... and the replayed form takes it: each build's own lea runs (the
	 * frame is the same in every build: only that region differs) */
	CHECK(gen(GOLDEN, "G_STACK", &t) == 0);
	CHECK(t.nr_spans >= 1);
	for (int i = 0; i < t.nr_spans; i++)
		CHECK(t.spans[i].cls != XK_SPAN_UNSUPPORTED &&
		      t.spans[i].emulate == XK_EMULATE_REPLAY &&
		      t.spans[i].nr_replays >= 2);
	xk_scope_free(&t);
	return 0;
}
/*
 * Uses no instruction byte shows (lib/analysis/forms/variables.c). golden_table[N]
 * is `mov golden_table+4N(%rip)`: the same bytes at every value, only the
 * relocation's addend moves (in golden_addr, and in golden_addr_sum next
 * to a compare with N that is a span). golden_initial_limit = N is data, no code.
 * Either way the use would keep the compiled value: refused, named.
 */
static int G_ADDR_spans(void)
{
	struct xk_scope t;
	int addr = 0, sum = 0;

	CHECK(gen(GOLDEN, "G_ADDR", &t) == 0);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *sp = &t.spans[i];
		bool named = sp->cls == XK_SPAN_UNSUPPORTED &&
			     strstr(sp->why, "refers to golden_table+20, to ");

		/* the same bytes at every value: the data pass */
		addr += !strcmp(sp->func, "golden_addr") && named;
		/* a function whose compare moves too (x > N, a span): the
		 * diff's aligned load, its addend moved */
		sum += !strcmp(sp->func, "golden_addr_sum") && named;
	}
	xk_scope_free(&t);
	CHECK(addr == 1 && sum == 1);
	return 0;
}
/* How many of t's refused spans are in func (NULL: any) and give a reason
 * that holds text. */
static int refused_with(const struct xk_scope *t, const char *func, const char *text)
{
	int n = 0;

	for (int i = 0; i < t->nr_spans; i++)
		n += t->spans[i].cls == XK_SPAN_UNSUPPORTED &&
		     (!func || !strcmp(t->spans[i].func, func)) &&
		     strstr(t->spans[i].why, text);
	return n;
}
/* The one span of a golden constant: in function func (a prefix: gcc's
 * .isra and .constprop suffixes), of class cls, in *sp. */
static int one_span(const char *name, const char *func, int cls,
		    struct xk_scope *t, const struct xk_scope_span **sp)
{
	CHECK(gen(GOLDEN, name, t) == 0);
	CHECK(t->nr_spans == 1);
	*sp = &t->spans[0];
	CHECK(!strncmp((*sp)->func, func, strlen(func)) && (int)(*sp)->cls == cls);
	return 0;
}
/* a module parameter's initial value: the variable is written (class
 * data, its field the whole int, field = N) */
static int G_INIT_spans(void)
{
	struct xk_scope t;
	const struct xk_scope_span *sp;

	CHECK(one_span("G_INIT", "golden_initial_limit", XK_SPAN_DATA, &t, &sp) == 0);
	CHECK(sp->emulate == XK_EMULATE_DATA && sp->start == 0 && sp->probe == 4);
	CHECK(sp->fit[0][0] == 1 && sp->fit[0][1] == 0 && sp->nr_imms == 1);
	/* the compiled-in bytes: 300 */
	CHECK(sp->expect[0] == 0x2c && sp->expect[1] == 0x01 && !sp->expect[2]);
	xk_scope_free(&t);
	return 0;
}
/* a variable the code counts down is state, not a setting */
EXPECT(GOLDEN, G_BUDGET, { "golden_budget", XK_SPAN_UNSUPPORTED, 0, 0,
			   "golden_budget+0x0 is initialised by the constant, but "
			   "golden_spend+0x" })
/* a sysctl's variable: its handler's stores (proc_dointvec, then the
 * constant when 0 was written) are the administrator's, so the variable is
 * written (class data) and the handler's immediate retuned */
EXPECT(GOLDEN, G_SYSCTL, { "golden_sysctl_limit", XK_SPAN_DATA, 1, 0, NULL },
			 { "golden_sysctl_handler", XK_SPAN_MEMORY, 1, 0, NULL })
/* an immediate stored over the variable by other code: state, refused (the
 * store's relocation is its displacement's, no address taken) */
EXPECT(GOLDEN, G_RESET, { "golden_reset_level", XK_SPAN_UNSUPPORTED, 0, 0,
			  "golden_reset+0xb mov dword ptr [rip], 1 stores to it" })
/* a value live across a static_cpu_has() site (jmp .altinstr_aux): once
 * alternatives ran the site falls through or jumps to its t_no label, so
 * the safe span follows both paths to their returns; the site was taken
 * for a return before, and the span ended there with the value live */
static int G_ALT_spans(void)
{
	struct xk_scope t;
	const struct xk_scope_span *sp;

	CHECK(one_span("G_ALT", "golden_alt", XK_SPAN_REGISTER, &t, &sp) == 0);
	CHECK(sp->slice_len == 4 && sp->nr_exits == 2);
	/* the two return thunks, after the xor and after the sub */
	CHECK(sp->exits[0] == 0x1e && sp->exits[1] == 0x28);
	xk_scope_free(&t);
	return 0;
}
/* a value live across a user access (unsafe_put_user): a fault resumes at
 * efault, a block only the exception table reaches; the safe span follows
 * that edge to its return (+0x35), which it missed before */
static int G_FAULT_spans(void)
{
	struct xk_scope t;
	const struct xk_scope_span *sp;

	CHECK(one_span("G_FAULT", "golden_fault", XK_SPAN_REGISTER, &t, &sp) == 0);
	CHECK(sp->slice_len == 2 && sp->nr_exits == 3);
	CHECK(sp->exits[0] == 0x2a && sp->exits[1] == 0x35 && sp->exits[2] == 0x3f);
	xk_scope_free(&t);
	return 0;
}
/* a value live into an alternative's site (X86_FEATURE_ALWAYS: the kernel
 * puts the replacement there at load): the probe sits on the span's last
 * instruction (post), and the site's bytes after it are not compared; the
 * object's mov was compared before, and the module refused the live lea */
static int G_ALTI_spans(void)
{
	struct xk_scope t;
	const struct xk_scope_span *sp;
	uint64_t site = 0;
	unsigned int len = 0;
	struct xk_obj o;
	struct xk_sym *f;

	CHECK(one_span("G_ALTI", "golden_alti", XK_SPAN_REGISTER, &t, &sp) == 0);
	CHECK(sp->post_len == 3 && sp->probe - sp->start == 3);
	CHECK(sp->expect_mask[0] == 0xff && sp->expect_mask[2] == 0xff);
	for (uint32_t i = 3; i < sp->expect_len; i++)
		CHECK(sp->expect_mask[i] == 0);
	CHECK(xk_rule_check_expect(sp->expect_mask, sp->expect_len, sp->start,
				   sp->probe, sp->post_len) == NULL);
	/* without post, the rule refuses the uncompared probed instruction */
	CHECK(xk_rule_check_expect(sp->expect_mask, sp->expect_len, sp->start,
				   sp->probe, 0) != NULL);
	/* the object's site: 4 bytes (mov %eax,%eax and the padding NOPs) */
	CHECK(xk_obj_open(&o, "tests/fixtures/golden/xk_golden.o") == 0);
	f = xk_obj_find_func(&o, "golden_alti", NULL);
	CHECK(f && (len = xk_alternative_at(&o, f, sp->probe, &site)) == 4);
	CHECK(site == sp->probe && !xk_alternative_at(&o, f, sp->start, NULL));
	xk_obj_close(&o);
	xk_scope_free(&t);
	return 0;
}
/* live across an alternative whose replacement reads another register:
 * the slice reads the object's mov, the kernel runs the other; refused
 * naming the site (it was taken for the object's mov before) */
EXPECT(GOLDEN, G_ALTX, { "golden_altx", XK_SPAN_UNSUPPORTED, 0, 0,
			 "+0xe mov edi, eax: an alternative's site with derived data "
			 "live, and its replacement reads registers the site does not" })
/* a value live across a static branch (a jump-label NOP): the kernel
 * patches the site into a jump to the key's return when the key is
 * enabled, so the safe span follows that way too; the site was taken for
 * a NOP before, and the span missed the return after the xor */
static int G_JL_spans(void)
{
	struct xk_scope t;
	const struct xk_scope_span *sp;

	CHECK(one_span("G_JL", "golden_jl", XK_SPAN_REGISTER, &t, &sp) == 0);
	CHECK(sp->nr_exits == 2);
	/* the return thunks after the imul and after the key's lea */
	CHECK(sp->exits[0] == 0x13 && sp->exits[1] == 0x23);
	xk_scope_free(&t);
	return 0;
}
/* imul $N, (%rdi,%rsi,4), %eax: a memory input with an index register,
 * read by the runtime as the CPU did ([rdi + rsi * 4]); refused as "memory
 * read in the span" before. The table's text keeps it (written, read), as
 * format version 2: a version-1 table with an index is refused (a reader
 * of version 1 only would drop the index). */
static int G_IDX_spans(void)
{
	struct xk_scope t, back;
	const struct xk_scope_span *sp;
	char path[] = "/tmp/xk-test-idx-XXXXXX";
	int fd = mkstemp(path);
	char *text;

	CHECK(fd >= 0);
	close(fd);
	CHECK(one_span("G_IDX", "golden_idx", XK_SPAN_REGISTER, &t, &sp) == 0);
	CHECK(sp->nr_mem_in == 1 && sp->mem_in[0].base == XK_RDI &&
	      sp->mem_in[0].disp == 0 && sp->mem_in[0].width == 32 &&
	      sp->mem_in[0].index == XK_RSI && sp->mem_in[0].scale == 4);
	CHECK(xk_scope_write(&t, path) == 0 && xk_scope_read(path, &back) == 0);
	CHECK(back.nr_spans == 1 && back.spans[0].nr_mem_in == 1 &&
	      back.spans[0].mem_in[0].index == XK_RSI &&
	      back.spans[0].mem_in[0].scale == 4);
	xk_scope_free(&back);
	CHECK(xk_read_file(path, &text, NULL) == 0);
	CHECK(!strncmp(text, "xkernel-scope-table 2\n", 22));
	text[20] = '1';
	CHECK(xk_write_file(path, text, strlen(text), 0644) == 0);
	free(text);
	CHECK(xk_scope_read(path, &back) == -EINVAL);
	CHECK(strstr(xk_last_error(), "INDEX SCALE"));
	unlink(path);
	xk_scope_free(&t);
	return 0;
}
/* imul $N, golden_rtab(%rdi), %eax: the displacement is the table's
 * address, which the linker fills in (0 in the object): a memory input
 * [rdi + 0] would read elsewhere, so the span is refused (it was accepted,
 * with that input, before) */
static int G_RTAB_spans(void)
{
	struct xk_scope t;
	const struct xk_scope_span *sp;

	CHECK(one_span("G_RTAB", "golden_rtab_of", XK_SPAN_UNSUPPORTED, &t, &sp) == 0);
	CHECK(strstr(sp->why, "memory read in the span"));
	xk_scope_free(&t);
	return 0;
}
/*
 * An array on the stack, long buf[N] (golden_stk): the frame moves with N
 * (`sub $F, %rsp`), which the module cannot rewrite: refused. (Keeping
 * the compiled-in frame for smaller values needs the value to change only
 * when no thread is in the function, in every mode, at unload and under
 * policies; see docs/design.md.) golden_stke's buf[N - 1] as well.
 */
static int G_STK_spans(void)
{
	struct xk_scope t;

	CHECK(gen(GOLDEN, "G_STK", &t) == 0);
	CHECK(t.nr_spans == 2 && xk_scope_nr_supported(&t) == 2);
	/* the compiled-in frame holds a smaller value's array only */
	CHECK(t.max == 32 && t.min == 1);
	CHECK(t.nr_notes == 1 && !strncmp(t.notes[0], "bounds: ", 8));
	CHECK(strstr(xk_scope_bounds_why(&t), "the constant sizes the frame of golden_stk"));
	/* the array is the call's state: each span holds the function, is
	 * never settled, and says so to the module */
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *sp = &t.spans[i];
		struct xk_ioc_span d;

		CHECK(sp->call_state && sp->nr_imms == 0);
		CHECK(sp->fit[0][0] == 1 && sp->fit[0][1] == 0);
		CHECK(sp->nr_ranges == 1 && sp->ranges[0][0] == 0 &&
		      sp->ranges[0][1] == sp->func_size && sp->nr_exits >= 1);
		xk_scope_span_to_ioc(sp, &d);
		CHECK(d.call_state == 1 && !xk_ioc_span_check(&d));
		d.ranges[0][0] = sp->start;	/* a safe span from the start: not one */
		CHECK(xk_ioc_span_check(&d) != NULL);
	}
	xk_scope_free(&t);
	/* buf[N - 1]: a slot of the frame that moves, an element or a
	 * variable after the array, which no rule tells apart */
	CHECK(gen(GOLDEN, "G_STKE", &t) == 0);
	CHECK(xk_scope_nr_supported(&t) < t.nr_spans);
	CHECK(refused_with(&t, NULL, "rsp + 0xf8") >= 1);
	xk_scope_free(&t);
	/* buf[N] filled by a callee: its span is ordinary, and nothing in
	 * the caller would keep one value for the whole call */
	CHECK(gen(GOLDEN, "G_STKC", &t) == 0);
	CHECK(refused_with(&t, "golden_stkc", "no span of its own") == 1);
	xk_scope_free(&t);
	return 0;
}
/* golden_sized[N] and its loop's bound: the loop is a span, the array a
 * refused use that refuses every other value, --partial or not */
static int G_SIZE_spans(void)
{
	struct xk_scope t;
	int loop = 0, sized = 0;

	CHECK(gen(GOLDEN, "G_SIZE", &t) == 0);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *sp = &t.spans[i];

		if (!strcmp(sp->func, "golden_size") && sp->cls == XK_SPAN_FLAGS)
			loop++;
		if (!strcmp(sp->func, "golden_sized") &&
		    sp->cls == XK_SPAN_UNSUPPORTED &&
		    !strncmp(sp->why, XK_WHY_SIZED "golden_sized depends on the "
			     "constant (32 bytes; 36 with N=9)",
			     strlen(XK_WHY_SIZED "golden_sized depends on the "
				    "constant (32 bytes; 36 with N=9)")))
			sized++;
	}
	xk_scope_free(&t);
	CHECK(loop == 1 && sized == 1);
	return 0;
}
/*
 * x / 7: a multiply by 0x92492493 and `sar $2`. The fit builds (8: a
 * shift, no multiply; 9: another multiplier) change code outside any span,
 * but the builds with 14, 28 and 56 share the multiplier and move only the
 * shift: analysed by shape, the function is one per-value span with a
 * point at each of them (the first analysis' refusal is gone).
 */
static int division_is_per_value_by_shape(void)
{
	struct xk_scope t;

	CHECK(gen(GOLDEN, "G_DIV", &t) == 0);
	CHECK(t.nr_spans == 1);
	const struct xk_scope_span *s = &t.spans[0];

	CHECK(!strcmp(s->func, "golden_div") && s->cls != XK_SPAN_UNSUPPORTED);
	CHECK(s->emulate && s->nr_points == 4);
	for (int i = 0; i < 4; i++)
		CHECK(s->points[i].n == 7 << i && s->points[i].p[0] == 2 + i);
	xk_scope_free(&t);
	return 0;
}

/*
 * (x / 7) * y + x % 7: every build, 14, 28 and 56 too, has other
 * instructions than the baseline, no product of a register and no shape
 * of the baseline's. The builds differ in one straight-line region, but
 * only the build with 8 (shifts and a mask) replays it on its own: the
 * merged regions of every value held what none replays, so the constant
 * was refused. Now the span is replayed with 8 prepared, and the other
 * values are refused by name when set.
 */
/*
 * A value passed on to a tail call (mov $N, %esi; jmp to another function
 * of the object, which the assembler resolved: no relocation) is read by
 * the callee whole: the module writes all 64 bits of rsi, not the low byte
 * that the function's own code (which reads none of it) would suggest.
 */
static int tail_call_argument_is_written_whole(void)
{
	struct xk_scope t;

	CHECK(gen(GOLDEN, "G_TAILW", &t) == 0);
	CHECK(t.nr_spans == 1);
	CHECK(!strcmp(t.spans[0].func, "golden_tailw"));
	CHECK(t.spans[0].cls == XK_SPAN_REGISTER);
	CHECK(t.spans[0].nr_locs == 1 && t.spans[0].locs[0].kind == XK_RSI);
	CHECK(t.spans[0].locs[0].width == 64);
	xk_scope_free(&t);
	return 0;
}

/*
 * add $N, %rdi; mov $1, %eax; cmovne %rdi, %rax: the cmov tests the add's
 * zero flag two instructions later. The model knows no add's flags, so
 * the span is refused by name; rewriting rdi alone would leave the test
 * on the compiled-in sum.
 */
static int flags_of_an_add_tested_later_are_refused(void)
{
	struct xk_scope t;

	CHECK(gen(GOLDEN, "G_ADDF", &t) == 0);
	CHECK(t.nr_spans == 1);
	CHECK(!strcmp(t.spans[0].func, "golden_addf"));
	CHECK(t.spans[0].cls == XK_SPAN_UNSUPPORTED);
	CHECK(strstr(t.spans[0].why, "depend on the constant and are tested "
		     "after it, and the model does not know them"));
	xk_scope_free(&t);
	return 0;
}

/*
 * A function only the check build changes (G_CHKONLY: x + 1 up to 127,
 * x * 3 from 128): no seed shows it, so the first pass refuses it by name
 * and the replayed form takes it, with the check build's code among its
 * values; passed over, the table had no span and a retune to 200 ran x + 1.
 */
static int code_only_the_check_build_changes_is_replayed(void)
{
	const struct xk_scope_replay *r;
	struct xk_scope t;
	int err;

	/* the first pass: the check-build-only form refuses it by name */
	gen_replay_off = true;
	err = gen(GOLDEN, "G_CHKONLY", &t);
	gen_replay_off = false;
	CHECK(err == 0);
	CHECK(t.nr_spans == 1);
	CHECK(t.spans[0].cls == XK_SPAN_UNSUPPORTED);
	CHECK(strstr(t.spans[0].why, "golden_chkonly differs from the baseline "
		     "only in the check build"));
	xk_scope_free(&t);
	CHECK(gen(GOLDEN, "G_CHKONLY", &t) == 0);
	CHECK(t.nr_spans == 1);
	CHECK(!strcmp(t.spans[0].func, "golden_chkonly"));
	CHECK(t.spans[0].cls != XK_SPAN_UNSUPPORTED);
	CHECK(t.spans[0].emulate == XK_EMULATE_REPLAY);
	r = xk_scope_replay_of(&t.spans[0], 200);
	CHECK(r != NULL);
	CHECK(xk_scope_replay_of(&t.spans[0], 112) != NULL);
	xk_scope_free(&t);
	return 0;
}

/*
 * G_COLD: x * N live at a js into another function (as into a .cold
 * part): the thread leaves the safe span's ranges holding derived data,
 * so the span is refused by name; followed as fall-through only, it was
 * supported.
 */
static int jump_out_with_derived_data_is_refused(void)
{
	struct xk_scope t;

	CHECK(gen(GOLDEN, "G_COLD", &t) == 0);
	CHECK(t.nr_spans == 1);
	CHECK(!strcmp(t.spans[0].func, "golden_cold"));
	CHECK(t.spans[0].cls == XK_SPAN_UNSUPPORTED);
	CHECK(strstr(t.spans[0].why, "a conditional jump out of the function"));
	xk_scope_free(&t);
	return 0;
}

static int remainder_changes_code_outside_its_spans(void)
{
	struct xk_scope t;

	CHECK(gen(GOLDEN, "G_MOD", &t) == 0);
	CHECK(t.nr_spans == 1);
	CHECK(!strncmp(t.spans[0].func, "golden_mod", 10));
	CHECK(t.spans[0].cls != XK_SPAN_UNSUPPORTED);
	CHECK(t.spans[0].emulate == XK_EMULATE_REPLAY);
	CHECK(t.spans[0].nr_replays == 1 && t.spans[0].replays[0].n == 8);
	xk_scope_free(&t);
	return 0;
}
EXPECT(GOLDEN, G_INLINE, { "golden_inl_a", XK_SPAN_REGISTER, 1, 0, NULL },
			 { "golden_inl_b", XK_SPAN_REGISTER, 1, 0, NULL })
EXPECT(GOLDEN, G_HOLD, { "golden_hold", XK_SPAN_REGISTER, 1, 0, NULL })
/* used before and after a sleep: two spans, both in the inverse form */
EXPECT(GOLDEN, G_PT, { "golden_pertask", XK_SPAN_REGISTER, 1, 0, NULL },
		     { "golden_pertask", XK_SPAN_REGISTER, 1, 0, NULL })
/* before and after a recursive call (golden_rec) and a deep call chain
 * (golden_deep): the transition tests' spans, 1*N and 1000*N */
EXPECT(GOLDEN, G_REC, { "golden_deep", XK_SPAN_REGISTER, 1, 0, NULL },
		      { "golden_deep", XK_SPAN_REGISTER, 1000, 0, NULL },
		      { "golden_rec", XK_SPAN_REGISTER, 1, 0, NULL },
		      { "golden_rec", XK_SPAN_REGISTER, 1000, 0, NULL })
/* in s_start(), a name that static functions of the kernel have too */
EXPECT(GOLDEN, G_DUP, { "s_start", XK_SPAN_REGISTER, 1, 0, NULL })
/* a static const variable: max(x, V) - V, one span per seed (a split
 * is preferred to emulating the group: those probes can be optimized) */
EXPECT(GOLDEN, G_VAR, { "golden_var", XK_SPAN_REGISTER, 1, 0, NULL },
		      { "golden_var", XK_SPAN_REGISTER, -1, 0, NULL })

/* a cap of the analysis refuses the span and names itself, never cuts it
 * (replayed, the function needs no slice: the form is off here) */
static int G_SPILL_spans(void)
{
	static const struct want w[] = {
		{ "golden_spill", XK_SPAN_UNSUPPORTED, 0, 0,
		  "derived data in more than 16 stack slots" },
	};
	int err;

	gen_replay_off = true;
	err = expect(GOLDEN, "G_SPILL", w, 1);
	gen_replay_off = false;
	return err;
}

static int exits_cap_is_named(void)
{
	static const struct want w[] = {
		{ "golden_lt", XK_SPAN_UNSUPPORTED, 0, 0,
		  "exits, more than the 0 a table may hold" },
	};
	int save = df_limits.exits, err;

	df_limits.exits = 0;
	err = expect(GOLDEN, "G_LT", w, 1);
	df_limits.exits = save;
	return err;
}

static int expression_pool_cap_is_named(void)
{
	static const struct want w[] = {
		{ "golden_fold", XK_SPAN_UNSUPPORTED, 0, 0,
		  "more expression nodes than the model's pool holds" },
	};
	size_t save = sx_pool_nodes;
	int err;

	/* the registers' leaves take 16 nodes: no instruction fits */
	sx_pool_nodes = 16 + SX_STEP_MAX_NODES - 1;
	err = expect(GOLDEN, "G_FOLD", w, 1);
	sx_pool_nodes = save;
	return err;
}

/* the stock Debian kernel */
EXPECT(STOCK, BLK_MAX_REQUEST_COUNT,
       { "blk_add_rq_to_plug", XK_SPAN_REGISTER, -1, 0, NULL },
       { "blk_start_plug_nr_ios", XK_SPAN_REGISTER, 1, 0, NULL })
EXPECT(STOCK, MAX_SOFTIRQ_RESTART, { "handle_softirqs", XK_SPAN_REGISTER, 1, 0, NULL })
EXPECT(STOCK, MAX_SOFTIRQ_TIME, { "handle_softirqs", XK_SPAN_REGISTER, 1, 0, NULL })
EXPECT(STOCK, SHRINK_BATCH, { "do_shrink_slab", XK_SPAN_REGISTER, 1, 0, NULL })
EXPECT(STOCK, HYSTART_MIN_SAMPLES, { "cubictcp_acked", XK_SPAN_FLAGS, 1, -1, NULL })
EXPECT(STOCK, HYSTART_DELAY_MIN, { "cubictcp_acked", XK_SPAN_REGISTER, 1, 0, NULL })
EXPECT(STOCK, HYSTART_DELAY_MAX, { "cubictcp_acked", XK_SPAN_REGISTER, 1, 0, NULL })
EXPECT(STOCK, TCP_BACKLOG_SLACK, { "tcp_add_backlog", XK_SPAN_REGISTER, 1, 0, NULL })

/*
 * A compare of memory with the constant (cmpl $N-1, 0x2c(%r12); ja): the
 * memory is an input of the program, read at the probe point, and the
 * flags follow it: below, at and above the compiled-in threshold.
 */
/*
 * find_lock_lowest_rq sets its retry count among the prologue's pushes:
 * `push %r13; mov $3,%r13d; push %r12; mov $runqueues,%r12`. One build
 * schedules the two moves the other way round, so the diff pairs `mov
 * $3,%r13d` with `mov $runqueues,%r12`: a pair whose relocations differ
 * is no seed even when its text differs too (it used to be one, with the
 * address's 0 as the value). The function is replayed instead, in full:
 * each build's own moves run.
 */
static int rt_tries_pairs_no_address_with_a_value(void)
{
	struct xk_scope t;
	int replayed = 0;

	CHECK(gen(STOCK, "RT_MAX_TRIES", &t) == 0);
	for (int i = 0; i < t.nr_spans; i++)
		replayed += !strcmp(t.spans[i].func, "find_lock_lowest_rq") &&
			    t.spans[i].emulate == XK_EMULATE_REPLAY &&
			    t.spans[i].cls != XK_SPAN_UNSUPPORTED;
	CHECK(xk_scope_nr_supported(&t) == t.nr_spans);
	xk_scope_free(&t);
	CHECK(replayed == 1);
	return 0;
}

static int plug_flush_reads_memory(void)
{
	struct xk_scope t;
	__u64 in[XK_NR_INPUTS] = { 0 };
	const struct xk_scope_span *s;

	CHECK(gen(STOCK, "BLK_PLUG_FLUSH_SIZE", &t) == 0);
	CHECK(t.nr_spans == 1);
	s = &t.spans[0];
	CHECK(s->cls == XK_SPAN_FLAGS && !strcmp(s->func, "blk_add_rq_to_plug"));
	CHECK(s->nr_mem_in == 1 && s->mem_in[0].base == XK_R12 &&
	      s->mem_in[0].disp == 0x2c && s->mem_in[0].width == 32);
	/* ja taken (CF = ZF = 0) exactly when the size is >= N */
	for (int64_t n = 4096; n <= 262144; n *= 2) {
		for (int64_t d = -1; d <= 1; d++) {
			__u64 fl;

			in[XK_NR_REGS] = (__u64)(n + d);
			fl = xk_expr_eval(&s->locs[0].expr, in, n);
			CHECK(!(fl & (XK_EFLAGS_CF | XK_EFLAGS_ZF)) == (n + d >= n));
		}
	}
	xk_scope_free(&t);
	return 0;
}

/*
 * io_uring_setup's clamp, `entries = IORING_MAX_ENTRIES` (mov $N,%ebx at
 * +0x8f), joins the unclamped path at +0x94: the rewrite probe sits on the
 * mov itself (post_len 5), never optimized, never settled, and the table
 * passes the module's rules; the other spans keep their probe points.
 */
static int io_uring_clamp_is_probed_on_its_instruction(void)
{
	struct xk_scope t;
	int post = 0;

	CHECK(gen(STOCK, "IORING_MAX_ENTRIES", &t) == 0);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *s = &t.spans[i];

		CHECK(s->cls != XK_SPAN_UNSUPPORTED);
		if (!s->post_len)
			continue;
		post++;
		CHECK(!strcmp(s->func, "io_uring_setup"));
		CHECK(s->start == 0x8f && s->probe == 0x94 && s->post_len == 5);
		CHECK(s->expect[0] == 0xbb);	/* mov $imm32, %ebx */
		CHECK(!s->optimizable && s->nr_imms == 0);
		CHECK(s->nr_params == 1 && s->fit[0][0] == 1 && s->fit[0][1] == 0);
	}
	CHECK(post == 1);
	xk_scope_free(&t);
	return 0;
}

/* The point of a per-value span at n: its parameters, or NULL. */
static const __s64 *point_at(const struct xk_scope_span *s, long long n)
{
	for (int j = 0; j < s->nr_points; j++)
		if (s->points[j].n == n)
			return s->points[j].p;
	return NULL;
}

/*
 * The per-value form: BLK_MQ_DISPATCH_BUSY_EWMA_FACTOR's immediate is
 * 1 << N (`add $0x10` at 4), no a*N+b. Each span takes its parameters per
 * value from the builds (the default's and the variants' as points); a
 * new value is built and checked (xk_gen_point), and a value whose build
 * has another instruction form is refused, naming the instruction, with
 * the table unchanged. The program run with a point's parameters is what
 * that build computes.
 */
static int ewma_factor_is_per_value(void)
{
	struct xk_constant c;
	struct xk_scope t;
	__u64 regs[XK_NR_INPUTS] = { 0 };
	int added = -1, n_before[2] = { 0 }, nr = 0;

	CHECK(gen(STOCK, "BLK_MQ_DISPATCH_BUSY_EWMA_FACTOR", &t) == 0);
	CHECK(t.nr_spans == 2);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *s = &t.spans[i];

		CHECK(s->cls != XK_SPAN_UNSUPPORTED && s->nr_points >= 2);
		CHECK(s->nr_imms == 0);		/* never settled */
		CHECK(point_at(s, 4) && point_at(s, 4)[0] == 16);
		CHECK(point_at(s, 5) && point_at(s, 5)[0] == 32);
		CHECK(s->fit[0][0] == 0 && s->fit[0][1] == 16);
		n_before[i] = s->nr_points;
	}
	CHECK(xk_constant_resolve(STOCK, "BLK_MQ_DISPATCH_BUSY_EWMA_FACTOR", &c) == 0);
	/* 3: the same form, 1 << 3 */
	CHECK(xk_gen_point(&kernel, &c, &t, 3, &added) == 0);
	CHECK(added == 2);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *s = &t.spans[i];
		const __s64 *p3 = point_at(s, 3);
		__u64 at3, at4;

		CHECK(p3 && p3[0] == 8 && s->nr_points == n_before[i] + 1);
		for (int l = 0; l < s->nr_locs; l++) {
			if (s->locs[l].kind == XK_LOC_FLAGS)
				continue;
			at3 = xk_expr_eval_pv(&s->locs[l].expr, regs, 3, p3);
			at4 = xk_expr_eval_pv(&s->locs[l].expr, regs, 4,
					      point_at(s, 4));
			CHECK(at3 != at4);
			nr++;
		}
	}
	CHECK(nr > 0);
	/* already there: nothing built */
	CHECK(xk_gen_point(&kernel, &c, &t, 3, &added) == 0 && added == 0);
	/* 7: another instruction form, refused by name; nothing added */
	CHECK(xk_gen_point(&kernel, &c, &t, 7, &added) == -ENOTSUP);
	CHECK(strstr(xk_last_error(), "per-value form") &&
	      strstr(xk_last_error(), "where the baseline has"));
	for (int i = 0; i < t.nr_spans; i++)
		CHECK(!point_at(&t.spans[i], 7) &&
		      t.spans[i].nr_points == n_before[i] + 1);
	/* out of bounds before anything is built */
	CHECK(xk_gen_point(&kernel, &c, &t, 1000, &added) == -ERANGE);
	xk_scope_free(&t);
	return 0;
}

/*
 * The replayed form: kyber_depth_updated() and kyber_init_hctx() compute
 * nr_requests * 75 / 100 with two leas and a magic multiply, with other
 * registers and another schedule at every other value: refused without
 * the form; with it, every span is replayed at two values at least, none
 * settleable, every replay one the module's rules take. A new value (50)
 * gets a replay in every span from its build (xk_gen_point), the table's
 * others unchanged; a value out of bounds is refused before any build.
 */
static int kyber_percent_is_replayed(void)
{
	struct xk_constant c;
	struct xk_scope t;
	int added = -1, before[XK_MAX_SPANS];

	gen_replay_off = true;
	CHECK(gen(STOCK, "KYBER_ASYNC_PERCENT", &t) == 0);
	gen_replay_off = false;
	CHECK(xk_scope_nr_supported(&t) == 0);
	xk_scope_free(&t);
	CHECK(gen(STOCK, "KYBER_ASYNC_PERCENT", &t) == 0);
	CHECK(t.nr_spans >= 2 && t.nr_spans <= XK_MAX_SPANS);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *s = &t.spans[i];

		CHECK(s->cls != XK_SPAN_UNSUPPORTED && s->emulate == XK_EMULATE_REPLAY);
		CHECK(s->nr_replays >= 2 && !s->nr_imms && !s->nr_locs);
		CHECK(s->nr_ranges == 1 && s->ranges[0][0] == 0 &&
		      s->ranges[0][1] == s->func_size && s->nr_exits >= 1);
		CHECK(!xk_scope_replay_of(s, 50) && !xk_scope_replay_of(s, 75));
		before[i] = s->nr_replays;
	}
	CHECK(xk_constant_resolve(STOCK, "KYBER_ASYNC_PERCENT", &c) == 0);
	CHECK(xk_gen_point(&kernel, &c, &t, 50, &added) == 0);
	CHECK(added == t.nr_spans);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_replay *r = xk_scope_replay_of(&t.spans[i], 50);
		struct xk_ioc_replay d;

		CHECK(r && t.spans[i].nr_replays == before[i] + 1);
		xk_scope_replay_to_ioc(r, &d);
		CHECK(!xk_ioc_replay_check(&d));
	}
	CHECK(xk_gen_point(&kernel, &c, &t, 50, &added) == 0 && added == 0);
	CHECK(xk_gen_point(&kernel, &c, &t, 1000, &added) == -ERANGE);
	xk_scope_free(&t);
	return 0;
}

/*
 * The emulated form: bbr_rate_bytes_per_sec() scales the rate in place,
 * `imul $990000, %rax, %rax` (100 - N percent of USEC_PER_SEC / 100): no
 * probe after it can recompute the product, so each copy is emulated from
 * the imul itself (the module's rule accepts the skipped bytes), never
 * optimized or settled, and computes what a build with N computes.
 */
static int bbr_margin_is_emulated(void)
{
	__u64 regs[XK_NR_INPUTS] = { 0 };
	struct xk_scope t;
	int nr = 0;

	CHECK(gen(STOCK, "BBR_PACING_MARGIN_PERCENT", &t) == 0);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *s = &t.spans[i];
		struct xk_ioc_span d;

		CHECK(s->cls == XK_SPAN_REGISTER && !strncmp(s->func, "tcp_bbr:", 8));
		if (!s->emulate)
			continue;
		nr++;
		CHECK(!s->optimizable && s->nr_imms == 0 && s->post_len == 0);
		CHECK(s->fit[0][0] == -10000 && s->fit[0][1] == 1000000);
		CHECK(s->expect[0] == 0x48 && s->expect[1] == 0x69);	/* imul */
		xk_scope_span_to_ioc(s, &d);
		CHECK(d.emulate == 1 && !xk_ioc_span_check(&d));
		regs[s->locs[0].kind] = 3;
		regs[XK_RAX] = regs[XK_RSI] = 3;
		CHECK(xk_expr_eval(&s->locs[0].expr, regs, 20) == 3 * 800000);
	}
	CHECK(nr == t.nr_spans && nr >= 3);
	xk_scope_free(&t);
	return 0;
}

/*
 * An emulated span whose first byte is an exit of a safe span of the same
 * constant: the loop of memcg_rstat_updated() (in __mod_memcg_lruvec_state
 * and two others) computes `shl $6, %ecx` (MEMCG_CHARGE_BATCH *
 * num_online_cpus()), emulated per value, and the next turn of the loop
 * reaches that shl again: an exit of the span's own safe span. The
 * module's rewrite handler takes such an exit (kmod/xk_probe.c, exits_at),
 * so the table is whole; an exit later in the emulated bytes stays refused.
 */
static int memcg_batch_exits_at_emulated_start(void)
{
	struct xk_scope t;
	int nr = 0;

	CHECK(gen(STOCK, "MEMCG_CHARGE_BATCH", &t) == 0);
	CHECK(xk_scope_nr_supported(&t) == t.nr_spans);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *e = &t.spans[i];
		bool at_start = false;

		if (!e->emulate || e->emulate == XK_EMULATE_DATA)
			continue;
		for (int j = 0; j < t.nr_spans; j++) {
			const struct xk_scope_span *s = &t.spans[j];

			if (strcmp(s->func, e->func))
				continue;
			for (int k = 0; k < s->nr_exits; k++) {
				CHECK(s->exits[k] == e->start || s->exits[k] <= e->start ||
				      s->exits[k] >= e->probe);
				at_start |= s->exits[k] == e->start;
			}
		}
		nr += at_start;
	}
	CHECK(nr >= 3);	/* __mod_memcg_lruvec_state, __mod_memcg_state, __count_memcg_events */
	xk_scope_free(&t);
	return 0;
}

/*
 * Boot-time code in which the constant only chose a boot message:
 * rcu_init() logs "Boot-time adjustment of ..." when qhimark or qovld
 * (2 * DEFAULT_RCU_QHIMARK) differ from their defaults, `cmp $10000,
 * %rsi; je` over `mov $fmt, %rdi; call _printk`. No span: a note names
 * the two compares. The variables the constant initialises are read again
 * at boot to derive state (qovld_calc = qovld, or 2 * qhimark): that
 * state keeps the compiled-in value whatever the variables hold later, so
 * both are refused, naming the derivation's loads and not the log's.
 * Boot-time code that computes with it (workqueue_init_early() passes
 * WQ_MAX_ACTIVE to alloc_workqueue) stays refused.
 */
static int boot_message_only_is_a_note(void)
{
	struct xk_scope t;

	CHECK(gen(STOCK, "DEFAULT_RCU_QHIMARK", &t) == 0);
	CHECK(t.nr_spans == 2 && xk_scope_nr_supported(&t) == 0);
	CHECK(refused_with(&t, "qhimark", "boot-time code reads it (rcu_init+0xa66 ") == 1);
	CHECK(refused_with(&t, "qovld", "boot-time code reads it (rcu_init+0xa5a ") == 1);
	CHECK(t.nr_notes == 1);
	CHECK(strstr(t.notes[0], "rcu_init (boot-time code, .init.text)"));
	CHECK(strstr(t.notes[0], "at +0x2b5, +0x2ea"));
	xk_scope_free(&t);
	CHECK(gen(STOCK, "WQ_MAX_ACTIVE", &t) == 0);
	CHECK(t.nr_notes == 0);
	CHECK(xk_scope_nr_supported(&t) == t.nr_spans - 1);
	CHECK(refused_with(&t, NULL, "workqueue_init_early is boot-time code") == 1);
	xk_scope_free(&t);
	return 0;
}

/*
 * Boot-time code in which the constant only armed deadlines: sched_init()
 * sets calc_load_update and each runqueue's to jiffies + LOAD_FREQ
 * (`mov jiffies(%rip), %rax; add $0x4e3, %rax; mov %rax, ...`), instants
 * that calc_global_load re-arms with the constant (its spans). A note,
 * not a span. Golden: G_BOOTDL (module init arms golden_deadline, "boot"
 * re-arms it) is a note; G_BOOTST (init stores another variable + N after
 * its first call: no variable it derives before) stays refused.
 */
static int boot_deadline_is_a_note(void)
{
	struct xk_scope t;

	CHECK(gen(STOCK, "LOAD_FREQ", &t) == 0);
	CHECK(t.nr_spans >= 5 && xk_scope_nr_supported(&t) == t.nr_spans);
	CHECK(t.nr_notes == 1);
	CHECK(strstr(t.notes[0], "sched_init (boot-time code, .init.text)"));
	CHECK(strstr(t.notes[0], "armed deadlines once (jiffies + N, stored)"));
	CHECK(strstr(t.notes[0], "at +0x1a0, +0x3e8"));
	xk_scope_free(&t);
	CHECK(gen(GOLDEN, "G_BOOTDL", &t) == 0);
	CHECK(t.nr_spans == 1 && xk_scope_nr_supported(&t) == 1);
	CHECK(t.nr_notes >= 1 && strstr(t.notes[0], "golden_init (boot-time code"));
	xk_scope_free(&t);
	CHECK(gen(GOLDEN, "G_BOOTST", &t) == 0);
	CHECK(xk_scope_nr_supported(&t) == 0);
	CHECK(refused_with(&t, NULL, "golden_init is boot-time code") == 1);
	xk_scope_free(&t);
	return 0;
}

/*
 * Heap objects sized in one call that records the size, the constant used
 * nowhere else: the allocation is a span after all, and every span of the
 * function is state of the call (its value changes only when no thread is
 * inside, so the object and what the call records agree), when it does
 * nothing with the value but compute, store it and pass it as the size.
 * Golden: G_HEAPREC (kvcalloc(N) and g->nr = N in golden_vec_init);
 * G_HEAPLAZY's table, allocated once and bounded by N in every call (also
 * G_HEAPCAP's, its fill count a variable the function writes; G_HEAPSPACE's,
 * the room N - used weighed, used a callee's index or this one's, G_HEAPROOM;
 * G_HEAPPASS's, a setting weighed
 * and passed to a callee), and G_HEAP's bound in another function stay
 * refused. Stock: SKB_FRAG_PAGE_ORDER
 * (alloc_pages(order) and pfrag->size in skb_page_frag_refill).
 */
static int heap_in_one_call_is_call_state(void)
{
	static const struct { const char *name, *func; } bounds[] = {
		/* a count the function writes, read again for a callee */
		{ "G_HEAPCAP", "golden_cap_add" },
		/* the room left, N - used, weighed against 0: used a
		 * callee's index, or the index here */
		{ "G_HEAPSPACE", "golden_space_put" },
		{ "G_HEAPROOM", "golden_room_put" },
		/* a setting weighed against N, then a callee's argument */
		{ "G_HEAPPASS", "golden_pass_put" },
	};
	struct xk_scope t;

	CHECK(gen(GOLDEN, "G_HEAPREC", &t) == 0);
	CHECK(t.nr_spans >= 2 && xk_scope_nr_supported(&t) == t.nr_spans);
	for (int i = 0; i < t.nr_spans; i++)
		CHECK(t.spans[i].call_state &&
		      !strcmp(t.spans[i].func, "golden_vec_init"));
	CHECK(t.max == 64);	/* a frame's bound is not lowered */
	xk_scope_free(&t);
	/* allocated once, bounded by the constant in every later call */
	CHECK(gen(GOLDEN, "G_HEAPLAZY", &t) == 0);
	CHECK(xk_scope_nr_supported(&t) < t.nr_spans);
	CHECK(refused_with(&t, "golden_lazy_get", XK_WHY_HEAP) >= 1);
	CHECK(refused_with(&t, "golden_lazy_get", "as one call: ") >= 1);
	/* the bound: what N is weighed against then indexes the table */
	CHECK(refused_with(&t, "golden_lazy_get", "what it then uses on an object") >= 1);
	xk_scope_free(&t);
	/* the same bound in other forms, each refused by its own guard */
	for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
		CHECK(gen(GOLDEN, bounds[i].name, &t) == 0);
		CHECK(xk_scope_nr_supported(&t) < t.nr_spans);
		CHECK(refused_with(&t, bounds[i].func,
				   "what it then uses on an object") >= 1);
		xk_scope_free(&t);
	}
	/* users of a macro a header names too are not all known: mmzone.h
	 * and others name PAGE_ALLOC_COSTLY_ORDER, only sock.h names
	 * SKB_FRAG_PAGE_ORDER */
	{
		struct xk_constant c;
		char hit[128] = "";

		CHECK(xk_constant_resolve(STOCK, "PAGE_ALLOC_COSTLY_ORDER", &c) == 0);
		CHECK(named_in_other_headers(&kernel, &c, hit, sizeof(hit)) == 1);
		CHECK(hit[0] && strstr(hit, ".h") && strcmp(hit, c.file));
		CHECK(xk_constant_resolve(STOCK, "SKB_FRAG_PAGE_ORDER", &c) == 0);
		CHECK(named_in_other_headers(&kernel, &c, hit, sizeof(hit)) == 0);
	}
	CHECK(gen(STOCK, "SKB_FRAG_PAGE_ORDER", &t) == 0);
	CHECK(t.nr_spans == 2 && xk_scope_nr_supported(&t) == 2);
	for (int i = 0; i < t.nr_spans; i++)
		CHECK(t.spans[i].call_state &&
		      !strcmp(t.spans[i].func, "skb_page_frag_refill"));
	xk_scope_free(&t);
	return 0;
}

/*
 * A heap object the call sizes, records and accounts: PIPE_MIN_DEF_BUFFERS
 * in alloc_pipe_info, the ring of a pipe whose user is over the soft
 * limit. The value is added to the user's total (lock xadd: a store of
 * what the call accounts; the register gets memory's old contents), the
 * total weighed against pipe_user_pages_hard (a limit loaded into a
 * register that nothing then uses on an object), the ring allocated
 * (kcalloc: its size through lea, arithmetic) and recorded. Both uses are
 * spans, state of the call.
 */
static int heap_call_accounted_is_call_state(void)
{
	struct xk_scope t;

	CHECK(gen(STOCK, "PIPE_MIN_DEF_BUFFERS", &t) == 0);
	CHECK(t.nr_spans == 2 && xk_scope_nr_supported(&t) == 2);
	for (int i = 0; i < t.nr_spans; i++)
		CHECK(t.spans[i].call_state &&
		      !strcmp(t.spans[i].func, "alloc_pipe_info"));
	xk_scope_free(&t);
	return 0;
}

/*
 * Read-only data the constant initialises is never written: each load of
 * it becomes a span, the loaded register rewritten after the load. Golden:
 * G_RO's golden_ro (static const volatile: the load stays) read in
 * golden_ro_read; G_ROA's address is returned, refused by name. Stock:
 * BFQ_TIMEOUT's `const int bfq_timeout = HZ / 8` is folded into
 * bfq_init_queue (a span of its own) and loaded by bfq_bfqq_charge_time
 * of another object of bfq.ko, found through the shipped module's
 * relocations (`movslq bfq_timeout(%rip), %rdi`).
 */
static int read_only_data_readers_are_spans(void)
{
	const struct xk_scope_span *sp;
	struct xk_scope t;
	int readers = 0;

	CHECK(one_span("G_RO", "golden_ro_read", XK_SPAN_REGISTER, &t, &sp) == 0);
	CHECK(sp->nr_params == 1 && sp->fit[0][0] == 1 && sp->fit[0][1] == 0);
	CHECK(sp->nr_imms == 0 && sp->emulate == 0 && sp->expect_mask[0] == 0xff);
	xk_scope_free(&t);
	CHECK(gen(GOLDEN, "G_ROA", &t) == 0);
	CHECK(xk_scope_nr_supported(&t) == 0);
	CHECK(refused_with(&t, "golden_roa_addr", "refers to golden_roa other "
			   "than by a load of the field") == 1);
	xk_scope_free(&t);
	CHECK(gen(STOCK, "BFQ_TIMEOUT", &t) == 0);
	CHECK(t.nr_spans >= 2 && xk_scope_nr_supported(&t) == t.nr_spans);
	for (int i = 0; i < t.nr_spans; i++)
		if (!strcmp(t.spans[i].func, "bfq:bfq_bfqq_charge_time")) {
			CHECK(!strcmp(t.spans[i].object, "block/bfq.ko"));
			CHECK(t.spans[i].cls == XK_SPAN_REGISTER &&
			      t.spans[i].fit[0][0] == 1);
			readers++;
		}
	CHECK(readers == 1);
	xk_scope_free(&t);
	return 0;
}

/*
 * A frame the constant sizes, whose check build above the fit has another
 * shape: FQ_GC_MAX's `void *tofree[FQ_GC_MAX]` of fq_gc, inlined into
 * fq_enqueue up to 10 and called from 11 on (the check build, 16, has no
 * such span). Its values never go above the default (bound_call_state),
 * so it is checked below, at 7 (gen_check_below): every span supported,
 * state of the call, bounded at 8. The 128-byte frame of 9 is `add rsp,
 * -0x80` where 8's is `sub rsp, 0x78`: one operation to the diff.
 */
static int frame_is_checked_below_the_default(void)
{
	struct xk_scope t;

	CHECK(gen(STOCK, "FQ_GC_MAX", &t) == 0);
	CHECK(t.nr_spans == 3 && xk_scope_nr_supported(&t) == 3);
	for (int i = 0; i < t.nr_spans; i++)
		CHECK(t.spans[i].call_state == XK_CALL_STATE_FRAME &&
		      !strcmp(t.spans[i].func, "sch_fq:fq_enqueue"));
	CHECK(t.max == 8);
	xk_scope_free(&t);
	return 0;
}

/*
 * A compare's immediate the compiler derived from the constant wraps at the
 * catalog's bounds: UTIL_EST_MARGIN's `diff < N` in util_est_update is
 * `cmp $N-1, %eax; ja`, and at N = 0 the immediate -1 turns "never" into
 * "always" (a build with 0 drops the compare). The bounds narrow to 1
 * (bound_wrapping_compares), with a note naming the span. The template
 * keeps the constant's long (an int build has another prologue).
 */
static int compare_immediates_do_not_wrap(void)
{
	struct xk_scope t;

	CHECK(gen(STOCK, "UTIL_EST_MARGIN", &t) == 0);
	CHECK(t.nr_spans == 2 && xk_scope_nr_supported(&t) == 2);
	CHECK(t.min == 1 && t.max == 256);
	CHECK(strstr(xk_scope_bounds_why(&t), "compare immediate (dequeue_task_fair+"));
	xk_scope_free(&t);
	return 0;
}

/* A variable's value at n (its point's p[0]), or -1. */
static long long var_at(const struct xk_scope_span *sp, long long n)
{
	const __s64 *p = point_at(sp, n);

	return p ? p[0] : -1;
}

/* beta_scale as cubictcp_register computes it, beta 717 */
static long long cubic_beta_scale(long long n)
{
	return 8 * (n + 717) / 3 / (n - 717);
}

/*
 * A variable code copies into per-CPU data is no setting alone (finding
 * 4): each CPU's copy is made when it comes up and read instead, and keeps
 * the compiled-in value. Golden G_COPY's golden_copy_prepare stores the
 * parameter into a per-CPU variable; DEFAULT_RCU_BLIMIT's blimit goes
 * into each rdp->blimit (rcutree_prepare_cpu; rcu_do_batch's copy after a
 * flood goes to the rdp it is given). G_INIT's parameter, read where it
 * is used, stays a data span; RR_TIMESLICE's sched_rr_timeslice, which
 * task_tick_rt copies into each RR task as its slice ends, too, with a
 * note (the task's own state).
 */
static int copied_variables_are_refused(void)
{
	struct xk_scope t;
	int noted = 0;

	CHECK(gen(GOLDEN, "G_COPY", &t) == 0);
	CHECK(t.nr_spans == 1 && xk_scope_nr_supported(&t) == 0);
	CHECK(refused_with(&t, "golden_copy_batch", "code copies it into per-CPU "
			   "data (golden_copy_prepare+") == 1);
	xk_scope_free(&t);
	CHECK(gen(STOCK, "DEFAULT_RCU_BLIMIT", &t) == 0);
	CHECK(t.nr_spans == 1 && xk_scope_nr_supported(&t) == 0);
	CHECK(refused_with(&t, "blimit", "code copies it into per-CPU data "
			   "(rcutree_prepare_cpu+") == 1);
	xk_scope_free(&t);
	CHECK(gen(GOLDEN, "G_INIT", &t) == 0);
	CHECK(t.nr_spans == 1 && t.spans[0].cls == XK_SPAN_DATA);
	xk_scope_free(&t);
	/* a copy into another object is that object's state: a note */
	CHECK(gen(STOCK, "RR_TIMESLICE", &t) == 0);
	CHECK(xk_scope_nr_supported(&t) == t.nr_spans);
	for (int i = 0; i < t.nr_notes; i++)
		noted += !!strstr(t.notes[i], "sched_rr_timeslice+0x0: task_tick_rt+");
	CHECK(noted == 1);
	xk_scope_free(&t);
	return 0;
}

/*
 * Variables boot code derives from the constant: the boot code is freed,
 * each variable it stored before its first call becomes a data span whose
 * value at N is what the build with N stores (its start run concretely,
 * memory read from the object's own data), per value. Golden: G_DERIV's
 * golden_derived = 8 * (N + beta) / 3 / (N - beta) in module init, the
 * point of a value xk gen never built made on demand (xk_gen_point);
 * G_BOOTST's store follows the first call: still refused. Stock: CUBIC's
 * beta_scale (BICTCP_BETA_SCALE) and cube_factor (BICTCP_HZ, 2^(10+3N) /
 * 410, a 64-bit division), every use supported; the call that ends the
 * run takes two arguments (vmlinux's BTF), so the remainder left in rdx
 * is dead.
 */
static int boot_derived_variables_are_data_spans(void)
{
	struct xk_constant c;
	struct xk_scope t;
	int added = 0;

	CHECK(gen(GOLDEN, "G_DERIV", &t) == 0);
	CHECK(t.nr_spans == 1 && xk_scope_nr_supported(&t) == 1);
	CHECK(t.spans[0].cls == XK_SPAN_DATA && !strcmp(t.spans[0].func,
							"golden_derived"));
	CHECK(t.spans[0].expect_len == 4 && t.spans[0].expect[0] == 15);
	CHECK(var_at(&t.spans[0], 1024) == 15 && var_at(&t.spans[0], 2048) == 5);
	CHECK(t.nr_notes >= 1 && strstr(t.notes[0], "golden_init (boot-time code"));
	CHECK(var_at(&t.spans[0], 1500) == -1);
	CHECK(xk_constant_resolve(GOLDEN, "G_DERIV", &c) == 0);
	CHECK(xk_gen_point(&kernel, &c, &t, 1500, &added) == 0 && added == 1);
	CHECK(var_at(&t.spans[0], 1500) == 7);
	xk_scope_free(&t);
	CHECK(gen(GOLDEN, "G_BOOTST", &t) == 0);
	CHECK(xk_scope_nr_supported(&t) == 0);
	CHECK(refused_with(&t, NULL, "past the straight-line start") >= 1);
	xk_scope_free(&t);
	CHECK(gen(STOCK, "BICTCP_BETA_SCALE", &t) == 0);
	CHECK(t.nr_spans >= 2 && xk_scope_nr_supported(&t) == t.nr_spans);
	CHECK(t.spans[0].cls == XK_SPAN_DATA && !strcmp(t.spans[0].func, "beta_scale"));
	CHECK(var_at(&t.spans[0], 1024) == cubic_beta_scale(1024));
	CHECK(var_at(&t.spans[0], 2048) == cubic_beta_scale(2048));
	xk_scope_free(&t);
	CHECK(gen(STOCK, "BICTCP_HZ", &t) == 0);
	CHECK(t.nr_spans >= 2 && xk_scope_nr_supported(&t) == t.nr_spans);
	CHECK(t.spans[0].cls == XK_SPAN_DATA && !strcmp(t.spans[0].func, "cube_factor"));
	CHECK(t.spans[0].expect_len == 8);
	CHECK(var_at(&t.spans[0], 10) == (1LL << 40) / 410);
	CHECK(var_at(&t.spans[0], 12) == (1LL << 46) / 410);
	/* cubictcp_cong_avoid's shifts: per value, only the build with 20 (out
	 * of the bounds, 6 to 14) had the baseline's shape, which is no value
	 * to take: replayed instead, 12 among the values */
	for (int i = 1; i < t.nr_spans; i++)
		CHECK(t.spans[i].emulate == XK_EMULATE_REPLAY &&
		      xk_scope_replay_of(&t.spans[i], 12));
	xk_scope_free(&t);
	return 0;
}

/*
 * The boot task's state: RR_TIMESLICE initialises init_task's
 * rt.time_slice (the idle task's) besides sched_rr_timeslice and the
 * sysctl's variable. A task is an object the kernel makes at run time, and
 * every other task's slice is what fork or the refill gave it: a note, no
 * span, and every use retuned (the two variables and the handler).
 */
static int boot_task_state_is_a_note(void)
{
	struct xk_scope t;
	int noted = 0;

	CHECK(gen(STOCK, "RR_TIMESLICE", &t) == 0);
	CHECK(t.nr_spans == 4 && xk_scope_nr_supported(&t) == 4);
	for (int i = 0; i < t.nr_spans; i++)
		CHECK(strcmp(t.spans[i].func, "init_task"));
	for (int i = 0; i < t.nr_notes; i++)
		noted += !!strstr(t.notes[i], "init_task+0x1a0: the constant "
				  "initialises the boot task's own state");
	CHECK(noted == 1);
	xk_scope_free(&t);
	return 0;
}

/*
 * A replayed region may store several fields: MIN_LRU_BATCH's builds below
 * 64 change walk_pmd_range_locked's bit search (find_next_bit's mask) and
 * its register allocation; at 32 the region at +0x14b spills r14 and r15
 * in the other order, two stores the baseline's region makes too. Every
 * span of the function replays 32, and the constant is full (above 64 the
 * one-word bitmap on walk_pud_range's stack is refused by its per-value
 * span, whose builds there have another frame).
 */
static int replay_stores_several_fields(void)
{
	struct xk_scope t;
	int replayed = 0, two = 0;

	CHECK(gen(STOCK, "MIN_LRU_BATCH", &t) == 0);
	CHECK(xk_scope_nr_supported(&t) == t.nr_spans);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *sp = &t.spans[i];
		const struct xk_scope_replay *r;

		if (strcmp(sp->func, "walk_pmd_range_locked"))
			continue;
		CHECK(sp->emulate == XK_EMULATE_REPLAY);
		r = xk_scope_replay_of(sp, 32);
		CHECK(r);
		replayed++;
		if (sp->start == 0x14b) {
			CHECK(r->nr_locs >= 2 && r->locs[0].kind == XK_LOC_MEM &&
			      r->locs[1].kind == XK_LOC_MEM);
			CHECK(r->locs[0].base == XK_RSP && r->locs[0].disp == 0x38);
			CHECK(r->locs[1].base == XK_RSP && r->locs[1].disp == 0x20);
			two++;
		}
	}
	CHECK(replayed >= 2 && two == 1);
	xk_scope_free(&t);
	return 0;
}

/*
 * A value whose replayed region stores where the baseline's region does
 * not is refused alone: the span keeps the other values, where it had
 * been refused whole by the module's rule (xk_rule_replay_stores).
 * MARGIN_MIN_PCT's ioc_refresh_margins, inlined in ioc_timer_fn and
 * ioc_refresh_params_disk: `min`, `low` and `target` computed from one
 * shared 5 * period, three stores each build schedules its own way. Every
 * span replays 40; the build with 20 stores `low` in
 * ioc_refresh_params_disk's region at +0x2f0, where the baseline's region
 * does not, and is no replay there (nor when set: refused by name).
 * TCP_INIT_CWND, whose
 * mptcp_sk_clone_init regions store several fields, stays full.
 */
static int replay_values_storing_elsewhere_are_dropped(void)
{
	struct xk_constant c;
	struct xk_scope t;
	int timer = 0, disk = 0, added = 0;

	CHECK(gen(STOCK, "MARGIN_MIN_PCT", &t) == 0);
	CHECK(t.nr_spans > 3 && xk_scope_nr_supported(&t) == t.nr_spans);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *sp = &t.spans[i];

		CHECK(sp->emulate == XK_EMULATE_REPLAY && xk_scope_replay_of(sp, 40));
		if (!strcmp(sp->func, "ioc_timer_fn"))
			timer++;
		else if (!strcmp(sp->func, "ioc_refresh_params_disk.isra.0"))
			CHECK(++disk && !xk_scope_replay_of(sp, 20));
	}
	CHECK(timer >= 1 && disk >= 1);
	/* set later, 20 is refused by that name */
	CHECK(xk_constant_resolve(STOCK, "MARGIN_MIN_PCT", &c) == 0);
	CHECK(xk_gen_point(&kernel, &c, &t, 20, &added) < 0);
	CHECK(strstr(xk_last_error(), "stores where the baseline's does not"));
	xk_scope_free(&t);
	CHECK(gen(STOCK, "TCP_INIT_CWND", &t) == 0);
	CHECK(xk_scope_nr_supported(&t) == t.nr_spans);
	xk_scope_free(&t);
	return 0;
}

/*
 * A value that sizes a heap object: golden_heap_alloc's kvcalloc(G_HEAP, 8)
 * is a tail call of __kvmalloc_node_noprof with 8*N, refused (objects
 * allocated under one value would be indexed under another), while
 * golden_heap_put's bound is a span. SWAP_SLOTS_CACHE_SIZE's per-CPU slot
 * arrays (alloc_swap_slot_cache: two kvcalloc's, replayed regions) are
 * refused the same way: get_swap_pages would fill an array allocated for
 * 64 with up to the new value. Boot-time code that sized a slab is named
 * so too (BIO_INLINE_VECS).
 */
static int heap_size_is_refused(void)
{
	struct xk_scope t;

	CHECK(gen(GOLDEN, "G_HEAP", &t) == 0);
	CHECK(t.nr_spans == 2 && xk_scope_nr_supported(&t) == 1);
	CHECK(refused_with(&t, "golden_heap_alloc", XK_WHY_HEAP
			   "the size argument of __kvmalloc_node_noprof") == 1);
	xk_scope_free(&t);
	CHECK(gen(STOCK, "SWAP_SLOTS_CACHE_SIZE", &t) == 0);
	CHECK(refused_with(&t, "alloc_swap_slot_cache", XK_WHY_HEAP) == 2);
	CHECK(xk_scope_nr_supported(&t) == t.nr_spans - 2);
	xk_scope_free(&t);
	/* boot-time code too: bio_integrity_init's slab of BIO_INLINE_VECS
	 * inline vectors (kmem_cache_create) lives on */
	CHECK(gen(STOCK, "BIO_INLINE_VECS", &t) == 0);
	CHECK(refused_with(&t, "bio_integrity_init", "boot-time code") == 1);
	CHECK(refused_with(&t, "bio_integrity_init", XK_WHY_HEAP
			   "the size argument of __kmem_cache_create_args") == 1);
	/* bioset_init's back_pad reaches kmem_cache_create (the inlined
	 * bio_find_or_create_slab) in the replayed form only: that finding
	 * comes first in the reason, where a long one cannot cut it off */
	for (int i = 0; i < t.nr_spans; i++) {
		const char *h = strstr(t.spans[i].why, XK_WHY_HEAP);

		if (t.spans[i].cls == XK_SPAN_UNSUPPORTED &&
		    !strcmp(t.spans[i].func, "bioset_init") && h)
			CHECK(!strncmp(t.spans[i].why, "replayed: ", 10) &&
			      h - t.spans[i].why < 100);
	}
	CHECK(refused_with(&t, "bioset_init", XK_WHY_HEAP) >= 1);
	xk_scope_free(&t);
	return 0;
}

/*
 * A replay whose first merge holds a region that cannot be a span:
 * TCP_TSQ_MIN_SKBS (2 * skb->truesize, `add %esi, %esi`, in
 * tcp_small_queue_check) is rescheduled by the build with N=1 up to the
 * tcp_tx_delay_enabled key's jump-label site, where no region may resume.
 * That region is N=1's only: the values that do not need it replay on
 * their own (3, 4, 6, 8), N=1 is left to be built and checked when set.
 */
static int tsq_replays_without_the_jump_label_region(void)
{
	struct xk_scope t;

	CHECK(gen(STOCK, "TCP_TSQ_MIN_SKBS", &t) == 0);
	CHECK(t.nr_spans >= 1 && xk_scope_nr_supported(&t) == t.nr_spans);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *s = &t.spans[i];

		CHECK(s->emulate == XK_EMULATE_REPLAY);
		CHECK(xk_scope_replay_of(s, 4) && !xk_scope_replay_of(s, 1));
		CHECK(s->probe < 0x45);		/* the key's site */
	}
	xk_scope_free(&t);
	return 0;
}

/*
 * A load or store at another displacement in a build with another value
 * is a change no immediate carries: __swap_writepage() clears
 * sio->pages of a struct swap_iocb whose bvec[SWAP_CLUSTER_MAX] comes
 * first (`movq $0, 0x230(%rdx)`, 0x130 with N=16). Its span is refused,
 * naming the instruction (it was taken for unchanged).
 */
static int swap_iocb_field_moves(void)
{
	struct xk_scope t;

	CHECK(gen(STOCK, "SWAP_CLUSTER_MAX", &t) == 0);
	CHECK(refused_with(&t, "__swap_writepage", "mov qword ptr [rdx + 0x230], 0") == 1);
	xk_scope_free(&t);
	return 0;
}

/*
 * The multiply form: tcp_rcv_space_adjust() multiplies by
 * TCP_RCVWIN_ADVMSS_SLACK with `shl $4` (16), which a build with 18 writes
 * as lea and add: no immediate moves. The region becomes an emulated span
 * computing rax * (1*N + 0), checked against every build by value.
 */
static int rcvwin_slack_is_a_multiply(void)
{
	__u64 regs[XK_NR_INPUTS] = { 0 };
	struct xk_scope t;
	const struct xk_scope_span *s;

	CHECK(gen(STOCK, "TCP_RCVWIN_ADVMSS_SLACK", &t) == 0);
	CHECK(t.nr_spans == 1);
	s = &t.spans[0];
	CHECK(s->cls == XK_SPAN_REGISTER && s->emulate);
	CHECK(!strcmp(s->func, "tcp_rcv_space_adjust"));
	CHECK(s->nr_params == 1 && s->fit[0][0] == 1 && s->fit[0][1] == 0);
	CHECK(s->expect[0] == 0xc1);		/* shl $4, %eax */
	regs[XK_RAX] = 1460;
	CHECK((xk_expr_eval(&s->locs[0].expr, regs, 24) & 0xffffffff) == 1460 * 24);
	xk_scope_free(&t);
	return 0;
}

/* the BLK span where 32 -> 64 changes the instruction: checked by value */
static int blk_span_is_the_sbb_sequence(void)
{
	struct xk_scope t;
	int found = 0;

	CHECK(gen(STOCK, "BLK_MAX_REQUEST_COUNT", &t) == 0);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *s = &t.spans[i];
		/* cmp $1,%cl; sbb %eax,%eax; and $-N,%eax; add $2N,%eax */
		static const uint8_t seq[] = { 0x80, 0xf9, 0x01, 0x19, 0xc0, 0x83,
					       0xe0, 0xe0, 0x83, 0xc0, 0x40 };

		if (strcmp(s->func, "blk_add_rq_to_plug"))
			continue;
		found = 1;
		CHECK(s->expect_len >= sizeof(seq));
		CHECK(!memcmp(s->expect, seq, sizeof(seq)));
		CHECK(s->nr_params == 2 && s->fit[1][0] == 2 && s->fit[1][1] == 0);
		CHECK(s->nr_locs == 1 && s->locs[0].kind == XK_RAX);
		CHECK(s->locs[0].width == 16);	/* only ax is read after */
	}
	xk_scope_free(&t);
	CHECK(found);
	return 0;
}

/*
 * Where settling writes (imm lines): each fitted immediate's instruction
 * and field, whose bytes encode the compiled-in value; and the encoder's
 * sign-extension rule (a value an imm8 cannot hold is refused).
 */
static int blk_immediates_are_located(void)
{
	struct xk_scope t;
	uint8_t b[8];
	int found = 0;

	CHECK(gen(STOCK, "BLK_MAX_REQUEST_COUNT", &t) == 0);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *s = &t.spans[i];

		CHECK(s->nr_imms == s->nr_params);
		for (int k = 0; k < s->nr_imms; k++) {
			const struct xk_scope_imm *m = &s->imm[k];
			uint64_t at = m->field - s->start;

			CHECK(m->insn >= s->start && m->insn + m->insn_len <= s->probe);
			CHECK(!xk_rule_imm_bytes(s->fit[k][0], s->fit[k][1], 32,
						 m->size, m->width, b));
			CHECK(!memcmp(s->expect + at, b, m->size));
		}
		if (!strcmp(s->func, "blk_start_plug_nr_ios")) {
			found++;	/* mov $0x20,%edx */
			CHECK(s->nr_imms == 1 && s->imm[0].insn == 0x20 &&
			      s->imm[0].field == 0x21 && s->imm[0].size == 4 &&
			      s->imm[0].width == 32);
		} else if (!strcmp(s->func, "blk_add_rq_to_plug")) {
			found++;	/* and $-N,%eax; add $2N,%eax: imm8 */
			CHECK(s->nr_imms == 2 && s->imm[0].size == 1 &&
			      s->imm[1].size == 1 && s->imm[1].field == 0x2d);
		}
	}
	xk_scope_free(&t);
	CHECK(found == 2);
	CHECK(!xk_rule_imm_bytes(2, 0, 60, 1, 32, b) && b[0] == 0x78);
	CHECK(xk_rule_imm_bytes(2, 0, 64, 1, 32, b));	/* 128: no imm8 */
	CHECK(!xk_rule_imm_bytes(-1, 0, 100, 1, 32, b) && b[0] == 0x9c);
	CHECK(!xk_rule_imm_bytes(1, 0, -1, 4, 64, b) && b[3] == 0xff);
	CHECK(xk_rule_imm_bytes(1, 0, 0x80000000LL, 4, 64, b));
	CHECK(!xk_rule_imm_bytes(1, 0, 0x80000000LL, 4, 32, b));
	CHECK(xk_rule_imm_bytes(INT64_MAX, 1, 2, 8, 64, b));	/* overflow */
	return 0;
}

/* A baseline that is not the shipped code is refused with the function. */
static int identity_refuses_a_changed_function(void)
{
	static const uint8_t mov[] = { 0xba, 0x20, 0x00, 0x00, 0x00, 0x48, 0xc7, 0x47 };
	char src[XK_PATH_MAX + 32], tmp[] = "/tmp/xk-identity-XXXXXX";
	int fd = mkstemp(tmp), checked = 0;
	char *data;
	uint8_t *at;
	size_t len;

	CHECK(fd >= 0);
	close(fd);
	snprintf(src, sizeof(src), "%s/block/blk-core.o", kernel.source);
	CHECK(xk_identity_check(&kernel, src, "block/blk-core.o", &checked) == 0);
	CHECK(checked > 50);
	/* blk_start_plug_nr_ios: mov $32, %edx -> mov $33, %edx */
	CHECK(xk_read_file(src, &data, &len) == 0);
	at = memmem(data, len, mov, sizeof(mov));
	CHECK(at);
	at[1] = 0x21;
	CHECK(xk_write_file(tmp, data, len, 0644) == 0);
	free(data);
	CHECK(xk_identity_check(&kernel, tmp, "block/blk-core.o", &checked) == -ESTALE);
	unlink(tmp);
	CHECK(strstr(xk_last_error(), "differs from the shipped kernel in 1 of"));
	CHECK(strstr(xk_last_error(), "blk_start_plug_nr_ios"));
	return 0;
}

/* An object of a module is compared with the shipped .ko, not vmlinux. */
/* drivers/net/wwan/t7xx/Makefile writes obj-${CONFIG_MTK_T7XX}: its
 * objects are mtk_t7xx.ko's, and their spans are named so (they were taken
 * for vmlinux code, which the module refused at load: no such function) */
static int braced_config_names_the_module(void)
{
	struct xk_scope t;
	int named = 0;

	CHECK(gen(STOCK, "DEFAULT_TX_QUEUE_LEN", &t) == 0);
	for (int i = 0; i < t.nr_spans; i++)
		named += !strcmp(t.spans[i].func, "mtk_t7xx:t7xx_ccmni_wwan_setup");
	xk_scope_free(&t);
	CHECK(named == 1);
	return 0;
}

static int module_identity_uses_the_shipped_ko(void)
{
	char src[XK_PATH_MAX + 32], tmp[] = "/tmp/xk-identity-XXXXXX";
	int fd = mkstemp(tmp), checked = 0;
	struct xk_obj o;
	struct xk_sym *f;
	uint8_t *data;
	size_t len;

	CHECK(fd >= 0);
	close(fd);
	snprintf(src, sizeof(src), "%s/net/ipv4/tcp_bbr.o", kernel.source);
	if (!xk_exists(src)) {
		/* the baseline comes from the first xk build of a bbr constant */
		struct xk_scope t;

		CHECK(gen(STOCK, "CYCLE_LEN", &t) == 0);
		xk_scope_free(&t);
	}
	CHECK(xk_identity_check_module(&kernel, src, "net/ipv4/tcp_bbr.o",
				       "net/ipv4/tcp_bbr.ko", &checked) == 0);
	CHECK(checked >= 15);	/* 18 in 6.12.117: what was not inlined */
	/* one byte of bbr_main changed: named */
	CHECK(xk_obj_open(&o, src) == 0);
	f = xk_obj_find_func(&o, "bbr_main", NULL);
	CHECK(f);
	CHECK(xk_read_file(src, (char **)&data, &len) == 0);
	data[f->sec->sh.sh_offset + f->sym.st_value + 1] ^= 0x40;
	xk_obj_close(&o);
	CHECK(xk_write_file(tmp, data, len, 0644) == 0);
	free(data);
	CHECK(xk_identity_check_module(&kernel, tmp, "net/ipv4/tcp_bbr.o",
				       "net/ipv4/tcp_bbr.ko", &checked) == -ESTALE);
	unlink(tmp);
	CHECK(strstr(xk_last_error(), "shipped module net/ipv4/tcp_bbr.ko"));
	CHECK(strstr(xk_last_error(), "bbr_main"));
	return 0;
}

static int unknown_constant_is_named(void)
{
	struct xk_constant c;

	CHECK(xk_catalog_find(STOCK, "NO_SUCH_CONSTANT", &c) == -ENOENT);
	CHECK(strstr(xk_last_error(), "NO_SUCH_CONSTANT"));
	return 0;
}

static int uncatalogued_macro_is_located(void)
{
	struct xk_build_result *b = calloc(1, sizeof(*b));
	struct xk_constant c = { .name = "BLK_MAX_REQUEST_COUNT", .kind = "macro" };
	int err;

	CHECK(b);
	err = xk_build(&kernel, &c, NULL, b);
	free(b);
	CHECK(err == 0);
	CHECK(!strcmp(c.file, "block/blk.h"));
	CHECK(c.def == 32 && c.line > 0);
	return 0;
}

/*
 * Macros that the catalog does not name, by name alone (xk gen NAME): the
 * definition found in the tree, the objects from the objects built, the
 * code's spans supported; each also bounds a sysctl (tcp_syn_retries_max
 * and the like: data), a use refused with its reason.
 */
static int three_uncatalogued_macros_are_analysed(void)
{
	static const char *const names[] = { "MAX_TCP_SYNCNT", "MAX_TCP_KEEPCNT",
					     "MAX_TCP_KEEPINTVL" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct xk_constant c;
		struct xk_scope t;

		CHECK(xk_catalog_find(STOCK, names[i], &c) == -ENOENT);
		CHECK(gen(STOCK, names[i], &t) == 0);
		CHECK(xk_scope_nr_supported(&t) >= 1);
		for (int k = 0; k < t.nr_spans; k++)
			CHECK(t.spans[k].cls != XK_SPAN_UNSUPPORTED ||
			      !strncmp(t.spans[k].why, "data: ", 6));
		CHECK(!strcmp(t.kind, "macro") && !strncmp(t.source, "include/net/tcp.h", 17));
		xk_scope_free(&t);
	}
	return 0;
}

static int missing_macro_is_refused(void)
{
	struct xk_build_result *b = calloc(1, sizeof(*b));
	struct xk_constant c = { .name = "XK_NOT_A_MACRO_ANYWHERE", .kind = "macro" };
	int err;

	CHECK(b);
	err = xk_build(&kernel, &c, NULL, b);
	free(b);
	CHECK(err == -ENOENT);
	CHECK(strstr(xk_last_error(), "no #define of it"));
	return 0;
}

/*
 * A macro's body split at its top level (body_shape): a product with one
 * integer literal is that literal in units of the rest, its suffix kept;
 * a sum with one, the literal added to the rest; two literals, a division,
 * a sign, a name alone or a '%' make the body one value as a whole.
 */
static int macro_body_shapes(void)
{
	static const struct {
		const char *body;
		enum body_form form;
		long long literal;
		const char *tmpl, *rest;
	} cases[] = {
		{ "(2*HZ)", BODY_SCALED, 2, "(%lld*HZ)", "HZ" },
		{ "(100 * NSEC_PER_MSEC)", BODY_SCALED, 100, "(%lld * NSEC_PER_MSEC)",
		  "NSEC_PER_MSEC" },
		{ "(HZ * 5UL)", BODY_SCALED, 5, "(HZ * %lldUL)", "HZ" },
		{ "0x10 * PAGE_SIZE", BODY_SCALED, 16, "%lld * PAGE_SIZE", "PAGE_SIZE" },
		{ "(2 * (HZ / 4) * sizeof(long))", BODY_SCALED, 2,
		  "(%lld * (HZ / 4) * sizeof(long))", "(HZ / 4) * sizeof(long)" },
		{ "(MAX_HEADER + 64)", BODY_OFFSET, 64, "(MAX_HEADER + %lld)", "MAX_HEADER" },
		{ "(HZ / 50)", BODY_WHOLE }, { "HPAGE_PMD_NR", BODY_WHOLE },
		{ "(2 * 60 * HZ)", BODY_WHOLE }, { "(-2 * HZ)", BODY_WHOLE },
		{ "(2 * HZ + 1)", BODY_WHOLE }, { "(2 * (A % B))", BODY_WHOLE },
		{ "((unsigned)(1*HZ))", BODY_WHOLE }, { "msecs_to_jiffies(2)", BODY_WHOLE },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct body_shape s;

		CHECK(body_shape(cases[i].body, &s) == 0);
		if (s.form != cases[i].form)
			printf("#   %s: form %d\n", cases[i].body, s.form);
		CHECK(s.form == cases[i].form);
		if (s.form == BODY_WHOLE)
			continue;
		CHECK(s.literal == cases[i].literal);
		CHECK(!strcmp(s.tmpl, cases[i].tmpl));
		CHECK(!strcmp(s.rest, cases[i].rest));
	}
	return 0;
}

/* CONFIG_HZ of the stock kernel, what jiffies are counted in. */
static long config_hz(void)
{
	char *config = NULL, *p;
	long hz = 0;

	if (xk_read_file(kernel.config, &config, NULL))
		return 0;
	p = strstr(config, "\nCONFIG_HZ=");
	if (p)
		hz = strtol(p + strlen("\nCONFIG_HZ="), NULL, 10);
	free(config);
	return hz;
}

/*
 * Macros the catalog does not name whose bodies are expressions of other
 * macros, by name alone: each evaluated in the kernel's configuration
 * (CONFIG_HZ, USEC_PER_MSEC, THP's HPAGE_PMD_NR), the value the literal
 * an engineer edits, in the unit of the other factor, and said so.
 */
static int expression_macros_are_evaluated(void)
{
	struct xk_build_result *b = calloc(1, sizeof(*b));
	char hz_unit[64];
	long hz = config_hz();
	const struct {
		const char *name, *tmpl;
		long long def;
		const char *unit;
	} cases[] = {
		{ "OOM_REAPER_DELAY", "(%lld*HZ)", 2, hz_unit },
		{ "NFS4_POLL_RETRY_MAX", "(%lld*HZ)", 15, hz_unit },
		{ "MAX_SLACK", "(%lld * NSEC_PER_MSEC)", 100,
		  "in units of NSEC_PER_MSEC (1000000 ns each here)" },
		{ "TCP_TIMEOUT_MIN_US", "(%lld*USEC_PER_MSEC)", 2,
		  "in units of USEC_PER_MSEC (1000 us each here)" },
		{ "NR_MAX_BATCHED_MIGRATION", "(%lld)", 512,
		  "the whole of HPAGE_PMD_NR in this configuration" },
	};

	CHECK(b && hz > 0);
	snprintf(hz_unit, sizeof(hz_unit), "in units of HZ (%ld jiffies each here)", hz);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct xk_constant c;

		CHECK(xk_catalog_find(STOCK, cases[i].name, &c) == -ENOENT);
		CHECK(xk_constant_resolve(STOCK, cases[i].name, &c) == 0);
		if (xk_build(&kernel, &c, NULL, b)) {
			printf("#   %s: %s\n", cases[i].name, xk_last_error());
			free(b);
			return 1;
		}
		if (strcmp(c.tmpl, cases[i].tmpl) || c.def != cases[i].def ||
		    !strstr(c.unit, cases[i].unit))
			printf("#   %s: template %s, default %lld, value %s\n",
			       cases[i].name, c.tmpl, c.def, c.unit);
		CHECK(!strcmp(c.tmpl, cases[i].tmpl));
		CHECK(c.def == cases[i].def);
		CHECK(strstr(c.unit, cases[i].unit));
		/* the variants are built around the value in its own unit */
		CHECK(b->value[0] > c.def && b->value[2] <= c.def * 16);
	}
	free(b);
	return 0;
}

/*
 * The value of (2*HZ) counts seconds: the span of OOM_REAPER_DELAY's one
 * use (a deadline, jiffies + delay) fits P0 = HZ*N, so xk set
 * OOM_REAPER_DELAY=3 writes 3 seconds of jiffies.
 */
static int jiffies_macro_fits_in_seconds(void)
{
	struct xk_scope t;
	long hz = config_hz();
	bool found = false;

	CHECK(hz > 0);
	CHECK(gen(STOCK, "OOM_REAPER_DELAY", &t) == 0);
	CHECK(t.def == 2);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *s = &t.spans[i];

		if (s->cls == XK_SPAN_UNSUPPORTED || s->nr_points)
			continue;
		CHECK(s->fit[0][0] == hz && s->fit[0][1] == 0);
		found = true;
	}
	xk_scope_free(&t);
	CHECK(found);
	return 0;
}

/*
 * Bodies past the defines alone: continued on the next line and
 * depending on HZ (SRCU_DEFAULT_MAX_NODELAY_PHASE_ADJUSTED, unsigned
 * long), and needing a struct's declaration (MAX_INSNS_PER_PATH: sizeof
 * struct sock_filter). Each is one value whose C type the template keeps.
 */
static int expression_macro_types_and_declarations(void)
{
	struct xk_build_result *b = calloc(1, sizeof(*b));
	struct xk_constant c;
	long hz = config_hz();

	CHECK(b && hz > 0);
	CHECK(xk_constant_resolve(STOCK, "SRCU_DEFAULT_MAX_NODELAY_PHASE_ADJUSTED", &c) == 0);
	CHECK(xk_build(&kernel, &c, NULL, b) == 0);
	CHECK(!strcmp(c.tmpl, "((unsigned long)%lld)"));
	CHECK(c.def == 2 * 1000000 / hz / 5);	/* SRCU_DEFAULT_RETRY_CHECK_DELAY */
	CHECK(strstr(c.unit, "the whole of (2UL * USEC_PER_SEC / HZ /"));
	CHECK(xk_constant_resolve(STOCK, "MAX_INSNS_PER_PATH", &c) == 0);
	CHECK(xk_build(&kernel, &c, NULL, b) == 0);
	CHECK(!strcmp(c.tmpl, "((unsigned long)%lld)"));
	CHECK(c.def == (1 << 18) / 8);
	free(b);
	return 0;
}

/*
 * A body the compiler cannot evaluate names the part of it that stops
 * it (a variable in (4 * sysctl_numa_balancing_scan_delay), an inline
 * function's call), and a definition this configuration's #if leaves
 * out says so, instead of "not a number".
 */
static int unevaluable_body_names_its_part(void)
{
	static const char *const cases[][2] = {
		{ "VMA_PID_RESET_PERIOD", "kernel/sched/fair.c:3304: VMA_PID_RESET_PERIOD = "
		  "(4 * sysctl_numa_balancing_scan_delay) cannot be evaluated: "
		  "sysctl_numa_balancing_scan_delay is not a compile-time constant" },
		{ "MAX_SOFTIRQ_TIME", "msecs_to_jiffies(2) is not a compile-time constant" },
	};
	struct xk_build_result *b = calloc(1, sizeof(*b));
	struct xk_constant c;

	CHECK(b);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		/* by name alone: not the catalog's template of MAX_SOFTIRQ_TIME */
		memset(&c, 0, sizeof(c));
		CHECK(!xk_strlcpy(c.name, cases[i][0], sizeof(c.name)) &&
		      !xk_strlcpy(c.kind, "macro", sizeof(c.kind)));
		CHECK(xk_build(&kernel, &c, NULL, b) == -EINVAL);
		if (!strstr(xk_last_error(), cases[i][1]))
			printf("#   %s\n", xk_last_error());
		CHECK(strstr(xk_last_error(), cases[i][1]));
	}
	memset(&c, 0, sizeof(c));
	CHECK(!xk_strlcpy(c.name, "PROFILES_PER_PAGE", sizeof(c.name)) &&	/* CONFIG_FUNCTION_PROFILER */
	      !xk_strlcpy(c.kind, "macro", sizeof(c.kind)));
	CHECK(xk_build(&kernel, &c, NULL, b) == -ENOENT);
	CHECK(strstr(xk_last_error(), "under an #if this configuration leaves out"));
	free(b);
	return 0;
}

/*
 * SWAP_BATCH reaches mm/swap_slots.c only as SWAP_SLOTS_CACHE_SIZE
 * (include/linux/swap_slots.h: #define SWAP_SLOTS_CACHE_SIZE SWAP_BATCH):
 * that object is built and analysed too, and its slot cache, sized by a
 * kvmalloc, is refused; found by name alone, SWAP_BATCH was "full" on
 * mm/swapfile.o while the slot caches kept 64.
 */
static int objects_naming_a_carrier_macro_are_built(void)
{
	struct xk_build_result *b = calloc(1, sizeof(*b));
	struct xk_constant c;
	bool slots = false, swapfile = false;

	CHECK(b);
	CHECK(xk_constant_resolve(STOCK, "SWAP_BATCH", &c) == 0 && !c.objects[0]);
	CHECK(xk_build(&kernel, &c, NULL, b) == 0);
	for (int i = 0; i < b->nr_objects; i++) {
		slots |= !strcmp(b->object[i], "mm/swap_slots.o");
		swapfile |= !strcmp(b->object[i], "mm/swapfile.o");
	}
	free(b);
	CHECK(slots && swapfile);
	return 0;
}

/*
 * BUSY_POLL_BUDGET reaches the socket layer only through a header's
 * inline function (include/net/busy_poll.h: sk_busy_loop() passes it to
 * napi_busy_loop()): every object calling sk_busy_loop is a user (udp,
 * datagram); found by name alone, only io_uring and eventpoll were.
 * COMPACT_CLUSTER_MAX named in a comment of compact_gap() carries
 * nothing: mm/vmscan.o, which calls compact_gap(), is no user.
 */
static int objects_calling_a_carrier_inline_are_built(void)
{
	struct xk_build_result *r = calloc(1, sizeof(*r));
	struct xk_constant c;
	struct tree t;
	bool udp = false, datagram = false, napi = false, vmscan = false;

	CHECK(r);
	CHECK(xk_constant_resolve(STOCK, "BUSY_POLL_BUDGET", &c) == 0 && !c.objects[0]);
	CHECK(tree_of(&kernel, &c, &t) == 0 && find_objects(&kernel, &t, &c, r) == 0);
	for (int i = 0; i < r->nr_objects; i++) {
		udp |= !strcmp(r->object[i], "net/ipv4/udp.o");
		datagram |= !strcmp(r->object[i], "net/core/datagram.o");
		napi |= !strcmp(r->object[i], "io_uring/napi.o");
	}
	CHECK(udp && datagram && napi);
	memset(r, 0, sizeof(*r));
	CHECK(xk_constant_resolve(STOCK, "COMPACT_CLUSTER_MAX", &c) == 0);
	CHECK(tree_of(&kernel, &c, &t) == 0 && find_objects(&kernel, &t, &c, r) == 0);
	for (int i = 0; i < r->nr_objects; i++)
		vmscan |= !strcmp(r->object[i], "mm/vmscan.o");
	free(r);
	CHECK(!vmscan);
	return 0;
}

/*
 * xk gen --verify: SHRINK_BATCH's one affine span (do_shrink_slab) agrees
 * with the kernels compiled with 3 and 1000; a table whose fit is off by
 * one (not this kernel's at any value) disagrees, naming the span; at the
 * default nothing is built and the span agrees.
 */
static int verify_checks_the_table_at_other_values(void)
{
	struct xk_build_result *b = calloc(1, sizeof(*b));
	struct xk_verify_result r;
	struct xk_constant c;
	struct xk_scope t;

	CHECK(b);
	CHECK(xk_constant_resolve(STOCK, "SHRINK_BATCH", &c) == 0 &&
	      xk_build(&kernel, &c, NULL, b) == 0 && xk_gen(&kernel, &c, b, &t) == 0);
	free(b);
	CHECK(t.nr_spans == 1 && t.spans[0].nr_params == 1);
	CHECK(xk_gen_verify(&kernel, &c, &t, 3, &r) == 0);
	CHECK(r.nr_checked == 1 && r.nr_failed == 0 && r.nr_other == 0);
	CHECK(xk_gen_verify(&kernel, &c, &t, 1000, &r) == 0);
	CHECK(r.nr_checked == 1 && r.nr_failed == 0);
	CHECK(xk_gen_verify(&kernel, &c, &t, c.def, &r) == 0 && r.nr_checked == 1);
	t.spans[0].fit[0][1] += 1;
	CHECK(xk_gen_verify(&kernel, &c, &t, 3, &r) == 0);
	CHECK(r.nr_checked == 0 && r.nr_failed == 1);
	CHECK(strstr(r.why[0], "span 0 (do_shrink_slab+"));
	CHECK(xk_gen_verify(&kernel, &c, &t, 100000, &r) == -ERANGE ||
	      strstr(xk_last_error(), "out of bounds"));
	xk_scope_free(&t);
	return 0;
}

/* The table of catalog's name, built and analysed with bounds min..max. */
static int gen_in(const char *catalog, const char *name, long long min,
		  long long max, struct xk_constant *c, struct xk_scope *t)
{
	struct xk_build_result *b = calloc(1, sizeof(*b));
	int err = b ? 0 : -ENOMEM;

	err = err ?: xk_constant_resolve(catalog, name, c);
	c->min = min;
	c->max = max;
	c->has_bounds = true;
	err = err ?: xk_build(&kernel, c, NULL, b) ?: xk_gen(&kernel, c, b, t);
	free(b);
	return err;
}

/*
 * xk gen --prove: every value of the bounds built. G_DIV's per-value span
 * takes 7 and 14 of 5..16 (the other divisors need other instructions):
 * the bounds narrow to 7..14 (6 refused, named), 8..13 are a hole that
 * xk set refuses naming the values, the written table reads back so.
 * SHRINK_BATCH's affine span with its fit off by one disagrees at 127
 * and 129: the bounds shrink to the default, the note naming the span;
 * with its own fit both agree and the bounds stay.
 */
static int prove_narrows_to_the_values_built(void)
{
	struct xk_prove_result r;
	struct xk_constant c;
	struct xk_scope t, back;
	char path[] = "/tmp/xk-prove-XXXXXX";
	int fd;

	CHECK(gen_in(GOLDEN, "G_DIV", 5, 16, &c, &t) == 0);
	CHECK(xk_gen_prove(&kernel, &c, &t, &r) == 0);
	CHECK(r.every && r.nr_values == 11 && r.nr_refused == 10);
	CHECK(t.min == 7 && t.max == 14 && t.nr_proved == 11 && t.proved_every);
	CHECK(t.nr_ranges == 2 && t.ranges[0][0] == 7 && t.ranges[0][1] == 7 &&
	      t.ranges[1][0] == 14 && t.ranges[1][1] == 14);
	CHECK(xk_scope_check_value(&t, 14) == 0);
	CHECK(xk_scope_check_value(&t, 9) == -ERANGE);
	CHECK(strstr(xk_last_error(), "value 9 is not among the values proved "
				      "for this table (7, 14): 8, 9, 10, 11, 12, "
				      "13 refused (at 8: G_DIV = 8 cannot be retuned"));
	CHECK(xk_scope_check_value(&t, 6) == -ERANGE);
	CHECK(strstr(xk_last_error(), "out of bounds [7, 14]: 7..14 of 5..16, "
				      "the values around the default that builds "
				      "proved (at 6: G_DIV = 6 cannot be retuned"));
	/* a second proof of a proved table is refused */
	CHECK(xk_gen_prove(&kernel, &c, &t, &r) == -EALREADY);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	CHECK(xk_scope_write(&t, path) == 0 && xk_scope_read(path, &back) == 0);
	unlink(path);
	CHECK(back.min == 7 && back.max == 14 && back.nr_ranges == 2 &&
	      back.nr_proved == 11);
	xk_scope_free(&back);
	xk_scope_free(&t);

	CHECK(gen_in(STOCK, "SHRINK_BATCH", 127, 129, &c, &t) == 0);
	CHECK(t.nr_spans == 1 && t.spans[0].nr_params == 1);
	t.spans[0].fit[0][1] += 1;
	CHECK(xk_gen_prove(&kernel, &c, &t, &r) == 0);
	CHECK(r.nr_values == 2 && r.nr_refused == 2);
	CHECK(t.min == 128 && t.max == 128 && !t.nr_ranges);
	CHECK(strstr(t.notes[0], "bounds: 128..128 of 127..129, the values "
				 "around the default that builds proved (at 127: "
				 "span 0 (do_shrink_slab+"));
	xk_scope_free(&t);
	CHECK(gen_in(STOCK, "SHRINK_BATCH", 127, 129, &c, &t) == 0);
	CHECK(xk_gen_prove(&kernel, &c, &t, &r) == 0);
	CHECK(r.nr_values == 2 && r.nr_refused == 0);
	CHECK(t.min == 127 && t.max == 129 && !t.nr_ranges && t.nr_proved == 2);
	xk_scope_free(&t);
	return 0;
}

/*
 * xk gen --verify analyses the objects again with the value's build as the
 * check, and so runs the forms' retries as xk gen does: PIPE_MIN_DEF_
 * BUFFERS's spans are the heap of one call only after the replayed form's
 * retry (the first analysis refuses alloc_pipe_info's lock xadd). Without
 * them every value disagreed, the gen's own check value (6) among them.
 */
static int verify_runs_the_forms_retries(void)
{
	struct xk_verify_result r;
	struct xk_constant c;
	struct xk_scope t;

	CHECK(gen_in(STOCK, "PIPE_MIN_DEF_BUFFERS", 1, 16, &c, &t) == 0);
	CHECK(t.nr_spans == 2 && xk_scope_nr_supported(&t) == 2);
	for (long long v = 1; v <= 16; v += 5) {
		CHECK(xk_gen_verify(&kernel, &c, &t, v, &r) == 0);
		CHECK(r.nr_checked == 2 && r.nr_failed == 0 && r.nr_other == 0);
	}
	xk_scope_free(&t);
	return 0;
}

/*
 * xk gen checks the bounds' ends: SHRINK_BATCH (128) is built at 144, 160
 * and 256, the ends of its bounds 100..300 are not: built at 100 and
 * 300, its span agrees there, the ends are checked and the bounds stay.
 * With its fit off by one and bounds 100..160 it disagrees at 100 and at
 * every value searched towards the default (101, 108, then halving the
 * gap up to 127): the lower bound moves in to the default, the note
 * naming the refusal nearest it; the upper bound is a value built (160)
 * and is not built again. A table without an affine span (G_DIV: per
 * value) builds nothing.
 */
static int bounds_ends_are_checked(void)
{
	struct xk_build_result *b = calloc(1, sizeof(*b));
	struct xk_bounds_check r;
	struct xk_constant c;
	struct xk_scope t;

	CHECK(b != NULL);
	CHECK(xk_constant_resolve(STOCK, "SHRINK_BATCH", &c) == 0);
	c.min = 100;
	c.max = 300;
	c.has_bounds = true;
	CHECK(xk_build(&kernel, &c, NULL, b) == 0 && xk_gen(&kernel, &c, b, &t) == 0);
	CHECK(!t.ends_checked);
	CHECK(xk_gen_check_bounds(&kernel, &c, b, &t, &r) == 0);
	CHECK(r.nr_built == 2 && !r.narrowed && t.ends_checked);
	CHECK(t.min == 100 && t.max == 300 && t.nr_notes == 0);
	xk_scope_free(&t);

	c.max = 160;
	CHECK(xk_build(&kernel, &c, NULL, b) == 0 && xk_gen(&kernel, &c, b, &t) == 0);
	t.spans[0].fit[0][1] += 1;
	CHECK(xk_gen_check_bounds(&kernel, &c, b, &t, &r) == 0);
	CHECK(r.nr_built == 9 && r.narrowed && r.refused == 127);
	CHECK(t.min == 128 && t.max == 160 && t.ends_checked);
	CHECK(strstr(t.notes[0], "bounds: 128..160 of 100..160, where the fits "
				 "agree with the kernel built with the value "
				 "(at 127: span 0 (do_shrink_slab+"));
	xk_scope_free(&t);

	CHECK(xk_constant_resolve(GOLDEN, "G_DIV", &c) == 0);
	CHECK(xk_build(&kernel, &c, NULL, b) == 0 && xk_gen(&kernel, &c, b, &t) == 0);
	CHECK(xk_gen_check_bounds(&kernel, &c, b, &t, &r) == 0);
	CHECK(r.nr_built == 0 && t.ends_checked);
	xk_scope_free(&t);
	free(b);
	return 0;
}

/*
 * A check build whose span reads its operand from another register is
 * other code, not a disagreement: IORING_MAX_ENTRIES at N=1 compares
 * p->cq_entries in rdx (the baseline: rcx) against 2 * N. Without the
 * inputs compared, the flags of rcx - 2 differ from those of rdx - 2 on
 * random registers and the span would be counted as disagreeing.
 */
static int verify_tells_other_registers_from_other_values(void)
{
	struct xk_build_result *b = calloc(1, sizeof(*b));
	struct xk_verify_result r;
	struct xk_constant c;
	struct xk_scope t;

	CHECK(b);
	CHECK(xk_constant_resolve(STOCK, "IORING_MAX_ENTRIES", &c) == 0 &&
	      xk_build(&kernel, &c, NULL, b) == 0 && xk_gen(&kernel, &c, b, &t) == 0);
	free(b);
	CHECK(xk_gen_verify(&kernel, &c, &t, 1, &r) == 0);
	CHECK(r.nr_failed == 0 && r.nr_checked >= 1 && r.nr_other >= 1);
	xk_scope_free(&t);
	return 0;
}

/*
 * GSO_MAX_SEGS's catalog entry lists dev.o, rtnetlink.o and test_run.o;
 * the drivers that name GSO_MAX_SIZE (8 * GSO_MAX_SEGS) are users too:
 * each is a refused span of the table ("*": every use of the object), so
 * the constant is partly supported and loads only with --partial.
 * MAX_RW_COUNT's entry lists no objects: every user is analysed, none
 * left out.
 */
static int objects_left_out_are_refused(void)
{
	struct xk_constant c;
	struct xk_scope t;
	char list[600];
	bool loopback = false;

	CHECK(xk_constant_resolve(STOCK, "GSO_MAX_SEGS", &c) == 0 && c.objects[0]);
	CHECK(objects_left_out(&kernel, &c, list, sizeof(list)) > 1);
	CHECK(strstr(list, "drivers/net/loopback.o") && !strstr(list, "net/core/dev.o"));
	CHECK(gen(STOCK, "GSO_MAX_SEGS", &t) == 0);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *sp = &t.spans[i];

		if (strcmp(sp->object, "drivers/net/loopback.o"))
			continue;
		loopback = sp->cls == XK_SPAN_UNSUPPORTED &&
			   !strcmp(sp->func, XK_SPAN_EVERY_USE) &&
			   strstr(sp->why, "objects= leaves out this object, which "
					   "names GSO_MAX_SEGS");
	}
	CHECK(loopback && xk_scope_nr_supported(&t) < t.nr_spans);
	xk_scope_free(&t);
	CHECK(xk_constant_resolve(STOCK, "MAX_RW_COUNT", &c) == 0 && !c.objects[0]);
	CHECK(objects_left_out(&kernel, &c, list, sizeof(list)) == 0 && !list[0]);
	return 0;
}

/*
 * The walk of the tree for a macro's users is kept in the kernel's cache
 * (users/NAME) and read instead of walking again: a list planted there is
 * what the next lookup sees (kernel/fork.o, which names no GSO_MAX_SEGS);
 * one of another format is walked again and replaced.
 */
static int users_walk_is_kept(void)
{
	struct xk_constant c;
	char path[XK_PATH_MAX], list[600], *text = NULL;
	const char *planted = "xk-users 2 .\n./fs/splice.c\n./kernel/fork.c\n";

	CHECK(xk_constant_resolve(STOCK, "GSO_MAX_SEGS", &c) == 0);
	CHECK(xk_snprintf(path, sizeof(path), "%s/users/GSO_MAX_SEGS",
			  kernel.dir) == 0);
	unlink(path);
	CHECK(objects_left_out(&kernel, &c, list, sizeof(list)) > 1);
	CHECK(xk_read_file(path, &text, NULL) == 0);
	CHECK(!strncmp(text, "xk-users 2 .\n", 13) && strstr(text, "drivers/net/loopback.c"));
	free(text);
	CHECK(xk_write_file(path, planted, strlen(planted), 0644) == 0);
	CHECK(objects_left_out(&kernel, &c, list, sizeof(list)) == 2);
	CHECK(!strcmp(list, "fs/splice.o, kernel/fork.o"));
	CHECK(xk_write_file(path, planted + 1, strlen(planted) - 1, 0644) == 0);
	CHECK(objects_left_out(&kernel, &c, list, sizeof(list)) > 2);
	CHECK(!strstr(list, "kernel/fork.o"));
	CHECK(xk_read_file(path, &text, NULL) == 0);
	CHECK(!strncmp(text, "xk-users 2 .\n", 13) && !strstr(text, "fork"));
	free(text);
	return 0;
}

/*
 * A literal's or variable's line follows its code= when a kernel update
 * moved it (the line= a hint): G_VAR found from a hint 36 lines off;
 * without code= the hint is the line, and the text must be on it; code=
 * that no line holds is named.
 */
static int literal_line_follows_its_code(void)
{
	struct xk_build_result *b = calloc(1, sizeof(*b));
	struct xk_constant c;
	int want;

	CHECK(b);
	CHECK(xk_constant_resolve(GOLDEN, "G_VAR", &c) == 0 && c.code[0]);
	want = c.line;
	c.line = want - 36;
	CHECK(xk_build(&kernel, &c, NULL, b) == 0 && c.line == want);
	CHECK(xk_constant_resolve(GOLDEN, "G_VAR", &c) == 0);
	c.code[0] = '\0';
	c.line = 60;
	CHECK(xk_build(&kernel, &c, NULL, b) == -ENOENT);
	CHECK(strstr(xk_last_error(), "'40' is not on xk_golden.c:60"));
	CHECK(xk_constant_resolve(GOLDEN, "G_VAR", &c) == 0);
	snprintf(c.code, sizeof(c.code), "golden_var_limit = 41;");
	CHECK(xk_build(&kernel, &c, NULL, b) == -ENOENT);
	CHECK(strstr(xk_last_error(), "no line of xk_golden.c holds 'golden_var_limit = 41;'"));
	free(b);
	return 0;
}

/*
 * Every form of the table (lib/analysis/forms/forms.c) has a golden case
 * here, the test that fails without it: a form added without one fails
 * this test, naming the form.
 */
static int every_form_has_a_golden_case(void)
{
	static const struct {
		const char *form;
		int (*golden)(void);
	} cases[] = {
		{ "variables", G_VAR_spans },
		{ "boot note", boot_message_only_is_a_note },
		{ "boot data", boot_derived_variables_are_data_spans },
		{ "boot code", G_INIT_spans },
		{ "check build only", code_only_the_check_build_changes_is_replayed },
		{ "register", G_LT_spans },
		{ "call state", G_STK_spans },
		{ "by shape", division_is_per_value_by_shape },
		{ "replayed", kyber_percent_is_replayed },
		{ "heap of one call", heap_in_one_call_is_call_state },
		{ "compare bounds", compare_immediates_do_not_wrap },
	};
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	int missing = 0, forms = 0;

	for (const struct gen_form *const *f = gen_forms; *f; f++, forms++) {
		size_t k = 0;

		while (k < n && strcmp(cases[k].form, (*f)->name))
			k++;
		if (k == n) {
			fprintf(stderr, "form \"%s\" has no golden case in "
				"test_gen.c\n", (*f)->name);
			missing++;
		}
	}
	CHECK(forms >= 11);
	return missing;
}

int main(int argc, char **argv)
{
	static const struct unit_test tests[] = {
		T(G_LT_spans), T(G_LE_spans), T(G_FOLD_spans), T(G_SCALE_spans),
		T(G_TWICE_spans), T(G_STORE_spans), T(G_RMW_spans), T(G_STACK_spans),
		T(G_ADDR_spans), T(G_INIT_spans), T(G_BUDGET_spans), T(G_SIZE_spans),
		T(G_SYSCTL_spans), T(G_RESET_spans), T(G_ALT_spans), T(G_JL_spans), T(G_IDX_spans), T(G_RTAB_spans),
		T(G_STK_spans), T(literal_line_follows_its_code),
		T(G_FAULT_spans), T(G_ALTI_spans), T(G_ALTX_spans),
		T(division_is_per_value_by_shape),
		T(remainder_changes_code_outside_its_spans),
		T(tail_call_argument_is_written_whole),
		T(flags_of_an_add_tested_later_are_refused),
		T(code_only_the_check_build_changes_is_replayed),
		T(jump_out_with_derived_data_is_refused),
		T(objects_naming_a_carrier_macro_are_built),
		T(objects_calling_a_carrier_inline_are_built),
		T(verify_checks_the_table_at_other_values),
		T(prove_narrows_to_the_values_built),
		T(objects_left_out_are_refused),
		T(users_walk_is_kept),
		T(verify_tells_other_registers_from_other_values),
		T(verify_runs_the_forms_retries), T(bounds_ends_are_checked),
		T(G_INLINE_spans), T(G_HOLD_spans), T(G_VAR_spans), T(G_PT_spans),
		T(G_REC_spans),
		T(G_DUP_spans), T(G_SPILL_spans), T(exits_cap_is_named),
		T(expression_pool_cap_is_named),
		T(BLK_MAX_REQUEST_COUNT_spans), T(MAX_SOFTIRQ_RESTART_spans),
		T(MAX_SOFTIRQ_TIME_spans), T(SHRINK_BATCH_spans),
		T(HYSTART_MIN_SAMPLES_spans), T(HYSTART_DELAY_MIN_spans),
		T(HYSTART_DELAY_MAX_spans), T(TCP_BACKLOG_SLACK_spans),
		T(blk_span_is_the_sbb_sequence), T(blk_immediates_are_located),
		T(plug_flush_reads_memory), T(rt_tries_pairs_no_address_with_a_value), T(io_uring_clamp_is_probed_on_its_instruction),
		T(ewma_factor_is_per_value), T(kyber_percent_is_replayed),
		T(bbr_margin_is_emulated),
		T(memcg_batch_exits_at_emulated_start),
		T(boot_message_only_is_a_note),
		T(boot_deadline_is_a_note),
		T(heap_size_is_refused),
		T(boot_task_state_is_a_note),
		T(replay_stores_several_fields),
		T(replay_values_storing_elsewhere_are_dropped),
		T(read_only_data_readers_are_spans),
		T(heap_in_one_call_is_call_state),
		T(heap_call_accounted_is_call_state),
		T(boot_derived_variables_are_data_spans),
		T(copied_variables_are_refused),
		T(frame_is_checked_below_the_default),
		T(compare_immediates_do_not_wrap),
		T(tsq_replays_without_the_jump_label_region),
		T(swap_iocb_field_moves),
		T(rcvwin_slack_is_a_multiply),
		T(identity_refuses_a_changed_function),
		T(module_identity_uses_the_shipped_ko), T(braced_config_names_the_module), T(unknown_constant_is_named),
		T(uncatalogued_macro_is_located), T(missing_macro_is_refused),
		T(three_uncatalogued_macros_are_analysed),
		T(macro_body_shapes), T(expression_macros_are_evaluated),
		T(jiffies_macro_fits_in_seconds),
		T(expression_macro_types_and_declarations),
		T(unevaluable_body_names_its_part),
		T(every_form_has_a_golden_case),
	};

	if (find_kernel())
		return 1;
	return unit_main("gen", tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
