#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# The entries of io_uring rings asked for, as io_uring_setup(2) gives them:
#   ring_entries.py ENTRIES[:clamp] ...
# prints, per ring, "SQ/CQ" entries, or "E<errno>" when the setup fails
# (IORING_SETUP_CLAMP with ":clamp": a count above the limit is clamped to
# it instead of refused). Used by test_retune_post (IORING_MAX_ENTRIES) and
# the fidelity A/B.
import ctypes
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)


class Params(ctypes.Structure):		# struct io_uring_params, 120 bytes
    _fields_ = [("sq_entries", ctypes.c_uint32), ("cq_entries", ctypes.c_uint32),
                ("flags", ctypes.c_uint32), ("rest", ctypes.c_uint8 * 108)]


def setup(entries, clamp):
    p = Params()
    p.flags = 16 if clamp else 0	# IORING_SETUP_CLAMP
    fd = libc.syscall(425, ctypes.c_uint(entries), ctypes.byref(p))
    if fd < 0:
        return "E%d" % ctypes.get_errno()
    os.close(fd)
    return "%d/%d" % (p.sq_entries, p.cq_entries)


out = []
for arg in sys.argv[1:]:
    entries, _, how = arg.partition(":")
    out.append(setup(int(entries), how == "clamp"))
print(" ".join(out))
