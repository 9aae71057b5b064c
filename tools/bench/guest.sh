#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the benchmark guest (scripts/bench.sh). Results go to
# $OUT/results.txt, one "name=.. key=value.." line per workload.
#
# usage: bench-guest run ITERS IDLE_PROCS PF_MIB
#          every workload once: the single-process loops pinned to CPU 0
#          as in the regression report, the per-CPU ones on every CPU
#        bench-guest perf ITERS
#          perf record -e cpu-clock -g of the bash loop, pinned to CPU 0;
#          $OUT/perf.script (call chains) and $OUT/perf.report
set -eu
mode=$1 n=$2
res=$OUT/results.txt
pin="numactl -C 0"
shloop="for ((i=0;i<$n;i++)); do /bin/true; done"

case $mode in
perf)
	echo 0 >/proc/sys/kernel/kptr_restrict
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	perf record -q -e cpu-clock -g -o /tmp/perf.data -- numactl -C 0 bash -c "$shloop"
	perf report -q -i /tmp/perf.data --stdio --no-children -g none --sort symbol \
		--percent-limit 0.5 >"$OUT/perf.report" 2>/dev/null
	perf script -i /tmp/perf.data -F comm,ip,sym >"$OUT/perf.script" 2>/dev/null
	exit 0 ;;
run)	idle=$3 pf_mib=$4 ;;
*)	echo "bench-guest: unknown mode $mode" >&2; exit 2 ;;
esac

# stress-ng with a fixed number of bogo-ops, so that each kernel does the
# same work; its rate is in guest (icount) time. As nobody: its exec
# stressor refuses to run as root. stress NAME OPS [OPTIONS...]
grep -q '^nobody:' /etc/passwd 2>/dev/null ||
	echo 'nobody:x:65534:65534:nobody:/tmp:/bin/sh' >>/etc/passwd
stress() {
	s=$1 ops=$2
	shift 2
	su -s /bin/sh nobody -c "cd /tmp && stress-ng --$s 1 --$s-ops $ops $* --taskset 0 --metrics-brief" 2>&1 |
		awk -v s="$s" '$4 == s && $5 ~ /^[0-9]+$/ {
			printf "name=stress_%s iters=%d wall_s=%s sys_s=%s user_s=%s\n", s, $5, $6, $8, $7; ok = 1 }
			END { if (!ok) { print "bench-guest: no stress-ng metrics for " s > "/dev/stderr"; exit 1 } }'
}

{
	# The regression report's loop: bash forking and exec'ing /bin/true.
	# bash's time keyword: elapsed, user and system time of the loop
	# (the shell and its children) in milliseconds.
	$pin bash -c "TIMEFORMAT='name=shloop iters=$n wall_s=%3R sys_s=%3S user_s=%3U'; time { $shloop; }" 2>&1
	$pin forkbench exec "$n" /bin/true
	$pin forkbench exit "$n"
	$pin forkbench sh "$((n / 2))"
	$pin forkbench thread "$n"
	$pin forkbench threads "$n"
	forkbench execrate "$(( (n + $(nproc) - 1) / $(nproc) ))"
	forkbench pf_procs "$pf_mib"
	forkbench pf_threads "$pf_mib"
	stress fork "$((n / 4))"
	stress vfork "$((n * 2))"
	stress clone "$((n / 10))"
	# One single-threaded child per exec, forked, as forkbench exec does.
	stress exec "$((n / 20))" --exec-max 1 --exec-fork-method fork \
		--exec-method execve --exec-no-pthread
	forkbench idle "$idle"
	# Kernels with the series count their upgrades.
	grep -E '^rss_stat_upgrade' /proc/vmstat | sed 's/^\([a-z_]*\) \([0-9]*\)/name=vmstat_\1 value=\2/' || true
} >>"$res"
