// SPDX-License-Identifier: GPL-2.0
/* Unit tests of libxk's core (lib/core/): errors, processes, files, listings. */
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "unit.h"
#include "xk/analysis.h"

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

/* A public call forgets an earlier failure; one without a cause gets one. */
static int errors_are_per_call_and_never_bare(void)
{
	struct xk_constant c;
	char *names = NULL;

	CHECK(xk_catalog_find("/nonexistent/catalog.conf", "X", &c) < 0);
	CHECK(strstr(xk_last_error(), "/nonexistent/catalog.conf"));
	CHECK(xk_catalog_list("catalog/constants.conf", &names) == 0);
	free(names);
	CHECK(!strcmp(xk_last_error(), "no error recorded"));
	xk_err_clear();
	CHECK(xk_api_return("xk_something", -ENOMEM) == -ENOMEM);
	CHECK(strstr(xk_last_error(), "xk_something: Cannot allocate memory"));
	/* a recorded cause is kept */
	xk_err_clear();
	xk_err(-EIO, "the real cause");
	CHECK(xk_api_return("xk_something", -EIO) == -EIO);
	CHECK(!strcmp(xk_last_error(), "the real cause"));
	return 0;
}

/* kallsyms: sorted by name, copies of a name together, modules named. */
static int kallsyms_parses_copies_and_modules(void)
{
	char path[] = "/tmp/xk-unit-XXXXXX";
	int fd = mkstemp(path);
	const char *text =
		"ffffffff81000000 T _text\n"
		"ffffffff81000100 t s_start\n"
		"ffffffff81000200 T vfs_write\n"
		"ffffffff81000300 t s_start\n"
		"ffffffffc0000000 t s_start\t[xk_golden]\n"
		"garbage line\n"
		"ffffffff82000000 D some_data\n";
	const struct xk_ksym *first;
	struct xk_kallsyms ks;

	CHECK(fd >= 0);
	close(fd);
	CHECK(xk_write_file(path, text, strlen(text), 0644) == 0);
	CHECK(xk_kallsyms_read(path, true, &ks) == 0);
	unlink(path);
	CHECK(ks.nr == 5 && ks.text_addr == 0xffffffff81000000ULL);
	CHECK(xk_kallsyms_lookup(&ks, "s_start", &first) == 3);
	CHECK(first[0].addr == 0xffffffff81000100ULL && !first[0].module);
	CHECK(first[2].module && !strcmp(first[2].module, "xk_golden"));
	CHECK(xk_kallsyms_lookup(&ks, "some_data", &first) == 0);
	CHECK(xk_kallsyms_lookup(&ks, "zzz", &first) == 0);
	xk_kallsyms_free(&ks);
	return 0;
}

UNIT_MAIN("util",
	  T(strlcpy_refuses_truncation),
	  T(run_captures_output_and_status),
	  T(run_missing_program_is_an_error),
	  T(run_step_names_the_step),
	  T(file_tail_keeps_last_lines),
	  T(opts_reject_unknown_nonzero_fields),
	  T(errors_are_per_call_and_never_bare),
	  T(kallsyms_parses_copies_and_modules))
