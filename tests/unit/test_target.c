// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the target kernel (lib/provision/kernel.c): which kernel of
 * the cache the commands act on, in a temporary cache of fake kernels (a
 * directory with kernel.info and the unpack stamp, as a fetch leaves one).
 * A fetch runs for real against a stand-in apt-cache on PATH and .deb files
 * already in the cache, so nothing is downloaded.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "unit.h"
#include "xk/provision.h"

#define A "6.12.117+deb12-cloud-amd64"
#define B "6.12.118+deb12-cloud-amd64"
#define C "6.12.119+deb12-cloud-amd64"
#define D "6.12.120+deb12-cloud-amd64"
#define NOT_CACHED "6.1.0-99-amd64"
#define RUNNING_ELSEWHERE "6.18.0-test-host"

static char cache[64];

/* A fresh cache, no XK_RELEASE. */
static int new_cache(void)
{
	snprintf(cache, sizeof(cache), "/tmp/xk-test-target-XXXXXX");
	unsetenv("XK_RELEASE");
	return mkdtemp(cache) ? 0 : -errno;
}

static void drop_cache(void)
{
	xk_rm_rf(cache);
	unsetenv("XK_RELEASE");
}

/* A kernel as a finished fetch leaves it in the cache. */
static int add_kernel(const char *release, const char *version)
{
	char dir[256], path[300], info[256];

	snprintf(dir, sizeof(dir), "%s/kernels/%s", cache, release);
	snprintf(info, sizeof(info), "release=%s\nversion=%s\n", release, version);
	snprintf(path, sizeof(path), "%s/kernel.info", dir);
	if (xk_mkdir_p(dir) || xk_write_file(path, info, strlen(info), 0644))
		return -1;
	snprintf(path, sizeof(path), "%s/.stamp-unpack", dir);
	return xk_write_file(path, "ok\n", 3, 0644);
}

static int remove_kernel(const char *release)
{
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/kernels/%s", cache, release);
	return xk_rm_rf(dir);
}

/* The target as xk_kernel_find sees it with the given --release and
 * running kernel: its release in out, its rule in *why; or -errno. */
static int target(const char *release, const char *running, char *out,
		  enum xk_target_why *why)
{
	XK_OPTS(xk_kernel_opts, o, .cache_dir = cache, .release = release,
		.running = running, .offline = true);
	struct xk_kernel k;
	int err = xk_kernel_find(&o, &k);

	out[0] = '\0';
	*why = XK_TARGET_NONE;
	if (err)
		return err;
	snprintf(out, 128, "%s", k.release);
	*why = k.why;
	return 0;
}

static int choose(const char *release)
{
	XK_OPTS(xk_kernel_opts, o, .cache_dir = cache);

	return xk_kernel_choose(&o, release);
}

/*
 * xk_kernel_fetch of release without a download: apt-cache answers from a
 * script on PATH (version 1.0-1, no dependencies), the image and headers
 * packages are in the cache's debs/, and the kernel's directory holds the
 * unpack stamp, so the fetch resolves, finds the packages, skips the
 * unpack and records the kernel as a fetch does.
 */
static int fake_fetch(const char *release, const char *running,
		      struct xk_kernel *k)
{
	static const char apt_cache[] =
		"#!/bin/sh\n"
		"case $1 in\n"
		"show) echo \"Package: $3\"; echo 'Version: 1.0-1' ;;\n"
		"depends) echo \"$5\" ;;\n"
		"policy) printf '%s:\\n  Candidate: 1.0-1\\n' \"$2\" ;;\n"
		"*) exit 1 ;;\n"
		"esac\n";
	XK_OPTS(xk_kernel_opts, o, .cache_dir = cache, .release = release,
		.running = running);
	char bin[128], path[512], *old_path = getenv("PATH");
	char *saved = strdup(old_path ? old_path : "/usr/bin:/bin");
	int err;

	snprintf(bin, sizeof(bin), "%s/bin", cache);
	snprintf(path, sizeof(path), "%s/apt-cache", bin);
	err = xk_mkdir_p(bin) ?: xk_write_file(path, apt_cache, strlen(apt_cache), 0755);
	snprintf(path, sizeof(path), "%s/debs", cache);
	err = err ?: xk_mkdir_p(path);
	snprintf(path, sizeof(path), "%s/debs/linux-image-%s-unsigned_1.0-1_amd64.deb",
		 cache, release);
	err = err ?: xk_write_file(path, "", 0, 0644);
	snprintf(path, sizeof(path), "%s/debs/linux-headers-%s_1.0-1_amd64.deb",
		 cache, release);
	err = err ?: xk_write_file(path, "", 0, 0644);
	snprintf(path, sizeof(path), "%s/kernels/%s", cache, release);
	err = err ?: xk_mkdir_p(path);
	snprintf(path, sizeof(path), "%s/kernels/%s/.stamp-unpack", cache, release);
	err = err ?: xk_write_file(path, "ok\n", 3, 0644);
	if (!err && saved) {
		snprintf(path, sizeof(path), "%s:%s", bin, saved);
		setenv("PATH", path, 1);
		err = xk_kernel_fetch(&o, k);
		if (err)
			printf("#   fetch: %s\n", xk_last_error());
		setenv("PATH", saved, 1);
	}
	free(saved);
	return saved ? err : -ENOMEM;
}

static bool exists(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", cache, rel);
	return !access(path, F_OK);
}

static int only_kernel_is_the_target(void)
{
	enum xk_target_why why;
	char r[128];

	CHECK(!new_cache());
	CHECK(target(NULL, RUNNING_ELSEWHERE, r, &why) == -ENOENT);
	CHECK(strstr(xk_last_error(), "no kernel in the cache"));
	CHECK(!add_kernel(A, "6.12.117-1"));
	CHECK(!target(NULL, RUNNING_ELSEWHERE, r, &why));
	CHECK(!strcmp(r, A) && why == XK_TARGET_ONLY);
	drop_cache();
	return 0;
}

/* A second kernel fetched: the target stays what it was, never the new one. */
static int fetch_keeps_the_target(void)
{
	enum xk_target_why why;
	struct xk_kernel k;
	char r[128];

	/* chosen with xk kernel use */
	CHECK(!new_cache());
	CHECK(!add_kernel(A, "6.12.117-1"));
	CHECK(!choose(A));
	CHECK(!fake_fetch(B, RUNNING_ELSEWHERE, &k));
	CHECK(!strcmp(k.release, B) && !strcmp(k.version, "1.0-1"));
	CHECK(k.why == XK_TARGET_NONE);
	CHECK(!target(NULL, RUNNING_ELSEWHERE, r, &why));
	CHECK(!strcmp(r, A) && why == XK_TARGET_CHOSEN);
	CHECK(!exists("kernels/default"));
	/* B is in the cache now: --release reaches it */
	CHECK(!target(B, RUNNING_ELSEWHERE, r, &why));
	CHECK(!strcmp(r, B) && why == XK_TARGET_OPTION);
	drop_cache();

	/* the running kernel */
	CHECK(!new_cache());
	CHECK(!add_kernel(A, "6.12.117-1"));
	CHECK(!fake_fetch(B, A, &k));
	CHECK(k.why == XK_TARGET_NONE);
	CHECK(!target(NULL, A, r, &why));
	CHECK(!strcmp(r, A) && why == XK_TARGET_RUNNING);
	drop_cache();

	/* XK_RELEASE */
	CHECK(!new_cache());
	CHECK(!add_kernel(A, "6.12.117-1"));
	setenv("XK_RELEASE", A, 1);
	CHECK(!fake_fetch(B, RUNNING_ELSEWHERE, &k));
	CHECK(!target(NULL, RUNNING_ELSEWHERE, r, &why));
	CHECK(!strcmp(r, A) && why == XK_TARGET_ENV);
	drop_cache();

	/* the only kernel: after the fetch there is none, not the new one */
	CHECK(!new_cache());
	CHECK(!add_kernel(A, "6.12.117-1"));
	CHECK(!target(NULL, RUNNING_ELSEWHERE, r, &why));
	CHECK(!strcmp(r, A) && why == XK_TARGET_ONLY);
	CHECK(!fake_fetch(B, RUNNING_ELSEWHERE, &k));
	CHECK(k.why == XK_TARGET_NONE);
	CHECK(target(NULL, RUNNING_ELSEWHERE, r, &why) == -ENOENT);
	CHECK(strstr(xk_last_error(), A) && strstr(xk_last_error(), B));
	CHECK(!exists("kernels/default") && !exists("target"));
	drop_cache();

	/* into an empty cache: the fetched kernel is the only one */
	CHECK(!new_cache());
	CHECK(!fake_fetch(B, RUNNING_ELSEWHERE, &k));
	CHECK(k.why == XK_TARGET_ONLY);
	drop_cache();
	return 0;
}

/* --release > XK_RELEASE > xk kernel use > running > the only one */
static int precedence(void)
{
	enum xk_target_why why;
	char r[128];

	CHECK(!new_cache());
	CHECK(!add_kernel(A, "1") && !add_kernel(B, "2") && !add_kernel(C, "3") &&
	      !add_kernel(D, "4"));
	CHECK(!choose(C));
	setenv("XK_RELEASE", B, 1);
	CHECK(!target(A, D, r, &why));
	CHECK(!strcmp(r, A) && why == XK_TARGET_OPTION);
	CHECK(!target(NULL, D, r, &why));
	CHECK(!strcmp(r, B) && why == XK_TARGET_ENV);
	setenv("XK_RELEASE", "", 1);	/* empty: unset */
	CHECK(!target(NULL, D, r, &why));
	CHECK(!strcmp(r, C) && why == XK_TARGET_CHOSEN);
	unsetenv("XK_RELEASE");
	CHECK(!target(NULL, D, r, &why));
	CHECK(!strcmp(r, C) && why == XK_TARGET_CHOSEN);
	CHECK(!choose(NULL));
	CHECK(!exists("target"));
	CHECK(!target(NULL, D, r, &why));
	CHECK(!strcmp(r, D) && why == XK_TARGET_RUNNING);
	CHECK(target(NULL, RUNNING_ELSEWHERE, r, &why) == -ENOENT);
	CHECK(!remove_kernel(B) && !remove_kernel(C) && !remove_kernel(D));
	CHECK(!target(NULL, RUNNING_ELSEWHERE, r, &why));
	CHECK(!strcmp(r, A) && why == XK_TARGET_ONLY);
	drop_cache();
	return 0;
}

/* No target, or one not in the cache: the error names the kernels there. */
static int errors_name_the_cached_kernels(void)
{
	enum xk_target_why why;
	char r[128];

	CHECK(!new_cache());
	CHECK(!add_kernel(A, "1") && !add_kernel(B, "2"));
	CHECK(target(NULL, RUNNING_ELSEWHERE, r, &why) == -ENOENT);
	CHECK(strstr(xk_last_error(), "2 kernels in the cache"));
	CHECK(strstr(xk_last_error(), A ", " B));
	CHECK(strstr(xk_last_error(), RUNNING_ELSEWHERE));
	CHECK(strstr(xk_last_error(), "--release") &&
	      strstr(xk_last_error(), "XK_RELEASE") &&
	      strstr(xk_last_error(), "xk kernel use"));

	CHECK(target(NOT_CACHED, RUNNING_ELSEWHERE, r, &why) == -ENOENT);
	CHECK(strstr(xk_last_error(), "kernel " NOT_CACHED " (--release) is not in"));
	CHECK(strstr(xk_last_error(), "(cached: " A ", " B ")"));

	setenv("XK_RELEASE", NOT_CACHED, 1);
	CHECK(target(NULL, A, r, &why) == -ENOENT);	/* not the running A */
	CHECK(strstr(xk_last_error(), NOT_CACHED " (XK_RELEASE"));
	CHECK(strstr(xk_last_error(), "(cached: " A ", " B ")"));
	unsetenv("XK_RELEASE");

	CHECK(choose(NOT_CACHED) == -ENOENT);
	CHECK(strstr(xk_last_error(), NOT_CACHED) &&
	      strstr(xk_last_error(), "(cached: " A ", " B ")"));
	CHECK(!exists("target"));
	CHECK(choose("a;b") == -EINVAL);

	/* a chosen kernel gone from the cache: an error, not the other one */
	CHECK(!choose(A));
	CHECK(!remove_kernel(A));
	CHECK(target(NULL, RUNNING_ELSEWHERE, r, &why) == -ENOENT);
	CHECK(strstr(xk_last_error(), "kernel " A " (chosen"));
	CHECK(strstr(xk_last_error(), "(cached: " B ")"));
	drop_cache();
	return 0;
}

/* What versions before these rules wrote at every fetch is not a choice. */
static int old_default_is_not_read(void)
{
	enum xk_target_why why;
	char path[256], r[128];

	CHECK(!new_cache());
	CHECK(!add_kernel(A, "1") && !add_kernel(B, "2"));
	snprintf(path, sizeof(path), "%s/kernels/default", cache);
	CHECK(!xk_write_file(path, B "\n", strlen(B) + 1, 0644));
	CHECK(target(NULL, RUNNING_ELSEWHERE, r, &why) == -ENOENT);
	CHECK(!remove_kernel(B));
	CHECK(!target(NULL, RUNNING_ELSEWHERE, r, &why));
	CHECK(!strcmp(r, A) && why == XK_TARGET_ONLY);
	drop_cache();
	return 0;
}

/* xk kernel list: every kernel, the target and why, what is prepared. */
static int list_reports_each_kernel(void)
{
	XK_OPTS(xk_kernel_opts, o, .cache_dir = cache, .running = B);
	struct xk_kernel_list l;
	char path[256];

	CHECK(!new_cache());
	CHECK(!add_kernel(B, "6.12.118-1~deb12u1") && !add_kernel(A, "6.12.117-1"));
	snprintf(path, sizeof(path), "%s/kernels/%s/scopes", cache, B);
	CHECK(!xk_mkdir_p(path));
	snprintf(path, sizeof(path), "%s/kernels/%s/scopes/X.scope", cache, B);
	CHECK(!xk_write_file(path, "", 0, 0644));
	snprintf(path, sizeof(path), "%s/kernels/%s/scopes/Y.scope", cache, B);
	CHECK(!xk_write_file(path, "", 0, 0644));
	snprintf(path, sizeof(path), "%s/kernels/%s/.stamp-prepare", cache, B);
	CHECK(!xk_write_file(path, "ok\n", 3, 0644));
	snprintf(path, sizeof(path), "%s/kernels/%s", cache, C);	/* unfinished */
	CHECK(!xk_mkdir_p(path));
	snprintf(path, sizeof(path), "%s/kernels/default", cache);
	CHECK(!xk_write_file(path, A "\n", strlen(A) + 1, 0644));

	CHECK(!xk_kernel_list(&o, &l));
	CHECK(l.nr == 3);
	CHECK(!strcmp(l.kernels[0].release, A) && !strcmp(l.kernels[1].release, B) &&
	      !strcmp(l.kernels[2].release, C));
	CHECK(l.target == 1 && l.kernels[1].why == XK_TARGET_RUNNING);
	CHECK(l.kernels[0].why == XK_TARGET_NONE);
	CHECK(!strcmp(l.kernels[1].version, "6.12.118-1~deb12u1"));
	CHECK(l.kernels[1].source_prepared && l.kernels[1].nr_tables == 2);
	CHECK(!l.kernels[0].source_prepared && l.kernels[0].nr_tables == 0);
	CHECK(l.kernels[0].complete && !l.kernels[2].complete);
	CHECK(!l.kernels[2].version[0] && !l.chosen[0]);
	xk_kernel_list_free(&l);

	/* no target is no failure of the list: the problem says why */
	o.running = RUNNING_ELSEWHERE;
	CHECK(!xk_kernel_list(&o, &l));
	CHECK(l.target < 0 && strstr(l.problem, A ", " B));
	CHECK(!strcmp(xk_last_error(), "no error recorded"));
	xk_kernel_list_free(&l);

	/* an unfinished kernel is never the target */
	CHECK(!choose(A));
	o.release = C;
	CHECK(!xk_kernel_list(&o, &l));
	CHECK(l.target < 0 && !strcmp(l.chosen, A));
	CHECK(strstr(l.problem, "did not finish"));
	xk_kernel_list_free(&l);
	CHECK(choose(C) == -ENOENT);
	drop_cache();
	return 0;
}

UNIT_MAIN("target", T(only_kernel_is_the_target), T(fetch_keeps_the_target),
	  T(precedence), T(errors_name_the_cached_kernels),
	  T(old_default_is_not_read), T(list_reports_each_kernel))
