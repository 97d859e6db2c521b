// SPDX-License-Identifier: GPL-2.0
/*
 * BLK_MAX_REQUEST_COUNT per block device: how many requests a task's plug
 * holds before it flushes them, chosen for the device each request goes to.
 * Raise it for a device that gains from bigger batches (rotational disks,
 * merging), lower it for one where latency matters; other devices keep the
 * compiled-in 32.
 *
 *   xk load BLK_MAX_REQUEST_COUNT --policy build/bpf/blk_per_device.bpf.o \
 *       --param dev0=nullb0 --param value0=4 \
 *       --param dev1=nullb1 --param value1=128
 *
 * Span 0 (blk_add_rq_to_plug) compares the plug's count with the limit; the
 * request being added is the function's second argument, in a register the
 * glue names (BLK_MAX_REQUEST_COUNT_SPAN0_ARG1). Span 1
 * (blk_start_plug_nr_ios) caps the plug's batch size before any request
 * exists: no device there, the compiled-in value stays.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "xk_policy.h"
#include "BLK_MAX_REQUEST_COUNT.xk.h"

char LICENSE[] SEC("license") = "GPL";

#define DISK_NAME_LEN 32

/* up to four devices, by name, each with its value (xk load --param) */
const volatile char dev0[DISK_NAME_LEN] = "";
const volatile char dev1[DISK_NAME_LEN] = "";
const volatile char dev2[DISK_NAME_LEN] = "";
const volatile char dev3[DISK_NAME_LEN] = "";
const volatile xk_BLK_MAX_REQUEST_COUNT_t value0 = BLK_MAX_REQUEST_COUNT_DEFAULT;
const volatile xk_BLK_MAX_REQUEST_COUNT_t value1 = BLK_MAX_REQUEST_COUNT_DEFAULT;
const volatile xk_BLK_MAX_REQUEST_COUNT_t value2 = BLK_MAX_REQUEST_COUNT_DEFAULT;
const volatile xk_BLK_MAX_REQUEST_COUNT_t value3 = BLK_MAX_REQUEST_COUNT_DEFAULT;

static __always_inline bool same_name(const volatile char *want, const char *name)
{
	if (!want[0])
		return false;
#pragma unroll
	for (int i = 0; i < DISK_NAME_LEN; i++) {
		if (want[i] != name[i])
			return false;
		if (!name[i])
			return true;
	}
	return true;
}

static __always_inline __s64 choose(struct pt_regs *ctx, int span, char *label)
{
	struct request *rq;
	char name[DISK_NAME_LEN] = {};

	if (span != 0)
		return XK_KEEP;
	rq = (struct request *)BLK_MAX_REQUEST_COUNT_SPAN0_ARG1(ctx);
	if (bpf_probe_read_kernel_str(name, sizeof(name),
				      BPF_CORE_READ(rq, q, disk, disk_name)) <= 0)
		return XK_KEEP;
	xk_label(label, name);
	if (same_name(dev0, name))
		return value0;
	if (same_name(dev1, name))
		return value1;
	if (same_name(dev2, name))
		return value2;
	if (same_name(dev3, name))
		return value3;
	return XK_KEEP;
}

XK_POLICY_BLK_MAX_REQUEST_COUNT(choose)
