#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The bench tree of kernel NAME of the line's registry patches/LINE/kernels: a worktree of
# the base (tag lazy-rss-base), build/bench-NAME (or that of the first
# kernel with the same patches), with NAME's PATCHES applied by git am
# ("series" and "series:NNNN" read the line's series (patches/LINE/series), or the series file in
# BENCH_SERIES=DIR, to bench a series before `make export`).
# Left alone when it already holds exactly those patches (same patch-ids),
# so that its build directories are not rebuilt for nothing.
# usage: scripts/tree/bench-tree.sh NAME
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build

name=${1:?usage: bench-tree.sh NAME}
series=${BENCH_SERIES:-$PATCHES}
need_tree "$LINUX"
list=$(kernel_field "$name" patches)
tree=$(bench_tree "$name")

patches=()
for p in ${list//,/ }; do
	case $p in
	series)	files=$(series_patches "$series") ;;
	series:*)
		files=$(series_patches "$series")
		# Up to and including the patch whose file name starts NNNN-.
		grep -q "/${p#series:}-[^/]*\$" <<<"$files" ||
			die "kernel $name: ${series#"$TOP"/}/series has no patch ${p#series:}-*.patch"
		files=$(sed "\\,/${p#series:}-[^/]*\$,q" <<<"$files") ;;
	*.config) continue ;;	# a config fragment (scripts/tree/build.sh)
	*)	files=$PATCHES/bench-only/$p
		[ -f "$files" ] || die "kernel $name: no patch ${PATCHES#"$TOP"/}/bench-only/$p" ;;
	esac
	[ -z "$files" ] || mapfile -t -O ${#patches[@]} patches <<<"$files"
done
[ ${#patches[@]} -gt 0 ] || die "kernel $name: no patches (a bench tree is the base plus its PATCHES)"

ids() { git patch-id --stable | awk '{print $1}' | sort; }
want=$(cat "${patches[@]}" | ids)
if [ -e "$tree/.git" ]; then
	have=$(git -C "$tree" format-patch --stdout "$BASE_TAG..HEAD" | ids)
	[ "$have" != "$want" ] || exit 0
	say "bench-tree: ${tree#"$BUILD"/}: its patches changed, re-applying"
else
	say "bench-tree: adding worktree ${tree#"$TOP"/}"
fi
worktree_at_base "$tree"
git_id "$tree" am -q "${patches[@]}" ||
	{ git -C "$tree" am --abort; die "the patches of kernel $name do not apply to the base"; }
