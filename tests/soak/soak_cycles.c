// SPDX-License-Identifier: GPL-2.0
/*
 * The soak's cycles (tests/soak/soak-guest.sh), in one process through
 * libxk: N load/set/unload cycles of one scope table, the three transition
 * modes in turn, every fifth settled before its unload. Each step is
 * checked against what the module reports: a step that succeeded has its
 * value in force, one that failed left the value before it (a load whose
 * transition failed left nothing loaded). Prints the counts as
 * "soak MODE load-ok N load-failed N set-ok N set-failed N" lines and
 * "soak settled N mismatches N"; exits 1 on any mismatch.
 *
 *   soak_cycles TABLE N [FIRST]     FIRST: the index of the first cycle
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xk/xk.h"

static const char *const mode_names[] = { "immediate", "global", "per-task" };

/* The value in force of name, or false when it is not loaded. */
static bool value_of(int fd, const char *name, long long *value)
{
	static struct xk_ioc_status st;

	for (unsigned int i = 0; !xk_rt_status(fd, i, &st); i++) {
		if (!strcmp(st.name, name)) {
			*value = st.value;
			return true;
		}
	}
	return false;
}

static long long clamp(long long v, const struct xk_scope *t)
{
	return v < t->min ? t->min : v > t->max ? t->max : v;
}

int main(int argc, char **argv)
{
	unsigned long load_ok[3] = { 0 }, load_bad[3] = { 0 };
	unsigned long set_ok[3] = { 0 }, set_bad[3] = { 0 };
	unsigned long settled = 0, mismatches = 0;
	struct xk_scope t;
	long n, first;
	int fd;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s TABLE N [FIRST]\n", argv[0]);
		return 2;
	}
	n = strtol(argv[2], NULL, 10);
	first = argc == 4 ? strtol(argv[3], NULL, 10) : 0;
	if (xk_scope_read(argv[1], &t)) {
		printf("# %s\n", xk_last_error());
		return 2;
	}
	fd = xk_rt_open();
	if (fd < 0) {
		printf("# %s\n", xk_last_error());
		return 2;
	}
	for (long i = first; i < first + n; i++) {
		int m = (int)(i % 3);
		long long v = clamp(1 + (i * 7) % 256, &t), v2 = clamp(1 + (i * 13) % 512, &t);
		long long now = 0;
		XK_OPTS(xk_rt_load_opts, o, .mode = m, .timeout_ms = 500);
		struct xk_rt_result r;
		struct xk_rt_settle_result sr;
		bool loaded;
		int err, nr;

		err = xk_rt_load(fd, &t, v, &o, &r);
		loaded = value_of(fd, t.constant, &now);
		if (!err) {
			load_ok[m]++;
			if (!loaded || now != v) {
				printf("# cycle %ld (%s): loaded, value %lld, want %lld\n",
				       i, mode_names[m], now, v);
				mismatches++;
			}
			err = xk_rt_set(fd, t.constant, v2, m, 500, &r);
			err ? set_bad[m]++ : set_ok[m]++;
			if (!value_of(fd, t.constant, &now) || now != (err ? v : v2)) {
				printf("# cycle %ld (%s): set %s, value %lld, want %lld\n", i,
				       mode_names[m], err ? "failed" : "done", now,
				       err ? v : v2);
				mismatches++;
			}
			if (i % 5 == 4 && !xk_rt_settle(fd, t.constant, false, &sr))
				settled++;
		} else {
			load_bad[m]++;
			if (loaded) {
				printf("# cycle %ld (%s): a failed load left %s loaded\n",
				       i, mode_names[m], t.constant);
				mismatches++;
			}
		}
		err = xk_rt_unload(fd, NULL, &nr);
		if (err && err != -ENOENT) {
			printf("# cycle %ld: unload failed (%d)\n", i, err);
			mismatches++;
		}
	}
	for (int m = 0; m < 3; m++)
		printf("soak %s load-ok %lu load-failed %lu set-ok %lu set-failed %lu\n",
		       mode_names[m], load_ok[m], load_bad[m], set_ok[m], set_bad[m]);
	printf("soak settled %lu mismatches %lu\n", settled, mismatches);
	close(fd);
	xk_scope_free(&t);
	return mismatches ? 1 : 0;
}
