#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: fork/exec benchmarks of the base kernel, the patched kernel
# and the patched kernel booted with lazy_rss_stat=off, side by side in
# one run, in icount guests (deterministic guest time), alternating the
# kernels in every round. Writes results/bench.md and results/*.svg.
# usage: scripts/bench.sh [--quick]
# Environment: BENCH_SMP, BENCH_ITERS, BENCH_REPS, BENCH_IDLE override the
# sweep; BENCH_VARIANT=test runs on the debug test kernels and BENCH_OUT
# writes elsewhere than results/ (a smoke test of the pipeline, not a
# benchmark).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

quick=0
[ "${1:-}" = --quick ] && quick=1
if [ "$quick" = 1 ]; then
	read -r -a smps <<<"${BENCH_SMP:-1 8}"
	iters=${BENCH_ITERS:-1000}
else
	read -r -a smps <<<"${BENCH_SMP:-1 8 32 64}"
	iters=${BENCH_ITERS:-2000}
fi
reps=${BENCH_REPS:-3}
for v in "${smps[@]}" "$iters" "$reps"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "BENCH_SMP/BENCH_ITERS/BENCH_REPS: '$v' is not a positive number"
done
idle=${BENCH_IDLE:-1000}
variant=${BENCH_VARIANT:-bench}
outdir=${BENCH_OUT:-$TOP/results}
case $variant in bench|test) ;; *) die "BENCH_VARIANT=$variant: want bench or test" ;; esac
kernels=(base patched lazyoff)
[ -d "$BUILD/ideal" ] && kernels+=(ideal)
runs=$(( ${#smps[@]} * reps * ${#kernels[@]} ))
say "bench: ${kernels[*]} x -smp ${smps[*]} x $reps rounds = $runs guest runs of $iters iterations"
say "bench: expect about $((runs * iters / 1000 + 25)) minutes once the kernels are built (cold builds: +25 min)"

"$TOP/scripts/tree.sh" >/dev/null
for t in base patched; do "$TOP/scripts/build.sh" "$variant" "$t" >/dev/null; done
[ -d "$BUILD/ideal" ] && "$TOP/scripts/build.sh" "$variant" ideal >/dev/null

work=$BUILD/bench
stage=$work/stage
bench_stage "$stage"

raw=$work/raw.txt
: >"$raw"
i=0
for smp in "${smps[@]}"; do
	for rep in $(seq "$reps"); do
		for k in "${kernels[@]}"; do
			i=$((i + 1))
			case $k in
			lazyoff) image=patched append=lazy_rss_stat=off ;;
			*) image=$k append='' ;;
			esac
			[ "$variant" = bench ] && image=bench-$image
			say "bench: run $i/$runs: $k, -smp $smp, round $rep"
			log=$work/runs/$k-smp$smp-$rep
			"$TOP/scripts/vm" --kernel "$image" --smp "$smp" --icount --mem 4G \
				--append "rcupdate.rcu_cpu_stall_suppress=1 $append" \
				--timeout 3600 --log "$log" --dir "$stage:/" \
				--add /bin/bash --add /usr/bin/numactl \
				-- bench-guest "$iters" "$idle" >"$log.out" 2>&1 ||
				{ cat "$log.out" >&2; die "bench run $k -smp $smp failed (see $log)"; }
			sed "s/^/kernel=$k smp=$smp rep=$rep /" "$log/out/results.txt" >>"$raw"
		done
	done
done

mkdir -p "$outdir"
python3 "$TOP/tools/bench/report.py" "$raw" "$outdir" \
	--setup "kernels: $variant variant; QEMU $(qemu-system-x86_64 --version | head -1 | awk '{print $4}') TCG, -icount shift=3,sleep=off, -m 4G; workloads pinned with numactl -C 0; $iters iterations per run; $reps rounds per kernel, kernels alternating; host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores" \
	--kernel-version "$(make -s -C "$LINUX" kernelversion)"
say "bench: ${outdir#"$TOP"/}/bench.md and ${outdir#"$TOP"/}/*.svg written"
