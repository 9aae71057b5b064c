#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: compile the objects of the C files the series changes for
# architectures whose cache lines are not x86_64's 64 bytes (a set of
# counters sized by SMP_CACHE_BYTES must still fit), with W=1, in the
# config of the architecture's defconfig plus the series' KUnit suites:
#   i386   16-byte lines: i386_defconfig + configs/i386-m486.config (486)
#          + configs/LINE/i386-m486.config if the line has one (7.3:
#          no 486, a Geode GX1)
#   s390   256-byte lines, 64-bit big-endian: defconfig, gcc-s390x-linux-gnu
# Only the objects (kbuild runs "prepare" first), so it is incremental;
# the build directories are .out-smallcache-ARCH below the tree.
# usage: scripts/check/smallcache.sh [patched|base]   (the tree: build/LINE/linux or
#        build/LINE/base)
# Prints "smallcache: N passed, N failed, N skipped" on the last line;
# exits 1 when an object does not compile or warns, 3 when the kernel's
# own preparation ("make prepare") fails.
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build check

kernel=${1:-patched}
src=$(kernel_tree "$kernel" test)
need_tree "$src"
use_ccache
frags=()
if [ "$kernel" != base ]; then
	kconfigs=$(kunitconfigs "$src") || exit
	mapfile -t frags <<<"$kconfigs"
fi
objs=$(series_objects "$src")

# smallcache ARCH DEFCONFIG CROSS_COMPILE [FRAGMENT]: one architecture.
smallcache() {
	local arch=$1 cross=$3 out=$src/.out-smallcache-$1 log=$LOGS/smallcache-$1.log
	local mk=(make -C "$src" O="$out" ARCH="$arch" CROSS_COMPILE="$cross" CC="ccache ${cross}gcc" -j"$JOBS" W=1)
	mkdir -p "$out"
	# The defconfig, then our fragments, which must hold (a defconfig
	# names options that are gone or hidden: not checked).
	cat "${@:4}" ${frags[@]+"${frags[@]}"} >"$out/ours"
	cat "$src/$2" "$out/ours" >"$out/fragment.new"
	if ! cmp -s "$out/fragment.new" "$out/fragment" || [ ! -f "$out/.config" ]; then
		"${mk[@]}" KCONFIG_ALLCONFIG="$out/fragment.new" alldefconfig >"$log" 2>&1 ||
			{ tail -20 "$log" >&2; die_build "configuring $arch failed (log: ${log#"$TOP"/})"; }
		check_config "$out/ours" "$out/.config" ||
			die_build "the $arch config cannot have what its fragments ask for (see above)"
		mv "$out/fragment.new" "$out/fragment"
	fi
	rm -f "$out/fragment.new"
	"${mk[@]}" prepare >"$out/prepare.log" 2>&1 ||
		{ tail -20 "$out/prepare.log" >&2; die_build "make prepare for $arch failed (log: ${out#"$TOP"/}/prepare.log)"; }
	# shellcheck disable=SC2086 # one object a word
	# gcc's diagnostics (FILE:LINE:COL:), not bison's of the host tools.
	if "${mk[@]}" $objs >"$log" 2>&1 && ! grep -E -q ':[0-9]+:[0-9]+: (warning|error):' "$log"; then
		tally pass "the series' objects for $arch, W=1" "$log"
	else
		grep -E -m 20 -B 2 ':[0-9]+:[0-9]+: (warning|error):' "$log" | sed 's/^/  | /' || tail -20 "$log" | sed 's/^/  | /'
		tally fail "$arch: the series' objects do not compile cleanly with $(grep -m1 -E '^CONFIG_(X86_L1_CACHE_SHIFT|L1_CACHE_SHIFT)=' "$out/.config" || echo "its") (log: ${log#"$TOP"/})"
	fi
}

say "smallcache: $(wc -w <<<"$objs") objects of the series ($kernel tree), W=1, for i386 with 16-byte and s390 with 256-byte cache lines"
list=$(config_frags i386-m486.config) || exit
mapfile -t m486 <<<"$list"
smallcache i386 arch/x86/configs/i386_defconfig '' "${m486[@]}"
smallcache s390 arch/s390/configs/defconfig s390x-linux-gnu-
tally_end smallcache
