// SPDX-License-Identifier: GPL-2.0
/*
 * xk apply: persistent tunings. Files *.conf in /etc/xkernel and
 * /usr/lib/xkernel, read as sysctl.d reads its own: a file in /etc
 * overrides the file of the same name in /usr/lib, the files are read in
 * the lexical order of their names, and a later setting of a constant
 * overrides an earlier one. Each line is CONSTANT = VALUE, or mode = MODE;
 * '#' starts a comment, as ';' does at the start of a line. Everything is
 * applied in one transaction, through the path of xk set A=1 B=2.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "xk/runtime.h"

static const char *const default_dirs[] = {
	"/etc/xkernel", "/usr/lib/xkernel", NULL,
};

/* indexed by enum xk_mode, as for load and set */
static const char *const modes[] = { "immediate", "global", "per-task", NULL };

struct conf_file {
	char name[NAME_MAX + 1];
	char path[PATH_MAX];
	char overrides[PATH_MAX];	/* the file of a lower directory, or "" */
};

struct setting {
	char name[XK_NAME_MAX];
	long long value;
	char source[PATH_MAX + 16];	/* FILE:LINE */
};

struct conf {
	struct conf_file *files;
	int nr_files;
	struct setting set[64];
	int nr_set;
	int mode;			/* -1: not set */
	char mode_source[PATH_MAX + 16];
	int errors;			/* lines or files that were not read */
};

/* A line that cannot be read: one line naming it, counted. */
static void __attribute__((format(printf, 2, 3)))
conf_error(struct conf *c, const char *fmt, ...)
{
	char msg[PATH_MAX + 512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->errors++;
	if (json_output) {
		json_str(jw, NULL, msg);
	} else {
		fflush(stdout);
		fprintf(stderr, "xk: error: %s\n", msg);
	}
}

static bool is_conf_name(const char *n)
{
	size_t len = strlen(n);

	return n[0] != '.' && len > 5 && !strcmp(n + len - 5, ".conf");
}

static int find_file(const struct conf *c, const char *name)
{
	for (int i = 0; i < c->nr_files; i++)
		if (!strcmp(c->files[i].name, name))
			return i;
	return -1;
}

/* dir's *.conf; a name already seen (a directory of higher precedence)
 * keeps the file seen first. */
static int scan_dir(struct conf *c, const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d) {
		if (errno != ENOENT && errno != ENOTDIR)
			conf_error(c, "%s: %s", dir, strerror(errno));
		return 0;
	}
	while ((de = readdir(d))) {
		struct conf_file *f;
		int i;

		if (!is_conf_name(de->d_name))
			continue;
		i = find_file(c, de->d_name);
		if (i >= 0) {
			if (!c->files[i].overrides[0])
				snprintf(c->files[i].overrides, sizeof(f->overrides),
					 "%s/%s", dir, de->d_name);
			continue;
		}
		f = realloc(c->files, (c->nr_files + 1) * sizeof(*f));
		if (!f) {
			closedir(d);
			return -ENOMEM;
		}
		c->files = f;
		f = &c->files[c->nr_files++];
		memset(f, 0, sizeof(*f));
		snprintf(f->name, sizeof(f->name), "%s", de->d_name);
		snprintf(f->path, sizeof(f->path), "%s/%s", dir, de->d_name);
	}
	closedir(d);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct conf_file *)a)->name,
		      ((const struct conf_file *)b)->name);
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
			 e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static bool is_name(const char *s)
{
	if (!*s || strlen(s) >= XK_NAME_MAX || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static void add_setting(struct conf *c, const char *name, long long value,
			const char *source)
{
	struct setting *s = NULL;

	for (int i = 0; i < c->nr_set && !s; i++)
		if (!strcmp(c->set[i].name, name))
			s = &c->set[i];
	if (!s && c->nr_set == (int)ARRAY_SIZE(c->set)) {
		conf_error(c, "%s: too many constants", source);
		return;
	}
	if (!s)
		s = &c->set[c->nr_set++];
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->value = value;
	snprintf(s->source, sizeof(s->source), "%s", source);
}

static void parse_line(struct conf *c, char *line, const char *source)
{
	char *eq, *key, *val, *end;
	long long v;
	int m;

	line[strcspn(line, "#")] = '\0';
	line = trim(line);
	if (!*line || *line == ';')
		return;
	eq = strchr(line, '=');
	if (!eq) {
		conf_error(c, "%s: '%s' is not CONSTANT = VALUE", source, line);
		return;
	}
	*eq = '\0';
	key = trim(line);
	val = trim(eq + 1);
	if (!strcmp(key, "mode")) {
		for (m = 0; modes[m] && strcmp(modes[m], val); m++)
			;
		if (!modes[m]) {
			conf_error(c, "%s: mode is immediate, global or per-task, "
				   "not '%s'", source, val);
			return;
		}
		c->mode = m;
		snprintf(c->mode_source, sizeof(c->mode_source), "%s", source);
		return;
	}
	if (!is_name(key)) {
		conf_error(c, "%s: '%s' is not the name of a constant", source, key);
		return;
	}
	errno = 0;
	v = strtoll(val, &end, 0);
	if (errno || end == val || *end) {
		conf_error(c, "%s: %s: '%s' is not a number", source, key, val);
		return;
	}
	add_setting(c, key, v, source);
}

static void parse_file(struct conf *c, const struct conf_file *f)
{
	char source[PATH_MAX + 16];
	FILE *in = fopen(f->path, "r");
	char *line = NULL;
	size_t cap = 0;
	int nr = 0;

	if (!in) {
		conf_error(c, "%s: %s", f->path, strerror(errno));
		return;
	}
	while (getline(&line, &cap, in) > 0) {
		snprintf(source, sizeof(source), "%s:%d", f->path, ++nr);
		parse_line(c, line, source);
	}
	free(line);
	fclose(in);
}

/* The settings of dirs (highest precedence first), files in name order. */
static int read_conf(struct conf *c, const char *const *dirs, int nr_dirs)
{
	int err = 0;

	for (int i = 0; i < nr_dirs && !err; i++)
		err = scan_dir(c, dirs[i]);
	if (err)
		return err;
	qsort(c->files, c->nr_files, sizeof(*c->files), by_name);
	for (int i = 0; i < c->nr_files; i++)
		parse_file(c, &c->files[i]);
	return 0;
}

struct apply_args {
	bool dry_run;
	int mode;		/* -1: the files' mode = line, else immediate */
	int timeout_ms;
	const char *catalog;
	bool partial;
};

static void print_files(const struct conf *c)
{
	if (json_output) {
		json_begin_array(jw, "files");
		for (int i = 0; i < c->nr_files; i++)
			json_str(jw, NULL, c->files[i].path);
		json_end_array(jw);
		json_begin_array(jw, "overridden");
		for (int i = 0; i < c->nr_files; i++) {
			if (!c->files[i].overrides[0])
				continue;
			json_begin_object(jw, NULL);
			json_str(jw, "file", c->files[i].overrides);
			json_str(jw, "by", c->files[i].path);
			json_end_object(jw);
		}
		json_end_array(jw);
		return;
	}
	for (int i = 0; i < c->nr_files; i++) {
		printf("file %s", c->files[i].path);
		if (c->files[i].overrides[0])
			printf(" (overrides %s)", c->files[i].overrides);
		putchar('\n');
	}
}

static int do_apply(void *args, int argc, char **argv)
{
	const struct apply_args *a = args;
	struct load_args la = { .catalog = a->catalog, .timeout_ms = a->timeout_ms,
				.partial = a->partial };
	struct conf c = { .mode = -1 };
	struct tx_item it[ARRAY_SIZE(c.set)];
	struct xk_rt_result r = { 0 };
	char tx_why[1024] = "";
	int err = 0, applied = 0, failed = 0;

	if (json_output) {
		json_begin_object(jw, NULL);
		json_begin_array(jw, "errors");
	}
	if (argc)
		err = read_conf(&c, (const char *const *)argv, argc);
	else
		err = read_conf(&c, default_dirs, ARRAY_SIZE(default_dirs) - 1);
	if (!err && c.nr_set > XK_TX_MAX)
		conf_error(&c, "the files set %d constants; one transaction "
			   "switches at most %d", c.nr_set, XK_TX_MAX);
	if (json_output)
		json_end_array(jw);
	if (err) {
		free(c.files);
		p_err("apply: %s", strerror(-err));
		return XK_EXIT_FAIL;
	}
	la.mode = a->mode >= 0 ? a->mode : c.mode >= 0 ? c.mode : 0;
	for (int i = 0; i < c.nr_set; i++) {
		it[i].name = c.set[i].name;
		it[i].value = c.set[i].value;
		it[i].why[0] = '\0';
	}
	if (c.nr_set > XK_TX_MAX) {
		err = XK_EXIT_FAIL;
	} else if (!a->dry_run && c.nr_set) {
		/* under -j the cause goes into the one object printed */
		struct err_capture prev = { 0 };

		if (json_output)
			prev = p_err_capture(tx_why, sizeof(tx_why));
		err = set_transaction(&la, it, c.nr_set, true, &r);
		if (json_output)
			p_err_capture(prev.buf, prev.size);
	}
	for (int i = 0; i < c.nr_set; i++) {
		bool ok = !err && !it[i].why[0];

		applied += ok && !a->dry_run;
		failed += !ok;
		if (!json_output && it[i].why[0]) {
			fflush(stdout);
			fprintf(stderr, "xk: error: %s (%s): %s\n", it[i].name,
				c.set[i].source, it[i].why);
		}
	}
	if (json_output) {
		json_bool(jw, "dry_run", a->dry_run);
		json_str(jw, "mode", mode_name(la.mode));
		print_files(&c);
		json_begin_array(jw, "constants");
		for (int i = 0; i < c.nr_set; i++) {
			json_begin_object(jw, NULL);
			json_str(jw, "constant", c.set[i].name);
			json_int(jw, "value", c.set[i].value);
			json_str(jw, "source", c.set[i].source);
			if (!a->dry_run)
				json_bool(jw, "applied", !err && !it[i].why[0]);
			if (it[i].why[0])
				json_str(jw, "error", it[i].why);
			json_end_object(jw);
		}
		json_end_array(jw);
		json_int(jw, "applied", applied);
		if (tx_why[0])
			json_str(jw, "error", tx_why);
		json_int(jw, "failed", failed);
		if (applied)
			json_double(jw, "transition_ms", r.transition_ns / 1e6);
		json_end_object(jw);
	} else {
		if (a->dry_run)
			print_files(&c);
		for (int i = 0; i < c.nr_set && a->dry_run; i++)
			printf("%s = %lld (%s)\n", c.set[i].name, c.set[i].value,
			       c.set[i].source);
		if (a->dry_run)
			printf("would apply %d constant%s in one transaction (%s)\n",
			       c.nr_set, c.nr_set == 1 ? "" : "s", mode_name(la.mode));
		else if (!c.nr_set)
			printf("nothing to apply\n");
		else if (applied)
			printf("applied %d constant%s in one transaction (%s, "
			       "transition %.2f ms)%s\n", applied,
			       applied == 1 ? "" : "s", mode_name(la.mode),
			       r.transition_ns / 1e6, failed ? "; see the errors" : "");
	}
	free(c.files);
	return err || failed || c.errors ? XK_EXIT_FAIL : 0;
}

static struct apply_args apply_args = { .mode = -1, .timeout_ms = 1000 };
static const struct cli_opt apply_opts[] = {
	{ "dry-run", 'n', CLI_FLAG, offsetof(struct apply_args, dry_run) },
	CLI_TRANSITION_OPTS(struct apply_args, modes),
	{ "catalog", 'c', CLI_STR, offsetof(struct apply_args, catalog) },
	{ NULL },
};

const struct cli_cmd cmd_apply = {
	"apply", do_apply, apply_opts, &apply_args, -1,
};
