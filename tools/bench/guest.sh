#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the benchmark guest: every workload once, pinned to CPU 0 as
# in the regression report, results appended to $OUT/results.txt.
# usage: guest.sh ITERATIONS IDLE_PROCS
set -eu
n=$1 idle=$2
res=$OUT/results.txt
pin="numactl -C 0"

{
	$pin forkbench exec "$n" /bin/true
	$pin forkbench exit "$n"
	$pin forkbench sh "$((n / 2))"
	$pin forkbench thread "$n"
	# The regression report's loop: bash forking and exec'ing /bin/true.
	$pin time -p bash -c "for ((i=0;i<$n;i++)); do /bin/true; done" 2>/tmp/time
	awk -v n="$n" '/^real/{r=$2} /^user/{u=$2} /^sys/{s=$2}
		END {printf "name=shloop iters=%d wall_s=%s child_sys_s=%s child_user_s=%s\n", n, r, s, u}' /tmp/time
	forkbench idle "$idle"
	# Kernels with the series count their upgrades.
	grep -E '^rss_stat_upgrade' /proc/vmstat | sed 's/^\([a-z_]*\) \([0-9]*\)/name=vmstat_\1 value=\2/' || true
} >>"$res"
