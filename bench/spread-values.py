#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# K values spread over the bounds LO..HI, the default D left out: the
# bounds, and K-2 between them, spaced geometrically (arithmetically from
# 0), deduplicated, in order. For bench/fidelity.sh and bench/coverage.sh.
#   bench/spread-values.py LO HI D K
import math
import sys

lo, hi, d, k = (int(x) for x in sys.argv[1:])
vals = {lo, hi}
for i in range(1, k - 1):
    f = i / (k - 1)
    if lo > 0:
        v = round(math.exp(math.log(lo) + f * (math.log(hi) - math.log(lo))))
    else:
        v = round(lo + f * (hi - lo))
    vals.add(v)
vals.discard(d)
print(" ".join(str(v) for v in sorted(vals)))
