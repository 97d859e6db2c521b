// SPDX-License-Identifier: GPL-2.0
/* xk doctor: what the running kernel allows xkernel to do, before a user
 * tries (xk_host_check). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static struct {
	int unused;
} doctor_args;

static int do_doctor(void *args, int argc, char **argv)
{
	struct xk_host_report r;
	int err, w = 0;

	(void)args;
	(void)argc;
	(void)argv;
	err = xk_host_check(NULL, &r);
	if (err)
		return p_lib_err("doctor", err);
	if (json_output) {
		json_begin_object(jw, NULL);
		json_str(jw, "release", r.release);
		json_str(jw, "build_id", r.build_id[0] ? r.build_id : NULL);
		json_int(jw, "blocked", r.blocked);
		json_begin_array(jw, "checks");
		for (int i = 0; i < r.nr; i++) {
			json_begin_object(jw, NULL);
			json_str(jw, "name", r.check[i].name);
			json_str(jw, "state", xk_host_state_name(r.check[i].state));
			json_str(jw, "detail", r.check[i].detail);
			json_end_object(jw);
		}
		json_end_array(jw);
		json_end_object(jw);
		return r.blocked ? XK_EXIT_FAIL : XK_EXIT_OK;
	}
	for (int i = 0; i < r.nr; i++)
		w = (int)strlen(r.check[i].name) > w ? (int)strlen(r.check[i].name) : w;
	printf("running kernel: %s\n", r.release);
	for (int i = 0; i < r.nr; i++)
		printf("%-8s %-*s  %s\n", xk_host_state_name(r.check[i].state), w,
		       r.check[i].name, r.check[i].detail);
	if (r.blocked)
		printf("%d check%s block%s retuning on this host\n", r.blocked,
		       r.blocked == 1 ? "" : "s", r.blocked == 1 ? "s" : "");
	else
		printf("retuning can work on this host\n");
	return r.blocked ? XK_EXIT_FAIL : XK_EXIT_OK;
}

const struct cli_cmd cmd_doctor = { "doctor", do_doctor, NULL, &doctor_args,
				    .max_args = 0 };
