#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Compile the C files the series touches with W=1 and sparse (C=2) in the
# x86_64 test kernel of the base and of the patched tree (which has the
# series' KUnit suites), and fail on any warning the base does not have.
# (The i386 W=1 build is part of scripts/kunit.sh i386.)
# Prints "buildcheck: N passed, N failed, N skipped" on the last line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_deps build check

need_tree "$LINUX"
use_ccache
# The C files the series changes or adds, as objects.
mapfile -t objs < <(git -C "$LINUX" diff --name-only "$BASE_TAG" HEAD -- '*.c' |
	grep -v '^tools/' | sed 's/\.c$/.o/')

warnings() {	# tree: W=1 + sparse warnings of $objs, file:line stripped
	local src out
	src=$(tree_dir "$1")
	out=$src/.out-test
	[ -f "$out/.config" ] || "$TOP/scripts/build.sh" --config-only test "$1" >&2
	local have=()
	for o in "${objs[@]}"; do [ -f "$src/${o%.o}.c" ] && have+=("$o"); done
	make -C "$src" O="$out" ARCH=x86_64 CC="$CC_CCACHE" W=1 C=2 -j"$JOBS" \
		"${have[@]}" >"$LOGS/buildcheck-$1.log" 2>&1 ||
		{ tail -20 "$LOGS/buildcheck-$1.log" >&2; return 1; }
	grep -E '(warning|error):' "$LOGS/buildcheck-$1.log" |
		sed -E 's/:[0-9]+:[0-9]+:/:/' | LC_ALL=C sort -u
}

say "buildcheck: W=1 and sparse on ${#objs[@]} objects, base vs patched"
if base_w=$(warnings base) && new_w=$(warnings patched); then
	mapfile -t added < <(LC_ALL=C comm -13 <(echo "$base_w") <(echo "$new_w"))
	if [ ${#added[@]} -gt 0 ]; then
		tally fail "new warnings:"
		printf '  new warning: %s\n' "${added[@]}"
	else
		tally pass
	fi
else
	tally fail "compiling the series' objects (logs: build/logs/buildcheck-{base,patched}.log)"
fi
tally_end buildcheck
