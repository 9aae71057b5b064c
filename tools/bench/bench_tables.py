# SPDX-License-Identifier: GPL-2.0
"""The Markdown tables of the bench report, from bench_stats.Data. Each
function returns a list of lines; the words around them are bench_prose's."""
from bench_stats import cell_label, exit_us, med, percpu_growth_kb, ratio, spread, wall_ms, wall_us

# The units of the plan's workloads (tools/bench/plan.py) that have tables:
# per-process ones, time per operation (µs) or per run (ms), and per-CPU
# ones, operations per second.
LATENCY = ("µs", "ms")
THROUGHPUT = ("/s",)


def measure(data, name):
    """(fn, unit) of a per-process workload, by the plan's unit."""
    unit = data.workload(name)["unit"]
    return (wall_ms if unit == "ms" else wall_us), unit


def ratio_pairs(kernels):
    """The ratio columns: patched/base, patched/ideal, then every other
    kernel against base, in the registry's order."""
    pairs = [("patched", "base"), ("patched", "ideal")]
    pairs += [(k, "base") for k in kernels if k not in ("base", "patched")]
    return [(a, b) for a, b in pairs if a in kernels and b in kernels]


def row(cells):
    return "| " + " | ".join("-" if c is None else c for c in cells) + " |"


def header(first, columns):
    return [(f"| {first} | " if first else "| | ") + " | ".join(columns) + " |",
            "|" + "---|" * (1 + len(columns))]


def table(data, kernels, name, fn, fmt):
    """One row per cell: each kernel's median ± spread, then the ratios."""
    pairs = ratio_pairs(kernels)
    out = header("online/possible", kernels + [f"{a}/{b}" for a, b in pairs])
    for cell in data.cells:
        val = data.medians(kernels, name, cell, fn)
        if not val:
            continue
        out.append(row([cell_label(cell)]
                       + [f"{fmt(val[k])} ±{spread(data.values(name, k, cell, fn)):.1f}%" if k in val else None
                          for k in kernels]
                       + [ratio(val, a, b) for a, b in pairs]))
    return out + [""]


def alternatives(data, kernels, cell):
    """Every workload at one cell: base in µs, the others relative to it."""
    others = [k for k in kernels if k != "base"]
    extra = [p for p in (("freelist", "patched"), ("patched", "ideal")) if p[0] in kernels and p[1] in kernels]
    out = header("workload", ["base, µs"] + [f"{k}/base" for k in others] + [f"{a}/{b}" for a, b in extra])
    rows = [(f"`{n}`" + ("" if measure(data, n)[1] == "µs" else f", {measure(data, n)[1]}"), n, measure(data, n)[0])
            for n in data.tables(LATENCY)]
    for label, name, fn in rows + [("`threxit exit only`", "threxit", exit_us)]:
        val = data.medians(kernels, name, cell, fn)
        if "base" in val:
            out.append(row([label, f"{val['base']:.1f}"] + [ratio(val, k, "base") for k in others]
                           + [ratio(val, a, b) for a, b in extra]))
    return out + [""]


def idle_table(data, kernels):
    out = header("online/possible", kernels)
    for cell in data.cells:
        val = data.medians(kernels, "idle", cell, percpu_growth_kb)
        if val:
            out.append(row([cell_label(cell)] + [f"+{int(val[k])}" if k in val else None for k in kernels]))
    return out + [""]


def upgrades_table(data):
    ups = sorted((key, rs) for key, rs in data.runs.items() if key[0].startswith("upgrades_"))
    if not ups:
        return []
    out = header("kernel", ["online/possible", "workload", "processes", "upgrades", "failed"])
    for (name, k, cell), rs in ups:
        out.append(row([k, cell_label(cell), name[len("upgrades_"):], rs[0]["procs"],
                        str(int(med([int(r["events"]) for r in rs]))), str(int(med([int(r["failed"]) for r in rs])))]))
    return out + [""]


def headline_table(data, kernels, rows):
    """rows: [(label, workload, cell, fn, format)] -> the README's table;
    a row whose workload the run did not measure is left out."""
    pairs = [p for p in (("patched", "base"), ("patched", "ideal")) if p[0] in kernels and p[1] in kernels]
    out = header("", kernels + [f"{a}/{b}" for a, b in pairs])
    for label, name, cell, fn, fmt in rows:
        val = data.medians(kernels, name, cell, fn)
        if val:
            out.append(row([label] + [fmt.format(val[k]) if k in val else None for k in kernels]
                           + [ratio(val, a, b) if name != "idle" else "" for a, b in pairs]))
    return out
