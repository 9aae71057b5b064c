#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The "ideal" reference kernel of make bench: build/ideal, a worktree of the
# base with the bench-only patch scripts/bench/*.patch (rss_stat as plain
# atomics) applied by git am. Left alone when it already holds exactly that
# patch, so that its build directory is not rebuilt for nothing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ideal=$(tree_dir ideal)
patches=("$TOP"/scripts/bench/*.patch)
[ -f "${patches[0]}" ] || die "no bench-only patch in scripts/bench/"
need_tree "$LINUX"

want=$(cat "${patches[@]}" | git patch-id --stable | awk '{print $1}' | sort)
if [ -e "$ideal/.git" ]; then
	have=$(git -C "$ideal" format-patch --stdout "$BASE_TAG..HEAD" |
		git patch-id --stable | awk '{print $1}' | sort)
	[ "$have" != "$want" ] || exit 0
	say "ideal: scripts/bench/ changed, re-applying"
	git -C "$ideal" checkout -q --detach "$BASE_TAG"
else
	say "ideal: adding worktree ${ideal#"$TOP"/}"
	git -C "$LINUX" worktree add -q --detach "$ideal" "$BASE_TAG"
fi
git -C "$ideal" am -q "${patches[@]}" ||
	{ git -C "$ideal" am --abort; die "the bench-only patch does not apply to the base"; }
