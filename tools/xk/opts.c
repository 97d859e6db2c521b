// SPDX-License-Identifier: GPL-2.0
/*
 * The one option parser of xk. A command's options are a table (struct
 * cli_opt, cli.h); they may stand before or after its positional arguments,
 * mixed with the global -j/--json, -q/--quiet and -h/--help, as with
 * bpftool. "--" ends the options; for a command that takes a command line
 * (vm run) its first positional argument does too. Long options may be
 * abbreviated to a unique prefix (as with getopt_long), short ones grouped
 * (-ed, -J4). Every usage error goes through p_usage, and the first one is
 * reported only once all the words are read, so a -j after it still counts.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct cli_opt global_opts[] = {
	{ "json", 'j', CLI_FLAG, .var = &json_output },
	{ "quiet", 'q', CLI_FLAG, .var = &quiet },
	{ "help", 'h', CLI_HELP },
	{ NULL },
};

struct parse {
	const struct cli_cmd *cmd;
	char err[512];		/* the first usage error */
	bool help;
};

static void __attribute__((format(printf, 2, 3)))
parse_error(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	if (p->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
}

static int to_number(const char *s, int base, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, base);
	return errno || end == s || *end ? -EINVAL : 0;
}

int cli_number(const char *topic, const char *s, long long *v)
{
	if (to_number(s, 0, v))
		return p_usage(topic, "'%s' is not a number", s);
	return 0;
}

/* "a, b or c" */
static void enum_names(const char *const *names, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; names[i] && n < size; i++)
		n += snprintf(buf + n, size - n, "%s%s",
			      !i ? "" : names[i + 1] ? ", " : " or ", names[i]);
}

static void store(struct parse *p, const struct cli_opt *o, const char *arg)
{
	void *dst = (char *)p->cmd->args + o->off;
	char names[256];
	long long v;
	int i;

	switch (o->kind) {
	case CLI_FLAG:
		*(o->var ? o->var : (bool *)dst) = true;
		break;
	case CLI_HELP:
		p->help = true;
		break;
	case CLI_STR:
		*(const char **)dst = arg;
		break;
	case CLI_INT:
		if (!to_number(arg, 10, &v) && v >= o->min && v <= o->max)
			*(int *)dst = (int)v;
		else if (!o->range)
			parse_error(p, "--%s must be a number from %lld to %lld, "
				    "not '%s'", o->name, o->min, o->max, arg);
		else if (to_number(arg, 10, &v))
			parse_error(p, "'%s' is not a number", arg);
		else
			parse_error(p, "--%s is %s", o->name, o->range);
		break;
	case CLI_NUM:
		if (to_number(arg, 0, &((struct cli_num *)dst)->n))
			parse_error(p, "'%s' is not a number", arg);
		((struct cli_num *)dst)->given = true;
		break;
	case CLI_ENUM:
		for (i = 0; o->names[i] && strcmp(o->names[i], arg); i++)
			;
		enum_names(o->names, names, sizeof(names));
		if (o->names[i])
			*(int *)dst = i;
		else
			parse_error(p, "--%s is %s, not '%s'", o->name, names, arg);
		break;
	case CLI_LIST:
		if (((struct cli_list *)dst)->n == CLI_LIST_MAX)
			parse_error(p, "too many --%s", o->name);
		else
			((struct cli_list *)dst)->v[((struct cli_list *)dst)->n++] = arg;
		break;
	}
}

static bool takes_value(const struct cli_opt *o)
{
	return o->kind != CLI_FLAG && o->kind != CLI_HELP;
}

/* The option a long name (or its unique prefix) or a short one names. */
static const struct cli_opt *find_opt(struct parse *p, const char *name,
				      size_t len, char short_name)
{
	const struct cli_opt *tables[] = { p->cmd->opts, global_opts };
	const struct cli_opt *found = NULL;
	int prefixes = 0;

	for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
		for (const struct cli_opt *o = tables[t]; o && o->name; o++) {
			if (short_name && o->short_name == short_name)
				return o;
			if (short_name || strncmp(o->name, name, len))
				continue;
			if (!o->name[len])
				return o;
			found = o;
			prefixes++;
		}
	}
	if (short_name)
		parse_error(p, "unknown option '-%c'", short_name);
	else if (prefixes > 1)
		parse_error(p, "option '--%.*s' is ambiguous", (int)len, name);
	else if (!found)
		parse_error(p, "unknown option '--%.*s'", (int)len, name);
	return prefixes == 1 ? found : NULL;
}

/*
 * One word that starts with '-' at argv[i], with its value (the rest of the
 * word, or the next one); returns the index of the last word it took.
 */
static int parse_word(struct parse *p, int argc, char **argv, int i)
{
	const char *word = argv[i];

	if (word[1] == '-') {
		const char *name = word + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const struct cli_opt *o = find_opt(p, name, len, 0);

		if (!o)
			return i;
		if (!takes_value(o) && eq)
			parse_error(p, "--%s takes no value", o->name);
		else if (!takes_value(o))
			store(p, o, NULL);
		else if (eq || i + 1 < argc)
			store(p, o, eq ? eq + 1 : argv[++i]);
		else
			parse_error(p, "--%s needs a value", o->name);
		return i;
	}
	for (int j = 1; word[j]; j++) {
		const struct cli_opt *o = find_opt(p, NULL, 0, word[j]);

		if (!o)
			return i;
		if (!takes_value(o)) {
			store(p, o, NULL);
		} else if (word[j + 1] || i + 1 < argc) {
			store(p, o, word[j + 1] ? word + j + 1 : argv[++i]);
			return i;
		} else {
			parse_error(p, "--%s needs a value", o->name);
		}
	}
	return i;
}

void cli_print_options(const struct cli_cmd *c)
{
	const struct cli_opt *tables[] = { c->opts, global_opts };

	for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
		for (const struct cli_opt *o = tables[t]; o && o->name; o++) {
			printf("--%s%s", o->name, takes_value(o) ? "=" : "");
			for (int i = 0; o->kind == CLI_ENUM && o->names[i]; i++)
				printf("%s%s", i ? "|" : "", o->names[i]);
			putchar('\n');
		}
	}
}

int cli_parse(const struct cli_cmd *c, int *argc, char **argv)
{
	struct parse p = { .cmd = c };
	bool options = true;
	int n = 0;

	for (int i = 0; i < *argc; i++) {
		if (options && !strcmp(argv[i], "--")) {
			options = false;
		} else if (options && argv[i][0] == '-' && argv[i][1]) {
			i = parse_word(&p, *argc, argv, i);
		} else {
			/* positionals move to the front, in their order */
			argv[n++] = argv[i];
			options = options && !c->args_end_options;
		}
	}
	if (p.help)
		return print_help(c->topic) ? XK_EXIT_FAIL : XK_EXIT_OK;
	if (p.err[0])
		return p_usage(c->topic, "%s", p.err);
	if (c->max_args >= 0 && n > c->max_args)
		return p_usage(c->topic, "unexpected argument '%s'",
			       argv[c->max_args]);
	*argc = n;
	argv[n] = NULL;		/* a command line for exec (vm run) */
	return CLI_RUN;
}
