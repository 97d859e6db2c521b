/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The control ABI between xk and xkernel.ko: ioctls on /dev/xkernel.
 * Opening the device requires CAP_SYS_ADMIN. Every request struct starts
 * with its size, so that fields can be added at the end; the module
 * refuses a size it does not know. Errors come back as a negative errno
 * and, in the request's error field, one line naming the cause.
 */
#ifndef XK_IOCTL_H
#define XK_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#include "xk_expr.h"
#include "xk_rules.h"

#define XK_DEVICE "/dev/xkernel"
#define XK_ABI_VERSION 14

/* limits: xk_rules.h */

/* how a new value takes effect */
enum xk_mode {
	XK_MODE_IMMEDIATE = 0,	/* at once, for every thread */
	XK_MODE_GLOBAL = 1,	/* when no thread is inside any safe span */
	XK_MODE_PER_TASK = 2,	/* each thread when it is outside the safe spans */
};

struct xk_ioc_loc {
	__s32 kind;		/* enum xk_reg, XK_LOC_FLAGS or XK_LOC_MEM */
	__s32 base;		/* memory: base register, or XK_BASE_RIP */
	__s64 disp;		/* rip: offset in func of the rel32 field */
	__u32 width;		/* bits written */
	__u32 rip_end;		/* rip: offset in func of the insn's end */
	struct xk_expr expr;
};

/*
 * An immediate of the span's code that holds a*N + b: settling writes the
 * value in force there and takes the span's probe away (xk_rule_check_imm).
 */
struct xk_ioc_imm {
	__u64 insn;		/* offset in func of its instruction */
	__u64 field;		/* offset in func of the immediate's bytes */
	__u32 insn_len;
	__u32 size;		/* bytes of the immediate */
	__u32 width;		/* operand width (bits) it is read at */
	__u32 pad;
	__s64 a, b;
};

struct xk_ioc_span {
	char func[XK_FUNC_MAX];
	__u64 func_size;
	__u64 start;		/* offsets in func */
	__u64 probe;
	__u32 expect_len;	/* bytes from start that must match */
	__u32 nr_locs;
	__u8 expect[XK_MAX_EXPECT];
	__u8 expect_mask[XK_MAX_EXPECT];
	struct xk_ioc_loc locs[XK_MAX_LOCS];
	__u32 nr_exits;
	__u32 escapes;		/* XK_ESCAPE_* of the scope table */
	__u64 exits[XK_MAX_EXITS];	/* safe span ends before these */
	__u32 nr_ranges;
	__u32 pad2;
	__u64 ranges[XK_MAX_RANGES][2];	/* safe span: [from, to) in func */
	/* a static function whose name repeats: the addresses of every copy
	 * (from kallsyms); the module takes the one whose bytes match */
	__u32 nr_cands;
	__u32 pad3;
	__u64 cands[XK_MAX_CANDS];
	/* the span's fitted immediates, when all of them are settleable
	 * (0: the span always keeps its probe) */
	__u32 nr_imms;
	__u32 pad4;
	struct xk_ioc_imm imms[XK_MAX_PARAMS];
	/* values the programs read from memory (XK_OP_REG XK_NR_REGS + k) */
	__u32 nr_mem_in;
	__u32 pad5;
	struct xk_ioc_mem_in {
		__s32 base;	/* enum xk_reg */
		__u32 width;	/* bits read, zero-extended */
		__s64 disp;
		__s32 index;	/* enum xk_reg, when scale is not 0 */
		__u32 scale;	/* [base + index * scale + disp]; 0: no index */
	} mem_in[XK_MAX_MEM_INPUTS];
	/*
	 * 0, or the length of the span's last instruction, on which the
	 * rewrite probe then sits instead of the probe point (a branch target,
	 * where a probe would also fire on paths that did not run the span):
	 * the module rewrites after that instruction has run (a post handler),
	 * when it falls through to the probe point. Such a span is never
	 * settled and never driven by a policy.
	 */
	__u32 post_len;
	/*
	 * 0, or a per-value span: its parameters are no a*N + b but the
	 * immediates of a build with each value (a division by N turned into
	 * a multiply and a shift). Its programs' XK_OP_PARAM k push
	 * points[j].p[k] for the point j of the value in force; a value with
	 * no point is refused (XK_IOC_POINT adds one). Such a span is never
	 * settled and never driven by a policy.
	 */
	__u32 nr_points;
	struct xk_point points[XK_MAX_POINTS];
	/*
	 * 1: the emulated form. The rewrite probe sits on the span's first
	 * instruction (start), where every input is live; the module writes
	 * the locations (everything the span leaves that is read after it)
	 * and resumes at the probe point: the span does not run. The skipped
	 * bytes are all compared and xk_rule_check_emulated allows them:
	 * registers, flags and the span's own store only. Never optimized,
	 * settled or driven by a policy.
	 * 2 (XK_EMULATE_REPLAY): the replayed form. The same probe and
	 * resume point, but what the module writes comes from a build with
	 * the value in force, whose code differs from the baseline's in
	 * [start, probe) only (other registers, another schedule): one
	 * struct xk_ioc_replay per value (XK_IOC_REPLAY), nr_locs 0 here. A
	 * value with no replay is refused. Its safe span is the whole
	 * function: the registers between two replayed spans are the
	 * variant's, so a thread must run all of them with one value.
	 * 3 (XK_EMULATE_DATA): no code but a variable the constant
	 * initialises (xk_ioc_data_check): func names the data object,
	 * func_size its size, [start, probe) the field, expect its
	 * compiled-in bytes, imms[0] the field as a*N + b, cands the
	 * object's addresses (kallsyms). No probe: when the value in force
	 * changes, the module writes the field if it still holds what the
	 * previous value put there (a compare-and-exchange).
	 */
	__u32 emulate;
	/*
	 * XK_CALL_STATE_FRAME: the span's function keeps state of the call
	 * that the value shaped (its frame is sized by the constant: an
	 * array on the stack filled under one bound; the constant's upper
	 * bound is then its default). XK_CALL_STATE_HEAP: the heap objects
	 * the call allocates are sized by it, and the call records their
	 * size (no other code uses the constant). Either way its ranges are
	 * the whole function; its value never changes at an instant, only
	 * globally or per task, and goes back to the default that way at
	 * unload; no policy drives it; a thread at the span's start is
	 * inside (it may have run the function's earlier part). 0 otherwise;
	 * nothing else is valid.
	 */
	__u32 call_state;
};

#define XK_CALL_STATE_FRAME 1
#define XK_CALL_STATE_HEAP 2

#define XK_EMULATE_SPAN 1
#define XK_EMULATE_REPLAY 2
#define XK_EMULATE_DATA 3

/*
 * XK_IOC_REPLAY: what a replayed span of a loaded constant leaves at one
 * value, from the build with that value: up to XK_REPLAY_MAX_LOCS
 * registers and the flags, each a program of the registers at the span's
 * start and of up to XK_MAX_MEM_INPUTS values read there (as an emulated
 * span's); and, first, up to XK_REPLAY_MAX_STORES stores in the build's
 * order, each to where the span's own code stores (xk_rule_replay_store,
 * with the register values at its start). Replays are kept until the
 * constant is unloaded; a value already there must come with the same
 * replay.
 */
struct xk_ioc_replay {
	__u32 size;
	__u32 span;		/* the span's index in the load's order */
	char name[XK_NAME_MAX];
	__s64 value;
	__u32 nr_locs;
	__u32 nr_mem_in;
	struct xk_ioc_mem_in mem_in[XK_MAX_MEM_INPUTS];
	struct xk_ioc_loc locs[XK_REPLAY_MAX_LOCS];
	char error[XK_ERROR_MAX];	/* out */
};

/* what the module can do on the kernel it was built for */
#define XK_FEATURE_POLICIES	(1U << 0)	/* eBPF policies (Linux 6.10 on) */

struct xk_ioc_version {
	__u32 abi_version;	/* out: XK_ABI_VERSION */
	__u32 nr_constants;	/* out: constants loaded */
	char module_version[32];/* out */
	__u32 features;		/* out: XK_FEATURE_* */
	__u32 reserved;
};

struct xk_ioc_load {
	__u32 size;		/* sizeof(struct xk_ioc_load) */
	__u32 nr_spans;
	char name[XK_NAME_MAX];
	__s64 def, min, max;
	__s64 value;		/* the value to take effect */
	__u32 mode;		/* enum xk_mode; out: the mode used (as set) */
	__u32 timeout_ms;	/* global mode: give up after this (0: 1000,
				 * at most XK_MAX_TIMEOUT_MS) */
	__u64 spans;		/* user pointer to nr_spans struct xk_ioc_span */
	char error[XK_ERROR_MAX];	/* out */
	__u64 load_ns;		/* out: validation and arming */
	__u64 transition_ns;	/* out */
	/* non-empty: an eBPF policy (Xk-tune) chooses the values; the
	 * module's own probes stay disarmed and value must be def */
	char policy[XK_NAME_MAX];
	/* out, with a policy: the attach cookie of its span programs less the
	 * span index (xk_kfunc.h); secret, never shown by status */
	__u64 policy_cookie;
};

struct xk_ioc_set {
	__u32 size;
	__u32 mode;		/* in; out: the mode used (a constant with a
				 * variable never switches per task, one with a
				 * replayed or call-state span never
				 * immediately: global instead,
				 * xk_ioc_span.emulate, .call_state) */
	char name[XK_NAME_MAX];
	__s64 value;
	__u32 timeout_ms;
	__u32 pad;
	char error[XK_ERROR_MAX];	/* out */
	__s64 old_value;	/* out */
	__u64 transition_ns;	/* out */
};

/* Several constants (at most XK_TX_MAX) switched together, or none of them. */
struct xk_ioc_set_many {
	__u32 size;
	__u32 mode;		/* in; out: the mode used (xk_ioc_set) */
	__u32 timeout_ms;
	__u32 nr;
	char names[XK_TX_MAX][XK_NAME_MAX];
	__s64 values[XK_TX_MAX];
	char error[XK_ERROR_MAX];	/* out */
	__u64 transition_ns;		/* out */
};

/*
 * Settling a constant whose value is in force for every thread: where a
 * span's immediates can hold the value, they are rewritten in the live text
 * and the span's probe removed; the other spans keep their probes. undo
 * puts the compiled-in bytes and the probes back (xk set and xk unload do
 * it themselves).
 */
struct xk_ioc_settle {
	__u32 size;
	__u32 undo;
	char name[XK_NAME_MAX];
	char error[XK_ERROR_MAX];	/* out */
	__u32 nr_settled;	/* out: spans whose value is in the text */
	__u32 nr_kept;		/* out: spans that keep their probe */
	__u64 settle_ns;	/* out */
};

/*
 * XK_IOC_POLICY_PROG: the loader hands the module the program of one span
 * of a policy-driven constant it has just loaded. The module runs it from
 * its own kprobe at the span's probe point, as the kernel runs a kprobe
 * program (the same context, run context and recursion guard) but without
 * a perf event or a BPF link in between, and holds it until the constant
 * is unloaded. cookie: the handle xk_ioc_load gave | the span's index (the
 * table's supported spans, in order); the program: a plain kprobe program,
 * not sleepable, not overriding returns. prog_fd -1 commits: the
 * constant's programs run from then on (none before: no span chooses while
 * another still waits for its program), and no program is added after.
 * Refused under lockdown, like every write of kernel state.
 */
struct xk_ioc_policy_prog {
	__u32 size;
	__s32 prog_fd;
	__u64 cookie;
	char error[XK_ERROR_MAX];	/* out */
};

/*
 * XK_IOC_POINT: the parameters of a loaded constant's per-value spans at a
 * value not prepared yet, so that it can be set. params: a user pointer to
 * nr_spans x XK_MAX_PARAMS __s64, row i for the constant's i-th span (the
 * load's order; rows of affine spans are ignored). All spans take the
 * point or none; a value already there must come with the same
 * parameters. Points are kept until the constant is unloaded.
 */
struct xk_ioc_point {
	__u32 size;
	__u32 nr_spans;
	char name[XK_NAME_MAX];
	__s64 value;
	__u64 params;
	char error[XK_ERROR_MAX];	/* out */
	__u32 nr_added;			/* out: spans that took it */
	__u32 pad;
};

struct xk_ioc_unload {
	__u32 size;
	__u32 all;		/* every constant */
	char name[XK_NAME_MAX];
	char error[XK_ERROR_MAX];	/* out */
	__u32 nr_unloaded;	/* out */
	__u32 pad;
};

/* Why a span is not settled (xk_ioc_span_status.settle) */
enum xk_settle_state {
	XK_SETTLE_NO = 0,	/* not asked */
	XK_SETTLE_DONE,		/* the value is in the text; no probe */
	XK_SETTLE_NO_IMM,	/* no immediate carries the value (the table) */
	XK_SETTLE_TOO_WIDE,	/* the value needs a longer immediate */
	XK_SETTLE_OWNED,	/* another kprobe or patch holds the bytes */
	XK_SETTLE_GONE,		/* its module went away */
	XK_SETTLE_VARIABLE,	/* a variable: written, no probe (hits: writes) */
	XK_SETTLE_NR,
};

static inline const char *xk_settle_state_name(__u32 st)
{
	static const char *const names[XK_SETTLE_NR] = {
		"probed", "settled", "no immediate carries the value",
		"the value needs a longer immediate",
		"another kprobe or patch holds the bytes",
		"its module was unloaded", "a variable",
	};

	return st < XK_SETTLE_NR ? names[st] : "unknown";
}

struct xk_ioc_span_status {
	char func[XK_FUNC_MAX];
	__u64 probe;
	__u64 addr;		/* where the probe is (kernel address); 0 unless
				 * the caller may see kernel addresses (CAP_SYSLOG
				 * and kptr_restrict below 2, as for kallsyms) */
	__u64 hits;		/* rewrites done */
	__u32 settle;		/* enum xk_settle_state */
	__u32 variable;		/* 1: a variable (XK_EMULATE_DATA): addr is
				 * its field, probe its offset, hits writes */
};

/* What a policy chose in one context (the label it passed to xk_choose). */
struct xk_ioc_context {
	char label[XK_LABEL_MAX];
	__s64 value;		/* the last value chosen here */
	__u64 hits;		/* xk_choose calls */
	__u64 clamped;		/* ... whose value was out of bounds */
};

/*
 * A write of the constant faulted: every probe runs the compiled-in value
 * (value is the default), but spans settled before keep the value they
 * were settled at in the text (their settle state says so) until xk unload
 * writes the compiled bytes back.
 */
#define XK_STATUS_FAULTED	(1U << 0)

struct xk_ioc_status {
	__u32 size;
	__u32 index;		/* in: the index-th constant */
	__u32 found;		/* out: 0 past the last one */
	__u32 nr_spans;
	char name[XK_NAME_MAX];
	__s64 value, def, min, max;
	__u64 loaded_ns;	/* ktime when loaded */
	__u64 last_transition_ns;	/* how long the last change took */
	__u32 last_mode;
	__u32 flags;		/* XK_STATUS_* */
	struct xk_ioc_span_status spans[XK_MAX_SPANS];
	/* a policy-driven constant */
	char policy[XK_NAME_MAX];
	__u64 pol_sets;		/* xk_choose calls */
	__u64 pol_clamped;	/* values clamped to the bounds */
	__u64 pol_pinned;	/* calls answered with the thread's pinned value */
	__u64 pol_writes;	/* span states written by xk_choose */
	__u64 pol_refused;	/* calls refused at this constant's spans (a
				 * second call in one hit) or faulted writes */
	__u64 pol_exits;	/* pins released at safe-span exits */
	__u64 pol_missed;	/* hits whose program did not run: another BPF
				 * program was running on that CPU */
	__u64 pol_other_contexts;	/* xk_choose calls past XK_MAX_CONTEXTS labels */
	__u32 nr_contexts;
	__u32 pol_pins;		/* threads holding a pinned value now */
	struct xk_ioc_context contexts[XK_MAX_CONTEXTS];
	/* every constant: kfunc calls refused because the program was not
	 * one xk load attached for a loaded policy-driven span (no cookie,
	 * a stale one, or away from the span's probe point) */
	__u64 refused_outside;
};

/*
 * A variable's span (XK_EMULATE_DATA): one aligned field of 1, 2, 4 or 8
 * bytes inside the object, every byte compared, that depends on the value;
 * its addresses within the limit (the module needs one at least, libxk
 * fills them in at load); nothing of code (locations, exits, ranges, inputs,
 * points, a post probe). NULL, or what breaks it.
 */
static inline const char *xk_ioc_data_check(const struct xk_ioc_span *d)
{
	const struct xk_ioc_imm *m = &d->imms[0];
	__u32 size = m->size;

	if (d->nr_locs || d->nr_exits || d->nr_ranges || d->nr_mem_in ||
	    d->post_len || d->escapes)
		return "a variable's span has locations, exits, ranges or inputs";
	if (d->nr_points > XK_MAX_POINTS)
		return "more points than the limit";
	if (d->func_size == 0 || d->func_size > XK_MAX_FUNC_SIZE)
		return "the variable is empty or larger than the limit";
	if (d->nr_imms != 1)
		return "a variable's span has exactly one field";
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return "a variable's field is not of 1, 2, 4 or 8 bytes";
	/* func_size >= size first: func_size - size cannot wrap */
	if (d->func_size < size || d->start % size ||
	    d->start > d->func_size - size ||
	    d->probe != d->start + size || d->expect_len != size ||
	    m->insn != d->start || m->field != d->start ||
	    m->insn_len != size || m->width != size * 8)
		return "a variable's field is unaligned, outside it or malformed";
	for (__u32 i = 0; i < size; i++)
		if (d->expect_mask[i] != 0xff)
			return "a variable's field is not compared in full";
	/* per value (a variable boot code derives): a point's p[0] is the
	 * field at its n, and there is no fit */
	for (__u32 i = 0; i < d->nr_points; i++) {
		__u8 b[8];

		if (xk_rule_data_bytes(0, d->points[i].p[0], 0, size, b))
			return "a variable's point does not fit its field";
	}
	if (d->nr_points ? m->a != 0 : m->a == 0)
		return d->nr_points ? "a per-value variable has a fit too" :
		       "a variable's field does not depend on the value";
	if (d->nr_cands > XK_MAX_CANDS)
		return "more candidate addresses than the limit";
	return 0;
}

/*
 * The bytes a variable's span holds at value n: its fit's a*n + b, or per
 * value the point at n among the first nr of pt (those published). NULL,
 * or why not (out[] then unset).
 */
static inline const char *xk_ioc_var_bytes(const struct xk_ioc_imm *m,
					   const struct xk_point *pt, __u32 nr,
					   __s64 n, __u8 out[8])
{
	if (!nr)
		return xk_rule_data_bytes(m->a, m->b, n, m->size, out);
	for (__u32 i = 0; i < nr && i < XK_MAX_POINTS; i++)
		if (pt[i].n == n)
			return xk_rule_data_bytes(0, pt[i].p[0], 0, m->size, out);
	return "no value prepared for this variable (per value: xk set "
	       "builds it)";
}

/*
 * The shape of a span as xk_rules.h requires it, before anything touches
 * the kernel: NULL, or what breaks it. libxk checks every span it writes
 * and reads, xkernel.ko every span it is handed.
 */
static inline const char *xk_ioc_span_check(const struct xk_ioc_span *d)
{
	__u32 i, store = (__u32)-1;	/* the store's offset from start */
	__s32 store_base = -1;		/* ... and its base register */
	const char *why;

	for (i = 0; i < XK_FUNC_MAX && d->func[i]; i++)
		;
	if (i == 0 || i == XK_FUNC_MAX)
		return "no function name, or one without its end";
	if (d->call_state > XK_CALL_STATE_HEAP ||
	    (d->call_state && d->emulate == XK_EMULATE_DATA))
		return "malformed call state";
	/* by name, whatever else the table says (xk_rule_security_variable) */
	if (d->emulate == XK_EMULATE_DATA && xk_rule_security_variable(d->func))
		return "the variable is one the kernel's security depends on "
		       "(lockdown, module signing, an LSM, BPF, ...): no table "
		       "writes it";
	if (d->emulate == XK_EMULATE_DATA)
		return xk_ioc_data_check(d);
	/* state of the call: held from the function's entry to its return */
	if (d->call_state && (d->nr_imms || d->nr_ranges != 1 || d->ranges[0][0] ||
			      d->ranges[0][1] != d->func_size))
		return "a call-state span's safe span is not its whole function, "
		       "or it is settleable";
	/* a replayed span's locations are its replays' (one at least) */
	why = xk_rule_check_offsets(d->func_size, d->start, d->probe,
				    d->expect_len,
				    d->nr_locs + (d->emulate == XK_EMULATE_REPLAY),
				    d->nr_exits, d->nr_ranges);
	if (why)
		return why;
	why = xk_rule_check_expect(d->expect_mask, d->expect_len, d->start,
				   d->probe, d->post_len);
	if (why)
		return why;
	if (d->nr_cands > XK_MAX_CANDS)
		return "more candidate functions than the limit";
	if (d->nr_mem_in > XK_MAX_MEM_INPUTS)
		return "more memory inputs than the limit";
	for (i = 0; i < d->nr_mem_in; i++) {
		why = xk_rule_check_mem_in(d->mem_in[i].base, d->mem_in[i].width,
					   d->mem_in[i].disp, d->mem_in[i].index,
					   d->mem_in[i].scale);
		if (why)
			return why;
	}
	if (d->nr_imms > XK_MAX_PARAMS)
		return "more settleable immediates than the limit";
	why = xk_rule_check_post(d->post_len, d->start, d->probe, d->nr_imms);
	if (why)
		return why;
	if (d->nr_points > XK_MAX_POINTS)
		return "more points than the limit";
	if (d->nr_points && d->nr_imms)
		return "a per-value span has settleable immediates";
	if (d->emulate > XK_EMULATE_REPLAY)
		return "malformed emulated form";
	if (d->emulate == XK_EMULATE_REPLAY &&
	    (d->nr_locs || d->nr_mem_in || d->nr_points))
		return "a replayed span has locations, inputs or points of its own";
	if (d->emulate && (d->post_len || d->nr_imms))
		return "an emulated span is probed on its last instruction or "
		       "settleable";
	for (i = 0; i < d->nr_imms; i++) {
		const struct xk_ioc_imm *m = &d->imms[i];

		why = xk_rule_check_imm(m->insn, m->insn_len, m->field, m->size,
					m->width, d->start, d->probe,
					d->expect_len, d->expect_mask);
		if (!why)	/* in the compared bytes: checked above */
			why = xk_rule_imm_opcode(d->expect + (m->insn - d->start),
						 m->insn_len, m->size);
		if (!why && m->a == 0)
			why = "a settled immediate does not depend on the value";
		if (why)
			return why;
	}
	for (i = 0; i < d->nr_locs; i++) {
		const struct xk_ioc_loc *l = &d->locs[i];

		why = xk_rule_check_loc(l->kind, l->base, l->disp, l->rip_end,
					l->width, d->start, d->expect_len);
		if (why)
			return why;
		if (l->kind == XK_LOC_MEM) {
			__u32 q = 0;

			why = xk_rule_find_store(d->expect, d->expect_mask,
						 d->expect_len, d->start,
						 d->probe, l->base, l->disp,
						 l->rip_end, l->width, &q);
			if (why)
				return why;
			store = q;
			store_base = l->base < XK_NR_REGS ? l->base : -1;
			/* written at the probe point after the span: its base
			 * must still be the store's there */
			if (!d->emulate && store_base >= 0) {
				why = xk_rule_base_kept(d->expect, d->expect_mask,
						q, (__u32)(d->probe - d->start),
						store_base);
				if (why)
					return why;
			}
		}
		if (xk_expr_validate(&l->expr))
			return "an update program is malformed";
		why = xk_rule_check_inputs(&l->expr, d->nr_mem_in);
		if (why)
			return why;
	}
	if (d->emulate == XK_EMULATE_REPLAY) {
		why = xk_rule_check_replayed(d->expect, d->expect_mask, d->start,
					     d->probe);
		if (why)
			return why;
	} else if (d->emulate) {
		why = xk_rule_check_emulated(d->expect, d->expect_mask, d->start,
					     d->probe, store, store_base);
		if (why)
			return why;
	}
	/* a register or the flags only where the span's instructions write
	 * them (a replayed span has no locations of its own) */
	if (d->nr_locs) {
		__u32 regs;
		int flags;

		xk_rule_span_writes(d->expect, d->expect_mask, d->start,
				    d->probe, &regs, &flags);
		for (i = 0; i < d->nr_locs; i++) {
			why = xk_rule_loc_written(d->locs[i].kind, regs, flags);
			if (why)
				return why;
		}
	}
	for (i = 0; i < d->nr_ranges; i++) {
		why = xk_rule_check_range(d->ranges[i][0], d->ranges[i][1],
					  d->func_size);
		if (why)
			return why;
	}
	for (i = 0; i < d->nr_exits; i++)
		if (d->exits[i] > d->func_size)
			return "a safe-span exit lies outside the function";
	return 0;
}

/*
 * The shape of a replay, before anything touches the kernel: NULL, or what
 * breaks it. Registers (never rsp) and the flags, each once, 64 bits (the
 * flags: their width is ignored); valid programs that read only the
 * registers and the replay's memory inputs.
 */
static inline const char *xk_ioc_replay_check(const struct xk_ioc_replay *r)
{
	__u32 seen = 0;
	const char *why;

	if (r->nr_locs > XK_REPLAY_MAX_LOCS)	/* 0: the region is skipped */
		return "a replay writes more locations than the limit";
	if (r->nr_mem_in > XK_MAX_MEM_INPUTS)
		return "a replay has more memory inputs than the limit";
	for (__u32 i = 0; i < r->nr_mem_in; i++) {
		why = xk_rule_check_mem_in(r->mem_in[i].base, r->mem_in[i].width,
					   r->mem_in[i].disp, r->mem_in[i].index,
					   r->mem_in[i].scale);
		if (why)
			return why;
	}
	for (__u32 i = 0; i < r->nr_locs; i++) {
		const struct xk_ioc_loc *l = &r->locs[i];

		if (l->kind == XK_LOC_MEM) {
			/* the stores first, in the build's order, up to
			 * XK_REPLAY_MAX_STORES; where: xk_rule_replay_stores */
			if (seen || i >= XK_REPLAY_MAX_STORES || l->base < 0 ||
			    l->base >= XK_NR_REGS || !xk_rule_width_ok(l->width) ||
			    l->rip_end || l->disp >= XK_MAX_MEM_DISP ||
			    l->disp <= -XK_MAX_MEM_DISP ||
			    (l->base == XK_RSP && l->disp < 0))
				return "a replay's store is malformed (below the "
				       "stack pointer, out of bounds), not among "
				       "the first, or one too many";
		} else if (l->kind < 0 || l->kind > XK_LOC_FLAGS ||
			   l->kind == XK_RSP) {
			return "a replay writes something other than a register, "
			       "the flags or its stores";
		} else if (seen & (1u << l->kind)) {
			return "a replay writes a location twice";
		} else if (l->width != 64 || l->base || l->disp || l->rip_end) {
			return "a replay's location is malformed";
		}
		if (l->kind != XK_LOC_MEM)
			seen |= 1u << l->kind;
		if (xk_expr_validate(&l->expr))
			return "a replay's program is malformed";
		for (__u32 k = 0; k < l->expr.len; k++)
			if (l->expr.insn[k].op == XK_OP_PARAM)
				return "a replay's program has a parameter";
		why = xk_rule_check_inputs(&l->expr, r->nr_mem_in);
		if (why)
			return why;
	}
	return 0;
}

/*
 * Each store of replay r is one the replayed span's own code makes
 * (xk_rule_replay_store on its expected bytes from start to probe): the
 * module writes only where the kernel itself writes at that point. NULL,
 * or why not. After xk_ioc_replay_check.
 */
static inline const char *xk_rule_replay_stores(const __u8 *expect,
						const __u8 *mask, __u64 start,
						__u64 probe,
						const struct xk_ioc_replay *r)
{
	const char *why = 0;

	for (__u32 i = 0; !why && i < r->nr_locs &&
			  r->locs[i].kind == XK_LOC_MEM; i++)
		why = xk_rule_replay_store(expect, mask, start, probe,
					   r->locs[i].base, r->locs[i].disp,
					   r->locs[i].width);
	return why;
}

#define XK_IOC_MAGIC 'X'
#define XK_IOC_VERSION _IOR(XK_IOC_MAGIC, 0x00, struct xk_ioc_version)
#define XK_IOC_LOAD _IOWR(XK_IOC_MAGIC, 0x01, struct xk_ioc_load)
#define XK_IOC_SET _IOWR(XK_IOC_MAGIC, 0x02, struct xk_ioc_set)
#define XK_IOC_UNLOAD _IOWR(XK_IOC_MAGIC, 0x03, struct xk_ioc_unload)
#define XK_IOC_STATUS _IOWR(XK_IOC_MAGIC, 0x04, struct xk_ioc_status)
#define XK_IOC_SET_MANY _IOWR(XK_IOC_MAGIC, 0x05, struct xk_ioc_set_many)
#define XK_IOC_SETTLE _IOWR(XK_IOC_MAGIC, 0x06, struct xk_ioc_settle)
#define XK_IOC_POLICY_PROG _IOWR(XK_IOC_MAGIC, 0x07, struct xk_ioc_policy_prog)
#define XK_IOC_POINT _IOWR(XK_IOC_MAGIC, 0x08, struct xk_ioc_point)
#define XK_IOC_REPLAY _IOWR(XK_IOC_MAGIC, 0x09, struct xk_ioc_replay)

#endif
