/* SPDX-License-Identifier: GPL-2.0 */
/* Shared state of xkernel.ko's files. */
#ifndef XK_KMOD_INTERNAL_H
#define XK_KMOD_INTERNAL_H

#include <linux/atomic.h>
#include <linux/irq_work.h>
#include <linux/workqueue.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>

#include "xk_ioctl.h"

/*
 * Kernels before 6.4 (Debian 12's 6.1): io_uring's workers, the only user
 * tasks running kernel code only, are PF_IO_WORKER; 6.4 named the class
 * PF_USER_WORKER (vhost's workers joined it).
 */
#include <linux/sched.h>
#ifndef PF_USER_WORKER
#define PF_USER_WORKER PF_IO_WORKER
#endif

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
	unsigned long probe_addr;	/* the rewrite probe (kernel address):
					 * the probe point, or the start of an
					 * emulated span */
	unsigned long resume_addr;	/* the probe point */
	atomic64_t hits;
	atomic64_t faults;		/* memory writes that faulted */
	bool const_only;		/* no program reads a register or memory */
	struct xk_fast __rcu *fast;	/* the value precomputed, or NULL */
	bool rewrite_registered, entry_registered;
	int nr_exit_registered;
	u32 settle;			/* enum xk_settle_state (xk_settle.c) */
	u32 nr_points;			/* per-value: points of desc published
					 * (xk_span_params, xk_table_add_point) */
	/* replayed (desc.emulate == XK_EMULATE_REPLAY): one per value, the
	 * count published like nr_points (xk_span_replay,
	 * xk_table_add_replay); freed at unload */
	struct xk_ioc_replay *replays[XK_MAX_POINTS];
	u32 nr_replays;
};

/*
 * A variable the constant initialises (desc.emulate == XK_EMULATE_DATA,
 * xk_data.c): kept apart from the code's spans, after them in the load's
 * order and in status.
 */
struct xk_var {
	struct xk_ioc_span desc;	/* as loaded, validated */
	unsigned long addr;		/* the field (kernel address) */
	struct module *mod;		/* its module, held while loaded; or NULL */
	s64 def;			/* the constant's compiled-in value */
	s64 cur;			/* the value whose bytes the field holds
					 * by our last write (def at load) */
	atomic64_t writes;		/* switches that wrote it */
	u32 nr_points;			/* per value: points of desc published
					 * (xk_table_add_point, xk_var_bytes) */
	bool changed;			/* a switch found another value there */
	bool gone;			/* its module went away (forced) */
};

enum xk_transition_state {
	XK_TR_IDLE,		/* arming: the handlers ignore it */
	XK_TR_PENDING,		/* waiting for the safe spans to empty */
	XK_TR_DONE,		/* the new values in force for every thread */
	XK_TR_ABORTED,		/* global: never switched, the old values stay */
	XK_TR_REVERTING,	/* per task, rolled back: threads that took the
				 * new value keep it until they leave */
	XK_TR_REVERTED,		/* ... and they have left */
};

/*
 * A thread counted by a transition: how many of its frames lie inside safe
 * spans of the transition's constants (recursion counts each frame), and
 * whether it took the new values (per task: it entered after the switch).
 * Holds a reference on the task, so the pointer is never reused.
 */
struct xk_tracked {
	struct task_struct *task;
	int depth;
	bool took_new;
};

/*
 * A transition of one or more constants: they switch together when no
 * thread is inside any of their safe spans (global), per thread as each
 * leaves them (per task), or at one instant with every CPU stopped
 * (immediate). Made by the ioctl that asks for it; a per-task transition
 * that failed and could not drain may outlive it ("orphan", waiter false):
 * the next request on one of its constants reaps it (xk_transition_busy).
 * The tracked threads are a hash table (open addressing by task pointer)
 * sized from the thread count before arming; tracked, inside, inside_new,
 * state changes after arming and c[] changes after arming, all under lock.
 */
struct xk_tx {
	int nr;
	int attached;			/* constants whose c->tx is this */
	struct xk_const *c[XK_TX_MAX];	/* NULL once detached (unload) */
	s64 value[XK_TX_MAX];
	s64 old[XK_TX_MAX];
	raw_spinlock_t lock;
	struct xk_tracked *table;
	u32 slots;			/* a power of two */
	u32 cap, used;			/* used <= cap <= slots / 2 */
	long inside;			/* frames of threads using the old values */
	long inside_new;		/* per task: of threads that took the new */
	u32 threads, threads_new;	/* tracked threads (depth > 0) of each */
	atomic_t state;			/* enum xk_transition_state */
	bool per_task;
	bool waiter;			/* an ioctl waits on it */
	bool overflow;			/* a thread could not be tracked */
	bool no_rollback;		/* per task: an entrant of the new value
					 * could not be tracked */
	bool nmi_missed;		/* an entry in NMI context found the lock
					 * taken: that thread was not counted */
	bool missed;			/* global: aborted for a missed entry */
	bool rolled_back;		/* per task: REVERTING was entered */
	unsigned long nmissed0;		/* entry probes' misses at the scan */
	atomic_t unreliable;		/* exit walks that could not be trusted */
	u32 retries;			/* stack scans retried */
	u32 reaped;			/* orphan: threads dropped that had left
					 * unseen (reap_departed) */
	u64 scan_ns;			/* the last scan's time, CPUs stopped */
	int scan_err;			/* of the last scan: 0, -EAGAIN, -ENOSPC */
	pid_t unreliable_pid;		/* a task the scan could not walk */
	char unreliable_comm[TASK_COMM_LEN];
	struct irq_work wake_work;	/* wakes the waiter, out of probe context */
	wait_queue_head_t wait;
	struct rcu_work free_work;	/* tx_retire: freed after a grace period */
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
	u64 sets, clamped, pinned, writes, refused, exits, other_ctxs, missed;
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
	int nr_vars;			/* variables it initialises (xk_data.c) */
	struct xk_var *vars;
	u64 loaded_ns, last_transition_ns;
	u32 last_mode;
	bool faulted;			/* a write faulted: disarmed for good */
	bool settle_ref;		/* spans settled: a module reference held */
	bool module_ref;		/* on xk_consts: a reference on xkernel.ko
					 * held, so that rmmod says "in use" while
					 * its probes and handlers are live; put
					 * back by xk_const_destroy() */

	/* global and per-task transitions (xk_transition.c) */
	bool tracking_ready;		/* entry/exit probes registered (armed
					 * only during a transition) */
	struct delayed_work tracking_work;	/* registers them after load */
	struct xk_tx *tx;		/* the transition under way, or NULL;
					 * set and cleared under xk_lock */
	int tx_idx;			/* this constant's index in tx */
	bool per_task;			/* tracked threads use their own value */

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
int xk_value_prepared(const struct xk_const *c, s64 n, char *error);
int xk_table_add_point(struct xk_ioc_point *req);
const s64 *xk_span_params(const struct xk_span *s, s64 n);
int xk_table_add_replay(struct xk_ioc_replay *req);
bool xk_const_never_immediate(const struct xk_const *c);
const struct xk_ioc_replay *xk_span_replay(const struct xk_span *s, s64 n);
void xk_const_destroy(struct xk_const *c);

/* A symbol the kernel does not export (kallsyms_lookup_name); under
 * xk_lock; 0 with why in error (xk_settle.c). */
unsigned long xk_lookup_symbol(const char *name, char *error);
/* Whether addr is func+off ("module:name" a module's), func of func_size
 * bytes by kallsyms (xk_table.c). */
bool xk_symbol_is(unsigned long addr, const char *func, unsigned long off,
		  u64 func_size, char *sym, char *name, unsigned long *size);

/* xk_data.c: variables the constant initialises */
/* The size a live module's ELF symbols give its symbol name at addr, or 0
 * (Linux 6.1's kallsyms sizes a module's data wrongly); under xk_lock. */
unsigned long xk_module_symbol_size(unsigned long addr, const char *name);
/* At load, under xk_lock: resolves and checks a variable's field. */
int xk_var_validate(struct xk_var *v, int idx, char *error);
/* Whether a*n + b fits every variable of c; under xk_lock. */
int xk_var_check_value(const struct xk_const *c, s64 n, char *error);
/* c's variables to value to; any context, no lock. */
void xk_var_switch(struct xk_const *c, s64 to);
/* Lets go of the variables' modules; at destroy, under xk_lock. */
void xk_var_release(struct xk_const *c);
/* Logs variables a switch left as someone else set them; under xk_lock. */
void xk_var_report(struct xk_const *c);
/* Module mod is going: c's variables in it are never written again. */
void xk_var_module_going(struct xk_const *c, struct module *mod);

/* xk_probe.c */
int xk_rewrite_handler(struct kprobe *p, struct pt_regs *regs);
void xk_rewrite_post(struct kprobe *p, struct pt_regs *regs,
		     unsigned long flags);
int xk_entry_handler(struct kprobe *p, struct pt_regs *regs);
int xk_emulate_handler(struct kprobe *p, struct pt_regs *regs);
void xk_emulate_post(struct kprobe *p, struct pt_regs *regs, unsigned long flags);
int xk_exit_handler(struct kprobe *p, struct pt_regs *regs);
bool xk_emulated_start(const struct xk_const *c, unsigned long addr);
void xk_regs_to_array(const struct pt_regs *r, u64 *a);
int xk_write_locations(struct xk_span *s, struct pt_regs *regs,
		       const u64 *in, const u64 *out);

/* xk_policy.c */
int xk_policy_init(void);
u32 xk_policy_features(void);
void xk_policy_status(struct xk_const *c, struct xk_ioc_status *req);
/* At load, once the spans are validated; under xk_lock. */
int xk_policy_arm(struct xk_const *c, u64 *cookie, char *error);
/* XK_IOC_POLICY_PROG: a span's program, run by the module; under xk_lock. */
int xk_policy_set_prog(u64 cookie, int prog_fd, char *error);
/* First thing in xk_const_destroy; under xk_lock; waits a grace period. */
void xk_policy_release(struct xk_const *c);
extern atomic64_t xk_refused_outside;

/* xk_main.c */
int xk_refuse_locked_down(char *error);
/* The entry and exit probes registered in the background after a load,
 * the work cancelled, and them unregistered (before a settle and at
 * unload); xk_transition.c, under xk_lock. */
void xk_tracking_work(struct work_struct *work);
void xk_tracking_prepare(struct xk_const *c);
void xk_tracking_cancel(struct xk_const *c);
void xk_tracking_release(struct xk_const *c);
/* Precomputes the spans' writes for value n (xk_probe.c); under xk_lock. */
void xk_fast_prepare(struct xk_const *c, s64 n);
/* Whether a span can have its writes precomputed; at load. */
bool xk_fast_possible(const struct xk_span *s);

/* xk_settle.c: all under xk_lock */
int xk_settle(struct xk_const *c, char *error, u32 *nr_settled, u32 *nr_kept);
int xk_settle_undo(struct xk_const *c, char *error);
int xk_settle_init(void);
void xk_settle_exit(void);

/* xk_transition.c */
/* The workqueue that frees finished transitions; at module init and exit. */
int xk_transition_init(void);
void xk_transition_exit(void);
int xk_check_timeout(u32 timeout_ms, char *error);
/* -EBUSY with the cause while a transition of c is under way; reaps a
 * finished orphan. Under xk_lock. */
int xk_transition_busy(struct xk_const *c, char *error);
/* -EBUSY with the cause while an ioctl waits on a transition of c (it may
 * not go: unload). Under xk_lock. */
int xk_transition_waited(struct xk_const *c, char *error);
/* c leaves its orphaned transition (unload), once its probes are gone;
 * frees the transition if c was its last constant. Under xk_lock. */
void xk_transition_release(struct xk_const *c);
int xk_transition(struct xk_const *c, s64 value, u32 mode, u32 timeout_ms,
		  char *error, u64 *ns);
int xk_transition_many(struct xk_tx *tx, u32 mode, u32 timeout_ms, char *error,
		       u64 *ns);
/* for the entry, exit and rewrite handlers (xk_probe.c) */
bool xk_tx_lock(struct xk_tx *tx, unsigned long *flags);
void xk_tx_unlock(struct xk_tx *tx, unsigned long flags);
bool xk_tx_end_if_left(struct xk_tx *tx);
int xk_tx_depth(struct xk_tx *tx, struct task_struct *t, struct pt_regs *regs);
struct xk_tracked *xk_tx_find(struct xk_tx *tx, struct task_struct *t);
struct xk_tracked *xk_tx_insert(struct xk_tx *tx, struct task_struct *t,
				bool took_new);
void xk_tx_remove(struct xk_tx *tx, struct xk_tracked *tr);

#define xk_error(buf, fmt, ...) \
	snprintf(buf, XK_ERROR_MAX, fmt, ##__VA_ARGS__)

#endif
