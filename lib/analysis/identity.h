/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the offline analysis: build identity (identity.c). A
 * baseline object rebuilt from the source package must hold the shipped
 * kernel's code, function by function, before anything is derived from it.
 */
#ifndef XK_ANALYSIS_IDENTITY_H
#define XK_ANALYSIS_IDENTITY_H

#include "internal.h"
#include "xk/analysis.h"

/* Compares a baseline object with the shipped kernel; -ESTALE names the
 * functions that differ. */
int xk_identity_check(const struct xk_kernel *k, const char *obj_path,
		      const char *obj_name, int *checked);
/*
 * The same for an object of a module (ko: the module's path in the tree,
 * "net/ipv4/tcp_bbr.ko"): compared with the shipped module, function by
 * function, relocations masked on both sides.
 */
int xk_identity_check_module(const struct xk_kernel *k, const char *obj_path,
			     const char *obj_name, const char *ko, int *checked);
/* Each span's number of same-named functions in the target kernel. */
int xk_count_copies(const struct xk_kernel *k, struct xk_scope *t);

#endif
