/* SPDX-License-Identifier: GPL-2.0 */
/* libxk: the runtime half, through xkernel.ko's /dev/xkernel. */
#ifndef XK_RUNTIME_H
#define XK_RUNTIME_H

#include "xk/abi/xk_ioctl.h"
#include <stdbool.h>

#include "xk/core.h"

struct xk_scope;

struct xk_rt_result {
	unsigned long long load_ns;		/* validation and arming */
	unsigned long long transition_ns;	/* until the value was in force */
	long long old_value;			/* set: the value before */
	int mode;				/* set, load: the mode used
						 * (enum xk_mode; replayed,
						 * call state: never
						 * immediate) */
	int nr_spans;				/* load: spans armed */
	unsigned long long policy_cookie;	/* load with a policy: the attach
						 * cookie of span 0 (xk_kfunc.h) */
};

/* Opens /dev/xkernel; the error names a missing module or privilege. */
int xk_rt_open(void);
struct xk_rt_load_opts {
	size_t sz;			/* sizeof(struct xk_rt_load_opts) */
	int mode;			/* enum xk_mode: how value takes effect */
	unsigned int timeout_ms;	/* global and per-task modes */
	/* accept a table with uses the analysis refused: those keep the
	 * compiled-in value while the others change (half-applied) */
	bool partial;
	/* an eBPF policy (Xk-tune) of this name chooses the values: the
	 * module's own probes stay disarmed, value is the default */
	const char *policy;
};

/*
 * Loads a table's spans; value takes effect by mode. A table with a refused
 * use is refused (-ENOTSUP, naming the uses) unless opts->partial.
 */
int xk_rt_load(int fd, const struct xk_scope *t, long long value,
	       const struct xk_rt_load_opts *opts, struct xk_rt_result *res);
int xk_rt_set(int fd, const char *name, long long value, int mode,
	      unsigned int timeout_ms, struct xk_rt_result *res);
/* Several loaded constants, switched together or not at all. */
int xk_rt_set_many(int fd, int nr, const char *const *names,
		   const long long *values, int mode, unsigned int timeout_ms,
		   struct xk_rt_result *res);
/* name NULL: every constant. */
int xk_rt_unload(int fd, const char *name, int *nr);
/*
 * Hands a loaded constant's per-value spans their parameters at value,
 * from the table (which has the point: xk_gen_point); -ENOKEY when it has
 * none. *added: spans that took it (0: they all had it).
 */
int xk_rt_add_point(int fd, const struct xk_scope *t, long long value, int *added);

/*
 * Settles a loaded constant whose value is in force for every thread: its
 * immediates rewritten in the live text where they can hold the value, the
 * probes of those spans removed (steady-state cost 0); the other spans keep
 * their probes (xk_rt_status says why per span). undo: the compiled-in
 * bytes and the probes back (a new value and unload do it themselves).
 */
struct xk_rt_settle_result {
	unsigned int nr_settled;	/* spans whose value is in the text */
	unsigned int nr_kept;		/* spans that keep their probe */
	unsigned long long settle_ns;
};
int xk_rt_settle(int fd, const char *name, bool undo,
		 struct xk_rt_settle_result *res);
/* -ENOENT past the last constant. */
int xk_rt_status(int fd, unsigned int index, struct xk_ioc_status *st);
/* 1 if the kprobe at addr is jump-optimized, 0 if int3, <0 if unknown. */
int xk_rt_probe_optimized(unsigned long long addr);

/* ---- eBPF policies (Xk-tunes): lib/policy.c, docs/policies.md ---- */

struct xk_policy_opts {
	size_t sz;			/* sizeof(struct xk_policy_opts) */
	const char *const *params;	/* "NAME=VALUE": const volatile globals */
	int nr_params;
	bool partial;			/* as for xk_rt_load */
};

struct xk_policy_result {
	char id[XK_NAME_MAX];		/* the policy's name (its file's) */
	int nr_programs;		/* attached and pinned */
	int nr_spans;			/* validated, over every table */
	unsigned long long load_ns;	/* the tables' validation */
	/* where the time went (seconds) */
	double open_s;			/* open the object, parameters */
	double verify_s;		/* bpf_object__load: BTF, verifier */
	double tables_s;		/* the tables into the module */
	double attach_s;		/* kprobes and links */
	double pin_s;
};

/*
 * Loads the BPF object at obj_path as the policy of the given constants:
 * parameters set and checked against the bounds, verified, the tables
 * validated (probes disarmed), programs attached, links pinned under
 * /sys/fs/bpf/xkernel/<id>/. All or nothing.
 */
int xk_policy_load(int fd, const char *obj_path, const struct xk_scope *tables,
		   int nr_tables, const struct xk_policy_opts *opts,
		   struct xk_policy_result *res);
/*
 * What xk_policy_load checks first, before anything reaches the kernel:
 * the object's programs only observe (kprobes, tracepoints, fentry/fexit),
 * call no helper that writes or signals and no kfunc but xkernel's, and
 * it pins no map. -EPERM names every refusal. Needs no privilege.
 */
int xk_policy_check(const char *obj_path);
/* Detaches policy id (waiting for its programs to go) and unloads its constants. */
int xk_policy_unload(int fd, const char *id, int *nr_constants);

#endif
