#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the test guest (make proof): Percpu and rss_stat upgrades around
# fork+exec, threaded processes and idle processes, then stress-ng.
pc() { sed -n 's/^Percpu: *\([0-9]*\) kB/\1/p' /proc/meminfo; }
up() { sed -n "s/^rss_stat_upgrade$1 //p" /proc/vmstat; }
echo "kernel: $(uname -r) $(grep -o 'lazy_rss_stat=[a-z]*' /proc/cmdline)"
p0=$(pc) u0=$(up) f0=$(up _fail)
numactl -C 0 forkbench exec 1000 /bin/true
p1=$(pc) u1=$(up)
echo "fork+exec x1000: Percpu ${p0} -> ${p1} kB, rss_stat_upgrade ${u0:-n/a} -> ${u1:-n/a}"
forkbench thread 100
u2=$(up)
echo "100 processes creating one thread each: rss_stat_upgrade ${u1:-n/a} -> ${u2:-n/a}"
forkbench idle 1000
forkbench threads 500
stress-ng --fork 4 --vfork 4 --clone 4 --pthread 2 -t 20s --metrics-brief 2>&1 | tail -8
echo "rss_stat_upgrade_fail: ${f0:-n/a} -> $(up _fail)"
