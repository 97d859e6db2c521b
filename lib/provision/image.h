/* SPDX-License-Identifier: GPL-2.0 */
/* Internals of provisioning: build ids (image.c), for xk doctor (host.c). */
#ifndef XK_PROVISION_IMAGE_H
#define XK_PROVISION_IMAGE_H

#include "xk/provision.h"

/* The GNU build id of kernel k's vmlinux, as hex; -errno. */
int image_kernel_build_id(const struct xk_kernel *k, char *hex, size_t size);
/* The running kernel's, from ROOT/sys/kernel/notes ("" for /); -errno. */
int image_running_build_id(const char *root, char *hex, size_t size);

#endif
