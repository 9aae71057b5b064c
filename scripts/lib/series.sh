# SPDX-License-Identifier: GPL-2.0
# The series: its patches, objects, KUnit suites and kselftests, the mirror, the README's generated blocks. Sourced by scripts/lib/lib.sh, never run.
# shellcheck shell=bash disable=SC2034 # variables are for the sourcing scripts

# series_patches DIR: the patch files that DIR/series lists, in order,
# one path a line (DIR: $PATCHES, the line's series folder
# (scripts/lib/lines.sh), or a series of BENCH_SERIES=DIR).
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
# The patches of the line's series as a Markdown list of their subjects.
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
