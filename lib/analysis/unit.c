// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: an object's compile command as Kbuild recorded it, and
 * its unit (includes expanded, #define lines kept), in which the variants
 * (variants.c) replace the constant and macro bodies are evaluated
 * (evaluate.c).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"

int kernel_cc_var(const struct xk_kernel *k, char *out, size_t size)
{
	char *cfg, *p;
	int err = xk_read_file(k->config, &cfg, NULL);

	if (err)
		return err;
	p = strstr(cfg, "CONFIG_CC_VERSION_TEXT=\"");
	err = p ? xk_snprintf(out, size, "CC=%.*s",
			      (int)strcspn(p + 24, " \""), p + 24) : -ENOENT;
	free(cfg);
	return err;
}

/* The compile command Kbuild recorded, without its -o/-c and dep file. */
int recorded_command(const struct tree *t, const char *obj,
		     char **cmd, char *src, size_t src_size)
{
	char path[XK_PATH_MAX], *text, *line, *p;
	const char *base = strrchr(obj, '/');
	int err;

	base = base ? base + 1 : obj;
	err = xk_snprintf(path, sizeof(path), "%s/%.*s.%s.cmd", t->src,
			  (int)(base - obj), obj, base) ?:
	      xk_read_file(path, &text, NULL);
	if (err)
		return xk_err(err, "no Kbuild command for %s (%s)", obj, path);
	line = strstr(text, ":= ");
	if (!line) {
		free(text);
		return xk_err(-EINVAL, "%s: no recorded command", path);
	}
	line += 3;
	line[strcspn(line, "\n")] = '\0';
	/* drop " -c -o OBJ SRC" at the end, keep SRC */
	p = strstr(line, " -c -o ");
	if (!p) {
		free(text);
		return xk_err(-EINVAL, "%s: unexpected command form", path);
	}
	*p = '\0';
	p += strlen(" -c -o ");
	p += strcspn(p, " ");
	p += strspn(p, " ");
	/* the source is the next word; objtool may follow after a ';' */
	xk_snprintf(src, src_size, "%.*s", (int)strcspn(p, " ;"), p);
	/* drop -Wp,-MMD,... (the dependency file) */
	p = strstr(line, "-Wp,-MMD,");
	if (p)
		memset(p, ' ', strcspn(p, " "));
	*cmd = strdup(line);
	free(text);
	return *cmd ? 0 : -ENOMEM;
}

/* Runs script in the tree (its output to log). */
static int shell(const struct tree *t, const char *script, const char *log)
{
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct xk_cmd cmd = { .argv = argv, .cwd = t->cwd, .log_path = log,
			      .root = t->toolchain };

	return xk_run_step("compile", &cmd);
}

/* FNV-1a over n bytes at p, from h: a cache key. */
uint64_t unit_hash(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * The baseline object built by the kernel's make in its tree, unless it is
 * there with its command (another xk built it while this one waited). Two
 * makes in one tree at once break each other (make -j2 of this project, for
 * a kernel not yet built, runs one xk gen per policy: both rebuilt the
 * tree's scripts/mod and include/config at once), so the make runs under
 * the tree's lock, .xk-make.lock in the directory it writes.
 */
static int build_baseline(const struct tree *t, const char *obj,
			  const char *ccvar, const char *log, bool progress,
			  const char *base)
{
	char mvar[XK_PATH_MAX + 4], lock[XK_PATH_MAX], src[512], *cmd = NULL;
	const char *argv[] = { "make", "-s", "-C", t->cwd, ccvar,
			       t->module ? mvar : obj, NULL };
	struct xk_cmd mk = { .argv = argv, .log_path = log,
			     .root = t->toolchain };
	int fd, err;

	err = xk_snprintf(mvar, sizeof(mvar), "M=%s", t->src) ?:
	      xk_snprintf(lock, sizeof(lock), "%s/.xk-make.lock", t->src) ?:
	      xk_lock_file(lock, "make in this kernel tree", &fd);
	if (err)
		return err;
	if (xk_exists(base) && !recorded_command(t, obj, &cmd, src, sizeof(src))) {
		free(cmd);
		close(fd);
		return 0;
	}
	xk_err_clear();
	if (progress)
		pr_info("building the baseline %s\n", obj);
	err = xk_run_step("make (baseline object)", &mk);
	close(fd);
	return err;
}

int object_unit(const struct tree *t, const char *obj, const char *ccvar,
		const char *cache_dir, const char *log, bool progress,
		char *base, char **cmd, char *src, size_t src_size,
		char *unit_path)
{
	int err;

	*cmd = NULL;
	err = xk_snprintf(base, XK_PATH_MAX, "%s/%s", t->src, obj);
	if (err)
		return err;
	if (!xk_exists(base) || recorded_command(t, obj, cmd, src, src_size)) {
		err = build_baseline(t, obj, ccvar, log, progress, base);
		free(*cmd);
		*cmd = NULL;
		err = err ?: recorded_command(t, obj, cmd, src, src_size);
		if (err)
			return err;
	}
	/* the unit with includes expanded, definitions kept; keyed by the
	 * command and the baseline object, so a rebuilt source makes a new one */
	{
		struct stat st;
		uint64_t h = unit_hash(0xcbf29ce484222325ULL, *cmd, strlen(*cmd));

		if (stat(base, &st))
			err = xk_err(-errno, "no baseline object %s", base);
		h = unit_hash(h, &st.st_mtim, sizeof(st.st_mtim));
		h = unit_hash(h, &st.st_size, sizeof(st.st_size));
		err = err ?: xk_snprintf(unit_path, XK_PATH_MAX, "%s/%016llx.i",
					 cache_dir, (unsigned long long)h);
	}
	if (!err && !xk_exists(unit_path)) {
		char script[XK_PATH_MAX * 2 + 4096];

		/* the temporary file this process's own: another xk may
		 * make the same unit at the same time */
		err = xk_snprintf(script, sizeof(script),
				  "%s -E -fdirectives-only -o %s.%d.tmp %s && "
				  "mv %s.%d.tmp %s", *cmd, unit_path, getpid(),
				  src, unit_path, getpid(), unit_path);
		err = err ?: shell(t, script, log);
	}
	if (err) {
		free(*cmd);
		*cmd = NULL;
	}
	return err;
}

int unit_command(const char *cmd, char **out)
{
	/* compile flags for a preprocessed unit: no -include; and no debug
	 * information (-g0, last, wins over the recorded -g): nothing reads
	 * a variant's DWARF, gcc emits the same code with or without it (what
	 * -fcompare-debug checks), and it is a quarter of the compile time */
	if (asprintf(out, "%s -g0", cmd) < 0) {
		*out = NULL;
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	}
	for (char *p; (p = strstr(*out, "-include "));) {
		size_t n = strlen("-include ");

		n += strcspn(p + n, " ");
		memset(p, ' ', n);
	}
	return 0;
}
