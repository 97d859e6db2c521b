#!/bin/bash
# Variables boot code derives from the constant: the code that computed
# them is freed, what it left is data, written as the build with the value
# computes it (each build's boot code run at xk gen, per value).
# - golden: module init stores golden_derived = 8 * (G_DERIV + beta) / 3 /
#   (G_DERIV - beta), beta a module parameter (717): 15 compiled-in, 5 at
#   2048, 7 at 1500 (a value xk gen never made: the set prepares it from the
#   build cached on the host and hands the module the new point while the
#   constant is loaded), 15 again after unload. Loaded with another beta
#   (golden_derived_beta=600 at insmod), the variable does not hold the
#   baseline's 15 and the set is refused by name, nothing loaded.
# - stock: CUBIC's cubictcp_register computes beta_scale from
#   BICTCP_BETA_SCALE and cube_factor from BICTCP_HZ at boot; both retune
#   with every use supported (no --partial), their bytes read from
#   /proc/kcore: beta_scale 15 -> 5 -> 15, cube_factor 2^40/410 -> 2^46/410
#   -> 2^40/410.
. "$(dirname "$0")/lib.sh"
trap 'cleanup_xk; rmmod xk_golden 2>/dev/null; true' EXIT
GCAT=tests/fixtures/golden/golden.conf
derived() { awk '{ print $3 }' $GOLDEN/boot; }
# a variable's bytes, little endian, as a number
var_value() {
	python3 "$XK_TOP/tests/guest/kcore_bytes.py" "$1" 0 "$2" |
		python3 -c 'import sys; print(int.from_bytes(bytes.fromhex(sys.stdin.read().strip()), "little"))'
}

# ---- golden ----
insmod "$GOLDEN_KO" || fail "insmod xk_golden"
expect_eq "golden_derived compiled-in" "$(derived)" 15
$XK set --catalog "$GCAT" G_DERIV=2048 || fail "set G_DERIV=2048"
expect_eq "golden_derived at 2048" "$(derived)" 5
$XK status | grep -Eq "golden_derived\+0(x0)?: 1 writes, none \(a variable\)" ||
	fail "status: $($XK status)"
out=$($XK set --catalog "$GCAT" G_DERIV=1500 2>&1) || fail "set G_DERIV=1500: $out"
echo "$out"
expect_eq "golden_derived at 1500 (prepared while loaded)" "$(derived)" 7
dmesg | grep -q "point G_DERIV: value 1500 prepared in 1 spans" ||
	fail "the module was not handed the point of 1500"
$XK unload G_DERIV || fail "unload G_DERIV"
expect_eq "golden_derived after unload" "$(derived)" 15
rmmod xk_golden || fail "rmmod xk_golden"
insmod "$GOLDEN_KO" golden_derived_beta=600 || fail "insmod with beta 600"
expect_eq "golden_derived with beta 600" "$(derived)" 10
out=$($XK set --catalog "$GCAT" G_DERIV=2048 2>&1) && fail "set over another beta's golden_derived"
echo "$out" | grep -Eq "golden_derived\+0(x0)? does not hold the compiled-in 1024" ||
	fail "refusal does not name golden_derived: $out"
expect_eq "golden_derived left as booted" "$(derived)" 10
$XK status | grep -q G_DERIV && fail "a refused load left G_DERIV loaded"
rmmod xk_golden || fail "rmmod xk_golden"

# ---- CUBIC, built into vmlinux ----
expect_eq "beta_scale compiled-in" "$(var_value beta_scale 4)" 15
cf=$(python3 -c 'print((1 << 40) // 410)')
expect_eq "cube_factor compiled-in" "$(var_value cube_factor 8)" "$cf"
$XK set BICTCP_BETA_SCALE=2048 || fail "set BICTCP_BETA_SCALE=2048 (every use supported: no --partial)"
expect_eq "beta_scale at 2048" "$(var_value beta_scale 4)" 5
$XK set BICTCP_HZ=12 || fail "set BICTCP_HZ=12"
expect_eq "cube_factor at 12" "$(var_value cube_factor 8)" "$(python3 -c 'print((1 << 46) // 410)')"
# the code that reads them keeps running: a TCP transfer under cubic
iperf3 -s -1 -D -B 127.0.0.1 >/dev/null 2>&1 && sleep 1
iperf3 -c 127.0.0.1 -t 2 -C cubic >/dev/null 2>&1 || fail "iperf3 under cubic"
$XK unload BICTCP_HZ || fail "unload BICTCP_HZ"
$XK unload BICTCP_BETA_SCALE || fail "unload BICTCP_BETA_SCALE"
expect_eq "beta_scale after unload" "$(var_value beta_scale 4)" 15
expect_eq "cube_factor after unload" "$(var_value cube_factor 8)" "$cf"
echo "ok"
