// SPDX-License-Identifier: GPL-2.0
/*
 * The scope table's one parser and the update programs' one interpreter:
 * a written table reads back equal; malformed tables are refused with the
 * line named; invalid programs never validate; the flags the interpreter
 * computes are those this CPU computes.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "unit.h"
#include "xk/scope.h"

static void sample(struct xk_scope *t, struct xk_scope_span *s)
{
	memset(t, 0, sizeof(*t));
	memset(s, 0, sizeof(*s));
	snprintf(t->constant, sizeof(t->constant), "TEST_CONST");
	snprintf(t->kind, sizeof(t->kind), "macro");
	snprintf(t->source, sizeof(t->source), "x/y.h:3");
	snprintf(t->release, sizeof(t->release), "6.12.0-test");
	snprintf(t->version, sizeof(t->version), "6.12.0-1");
	t->def = 32;
	t->min = 1;
	t->max = 512;
	snprintf(s->object, sizeof(s->object), "block/blk-mq.o");
	snprintf(s->func, sizeof(s->func), "blk_add_rq_to_plug");
	s->func_size = 391;
	s->cls = XK_SPAN_REGISTER;
	s->start = 0x23;
	s->probe = 0x2e;
	s->expect_len = 14;
	/* add $8, %rcx; mov $0x40, %eax; mov %eax, %edx | mov %rax, %rdi:
	 * the span writes rax (its location); byte 5, the immediate's first,
	 * not compared */
	static const __u8 code[14] = { 0x48, 0x83, 0xc1, 0x08, 0xb8, 0x40, 0x00,
				       0x00, 0x00, 0x89, 0xc2, 0x48, 0x89, 0xc7 };
	for (int i = 0; i < 14; i++) {
		s->expect[i] = code[i];
		s->expect_mask[i] = i == 5 ? 0 : 0xff;
	}
	s->nr_params = 1;
	s->fit[0][0] = 2;
	s->fit[0][1] = -1;
	s->nr_locs = 1;
	s->locs[0].kind = XK_RAX;
	s->locs[0].width = 16;
	s->locs[0].expr.len = 3;
	s->locs[0].expr.insn[0] = (struct xk_expr_insn){ .op = XK_OP_REG, .width = 64, .reg = XK_RCX };
	s->locs[0].expr.insn[1] = (struct xk_expr_insn){ .op = XK_OP_PARAM, .width = 64, .imm = 2, .imm2 = -1 };
	s->locs[0].expr.insn[2] = (struct xk_expr_insn){ .op = XK_OP_ADD, .width = 32 };
	s->nr_exits = 2;
	s->exits[0] = 0x3c;
	s->exits[1] = 0xa2;
	s->escapes = XK_ESCAPE_CALL;
	s->slice_len = 4;
	t->nr_spans = 1;
	t->spans = s;
}

static char path[64];

/* Writes t to a new temporary file (path). */
static int write_sample_table(const struct xk_scope *t)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/xk-scope-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return xk_scope_write(t, path);
}

static int write_sample(void)
{
	struct xk_scope t;
	struct xk_scope_span s;

	sample(&t, &s);
	return write_sample_table(&t);
}

/*
 * A replayed span reads back with its replays (registers, flags, memory
 * inputs); a replay that writes rsp, a register twice or holds a
 * parameter is refused by the module's rule, and so is a replayed span
 * whose skipped bytes are no plain instructions.
 */
static int replayed_round_trip(void)
{
	/* lea rax, [rax + rax*4]; add rax, rax | mov rcx, rax */
	static const uint8_t code[] = { 0x48, 0x8d, 0x04, 0x80, 0x48, 0x01, 0xc0,
					0x48, 0x89, 0xc1 };
	struct xk_scope t, r;
	struct xk_scope_span s;
	struct xk_scope_replay rp = { .n = 11, .nr_locs = 2, .nr_mem_in = 1 };
	struct xk_ioc_replay d;

	sample(&t, &s);
	s.nr_locs = 0;
	s.nr_params = 0;
	s.emulate = XK_EMULATE_REPLAY;
	s.probe = s.start + 7;
	s.expect_len = sizeof(code);
	memcpy(s.expect, code, sizeof(code));
	memset(s.expect_mask, 0xff, sizeof(code));
	s.nr_ranges = 1;
	s.ranges[0][1] = s.func_size;
	rp.mem_in[0] = (struct xk_scope_mem_in){ .base = XK_RSP, .disp = 0x98, .width = 64 };
	rp.locs[0].kind = XK_RAX;
	rp.locs[0].width = 64;
	rp.locs[0].expr.len = 3;
	rp.locs[0].expr.insn[0] = (struct xk_expr_insn){ .op = XK_OP_REG, .width = 64, .reg = XK_NR_REGS };
	rp.locs[0].expr.insn[1] = (struct xk_expr_insn){ .op = XK_OP_CONST, .width = 64, .imm = 11 };
	rp.locs[0].expr.insn[2] = (struct xk_expr_insn){ .op = XK_OP_MUL, .width = 64 };
	rp.locs[1].kind = XK_LOC_FLAGS;
	rp.locs[1].width = 64;
	rp.locs[1].expr.len = 1;
	rp.locs[1].expr.insn[0] = (struct xk_expr_insn){ .op = XK_OP_CONST, .width = 64, .imm = 0x40 };
	CHECK(xk_scope_add_replay(&s, &rp) == 0);
	rp.n = 5;
	CHECK(xk_scope_add_replay(&s, &rp) == 0);
	CHECK(write_sample_table(&t) == 0);
	CHECK(xk_scope_read(path, &r) == 0);
	CHECK(r.spans[0].emulate == XK_EMULATE_REPLAY && r.spans[0].nr_replays == 2);
	CHECK(r.spans[0].replays[0].n == 11 && r.spans[0].replays[1].n == 5);
	CHECK(r.spans[0].replays[1].nr_locs == 2 && r.spans[0].replays[1].nr_mem_in == 1);
	CHECK(r.spans[0].replays[1].mem_in[0].disp == 0x98);
	CHECK(!memcmp(&r.spans[0].replays[0].locs[0].expr, &rp.locs[0].expr,
		      sizeof(rp.locs[0].expr)));
	CHECK(xk_scope_span_has_value(&r.spans[0], 5, 32) &&
	      xk_scope_span_has_value(&r.spans[0], 32, 32) &&
	      !xk_scope_span_has_value(&r.spans[0], 6, 32));
	xk_scope_free(&r);
	unlink(path);
	/* the module's rules on a replay */
	xk_scope_replay_to_ioc(&rp, &d);
	CHECK(!xk_ioc_replay_check(&d));
	d.locs[1].kind = XK_RSP;
	CHECK(xk_ioc_replay_check(&d) != NULL);
	d.locs[1].kind = XK_RAX;
	CHECK(xk_ioc_replay_check(&d) != NULL);	/* twice */
	xk_scope_replay_to_ioc(&rp, &d);
	d.locs[0].expr.insn[1].op = XK_OP_PARAM;
	CHECK(strstr(xk_ioc_replay_check(&d), "parameter"));
	/* skipped bytes that are no plain instruction: a call */
	s.expect[0] = 0xe8;
	CHECK(write_sample_table(&t) != 0);
	free(s.replays);
	unlink(path);
	return 0;
}

/*
 * A replay may store up to XK_REPLAY_MAX_STORES fields, first and in the
 * build's order, each one the replayed span's own code stores through a
 * base register it has not changed (MIN_LRU_BATCH's walk_pmd_range_locked
 * at 32: its spills of r14 and r15 swapped). A store the span does not
 * make, a store after a register, and one store too many are refused.
 */
static int replay_stores_are_checked_each(void)
{
	/* mov [rsp+0x20], r14; movsxd r14, ebx; mov [rsp+0x38], r15 | test */
	static const uint8_t code[] = { 0x4c, 0x89, 0x74, 0x24, 0x20, 0x4c, 0x63,
					0xf3, 0x4c, 0x89, 0x7c, 0x24, 0x38, 0x85,
					0xdb };
	struct xk_ioc_replay d = { .nr_locs = 3 };
	const uint64_t start = 0x14b, probe = start + 13;
	uint8_t mask[sizeof(code)];
	const char *why;

	d.locs[0] = (struct xk_ioc_loc){ .kind = XK_LOC_MEM, .base = XK_RSP,
					 .disp = 0x38, .width = 64 };
	d.locs[1] = (struct xk_ioc_loc){ .kind = XK_LOC_MEM, .base = XK_RSP,
					 .disp = 0x20, .width = 64 };
	d.locs[2] = (struct xk_ioc_loc){ .kind = XK_R14, .width = 64 };
	for (int i = 0; i < 3; i++) {
		d.locs[i].expr.len = 1;
		d.locs[i].expr.insn[0] = (struct xk_expr_insn){
			.op = XK_OP_REG, .width = 64,
			.reg = i == 0 ? XK_R15 : i == 1 ? XK_R14 : XK_RBX };
	}
	CHECK(!xk_ioc_replay_check(&d));
	memset(mask, 0xff, sizeof(mask));
	CHECK(!xk_rule_replay_stores(code, mask, start, probe, &d));
	/* a field the span's code does not store */
	d.locs[1].disp = 0x28;
	why = xk_rule_replay_stores(code, mask, start, probe, &d);
	CHECK(why && strstr(why, "stores where the span itself does not"));
	d.locs[1].disp = 0x20;
	/* a store after a register */
	d.locs[3] = d.locs[0];
	d.nr_locs = 4;
	why = xk_ioc_replay_check(&d);
	CHECK(why && strstr(why, "not among the first"));
	/* one store too many */
	for (int i = 0; i <= XK_REPLAY_MAX_STORES; i++)
		d.locs[i] = d.locs[i % 2];
	d.nr_locs = XK_REPLAY_MAX_STORES + 1;
	why = xk_ioc_replay_check(&d);
	CHECK(why && strstr(why, "one too many"));
	/* below the stack pointer: the handler's frames and saved registers */
	d.nr_locs = 1;
	d.locs[0].disp = -8;
	why = xk_ioc_replay_check(&d);
	CHECK(why && strstr(why, "below the stack pointer"));
	/* a base the span changes before its store, also through a byte
	 * register: bh is rbx's, not rdi's (c6 c7 10: mov bh, 0x10; 0f 94 c6:
	 * sete dh; 88 c5: mov ch, al), and a plain mov to rbx */
	{
		static const struct { uint8_t b[8]; int len, base; } changed[] = {
			{ { 0xc6, 0xc7, 0x10, 0x89, 0x03 }, 5, XK_RBX },
			{ { 0x0f, 0x94, 0xc6, 0x89, 0x02 }, 5, XK_RDX },
			{ { 0x88, 0xc5, 0x89, 0x01 }, 4, XK_RCX },
			{ { 0x48, 0x89, 0xcb, 0x89, 0x03 }, 5, XK_RBX },
		};

		for (size_t k = 0; k < sizeof(changed) / sizeof(changed[0]); k++) {
			d.locs[0] = (struct xk_ioc_loc){ .kind = XK_LOC_MEM,
				.base = changed[k].base, .disp = 0, .width = 32 };
			d.locs[0].expr.len = 1;
			d.locs[0].expr.insn[0] = (struct xk_expr_insn){
				.op = XK_OP_REG, .width = 64, .reg = XK_RAX };
			CHECK(!xk_ioc_replay_check(&d));
			/* refused: a base changed, or ah..bh written */
			CHECK(xk_rule_replay_stores(changed[k].b, mask, 0x10,
						    0x10 + changed[k].len, &d));
		}
		/* with the base unchanged (mov [rbx], eax alone) it is the
		 * span's store */
		CHECK(!xk_rule_replay_stores(changed[0].b + 3, mask, 0x10, 0x12, &d));
	}
	return 0;
}

/* mul's high half, computed without a 128-bit type, against one. */
static int mulhu_matches_the_cpu(void)
{
	uint64_t st = 0x9e3779b97f4a7c15ULL;

	for (int i = 0; i < 100000; i++) {
		uint64_t a, b;

		st ^= st << 13; st ^= st >> 7; st ^= st << 17;
		a = st;
		st ^= st << 13; st ^= st >> 7; st ^= st << 17;
		b = i % 3 ? st : st >> (i % 64);
		CHECK(xk_mulhu(a, b) ==
		      (uint64_t)(((unsigned __int128)a * b) >> 64));
	}
	CHECK(xk_mulhu(~0ULL, ~0ULL) == ~0ULL - 1);
	return 0;
}

/*
 * div's quotient and remainder at 32 and 64 bits, as the CPU computes
 * them; a zero divisor (where div would trap) gives 0 and the dividend.
 */
static int divu_remu_match_the_cpu(void)
{
	struct xk_expr_insn p[3];
	__u64 st[4], regs[XK_NR_INPUTS] = { 0 }, x = 0x243f6a8885a308d3ULL;

	for (int i = 0; i < 20000; i++) {
		unsigned int w = i % 2 ? 64 : 32;
		__u64 a, b, m = w == 64 ? ~0ULL : 0xffffffffULL;

		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		a = x;
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		b = i % 7 == 0 ? 0 : x >> (i % 60);
		regs[XK_RAX] = a;
		regs[XK_RCX] = b;
		p[0] = (struct xk_expr_insn){ .op = XK_OP_REG, .width = 64, .reg = XK_RAX };
		p[1] = (struct xk_expr_insn){ .op = XK_OP_REG, .width = 64, .reg = XK_RCX };
		p[2] = (struct xk_expr_insn){ .op = XK_OP_DIVU, .width = w };
		CHECK(!xk_prog_validate(p, 3, 3, 4));
		CHECK(xk_prog_run(p, 3, st, regs, 0) ==
		      ((b & m) ? (a & m) / (b & m) : 0));
		p[2].op = XK_OP_REMU;
		CHECK(xk_prog_run(p, 3, st, regs, 0) ==
		      ((b & m) ? (a & m) % (b & m) : (a & m)));
	}
	return 0;
}

static int round_trip(void)
{
	struct xk_scope t, r;
	struct xk_scope_span s;

	CHECK(write_sample() == 0);
	sample(&t, &s);
	CHECK(xk_scope_read(path, &r) == 0);
	CHECK(!strcmp(r.constant, "TEST_CONST") && r.def == 32 && r.max == 512);
	CHECK(r.nr_spans == 1);
	CHECK(r.spans[0].probe == 0x2e && r.spans[0].start == 0x23);
	CHECK(r.spans[0].expect_len == 14 && r.spans[0].expect_mask[5] == 0);
	CHECK(!memcmp(r.spans[0].expect, s.expect, 5));
	CHECK(r.spans[0].fit[0][0] == 2 && r.spans[0].fit[0][1] == -1);
	CHECK(r.spans[0].locs[0].width == 16);
	CHECK(!memcmp(&r.spans[0].locs[0].expr, &s.locs[0].expr,
		      sizeof(s.locs[0].expr)));
	CHECK(r.spans[0].nr_exits == 2 && r.spans[0].exits[1] == 0xa2);
	CHECK(r.spans[0].escapes == XK_ESCAPE_CALL);
	xk_scope_free(&r);
	unlink(path);
	return 0;
}

/*
 * A call-state span (a frame the constant sizes, or heap objects its call
 * allocates) reads back as one of its kind, and
 * one whose safe span is not its whole function is refused, like one the
 * table says is settleable (xk_ioc_span_check).
 */
static int call_state_round_trip(void)
{
	struct xk_scope t, r;
	struct xk_scope_span s;

	sample(&t, &s);
	s.call_state = XK_CALL_STATE_FRAME;
	s.nr_ranges = 1;
	s.ranges[0][0] = 0;
	s.ranges[0][1] = s.func_size;
	CHECK(write_sample_table(&t) == 0);
	CHECK(xk_scope_read(path, &r) == 0);
	CHECK(r.nr_spans == 1 && r.spans[0].call_state == XK_CALL_STATE_FRAME);
	xk_scope_free(&r);
	/* heap objects the call allocates and records: its own kind */
	s.call_state = XK_CALL_STATE_HEAP;
	CHECK(write_sample_table(&t) == 0);
	CHECK(xk_scope_read(path, &r) == 0);
	CHECK(r.nr_spans == 1 && r.spans[0].call_state == XK_CALL_STATE_HEAP);
	xk_scope_free(&r);
	s.ranges[0][0] = s.start;
	CHECK(write_sample_table(&t) != 0 || xk_scope_read(path, &r) != 0);
	CHECK(strstr(xk_last_error(), "call-state span"));
	unlink(path);
	return 0;
}

/*
 * Notes (uses the analysis left out with a reason, no span) follow the
 * spans and read back; text after the spans that is no note, a note
 * longer than a table holds, and more notes than XK_SCOPE_MAX_NOTES are
 * refused by name.
 */
static int notes_round_trip(void)
{
	struct xk_scope t, r;
	struct xk_scope_span s;
	char *text = NULL, *bad = NULL;

	sample(&t, &s);
	t.nr_notes = 2;
	snprintf(t.notes[0], sizeof(t.notes[0]), "kernel/rcu/tree.o rcu_init: at +0x2b5");
	snprintf(t.notes[1], sizeof(t.notes[1]), "second");
	CHECK(write_sample_table(&t) == 0);
	CHECK(xk_scope_read(path, &r) == 0);
	CHECK(r.nr_spans == 1 && r.nr_notes == 2);
	CHECK(!strcmp(r.notes[0], t.notes[0]) && !strcmp(r.notes[1], "second"));
	xk_scope_free(&r);
	CHECK(xk_read_file(path, &text, NULL) == 0);
	/* garbage after the spans */
	CHECK(asprintf(&bad, "%sbogus line\n", text) > 0);
	xk_write_file(path, bad, strlen(bad), 0644);
	free(bad);
	CHECK(xk_scope_read(path, &r) == -EINVAL);
	CHECK(strstr(xk_last_error(), "text after the last span"));
	/* a note too long */
	CHECK(asprintf(&bad, "%snote %0300d\n", text, 7) > 0);
	xk_write_file(path, bad, strlen(bad), 0644);
	free(bad);
	CHECK(xk_scope_read(path, &r) == -EINVAL);
	CHECK(strstr(xk_last_error(), "longer than 255"));
	/* one note more than a table holds */
	CHECK(asprintf(&bad, "%s", text) > 0);
	for (int i = 0; i < XK_SCOPE_MAX_NOTES - 1; i++) {
		char *more;

		CHECK(asprintf(&more, "%snote n%d\n", bad, i) > 0);
		free(bad);
		bad = more;
	}
	xk_write_file(path, bad, strlen(bad), 0644);
	CHECK(xk_scope_read(path, &r) == -EINVAL);
	CHECK(strstr(xk_last_error(), "more than 16 notes"));
	free(bad);
	free(text);
	unlink(path);
	return 0;
}

/*
 * A proved table's values read back; a value outside them is refused
 * naming the values and the "values: " note, one in them is taken; a
 * values line that breaks its rules (no proved line before it, out of
 * order or touching, not from bound to bound, without the default, a
 * 17th range) is refused by name.
 */
static int proved_values_round_trip(void)
{
	struct xk_scope t, r;
	struct xk_scope_span s;
	char *text = NULL;
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "values 1..8 16..512", "values without a proved line" },
		{ "proved every 511\nvalues 1..8 8..512", "each range apart" },
		{ "proved every 511\nvalues 1..8 9..512", "each range apart" },
		{ "proved every 511\nvalues 16..8 20..512", "in order" },
		{ "proved every 511\nvalues 1..8 16..500", "from the lower bound" },
		{ "proved every 511\nvalues 1..8 40..512", "without the default" },
		{ "proved every 511\nvalues 1..8, 16..512", "space-separated" },
		{ "proved many 511", "proved every|sampled N" },
		{ "proved every 511\nproved every 511", "a second proved line" },
		{ "checked ends\nchecked ends", "a second checked line" },
		{ "proved every 511\nchecked ends", "one after proved" },
		{ "checked end", "spans" },
	};

	sample(&t, &s);
	t.nr_proved = 511;
	t.proved_every = true;
	t.nr_ranges = 3;
	t.ranges[0][0] = 1, t.ranges[0][1] = 8;
	t.ranges[1][0] = 16, t.ranges[1][1] = 16;
	t.ranges[2][0] = 32, t.ranges[2][1] = 512;
	t.nr_notes = 1;
	snprintf(t.notes[0], sizeof(t.notes[0]), "values: 9 refused (at 9: why)");
	CHECK(write_sample_table(&t) == 0);
	CHECK(xk_read_file(path, &text, NULL) == 0);
	CHECK(strstr(text, "\nproved every 511\nvalues 1..8 16 32..512\nspans 1\n"));
	CHECK(xk_scope_read(path, &r) == 0);
	CHECK(r.nr_proved == 511 && r.proved_every && r.nr_ranges == 3);
	CHECK(r.ranges[1][0] == 16 && r.ranges[1][1] == 16 && r.ranges[2][1] == 512);
	CHECK(xk_scope_check_value(&r, 16) == 0 && xk_scope_check_value(&r, 100) == 0);
	CHECK(xk_scope_check_value(&r, 9) == -ERANGE);
	CHECK(strstr(xk_last_error(), "value 9 is not among the values proved "
				      "for this table (1..8, 16, 32..512): 9 refused"));
	CHECK(xk_scope_check_value(&r, 513) == -ERANGE &&
	      strstr(xk_last_error(), "out of bounds"));
	xk_scope_free(&r);
	/* an unproved table whose ends xk gen checked */
	t.nr_proved = 0;
	t.nr_ranges = 0;
	t.nr_notes = 0;
	t.ends_checked = true;
	CHECK(write_sample_table(&t) == 0);
	free(text);
	CHECK(xk_read_file(path, &text, NULL) == 0);
	CHECK(strstr(text, "\nbounds 1 512\nchecked ends\nspans 1\n"));
	CHECK(xk_scope_read(path, &r) == 0 && r.ends_checked && !r.nr_proved);
	xk_scope_free(&r);
	t.ends_checked = false;
	t.nr_proved = 511;
	t.nr_ranges = 3;
	CHECK(write_sample_table(&t) == 0);
	free(text);
	CHECK(xk_read_file(path, &text, NULL) == 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *p = strstr(text, "proved every 511\nvalues 1..8 16 32..512\n");
		char *bent = NULL;

		CHECK(p);
		CHECK(asprintf(&bent, "%.*s%s\n%s", (int)(p - text), text,
			       bad[i].line, p + strlen("proved every 511\nvalues "
							 "1..8 16 32..512\n")) > 0);
		xk_write_file(path, bent, strlen(bent), 0644);
		free(bent);
		CHECK(xk_scope_read(path, &r) == -EINVAL);
		if (!strstr(xk_last_error(), bad[i].why)) {
			fprintf(stderr, "%s: %s\n", bad[i].line, xk_last_error());
			return -1;
		}
	}
	/* 17 ranges */
	{
		char *p = strstr(text, "values 1..8 16 32..512"), *bent = NULL;

		CHECK(asprintf(&bent, "%.*svalues 1..8 10 12 14 16 18 20 22 24 26 28 "
			       "30 40 50 60 70 80..512%s", (int)(p - text), text,
			       p + strlen("values 1..8 16 32..512")) > 0);
		xk_write_file(path, bent, strlen(bent), 0644);
		free(bent);
		CHECK(xk_scope_read(path, &r) == -EINVAL);
		CHECK(strstr(xk_last_error(), "more than 16 ranges"));
	}
	free(text);
	unlink(path);
	return 0;
}

/*
 * A per-value span reads back with its parameters' instructions and
 * points; points that break the rule (none at the default, one outside
 * the bounds, a value twice) are refused with the rule named.
 */
static int per_value_points_round_trip(void)
{
	struct xk_scope t, r;
	struct xk_scope_span s;

	sample(&t, &s);
	s.fit[0][0] = 0;
	s.fit[0][1] = 63;
	s.param_insn[0] = 0x26;
	s.nr_points = 3;
	s.points[0] = (struct xk_point){ .n = 32, .p = { 63 } };
	s.points[1] = (struct xk_point){ .n = 100, .p = { 199 } };
	s.points[2] = (struct xk_point){ .n = 7, .p = { -5 } };
	s.locs[0].expr.insn[1].reg = 0;
	CHECK(xk_scope_write(&t, path) == 0);
	CHECK(xk_scope_read(path, &r) == 0);
	CHECK(r.spans[0].nr_points == 3 && r.spans[0].param_insn[0] == 0x26);
	CHECK(r.spans[0].points[1].n == 100 && r.spans[0].points[1].p[0] == 199);
	CHECK(r.spans[0].points[2].n == 7 && r.spans[0].points[2].p[0] == -5);
	xk_scope_free(&r);
	s.points[0].n = 33;		/* no point at the default */
	CHECK(xk_scope_write(&t, path) == -EINVAL);
	CHECK(strstr(xk_last_error(), "no point at the compiled-in value"));
	s.points[0].n = 32;
	s.points[2].n = 1000;		/* outside [1, 512] */
	CHECK(xk_scope_write(&t, path) == -EINVAL);
	CHECK(strstr(xk_last_error(), "outside the bounds"));
	s.points[2].n = 100;
	CHECK(xk_scope_write(&t, path) == -EINVAL);
	CHECK(strstr(xk_last_error(), "two points"));
	unlink(path);
	return 0;
}

/* Replaces the first line starting with `key` and expects a refusal. */
static int refuse_with(const char *key, const char *line, const char *msg)
{
	char *text, *at, *end, *bad;
	struct xk_scope r;
	int err;

	if (write_sample() || xk_read_file(path, &text, NULL))
		return 1;
	at = strstr(text, key);
	if (!at)
		return 1;
	end = strchr(at, '\n');
	if (asprintf(&bad, "%.*s%s%s", (int)(at - text), text, line, end) < 0)
		return 1;
	xk_write_file(path, bad, strlen(bad), 0644);
	err = xk_scope_read(path, &r);
	free(text);
	free(bad);
	unlink(path);
	if (err != -EINVAL) {
		printf("#   '%s' was accepted\n", line);
		return 1;
	}
	if (!strstr(xk_last_error(), msg)) {
		printf("#   error '%s' lacks '%s'\n", xk_last_error(), msg);
		return 1;
	}
	return 0;
}

/*
 * The instruction a span probed on its last (post_len) resumes at may be
 * uncompared whole, whatever its length (an alternative's site); in part,
 * or without post_len, it is refused.
 */
static int uncompared_resume_after_a_post_probe(void)
{
	struct xk_scope t;
	struct xk_scope_span *s = calloc(1, sizeof(*s));
	const char *why;
	__u32 p;

	CHECK(s);
	sample(&t, s);
	p = (__u32)(s->probe - s->start);
	memset(s->expect_mask + p, 0, s->expect_len - p);
	CHECK(xk_rule_check_expect(s->expect_mask, s->expect_len, s->start,
				   s->probe, 2) == NULL);
	CHECK(!strcmp(xk_rule_check_expect(s->expect_mask, s->expect_len, s->start,
					   s->probe, 0),
		      "the byte under the probe point is not compared"));
	s->expect_mask[s->expect_len - 1] = 0xff;
	why = xk_rule_check_expect(s->expect_mask, s->expect_len, s->start,
				   s->probe, 2);
	CHECK(why && strstr(why, "compared in part"));
	free(s);
	return 0;
}

static int malformed_tables_are_refused(void)
{
	CHECK(!refuse_with("xkernel-scope-table", "xkernel-scope-table 99", "version 99"));
	CHECK(!refuse_with("probe", "probe 0x10", "probe offset"));
	CHECK(!refuse_with("bounds", "bounds 40 10", "bounds"));
	CHECK(!refuse_with("loc ", "loc rax 32 add:32:0:0:0", "invalid program"));
	CHECK(!refuse_with("loc ", "loc rzz 32 const:32:0:1:0", "unknown location"));
	CHECK(!refuse_with("loc ", "loc rax 32 jump:32:0:1:0", "unknown program operation"));
	CHECK(!refuse_with("expect", "expect zz", "expected bytes"));
	CHECK(!refuse_with("class", "class guessed", "unknown class"));
	return 0;
}

static int missing_table_names_the_path(void)
{
	struct xk_scope r;

	CHECK(xk_scope_read("/nonexistent/x.scope", &r) == -ENOENT);
	CHECK(strstr(xk_last_error(), "/nonexistent/x.scope"));
	return 0;
}

static int programs_validate(void)
{
	struct xk_expr e = { .len = 1 };

	e.insn[0] = (struct xk_expr_insn){ .op = XK_OP_CONST, .width = 64, .imm = 5 };
	CHECK(xk_expr_validate(&e) == 0);
	e.insn[0].width = 12;
	CHECK(xk_expr_validate(&e) == -EINVAL);		/* bad width */
	e.insn[0] = (struct xk_expr_insn){ .op = XK_OP_REG, .width = 64,
					   .reg = XK_NR_INPUTS };
	CHECK(xk_expr_validate(&e) == -EINVAL);		/* no such input */
	/* a memory input only where the span has it (xk_rule_check_inputs) */
	e.insn[0].reg = XK_NR_REGS;
	CHECK(xk_expr_validate(&e) == 0);
	CHECK(xk_rule_check_inputs(&e, 0) != NULL);
	CHECK(xk_rule_check_inputs(&e, 1) == NULL);
	e.insn[0] = (struct xk_expr_insn){ .op = XK_OP_SUB, .width = 64 };
	CHECK(xk_expr_validate(&e) == -EINVAL);		/* stack underflow */
	e.len = 0;
	CHECK(xk_expr_validate(&e) == -EINVAL);
	e.len = XK_EXPR_MAX_INSNS + 1;
	CHECK(xk_expr_validate(&e) == -EINVAL);
	return 0;
}

/* The BLK span's program: (-(cl < 1) & -N) + 2N, at N = 4 and 32. */
static int blk_program_computes_what_a_build_would(void)
{
	struct xk_expr e = { .len = 0 };
	__u64 regs[XK_NR_REGS] = { 0 };
#define I(...) (e.insn[e.len++] = (struct xk_expr_insn){ __VA_ARGS__ })
	I(.op = XK_OP_REG, .width = 8, .reg = XK_RCX);
	I(.op = XK_OP_CONST, .width = 8, .imm = 1);
	I(.op = XK_OP_LTU, .width = 8);
	I(.op = XK_OP_NEG, .width = 32);
	I(.op = XK_OP_PARAM, .width = 32, .imm = -1, .imm2 = 0);
	I(.op = XK_OP_AND, .width = 32);
	I(.op = XK_OP_PARAM, .width = 32, .imm = 2, .imm2 = 0);
	I(.op = XK_OP_ADD, .width = 32);
#undef I
	CHECK(xk_expr_validate(&e) == 0);
	regs[XK_RCX] = 0;		/* multiple_queues false: cl < 1 */
	CHECK(xk_expr_eval(&e, regs, 32) == 32);
	CHECK(xk_expr_eval(&e, regs, 4) == 4);
	regs[XK_RCX] = 1;		/* multiple queues: 2N */
	CHECK(xk_expr_eval(&e, regs, 32) == 64);
	CHECK(xk_expr_eval(&e, regs, 128) == 256);
	return 0;
}

static uint64_t cpu_flags_cmp(uint64_t a, uint64_t b, int w)
{
	uint64_t f;

	switch (w) {
	case 8: asm("cmpb %b2, %b1; pushfq; popq %0" : "=r"(f) : "q"(a), "q"(b) : "cc"); break;
	case 16: asm("cmpw %w2, %w1; pushfq; popq %0" : "=r"(f) : "r"(a), "r"(b) : "cc"); break;
	case 32: asm("cmpl %k2, %k1; pushfq; popq %0" : "=r"(f) : "r"(a), "r"(b) : "cc"); break;
	default: asm("cmpq %2, %1; pushfq; popq %0" : "=r"(f) : "r"(a), "r"(b) : "cc"); break;
	}
	return f & XK_EFLAGS_ARITH;
}

static int flags_match_the_cpu(void)
{
	static const uint64_t v[] = { 0, 1, 2, 7, 0x7f, 0x80, 0xff, 0x7fff, 0x8000,
				      0xffff, 0x7fffffff, 0x80000000, 0xffffffff,
				      0x123456789, 0x8000000000000000ULL, ~0ULL };
	static const int widths[] = { 8, 16, 32, 64 };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++)
			for (int k = 0; k < 4; k++) {
				uint64_t want = cpu_flags_cmp(v[i], v[j], widths[k]);
				uint64_t got = xk_flags_sub(v[i], v[j], widths[k]);

				if (want != got) {
					printf("#   cmp %#llx, %#llx /%d: cpu %#llx, xk %#llx\n",
					       (unsigned long long)v[i],
					       (unsigned long long)v[j], widths[k],
					       (unsigned long long)want,
					       (unsigned long long)got);
					return 1;
				}
			}
	return 0;
}

/*
 * What the emulated form may skip (xk_rule_decode_plain, the module's
 * rule): the lengths of plain instructions as the CPU decodes them, which
 * of them store, and nothing that branches, calls, traps, locks, takes a
 * segment or divides. A skipped span stores only at its own location.
 */
static int emulated_skips_only_plain_instructions(void)
{
	static const struct {
		unsigned char b[12];
		unsigned int n, len;
		int store, masked;	/* masked: byte index left uncompared */
	} cases[] = {
		{ { 0x48, 0x69, 0xc0, 0x30, 0x1b, 0x0f, 0x00 }, 7, 7, 0, -1 },
		{ { 0x48, 0xc1, 0xe8, 0x18 }, 4, 4, 0, -1 },
		{ { 0x8b, 0x87, 0xc8, 0x04, 0x00, 0x00 }, 6, 6, 0, -1 },
		{ { 0x89, 0x87, 0xc8, 0x04, 0x00, 0x00 }, 6, 6, 1, -1 },
		{ { 0x41, 0x0f, 0xaf, 0xc0 }, 4, 4, 0, -1 },
		{ { 0x0f, 0x4c, 0xc1 }, 3, 3, 0, -1 },
		{ { 0x48, 0x8d, 0x04, 0x80 }, 4, 4, 0, -1 },
		{ { 0x8d, 0x04, 0x85, 0, 0, 0, 0 }, 7, 7, 0, -1 },
		{ { 0x66, 0xc7, 0x47, 0x10, 0x34, 0x12 }, 6, 6, 1, -1 },
		{ { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 10, 10, 0, -1 },
		{ { 0x83, 0x7f, 0x10, 0x05 }, 4, 4, 0, -1 },
		{ { 0x83, 0x47, 0x10, 0x05 }, 4, 4, 1, -1 },
		{ { 0x8b, 0x05, 0, 0, 0, 0 }, 6, 6, 0, 2 },	/* relocated rel32 */
		{ { 0x0f, 0x94, 0xc0 }, 3, 3, 0, -1 },		/* sete al */
		{ { 0xf7, 0xd8 }, 2, 2, 0, -1 },		/* neg eax */
		{ { 0x48, 0x98 }, 2, 2, 0, -1 },		/* cdqe */
		/* refused */
		{ { 0x8b, 0x87, 0xc8, 0x04, 0x00, 0x00 }, 6, 0, 0, 0 },	/* opcode masked */
		{ { 0x48, 0x69, 0xc0, 0x30, 0x1b }, 5, 0, 0, -1 },	/* runs past n */
		{ { 0xe8, 0, 0, 0, 0 }, 5, 0, 0, -1 },		/* call */
		{ { 0x0f, 0x0b }, 2, 0, 0, -1 },		/* ud2 */
		{ { 0xf0, 0x01, 0x07 }, 3, 0, 0, -1 },		/* lock add */
		{ { 0x65, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0 }, 9, 0, 0, -1 },	/* %gs */
		{ { 0xf7, 0xf1 }, 2, 0, 0, -1 },		/* div ecx */
		{ { 0x74, 0x05 }, 2, 0, 0, -1 },		/* je */
		{ { 0xc3 }, 1, 0, 0, -1 },			/* ret */
		{ { 0xff, 0xd0 }, 2, 0, 0, -1 },		/* call *rax */
		{ { 0x8d, 0xc0 }, 2, 0, 0, -1 },		/* lea, register form */
		{ { 0x0f, 0x05 }, 2, 0, 0, -1 },		/* syscall */
		{ { 0x50 }, 1, 0, 0, -1 },			/* push */
		{ { 0xf3, 0x48, 0xab }, 3, 0, 0, -1 },		/* rep stos */
		{ { 0xd1, 0xf0 }, 2, 0, 0, -1 },		/* shift /6 */
		{ { 0x41, 0x90 }, 2, 0, 0, -1 },		/* xchg r8, rax */
		{ { 0x48, 0x83, 0xec, 0x18 }, 4, 0, 0, -1 },	/* sub rsp, 0x18 */
		{ { 0x48, 0x89, 0xec }, 3, 0, 0, -1 },		/* mov rsp, rbp */
		{ { 0x48, 0x8d, 0x65, 0xd8 }, 4, 0, 0, -1 },	/* lea rsp, [rbp-40] */
		{ { 0x40, 0xb4, 0x01 }, 3, 0, 0, -1 },		/* mov spl, 1 */
		{ { 0xb4, 0x01 }, 2, 0, 0, -1 },		/* mov ah, 1 */
		{ { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 5, 0, 0, -1 },	/* patchable nop */
		{ { 0x66, 0x90 }, 2, 0, 0, -1 },		/* patchable nop */
		{ { 0x66, 0x48, 0x05, 1, 2, 3, 4 }, 7, 7, 0, -1 },	/* REX.W wins */
		{ { 0x66, 0x05, 1, 2 }, 4, 4, 0, -1 },		/* add ax, imm16 */
	};
	/* imul; mov [rdi], eax; mov eax, [rdi] */
	static const unsigned char span[] = { 0x48, 0x69, 0xc0, 0x30, 0x1b, 0x0f,
					      0x00, 0x89, 0x07, 0x8b, 0x07 };
	unsigned char mask[16];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int store = -1, dst;
		unsigned int len;

		memset(mask, 0xff, sizeof(mask));
		if (cases[i].masked >= 0)
			mask[cases[i].masked] = 0;
		len = xk_rule_decode_plain(cases[i].b, mask, cases[i].n, 0, &store,
					   &dst);
		if (len != cases[i].len || (len && store != cases[i].store)) {
			printf("#   case %zu: length %u store %d, want %u %d\n", i,
			       len, store, cases[i].len, cases[i].store);
			return 1;
		}
	}
	/* mov edi, eax; mov [rdi], eax: the store's base changed first */
	static const unsigned char rebased[] = { 0x89, 0xc7, 0x89, 0x07 };

	memset(mask, 0xff, sizeof(mask));
	CHECK(!xk_rule_check_emulated(span, mask, 0x10, 0x10 + 7, (__u32)-1, -1));
	CHECK(!xk_rule_check_emulated(span, mask, 0x10, 0x10 + 11, 7, XK_RDI));
	CHECK(xk_rule_check_emulated(span, mask, 0x10, 0x10 + 11, (__u32)-1, -1));
	CHECK(xk_rule_check_emulated(span, mask, 0x10, 0x10 + 11, 9, XK_RDI));
	CHECK(xk_rule_check_emulated(span, mask, 0x10, 0x10 + 6, (__u32)-1, -1));
	CHECK(xk_rule_check_emulated(span, mask, 0x10, 0x10, (__u32)-1, -1));
	CHECK(!xk_rule_check_emulated(rebased, mask, 0, 4, 2, XK_RAX));
	CHECK(xk_rule_check_emulated(rebased, mask, 0, 4, 2, XK_RDI));
	return 0;
}

/*
 * The stores the module takes as a span's memory location: moves, and
 * the arithmetic of group 1 to memory (an emulated read-modify-write);
 * never a compare, a register destination or an indexed address.
 */
static int stores_of_memory_locations(void)
{
	static const struct {
		unsigned char b[10];
		unsigned int n, len;
		int base;
		long long disp;
		unsigned int width;
	} cases[] = {
		/* mov [rdi + 4], eax */
		{ { 0x89, 0x47, 0x04 }, 3, 3, XK_RDI, 4, 32 },
		/* mov qword [rbx], 7 */
		{ { 0x48, 0xc7, 0x03, 7, 0, 0, 0 }, 7, 7, XK_RBX, 0, 64 },
		/* add qword [rbp - 0x180], 0x20 (shrink_lruvec) */
		{ { 0x48, 0x83, 0x85, 0x80, 0xfe, 0xff, 0xff, 0x20 }, 8, 8,
		  XK_RBP, -0x180, 64 },
		/* add dword [rdi + 4], 0x19 (golden_rmw) */
		{ { 0x83, 0x47, 0x04, 0x19 }, 4, 4, XK_RDI, 4, 32 },
		/* sub byte [rdi], 1 */
		{ { 0x80, 0x2f, 0x01 }, 3, 3, XK_RDI, 0, 8 },
		/* or word [rsi + 2], 0x1234 */
		{ { 0x66, 0x81, 0x4e, 0x02, 0x34, 0x12 }, 6, 6, XK_RSI, 2, 16 },
		/* and dword [rcx + 0x100], 0xff */
		{ { 0x81, 0xa1, 0x00, 0x01, 0, 0, 0xff, 0, 0, 0 }, 10, 10,
		  XK_RCX, 0x100, 32 },
		/* cmp dword [rdi + 4], 0x19: reads only */
		{ { 0x83, 0x7f, 0x04, 0x19 }, 4, 0, 0, 0, 0 },
		/* add eax, 0x19: a register */
		{ { 0x83, 0xc0, 0x19 }, 3, 0, 0, 0, 0 },
		/* add dword [rdi + rax*4], 1: indexed */
		{ { 0x83, 0x04, 0x87, 0x01 }, 4, 0, 0, 0, 0 },
		/* add dword [rdi + 4], 0x19 cut short */
		{ { 0x83, 0x47, 0x04 }, 3, 0, 0, 0, 0 },
	};
	unsigned char mask[16];

	memset(mask, 0xff, sizeof(mask));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xk_rule_store st = { 0 };
		unsigned int len = xk_rule_decode_store(cases[i].b, mask,
							cases[i].n, 0, &st);

		if (len != cases[i].len ||
		    (len && (st.base != cases[i].base || st.disp != cases[i].disp ||
			     st.width != cases[i].width))) {
			printf("#   case %zu: length %u base %d disp %lld width %u\n",
			       i, len, st.base, (long long)st.disp, st.width);
			return 1;
		}
	}
	/* the module writes [rdi + 4] at the probe point, after the span:
	 * mov [rdi + 4], eax; mov ecx, eax keeps rdi (not rcx); mov rdi, rcx
	 * does not; a call (e8) between them cannot be told */
	static const unsigned char kept[] = { 0x89, 0x47, 0x04, 0x89, 0xc1 };
	static const unsigned char moved[] = { 0x89, 0x47, 0x04, 0x48, 0x89, 0xcf };
	static const unsigned char called[] = { 0x89, 0x47, 0x04, 0xe8, 0, 0, 0, 0 };

	CHECK(!xk_rule_base_kept(kept, mask, 0, sizeof(kept), XK_RDI));
	CHECK(xk_rule_base_kept(kept, mask, 0, sizeof(kept), XK_RCX));
	CHECK(strstr(xk_rule_base_kept(moved, mask, 0, sizeof(moved), XK_RDI),
		     "base register changes"));
	CHECK(strstr(xk_rule_base_kept(called, mask, 0, sizeof(called), XK_RDI),
		     "not one the module can tell"));
	return 0;
}

UNIT_MAIN("scope",
	  T(replayed_round_trip), T(replay_stores_are_checked_each),
	  T(mulhu_matches_the_cpu),
	  T(divu_remu_match_the_cpu),
	  T(round_trip),
	  T(notes_round_trip), T(call_state_round_trip),
	  T(stores_of_memory_locations),
	  T(per_value_points_round_trip),
	  T(malformed_tables_are_refused), T(proved_values_round_trip), T(uncompared_resume_after_a_post_probe),
	  T(missing_table_names_the_path),
	  T(programs_validate),
	  T(blk_program_computes_what_a_build_would),
	  T(flags_match_the_cpu),
	  T(emulated_skips_only_plain_instructions))
