#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make mutate: a mutation score of the tests. Each mutants/NN-name.patch is a
# planted bug: a git diff against the tree with patches/series applied,
# after two header lines:
#   Description: <one line>
#   Catch: <steps, in the order to run them>
# with steps among kunit-uml, kunit-x86_64, kunit-i386 and selftest
# (selftest:CATEGORY for one run_vmtests.sh category, selftest:NAME for the
# kselftest_harness tests NAME of the series' mm tests).
# The runner keeps its own worktree, build/mutate (base + patches/series,
# with its build directories kept across runs, so that ccache and kbuild
# rebuild only what a mutant changes). It first runs every step that the
# mutants name on the unmutated tree, which must pass; then, for each
# mutant: apply, run its steps in order until one fails (caught) or all
# pass (missed), revert. Prints a table and "N caught, N missed"; exits
# non-zero when a mutant is missed or does not apply.
# usage: scripts/mutate.sh [PATTERN]   (mutants whose file name contains it)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
need_deps build vm check

pattern=${1:-}
mutants=()
for m in "$TOP"/mutants/*.patch; do
	[ -f "$m" ] || continue
	case $(basename "$m") in *"$pattern"*) mutants+=("$m") ;; esac
done
[ ${#mutants[@]} -gt 0 ] || die "no mutant in mutants/ matches '${pattern}'"

header() { sed -n "s/^$1: *//p;/^diff --git /q" "$2" | head -1; }
steps=()
for m in "${mutants[@]}"; do
	[ -n "$(header Description "$m")" ] || die "${m#"$TOP"/}: no 'Description:' line"
	catch=$(header Catch "$m")
	[ -n "$catch" ] || die "${m#"$TOP"/}: no 'Catch:' line"
	for s in $catch; do
		case $s in kunit-uml|kunit-x86_64|kunit-i386|selftest|selftest:?*) ;;
		*) die "${m#"$TOP"/}: unknown step '$s' (kunit-uml kunit-x86_64 kunit-i386 selftest[:WHAT])" ;;
		esac
		printf '%s\n' ${steps[@]+"${steps[@]}"} | grep -qxF "$s" || steps+=("$s")
	done
done

# The worktree: base + patches/series, re-made when patches/ changed.
mut=$BUILD/mutate
"$TOP/scripts/tree.sh" >"$LOGS/tree.log" 2>&1 || { cat "$LOGS/tree.log"; die "make tree failed"; }
stamp=$(cat "$TOP/patches/series" "$TOP"/patches/0*.patch | git hash-object --stdin)
if [ ! -e "$mut/.git" ]; then
	git -C "$LINUX" worktree add -q --detach "$mut" "$BASE_TAG" || die "cannot add the worktree $mut"
fi
git -C "$mut" reset -q --hard	# a mutant left behind by a killed run
if [ "$(cat "$BUILD/mutate.stamp" 2>/dev/null)" != "$stamp" ]; then
	say "mutate: applying patches/series in ${mut#"$TOP"/}"
	git -C "$mut" checkout -q --detach "$BASE_TAG" || die "cannot reset $mut"
	"$TOP/scripts/apply.sh" "$mut" >"$LOGS/mutate-apply.log" 2>&1 ||
		{ cat "$LOGS/mutate-apply.log"; die "patches/series does not apply"; }
	echo "$stamp" >"$BUILD/mutate.stamp"
fi

# run_step STEP: run one step on the worktree, quietly; its log in $steplog.
run_step() {
	steplog=$LOGS/mutate-${1//[:\/]/-}.log
	case $1 in
	kunit-*)	LINUX=$mut "$TOP/scripts/kunit.sh" "${1#kunit-}" ;;
	selftest)	LINUX=$mut "$TOP/scripts/build.sh" test patched >/dev/null &&
			LINUX=$mut "$TOP/scripts/selftest.sh" --only series patched ;;
	selftest:*)	LINUX=$mut "$TOP/scripts/build.sh" test patched >/dev/null &&
			LINUX=$mut "$TOP/scripts/selftest.sh" --only "${1#selftest:}" patched ;;
	esac >"$steplog" 2>&1
}
elapsed() { local s=$(($(date +%s) - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

say "mutate: baseline, unmutated: ${steps[*]} (cold: kernels build, ~7 min each)"
for s in "${steps[@]}"; do
	t0=$(date +%s)
	if ! run_step "$s"; then
		tail -15 "$steplog" | sed 's/^/  | /'
		die "baseline step $s fails on the unmutated tree (log: ${steplog#"$TOP"/}): no mutant can be judged"
	fi
	say "mutate: baseline $s passed ($(elapsed "$t0"))"
done

caught=0 missed=0 rows=()
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
			if ! run_step "$s"; then
				by=$s
				# A build that breaks catches nothing: the mutant is wrong.
				if grep -q -e 'no test ran' -e 'failed (full log' -e 'building the kselftests failed' "$steplog"; then
					by="(build failed in $s)"
				fi
				break
			fi
		done
		git -C "$mut" reset -q --hard
	fi
	case $by in
	''|\(*)	missed=$((missed + 1)); say "mutate: [$i/${#mutants[@]}] $name: MISSED ${by:-(every step passed)}" ;;
	*)	caught=$((caught + 1)); say "mutate: [$i/${#mutants[@]}] $name: caught by $by" ;;
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
