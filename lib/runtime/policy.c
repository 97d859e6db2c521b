// SPDX-License-Identifier: GPL-2.0
/*
 * libxk: loading and unloading eBPF policies (Xk-tunes) with libbpf.
 *
 * A load, in order (any failure undoes what was done before it):
 *   check_module()      the module runs policies on this kernel (Linux 6.10
 *                       on), else refused naming the kernel
 *   open_object()       the policy's BPF object
 *   check_object()      what it holds, before anything reaches the kernel:
 *                       programs of kinds that only observe, no helper that
 *                       writes or signals, no kfunc but xkernel's, no
 *                       pinned or struct_ops map; every refusal named at once
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
#include <elf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
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


/*
 * What a policy object may hold. A policy only chooses values: its span
 * programs hand xk_choose a value, and programs of its own may read the
 * context into maps. So every program of the object must be of a kind that
 * only observes, and call nothing that writes kernel or user state, changes
 * a return value or signals.
 */
#define POLICY_ALLOWED "kprobe, kretprobe, ksyscall, kretsyscall, kprobe.multi, " \
	"kretprobe.multi, tracepoint, raw_tracepoint, tp_btf, fentry and fexit " \
	"programs calling no helper that writes memory or a return value or " \
	"signals, no kfunc but xk_choose; no pinned or struct_ops map"

/* xkernel's kfuncs (kmod/xk_policy.c, bpf/xk_policy.h) */
static const char *const xk_kfuncs[] = { "xk_choose" };

/* Helpers that write outside the program's own maps, or signal. */
static const struct {
	int id;
	const char *name;
} writing_helpers[] = {
	{ BPF_FUNC_probe_write_user, "bpf_probe_write_user" },
	{ BPF_FUNC_override_return, "bpf_override_return" },
	{ BPF_FUNC_send_signal, "bpf_send_signal" },
	{ BPF_FUNC_send_signal_thread, "bpf_send_signal_thread" },
	{ BPF_FUNC_sys_bpf, "bpf_sys_bpf" },
	{ BPF_FUNC_sys_close, "bpf_sys_close" },
	{ BPF_FUNC_set_retval, "bpf_set_retval" },
	{ BPF_FUNC_bprm_opts_set, "bpf_bprm_opts_set" },
	{ BPF_FUNC_setsockopt, "bpf_setsockopt" },
	{ BPF_FUNC_skb_store_bytes, "bpf_skb_store_bytes" },
	{ BPF_FUNC_l3_csum_replace, "bpf_l3_csum_replace" },
	{ BPF_FUNC_l4_csum_replace, "bpf_l4_csum_replace" },
};

/* The refusals found so far, in one message. */
struct refusals {
	char text[3072];
	size_t len;
	int nr;
};

static void refuse(struct refusals *r, const char *fmt, ...) __printf(2, 3);
static void refuse(struct refusals *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (r->len + 8 >= sizeof(r->text)) {
		r->nr++;
		return;
	}
	if (r->nr++)
		r->len += (size_t)snprintf(r->text + r->len, sizeof(r->text) - r->len, "; ");
	va_start(ap, fmt);
	n = vsnprintf(r->text + r->len, sizeof(r->text) - r->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		r->len = r->len + (size_t)n >= sizeof(r->text) ? sizeof(r->text) - 1
							      : r->len + (size_t)n;
}

/* "a" or "an" before a kind's name, as it is read out (an lsm, a uprobe). */
static const char *article(const char *kind)
{
	if (strchr("aeio", kind[0]))
		return "an";
	if (strchr("flmnrsx", kind[0]) && kind[1] && !strchr("aeiouchlrty", kind[1]))
		return "an";
	return "a";
}

/*
 * The kind of a program, by its type and expected attach type as libbpf
 * set them from the section; *allowed: a policy may hold it. Only
 * BPF_PROG_TYPE_KPROBE needs the section too: libbpf gives kprobes,
 * uprobes and USDT probes the same type and attach type.
 */
static const char *program_kind(const struct bpf_program *prog, bool *allowed,
				char *buf, size_t size)
{
	static const char *const observers[] = { "kprobe", "kretprobe", "ksyscall",
						 "kretsyscall", "kprobe.multi",
						 "kretprobe.multi" };
	enum bpf_attach_type at = bpf_program__expected_attach_type(prog);
	enum bpf_prog_type type = bpf_program__type(prog);
	const char *sec = bpf_program__section_name(prog);
	const char *name;

	*allowed = false;
	switch (type) {
	case BPF_PROG_TYPE_KPROBE:
		/* the section's first word, less a sleepable ".s" */
		snprintf(buf, size, "%.*s", (int)strcspn(sec, "/"), sec);
		if (strlen(buf) > 2 && !strcmp(buf + strlen(buf) - 2, ".s"))
			buf[strlen(buf) - 2] = '\0';
		if (at != 0 && at != BPF_TRACE_KPROBE_MULTI)
			return buf;
		for (size_t i = 0; i < ARRAY_SIZE(observers); i++)
			if (!strcmp(buf, observers[i]))
				*allowed = (at == BPF_TRACE_KPROBE_MULTI) ==
					   !!strstr(buf, ".multi");
		return buf;
	case BPF_PROG_TYPE_TRACEPOINT:
		*allowed = true;
		return "tracepoint";
	case BPF_PROG_TYPE_RAW_TRACEPOINT:
		*allowed = true;
		return "raw_tracepoint";
	case BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE:
		return "raw_tracepoint.w";
	case BPF_PROG_TYPE_TRACING:
		switch (at) {
		case BPF_TRACE_FENTRY:
			*allowed = true;
			return "fentry";
		case BPF_TRACE_FEXIT:
			*allowed = true;
			return "fexit";
		case BPF_TRACE_RAW_TP:
			*allowed = true;
			return "tp_btf";
		case BPF_MODIFY_RETURN:
			return "fmod_ret";
		case BPF_TRACE_ITER:
			return "iter";
		default:
			name = libbpf_bpf_attach_type_str(at);
			return name ? name : "tracing";
		}
	case BPF_PROG_TYPE_LSM:
		return at == BPF_LSM_CGROUP ? "lsm_cgroup" : "lsm";
	case BPF_PROG_TYPE_EXT:
		return "freplace";
	default:
		name = libbpf_bpf_prog_type_str(type);
		return name && type != BPF_PROG_TYPE_UNSPEC ? name : "unknown";
	}
}

/* A section's name, or "?" where the table does not hold one. */
static const char *section_name(const char *buf, const Elf64_Shdr *sh,
				const char *shstr, unsigned int i, int shnum)
{
	const Elf64_Shdr *names = &sh[((const Elf64_Ehdr *)buf)->e_shstrndx];

	if (i >= (unsigned int)shnum || sh[i].sh_name >= names->sh_size ||
	    !memchr(shstr + sh[i].sh_name, '\0', names->sh_size - sh[i].sh_name))
		return "?";
	return shstr + sh[i].sh_name;
}

/* The function of the object's symbol table that holds offset off of section shndx. */
static const char *elf_function(const char *buf, const Elf64_Shdr *sh, int shnum,
				unsigned int shndx, Elf64_Addr off)
{
	for (int i = 0; i < shnum; i++) {
		const Elf64_Sym *sym = (const Elf64_Sym *)(buf + sh[i].sh_offset);
		size_t n = sh[i].sh_size / sizeof(*sym);
		const Elf64_Shdr *str;

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= (unsigned int)shnum)
			continue;
		str = &sh[sh[i].sh_link];
		for (size_t k = 0; k < n; k++)
			if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC &&
			    sym[k].st_shndx == shndx && sym[k].st_value <= off &&
			    off < sym[k].st_value + sym[k].st_size &&
			    sym[k].st_name < str->sh_size &&
			    memchr(buf + str->sh_offset + sym[k].st_name, '\0',
				   str->sh_size - sym[k].st_name))
				return buf + str->sh_offset + sym[k].st_name;
	}
	return NULL;
}

/* "program NAME" for an entry point, "function NAME" for a subprogram (.text). */
static const char *function_kind(const char *fn, const char *sec)
{
	return fn && strcmp(sec, ".text") ? "program" : "function";
}

/*
 * Kfunc calls: relocations of an executable section against an undefined
 * symbol that the object's BTF types as a function (libbpf resolves each
 * such extern by its name, less a ___flavour suffix; after the open it no
 * longer marks them extern in the BTF). Only xkernel's are allowed.
 */
static void check_kfuncs(struct policy_load *p, const char *buf,
			 const Elf64_Shdr *sh, int shnum, const char *shstr,
			 struct refusals *r)
{
	for (int i = 0; i < shnum; i++) {
		const Elf64_Rel *rel = (const Elf64_Rel *)(buf + sh[i].sh_offset);
		size_t n = sh[i].sh_size / sizeof(*rel);
		const Elf64_Shdr *symtab, *str, *target;
		const char *sec;

		if (sh[i].sh_type != SHT_REL || sh[i].sh_link >= (unsigned int)shnum ||
		    sh[i].sh_info >= (unsigned int)shnum)
			continue;
		target = &sh[sh[i].sh_info];
		symtab = &sh[sh[i].sh_link];
		if (!(target->sh_flags & SHF_EXECINSTR) || symtab->sh_type != SHT_SYMTAB ||
		    symtab->sh_link >= (unsigned int)shnum)
			continue;
		str = &sh[symtab->sh_link];
		sec = section_name(buf, sh, shstr, sh[i].sh_info, shnum);
		for (size_t k = 0; k < n; k++) {
			const Elf64_Sym *sym = (const Elf64_Sym *)(buf + symtab->sh_offset);
			size_t idx = ELF64_R_SYM(rel[k].r_info);
			const char *name, *fn;
			bool ours = false;

			if (idx >= symtab->sh_size / sizeof(*sym))
				continue;
			sym += idx;
			name = buf + str->sh_offset + sym->st_name;
			if (sym->st_shndx != SHN_UNDEF || !sym->st_name ||
			    sym->st_name >= str->sh_size ||
			    !memchr(name, '\0', str->sh_size - sym->st_name) ||
			    btf__find_by_name_kind(p->btf, name, BTF_KIND_FUNC) <= 0)
				continue;
			for (size_t f = 0; f < ARRAY_SIZE(xk_kfuncs); f++) {
				size_t l = strlen(xk_kfuncs[f]);

				ours |= !strncmp(name, xk_kfuncs[f], l) &&
					(!name[l] || !strncmp(name + l, "___", 3));
			}
			if (ours)
				continue;
			fn = elf_function(buf, sh, shnum, sh[i].sh_info, rel[k].r_offset);
			refuse(r, "%s %s (section %s) calls kfunc %s, which is not xkernel's",
			       function_kind(fn, sec), fn ? fn : "?", sec, name);
		}
	}
}

/*
 * Helper and kfunc calls in every executable section of the object file:
 * the programs and the subprograms they call (libbpf appends those only
 * at load), each named by the function that holds the call. The file is
 * the policy author's: every offset is checked against its size.
 */
static int check_calls(struct policy_load *p, struct refusals *r)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const char *shstr;
	char *buf = NULL;
	size_t len = 0;
	int err = xk_read_file(p->path, &buf, &len);

	if (err)
		return xk_err(err, "policy %s: cannot read %s: %s", p->id, p->path,
			      strerror(-err));
	eh = (const Elf64_Ehdr *)buf;
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_BPF || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff > len || eh->e_shnum > (len - eh->e_shoff) / sizeof(Elf64_Shdr) ||
	    eh->e_shstrndx >= eh->e_shnum) {
		free(buf);
		return xk_err(-ENOEXEC, "policy %s: %s is not a little-endian 64-bit "
			      "BPF object", p->id, p->path);
	}
	sh = (const Elf64_Shdr *)(buf + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type != SHT_NOBITS &&
		    (sh[i].sh_offset > len || sh[i].sh_size > len - sh[i].sh_offset)) {
			free(buf);
			return xk_err(-ENOEXEC, "policy %s: section %d of %s lies outside "
				      "the file", p->id, i, p->path);
		}
	shstr = buf + sh[eh->e_shstrndx].sh_offset;
	check_kfuncs(p, buf, sh, eh->e_shnum, shstr, r);
	for (int i = 0; i < eh->e_shnum; i++) {
		const struct bpf_insn *in = (const struct bpf_insn *)(buf + sh[i].sh_offset);
		size_t n = sh[i].sh_size / sizeof(*in);
		const char *sec = section_name(buf, sh, shstr, (unsigned int)i,
					       eh->e_shnum);

		if (sh[i].sh_type != SHT_PROGBITS || !(sh[i].sh_flags & SHF_EXECINSTR))
			continue;
		for (size_t k = 0; k < n; k++) {
			const char *fn;

			if (in[k].code == (BPF_LD | BPF_IMM | BPF_DW)) {
				k++;	/* the second half of a 64-bit load */
				continue;
			}
			if (in[k].code != (BPF_JMP | BPF_CALL) || in[k].src_reg)
				continue;	/* a subprogram's or a kfunc's call */
			for (size_t h = 0; h < ARRAY_SIZE(writing_helpers); h++) {
				if (in[k].imm != writing_helpers[h].id)
					continue;
				fn = elf_function(buf, sh, eh->e_shnum, (unsigned int)i,
						  k * sizeof(*in));
				refuse(r, "%s %s (section %s) calls %s", function_kind(fn, sec),
				       fn ? fn : "?", sec, writing_helpers[h].name);
			}
		}
	}
	free(buf);
	return 0;
}

/*
 * Right after the object is opened, before the verifier and before any
 * table reaches the module (so a refusal leaves nothing to undo). Every
 * program must only observe: the glue's span programs are kprobes, and
 * programs of the author's own may be kprobes, tracepoints or fentry/fexit
 * programs; no program or subprogram may call a helper that writes or
 * signals, or a kfunc other than xkernel's. Maps libbpf would pin (and
 * reuse: another tool's map, by name) or register (struct_ops) are
 * refused too. All refusals are named in one error.
 */
static int check_object(struct policy_load *p)
{
	struct refusals *r = calloc(1, sizeof(*r));
	struct bpf_program *prog;
	struct bpf_map *map;
	int err;

	if (!r)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	bpf_object__for_each_program(prog, p->obj) {
		char buf[64];
		bool allowed;
		const char *kind = program_kind(prog, &allowed, buf, sizeof(buf));

		if (!allowed)
			refuse(r, "program %s (section %s) is %s %s program",
			       bpf_program__name(prog), bpf_program__section_name(prog),
			       article(kind), kind);
	}
	bpf_object__for_each_map(map, p->obj) {
		if (bpf_map__type(map) == BPF_MAP_TYPE_STRUCT_OPS)
			refuse(r, "map %s is a struct_ops map", bpf_map__name(map));
		else if (bpf_map__pin_path(map))
			refuse(r, "map %s is pinned at %s", bpf_map__name(map),
			       bpf_map__pin_path(map));
	}
	err = check_calls(p, r);
	if (!err && r->nr)
		err = xk_err(-EPERM, "policy %s refused, nothing loaded: %s. A policy "
			     "may only choose values: allowed are " POLICY_ALLOWED,
			     p->id, r->text);
	free(r);
	return err;
}

/* Whether release ("6.12.118+deb13-cloud-amd64") is major.minor or later. */
static bool kernel_at_least(const char *release, int major, int minor)
{
	int a = 0, b = 0;

	if (sscanf(release, "%d.%d", &a, &b) != 2)
		return false;
	return a > major || (a == major && b >= minor);
}

/*
 * Whether the module runs policies on this kernel (XK_IOC_VERSION's
 * features): it needs the kfunc filter and the run-context marks of Linux
 * 6.10, and the kernel's BTF for modules. Asked first, so that such a
 * kernel refuses by name rather than through libbpf's missing kfunc.
 */
static int check_module(struct policy_load *p)
{
	struct xk_ioc_version v = {};
	struct utsname u;

	if (ioctl(p->fd, XK_IOC_VERSION, &v))
		return xk_err(-errno, "xkernel.ko does not answer XK_IOC_VERSION of "
			      "ABI %d (%s): it is another build than xk's; unload "
			      "every constant and rmmod it", XK_ABI_VERSION,
			      strerror(errno));
	if (v.features & XK_FEATURE_POLICIES)
		return 0;
	if (uname(&u))
		xk_strlcpy(u.release, "unknown", sizeof(u.release));
	if (access("/sys/kernel/btf/vmlinux", F_OK) && kernel_at_least(u.release, 6, 10))
		return xk_err(-EOPNOTSUPP, "policy %s refused, nothing loaded: "
			      "eBPF policies need the kernel's BTF "
			      "(CONFIG_DEBUG_INFO_BTF and "
			      "CONFIG_DEBUG_INFO_BTF_MODULES), which kernel %s "
			      "was built without: load the constant without "
			      "--policy and set its value", p->id, u.release);
	return xk_err(-EOPNOTSUPP, "policy %s refused, nothing loaded: eBPF "
		      "policies need Linux 6.10 or later (the kfunc filter and "
		      "run-context marks that confine xk_choose to xkernel's own "
		      "kprobe programs); this kernel is %s: load the constant "
		      "without --policy and set its value", p->id, u.release);
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
	err = check_module(&p);
	err = err ?: open_object(&p);
	err = err ?: check_object(&p);
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

static int xk_policy_check_impl(const char *obj_path)
{
	struct policy_load p = { .path = obj_path };
	libbpf_print_fn_t old_print = libbpf_set_print(keep_libbpf_print);
	int err = policy_id(obj_path, p.id, sizeof(p.id));

	libbpf_log_len = 0;
	err = err ?: open_object(&p);
	err = err ?: check_object(&p);
	bpf_object__close(p.obj);
	free(p.rodata_copy);
	libbpf_set_print(old_print);
	return err;
}

/* Opens the object and checks what it holds, as xk_policy_load does first. */
int xk_policy_check(const char *obj_path)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_policy_check_impl(obj_path));
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
