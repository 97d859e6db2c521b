// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of what xk load checks of a policy object before anything
 * reaches the kernel (lib/runtime/policy.c, xk_policy_check): the objects
 * of `make policies`, opened on the host. Without them (no target kernel
 * fetched, so no policies built) the tests pass with a note.
 */
#include <errno.h>
#include <unistd.h>

#include "unit.h"
#include "xk/xk.h"

#define BPF "build/bpf/"

static bool built(const char *obj)
{
	if (!access(obj, R_OK))
		return true;
	printf("# %s not built (make policies): not checked\n", obj);
	return false;
}

/* the repository's policies, and the fixtures refused later (verifier, module) */
static int repository_policies_pass(void)
{
	static const char *const objs[] = {
		BPF "blk_per_device.bpf.o", BPF "blk_per_cgroup.bpf.o",
		BPF "cubic_long_rtt.bpf.o", BPF "rw_fixed.bpf.o",
		BPF "alternate.bpf.o", BPF "twice.bpf.o", BPF "overreach.bpf.o",
		BPF "foreign.bpf.o", BPF "rogue_writes.bpf.o",
		BPF "rogue_tracepoint.bpf.o",
	};

	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		if (!built(objs[i]))
			continue;
		if (xk_policy_check(objs[i])) {
			printf("#   %s: %s\n", objs[i], xk_last_error());
			return 1;
		}
	}
	return 0;
}

/* every program that does more than choose, each named with its kind or call */
static int overpowered_refused_by_name(void)
{
	const char *obj = BPF "overpowered.bpf.o";
	const char *e;

	if (!built(obj))
		return 0;
	CHECK(xk_policy_check(obj) == -EPERM);
	e = xk_last_error();
	printf("# %s\n", e);
	CHECK(strstr(e, "program overpowered_lsm (section lsm/file_open) is an lsm program"));
	CHECK(strstr(e, "program overpowered_fmod_ret (section fmod_ret/security_file_open) "
		     "is an fmod_ret program"));
	CHECK(strstr(e, "program overpowered_write_user (section kprobe/__x64_sys_getcwd) "
		     "calls bpf_probe_write_user"));
	CHECK(strstr(e, "program overpowered_kfunc (section tp_btf/sched_switch) calls "
		     "kfunc bpf_task_acquire, which is not xkernel's"));
	CHECK(strstr(e, "nothing loaded"));
	return 0;
}

/* a call in a subprogram, which libbpf appends to its caller only at load */
static int subprogram_call_refused_by_name(void)
{
	const char *obj = BPF "overpowered_sub.bpf.o";
	const char *e;

	if (!built(obj))
		return 0;
	CHECK(xk_policy_check(obj) == -EPERM);
	e = xk_last_error();
	CHECK(strstr(e, "function override_zero (section .text) calls bpf_override_return"));
	CHECK(!strstr(e, "program overpowered_override"));	/* a kprobe */
	return 0;
}

/* a uprobe: same program type as a kprobe, told apart by its section */
static int uprobe_refused(void)
{
	const char *obj = BPF "sleepy.bpf.o";

	if (!built(obj))
		return 0;
	CHECK(xk_policy_check(obj) == -EPERM);
	CHECK(strstr(xk_last_error(), "program sleepy (section uprobe.s) is a uprobe program"));
	return 0;
}

static int not_an_object_is_an_error(void)
{
	CHECK(xk_policy_check("/nonexistent/x.bpf.o") < 0);
	CHECK(strstr(xk_last_error(), "/nonexistent/x.bpf.o"));
	CHECK(xk_policy_check("Makefile") < 0);
	return 0;
}

UNIT_MAIN("policy",
	  T(repository_policies_pass),
	  T(overpowered_refused_by_name),
	  T(subprogram_call_refused_by_name),
	  T(uprobe_refused),
	  T(not_an_object_is_an_error))
