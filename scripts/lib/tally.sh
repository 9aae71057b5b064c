# SPDX-License-Identifier: GPL-2.0
# The pass/fail tally of a script, and its closing line. Sourced by scripts/lib/lib.sh, never run.
# shellcheck shell=bash disable=SC2034 # variables are for the sourcing scripts

# The pass/fail tally of a script. tally pass|fail|skip [WHAT]: count one
# check (a failure or a skip is named); tally_add LINE: add the counts of a
# sub-step's "N passed, N failed[, N skipped]" line (a line without them
# counts as one failure); tally_sub COMMAND...: run a sub-step that ends
# with such a line, show its output indented and add its counts (and a
# failure if it exits non-zero with none); tally_end [LABEL]: print the
# closing line "[LABEL: ]N passed, N failed, N skipped" and return
# non-zero ($EXIT_FAIL) on a failure.
passed=0 failed=0 skipped=0
tally() {
	case $1 in
	pass)	passed=$((passed + 1)) ;;
	fail)	failed=$((failed + 1)); echo "  FAIL: ${2:-}" ;;
	skip)	skipped=$((skipped + 1)); echo "  SKIP: ${2:-}" ;;
	*)	die "tally $1" ;;
	esac
}
tally_add() {
	local p f s
	read -r p f s < <(printf '%s\n' "$1" | sed -n 's/.*\b\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed\(, \([0-9][0-9]*\) skipped\)\{0,1\}.*/\1 \2 \4/p')
	passed=$((passed + ${p:-0})) failed=$((failed + ${f:-1})) skipped=$((skipped + ${s:-0}))
}
tally_sub() {	# run a sub-step, show its output indented, add its last line
	local out line rc before=$failed
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed -e '$d' -e 's/^/  /'
	line=$(printf '%s\n' "$out" | tail -1)
	echo "  $line"
	tally_add "$line"
	[ "$rc" -eq 0 ] || [ "$failed" -gt "$before" ] || tally fail "${*##*/}: exit status $rc"
}
tally_end() {
	echo "${1:+$1: }$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ] || return "$EXIT_FAIL"
}
