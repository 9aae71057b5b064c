#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: fork/exec/exit and scheduler benchmarks of the kernels of the
# registry ./kernels side by side. Guests run under TCG with -icount
# (deterministic guest time), in cells N/M of N online vCPUs and M
# possible ones (possible_cpus=M, patches/bench-only/possible.patch); in
# each cell, each kernel boots once and runs the workloads in rounds.
# Then the report (scripts/bench/report.py): bench.md, headline.md and
# *.svg. The full sweep (the default cells, kernels, iterations and
# rounds) writes them to results/ and the headline into README.md, the
# published figures; any other run writes them to build/bench/report/
# and leaves results/ and README.md alone. BENCH_OUT=DIR writes the
# report to DIR instead (BENCH_OUT=results publishes any run). Folded
# perf stacks go to build/bench/perf/.
# The cache model: in the wide and big cells (below), each kernel boots
# once more, under QEMU's cache plugin (scripts/bench/qemu-plugin.sh), and runs
# the cache phases of bench-guest; the report gives misses per operation
# and a modelled time (instructions and misses at MODEL_NS's costs).
# usage: scripts/bench/bench.sh [--quick] [--resume] [--cells "N/M ..."]
#                         [--kernels "NAME ..."] [--iters N] [--reps N]
#                         [--cache 0|1] [--model-ns "INSN L2HIT L2MISS"]
#                         [--guests N]
#   --quick    cells 4/4 4/255, 2 rounds
#   --resume   keep the boots of an interrupted run (build/bench/runs/)
#              that have results, and boot only the others
#   --cache    0: no cache-model boots [1]
#   --model-ns the modelled costs, in ns, of an instruction, of an L1 miss
#              that hits L2, and of an L2 miss ["0.33 5 40": one
#              instruction a cycle at 3 GHz, Sapphire Rapids' 16-cycle L2,
#              an L2 miss served by its L3 or, rarely, by DRAM]
#   --guests   guests booted at once [the host's cores, as many as its
#              free memory holds]
# (make bench QUICK=1 RESUME=1 CELLS=... KERNELS=... ITERS=... REPS=...
#  CACHE=0|1 MODEL_NS="..." GUESTS=N)
# Environment: BENCH_OUT=DIR (above); BENCH_SERIES=DIR benches the series
# of DIR/series instead of patches/ (see scripts/tree/bench-tree.sh).
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"

usage="usage: scripts/bench/bench.sh [--quick] [--resume] [--cells \"N/M ...\"] [--kernels \"NAME ...\"] [--iters N] [--reps N] [--cache 0|1] [--model-ns \"INSN L2HIT L2MISS\"] [--guests N]"
full_cells="4/4 4/64 4/128 4/255 8/8 32/32 64/64" full_reps=3 default_iters=500
all_kernels=$(kernel_names | paste -sd' ')
quick=0 resume=0 cells_arg='' kernels_arg='' iters_arg='' reps_arg='' cache=1 model_ns="0.33 5 40" guests=''
while [ $# -gt 0 ]; do
	case $1 in
	--quick)	quick=1; shift ;;
	--resume)	resume=1; shift ;;
	--cells)	cells_arg=${2:?$usage}; shift 2 ;;
	--kernels)	kernels_arg=${2:?$usage}; shift 2 ;;
	--iters)	iters_arg=${2:?$usage}; shift 2 ;;
	--reps)		reps_arg=${2:?$usage}; shift 2 ;;
	--cache)	cache=${2:?$usage}; shift 2 ;;
	--model-ns)	model_ns=${2:?$usage}; shift 2 ;;
	--guests)	guests=${2:?$usage}; shift 2 ;;
	*)		die "$usage" ;;
	esac
done
# The guests' vCPUs are the cells' business here.
[ -z "${ONLINE:-}" ] || die "ONLINE=$ONLINE: make bench sets the vCPUs of each guest by its cell; use CELLS=\"N/M ...\""

# The sweep, validated once: each cell parsed here into online[] and
# possible[], and named N/M everywhere else (run directories, raw lines).
if [ "$quick" = 1 ]; then default_cells="4/4 4/255" default_reps=2
else default_cells=$full_cells default_reps=$full_reps; fi
read -r -a cells <<<"${cells_arg:-$default_cells}"
read -r -a kernels <<<"${kernels_arg:-$all_kernels}"
iters=${iters_arg:-$default_iters}
reps=${reps_arg:-$default_reps}
[ ${#cells[@]} -gt 0 ] || die "CELLS: no cell"
[ ${#kernels[@]} -gt 0 ] || die "KERNELS: no kernel"
declare -A online possible
for c in "${cells[@]}"; do
	cell_ok "$c" || die "CELLS: '$c' is not ONLINE/POSSIBLE vCPUs with 1 <= ONLINE <= POSSIBLE <= 255"
	[ -z "${online[$c]:-}" ] || die "CELLS: '$c' given twice"
	online[$c]=${c%%/*} possible[$c]=${c#*/}
done
declare -A seen
for k in "${kernels[@]}"; do
	[[ " $all_kernels " == *" $k "* ]] || die "KERNELS: '$k' is not one of: $all_kernels (./kernels)"
	[ -z "${seen[$k]:-}" ] || die "KERNELS: '$k' given twice"
	seen[$k]=1
done
for v in "$iters" "$reps"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "ITERS/REPS: '$v' is not a positive number"
done
# Guests at once: by default one per host core, as many as the free
# memory holds with room to spare (the largest guest's RAM plus 512 MiB
# for QEMU and the cache plugin), and at least one.
max_mb=0
for c in "${cells[@]}"; do
	mb=$((1024 + online[$c] * 64 + 512))
	[ "$mb" -le "$max_mb" ] || max_mb=$mb
done
if [ -z "$guests" ]; then
	avail_mb=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
	guests=$(( avail_mb / max_mb < $(nproc) ? avail_mb / max_mb : $(nproc) ))
	[ "$guests" -ge 1 ] || guests=1
fi
[[ $guests =~ ^[1-9][0-9]*$ ]] || die "GUESTS=$guests: want a positive number of guests at once"
case $cache in 0|1) ;; *) die "CACHE=$cache: want 0 or 1" ;; esac
num='(0*[1-9][0-9]*\.?[0-9]*|0*\.[0-9]*[1-9][0-9]*)'
[[ $model_ns =~ ^$num\ $num\ $num$ ]] ||
	die "MODEL_NS='$model_ns': want three positive costs in ns, \"INSN L2HIT L2MISS\" (default \"0.33 5 40\")"
# Where the report goes: only the full sweep is published.
if [ -n "${BENCH_OUT:-}" ]; then
	outdir=$(realpath -m "$BENCH_OUT")
elif [ "${cells[*]}" = "$full_cells" ] && [ "${kernels[*]}" = "$all_kernels" ] &&
     [ "$iters" = "$default_iters" ] && [ "$reps" = "$full_reps" ] && [ "$cache" = 1 ]; then
	outdir=$TOP/results
else
	outdir=$BUILD/bench/report
fi
need_deps build vm bench

# The roles of the cells, chosen here once (the report reads them from the
# raw results): wide, the most possible CPUs (the fewest online among
# those); narrow, as many online as wide with the fewest possible; big,
# the most online CPUs. The first cell counts the rss_stat upgrades.
wide=$(printf '%s\n' "${cells[@]}" | sort -t/ -k2,2n -k1,1nr | tail -1)
narrow=$(printf '%s\n' "${cells[@]}" | awk -F/ -v n="${online[$wide]}" '$1 == n' | sort -t/ -k2,2n | head -1)
big=$(printf '%s\n' "${cells[@]}" | sort -t/ -k1,1n -k2,2n | tail -1)
# The cache model's cells: wide and big (4/255 and 64/64 in the sweep).
cache_cells=()
[ "$cache" = 0 ] || mapfile -t cache_cells < <(printf '%s\n' "$wide" "$big" | awk '!seen[$0]++')

# What runs in a cell: the idle-process Percpu growth and the loops
# everywhere; the per-CPU workloads and perf bench sched where all
# possible CPUs are online; the rss_stat upgrade count in the first cell;
# a perf profile of the bash loop in the wide cell. No profile of the
# threaded exit: sampling every online vCPU (the mm may be freed on any)
# at 64 vCPUs took more than 20 minutes of host time per boot, and what
# the exit's sums cost under icount is their instruction count, which the
# threxit times measure directly.
workloads() {
	local w=$BENCH_LOOPS
	[ "${online[$1]}" != "${possible[$1]}" ] || w="$w pf_threads pf_procs execrate pipe messaging"
	[ "$1" != "${cells[0]}" ] || w="$w upgrades"
	[ "$1" != "$wide" ] || w="$w perf:shloop"
	echo "$w"
}

# Expected host seconds of one boot in cell $1, from this project's full
# sweep on its idle 2-core host, two guests at once (kernel builds on the
# same cores make it about twice as long): a guest boots in BOOT_S, then
# runs (SLOW_BASE + SLOW_PER_CPU * N) / 100 times as long as guest time
# with N online vCPUs (QEMU goes round-robin over them at every exit).
# Guest seconds: GUEST_BOOT_S to boot; per round, LOOP_S per 1000
# iterations of the loops, and THREXIT_S_PER_10_CPUS; where all CPUs are
# online, PERCPU_S plus PERCPU_S_PER_10_CPUS for the per-CPU workloads,
# and SCHED_S per 1000 iterations for perf bench sched; PERF_S per perf
# profile.
BOOT_S=5 SLOW_BASE=75 SLOW_PER_CPU=1 GUEST_BOOT_S=3 LOOP_S=18 THREXIT_S_PER_10_CPUS=1
# SCHED_S: perf bench sched pipe and messaging took 1.6 s and 5.8 s of
# guest time at ITERS=500 on the bench kernel at 4/4 (15 s per 1000).
PERCPU_S=2 PERCPU_S_PER_10_CPUS=3 SCHED_S=15 PERF_S=20
# SYSCALL_S: perf bench syscall fork and execve, per 1000 iterations.
# A cache-model boot: CACHE_BOOT_S, then CACHE_S of host time per 1000
# iterations of the four phase workloads, times SLOW_PER_CPU as above.
SYSCALL_S=6 CACHE_BOOT_S=60 CACHE_S=350
boot_estimate() {
	local n=${online[$1]} guest
	guest=$((GUEST_BOOT_S + reps * ((LOOP_S + SYSCALL_S) * iters / 1000 + THREXIT_S_PER_10_CPUS * n / 10)))
	[ "$n" != "${possible[$1]}" ] ||
		guest=$((guest + reps * (PERCPU_S + PERCPU_S_PER_10_CPUS * n / 10 + SCHED_S * iters / 1000)))
	[ "$1" != "$wide" ] || guest=$((guest + PERF_S))
	echo $((BOOT_S + guest * (SLOW_BASE + SLOW_PER_CPU * n) / 100))
}
est=0
for c in "${cells[@]}"; do est=$((est + ${#kernels[@]} * $(boot_estimate "$c"))); done
for c in ${cache_cells[@]+"${cache_cells[@]}"}; do
	est=$((est + ${#kernels[@]} * (CACHE_BOOT_S + CACHE_S * iters / 1000) * (SLOW_BASE + SLOW_PER_CPU * ${online[$c]}) / 100))
done
boots=$(( (${#cells[@]} + ${#cache_cells[@]}) * ${#kernels[@]} ))
# The kernels to build: one per bench tree (per distinct set of patches).
declare -A tree_seen
builds=()
for k in "${kernels[@]}"; do
	t=$(bench_tree "$k")
	[ -n "${tree_seen[$t]:-}" ] || builds+=("$k")
	tree_seen[$t]=1
done
say "bench: ${kernels[*]} x cells (online/possible vCPUs) ${cells[*]}, each boot $reps rounds of $iters iterations, and the cache model in ${cache_cells[*]:-no cell (CACHE=0)}: $boots guest boots; report to ${outdir#"$TOP"/}"
par=$((guests < boots ? guests : boots))
say "bench: expect about $((est / par / 60 + 1)) minutes of guest boots, $par at once, once the ${#builds[@]} kernels are built"

"$TOP/scripts/tree/tree.sh" >/dev/null
for k in "${builds[@]}"; do "$TOP/scripts/tree/build.sh" bench "$k"; done
kperf=$("$TOP/scripts/bench/perf-build.sh")
plugin=''
[ "$cache" = 0 ] || plugin=$("$TOP/scripts/bench/qemu-plugin.sh")

# The workloads, at the paths the guest runs them from.
work=$BUILD/bench
stage=$work/stage
rm -rf "$stage" "$work/perf"
[ "$resume" = 1 ] || rm -rf "$work/runs"
mkdir -p "$work/runs" "$stage/opt/perf"
stage_workloads "$stage"
cp "$kperf" "$stage/opt/perf/perf"
raw=$work/raw.txt
echo "name=roles narrow=$narrow wide=$wide big=$big" >"$raw"

# guest RUN-DIR KERNEL CELL COMMAND...: one icount guest of bench KERNEL
# (bench_vm in lib.sh; under the cache plugin when vm_plugin is set).
vm_plugin=()
guest() {
	local dir=$1
	bench_vm "$2" "$3" "$dir" "$stage" ${vm_plugin[@]+"${vm_plugin[@]}"} -- "${@:4}" >"$dir.out" 2>&1 ||
		{ rm -f "$dir/out/results.txt"; cat "$dir.out" >&2; die "bench guest $2 at $3 failed (see ${dir#"$TOP"/})"; }
}

# Boots, cells in turn and the kernels alternating within each, then the
# cache-model boots. Up to $guests guests at once: under icount a guest's
# time counts its instructions, not the host's seconds, so guests that
# share the host's cores measure what they measure alone (each runs on
# one host thread). Every boot runs the workloads $reps times (there is
# no drift in guest time for alternation to cancel, and a boot with many
# possible CPUs is slow on the host). The results are read afterwards, in
# the order of the boots.
# The cache model's caches, per vCPU, are those of a core of Intel's Xeon
# Sapphire Rapids (4th generation Xeon Scalable): L1D 48 KiB 12-way, L1I
# 32 KiB 8-way, L2 2 MiB 16-way, 64-byte lines, LRU.
l2_bytes=2097152 l2_ways=16
model="dcachesize=49152,dassoc=12,dblksize=64,icachesize=32768,iassoc=8,iblksize=64"
model="$model,l2cachesize=$l2_bytes,l2assoc=$l2_ways,l2blksize=64,evict=lru"
i=0 booted=0 failed=0
start=$(date +%s)
cache_phases_said() {
	local l=$((iters / 5 > 0 ? iters / 5 : 1))
	echo "exec shloop exit thread at $l x 1 3 2 6 iterations, after $((6 * l)) as a warm-up"
}
reap() {	# wait for one guest; count it if it failed (guest() said why)
	wait -n || failed=$((failed + 1))
}
boot() {	# RUN KERNEL CELL WHAT [--plugin SPEC] -- COMMAND...
	local run=$1 k=$2 c=$3 what=$4
	shift 4
	i=$((i + 1))
	if [ "$resume" = 1 ] && [ -s "$run/out/results.txt" ] &&
	   { [ "$1" != --plugin ] || [ -s "$run/plugin.log" ]; }; then
		say "bench: boot $i/$boots: $k, $c vCPUs$what: kept from the interrupted run"
		return
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$guests" ]; do reap; done
	mkdir -p "${run%/*}"
	say "bench: boot $i/$boots: $k, $c vCPUs (online/possible)$what"
	if [ "$1" = --plugin ]; then
		vm_plugin=("$1" "$2")
		shift 2
	else
		vm_plugin=()
	fi
	guest "$run" "$k" "$c" "${@:2}" &
	booted=$((booted + 1))
}
for c in "${cells[@]}"; do
	read -r -a w <<<"$(workloads "$c")"
	for k in "${kernels[@]}"; do
		boot "$work/runs/$c/$k" "$k" "$c" ": ${w[*]}" -- bench-guest "$iters" "$reps" "${w[@]}"
	done
done
for c in ${cache_cells[@]+"${cache_cells[@]}"}; do
	for k in "${kernels[@]}"; do
		boot "$work/runs/cache-$c/$k" "$k" "$c" ", cache model: $(cache_phases_said)" \
			--plugin "$plugin,$model" -- bench-guest "$iters" 1 cache
	done
done
# jobs -p, not -rp: a guest that has exited is listed until it is waited for.
while [ -n "$(jobs -p)" ]; do reap; done
vm_plugin=()
[ "$failed" = 0 ] ||
	die "bench: $failed of $booted guest boots failed (above); make bench RESUME=1 with the same variables boots only those again"
for c in "${cells[@]}"; do
	for k in "${kernels[@]}"; do
		run=$work/runs/$c/$k
		sed "s|^|kernel=$k cell=$c |" "$run/out/results.txt" >>"$raw"
		for p in "$run"/out/perf-*.script; do
			[ -e "$p" ] || continue
			wl=${p##*/perf-} wl=${wl%.script}
			echo "kernel=$k cell=$c name=perf workload=$wl dir=$run/out" >>"$raw"
		done
	done
done
for c in ${cache_cells[@]+"${cache_cells[@]}"}; do
	for k in "${kernels[@]}"; do
		run=$work/runs/cache-$c/$k
		python3 "$TOP/scripts/bench/cache_marks.py" "$run/plugin.log" "$run/out/results.txt" |
			sed "s|^|kernel=$k cell=$c |" >>"$raw" ||
			die "bench: the cache model's marks of $k at $c do not match its phases (see ${run#"$TOP"/})"
		# The distance between the per-CPU units, and the modelled L2's
		# set period (size / ways) and ways: the report explains the
		# base's misses with them.
		sed -n 's|.*percpu: Embedded .* u\([0-9][0-9]*\).*|kernel='"$k cell=$c"' name=percpu_unit bytes=\1 l2_period='"$((l2_bytes / l2_ways)) l2_ways=$l2_ways"'|p' \
			"$run/console.log" | head -1 >>"$raw"
	done
done
say "bench: $booted guest boots (of $boots) took $(( ($(date +%s) - start) / 60 )) minutes"

qemu_version=$(qemu-system-x86_64 --version | head -1 | awk '{print $4}')
host_cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
mkdir -p "$outdir"
python3 "$TOP/scripts/bench/report.py" "$raw" "$outdir" --kernels "$KERNELS_FILE" \
	--setup "QEMU $qemu_version, TCG, -icount shift=3,sleep=off, N/M (online/possible) vCPUs in ${cells[*]}, -m 1 GiB + 64 MiB per online vCPU; $iters iterations per loop workload; one boot per kernel and cell, $reps rounds in each; host: $host_cpu, $(nproc) cores, $(uname -r)" \
	--short-setup "QEMU TCG, -icount shift=3,sleep=off, ASLR off in the guest, $iters iterations, $reps rounds" \
	--kernel-version "$(kernel_version "$LINUX")" \
	--model "QEMU $qemu_version's cache plugin (contrib/plugins/cache.c, with scripts/bench/cache-marker.patch), caches per vCPU of a Sapphire Rapids core: L1D 48 KiB 12-way, L1I 32 KiB 8-way, L2 2 MiB 16-way, 64-byte lines, LRU; no L3, no coherence between the vCPUs' caches" \
	--model-ns "$model_ns" \
	--folded-dir "$work/perf"
if [ "$outdir" = "$TOP/results" ]; then
	readme_splice bench "$outdir/headline.md"
	say "bench: results/bench.md, headline.md (also in README.md) and *.svg written; folded perf stacks in ${work#"$TOP"/}/perf"
else
	say "bench: ${outdir#"$TOP"/}/bench.md, headline.md and *.svg written (results/ and README.md left alone); folded perf stacks in ${work#"$TOP"/}/perf"
fi
