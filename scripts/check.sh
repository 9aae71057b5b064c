#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: every check of the project, in order, one progress line per
# step, ending with the plain line "N passed, N failed, N skipped".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

passed=0 failed=0 skipped=0
steps=8 step=0
logdir=$BUILD/logs
mkdir -p "$logdir"
count() {	# add the "N passed, N failed, N skipped" counts of line $1
	local p f s
	read -r p f s < <(echo "$1" | sed -n 's/.*\b\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed\(, \([0-9][0-9]*\) skipped\)\{0,1\}.*/\1 \2 \4/p')
	passed=$((passed + ${p:-0})) failed=$((failed + ${f:-1})) skipped=$((skipped + ${s:-0}))
}
sub() {	# run a sub-step, show its output indented, count its last line
	local out
	out=$("$@" 2>&1)
	printf '%s\n' "$out" | sed -e '$d' -e 's/^/  /'
	line=$(printf '%s\n' "$out" | tail -1)
	echo "  $line"
	count "$line"
}
begin() { step=$((step + 1)); say "[$step/$steps] $*"; }
result() {	# result NAME STATUS: one test passed or failed
	if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "  FAIL: $1"; fi
}

say "preparing the kernel trees (make tree; log: ${logdir#"$TOP"/}/tree.log)"
"$TOP/scripts/tree.sh" >"$logdir/tree.log" 2>&1 || { cat "$logdir/tree.log"; die "make tree failed"; }
mapfile -t patches < <(grep -v -e '^#' -e '^$' "$TOP/patches/series")

begin "checkpatch --strict on ${#patches[@]} patches"
for p in ${patches[@]+"${patches[@]}"}; do
	# The base tree is one commit without history: checkpatch cannot look
	# up the upstream commits that the messages cite.
	# Its SPDX check runs python3 with python3-ply: Debian's, not a
	# python3 that happens to come first in PATH.
	(cd "$BASE" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict --quiet \
		--no-summary --ignore UNKNOWN_COMMIT_ID "$TOP/patches/$p") \
		>"$logdir/checkpatch-$p.log" 2>&1
	rc=$?
	# A check that crashed did not pass.
	! grep -q '^Traceback' "$logdir/checkpatch-$p.log" || rc=1
	[ $rc -eq 0 ] || sed 's/^/  | /' "$logdir/checkpatch-$p.log" | head -30
	result "checkpatch $p" $rc
done
[ ${#patches[@]} -gt 0 ] || { echo "  no patches in patches/series"; skipped=$((skipped + 1)); }

begin "the series applies to the base with git am"
applied=$BUILD/check-apply
if [ ! -e "$applied/.git" ]; then
	git -C "$LINUX" worktree add -q --detach "$applied" "$BASE_TAG" 2>/dev/null
fi
git -C "$applied" am --abort >/dev/null 2>&1
git -C "$applied" checkout -q --detach "$BASE_TAG" && git -C "$applied" reset -q --hard
"$TOP/scripts/apply.sh" "$applied" >"$logdir/apply.log" 2>&1
rc=$?
[ $rc -eq 0 ] || sed 's/^/  | /' "$logdir/apply.log"
result "git am of patches/" $rc

begin "the mirror (lib/ include/ mm/ kernel/ tools/ Documentation/) matches the series"
rc=0
if [ "$(git -C "$applied" rev-list --count "$BASE_TAG..HEAD")" -ne ${#patches[@]} ]; then
	echo "  series not applied"; rc=1
else
	mapfile -t added < <(mirror_added "$applied" HEAD)
	for f in ${added[@]+"${added[@]}"}; do
		cmp -s "$applied/$f" "$TOP/$f" || { echo "  mirror: $f differs from the series"; rc=1; }
	done
	for f in $(mirror_tracked); do
		printf '%s\n' "${added[@]}" | grep -qxF "$f" || { echo "  mirror: $f is not added by the series"; rc=1; }
	done
fi
result "mirror" $rc
# The tree we build and test must be what patches/ says.
if [ -n "$(git -C "$LINUX" diff "$BRANCH" HEAD --stat)" ] ||
   [ -n "$(git -C "$LINUX" diff HEAD "$(git -C "$applied" rev-parse HEAD)" --stat)" ]; then
	echo "  build/linux differs from patches/: run 'make export' (or remove build/linux)"
	result "build/linux is patches/" 1
fi

begin "W=1 and sparse on the files the series touches; ARCH=i386 build"
sub "$TOP/scripts/buildcheck.sh"

begin "KUnit on UML"
sub "$TOP/scripts/kunit.sh" uml

begin "KUnit on x86_64, QEMU -smp ${KUNIT_SMP:-4}"
sub "$TOP/scripts/kunit.sh" x86_64

begin "kernels: base and patched test kernels"
rc=0
for k in base patched; do
	"$TOP/scripts/build.sh" test "$k" >"$logdir/build-$k.log" 2>&1 ||
		{ tail -20 "$logdir/build-$k.log"; rc=1; }
done
result "build test kernels" $rc

begin "kselftests in the guest (-smp ${SMP:-4}), base and patched kernels"
if [ $rc -eq 0 ]; then
	sub "$TOP/scripts/selftest.sh" base patched
else
	echo "  no kernels to boot"; failed=$((failed + 1))
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
