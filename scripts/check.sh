#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: every check of the project, in order, one progress line per
# step (what it does, and how long it takes cold on 2 cores), ending with
# the plain line "N passed, N failed, N skipped". Logs: build/logs/.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
need_deps build vm check

steps=11 step=0
begin() { step=$((step + 1)); say "[$step/$steps] $*"; }
result() {	# result NAME STATUS: one check passed or failed
	if [ "$2" -eq 0 ]; then tally pass; else tally fail "$1"; fi
}

begin "scripts/deps.sh groups hold what the scripts call (stand-ins for dpkg-query and apt-get; seconds)"
tally_sub "$TOP/scripts/deps-test.sh"

begin "shellcheck of the scripts (make lint; seconds)"
make -s -C "$TOP" lint >"$LOGS/lint.log" 2>&1
rc=$?
[ $rc -eq 0 ] || head -40 "$LOGS/lint.log" | sed 's/^/  | /'
result "shellcheck (log: build/logs/lint.log)" $rc

say "preparing the kernel trees (make tree; cold: unpacks linux-source, ~2 min; log: build/logs/tree.log)"
"$TOP/scripts/tree.sh" >"$LOGS/tree.log" 2>&1 || { cat "$LOGS/tree.log"; die "make tree failed"; }
mapfile -t patches < <(grep -v -e '^#' -e '^$' "$TOP/patches/series")

begin "checkpatch --strict on ${#patches[@]} patches (~1 min)"
for p in ${patches[@]+"${patches[@]}"}; do
	# The base tree is one commit without history: checkpatch cannot look
	# up the upstream commits that the messages cite.
	# Its SPDX check runs python3 with python3-ply: Debian's, not a
	# python3 that happens to come first in PATH.
	(cd "$BASE" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict --quiet \
		--no-summary --ignore UNKNOWN_COMMIT_ID "$TOP/patches/$p") \
		>"$LOGS/checkpatch-$p.log" 2>&1
	rc=$?
	# A check that crashed did not pass.
	! grep -q '^Traceback' "$LOGS/checkpatch-$p.log" || rc=1
	[ $rc -eq 0 ] || sed 's/^/  | /' "$LOGS/checkpatch-$p.log" | head -30
	result "checkpatch $p" $rc
done
[ ${#patches[@]} -gt 0 ] || tally fail "no patches in patches/series"

begin "the series applies to the base with git am, in the order of patches/series"
applied=$BUILD/check-apply
if [ ! -e "$applied/.git" ]; then
	git -C "$LINUX" worktree add -q --detach "$applied" "$BASE_TAG" 2>/dev/null
fi
git -C "$applied" am --abort >/dev/null 2>&1
git -C "$applied" checkout -q --detach "$BASE_TAG" && git -C "$applied" reset -q --hard
"$TOP/scripts/apply.sh" "$applied" >"$LOGS/apply.log" 2>&1
rc=$?
[ $rc -eq 0 ] || sed 's/^/  | /' "$LOGS/apply.log"
result "git am of patches/" $rc

begin "generated files: the mirror (lib/ include/ ... Documentation/core-api/), its READMEs and the README patch list match patches/"
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
	for d in $(mirror_tracked | mirror_root | sort -u); do
		[ -f "$TOP/$d/README.md" ] || { echo "  mirror: $d/README.md is missing"; rc=1; }
	done
fi
result "mirror" $rc
if [ "$(sed -n '/^<!-- series:begin -->$/,/^<!-- series:end -->$/p' "$TOP/README.md" | sed '1d;$d')" = "$(series_list)" ]; then
	tally pass
else
	tally fail "README.md's patch list is not patches/series: run 'scripts/export.sh --docs'"
fi
# The tree we build and test must be what patches/ says.
if [ -n "$(git -C "$LINUX" diff "$BRANCH" HEAD --stat)" ] ||
   [ -n "$(git -C "$LINUX" diff HEAD "$(git -C "$applied" rev-parse HEAD)" --stat)" ]; then
	echo "  build/linux differs from patches/: run 'make export' (or remove build/linux)"
	result "build/linux is patches/" 1
fi

begin "W=1 and sparse on the files the series touches, base vs patched (cold: ~3 min)"
tally_sub "$TOP/scripts/buildcheck.sh"

begin "KUnit on UML (cold: builds the UML kernel, ~7 min)"
tally_sub "$TOP/scripts/kunit.sh" uml

begin "kernels: base and patched x86_64 test kernels (cold: ~7 min each)"
rc=0
for k in base patched; do
	"$TOP/scripts/build.sh" test "$k" >"$LOGS/build-$k.log" 2>&1 ||
		{ tail -20 "$LOGS/build-$k.log" | sed 's/^/  | /'; rc=1; }
done
result "build the test kernels (logs: build/logs/build-{base,patched}.log)" $rc

begin "KUnit on x86_64: the patched test kernel under QEMU -smp $GUEST_SMP (~2 min)"
if [ $rc -eq 0 ]; then
	tally_sub "$TOP/scripts/kunit.sh" x86_64
else
	tally fail "no patched test kernel for KUnit"
fi

begin "KUnit on i386 SMP under QEMU -smp $GUEST_SMP, then W=1 on the series for i386 (cold: builds an i386 kernel, ~10 min)"
tally_sub "$TOP/scripts/kunit.sh" i386

begin "kselftests in the guest (-smp $GUEST_SMP), base and patched kernels (~10 min)"
if [ $rc -eq 0 ]; then
	tally_sub "$TOP/scripts/selftest.sh" base patched
else
	tally fail "no test kernels to boot"
fi

tally_end ""
