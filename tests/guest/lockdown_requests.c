// SPDX-License-Identifier: GPL-2.0
/*
 * Every request of /dev/xkernel that writes kernel state, sent under
 * lockdown (tests/guest/solo_lockdown.sh): each must fail with EPERM and an
 * error naming lockdown, before it looks at the rest of the request (so a
 * minimal request of each kind suffices). Status and unload stay allowed.
 * Usage: lockdown_requests CONSTANT (a constant loaded before lockdown).
 * Prints one line per request; exits 1 if any was not refused so.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "xk_ioctl.h"

static int failures;

/* req's error field is at a different place in each request */
static void expect_refused(int fd, const char *what, unsigned long cmd,
			   void *req, const char *error)
{
	int rc = ioctl(fd, cmd, req);
	int e = errno;

	if (rc == 0 || e != EPERM || !strstr(error, "locked down")) {
		printf("not refused: %s: rc %d, errno %d (%s), error '%s'\n", what,
		       rc, rc ? e : 0, rc ? strerror(e) : "-", error);
		failures++;
		return;
	}
	printf("refused: %s: %s\n", what, error);
}

int main(int argc, char **argv)
{
	static struct xk_ioc_replay replay;
	struct xk_ioc_span span;
	struct xk_ioc_load load;
	struct xk_ioc_set set;
	struct xk_ioc_set_many many;
	struct xk_ioc_settle settle;
	struct xk_ioc_policy_prog prog;
	struct xk_ioc_point point;
	static struct xk_ioc_status status;
	__s64 params[XK_MAX_PARAMS];
	const char *name;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CONSTANT\n", argv[0]);
		return 2;
	}
	name = argv[1];
	fd = open("/dev/xkernel", O_RDWR);
	if (fd < 0) {
		perror("/dev/xkernel");
		return 2;
	}

	memset(&span, 0, sizeof(span));
	memset(&load, 0, sizeof(load));
	load.size = sizeof(load);
	load.nr_spans = 1;
	snprintf(load.name, sizeof(load.name), "XK_LOCKDOWN_PROBE");
	load.max = 1;
	load.spans = (__u64)(unsigned long)&span;
	expect_refused(fd, "XK_IOC_LOAD", XK_IOC_LOAD, &load, load.error);

	memset(&set, 0, sizeof(set));
	set.size = sizeof(set);
	snprintf(set.name, sizeof(set.name), "%s", name);
	set.value = 1;
	expect_refused(fd, "XK_IOC_SET", XK_IOC_SET, &set, set.error);

	memset(&many, 0, sizeof(many));
	many.size = sizeof(many);
	many.nr = 1;
	snprintf(many.names[0], sizeof(many.names[0]), "%s", name);
	many.values[0] = 1;
	expect_refused(fd, "XK_IOC_SET_MANY", XK_IOC_SET_MANY, &many, many.error);

	memset(&settle, 0, sizeof(settle));
	settle.size = sizeof(settle);
	snprintf(settle.name, sizeof(settle.name), "%s", name);
	expect_refused(fd, "XK_IOC_SETTLE", XK_IOC_SETTLE, &settle, settle.error);

	memset(&prog, 0, sizeof(prog));
	prog.size = sizeof(prog);
	prog.prog_fd = -1;
	expect_refused(fd, "XK_IOC_POLICY_PROG", XK_IOC_POLICY_PROG, &prog,
		       prog.error);

	memset(&point, 0, sizeof(point));
	memset(params, 0, sizeof(params));
	point.size = sizeof(point);
	point.nr_spans = 1;
	snprintf(point.name, sizeof(point.name), "%s", name);
	point.value = 1;
	point.params = (__u64)(unsigned long)params;
	expect_refused(fd, "XK_IOC_POINT", XK_IOC_POINT, &point, point.error);

	memset(&replay, 0, sizeof(replay));
	replay.size = sizeof(replay);
	snprintf(replay.name, sizeof(replay.name), "%s", name);
	replay.value = 1;
	expect_refused(fd, "XK_IOC_REPLAY", XK_IOC_REPLAY, &replay, replay.error);

	/* reading stays allowed */
	memset(&status, 0, sizeof(status));
	status.size = sizeof(status);
	if (ioctl(fd, XK_IOC_STATUS, &status)) {
		printf("not allowed: XK_IOC_STATUS: %s\n", strerror(errno));
		failures++;
	} else {
		printf("allowed: XK_IOC_STATUS\n");
	}
	close(fd);
	return failures ? 1 : 0;
}
