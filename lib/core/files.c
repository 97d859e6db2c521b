// SPDX-License-Identifier: GPL-2.0
/* libxk core: bounded strings, files, the clock and the cache directory. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

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

char *xk_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static char cache_buf[XK_PATH_MAX];

const char *xk_cache_dir(const char *override)
{
	const char *env = getenv("XK_CACHE"), *home = getenv("HOME");

	if (override && *override)
		return override;
	if (env && *env)
		return env;
	if (xk_snprintf(cache_buf, sizeof(cache_buf), "%s/.cache/xkernel",
			home && *home ? home : "/root"))
		return "/var/cache/xkernel";
	return cache_buf;
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

int xk_read_file(const char *path, char **buf, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *data = malloc(cap + 1);
	int fd, err = 0;

	if (!data)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
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
				err = xk_err(-ENOMEM, "%s: out of memory", __func__);
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

/*
 * Runs where several xk processes may act on one tree (make -j building two
 * policies makes two xk gen of one kernel). flock, so a holder that dies
 * releases it; the first try does not block, so the wait is said.
 */
int xk_lock_file(const char *path, const char *what, int *fd)
{
	int err;

	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0)
		return xk_err(-errno, "cannot open the lock %s: %s", path,
			      strerror(errno));
	if (!flock(*fd, LOCK_EX | LOCK_NB))
		return 0;
	err = errno == EWOULDBLOCK ? 0 : -errno;
	if (!err) {
		pr_info("waiting for another xk's %s (%s)\n", what, path);
		err = flock(*fd, LOCK_EX) ? -errno : 0;
	}
	if (err) {
		close(*fd);
		*fd = -1;
		return xk_err(err, "cannot lock %s for %s: %s", path, what,
			      strerror(-err));
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
