#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the KUnit suite of the patched tree with tools/testing/kunit/kunit.py.
# usage: scripts/kunit.sh uml|x86_64
#   uml:    the default kunit.py UML kernel (UP), build dir .kunit
#   x86_64: QEMU with -smp $KUNIT_SMP (default 4); the build dir is
#           configured from configs/ (allnoconfig based, like the guest)
#           so that it builds in minutes, not the ~12 of olddefconfig
# The suite is $KUNITCONFIG (default: the series' lib/tests/.kunitconfig;
# upstream's lib/kunit example suite while the series has none).
# Prints "kunit-ARCH: N passed, N failed, N skipped" on the last line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

arch=${1:?usage: kunit.sh uml|x86_64}
need_tree "$LINUX"
if [ -z "${KUNITCONFIG:-}" ]; then
	KUNITCONFIG=$LINUX/lib/tests/.kunitconfig
	[ -f "$KUNITCONFIG" ] || KUNITCONFIG=$LINUX/lib/kunit/.kunitconfig
fi
[ -f "$KUNITCONFIG" ] || die "no kunitconfig $KUNITCONFIG"
export KUNITCONFIG
use_ccache
logdir=$BUILD/logs
mkdir -p "$logdir"
log=$logdir/kunit-$arch.log
args=(run --kunitconfig="$KUNITCONFIG" --jobs="$JOBS" --timeout="${KUNIT_TIMEOUT:-900}"
      --make_options="CC=$CC_CCACHE")
case $arch in
uml)
	# 6.12 UML WARNs at boot when PCI over virtio has no device ID;
	# none of our tests use it.
	bdir=.kunit
	args+=(--build_dir="$bdir" --kconfig_add=CONFIG_UML_PCI_OVER_VIRTIO=n)
	;;
x86_64)
	"$TOP/scripts/build.sh" --config-only kunit patched
	bdir=.kunit-x86_64
	# kunit.py keeps a .config that already holds every option of the
	# kunitconfig (plus its QEMU serial options) when the kunitconfig is
	# the one it last used: record it as such.
	{ cat "$KUNITCONFIG"; printf 'CONFIG_SERIAL_8250=y\nCONFIG_SERIAL_8250_CONSOLE=y\n'; } \
		>"$LINUX/$bdir/last_used_kunitconfig"
	args+=(--arch=x86_64 --build_dir="$bdir"
	       --qemu_args="-smp ${KUNIT_SMP:-4}")
	;;
*)	die "unknown KUnit arch '$arch' (uml x86_64)" ;;
esac

say "kunit $arch: building and running ${KUNITCONFIG#"$LINUX"/} (log: ${log#"$TOP"/})"
set +e
(cd "$LINUX" && python3 tools/testing/kunit/kunit.py "${args[@]}") >"$log" 2>&1
rc=$?
set -e
if [ "$arch" = x86_64 ] && grep -q 'Regenerating .config' "$log"; then
	warn "kunit.py regenerated the configs/-based x86_64 .config"
fi
summary=$(grep -E 'Ran [0-9]+ tests?' "$log" | tail -1)
if [ -z "$summary" ]; then
	tail -30 "$log" >&2
	die "kunit $arch: no test ran (kunit.py status $rc)"
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
raw=$LINUX/$bdir/test.log
if log_has_bad "$raw"; then
	warn "kunit $arch: the kernel reported a problem (log: $raw)"
	failed=$((failed + 1))
fi
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	tail -20 "$log" >&2
	failed=1
fi
echo "kunit-$arch: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
