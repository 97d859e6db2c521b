// SPDX-License-Identifier: GPL-2.0
/* libxk: error reporting, printing, files and child processes. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

extern char **environ;

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

int xk_strlcpy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);

	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(dst, src, len + 1);
	return 0;
}

int xk_snprintf(char *dst, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

double xk_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

bool xk_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

int xk_mkdir_p(const char *path)
{
	char buf[XK_PATH_MAX];
	int err = xk_strlcpy(buf, path, sizeof(buf));

	if (err)
		return err;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int xk_rm_rf(const char *path)
{
	const char *argv[] = { "rm", "-rf", "--", path, NULL };
	struct xk_cmd cmd = { .argv = argv };

	return xk_run(&cmd) == 0 ? 0 : -EIO;
}

int xk_read_file(const char *path, char **buf, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *data = malloc(cap + 1);
	int fd, err = 0;

	if (!data)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(data);
		return -errno;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *bigger = realloc(data, cap * 2 + 1);

			if (!bigger) {
				err = -ENOMEM;
				break;
			}
			data = bigger;
			cap *= 2;
		}
		r = read(fd, data + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	if (err) {
		free(data);
		return err;
	}
	data[n] = '\0';
	*buf = data;
	if (len)
		*len = n;
	return 0;
}

int xk_write_file(const char *path, const void *buf, size_t len, int mode)
{
	char tmp[XK_PATH_MAX];
	const char *p = buf;
	int fd, err;

	err = xk_snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, getpid());
	if (err)
		return err;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			close(fd);
			unlink(tmp);
			return err;
		}
		p += w;
		len -= w;
	}
	if (close(fd) || rename(tmp, path)) {
		err = -errno;
		unlink(tmp);
		return err;
	}
	return 0;
}

int xk_copy_file(const char *src, const char *dst, int mode)
{
	size_t len;
	char *buf;
	int err;

	err = xk_read_file(src, &buf, &len);
	if (err)
		return err;
	err = xk_write_file(dst, buf, len, mode);
	free(buf);
	return err;
}

/* The last `lines` lines of a file, for error messages. */
int xk_file_tail(const char *path, int lines, char *out, size_t size)
{
	size_t len;
	char *buf, *p;
	int err;

	out[0] = '\0';
	err = xk_read_file(path, &buf, &len);
	if (err)
		return err;
	p = buf + len;
	while (p > buf && (p[-1] == '\n' || p[-1] == '\r'))
		p--;
	*p = '\0';
	while (p > buf && lines > 0) {
		p--;
		if (*p == '\n')
			lines--;
	}
	if (*p == '\n')
		p++;
	/* keep the end if the tail is longer than the buffer */
	if (strlen(p) >= size)
		p += strlen(p) - size + 1;
	xk_strlcpy(out, p, size);
	free(buf);
	return 0;
}

int xk_which(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");
	char buf[XK_PATH_MAX];

	if (strchr(name, '/'))
		return access(name, X_OK) ? -ENOENT : xk_strlcpy(out, name, size);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
	while (*path) {
		const char *end = strchrnul(path, ':');

		if (xk_snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - path),
				path, name) == 0 &&
		    access(buf, X_OK) == 0)
			return xk_strlcpy(out, buf, size);
		path = *end ? end + 1 : end;
	}
	return -ENOENT;
}

static char **env_with(const char *const *add)
{
	size_t n = 0, m = 0;
	char **env;

	while (environ[n])
		n++;
	while (add && add[m])
		m++;
	env = calloc(n + m + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < m; i++)
		env[i] = (char *)add[i];
	for (size_t i = 0; i < n; i++)
		env[m + i] = environ[i];
	return env;
}

int xk_run(const struct xk_cmd *cmd)
{
	posix_spawn_file_actions_t fa;
	int pipefd[2] = { -1, -1 };
	char **env = NULL;
	int status, err = 0;
	pid_t pid;
	char *out = NULL;
	size_t out_len = 0, out_cap = 0;

	if (cmd->capture && pipe2(pipefd, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (cmd->log_path) {
		posix_spawn_file_actions_addopen(&fa, 2, cmd->log_path,
						 O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (!cmd->capture)
			posix_spawn_file_actions_adddup2(&fa, 2, 1);
	}
	if (cmd->capture)
		posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	if (cmd->cwd)
		posix_spawn_file_actions_addchdir_np(&fa, cmd->cwd);
	if (cmd->env_add) {
		env = env_with(cmd->env_add);
		if (!env) {
			err = -ENOMEM;
			goto out;
		}
	}
	err = posix_spawnp(&pid, cmd->argv[0], &fa, NULL,
			   (char *const *)cmd->argv, env ? env : environ);
	if (err) {
		err = xk_err(-err, "cannot run %s: %s", cmd->argv[0],
			     strerror(err));
		goto out;
	}
	if (cmd->capture) {
		close(pipefd[1]);
		pipefd[1] = -1;
		for (;;) {
			ssize_t r;

			if (out_cap - out_len < 4096) {
				char *bigger = realloc(out, out_cap * 2 + 8192);

				if (!bigger)
					break;
				out = bigger;
				out_cap = out_cap * 2 + 8192;
			}
			r = read(pipefd[0], out + out_len, out_cap - out_len - 1);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			out_len += r;
		}
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			err = -errno;
			goto out;
		}
	}
	if (WIFEXITED(status))
		err = WEXITSTATUS(status);
	else
		err = xk_err(-EINTR, "%s was killed by signal %d", cmd->argv[0],
			     WTERMSIG(status));
	if (cmd->capture) {
		if (!out)
			out = calloc(1, 1);
		if (out)
			out[out_len] = '\0';
		*cmd->capture = out;
		out = NULL;
	}
out:
	free(out);
	free(env);
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	posix_spawn_file_actions_destroy(&fa);
	return err;
}

int xk_run_step(const char *what, const struct xk_cmd *cmd)
{
	char tail[1536] = "";
	int st = xk_run(cmd);

	if (st == 0)
		return 0;
	if (st < 0)
		return st;
	if (cmd->log_path)
		xk_file_tail(cmd->log_path, 6, tail, sizeof(tail));
	return xk_err(-EIO, "%s failed (%s exited with status %d)%s%s%s%s",
		      what, cmd->argv[0], st, cmd->log_path ? "; see " : "",
		      cmd->log_path ? cmd->log_path : "",
		      tail[0] ? "; last lines:\n" : "", tail);
}
