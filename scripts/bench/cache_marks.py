#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The phases of a cache-model boot as raw result lines (scripts/bench/bench.sh
appends them to its raw file). The guest's bench-guest prints one
name=cache_phase line per phase in its results.txt; QEMU's cache plugin,
built with scripts/bench/cache-marker.patch (scripts/bench/qemu-plugin.sh), prints
one cache-mark line per mark (scripts/bench/mark.c) in plugin.log, with the
totals so far of all the modelled caches and (own_*) of the caches of the
vCPU that marked. Phase P is the difference of marks 2P+1 and 2P in the
marking vCPU's caches: every modelled workload runs pinned to it, and the
other vCPUs' caches see only their own idle ticks and periodic work, which
a phase collects by its length in guest time, not by its operations.

usage: cache_marks.py PLUGIN_LOG RESULTS_TXT"""
import sys

FIELDS = ("daccess", "dmiss", "iaccess", "imiss", "l2access", "l2miss")


def read_marks(path):
    marks = []
    with open(path) as f:
        for line in f:
            if not line.startswith("cache-mark "):
                continue
            kv = dict(w.split("=", 1) for w in line.split()[2:])
            if "own_l2miss" not in kv:
                raise SystemExit(f"{path}: a mark without the marking vCPU's totals (own_*), from a plugin "
                                 "built before scripts/bench/cache-marker.patch printed them")
            marks.append({k: int(kv["own_" + k]) for k in FIELDS})
    return marks


def phase_lines(plugin_log, results):
    marks = read_marks(plugin_log)
    with open(results) as f:
        phases = [dict(w.split("=", 1) for w in line.split()) for line in f if "name=cache_phase" in line]
    if not phases or len(marks) != 2 * len(phases):
        raise SystemExit(f"{plugin_log}: {len(marks)} marks for {len(phases)} phases of {results}"
                         " (want two a phase)")
    out = []
    for p, ph in enumerate(phases):
        a, b = marks[2 * p], marks[2 * p + 1]
        out.append(f"name=cache workload={ph['workload']} iters={ph['iters']} "
                   + " ".join(f"{k}={b[k] - a[k]}" for k in FIELDS))
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.split("usage: ")[1])
    print("\n".join(phase_lines(sys.argv[1], sys.argv[2])))
