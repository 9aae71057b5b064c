#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the series' KUnit suites (every .kunitconfig it adds, or $KUNITCONFIG)
# with tools/testing/kunit/kunit.py.
# usage: scripts/kunit.sh uml|x86_64|kcsan|i386
#   uml:    kunit.py run, UML (UP), build dir .kunit
#   x86_64: kunit.py exec on the patched test kernel (.out-test, built by
#           scripts/build.sh, which puts the suites in it), QEMU -smp $SMP
#   kcsan:  the same on the patched KCSAN kernel (.out-kcsan)
#   i386:   kunit.py run --arch=i386, SMP (configs/i386.config), QEMU
#           -smp $SMP, build dir .kunit-i386; then W=1 on the series' objects
# Each kernel is built in the tree $LINUX (build/linux) with ccache.
# Prints "kunit-ARCH: N passed, N failed, N skipped" on the last line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_deps build vm

arch=${1:?usage: kunit.sh uml|x86_64|kcsan|i386}
need_tree "$LINUX"
mapfile -t kconfigs < <(kunitconfigs "$LINUX")
[ ${#kconfigs[@]} -gt 0 ] || exit 1
use_ccache
log=$LOGS/kunit-$arch.log
timeout=${KUNIT_TIMEOUT:-900}
args=()
for k in "${kconfigs[@]}"; do args+=(--kunitconfig="$k"); done
case $arch in
uml)
	# 6.12 UML WARNs at boot when PCI over virtio has no device ID;
	# none of our tests use it.
	bdir=.kunit
	cmd=(run "${args[@]}" --build_dir="$bdir" --jobs="$JOBS" --timeout="$timeout"
	     --make_options="CC=$CC_CCACHE" --kconfig_add=CONFIG_UML_PCI_OVER_VIRTIO=n)
	what="building (cold: ~7 min) and running the UML KUnit kernel"
	;;
x86_64|kcsan)
	variant="test"
	[ "$arch" = x86_64 ] || variant=kcsan
	bdir=.out-$variant
	"$TOP/scripts/build.sh" $variant patched >/dev/null
	for k in "${kconfigs[@]}"; do
		check_config "$k" "$LINUX/$bdir/.config" ||
			die "the test kernel lacks the KUnit suite of $k (see above)"
	done
	cmd=(exec --arch=x86_64 --build_dir="$bdir" --timeout="$timeout"
	     --qemu_args="-smp $GUEST_SMP")
	what="running the KUnit suites of the patched $variant kernel, QEMU -smp $GUEST_SMP"
	;;
i386)
	bdir=.kunit-i386
	cmd=(run "${args[@]}" --kunitconfig="$TOP/configs/i386.config" --arch=i386
	     --build_dir="$bdir" --jobs="$JOBS" --timeout="$timeout"
	     --make_options="CC=$CC_CCACHE" --qemu_args="-smp $GUEST_SMP")
	what="building (cold: ~10 min) and running the i386 SMP KUnit kernel, QEMU -smp $GUEST_SMP"
	;;
*)	die "unknown KUnit arch '$arch' (uml x86_64 kcsan i386)" ;;
esac
[ -z "${KUNIT_FILTER:-}" ] || cmd+=("$KUNIT_FILTER")

say "kunit $arch: $what (log: ${log#"$TOP"/})"
set +e
(cd "$LINUX" && python3 tools/testing/kunit/kunit.py "${cmd[@]}") >"$log" 2>&1
rc=$?
set -e
summary=$(grep -E 'Ran [0-9]+ tests?' "$log" | tail -1)
if [ -z "$summary" ]; then
	tail -30 "$log" | sed 's/^/  | /' >&2
	echo "kunit-$arch: no test ran (kunit.py status $rc, log: ${log#"$TOP"/})"
	tally fail "kunit-$arch"
	tally_end "kunit-$arch" || exit
fi
read -r passed failed skipped < <(echo "$summary" | awk '{
	p = f = s = 0
	for (i = 1; i <= NF; i++) {
		if ($i == "passed:") p = $(i + 1) + 0
		if ($i == "failed:") f = $(i + 1) + 0
		if ($i == "skipped:") s = $(i + 1) + 0
	}
	print p, f, s }')
grep -E '\[(FAILED|SKIPPED)\]|# SKIP' "$log" | sed 's/^/  /' | head -40 || true
if log_has_bad "$LINUX/$bdir/test.log"; then
	tally fail "kunit $arch: the kernel reported a problem (log: $LINUX/$bdir/test.log)"
fi
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	tail -20 "$log" | sed 's/^/  | /'
	tally fail "kunit.py exited with status $rc"
fi

if [ "$arch" = i386 ]; then
	# The series' C files with W=1 in the same 32-bit config.
	mapfile -t objs < <(git -C "$LINUX" diff --name-only "$BASE_TAG" HEAD -- '*.c' |
		grep -v '^tools/' | sed 's/\.c$/.o/')
	wlog=$LOGS/kunit-i386-w1.log
	if make -C "$LINUX" O="$bdir" ARCH=i386 CC="$CC_CCACHE" W=1 -j"$JOBS" "${objs[@]}" >"$wlog" 2>&1 &&
	   ! grep -E '(warning|error):' "$wlog"; then
		tally pass
	else
		tail -20 "$wlog" | sed 's/^/  | /'
		tally fail "W=1 on the series' objects for i386 (log: ${wlog#"$TOP"/})"
	fi
fi
tally_end "kunit-$arch"
