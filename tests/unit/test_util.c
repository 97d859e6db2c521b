// SPDX-License-Identifier: GPL-2.0
/* Unit tests of libxk's helpers (lib/util.c). */
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "unit.h"

static int strlcpy_refuses_truncation(void)
{
	char small[4];

	CHECK(xk_strlcpy(small, "abc", sizeof(small)) == 0);
	CHECK(!strcmp(small, "abc"));
	CHECK(xk_strlcpy(small, "abcd", sizeof(small)) == -ENAMETOOLONG);
	CHECK(xk_snprintf(small, sizeof(small), "%d", 12345) == -ENAMETOOLONG);
	return 0;
}

static int run_captures_output_and_status(void)
{
	const char *echo[] = { "sh", "-c", "echo hello; exit 3", NULL };
	char *out = NULL;
	struct xk_cmd cmd = { .argv = echo, .capture = &out };

	CHECK(xk_run(&cmd) == 3);
	CHECK(out && !strcmp(out, "hello\n"));
	free(out);
	return 0;
}

static int run_missing_program_is_an_error(void)
{
	const char *argv[] = { "/nonexistent/xk-no-such-program", NULL };
	struct xk_cmd cmd = { .argv = argv };

	CHECK(xk_run(&cmd) < 0);
	CHECK(strstr(xk_last_error(), "xk-no-such-program"));
	return 0;
}

static int run_step_names_the_step(void)
{
	char log[] = "/tmp/xk-unit-XXXXXX";
	int fd = mkstemp(log);
	const char *argv[] = { "sh", "-c", "echo the-cause >&2; exit 1", NULL };
	struct xk_cmd cmd = { .argv = argv, .log_path = log };

	CHECK(fd >= 0);
	close(fd);
	CHECK(xk_run_step("doing a thing", &cmd) == -EIO);
	CHECK(strstr(xk_last_error(), "doing a thing failed"));
	CHECK(strstr(xk_last_error(), "the-cause"));
	unlink(log);
	return 0;
}

static int file_tail_keeps_last_lines(void)
{
	char path[] = "/tmp/xk-unit-XXXXXX", tail[64];
	int fd = mkstemp(path);
	const char *text = "one\ntwo\nthree\nfour\n";

	CHECK(fd >= 0);
	close(fd);
	CHECK(xk_write_file(path, text, strlen(text), 0644) == 0);
	CHECK(xk_file_tail(path, 2, tail, sizeof(tail)) == 0);
	CHECK(!strcmp(tail, "three\nfour"));
	unlink(path);
	return 0;
}

struct fake_opts {
	size_t sz;
	int a;
};

static int opts_reject_unknown_nonzero_fields(void)
{
	char buf[64] = { 0 };
	struct fake_opts *o = (struct fake_opts *)buf;

	o->sz = sizeof(*o);
	CHECK(OPTS_VALID(o, fake_opts));
	o->sz = sizeof(*o) + 8;		/* a newer caller, extra field zero */
	CHECK(OPTS_VALID(o, fake_opts));
	buf[sizeof(*o) + 2] = 1;	/* ... and non-zero */
	CHECK(!OPTS_VALID(o, fake_opts));
	o->sz = 2;			/* smaller than the size field */
	CHECK(!OPTS_VALID(o, fake_opts));
	return 0;
}

UNIT_MAIN("util",
	  T(strlcpy_refuses_truncation),
	  T(run_captures_output_and_status),
	  T(run_missing_program_is_an_error),
	  T(run_step_names_the_step),
	  T(file_tail_keeps_last_lines),
	  T(opts_reject_unknown_nonzero_fields))
