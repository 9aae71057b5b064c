#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: fork/exec/exit benchmarks of the bench kernels side by side
# (patches/bench-only/kernels: base, patched, ideal, nocid, cache; plus
# lazyoff, the patched kernel booted with lazy_rss_stat=off). Guests run
# under TCG with -icount (deterministic guest time), in cells of N online
# vCPUs and M possible ones (possible_cpus=M, patches/bench-only/possible.patch);
# in each cell, each kernel boots once and runs the workloads in rounds.
# Then the report: results/bench.md, results/headline.md (also put in
# README.md), results/*.svg; folded perf stacks in build/bench/perf/.
# --resume keeps the boots of an interrupted run (build/bench/runs/) that
# have results, and boots only the others.
# usage: scripts/bench.sh [--quick] [--resume]
# Environment: BENCH_CELLS ("N/M ..."), BENCH_KERNELS, BENCH_ITERS and
# BENCH_REPS override the sweep; BENCH_OUT writes elsewhere than results/
# and leaves README.md alone (for trying the pipeline out); BENCH_SERIES=DIR
# benches a series other than patches/ (see scripts/bench-tree.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_deps build vm bench

quick=0 resume=0
for a in "$@"; do
	case $a in
	--quick) quick=1 ;;
	--resume) resume=1 ;;
	*) die "usage: scripts/bench.sh [--quick] [--resume]" ;;
	esac
done
# Cells: online/possible vCPUs. The possible-CPU sweep at 4 online, then
# more online CPUs.
if [ "$quick" = 1 ]; then
	default_cells="4/4 4/255" default_reps=2
else
	default_cells="4/4 4/64 4/128 4/255 8/8 32/32 64/64" default_reps=3
fi
read -r -a cells <<<"${BENCH_CELLS:-$default_cells}"
all_kernels="base patched lazyoff ideal nocid cache"
read -r -a kernels <<<"${BENCH_KERNELS:-$all_kernels}"
iters=${BENCH_ITERS:-500}
reps=${BENCH_REPS:-$default_reps}
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
# are online; the rss_stat upgrade count in the first cell; a perf profile
# of the bash loop where the most CPUs are possible. No profile of the
# threaded exit: sampling every online vCPU (the mm may be freed on any)
# at 64 vCPUs took more than 20 minutes of host time per boot, and what
# the exit's sums cost under icount is their instruction count, which the
# threxit times measure directly.
loop_cell=$(printf '%s\n' "${cells[@]}" | sort -t/ -k2,2n -k1,1nr | tail -1)
workloads() {
	local w="idle shloop exec exit sh thread threxit"
	[ "${1%/*}" != "${1#*/}" ] || w="$w pf_threads pf_procs execrate"
	[ "$1" != "${cells[0]}" ] || w="$w upgrades"
	[ "$1" != "$loop_cell" ] || w="$w perf:shloop"
	echo "$w"
}

# Expected time, from this project's runs on its 2-core host (busy with
# kernel builds too): a guest boots in 5 s, then runs (1.3 + 0.03 N) times
# slower than guest time with N online vCPUs (QEMU goes round-robin over
# them at every exit). Guest time: 3 s to boot; per round 18 s per 1000
# iterations of the loops plus 0.1 s per online CPU (threxit), and for the
# per-CPU workloads 2 s plus 0.3 s per online CPU; 20 s per perf profile.
est=0
for c in "${cells[@]}"; do
	n=${c%/*} m=${c#*/}
	guest=$((3 + reps * (18 * iters / 1000 + n / 10)))
	[ "$n" != "$m" ] || guest=$((guest + reps * (2 + n * 3 / 10)))
	[ "$c" != "$loop_cell" ] || guest=$((guest + 20))
	est=$((est + ${#kernels[@]} * (5 + guest * (130 + 3 * n) / 100)))
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
rm -rf "$stage" "$work/perf"
[ "$resume" = 1 ] || rm -rf "$work/runs"
mkdir -p "$stage/bin" "$stage/usr/local/bin" "$work/runs"
gcc -O2 -Wall -static -pthread -o "$stage/usr/local/bin/forkbench" "$TOP/tools/bench/forkbench.c"
gcc -O2 -Wall -static -o "$stage/bin/true" "$TOP/tools/bench/true.c"
cp "$TOP/tools/bench/bench-guest" "$stage/usr/local/bin/"
raw=$work/raw.txt
: >"$raw"

# guest RUN-NAME KERNEL CELL COMMAND...: one icount guest of bench KERNEL.
guest() {
	local name=$1 smp=${3%/*} possible=${3#*/}
	# The possible CPUs that are not online are not present either, as
	# hot-pluggable vCPUs: QEMU then emulates only the online ones. (With
	# scripts/vm --maxcpus, QEMU emulates all of them, present and
	# offline: same guest times, ten times the host time at 255.) One
	# virtio-blk queue: the default is one per possible CPU, which takes
	# seconds of guest time to set up at 255.
	local append="possible_cpus=$possible virtio_blk.num_request_queues=1"
	append="$append rcupdate.rcu_cpu_stall_suppress=1"
	[ "$2" != lazyoff ] || append="$append lazy_rss_stat=off"
	"$TOP/scripts/vm" --kernel "${image[$(tree_of "$2")]}" --smp "$smp" \
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
i=0 booted=0
start=$(date +%s)
perf_args=()
for c in "${cells[@]}"; do
	read -r -a w <<<"$(workloads "$c")"
	for k in "${kernels[@]}"; do
		i=$((i + 1))
		run=runs/$k-${c/\//of}
		if [ "$resume" = 1 ] && [ -s "$work/$run/out/results.txt" ]; then
			say "bench: boot $i/$boots: $k, $c vCPUs: kept from the interrupted run"
		else
			say "bench: boot $i/$boots: $k, $c vCPUs (online/possible): ${w[*]}"
			guest "$run" "$k" "$c" bench-guest "$iters" "$reps" "${w[@]}"
			booted=$((booted + 1))
		fi
		sed "s|^|kernel=$k smp=${c%/*} possible=${c#*/} |" "$work/$run/out/results.txt" >>"$raw"
		for p in "$work/$run"/out/perf-*.script; do
			[ -e "$p" ] || continue
			wl=${p##*/perf-} wl=${wl%.script}
			perf_args+=(--perf "$wl:$k:${c%/*}:${c#*/}=$work/$run/out")
		done
	done
done
say "bench: $booted guest boots (of $boots) took $(( ($(date +%s) - start) / 60 )) minutes"

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
