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

# Uses no instruction shows are refused by name: golden_table[G_ADDR] (a
# relocation's addend), golden_budget = G_BUDGET (a variable the code
# counts down: state). G_SIZE sizes golden_sized[] (zeros: size = G_SIZE *
# x) and bounds its loop: refused at every other value, --partial or not
# (the array keeps its size).
out=$($XK set G_ADDR=6 2>&1) && fail "G_ADDR set: an address's use was ignored"
echo "$out" | grep -q "refers to golden_table" || fail "G_ADDR refusal: $out"
out=$($XK set G_BUDGET=7 2>&1) && fail "G_BUDGET set: a variable the code changes was written"
echo "$out" | grep -q "golden_budget+0x0 is initialised by the constant, but golden_spend" ||
	fail "G_BUDGET refusal: $out"

# golden_initial_limit = G_INIT, a module parameter: the variable itself is
# written (init = x > limit), and back at unload
PARAM=/sys/module/xk_golden/parameters/golden_initial_limit
expect_eq "G_INIT compiled-in" "$(cat $PARAM)" 300
expect_field 25 init 0
expect_field 1000 init 1
$XK set G_INIT=20 || fail "set G_INIT (a variable)"
expect_eq "G_INIT=20" "$(cat $PARAM)" 20
expect_field 25 init 1
$XK status | grep -q "golden_initial_limit+0: 1 writes, none (a variable)" ||
	fail "status of a variable: $($XK status)"
$XK set G_INIT=1000 || fail "set G_INIT=1000"
expect_eq "G_INIT=1000" "$(cat $PARAM)" 1000
expect_field 25 init 0
expect_field 1000 init 0
$XK unload G_INIT || fail "unload G_INIT"
expect_eq "G_INIT unloaded" "$(cat $PARAM)" 300

# golden_sysctl_limit = G_SYSCTL, a sysctl whose handler resets it to the
# constant when 0 is written: the variable and the handler's reset retuned
SYSCTL=/proc/sys/xk_golden/golden_sysctl_limit
expect_eq "G_SYSCTL compiled-in" "$(cat $SYSCTL)" 40
expect_field 25 sysctl 0
$XK set G_SYSCTL=20 || fail "set G_SYSCTL (a sysctl's variable)"
expect_eq "G_SYSCTL=20" "$(cat $SYSCTL)" 20
expect_field 25 sysctl 1
echo 0 > $SYSCTL
expect_eq "G_SYSCTL reset by its handler to the retuned 20" "$(cat $SYSCTL)" 20
$XK unload G_SYSCTL || fail "unload G_SYSCTL"
expect_eq "G_SYSCTL unloaded" "$(cat $SYSCTL)" 40
echo 0 > $SYSCTL
expect_eq "G_SYSCTL reset to the compiled-in 40" "$(cat $SYSCTL)" 40
# golden_alt = ((golden_target.a + G_ALT) ^ limit, or - x) * x: the value
# lives across a static_cpu_has(X86_FEATURE_AVX2) site, both paths retuned
alt() {
	if grep -qw avx2 /proc/cpuinfo; then echo $(( ($2 ^ 1000) * $1 ))
	else echo $(( ($2 - $1) * $1 )); fi
}
expect_field 5 alt "$(alt 5 12)"
$XK set G_ALT=20 || fail "set G_ALT"
expect_field 5 alt "$(alt 5 20)"
expect_field 25 alt "$(alt 25 20)"
$XK unload G_ALT || fail "unload G_ALT"
expect_field 5 alt "$(alt 5 12)"
# golden_alti: (a + G_ALTI + 1) * x, the + 1 from the lea the kernel put
# over the object's mov (an alternative's site, right after the span)
expect_field 5 alti 35
$XK set G_ALTI=20 || fail "set G_ALTI"
expect_field 5 alti 105
$XK unload G_ALTI || fail "unload G_ALTI"
expect_field 5 alti 35
# golden_altx: the kernel runs the alternative's replacement, which reads
# x where the object reads v: (a + G_ALTX) * x, refused (the slice would
# follow the object's instruction), the value unchanged
expect_field 5 altx 25
out=$($XK set G_ALTX=20 2>&1) && fail "G_ALTX set across an alternative the slice cannot read"
echo "$out" | grep -q "cannot be retuned: golden_altx+\(0x\)\?[0-9a-f]* (.*: an alternative" ||
	fail "G_ALTX refusal: $out"
expect_field 5 altx 25
# golden_fault: a user store to a page that is not there faults, and the
# exception table resumes at efault: (a + G_FAULT) * x, retuned on that path
expect_field 5 fault 45
$XK set G_FAULT=20 || fail "set G_FAULT"
expect_field 5 fault 100
$XK unload G_FAULT || fail "unload G_FAULT"
expect_field 5 fault 45
# golden_tailw: x * 1000 + G_TAILW, G_TAILW passed on to a tail call in
# rsi: the callee reads all of it (500 -> 1000 written as its low byte
# alone would read 488)
expect_field 5 tailw 5500
$XK set G_TAILW=1000 || fail "set G_TAILW"
expect_field 5 tailw 6000
$XK set G_TAILW=70000 || fail "set G_TAILW"
expect_field 5 tailw 75000
$XK unload G_TAILW || fail "unload G_TAILW"
expect_field 5 tailw 5500
# golden_jl: (a + G_JL) * x, or with its static key enabled (the kernel
# patches the NOP into a jump) ((a + G_JL) ^ limit) * 3: both ways retuned,
# the key flipped while the constant is loaded
JL=/sys/kernel/debug/xk_golden/jl_key
expect_field 5 jl 55
$XK set G_JL=20 || fail "set G_JL"
expect_field 5 jl 100
echo 1 > $JL
expect_field 5 jl $(( (20 ^ 1000) * 3 ))
$XK set G_JL=30 || fail "set G_JL=30 with the key enabled"
expect_field 5 jl $(( (30 ^ 1000) * 3 ))
echo 0 > $JL
expect_field 5 jl 150
$XK unload G_JL || fail "unload G_JL"
expect_field 5 jl 55
# golden_idx = golden_idx_tab[x & 3] * G_IDX, the load indexed by x & 3:
# the module reads [rdi + rsi * 4] as the instruction did
expect_field 5 idx 200
expect_field 1000 idx 100
$XK set G_IDX=150 || fail "set G_IDX (an indexed memory input)"
expect_field 5 idx 300
expect_field 25 idx 300
expect_field 1000 idx 150
$XK unload G_IDX || fail "unload G_IDX"
expect_field 5 idx 200
out=$($XK set G_RESET=9 2>&1) && fail "G_RESET set: a variable code stores over was written"
echo "$out" | grep -q "golden_reset_level+0x0 is initialised by the constant, but golden_reset" ||
	fail "G_RESET refusal: $out"
expect_field 1000 init 1
# changed through its own interface: a load refuses it, nothing is loaded
echo 400 > $PARAM
out=$($XK set G_INIT=50 2>&1) && fail "G_INIT set over a value the admin chose"
echo "$out" | grep -q "golden_initial_limit+0x0 does not hold the compiled-in 300" ||
	fail "G_INIT refusal: $out"
expect_eq "G_INIT kept" "$(cat $PARAM)" 400
# ... and a value set there while loaded stays, at a change and at unload
echo 300 > $PARAM
$XK set G_INIT=50 || fail "set G_INIT=50"
echo 333 > $PARAM
$XK set G_INIT=60 || fail "set G_INIT=60"
expect_eq "G_INIT left as the admin set it" "$(cat $PARAM)" 333
dmesg | grep -q "golden_initial_limit+0x0 was changed since xkernel wrote it" ||
	fail "no log of a variable left as it was"
$XK unload G_INIT || fail "unload G_INIT"
expect_eq "G_INIT left at unload" "$(cat $PARAM)" 333
echo 300 > $PARAM
expect_field 5 size 40
out=$($XK set G_SIZE=4 2>&1) && fail "G_SIZE set without --partial"
echo "$out" | grep -q "golden_sized" || fail "G_SIZE refusal: $out"
for v in 4 9; do
	out=$($XK set --partial G_SIZE=$v 2>&1) && fail "G_SIZE=$v set: golden_sized keeps its size"
	echo "$out" | grep -q "golden_sized keeps its compiled size" || fail "G_SIZE=$v: $out"
done
[ "$(probes_left)" = 0 ] || fail "a refused set left probes"
expect_field 5 size 40
# loaded at its default (--partial), no later set can change it either
$XK load --partial G_SIZE || fail "load --partial G_SIZE at its default"
out=$($XK set G_SIZE=4 2>&1) && fail "G_SIZE=4 set while loaded"
echo "$out" | grep -q "bounds \[8, 8\]" || fail "G_SIZE=4 while loaded: $out"
$XK unload G_SIZE || fail "unload G_SIZE"
expect_field 5 size 40
# a heap object the constant sizes: objects allocated under one value
# would be used under another; any other value refused, --partial or not
out=$($XK set G_HEAP=8 2>&1) && fail "G_HEAP set without --partial"
echo "$out" | grep -q "golden_heap_alloc" || fail "G_HEAP refusal: $out"
for v in 8 32; do
	out=$($XK set --partial G_HEAP=$v 2>&1) && fail "G_HEAP=$v set: it sizes a heap object"
	echo "$out" | grep -q "golden_heap_alloc keeps its compiled size.*sizes a heap object" ||
		fail "G_HEAP=$v: $out"
done
[ "$(probes_left)" = 0 ] || fail "a refused set of G_HEAP left probes"
[ "$(probes_left)" = 0 ] || fail "probes left after unload"

# a module whose variable is retuned is held: it goes only after unload
$XK set G_INIT=20 || fail "set G_INIT=20 before rmmod"
rmmod xk_golden 2>/dev/null && fail "xk_golden went with its variable retuned"
expect_eq "G_INIT still retuned" "$(cat $PARAM)" 20
$XK unload G_INIT || fail "unload G_INIT"
rmmod xk_golden || fail "rmmod xk_golden after unload"
insmod "$GOLDEN_KO" || fail "insmod xk_golden again"
expect_eq "G_INIT compiled-in again" "$(cat $PARAM)" 300
log "ten constants of the golden module retuned and restored (a variable among them); state and address uses refused"
