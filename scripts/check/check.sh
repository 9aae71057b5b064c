#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: every check of the project, in order, one progress line per
# step (what it does, and how long it takes cold on 2 cores), ending with
# the plain line "N passed, N failed, N skipped". Logs: build/LINE/logs/.
# Each step is a function step_NAME, listed in STEPS with its line. Every
# check of every step is a JSON line of build/LINE/logs/results-check.sh.jsonl
# (scripts/lib/tally.sh), with its step's NAME, the line and its base; the
# closing lines are computed from them (scripts/check/results.py).
# It checks one line of ./lines (LINE=, default the first): its series
# (patches/LINE/), its trees and builds (build/LINE/).
# --full (make check-full): then the kernels make check has no time for.
# --series (make check-series): only the checks of the series itself
# (checkpatch, apply, MAINTAINERS, W=1 and sparse, KUnit UML). make check
# of the default line ends with them for every other line (step lines).
set -uo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build vm check
# The other lines, whose series checks end the default line's make check.
others=''
[ "$LINE" != "$DEFAULT_LINE" ] || [ -n "${1:-}" ] || others=$(line_names | grep -vxF "$LINE" | paste -sd' ')
# A clone's first make check of the 7.3 line fills build/ with 7.0 GiB
# (measured 2026-12-07): the base tree, some eight kernel builds, the apt
# state and sparse; a later one rewrites about 2 GiB of them. The series
# checks of another line: 5.5 GiB cold (6.12: its trees), 1 GiB warm.
mib=8192 why="cold: no ${LINUX#"$TOP"/} yet"
[ ! -e "$LINUX/.git" ] || mib=2048 why="make clean removes the build outputs"
for l in $others; do
	if [ -e "$TOP/build/$l/linux/.git" ]; then mib=$((mib + 1024)); else mib=$((mib + 6144)); fi
done
need_space "$mib" "make check${1:+ $1} of the $LINE line${others:+ and the series checks of $others} ($why)"

# What CI (make check, cold inside 75 minutes) has no time for, and make
# check-full runs (measured cold on an idle machine, 2026-12-07):
# - the base test kernel, the control: the out-of-tree module against it,
#   and the kselftests on it (selftest.sh: rseq's upstream tests must give
#   the same outcomes on both). 15.5 minutes to build, 14.5 to test;
# - rseq's basic_percpu_ops_test and basic_percpu_ops_mm_cid_test, 13 of
#   the patched kernel's 17 minutes of kselftests under TCG at -smp 4:
#   per-CPU and per-cid lists worked by 200 threads. The default pass of
#   run_param_test.sh still runs those operations (param_test and
#   param_test_mm_cid) with fewer threads, and mm_cid_share_test the
#   series' own cases.
kernels=(patched) ksft_exclude="rseq:basic_percpu_ops_test rseq:basic_percpu_ops_mm_cid_test"
[ "${1:-}" != --full ] || kernels=(base patched) ksft_exclude=''

STEPS=(
	"deps|scripts/setup/deps.sh groups hold what the scripts call (stand-ins for dpkg-query and apt-get; seconds)"
	"lint|shellcheck of the scripts (make lint; seconds)"
	"unit|unit tests of the tooling, scripts/*/test_*.py: the bench report, the KUnit and kselftest parsers, the results and the tally, the lines (seconds)"
	"checkpatch|checkpatch --strict on the patches of ${PATCHES#"$TOP"/}/series (~1 min)"
	"apply|the series applies to the base with git am, in the order of ${PATCHES#"$TOP"/}/series"
	"generated|generated files: the mirror (lib/ include/ ... Documentation/core-api/), its READMEs and the README patch list match the default line's series"
	"buildcheck|W=1 and sparse on the files the series touches, base vs patched (cold: ~3 min)"
	"smallcache|the series' objects for 16-byte (i386 M486) and 256-byte (s390x) cache lines, with W=1 (cold: ~2 min)"
	"kunit_uml|KUnit on UML (cold: builds the UML kernel, ~8 min)"
	"kernels|kernels: x86_64 test kernels (${kernels[*]}; cold: ~15 min each)"
	"modcheck|an out-of-tree module that reads the rss counters links against the test kernels (${kernels[*]}; seconds)"
	"vm|two guests at once keep their own log directories (scripts/check/vm-test.sh; ~1 min)"
	"kunit_x86_64|KUnit on x86_64: the patched test kernel under QEMU, $GUEST_ONLINE of $GUEST_POSSIBLE CPUs online (~2 min)"
	"kunit_i386|KUnit on i386 SMP under QEMU, $GUEST_ONLINE of $GUEST_POSSIBLE CPUs online (cold: builds an i386 kernel, ~13 min)"
	"selftests|kselftests in the guest (-smp $GUEST_ONLINE): mm, proc, rseq and the targets the series adds tests to, on the test kernels (${kernels[*]}; ~6 min, ~15 a kernel in make check-full)"
)
[ -z "$others" ] ||
	STEPS+=("lines|the series checks of the other lines ($others; make LINE=NAME check-series, cold: ~15 min each)")
case ${1:-} in
'')	;;
--series)
	mapfile -t STEPS < <(printf '%s\n' "${STEPS[@]}" |
		grep -E '^(checkpatch|apply|generated|buildcheck|kunit_uml)\|') ;;
--full)	STEPS+=(
	"kernels_norseq|kernels: base and patched x86_64 test kernels without rseq, so without mm_cid (cold: ~15 min each)"
	"kunit_norseq|KUnit on the patched norseq kernel under QEMU -smp $GUEST_ONLINE (~2 min)"
	"selftests_norseq|the series' rss_stat kselftests on the norseq kernels, base and patched (~5 min)"
	"kunit_arm64|KUnit on arm64 SMP under QEMU, $GUEST_ONLINE CPUs (cold: builds an arm64 kernel, ~10 min)"
	) ;;
*)	die "usage: scripts/check/check.sh [--full|--series]" ;;
esac

result() {	# result NAME STATUS: one check passed or failed
	if [ "$2" -eq 0 ]; then tally pass "$1"; else tally fail "$1"; fi
}
# checked NAME LOG COMMAND...: one check, COMMAND's output in LOG, whose
# end is shown when it fails.
checked() {
	local name=$1 log=$2 rc
	shift 2
	"$@" >"$log" 2>&1
	rc=$?
	[ $rc -eq 0 ] || tail -30 "$log" | sed 's/^/  | /'
	result "$name (log: ${log#"$TOP"/})" $rc
}

step_deps() { tally_sub "$TOP/scripts/check/deps-test.sh"; }
step_lint() { checked shellcheck "$LOGS/lint.log" make -s -C "$TOP" lint; }
step_unit() {	# every scripts/*/test_*.py
	local t
	for t in "$TOP"/scripts/*/test_*.py; do
		checked "${t#"$TOP"/}" "$LOGS/unit-$(basename "$t" .py).log" python3 "$t"
	done
}

step_checkpatch() {
	local list p rc
	list=$(series_patches "$PATCHES") || { tally fail "${PATCHES#"$TOP"/}/series"; return; }
	[ -n "$list" ] || { tally fail "no patches in ${PATCHES#"$TOP"/}/series"; return; }
	for p in $list; do
		# The base tree is one commit without history: checkpatch cannot look
		# up the upstream commits that the messages cite. Whether a new
		# file needs a MAINTAINERS entry it guesses from whether the patch
		# edits MAINTAINERS; step_generated checks that each new file has
		# one, with get_maintainer.pl.
		# Its SPDX check runs python3 with python3-ply: Debian's, not a
		# python3 that happens to come first in PATH.
		(cd "$BASE" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict --quiet \
			--no-summary --ignore UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES "$p") \
			>"$LOGS/checkpatch-${p##*/}.log" 2>&1
		rc=$?
		# A check that crashed did not pass.
		! grep -q '^Traceback' "$LOGS/checkpatch-${p##*/}.log" || rc=1
		[ $rc -eq 0 ] || sed 's/^/  | /' "$LOGS/checkpatch-${p##*/}.log" | head -30
		result "checkpatch ${p##*/}" $rc
	done
}

applied=$BUILD/check-apply
apply_to_base() ( worktree_at_base "$applied" && "$TOP/scripts/tree/apply.sh" "$applied" )	# die: in a subshell
step_apply() { checked "git am of ${PATCHES#"$TOP"/}/" "$LOGS/apply.log" apply_to_base; }

step_generated() {
	local rc=0 f d n m
	n=$(series_patches "$PATCHES" | wc -l)
	if [ "$LINE" != "$DEFAULT_LINE" ]; then
		tally skip "mirror: it holds the default line's series ($DEFAULT_LINE), not the $LINE line's"
	elif [ "$(git -C "$applied" rev-list --count "$BASE_TAG..HEAD")" -ne "$n" ]; then
		echo "  series not applied"; result "mirror" 1
	else
		mapfile -t added < <(mirror_added "$applied" HEAD)
		for f in ${added[@]+"${added[@]}"}; do
			cmp -s "$applied/$f" "$TOP/$f" || { echo "  mirror: $f differs from the series"; rc=1; }
		done
		for f in $(mirror_tracked); do
			[[ " ${added[*]-} " == *" $f "* ]] || { echo "  mirror: $f is not added by the series"; rc=1; }
		done
		for d in $(mirror_tracked | mirror_root | sort -u); do
			[ -f "$TOP/$d/README.md" ] || { echo "  mirror: $d/README.md is missing"; rc=1; }
		done
		result "mirror" $rc
	fi
	# Every file the series adds has a maintainer section (F: patterns).
	rc=0
	while read -r f; do
		m=$(cd "$applied" && perl scripts/get_maintainer.pl --no-git --no-git-fallback \
			--no-rolestats --no-tree -f "$f" 2>/dev/null)
		grep -qv -e '^linux-kernel@vger.kernel.org$' -e '^$' <<<"$m" ||
			{ echo "  MAINTAINERS: no section covers $f"; rc=1; }
	done < <(git -C "$applied" diff --name-only --diff-filter=A "$BASE_TAG" HEAD)
	result "MAINTAINERS covers the added files" $rc
	if [ "$LINE" != "$DEFAULT_LINE" ]; then
		tally skip "README.md's patch list: it is the default line's series ($DEFAULT_LINE), not the $LINE line's"
	elif [ "$(readme_block series)" = "$(series_list)" ]; then
		tally pass "README.md's patch list is ${PATCHES#"$TOP"/}/series"
	else
		tally fail "README.md's patch list is not ${PATCHES#"$TOP"/}/series: run 'scripts/tree/export.sh --docs'"
	fi
	# The tree we build and test must be what patches/ says.
	if [ -n "$(git -C "$LINUX" diff "$BRANCH" HEAD --stat)" ] ||
	   [ -n "$(git -C "$LINUX" diff HEAD "$(git -C "$applied" rev-parse HEAD)" --stat)" ]; then
		echo "  ${LINUX#"$TOP"/} differs from ${PATCHES#"$TOP"/}/: run 'make export' (or remove ${LINUX#"$TOP"/})"
		result "${LINUX#"$TOP"/} is ${PATCHES#"$TOP"/}/" 1
	fi
}

step_buildcheck() { tally_sub "$TOP/scripts/check/buildcheck.sh"; }
step_smallcache() { tally_sub "$TOP/scripts/check/smallcache.sh"; }
step_kunit_uml() { tally_sub "$TOP/scripts/check/kunit.sh" uml; }

# build_kernels VARIANT KERNEL...: the kernels of VARIANT (test, norseq),
# whose steps then run; built[VARIANT] is 0 when all of them built.
declare -A built=()
build_kernels() {
	local v=$1 k log logs=() rc=0 sfx=${1#test}
	shift
	for k in "$@"; do
		log=$LOGS/build-$k${sfx:+-$sfx}.log
		logs+=("${log#"$TOP"/}")
		"$TOP/scripts/tree/build.sh" "$v" "$k" >"$log" 2>&1 ||
			{ tail -20 "$log" | sed 's/^/  | /'; rc=1; }
	done
	built[$v]=$rc
	result "build the $v kernels (logs: ${logs[*]})" $rc
}
with_kernels() {	# with_kernels VARIANT COMMAND...: a step that needs them
	local v=$1
	shift
	if [ "${built[$v]:-1}" -eq 0 ]; then tally_sub "$@"; else tally fail "no $v kernels for ${1##*/}"; fi
}
step_kernels() { build_kernels test "${kernels[@]}"; }
step_modcheck() { with_kernels test "$TOP/scripts/check/modcheck.sh" "${kernels[@]}"; }
step_vm() { with_kernels test "$TOP/scripts/check/vm-test.sh"; }
step_kunit_x86_64() { with_kernels test "$TOP/scripts/check/kunit.sh" x86_64; }
step_kunit_i386() { tally_sub "$TOP/scripts/check/kunit.sh" i386; }
step_selftests() { KSFT_EXCLUDE=$ksft_exclude with_kernels test "$TOP/scripts/check/selftest.sh" "${kernels[@]}"; }
step_kernels_norseq() { build_kernels norseq base patched; }
step_kunit_norseq() { with_kernels norseq "$TOP/scripts/check/kunit.sh" norseq; }
step_selftests_norseq() { with_kernels norseq "$TOP/scripts/check/selftest.sh" --only rss_stat base:norseq patched:norseq; }
step_kunit_arm64() { tally_sub "$TOP/scripts/check/kunit.sh" arm64; }
step_lines() {	# check-series of each other line, its progress shown as it goes
	local l before rc
	for l in $others; do
		before=$(wc -l <"$RESULTS")
		env -u BUILD -u LINUX -u BASE LINE="$l" KSRC= KDIR= "$TOP/scripts/check/check.sh" --series 2>&1 | sed -u 's/^/  /'
		rc=${PIPESTATUS[0]}
		[ "$rc" -eq 0 ] || [ "$(failures_since "$before")" -gt 0 ] ||
			tally fail "make LINE=$l check-series: exit status $rc"
	done
}

# The line's trees first, so that every record names the base it checks.
say "make check${1:+ $1} of the $LINE line ($(line_field "$LINE" desc)); preparing its kernel trees (make tree; cold: downloads and unpacks $(line_field "$LINE" package), ~3 min; log: ${LOGS#"$TOP"/}/tree.log)"
"$TOP/scripts/tree/tree.sh" >"$LOGS/tree.log" 2>&1 || { cat "$LOGS/tree.log"; die "make tree failed"; }
say "the $LINE line's base: Linux $(base_info kernel), $(base_info source)"
n=0
for s in "${STEPS[@]}"; do
	n=$((n + 1))
	say "[$n/${#STEPS[@]}] ${s#*|}"
	export STEP=${s%%|*}
	"step_${s%%|*}"
done
tally_end "$([ "${1:-}" != --series ] || echo "the $LINE line's series checks")"
