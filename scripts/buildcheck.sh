#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Compile the C files the series touches with W=1 and sparse (C=2) in the
# x86_64 test kernel of the base and of the patched tree, and fail on any
# warning the base does not have; then compile the library and its KUnit
# suite for 32-bit (ARCH=i386, SMP) with W=1.
# Prints "buildcheck: N passed, N failed" on the last line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_tree "$LINUX"
use_ccache
logdir=$BUILD/logs
mkdir -p "$logdir"
# The C files the series changes or adds, as objects.
# The KUnit suite is checked on its own below: the test kernels lack KUnit.
mapfile -t objs < <(git -C "$LINUX" diff --name-only "$BASE_TAG" "$BRANCH" -- '*.c' |
	grep -v -e '^tools/' -e '^lib/tests/' | sed 's/\.c$/.o/')
passed=0 failed=0

tally() {	# tally STATUS LOG: a pass needs status 0 and no warning in LOG
	if [ "$1" -eq 0 ] && ! grep -E '(warning|error):' "$2"; then
		passed=$((passed + 1))
	else
		tail -20 "$2" | sed 's/^/  | /'
		failed=$((failed + 1))
	fi
}

warnings() {	# tree: W=1 + sparse warnings of $objs, file:line stripped
	local src out
	src=$(tree_dir "$1")
	out=$src/.out-test
	[ -f "$out/.config" ] || "$TOP/scripts/build.sh" --config-only test "$1" >&2
	local have=()
	for o in "${objs[@]}"; do [ -f "$src/${o%.o}.c" ] && have+=("$o"); done
	make -C "$src" O="$out" ARCH=x86_64 CC="$CC_CCACHE" W=1 C=2 -j"$JOBS" \
		"${have[@]}" >"$logdir/buildcheck-$1.log" 2>&1 ||
		{ tail -20 "$logdir/buildcheck-$1.log" >&2; return 1; }
	grep -E '(warning|error):' "$logdir/buildcheck-$1.log" |
		sed -E 's/:[0-9]+:[0-9]+:/:/' | LC_ALL=C sort -u
}

say "buildcheck: W=1 and sparse on ${#objs[@]} objects, base vs patched"
if base_w=$(warnings base) && new_w=$(warnings patched); then
	mapfile -t added < <(LC_ALL=C comm -13 <(echo "$base_w") <(echo "$new_w"))
	if [ ${#added[@]} -gt 0 ]; then
		printf '  new warning: %s\n' "${added[@]}"
		failed=$((failed + 1))
	else
		passed=$((passed + 1))
	fi
else
	failed=$((failed + 1))
fi

say "buildcheck: W=1 and sparse on the KUnit suite (x86_64 KUnit kernel config)"
if [ -z "${KUNITCONFIG:-}" ]; then
	KUNITCONFIG=$LINUX/lib/tests/.kunitconfig
fi
export KUNITCONFIG
kdir=$LINUX/.kunit-x86_64
rc=0
"$TOP/scripts/build.sh" --config-only kunit patched >"$logdir/buildcheck-kunit.log" 2>&1 &&
	make -C "$LINUX" O="$kdir" ARCH=x86_64 CC="$CC_CCACHE" W=1 C=2 -j"$JOBS" \
		lib/tests/lazy_percpu_counter_kunit.o >>"$logdir/buildcheck-kunit.log" 2>&1 || rc=$?
tally $rc "$logdir/buildcheck-kunit.log"

say "buildcheck: ARCH=i386 SMP, W=1: lazy percpu counter library and KUnit suite"
out=$LINUX/.out-i386
mkdir -p "$out"
rc=0
make -s -C "$LINUX" O="$out" ARCH=i386 CC="$CC_CCACHE" \
	KCONFIG_ALLCONFIG="$TOP/configs/i386.config" allnoconfig >"$logdir/buildcheck-i386.log" 2>&1 &&
	check_config "$TOP/configs/i386.config" "$out/.config" 2>>"$logdir/buildcheck-i386.log" &&
	make -C "$LINUX" O="$out" ARCH=i386 CC="$CC_CCACHE" W=1 -j"$JOBS" \
		lib/lazy_percpu_counter.o lib/percpu_counter.o lib/tests/lazy_percpu_counter_kunit.o \
		>>"$logdir/buildcheck-i386.log" 2>&1 || rc=$?
tally $rc "$logdir/buildcheck-i386.log"
echo "buildcheck: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
