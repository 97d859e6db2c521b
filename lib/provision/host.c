// SPDX-License-Identifier: GPL-2.0
/*
 * libxk provision: the host itself. What the running kernel allows xkernel
 * to do (xk doctor), read where the kernel publishes it (procfs, sysfs).
 *
 * Every check reads files only: nothing is loaded, probed or changed. The
 * files are looked up under a root (opts.root, "" for /), so that a test
 * can give a tree of its own.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "image.h"
#include "internal.h"
#include "xk/provision.h"

/* ---- xk doctor ---- */

/* A file under the root, its first line (no newline) in out; -errno. */
static int read_line(const char *root, const char *file, char *out, size_t size)
{
	char path[XK_PATH_MAX], *buf, *nl;
	size_t len;
	int err;

	out[0] = '\0';
	err = xk_snprintf(path, sizeof(path), "%s%s", root, file);
	if (err)
		return err;
	err = xk_read_file(path, &buf, &len);
	if (err)
		return err;
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	err = xk_strlcpy(out, buf, size);
	free(buf);
	return err;
}

static bool exists_under(const char *root, const char *file)
{
	char path[XK_PATH_MAX];

	return !xk_snprintf(path, sizeof(path), "%s%s", root, file) &&
	       xk_exists(path);
}

static struct xk_host_check *add_check(struct xk_host_report *r,
				       const char *name, enum xk_host_state s,
				       const char *fmt, ...) __printf(4, 5);
static struct xk_host_check *add_check(struct xk_host_report *r,
				       const char *name, enum xk_host_state s,
				       const char *fmt, ...)
{
	struct xk_host_check *c;
	va_list ap;

	if (r->nr >= XK_HOST_MAX_CHECKS)
		return NULL;
	c = &r->check[r->nr++];
	c->name = name;
	c->state = s;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	return c;
}

/*
 * The kallsyms facts: whether register_kprobe is there (kprobes built in)
 * and whether addresses show (_text not 0). One pass over the file.
 */
struct kallsyms_facts {
	bool readable;
	bool kprobes;
	bool addresses;
};

static void read_kallsyms_facts(const char *root, struct kallsyms_facts *f)
{
	char path[XK_PATH_MAX], line[512];
	FILE *fp;

	memset(f, 0, sizeof(*f));
	if (xk_snprintf(path, sizeof(path), "%s/proc/kallsyms", root))
		return;
	fp = fopen(path, "re");
	if (!fp)
		return;
	f->readable = true;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long addr;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "_text"))
			f->addresses = addr != 0;
		else if (!strcmp(name, "register_kprobe"))
			f->kprobes = true;
		if (f->kprobes && f->addresses)
			break;
	}
	fclose(fp);
}

static void check_root(struct xk_host_report *r, uid_t euid)
{
	if (euid == 0)
		add_check(r, "root", XK_HOST_OK, "running as root");
	else
		add_check(r, "root", XK_HOST_BLOCKED,
			  "not root (euid %u): xk load, set, unload and settle "
			  "need root, and what follows is what this user can see",
			  (unsigned int)euid);
}

static void check_cache(struct xk_host_report *r, const char *cache)
{
	XK_OPTS(xk_kernel_opts, o, .cache_dir = cache, .release = r->release);
	char id[2 * XK_BUILD_ID_MAX + 1];
	struct xk_kernel k;
	int err;

	err = xk_kernel_find(&o, &k);
	if (err) {
		add_check(r, "cache", XK_HOST_LIMITED,
			  "%s is not in the cache: 'xk kernel fetch --release %s' "
			  "makes its tables here (xk load and set need a table "
			  "made for this kernel)", r->release, r->release);
		if (r->build_id[0])
			add_check(r, "build", XK_HOST_OK, "build id %s",
				  r->build_id);
		else
			add_check(r, "build", XK_HOST_LIMITED,
				  "no build id in /sys/kernel/notes");
		return;
	}
	add_check(r, "cache", XK_HOST_OK, "%s is in the cache (%s)",
		  r->release, k.dir);
	if (image_kernel_build_id(&k, id, sizeof(id))) {
		xk_err_clear();
		add_check(r, "build", XK_HOST_LIMITED,
			  "the cached image has no extracted vmlinux to compare "
			  "with (its fetch ran without the source)");
	} else if (!r->build_id[0]) {
		add_check(r, "build", XK_HOST_LIMITED,
			  "no build id in /sys/kernel/notes: whether the running "
			  "kernel is the cached image's build is unknown");
	} else if (strcmp(id, r->build_id)) {
		add_check(r, "build", XK_HOST_BLOCKED,
			  "the running kernel's build id %s differs from the cached "
			  "image's %s: a kernel built separately under the same "
			  "release, which the cache's tables do not describe",
			  r->build_id, id);
	} else {
		add_check(r, "build", XK_HOST_OK,
			  "the cached image's build (build id %s)", r->build_id);
	}
}

static void check_modules(struct xk_host_report *r, const char *root)
{
	char v[64];

	if (!exists_under(root, "/proc/modules")) {
		add_check(r, "modules", XK_HOST_BLOCKED,
			  "the kernel is built without loadable modules "
			  "(CONFIG_MODULES)");
		return;
	}
	if (!read_line(root, "/proc/sys/kernel/modules_disabled", v, sizeof(v)) &&
	    strcmp(v, "0")) {
		add_check(r, "modules", XK_HOST_BLOCKED,
			  "module loading is off until reboot "
			  "(kernel.modules_disabled=%s)", v);
		return;
	}
	if (!read_line(root, "/sys/module/module/parameters/sig_enforce", v,
		       sizeof(v)) && !strcmp(v, "Y"))
		add_check(r, "modules", XK_HOST_LIMITED,
			  "signatures enforced: xkernel.ko loads only signed "
			  "with a key the kernel trusts (DKMS signs it with its "
			  "MOK key, enrolled with mokutil)");
	else
		add_check(r, "modules", XK_HOST_OK, "modules load%s",
			  exists_under(root, "/sys/module/module/parameters/sig_enforce") ?
			  " (signatures not enforced)" : "");
}

/* "none [integrity] confidentiality": the bracketed word. */
static void check_lockdown(struct xk_host_report *r, const char *root)
{
	char line[128], *open, *close;

	if (read_line(root, "/sys/kernel/security/lockdown", line, sizeof(line))) {
		/* securityfs always has lsm: mounted, the LSM is not active */
		if (exists_under(root, "/sys/kernel/security/lsm"))
			add_check(r, "lockdown", XK_HOST_OK,
				  "none (no lockdown LSM in this kernel)");
		else
			add_check(r, "lockdown", XK_HOST_LIMITED,
				  "unknown: securityfs is not mounted at "
				  "/sys/kernel/security (the module checks "
				  "lockdown itself at every load)");
		return;
	}
	open = strchr(line, '[');
	close = open ? strchr(open, ']') : NULL;
	if (!open || !close) {
		add_check(r, "lockdown", XK_HOST_LIMITED,
			  "cannot read the lockdown state (\"%s\")", line);
		return;
	}
	*close = '\0';
	if (!strcmp(open + 1, "none"))
		add_check(r, "lockdown", XK_HOST_OK, "none");
	else
		add_check(r, "lockdown", XK_HOST_BLOCKED,
			  "%s: the module refuses tables and new values while the "
			  "kernel is locked down (unload and status stay allowed)",
			  open + 1);
}

static void check_kprobes(struct xk_host_report *r, const char *root,
			  const struct kallsyms_facts *f)
{
	char v[32];

	if (!f->readable) {
		add_check(r, "kprobes", XK_HOST_LIMITED,
			  "/proc/kallsyms cannot be read: kprobes unknown");
		return;
	}
	if (!f->kprobes) {
		add_check(r, "kprobes", XK_HOST_BLOCKED,
			  "the kernel is built without kprobes (CONFIG_KPROBES)");
		return;
	}
	/* armed probes only: a kprobe registered while disarmed never fires */
	if (!read_line(root, "/sys/kernel/debug/kprobes/enabled", v, sizeof(v)) &&
	    !strcmp(v, "0")) {
		add_check(r, "kprobes", XK_HOST_BLOCKED,
			  "kprobes are disarmed (debugfs kprobes/enabled is 0): "
			  "a retune would register probes that never fire");
		return;
	}
	if (!read_line(root, "/proc/sys/debug/kprobes-optimization", v, sizeof(v)))
		add_check(r, "kprobes", XK_HOST_OK, "%s",
			  strcmp(v, "0") ? "built in, jump-optimized where a span allows" :
			  "built in, every probe an int3 (debug.kprobes-optimization=0)");
	else
		add_check(r, "kprobes", XK_HOST_OK,
			  "built in, every probe an int3 (no CONFIG_OPTPROBES)");
}

static void check_kallsyms(struct xk_host_report *r, const char *root,
			   const struct kallsyms_facts *f)
{
	char v[16];

	if (f->readable && f->addresses) {
		add_check(r, "kallsyms", XK_HOST_OK, "addresses visible");
		return;
	}
	if (read_line(root, "/proc/sys/kernel/kptr_restrict", v, sizeof(v)))
		xk_strlcpy(v, "?", sizeof(v));
	add_check(r, "kallsyms", XK_HOST_LIMITED,
		  "addresses %s (kernel.kptr_restrict=%s): tables with variables "
		  "or a function name the kernel has twice cannot load, and "
		  "'xk kernel fetch' of this kernel boots it in a guest",
		  f->readable ? "hidden" : "unreadable", v);
}

/* major.minor of a release ("6.12.118+deb12-cloud-amd64"), or 0. */
static int release_version(const char *release)
{
	int major = 0, minor = 0;

	if (sscanf(release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major * 1000 + minor;
}

static void check_policies(struct xk_host_report *r, const char *root)
{
	int v = release_version(r->release);

	if (!exists_under(root, "/sys/kernel/btf/vmlinux"))
		add_check(r, "policies", XK_HOST_LIMITED,
			  "no kernel BTF (/sys/kernel/btf/vmlinux, "
			  "CONFIG_DEBUG_INFO_BTF): eBPF policies cannot load; "
			  "xk set works");
	else if (v && v < 6010)
		add_check(r, "policies", XK_HOST_LIMITED,
			  "Linux %d.%d: eBPF policies need 6.10 or later (kfunc "
			  "filters, the run context of a probe's program); xk set "
			  "works", v / 1000, v % 1000);
	else
		add_check(r, "policies", XK_HOST_OK, "BTF and kfuncs for eBPF policies");
}

static void check_module_loaded(struct xk_host_report *r, const char *root)
{
	char v[64];

	if (!exists_under(root, "/sys/module/xkernel")) {
		add_check(r, "xkernel", XK_HOST_OK,
			  "not loaded (xk load and set load it)");
		return;
	}
	if (read_line(root, "/sys/module/xkernel/version", v, sizeof(v)))
		xk_strlcpy(v, "no version", sizeof(v));
	add_check(r, "xkernel", XK_HOST_OK, "loaded (%s)", v);
}

static int host_check_impl(const struct xk_host_opts *opts,
			   struct xk_host_report *r)
{
	const char *root = OPTS_GET(opts, root, NULL);
	const char *cache = OPTS_GET(opts, cache_dir, NULL);
	uid_t euid = OPTS_GET(opts, euid_set, false) ? OPTS_GET(opts, euid, 0) :
						       geteuid();
	struct kallsyms_facts f;
	int err;

	if (!OPTS_VALID(opts, xk_host_opts))
		return xk_err(-EINVAL, "invalid xk_host_opts");
	root = root ? root : "";
	memset(r, 0, sizeof(*r));
	err = read_line(root, "/proc/sys/kernel/osrelease", r->release,
			sizeof(r->release));
	if (err || !r->release[0])
		return xk_err(err ?: -ENOENT, "%s/proc/sys/kernel/osrelease: "
			      "cannot read the running kernel's release", root);
	if (image_running_build_id(root, r->build_id, sizeof(r->build_id)))
		r->build_id[0] = '\0';
	xk_err_clear();
	read_kallsyms_facts(root, &f);
	check_root(r, euid);
	check_cache(r, cache);
	check_modules(r, root);
	check_lockdown(r, root);
	check_kprobes(r, root, &f);
	check_kallsyms(r, root, &f);
	check_policies(r, root);
	check_module_loaded(r, root);
	xk_err_clear();
	for (int i = 0; i < r->nr; i++)
		r->blocked += r->check[i].state == XK_HOST_BLOCKED;
	return 0;
}

int xk_host_check(const struct xk_host_opts *opts, struct xk_host_report *r)
{
	xk_err_clear();
	return xk_api_return(__func__, host_check_impl(opts, r));
}

const char *xk_host_state_name(enum xk_host_state s)
{
	switch (s) {
	case XK_HOST_OK:
		return "ok";
	case XK_HOST_LIMITED:
		return "limited";
	case XK_HOST_BLOCKED:
		return "blocked";
	}
	return "?";
}
