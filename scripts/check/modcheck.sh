#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: the out-of-tree module of scripts/check/modcheck/ (it reads the rss
# counters through the inline readers of <linux/mm.h>) built against the
# test kernels named, as distributions build theirs:
#   make -C TREE O=TREE/.out-test M=build/modcheck/KERNEL modules
# It must compile and link: modpost must find every symbol it needs
# exported ("modpost: ... undefined!" fails it).
# usage: scripts/check/modcheck.sh KERNEL...   (base, patched: their test kernels)
# Prints "modcheck: N passed, N failed, N skipped" on the last line; exits
# 1 when the module does not build against a kernel, 3 when a test kernel
# is not built, or built without CONFIG_MODULES (configs/debug.config).
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build

[ $# -gt 0 ] || die "usage: modcheck.sh KERNEL... (base, patched)"
use_ccache
for k in "$@"; do
	src=$(kernel_tree "$k" test)
	out=$src/.out-test
	grep -qsx CONFIG_MODULES=y "$out/.config" ||
		die_build "the $k test kernel is not built with CONFIG_MODULES=y (configs/debug.config; make test-kernels)"
	[ -f "$out/Module.symvers" ] || die_build "the $k test kernel is not built (no ${out#"$TOP"/}/Module.symvers; make test-kernels)"
	# A copy per kernel: M= builds in the module's directory.
	dir=$BUILD/modcheck/$k
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$TOP"/scripts/check/modcheck/* "$dir/"
	log=$LOGS/modcheck-$k.log
	say "modcheck: building scripts/check/modcheck against the $k test kernel (log: ${log#"$TOP"/})"
	if make -C "$src" O="$out" ARCH=x86_64 CC="$CC_CCACHE" M="$dir" modules >"$log" 2>&1 &&
	   [ -f "$dir/modcheck.ko" ]; then
		tally pass "modcheck links against the $k test kernel" "$log"
		continue
	fi
	missing=$(sed -n 's/.*modpost: "\([^"]*\)" \[.*\] undefined!.*/\1/p' "$log" | paste -sd' ')
	if [ -n "$missing" ]; then
		tally fail "$k: the module does not link: not exported: $missing"
	else
		grep -E -m 10 'error|Error' "$log" | sed 's/^/  | /'
		tally fail "$k: the module does not compile against the $k kernel (log: ${log#"$TOP"/})"
	fi
done
tally_end modcheck
