// SPDX-License-Identifier: GPL-2.0
/*
 * libxk provision: the target kernel.
 *
 * A target kernel is a Debian kernel: the unsigned image (vmlinuz and the
 * modules), the headers (for out-of-tree modules), and optionally the source
 * tree prepared for single-object builds with the compiler that built the
 * kernel. Everything is unpacked under $XK_CACHE/kernels/<release>/; each
 * step leaves a stamp so that a second fetch only checks stamps.
 *
 * The version is never hard-coded: without a release the current candidate
 * of linux-source-6.12 picks the upstream version, and the cloud-amd64 image
 * of that exact package version is fetched. With a release (uname -r of a
 * Debian host), the same steps run for that kernel; one of another Debian
 * release than the host's is resolved, downloaded and built in its suite's
 * toolchain root (make_toolchain). A kernel built from source is added with
 * its tree as source and headers (xk_kernel_add_build), never fetched.
 *
 * The cache may hold several kernels; which one a command acts on (the
 * target) follows the rules of include/xk/provision.h, and only an explicit
 * choice ($XK_CACHE/target, xk_kernel_choose) is ever recorded: a fetch
 * records none. kernels/default, which versions before these rules wrote
 * on every fetch, is not read.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <glob.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"
#include "xk/provision.h"

#define DEFAULT_SOURCE_PKG "linux-source-6.12"
#define DEFAULT_FLAVOUR "cloud-amd64"

struct deb {
	char name[192];
	char version[128];
	char path[XK_PATH_MAX];	/* set once downloaded */
};

struct kernel_pkgs {
	struct deb image;
	struct deb headers[4];	/* flavour headers, common headers, kbuild */
	int nr_headers;
	struct deb source;
};

/* Returns the value of "Key: value" on its own line of an apt listing. */
static int field_of(const char *text, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);

	for (const char *line = text; line && *line;) {
		const char *end = strchrnul(line, '\n');
		const char *p = line;

		while (*p == ' ')
			p++;
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			p += klen + 1;
			while (*p == ' ')
				p++;
			if (end - p <= 0 || (size_t)(end - p) >= size)
				return -ENOENT;
			memcpy(out, p, end - p);
			out[end - p] = '\0';
			return 0;
		}
		line = *end ? end + 1 : end;
	}
	return -ENOENT;
}

/* An apt query's output, on this host or in a toolchain root (root). */
static int apt_cache(const char *const *argv, char **out, const char *root)
{
	struct xk_cmd cmd = { .argv = argv, .capture = out,
			      .log_path = "/dev/null", .root = root };
	int st = xk_run(&cmd);

	if (st < 0)
		return st;
	if (st) {
		free(*out);
		*out = NULL;
		return -ENOENT;
	}
	return 0;
}

/* The candidate version of a package, or -ENOENT. */
static int candidate_version(const char *pkg, char *out, size_t size)
{
	const char *argv[] = { "apt-cache", "policy", pkg, NULL };
	char *text = NULL;
	int err;

	err = apt_cache(argv, &text, NULL);
	if (!err)
		err = field_of(text, "Candidate", out, size);
	if (!err && !strcmp(out, "(none)"))
		err = -ENOENT;
	free(text);
	return err;
}

/* The newest version of a package that apt knows, or -ENOENT. */
static int show_version(const char *pkg, char *out, size_t size,
			const char *root)
{
	const char *argv[] = { "apt-cache", "show", "--no-all-versions", pkg,
			       NULL };
	char *text = NULL;
	int err;

	err = apt_cache(argv, &text, root);
	if (!err)
		err = field_of(text, "Version", out, size);
	free(text);
	return err;
}

static int set_deb(struct deb *d, const char *name, const char *version)
{
	return xk_strlcpy(d->name, name, sizeof(d->name)) ?:
	       xk_strlcpy(d->version, version, sizeof(d->version));
}

/*
 * The default target: the cloud-amd64 image whose package version equals
 * the linux-source-6.12 candidate.
 */
static int resolve_default_release(char *release, size_t size)
{
	char version[128], upstream[64], pattern[256], name[256], v[128];
	const char *argv[] = { "apt-cache", "search", "--names-only", pattern,
			       NULL };
	char *list = NULL;
	int err;

	err = candidate_version(DEFAULT_SOURCE_PKG, version, sizeof(version));
	if (err)
		return xk_err(err, "apt knows no candidate for %s: run "
				   "'apt-get update' (or pass --release)",
			      DEFAULT_SOURCE_PKG);
	xk_snprintf(upstream, sizeof(upstream), "%.*s",
		    (int)strcspn(version, "-"), version);
	err = xk_snprintf(pattern, sizeof(pattern),
			  "^linux-image-%s\\+.*-%s-unsigned$", upstream,
			  DEFAULT_FLAVOUR);
	err = err ?: apt_cache(argv, &list, NULL);
	if (err)
		return xk_err(-ENOENT, "no %s image of Linux %s is known to apt",
			      DEFAULT_FLAVOUR, upstream);
	err = -ENOENT;
	for (char *line = list; *line;) {
		char *end = strchrnul(line, '\n');
		size_t n = strcspn(line, " ");

		if (n < sizeof(name)) {
			memcpy(name, line, n);
			name[n] = '\0';
			if (!show_version(name, v, sizeof(v), NULL) &&
			    !strcmp(v, version)) {
				size_t pre = strlen("linux-image-");
				size_t suf = strlen("-unsigned");

				err = xk_snprintf(release, size, "%.*s",
						  (int)(n - pre - suf),
						  name + pre);
				break;
			}
		}
		line = *end ? end + 1 : end;
	}
	free(list);
	if (err)
		return xk_err(err, "no %s image has the version %s of %s",
			      DEFAULT_FLAVOUR, version, DEFAULT_SOURCE_PKG);
	return 0;
}

static int valid_release(const char *r)
{
	if (!*r || strlen(r) > 100)
		return 0;
	for (; *r; r++)
		if (!isalnum((unsigned char)*r) && !strchr(".+-_~", *r))
			return 0;
	return 1;
}

/*
 * Names and versions of the packages that make up a target kernel, as the
 * apt of this host or of the kernel's toolchain root (root) knows them.
 */
static int resolve_packages(const char *release, struct kernel_pkgs *p,
			    const char *root)
{
	char name[192], version[128], mm[32];
	const char *argv[] = { "apt-cache", "depends", "--no-recommends",
			       "--no-suggests", name, NULL };
	char *deps = NULL;
	int err;

	memset(p, 0, sizeof(*p));
	if (!valid_release(release))
		return xk_err(-EINVAL, "'%s' is not a kernel release", release);
	xk_snprintf(name, sizeof(name), "linux-image-%s-unsigned", release);
	if (show_version(name, version, sizeof(version), root)) {
		xk_snprintf(name, sizeof(name), "linux-image-%s", release);
		if (show_version(name, version, sizeof(version), root))
			return xk_err(-ENOENT,
				      "unknown kernel release '%s': Debian has "
				      "no package linux-image-%s (check the "
				      "release, or run 'apt-get update')",
				      release, release);
	}
	err = set_deb(&p->image, name, version);

	/* the headers package and what it depends on (common, kbuild) */
	xk_snprintf(name, sizeof(name), "linux-headers-%s", release);
	err = err ?: set_deb(&p->headers[p->nr_headers++], name, version);
	err = err ?: apt_cache(argv, &deps, root);
	if (err)
		return xk_err(err ?: -ENOENT, "apt knows no package %s", name);
	for (char *line = deps; *line && !err;) {
		char *end = strchrnul(line, '\n'), *dep;
		bool last = !*end;

		*end = '\0';
		dep = strstr(line, "Depends: ");
		if (dep) {
			dep += strlen("Depends: ");
			if ((!strncmp(dep, "linux-headers-", 14) ||
			     !strncmp(dep, "linux-kbuild-", 13)) &&
			    !strchr(dep, '<') &&
			    p->nr_headers < (int)ARRAY_SIZE(p->headers))
				err = set_deb(&p->headers[p->nr_headers++], dep,
					      version);
		}
		line = last ? end : end + 1;
	}
	free(deps);

	/* the source package of the same major.minor and the same version */
	xk_snprintf(mm, sizeof(mm), "%.*s", (int)strspn(release, "0123456789."),
		    release);
	if (strchr(mm, '.') != strrchr(mm, '.'))
		*strrchr(mm, '.') = '\0';
	xk_snprintf(name, sizeof(name), "linux-source-%s", mm);
	err = err ?: set_deb(&p->source, name, version);
	return err;
}

static int find_deb(const char *debs, struct deb *d)
{
	char pattern[XK_PATH_MAX];
	glob_t g;
	int err;

	err = xk_snprintf(pattern, sizeof(pattern), "%s/%s_%s_*.deb", debs,
			  d->name, d->version);
	if (err)
		return err;
	if (glob(pattern, 0, NULL, &g))
		return -ENOENT;
	err = xk_strlcpy(d->path, g.gl_pathv[0], sizeof(d->path));
	globfree(&g);
	return err;
}

/*
 * apt-get download, into the cache, only the packages not there yet; in
 * the kernel's toolchain root (root) when it has one.
 */
static int download_debs(const char *cache, struct deb **debs, int n,
			 const char *root)
{
	char dir[XK_PATH_MAX], log[XK_PATH_MAX], spec[256], tail[1024];
	int err;

	err = xk_snprintf(dir, sizeof(dir), "%s/debs", cache) ?:
	      xk_snprintf(log, sizeof(log), "%s/debs/apt-get.log", cache) ?:
	      xk_mkdir_p(dir);
	if (err)
		return xk_err(err, "cannot create %s/debs", cache);
	for (int i = 0; i < n; i++) {
		const char *argv[] = { "apt-get", "download", "-q", "-o",
				       "APT::Sandbox::User=root", spec, NULL };
		struct xk_cmd cmd = { .argv = argv, .cwd = dir, .log_path = log,
				      .root = root };

		if (!find_deb(dir, debs[i]))
			continue;
		xk_snprintf(spec, sizeof(spec), "%s=%s", debs[i]->name,
			    debs[i]->version);
		pr_info("downloading %s\n", spec);
		err = xk_run(&cmd);
		if (err < 0)
			return err;
		if (err || find_deb(dir, debs[i])) {
			xk_file_tail(log, 3, tail, sizeof(tail));
			return xk_err(-ENETUNREACH,
				      "cannot download %s from the Debian "
				      "mirror (no network to it?); apt-get "
				      "said:\n%s",
				      spec, tail);
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* a toolchain root: the kernel's own Debian suite                     */
/* ------------------------------------------------------------------ */

/*
 * A kernel of another Debian release than the host's (trixie's, built by
 * gcc-14, on a bookworm host) is built by a compiler, binutils and kbuild
 * tools this host cannot run. The kernel's suite, made by mmdebstrap in
 * the cache ($XK_CACHE/toolchains/SUITE), holds them and its apt: the
 * kernel's packages are resolved and downloaded there, and every build
 * for the kernel runs there (xk_cmd.root), on the host's files.
 */
static const struct {
	const char *tag, *suite;
} debian_suites[] = {
	{ "+deb11-", "bullseye" },
	{ "+deb12-", "bookworm" },
	{ "+deb13-", "trixie" },
	{ "+deb14-", "forky" },
};

/* The suite a release names ("6.12.118+deb13-cloud-amd64": trixie), or "". */
static const char *release_suite(const char *release)
{
	for (size_t i = 0; i < ARRAY_SIZE(debian_suites); i++)
		if (strstr(release, debian_suites[i].tag))
			return debian_suites[i].suite;
	return "";
}

/* This host's suite, VERSION_CODENAME of /etc/os-release, or "". */
static void host_suite(char *out, size_t size)
{
	char *text = NULL, *p;

	*out = '\0';
	if (xk_read_file("/etc/os-release", &text, NULL))
		return;
	p = strstr(text, "VERSION_CODENAME=");
	if (p) {
		p += strlen("VERSION_CODENAME=");
		xk_snprintf(out, size, "%.*s", (int)strcspn(p, "\n\""), p);
	}
	free(text);
}

/* What a kernel's build needs besides its compiler (kernel_cc adds it). */
#define TOOLCHAIN_PKGS "make,bc,bison,flex,libelf-dev,libssl-dev,perl," \
		       "python3-minimal,kmod,cpio,dwarves,xz-utils"

/* Runs a step in a toolchain root, its output to log. */
static int run_in_root(const char *what, const char *root, const char *log,
		       const char *const *argv)
{
	struct xk_cmd cmd = { .argv = argv, .log_path = log, .root = root };

	return xk_run_step(what, &cmd);
}

/*
 * The toolchain root of suite in the cache, made when it is not there
 * (half a minute to a minute, 300 to 600 MB): the minimal system of
 * mmdebstrap (else debootstrap), the suite's updates and security
 * archives in its apt. root gets its path.
 */
static int make_toolchain(const char *cache, const char *suite, char *root,
			  size_t size)
{
	static const char *const system_dirs[] = { "/usr/", "/etc/", "/var/",
		"/bin/", "/sbin/", "/lib", "/boot/" };
	const char *mirror = getenv("XK_DEBIAN_MIRROR");
	char ready[XK_PATH_MAX], log[XK_PATH_MAX], path[XK_PATH_MAX];
	char list[1024], tool[XK_PATH_MAX];
	int err;

	if (!mirror || !*mirror)
		mirror = "http://deb.debian.org/debian";
	if (strpbrk(mirror, " \t\n\r#"))
		return xk_err(-EINVAL, "XK_DEBIAN_MIRROR '%s' is no mirror URL "
				       "(it holds a space, a line break or #)",
			      mirror);
	err = xk_snprintf(root, size, "%s/toolchains/%s", cache, suite) ?:
	      xk_snprintf(ready, sizeof(ready), "%s/.xk-ready", root) ?:
	      xk_snprintf(log, sizeof(log), "%s/toolchains/%s.log", cache, suite);
	if (err)
		return xk_err(err, "cache path too long: %s", cache);
	if (xk_exists(ready))
		return 0;
	/* its commands see the host's files outside the system's directories */
	if (cache[0] != '/')
		return xk_err(-EINVAL, "the cache %s is no absolute path, which "
				       "%s's toolchain root needs: set XK_CACHE "
				       "to one", cache, suite);
	for (size_t i = 0; i < ARRAY_SIZE(system_dirs); i++)
		if (!strncmp(cache, system_dirs[i], strlen(system_dirs[i])))
			return xk_err(-EINVAL, "the cache %s lies in a system "
					       "directory (%s), which %s's "
					       "toolchain root would hide: set "
					       "XK_CACHE elsewhere", cache,
				      system_dirs[i], suite);
	if (geteuid())
		return xk_err(-EPERM, "a kernel of Debian %s needs its "
				      "toolchain root, which only root can "
				      "make and use (chroot)", suite);
	if (xk_which("unshare", tool, sizeof(tool)) ||
	    (xk_which("mmdebstrap", tool, sizeof(tool)) &&
	     xk_which("debootstrap", tool, sizeof(tool))))
		return xk_err(-ENOENT, "a kernel of Debian %s is built by %s's "
				       "own compiler, in a system root this "
				       "host makes with mmdebstrap (or "
				       "debootstrap) and enters with unshare: "
				       "apt-get install mmdebstrap util-linux",
			      suite, suite);
	xk_rm_rf(root);
	err = xk_mkdir_p(root);
	if (err)
		return xk_err(err, "cannot create %s", root);
	unlink(log);
	pr_info("making Debian %s's toolchain root for the kernel's compiler "
		"(%s, about a minute)\n", suite, strrchr(tool, '/') + 1);
	{
		const char *argv[] = { tool, "--variant=minbase",
				       "--include=" TOOLCHAIN_PKGS, suite, root,
				       mirror, NULL };
		struct xk_cmd cmd = { .argv = argv, .log_path = log };

		err = xk_run_step(strrchr(tool, '/') + 1, &cmd);
	}
	err = err ?: xk_snprintf(list, sizeof(list),
				 "deb %s %s main\ndeb %s %s-updates main\n"
				 "deb http://deb.debian.org/debian-security "
				 "%s-security main\n", mirror, suite, mirror,
				 suite, suite) ?:
	      xk_snprintf(path, sizeof(path), "%s/etc/apt/sources.list", root) ?:
	      xk_write_file(path, list, strlen(list), 0644);
	if (!err && xk_exists("/etc/resolv.conf")) {
		err = xk_snprintf(path, sizeof(path), "%s/etc/resolv.conf", root);
		if (!err) {
			unlink(path);
			err = xk_copy_file("/etc/resolv.conf", path, 0644);
		}
	}
	if (!err) {
		const char *argv[] = { "apt-get", "update", "-q", "-o",
				       "APT::Sandbox::User=root", NULL };

		err = run_in_root("apt-get update (toolchain root)", root, log,
				  argv);
	}
	err = err ?: xk_write_file(ready, "", 0, 0644);
	return err;
}

/*
 * The toolchain root a release needs: "" when its suite is this host's (or
 * it names none: Debian 12's 6.1 and the like build here), else its suite's
 * root, made when missing.
 */
static int kernel_toolchain(const char *cache, const char *release,
			    char *root, size_t size)
{
	const char *suite = release_suite(release);
	char host[64];

	*root = '\0';
	host_suite(host, sizeof(host));
	if (!*suite || !strcmp(suite, host))
		return 0;
	return make_toolchain(cache, suite, root, size);
}

static int stamp_path(const struct xk_kernel *k, const char *step, char *out,
		      size_t size)
{
	return xk_snprintf(out, size, "%s/.stamp-%s", k->dir, step);
}

static bool stamped(const struct xk_kernel *k, const char *step)
{
	char p[XK_PATH_MAX];

	return !stamp_path(k, step, p, sizeof(p)) && xk_exists(p);
}

static int stamp(const struct xk_kernel *k, const char *step)
{
	char p[XK_PATH_MAX];

	return stamp_path(k, step, p, sizeof(p)) ?:
	       xk_write_file(p, "ok\n", 3, 0644);
}

static int fill_paths(struct xk_kernel *k, const char *cache,
		      const char *release)
{
	int err;

	err = xk_strlcpy(k->release, release, sizeof(k->release)) ?:
	      xk_snprintf(k->dir, sizeof(k->dir), "%s/kernels/%s", cache,
			  release) ?:
	      xk_snprintf(k->root, sizeof(k->root), "%s/root", k->dir) ?:
	      xk_snprintf(k->vmlinuz, sizeof(k->vmlinuz), "%s/boot/vmlinuz-%s",
			  k->root, release) ?:
	      xk_snprintf(k->config, sizeof(k->config), "%s/boot/config-%s",
			  k->root, release) ?:
	      xk_snprintf(k->headers, sizeof(k->headers),
			  "%s/usr/src/linux-headers-%s", k->root, release) ?:
	      xk_snprintf(k->modules, sizeof(k->modules), "%s/lib/modules/%s",
			  k->root, release) ?:
	      xk_snprintf(k->source, sizeof(k->source), "%s/src", k->dir);
	if (err)
		return xk_err(err, "cache path too long: %s", cache);
	return 0;
}

/* Whether k's directory is a kernel added with xk kernel use --build-dir. */
static bool is_self_built(const struct xk_kernel *k)
{
	return stamped(k, "self-built");
}

/*
 * A self-built kernel's paths: its built tree is its source and headers,
 * its image and config are the tree's; modules and symbols stay in the
 * cache (fill_paths).
 */
static int build_paths(struct xk_kernel *k, const char *dir)
{
	return xk_snprintf(k->vmlinuz, sizeof(k->vmlinuz),
			   "%s/arch/x86/boot/bzImage", dir) ?:
	       xk_snprintf(k->config, sizeof(k->config), "%s/.config", dir) ?:
	       xk_strlcpy(k->headers, dir, sizeof(k->headers)) ?:
	       xk_strlcpy(k->source, dir, sizeof(k->source));
}

/*
 * The headers package refers to its common half and to kbuild by absolute
 * paths under /usr; point them into the cache instead.
 */
static int relocate_headers(struct xk_kernel *k)
{
	char mk[XK_PATH_MAX], link[XK_PATH_MAX], *text, *inc, *out;
	const char *key = "include /usr/src/";
	size_t len;
	int err;

	err = xk_snprintf(mk, sizeof(mk), "%s/Makefile", k->headers) ?:
	      xk_read_file(mk, &text, &len);
	if (err)
		return xk_err(err, "headers package has no Makefile at %s", mk);
	inc = strstr(text, key);
	if (inc) {
		out = NULL;
		if (asprintf(&out, "%.*sinclude %s/usr/src/%s",
			     (int)(inc - text), text, k->root,
			     inc + strlen(key)) < 0) {
			free(text);
			return xk_err(-ENOMEM, "%s: out of memory", __func__);
		}
		err = xk_write_file(mk, out, strlen(out), 0644);
		free(out);
	}
	free(text);
	err = err ?: xk_snprintf(link, sizeof(link), "%s/build", k->modules);
	if (!err) {
		unlink(link);
		if (symlink(k->headers, link))
			err = -errno;
	}
	return err ? xk_err(err, "cannot relocate the headers in %s", k->dir)
		   : 0;
}

/*
 * Packages of a merged-/usr release (trixie on) put the modules in
 * /usr/lib/modules; /lib is then a link to usr/lib, as on such a system,
 * so the modules' path (k->modules) is the same for every release.
 */
static int merge_usr(const struct xk_kernel *k)
{
	char lib[XK_PATH_MAX], usr_lib[XK_PATH_MAX];
	int err;

	err = xk_snprintf(lib, sizeof(lib), "%s/lib", k->root) ?:
	      xk_snprintf(usr_lib, sizeof(usr_lib), "%s/usr/lib/modules",
			  k->root);
	if (err || xk_exists(lib) || !xk_exists(usr_lib))
		return err;
	if (symlink("usr/lib", lib))
		return xk_err(-errno, "cannot link %s to usr/lib", lib);
	return 0;
}

static int unpack_debs(struct xk_kernel *k, struct kernel_pkgs *p)
{
	char log[XK_PATH_MAX];
	int err = 0;

	if (stamped(k, "unpack"))
		return 0;
	xk_rm_rf(k->root);
	err = xk_mkdir_p(k->root) ?:
	      xk_snprintf(log, sizeof(log), "%s/unpack.log", k->dir);
	for (int i = -1; i < p->nr_headers && !err; i++) {
		struct deb *d = i < 0 ? &p->image : &p->headers[i];
		const char *argv[] = { "dpkg-deb", "-x", d->path, k->root, NULL };
		struct xk_cmd cmd = { .argv = argv, .log_path = log };

		pr_info("unpacking %s\n", d->name);
		err = xk_run_step("dpkg-deb -x", &cmd);
	}
	err = err ?: merge_usr(k) ?: relocate_headers(k);
	if (!err) {
		const char *argv[] = { "depmod", "-b", k->root, k->release,
				       NULL };
		struct xk_cmd cmd = { .argv = argv, .log_path = log };

		err = xk_run_step("depmod", &cmd);
	}
	return err ?: stamp(k, "unpack");
}

/* The compiler that built the kernel, from CONFIG_CC_VERSION_TEXT. */
static int kernel_cc(const struct xk_kernel *k, char *cc, size_t size)
{
	char *cfg, *p;
	size_t len;
	int err;

	err = xk_read_file(k->config, &cfg, &len);
	if (err)
		return xk_err(err, "no kernel config at %s", k->config);
	p = strstr(cfg, "CONFIG_CC_VERSION_TEXT=\"");
	if (!p) {
		free(cfg);
		return xk_err(-ENOENT, "%s names no compiler", k->config);
	}
	p += strlen("CONFIG_CC_VERSION_TEXT=\"");
	err = xk_snprintf(cc, size, "%.*s", (int)strcspn(p, " \""), p);
	free(cfg);
	if (!err && *k->toolchain) {
		/* the root gets the compiler: x86_64-linux-gnu-gcc-14 is gcc-14's;
		 * a root without gcc (the host tools') gets it too */
		char path[XK_PATH_MAX], pkg[64], log[XK_PATH_MAX];
		const char *dash = strstr(cc, "gcc-");
		/* and gcc: the host tools' compiler (HOSTCC) */
		const char *argv[] = { "apt-get", "install", "-y", "-q",
				       "--no-install-recommends", "-o",
				       "APT::Sandbox::User=root", pkg, "gcc",
				       NULL };

		char host_cc[XK_PATH_MAX];

		err = xk_snprintf(path, sizeof(path), "%s/usr/bin/%s",
				  k->toolchain, cc) ?:
		      xk_snprintf(host_cc, sizeof(host_cc), "%s/usr/bin/gcc",
				  k->toolchain) ?:
		      xk_snprintf(log, sizeof(log), "%s.log", k->toolchain);
		if (!err && (!xk_exists(path) || !xk_exists(host_cc))) {
			if (!dash)
				return xk_err(-ENOENT, "the kernel was built "
						       "with %s, which xkernel "
						       "cannot install", cc);
			err = xk_snprintf(pkg, sizeof(pkg), "%s", dash);
			pr_info("installing %s in the toolchain root\n", pkg);
			err = err ?: run_in_root("apt-get install (the kernel's "
						 "compiler)", k->toolchain, log,
						 argv);
		}
		return err;
	}
	if (!err) {
		char path[XK_PATH_MAX];

		if (xk_which(cc, path, sizeof(path)))
			return xk_err(-ENOENT,
				      "the kernel was built with %s, which is "
				      "not installed (apt-get install gcc-12)",
				      cc);
	}
	return err;
}

static int unpack_source(struct xk_kernel *k, struct kernel_pkgs *p)
{
	char tmp[XK_PATH_MAX], tarball[XK_PATH_MAX], log[XK_PATH_MAX];
	char untarred[XK_PATH_MAX];
	glob_t g;
	int err;

	if (stamped(k, "source"))
		return 0;
	err = xk_snprintf(tmp, sizeof(tmp), "%s/srcpkg", k->dir) ?:
	      xk_snprintf(log, sizeof(log), "%s/source.log", k->dir);
	if (err)
		return err;
	xk_rm_rf(tmp);
	xk_rm_rf(k->source);
	pr_info("unpacking %s (about 1.7 GB)\n", p->source.name);
	{
		const char *argv[] = { "dpkg-deb", "-x", p->source.path, tmp,
				       NULL };
		struct xk_cmd cmd = { .argv = argv, .log_path = log };

		err = xk_run_step("dpkg-deb -x (source)", &cmd);
	}
	if (err)
		return err;
	xk_snprintf(tarball, sizeof(tarball), "%s/usr/src/linux-source-*.tar.*",
		    tmp);
	if (glob(tarball, 0, NULL, &g))
		return xk_err(-ENOENT, "%s holds no source tarball",
			      p->source.name);
	err = xk_strlcpy(tarball, g.gl_pathv[0], sizeof(tarball));
	globfree(&g);
	{
		const char *argv[] = { "tar", "-xf", tarball, "-C", tmp, NULL };
		struct xk_cmd cmd = { .argv = argv, .log_path = log };

		err = err ?: xk_run_step("tar -x (source)", &cmd);
	}
	xk_snprintf(untarred, sizeof(untarred), "%s/linux-source-*/", tmp);
	if (!err && glob(untarred, GLOB_ONLYDIR, NULL, &g))
		err = xk_err(-ENOENT, "the source tarball has no linux-source-*");
	if (!err) {
		if (rename(g.gl_pathv[0], k->source))
			err = xk_err(-errno, "cannot move the source to %s",
				     k->source);
		globfree(&g);
	}
	xk_rm_rf(tmp);
	return err ?: stamp(k, "source");
}

/* One option of a .config: "CONFIG_X=v", or "# CONFIG_X is not set" (n). */
struct config_opt {
	const char *name, *val;
	int nl, vl;
};

static int config_opt_cmp(const void *a, const void *b)
{
	const struct config_opt *x = a, *y = b;
	int c = strncmp(x->name, y->name, x->nl < y->nl ? x->nl : y->nl);

	return c ?: x->nl - y->nl;
}

/* The options of a .config's text, sorted by name (malloc'd, in *opts). */
static int config_opts(const char *text, struct config_opt **opts, int *nr)
{
	int cap = 0;

	*opts = NULL;
	*nr = 0;
	for (const char *l = text; *l; l += strcspn(l, "\n"), l += !!*l) {
		struct config_opt o = { .name = l };
		int len = (int)strcspn(l, "\n");

		if (!strncmp(l, "CONFIG_", 7)) {
			o.nl = (int)strcspn(l, "=\n");
			if (l[o.nl] != '=')
				continue;
			o.val = l + o.nl + 1;
			o.vl = len - o.nl - 1;
		} else if (!strncmp(l, "# CONFIG_", 9) && len > 11 &&
			   !strncmp(l + len - 11, " is not set", 11)) {
			o.name = l + 2;
			o.nl = len - 13;
			o.val = "n";
			o.vl = 1;
		} else {
			continue;
		}
		if (*nr == cap) {
			struct config_opt *more;

			cap = cap ? 2 * cap : 4096;
			more = realloc(*opts, cap * sizeof(**opts));
			if (!more) {
				free(*opts);
				*opts = NULL;
				return xk_err(-ENOMEM, "%s: out of memory", __func__);
			}
			*opts = more;
		}
		(*opts)[(*nr)++] = o;
	}
	qsort(*opts, *nr, sizeof(**opts), config_opt_cmp);
	return 0;
}

/*
 * Whether olddefconfig kept the shipped configuration: each option has the
 * same value in both (absent counts as not set). Options the kernel's
 * Kconfig probes from the toolchain (CONFIG_CC_HAS_*,
 * CONFIG_FTRACE_MCOUNT_USE_CC, ...) change when a probe fails here, and the
 * objects then differ from the shipped code (with the compiler's
 * -mrecord-mcount not taken, objtool turns every __fentry__ call into a
 * NOP). Rust's version probes are left out while the kernel builds no
 * Rust. Returns how many differ, naming the first ones in why.
 */
static int config_kept(const char *shipped_path, const char *made_path,
		       char *why, size_t size)
{
	static const struct config_opt unset = { .val = "n", .vl = 1 };
	char *text[2] = { NULL, NULL };
	struct config_opt *o[2] = { NULL, NULL };
	int n[2] = { 0, 0 }, i = 0, j = 0, nr = 0, err;
	bool rust = false;

	why[0] = '\0';
	err = xk_read_file(shipped_path, &text[0], NULL) ?:
	      xk_read_file(made_path, &text[1], NULL);
	if (err)
		err = xk_err(err, "cannot read %s or %s", shipped_path, made_path);
	err = err ?: config_opts(text[0], &o[0], &n[0]) ?:
	      config_opts(text[1], &o[1], &n[1]);
	for (int k = 0; !err && k < n[0]; k++)
		rust |= o[0][k].nl == 11 && !strncmp(o[0][k].name, "CONFIG_RUST", 11) &&
			o[0][k].vl == 1 && o[0][k].val[0] == 'y';
	while (!err && (i < n[0] || j < n[1])) {
		int c = i == n[0] ? 1 : j == n[1] ? -1 : config_opt_cmp(&o[0][i], &o[1][j]);
		const struct config_opt *a = c <= 0 ? &o[0][i] : &unset;
		const struct config_opt *b = c >= 0 ? &o[1][j] : &unset;
		const struct config_opt *named = c <= 0 ? a : b;

		i += c <= 0;
		j += c >= 0;
		if ((a->vl == b->vl && !strncmp(a->val, b->val, a->vl)) ||
		    (!rust && named->nl > 13 &&
		     !strncmp(named->name, "CONFIG_RUSTC_", 13)))
			continue;
		if (nr++ < 4)
			snprintf(why + strlen(why), size - strlen(why),
				 "%s%.*s (%.*s here, %.*s shipped)", nr > 1 ? ", " : "",
				 named->nl < 60 ? named->nl : 60, named->name,
				 b->vl < 40 ? b->vl : 40, b->val,
				 a->vl < 40 ? a->vl : 40, a->val);
	}
	if (!err && nr > 4)
		snprintf(why + strlen(why), size - strlen(why), " and %d more", nr - 4);
	free(o[0]);
	free(o[1]);
	free(text[0]);
	free(text[1]);
	return err ?: nr;
}

/* .config from the headers, olddefconfig, prepare: single objects build. */
static int prepare_source(struct xk_kernel *k)
{
	char cc[64], ccvar[96], cfg[XK_PATH_MAX], symvers[XK_PATH_MAX];
	char dst[XK_PATH_MAX], log[XK_PATH_MAX], jobs[16];
	int err;

	if (stamped(k, "prepare"))
		return 0;
	err = kernel_cc(k, cc, sizeof(cc)) ?:
	      xk_snprintf(ccvar, sizeof(ccvar), "CC=%s", cc) ?:
	      xk_snprintf(cfg, sizeof(cfg), "%s/.config", k->headers) ?:
	      xk_snprintf(dst, sizeof(dst), "%s/.config", k->source) ?:
	      xk_snprintf(log, sizeof(log), "%s/prepare.log", k->dir) ?:
	      xk_snprintf(jobs, sizeof(jobs), "-j%ld", sysconf(_SC_NPROCESSORS_ONLN));
	err = err ?: xk_copy_file(cfg, dst, 0644);
	if (!err) {
		const char *argv[] = { "make", "-s", "-C", k->source, ccvar,
				       "olddefconfig", NULL };
		struct xk_cmd cmd = { .argv = argv, .log_path = log,
				      .root = k->toolchain };

		pr_info("configuring the source tree (%s)\n", cc);
		err = xk_run_step("make olddefconfig", &cmd);
	}
	if (!err) {
		char why[640];
		int nr = config_kept(cfg, dst, why, sizeof(why));

		if (nr > 0)
			err = xk_err(-ESTALE, "the configuration made here differs "
					      "from the shipped kernel's in %d "
					      "option%s: %s; a probe of the "
					      "toolchain answered otherwise than "
					      "where %s was built (another "
					      "compiler or tool, or a probe that "
					      "failed: xk kernel fetch again "
					      "redoes it; see %s/.config)", nr,
				     nr == 1 ? "" : "s", why, k->release,
				     k->source);
		else if (nr < 0)
			err = nr;
	}
	if (!err) {
		const char *argv[] = { "make", "-s", "-C", k->source, ccvar,
				       jobs, "prepare", NULL };
		struct xk_cmd cmd = { .argv = argv, .log_path = log,
				      .root = k->toolchain };

		pr_info("preparing the source tree for single-object builds\n");
		err = xk_run_step("make prepare", &cmd);
	}
	err = err ?: xk_snprintf(symvers, sizeof(symvers), "%s/Module.symvers",
				 k->headers) ?:
	      xk_snprintf(dst, sizeof(dst), "%s/Module.symvers", k->source) ?:
	      xk_copy_file(symvers, dst, 0644);
	return err ?: stamp(k, "prepare");
}

/*
 * Host mode: the kernel fetched runs on this host, so its own /proc/kallsyms
 * is the truth and no guest is booted. Only when the running kernel's GNU
 * build id is the image's (a kernel built separately under the same release
 * would record another kernel's addresses) and the addresses show (root,
 * kernel.kptr_restrict below 2). Runs at fetch, after vmlinux is extracted
 * into the kernel's directory. 1 with the symbols written to syms, 0 with why not in why
 * ("" when another kernel runs here), -errno.
 */
static int host_symbols(const struct xk_kernel *k, const char *syms,
			char *why, size_t size)
{
	char image_id[2 * XK_BUILD_ID_MAX + 1], host_id[2 * XK_BUILD_ID_MAX + 1];
	unsigned long long text = 0;
	struct utsname u;
	char *buf, *line;
	size_t len;
	int err;

	why[0] = '\0';
	if (uname(&u) || strcmp(u.release, k->release))
		return 0;
	if (xk_kernel_build_id(k, image_id, sizeof(image_id)) ||
	    xk_build_id_running(host_id, sizeof(host_id))) {
		snprintf(why, size, "%s", xk_last_error());
		xk_err_clear();
		return 0;
	}
	if (strcmp(image_id, host_id)) {
		snprintf(why, size, "its build id %s is not the image's %s",
			 host_id, image_id);
		return 0;
	}
	err = xk_read_file("/proc/kallsyms", &buf, &len);
	if (err) {
		snprintf(why, size, "/proc/kallsyms: %s", strerror(-err));
		return 0;
	}
	line = strstr(buf, " _text\n");
	while (line && line > buf && line[-1] != '\n')
		line--;
	if (line)
		sscanf(line, "%llx", &text);
	if (!text) {
		snprintf(why, size, "/proc/kallsyms shows no addresses "
			 "(not root, or kernel.kptr_restrict=2)");
		free(buf);
		return 0;
	}
	err = xk_write_file(syms, buf, len, 0644);
	free(buf);
	return err ?: 1;
}

/*
 * What the identity check compares against: the shipped vmlinux, extracted
 * from vmlinuz, and where its functions are: from /proc/kallsyms of this
 * host when it runs that very build (host_symbols), else of the target
 * booted once in the guest (the image ships no System.map).
 */
static int record_symbols(struct xk_kernel *k)
{
	char vml[XK_PATH_MAX], script[XK_PATH_MAX];
	char syms[XK_PATH_MAX], log[XK_PATH_MAX];
	const char *argv[] = { "cat", "/proc/kallsyms", NULL };
	struct xk_vm_result res = { 0 };
	int err;

	if (stamped(k, "symbols"))
		return 0;
	err = xk_snprintf(vml, sizeof(vml), "%s/vmlinux", k->dir) ?:
	      xk_snprintf(script, sizeof(script), "%s/scripts/extract-vmlinux",
			  k->source) ?:
	      xk_snprintf(syms, sizeof(syms), "%s/kallsyms", k->dir) ?:
	      xk_snprintf(log, sizeof(log), "%s/symbols.log", k->dir);
	if (err)
		return err;
	pr_info("extracting vmlinux and recording the kernel's symbols\n");
	{
		/* the paths as arguments, never inside the script's text */
		const char *sh[] = { "/bin/sh", "-c",
			"sh \"$1\" \"$2\" > \"$3.tmp\" && mv \"$3.tmp\" \"$3\"",
			"extract-vmlinux", script, k->vmlinuz, vml, NULL };
		struct xk_cmd c = { .argv = sh, .log_path = log };

		err = xk_run_step("extract-vmlinux", &c);
	}
	if (!err) {
		char why[512];

		err = host_symbols(k, syms, why, sizeof(why));
		if (err > 0) {
			pr_info("recorded the kernel's symbols from this host's "
				"/proc/kallsyms (it runs this very build)\n");
			return stamp(k, "symbols");
		}
		if (!err && why[0])
			pr_info("this host runs %s, but %s: reading its symbols "
				"in the guest\n", k->release, why);
	}
	if (!err) {
		XK_OPTS(xk_vm_opts, o, .argv = argv, .timeout_s = 300, .out_fd = -1,
			.cwd = "/");

		err = xk_vm_run(k, &o, &res);
		if (!err && (res.exit_status || !res.output ||
			     !strstr(res.output, " _text\n")))
			err = xk_err(-EIO, "reading /proc/kallsyms in the guest failed "
					   "(status %d)", res.exit_status);
		err = err ?: xk_write_file(syms, res.output, res.output_len, 0644);
		xk_vm_result_free(&res);
	}
	return err ?: stamp(k, "symbols");
}

/* kernel.info: written last, so a kernel with one was fetched to its end. */
static int write_info(const struct xk_kernel *k)
{
	char path[XK_PATH_MAX], buf[XK_PATH_MAX + 512];
	int err;

	err = xk_snprintf(buf, sizeof(buf),
			  "release=%s\nversion=%s\ntoolchain=%s\n",
			  k->release, k->version, k->toolchain) ?:
	      xk_snprintf(path, sizeof(path), "%s/kernel.info", k->dir) ?:
	      xk_write_file(path, buf, strlen(buf), 0644);
	return err ? xk_err(err, "cannot write %s/kernel.info", k->dir) : 0;
}

/* The value of "key=value" on its own line. */
static int kv_get(const char *text, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);

	for (const char *line = text; *line;) {
		const char *end = strchrnul(line, '\n');

		if (!strncmp(line, key, klen) && line[klen] == '=')
			return xk_snprintf(out, size, "%.*s",
					   (int)(end - line - klen - 1),
					   line + klen + 1);
		line = *end ? end + 1 : end;
	}
	return -ENOENT;
}

static int read_info(struct xk_kernel *k)
{
	char path[XK_PATH_MAX], *text;
	int err;

	err = xk_snprintf(path, sizeof(path), "%s/kernel.info", k->dir) ?:
	      xk_read_file(path, &text, NULL);
	if (err)
		return -ENOENT;
	err = kv_get(text, "version", k->version, sizeof(k->version));
	/* none before toolchain roots: the host's */
	if (kv_get(text, "toolchain", k->toolchain, sizeof(k->toolchain)))
		k->toolchain[0] = '\0';
	{
		char dir[XK_PATH_MAX];

		if (!err && !kv_get(text, "build_dir", dir, sizeof(dir)))
			err = build_paths(k, dir);
	}
	free(text);
	k->source_prepared = stamped(k, "prepare");
	if (!k->source_prepared)
		k->source[0] = '\0';
	return err ?: (stamped(k, "unpack") ? 0 : -ENOENT);
}

/* ------------------------------------------------------------------ */
/* the kernels of the cache and the target                            */
/* ------------------------------------------------------------------ */

const char *xk_target_why_name(enum xk_target_why why)
{
	static const char *const names[] = {
		[XK_TARGET_OPTION] = "option", [XK_TARGET_ENV] = "env",
		[XK_TARGET_CHOSEN] = "chosen", [XK_TARGET_RUNNING] = "running",
		[XK_TARGET_ONLY] = "only",
	};

	return (unsigned)why < ARRAY_SIZE(names) ? names[why] : NULL;
}

const char *xk_target_why_text(enum xk_target_why why)
{
	static const char *const texts[] = {
		[XK_TARGET_OPTION] = "--release",
		[XK_TARGET_ENV] = "XK_RELEASE",
		[XK_TARGET_CHOSEN] = "chosen with 'xk kernel use'",
		[XK_TARGET_RUNNING] = "the running kernel",
		[XK_TARGET_ONLY] = "the only kernel in the cache",
	};

	return (unsigned)why < ARRAY_SIZE(texts) ? texts[why] : NULL;
}

static int by_release(const void *a, const void *b)
{
	return strverscmp(((const struct xk_cached_kernel *)a)->release,
			  ((const struct xk_cached_kernel *)b)->release);
}

static int count_tables(const char *dir)
{
	char path[XK_PATH_MAX];
	struct dirent *e;
	int n = 0;
	DIR *d;

	if (xk_snprintf(path, sizeof(path), "%s/scopes", dir))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		n += len > 6 && !strcmp(e->d_name + len - 6, ".scope");
	}
	closedir(d);
	return n;
}

/* One directory of kernels/: what the list says of it. */
static int describe(const char *cache, const char *release,
		    struct xk_cached_kernel *c)
{
	struct xk_kernel k;
	int err;

	memset(c, 0, sizeof(*c));
	err = xk_strlcpy(c->release, release, sizeof(c->release)) ?:
	      fill_paths(&k, cache, release);
	if (err)
		return err;
	c->complete = !read_info(&k);
	if (c->complete)
		xk_strlcpy(c->version, k.version, sizeof(c->version));
	c->source_prepared = stamped(&k, "prepare");
	c->nr_tables = count_tables(k.dir);
	return 0;
}

/* Every directory of $cache/kernels that may be a kernel, sorted. */
static int scan_cache(const char *cache, struct xk_kernel_list *l)
{
	char path[XK_PATH_MAX];
	struct dirent *e;
	struct stat sb;
	int err = 0;
	DIR *d;

	err = xk_snprintf(path, sizeof(path), "%s/kernels", cache);
	if (err)
		return xk_err(err, "cache path too long: %s", cache);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : xk_err(-errno, "cannot read %s", path);
	while (!err && (e = readdir(d))) {
		char sub[XK_PATH_MAX];
		void *grown;

		if (!valid_release(e->d_name) || e->d_name[0] == '.' ||
		    xk_snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) ||
		    stat(sub, &sb) || !S_ISDIR(sb.st_mode))
			continue;
		grown = realloc(l->kernels, (l->nr + 1) * sizeof(*l->kernels));
		if (!grown) {
			err = xk_err(-ENOMEM, "%s: out of memory", __func__);
			break;
		}
		l->kernels = grown;
		err = describe(cache, e->d_name, &l->kernels[l->nr]);
		l->nr += !err;
	}
	closedir(d);
	if (l->nr)
		qsort(l->kernels, l->nr, sizeof(*l->kernels), by_release);
	return err;
}

static int index_of(const struct xk_kernel_list *l, const char *release)
{
	for (int i = 0; i < l->nr; i++)
		if (l->kernels[i].complete && !strcmp(l->kernels[i].release, release))
			return i;
	return -1;
}

/* Where a kernel named but not usable is: "not in", or only part of it. */
static const char *absent(const struct xk_kernel_list *l, const char *release)
{
	for (int i = 0; i < l->nr; i++)
		if (!strcmp(l->kernels[i].release, release))
			return "only partly in (its fetch did not finish)";
	return "not in";
}

/* "A, B" of the kernels that can be targets, or "none". */
static void cached_names(const struct xk_kernel_list *l, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < l->nr && n < size; i++)
		if (l->kernels[i].complete)
			n += snprintf(buf + n, size - n, "%s%s", n ? ", " : "",
				      l->kernels[i].release);
	if (!buf[0])
		snprintf(buf, size, "none");
}

/* The choice xk_kernel_choose() recorded, or "". */
static void read_choice(const char *cache, char *out, size_t size)
{
	char path[XK_PATH_MAX], *text = NULL;

	out[0] = '\0';
	if (xk_snprintf(path, sizeof(path), "%s/target", cache) ||
	    xk_read_file(path, &text, NULL))
		return;
	if (xk_strlcpy(out, xk_trim(text), size) || !valid_release(out))
		out[0] = '\0';
	free(text);
}

/*
 * The target among the kernels of l (the rules of provision.h): sets
 * l->target and its why, else l->problem. Returns 0, or -ENOENT with
 * problem recorded as the error too.
 */
static int pick_target(const struct xk_kernel_opts *opts,
		       struct xk_kernel_list *l)
{
	const char *named = OPTS_GET(opts, release, NULL);
	const char *running = OPTS_GET(opts, running, NULL);
	const char *env = getenv("XK_RELEASE");
	enum xk_target_why why = XK_TARGET_OPTION;
	char names[768];
	struct utsname u;
	int nr = 0, only = -1;

	l->target = -1;
	read_choice(l->cache, l->chosen, sizeof(l->chosen));
	cached_names(l, names, sizeof(names));
	if (!named && env && *env) {
		named = env;
		why = XK_TARGET_ENV;
	}
	if (!named && l->chosen[0]) {
		named = l->chosen;
		why = XK_TARGET_CHOSEN;
	}
	if (named) {
		l->target = index_of(l, named);
		if (l->target >= 0)
			goto found;
		snprintf(l->problem, sizeof(l->problem),
			 "kernel %s (%s%s) is %s the cache %s (cached: %s): "
			 "fetch it with 'xk kernel fetch --release %s'%s",
			 named, xk_target_why_text(why),
			 why == XK_TARGET_ENV ? " in the environment" : "",
			 absent(l, named), l->cache, names, named,
			 why == XK_TARGET_CHOSEN ? ", or choose another with "
			 "'xk kernel use RELEASE' ('xk kernel use --clear' "
			 "drops the choice)" : "");
		return xk_err(-ENOENT, "%s", l->problem);
	}
	if (!running && !uname(&u))
		running = u.release;
	if (running) {
		why = XK_TARGET_RUNNING;
		l->target = index_of(l, running);
		if (l->target >= 0)
			goto found;
	}
	for (int i = 0; i < l->nr; i++)
		if (l->kernels[i].complete) {
			nr++;
			only = i;
		}
	if (nr == 1) {
		why = XK_TARGET_ONLY;
		l->target = only;
		goto found;
	}
	if (!nr)
		snprintf(l->problem, sizeof(l->problem),
			 "no kernel in the cache %s: run 'xk kernel fetch' first",
			 l->cache);
	else
		snprintf(l->problem, sizeof(l->problem),
			 "%d kernels in the cache %s and none is the target: %s "
			 "(the running kernel %s is not among them); choose one "
			 "with --release RELEASE, XK_RELEASE=RELEASE or "
			 "'xk kernel use RELEASE'",
			 nr, l->cache, names, running ? running : "(unknown)");
	return xk_err(-ENOENT, "%s", l->problem);
found:
	l->kernels[l->target].why = why;
	return 0;
}

void xk_kernel_list_free(struct xk_kernel_list *l)
{
	if (!l)
		return;
	free(l->kernels);
	l->kernels = NULL;
	l->nr = 0;
}

static int list_impl(const struct xk_kernel_opts *opts, struct xk_kernel_list *l)
{
	const char *cache = xk_cache_dir(OPTS_GET(opts, cache_dir, NULL));
	int err;

	memset(l, 0, sizeof(*l));
	l->target = -1;
	if (!OPTS_VALID(opts, xk_kernel_opts))
		return xk_err(-EINVAL, "invalid xk_kernel_opts");
	err = xk_strlcpy(l->cache, cache, sizeof(l->cache));
	err = err ?: scan_cache(cache, l);
	if (err)
		xk_kernel_list_free(l);
	return err;
}

int xk_kernel_list(const struct xk_kernel_opts *opts, struct xk_kernel_list *l)
{
	int err;

	xk_err_clear();
	err = list_impl(opts, l);
	if (!err) {
		pick_target(opts, l);	/* no target is not a failure here */
		xk_err_clear();
	}
	return xk_api_return(__func__, err);
}

static int xk_kernel_find_impl(const struct xk_kernel_opts *opts, struct xk_kernel *k)
{
	struct xk_kernel_list l;
	int err;

	memset(k, 0, sizeof(*k));
	err = list_impl(opts, &l);
	err = err ?: pick_target(opts, &l);
	err = err ?: fill_paths(k, l.cache, l.kernels[l.target].release);
	if (!err && read_info(k))
		err = xk_err(-ENOENT, "kernel %s is no longer complete in the "
				      "cache %s: run 'xk kernel fetch --release %s'",
			     k->release, l.cache, k->release);
	if (!err)
		k->why = l.kernels[l.target].why;
	xk_kernel_list_free(&l);
	return err;
}

int xk_kernel_find(const struct xk_kernel_opts *opts, struct xk_kernel *k)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_kernel_find_impl(opts, k));
}

static int choose_impl(const struct xk_kernel_opts *opts, const char *release)
{
	const char *cache = xk_cache_dir(OPTS_GET(opts, cache_dir, NULL));
	char path[XK_PATH_MAX], names[768], buf[160];
	struct xk_kernel_list l;
	int err;

	err = xk_snprintf(path, sizeof(path), "%s/target", cache);
	if (err)
		return xk_err(err, "cache path too long: %s", cache);
	if (!release) {
		if (unlink(path) && errno != ENOENT)
			return xk_err(-errno, "cannot remove %s", path);
		return 0;
	}
	if (!valid_release(release))
		return xk_err(-EINVAL, "'%s' is not a kernel release", release);
	err = list_impl(opts, &l);
	if (err)
		return err;
	cached_names(&l, names, sizeof(names));
	if (index_of(&l, release) < 0)
		err = xk_err(-ENOENT, "kernel %s is %s the cache %s (cached: "
				      "%s): fetch it first with 'xk kernel fetch "
				      "--release %s'",
			     release, absent(&l, release), cache, names, release);
	xk_kernel_list_free(&l);
	err = err ?: xk_snprintf(buf, sizeof(buf), "%s\n", release);
	if (!err) {
		err = xk_write_file(path, buf, strlen(buf), 0644);
		if (err)
			return xk_err(err, "cannot write %s", path);
	}
	return err;
}

int xk_kernel_choose(const struct xk_kernel_opts *opts, const char *release)
{
	xk_err_clear();
	if (!OPTS_VALID(opts, xk_kernel_opts))
		return xk_api_return(__func__, xk_err(-EINVAL, "invalid xk_kernel_opts"));
	return xk_api_return(__func__, choose_impl(opts, release));
}

/* Whether the kernel fetched is the target now (a fetch chooses nothing). */
static enum xk_target_why fetched_why(const struct xk_kernel_opts *opts,
				      const char *cache, const char *release)
{
	XK_OPTS(xk_kernel_opts, o, .cache_dir = cache,
		.running = OPTS_GET(opts, running, NULL));
	enum xk_target_why why = XK_TARGET_NONE;
	struct xk_kernel_list l;

	if (list_impl(&o, &l))
		return why;
	if (!pick_target(&o, &l) && !strcmp(l.kernels[l.target].release, release))
		why = l.kernels[l.target].why;
	xk_kernel_list_free(&l);
	xk_err_clear();
	return why;
}

/*
 * The pipeline of a fetch; every step is skipped when its stamp is there.
 */
static int xk_kernel_fetch_impl(const struct xk_kernel_opts *opts, struct xk_kernel *k)
{
	const char *cache = xk_cache_dir(OPTS_GET(opts, cache_dir, NULL));
	const char *release = OPTS_GET(opts, release, NULL);
	bool with_source = OPTS_GET(opts, with_source, false);
	struct kernel_pkgs p;
	char resolved[128], toolchain[XK_PATH_MAX];
	struct deb *debs[8];
	int n = 0, err;

	if (!OPTS_VALID(opts, xk_kernel_opts))
		return xk_err(-EINVAL, "invalid xk_kernel_opts");
	if (OPTS_GET(opts, offline, false))
		return xk_kernel_find(opts, k);
	memset(k, 0, sizeof(*k));
	if (!release && getenv("XK_RELEASE") && *getenv("XK_RELEASE"))
		release = getenv("XK_RELEASE");
	if (!release) {
		err = resolve_default_release(resolved, sizeof(resolved));
		if (err)
			return err;
		release = resolved;
	}
	err = fill_paths(k, cache, release);
	if (!err && is_self_built(k))
		return xk_err(-EEXIST, "%s in the cache is a kernel built from "
				       "source (xk kernel use --build-dir), not "
				       "Debian's: nothing to fetch", release);
	err = err ?: kernel_toolchain(cache, release, toolchain, sizeof(toolchain)) ?:
	      resolve_packages(release, &p, toolchain) ?:
	      fill_paths(k, cache, release) ?:
	      xk_strlcpy(k->toolchain, toolchain, sizeof(k->toolchain)) ?:
	      xk_strlcpy(k->version, p.image.version, sizeof(k->version)) ?:
	      xk_mkdir_p(k->dir);
	if (err)
		return err;

	debs[n++] = &p.image;
	for (int i = 0; i < p.nr_headers; i++)
		debs[n++] = &p.headers[i];
	if (with_source)
		debs[n++] = &p.source;

	err = download_debs(cache, debs, n, k->toolchain) ?:
	      unpack_debs(k, &p);
	/* a toolchain root made again gets its compiler again */
	if (!err && *k->toolchain) {
		char cc[64];

		err = kernel_cc(k, cc, sizeof(cc));
	}
	if (!err && with_source)
		err = unpack_source(k, &p) ?: prepare_source(k);
	if (!err && with_source)
		err = record_symbols(k);
	err = err ?: write_info(k);
	if (err)
		return err;
	k->source_prepared = stamped(k, "prepare");
	if (!k->source_prepared)
		k->source[0] = '\0';
	k->why = fetched_why(opts, cache, k->release);
	return 0;
}

/*
 * A self-built kernel into the cache: the tree checked, its release read,
 * its modules installed into the cache (make modules_install, with
 * depmod), its symbols recorded, kernel.info written last with build_dir,
 * then chosen.
 */
static int add_build_impl(const struct xk_kernel_opts *opts, const char *dir,
			  struct xk_kernel *k)
{
	static const char *const needed[] = { ".config", "vmlinux",
		"arch/x86/boot/bzImage", "Module.symvers",
		"scripts/extract-vmlinux", "include/config/kernel.release" };
	const char *cache = xk_cache_dir(OPTS_GET(opts, cache_dir, NULL));
	char tree[XK_PATH_MAX], path[XK_PATH_MAX], release[128], info[XK_PATH_MAX];
	char *text = NULL;
	int err;

	if (!OPTS_VALID(opts, xk_kernel_opts))
		return xk_err(-EINVAL, "invalid xk_kernel_opts");
	memset(k, 0, sizeof(*k));
	if (!realpath(dir, tree))
		return xk_err(-errno, "%s: %s", dir, strerror(errno));
	for (size_t i = 0; i < ARRAY_SIZE(needed); i++) {
		err = xk_snprintf(path, sizeof(path), "%s/%s", tree, needed[i]);
		if (err)
			return xk_err(err, "path too long: %s", tree);
		if (!xk_exists(path))
			return xk_err(-ENOENT, "%s is not a built kernel tree: it "
					       "has no %s (build it with make, "
					       "modules included)", tree,
				      needed[i]);
	}
	err = xk_snprintf(path, sizeof(path), "%s/include/config/kernel.release",
			  tree) ?:
	      xk_read_file(path, &text, NULL);
	if (err)
		return xk_err(err, "cannot read %s", path);
	xk_snprintf(release, sizeof(release), "%.*s",
		    (int)strcspn(text, "\n"), text);
	free(text);
	text = NULL;
	if (!valid_release(release))
		return xk_err(-EINVAL, "%s names no valid release ('%s')", path,
			      release);
	err = fill_paths(k, cache, release) ?:
	      xk_snprintf(info, sizeof(info), "%s/kernel.info", k->dir);
	if (err)
		return err;
	if (!xk_read_file(info, &text, NULL)) {
		bool debian = !strstr(text, "\nbuild_dir=");

		free(text);
		if (debian)
			return xk_err(-EEXIST, "the cache holds Debian's kernel "
					       "%s; a kernel built under the "
					       "same release would be taken for "
					       "it: build yours with another "
					       "LOCALVERSION", release);
	} else if (xk_exists(k->dir) && !is_self_built(k)) {
		return xk_err(-EEXIST, "%s holds an unfinished fetch of Debian's "
				       "kernel %s: remove it, or build yours "
				       "with another LOCALVERSION", k->dir,
			      release);
	}
	/* a kernel added again starts afresh: no module, symbol, object or
	 * table of an earlier build of the tree stays */
	xk_rm_rf(k->dir);
	err = xk_mkdir_p(k->dir) ?: stamp(k, "self-built") ?:
	      build_paths(k, tree) ?:
	      xk_strlcpy(k->version, "self-built", sizeof(k->version)) ?:
	      xk_mkdir_p(k->root);
	if (err)
		return xk_err(err, "cannot create %s", k->root);
	{
		char mod_path[XK_PATH_MAX + 32], log[XK_PATH_MAX];
		const char *argv[] = { "make", "-s", "-C", tree, mod_path,
				       "modules_install", NULL };
		struct xk_cmd cmd = { .argv = argv };

		err = xk_snprintf(mod_path, sizeof(mod_path),
				  "INSTALL_MOD_PATH=%s", k->root) ?:
		      xk_snprintf(log, sizeof(log), "%s/unpack.log", k->dir);
		cmd.log_path = log;
		pr_info("installing the modules of %s into the cache\n", tree);
		err = err ?: xk_run_step("make modules_install", &cmd);
	}
	err = err ?: stamp(k, "unpack") ?: stamp(k, "prepare");
	if (err)
		return err;
	k->source_prepared = true;
	err = record_symbols(k);
	if (!err) {
		char buf[XK_PATH_MAX + 512];

		err = xk_snprintf(buf, sizeof(buf),
				  "release=%s\nversion=%s\ntoolchain=\n"
				  "build_dir=%s\n", k->release, k->version,
				  tree) ?:
		      xk_write_file(info, buf, strlen(buf), 0644);
	}
	err = err ?: choose_impl(opts, k->release);
	if (!err)
		k->why = XK_TARGET_CHOSEN;
	return err;
}

int xk_kernel_add_build(const struct xk_kernel_opts *opts, const char *dir,
			struct xk_kernel *k)
{
	xk_err_clear();
	return xk_api_return(__func__, add_build_impl(opts, dir, k));
}

int xk_kernel_fetch(const struct xk_kernel_opts *opts, struct xk_kernel *k)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_kernel_fetch_impl(opts, k));
}
