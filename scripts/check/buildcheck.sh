#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Compile the C files the series touches with W=1 and sparse (C=2) in the
# x86_64 test kernel of the base and of the patched tree (which has the
# series' KUnit suites), and fail on any warning the base does not have.
# (W=1 for 32-bit and other architectures: scripts/check/smallcache.sh.)
# The sparse is one the tree accepts (scripts/setup/sparse.sh): kbuild
# would otherwise turn C= off with a mere warning.
# Prints "buildcheck: N passed, N failed, N skipped" on the last line;
# exits 1 on new warnings, 3 when the objects do not compile.
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build check

need_tree "$LINUX"
use_ccache
IFS=$'\t' read -r sparse spver < <("$TOP/scripts/setup/sparse.sh" "$LINUX") ||
	die "scripts/setup/sparse.sh found no sparse for ${LINUX#"$TOP"/}"
warnings() {	# tree: W=1 + sparse warnings of the series' objects, file:line stripped
	local src out objs
	src=$(kernel_tree "$1" test)
	out=$src/.out-test
	# The config of the fragments as they are now (build.sh --config-only
	# rewrites it only when they changed): base and patched alike.
	"$TOP/scripts/tree/build.sh" --config-only test "$1" >&2
	objs=$(series_objects "$src")
	# shellcheck disable=SC2086 # one object a word
	make -C "$src" O="$out" ARCH=x86_64 CC="$CC_CCACHE" W=1 C=2 CHECK="$sparse" -j"$JOBS" \
		$objs >"$LOGS/buildcheck-$1.log" 2>&1 ||
		{ tail -20 "$LOGS/buildcheck-$1.log" >&2; return 1; }
	# None at all is fine (grep's status 1 is not an error).
	{ grep -E '(warning|error):' "$LOGS/buildcheck-$1.log" || [ $? -eq 1 ]; } |
		sed -E 's/:[0-9]+:[0-9]+:/:/' | LC_ALL=C sort -u
}

say "buildcheck: W=1 and $spver on the $(series_objects | wc -l) objects of the series, base vs patched"
if base_w=$(warnings base) && new_w=$(warnings patched); then
	mapfile -t added < <(LC_ALL=C comm -13 <(echo "$base_w") <(echo "$new_w"))
	if [ ${#added[@]} -gt 0 ]; then
		tally fail "new warnings:"
		printf '  new warning: %s\n' "${added[@]}"
	else
		tally pass "no new W=1 or sparse warning in the series' objects"
	fi
else
	die_build "buildcheck: the series' objects do not compile (logs: ${LOGS#"$TOP"/}/buildcheck-{base,patched}.log)"
fi
tally_end buildcheck
