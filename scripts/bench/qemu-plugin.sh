#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the TCG plugins of make bench for the installed QEMU, from Debian's
# qemu source package of the same version: QEMU's cache-model plugin
# (contrib/plugins/cache.c) with scripts/bench/cache-marker.patch, and our
# own scripts/bench/insnprof.c (instructions per address, scripts/bench/insn-profile.sh);
# marks: scripts/bench/mark.c. The source comes through a deb-src list of
# our own under build/, so that the machine's apt sources and lists are
# left alone. Prints the path of the plugin asked for; builds only when a
# plugin is missing or older than its source, and downloads the source
# only when the two files it keeps of it are missing.
# usage: scripts/bench/qemu-plugin.sh [cache|insnprof]
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build vm bench

# The plugin API has no stable ABI: the plugin must come from the source of
# the QEMU that loads it (the binary package's source version; a binNMU
# suffix +bN is not in it).
src_pkg=$(dpkg-query -W -f='${source:Package}' qemu-system-x86 2>/dev/null) ||
	die "qemu-system-x86 is not installed (scripts/setup/deps.sh vm)"
version=$(dpkg-query -W -f='${source:Version}' qemu-system-x86)
dir=$BUILD_ROOT/qemu-plugin/${version//:/_}	# shared by the lines: it is QEMU's
patch=$TOP/scripts/bench/cache-marker.patch
insnprof=$TOP/scripts/bench/insnprof.c
case ${1:-cache} in
cache|insnprof)	so=$dir/lib${1:-cache}.so ;;
*)		die "scripts/bench/qemu-plugin.sh: no plugin '$1' (cache or insnprof)" ;;
esac
if [ "$dir/libcache.so" -nt "$patch" ] && [ "$dir/libinsnprof.so" -nt "$insnprof" ]; then
	echo "$so"
	exit 0
fi

# What the plugins need of the source, kept: cache.c and the plugin API's
# header. The source is 600 MB unpacked, and is fetched only when they
# are missing.
keep=$dir/source log=$dir/build.log
if [ ! -f "$keep/cache.c" ] || [ ! -f "$keep/qemu-plugin.h" ]; then
	say "plugins: Debian's $src_pkg $version source (log: ${dir#"$TOP"/}/build.log)" >&2
	rm -rf "$dir"
	mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/src"
	# deb-src lines for the Debian archive suites of the machine's deb lines.
	{ { grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list || true; } | sed 's/^deb /deb-src /'
	  for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'function emit(i, n, a) { if (t && u) { n = split(s, a, " "); for (i = 1; i <= n; i++) print "deb-src " u " " a[i] " " c } t = u = "" }
		     /^Types:/ { t = ($0 ~ / deb( |$)/) } /^URIs:/ { u = $2 } /^Suites:/ { s = $0; sub(/^Suites: */, "", s) }
		     /^Components:/ { c = $0; sub(/^Components: */, "", c) }
		     /^$/ { emit() } END { emit() }' "$f"
	  done; } | grep -E '^deb-src https?://[^ ]*debian\.org/' | sort -u >"$dir/apt/sources.list"
	[ -s "$dir/apt/sources.list" ] || die "no Debian archive in /etc/apt/sources.list{,.d} to take qemu's source from"
	apt_opts=(-o "Dir::Etc::SourceList=$dir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		  -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache")
	own_apt_update "$log" "${apt_opts[@]}" ||
		{ tail -5 "$log" >&2; die "apt-get update of the deb-src list failed (log: $log)"; }
	(cd "$dir/src" && apt-get "${apt_opts[@]}" source --download-only "$src_pkg=$version") >>"$log" 2>&1 ||
		{ tail -5 "$log" >&2; die "Debian's archive has no source $src_pkg $version, the installed QEMU's: upgrade qemu-system-x86 (apt) to a version the archive has (log: $log)"; }
	(cd "$dir/src" && dpkg-source -x ./*.dsc qemu) >>"$log" 2>&1 ||
		{ tail -5 "$log" >&2; die "dpkg-source -x of $src_pkg $version failed (log: $log)"; }
	mkdir -p "$keep"
	cp "$dir/src/qemu/contrib/plugins/cache.c" "$dir/src/qemu/include/qemu/qemu-plugin.h" "$keep/"
	rm -rf "$dir/src" "$dir/apt/cache"
fi

say "plugins: building QEMU's cache plugin (with scripts/bench/cache-marker.patch) and scripts/bench/insnprof.c (log: ${dir#"$TOP"/}/build.log)" >&2
b=$dir/build
rm -rf "$b"
mkdir -p "$b"
cp "$keep/cache.c" "$b/"
patch -d "$b" -p3 <"$patch" >>"$log" 2>&1 ||
	{ tail -5 "$log" >&2; die "scripts/bench/cache-marker.patch does not apply to $src_pkg $version's cache.c (log: $log)"; }
for p in "$b/cache.c" "$insnprof"; do
	o=$dir/lib$(basename "$p" .c).so
	# shellcheck disable=SC2046 # pkg-config's flags are words
	gcc -O2 -fPIC -shared -Wall -I"$keep" $(pkg-config --cflags glib-2.0) \
		-o "$o.tmp" "$p" $(pkg-config --libs glib-2.0) >>"$log" 2>&1 ||
		{ tail -5 "$log" >&2; die "building the plugin ${p#"$TOP"/} failed (log: $log)"; }
	mv "$o.tmp" "$o"
done
rm -rf "$b"
echo "$so"
