#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Apply the line's series (patches/LINE/, in the order of its series file)
# with git am to the current branch of a git tree of the line (LINE.y). On failure, name the patch and the files, and
# leave the tree as it was.
# usage: scripts/tree/apply.sh KDIR
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build

kdir=${1:?usage: apply.sh KDIR}
git -C "$kdir" rev-parse --git-dir >/dev/null 2>&1 || die "KDIR=$kdir is not a git tree"
[ -z "$(git -C "$kdir" status --porcelain --untracked-files=no)" ] ||
	die "KDIR=$kdir has uncommitted changes; commit or stash them first"
v=$(kernel_version "$kdir") || exit
files=$(series_patches "$PATCHES") || exit
mapfile -t list <<<"$files"
[ -n "$files" ] || { say "${PATCHES#"$TOP"/}/series is empty: nothing to apply"; exit 0; }

start=$(git -C "$kdir" rev-parse HEAD)
n=0
for p in "${list[@]}"; do
	n=$((n + 1))
	if ! out=$(git_id "$kdir" am --quiet "$p" 2>&1); then
		git -C "$kdir" am --abort >/dev/null 2>&1 || true
		git -C "$kdir" reset -q --hard "$start"
		files=$(printf '%s\n' "$out" | sed -n 's/^error: \(patch failed: \)\{0,1\}\([^:]*\):.*/\2/p' | sort -u | tr '\n' ' ')
		printf '%s\n' "$out" | sed 's/^/  | /' >&2
		die "patch $n/${#list[@]} (${p##*/}) does not apply to $kdir (Linux $v); failing files: ${files:-see above}. Tree reset to $start"
	fi
done
say "applied ${#list[@]} patches to $kdir"
