/* SPDX-License-Identifier: GPL-2.0 */
/* Shared state of xkernel.ko's files. */
#ifndef XK_KMOD_INTERNAL_H
#define XK_KMOD_INTERNAL_H

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>

#include "xk_ioctl.h"

#define XK_MAX_TRACKED 256	/* tasks inside safe spans during a transition */
#define XK_MAX_PINS 64		/* threads holding a policy's value in a safe span */

struct xk_const;
struct xk_policy_state;

struct xk_span;

struct xk_exit_probe {
	struct kprobe kp;
	struct xk_span *span;
};

/*
 * What a span writes for one value, precomputed: for spans whose programs
 * read no register (a register, the flags set to what the value gives),
 * the rewrite handler writes these instead of running the programs.
 * Immutable once published; replaced under xk_lock, freed after an RCU
 * grace period (the handlers run with preemption off).
 */
struct xk_fast {
	struct rcu_head rcu;
	s64 n;
	u32 nr;
	struct {
		u32 off;	/* of the register in struct pt_regs */
		unsigned long keep;	/* the bits the span leaves */
		unsigned long val;	/* the bits it writes, masked */
	} w[XK_MAX_LOCS];
};

/* One critical span armed in the kernel. */
struct xk_span {
	struct xk_const *owner;
	struct xk_ioc_span desc;	/* as loaded, validated */
	struct kprobe rewrite;		/* at the probe point */
	struct kprobe entry;		/* at the span start (global mode) */
	struct xk_exit_probe exit[XK_MAX_EXITS];
	unsigned long start_addr;	/* the critical span's first byte */
	unsigned long func_addr;	/* the function's (safe-span ranges) */
	unsigned long mem_addr[XK_MAX_LOCS];	/* rip-relative locations */
	unsigned long probe_addr;	/* the probe point (kernel address) */
	atomic64_t hits;
	atomic64_t faults;		/* memory writes that faulted */
	bool const_only;		/* no program reads a register or memory */
	struct xk_fast __rcu *fast;	/* the value precomputed, or NULL */
	bool rewrite_registered, entry_registered;
	int nr_exit_registered;
};

enum xk_transition_state {
	XK_TR_IDLE,
	XK_TR_PENDING,		/* waiting for the safe spans to empty */
	XK_TR_DONE,
	XK_TR_ABORTED,
};

struct xk_tracked {
	struct task_struct *task;
	int depth;
};

/*
 * A transition of one or more constants: they switch together when no
 * thread is inside any of their safe spans (global), or at one instant
 * with every CPU stopped (immediate). Lives for one ioctl.
 */
struct xk_tx {
	int nr;
	struct xk_const *c[XK_TX_MAX];
	s64 value[XK_TX_MAX];
	atomic_t inside;		/* threads inside, over all constants */
	atomic_t state;			/* enum xk_transition_state */
	wait_queue_head_t wait;
	bool per_task;			/* new entrants are not counted */
};

/* A thread that chose a policy value and has not left the safe span. */
struct xk_pin {
	struct task_struct *task;
	unsigned long sp;		/* its stack pointer when it chose */
	s64 value;
};

/* An eBPF policy's figures for one context (xk_ioc_context). */
struct xk_ctx_stat {
	char label[XK_LABEL_MAX];
	s64 value;
	u64 hits, clamped;
	unsigned long last;		/* jiffies of the last choice */
};

/*
 * A policy's figures on one CPU. Written only by the kfuncs, which run with
 * preemption off, and kprobe programs never nest on a CPU: no lock, no
 * shared cache line on the hot path. Read (and summed) by status.
 */
struct xk_policy_stats {
	u64 sets, clamped, pinned, writes, refused, exits, other_ctxs;
	bool called;			/* xk_choose ran in this hit (xk_policy.c) */
	int nr_ctxs;			/* published after the entry is filled */
	struct xk_ctx_stat ctxs[XK_MAX_CONTEXTS];
};

/*
 * One constant with its spans. On xk_consts (RCU: the kfuncs read it from
 * BPF programs); changed and freed only under xk_lock, after list_del_rcu()
 * and a grace period.
 */
struct xk_const {
	struct list_head node;
	struct list_head gone_node;	/* unload: waiting for a grace period */
	char name[XK_NAME_MAX];
	s64 value;			/* in force: read by the handlers */
	s64 def, min, max;
	int nr_spans;
	struct xk_span *spans;
	u64 loaded_ns, last_transition_ns;
	u32 last_mode;
	bool faulted;			/* a write faulted: disarmed for good */

	/* global transitions: which tasks are inside a safe span */
	raw_spinlock_t track_lock;
	bool tracking;
	bool tracking_ready;		/* entry/exit probes registered (armed
					 * only during a transition) */
	struct xk_tracked tracked[XK_MAX_TRACKED];
	bool track_overflow;
	struct xk_tx *tx;		/* the transition under way, or NULL */
	bool per_task;			/* tracked threads still use old_value */
	s64 old_value;

	/* values chosen by an eBPF policy (xk_policy.c); empty: by xk set */
	char policy[XK_NAME_MAX];
	bool nests;			/* spans may run inside another's safe span */
	raw_spinlock_t policy_lock;	/* pins (only where spans nest) */
	struct xk_pin pins[XK_MAX_PINS];
	int nr_pins;			/* slots in use lie below this */
	struct xk_policy_stats __percpu *stats;
	struct xk_policy_state *pol;	/* binding and probes (xk_policy.c) */
};

extern struct mutex xk_lock;		/* the list and every load/set/unload */
extern struct list_head xk_consts;

/* xk_table.c */
int xk_table_load(struct xk_ioc_load *req, const struct xk_ioc_span __user *uspans);
int xk_table_unload(const char *name, bool all, char *error, u32 *nr);
struct xk_const *xk_find_const(const char *name);
void xk_const_destroy(struct xk_const *c);

/* xk_probe.c */
int xk_rewrite_handler(struct kprobe *p, struct pt_regs *regs);
int xk_entry_handler(struct kprobe *p, struct pt_regs *regs);
int xk_exit_handler(struct kprobe *p, struct pt_regs *regs);
void xk_regs_to_array(const struct pt_regs *r, u64 *a);
int xk_write_locations(struct xk_span *s, struct pt_regs *regs,
		       const u64 *in, const u64 *out);

/* xk_policy.c */
int xk_policy_init(void);
void xk_policy_status(struct xk_const *c, struct xk_ioc_status *req);
/* At load, once the spans are validated; under xk_lock. */
int xk_policy_arm(struct xk_const *c, u64 *cookie, char *error);
/* First thing in xk_const_destroy; under xk_lock; waits a grace period. */
void xk_policy_release(struct xk_const *c);
extern atomic64_t xk_refused_outside;

/* xk_main.c */
int xk_refuse_locked_down(char *error);
/* The entry and exit probes unregistered (xk_transition.c); under xk_lock. */
void xk_tracking_release(struct xk_const *c);
/* Precomputes the spans' writes for value n (xk_probe.c); under xk_lock. */
void xk_fast_prepare(struct xk_const *c, s64 n);
/* Whether a span can have its writes precomputed; at load. */
bool xk_fast_possible(const struct xk_span *s);

/* xk_transition.c */
int xk_check_timeout(u32 timeout_ms, char *error);
int xk_transition(struct xk_const *c, s64 value, u32 mode, u32 timeout_ms,
		  char *error, u64 *ns);
int xk_transition_many(struct xk_tx *tx, u32 mode, u32 timeout_ms, char *error,
		       u64 *ns);
void xk_tx_switch(struct xk_tx *tx);
void xk_tx_drained(struct xk_tx *tx);

#define xk_error(buf, fmt, ...) \
	snprintf(buf, XK_ERROR_MAX, fmt, ##__VA_ARGS__)

#endif
