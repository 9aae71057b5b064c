#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: fork/exec/exit and scheduler benchmarks of the kernels of the
# line's registry (patches/LINE/kernels) side by side. Guests run under TCG with -icount
# (deterministic guest time), in cells N/M of N online vCPUs and M
# possible ones (possible_cpus=M, patches/bench-only/possible.patch); in
# each cell, each kernel boots once and runs the workloads in rounds.
# Then the report (scripts/bench/report.py): bench.md, headline.md and
# *.svg. The full sweep (the default cells, kernels, iterations and
# rounds) writes them to the line's results folder (results/LINE/, ./lines)
# and, for the default line, the headline into README.md: the published
# figures; any other run writes them to build/LINE/bench/report/ and
# leaves results/ and README.md alone. BENCH_OUT=DIR writes the report to
# DIR instead (BENCH_OUT=results/LINE publishes any run). Folded perf
# stacks go to build/LINE/bench/perf/.
# The cache model: in the cells with the most possible and the most online
# CPUs, each kernel boots once more, under QEMU's cache plugin
# (scripts/bench/qemu-plugin.sh), and runs the plan's cache phases; the report
# gives misses per operation and a modelled time (instructions and misses
# at MODEL_NS's costs).
# What runs where, and how often, is the bench plan's (scripts/bench/plan.py:
# cells, their roles, workloads, phases, memory, the estimate): this script
# asks it for the plan of the run, saves it as build/bench/plan.json beside
# the raw results (the report reads it), stages its command files for
# bench-guest, and builds and boots what it says.
# usage: scripts/bench/bench.sh [--quick] [--resume] [--dry-run] [--cells "N/M ..."]
#                         [--kernels "NAME ..."] [--iters N] [--reps N]
#                         [--cache 0|1] [--model-ns "INSN L2HIT L2MISS"]
#                         [--guests N]
#   --quick    cells 4/4 4/255, 2 rounds
#   --dry-run  print the plan (the boots and each one's guest commands) and
#              exit, before building anything
#   --resume   keep the boots of an interrupted run (build/bench/runs/)
#              that have results, and boot only the others
#   --cache    0: no cache-model boots [1]
#   --model-ns the modelled costs, in ns, of an instruction, of an L1 miss
#              that hits L2, and of an L2 miss ["0.33 5 40": one
#              instruction a cycle at 3 GHz, Sapphire Rapids' 16-cycle L2,
#              an L2 miss served by its L3 or, rarely, by DRAM]
#   --guests   guests booted at once [the host's cores, as many as its
#              free memory holds]
# (make bench QUICK=1 RESUME=1 DRY_RUN=1 CELLS=... KERNELS=... ITERS=... REPS=...
#  CACHE=0|1 MODEL_NS="..." GUESTS=N)
# Environment: BENCH_OUT=DIR (above); BENCH_SERIES=DIR benches the series
# of DIR/series instead of patches/ (see scripts/tree/bench-tree.sh).
set -euo pipefail
. "$(dirname "$0")/../lib/lib.sh"

usage="usage: scripts/bench/bench.sh [--quick] [--resume] [--dry-run] [--cells \"N/M ...\"] [--kernels \"NAME ...\"] [--iters N] [--reps N] [--cache 0|1] [--model-ns \"INSN L2HIT L2MISS\"] [--guests N]"
resume=0 dry_run=0 model_ns="0.33 5 40" guests=''
plan_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--quick)	plan_args+=(--quick); shift ;;
	--resume)	resume=1; shift ;;
	--dry-run)	dry_run=1; shift ;;
	--cells|--kernels|--iters|--reps|--cache)
			plan_args+=("$1" "${2:?$usage}"); shift 2 ;;
	--model-ns)	model_ns=${2:?$usage}; shift 2 ;;
	--guests)	guests=${2:?$usage}; shift 2 ;;
	*)		die "$usage" ;;
	esac
done
# The guests' vCPUs are the cells' business here.
[ -z "${ONLINE:-}" ] || die "ONLINE=$ONLINE: make bench sets the vCPUs of each guest by its cell; use CELLS=\"N/M ...\""

# The plan of the run, validated once (the cells, kernels, ITERS, REPS,
# CACHE): saved beside the raw results, where the report reads it.
work=$BUILD/bench
plan=$work/plan.json
if [ "$dry_run" = 1 ]; then
	plan=$(mktemp)
	trap 'rm -f "$plan"' EXIT
else
	mkdir -p "$work"
fi
# The line and its base are in the plan too (the report's setup says them):
# made again once make tree has recorded the base.
make_plan() {
	bench_plan make --registry "$KERNELS_FILE" --line "$LINE" --line-desc "$(line_field "$LINE" desc)" \
		--base "$(base_info kernel)" --source "$(base_info source)" \
		${plan_args[@]+"${plan_args[@]}"} -o "$plan"
}
make_plan || exit
plan_get() { bench_plan get "$plan" "$1"; }
read -r -a cells <<<"$(plan_get cells)"
read -r -a kernels <<<"$(plan_get kernels)"
read -r -a cache_cells <<<"$(plan_get cache_cells)"
iters=$(plan_get iters) reps=$(plan_get reps)
mapfile -t boot_lines < <(plan_get boots)
boots=${#boot_lines[@]}
if [ "$dry_run" = 1 ]; then
	bench_plan show "$plan"
	exit 0
fi
# Guests at once: by default one per host core, as many as the free
# memory holds with room to spare (the largest guest's RAM plus QEMU's and
# the cache plugin's), and at least one.
if [ -z "$guests" ]; then
	max_mb=$(plan_get host_mib)
	avail_mb=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
	guests=$(( avail_mb / max_mb < $(nproc) ? avail_mb / max_mb : $(nproc) ))
	[ "$guests" -ge 1 ] || guests=1
fi
[[ $guests =~ ^[1-9][0-9]*$ ]] || die "GUESTS=$guests: want a positive number of guests at once"
num='(0*[1-9][0-9]*\.?[0-9]*|0*\.[0-9]*[1-9][0-9]*)'
[[ $model_ns =~ ^$num\ $num\ $num$ ]] ||
	die "MODEL_NS='$model_ns': want three positive costs in ns, \"INSN L2HIT L2MISS\" (default \"0.33 5 40\")"
# Where the report goes: only the full sweep is published.
if [ -n "${BENCH_OUT:-}" ]; then
	outdir=$(realpath -m "$BENCH_OUT")
elif [ "$(plan_get full_sweep)" = 1 ]; then
	outdir=$RESULTS_DIR
else
	outdir=$BUILD/bench/report
fi
need_deps build vm bench

# The expected host time: the plan's estimate of one guest's seconds, over
# the guests at once.
est=$(plan_get estimate_s)
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
make_plan || exit
say "bench: the $LINE line, Linux $(base_info kernel) ($(base_info source))"
for k in "${builds[@]}"; do "$TOP/scripts/tree/build.sh" bench "$k"; done
kperf=$("$TOP/scripts/bench/perf-build.sh")
plugin=''
[ ${#cache_cells[@]} = 0 ] || plugin=$("$TOP/scripts/bench/qemu-plugin.sh")

# The workloads, at the paths the guest runs them from, and the plan's
# command files (/bench/*.run), which bench-guest runs.
stage=$work/stage
rm -rf "$stage" "$work/perf"
[ "$resume" = 1 ] || rm -rf "$work/runs"
mkdir -p "$work/runs" "$stage/opt/perf"
stage_workloads "$stage"
cp "$kperf" "$stage/opt/perf/perf"
bench_plan stage "$plan" "$stage"
raw=$work/raw.txt
: >"$raw"

# guest RUN-DIR KERNEL CELL COMMAND...: one icount guest of bench KERNEL
# (bench_vm in scripts/lib/bench.sh; under the cache plugin when vm_plugin is set).
vm_plugin=()
guest() {
	local dir=$1
	bench_vm "$2" "$3" "$dir" "$stage" ${vm_plugin[@]+"${vm_plugin[@]}"} -- "${@:4}" >"$dir.out" 2>&1 ||
		{ rm -f "$dir/out/results.txt"; cat "$dir.out" >&2; die "bench guest $2 at $3 failed (see ${dir#"$TOP"/})"; }
}

# The plan's boots: cells in turn and the kernels alternating within each,
# then the cache-model boots. Up to $guests guests at once: under icount a
# guest's time counts its instructions, not the host's seconds, so guests
# that share the host's cores measure what they measure alone (each runs
# on one host thread). Every boot runs the workloads $reps times (there is
# no drift in guest time for alternation to cancel, and a boot with many
# possible CPUs is slow on the host). The results are read afterwards, in
# the order of the boots.
model=$(plan_get plugin_args)
i=0 booted=0 failed=0
start=$(date +%s)
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
for b in "${boot_lines[@]}"; do
	IFS=$'\t' read -r run k c plug file what <<<"$b"
	if [ "$plug" = 1 ]; then
		boot "$work/$run" "$k" "$c" "$what" --plugin "$plugin,$model" -- bench-guest "$file"
	else
		boot "$work/$run" "$k" "$c" "$what" -- bench-guest "$file"
	fi
done
# jobs -p, not -rp: a guest that has exited is listed until it is waited for.
while [ -n "$(jobs -p)" ]; do reap; done
vm_plugin=()
[ "$failed" = 0 ] ||
	die "bench: $failed of $booted guest boots failed (above); make bench RESUME=1 with the same variables boots only those again"
l2_period=$(plan_get l2_period) l2_ways=$(plan_get l2_ways)
for b in "${boot_lines[@]}"; do
	IFS=$'\t' read -r run k c plug _ <<<"$b"
	run=$work/$run
	if [ "$plug" = 0 ]; then
		sed "s|^|kernel=$k cell=$c |" "$run/out/results.txt" >>"$raw"
		for p in "$run"/out/perf-*.script; do
			[ -e "$p" ] || continue
			wl=${p##*/perf-} wl=${wl%.script}
			echo "kernel=$k cell=$c name=perf workload=$wl dir=$run/out" >>"$raw"
		done
		continue
	fi
	python3 "$TOP/scripts/bench/cache_marks.py" "$run/plugin.log" "$run/out/results.txt" |
		sed "s|^|kernel=$k cell=$c |" >>"$raw" ||
		die "bench: the cache model's marks of $k at $c do not match its phases (see ${run#"$TOP"/})"
	# The distance between the per-CPU units, and the modelled L2's set
	# period (size / ways) and ways: the report explains the base's misses
	# with them.
	sed -n 's|.*percpu: Embedded .* u\([0-9][0-9]*\).*|kernel='"$k cell=$c"' name=percpu_unit bytes=\1 l2_period='"$l2_period l2_ways=$l2_ways"'|p' \
		"$run/console.log" | head -1 >>"$raw"
done
say "bench: $booted guest boots (of $boots) took $(( ($(date +%s) - start) / 60 )) minutes"

qemu_version=$(qemu-system-x86_64 --version | head -1 | awk '{print $4}')
host_cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
mkdir -p "$outdir"
python3 "$TOP/scripts/bench/report.py" "$raw" "$outdir" --kernels "$KERNELS_FILE" \
	--setup "QEMU $qemu_version, TCG, -icount shift=3,sleep=off, N/M (online/possible) vCPUs in ${cells[*]}, $(plan_get memory); $iters iterations per loop workload; one boot per kernel and cell, $reps rounds in each; host: $host_cpu, $(nproc) cores, $(uname -r)" \
	--short-setup "QEMU TCG, -icount shift=3,sleep=off, ASLR off in the guest, $iters iterations, $reps rounds" \
	--model "QEMU $qemu_version's cache plugin (contrib/plugins/cache.c, with scripts/bench/cache-marker.patch), $(plan_get words); no L3, no coherence between the vCPUs' caches" \
	--model-ns "$model_ns" \
	--folded-dir "$work/perf"
if [ "$outdir" = "$RESULTS_DIR" ] && [ "$LINE" = "$DEFAULT_LINE" ]; then
	readme_splice bench "$outdir/headline.md"
	say "bench: ${outdir#"$TOP"/}/bench.md, headline.md (also in README.md) and *.svg written; folded perf stacks in ${work#"$TOP"/}/perf"
elif [ "$outdir" = "$RESULTS_DIR" ]; then
	say "bench: ${outdir#"$TOP"/}/bench.md, headline.md and *.svg written (README.md shows the default line's, $DEFAULT_LINE); folded perf stacks in ${work#"$TOP"/}/perf"
else
	say "bench: ${outdir#"$TOP"/}/bench.md, headline.md and *.svg written (results/ and README.md left alone); folded perf stacks in ${work#"$TOP"/}/perf"
fi
