#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where the guest time of one make bench workload differs between two bench
# kernels, to the instruction. Under -icount a guest's time is its count of
# executed instructions, so the plugin insnprof (scripts/bench/insnprof.c,
# built by scripts/bench/qemu-plugin.sh) counts them per instruction address and
# scripts/bench/insn_profile.py adds them up per kernel function.
#
# Each kernel boots once, in the same cell and with the same guest setup as
# make bench's boots (bench_vm in scripts/lib/bench.sh). It first runs the workloads that
# precede WORKLOAD in make bench's first round (--before, with the bench
# plan's commands; the page allocator's and the slabs' state, which the
# workload's own cost depends on, is then the one the benchmark measures
# in), then WORKLOAD pinned to CPU 0 in one process (forkbench -m) at L and
# 3L iterations (L = ITERS/5, the plan's rule) after a warm-up of L, each
# run between two marks. The cost per operation is the difference of the
# two runs over 2L: the marks' own cost cancels (scripts/bench/plan.py insn).
#
# usage: scripts/bench/insn-profile.sh [--cell N/M] [--iters N] [--before "W..."]
#                                [--out DIR] WORKLOAD KERNEL_A KERNEL_B
#   WORKLOAD  exit, exec, sh or thread (forkbench's modes), or status: a
#             read of /proc/self/status by a process with a thread on
#             every online CPU (the exact sums, with their interrupts-off
#             sections: scripts/bench/irqsoff.sh)
#   KERNEL_*  kernels of the registry ./kernels
#   --cell    online/possible vCPUs [4/255]
#   --iters   make bench's ITERS [500]
#   --before  the workloads run first [those before WORKLOAD in the
#             rounds of every cell of make bench (scripts/bench/plan.py
#             before WORKLOAD): for exit, "idle shloop exec"]
#   --out     where the report goes [build/insn-profile]
# The report, DIR/WORKLOAD-CELL-iITERS-A-B.md (-after-W-W... when --before
# is given), is printed too.
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"

cell=4/255 iters=500 before='' before_set=0 outdir=
usage() { sed -n '/^# usage/,/^# The report/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--cell|--iters|--before|--out) [ $# -ge 2 ] || usage ;;
	esac
	case $1 in
	--cell)		cell=$2; shift 2 ;;
	--iters)	iters=$2; shift 2 ;;
	--before)	before=$2 before_set=1; shift 2 ;;
	--out)		outdir=$2; shift 2 ;;
	-h|--help)	usage ;;
	-*)		echo "scripts/bench/insn-profile.sh: unknown option '$1'" >&2; usage ;;
	*)		break ;;
	esac
done
[ $# = 3 ] || usage
w=$1 a=$2 b=$3
cell_ok "$cell" || die "--cell '$cell' is not ONLINE/POSSIBLE vCPUs with 1 <= ONLINE <= POSSIBLE <= 255"
{ [[ $iters =~ ^[1-9][0-9]*$ ]] && [ "$iters" -ge 5 ]; } || die "--iters '$iters': want a number >= 5"
# The operations per kernel and the guest command of WORKLOAD's runs.
IFS=$'\t' read -r ops run_cmd <<<"$(bench_plan insn --iters "$iters" "$w")" && [ -n "$run_cmd" ] || exit "$EXIT_ERROR"
for k in "$a" "$b"; do
	kernel_field "$k" role >/dev/null	# dies on a kernel the registry lacks
done
[ "$a" != "$b" ] || die "two different kernels, please"
[ "$before_set" = 1 ] || before=$(bench_plan before "$w")
# The commands of --before, as make bench's guests run them (not perf
# bench's: they need the perf that make bench stages).
# shellcheck disable=SC2086 # the workloads are words
before_run=$(bench_plan run-file --iters "$iters" --cell "$cell" $before) || die "--before: see above"
need_deps build vm bench

out=$BUILD/insn-profile
stage=$out/stage
run=$out/$w-${cell/\//-}
rm -rf "$stage" "$run"
mkdir -p "$run"
stage_workloads "$stage"
mkdir -p "$stage/bench"
printf '%s' "$before_run" >"$stage/bench/before.run"
"$TOP/scripts/tree/tree.sh" >/dev/null
for k in "$a" "$b"; do "$TOP/scripts/tree/build.sh" bench "$k"; done
plugin=$("$TOP/scripts/bench/qemu-plugin.sh" insnprof)

for k in "$a" "$b"; do
	say "insn-profile: booting $k at $cell: ${before:-nothing}, then $run_cmd (log: ${run#"$TOP"/}/$k)"
	bench_vm "$k" "$cell" "$run/$k" "$stage" --plugin "$plugin" -- sh -ec "bench-guest /bench/before.run
			$run_cmd" >"$run/$k.out" 2>&1 ||
		{ cat "$run/$k.out" >&2; die "insn-profile: the guest of $k failed (log: ${run#"$TOP"/}/$k)"; }
done
outdir=$(realpath -m "${outdir:-$out}")
mkdir -p "$outdir"
name=$w-${cell/\//-}-i$iters
[ "$before_set" = 0 ] || name=$name-after-$(echo "${before:-nothing}" | xargs | tr ' ' -)
report=$outdir/$name-$a-$b.md
python3 "$TOP/scripts/bench/insn_profile.py" --workload "$w" --ops "$ops" \
	--setup "the $LINE line, Linux $(base_info kernel) ($(base_info source)); QEMU TCG, -icount shift=3,sleep=off, $cell vCPUs (online/possible), ITERS=$iters, before: ${before:-nothing}" \
	"$a" "$run/$a/plugin.log" "$(kernel_tree "$a" bench)/.out-bench/System.map" \
	"$b" "$run/$b/plugin.log" "$(kernel_tree "$b" bench)/.out-bench/System.map" >"$report.tmp" ||
	{ rm -f "$report.tmp"; die "insn-profile: scripts/bench/insn_profile.py failed"; }
mv "$report.tmp" "$report"
cat "$report"
say "insn-profile: report in ${report#"$TOP"/}"
