// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "json.h"

static void put_escaped(FILE *f, const char *s, size_t n);

static void sep(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (!j->first[j->depth])
			fputc(',', j->f);
		j->first[j->depth] = false;
	}
	if (key) {
		put_escaped(j->f, key, strlen(key));
		fputc(':', j->f);
	}
}

static void put_escaped(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void open_scope(struct json *j, const char *key, char c)
{
	sep(j, key);
	fputc(c, j->f);
	j->depth++;
	j->first[j->depth] = true;
}

static void close_scope(struct json *j, char c)
{
	j->depth--;
	fputc(c, j->f);
	if (!j->depth)
		fputc('\n', j->f);
}

void json_begin_object(struct json *j, const char *key) { open_scope(j, key, '{'); }
void json_end_object(struct json *j) { close_scope(j, '}'); }
void json_begin_array(struct json *j, const char *key) { open_scope(j, key, '['); }
void json_end_array(struct json *j) { close_scope(j, ']'); }

void json_strn(struct json *j, const char *key, const char *value, size_t n)
{
	sep(j, key);
	if (value)
		put_escaped(j->f, value, n);
	else
		fputs("null", j->f);
}

void json_str(struct json *j, const char *key, const char *value)
{
	json_strn(j, key, value, value ? strlen(value) : 0);
}

void json_int(struct json *j, const char *key, long long value)
{
	sep(j, key);
	fprintf(j->f, "%lld", value);
}

void json_double(struct json *j, const char *key, double value)
{
	sep(j, key);
	fprintf(j->f, "%.6g", value);
}

void json_bool(struct json *j, const char *key, bool value)
{
	sep(j, key);
	fputs(value ? "true" : "false", j->f);
}
