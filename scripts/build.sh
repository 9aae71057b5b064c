#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build an x86_64 guest kernel from config fragments, incrementally, with
# ccache. The output directory sits right below the source tree, so that
# kbuild uses relative paths and ccache hits from any clone of this repo.
# usage: scripts/build.sh [--config-only] VARIANT TREE
#   VARIANT: test (guest + debug), bench (guest only), kasan (test + KASAN
#            and lockdep), kunit (test + $KUNITCONFIG, configured here and
#            built by kunit.py --arch=x86_64 in .kunit-x86_64)
#   TREE:    base, patched, ideal, bench-NAME (patches/bench-only/kernels)
# Prints the path of the kernel image on the last line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_deps build

config_only=0
[ "${1:-}" = --config-only ] && { config_only=1; shift; }
variant=${1:?usage: build.sh [--config-only] VARIANT TREE}
tree=${2:?usage: build.sh [--config-only] VARIANT TREE}
out_name=.out-$variant

frags=("$TOP/configs/guest.config")
case $variant in
test)	frags+=("$TOP/configs/debug.config") ;;
bench)	;;
kasan)	frags+=("$TOP/configs/debug.config" "$TOP/configs/kasan.config") ;;
kcsan)	frags+=("$TOP/configs/debug.config" "$TOP/configs/kcsan.config") ;;
*)	die "unknown kernel variant '$variant' (test bench kasan kcsan)" ;;
esac
src=$(tree_dir "$tree")
case $tree in ideal|bench-*) "$TOP/scripts/bench-tree.sh" "$tree" ;; esac
need_tree "$src"
# The patched test kernels carry the series' KUnit suites (kunit.py exec).
if [ "$tree" = patched ] && [ "$variant" != bench ]; then
	mapfile -t -O ${#frags[@]} frags < <(kunitconfigs "$src")
	[ ${#frags[@]} -gt 2 ] || exit 1
fi
out=$src/$out_name
mkdir -p "$out"
use_ccache

# Regenerate .config only when the fragments changed.
cat "${frags[@]}" >"$out/fragment.new"
if ! cmp -s "$out/fragment.new" "$out/fragment" || [ ! -f "$out/.config" ]; then
	say "configuring $tree/$variant (${out#"$TOP"/})"
	make -s -C "$src" O="$out" ARCH=x86_64 CC="$CC_CCACHE" \
		KCONFIG_ALLCONFIG="$out/fragment.new" allnoconfig >"$out/config.log" 2>&1 ||
		{ cat "$out/config.log" >&2; die "configuring $tree/$variant failed"; }
	check_config "$out/fragment.new" "$out/.config" ||
		die "configs/*.config ask for options the $tree kernel cannot have (see above)"
	mv "$out/fragment.new" "$out/fragment"
fi
rm -f "$out/fragment.new"
[ "$config_only" = 0 ] || exit 0

say "building the $tree/$variant kernel (cold: ~7 min on 2 cores; log: ${out#"$TOP"/}/build.log)"
if ! make -C "$src" O="$out" ARCH=x86_64 CC="$CC_CCACHE" -j"$JOBS" bzImage \
		>"$out/build.log" 2>&1; then
	grep -E -m 20 'error|Error' "$out/build.log" >&2 || tail -20 "$out/build.log" >&2
	die "building $tree/$variant failed (full log: $out/build.log)"
fi
grep -E '(warning|error):' "$out/build.log" >&2 || true
echo "$out/arch/x86/boot/bzImage"
