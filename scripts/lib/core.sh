# SPDX-License-Identifier: GPL-2.0
# Paths, messages, exit codes and the host: what every script uses. Sourced by scripts/lib/lib.sh, never run.
# shellcheck shell=bash disable=SC2034 # variables are for the sourcing scripts

say() { printf '%s %s\n' "[$(date +%H:%M:%S)]" "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }

# How a script ends: 0 when all its checks passed, 1 when a check failed,
# 2 on an error (bad input, a missing tree: die), 3 when it could not build
# what it tests (a mutant that breaks the build is not caught by it:
# die_build). Both also record it as a result (scripts/lib/tally.sh), which
# is what make check and make mutate read.
EXIT_FAIL=1 EXIT_ERROR=2 EXIT_NOBUILD=3
die() {
	printf 'error: %s\n' "$*" >&2
	! declare -F record >/dev/null || record error "$*"
	exit "$EXIT_ERROR"
}
die_build() {
	printf 'error: %s\n' "$*" >&2
	! declare -F record >/dev/null || record nobuild "$*"
	exit "$EXIT_NOBUILD"
}

# The line of this run (LINE=) and its folders: scripts/lib/lines.sh.
# shellcheck source=scripts/lib/lines.sh
. "$TOP/scripts/lib/lines.sh"
# build/: a folder per line, build/LINE, for everything of that line (its
# trees, builds, logs, guests, bench runs); shared by the lines only what
# is not a line's: apt's state and downloads (build/apt/LINE) and the
# QEMU plugins (build/qemu-plugin).
BUILD_ROOT=${BUILD_ROOT:-$TOP/build}
BUILD=${BUILD:-$BUILD_ROOT/$LINE}
# The kernel git tree holding base + series (the tree developers hack in),
# and a worktree of the pristine base next to it.
LINUX=${LINUX:-$BUILD/linux}
BASE=${BASE:-$BUILD/base}
BASE_TAG=lazy-rss-base
BRANCH=lazy-rss
JOBS=${JOBS:-$(nproc)}

# Logs of every step: build/LINE/logs/ (make check names each one it writes).
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

# own_apt_update LOG APT-OPTIONS...: apt-get update of an apt state of our
# own (build/apt/LINE, build/sparse, ...), its output in LOG. A suite
# whose signed Release file has passed its Valid-Until (trixie-backports
# and sid have one; a mirror that serves a frozen copy of the archive
# shows them so) is taken with a warning: the signature is still checked.
own_apt_update() {
	local log=$1
	shift
	apt-get "$@" update >"$log" 2>&1 && return 0
	grep -q 'is expired' "$log" || return 1
	warn "$(sed -n 's/^E: Release file for \([^ ]*\) is expired (\(.*\))\..*/\1 expired (\2); taking it anyway/p' "$log" | head -1)"
	apt-get -o Acquire::Check-Valid-Until=false "$@" update >>"$log" 2>&1
}

# Install the Debian package groups of scripts/setup/deps.sh that a script needs
# (quick when they are there). make check's deps test reads these calls.
need_deps() { "$TOP/scripts/setup/deps.sh" "$@"; }

# ccache keyed on paths relative to the tree, so that a fresh clone of this
# repository in another directory still hits the cache (CI does that).
use_ccache() {
	command -v ccache >/dev/null || die "ccache not found (run scripts/setup/deps.sh build)"
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

# The Linux version of the tree $1, which must be of this run's line
# (LINE=NAME takes NAME and NAME.*: scripts/lib/lines.sh).
kernel_version() {
	local v l
	v=$(make -s -C "$1" kernelversion 2>/dev/null) || die "cannot read the kernel version of $1"
	line_takes "$LINE" "$v" && { echo "$v"; return; }
	for l in $(line_names); do
		! line_takes "$l" "$v" || die "$1 is Linux $v, a tree of the $l line; this is the $LINE line (LINE=$LINE), which takes $LINE.y: use LINE=$l, or a $LINE.y tree"
	done
	die "$1 is Linux $v; the $LINE line (LINE=$LINE) takes $LINE.y, and no line of ./lines takes $v"
}

# The base the trees of this line are made from, as tree.sh records it
# in $BASE_INFO: "kernel VERSION" (make kernelversion) and "source WHAT"
# (Debian's PACKAGE VERSION, or KSRC=PATH). base_info kernel|source
# prints one, or "unknown" before make tree has made the tree.
BASE_INFO=$BUILD/base-version
base_info() {
	awk -v k="$1" '$1 == k { sub(/^[^ ]+ /, ""); print; found = 1 } END { if (!found) print "unknown" }' \
		"$BASE_INFO" 2>/dev/null || echo unknown
}

# worktree_at_base DIR: DIR is a detached worktree of build/LINE/linux at the
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

# The project's shell scripts, one path a line: scripts/ (the sourced
# helpers of scripts/lib/ too) and .ci/run. make lint checks them all;
# host_scripts leaves out those that run in a guest (scripts/guest/init,
# scripts/guest/*-guest), whose programs the guest gets from the host.
shell_scripts() {
	local f
	git -C "$TOP" ls-files -co --exclude-standard -- scripts .ci | while read -r f; do
		case $f in
		*.sh) echo "$TOP/$f" ;;
		*.*)  ;;
		*)    head -1 "$TOP/$f" | grep -q '^#!/bin/\(bash\|sh\|busybox sh\)' && echo "$TOP/$f" ;;
		esac
	done
}
host_scripts() { shell_scripts | grep -v -e '/scripts/guest/init$' -e '/scripts/guest/[^/]*-guest$'; }
