// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of xk doctor's checks (lib/provision/host.c) against trees of
 * /proc and /sys files written here, as the kernel publishes them: each
 * state a check can find, and the build id compared with a cached image
 * (an ELF file of this machine stands for its vmlinux). The checks against
 * a real kernel run in the guest (tests/guest/test_doctor.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "unit.h"
#include "xk/provision.h"

#define R61 "6.1.0-57-cloud-amd64"
#define R612 "6.12.118+deb12-cloud-amd64"
#define INFO "release=" R612 "\nversion=6.12.118-1~deb12u1\n"

static char root[64], cache[64];

static int put(const char *file, const char *text)
{
	char path[256], *slash;

	snprintf(path, sizeof(path), "%s%s", root, file);
	slash = strrchr(path, '/');
	*slash = '\0';
	if (xk_mkdir_p(path))
		return -1;
	*slash = '/';
	return xk_write_file(path, text, strlen(text), 0644);
}

/* /sys/kernel/notes: a GNU build id note (after another note, as the
 * kernel's own Xen and Linux notes come first) of bytes id[0..n) */
static int put_notes(const uint8_t *id, uint32_t n)
{
	uint8_t buf[256];
	uint32_t hdr[3];
	size_t at = 0;
	char path[256];

	hdr[0] = 6, hdr[1] = 4, hdr[2] = 0x100;		/* "Linux", 4 bytes */
	memcpy(buf + at, hdr, 12), at += 12;
	memcpy(buf + at, "Linux\0\0\0", 8), at += 8;
	memset(buf + at, 0xab, 4), at += 4;
	hdr[0] = 4, hdr[1] = n, hdr[2] = 3;		/* "GNU", NT_GNU_BUILD_ID */
	memcpy(buf + at, hdr, 12), at += 12;
	memcpy(buf + at, "GNU\0", 4), at += 4;
	memcpy(buf + at, id, n), at += n;
	snprintf(path, sizeof(path), "%s/sys/kernel", root);
	if (xk_mkdir_p(path))
		return -1;
	snprintf(path, sizeof(path), "%s/sys/kernel/notes", root);
	return xk_write_file(path, buf, at, 0444);
}

static int new_trees(void)
{
	snprintf(root, sizeof(root), "/tmp/xk-test-host-XXXXXX");
	snprintf(cache, sizeof(cache), "/tmp/xk-test-hostc-XXXXXX");
	unsetenv("XK_RELEASE");
	return mkdtemp(root) && mkdtemp(cache) ? 0 : -1;
}

static void drop_trees(void)
{
	xk_rm_rf(root);
	xk_rm_rf(cache);
}

static const struct xk_host_check *find(const struct xk_host_report *r,
					const char *name)
{
	for (int i = 0; i < r->nr; i++)
		if (!strcmp(r->check[i].name, name))
			return &r->check[i];
	return NULL;
}

#define STATE(r, name, s, text)                                           \
	do {                                                              \
		const struct xk_host_check *c_ = find(r, name);           \
		CHECK(c_);                                                \
		if (c_->state != (s) || !strstr(c_->detail, text))        \
			printf("#   %s: %s %s\n", name,                   \
			       xk_host_state_name(c_->state), c_->detail); \
		CHECK(c_->state == (s) && strstr(c_->detail, text));      \
	} while (0)

/* A locked-down 6.1 host: every check that can find a stop finds it. */
static int host_that_refuses(void)
{
	XK_OPTS(xk_host_opts, o, .root = root, .cache_dir = cache,
		.euid_set = true, .euid = 1000);
	static const uint8_t id[4] = { 0x01, 0x02, 0xfe, 0xff };
	struct xk_host_report r;
	char sec[128];

	CHECK(!new_trees());
	CHECK(!put("/proc/sys/kernel/osrelease", R61 "\n"));
	CHECK(!put("/proc/kallsyms", "0000000000000000 T _text\n"
				    "0000000000000000 T register_kprobe\n"));
	CHECK(!put("/proc/sys/kernel/kptr_restrict", "2\n"));
	CHECK(!put("/proc/modules", ""));
	CHECK(!put("/proc/sys/kernel/modules_disabled", "1\n"));
	CHECK(!put("/sys/kernel/security/lockdown", "none [integrity] confidentiality\n"));
	CHECK(!put("/sys/kernel/debug/kprobes/enabled", "0\n"));
	CHECK(!put_notes(id, sizeof(id)));
	CHECK(!xk_host_check(&o, &r));
	CHECK(!strcmp(r.release, R61) && !strcmp(r.build_id, "0102feff"));
	STATE(&r, "root", XK_HOST_BLOCKED, "euid 1000");
	STATE(&r, "cache", XK_HOST_LIMITED, "xk kernel fetch --release " R61);
	STATE(&r, "build", XK_HOST_OK, "0102feff");
	STATE(&r, "modules", XK_HOST_BLOCKED, "modules_disabled=1");
	STATE(&r, "lockdown", XK_HOST_BLOCKED, "integrity:");
	STATE(&r, "kprobes", XK_HOST_BLOCKED, "disarmed");
	STATE(&r, "kallsyms", XK_HOST_LIMITED, "hidden (kernel.kptr_restrict=2)");
	STATE(&r, "policies", XK_HOST_LIMITED, "no kernel BTF");
	STATE(&r, "xkernel", XK_HOST_OK, "not loaded");
	CHECK(r.blocked == 4);

	/* securityfs: without it lockdown is unknown; with it and no
	 * lockdown file, the LSM is not there */
	snprintf(sec, sizeof(sec), "%s/sys/kernel/security", root);
	CHECK(!xk_rm_rf(sec));
	CHECK(!xk_host_check(&o, &r));
	STATE(&r, "lockdown", XK_HOST_LIMITED, "securityfs is not mounted");
	CHECK(!put("/sys/kernel/security/lsm", "capability,yama\n"));
	CHECK(!xk_host_check(&o, &r));
	STATE(&r, "lockdown", XK_HOST_OK, "no lockdown LSM");

	/* BTF, but 6.1; signatures enforced; no kprobes at all */
	CHECK(!put("/sys/kernel/btf/vmlinux", "btf"));
	CHECK(!put("/proc/sys/kernel/modules_disabled", "0\n"));
	CHECK(!put("/sys/module/module/parameters/sig_enforce", "Y\n"));
	CHECK(!put("/proc/kallsyms", "ffffffff81000000 T _text\n"));
	CHECK(!xk_host_check(&o, &r));
	STATE(&r, "policies", XK_HOST_LIMITED, "Linux 6.1: eBPF policies need 6.10");
	STATE(&r, "modules", XK_HOST_LIMITED, "signatures enforced");
	STATE(&r, "kprobes", XK_HOST_BLOCKED, "CONFIG_KPROBES");
	STATE(&r, "kallsyms", XK_HOST_OK, "addresses visible");
	drop_trees();
	return 0;
}

/* A 6.12 host whose cached image is this build, then another build. */
static int host_that_allows(void)
{
	XK_OPTS(xk_host_opts, o, .root = root, .cache_dir = cache,
		.euid_set = true, .euid = 0);
	char dir[256], path[300], exe[256], hex[2 * XK_BUILD_ID_MAX + 1];
	uint8_t id[XK_BUILD_ID_MAX];
	struct xk_host_report r;
	ssize_t n;

	CHECK(!new_trees());
	CHECK(!put("/proc/sys/kernel/osrelease", R612 "\n"));
	CHECK(!put("/proc/kallsyms", "ffffffff81000000 T _text\n"
				    "ffffffff81234560 T register_kprobe\n"));
	CHECK(!put("/proc/modules", "xkernel 16384 0 - Live 0x0\n"));
	CHECK(!put("/proc/sys/kernel/modules_disabled", "0\n"));
	CHECK(!put("/sys/module/module/parameters/sig_enforce", "N\n"));
	CHECK(!put("/sys/kernel/security/lockdown", "[none] integrity confidentiality\n"));
	CHECK(!put("/proc/sys/debug/kprobes-optimization", "1\n"));
	CHECK(!put("/sys/kernel/btf/vmlinux", "btf"));
	CHECK(!put("/sys/module/xkernel/version", "0.9\n"));

	/* the cached image: this test's own executable stands for vmlinux */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	exe[n] = '\0';
	CHECK(!xk_build_id_file(exe, hex, sizeof(hex)));
	CHECK(strlen(hex) == 40);
	for (size_t i = 0; i < strlen(hex) / 2; i++)
		id[i] = (uint8_t)strtoul((char[]){ hex[2 * i], hex[2 * i + 1], 0 },
					 NULL, 16);
	CHECK(!put_notes(id, strlen(hex) / 2));
	snprintf(dir, sizeof(dir), "%s/kernels/%s", cache, R612);
	snprintf(path, sizeof(path), "%s/kernel.info", dir);
	CHECK(!xk_mkdir_p(dir));
	CHECK(!xk_write_file(path, INFO, strlen(INFO), 0644));
	snprintf(path, sizeof(path), "%s/.stamp-unpack", dir);
	CHECK(!xk_write_file(path, "ok\n", 3, 0644));
	snprintf(path, sizeof(path), "%s/vmlinux", dir);
	CHECK(!xk_copy_file(exe, path, 0644));

	CHECK(!xk_host_check(&o, &r));
	STATE(&r, "root", XK_HOST_OK, "root");
	STATE(&r, "cache", XK_HOST_OK, "is in the cache");
	STATE(&r, "build", XK_HOST_OK, hex);
	STATE(&r, "build", XK_HOST_OK, "the cached image's build");
	STATE(&r, "modules", XK_HOST_OK, "not enforced");
	STATE(&r, "lockdown", XK_HOST_OK, "none");
	STATE(&r, "kprobes", XK_HOST_OK, "jump-optimized");
	STATE(&r, "policies", XK_HOST_OK, "BTF");
	STATE(&r, "xkernel", XK_HOST_OK, "loaded (0.9)");
	CHECK(r.blocked == 0);

	/* another build under the same release: its tables do not apply */
	id[0] ^= 0xff;
	CHECK(!put_notes(id, strlen(hex) / 2));
	CHECK(!xk_host_check(&o, &r));
	STATE(&r, "build", XK_HOST_BLOCKED, "differs from the cached image's");
	CHECK(r.blocked == 1);

	/* a truncated note is no build id, never a read past the file */
	CHECK(!put_notes(id, 0));
	CHECK(!xk_host_check(&o, &r));
	CHECK(!r.build_id[0]);
	STATE(&r, "build", XK_HOST_LIMITED, "no build id");
	drop_trees();
	return 0;
}

/* No release to read: an error naming the file, no report. */
static int release_is_required(void)
{
	XK_OPTS(xk_host_opts, o, .root = root, .cache_dir = cache);
	struct xk_host_report r;

	CHECK(!new_trees());
	CHECK(xk_host_check(&o, &r) == -ENOENT);
	CHECK(strstr(xk_last_error(), "osrelease"));
	drop_trees();
	return 0;
}

UNIT_MAIN("host", T(host_that_refuses), T(host_that_allows),
	  T(release_is_required))
