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
# vCPUs of a guest (scripts/vm --smp, make selftest SMP=, KUnit on x86_64).
GUEST_SMP=${SMP:-4}

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
	base)		echo "$BASE" ;;
	patched)	echo "$LINUX" ;;
	ideal)		echo "$BUILD/bench-ideal" ;;
	bench-*)	awk -v k="${1#bench-}" '$1 == k { found = 1 } END { exit !found }' \
				"$TOP/patches/bench-only/kernels" ||
				die "unknown bench kernel '$1' (not in patches/bench-only/kernels)"
			echo "$BUILD/$1" ;;
	*)		die "unknown kernel tree '$1' (base patched ideal bench-NAME)" ;;
	esac
}

# The KUnit suites: every .kunitconfig that the series adds to tree $1
# (lib/tests/.kunitconfig, ...), or $KUNITCONFIG when set. One per line.
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
	for f in $list; do echo "$1/$f"; done
}

# The pass/fail tally of a script. tally pass|fail|skip [WHAT]: count one
# check (a failure or a skip is named); tally_add LINE: add the counts of a
# sub-step's "N passed, N failed[, N skipped]" line (a line without them
# counts as one failure); tally_sub COMMAND...: run a sub-step that ends
# with such a line, show its output indented and add its counts;
# tally_end [LABEL]: print the closing line
# "[LABEL: ]N passed, N failed, N skipped" and return non-zero on a failure.
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
	local out line
	out=$("$@" 2>&1)
	printf '%s\n' "$out" | sed -e '$d' -e 's/^/  /'
	line=$(printf '%s\n' "$out" | tail -1)
	echo "  $line"
	tally_add "$line"
}
tally_end() {
	echo "${1:+$1: }$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
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

# The files the series adds, at their in-tree paths, mirrored in this repo,
# with a generated README.md in each mirror root (lib, include, mm, kernel,
# tools/testing/selftests, Documentation/SUBDIR).
MIRROR_DIRS=(lib include mm kernel tools/testing/selftests Documentation)
# Project notes live in Documentation/lazy-rss and are not part of the mirror.
mirror_added() {	# files added between base tag and commit $2 of repo $1
	git -C "$1" diff --name-only --diff-filter=A "$BASE_TAG" "$2" -- "${MIRROR_DIRS[@]}"
}
mirror_root() {	# the mirror root of each path on stdin
	sed -E 's,^(Documentation/[^/]+|tools/testing/selftests|[^/]+)/.*,\1,'
}
mirror_roots() {	# the mirror roots that exist in this repo
	git -C "$TOP" ls-files -co --exclude-standard -- "${MIRROR_DIRS[@]}" | mirror_root | sort -u |
		grep -v '^Documentation/lazy-rss$' || true
}
mirror_tracked() {	# mirror files this repo holds now
	git -C "$TOP" ls-files -co --exclude-standard -- "${MIRROR_DIRS[@]}" |
		grep -v -e '^Documentation/lazy-rss/' -e '^Documentation/[^/]*/README\.md$' \
			-e '^tools/testing/selftests/README\.md$' -e '^[^/]*/README\.md$' || true
}
# The patches of patches/series as a Markdown list of their subjects.
series_list() {
	local p n=0
	while read -r p; do
		n=$((n + 1))
		printf '%d. %s\n' "$n" "$(awk '/^Subject: / { s = $0; c = 1; next }
			c && /^[ \t]/ { s = s $0; next } c { exit } END { print s }' "$TOP/patches/$p" |
			sed -E 's/^Subject: (\[[^]]*\] )?//')"
	done < <(grep -v -e '^#' -e '^$' "$TOP/patches/series")
}
