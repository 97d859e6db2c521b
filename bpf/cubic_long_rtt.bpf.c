// SPDX-License-Identifier: GPL-2.0
/*
 * Selective CUBIC HyStart: other HYSTART_DELAY_MIN/MAX only for flows with a
 * long round trip. HyStart leaves slow start when an ACK train's RTT grows
 * by more than clamp(min_rtt / 8, HYSTART_DELAY_MIN, HYSTART_DELAY_MAX):
 * 4 to 16 ms compiled in. On a long path the 16 ms cap is a small fraction
 * of the RTT, so ordinary queueing ends slow start early and the flow
 * crawls up in congestion avoidance. This policy raises the bounds for flows
 * whose minimum RTT (the path's, without queueing: tcp_min_rtt()) is at
 * least long_rtt_us; the others keep 4 and 16 ms.
 *
 *   xk load HYSTART_DELAY_MIN HYSTART_DELAY_MAX \
 *       --policy build/bpf/cubic_long_rtt.bpf.o --param long_rtt_us=20000 \
 *       --param long_delay_min=4000 --param long_delay_max=100000
 *
 * Both spans are in cubictcp_acked(sk, sample) (hystart_update inlined):
 * the socket is its first argument, named by the glue.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "xk_policy.h"
#include "HYSTART_DELAY_MIN.xk.h"
#include "HYSTART_DELAY_MAX.xk.h"

char LICENSE[] SEC("license") = "GPL";

/* a flow is long when its minimum RTT is at least this (microseconds) */
const volatile __u32 long_rtt_us = 20000;
const volatile xk_HYSTART_DELAY_MIN_t long_delay_min = HYSTART_DELAY_MIN_DEFAULT;
const volatile xk_HYSTART_DELAY_MAX_t long_delay_max = 100000;

/*
 * The windowed minimum RTT (tcp_min_rtt()): the smoothed RTT would grow
 * with the very queue HyStart watches, and call every busy flow long.
 */
static __always_inline bool long_rtt(struct sock *sk, char *label)
{
	__u32 min_rtt = BPF_CORE_READ((struct tcp_sock *)sk, rtt_min.s[0].v);
	bool is_long = min_rtt != ~0U && min_rtt >= long_rtt_us;

	xk_label(label, is_long ? "long-rtt" : "short-rtt");
	return is_long;
}

static __always_inline __s64 choose_min(struct pt_regs *ctx, int span, char *label)
{
	struct sock *sk = (struct sock *)HYSTART_DELAY_MIN_SPAN0_ARG0(ctx);

	return long_rtt(sk, label) ? long_delay_min : XK_KEEP;
}

static __always_inline __s64 choose_max(struct pt_regs *ctx, int span, char *label)
{
	struct sock *sk = (struct sock *)HYSTART_DELAY_MAX_SPAN0_ARG0(ctx);

	return long_rtt(sk, label) ? long_delay_max : XK_KEEP;
}

XK_POLICY_HYSTART_DELAY_MIN(choose_min)
XK_POLICY_HYSTART_DELAY_MAX(choose_max)
