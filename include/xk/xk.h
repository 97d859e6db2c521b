/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libxk: the public API of xkernel's user-space library, every part:
 *   xk/core.h       errors, printing, options (every part uses it)
 *   xk/provision.h  the target kernel and the guest
 *   xk/scope.h      the scope table: the contract between the halves
 *   xk/analysis.h   the offline analysis (catalog, builds, gen, glue)
 *   xk/runtime.h    the runtime client (xkernel.ko, eBPF policies)
 * An application that only loads tables needs core, scope and runtime, and
 * links without capstone and libelf (build/libxk-runtime.a).
 */
#ifndef XK_XK_H
#define XK_XK_H

#include "xk/core.h"
#include "xk/provision.h"
#include "xk/scope.h"
#include "xk/analysis.h"
#include "xk/runtime.h"

#endif /* XK_XK_H */
