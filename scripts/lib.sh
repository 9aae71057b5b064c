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
# vCPUs of a guest (scripts/vm --smp, make selftest/proof SMP=, KUnit on x86_64).
GUEST_SMP=${SMP:-4}

say() { printf '%s %s\n' "[$(date +%H:%M:%S)]" "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

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

need_tree() {
	[ -d "$1/.git" ] || [ -f "$1/.git" ] ||
		die "$1 is not a kernel git tree: run 'make tree' first"
}

# Source tree of a kernel name: base, patched (the series being worked on),
# or bench-NAME, a bench kernel of patches/bench-only/kernels (made by
# scripts/bench-tree.sh; ideal is bench-ideal).
tree_dir() {
	case $1 in
	base|bench-base) echo "$BASE" ;;
	patched)	echo "$LINUX" ;;
	ideal)		echo "$BUILD/bench-ideal" ;;
	bench-*)	echo "$BUILD/$1" ;;
	*)		die "unknown kernel tree '$1' (base patched ideal bench-NAME)" ;;
	esac
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

# Print the first bad report of log $1 and return 0 when it has one.
log_has_bad() {
	grep -E -q "$BAD_LOG" "$1" || return 1
	grep -E -m 1 -A 25 "$BAD_LOG" "$1" | sed 's/^/  | /' >&2
	return 0
}

# The files the series adds, at their in-tree paths, mirrored in this repo.
MIRROR_DIRS=(lib include mm kernel tools/testing/selftests Documentation)
# Project notes live in Documentation/lazy-rss and are not part of the mirror.
mirror_added() {	# files added between base tag and commit $2 of repo $1
	git -C "$1" diff --name-only --diff-filter=A "$BASE_TAG" "$2" -- "${MIRROR_DIRS[@]}"
}
mirror_tracked() {	# mirror files this repo holds now
	git -C "$TOP" ls-files -co --exclude-standard -- "${MIRROR_DIRS[@]}" |
		grep -v '^Documentation/lazy-rss/' || true
}

# Kernel name of make proof and make bench -> scripts/vm --kernel and
# extra command line: "lazyoff" is the patched kernel booted with
# lazy_rss_stat=off. usage: kernel_boot NAME [IMAGE-PREFIX]
kernel_boot() {
	boot_image=${2:-}${1/lazyoff/patched} boot_append=''
	if [ "$1" = lazyoff ]; then boot_append=lazy_rss_stat=off; fi
}

# Static benchmark programs and guest scripts, staged for scripts/vm --dir.
bench_stage() {
	local stage=$1
	rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/usr/local/bin"
	gcc -O2 -Wall -static -pthread -o "$stage/usr/local/bin/forkbench" "$TOP/tools/bench/forkbench.c"
	gcc -O2 -Wall -static -o "$stage/bin/true" "$TOP/tools/bench/true.c"
	cp "$TOP/tools/bench/guest.sh" "$stage/usr/local/bin/bench-guest"
	cp "$TOP/tools/bench/proof.sh" "$stage/usr/local/bin/proof-guest"
}
