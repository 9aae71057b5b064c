#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the raw results of scripts/bench/bench.sh into OUTDIR/bench.md, the
README's headline block (OUTDIR/headline.md, which bench.sh splices into
README.md when it publishes), SVG plots, and the perf profile tables with
their folded stacks. Statistics: bench_stats; tables: bench_tables; words:
bench_prose; profiles: bench_perf. Test: test_report.py."""
import argparse
import glob
import os
import subprocess

import bench_cache
import bench_perf
import bench_prose as prose
import bench_tables as tables
from bench_stats import Data, exit_us, rate, read_kernels, wall_us


def plots_of(data):
    """The plots: (workload, cells, x label, file name)."""
    sweep = [c for c in data.cells if c[0] == min(data.cells)[0]]   # fixed online, possible varies
    online = [c for c in data.cells if c[0] == c[1]]                # all possible CPUs online
    out = []
    if len(sweep) > 1:
        out += [(name, sweep, f"possible CPUs ({sweep[0][0]} online)", f"{name}-possible")
                for name in ("exec", "shloop")]
    if len(online) > 1:
        out.append(("exec", online, "online CPUs (-smp, all possible online)", "exec-online"))
    return out


def report(data, registry, setup, short_setup, folded_dir, model="",
           model_ns=bench_cache.MODEL_NS):
    """(bench.md lines, headline lines, plots, cache plots) of one run."""
    kernels = data.kernels(list(registry))
    head = prose.headline(data, kernels, tables.headline_table(data, kernels, prose.headline_rows(data)),
                          short_setup)
    head += bench_cache.headline(data, kernels, model_ns)
    out = prose.intro(data.plan["base"], {k: registry[k] for k in kernels}, setup)
    out += ["## Headline", ""] + head + prose.answers(data, kernels) + [prose.TCG]
    plots = plots_of(data)
    possible = [p for p in plots if p[3].endswith("-possible")]
    if possible:
        out += [f"## Possible CPUs: {possible[0][1][0][0]} online, more possible", ""] + prose.POSSIBLE
        out += [line for p in possible for line in (f"![{p[3]}]({p[3]}.svg)", "")]
    ref = data.comparisons(kernels).reference
    out += prose.alternatives_intro(ref)
    r = data.roles
    for cell in dict.fromkeys([r["max_possible"], r["max_online"]]):
        out += prose.alternatives_caption(cell, ref) + tables.alternatives(data, kernels, cell)
    out += prose.PER_WORKLOAD
    for name in data.tables(tables.LATENCY):
        if data.has(name):
            out += [f"### {name}: {data.workload(name)['describe']}", ""]
            out += tables.table(data, kernels, name, tables.measure(data, name)[0], "{:.1f}".format)
            if name == "threxit":
                out += [prose.EXIT_ONLY, ""] + tables.table(data, kernels, name, exit_us, "{:.1f}".format)
    for name in data.tables(tables.THROUGHPUT):
        if data.has(name):
            out += [f"### {name}: {data.workload(name)['describe']}", ""] + prose.THROUGHPUT_CAPTION
            out += tables.table(data, kernels, name, rate, lambda v: f"{v:.0f}" if v >= 100 else f"{v:.2f}")
    cache, cache_plots = bench_cache.section(data, kernels, model_ns, model)
    out += cache
    out += prose.IDLE + tables.idle_table(data, kernels)
    ups = tables.upgrades_table(data)
    if ups:
        out += prose.UPGRADES + ups
    if data.perf:
        own = {w["profile"] for w in data.plan["workloads"] if w["profile"]}
        out += ["## Where the time goes: perf profiles", ""] + bench_perf.perf_section(data.perf, folded_dir, own)
    if plots:
        out += ["## Plots", ""] + [f"![{p[3]}]({p[3]}.svg)\n" for p in plots]
    return out, head, plots, cache_plots


def plot(data, kernels, outdir, name, xcells, xlabel, base):
    dat = os.path.join(outdir, f".{base}.dat")
    with open(dat, "w") as f:
        for cell in xcells:
            row = [str(cell[1] if "possible" in xlabel else cell[0])]
            val = data.medians(kernels, name, cell, wall_us)
            row += [f"{val[k]:.2f}" if k in val else "NaN" for k in kernels]
            f.write(" ".join(row) + "\n")
    lines = ", ".join(f"'{dat}' using 1:{i + 2} with linespoints title '{k}'" for i, k in enumerate(kernels))
    script = (f"set terminal svg size 720,440; set output '{outdir}/{base}.svg';"
              f"set title 'elapsed time per iteration: {name} (QEMU TCG, icount)';"
              f"set xlabel '{xlabel}'; set ylabel 'microseconds';"
              "set key top left; set grid;"
              f"plot {lines}")
    subprocess.run(["gnuplot", "-e", script], check=True, stderr=subprocess.DEVNULL)
    os.unlink(dat)


def plot_cache(data, kernels, outdir, cells, base):
    """L2 misses per operation, a group of bars per workload and cell."""
    dat = os.path.join(outdir, f".{base}.dat")
    ks = bench_cache.measured(data, kernels, cells)
    with open(dat, "w") as f:
        for cell in cells:
            for name, _ in bench_cache.workloads(data):
                ops = [bench_cache.per_op(data, k, cell, name) for k in ks]
                if any(ops):
                    f.write(f'"{name} {cell[0]}/{cell[1]}" '
                            + " ".join(f"{o['l2miss']:.1f}" if o else "NaN" for o in ops) + "\n")
    lines = ", ".join(f"'{dat}' using {i + 2}" + (":xtic(1)" if i == 0 else "") + f" title '{k}'"
                      for i, k in enumerate(ks))
    script = (f"set terminal svg size 720,440; set output '{outdir}/{base}.svg';"
              "set title 'L2 misses per operation (cache model; workload, online/possible CPUs)';"
              "set ylabel 'L2 misses'; set style data histograms; set style histogram clustered;"
              "set style fill solid 0.8 border -1; set key top right; set grid ytics;"
              "set xtics rotate by -30; set yrange [0:*];"
              f"plot {lines}")
    subprocess.run(["gnuplot", "-e", script], check=True, stderr=subprocess.DEVNULL)
    os.unlink(dat)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("outdir")
    ap.add_argument("--kernels", required=True, help="the line's kernel registry (patches/LINE/kernels)")
    ap.add_argument("--setup", required=True, help="one line: how the runs were made")
    ap.add_argument("--short-setup", required=True, help="the setup in a few words")
    ap.add_argument("--folded-dir", required=True)
    ap.add_argument("--model", default="", help="one line: the cache model")
    ap.add_argument("--model-ns", required=True, help="INSN L2HIT L2MISS, ns (make bench's MODEL_NS)")
    a = ap.parse_args()
    data = Data(a.raw)
    registry = read_kernels(a.kernels)
    ns = tuple(float(x) for x in a.model_ns.split())
    out, head, plots, cache_plots = report(data, registry, a.setup, a.short_setup,
                                           a.folded_dir, a.model, ns)
    os.makedirs(a.outdir, exist_ok=True)
    kernels = data.kernels(list(registry))
    for name, xcells, xlabel, base in plots:
        plot(data, kernels, a.outdir, name, xcells, xlabel, base)
    for cells, base in cache_plots:
        plot_cache(data, kernels, a.outdir, cells, base)
    with open(os.path.join(a.outdir, "bench.md"), "w") as f:
        f.write("\n".join(out))
    with open(os.path.join(a.outdir, "headline.md"), "w") as f:
        f.write("\n".join(head))
    for svg in glob.glob(os.path.join(a.outdir, "*.svg")):
        if os.path.basename(svg)[:-4] not in [p[3] for p in plots] + [b for _, b in cache_plots]:
            os.unlink(svg)


if __name__ == "__main__":
    main()
