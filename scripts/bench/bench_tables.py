# SPDX-License-Identifier: GPL-2.0
"""The Markdown tables of the bench report, from bench_stats.Data. Each
function returns a list of lines; the words around them are bench_prose's."""
from bench_stats import cell_label, exit_us, med, percpu_growth_kb, ratio, spread, wall_ms, wall_us

# The units of the plan's workloads (scripts/bench/plan.py) that have tables:
# per-process ones, time per operation (µs) or per run (ms), and per-CPU
# ones, operations per second.
LATENCY = ("µs", "ms")
THROUGHPUT = ("/s",)


def measure(data, name):
    """(fn, unit) of a per-process workload, by the plan's unit."""
    unit = data.workload(name)["unit"]
    return (wall_ms if unit == "ms" else wall_us), unit


def row(cells):
    return "| " + " | ".join("-" if c is None else c for c in cells) + " |"


def header(first, columns):
    return [(f"| {first} | " if first else "| | ") + " | ".join(columns) + " |",
            "|" + "---|" * (1 + len(columns))]


def table(data, kernels, name, fn, fmt):
    """One row per cell: each kernel's median ± spread, then the ratios
    (candidate/reference, candidate/floor, then every other kernel against
    the reference, in the registry's order)."""
    pairs = data.comparisons(kernels).table_pairs(kernels)
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
    """Every workload at one cell: the reference in µs, the others relative
    to it, then each alternative against the candidate and the candidate
    against the floor."""
    c = data.comparisons(kernels)
    ref = c.reference
    others = [k for k in kernels if k != ref]
    extra = c.alternative_pairs()
    out = header("workload", [f"{ref}, µs"] + [f"{k}/{ref}" for k in others] + [f"{a}/{b}" for a, b in extra])
    rows = [(f"`{n}`" + ("" if measure(data, n)[1] == "µs" else f", {measure(data, n)[1]}"), n, measure(data, n)[0])
            for n in data.tables(LATENCY)]
    for label, name, fn in rows + [("`threxit exit only`", "threxit", exit_us)]:
        val = data.medians(kernels, name, cell, fn)
        if ref in val:
            out.append(row([label, f"{val[ref]:.1f}"] + [ratio(val, k, ref) for k in others]
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
    pairs = data.comparisons(kernels).headline_pairs()
    out = header("", kernels + [f"{a}/{b}" for a, b in pairs])
    for label, name, cell, fn, fmt in rows:
        val = data.medians(kernels, name, cell, fn)
        if val:
            out.append(row([label] + [fmt.format(val[k]) if k in val else None for k in kernels]
                           + [ratio(val, a, b) if name != "idle" else "" for a, b in pairs]))
    return out
