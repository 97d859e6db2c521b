/* SPDX-License-Identifier: GPL-2.0 */
/* A small streaming JSON writer for `xk -j` (in the spirit of bpftool's). */
#ifndef XK_JSON_H
#define XK_JSON_H

#include <stdbool.h>
#include <stdio.h>

struct json {
	FILE *f;
	int depth;
	bool first[32];
};

void json_begin_object(struct json *j, const char *key);
void json_end_object(struct json *j);
void json_begin_array(struct json *j, const char *key);
void json_end_array(struct json *j);
void json_str(struct json *j, const char *key, const char *value);
void json_strn(struct json *j, const char *key, const char *value, size_t n);
void json_int(struct json *j, const char *key, long long value);
void json_double(struct json *j, const char *key, double value);
void json_bool(struct json *j, const char *key, bool value);

#endif
