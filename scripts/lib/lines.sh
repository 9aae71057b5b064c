# SPDX-License-Identifier: GPL-2.0
# The lines: the registry ./lines (a base kernel and its series each), the line this run works on, its folders and its base. Sourced by scripts/lib/core.sh, never run.
# shellcheck shell=bash disable=SC2034 # variables are for the sourcing scripts

# The registry ./lines, one line each, NAME PACKAGE ARCHIVES SERIES
# RESULTS DESCRIPTION separated by tabs (see its header). The Makefile
# reads its NAMEs too, to check LINE= before any work.
LINES_FILE=$TOP/lines
line_names() {	# every NAME, in the registry's order, one a line
	awk -F'\t+' '!/^#/ && NF >= 6 { print $1 }' "$LINES_FILE"
}
line_field() {	# line_field NAME package|archives|series|results|desc
	local n
	case $2 in package) n=2 ;; archives) n=3 ;; series) n=4 ;; results) n=5 ;; desc) n=6 ;;
	*) die "line_field: no field $2" ;; esac
	awk -F'\t+' -v l="$1" -v n="$n" '!/^#/ && NF >= 6 && $1 == l { print $n; found = 1; exit }
		END { exit !found }' "$LINES_FILE" ||
		die "unknown line '$1' (the lines of ${LINES_FILE#"$TOP"/}: $(line_names | paste -sd' '))"
}
# line_takes NAME VERSION: a kernel of VERSION is of line NAME (NAME or NAME.*).
line_takes() { case $2 in "$1"|"$1".*) return 0 ;; *) return 1 ;; esac; }

# The line of this run: LINE= (make LINE=NAME exports it), by default the
# first of the registry. Exported, so that the scripts a script runs work
# on the same line.
DEFAULT_LINE=$(line_names | head -1)
LINE=${LINE:-$DEFAULT_LINE}
line_field "$LINE" package >/dev/null || exit
export LINE
# Its folders: the series (patches, series, cover letter, bench-only/,
# the registry of kernels), the published results, the config fragments
# that override or add to configs/*.config, and the mutants.
PATCHES=$TOP/$(line_field "$LINE" series)
RESULTS_DIR=$TOP/$(line_field "$LINE" results)
LINE_CONFIGS=$TOP/configs/$LINE
MUTANTS_DIR=$TOP/mutants/$LINE
