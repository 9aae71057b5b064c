#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-kcsan: the series' KUnit suites and its selftests on the
# patched kernel built with KCSAN (configs/kcsan.config), under QEMU -smp
# $ONLINE; any KCSAN report fails the run. Not part of make check: the KCSAN
# kernel takes long to build and its guests run several times slower.
# Ends with the plain line "N passed, N failed, N skipped".
set -uo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build vm check

say "[1/3] building the patched/kcsan kernel (cold: ~12 min; log: ${LOGS#"$TOP"/}/build-kcsan.log)"
if "$TOP/scripts/tree/build.sh" kcsan patched >"$LOGS/build-kcsan.log" 2>&1; then
	tally pass "the patched KCSAN kernel builds" "$LOGS/build-kcsan.log"
	say "[2/3] KUnit on the KCSAN kernel, QEMU -smp $GUEST_ONLINE"
	tally_sub "$TOP/scripts/check/kunit.sh" kcsan
	say "[3/3] the series' selftests in a KCSAN guest, -smp $GUEST_ONLINE"
	tally_sub "$TOP/scripts/check/selftest.sh" --only series kcsan
else
	tail -20 "$LOGS/build-kcsan.log" | sed 's/^/  | /'
	tally fail "building the KCSAN kernel"
fi
tally_end ""
