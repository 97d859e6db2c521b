#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The guest half of scripts/demo.sh.
set -euo pipefail
echo "== guest kernel: $(uname -r) ($(grep -o 'Debian [^ ]*' /proc/version))"
echo "== kprobes enabled: $(cat /sys/kernel/debug/kprobes/enabled)"
insmod kmod/xkernel.ko
echo "== xkernel.ko loaded: $(ls -l /dev/xkernel)"
rmmod xkernel
