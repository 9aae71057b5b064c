#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Export the commits of build/linux (lazy-rss-base..lazy-rss) to patches/:
# a cover letter (from Documentation/lazy-rss/cover-letter.txt), the
# patches and the series file; then refresh the mirror of the files the
# series adds (lib/, include/, mm/, ...).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_tree "$LINUX"
[ "$(git -C "$LINUX" symbolic-ref -q --short HEAD)" = "$BRANCH" ] ||
	die "$LINUX is not on branch $BRANCH"
[ -z "$(git -C "$LINUX" status --porcelain --untracked-files=no)" ] ||
	warn "$LINUX has uncommitted changes: they are not exported"
n=$(git -C "$LINUX" rev-list --count "$BASE_TAG..$BRANCH")
[ "$n" -gt 0 ] || die "branch $BRANCH has no commits on top of $BASE_TAG"

cover=$TOP/Documentation/lazy-rss/cover-letter.txt
[ -f "$cover" ] || die "missing $cover (first line: subject; then the body)"
git -C "$LINUX" config "branch.$BRANCH.description" "$(cat "$cover")"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$LINUX" format-patch -q --zero-commit --no-signature --cover-letter \
	--cover-from-description=subject \
	-o "$tmp" "$BASE_TAG..$BRANCH"
rm -f "$TOP"/patches/*.patch
cp "$tmp"/*.patch "$TOP/patches/"
{
	echo "# Patches of the lazy-rss series, in order (git am)."
	for p in "$TOP"/patches/*.patch; do
		case $p in */0000-cover-letter.patch) ;; *) basename "$p" ;; esac
	done
} >"$TOP/patches/series"

# The mirror: every file the series adds, nothing else.
mapfile -t added < <(mirror_added "$LINUX" "$BRANCH")
for f in $(mirror_tracked); do
	printf '%s\n' "${added[@]}" | grep -qxF "$f" || { rm -f "$TOP/$f"; echo "mirror: removed $f"; }
done
for f in ${added[@]+"${added[@]}"}; do
	mkdir -p "$TOP/$(dirname "$f")"
	git -C "$LINUX" show "$BRANCH:$f" >"$TOP/$f"
done
say "exported $n patches and ${#added[@]} mirrored files"
