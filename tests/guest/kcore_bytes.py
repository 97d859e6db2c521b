#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Prints, in hex, LEN bytes of the live kernel text or data at
# SYMBOL+OFFSET, read
# from /proc/kcore (the kernel's own ELF view of its memory) with the
# address from /proc/kallsyms: a view of the text that owes nothing to
# xkernel.ko. Usage: kcore_bytes.py SYMBOL OFFSET LEN
import struct
import sys

sym, off, length = sys.argv[1], int(sys.argv[2], 0), int(sys.argv[3], 0)
addr = None
with open("/proc/kallsyms") as f:
    for line in f:
        p = line.split()
        if len(p) >= 3 and p[2] == sym and p[1] in "tTrRdDbB":
            addr = int(p[0], 16) + off
            break
if not addr:
    sys.exit(f"{sym}: not in /proc/kallsyms")
with open("/proc/kcore", "rb") as k:
    eh = k.read(64)
    phoff, = struct.unpack_from("<Q", eh, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", eh, 0x36)
    k.seek(phoff)
    ph = k.read(phentsize * phnum)
    for i in range(phnum):
        typ, _, offset, vaddr, _, filesz, _, _ = struct.unpack_from(
            "<IIQQQQQQ", ph, i * phentsize)
        if typ == 1 and vaddr <= addr and addr + length <= vaddr + filesz:
            k.seek(offset + addr - vaddr)
            print(k.read(length).hex())
            sys.exit(0)
sys.exit(f"{sym}+{off:#x}: not in /proc/kcore")
