#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the path of a sparse that the kernel tree TREE accepts for C=1/C=2,
# a tab and its version (the Debian package's).
# kbuild runs scripts/checker-valid.sh, and when sparse fails it (7.3
# needs __typeof_unqual__, which Debian 12's sparse 0.6.4 lacks) it only
# warns and turns C= off, so that "sparse clean" would mean "not run".
# The machine's sparse when the tree accepts it; otherwise Debian sid's
# sparse source package (the newest the archive has), fetched through a
# deb-src list of our own under build/sparse/ (the machine's apt sources
# are left alone) and built there once (seconds: it has no dependency but
# libc). Fails when neither passes the tree's check.
# usage: scripts/setup/sparse.sh TREE
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build check

tree=${1:?usage: scripts/setup/sparse.sh TREE}
valid() { [ "$("$tree/scripts/checker-valid.sh" "$1" --arch=x86_64 -m64)" = 1 ]; }
if [ ! -x "$tree/scripts/checker-valid.sh" ] || valid sparse; then
	printf 'sparse\tsparse %s\n' "$(sparse --version)"
	exit 0
fi

dir=$BUILD_ROOT/sparse log=$BUILD_ROOT/sparse/build.log
if [ ! -x "$dir/bin/sparse" ]; then
	say "sparse: $(sparse --version) fails ${tree#"$TOP"/}/scripts/checker-valid.sh; building Debian sid's (log: ${log#"$TOP"/})" >&2
	rm -rf "$dir"
	mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/src" "$dir/bin"
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main" \
		>"$dir/apt/sources.list"
	apt_opts=(-o "Dir::Etc::SourceList=$dir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		  -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache" -o Debug::NoLocking=1)
	own_apt_update "$log" "${apt_opts[@]}" ||
		{ tail -5 "$log" >&2; die "apt-get update of ${dir#"$TOP"/}/apt/sources.list failed (log: $log)"; }
	(cd "$dir/src" && apt-get "${apt_opts[@]}" source --download-only sparse) >>"$log" 2>&1 ||
		{ tail -5 "$log" >&2; die "apt-get source sparse (sid) failed (log: $log)"; }
	(cd "$dir/src" && dpkg-source -x ./sparse_*.dsc sparse) >>"$log" 2>&1 ||
		{ tail -5 "$log" >&2; die "dpkg-source -x of sid's sparse failed (log: $log)"; }
	# Debian's packaging names its own compiler (CC=gcc-NN): ours is gcc.
	make -C "$dir/src/sparse" -j"$JOBS" CC=gcc HAVE_LLVM=no HAVE_SQLITE=no HAVE_GTK=no sparse >>"$log" 2>&1 ||
		{ tail -5 "$log" >&2; die "building sid's sparse failed (log: $log)"; }
	cp "$dir/src/sparse/sparse" "$dir/bin/sparse"
	(cd "$dir/src" && basename ./sparse_*.dsc .dsc) >"$dir/version"
	rm -rf "$dir/src/sparse"
fi
valid "$dir/bin/sparse" ||
	die "$(cat "$dir/version" 2>/dev/null || echo "sid's sparse") fails ${tree#"$TOP"/}/scripts/checker-valid.sh too"
printf '%s\t%s\n' "$dir/bin/sparse" "$(cat "$dir/version")"
