#!/bin/bash
# The golden fixture retuned live behaves as if recompiled with the new
# values: compares (< and <=), a folded constant, a constant used in two
# functions, a store to memory, an add to memory in place (emulated), an
# inlined helper. Expected results are
# computed here from the C source's expressions.
. "$(dirname "$0")/lib.sh"
trap cleanup_xk EXIT
insmod "$GOLDEN_KO" || fail "insmod xk_golden"
line() { grep "^x=$1 " $GOLDEN/probe; }
field() { line "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
expect_field() { expect_eq "x=$1 $2" "$(field "$1" "$2")" "$3"; }

# compiled-in: G_LT 10, G_LE 20, G_FOLD 12, G_TWICE 77, G_STORE 1000, G_INLINE 300
expect_field 5 lt 1
expect_field 25 le 4
expect_field 5 fold $((5 + 12 * 4 + 3))
expect_field 5 store 1000
expect_field 1000 var 960
expect_field 5 rmw 30

LT=3 LE=30 FOLD=100 TWICE=5 STORE=4242 INL=10 VAR=7 DUP=6 RMW=1234
$XK set G_LT=$LT || fail "set G_LT"
$XK set G_LE=$LE || fail "set G_LE"
$XK set G_FOLD=$FOLD || fail "set G_FOLD"
$XK set G_TWICE=$TWICE || fail "set G_TWICE"
$XK set G_STORE=$STORE || fail "set G_STORE"
$XK set G_RMW=$RMW || fail "set G_RMW (a read-modify-write of memory)"
$XK set G_INLINE=$INL || fail "set G_INLINE"
$XK set G_VAR=$VAR || fail "set G_VAR (a const variable)"
# s_start() is also the name of static functions of the kernel
[ "$(grep -c ' t s_start$' /proc/kallsyms)" -ge 2 ] || fail "s_start is not a repeated name"
$XK set G_DUP=$DUP || fail "set G_DUP (a repeated function name)"
$XK status
for x in 5 15 25 1000; do
	expect_field $x lt $([ $x -lt $LT ] && echo 1 || echo 2)
	expect_field $x le $([ $x -le $LE ] && echo 3 || echo 4)
	expect_field $x fold $((x + FOLD * 4 + 3))
	expect_field $x twice "$((x ^ TWICE)),$([ $x -gt $TWICE ] && echo 1 || echo 0)"
	expect_field $x store $STORE
	expect_field $x rmw $((x + RMW))
	inl() { [ "$1" -gt $INL ] && echo $INL || echo "$1"; }
	expect_field $x inline "$(( $(inl $x) + 1 )),$(inl $((x * 3)))"
	expect_field $x var $([ $x -gt $VAR ] && echo $((x - VAR)) || echo 0)
	expect_field $x dup $((x ^ DUP))
done
$XK unload --all
expect_field 5 lt 1
expect_field 5 fold $((5 + 12 * 4 + 3))
expect_field 5 rmw 30
[ "$(probes_left)" = 0 ] || fail "probes left after unload"
log "nine constants of the golden module retuned and restored"
