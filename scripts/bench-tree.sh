#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The source tree of a bench kernel NAME of patches/bench-only/kernels:
# build/bench-NAME, a worktree of the base (tag lazy-rss-base) with that
# kernel's patches applied by git am ("series" is patches/series, or the
# series file in BENCH_SERIES=DIR, to bench a series before `make export`).
# Left alone when it already holds exactly those patches (same patch-ids),
# so that its build directories are not rebuilt for nothing.
# usage: scripts/bench-tree.sh [bench-]NAME
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_deps build

name=${1:?usage: bench-tree.sh [bench-]NAME}
name=${name#bench-}
list=$TOP/patches/bench-only/kernels
series=${BENCH_SERIES:-$TOP/patches}
need_tree "$LINUX"
read -r -a words < <(awk -v k="$name" '$1 == k' "$list") ||
	die "no bench kernel '$name' in ${list#"$TOP"/}"

patches=()
for p in "${words[@]:1}"; do
	if [ "$p" = series ]; then
		[ -f "$series/series" ] || die "no series file in $series"
		while read -r f; do patches+=("$series/$f"); done < <(grep -v -e '^#' -e '^$' "$series/series")
	else
		patches+=("$TOP/patches/bench-only/$p")
	fi
done
for p in "${patches[@]}"; do [ -f "$p" ] || die "bench kernel $name: no patch $p"; done

tree=$(tree_dir "bench-$name")
ids() { git patch-id --stable | awk '{print $1}' | sort; }
want=$(cat "${patches[@]}" | ids)
if [ -e "$tree/.git" ]; then
	have=$(git -C "$tree" format-patch --stdout "$BASE_TAG..HEAD" | ids)
	[ "$have" != "$want" ] || exit 0
	say "bench-tree: $name: its patches changed, re-applying"
	git -C "$tree" checkout -q --detach "$BASE_TAG"
else
	say "bench-tree: $name: adding worktree ${tree#"$TOP"/}"
	git -C "$LINUX" worktree add -q --detach "$tree" "$BASE_TAG"
fi
git_id "$tree" am -q "${patches[@]}" ||
	{ git -C "$tree" am --abort; die "the patches of bench kernel $name do not apply to the base"; }
