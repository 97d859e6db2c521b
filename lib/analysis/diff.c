// SPDX-License-Identifier: GPL-2.0
/*
 * libxk: the instruction diff. Aligns the instructions of a function in the
 * baseline object with those of its twin in a variant object by the longest
 * common subsequence of their normalised text (branch and call targets
 * masked), so that an instruction that grows or shrinks between variants
 * shifts nothing. Two instructions that align but differ (an immediate) are
 * paired too when they have the same mnemonic.
 */
#include <stdlib.h>

#include "object.h"

#define MAX_CELLS (64u << 20)

/* sub rsp, imm or add rsp, imm: moves the stack pointer by a constant */
static bool moves_rsp(const struct xk_insn *in)
{
	return !strncmp(in->text, "sub rsp, ", 9) || !strncmp(in->text, "add rsp, ", 9);
}

/*
 * Whether a and b are one operation but for their operands. A frame's
 * allocation is one whichever way it is written: gcc allocates 128 bytes
 * as add rsp, -0x80 (an imm8), 120 as sub rsp, 0x78 (frame_pair in spans.c
 * reads the sizes).
 */
static bool same_mnemonic(const struct xk_insn *a, const struct xk_insn *b)
{
	size_t n = strcspn(a->text, " ");

	if (moves_rsp(a) && moves_rsp(b))
		return true;

	return n == strcspn(b->text, " ") && !strncmp(a->text, b->text, n);
}

int xk_align(const struct xk_func_code *a, const struct xk_func_code *b,
	     ssize_t *match)
{
	size_t n = a->nr, m = b->nr;
	uint32_t *dp;
	size_t i, j;

	if ((n + 1) * (m + 1) > MAX_CELLS)
		return xk_err(-E2BIG, "function %s too large to diff (%zu x %zu)",
			      a->sym->name, n, m);
	dp = calloc((n + 1) * (m + 1), sizeof(*dp));
	if (!dp)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
#define DP(x, y) dp[(x) * (m + 1) + (y)]
	for (i = n; i-- > 0;)
		for (j = m; j-- > 0;) {
			if (!strcmp(a->insn[i].norm, b->insn[j].norm))
				DP(i, j) = DP(i + 1, j + 1) + 2;
			else if (same_mnemonic(&a->insn[i], &b->insn[j]) &&
				 DP(i + 1, j + 1) + 1 > DP(i + 1, j) &&
				 DP(i + 1, j + 1) + 1 > DP(i, j + 1))
				DP(i, j) = DP(i + 1, j + 1) + 1;
			else
				DP(i, j) = DP(i + 1, j) > DP(i, j + 1) ?
						   DP(i + 1, j) : DP(i, j + 1);
		}
	for (i = 0; i < n; i++)
		match[i] = -1;
	for (i = 0, j = 0; i < n && j < m;) {
		bool eq = !strcmp(a->insn[i].norm, b->insn[j].norm);

		if (eq && DP(i, j) == DP(i + 1, j + 1) + 2) {
			match[i++] = j++;
		} else if (!eq && same_mnemonic(&a->insn[i], &b->insn[j]) &&
			   DP(i, j) == DP(i + 1, j + 1) + 1) {
			match[i++] = j++;
		} else if (DP(i + 1, j) >= DP(i, j + 1)) {
			i++;
		} else {
			j++;
		}
	}
#undef DP
	free(dp);
	return 0;
}
