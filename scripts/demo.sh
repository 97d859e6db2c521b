#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The main job (README): the stock Debian kernel in the guest, with kprobes,
# and xkernel.ko loaded into it. Grows into the live retune as the runtime lands.
set -euo pipefail
cd "$(dirname "$0")/.."
exec build/xk vm run --timeout 900 -- scripts/demo-guest.sh
