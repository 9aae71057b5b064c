#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make irqsoff: the longest section with interrupts off, by ftrace's
# irqsoff tracer, while /proc/PID/status of a threaded process (its rss
# counters per-CPU, with deltas on every online CPU) is read READS times:
# base against patched, in each cell N/M (N online of M possible vCPUs),
# under -icount (guest time). The exact sums take each counter's lock with
# interrupts off for a walk over the online CPUs: four walks, one lock at
# a time, on the base; one walk with the four locks held, with the series.
# Kernels: the bench kernels' config plus the tracer (VARIANT irqsoff), in
# the bench trees. Writes OUT/irqsoff.md, and each guest's output
# (its summary line and the tracer's report) to OUT/raw/.
# The kernels are the registry's reference and first candidate (base and
# patched); the default cells, make bench's full sweep's cells with the
# most possible and the most online CPUs (the bench plan's, 4/255 64/64).
# usage: scripts/bench/irqsoff.sh [--cells "N/M ..."] [--reads N] [--out DIR] [--report]
#   defaults: --cells "4/255 64/64" --reads 2000 --out build/irqsoff
#   --report: only the table, from the guests' outputs already in OUT/raw
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"
need_deps build vm bench

usage='usage: scripts/bench/irqsoff.sh [--cells "N/M ..."] [--reads N] [--out DIR] [--report]'
cells=$(bench_plan cells max_possible max_online) reads=2000 out=$BUILD/irqsoff report=0
kernels="$(kernels_of_role reference | head -1) $(kernels_of_role candidate | head -1)"
while [ $# -gt 0 ]; do
	case $1 in
	--cells)	cells=${2:?$usage}; shift 2 ;;
	--reads)	reads=${2:?$usage}; shift 2 ;;
	--out)		out=${2:?$usage}; shift 2 ;;
	--report)	report=1; shift ;;
	*)		die "$usage" ;;
	esac
done
for c in $cells; do cell_ok "$c" || die "--cells: '$c' is not ONLINE/POSSIBLE vCPUs, 1 <= ONLINE <= POSSIBLE <= 255"; done
[[ $reads =~ ^[1-9][0-9]*$ ]] || die "--reads $reads: want a number of reads"

for k in $kernels; do
	[ "$report" = 0 ] || break
	say "irqsoff: building the $k irqsoff kernel (cold: ~7 min)"
	"$TOP/scripts/tree/build.sh" irqsoff "$k" >"$LOGS/irqsoff-build-$k.log" 2>&1 ||
		{ tail -20 "$LOGS/irqsoff-build-$k.log" >&2; die_build "building the $k irqsoff kernel failed"; }
done
stage=$BUILD/irqsoff-stage
if [ "$report" = 0 ]; then
	rm -rf "$stage"
	stage_workloads "$stage"
	cp "$TOP/scripts/guest/irqsoff-guest" "$stage/usr/local/bin/"
fi
mkdir -p "$out/raw"

declare -A line
for c in $cells; do
	for k in $kernels; do
		raw=$out/raw/$k-${c/\//-}.txt
		[ "$report" = 0 ] || { line[$k/$c]=$(grep -m 1 '^latency_us=[0-9]' "$raw") ||
			die "no irqsoff result in ${raw#"$TOP"/}"; continue; }
		say "irqsoff: $k in $c, $reads reads of /proc/PID/status (output: ${raw#"$TOP"/})"
		bench_vm "$k:irqsoff" "$c" "$BUILD/vm/irqsoff-$k" "$stage" -- irqsoff-guest "$reads" >"$raw" 2>&1 ||
			{ tail -20 "$raw" >&2; die "the $k guest in $c failed (console: ${BUILD#"$TOP"/}/vm/irqsoff-$k/console.log)"; }
		line[$k/$c]=$(grep -m 1 '^latency_us=[0-9]' "$raw") ||
			die "no irqsoff result in ${raw#"$TOP"/}"
		say "irqsoff: $k $c: ${line[$k/$c]}"
	done
done

# field LINE NAME: the value of NAME=... in a result line.
field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }
{
	echo "# Longest section with interrupts off while reading /proc/PID/status"
	echo
	echo "From \`scripts/bench/irqsoff.sh --cells \"$cells\" --reads $reads\`, the $LINE" \
		"line, Linux $(base_info kernel) ($(base_info source)): the bench kernels' config with" \
		"CONFIG_IRQSOFF_TRACER, QEMU TCG -icount shift=3,sleep=off (guest µs:" \
		"instructions, not real time), $reads reads of /proc/self/status by" \
		"\`forkbench status\`, whose threads fault pages on every online CPU."
	echo "Only the reader's CPU is traced. Under -icount the vCPUs run in turn on"
	echo "one host thread, and a section lasts the guest time that passes while it"
	echo "is open, the other vCPUs' turns included: at 64 vCPUs a section that"
	echo "spans a turn lasts milliseconds. So the table says which section is the"
	echo "longest on that CPU, and that the counters' sums are shorter; it does not"
	echo "measure the sums' own sections."
	echo "\"in\" is the tracer's stack at the end of the section, locks left out."
	echo
	echo "| cell | kernel | longest, µs | started at | ended at | in |"
	echo "|---|---|---|---|---|---|"
	for c in $cells; do
		for k in $kernels; do
			l=${line[$k/$c]}
			printf '| %s | %s | %s | %s | %s | %s |\n' "$c" "$k" "$(field "$l" latency_us)" \
				"$(field "$l" start)" "$(field "$l" end)" \
				"$(field "$l" stack | tr ',' '\n' | grep -v -e spin_ -e '^_raw' | head -3 | paste -sd' ' -)"
		done
	done
} >"$out/irqsoff.md"
cat "$out/irqsoff.md"
