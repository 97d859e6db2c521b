// SPDX-License-Identifier: GPL-2.0
/*
 * libxk core: child processes, started one way (xk_spawn) for every part:
 * the kernel's builds, Debian's tools, virtiofsd and QEMU.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

extern char **environ;

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

/*
 * A make xk starts is a build of its own (the kernel's), never a sub-make of
 * whatever make runs xk: the caller's MAKEFLAGS would hand it a jobserver
 * it cannot reach and the caller's command-line variables (make CC=clang
 * of this project would build the kernel's baseline with clang).
 */
static bool inherited_make_var(const char *var)
{
	static const char *const names[] = { "MAKEFLAGS=", "MFLAGS=",
		"MAKELEVEL=", "MAKEOVERRIDES=", "GNUMAKEFLAGS=" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strncmp(var, names[i], strlen(names[i])))
			return true;
	return false;
}

/* The environment of a child: add first, then ours, less make's for make. */
static char **env_with(const char *const *add, bool make)
{
	size_t n = 0, m = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	while (add && add[m])
		m++;
	env = calloc(n + m + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < m; i++)
		env[k++] = (char *)add[i];
	for (size_t i = 0; i < n; i++)
		if (!make || !inherited_make_var(environ[i]))
			env[k++] = environ[i];
	return env;
}

/*
 * A command run in a Debian system root (cmd->root: a kernel's toolchain,
 * made by mmdebstrap for a suite other than the host's): in a mount
 * namespace of its own (unshare), the host's top-level directories bound
 * over the root at the same paths except the system's own (/usr, /etc,
 * /var, ...: the root's), then chroot and the same working directory. So
 * every path of the host outside those reads the same inside, and the
 * compiler, binutils and libraries are the root's. The mounts end with
 * the namespace.
 */
static const char in_root_sh[] =
	"root=$1; shift\n"
	"for d in /*; do\n"
	"  [ -d \"$d\" ] && [ ! -L \"$d\" ] || continue\n"
	"  case $d in /usr|/bin|/sbin|/lib|/lib32|/lib64|/libx32|/etc|/var|"
	"/boot|/lost+found) continue;; esac\n"
	"  mkdir -p \"$root$d\" && mount --rbind \"$d\" \"$root$d\" || exit 126\n"
	"done\n"
	"case $(pwd)/ in /usr/*|/bin/*|/sbin/*|/lib/*|/lib32/*|/lib64/*|/libx32/*|"
	"/etc/*|/var/*|/boot/*)\n"
	"  echo \"xk: the working directory $(pwd) is the toolchain root's own "
	"there, not this host's\" >&2; exit 126;;\n"
	"esac\n"
	"exec chroot \"$root\" /bin/sh -c 'cd \"$0\" && exec \"$@\"' \"$(pwd)\" \"$@\"\n";

static const char **argv_in_root(const struct xk_cmd *cmd)
{
	static const char *const head[] = { "unshare", "--mount",
		"--propagation", "private", "--", "/bin/sh", "-c", in_root_sh,
		"xk-in-root" };
	size_t n = 0, h = ARRAY_SIZE(head);
	const char **argv;

	while (cmd->argv[n])
		n++;
	argv = calloc(h + 1 + n + 1, sizeof(*argv));
	if (!argv)
		return NULL;
	memcpy(argv, head, sizeof(head));
	argv[h] = cmd->root;
	memcpy(argv + h + 1, cmd->argv, n * sizeof(*argv));
	return argv;
}

/* capture_fd: the write end of a pipe for standard output, or -1. */
static int spawn_fd(const struct xk_cmd *cmd, int capture_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	const char **argv = (const char **)cmd->argv;
	char **env = NULL;
	bool is_make;
	int err;

	if (cmd->root && *cmd->root) {
		char sh[XK_PATH_MAX];

		if (cmd->root[0] != '/')
			return xk_err(-EINVAL, "cannot run %s: the toolchain root "
					       "%s is no absolute path",
				      cmd->argv[0], cmd->root);
		if (geteuid())
			return xk_err(-EPERM, "cannot run %s in the toolchain root "
					      "%s: only root can (a mount namespace "
					      "and chroot)", cmd->argv[0], cmd->root);
		if (xk_snprintf(sh, sizeof(sh), "%s/bin/sh", cmd->root) ||
		    access(sh, X_OK))
			return xk_err(-ENOENT, "cannot run %s: the toolchain "
					       "root %s is missing or "
					       "incomplete (xk kernel fetch "
					       "makes it again)",
				      cmd->argv[0], cmd->root);
		argv = argv_in_root(cmd);
		if (!argv)
			return xk_err(-ENOMEM, "cannot run %s: out of memory",
				      cmd->argv[0]);
	}

	is_make = !strcmp(cmd->argv[0], "make");
	if (cmd->env_add || is_make) {
		env = env_with(cmd->env_add, is_make);
		if (!env) {
			if (argv != (const char **)cmd->argv)
				free(argv);
			return xk_err(-ENOMEM, "cannot run %s: out of memory",
				      cmd->argv[0]);
		}
	}
	posix_spawn_file_actions_init(&fa);
	if (cmd->in_fd > 0)
		posix_spawn_file_actions_adddup2(&fa, cmd->in_fd, 0);
	else if (!cmd->inherit_stdin)
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (cmd->err_fd > 0)
		posix_spawn_file_actions_adddup2(&fa, cmd->err_fd, 2);
	else if (cmd->log_path)
		posix_spawn_file_actions_addopen(&fa, 2, cmd->log_path,
						 O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (capture_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, capture_fd, 1);
	else if (cmd->out_fd > 0)
		posix_spawn_file_actions_adddup2(&fa, cmd->out_fd, 1);
	else if (cmd->log_path && cmd->err_fd <= 0)
		posix_spawn_file_actions_adddup2(&fa, 2, 1);
	else if (cmd->log_path)
		posix_spawn_file_actions_addopen(&fa, 1, cmd->log_path,
						 O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (cmd->cwd)
		posix_spawn_file_actions_addchdir_np(&fa, cmd->cwd);
	err = posix_spawnp(pid, argv[0], &fa, NULL, (char *const *)argv,
			   env ? env : environ);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	if (argv != (const char **)cmd->argv)
		free(argv);
	if (err)
		return xk_err(-err, "cannot run %s: %s", cmd->argv[0],
			      strerror(err));
	return 0;
}

int xk_spawn(const struct xk_cmd *cmd, pid_t *pid)
{
	if (cmd->capture)
		return xk_err(-EINVAL, "xk_spawn: capture needs xk_run");
	return spawn_fd(cmd, -1, pid);
}

int xk_wait(pid_t pid, pid_t *reaped)
{
	int status;
	pid_t got;

	while ((got = waitpid(pid, &status, 0)) < 0) {
		if (errno != EINTR)
			return xk_err(-errno, "waiting for a child: %s",
				      strerror(errno));
	}
	if (reaped)
		*reaped = got;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return xk_err(-EINTR, "process %d was killed by signal %d", (int)got,
		      WTERMSIG(status));
}

void xk_stop(pid_t pid, int sig)
{
	if (pid <= 0)
		return;
	kill(pid, sig);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* Reads fd to its end into a malloc'd, NUL-terminated buffer. */
static int read_all(int fd, const char *what, char **out)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;

	for (;;) {
		ssize_t r;

		if (cap - len < 4096) {
			char *bigger = realloc(buf, cap * 2 + 8192);

			if (!bigger) {
				free(buf);
				return xk_err(-ENOMEM, "the output of %s: out of "
						       "memory", what);
			}
			buf = bigger;
			cap = cap * 2 + 8192;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return xk_err(-errno, "reading the output of %s: %s", what,
				      strerror(errno));
		}
		if (r == 0)
			break;
		len += r;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

int xk_run(const struct xk_cmd *cmd)
{
	int pipefd[2] = { -1, -1 };
	char *out = NULL;
	int err, st;
	pid_t pid;

	if (cmd->capture && pipe2(pipefd, O_CLOEXEC))
		return xk_err(-errno, "cannot run %s: %s", cmd->argv[0],
			      strerror(errno));
	err = spawn_fd(cmd, pipefd[1], &pid);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (err) {
		if (pipefd[0] >= 0)
			close(pipefd[0]);
		return err;
	}
	if (cmd->capture) {
		err = read_all(pipefd[0], cmd->argv[0], &out);
		close(pipefd[0]);
	}
	st = xk_wait(pid, NULL);
	if (err || st < 0) {
		free(out);
		return err ?: st;
	}
	if (cmd->capture)
		*cmd->capture = out;
	return st;
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

/* Removes a tree (rm -rf: no recursion of our own over a hostile tree). */
int xk_rm_rf(const char *path)
{
	const char *argv[] = { "rm", "-rf", "--", path, NULL };
	struct xk_cmd cmd = { .argv = argv };

	return xk_run(&cmd) == 0 ? 0 : -EIO;
}
