#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: fork/exec benchmarks of four kernels side by side in one run:
# base, patched, patched booted with lazy_rss_stat=off, and the bench-only
# "ideal" reference (scripts/bench/*.patch). Guests run under TCG with
# -icount (deterministic guest time); every round boots each kernel in
# turn. Then perf profiles of the bash loop, and the report:
# results/bench.md, results/headline.md (also put in README.md),
# results/*.svg; folded perf stacks in build/bench/perf/.
# usage: scripts/bench.sh [--quick]
# Environment: BENCH_SMP, BENCH_ITERS, BENCH_REPS, BENCH_IDLE, BENCH_PF_MIB
# override the sweep; BENCH_OUT writes elsewhere than results/ and leaves
# README.md alone (for trying the pipeline out).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

quick=0
case ${1:-} in
--quick) quick=1 ;;
"") ;;
*) die "usage: scripts/bench.sh [--quick]" ;;
esac
if [ "$quick" = 1 ]; then
	default_smp="1 8"
else
	default_smp="1 8 32 64"
fi
read -r -a smps <<<"${BENCH_SMP:-$default_smp}"
iters=${BENCH_ITERS:-1000}
reps=${BENCH_REPS:-3}
idle=${BENCH_IDLE:-1000}
pf_mib=${BENCH_PF_MIB:-128}
for v in "${smps[@]}"; do
	{ [[ $v =~ ^[1-9][0-9]*$ ]] && [ "$v" -le 64 ]; } ||
		die "BENCH_SMP: '$v' is not a vCPU count from 1 to 64"
done
for v in "$iters" "$reps" "$idle" "$pf_mib"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] ||
		die "BENCH_ITERS/BENCH_REPS/BENCH_IDLE/BENCH_PF_MIB: '$v' is not a positive number"
done
outdir=${BENCH_OUT:-$TOP/results}
kernels=(base patched lazyoff ideal)
perf_smp=${smps[-1]}
runs=$(( ${#smps[@]} * reps * ${#kernels[@]} ))

# Expected time, from this project's runs on a 2-core TCG host: a guest
# run takes about 5 s to boot, 15 s per 1000 iterations of the loops and
# 1.75 s per vCPU for page_fault1 at 128 MiB per CPU; a perf run about
# 30 s per 1000 iterations and 1 s per vCPU.
est=0
for smp in "${smps[@]}"; do
	est=$((est + reps * ${#kernels[@]} * (5 + 15 * iters / 1000 + smp * 7 * pf_mib / 512)))
done
est=$((est + 3 * (30 + 30 * iters / 1000 + perf_smp)))
say "bench: ${kernels[*]} x -smp ${smps[*]} x $reps rounds = $runs guest runs of $iters iterations, then 3 perf runs"
say "bench: expect about $((est / 60 + 1)) minutes once the kernels are built (each cold kernel build: about 12 min)"

"$TOP/scripts/tree.sh" >/dev/null
for t in base patched ideal; do "$TOP/scripts/build.sh" bench "$t" >/dev/null; done

work=$BUILD/bench
stage=$work/stage
bench_stage "$stage"
rm -rf "$work/runs" "$work/perf"
mkdir -p "$work/runs" "$work/perf"
raw=$work/raw.txt
: >"$raw"

# guest RUN-NAME KERNEL SMP COMMAND...: one icount guest of bench KERNEL.
guest() {
	local name=$1 smp=$3
	kernel_boot "$2" bench-
	shift 3
	"$TOP/scripts/vm" --kernel "$boot_image" --smp "$smp" --icount --mem "$((1024 + smp * 160))M" \
		--append "rcupdate.rcu_cpu_stall_suppress=1 $boot_append" \
		--timeout 7200 --log "$work/$name" --dir "$stage:/" \
		--add /bin/bash --add /usr/bin/numactl --add /usr/bin/stress-ng --add /usr/bin/perf \
		-- "$@" >"$work/$name.out" 2>&1 ||
		{ cat "$work/$name.out" >&2; die "bench guest $name failed (see ${work#"$TOP"/}/$name)"; }
}

i=0
for smp in "${smps[@]}"; do
	for rep in $(seq "$reps"); do
		for k in "${kernels[@]}"; do
			i=$((i + 1))
			say "bench: run $i/$runs: $k, -smp $smp, round $rep"
			guest "runs/$k-smp$smp-$rep" "$k" "$smp" bench-guest run "$iters" "$idle" "$pf_mib"
			sed "s/^/kernel=$k smp=$smp rep=$rep /" "$work/runs/$k-smp$smp-$rep/out/results.txt" >>"$raw"
		done
	done
done

perf_args=()
for k in base patched ideal; do
	say "bench: perf profile of the bash loop: $k, -smp $perf_smp"
	guest "perf/$k" "$k" "$perf_smp" bench-guest perf "$iters"
	perf_args+=(--perf "$k=$work/perf/$k/out")
done

qemu_version=$(qemu-system-x86_64 --version | head -1 | awk '{print $4}')
host_cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
mkdir -p "$outdir"
python3 "$TOP/tools/bench/report.py" "$raw" "$outdir" \
	--setup "QEMU $qemu_version, TCG, -icount shift=3,sleep=off, -smp ${smps[*]}, -m 1 GiB + 160 MiB per vCPU; $iters iterations per loop workload, $pf_mib MiB per page_fault1 worker, $idle idle processes; $reps rounds per kernel, kernels alternating within each round; host: $host_cpu, $(nproc) cores, $(uname -r)" \
	--short-setup "QEMU TCG, -icount shift=3,sleep=off, $iters iterations, $reps rounds, kernels alternating" \
	--kernel-version "$(make -s -C "$LINUX" kernelversion)" \
	--folded-dir "$work/perf" "${perf_args[@]}"
if [ -z "${BENCH_OUT:-}" ]; then
	python3 - "$TOP/README.md" "$outdir/headline.md" <<'EOF'
import sys
readme, head = sys.argv[1], open(sys.argv[2]).read().strip()
s = open(readme).read()
a, b = "<!-- bench:begin -->", "<!-- bench:end -->"
if a not in s or b not in s:
    sys.exit("README.md has no bench:begin/bench:end markers")
s = s[:s.index(a) + len(a)] + "\n" + head + "\n" + s[s.index(b):]
open(readme, "w").write(s)
EOF
fi
say "bench: ${outdir#"$TOP"/}/bench.md, headline.md and *.svg written; folded perf stacks in ${work#"$TOP"/}/perf"
