// SPDX-License-Identifier: GPL-2.0
/*
 * Child processes of xk itself (modprobe, insmod, xk tune's workload and
 * metric, gnuplot): started through libxk's one spawner (xk_spawn) from an
 * argument vector, never through a shell command line built from paths.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

int cli_spawn(const char *const *argv, int in_fd, int out_fd, int err_fd,
	      pid_t *pid)
{
	struct xk_cmd cmd = {
		.argv = argv, .in_fd = in_fd > 0 ? in_fd : 0,
		.out_fd = out_fd > 0 ? out_fd : 0, .err_fd = err_fd > 0 ? err_fd : 0,
	};

	return xk_spawn(&cmd, pid);
}

int cli_wait(pid_t pid)
{
	int st = xk_wait(pid, NULL);

	return st == -EINTR ? 128 : st;	/* killed by a signal */
}

/* Reads fd to its end, keeping the last size - 1 bytes in buf. */
static void read_tail(int fd, char *buf, size_t size)
{
	size_t len = 0;
	char chunk[1024];
	ssize_t r;

	buf[0] = '\0';
	while ((r = read(fd, chunk, sizeof(chunk))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		for (ssize_t i = 0; i < r; i++) {
			if (len == size - 1) {
				memmove(buf, buf + 1, len - 1);
				len--;
			}
			buf[len++] = chunk[i];
		}
	}
	buf[len] = '\0';
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
}

int cli_run(const char *const *argv, char *out, size_t size)
{
	int pipefd[2], st;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	st = cli_spawn(argv, -1, pipefd[1], pipefd[1], &pid);
	close(pipefd[1]);
	if (st) {
		close(pipefd[0]);
		snprintf(out, size, "cannot run %s: %s", argv[0], strerror(-st));
		return st;
	}
	read_tail(pipefd[0], out, size);
	close(pipefd[0]);
	return cli_wait(pid);
}
