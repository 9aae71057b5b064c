# SPDX-License-Identifier: GPL-2.0
"""The statistics of the bench report: scripts/bench/bench.sh's raw results and
the kernel registry read in, medians, spreads and ratios. No text here."""
import collections
import json
import os
import re
import statistics

import plan as bench_plan


def read_kernels(path):
    """The registry ./kernels (NAME ROLE PATCHES BOOT DESCRIPTION):
    {name: description}, in its order."""
    kernels = {}
    with open(path) as f:
        for line in f:
            fields = re.split(r"\t+", line.rstrip("\n"), maxsplit=4)
            if not line.startswith("#") and len(fields) == 5:
                kernels[fields[0]] = fields[4]
    return kernels


def parse_cell(text):
    """'4/255' -> (4, 255): online, possible vCPUs."""
    online, possible = text.split("/")
    return int(online), int(possible)


def cell_label(cell):
    return f"{cell[0]}/{cell[1]}"


class Data:
    """The raw results: runs[(workload, kernel, cell)] = [fields of each
    round] and the perf profiles [(workload, kernel, cell, dir)]; and the
    plan of the run (scripts/bench/plan.py), plan.json beside them: the
    cells' roles (max_possible, min_possible, max_online), the workloads
    (unit, description, order in the report), the cache model's phases,
    and the roles of the registry's kernels, from which the comparisons
    come."""

    def __init__(self, path):
        self.runs = collections.defaultdict(list)
        self.perf = []
        plan = os.path.join(os.path.dirname(os.path.abspath(path)), "plan.json")
        if not os.path.exists(plan):
            raise SystemExit(f"{path}: no plan.json beside it (the plan of the run, from scripts/bench/bench.sh)")
        with open(plan) as f:
            self.plan = json.load(f)
        self.roles = {r: parse_cell(c) for r, c in self.plan["roles"].items()}
        with open(path) as raw:
            lines = raw.read().splitlines()
        for line in lines:
            f = dict(kv.split("=", 1) for kv in line.split())
            if f["name"] == "perf":
                self.perf.append((f["workload"], f["kernel"], parse_cell(f["cell"]), f["dir"]))
            else:
                self.runs[(f["name"], f["kernel"], parse_cell(f["cell"]))].append(f)
        self.cells = sorted({key[2] for key in self.runs})

    def workload(self, name):
        """The plan's facts of workload name (plan.py's Workload)."""
        return next(w for w in self.plan["workloads"] if w["name"] == name)

    def tables(self, units):
        """The workloads with a table of their own whose unit is one of
        units, in the report's order."""
        ws = [w for w in self.plan["workloads"] if w["table"] is not None and w["unit"] in units]
        return [w["name"] for w in sorted(ws, key=lambda w: w["table"])]

    def comparisons(self, kernels):
        """Which of kernels (those measured) the report compares, by their
        roles in the registry (plan.Comparisons)."""
        return bench_plan.comparisons(self.plan["registry"], kernels)

    def kernels(self, order):
        """The kernels of the registry order that have results."""
        return [k for k in order if any(key[1] == k for key in self.runs)]

    def has(self, name):
        return any(key[0] == name for key in self.runs)

    def values(self, name, k, cell, fn):
        return [fn(r) for r in self.runs.get((name, k, cell), [])]

    def medians(self, kernels, name, cell, fn):
        """{kernel: median of fn over the rounds}, for the kernels measured."""
        return {k: med(xs) for k in kernels if (xs := self.values(name, k, cell, fn))}


def med(xs):
    return statistics.median(xs)


def spread(xs):
    """(max - min) / median, in percent."""
    m = med(xs)
    return 100.0 * (max(xs) - min(xs)) / m if m else 0.0


def ratio(val, a, b):
    """val[a] / val[b] with three decimals, or None when one is missing."""
    return f"{val[a] / val[b]:.3f}" if a in val and b in val and val[b] else None


def per_op_us(field):
    return lambda r: 1e6 * float(r[field]) / int(r["iters"])


wall_us, sys_us, exit_us = per_op_us("wall_s"), per_op_us("sys_s"), per_op_us("exit_s")


def wall_ms(r):
    return 1e3 * float(r["wall_s"]) / int(r["iters"])


def rate(r):
    return int(r["iters"]) / float(r["wall_s"])


def percpu_growth_kb(r):
    return int(r["percpu_kb_after"]) - int(r["percpu_kb_before"])
