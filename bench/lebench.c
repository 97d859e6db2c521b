// SPDX-License-Identifier: GPL-2.0
/*
 * bench/lebench.c: a LEBench-style suite of the kernel's core operations
 * (the op set and the statistic of "An Analysis of Performance Evolution of
 * Linux's Core Operations", SOSP 2019; our own code, none of theirs).
 *
 * Every op is timed with clock_gettime(CLOCK_MONOTONIC) around one run, many
 * runs per op; the figure reported is the k-closest estimate: sort the runs,
 * take the first window of K = 5 consecutive runs whose largest lies within
 * 5 % of its smallest, report that smallest (no window: the median, flagged).
 * Mean and standard deviation are of all runs.
 *
 * Output, one line per op (machine-readable; times in ns, which in the
 * deterministic guest (-icount shift=0) are guest instructions):
 *   # op kbest mean stdev n window
 *   getpid 412 433.1 57.2 4000 1
 *
 *   lebench [-s SCALE] [-d DIR] [-o OP[,OP...]] [-r]
 *     -s  multiply every run count by SCALE (default 1.0)
 *     -d  directory of the file ops' file (default /dev/shm: tmpfs)
 *     -o  run only these ops (names as printed)
 *     -r  also print every run, sorted ("# raw OP v...")
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096
#define K		5	/* runs in a k-closest window */
#define K_TOL		0.05	/* within 5 % of the window's smallest */
#define BIG_MSG		96000	/* LEBench's "big" send/recv */
#define MAX_PAGES	1000	/* big = 1,000 pages */
#define BASE		1000	/* runs of an op of weight 1 at scale 1 */
#define WARMUP		8	/* untimed runs before the timed ones */

static double scale = 1.0;
static const char *dir = "/dev/shm";
static const char *only;
static int raw;

static void die(const char *what)
{
	fprintf(stderr, "lebench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static inline uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* sorts v; prints one line */
static void report(const char *name, uint64_t *v, size_t n)
{
	double mean = 0, var = 0;
	uint64_t kbest = 0;
	int window = 0;
	size_t i;

	for (i = 0; i < n; i++)
		mean += (double)v[i];
	mean /= (double)n;
	for (i = 0; i < n; i++)
		var += ((double)v[i] - mean) * ((double)v[i] - mean);
	var = n > 1 ? var / (double)(n - 1) : 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i + K <= n; i++)
		if ((double)v[i + K - 1] <= (double)v[i] * (1.0 + K_TOL)) {
			kbest = v[i];
			window = 1;
			break;
		}
	if (!window)
		kbest = v[n / 2];
	if (raw) {
		printf("# raw %s", name);
		for (i = 0; i < n; i++)
			printf(" %llu", (unsigned long long)v[i]);
		printf("\n");
	}
	printf("%s %llu %.1f %.1f %zu %d\n", name, (unsigned long long)kbest,
	       mean, sqrt(var), n, window);
	fflush(stdout);
}

static int wanted(const char *name)
{
	const char *p = only;
	size_t len = strlen(name);

	if (!only)
		return 1;
	while (p && *p) {
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return 1;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return 0;
}

static size_t runs(double weight)
{
	double n = BASE * weight * scale;

	return n < 2 * K ? 2 * K : (size_t)n;
}

static uint64_t *samples(size_t n)
{
	uint64_t *v = calloc(n, sizeof(*v));

	if (!v)
		die("calloc");
	return v;
}

/*
 * ONE(name, weight, body...) times body, once per run, runs(weight) runs
 * after WARMUP untimed ones.
 */
#define ONE(name, weight, ...) do {					\
	if (wanted(name)) {						\
		size_t n_ = runs(weight), i_;				\
		uint64_t *v_ = samples(n_), t0_, t1_;			\
		for (i_ = 0; i_ < n_ + WARMUP; i_++) {			\
			t0_ = now();					\
			__VA_ARGS__;					\
			t1_ = now();					\
			if (i_ >= WARMUP)				\
				v_[i_ - WARMUP] = t1_ - t0_;		\
		}							\
		report(name, v_, n_);					\
		free(v_);						\
	}								\
} while (0)

static void op_ref_getpid(void)
{
	ONE("ref", 10, (void)0);
	ONE("getpid", 10, syscall(SYS_getpid));
}

/* two processes ping-pong one byte over two pipes: one round trip */
static void op_ctx(void)
{
	int a[2], b[2];
	char c = 0;
	pid_t pid;

	if (!wanted("ctxsw"))
		return;
	if (pipe(a) || pipe(b))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		while (read(a[0], &c, 1) == 1 && c != 'q')
			if (write(b[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	ONE("ctxsw", 2,
	    if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1) die("ctxsw"));
	c = 'q';
	if (write(a[1], &c, 1) != 1)
		die("ctxsw");
	waitpid(pid, NULL, 0);
	close(a[0]); close(a[1]); close(b[0]); close(b[1]);
}

static void xsend(int fd, const char *buf, size_t len)
{
	if (send(fd, buf, len, 0) != (ssize_t)len)
		die("send");
}

static void xrecv(int fd, char *buf, size_t len)
{
	if (recv(fd, buf, len, MSG_WAITALL) != (ssize_t)len)
		die("recv");
}

/* send(2) of len bytes, then recv(2) of them, each timed alone */
static void sendrecv(int sv[2], char *buf, size_t len, double weight,
		     const char *sname, const char *rname)
{
	size_t n = runs(weight), i;
	uint64_t *vs, *vr, t0, t1, t2;

	if (!wanted(sname) && !wanted(rname))
		return;
	vs = samples(n);
	vr = samples(n);
	for (i = 0; i < n + WARMUP; i++) {
		t0 = now();
		xsend(sv[0], buf, len);
		t1 = now();
		xrecv(sv[1], buf, len);
		t2 = now();
		if (i >= WARMUP) {
			vs[i - WARMUP] = t1 - t0;
			vr[i - WARMUP] = t2 - t1;
		}
	}
	if (wanted(sname))
		report(sname, vs, n);
	if (wanted(rname))
		report(rname, vr, n);
	free(vs);
	free(vr);
}

/* send(2)/recv(2) over a UNIX stream socket pair, one process */
static void op_sock(void)
{
	static char buf[BIG_MSG];
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair");
	sendrecv(sv, buf, 1, 4, "send", "recv");
	if (wanted("send_big") || wanted("recv_big")) {
		int sz = 4 * BIG_MSG;

		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	sendrecv(sv, buf, BIG_MSG, 0.5, "send_big", "recv_big");
	close(sv[0]);
	close(sv[1]);
}

static void fork_once(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (!pid)
		_exit(0);
	if (waitpid(pid, NULL, 0) != pid)
		die("waitpid");
}

static void *thread_fn(void *arg)
{
	return arg;
}

static void thread_once(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, thread_fn, NULL))
		die("pthread_create");
	pthread_join(t, NULL);
}

/* fork: fork, the child's _exit and the parent's waitpid, whole */
static void op_fork_thread(void)
{
	ONE("fork", 0.5, fork_once());
	ONE("thread", 1, thread_once());
}

static const struct size { const char *name; size_t pages; double w; } sizes[] = {
	{ "small", 1, 4 }, { "mid", 10, 2 }, { "big", MAX_PAGES, 0.05 },
};

/* pread/pwrite of a tmpfs file; mmap/munmap of it; an anonymous page fault */
static void op_file(void)
{
	char path[4096], name[64];
	char *buf = aligned_alloc(PAGE, MAX_PAGES * PAGE);
	size_t i;
	int fd;

	if (!buf)
		die("aligned_alloc");
	memset(buf, 'x', MAX_PAGES * PAGE);
	snprintf(path, sizeof(path), "%s/lebench.%d", dir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(path);
	unlink(path);
	if (pwrite(fd, buf, MAX_PAGES * PAGE, 0) != MAX_PAGES * PAGE)
		die("pwrite");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t len = sizes[i].pages * PAGE;

		snprintf(name, sizeof(name), "write_%s", sizes[i].name);
		ONE(name, sizes[i].w,
		    if (pwrite(fd, buf, len, 0) != (ssize_t)len) die("pwrite"));
		snprintf(name, sizeof(name), "read_%s", sizes[i].name);
		ONE(name, sizes[i].w,
		    if (pread(fd, buf, len, 0) != (ssize_t)len) die("pread"));
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t len = sizes[i].pages * PAGE, n = runs(2), j;
		uint64_t *vm = samples(n), *vu = samples(n), t0, t1, t2;
		char mname[64], uname[64];
		void *p;

		snprintf(mname, sizeof(mname), "mmap_%s", sizes[i].name);
		snprintf(uname, sizeof(uname), "munmap_%s", sizes[i].name);
		if (!wanted(mname) && !wanted(uname))
			continue;
		for (j = 0; j < n + WARMUP; j++) {
			t0 = now();
			p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			t1 = now();
			if (p == MAP_FAILED)
				die("mmap");
			munmap(p, len);
			t2 = now();
			if (j >= WARMUP) {
				vm[j - WARMUP] = t1 - t0;
				vu[j - WARMUP] = t2 - t1;
			}
		}
		if (wanted(mname))
			report(mname, vm, n);
		if (wanted(uname))
			report(uname, vu, n);
		free(vm);
		free(vu);
	}
	close(fd);
	free(buf);
	if (wanted("pagefault")) {
		size_t n = runs(2), j;
		uint64_t *v = samples(n), t0;
		volatile char *p;

		for (j = 0; j < n + WARMUP; j++) {
			p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				die("mmap");
			t0 = now();
			p[0] = 1;
			if (j >= WARMUP)
				v[j - WARMUP] = now() - t0;
			munmap((void *)p, PAGE);
		}
		report("pagefault", v, n);
		free(v);
	}
}

/*
 * select/poll/epoll_wait over N eventfds, every one readable (counter 1),
 * timeout 0: one pass over all of them, N ready.
 */
static void op_poll(void)
{
	static const struct { const char *sfx; int n; double w; } sets[] = {
		{ "", 10, 2 }, { "_big", 1000, 0.2 },
	};
	struct epoll_event *ev = calloc(1000, sizeof(*ev));
	struct pollfd *pfd = calloc(1000, sizeof(*pfd));
	int *fds = calloc(1000, sizeof(*fds));
	char name[64];
	size_t s;
	int i;

	if (!ev || !pfd || !fds)
		die("calloc");
	for (s = 0; s < 2; s++) {
		int n = sets[s].n, maxfd = -1, ep;
		fd_set rd;

		for (i = 0; i < n; i++) {
			fds[i] = eventfd(1, EFD_NONBLOCK);
			if (fds[i] < 0)
				die("eventfd");
			if (fds[i] >= FD_SETSIZE) {
				errno = EMFILE;
				die("eventfd beyond FD_SETSIZE");
			}
			if (fds[i] > maxfd)
				maxfd = fds[i];
			pfd[i].fd = fds[i];
			pfd[i].events = POLLIN;
		}
		snprintf(name, sizeof(name), "select%s", sets[s].sfx);
		ONE(name, sets[s].w,
		    FD_ZERO(&rd);
		    for (i = 0; i < n; i++) FD_SET(fds[i], &rd);
		    struct timeval tv = { 0, 0 };
		    if (select(maxfd + 1, &rd, NULL, NULL, &tv) != n) die("select"));
		snprintf(name, sizeof(name), "poll%s", sets[s].sfx);
		ONE(name, sets[s].w, if (poll(pfd, n, 0) != n) die("poll"));
		ep = epoll_create1(0);
		if (ep < 0)
			die("epoll_create1");
		for (i = 0; i < n; i++) {
			struct epoll_event e = { .events = EPOLLIN, .data.fd = fds[i] };

			if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &e))
				die("epoll_ctl");
		}
		snprintf(name, sizeof(name), "epoll%s", sets[s].sfx);
		ONE(name, sets[s].w,
		    if (epoll_wait(ep, ev, n, 0) != n) die("epoll_wait"));
		close(ep);
		for (i = 0; i < n; i++)
			close(fds[i]);
	}
	free(ev);
	free(pfd);
	free(fds);
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	int opt;

	while ((opt = getopt(argc, argv, "s:d:o:r")) != -1) {
		switch (opt) {
		case 's': scale = strtod(optarg, NULL); break;
		case 'd': dir = optarg; break;
		case 'o': only = optarg; break;
		case 'r': raw = 1; break;
		default:
			fprintf(stderr, "usage: lebench [-s SCALE] [-d DIR] [-o OP,...] [-r]\n");
			return 2;
		}
	}
	if (!(scale > 0)) {
		fprintf(stderr, "lebench: -s wants a positive number\n");
		return 2;
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < 1100) {
		rl.rlim_cur = rl.rlim_max < 1100 ? rl.rlim_max : 1100;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	printf("# op kbest mean stdev n window (ns; K=%d within %.0f%%; scale %g)\n",
	       K, K_TOL * 100, scale);
	op_ref_getpid();
	op_ctx();
	op_sock();
	op_fork_thread();
	op_file();
	op_poll();
	return 0;
}
