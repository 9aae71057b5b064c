# SPDX-License-Identifier: GPL-2.0
# Common helpers for the project's scripts. Sourced, never run.
# shellcheck shell=bash disable=SC2034 # variables are for the sourcing scripts

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
# The kernel git tree holding base + series (the tree developers hack in),
# and a worktree of the pristine base next to it.
LINUX=${LINUX:-$BUILD/linux}
BASE=${BASE:-$BUILD/base}
BASE_TAG=lazy-rss-base
BRANCH=lazy-rss
JOBS=${JOBS:-$(nproc)}

say() { printf '%s %s\n' "[$(date +%H:%M:%S)]" "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }

# How a script ends, which make check and make mutate read: 0 when all
# its checks passed, 1 when a check failed, 2 on an error (bad input,
# a missing tree: die), 3 when it could not build what it tests (a
# mutant that breaks the build is not caught by it: die_build).
EXIT_FAIL=1 EXIT_ERROR=2 EXIT_NOBUILD=3
die() { printf 'error: %s\n' "$*" >&2; exit "$EXIT_ERROR"; }
die_build() { printf 'error: %s\n' "$*" >&2; exit "$EXIT_NOBUILD"; }

# A number of vCPUs a guest can have, at least $2 (default 1): the pc
# machine takes up to 255 vCPUs; the guest kernels have NR_CPUS=256.
cpus_ok() { [[ $1 =~ ^[1-9][0-9]*$ ]] && [ "$1" -le 255 ] && [ "$1" -ge "${2:-1}" ]; }
# vCPUs of a guest (scripts/vm --smp, make selftest SMP=, KUnit on QEMU).
GUEST_SMP=${SMP:-4}
cpus_ok "$GUEST_SMP" || die "SMP=$SMP: want a number of vCPUs from 1 to 255"
# Possible CPUs of the test guests (KUnit on x86, kselftests): two more than
# are online at boot, present and offline, so that the tests see per-CPU
# state of CPUs that were not online when it was set up, and bring one up.
GUEST_POSSIBLE=$((GUEST_SMP + 2 > 255 ? 255 : GUEST_SMP + 2))

# Logs of every step: build/logs/ (make check names each one it writes).
LOGS=$BUILD/logs
mkdir -p "$LOGS"
# The one git identity of the commits the tree scripts make (the base
# commit, git am in our worktrees): the author of patches/.
GIT_NAME="lazy-rss developers" GIT_EMAIL=lazy-rss@example.org
git_id() {	# git_id TREE ARGS...: git in TREE, with our identity if it has none
	local t=$1; shift
	if git -C "$t" config user.email >/dev/null; then
		git -C "$t" "$@"
	else
		git -C "$t" -c user.name="$GIT_NAME" -c user.email="$GIT_EMAIL" "$@"
	fi
}

# Install the Debian package groups of scripts/deps.sh that a script needs
# (quick when they are there). make check's deps test reads these calls.
need_deps() { "$TOP/scripts/deps.sh" "$@"; }

# ccache keyed on paths relative to the tree, so that a fresh clone of this
# repository in another directory still hits the cache (CI does that).
use_ccache() {
	command -v ccache >/dev/null || die "ccache not found (run scripts/deps.sh build)"
	export CCACHE_NOHASHDIR=1
	export CCACHE_BASEDIR=$BUILD
	export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
	export KBUILD_BUILD_USER=lazy-rss KBUILD_BUILD_HOST=build
	CC_CCACHE="ccache gcc"
	export CC_CCACHE
}

# need_space MIB WHAT: die unless the file system of build/ has MIB MiB
# free for WHAT, rather than fail half-way with "No space left on device".
need_space() {
	local free
	free=$(df -m --output=avail "$BUILD" | tail -n 1 | tr -d ' ')
	[[ $free =~ ^[0-9]+$ ]] || die "cannot read the free space of $BUILD (df -m)"
	[ "$free" -ge "$1" ] ||
		die "$2 needs $1 MiB free under ${BUILD}, the file system has $free MiB left"
}

need_tree() {
	[ -d "$1/.git" ] || [ -f "$1/.git" ] ||
		die "$1 is not a kernel git tree: run 'make tree' first"
}

# The Linux version of the tree $1, which must be a 6.12.y.
kernel_version() {
	local v
	v=$(make -s -C "$1" kernelversion 2>/dev/null) || die "cannot read the kernel version of $1"
	case $v in
	6.12|6.12.*) echo "$v" ;;
	*) die "$1 is Linux $v; the series is for 6.12.y" ;;
	esac
}

# worktree_at_base DIR: DIR is a detached worktree of build/linux at the
# base (tag lazy-rss-base) with no change: added when missing, else reset
# (an interrupted git am aborted, changes to tracked files dropped).
worktree_at_base() {
	if [ ! -e "$1/.git" ]; then
		git -C "$LINUX" worktree add -q --detach "$1" "$BASE_TAG" || die "cannot add the worktree $1"
		return
	fi
	git -C "$1" am --abort >/dev/null 2>&1 || true
	{ git -C "$1" checkout -q -f --detach "$BASE_TAG" && git -C "$1" reset -q --hard; } ||
		die "cannot reset the worktree $1 to $BASE_TAG"
}

# series_patches DIR: the patch files that DIR/series lists, in order,
# one path a line (DIR: $PATCHES, or a series of BENCH_SERIES=DIR).
PATCHES=$TOP/patches
series_patches() {
	local dir=$1 p
	[ -f "$dir/series" ] || die "no series file in $dir"
	while read -r p; do
		[ -f "$dir/$p" ] || die "${dir#"$TOP"/}/series names $p, which does not exist"
		echo "$dir/$p"
	done < <(grep -v -e '^#' -e '^$' "$dir/series")
}

# The objects of the C files the series (in $LINUX) changes or adds,
# outside tools/, whose source tree $1 has (default: $LINUX). One a line.
series_objects() {
	local files f
	files=$(git -C "$LINUX" diff --name-only "$BASE_TAG" HEAD -- '*.c' ':!tools/') ||
		die "$LINUX: cannot list the series' files (git diff $BASE_TAG HEAD)"
	for f in $files; do
		if [ -f "${1:-$LINUX}/$f" ]; then echo "${f%.c}.o"; fi
	done
}

# The kernels: the registry ./kernels, one line each, NAME ROLE PATCHES
# BOOT DESCRIPTION separated by tabs (see its header).
KERNELS_FILE=$TOP/kernels
kernel_names() {	# every NAME, in the registry's order, one a line
	awk -F'\t+' '!/^#/ && NF >= 5 { print $1 }' "$KERNELS_FILE"
}
kernels_of_role() {	# kernels_of_role ROLE: the NAMEs of ROLE, in the registry's order
	awk -F'\t+' -v r="$1" '!/^#/ && NF >= 5 && $2 == r { print $1 }' "$KERNELS_FILE"
}
kernel_field() {	# kernel_field NAME role|patches|boot|desc
	local n
	case $2 in role) n=2 ;; patches) n=3 ;; boot) n=4 ;; desc) n=5 ;; *) die "kernel_field: no field $2" ;; esac
	awk -F'\t+' -v k="$1" -v n="$n" '!/^#/ && NF >= 5 && $1 == k { print $n; found = 1; exit }
		END { exit !found }' "$KERNELS_FILE" ||
		die "unknown kernel '$1' (the kernels of ${KERNELS_FILE#"$TOP"/}: $(kernel_names | paste -sd' '))"
}
kernel_boot() {	# the kernel command line that NAME's guests add (may be empty)
	local b
	b=$(kernel_field "$1" boot) || exit
	[ "$b" = - ] || echo "$b"
}
# The bench tree of NAME: build/bench-FIRST, FIRST being the first kernel
# of the registry with NAME's patches (lazyoff: build/bench-patched).
bench_tree() {
	local p
	p=$(kernel_field "$1" patches) || exit
	echo "$BUILD/bench-$(awk -F'\t+' -v p="$p" '!/^#/ && NF >= 5 && $3 == p { print $1; exit }' "$KERNELS_FILE")"
}
# Guest kernel variants (scripts/build.sh): test (guest + debug options),
# bench (guest only), kasan and kcsan (test + KASAN or KCSAN), norseq
# (test without rseq, so without mm_cid), irqsoff (bench + the irqsoff
# tracer).
VARIANTS="test bench kasan kcsan irqsoff norseq"
variant_ok() { [[ " $VARIANTS " == *" $1 "* ]]; }
# kernel_tree NAME VARIANT: the source tree of that kernel: the base and
# the patched test kernels (every variant but bench) are built in
# build/base and build/linux, the others in their bench tree.
kernel_tree() {
	variant_ok "$2" || die "unknown kernel variant '$2' ($VARIANTS)"
	case $2/$1 in
	bench/*|irqsoff/*) bench_tree "$1" ;;
	*/base)		echo "$BASE" ;;
	*/patched)	echo "$LINUX" ;;
	*)		bench_tree "$1" ;;
	esac
}
# The bench plan (tools/bench/plan.py): make bench's facts, which
# scripts/insn-profile.sh and scripts/irqsoff.sh share.
bench_plan() { python3 "$TOP/tools/bench/plan.py" "$@"; }
# A cell of make bench: ONLINE/POSSIBLE vCPUs, 1 <= ONLINE <= POSSIBLE <= 255.
cell_ok() { bench_plan cell "$1" >/dev/null 2>&1; }
# stage_workloads DIR: the benchmark's programs, at the paths its guests run
# them from (scripts/bench.sh adds perf).
stage_workloads() {
	mkdir -p "$1/bin" "$1/usr/local/bin"
	gcc -O2 -Wall -static -pthread -o "$1/usr/local/bin/forkbench" "$TOP/tools/bench/forkbench.c"
	gcc -O2 -Wall -static -o "$1/bin/true" "$TOP/tools/bench/true.c"
	gcc -O2 -Wall -static -o "$1/usr/local/bin/mark" "$TOP/tools/bench/mark.c"
	cp "$TOP/tools/bench/bench-guest" "$1/usr/local/bin/"
}
# bench_vm KERNEL CELL LOGDIR STAGE [scripts/vm options] -- COMMAND...: one
# -icount guest of bench kernel KERNEL in CELL (ONLINE/POSSIBLE), as make
# bench boots them (the memory: the plan's rule), with STAGE copied to its
# root; KERNEL is a registry name (its bench image) or NAME:VARIANT
# (scripts/irqsoff.sh). The possible CPUs that
# are not online are not present either, as hot-pluggable vCPUs: QEMU then
# emulates only the online ones. (With scripts/vm --maxcpus, QEMU emulates
# all of them, present and offline: same guest times, ten times the host
# time at 255.) One virtio-blk queue: the default is one per possible CPU,
# which takes seconds of guest time to set up at 255.
bench_vm() {
	local k=bench-$1 n m mem log=$3 stage=$4
	read -r n m mem <<<"$(bench_plan cell "$2")" && [ -n "$mem" ] || exit "$EXIT_ERROR"
	[[ $1 != *:* ]] || k=$(kernel_image "${1%%:*}" "${1#*:}") || exit
	shift 4
	need_deps vm bench
	"$TOP/scripts/vm" --kernel "$k" --smp "$n" --icount --mem "${mem}M" \
		--append "possible_cpus=$m virtio_blk.num_request_queues=1 rcupdate.rcu_cpu_stall_suppress=1" \
		--timeout 7200 --log "$log" --dir "$stage:/" \
		--add /bin/bash --add /usr/bin/numactl --add /usr/bin/perf "$@"
}
kernel_image() {	# kernel_image NAME VARIANT: the bzImage scripts/build.sh makes
	local t
	t=$(kernel_tree "$1" "$2") || exit
	echo "$t/.out-$2/arch/x86/boot/bzImage"
}

# A kselftest target of tree $LINUX that run_kselftest.sh runs (rseq, proc,
# ...; not mm, which runs by run_vmtests.sh categories).
ksft_target() { [ "$1" != mm ] && [ -f "$LINUX/tools/testing/selftests/$1/Makefile" ]; }

# The KUnit suites: every .kunitconfig that the series adds to tree $1
# (lib/tests/.kunitconfig, ...) and its NAME.kunitconfig companions (such
# as lib/tests/smp.kunitconfig, for SMP machines), or $KUNITCONFIG when set.
# One per line. kunitconfigs TREE uml: without the companions (UML in 6.12
# has no SMP).
kunitconfigs() {
	if [ -n "${KUNITCONFIG:-}" ]; then
		[ -f "$KUNITCONFIG" ] || die "KUNITCONFIG=$KUNITCONFIG is not a file"
		echo "$KUNITCONFIG"
		return
	fi
	local list f
	list=$(git -C "$1" diff --name-only --diff-filter=A "$BASE_TAG" HEAD -- '*.kunitconfig' '.kunitconfig') ||
		die "$1: cannot list the series' files (git diff $BASE_TAG HEAD)"
	[ -n "$list" ] || die "$1: the series adds no .kunitconfig (KUnit suites)"
	for f in $list; do
		[ "${2:-}" != uml ] || [ "${f##*/}" = .kunitconfig ] || continue
		echo "$1/$f"
	done
}

# The pass/fail tally of a script. tally pass|fail|skip [WHAT]: count one
# check (a failure or a skip is named); tally_add LINE: add the counts of a
# sub-step's "N passed, N failed[, N skipped]" line (a line without them
# counts as one failure); tally_sub COMMAND...: run a sub-step that ends
# with such a line, show its output indented and add its counts (and a
# failure if it exits non-zero with none); tally_end [LABEL]: print the
# closing line "[LABEL: ]N passed, N failed, N skipped" and return
# non-zero ($EXIT_FAIL) on a failure.
passed=0 failed=0 skipped=0
tally() {
	case $1 in
	pass)	passed=$((passed + 1)) ;;
	fail)	failed=$((failed + 1)); echo "  FAIL: ${2:-}" ;;
	skip)	skipped=$((skipped + 1)); echo "  SKIP: ${2:-}" ;;
	*)	die "tally $1" ;;
	esac
}
tally_add() {
	local p f s
	read -r p f s < <(printf '%s\n' "$1" | sed -n 's/.*\b\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed\(, \([0-9][0-9]*\) skipped\)\{0,1\}.*/\1 \2 \4/p')
	passed=$((passed + ${p:-0})) failed=$((failed + ${f:-1})) skipped=$((skipped + ${s:-0}))
}
tally_sub() {	# run a sub-step, show its output indented, add its last line
	local out line rc before=$failed
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed -e '$d' -e 's/^/  /'
	line=$(printf '%s\n' "$out" | tail -1)
	echo "  $line"
	tally_add "$line"
	[ "$rc" -eq 0 ] || [ "$failed" -gt "$before" ] || tally fail "${*##*/}: exit status $rc"
}
tally_end() {
	echo "${1:+$1: }$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ] || return "$EXIT_FAIL"
}

# Every CONFIG_X=v of fragment $1 must hold in .config $2 ("=n" means unset).
# When fragments set a symbol twice, the last one wins, as in kconfig.
check_config() {
	local bad=0 line sym val
	while IFS= read -r line; do
		sym=${line%%=*} val=${line#*=}
		if [ "$val" = n ]; then
			grep -q "^$sym=" "$2" || continue
		else
			grep -qxF "$sym=$val" "$2" && continue
		fi
		printf 'config: %s requested, .config has: %s\n' "$line" \
			"$(grep -E "^(# )?${sym}[= ]" "$2" || echo "(not visible)")" >&2
		bad=1
	done < <(awk -F= '/^CONFIG_[A-Za-z0-9_]*=/ { last[$1] = $0; order[NR] = $1 }
			END { for (i = 1; i <= NR; i++) if (order[i] in last) { print last[order[i]]; delete last[order[i]] } }' "$1")
	return $bad
}

# What a kernel log must never contain during our runs.
BAD_LOG='Kernel panic|Oops|BUG:|WARNING:|Bad rss-counter state|general protection fault|KCSAN:|KASAN:|UBSAN:|ODEBUG:|INFO: task .* blocked|rcu: INFO:|self-detected stall'
# The part of it that says the kernel is stuck (scripts/vm stops the
# guest STALL_GRACE seconds after it appears); "soft lockup" says so
# after "BUG:".
STALL_LOG='INFO: task .* blocked|rcu: INFO:|self-detected stall|soft lockup'
STALL_GRACE=30

# Print the first bad report of log $1 and return 0 when it has one.
log_has_bad() {
	grep -E -q "$BAD_LOG" "$1" || return 1
	grep -E -m 1 -A 25 "$BAD_LOG" "$1" | sed 's/^/  | /' >&2
	return 0
}

# The files the series adds, at their in-tree paths, mirrored in this repo,
# with a generated README.md in each mirror root (lib, include, mm, kernel,
# tools/testing/selftests, Documentation/SUBDIR).
# Documentation/project/ holds the project's own notes, not the series'.
MIRROR_DIRS=(lib include mm kernel tools/testing/selftests Documentation
	':(exclude)Documentation/project')
mirror_added() {	# files added between base tag and commit $2 of repo $1
	git -C "$1" diff --name-only --diff-filter=A "$BASE_TAG" "$2" -- "${MIRROR_DIRS[@]}"
}
mirror_root() {	# the mirror root of each path on stdin
	sed -E 's,^(Documentation/[^/]+|tools/testing/selftests|[^/]+)/.*,\1,'
}
mirror_roots() {	# the mirror roots that exist in this repo
	git -C "$TOP" ls-files -co --exclude-standard -- "${MIRROR_DIRS[@]}" | mirror_root | sort -u
}
mirror_tracked() {	# mirror files this repo holds now
	git -C "$TOP" ls-files -co --exclude-standard -- "${MIRROR_DIRS[@]}" |
		grep -v -e '^Documentation/[^/]*/README\.md$' \
			-e '^tools/testing/selftests/README\.md$' -e '^[^/]*/README\.md$' || true
}
# The patches of patches/series as a Markdown list of their subjects.
series_list() {
	local p n=0
	while read -r p; do
		n=$((n + 1))
		printf '%d. %s\n' "$n" "$(awk '/^Subject: / { s = $0; c = 1; next }
			c && /^[ \t]/ { s = s $0; next } c { exit } END { print s }' "$p" |
			sed -E 's/^Subject: (\[[^]]*\] )?//')"
	done < <(series_patches "$PATCHES")
}

# Generated blocks of README.md, between the lines <!-- NAME:begin --> and
# <!-- NAME:end --> (NAME: series, bench). readme_block NAME: print the
# block; readme_splice NAME FILE: make FILE's lines the block.
README=$TOP/README.md
readme_markers() {
	if ! grep -qx "<!-- $1:begin -->" "$README" || ! grep -qx "<!-- $1:end -->" "$README"; then
		die "README.md has no <!-- $1:begin --> / <!-- $1:end --> lines"
	fi
}
readme_block() {
	readme_markers "$1"
	sed -n "/^<!-- $1:begin -->\$/,/^<!-- $1:end -->\$/p" "$README" | sed '1d;$d'
}
readme_splice() {
	readme_markers "$1"
	awk -v b="<!-- $1:begin -->" -v e="<!-- $1:end -->" -v f="$2" '$0 == e { skip = 0 }
		!skip { print } $0 == b { while ((getline l < f) > 0) print l; skip = 1 }' \
		"$README" >"$README.new" && mv "$README.new" "$README"
}
