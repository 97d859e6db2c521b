#!/bin/bash
# xk doctor on the stock kernel, and what it finds when the kernel is made
# to refuse (kprobes disarmed, kallsyms addresses hidden, not root); then
# host mode: a fetch of the running kernel into a cache without its symbols
# records them from this host's /proc/kallsyms, booting no guest.
. "$(dirname "$0")/lib.sh"
R=$(uname -r)
restore() {
	echo 1 > /sys/kernel/debug/kprobes/enabled
	echo "$kptr" > /proc/sys/kernel/kptr_restrict
	[ -n "${C:-}" ] && rm -rf "$C"
}
kptr=$(cat /proc/sys/kernel/kptr_restrict)
trap restore EXIT
state() { $XK -j doctor | jq -r ".checks[] | select(.name == \"$1\") | .state + \" \" + .detail"; }

mountpoint -q /sys/kernel/security || mount -t securityfs none /sys/kernel/security
out=$($XK doctor) || fail "xk doctor found a stop on the stock kernel: $out"
log "$out"
for c in root cache build modules lockdown kprobes kallsyms; do
	s=$(state $c)
	[ "${s%% *}" = ok ] || fail "$c: $s"
done
# policies: ok from Linux 6.10 on with the kernel's BTF; else limited,
# naming what is missing
ver=$(uname -r | cut -d. -f1-2)
s=$(state policies)
if [ ! -e /sys/kernel/btf/vmlinux ]; then
	[ "${s%% *}" = limited ] && [[ "$s" == *"no kernel BTF"* ]] ||
		fail "policies on a kernel without BTF: $s"
elif [ "${ver%%.*}" -gt 6 ] || { [ "${ver%%.*}" -eq 6 ] && [ "${ver#*.}" -ge 10 ]; }; then
	[ "${s%% *}" = ok ] || fail "policies: $s"
else
	[ "${s%% *}" = limited ] && [[ "$s" == *"Linux $ver: eBPF policies need 6.10"* ]] ||
		fail "policies on Linux $ver: $s"
fi
state build | grep -q "the cached image's build (build id $($XK -j doctor | jq -r .build_id))" ||
	fail "the running kernel is not the cached image's build: $(state build)"
state kprobes | grep -q 'jump-optimized' || fail "kprobes: $(state kprobes)"
# none: the lockdown LSM says so, or a kernel has none
s=$(state lockdown)
[ "$s" = "ok none" ] || [ "$s" = "ok none (no lockdown LSM in this kernel)" ] ||
	fail "lockdown: $s"

# disarmed kprobes never fire: a stop
echo 0 > /sys/kernel/debug/kprobes/enabled
$XK doctor > /tmp/doctor.out && fail "xk doctor passed with kprobes disarmed"
grep -q '^blocked  *kprobes .*disarmed' /tmp/doctor.out || fail "$(cat /tmp/doctor.out)"
grep -q '^1 check blocks retuning' /tmp/doctor.out || fail "$(tail -1 /tmp/doctor.out)"
echo 1 > /sys/kernel/debug/kprobes/enabled

# addresses hidden even from root: limited, not a stop
echo 2 > /proc/sys/kernel/kptr_restrict
s=$(state kallsyms)
[[ $s == "limited addresses hidden (kernel.kptr_restrict=2)"* ]] || fail "kallsyms: $s"
echo "$kptr" > /proc/sys/kernel/kptr_restrict

# not root: a stop naming the uid
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups $XK doctor 2>&1) &&
	fail "xk doctor passed for a user: $out"
grep -q '^blocked  *root .*euid 65534' <<< "$out" || fail "not root: $out"

# host mode: the running kernel fetched into a cache lacking its symbols
real=$($XK kernel info --field dir)
C=$(mktemp -d /tmp/xk-hostmode-XXXXXX)
mkdir -p "$C/kernels/$R"
ln -s "$(dirname "$(dirname "$real")")/debs" "$C/debs"
# a kernel of another Debian release than the host's: its toolchain root
# (its apt resolves the packages; the guest has no network to make one)
[ -d "$(dirname "$(dirname "$real")")/toolchains" ] &&
	ln -s "$(dirname "$(dirname "$real")")/toolchains" "$C/toolchains"
for f in "$real"/* "$real"/.stamp-*; do
	case ${f##*/} in kallsyms|.stamp-symbols|vm) ;; *) ln -s "$f" "$C/kernels/$R/" ;; esac
done
if [ "$($XK kernel info --field version)" = self-built ]; then
	# a kernel built from source is added, not fetched
	out=$(XK_CACHE=$C $XK kernel use --build-dir "$($XK kernel info --field source)" 2>&1) ||
		fail "build dir in host mode: $out"
else
	out=$(XK_CACHE=$C $XK kernel fetch --release "$R" 2>&1) || fail "fetch in host mode: $out"
fi
log "$out"
grep -q "recorded the kernel's symbols from this host's /proc/kallsyms" <<< "$out" ||
	fail "the fetch did not read this host's symbols"
[ -e "$C/vm" ] && fail "the fetch booted a guest: $(ls "$C/vm")"
got=$(grep ' _text$' "$C/kernels/$R/kallsyms")
expect_eq "_text" "$got" "$(grep ' _text$' /proc/kallsyms)"
# the same symbols as the guest recorded at the first fetch (KASLR moves
# only the addresses)
names() { grep -v '\[' "$1" | cut -d' ' -f2- | sort; }
cmp -s <(names "$C/kernels/$R/kallsyms") <(names "$real/kallsyms") ||
	fail "the host's symbols are not the kernel's recorded ones"
log "host mode: $(wc -l < "$C/kernels/$R/kallsyms") symbols from /proc/kallsyms"
