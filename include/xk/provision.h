/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libxk provisioning: the target kernel (Debian's packages, fetched,
 * unpacked and prepared in the cache) and the guest that boots it.
 */
#ifndef XK_PROVISION_H
#define XK_PROVISION_H

#include "xk/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Target kernel provisioning                                         */
/* ------------------------------------------------------------------ */

/* A target kernel as unpacked in the cache. */
struct xk_kernel {
	char release[128];	/* uname -r, e.g. 6.12.117+deb12-cloud-amd64 */
	char version[128];	/* Debian package version, e.g. 6.12.117-1~deb12u1 */
	char dir[XK_PATH_MAX];	/* $XK_CACHE/kernels/<release> */
	char root[XK_PATH_MAX];	/* dir/root: the unpacked packages */
	char vmlinuz[XK_PATH_MAX];
	char config[XK_PATH_MAX];
	char headers[XK_PATH_MAX];	/* for out-of-tree modules (Kbuild) */
	char modules[XK_PATH_MAX];	/* dir/root/lib/modules/<release> */
	char source[XK_PATH_MAX];	/* prepared source tree, "" if none */
	bool source_prepared;
};

struct xk_kernel_opts {
	size_t sz;
	/* uname -r of the target; NULL: the current Debian 6.12 cloud kernel */
	const char *release;
	/* cache directory; NULL: $XK_CACHE or ~/.cache/xkernel */
	const char *cache_dir;
	/* also fetch and prepare the source tree for single-object builds */
	bool with_source;
	/* only look in the cache, never download (xk_kernel_find) */
	bool offline;
};

/*
 * Resolves, downloads, unpacks and prepares a target kernel. Idempotent:
 * every step leaves a stamp and is skipped when its stamp is present.
 */
int xk_kernel_fetch(const struct xk_kernel_opts *opts, struct xk_kernel *k);

/* Finds an already fetched kernel in the cache; -ENOENT if there is none. */
int xk_kernel_find(const struct xk_kernel_opts *opts, struct xk_kernel *k);

/* ------------------------------------------------------------------ */
/* Guest harness                                                      */
/* ------------------------------------------------------------------ */

struct xk_vm_opts {
	size_t sz;
	const char *const *argv;	/* command to run in the guest; NULL: shell */
	int timeout_s;			/* 0: no timeout */
	int mem_mb;			/* 0: 2048 */
	int smp;			/* 0: 2 */
	bool interactive;		/* attach the terminal (xk vm shell) */
	bool deterministic;		/* single-threaded TCG with -icount */
	int out_fd;			/* where the command's output goes (0: stdout);
					 * -1: captured only (in the result) */
	const char *cwd;		/* guest working directory; NULL: ours */
	/*
	 * The Debian guest (scripts/debian-image.sh): a directory with
	 * rootfs.ext4 and initrd.img, booted with systemd as init on a
	 * copy-on-write overlay; the host's / is at /host, the command runs
	 * in /host<cwd>, and it may ask for a reboot (touch
	 * /run/xk-guest/reboot and exit): the same disk boots again and the
	 * command runs again. NULL: the busybox guest over the host's files.
	 */
	const char *image;
	bool debian;			/* image: $XK_CACHE/debian/<release> */
	/*
	 * Multi-threaded TCG (one host thread per vCPU): faster on several
	 * host cores, but QEMU's cross-modifying-code handling then lets a
	 * vCPU run a kernel text site while another patches it (static keys,
	 * static calls, text_poke_bp): the guest can oops at a site it never
	 * owned. false: single-threaded TCG (vCPUs take turns), the default.
	 */
	bool multi_thread;
};

struct xk_vm_result {
	int exit_status;		/* of the command in the guest */
	double wall_s;			/* qemu start to exit, host time */
	double boot_s;			/* guest uptime when the command started */
	char accel[16];			/* "kvm" or "tcg" */
	char run_dir[XK_PATH_MAX];	/* console.log lives here */
	char *output;			/* captured output (malloc'd), may be NULL */
	size_t output_len;
	int boots;			/* how many times the guest booted */
};

/*
 * Boots the kernel under QEMU, runs the command as root with the host's root
 * file system mounted read-only under a writable overlay (or in the Debian
 * guest, see image), and returns when the guest powers off. Returns 0 when the command ran (its status is in res),
 * -ETIMEDOUT when the guest hung, -EIO when it died without a status.
 */
int xk_vm_run(const struct xk_kernel *k, const struct xk_vm_opts *opts,
	      struct xk_vm_result *res);
void xk_vm_result_free(struct xk_vm_result *res);

#ifdef __cplusplus
}
#endif
#endif /* XK_PROVISION_H */
