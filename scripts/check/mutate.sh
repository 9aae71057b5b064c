#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make mutate: a mutation score of the tests. Each mutants/LINE/NN-name.patch is a
# planted bug: a git diff against the tree with patches/series applied,
# after two header lines:
#   Description: <one line>
#   Catch: <steps, in the order to run them>
# with steps among:
#   kunit-uml, kunit-x86_64, kunit-i386, kunit-norseq, kunit-arm64
#                       the KUnit suites (scripts/check/kunit.sh)
#   selftest            the series' kselftests on the patched test kernel
#   selftest:CATEGORY   one run_vmtests.sh category (selftest.sh --only)
#   selftest:NAME       the kselftest_harness tests NAME of the series' mm tests
#   selftest:TARGET     one kselftest target (selftest:rseq), on the base and
#                       the patched test kernels: outcomes must agree
#   smallcache          the series' objects for 16- and 256-byte cache lines
#                       (scripts/check/smallcache.sh)
#   modcheck            an out-of-tree module linked against the patched test
#                       kernel (scripts/check/modcheck.sh)
# The runner keeps its own worktree, build/mutate (base + patches/series,
# with its build directories kept across runs, so that ccache and kbuild
# rebuild only what a mutant changes). It first runs every step that the
# mutants name on the unmutated tree, which must pass; then, for each
# mutant: apply, run its steps in order until one fails (caught) or all
# pass (missed), revert. A step's results say what happened: each step
# runs with a results file of its own (RESULTS, scripts/lib/tally.sh), and
# scripts/check/results.py verdict reads it: fail, a test failed: caught;
# nobuild, it could not build what it tests: the mutant breaks the build
# and is not caught; error (or no result), an error of the step, not a
# catch; an exit status that disagrees with the results is an error too.
# Each step's log, results and the TAP of its patched guest stay in
# build/LINE/logs/mutant-NAME-STEP.{log,jsonl,tap}. Prints a
# table and "N caught, N missed"; exits non-zero when a mutant is missed or
# does not apply.
# usage: scripts/check/mutate.sh [PATTERN...]   (mutants whose file name contains
# one of them; all mutants without one)
set -uo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build vm check
# A mutant can oops or lock up a KUnit guest, which then prints nothing
# more until kunit.py's timeout (kunit.sh: 900 s, for whole cold runs on
# slow machines); 01 and 03 of the 7.3 line did. The KUnit suites of the
# test kernel run in under a minute under TCG, with the cores shared too.
export KUNIT_TIMEOUT=${KUNIT_TIMEOUT:-300}

[ $# -gt 0 ] || set -- ''
mutants=()
for m in "$MUTANTS_DIR"/*.patch; do
	[ -f "$m" ] || continue
	for p in "$@"; do
		case $(basename "$m") in *"$p"*) mutants+=("$m"); break ;; esac
	done
done
[ ${#mutants[@]} -gt 0 ] || die "no mutant in ${MUTANTS_DIR#"$TOP"/}/ matches '$*'"

header() { sed -n "s/^$1: *//p;/^diff --git /q" "$2" | head -1; }
steps=()
for m in "${mutants[@]}"; do
	[ -n "$(header Description "$m")" ] || die "${m#"$TOP"/}: no 'Description:' line"
	catch=$(header Catch "$m")
	[ -n "$catch" ] || die "${m#"$TOP"/}: no 'Catch:' line"
	for s in $catch; do
		case $s in kunit-uml|kunit-x86_64|kunit-i386|kunit-norseq|kunit-arm64|selftest|selftest:?*|smallcache|modcheck) ;;
		*) die "${m#"$TOP"/}: unknown step '$s' (kunit-uml kunit-x86_64 kunit-i386 kunit-norseq kunit-arm64 selftest[:WHAT] smallcache modcheck)" ;;
		esac
		[[ " ${steps[*]-} " == *" $s "* ]] || steps+=("$s")
	done
done

# The worktree: base + patches/series, re-made when patches/ changed.
mut=$BUILD/mutate
"$TOP/scripts/tree/tree.sh" >"$LOGS/tree.log" 2>&1 || { cat "$LOGS/tree.log"; die "make tree failed"; }
patches=$(series_patches "$PATCHES") || exit
# shellcheck disable=SC2086 # one path a word
stamp=$(cat "$PATCHES/series" $patches | git hash-object --stdin)
[ ! -e "$mut/.git" ] || git -C "$mut" reset -q --hard	# a mutant left behind by a killed run
if [ ! -e "$mut/.git" ] || [ "$(cat "$BUILD/mutate.stamp" 2>/dev/null)" != "$stamp" ]; then
	say "mutate: applying ${PATCHES#"$TOP"/}/series in ${mut#"$TOP"/}"
	worktree_at_base "$mut"
	"$TOP/scripts/tree/apply.sh" "$mut" >"$LOGS/mutate-apply.log" 2>&1 ||
		{ cat "$LOGS/mutate-apply.log"; die "${PATCHES#"$TOP"/}/series does not apply"; }
	echo "$stamp" >"$BUILD/mutate.stamp"
fi

# run_step STEP: run one step on the worktree, quietly, and return its
# exit status; its log in $steplog. A selftest:TARGET step boots the base
# once, in the baseline: a mutant that leaves tools/testing alone changes
# neither the base kernel nor the tests, so the base's outcomes are those
# of the baseline.
rm -f "$LOGS"/mutate-base-*.tap
mutating=''
run_step() {
	steplog=$LOGS/mutate-${1//[:\/]/-}.log
	: >"${steplog%.log}.jsonl"
	export RESULTS=${steplog%.log}.jsonl STEP=$1
	local what=${1#selftest:}
	local base_tap=$LOGS/mutate-base-$what.tap
	case $1 in
	kunit-*)	LINUX=$mut "$TOP/scripts/check/kunit.sh" "${1#kunit-}" ;;
	selftest)	LINUX=$mut "$TOP/scripts/tree/build.sh" test patched &&
			LINUX=$mut "$TOP/scripts/check/selftest.sh" --only series patched ;;
	selftest:*)	if LINUX=$mut ksft_target "$what" && [ -s "$base_tap" ] &&
			   [ -z "$(git -C "$mut" diff --name-only -- tools/testing/)" ]; then
				LINUX=$mut "$TOP/scripts/tree/build.sh" test patched &&
				LINUX=$mut "$TOP/scripts/check/selftest.sh" --only "$what" --base-tap "$base_tap" patched
			elif LINUX=$mut ksft_target "$what"; then
				LINUX=$mut "$TOP/scripts/tree/build.sh" test base &&
				LINUX=$mut "$TOP/scripts/tree/build.sh" test patched &&
				LINUX=$mut "$TOP/scripts/check/selftest.sh" --only "$what" base patched &&
				{ [ -n "$mutating" ] || cp "$LOGS/ksft-base.tap" "$base_tap"; }
			else
				LINUX=$mut "$TOP/scripts/tree/build.sh" test patched &&
				LINUX=$mut "$TOP/scripts/check/selftest.sh" --only "$what" patched
			fi ;;
	smallcache)	LINUX=$mut "$TOP/scripts/check/smallcache.sh" ;;
	modcheck)	LINUX=$mut "$TOP/scripts/tree/build.sh" test patched &&
			LINUX=$mut "$TOP/scripts/check/modcheck.sh" patched ;;
	esac >"$steplog" 2>&1
}
# verdict STEP STATUS: what the results of a step (run_step) say of a
# mutant: empty when it passed, the step when it caught it, "(...)" when
# it did not. The exit status only has to agree.
verdict() {
	local v
	v=$(python3 "$TOP/scripts/check/results.py" verdict "$RESULTS") || v="unreadable results"
	case $v/$2 in
	pass/0)		;;
	fail/"$EXIT_FAIL") echo "$1" ;;
	nobuild/*)	echo "(build failed in $1)" ;;
	*)		echo "(error in $1: results say $v, status $2)" ;;
	esac
}
elapsed() { local s=$(($(date +%s) - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
# keep_logs MUTANT: the last step's log ($steplog, mutate-STEP.log), its
# results, and the TAP of its patched guest, under the mutant's name, before the next step or
# mutant overwrites them; the log's copy in $kept.
keep_logs() {
	kept=$LOGS/mutant-$1-${steplog##*/mutate-}
	cp "$steplog" "$kept"
	cp "${steplog%.log}.jsonl" "${kept%.log}.jsonl"
	[ ! -f "$LOGS/ksft-patched.tap" ] || mv "$LOGS/ksft-patched.tap" "${kept%.log}.tap"
}

say "mutate: baseline, unmutated: ${steps[*]} (cold: kernels build, ~15 min each)"
for s in "${steps[@]}"; do
	t0=$(date +%s)
	run_step "$s"
	rc=$?
	if [ -n "$(verdict "$s" "$rc")" ]; then
		tail -15 "$steplog" | sed 's/^/  | /'
		die "baseline step $s fails on the unmutated tree (status $rc, log: ${steplog#"$TOP"/}): no mutant can be judged"
	fi
	say "mutate: baseline $s passed ($(elapsed "$t0"))"
done

caught=0 missed=0 rows=() mutating=1
i=0
for m in "${mutants[@]}"; do
	i=$((i + 1))
	name=$(basename "$m" .patch)
	t0=$(date +%s)
	by=''
	if ! git -C "$mut" apply "$m" 2>"$LOGS/mutate-apply.log"; then
		by='(does not apply)'
		sed 's/^/  | /' "$LOGS/mutate-apply.log"
	else
		for s in $(header Catch "$m"); do
			say "mutate: [$i/${#mutants[@]}] $name: $s"
			rm -f "$LOGS/ksft-patched.tap"
			run_step "$s"
			by=$(verdict "$s" $?)
			keep_logs "$name"
			[ -z "$by" ] || break
		done
		git -C "$mut" reset -q --hard
	fi
	case $by in
	''|\(*)	missed=$((missed + 1)); say "mutate: [$i/${#mutants[@]}] $name: MISSED ${by:-(every step passed)}" ;;
	*)	caught=$((caught + 1)); say "mutate: [$i/${#mutants[@]}] $name: caught by $by (log: ${kept#"$TOP"/})" ;;
	esac
	rows+=("$name|$(header Description "$m")|${by:-MISSED}|$(elapsed "$t0")")
done

echo
echo "| mutant | description | caught by | time |"
echo "|---|---|---|---|"
for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
echo
echo "$caught caught, $missed missed"
[ "$missed" -eq 0 ]
