#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build an x86_64 guest kernel from config fragments, incrementally, with
# ccache. The output directory .out-VARIANT sits right below the source
# tree, so that kbuild uses relative paths and ccache hits from any clone
# of this repo; the image is then at $(kernel_image KERNEL VARIANT)
# (scripts/lib/kernels.sh), where scripts/guest/vm and make bench look for it.
# usage: scripts/tree/build.sh [--config-only] VARIANT KERNEL
#   VARIANT: test (guest + debug), bench (guest only), kasan (test + KASAN
#            and lockdep), kcsan (test + KCSAN), norseq (test without
#            rseq and mm_cid), irqsoff (bench + the irqsoff tracer)
#   KERNEL:  a kernel of the line's registry patches/LINE/kernels (base, patched, ideal, ...)
# Exits 3 when the kernel does not build (scripts/lib/core.sh: die_build).
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"

config_only=0
[ "${1:-}" = --config-only ] && { config_only=1; shift; }
variant=${1:?usage: build.sh [--config-only] VARIANT KERNEL}
kernel=${2:?usage: build.sh [--config-only] VARIANT KERNEL}
src=$(kernel_tree "$kernel" "$variant")
need_deps build

# frags make the .config from allnoconfig; late ones then change it with
# olddefconfig, which keeps every other value (norseq: EXPERT, which
# RSEQ=n needs, would turn off what allnoconfig only leaves on without it).
# Each fragment is configs/NAME and the line's configs/LINE/NAME, if any
# (config_frags in scripts/lib/kernels.sh).
names=(guest.config) late_names=()
case $variant in
test)	names+=(debug.config) ;;
kasan)	names+=(debug.config kasan.config) ;;
kcsan)	names+=(debug.config kcsan.config) ;;
norseq)	names+=(debug.config); late_names=(norseq.config) ;;
irqsoff) names+=(irqsoff.config) ;;
esac
list=$(config_frags "${names[@]}") || exit
mapfile -t frags <<<"$list"
late=()
if [ ${#late_names[@]} -gt 0 ]; then
	list=$(config_frags "${late_names[@]}") || exit
	mapfile -t late <<<"$list"
fi
# and the kernel's own fragments (registry PATCHES: NAME.config), late too.
list=$(kernel_frags "$kernel") || exit
[ -z "$list" ] || mapfile -t -O ${#late[@]} late <<<"$list"
case $src in
"$BASE"|"$LINUX") [ -e "$src/.git" ] || "$TOP/scripts/tree/tree.sh" ;;
*)	"$TOP/scripts/tree/bench-tree.sh" "$kernel" ;;
esac
need_tree "$src"
# The patched test kernels carry the series' KUnit suites (kunit.py exec).
if [ "$src" = "$LINUX" ]; then
	kconfigs=$(kunitconfigs "$src") || exit
	mapfile -t -O ${#frags[@]} frags <<<"$kconfigs"
fi
name=$kernel/$variant
out=$src/.out-$variant
mkdir -p "$out"
use_ccache

# Regenerate .config only when the fragments changed.
cat "${frags[@]}" ${late[@]+"${late[@]}"} >"$out/fragment.new"
if ! cmp -s "$out/fragment.new" "$out/fragment" || [ ! -f "$out/.config" ]; then
	say "configuring $name (${out#"$TOP"/})"
	cat "${frags[@]}" >"$out/fragment.early"
	make -s -C "$src" O="$out" ARCH=x86_64 CC="$CC_CCACHE" \
		KCONFIG_ALLCONFIG="$out/fragment.early" allnoconfig >"$out/config.log" 2>&1 ||
		{ cat "$out/config.log" >&2; die "configuring $name failed"; }
	if [ ${#late[@]} -gt 0 ]; then
		cat "${late[@]}" >>"$out/.config"	# the last value of a symbol wins
		make -s -C "$src" O="$out" ARCH=x86_64 CC="$CC_CCACHE" olddefconfig \
			>>"$out/config.log" 2>&1 ||
			{ cat "$out/config.log" >&2; die "configuring $name failed"; }
	fi
	check_config "$out/fragment.new" "$out/.config" ||
		die "configs/*.config ask for options the $name kernel cannot have (see above)"
	mv "$out/fragment.new" "$out/fragment"
fi
rm -f "$out/fragment.new"
[ "$config_only" = 0 ] || exit 0

# With CONFIG_MODULES, "modules" too: Module.symvers, for modules built
# outside the tree (scripts/check/modcheck.sh).
targets=(bzImage)
! grep -qx CONFIG_MODULES=y "$out/.config" || targets+=(modules)
need_space 512 "building the $name kernel"
say "building the $name kernel (cold: 10 to 16 min on 2 cores; log: ${out#"$TOP"/}/build.log)"
if ! make -C "$src" O="$out" ARCH=x86_64 CC="$CC_CCACHE" -j"$JOBS" "${targets[@]}" \
		>"$out/build.log" 2>&1; then
	grep -E -m 20 'error|Error' "$out/build.log" >&2 || tail -20 "$out/build.log" >&2
	die_build "building $name failed (full log: $out/build.log)"
fi
grep -E '(warning|error):' "$out/build.log" >&2 || true
