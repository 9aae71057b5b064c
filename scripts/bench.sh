#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: fork/exec/exit benchmarks of the bench kernels side by side
# (patches/bench-only/kernels: base, patched, ideal, nocid, cache; plus
# lazyoff, the patched kernel booted with lazy_rss_stat=off). Guests run
# under TCG with -icount (deterministic guest time), in cells of N online
# vCPUs and M possible ones; every round boots each kernel in turn. Then
# perf profiles, and the report: results/bench.md, results/headline.md
# (also put in README.md), results/*.svg; folded perf stacks in
# build/bench/perf/.
# usage: scripts/bench.sh [--quick]
# Environment: BENCH_CELLS ("N/M ..."), BENCH_KERNELS, BENCH_ITERS and
# BENCH_REPS override the sweep; BENCH_OUT writes elsewhere than results/
# and leaves README.md alone (for trying the pipeline out); BENCH_SERIES=DIR
# benches a series other than patches/ (see scripts/bench-tree.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

quick=0
case ${1:-} in
--quick) quick=1 ;;
"") ;;
*) die "usage: scripts/bench.sh [--quick]" ;;
esac
# Cells: online/possible vCPUs. The possible-CPU sweep at 4 online, then
# more online CPUs.
if [ "$quick" = 1 ]; then
	default_cells="4/4 4/255 8/8"
else
	default_cells="4/4 4/64 4/128 4/255 8/8 32/32 64/64"
fi
read -r -a cells <<<"${BENCH_CELLS:-$default_cells}"
all_kernels="base patched lazyoff ideal nocid cache"
read -r -a kernels <<<"${BENCH_KERNELS:-$all_kernels}"
iters=${BENCH_ITERS:-1000}
reps=${BENCH_REPS:-3}
for c in "${cells[@]}"; do
	{ [[ $c =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] && [ "${c%/*}" -le "${c#*/}" ] && [ "${c#*/}" -le 255 ]; } ||
		die "BENCH_CELLS: '$c' is not ONLINE/POSSIBLE vCPUs with ONLINE <= POSSIBLE <= 255"
done
for k in "${kernels[@]}"; do
	[[ " $all_kernels " == *" $k "* ]] || die "BENCH_KERNELS: '$k' is not one of: $all_kernels"
done
for v in "$iters" "$reps"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "BENCH_ITERS/BENCH_REPS: '$v' is not a positive number"
done
outdir=${BENCH_OUT:-$TOP/results}

# What runs in a cell of N online vCPUs: the idle-process Percpu growth
# and the loops everywhere; the per-CPU workloads where all possible CPUs
# are online; the rss_stat upgrade count in the first cell. perf profiles:
# of the bash loop where the most CPUs are possible, of the threaded exit
# where the most are online.
loop_cell=$(printf '%s\n' "${cells[@]}" | sort -t/ -k2,2n -k1,1nr | tail -1)
exit_cell=$(printf '%s\n' "${cells[@]}" | sort -t/ -k1,1n -k2,2n | tail -1)
workloads() {
	local w="idle shloop exec exit sh thread threxit"
	[ "${1%/*}" != "${1#*/}" ] || w="$w pf_threads pf_procs execrate"
	[ "$1" != "${cells[0]}" ] || w="$w upgrades"
	[ "$1" != "$loop_cell" ] || w="$w perf:shloop"
	[ "$1" != "$exit_cell" ] || w="$w perf:threxit"
	echo "$w"
}

# Expected time, from this project's runs on a 2-core TCG host: a guest
# boots in 5 s plus 0.25 s per possible vCPU (QEMU runs the offline ones
# round-robin too); a round of the loops takes 30 s per 1000 iterations,
# the per-CPU workloads 1 s per online vCPU; a perf profile 60 s.
est=0
for c in "${cells[@]}"; do
	per_boot=$((5 + ${c#*/} / 4 + reps * 30 * iters / 1000))
	[ "${c%/*}" != "${c#*/}" ] || per_boot=$((per_boot + reps * ${c%/*}))
	[ "$c" != "$loop_cell" ] || per_boot=$((per_boot + 60))
	[ "$c" != "$exit_cell" ] || per_boot=$((per_boot + 60))
	est=$((est + ${#kernels[@]} * per_boot))
done
boots=$(( ${#cells[@]} * ${#kernels[@]} ))
say "bench: ${kernels[*]} x cells (online/possible vCPUs) ${cells[*]} = $boots guest boots, each $reps rounds of $iters iterations"
say "bench: expect about $((est / 60 + 1)) minutes once the kernels are built (each cold kernel build: about 12 min)"

# lazyoff is the patched kernel booted with lazy_rss_stat=off.
tree_of() { echo "${1/#lazyoff/patched}"; }
"$TOP/scripts/tree.sh" >/dev/null
declare -A image
for k in "${kernels[@]}"; do
	t=$(tree_of "$k")
	[ -z "${image[$t]:-}" ] || continue
	"$TOP/scripts/build.sh" bench "bench-$t" | sed '$d'
	image[$t]=$(tree_dir "bench-$t")/.out-bench/arch/x86/boot/bzImage
done

# The workloads, at the paths the guest runs them from.
work=$BUILD/bench
stage=$work/stage
rm -rf "$stage" "$work/runs" "$work/perf"
mkdir -p "$stage/bin" "$stage/usr/local/bin" "$work/runs"
gcc -O2 -Wall -static -pthread -o "$stage/usr/local/bin/forkbench" "$TOP/tools/bench/forkbench.c"
gcc -O2 -Wall -static -o "$stage/bin/true" "$TOP/tools/bench/true.c"
cp "$TOP/tools/bench/bench-guest" "$stage/usr/local/bin/"
raw=$work/raw.txt
: >"$raw"

# guest RUN-NAME KERNEL CELL COMMAND...: one icount guest of bench KERNEL.
guest() {
	local name=$1 smp=${3%/*} possible=${3#*/}
	# One virtio-blk queue: the results disk's default is one per possible
	# CPU, which takes seconds of guest time to set up at 255.
	local append="rcupdate.rcu_cpu_stall_suppress=1 virtio_blk.num_request_queues=1"
	[ "$2" != lazyoff ] || append="$append lazy_rss_stat=off"
	"$TOP/scripts/vm" --kernel "${image[$(tree_of "$2")]}" --smp "$smp" --maxcpus "$possible" \
		--icount --mem "$((1024 + smp * 64))M" --append "$append" \
		--timeout 7200 --log "$work/$name" --dir "$stage:/" \
		--add /bin/bash --add /usr/bin/numactl --add /usr/bin/perf \
		-- "${@:4}" >"$work/$name.out" 2>&1 ||
		{ cat "$work/$name.out" >&2; die "bench guest $name failed (see ${work#"$TOP"/}/$name)"; }
}

# Cells in turn, the kernels alternating within each; every boot runs the
# workloads $reps times (guest time is deterministic under icount: there
# is no drift for alternation to cancel, and a boot with many possible
# CPUs is slow on the host).
i=0
start=$(date +%s)
perf_args=()
for c in "${cells[@]}"; do
	read -r -a w <<<"$(workloads "$c")"
	for k in "${kernels[@]}"; do
		i=$((i + 1))
		run=runs/$k-${c/\//of}
		say "bench: boot $i/$boots: $k, $c vCPUs (online/possible): ${w[*]}"
		guest "$run" "$k" "$c" bench-guest "$iters" "$reps" "${w[@]}"
		sed "s|^|kernel=$k smp=${c%/*} possible=${c#*/} |" "$work/$run/out/results.txt" >>"$raw"
		for p in "$work/$run"/out/perf-*.script; do
			[ -e "$p" ] || continue
			wl=${p##*/perf-} wl=${wl%.script}
			perf_args+=(--perf "$wl:$k:${c%/*}:${c#*/}=$work/$run/out")
		done
	done
done
say "bench: $boots guest boots took $(( ($(date +%s) - start) / 60 )) minutes"

qemu_version=$(qemu-system-x86_64 --version | head -1 | awk '{print $4}')
host_cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
readme=()
[ -n "${BENCH_OUT:-}" ] || readme=(--readme "$TOP/README.md")
mkdir -p "$outdir"
python3 "$TOP/tools/bench/report.py" "$raw" "$outdir" "${readme[@]}" \
	--setup "QEMU $qemu_version, TCG, -icount shift=3,sleep=off, N/M (online/possible) vCPUs in ${cells[*]}, -m 1 GiB + 64 MiB per online vCPU; $iters iterations per loop workload; one boot per kernel and cell, $reps rounds in each; host: $host_cpu, $(nproc) cores, $(uname -r)" \
	--short-setup "QEMU TCG, -icount shift=3,sleep=off, ASLR off in the guest, $iters iterations, $reps rounds" \
	--kernel-version "$(make -s -C "$LINUX" kernelversion)" \
	--folded-dir "$work/perf" "${perf_args[@]}"
say "bench: ${outdir#"$TOP"/}/bench.md, headline.md and *.svg written; folded perf stacks in ${work#"$TOP"/}/perf"
