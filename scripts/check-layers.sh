#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The layering rules the include paths cannot show, checked after a build
# (make runs it): the runtime half of libxk (runtime, scope, core) uses
# neither libelf nor capstone, and links without them; no part has a
# circle of calls between its files (scripts/structure-map.sh), and in the
# analysis only the one table (forms/forms.c) names a span form's file.
#   scripts/check-layers.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
runtime=("$build/libxk-runtime.a" "$build/libxk-scope.a" "$build/libxk-core.a")

bad=$(nm -u "${runtime[@]}" 2>/dev/null | grep -E ' U (elf|gelf|cs)_' | sort -u || true)
if [ -n "$bad" ]; then
	echo "check-layers: the runtime half uses libelf or capstone:" >&2
	echo "$bad" >&2
	exit 1
fi

# a program that only loads tables: it must link with libbpf alone
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/rt.c" <<'C'
#include "xk/runtime.h"
#include "xk/scope.h"
int main(int argc, char **argv)
{
	struct xk_scope t;
	int fd;

	if (argc < 2 || xk_scope_read(argv[1], &t))
		return 1;
	fd = xk_rt_open();
	return fd < 0 ? 1 : xk_rt_unload(fd, t.constant, 0);
}
C
if ! ${CC:-cc} -Iinclude -o "$tmp/rt" "$tmp/rt.c" "${runtime[@]}" -lbpf \
		2> "$tmp/log"; then
	echo "check-layers: a runtime-only program does not link without" \
	     "libelf and capstone:" >&2
	cat "$tmp/log" >&2
	exit 1
fi

# every part: arrows one way only between its files; the analysis's forms
# reached through gen_forms
for part in core scope provision analysis runtime klp; do
	BUILD=$build scripts/structure-map.sh --quiet "$part"
done
named=$(BUILD=$build scripts/structure-map.sh analysis |
	awk '/ -> forms\// && !/ -> forms\/forms\.c:/ && $1 !~ /^forms\// { print }' || true)
if [ -n "$named" ]; then
	echo "check-layers: code outside lib/analysis/forms calls a form's file" \
	     "(reach it through gen_forms):" >&2
	echo "$named" >&2
	exit 1
fi
