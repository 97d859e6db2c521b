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

/*
 * Which kernel of the cache a command acts on (the target), by the first
 * rule that names one:
 *   1. the release the caller gives (xk_kernel_opts.release: --release R);
 *   2. $XK_RELEASE;
 *   3. the choice xk_kernel_choose() recorded ($XK_CACHE/target:
 *      xk kernel use R);
 *   4. the running kernel (uname -r), when it is in the cache;
 *   5. the one kernel in the cache, when there is only one.
 * A release that rule 1, 2 or 3 names must be in the cache: else it is an
 * error naming it and the kernels that are, never another kernel. With
 * none of them, several kernels cached and the running one not among
 * them, there is no target: an error that lists them and says how to
 * choose. Nothing else (a fetch in particular) changes the target.
 */
enum xk_target_why {
	XK_TARGET_NONE,		/* not the target, or there is none */
	XK_TARGET_OPTION,	/* 1: the caller's release */
	XK_TARGET_ENV,		/* 2: $XK_RELEASE */
	XK_TARGET_CHOSEN,	/* 3: xk_kernel_choose() */
	XK_TARGET_RUNNING,	/* 4: the running kernel */
	XK_TARGET_ONLY,		/* 5: the only kernel in the cache */
};

/* "option", "env", "chosen", "running", "only" (NULL for NONE). */
const char *xk_target_why_name(enum xk_target_why why);
/* The rule in words: "--release", "XK_RELEASE", "chosen with 'xk kernel
 * use'", "the running kernel", "the only kernel in the cache". */
const char *xk_target_why_text(enum xk_target_why why);

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
	/*
	 * "": this host's compiler builds for the kernel. Else a Debian
	 * system root of the kernel's suite (debootstrap, in the cache) that
	 * holds its compiler and tools: builds run there (xk_cmd.root)
	 */
	char toolchain[XK_PATH_MAX];
	bool source_prepared;
	enum xk_target_why why;		/* why it is the target; NONE: it is not */
};

struct xk_kernel_opts {
	size_t sz;
	/*
	 * uname -r of the kernel. xk_kernel_fetch: the one to fetch; NULL:
	 * $XK_RELEASE, else the current Debian 6.12 cloud kernel.
	 * xk_kernel_find and xk_kernel_list: rule 1 of the target; NULL:
	 * the other rules decide.
	 */
	const char *release;
	/* cache directory; NULL: $XK_CACHE or ~/.cache/xkernel */
	const char *cache_dir;
	/* also fetch and prepare the source tree for single-object builds */
	bool with_source;
	/* only look in the cache, never download (xk_kernel_find) */
	bool offline;
	/* the running kernel's release for rule 4; NULL: uname -r */
	const char *running;
};

/*
 * Resolves, downloads, unpacks and prepares a kernel into the cache.
 * Idempotent: every step leaves a stamp and is skipped when its stamp is
 * present. It does not change the target: k->why says whether the fetched
 * kernel is the target after it, and why.
 */
int xk_kernel_fetch(const struct xk_kernel_opts *opts, struct xk_kernel *k);

/* The shipped module ko ("block/bfq.ko", under the module tree's kernel/),
 * decompressed into the kernel's cache once: its path in out. */
int xk_shipped_module(const struct xk_kernel *k, const char *ko, char *out,
		      size_t size);

/* The target kernel of the cache (rules above); -ENOENT when there is none
 * or the release named is not in the cache, with the cause (naming the
 * kernels that are) in xk_last_error(). */
int xk_kernel_find(const struct xk_kernel_opts *opts, struct xk_kernel *k);

/* A kernel in the cache, as xk_kernel_list() reports it. */
struct xk_cached_kernel {
	char release[128];
	char version[128];	/* the package version, "" when not known */
	bool complete;		/* fetched to its end; only such a kernel
				   can be the target */
	bool source_prepared;	/* the source tree, for xk build and gen */
	int nr_tables;		/* scope tables in its scopes/ */
	enum xk_target_why why;	/* why it is the target; NONE: it is not */
};

struct xk_kernel_list {
	char cache[XK_PATH_MAX];
	struct xk_cached_kernel *kernels;	/* sorted by release */
	int nr;
	int target;		/* index of the target in kernels, -1: none */
	char chosen[128];	/* the choice of xk_kernel_choose(), "" */
	char problem[8192];	/* why there is no target (target -1) */
};

/*
 * Every kernel directory of the cache and the target (rules above; no
 * target is not a failure: problem says why). Free with
 * xk_kernel_list_free().
 */
int xk_kernel_list(const struct xk_kernel_opts *opts, struct xk_kernel_list *l);
void xk_kernel_list_free(struct xk_kernel_list *l);

/*
 * Records release as the target (rule 3) in the cache of opts; it must be
 * in the cache. NULL removes the choice.
 */
int xk_kernel_choose(const struct xk_kernel_opts *opts, const char *release);

/*
 * A kernel the user built from source, into the cache of opts: dir is the
 * built tree (.config, vmlinux, arch/x86/boot/bzImage, Module.symvers,
 * Kbuild's .o.cmd files), which serves as its source and its headers; its
 * modules are installed under the cache's kernels/RELEASE/root and its
 * symbols recorded as for a fetch. Then it is chosen (rule 3). A Debian
 * kernel of the same release in the cache is refused.
 */
int xk_kernel_add_build(const struct xk_kernel_opts *opts, const char *dir,
			struct xk_kernel *k);

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

/* ------------------------------------------------------------------ */
/* The host: what its running kernel allows (xk doctor)               */
/* ------------------------------------------------------------------ */

/* A GNU build id in hex: at most this many bytes (sha1 uses 20). */
#define XK_BUILD_ID_MAX 64

enum xk_host_state {
	XK_HOST_OK,		/* nothing in the way */
	XK_HOST_LIMITED,	/* a part of xkernel cannot work (detail says) */
	XK_HOST_BLOCKED,	/* retuning cannot work on this host */
};

struct xk_host_check {
	const char *name;	/* root, cache, build, modules, lockdown,
				   kprobes, kallsyms, policies, xkernel */
	enum xk_host_state state;
	char detail[320];
};

#define XK_HOST_MAX_CHECKS 16
struct xk_host_report {
	char release[128];			/* the running kernel's */
	char build_id[2 * XK_BUILD_ID_MAX + 1];	/* hex, "" when unknown */
	int nr;
	struct xk_host_check check[XK_HOST_MAX_CHECKS];
	int blocked;				/* checks XK_HOST_BLOCKED */
};

struct xk_host_opts {
	size_t sz;
	/* where /proc and /sys are looked up; NULL: / (a test gives a tree) */
	const char *root;
	/* the cache whose kernels the running one is compared with; NULL:
	 * $XK_CACHE or ~/.cache/xkernel */
	const char *cache_dir;
	/* the effective uid to report; unset: geteuid() */
	bool euid_set;
	unsigned int euid;
};

/*
 * What the running kernel allows: root, whether it is in the cache and
 * the cached image's build (GNU build ids compared), modules and their
 * signatures, lockdown, kprobes (built in, armed, optimized), kallsyms
 * addresses, eBPF policies (BTF, Linux 6.10), whether xkernel.ko is
 * loaded. Reads files only. 0 with the report (r->blocked counts what
 * blocks a retune), or -errno when the release cannot be read.
 */
int xk_host_check(const struct xk_host_opts *opts, struct xk_host_report *r);
/* "ok", "limited", "blocked". */
const char *xk_host_state_name(enum xk_host_state s);
/* The GNU build id of an ELF file (a vmlinux), in hex. */
int xk_build_id_file(const char *path, char *hex, size_t size);
/* That of kernel k's vmlinux in the cache (extracted at fetch). */
int xk_kernel_build_id(const struct xk_kernel *k, char *hex, size_t size);
/* The running kernel's, from /sys/kernel/notes. */
int xk_build_id_running(char *hex, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* XK_PROVISION_H */
