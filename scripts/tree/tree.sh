#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Make the kernel trees under build/:
#   build/linux  git repository: tag lazy-rss-base is the pristine base,
#                branch lazy-rss is the base plus patches/ (hack here)
#   build/base   worktree of the pristine base, for base-kernel builds
# The base is Debian's linux-source-6.12, or KSRC=/path/to/linux-6.12.y.
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build

make_base_repo() {
	local tmp=$BUILD/.tree-tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	if [ -n "${KSRC:-}" ]; then
		[ -f "$KSRC/Makefile" ] || die "KSRC=$KSRC is not a kernel source tree"
		say "copying base from KSRC=$KSRC"
		if git -C "$KSRC" rev-parse --git-dir >/dev/null 2>&1; then
			[ -z "$(git -C "$KSRC" status --porcelain --untracked-files=no)" ] ||
				warn "KSRC has uncommitted changes; using its HEAD"
			git -C "$KSRC" archive --format=tar HEAD | tar -x -C "$tmp"
		else
			tar -C "$KSRC" --exclude=.git -cf - . | tar -x -C "$tmp"
		fi
	else
		local tarball=/usr/src/linux-source-6.12.tar.xz
		[ -f "$tarball" ] || die "$tarball missing, although linux-source-6.12 is installed"
		say "unpacking $tarball"
		tar -xf "$tarball" -C "$tmp" --strip-components=1
	fi
	local v
	v=$(kernel_version "$tmp") || { rm -rf "$tmp"; exit "$EXIT_ERROR"; }
	say "creating git repository for Linux $v"
	git -C "$tmp" init -q -b master
	git -C "$tmp" config user.name "$GIT_NAME"
	git -C "$tmp" config user.email "$GIT_EMAIL"
	git -C "$tmp" config gc.auto 0
	# Debian's linux-source .gitignore ignores every top-level entry
	# ("/*"), which would hide new files such as lib/*.c from git.
	sed -i -e '/^# Debian packaging: ignore everything/,/^!\/debian\//d' "$tmp/.gitignore"
	git -C "$tmp" add -A
	GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z' \
		git -C "$tmp" commit -q -m "Linux $v (base of the lazy-rss series)"
	git -C "$tmp" tag "$BASE_TAG"
	mv "$tmp" "$LINUX"
}

mkdir -p "$BUILD"
if [ ! -e "$LINUX/.git" ]; then
	# The unpacked base and its git objects: 2.4 GB.
	need_space 3072 "unpacking the base tree"
	make_base_repo
fi
git -C "$LINUX" rev-parse -q --verify "$BASE_TAG" >/dev/null ||
	die "$LINUX has no tag $BASE_TAG; remove it and run 'make tree' again"

if [ ! -e "$BASE/.git" ]; then
	say "adding base worktree $BASE"
	worktree_at_base "$BASE"
fi

if ! git -C "$LINUX" rev-parse -q --verify "refs/heads/$BRANCH" >/dev/null; then
	say "applying patches/ on branch $BRANCH"
	git -C "$LINUX" checkout -q -b "$BRANCH" "$BASE_TAG"
	"$TOP/scripts/tree/apply.sh" "$LINUX"
else
	say "branch $BRANCH exists in $LINUX: left as it is (make export to save it)"
fi
