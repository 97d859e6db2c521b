#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The xk command line on the host: help pages, errors named by their cause,
# JSON output, and the guest harness's exit status and timeout.
set -u
cd "$(dirname "$0")/../.." || exit
. tests/lib.sh
XK=build/xk

help_pages() {
	local topic
	for topic in "" kernel "kernel fetch" "kernel info" "kernel list" \
		"kernel use" "kernel exec" vm "vm run" "vm shell" build gen load set unload status \
		apply tune doctor help version; do
		# shellcheck disable=SC2086
		out=$($XK help $topic) || die "no help page for '$topic'"
		expect_match "help $topic" "$out" "^NAME"
	done
	! $XK help no-such-command 2>/dev/null || die "unknown topic accepted"
}

unknown_release() {
	out=$($XK kernel fetch --release 9.9.9-nosuch-amd64 --no-source 2>&1)
	expect_eq status $? 1
	expect_match message "$out" "unknown kernel release '9.9.9-nosuch-amd64'"
}

malformed_release() {
	out=$($XK kernel fetch --release 'a;rm -rf' 2>&1)
	expect_eq status $? 1
	expect_match message "$out" "is not a kernel release"
}

no_network() {
	local cache
	cache=$(mktemp -d)
	out=$(unshare -n env XK_CACHE="$cache" $XK kernel fetch --no-source 2>&1)
	local st=$?
	rm -rf "$cache"
	expect_eq status $st 1
	expect_match message "$out" "cannot download .* from the Debian mirror"
}

json_info() {
	out=$($XK -j kernel info) || die "kernel info failed"
	rel=$(printf '%s' "$out" | jq -er .release) || die "not JSON: $out"
	[ -f "$(printf '%s' "$out" | jq -er .vmlinuz)" ] || die "no vmlinuz"
	expect_match release "$rel" "^6\.12\."
}

# the target among several kernels: no fetch, fake kernels in a cache of
# its own (tests/unit/test_target.c checks the rules; this, the commands)
kernel_target() {
	local cache a=6.12.117+deb12-cloud-amd64 b=6.12.118+deb12-cloud-amd64 r
	local ra=${a//+/[+]} rb=${b//+/[+]}	# as regular expressions
	cache=$(mktemp -d)
	for r in $a $b; do
		mkdir -p "$cache/kernels/$r"
		printf 'release=%s\nversion=1\n' $r > "$cache/kernels/$r/kernel.info"
		touch "$cache/kernels/$r/.stamp-unpack"
	done
	(
		export XK_CACHE=$cache
		unset XK_RELEASE
		out=$($XK kernel info 2>&1)
		expect_eq "kernel info: status" $? 1
		expect_match "no target" "$out" "2 kernels in the cache .* $ra, $rb .*xk kernel use"
		expect_eq "list: no target" "$($XK -j kernel list | jq -r '.target, (.kernels | length)')" "null
2"
		out=$($XK kernel use 9.9.9-nosuch 2>&1)
		expect_eq "use of a kernel not cached: status" $? 1
		expect_match "use of a kernel not cached" "$out" "9.9.9-nosuch is not in .*cached: $ra, $rb"
		$XK -q kernel use $b >/dev/null || die "kernel use $b failed"
		expect_eq "info after use" "$($XK kernel info --field release)" $b
		expect_eq "list after use" "$($XK -j kernel list | jq -r '.target, .target_why')" "$b
chosen"
		expect_eq "XK_RELEASE over use" "$(XK_RELEASE=$a $XK kernel info --field release)" $a
		expect_eq "--release over XK_RELEASE" \
			"$(XK_RELEASE=$b $XK kernel info --release $a --field release)" $a
		expect_match "kernel list marks the target" "$($XK kernel list)" "^\* $rb .*target: chosen"
		$XK -q kernel use --clear >/dev/null || die "kernel use --clear failed"
		[ ! -e "$cache/target" ] || die "the choice is still there"
	)
	local st=$?
	rm -rf "$cache"
	return $st
}

# xk kernel exec: the command's status; in a kernel's toolchain root (a
# system root of busybox here), the root's /etc, the host's files outside
# the system's directories at their paths, the same working directory
kernel_exec() {
	local cache r=6.12.118+deb13-cloud-amd64 root d xk=$PWD/$XK
	out=$($XK kernel exec 2>&1)
	expect_eq "no command: status" $? 2
	$XK kernel exec -- sh -c 'exit 7' >/dev/null 2>&1
	expect_eq "the command's status" $? 7
	cache=$(mktemp -d)
	d=$(mktemp -d)
	root=$cache/toolchains/trixie
	mkdir -p "$root/bin" "$root/etc" "$cache/kernels/$r"
	cp "$(command -v busybox)" "$root/bin/busybox"
	for c in sh cat pwd; do ln -s busybox "$root/bin/$c"; done
	echo trixie > "$root/etc/debian_version"
	echo host-file > "$d/f"
	printf 'release=%s\nversion=1\ntoolchain=%s\n' $r "$root" > "$cache/kernels/$r/kernel.info"
	touch "$cache/kernels/$r/.stamp-unpack"
	expect_eq "kernel info --field toolchain" \
		"$(XK_CACHE=$cache $XK kernel info --release $r --field toolchain)" "$root"
	out=$(cd "$d" && XK_CACHE=$cache $xk kernel exec --release $r -- \
		sh -c 'cat /etc/debian_version; pwd; cat f; exit 3' 2>&1)
	local st=$?
	rm -rf "$root"
	local gone
	gone=$(XK_CACHE=$cache $XK kernel exec --release $r -- sh -c 'exit 0' 2>&1)
	local gone_st=$?
	rm -rf "$cache" "$d"
	expect_eq "in the root: status" $st 3
	expect_eq "in the root: its /etc, the host's files, the same directory" \
		"$out" "trixie
$d
host-file"
	expect_eq "a root gone: status" $gone_st 1
	expect_match "a root gone: named" "$gone" "toolchain root .*trixie is missing or incomplete"
}

# xk kernel use --build-dir: a tree that is not built, and one whose
# release is a Debian kernel of the cache, are refused by name, nothing
# added (make check-selfbuilt: a real one, in the guest)
kernel_build_dir() {
	local cache d r=6.12.118+deb12-cloud-amd64 f
	cache=$(mktemp -d)
	d=$(mktemp -d)
	out=$(XK_CACHE=$cache $XK kernel use --build-dir "$d" 2>&1)
	expect_eq "not built: status" $? 1
	expect_match "not built: named" "$out" "is not a built kernel tree: it has no .config"
	for f in .config vmlinux arch/x86/boot/bzImage Module.symvers \
		scripts/extract-vmlinux include/config/kernel.release; do
		mkdir -p "$d/$(dirname $f)" && touch "$d/$f"
	done
	echo $r > "$d/include/config/kernel.release"
	mkdir -p "$cache/kernels/$r"
	printf 'release=%s\nversion=1\n' $r > "$cache/kernels/$r/kernel.info"
	touch "$cache/kernels/$r/.stamp-unpack"
	out=$(XK_CACHE=$cache $XK kernel use --build-dir "$d" 2>&1)
	local st=$?
	local info
	info=$(cat "$cache/kernels/$r/kernel.info")
	local chosen=no
	[ -e "$cache/target" ] && chosen=yes
	# an unfinished fetch of Debian's kernel is no self-built one either
	rm "$cache/kernels/$r/kernel.info"
	local unfinished
	unfinished=$(XK_CACHE=$cache $XK kernel use --build-dir "$d" 2>&1)
	local unfinished_st=$?
	local left
	left=$(ls -A "$cache/kernels/$r")
	# a self-built release is not fetched from Debian
	mkdir -p "$cache/kernels/6.12.118-mine"
	touch "$cache/kernels/6.12.118-mine/.stamp-self-built"
	local fetched
	fetched=$(XK_CACHE=$cache $XK kernel fetch --release 6.12.118-mine 2>&1)
	local fetched_st=$?
	rm -rf "$cache" "$d"
	expect_eq "unfinished fetch: status" $unfinished_st 1
	expect_match "unfinished fetch: named" "$unfinished" "holds an unfinished fetch of Debian's kernel"
	expect_eq "unfinished fetch: kept" "$left" ".stamp-unpack"
	expect_eq "fetch of a self-built release: status" $fetched_st 1
	expect_match "fetch of a self-built release: named" "$fetched" "is a kernel built from source"
	expect_eq "Debian's release: status" $st 1
	expect_match "Debian's release: named" "$out" "the cache holds Debian's kernel ${r//+/[+]}"
	expect_eq "Debian's kernel kept" "$info" "release=$r
version=1"
	expect_eq "nothing chosen" $chosen no
}

json_error() {
	out=$($XK -j kernel fetch --release 'x y' 2>/dev/null)
	printf '%s' "$out" | jq -er .error >/dev/null || die "no JSON error: $out"
}

bad_option_value() {
	out=$($XK vm run --timeout abc -- true 2>&1)
	expect_eq status $? 2
	expect_match message "$out" "--timeout must be a number"
}

# options after "--" (and after the guest's command) are the guest's
# every command's -h and --help, anywhere, is its help page
command_help() {
	local topic want
	for topic in kernel "kernel fetch" "kernel info" "kernel list" \
		"kernel use" "kernel exec" vm "vm run" "vm shell" build gen load set unload status \
		apply tune doctor help version; do
		# shellcheck disable=SC2086
		want=$($XK help $topic) || die "no help page for '$topic'"
		# shellcheck disable=SC2086
		expect_eq "xk $topic -h" "$($XK $topic -h)" "$want"
		# shellcheck disable=SC2086
		expect_eq "xk $topic --help" "$($XK $topic --help)" "$want"
	done
	expect_eq "xk -h" "$($XK -h)" "$($XK help)"
	expect_eq "xk set X=1 -h" "$($XK set X=1 -h)" "$($XK help set)"
	expect_eq "xk -q gen -h" "$($XK -q gen -h)" "$($XK help gen)"
}

# docs/man holds one man page per help topic, made from the help text
man_pages() {
	local topic page
	out=$(tools/xk/gen-man.sh --check $XK docs/man) || die "$out"
	command -v man >/dev/null || return 0
	while IFS= read -r topic; do
		page=docs/man/xk${topic:+-${topic// /-}}.1
		# shellcheck disable=SC2086
		# the NAME line names the page as its file does (whatis)
		expect_match "$page" "$(MANWIDTH=200 man -l "$page" 2>/dev/null)" \
			"$($XK help $topic | sed -n 2p | sed 's/^ *//' |
			   sed "s/^xk $topic /xk-${topic// /-} /")"
	done < <($XK help --topics)
}

# tools/completion/xk.bash completes commands, options, choices, constants
completion() {
	# shellcheck disable=SC1091
	. tools/completion/xk.bash
	comp() {
		COMP_WORDS=("$XK" "$@")
		COMP_CWORD=$#
		COMPREPLY=()
		_xk
		echo "${COMPREPLY[*]}"
	}
	expect_eq "xk k" "$(comp k)" kernel
	expect_eq "xk kernel" "$(comp kernel "")" "exec fetch info list use"
	expect_eq "xk -j vm r" "$(comp -j vm r)" run
	expect_eq "xk set X=1 --mo" "$(comp set X=1 --mo)" --mode
	expect_eq "xk set --mode" "$(comp set --mode "")" "immediate global per-task"
	expect_eq "xk gen BLK_MAX_R" "$(comp gen BLK_MAX_R)" BLK_MAX_REQUEST_COUNT
	expect_eq "xk gen BLK_MAX" "$(comp gen BLK_MAX)" "BLK_MAX_REQUEST_COUNT BLK_MAX_TIMEOUT"
	expect_eq "xk set BLK_MAX_R" "$(comp set BLK_MAX_R)" BLK_MAX_REQUEST_COUNT=
	expect_eq "xk help vm" "$(comp help vm "")" "run shell"
	expect_eq "xk kernel info --field rel" "$(comp kernel info --field rel)" release
	expect_eq "xk vm run -- -j" "$(comp vm run -- --tim)" ""
}

# global options after the command and its arguments: same output
global_options_anywhere() {
	local strip='del(.build_seconds, .analysis_seconds)'
	expect_eq "gen --list -j" "$($XK gen --list -j)" "$($XK -j gen --list)"
	$XK gen --list -j | jq -e 'length > 0' >/dev/null || die "not JSON"
	expect_eq "gen NAME -j" \
		"$($XK gen BLK_MAX_REQUEST_COUNT -q -j | jq -S "$strip")" \
		"$($XK -q -j gen BLK_MAX_REQUEST_COUNT | jq -S "$strip")"
	expect_eq "kernel info --field release -j" \
		"$($XK kernel info -j --field release)" \
		"$($XK -j kernel info --field release)"
	expect_eq "version -j" "$($XK version -j | jq -r .version)" \
		"$($XK -j version | jq -r .version)"
	# a usage error before the -j is JSON too
	out=$($XK set X=1 --bogus -j 2>/dev/null)
	expect_match "JSON error" "$(printf '%s' "$out" | jq -r .error)" \
		"unknown option '--bogus'"
}

# a command's options before or after its arguments; "--" ends them
options_after_arguments() {
	local args
	for args in "X=1 --mode bogus" "--mode bogus X=1" "X=1 --mode=bogus" \
		"X=1 -m bogus" "-mbogus X=1"; do
		# shellcheck disable=SC2086
		out=$($XK set $args 2>&1)
		expect_eq "set $args: status" $? 2
		expect_match "set $args" "$out" \
			"--mode is immediate, global or per-task, not 'bogus'"
	done
	out=$($XK load BLK_MAX_REQUEST_COUNT --timeout 0 2>&1)
	expect_eq "load --timeout 0: status" $? 2
	expect_match "load NAME --timeout 0" "$out" "--timeout is 1 to 60000 ms"
	out=$($XK load BLK_MAX_REQUEST_COUNT --param a=1 2>&1)
	expect_eq "load --param: status" $? 2
	expect_match "load NAME --param" "$out" \
		"--param sets a parameter of a --policy"
	out=$($XK set BLK_MAX_REQUEST_COUNT=x --mode global 2>&1)
	expect_eq "set NAME=x: status" $? 2
	expect_match "set NAME=x" "$out" "'x' is not a number"
	out=$($XK set -- X=1 --mode 2>&1)
	expect_eq "set -- X=1 --mode: status" $? 2
	expect_match "set -- ... --mode" "$out" "'--mode' is not NAME=VALUE"
	out=$($XK gen --list BLK_MAX_REQUEST_COUNT --nosuch 2>&1)
	expect_eq "gen --nosuch: status" $? 2
	expect_match "gen --nosuch" "$out" "unknown option '--nosuch' \(see 'xk help gen'\)"
	out=$($XK kernel info --field 2>&1)
	expect_eq "kernel info --field: status" $? 2
	expect_match "kernel info --field" "$out" "--field needs a value"
	expect_eq "kernel info --field=release" "$($XK kernel info --field=release)" \
		"$($XK kernel info -f release)"
	out=$($XK vm run --smp 0 -- true 2>&1)
	expect_eq "vm run --smp 0: status" $? 2
	expect_match "vm run --smp 0" "$out" "--smp must be a number from 1 to 64, not '0'"
}

# xk apply reads *.conf as sysctl.d does: /etc over /usr/lib by file name,
# files in lexical order, later settings win; --dry-run touches nothing
apply_config() {
	local d
	d=$(mktemp -d)
	mkdir "$d/etc" "$d/lib" "$d/empty"
	printf '# block\nBLK_MAX_REQUEST_COUNT = 4\nmode = global\n' > "$d/etc/10-blk.conf"
	printf 'BLK_MAX_REQUEST_COUNT = 64\nSHRINK_BATCH = 7\n' > "$d/lib/10-blk.conf"
	printf 'SHRINK_BATCH = 0x100 # hex\n; comment\n\nMAX_SOFTIRQ_RESTART=5\n' > "$d/lib/20-z.conf"
	printf 'MAX_SOFTIRQ_RESTART = 3\nSHRINK_BATCH = 9\n' > "$d/etc/05-a.conf"
	out=$($XK -j apply --dry-run "$d/etc" "$d/lib") || die "dry run failed: $out"
	expect_eq files "$(jq -c '[.files[] | sub(".*/"; "")]' <<< "$out")" \
		'["05-a.conf","10-blk.conf","20-z.conf"]'
	expect_eq "10-blk.conf from etc" "$(jq -r '.files[1]' <<< "$out")" "$d/etc/10-blk.conf"
	expect_eq overridden "$(jq -r '.overridden[0] | .file + " " + .by' <<< "$out")" \
		"$d/lib/10-blk.conf $d/etc/10-blk.conf"
	expect_eq settings "$(jq -c '[.constants[] | [.constant, .value]]' <<< "$out")" \
		'[["MAX_SOFTIRQ_RESTART",5],["SHRINK_BATCH",256],["BLK_MAX_REQUEST_COUNT",4]]'
	expect_eq source "$(jq -r '.constants[1].source' <<< "$out")" "$d/lib/20-z.conf:1"
	expect_eq mode "$(jq -r .mode <<< "$out")" global
	expect_eq "--mode over the files" \
		"$($XK -j apply -n --mode per-task "$d/etc" "$d/lib" | jq -r .mode)" per-task
	out=$($XK apply --dry-run "$d/etc" "$d/lib" 2>&1) || die "text dry run: $out"
	expect_match text "$out" "^BLK_MAX_REQUEST_COUNT = 4 \($d/etc/10-blk.conf:2\)$"
	expect_match text "$out" "10-blk.conf \(overrides $d/lib/10-blk.conf\)"
	expect_match text "$out" "would apply 3 constants in one transaction \(global\)"
	out=$($XK apply -n "$d/empty" "$d/nosuch")
	expect_match "no files" "$out" "would apply 0 constants"
	# a line that cannot be read is named; the rest is still read
	printf 'X = y\nno equals\nmode = fast\n1X = 3\n' > "$d/etc/30-bad.conf"
	out=$($XK apply -n "$d/etc" "$d/lib" 2>&1)
	expect_eq "bad lines: status" $? 1
	expect_match "bad number" "$out" "30-bad.conf:1: X: 'y' is not a number"
	expect_match "no =" "$out" "30-bad.conf:2: 'no equals' is not CONSTANT = VALUE"
	expect_match "bad mode" "$out" "30-bad.conf:3: mode is immediate, global or per-task, not 'fast'"
	expect_match "bad name" "$out" "30-bad.conf:4: '1X' is not the name of a constant"
	expect_match "rest read" "$out" "would apply 3 constants"
	# /etc masks a file of /usr/lib with a link to /dev/null
	rm "$d/etc/30-bad.conf"
	ln -s /dev/null "$d/etc/20-z.conf"
	expect_eq masked "$($XK -j apply -n "$d/etc" "$d/lib" | jq -c '[.constants[] | [.constant, .value]]')" \
		'[["MAX_SOFTIRQ_RESTART",3],["SHRINK_BATCH",9],["BLK_MAX_REQUEST_COUNT",4]]'
	rm -rf "$d"
}

# xk processes on one kernel at once (make -j2 of the policies runs an xk
# gen per policy): the kernel's make runs in its tree under the tree's lock,
# or two makes break each other's scripts and include/config (Debian 12's
# 6.1). An xk that finds the lock held waits, says so, then builds
tree_lock() {
	local src obj=mm/shrinker.o holder st
	src=$($XK -q kernel info --field source) || die "no kernel source"
	$XK -q gen SHRINK_BATCH >/dev/null || die "xk gen SHRINK_BATCH failed"
	[ -e "$src/$obj" ] || die "no baseline $obj after xk gen"
	rm -f "$src/$obj"
	flock "$src/.xk-make.lock" sleep 4 &
	holder=$!
	sleep 1
	out=$($XK gen SHRINK_BATCH 2>&1)
	st=$?
	wait $holder
	expect_eq status $st 0
	expect_match message "$out" "waiting for another xk's make in this kernel tree"
	[ -e "$src/$obj" ] || die "the baseline $obj was not built again"
}

guest_status_comes_back() {
	out=$($XK vm run --timeout 300 -- sh -c 'echo from-guest "$@"; exit 7' \
		sh -j --json -h -- -q 2>&1)
	expect_eq status $? 7
	expect_match output "$out" "^from-guest -j --json -h -- -q$"
}

guest_missing_command() {
	$XK vm run --timeout 300 -- no-such-command-xk >/dev/null 2>&1
	expect_eq status $? 127
}

guest_hang_times_out() {
	out=$($XK vm run --timeout 25 -- sleep 600 2>&1)
	expect_eq status $? 124
	expect_match message "$out" "did not finish within 25 s"
	expect_match message "$out" "last console lines"
}

guest_cwd_under_tmp() {
	local d xk
	d=$(mktemp -d)
	xk=$PWD/$XK
	out=$(cd "$d" && echo hello > file && $xk vm run --timeout 300 -- sh -c 'pwd; cat file; echo guest > new' 2>&1)
	local st=$?
	[ -e "$d/new" ] && die "the guest wrote to the host"
	rm -rf "$d"
	expect_eq status $st 0
	expect_eq output "$out" "$d
hello"
}

guest_json() {
	out=$($XK vm run --timeout 300 -j -- uname -r)
	rel=$($XK kernel info --field release)
	expect_eq exit_status "$(printf '%s' "$out" | jq -r .exit_status)" 0
	expect_eq output "$(printf '%s' "$out" | jq -r .output)" "$rel"
}

t "the harness fails a test on its first failed check" tests/cli/test_harness.sh
t "help page for every command" help_pages
t "unknown release is named" unknown_release
t "malformed release is refused" malformed_release
t "no network to the mirror is reported" no_network
t "kernel info -j is JSON" json_info
t "the target among several kernels: list, use, XK_RELEASE, --release" kernel_target
t "kernel exec: status, and a toolchain root's files with the host's" kernel_exec
t "kernel use --build-dir: refusals named, nothing added" kernel_build_dir
t "errors are JSON under -j" json_error
t "bad option value is a usage error" bad_option_value
t "xk COMMAND -h prints its help page" command_help
t "a man page per help topic, up to date" man_pages
t "bash completion of commands, options and constants" completion
t "global options anywhere: xk gen NAME -j is xk -j gen NAME" global_options_anywhere
t "a command's options before or after its arguments" options_after_arguments
t "xk apply: sysctl.d precedence and order, --dry-run" apply_config
t "xk processes on one kernel: the tree's make waits for the other's" tree_lock
t "guest command's exit status comes back" guest_status_comes_back
t "guest command not found is 127" guest_missing_command
t "hung guest is killed with the console tail" guest_hang_times_out
t "vm run -j carries the output" guest_json
t "guest runs in a working directory under /tmp, writes stay in it" guest_cwd_under_tmp
finish
