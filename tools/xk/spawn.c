// SPDX-License-Identifier: GPL-2.0
/*
 * Child processes of xk itself (modprobe, insmod, xk tune's workload and
 * metric, gnuplot): started with posix_spawnp from an argument vector,
 * never through a shell command line built from paths.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

int cli_spawn(const char *const *argv, int in_fd, int out_fd, int err_fd,
	      pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	int err;

	posix_spawn_file_actions_init(&fa);
	if (in_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	if (err_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	err = posix_spawnp(pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return -err;
}

int cli_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
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
