/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest harness's internals that the unit tests see.
 */
#ifndef XK_PROVISION_VM_H
#define XK_PROVISION_VM_H

#include "xk/provision.h"

#define MAX_EARLY_MODULES 16

/*
 * The modules the busybox guest loads from its initramfs before it can read
 * the host's files (virtio PCI, virtiofs and what they depend on), in load
 * order, as paths under k->modules (from its modules.dep); *nr = 0 when
 * the target builds them in.
 */
int early_module_order(const struct xk_kernel *k, char order[][XK_PATH_MAX],
		       int *nr);

#endif
