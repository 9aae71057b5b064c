# SPDX-License-Identifier: GPL-2.0
# The pass/fail tally of a script, kept as data. Sourced by scripts/lib/lib.sh, never run.
# shellcheck shell=bash disable=SC2034 # variables are for the sourcing scripts

# Every check is a JSON line appended to $RESULTS (scripts/check/results.py
# says what they are): {"step": STEP, "check": WHAT, "result": pass|fail|
# skip|error|nobuild[, "log": FILE], "line": LINE, "base": VERSION,
# "source": WHAT}: the line (./lines) and its base as make tree recorded it
# (base_info in scripts/lib/core.sh; "unknown" before the tree is made). RESULTS is exported, so that the
# scripts that a script runs add theirs to the same file: make check
# gives each run build/LINE/logs/results.jsonl, make mutate each step a file of
# its own; a script run by hand writes build/LINE/logs/results-SCRIPT.jsonl.
# STEP is make check's step (exported by it), or the script's name.
#   tally pass|fail|skip [WHAT [LOG]]: one check (a failure or a skip is
#                        shown with its name);
#   tally_records FILE:  the records of a parser (scripts/check/ktap.py
#                        records), each shown when it is not a pass;
#   tally_sub COMMAND...: run a sub-step (which records its own checks),
#                        show its output indented, and record a failure
#                        if it exits non-zero having recorded none;
#   tally_end [LABEL]:   print the lines and bases of the records, then
#                        "[LABEL: ]N passed, N failed, N skipped"
#                        for this script's records, computed from them,
#                        and return non-zero ($EXIT_FAIL) on a failure; a
#                        script that recorded nothing fails (python3: the
#                        build group of scripts/setup/deps.sh).
# die and die_build (scripts/lib/core.sh) record an error or a nobuild.
if [ -z "${RESULTS:-}" ]; then
	RESULTS=$LOGS/results-${0##*/}.jsonl
	: >"$RESULTS"
fi
export RESULTS
results_start=$(wc -l <"$RESULTS")

json_str() {	# a JSON string of $1: \ " and control characters escaped
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\t'/\\t}
	s=${s//$'\n'/\\n}
	printf '"%s"' "${s//[$'\001'-$'\037']/ }"
}
# The line and base fields of every record (read again until the base
# is known: make check makes the tree after it starts).
line_fields=''
# shellcheck disable=SC2153 # LINE is scripts/lib/lines.sh's
line_fields() {
	[ -n "$line_fields" ] || [ ! -f "$BASE_INFO" ] || line_fields=$(printf ',"line":%s,"base":%s,"source":%s' \
		"$(json_str "$LINE")" "$(json_str "$(base_info kernel)")" "$(json_str "$(base_info source)")")
	printf '%s' "${line_fields:-$(printf ',"line":%s,"base":"unknown","source":"unknown"' "$(json_str "$LINE")")}"
}
record() {	# record RESULT WHAT [LOG]
	printf '{"step":%s,"check":%s,"result":"%s"%s%s}\n' "$(json_str "${STEP:-${0##*/}}")" \
		"$(json_str "$2")" "$1" "${3:+,\"log\":$(json_str "$3")}" "$(line_fields)" >>"$RESULTS"
}
tally() {
	case $1 in
	pass)	;;
	fail)	echo "  FAIL: ${2:-}" ;;
	skip)	echo "  SKIP: ${2:-}" ;;
	*)	die "tally $1" ;;
	esac
	record "$1" "${2:-}" "${3:-}"
}
record_check() {	# the WHAT of record $1 (its "check" comes before its "result")
	local c=${1#*\"check\":\"}
	echo "${c%%\",\"result\"*}"
}
tally_records() {
	local line r
	while IFS= read -r line; do
		case $line in
		'{"check":'*) ;;
		*) die "tally_records: not a record: $line" ;;
		esac
		r=${line#\{}
		printf '{"step":%s,%s%s}\n' "$(json_str "${STEP:-${0##*/}}")" "${r%\}}" "$(line_fields)" >>"$RESULTS"
		case $line in
		*'"result":"fail"'*) echo "  FAIL: $(record_check "$line")" ;;
		*'"result":"skip"'*) echo "  SKIP: $(record_check "$line")" ;;
		esac
	done <"$1"
}
failures_since() {	# the number of failed checks after line $1 of $RESULTS
	tail -n +"$(($1 + 1))" "$RESULTS" | grep -c -E '"result":"(fail|error|nobuild)"' || true
}
tally_sub() {
	local out rc before
	before=$(wc -l <"$RESULTS")
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/  /'
	[ "$rc" -eq 0 ] || [ "$(failures_since "$before")" -gt 0 ] || tally fail "${*##*/}: exit status $rc"
}
tally_end() {
	local line rc=0
	[ "$(wc -l <"$RESULTS")" -gt "$results_start" ] || tally fail "${1:-${0##*/}}: no check ran"
	line=$(python3 "$TOP/scripts/check/results.py" total "$RESULTS" --from "$results_start") || rc=$?
	[ -n "$line" ] || die "cannot read the results in $RESULTS"
	python3 "$TOP/scripts/check/results.py" bases "$RESULTS" --from "$results_start" || true
	echo "${1:+$1: }$line"
	[ "$rc" -eq 0 ] || return "$EXIT_FAIL"
}
