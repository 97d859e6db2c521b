// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel addresses XK_IOC_STATUS gives for the first loaded constant:
 * one line per span, "FUNC+OFFSET ADDR" (hex, 0 when the module hides it).
 * For tests/guest/test_status_addresses.sh, which compares them with
 * kprobes/list under each kptr_restrict and without CAP_SYSLOG.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "xk_ioctl.h"

int main(void)
{
	struct xk_ioc_status *st = calloc(1, sizeof(*st));
	int fd = open("/dev/xkernel", O_RDWR);

	if (!st || fd < 0) {
		perror("/dev/xkernel");
		return 1;
	}
	st->size = sizeof(*st);
	st->index = 0;
	if (ioctl(fd, XK_IOC_STATUS, st) || !st->found) {
		perror("status");
		return 1;
	}
	for (unsigned int i = 0; i < st->nr_spans && i < XK_MAX_SPANS; i++)
		printf("%s+%#llx %llx\n", st->spans[i].func,
		       (unsigned long long)st->spans[i].probe,
		       (unsigned long long)st->spans[i].addr);
	return 0;
}
