#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the raw results of scripts/bench.sh into results/bench.md, the
README's headline table (results/headline.md), SVG plots, and the perf
profile shares with their folded stacks."""
import argparse
import collections
import os
import re
import statistics
import subprocess

ORDER = ["base", "patched", "lazyoff", "ideal"]
LABEL = {"base": "base", "patched": "patched (lazy)",
         "lazyoff": "patched, lazy_rss_stat=off", "ideal": "ideal (atomics)"}
# Per-iteration workloads: CPU time per operation.
LATENCY = [
    ("shloop", "bash loop of /bin/true, pinned to CPU 0 (the regression report's loop)"),
    ("exec", "fork + exec of a static /bin/true + wait (lat_proc exec)"),
    ("exit", "fork + _exit + wait (lat_proc fork)"),
    ("sh", "fork + /bin/sh -c true + wait (lat_proc shell)"),
    ("thread", "fork a child that starts and joins one thread (the upgrade cost)"),
    ("threads", "one long-lived process starting and joining threads"),
]
# Throughput workloads: operations per second of guest time.
THROUGHPUT = [
    ("execrate", "one worker per CPU re-execing a static binary (execs/s)"),
    ("pf_procs", "page_fault1, processes: one per CPU, 128 MiB anon each (faults/s)"),
    ("pf_threads", "page_fault1, threads: one per CPU in one process (faults/s)"),
    ("stress_fork", "stress-ng --fork 1, pinned (bogo-ops/s)"),
    ("stress_vfork", "stress-ng --vfork 1, pinned (bogo-ops/s)"),
    ("stress_clone", "stress-ng --clone 1, pinned (bogo-ops/s)"),
    ("stress_exec", "stress-ng --exec 1, pinned (bogo-ops/s)"),
]
# Functions of the perf table: (row label, predicate on a symbol name).
PERF_ROWS = [
    ("mm_init", lambda s: s == "mm_init"),
    ("copy_mm", lambda s: s == "copy_mm"),
    ("pcpu_alloc*", lambda s: s.startswith("pcpu_alloc")),
    ("free_percpu", lambda s: s == "free_percpu"),
    ("percpu_counter_*", lambda s: s.startswith(("percpu_counter_", "__percpu_counter_"))),
    ("lazy_percpu_counter_*", lambda s: "lazy_percpu_counter_" in s),
    ("__mmdrop", lambda s: s == "__mmdrop"),
]


def parse(path):
    runs = collections.defaultdict(list)   # (name, kernel, smp) -> [dict]
    for line in open(path):
        f = dict(kv.split("=", 1) for kv in line.split())
        runs[(f["name"], f["kernel"], int(f["smp"]))].append(f)
    return runs


def med(xs):
    return statistics.median(xs)


def spread(xs):
    m = med(xs)
    return 100.0 * (max(xs) - min(xs)) / m if m else 0.0


def per_op_us(r, field):
    return 1e6 * float(r[field]) / int(r["iters"])


def sys_us(r):
    return per_op_us(r, "sys_s")


def wall_us(r):
    return per_op_us(r, "wall_s")


def percpu_growth_kb(r):
    return int(r["percpu_kb_after"]) - int(r["percpu_kb_before"])


def rate(r):
    return int(r["iters"]) / float(r["wall_s"])


def values(runs, name, k, smp, fn):
    return [fn(r) for r in runs.get((name, k, smp), [])]


def ratio(val, a, b):
    return f"{val[a] / val[b]:.3f}" if a in val and b in val and val[b] else "-"


def table(runs, kernels, smps, name, fn, fmt):
    """One row per -smp: each kernel's median ± spread, then the ratios."""
    pairs = [(k, "base") for k in kernels if k != "base"]
    if "ideal" in kernels and "patched" in kernels:
        pairs.append(("patched", "ideal"))
    out = ["| -smp | " + " | ".join(LABEL[k] for k in kernels) + " | "
           + " | ".join(f"{a}/{b}" for a, b in pairs) + " |",
           "|" + "---|" * (1 + len(kernels) + len(pairs))]
    for smp in smps:
        cells, val = [], {}
        for k in kernels:
            xs = values(runs, name, k, smp, fn)
            if not xs:
                cells.append("-")
                continue
            val[k] = med(xs)
            cells.append(f"{fmt(val[k])} ±{spread(xs):.1f}%")
        cells += [ratio(val, a, b) for a, b in pairs]
        out.append(f"| {smp} | " + " | ".join(cells) + " |")
    return out + [""]


def headline(runs, kernels, smps, setup):
    smp = max(smps)
    rows = [("elapsed per fork+exec (`exec`), µs", "exec", wall_us, "{:.1f}"),
            ("system time per fork+exec (`exec`), µs", "exec", sys_us, "{:.1f}"),
            ("elapsed per bash-loop iteration (`shloop`), µs", "shloop", wall_us, "{:.1f}"),
            ("elapsed per fork + one thread (`thread`), µs", "thread", wall_us, "{:.1f}"),
            ("page faults, threads mode (`pf_threads`), faults/s", "pf_threads", rate, "{:.0f}"),
            ("page faults, processes mode (`pf_procs`), faults/s", "pf_procs", rate, "{:.0f}"),
            ("execs/s, one worker per CPU (`execrate`)", "execrate", rate, "{:.0f}")]
    out = [f"At `-smp {smp}`, median of the rounds; {setup}", "",
           "| | " + " | ".join(LABEL[k] for k in kernels) + " | patched/base"
           + (" | patched/ideal" if "ideal" in kernels else "") + " |",
           "|---|" + "---|" * (len(kernels) + 1 + ("ideal" in kernels))]
    for label, name, fn, fmt in rows:
        val = {k: med(xs) for k in kernels if (xs := values(runs, name, k, smp, fn))}
        cells = [fmt.format(val[k]) if k in val else "-" for k in kernels]
        cells.append(ratio(val, "patched", "base"))
        if "ideal" in kernels:
            cells.append(ratio(val, "patched", "ideal"))
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    idle = {}
    for k in kernels:
        rs = runs.get(("idle", k, smp), [])
        if rs:
            idle[k] = int(med([percpu_growth_kb(r) for r in rs]))
            procs = rs[0]["procs"]
    if idle:
        out.append(f"| `Percpu:` growth, {procs} idle processes, kB | "
                   + " | ".join(f"+{idle[k]}" if k in idle else "-" for k in kernels)
                   + " | |" + (" |" if "ideal" in kernels else ""))
    return out + [""]


def fold(script):
    """perf script -F comm,ip,sym with call chains -> {folded stack: samples}."""
    stacks = collections.Counter()
    comm, frames = None, []
    for line in open(script, errors="replace"):
        if not line.strip():
            if comm is not None:
                stacks[";".join([comm] + frames[::-1])] += 1
            comm, frames = None, []
        elif line[0] not in " \t":
            comm, frames = line.split()[0], []
        else:
            parts = line.split(None, 1)
            sym = parts[1].strip() if len(parts) > 1 else "[unknown]"
            sym = sym.split("+0x")[0].split(" (")[0]
            # mm_init.constprop.0 is mm_init
            frames.append(re.sub(r"\.(constprop|isra|part|cold)(\.\d+)*", "", sym))
    if comm is not None:
        stacks[";".join([comm] + frames[::-1])] += 1
    return stacks


def perf_section(perf_dirs, kernels, build_dir):
    out = ["## Where the time goes: perf profile of the bash loop", "",
           "`perf record -e cpu-clock -g` of the `shloop` workload (Debian's perf, "
           "in the guest, on the workload's processes only). Share of all samples "
           "whose call chain contains the function (*incl.*) and whose leaf it is "
           "(*self*). Folded stacks: `" + os.path.relpath(build_dir) + "/<kernel>.folded`.", ""]
    shares = {}
    for k, d in perf_dirs:
        script = os.path.join(d, "perf.script")
        if not os.path.exists(script):
            continue
        stacks = fold(script)
        os.makedirs(build_dir, exist_ok=True)
        with open(os.path.join(build_dir, f"{k}.folded"), "w") as f:
            for st, n in sorted(stacks.items()):
                f.write(f"{st} {n}\n")
        total = sum(stacks.values())
        row = {}
        for label, pred in PERF_ROWS:
            incl = slf = 0
            for st, n in stacks.items():
                fr = st.split(";")[1:]
                if any(pred(s) for s in fr):
                    incl += n
                if fr and pred(fr[-1]):
                    slf += n
            row[label] = (100.0 * incl / total, 100.0 * slf / total) if total else (0, 0)
        shares[k] = (row, total)
    ks = [k for k in kernels if k in shares]
    if not ks:
        return []
    out.append("| function | " + " | ".join(f"{LABEL[k]} incl. | self" for k in ks) + " |")
    out.append("|---|" + "---|---|" * len(ks))
    for label, _ in PERF_ROWS:
        out.append(f"| `{label}` | " + " | ".join(
            f"{shares[k][0][label][0]:.2f}% | {shares[k][0][label][1]:.2f}%" for k in ks) + " |")
    out.append("| samples | " + " | ".join(f"{shares[k][1]} | " for k in ks) + " |")
    out += ["", "The top of each flat profile (`perf report --no-children --sort symbol`). "
            "cpu-clock is an hrtimer, not an NMI: samples due while interrupts were off "
            "land where they are turned back on (`*_unlock_irqrestore` and the like).", ""]
    for k, d in perf_dirs:
        rep = os.path.join(d, "perf.report")
        if k in ks and os.path.exists(rep):
            top = [ln.rstrip() for ln in open(rep, errors="replace") if ln.strip()][:10]
            out += [f"{LABEL[k]}:", "", "```"] + top + ["```", ""]
    return out + [""]


def plot(runs, kernels, smps, outdir):
    for name, kind, fn, what in (("exec", "sys", sys_us, "system time"),
                                 ("exec", "elapsed", wall_us, "elapsed time"),
                                 ("shloop", "sys", sys_us, "system time"),
                                 ("shloop", "elapsed", wall_us, "elapsed time")):
        base = f"{name}-{kind}"
        data = os.path.join(outdir, f".{base}.dat")
        with open(data, "w") as f:
            for smp in smps:
                row = [str(smp)]
                for k in kernels:
                    xs = values(runs, name, k, smp, fn)
                    row.append(f"{med(xs):.2f}" if xs else "NaN")
                f.write(" ".join(row) + "\n")
        lines = ", ".join(f"'{data}' using 1:{i + 2} with linespoints title '{LABEL[k]}'"
                          for i, k in enumerate(kernels))
        script = (f"set terminal svg size 720,440; set output '{outdir}/{base}.svg';"
                  f"set title '{what} per iteration: {name} (QEMU TCG, icount)';"
                  "set xlabel 'guest vCPUs (-smp)'; set ylabel 'microseconds';"
                  "set key top left; set grid; set logscale x 2;"
                  f"plot {lines}")
        subprocess.run(["gnuplot", "-e", script], check=True, stderr=subprocess.DEVNULL)
        os.unlink(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("outdir")
    ap.add_argument("--setup", required=True, help="one line: how the runs were made")
    ap.add_argument("--short-setup", required=True, help="the setup in a few words")
    ap.add_argument("--kernel-version", required=True)
    ap.add_argument("--perf", action="append", default=[], metavar="KERNEL=DIR")
    ap.add_argument("--folded-dir", required=True)
    a = ap.parse_args()
    runs = parse(a.raw)
    kernels = [k for k in ORDER if any(key[1] == k for key in runs)]
    smps = sorted({key[2] for key in runs})
    head = headline(runs, kernels, smps, a.short_setup)
    out = ["# fork/exec benchmarks: base vs lazy rss_stat",
           "",
           "Generated by `make bench` (scripts/bench.sh, tools/bench/); do not edit.",
           "",
           f"- Kernels: Linux {a.kernel_version} from Debian's linux-source-6.12, "
           "all built from configs/guest.config (no debug options): "
           + ", ".join(f"`{k}` = {LABEL[k]}" for k in kernels) + ". "
           "`ideal` is the base with scripts/bench/*.patch (rss_stat as plain "
           "atomic_long_t, no per-CPU memory).",
           f"- Setup: {a.setup}.",
           "- Times are guest times under `-icount`: they count guest instructions "
           "(8 ns each), so they are deterministic but price atomics, cache misses "
           "and contention like any other instruction. Compare ratios within these "
           "tables, not absolute times with real hardware.",
           "- Elapsed time is CLOCK_MONOTONIC in the guest around the loop. System time "
           "is from getrusage(): the kernel splits each task's exact runtime between "
           "user and system by tick samples, and under icount the 250 Hz tick can beat "
           "with a loop of steady period (fork + _exit shows half its time as user). "
           "Elapsed time is the steadier measure; both are given.",
           "- Each cell: median over the rounds, ± the spread (max-min)/median.",
           "", "## Headline", ""] + head
    for name, desc in LATENCY:
        if any(key[0] == name for key in runs):
            out += [f"## {name}: {desc}", "", "System time per iteration, µs.", ""]
            out += table(runs, kernels, smps, name, sys_us, "{:.1f}".format)
            out += ["Elapsed guest time per iteration, µs.", ""]
            out += table(runs, kernels, smps, name, wall_us, "{:.1f}".format)
    for name, desc in THROUGHPUT:
        if any(key[0] == name for key in runs):
            out += [f"## {name}: {desc}", "", "Operations per second of guest time.", ""]
            out += table(runs, kernels, smps, name, rate,
                         lambda v: f"{v:.0f}" if v >= 100 else f"{v:.2f}")
    out += ["## Per-CPU memory of idle single-threaded processes", "",
            "Growth of `Percpu:` in /proc/meminfo with the idle processes alive, kB.", "",
            "| -smp | procs | " + " | ".join(LABEL[k] for k in kernels) + " |",
            "|---|---|" + "---|" * len(kernels)]
    same = []
    for smp in smps:
        procs, cells = "-", []
        for k in kernels:
            rs = runs.get(("idle", k, smp), [])
            if not rs:
                cells.append("-")
                continue
            procs = rs[0]["procs"]
            cells.append(str(int(med([percpu_growth_kb(r) for r in rs]))))
        out.append(f"| {smp} | {procs} | " + " | ".join(cells) + " |")
        if "patched" in kernels and "ideal" in kernels:
            same.append(cells[kernels.index("patched")] == cells[kernels.index("ideal")])
    out.append("")
    if same:
        out += [("At every -smp, the patched kernel grows exactly as much as `ideal`, which has "
                 if all(same) else "The patched kernel does not always grow as much as `ideal`, which has ")
                + "no per-CPU rss_stat at all: what it still grows by is other per-mm per-CPU "
                "memory (mm_cid with CONFIG_SCHED_MM_CID, from `mm_init()`).", ""]
    ups = [(key, rs) for key, rs in runs.items() if key[0].startswith("vmstat_")]
    if ups:
        out += ["## rss_stat upgrades", "",
                "`/proc/vmstat` at the end of a run (boot and all workloads).", "",
                "| kernel | -smp | counter | value (median) |", "|---|---|---|---|"]
        for (name, k, smp), rs in sorted(ups):
            out.append(f"| {k} | {smp} | {name[7:]} | {int(med([int(r['value']) for r in rs]))} |")
        out.append("")
    perf = [p.split("=", 1) for p in a.perf]
    out += perf_section(perf, kernels, a.folded_dir)
    out += ["## Plots", ""] + [f"![{p}]({p}.svg)" + "\n" for p in
                                 ("exec-sys", "exec-elapsed", "shloop-sys", "shloop-elapsed")]
    os.makedirs(a.outdir, exist_ok=True)
    with open(os.path.join(a.outdir, "bench.md"), "w") as f:
        f.write("\n".join(out))
    with open(os.path.join(a.outdir, "headline.md"), "w") as f:
        f.write("\n".join(head))
    plot(runs, kernels, smps, a.outdir)


if __name__ == "__main__":
    main()
