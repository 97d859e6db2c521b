/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The interface between eBPF policies (Xk-tunes) and xkernel.ko: the kfunc
 * the module registers for BPF_PROG_TYPE_KPROBE programs, and how the loader
 * binds a policy's programs to the spans they drive. Included by the module,
 * by libxk and by policies (after vmlinux.h).
 *
 * A policy program runs at the probe point of a critical span of a constant
 * loaded with `xk load --policy`. It picks a value for this execution and
 * calls xk_choose once, which bounds it, pins it for the thread while the
 * thread is inside the safe span (when the constant's spans nest), counts it
 * per context and writes the span's state the scope table gives for it. The
 * module computes that state itself: a program cannot name a location or a
 * content.
 *
 * Binding: at load the module issues each policy-driven constant a handle,
 * a random secret and a slot; the loader attaches the program of span i
 * with the attach cookie handle | i (libbpf's bpf_kprobe_opts.bpf_cookie).
 * xk_choose reads the cookie of the running program from the kernel (never
 * from the program), so a program attached by anyone else (no cookie, or
 * the secret of an earlier load) is refused and counted, and the span is
 * found without a search.
 */
#ifndef XK_KFUNC_H
#define XK_KFUNC_H

#include "xk_rules.h"

/*
 * The version of this interface; a policy object records the one it was
 * built with (xk_policy.h) and xk load refuses another. 1: xk_set,
 * xk_write_kernel, xk_transition_done (until 2026-11); 2: xk_choose.
 */
#define XK_KFUNC_ABI 2

/* An attach cookie: secret (40 bits) | slot (8 bits) | span index (16 bits). */
#define XK_COOKIE_SPAN_MASK	0xffffULL
#define XK_COOKIE_SLOT_SHIFT	16
#define XK_COOKIE_SLOT_MASK	0xffULL
#define XK_COOKIE_SECRET_SHIFT	24
/* at most this many policy-driven constants loaded at once */
#define XK_POLICY_SLOTS		64

/* A label (at most XK_LABEL_MAX with its NUL) names the context a value was
 * chosen for: a device, a flow class. */

#endif
