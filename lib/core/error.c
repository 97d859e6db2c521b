// SPDX-License-Identifier: GPL-2.0
/* libxk core: errors, printing, options structs. */
#define _GNU_SOURCE
#include <stdarg.h>

#include "internal.h"

static __thread char last_error[1024];

static int default_print(enum xk_print_level level, const char *fmt, va_list ap)
{
	if (level == XK_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static xk_print_fn_t print_fn = default_print;

xk_print_fn_t xk_set_print(xk_print_fn_t fn)
{
	xk_print_fn_t old = print_fn;

	print_fn = fn;
	return old;
}

void xk_print(enum xk_print_level level, const char *fmt, ...)
{
	va_list ap;

	if (!print_fn)
		return;
	va_start(ap, fmt);
	print_fn(level, fmt, ap);
	va_end(ap);
}

const char *xk_last_error(void)
{
	return last_error[0] ? last_error : "no error recorded";
}

void xk_err_clear(void)
{
	last_error[0] = '\0';
}

int xk_api_return(const char *fn, int err)
{
	if (err < 0 && !last_error[0])
		xk_err(err, "%s: %s", fn, strerror(-err));
	return err;
}

int xk_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err;
}

bool xk_opts_valid(const char *opts, size_t known, size_t user_sz)
{
	if (user_sz < sizeof(size_t))
		return false;
	/* a newer caller may pass more fields, but only if they are zero */
	for (size_t i = known; i < user_sz; i++)
		if (opts[i])
			return false;
	return true;
}

