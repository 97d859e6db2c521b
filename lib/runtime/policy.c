// SPDX-License-Identifier: GPL-2.0
/*
 * libxk: loading and unloading eBPF policies (Xk-tunes) with libbpf.
 *
 * A load, in order (any failure undoes what was done before it):
 *   open_object()       the policy's BPF object
 *   set_params()        --param NAME=VALUE into its read-only data
 *   check_values()      every parameter typed xk_<CONSTANT>_t within the
 *                       constant's bounds (the glue defines those types)
 *   load_object()       the verifier (its log comes back in the error)
 *   load_tables()       each scope table into xkernel.ko, validated against
 *                       the live text, probes disarmed, values from the policy;
 *                       the module answers with each constant's handle
 *   attach_programs()   a program at a span's probe point goes to the module
 *                       with the handle | span (XK_IOC_POLICY_PROG): the
 *                       module runs it from its own probe there, with that
 *                       cookie, the only calls of xk_choose it obeys; any
 *                       other program is attached as its section says
 *   commit_programs()   each constant's programs start running, all at
 *                       once (none runs while another span waits)
 *   pin_links()         those programs' links pinned under
 *                       /sys/fs/bpf/xkernel/<policy>/ so that they outlive
 *                       xk (the directory marks the policy loaded)
 * An unload unpins the links, waits (bounded) until the programs are gone,
 * then unloads the constants.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "xk/runtime.h"
#include "xk/scope.h"
#include "xk/abi/xk_kfunc.h"

#define BPF_FS "/sys/fs/bpf"
#define BPF_FS_MAGIC_NR 0xcafe4a11
#define MAX_PROGS 64

/* libbpf's messages, kept for the error of a failed load (the verifier's) */
static char libbpf_log[16384];
static size_t libbpf_log_len;

static int keep_libbpf_print(enum libbpf_print_level level, const char *fmt,
			     va_list ap)
{
	static char line[16384];	/* a verifier log comes as one message */
	int n;

	if (level == LIBBPF_DEBUG)
		return 0;
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n <= 0)
		return 0;
	/* keep the end: the verifier's reason is last */
	if (libbpf_log_len + strlen(line) >= sizeof(libbpf_log)) {
		size_t drop = libbpf_log_len + strlen(line) - sizeof(libbpf_log) + 1;

		if (drop > libbpf_log_len)
			drop = libbpf_log_len;
		memmove(libbpf_log, libbpf_log + drop, libbpf_log_len - drop);
		libbpf_log_len -= drop;
	}
	memcpy(libbpf_log + libbpf_log_len, line, strlen(line));
	libbpf_log_len += strlen(line);
	libbpf_log[libbpf_log_len] = '\0';
	return 0;
}

/*
 * The end of libbpf's log, for an error message: the verifier's last words
 * (just before the end of the program's load log) when there are any.
 */
static const char *log_tail(void)
{
	static char out[1024];
	const char *end = strstr(libbpf_log, "-- END PROG LOAD LOG --");
	const char *p;
	int lines = 0;

	if (!end)
		end = libbpf_log + libbpf_log_len;
	p = end;
	while (p > libbpf_log && lines < 3)
		if (*--p == '\n' && p + 1 < end)
			lines++;
	if (*p == '\n')
		p++;
	snprintf(out, sizeof(out), "%.*s", (int)(end - p), p);
	for (char *q = out; *q; q++)
		if (*q == '\n')
			*q = ' ';
	return out;
}

struct policy_load {
	const char *path;
	char id[XK_NAME_MAX];
	const struct xk_scope *tables;
	int nr_tables;
	const struct xk_policy_opts *opts;
	struct bpf_object *obj;
	struct bpf_map *rodata;
	void *rodata_copy;
	size_t rodata_size;
	struct btf *btf;
	const struct btf_type *datasec;
	int fd;
	int nr_loaded;
	unsigned long long cookies[XK_TX_MAX];	/* per table: its handle */
	struct bpf_link *links[MAX_PROGS];
	const struct bpf_program *linked[MAX_PROGS];	/* links[i]'s program */
	int nr_links;
	char pin_dir[XK_PATH_MAX];
	bool pinned;
	struct xk_policy_result *res;
};

/* The policy's name: the object's file name less .bpf.o / .o. */
static int policy_id(const char *path, char *id, size_t size)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n > 6 && !strcmp(base + n - 6, ".bpf.o"))
		n -= 6;
	else if (n > 2 && !strcmp(base + n - 2, ".o"))
		n -= 2;
	if (!n || n >= size)
		return xk_err(-EINVAL, "%s: cannot name a policy after this file", path);
	memcpy(id, base, n);
	id[n] = '\0';
	return 0;
}

static int open_object(struct policy_load *p)
{
	struct stat st;
	int err;

	if (stat(p->path, &st))
		return xk_err(-errno, "policy %s: %s", p->path, strerror(errno));
	p->obj = bpf_object__open_file(p->path, NULL);
	err = libbpf_get_error(p->obj);
	if (err) {
		p->obj = NULL;
		return xk_err(err, "policy %s is not a BPF object libbpf can open: %s",
			      p->path, log_tail());
	}
	p->btf = bpf_object__btf(p->obj);
	if (!p->btf)
		return xk_err(-EINVAL, "policy %s has no BTF (build it with clang -g)",
			      p->path);
	/* parameters are const volatile: in .rodata */
	for (struct bpf_map *m = bpf_object__next_map(p->obj, NULL); m;
	     m = bpf_object__next_map(p->obj, m)) {
		const char *name = bpf_map__name(m);
		size_t n = strlen(name);

		if (bpf_map__is_internal(m) && n >= 7 && !strcmp(name + n - 7, ".rodata")) {
			const void *init = bpf_map__initial_value(m, &p->rodata_size);

			p->rodata = m;
			p->rodata_copy = malloc(p->rodata_size);
			if (!p->rodata_copy)
				return xk_err(-ENOMEM, "%s: out of memory", __func__);
			memcpy(p->rodata_copy, init, p->rodata_size);
		}
	}
	if (p->rodata) {
		int id = btf__find_by_name_kind(p->btf, ".rodata", BTF_KIND_DATASEC);

		p->datasec = id > 0 ? btf__type_by_id(p->btf, id) : NULL;
	}
	return 0;
}

static const struct btf_var_secinfo *find_var(struct policy_load *p, const char *name);

/*
 * The kfunc interface the object was built for (xk_kfunc_abi, defined by
 * xk_policy.h) is this xkernel's: an object built against another would
 * call kfuncs that are not there, or not so.
 */
static int check_abi(struct policy_load *p)
{
	const struct btf_var_secinfo *vs = find_var(p, "xk_kfunc_abi");
	unsigned int abi = 0;

	if (vs && vs->size == sizeof(abi))
		memcpy(&abi, (char *)p->rodata_copy + vs->offset, sizeof(abi));
	if (!vs)
		return xk_err(-ENOEXEC, "policy %s was built against an older "
			      "xk_policy.h (no xk_kfunc_abi; kfunc interface 1): "
			      "rebuild it with this xkernel's xk_policy.h and glue "
			      "(make policies)", p->id);
	if (abi != XK_KFUNC_ABI)
		return xk_err(-ENOEXEC, "policy %s was built for kfunc interface %u, "
			      "this xkernel has %u: rebuild it (make policies)",
			      p->id, abi, XK_KFUNC_ABI);
	return 0;
}

/* A .rodata variable by name: its offset, size and type. */
static const struct btf_var_secinfo *find_var(struct policy_load *p, const char *name)
{
	const struct btf_var_secinfo *vs;

	if (!p->datasec)
		return NULL;
	vs = btf_var_secinfos(p->datasec);
	for (int i = 0; i < btf_vlen(p->datasec); i++, vs++) {
		const struct btf_type *v = btf__type_by_id(p->btf, vs->type);

		if (!strcmp(btf__name_by_offset(p->btf, v->name_off), name))
			return vs;
	}
	return NULL;
}

/* Past const, volatile and typedefs other than xk_<CONSTANT>_t. */
static const struct btf_type *var_type(struct policy_load *p,
				       const struct btf_var_secinfo *vs,
				       const char **constant, size_t *len)
{
	const struct btf_type *t = btf__type_by_id(p->btf, vs->type);

	*constant = NULL;
	t = btf__type_by_id(p->btf, t->type);	/* the VAR's type */
	while (t && (btf_is_const(t) || btf_is_volatile(t) || btf_is_typedef(t))) {
		if (btf_is_typedef(t)) {
			const char *n = btf__name_by_offset(p->btf, t->name_off);
			size_t l = strlen(n);

			if (!*constant && l > 5 && !strncmp(n, "xk_", 3) &&
			    !strcmp(n + l - 2, "_t")) {
				*constant = n + 3;
				*len = l - 5;
			}
		}
		t = btf__type_by_id(p->btf, t->type);
	}
	return t;
}

static int set_params(struct policy_load *p)
{
	const struct xk_policy_opts *o = p->opts;
	int nr = OPTS_GET(o, nr_params, 0);
	const char *const *params = OPTS_GET(o, params, NULL);

	for (int i = 0; i < nr; i++) {
		const char *eq = strchr(params[i], '=');
		char name[128];
		const struct btf_var_secinfo *vs;
		const struct btf_type *t;
		const char *constant;
		size_t clen;

		if (!eq || eq == params[i] || (size_t)(eq - params[i]) >= sizeof(name))
			return xk_err(-EINVAL, "parameter '%s' is not NAME=VALUE", params[i]);
		snprintf(name, sizeof(name), "%.*s", (int)(eq - params[i]), params[i]);
		if (!strcmp(name, "xk_kfunc_abi"))
			return xk_err(-EINVAL, "xk_kfunc_abi is not a parameter");
		vs = find_var(p, name);
		if (!vs)
			return xk_err(-ENOENT, "policy %s has no parameter %s (parameters "
				      "are its const volatile globals)", p->id, name);
		t = var_type(p, vs, &constant, &clen);
		if (t && btf_is_int(t)) {
			char *end;
			long long v;

			errno = 0;
			v = strtoll(eq + 1, &end, 0);
			if (errno || end == eq + 1 || *end)
				return xk_err(-EINVAL, "parameter %s: '%s' is not a number",
					      name, eq + 1);
			if (vs->size < 8 && (v >= (1LL << (vs->size * 8)) ||
					     v < -(1LL << (vs->size * 8 - 1))))
				return xk_err(-ERANGE, "parameter %s: %lld does not fit "
					      "%u bytes", name, v, vs->size);
			memcpy((char *)p->rodata_copy + vs->offset, &v, vs->size);
		} else if (t && btf_is_array(t)) {
			size_t n = strlen(eq + 1);

			if (n >= vs->size)
				return xk_err(-E2BIG, "parameter %s: '%s' is longer than "
					      "%u bytes", name, eq + 1, vs->size - 1);
			memset((char *)p->rodata_copy + vs->offset, 0, vs->size);
			memcpy((char *)p->rodata_copy + vs->offset, eq + 1, n);
		} else {
			return xk_err(-EINVAL, "parameter %s: only integers and strings "
				      "can be set", name);
		}
	}
	return 0;
}

/* Parameters typed xk_<CONSTANT>_t: the constant is loaded, the value in bounds. */
static int check_values(struct policy_load *p)
{
	const struct btf_var_secinfo *vs;

	if (!p->datasec)
		return 0;
	vs = btf_var_secinfos(p->datasec);
	for (int i = 0; i < btf_vlen(p->datasec); i++, vs++) {
		const char *name = btf__name_by_offset(p->btf,
				btf__type_by_id(p->btf, vs->type)->name_off);
		const struct xk_scope *t = NULL;
		const char *constant;
		long long v;
		size_t len;

		var_type(p, vs, &constant, &len);
		if (!constant)
			continue;
		for (int k = 0; k < p->nr_tables; k++)
			if (strlen(p->tables[k].constant) == len &&
			    !strncmp(p->tables[k].constant, constant, len))
				t = &p->tables[k];
		if (!t)
			return xk_err(-EINVAL, "parameter %s holds a value of %.*s, which "
				      "this load does not include", name, (int)len,
				      constant);
		if (vs->size != sizeof(v))
			return xk_err(-EINVAL, "parameter %s: a value is 8 bytes", name);
		memcpy(&v, (char *)p->rodata_copy + vs->offset, sizeof(v));
		if (v < t->min || v > t->max)
			return xk_err(-ERANGE, "parameter %s: %lld is out of the bounds "
				      "of %s [%lld, %lld]", name, v, t->constant,
				      (long long)t->min, (long long)t->max);
	}
	return 0;
}

/*
 * Whether libbpf loads the program sleepable: its flag, or a section type
 * ending in ".s" (uprobe.s, lsm.s, fentry.s...), which libbpf turns into the
 * flag only in the load request.
 */
static bool sleepable(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);
	size_t n = strcspn(sec, "/");

	return (bpf_program__flags(prog) & BPF_F_SLEEPABLE) ||
	       (n >= 2 && !strncmp(sec + n - 2, ".s", 2));
}

static int load_object(struct policy_load *p)
{
	struct bpf_program *prog;
	int err = 0;

	if (p->rodata)
		err = bpf_map__set_initial_value(p->rodata, p->rodata_copy,
						 p->rodata_size);
	if (err)
		return xk_err(err, "policy %s: cannot set its parameters", p->id);
	libbpf_log_len = 0;
	libbpf_log[0] = '\0';
	err = bpf_object__load(p->obj);
	if (!err)
		return 0;
	/* the module's kfunc filter hides xk_choose from these programs */
	bpf_object__for_each_program(prog, p->obj)
		if (sleepable(prog))
			return xk_err(err, "policy %s refused by the kernel: program %s "
				      "(%s) is sleepable, and xkernel's kfunc is refused "
				      "to sleepable programs (an unload could not wait "
				      "for them): %s", p->id, bpf_program__name(prog),
				      bpf_program__section_name(prog), log_tail());
	return xk_err(err, "policy %s refused by the kernel: %s", p->id,
		      log_tail());
}

static int load_tables(struct policy_load *p)
{
	for (int i = 0; i < p->nr_tables; i++) {
		XK_OPTS(xk_rt_load_opts, o, .policy = p->id,
			.partial = OPTS_GET(p->opts, partial, false));
		struct xk_rt_result r;
		int err = xk_rt_load(p->fd, &p->tables[i], p->tables[i].def, &o, &r);

		if (err)
			return err;
		p->cookies[p->nr_loaded++] = r.policy_cookie;
		p->res->load_ns += r.load_ns;
		p->res->nr_spans += r.nr_spans;
	}
	return 0;
}

/*
 * The span a program's section names ("kprobe/FUNC+OFF"), as the attach
 * cookie the module bound to it: handle | the span's index in the module
 * (the table's supported spans, in order). 0: at no span of this load (a
 * program of the author's own: it may run, its kfunc calls are refused).
 * Several constants with a span at one address: the program named
 * CONSTANT_span<i>, as the glue names them, decides; else refused.
 */
static int span_cookie(struct policy_load *p, const struct bpf_program *prog,
		       char *func, size_t func_size, unsigned long long *off,
		       unsigned long long *cookie)
{
	const char *sec = bpf_program__section_name(prog);
	const char *name = bpf_program__name(prog);
	const char *plus;
	bool named = false;
	int found = 0;
	char *end;

	*cookie = 0;
	*off = 0;
	if (strncmp(sec, "kprobe/", 7) || !sec[7])
		return 0;
	sec += 7;
	plus = strchr(sec, '+');
	if ((size_t)(plus ? plus - sec : (long)strlen(sec)) >= func_size)
		return 0;
	snprintf(func, func_size, "%.*s", (int)(plus ? plus - sec : (long)strlen(sec)), sec);
	if (plus) {
		errno = 0;
		*off = strtoull(plus + 1, &end, 0);
		if (errno || *end)
			return xk_err(-EINVAL, "policy %s: program %s: cannot read the "
				      "offset in its section kprobe/%s", p->id, name, sec);
	}
	for (int k = 0; k < p->nr_tables; k++) {
		const struct xk_scope *t = &p->tables[k];

		for (int i = 0, m = 0; i < t->nr_spans; i++) {
			const struct xk_scope_span *s = &t->spans[i];
			char want[XK_NAME_MAX + 32];

			if (s->cls == XK_SPAN_UNSUPPORTED)
				continue;
			if (!strcmp(s->func, func) && s->probe == *off) {
				snprintf(want, sizeof(want), "%s_span%d", t->constant, i);
				/* the glue's own name settles a shared address */
				if (!strcmp(name, want)) {
					*cookie = p->cookies[k] | (unsigned long long)m;
					named = true;
				} else if (!named) {
					*cookie = p->cookies[k] | (unsigned long long)m;
				}
				found++;
			}
			m++;
		}
	}
	if (found > 1 && !named)
		return xk_err(-EINVAL, "policy %s: program %s is at a probe point several "
			      "constants have a span at; name it CONSTANT_span<i> as "
			      "the glue does", p->id, name);
	return 0;
}

/*
 * XK_IOC_POLICY_PROG, the one request for both steps below: a span's
 * program (prog_fd) or the commit (-1); what names it in the error.
 */
static int policy_prog(struct policy_load *p, unsigned long long cookie,
		       int prog_fd, const char *what)
{
	struct xk_ioc_policy_prog req = { .size = sizeof(req),
					  .prog_fd = prog_fd, .cookie = cookie };

	if (ioctl(p->fd, XK_IOC_POLICY_PROG, &req))
		return xk_err(-errno, "policy %s: the module refused %s: %s", p->id,
			      what, req.error[0] ? req.error : strerror(errno));
	return 0;
}

/*
 * A span's program goes to the module, which runs it from its own kprobe
 * at the span's probe point (XK_IOC_POLICY_PROG) and holds it until the
 * constant is unloaded: no perf event and no link between the probe and
 * the program, and nothing to pin.
 */
static int give_program(struct policy_load *p, const struct bpf_program *prog,
			unsigned long long cookie)
{
	char what[XK_NAME_MAX + 160];

	snprintf(what, sizeof(what), "program %s (%s)", bpf_program__name(prog),
		 bpf_program__section_name(prog));
	return policy_prog(p, cookie, bpf_program__fd(prog), what);
}

/*
 * The spans' programs start running, per constant, once all of them are
 * in the module (no hit chooses while another span of the constant still
 * waits for its program): prog_fd -1 commits.
 */
static int commit_programs(struct policy_load *p)
{
	int err = 0;

	for (int k = 0; k < p->nr_loaded && !err; k++) {
		char what[XK_NAME_MAX + 64];

		snprintf(what, sizeof(what), "to start its programs for %s",
			 p->tables[k].constant);
		err = policy_prog(p, p->cookies[k], -1, what);
	}
	return err;
}

static int attach_programs(struct policy_load *p)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, p->obj) {
		char func[XK_FUNC_MAX];
		unsigned long long off, cookie;
		struct bpf_link *link;
		int err;

		if (p->nr_links == MAX_PROGS)
			return xk_err(-E2BIG, "policy %s: more than %d programs", p->id,
				      MAX_PROGS);
		err = span_cookie(p, prog, func, sizeof(func), &off, &cookie);
		if (err)
			return err;
		if (cookie) {
			err = give_program(p, prog, cookie);
			if (err)
				return err;
			p->res->nr_programs++;
			continue;
		}
		link = bpf_program__attach(prog);
		err = libbpf_get_error(link);
		if (err)
			return xk_err(err, "policy %s: cannot attach %s (%s): %s", p->id,
				      bpf_program__name(prog),
				      bpf_program__section_name(prog), log_tail());
		p->linked[p->nr_links] = prog;
		p->links[p->nr_links++] = link;
		p->res->nr_programs++;
	}
	return 0;
}

static int mount_bpffs(void)
{
	struct statfs fs;

	if (!statfs(BPF_FS, &fs) && fs.f_type == BPF_FS_MAGIC_NR)
		return 0;
	if (mount("bpf", BPF_FS, "bpf", 0, NULL))
		return xk_err(-errno, "cannot mount the BPF file system on %s: %s",
			      BPF_FS, strerror(errno));
	return 0;
}

static int pin_links(struct policy_load *p)
{
	int err = mount_bpffs();

	err = err ?: xk_mkdir_p(p->pin_dir);
	if (err)
		return err;
	p->pinned = true;
	for (int i = 0; i < p->nr_links; i++) {
		char path[XK_PATH_MAX + 128];

		snprintf(path, sizeof(path), "%s/%s", p->pin_dir,
			 bpf_program__name(p->linked[i]));
		err = bpf_link__pin(p->links[i], path);
		if (err)
			return xk_err(err, "cannot pin %s: %s", path, strerror(-err));
	}
	return 0;
}

/* Program ids of the links pinned in dir (to wait for them to go). */
static int pinned_programs(const char *dir, unsigned int *ids, int max)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		struct bpf_link_info info;
		__u32 len = sizeof(info);
		char path[XK_PATH_MAX + 300];
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			ids[n++] = info.prog_id;
		close(fd);
	}
	closedir(d);
	return n;
}

/*
 * Unpins a policy's links and waits until its programs are freed (the
 * kernel releases a link asynchronously): at most timeout_ms, polling.
 * Returns the number of programs still alive at the end; *nr_pinned (if
 * asked) gets how many were pinned.
 */
static int unpin_policy(const char *id, unsigned int timeout_ms, int *nr_pinned)
{
	char dir[XK_PATH_MAX];
	unsigned int ids[MAX_PROGS];
	int n, alive = 0;

	snprintf(dir, sizeof(dir), "%s/xkernel/%s", BPF_FS, id);
	n = pinned_programs(dir, ids, MAX_PROGS);
	if (nr_pinned)
		*nr_pinned = n;
	xk_rm_rf(dir);
	for (unsigned int waited = 0;; waited += 10) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		alive = 0;
		for (int i = 0; i < n; i++) {
			int fd = bpf_prog_get_fd_by_id(ids[i]);

			if (fd >= 0) {
				alive++;
				close(fd);
			}
		}
		if (!alive || waited >= timeout_ms)
			break;
		nanosleep(&ts, NULL);
	}
	return alive;
}

/* Seconds since *t into *into; *t moves on. */
static void lap(double *t, double *into)
{
	double now = xk_now();

	*into = now - *t;
	*t = now;
}

static int xk_policy_load_impl(int fd, const char *obj_path, const struct xk_scope *tables,
			       int nr_tables, const struct xk_policy_opts *opts,
			       struct xk_policy_result *res)
{
	struct policy_load p = { .path = obj_path, .tables = tables,
				 .nr_tables = nr_tables, .opts = opts, .fd = fd,
				 .res = res };
	libbpf_print_fn_t old_print;
	double t;
	int err;

	memset(res, 0, sizeof(*res));
	if (!OPTS_VALID(opts, xk_policy_opts))
		return xk_err(-EINVAL, "xk_policy_opts: unknown fields");
	if (nr_tables < 1 || nr_tables > XK_TX_MAX)
		return xk_err(-EINVAL, "a policy drives 1 to %d constants", XK_TX_MAX);
	err = policy_id(obj_path, p.id, sizeof(p.id));
	if (err)
		return err;
	snprintf(p.pin_dir, sizeof(p.pin_dir), "%s/xkernel/%s", BPF_FS, p.id);
	if (xk_exists(p.pin_dir))
		return xk_err(-EEXIST, "policy %s is already loaded (xk unload one of "
			      "its constants first)", p.id);
	xk_strlcpy(res->id, p.id, sizeof(res->id));
	old_print = libbpf_set_print(keep_libbpf_print);
	libbpf_log_len = 0;

	t = xk_now();
	err = open_object(&p);
	err = err ?: check_abi(&p);
	err = err ?: set_params(&p);
	err = err ?: check_values(&p);
	lap(&t, &res->open_s);
	err = err ?: load_object(&p);
	lap(&t, &res->verify_s);
	err = err ?: load_tables(&p);
	lap(&t, &res->tables_s);
	err = err ?: attach_programs(&p);
	err = err ?: commit_programs(&p);
	lap(&t, &res->attach_s);
	err = err ?: pin_links(&p);
	lap(&t, &res->pin_s);

	/* pinned, the links outlive these descriptors; else they detach */
	for (int i = 0; i < p.nr_links; i++)
		bpf_link__destroy(p.links[i]);
	if (err && p.pinned)
		unpin_policy(p.id, 2000, NULL);
	for (int i = err ? p.nr_loaded - 1 : -1; i >= 0; i--)
		xk_rt_unload(fd, tables[i].constant, NULL);
	bpf_object__close(p.obj);
	free(p.rodata_copy);
	libbpf_set_print(old_print);
	return err;
}

int xk_policy_load(int fd, const char *obj_path, const struct xk_scope *tables,
		   int nr_tables, const struct xk_policy_opts *opts,
		   struct xk_policy_result *res)
{
	xk_err_clear();
	return xk_api_return(__func__,
			     xk_policy_load_impl(fd, obj_path, tables, nr_tables, opts, res));
}

/*
 * An enabled kprobe in one of funcs, other than the module's own (disarmed
 * under a policy)? -1: no debugfs.
 */
static int kprobes_in(char (*funcs)[XK_FUNC_MAX], int nr)
{
	struct xk_kprobe *list;
	size_t nr_probes;
	int found = 0;

	if (xk_kprobes_list(&list, &nr_probes))
		return -1;
	for (size_t i = 0; i < nr_probes && !found; i++)
		for (int f = 0; f < nr && !found && !list[i].disabled; f++)
			found = !strcmp(list[i].sym, funcs[f]);
	free(list);
	return found;
}

static int xk_policy_unload_impl(int fd, const char *id, int *nr_constants)
{
	struct xk_ioc_status *st = calloc(1, sizeof(*st));
	char names[XK_TX_MAX * 4][XK_NAME_MAX];
	char (*funcs)[XK_FUNC_MAX] = calloc(XK_MAX_SPANS * 4, sizeof(*funcs));
	int n = 0, nr_funcs = 0, err = 0, alive, pinned;

	if (!st || !funcs) {
		free(st);
		free(funcs);
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	}
	for (unsigned int i = 0; !xk_rt_status(fd, i, st); i++) {
		if (strcmp(st->policy, id) || n == (int)ARRAY_SIZE(names))
			continue;
		xk_strlcpy(names[n++], st->name, sizeof(names[0]));
		for (unsigned int s = 0; s < st->nr_spans && s < XK_MAX_SPANS &&
					 nr_funcs < XK_MAX_SPANS * 4; s++)
			xk_strlcpy(funcs[nr_funcs++], st->spans[s].func, XK_FUNC_MAX);
	}
	free(st);
	alive = unpin_policy(id, 5000, &pinned);
	if (alive)
		pr_warn("policy %s: %d programs still alive after 5 s; their calls "
			"will be refused\n", id, alive);
	/* a freed program's perf event (its kprobe) goes a moment later; the
	 * spans' programs have none (the module runs them, and drops them
	 * when their constants are unloaded below) */
	for (int waited = 0; pinned && waited < 2000 &&
			     kprobes_in(funcs, nr_funcs) == 1; waited += 10) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	free(funcs);
	for (int i = 0; i < n && !err; i++)
		err = xk_rt_unload(fd, names[i], NULL);
	if (nr_constants)
		*nr_constants = n;
	return err;
}

int xk_policy_unload(int fd, const char *id, int *nr_constants)
{
	xk_err_clear();
	return xk_api_return(__func__,
			     xk_policy_unload_impl(fd, id, nr_constants));
}
