// SPDX-License-Identifier: GPL-2.0
/* xk vm run | shell: the stock kernel in a QEMU guest. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct vm_args {
	const char *release;
	int timeout_s, mem_mb, smp;
	bool deterministic;
};

static int parse_int(const char *topic, const char *name, const char *s,
		     int min, int max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return p_usage(topic, "%s must be a number from %d to %d, not "
				      "'%s'", name, min, max, s);
	*out = (int)v;
	return 0;
}

/* Options shared by run and shell; returns the index of the command. */
static int parse_vm_args(const char *topic, int argc, char **argv,
			 struct vm_args *a)
{
	static const struct option opts[] = {
		{ "release", required_argument, NULL, 'r' },
		{ "timeout", required_argument, NULL, 't' },
		{ "mem", required_argument, NULL, 'm' },
		{ "smp", required_argument, NULL, 's' },
		{ "deterministic", no_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+r:t:m:s:d", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			a->release = optarg;
			break;
		case 't':
			if (parse_int(topic, "--timeout", optarg, 1, 86400,
				      &a->timeout_s))
				return -1;
			break;
		case 'm':
			if (parse_int(topic, "--mem", optarg, 256, 65536,
				      &a->mem_mb))
				return -1;
			break;
		case 's':
			if (parse_int(topic, "--smp", optarg, 1, 64, &a->smp))
				return -1;
			break;
		case 'd':
			a->deterministic = true;
			break;
		default:
			p_usage(topic, "bad option");
			return -1;
		}
	}
	return optind;
}

static int do_run(int argc, char **argv)
{
	struct vm_args a = { .timeout_s = 900 };
	struct xk_vm_result res = { 0 };
	struct xk_kernel k;
	int first, err;

	first = parse_vm_args("vm run", argc, argv, &a);
	if (first < 0)
		return XK_EXIT_USAGE;
	if (first >= argc)
		return p_usage("vm run", "no command to run in the guest");
	if (kernel_for_command(a.release, &k))
		return XK_EXIT_HARNESS;
	{
		XK_OPTS(xk_vm_opts, o, .argv = (const char *const *)argv + first,
			.timeout_s = a.timeout_s, .mem_mb = a.mem_mb,
			.smp = a.smp, .deterministic = a.deterministic,
			.out_fd = json_output ? -1 : 1);

		err = xk_vm_run(&k, &o, &res);
	}
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
		json_str(jw, "run_dir", res.run_dir);
		json_strn(jw, "output", res.output, res.output_len);
		json_end_object(jw);
	} else if (err) {
		p_err("vm run: %s", xk_last_error());
	} else if (!quiet && getenv("XK_VM_TIMES")) {
		fprintf(stderr, "xk: guest %s: boot %.2f s, wall %.2f s, %s\n",
			k.release, res.boot_s, res.wall_s, res.accel);
	}
	xk_vm_result_free(&res);
	if (err == -ETIMEDOUT)
		return XK_EXIT_TIMEOUT;
	if (err)
		return XK_EXIT_HARNESS;
	return res.exit_status;
}

static int do_shell(int argc, char **argv)
{
	struct vm_args a = { 0 };
	struct xk_vm_result res = { 0 };
	struct xk_kernel k;
	int first, err;

	first = parse_vm_args("vm shell", argc, argv, &a);
	if (first < 0)
		return XK_EXIT_USAGE;
	if (kernel_for_command(a.release, &k))
		return XK_EXIT_HARNESS;
	{
		XK_OPTS(xk_vm_opts, o, .interactive = true, .mem_mb = a.mem_mb,
			.smp = a.smp, .deterministic = a.deterministic,
			.timeout_s = a.timeout_s, .out_fd = 1);

		err = xk_vm_run(&k, &o, &res);
	}
	xk_vm_result_free(&res);
	return err ? p_lib_err("vm shell", err) : 0;
}

static const struct cmd vm_cmds[] = {
	{ "run", do_run },
	{ "shell", do_shell },
	{ NULL, NULL },
};

int do_vm(int argc, char **argv)
{
	return cmd_select(vm_cmds, argc - 1, argv + 1, "vm");
}
