// SPDX-License-Identifier: GPL-2.0
/* xk vm run | shell: the stock kernel in a QEMU guest. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

struct vm_args {
	const char *release, *image;
	int timeout_s, mem_mb, smp;
	bool deterministic, debian, multi_thread;
};

/* Options shared by run and shell. */
static const struct cli_opt vm_opts[] = {
	{ "release", 'r', CLI_STR, offsetof(struct vm_args, release) },
	{ "timeout", 't', CLI_INT, offsetof(struct vm_args, timeout_s), 1, 86400 },
	{ "mem", 'm', CLI_INT, offsetof(struct vm_args, mem_mb), 256, 65536 },
	{ "smp", 's', CLI_INT, offsetof(struct vm_args, smp), 1, 64 },
	{ "deterministic", 'd', CLI_FLAG, offsetof(struct vm_args, deterministic) },
	{ "debian", 'D', CLI_FLAG, offsetof(struct vm_args, debian) },
	{ "image", 'i', CLI_STR, offsetof(struct vm_args, image) },
	{ "multi-thread", 'M', CLI_FLAG, offsetof(struct vm_args, multi_thread) },
	{ NULL },
};

/*
 * Boots the guest: runs argv, or a shell on the terminal when argv is NULL.
 * Returns xk_vm_run's result, or XK_EXIT_HARNESS without a kernel (reported).
 */
static int boot(const struct vm_args *a, char **argv, struct xk_kernel *k,
		struct xk_vm_result *res)
{
	XK_OPTS(xk_vm_opts, o, .argv = (const char *const *)argv,
		.interactive = !argv, .timeout_s = a->timeout_s,
		.mem_mb = a->mem_mb, .smp = a->smp,
		.deterministic = a->deterministic,
		.debian = a->debian, .image = a->image,
		.multi_thread = a->multi_thread,
		.out_fd = json_output && argv ? -1 : 1);

	if (kernel_for_command(a->release, k))
		return XK_EXIT_HARNESS;
	return xk_vm_run(k, &o, res);
}

static int do_run(void *args, int argc, char **argv)
{
	struct xk_vm_result res = { 0 };
	struct xk_kernel k;
	int err;

	if (argc < 1)
		return p_usage("vm run", "no command to run in the guest");
	err = boot(args, argv, &k, &res);
	if (err > 0)
		return err;
	if (json_output) {
		json_begin_object(jw, NULL);
		if (err)
			json_str(jw, "error", xk_last_error());
		else
			json_int(jw, "exit_status", res.exit_status);
		json_str(jw, "release", k.release);
		json_str(jw, "accel", res.accel);
		json_double(jw, "wall_seconds", res.wall_s);
		json_double(jw, "boot_seconds", res.boot_s);
		json_int(jw, "boots", res.boots);
		json_str(jw, "run_dir", res.run_dir);
		json_strn(jw, "output", res.output, res.output_len);
		json_end_object(jw);
	} else if (err) {
		p_err("vm run: %s", xk_last_error());
	} else if (!quiet && getenv("XK_VM_TIMES")) {
		fprintf(stderr, "xk: guest %s: boot %.2f s, wall %.2f s, %s%s\n",
			k.release, res.boot_s, res.wall_s, res.accel,
			res.boots > 1 ? ", rebooted" : "");
	}
	xk_vm_result_free(&res);
	if (err == -ETIMEDOUT)
		return XK_EXIT_TIMEOUT;
	if (err)
		return XK_EXIT_HARNESS;
	return res.exit_status;
}

static int do_shell(void *args, int argc, char **argv)
{
	struct xk_vm_result res = { 0 };
	struct xk_kernel k;
	int err;

	(void)argc;
	(void)argv;
	err = boot(args, NULL, &k, &res);
	if (err > 0)
		return err;
	xk_vm_result_free(&res);
	return err ? p_lib_err("vm shell", err) : 0;
}

static struct vm_args run_args = { .timeout_s = 900 }, shell_args;

const struct cli_cmd cmd_vm_run = {
	"vm run", do_run, vm_opts, &run_args, .max_args = -1,
	.args_end_options = true,
};
const struct cli_cmd cmd_vm_shell = {
	"vm shell", do_shell, vm_opts, &shell_args, .max_args = 0,
};
