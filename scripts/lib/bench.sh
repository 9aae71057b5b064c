# SPDX-License-Identifier: GPL-2.0
# make bench's guests: cells, the staged workloads, the -icount guest. Sourced by scripts/lib/lib.sh, never run.
# shellcheck shell=bash disable=SC2034 # variables are for the sourcing scripts

# The bench plan (scripts/bench/plan.py): make bench's facts, which
# scripts/bench/insn-profile.sh and scripts/bench/irqsoff.sh share.
bench_plan() { python3 "$TOP/scripts/bench/plan.py" "$@"; }
# A cell of make bench: ONLINE/POSSIBLE vCPUs, 1 <= ONLINE <= POSSIBLE <= 255.
cell_ok() { bench_plan cell "$1" >/dev/null 2>&1; }
# stage_workloads DIR: the benchmark's programs, at the paths its guests run
# them from (scripts/bench/bench.sh adds perf).
stage_workloads() {
	need_deps build
	mkdir -p "$1/bin" "$1/usr/local/bin"
	gcc -O2 -Wall -static -pthread -o "$1/usr/local/bin/forkbench" "$TOP/scripts/bench/forkbench.c"
	gcc -O2 -Wall -static -o "$1/bin/true" "$TOP/scripts/bench/true.c"
	gcc -O2 -Wall -static -o "$1/usr/local/bin/mark" "$TOP/scripts/bench/mark.c"
	cp "$TOP/scripts/guest/bench-guest" "$1/usr/local/bin/"
}
# bench_vm KERNEL CELL LOGDIR STAGE [scripts/guest/vm options] -- COMMAND...: one
# -icount guest of bench kernel KERNEL in CELL (ONLINE/POSSIBLE), as make
# bench boots them (the memory: the plan's rule), with STAGE copied to its
# root; KERNEL is a registry name (its bench image) or NAME:VARIANT
# (scripts/bench/irqsoff.sh). The possible CPUs that
# are not online are not present either, as hot-pluggable vCPUs: QEMU then
# emulates only the online ones. (With scripts/guest/vm --possible, QEMU emulates
# all of them, present and offline: same guest times, ten times the host
# time at 255.) One virtio-blk queue: the default is one per possible CPU,
# which takes seconds of guest time to set up at 255.
bench_vm() {
	local k=bench-$1 n m mem log=$3 stage=$4
	read -r n m mem <<<"$(bench_plan cell "$2")" && [ -n "$mem" ] || exit "$EXIT_ERROR"
	[[ $1 != *:* ]] || k=$(kernel_image "${1%%:*}" "${1#*:}") || exit
	shift 4
	need_deps vm bench
	"$TOP/scripts/guest/vm" --kernel "$k" --online "$n" --icount --mem "${mem}M" \
		--append "possible_cpus=$m virtio_blk.num_request_queues=1 rcupdate.rcu_cpu_stall_suppress=1" \
		--timeout 7200 --log "$log" --dir "$stage:/" \
		--add /bin/bash --add /usr/bin/numactl --add /usr/bin/perf "$@"
}
