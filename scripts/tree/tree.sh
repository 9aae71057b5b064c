#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Make the kernel trees of the line (LINE=, default: the first of ./lines)
# under build/LINE/:
#   linux         git repository: tag lazy-rss-base is the pristine base,
#                 branch lazy-rss is the base plus the line's series
#                 (patches/LINE/series; hack here)
#   base          worktree of the pristine base, for base-kernel builds
#   base-version  what the base is: "kernel VERSION" (make kernelversion)
#                 and "source WHAT" (Debian's PACKAGE VERSION, or KSRC=PATH);
#                 the base commit's message says it too, and every result
#                 record (scripts/lib/tally.sh) and bench report carries it
# The base is the line's Debian package (PACKAGE in ./lines), fetched from
# its ARCHIVES with an apt state of our own under build/apt/LINE/ (never the
# machine's sources, never installed), or KSRC=/path/to/linux-LINE.y.
# A checkout made before the lines (build/linux of 6.12) is moved into
# build/6.12/ first, once.
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build

# The sources.list of the line: a deb line for each "URI SUITE" of its
# ARCHIVES, signed by Debian's archive keys.
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
line_sources() {
	local a
	line_field "$LINE" archives | tr ',' '\n' | while read -r a; do
		[[ $a =~ ^[a-z]+://[^\ ]+\ [a-z0-9.-]+$ ]] ||
			die "./lines: the ARCHIVES of line $LINE must be \"URI SUITE\" pairs separated by \", \" (got '$a')"
		echo "deb [signed-by=$KEYRING] $a main"
	done
}

# fetch_base DIR: the line's Debian package, downloaded with apt-get
# download into build/apt/LINE/archives (kept: a later make tree of the
# same version downloads nothing) and unpacked into DIR. Sets base_source.
fetch_base() {
	local apt=$BUILD_ROOT/apt/$LINE pkg ver deb log x
	pkg=$(line_field "$LINE" package)
	log=$apt/apt.log
	[ -f "$KEYRING" ] || die "$KEYRING missing: Debian's archive keys (package debian-archive-keyring)"
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
	line_sources >"$apt/sources.list" || exit
	local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
		-o "Dir::Cache::Archives=$apt/cache/archives" -o Debug::NoLocking=1)
	say "fetching $pkg's index from $(line_field "$LINE" archives) (log: ${log#"$TOP"/})"
	own_apt_update "$log" "${opts[@]}" ||
		{ tail -5 "$log" >&2; die "apt-get update of ${apt#"$TOP"/}/sources.list failed (log: $log)"; }
	ver=$(apt-cache "${opts[@]}" policy "$pkg" 2>>"$log" | sed -n 's/^ *Candidate: //p')
	[[ -n $ver && $ver != "(none)" ]] ||
		die "Debian's archive has no $pkg in $(line_field "$LINE" archives) (./lines; log: $log)"
	deb=$apt/cache/archives/${pkg}_${ver//:/%3a}_all.deb
	if [ ! -f "$deb" ]; then
		say "downloading $pkg $ver (~160 MB)"
		(cd "$apt/cache/archives" && apt-get "${opts[@]}" download "$pkg=$ver") >>"$log" 2>&1 ||
			{ tail -5 "$log" >&2; die "apt-get download $pkg=$ver failed (log: $log)"; }
		rm -f "$apt/cache/archives/${pkg}"_*_all.deb.old
	fi
	[ "$(dpkg-deb -f "$deb" Version)" = "$ver" ] || die "$deb is not $pkg $ver"
	say "unpacking $pkg $ver"
	x=$apt/x
	rm -rf "$x"
	dpkg-deb -x "$deb" "$x" || die "dpkg-deb -x $deb failed"
	[ -f "$x/usr/src/$pkg.tar.xz" ] || die "$deb has no usr/src/$pkg.tar.xz"
	tar -xf "$x/usr/src/$pkg.tar.xz" -C "$1" --strip-components=1 || die "unpacking $pkg.tar.xz failed"
	rm -rf "$x"
	base_source="Debian's $pkg $ver"
}

make_base_repo() {
	local tmp=$BUILD/.tree-tmp v
	rm -rf "$tmp"
	mkdir -p "$tmp"
	if [ -n "${KSRC:-}" ]; then
		[ -f "$KSRC/Makefile" ] || die "KSRC=$KSRC is not a kernel source tree"
		kernel_version "$KSRC" >/dev/null || exit	# a tree of another line: refused here
		say "copying base from KSRC=$KSRC"
		if git -C "$KSRC" rev-parse --git-dir >/dev/null 2>&1; then
			[ -z "$(git -C "$KSRC" status --porcelain --untracked-files=no)" ] ||
				warn "KSRC has uncommitted changes; using its HEAD"
			git -C "$KSRC" archive --format=tar HEAD | tar -x -C "$tmp"
			base_source="KSRC=$KSRC, commit $(git -C "$KSRC" rev-parse --short=12 HEAD)"
		else
			tar -C "$KSRC" --exclude=.git -cf - . | tar -x -C "$tmp"
			base_source="KSRC=$KSRC"
		fi
	else
		fetch_base "$tmp"
	fi
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
		git -C "$tmp" commit -q -m "Linux $v (base of the lazy-rss series)" \
			-m "The $LINE line's base: $base_source."
	git -C "$tmp" tag "$BASE_TAG"
	printf 'kernel %s\nsource %s\n' "$v" "$base_source" >"$BASE_INFO"
	mv "$tmp" "$LINUX"
}

# base-version of a tree made before it was recorded: the version of the
# tree, and its source from the base commit's message, else the Debian
# package installed on the machine when it has that version (make tree
# unpacked it from there before the lines), else "unrecorded".
record_base_info() {
	local v s p
	v=$(kernel_version "$LINUX") || exit
	s=$(git -C "$LINUX" log -1 --format=%b "$BASE_TAG" | sed -n "s/^The $LINE line's base: \(.*\)\.\$/\1/p")
	p=$(line_field "$LINE" package)
	if [ -z "$s" ] && p=$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null) &&
	   [ "${p%%-*}" = "$v" ]; then
		s="Debian's $(line_field "$LINE" package) $p (installed on the machine)"
	fi
	printf 'kernel %s\nsource %s\n' "$v" "${s:-unrecorded}" >"$BASE_INFO"
}

# One-time move of a checkout made before the lines: build/linux (a tree
# of this line), its worktrees and every other build output of build/
# into build/LINE/; what the lines share (build/apt, build/qemu-plugin)
# and the lines' own folders stay. Worktrees hold absolute paths: git
# worktree repair rewrites them.
migrate_build() {
	local e name v lines wt=()
	[ -d "$BUILD_ROOT/linux/.git" ] && [ ! -e "$LINUX" ] && [ "$BUILD" = "$BUILD_ROOT/$LINE" ] || return 0
	v=$(make -s -C "$BUILD_ROOT/linux" kernelversion 2>/dev/null) && line_takes "$LINE" "$v" || return 0
	say "moving build/'s trees and builds of Linux $v into ${BUILD#"$TOP"/}/ (once: build/ has a folder per line now)"
	mkdir -p "$BUILD"
	lines=" $(line_names | paste -sd' ') "
	for e in "$BUILD_ROOT"/* "$BUILD_ROOT"/.[!.]*; do
		[ -e "$e" ] || [ -L "$e" ] || continue
		name=${e##*/}
		case $name in apt|qemu-plugin) continue ;; esac
		[[ $lines != *" $name "* ]] || continue
		if [ -d "$BUILD/$name" ] && [ -d "$e" ] && [ ! -L "$e" ]; then
			# build/LINE/logs (made by this run): the old files join it.
			mv -n "$e"/* "$BUILD/$name/" 2>/dev/null || true
			rm -rf "$e"
		else
			mv "$e" "$BUILD/" || die "cannot move $e into $BUILD"
		fi
		[ ! -f "$BUILD/$name/.git" ] || wt+=("$BUILD/$name")
	done
	if [ ${#wt[@]} -gt 0 ]; then
		git -C "$LINUX" worktree repair "${wt[@]}" || die "git worktree repair in $LINUX failed"
	fi
}

# KSRC= must be a tree of this line, even when it is not needed.
if [ -n "${KSRC:-}" ]; then
	kernel_version "$KSRC" >/dev/null || exit
	[ ! -e "$LINUX/.git" ] || warn "KSRC=$KSRC: ${LINUX#"$TOP"/} exists already, and is left as it is (remove it to take the base from KSRC)"
fi
mkdir -p "$BUILD"
migrate_build
if [ ! -e "$LINUX/.git" ]; then
	# The unpacked base and its git objects: 2.4 GB (and the package, 160 MB).
	need_space 3072 "unpacking the base tree"
	make_base_repo
fi
git -C "$LINUX" rev-parse -q --verify "$BASE_TAG" >/dev/null ||
	die "$LINUX has no tag $BASE_TAG; remove it and run 'make tree' again"
[ -f "$BASE_INFO" ] || record_base_info
say "the $LINE line's base: Linux $(base_info kernel), $(base_info source)"

if [ ! -e "$BASE/.git" ]; then
	say "adding base worktree $BASE"
	worktree_at_base "$BASE"
fi

if ! git -C "$LINUX" rev-parse -q --verify "refs/heads/$BRANCH" >/dev/null; then
	say "applying ${PATCHES#"$TOP"/}/ on branch $BRANCH"
	git -C "$LINUX" checkout -q -b "$BRANCH" "$BASE_TAG"
	if ! "$TOP/scripts/tree/apply.sh" "$LINUX"; then
		# No half-applied branch that the next make tree would keep.
		git -C "$LINUX" am --abort >/dev/null 2>&1 || true
		{ git -C "$LINUX" checkout -q --detach "$BASE_TAG" &&
			git -C "$LINUX" branch -q -D "$BRANCH"; } ||
			die "the series did not apply, and branch $BRANCH could not be removed from $LINUX"
		die "the series did not apply (see above): branch $BRANCH removed, make tree tries again"
	fi
else
	say "branch $BRANCH exists in $LINUX: left as it is (make export to save it)"
fi
