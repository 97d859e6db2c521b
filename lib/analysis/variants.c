// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: the objects built with other values of a constant.
 *
 * A variant object is not built by editing the source tree: the baseline
 * object's own compile command (Kbuild's .cmd file) is replayed with
 * -E -fdirectives-only, which expands #includes but keeps #define lines and
 * macro uses as written. In that one self-contained unit the constant's
 * definition (or literal text) is replaced, and the unit is compiled with
 * -fpreprocessed -fdirectives-only: the same code as a build of the edited
 * tree (checked: byte-identical text for the baseline), in parallel, with
 * no shared state. Variant objects are cached by a hash of unit + command.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"
#include "identity.h"

/* Replaces the value in the unit: the #define line, or the literal's text. */
int patch_unit(const struct xk_constant *c, const char *unit,
		      long long value, char **out)
{
	char repl[160];
	const char *at = NULL, *at_end = NULL;
	const char *cur_file = NULL;
	size_t cur_file_len = 0;
	long cur_line = 0;

	if (!strcmp(c->kind, "macro")) {
		xk_snprintf(repl, sizeof(repl), c->tmpl, value);
		for (const char *line = unit; *line;) {
			const char *end = strchrnul(line, '\n'), *body;
			char buf[512];

			xk_snprintf(buf, sizeof(buf), "%.*s",
				    (int)(end - line < 511 ? end - line : 511), line);
			if (is_define_of(buf, c->name, &body)) {
				at = line + (body - buf);
				at_end = end;
				break;
			}
			line = *end ? end + 1 : end;
		}
		if (!at)
			return xk_err(-ENOENT, "the unit has no #define %s", c->name);
		return asprintf(out, "%.*s %s%s", (int)(at - unit), unit, repl,
				at_end) < 0 ? -ENOMEM : 0;
	}
	/* literal, variable: the text on file:line, tracked by line markers */
	xk_snprintf(repl, sizeof(repl), "(%lld)", value);
	for (const char *line = unit; *line;) {
		const char *end = strchrnul(line, '\n');

		if (line[0] == '#' && line[1] == ' ' && isdigit((unsigned char)line[2])) {
			const char *q = strchr(line, '"');

			cur_line = strtol(line + 2, NULL, 10);
			cur_file = q ? q + 1 : NULL;
			cur_file_len = q ? strcspn(q + 1, "\"") : 0;
		} else {
			size_t fl = strlen(c->file);
			/* markers name the file as compiled: relative in the
			 * kernel tree, absolute for an out-of-tree module */
			bool same_file = cur_file && cur_file_len >= fl &&
				!strncmp(cur_file + cur_file_len - fl, c->file, fl) &&
				(cur_file_len == fl || cur_file[cur_file_len - fl - 1] == '/');

			if (same_file && cur_line == c->line) {
				const char *t = memmem(line, end - line, c->text,
						       strlen(c->text));

				if (!t)
					return xk_err(-ENOENT, "'%s' is not on %s:%d",
						      c->text, c->file, c->line);
				return asprintf(out, "%.*s%s%s", (int)(t - unit),
						unit, repl, t + strlen(c->text)) < 0 ?
					       -ENOMEM : 0;
			}
			cur_line++;
		}
		line = *end ? end + 1 : end;
	}
	return xk_err(-ENOENT, "%s:%d is not in the unit", c->file, c->line);
}

struct job {
	pid_t pid;
	char out[XK_PATH_MAX];
	char tmp[XK_PATH_MAX];
};

/* Waits for one compile of jobs; its object moves into place. */
static int wait_job(struct job *jobs, int *running, const char *log)
{
	pid_t pid = -1;
	int st = xk_wait(-1, &pid);

	if (st < 0 && pid < 0)
		return st;
	for (int i = 0; i < *running; i++) {
		if (jobs[i].pid != pid)
			continue;
		if (st) {
			char tail[1024] = "", out[XK_PATH_MAX];

			/* off the list: nobody waits for it again */
			xk_strlcpy(out, jobs[i].out, sizeof(out));
			unlink(jobs[i].tmp);
			jobs[i] = jobs[--*running];
			xk_file_tail(log, 8, tail, sizeof(tail));
			return xk_err(-EIO, "compiling %s failed; see %s:\n%s",
				      out, log, tail);
		}
		if (rename(jobs[i].tmp, jobs[i].out))
			return xk_err(-errno, "cannot move %s into place: %s",
				      jobs[i].out, strerror(errno));
		jobs[i] = jobs[--*running];
		return 0;
	}
	return 0;
}

static int build_object(const struct tree *t, struct xk_constant *c,
			const char *ccvar, int idx, int nr_variants,
			struct xk_build_result *res,
			struct job *jobs, int *running, int max_jobs,
			const char *cache_dir, const char *log, bool progress)
{
	const char *obj = res->object[idx];
	char src[512], unit_path[XK_PATH_MAX], script[XK_PATH_MAX * 2];
	char *cmd = NULL, *unit = NULL, *nodeps = NULL;
	size_t unit_len;
	int err;

	err = object_unit(t, obj, ccvar, cache_dir, log, progress,
			  res->base[idx], &cmd, src, sizeof(src), unit_path) ?:
	      xk_read_file(unit_path, &unit, &unit_len) ?:
	      unit_command(cmd, &nodeps);
	if (err)
		goto out;
	for (int v = 0; v < nr_variants && !err; v++) {
		char *patched = NULL;
		uint64_t h;
		struct job *j;
		char *out = res->variant[idx][v];

		err = patch_unit(c, unit, res->value[v], &patched);
		/* found by its name in the source, but its unit does not
		 * define the macro (a comment named it: lib/vdso/getrandom.c's
		 * "INT_MAX & PAGE_MASK /" "* = MAX_RW_COUNT *" "/"): no user */
		if (err == -ENOENT && !strcmp(c->kind, "macro") && !c->objects[0]) {
			pr_debug("%s: its unit has no #define %s: not a user\n",
				 obj, c->name);
			xk_err_clear();
			err = 1;
		}
		if (err)
			break;
		h = unit_hash(0xcbf29ce484222325ULL, patched, strlen(patched));
		h = unit_hash(h, nodeps, strlen(nodeps));
		xk_snprintf(out, XK_PATH_MAX, "%s/%016llx.o", cache_dir,
			    (unsigned long long)h);
		pr_debug("%s with %s = %lld: %s\n", obj, c->name,
			 res->value[v], out);
		if (xk_exists(out)) {
			res->cached++;
			free(patched);
			continue;
		}
		while (*running >= max_jobs && !err)
			err = wait_job(jobs, running, log);
		if (err) {
			free(patched);
			break;
		}
		j = &jobs[*running];
		xk_snprintf(j->out, sizeof(j->out), "%s", out);
		xk_snprintf(j->tmp, sizeof(j->tmp), "%s.%d.tmp", out, getpid());
		xk_snprintf(unit_path, sizeof(unit_path), "%s.i", j->tmp);
		err = xk_write_file(unit_path, patched, strlen(patched), 0644);
		free(patched);
		if (err)
			break;
		xk_snprintf(script, sizeof(script),
			    "%s -fpreprocessed -fdirectives-only -c -o %s %s && rm -f %s",
			    nodeps, j->tmp, unit_path, unit_path);
		{
			const char *argv[] = { "/bin/sh", "-c", script, NULL };
			struct xk_cmd sh = { .argv = argv, .cwd = t->cwd,
					     .log_path = log,
					     .root = t->toolchain };

			err = xk_spawn(&sh, &j->pid);
		}
		if (err)
			break;
		(*running)++;
		res->compiled++;
		if (progress)
			pr_info("compiling %s with %s = %lld\n", obj, c->name,
				res->value[v]);
	}
out:
	free(cmd);
	free(unit);
	free(nodeps);
	return err;
}

/* Object i of res out of the build (before any of its variants runs). */
static void drop_object(struct xk_build_result *res, int i)
{
	for (int j = i; j + 1 < res->nr_objects; j++) {
		memcpy(res->object[j], res->object[j + 1], sizeof(res->object[0]));
		memcpy(res->base[j], res->base[j + 1], sizeof(res->base[0]));
		memcpy(res->module[j], res->module[j + 1], sizeof(res->module[0]));
		memcpy(res->variant[j], res->variant[j + 1], sizeof(res->variant[0]));
	}
	res->nr_objects--;
}

static int xk_build_impl(const struct xk_kernel *k, struct xk_constant *c,
			 const struct xk_build_opts *opts, struct xk_build_result *res)
{
	int jobs_max = OPTS_GET(opts, jobs, 0) ?: (int)sysconf(_SC_NPROCESSORS_ONLN);
	bool progress = OPTS_GET(opts, progress, false);
	char ccvar[96], cache_dir[XK_PATH_MAX], log[XK_PATH_MAX];
	struct job jobs[64];
	int running = 0, err;
	long long step;
	double t0 = xk_now();

	if (!OPTS_VALID(opts, xk_build_opts))
		return xk_err(-EINVAL, "invalid xk_build_opts");
	memset(res, 0, sizeof(*res));
	struct tree tree;

	if (!k->source_prepared && !c->module_dir[0])
		return xk_err(-ENOENT, "kernel %s has no prepared source tree: run "
				       "'xk kernel fetch' (without --no-source)",
			      k->release);
	err = tree_of(k, c, &tree);
	if (err)
		return xk_err(err, "path too long");
	if (jobs_max > 64)
		jobs_max = 64;
	if (!strcmp(c->kind, "macro"))
		err = locate_macro(k, &tree, c);
	else if (!strcmp(c->kind, "literal") || !strcmp(c->kind, "variable"))
		err = !c->file[0] || !c->text[0] || !c->has_def ||
		      (c->line <= 0 && !c->code[0]) ?
		      xk_err(-EINVAL, "%s: a %s needs file=, line= or code=, "
				      "text= and default=", c->name, c->kind) :
		      locate_line(&tree, c);
	else
		err = xk_err(-EINVAL, "%s: unknown kind '%s' (macro, literal, "
				      "variable)", c->name, c->kind);
	if (err)
		return err;
	err = find_objects(k, &tree, c, res) ?:
	      kernel_cc_var(k, ccvar, sizeof(ccvar)) ?:
	      xk_snprintf(cache_dir, sizeof(cache_dir), "%s/xk-build", k->dir) ?:
	      xk_mkdir_p(cache_dir) ?:
	      xk_snprintf(log, sizeof(log), "%s/build.log", cache_dir);
	/* a body that is an expression: evaluated with the flags of the
	 * first object that uses it */
	if (!err && !strcmp(c->kind, "macro") && !c->tmpl[0])
		err = evaluate_macro(&tree, c, res->object[0], ccvar, cache_dir,
				     log, progress);
	if (!err && !strcmp(c->kind, "macro")) {
		const char *pct = strchr(c->tmpl, '%');

		if (!pct || strncmp(pct, "%lld", 4) || strchr(pct + 4, '%'))
			err = xk_err(-EINVAL, "%s: template '%s' must hold exactly "
					      "one %%lld", c->name, c->tmpl);
	}
	if (err)
		return err;
	if (!c->has_bounds) {
		c->min = c->def > 0 ? 1 : c->def;
		c->max = c->def > 0 ? c->def * 16 : 16;
	}
	/* fit variants near the default keep the instruction forms; the
	 * check variant, farther away, often does not: it is checked by value */
	step = llabs(c->def) / 8 ?: 1;
	res->value[0] = c->def + step;
	res->value[1] = c->def + 2 * step;
	/* twice the default, or farther if that is one of the fit values */
	res->value[2] = c->def * 2 > c->def + 3 * step ? c->def * 2 :
			c->def + 4 * step;
	if (OPTS_GET(opts, one_value, false))
		res->value[0] = res->value[1] = res->value[2] =
			OPTS_GET(opts, value, 0);
	for (int i = 0; i < res->nr_objects && !err; i++) {
		err = build_object(&tree, c, ccvar, i,
				   OPTS_GET(opts, one_value, false) ? 1 :
				   XK_BUILD_VARIANTS, res, jobs, &running,
				   jobs_max, cache_dir, log, progress);
		if (err == 1) {		/* not a user after all */
			drop_object(res, i--);
			err = res->nr_objects ? 0 :
			      xk_err(-ENOENT, "%s: no object of this configuration "
					      "uses it", c->name);
		}
	}
	while (running > 0) {
		int e = wait_job(jobs, &running, log);

		if (e && !err)
			err = e;
		if (e == -ECHILD)
			break;
	}
	/* the baselines must be the shipped code, function by function */
	for (int i = 0; i < res->nr_objects && !err && !tree.module &&
			!OPTS_GET(opts, skip_identity, false); i++) {
		int checked = 0;

		err = res->module[i][0] ?
		      xk_identity_check_module(k, res->base[i], res->object[i],
					       res->module[i], &checked) :
		      xk_identity_check(k, res->base[i], res->object[i], &checked);
		res->identical += checked;
	}
	res->seconds = xk_now() - t0;
	return err;
}

int xk_build(const struct xk_kernel *k, struct xk_constant *c,
	     const struct xk_build_opts *opts, struct xk_build_result *res)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_build_impl(k, c, opts, res));
}

