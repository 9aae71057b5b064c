#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the raw results of scripts/bench.sh into results/bench.md, the
README's headline table (results/headline.md, and the block between the
bench markers of README.md with --readme), SVG plots, and the perf profile
tables with their folded stacks."""
import argparse
import collections
import glob
import os
import re
import statistics
import subprocess

ORDER = ["base", "patched", "lazyoff", "ideal", "nocid", "cache"]
LABEL = {"base": "base", "patched": "patched", "lazyoff": "lazyoff",
         "ideal": "ideal", "nocid": "nocid", "cache": "cache"}
WHAT = {
    "base": "Linux as it is: per-CPU rss_stat allocated in mm_init(), summed and freed in __mmdrop()",
    "patched": "the base with the series (patches/series): rss_stat lazy until the mm is shared",
    "lazyoff": "the patched kernel booted with lazy_rss_stat=off (bench-only switch): every mm upgraded "
               "in mm_init(), that is, the base's cost in the patched binary",
    "ideal": "bench-only floor: rss_stat as plain atomics, no per-CPU memory for it at all",
    "nocid": "bench-only floor of all per-mm per-CPU work: ideal without mm_cid (SCHED_MM_CID off)",
    "cache": "the reviewers' alternative, bench-only: the base keeping the per-CPU rss_stat memory of "
             "freed mms on a free list (64 entries) for the next mm, zeroed at teardown",
}
# Per-process workloads: time per operation.
LATENCY = [
    ("exec", "fork + exec of a static /bin/true + wait (lat_proc exec)"),
    ("shloop", "bash loop of /bin/true, pinned to CPU 0 (the regression report's loop)"),
    ("exit", "fork + _exit + wait (lat_proc fork)"),
    ("sh", "fork + /bin/sh -c true + wait (lat_proc shell)"),
    ("thread", "fork a child that starts and joins one thread (thread spawn: the upgrade)"),
    ("threxit", "fork a child with a thread pinned to every online CPU, each faulting 16 pages, "
                "then the child exits (threaded exit); per process"),
]
# Per-CPU workloads, where all possible CPUs are online: operations per second.
THROUGHPUT = [
    ("pf_threads", "page_fault1, threads: one per CPU in one process, 16 MiB each (faults/s)"),
    ("pf_procs", "page_fault1, processes: one per CPU, 16 MiB each (faults/s)"),
    ("execrate", "one worker per CPU re-execing a static binary (execs/s)"),
]
# Ratio columns of the per-workload tables.
RATIOS = [("patched", "base"), ("patched", "ideal"), ("lazyoff", "base"),
          ("cache", "base"), ("nocid", "base")]
IDLE_LEAVES = ("pv_native_safe_halt", "native_safe_halt", "default_idle", "acpi_safe_halt",
               "cpu_idle_poll", "poll_idle", "intel_idle")
SUMS = ("__percpu_counter_sum", "percpu_counter_sum_many", "__lazy_percpu_counters_sum",
        "__lazy_percpu_counter_sum")


def has(frames, *names):
    return any(f in names for f in frames)


# Rows of the perf tables: (label, predicate on the call chain, root first).
PERF_ROWS = [
    ("mm_init", lambda fr: has(fr, "mm_init")),
    ("pcpu_alloc* (all callers)", lambda fr: any(f.startswith("pcpu_alloc") for f in fr)),
    ("free_percpu", lambda fr: has(fr, "free_percpu")),
    ("percpu_counter_*", lambda fr: any(f.startswith(("percpu_counter_", "__percpu_counter_")) for f in fr)),
    ("lazy_percpu_counter*", lambda fr: any("lazy_percpu_counter" in f for f in fr)),
    ("__mmdrop", lambda fr: has(fr, "__mmdrop")),
    ("rss sums in __mmdrop (check_mm)", lambda fr: has(fr, "__mmdrop") and has(fr, *SUMS)),
    ("exit_mmap", lambda fr: has(fr, "exit_mmap")),
]


def parse(path):
    runs = collections.defaultdict(list)   # (name, kernel, (smp, possible)) -> [dict]
    for line in open(path):
        f = dict(kv.split("=", 1) for kv in line.split())
        runs[(f["name"], f["kernel"], (int(f["smp"]), int(f["possible"])))].append(f)
    return runs


def med(xs):
    return statistics.median(xs)


def spread(xs):
    m = med(xs)
    return 100.0 * (max(xs) - min(xs)) / m if m else 0.0


def per_op_us(field):
    return lambda r: 1e6 * float(r[field]) / int(r["iters"])


wall_us, sys_us, exit_us = per_op_us("wall_s"), per_op_us("sys_s"), per_op_us("exit_s")


def rate(r):
    return int(r["iters"]) / float(r["wall_s"])


def percpu_growth_kb(r):
    return int(r["percpu_kb_after"]) - int(r["percpu_kb_before"])


def values(runs, name, k, cell, fn):
    return [fn(r) for r in runs.get((name, k, cell), [])]


def medians(runs, kernels, name, cell, fn):
    return {k: med(xs) for k in kernels if (xs := values(runs, name, k, cell, fn))}


def ratio(val, a, b):
    return f"{val[a] / val[b]:.3f}" if a in val and b in val and val[b] else "-"


def cell_label(cell):
    return f"{cell[0]}/{cell[1]}"


def table(runs, kernels, cells, name, fn, fmt, first="online/possible"):
    """One row per cell: each kernel's median ± spread, then the ratios."""
    pairs = [(a, b) for a, b in RATIOS if a in kernels and b in kernels]
    out = [f"| {first} | " + " | ".join(LABEL[k] for k in kernels) + " | "
           + " | ".join(f"{a}/{b}" for a, b in pairs) + " |",
           "|" + "---|" * (1 + len(kernels) + len(pairs))]
    for cell in cells:
        val = medians(runs, kernels, name, cell, fn)
        if not val:
            continue
        cells_ = [f"{fmt(val[k])} ±{spread(values(runs, name, k, cell, fn)):.1f}%"
                  if k in val else "-" for k in kernels]
        out.append(f"| {cell_label(cell)} | " + " | ".join(cells_ + [ratio(val, a, b) for a, b in pairs]) + " |")
    return out + [""]


def alternatives(runs, kernels, cell):
    """Every workload at one cell: base in µs, the others relative to it."""
    others = [k for k in kernels if k != "base"]
    extra = [p for p in (("cache", "patched"), ("patched", "ideal")) if p[0] in kernels and p[1] in kernels]
    out = [f"**{cell[0]} online, {cell[1]} possible CPUs.** Elapsed time per operation: base in µs, "
           "the other kernels relative to base (below 1 is faster).", "",
           "| workload | base, µs | " + " | ".join(f"{k}/base" for k in others) + " | "
           + " | ".join(f"{a}/{b}" for a, b in extra) + " |",
           "|---|---|" + "---|" * (len(others) + len(extra))]
    rows = [(n, wall_us) for n, _ in LATENCY] + [("threxit exit only", exit_us)]
    for name, fn in rows:
        key = "threxit" if name.startswith("threxit") else name
        val = medians(runs, kernels, key, cell, fn)
        if "base" not in val:
            continue
        out.append(f"| `{name}` | {val['base']:.1f} | "
                   + " | ".join([ratio(val, k, "base") for k in others] + [ratio(val, a, b) for a, b in extra]) + " |")
    return out + [""]


def idle_table(runs, kernels, cells):
    out = ["| online/possible | " + " | ".join(LABEL[k] for k in kernels) + " |",
           "|---|" + "---|" * len(kernels)]
    for cell in cells:
        val = medians(runs, kernels, "idle", cell, percpu_growth_kb)
        if val:
            out.append(f"| {cell_label(cell)} | " + " | ".join(
                f"+{int(val[k])}" if k in val else "-" for k in kernels) + " |")
    return out + [""]


def key_cells(cells):
    """The cells the headline and the answers quote: (narrow, wide, big):
    the most possible CPUs (the fewest online among those), the same number
    online with the fewest possible, and the most online CPUs."""
    wide = max(cells, key=lambda c: (c[1], -c[0]))
    narrow = min((c for c in cells if c[0] == wide[0]), key=lambda c: c[1])
    return narrow, wide, max(cells)


def headline(runs, kernels, cells, setup):
    """The README block: the possible-CPU result and the largest -smp."""
    narrow, wide, big = key_cells(cells)
    rows = [(f"fork+exec (`exec`), {cell_label(c)} CPUs, µs", "exec", c, wall_us, "{:.1f}")
            for c in dict.fromkeys([narrow, wide, big])]
    rows += [(f"bash loop (`shloop`), {cell_label(c)} CPUs, µs", "shloop", c, wall_us, "{:.1f}")
             for c in dict.fromkeys([wide, big])]
    rows += [(f"fork + one thread (`thread`), {cell_label(wide)} CPUs, µs", "thread", wide, wall_us, "{:.1f}"),
             (f"threaded exit (`threxit`), {cell_label(big)} CPUs, µs", "threxit", big, wall_us, "{:.1f}"),
             (f"`Percpu:` growth, 1000 idle processes, {cell_label(wide)} CPUs, kB", "idle", wide,
              percpu_growth_kb, "+{:.0f}")]
    ratios = [p for p in (("patched", "base"), ("patched", "ideal")) if p[0] in kernels and p[1] in kernels]
    out = []
    ex = medians(runs, kernels, "exec", wide, wall_us)
    if all(k in ex for k in ("base", "patched", "ideal")):
        out += [f"**With {wide[0]} CPUs online of {wide[1]} possible, a fork+exec costs "
                f"{100 * (1 - ex['patched'] / ex['base']):.1f}% less with the series than without "
                f"(patched/base {ratio(ex, 'patched', 'base')}), within "
                f"{100 * abs(ex['patched'] / ex['ideal'] - 1):.1f}% of the ideal kernel with no per-CPU "
                "rss_stat at all.**", ""]
    out += [f"Elapsed guest time per operation (online/possible vCPUs), median of the rounds; {setup}.", "",
           "| | " + " | ".join([LABEL[k] for k in kernels] + [f"{a}/{b}" for a, b in ratios]) + " |",
           "|---|" + "---|" * (len(kernels) + len(ratios))]
    for label, name, cell, fn, fmt in rows:
        val = medians(runs, kernels, name, cell, fn)
        if val:
            out.append(f"| {label} | " + " | ".join([fmt.format(val[k]) if k in val else "-" for k in kernels]
                                                    + [ratio(val, a, b) if name != "idle" else ""
                                                       for a, b in ratios]) + " |")
    growth = []
    for k in kernels:
        a, b = medians(runs, [k], "exec", narrow, wall_us), medians(runs, [k], "exec", wide, wall_us)
        if k in a and k in b:
            growth.append(f"{LABEL[k]} {b[k] - a[k]:+.0f} µs ({100 * (b[k] / a[k] - 1):+.1f}%)")
    if growth and narrow != wide:
        out += ["", f"From {narrow[1]} to {wide[1]} possible CPUs ({wide[0]} online), a fork+exec costs: "
                + ", ".join(growth) + "."]
    return out + [""]


def answers(runs, kernels, cells):
    """The reviewers' questions, each answered with this run's numbers."""
    narrow, wide, big = key_cells(cells)

    def m(name, cell, fn=wall_us):
        return medians(runs, kernels, name, cell, fn)

    def r(val, a, b):
        return ratio(val, a, b) if a in val and b in val else "n/a"

    ex_n, ex_w, ex_b = m("exec", narrow), m("exec", wide), m("exec", big)
    out = ["## The reviewers' questions, answered from this run", "",
           "Elapsed guest time, ratios of medians; N/M = online/possible vCPUs. Ratios below 1: "
           "faster than the kernel in the denominator.", ""]
    if narrow != wide and "base" in ex_n and "base" in ex_w:
        grow = ", ".join(f"{k} {100 * (ex_w[k] / ex_n[k] - 1):+.1f}%" for k in kernels if k in ex_n and k in ex_w)
        out.append(f"- **Bigger boxes?** A fork+exec at {cell_label(wide)} against {cell_label(narrow)}: {grow}. "
                   f"At {cell_label(wide)}, patched/base {r(ex_w, 'patched', 'base')}, patched/ideal "
                   f"{r(ex_w, 'patched', 'ideal')}, the bash loop patched/base "
                   f"{r(m('shloop', wide), 'patched', 'base')}. The base pays for every possible CPU at "
                   "every mm; what patched and ideal still pay per possible CPU is mm_cid "
                   f"(nocid/ideal {r(ex_w, 'nocid', 'ideal')}).")
    if "cache" in kernels:
        out.append(f"- **Why not cache the per-CPU memory?** fork+exec cache/base {r(ex_w, 'cache', 'base')} and "
                   f"cache/patched {r(ex_w, 'cache', 'patched')} at {cell_label(wide)}; "
                   f"cache/patched {r(ex_b, 'cache', 'patched')} at {cell_label(big)}; exit of a threaded "
                   f"process cache/base {r(m('threxit', big), 'cache', 'base')} at {cell_label(big)}. "
                   "A cached block still has to be zeroed on every online CPU and summed at teardown, "
                   "and mm_cid's per-CPU memory is still initialised for every possible CPU.")
    if "nocid" in kernels:
        out.append(f"- **What about mm_cid?** nocid/ideal, the most a lazy mm_cid could add: fork+exec "
                   f"{r(ex_n, 'nocid', 'ideal')} at {cell_label(narrow)}, {r(ex_w, 'nocid', 'ideal')} at "
                   f"{cell_label(wide)}, {r(ex_b, 'nocid', 'ideal')} at {cell_label(big)}.")
    th, tx = m("thread", wide), m("threxit", big)
    pf = medians(runs, kernels, "pf_threads", big, rate)
    out.append(f"- **What about threaded processes?** Thread spawn (fork + one thread, the upgrade) "
               f"patched/base {r(th, 'patched', 'base')} at {cell_label(wide)}, "
               f"{r(m('thread', big), 'patched', 'base')} at {cell_label(big)}; exit of a process with a "
               f"thread on each of {big[0]} CPUs patched/base {r(tx, 'patched', 'base')}; threaded page "
               f"faults (throughput) patched/base {r(pf, 'patched', 'base')}.")
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


def perf_section(perf, kernels, build_dir):
    """perf: [(workload, kernel, cell, dir)] -> one table per workload and cell."""
    out = []
    groups = collections.OrderedDict()
    for wl, k, cell, d in perf:
        script = os.path.join(d, f"perf-{wl}.script")
        if os.path.exists(script):
            groups.setdefault((wl, cell), []).append((k, d, fold(script)))
    for (wl, cell), profs in groups.items():
        os.makedirs(build_dir, exist_ok=True)
        for k, _, stacks in profs:
            with open(os.path.join(build_dir, f"{wl}-{k}.folded"), "w") as f:
                for st, n in sorted(stacks.items()):
                    f.write(f"{st} {n}\n")
        systemwide = wl != "shloop"
        out += [f"### `{wl}` at {cell[0]} online, {cell[1]} possible CPUs", "",
                ("`perf record -a -g -e cpu-clock -F 1000` on all CPUs during the workload (the mm may be freed "
                 "on any CPU, by whichever task drops the last lazy-TLB reference). Samples whose call "
                 "chain contains the function, counted once per sample (idle samples left out); "
                 "the same number of processes on every kernel, so counts compare directly."
                 if systemwide else
                 "`perf record -g -e cpu-clock -F 1000` of the loop's processes. Share of all samples whose call "
                 "chain contains the function (*incl.*) and whose leaf it is (*self*)."),
                f"Folded stacks: `{os.path.relpath(build_dir)}/{wl}-<kernel>.folded`.", ""]
        ks = [k for k, _, _ in profs]
        if systemwide:
            out.append("| function | " + " | ".join(f"{LABEL[k]} samples | %" for k in ks) + " |")
            out.append("|---|" + "---|---|" * len(ks))
        else:
            out.append("| function | " + " | ".join(f"{LABEL[k]} incl. | self" for k in ks) + " |")
            out.append("|---|" + "---|---|" * len(ks))
        rows = {}
        totals = {}
        for k, _, stacks in profs:
            busy = {st: n for st, n in stacks.items()
                    if not (systemwide and st.split(";")[-1] in IDLE_LEAVES)}
            totals[k] = sum(busy.values())
            for label, pred in PERF_ROWS:
                incl = sum(n for st, n in busy.items() if pred(st.split(";")[1:]))
                slf = sum(n for st, n in busy.items() if pred(st.split(";")[-1:]))
                rows.setdefault(label, {})[k] = (incl, slf)
        for label, _ in PERF_ROWS:
            cells = []
            for k in ks:
                incl, slf = rows[label][k]
                t = totals[k] or 1
                cells.append(f"{incl} | {100 * incl / t:.2f}%" if systemwide
                             else f"{100 * incl / t:.2f}% | {100 * slf / t:.2f}%")
            out.append(f"| `{label}` | " + " | ".join(cells) + " |")
        out.append("| samples | " + " | ".join(f"{totals[k]} | " for k in ks) + " |")
        out.append("")
        if not systemwide:
            out += ["The top of each flat profile (`perf report --no-children --sort symbol`). "
                    "cpu-clock is an hrtimer, not an NMI: samples due while interrupts were off "
                    "land where they are turned back on (`*_unlock_irqrestore` and the like).", ""]
            for k, d, _ in profs:
                rep = os.path.join(d, f"perf-{wl}.report")
                if os.path.exists(rep):
                    top = [ln.rstrip() for ln in open(rep, errors="replace") if ln.strip()][:8]
                    out += [f"{LABEL[k]}:", "", "```"] + top + ["```", ""]
    return out


def plot(runs, kernels, cells, outdir, name, xcells, xlabel, base):
    data = os.path.join(outdir, f".{base}.dat")
    with open(data, "w") as f:
        for cell in xcells:
            row = [str(cell[1] if "possible" in xlabel else cell[0])]
            for k in kernels:
                xs = values(runs, name, k, cell, wall_us)
                row.append(f"{med(xs):.2f}" if xs else "NaN")
            f.write(" ".join(row) + "\n")
    lines = ", ".join(f"'{data}' using 1:{i + 2} with linespoints title '{LABEL[k]}'"
                      for i, k in enumerate(kernels))
    script = (f"set terminal svg size 720,440; set output '{outdir}/{base}.svg';"
              f"set title 'elapsed time per iteration: {name} (QEMU TCG, icount)';"
              f"set xlabel '{xlabel}'; set ylabel 'microseconds';"
              "set key top left; set grid;"
              f"plot {lines}")
    subprocess.run(["gnuplot", "-e", script], check=True, stderr=subprocess.DEVNULL)
    os.unlink(data)
    return base


def write_readme(readme, head):
    s = open(readme).read()
    a, b = "<!-- bench:begin -->", "<!-- bench:end -->"
    if a not in s or b not in s:
        raise SystemExit(f"{readme} has no {a} / {b} markers")
    s = s[:s.index(a) + len(a)] + "\n" + "\n".join(head).strip() + "\n" + s[s.index(b):]
    open(readme, "w").write(s)


TCG = """## What TCG cannot price

Under `-icount` every guest instruction costs the same virtual time (8 ns at
shift=3), and with one host thread running the vCPUs round-robin nothing
runs truly in parallel. So a cache miss, a locked read-modify-write, a
cache line bouncing between CPUs and a TLB miss cost one instruction each.
Which way that biases each comparison:

- **base against patched, ideal, nocid, cache (single-threaded fork/exec).**
  What the base pays per possible CPU is a memset of 16 bytes in each CPU's
  per-CPU unit (in `pcpu_alloc()`; mm_cid's init does the same for its own
  8 bytes), and per online CPU a read of that slot in each of check_mm()'s
  four sums. On hardware each of those touches a separate cache line, far
  from the others, often a miss; here each is a few instructions. TCG
  *understates* the per-CPU cost, so it understates what patched, ideal and
  nocid save, and what cache saves at allocation.
- **patched against ideal.** ideal's every rss update is a locked atomic;
  patched's owner path is a plain add. TCG prices both alike, which
  *flatters ideal*: on hardware, patched/ideal for single-threaded work
  would be lower than measured here.
- **cache.** Its free list sits behind one global spinlock, taken twice per
  mm; with no parallelism, contention on it never shows. At scale on
  hardware that lock (like `pcpu_lock` in the base's allocator) costs more
  than it does here: TCG *flatters cache* for concurrent fork/exit.
- **threaded processes.** Per-CPU counters exist because many CPUs updating
  one cache line is slow; TCG does not price that either, so `pf_threads`
  cannot show what per-CPU counting buys (ideal's shared atomics look as
  good as per-CPU ones here) and flatters ideal. For the threaded exit, the
  one-pass sum saves three walks of already-cached lines and three lock
  round trips; TCG charges those walks at full price, so it likely
  *overstates* that saving against the misses that both kernels pay once.

Ratios are compared within one run; absolute times are not hardware times.
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("outdir")
    ap.add_argument("--setup", required=True, help="one line: how the runs were made")
    ap.add_argument("--short-setup", required=True, help="the setup in a few words")
    ap.add_argument("--kernel-version", required=True)
    ap.add_argument("--perf", action="append", default=[], metavar="WORKLOAD:KERNEL:SMP:POSSIBLE=DIR")
    ap.add_argument("--folded-dir", required=True)
    ap.add_argument("--readme", help="README.md whose bench block gets the headline")
    a = ap.parse_args()
    runs = parse(a.raw)
    os.makedirs(a.outdir, exist_ok=True)
    kernels = [k for k in ORDER if any(key[1] == k for key in runs)]
    cells = sorted({key[2] for key in runs})
    sweep = [c for c in cells if c[0] == min(cells)[0]]          # fixed online, possible varies
    online = [c for c in cells if c[0] == c[1]]                   # all possible CPUs online
    head = headline(runs, kernels, cells, a.short_setup)
    out = ["# fork/exec/exit benchmarks: lazy rss_stat, the base and the alternatives", "",
           "Generated by `make bench` (scripts/bench.sh, tools/bench/); do not edit.", "",
           f"Linux {a.kernel_version}, Debian's linux-source-6.12. Kernels, all built from "
           "configs/guest.config (no debug options), each the base plus the patches that "
           "patches/bench-only/kernels lists:", ""]
    out += [f"- `{k}`: {WHAT[k]}." for k in kernels]
    out += ["",
            f"Setup: {a.setup}.", "",
            "- A cell N/M is N vCPUs online of M possible: QEMU `-smp N` and `possible_cpus=M` on the "
            "kernel command line (patches/bench-only/possible.patch lets it add CPU slots), so the other "
            "M-N are possible but not present, as the hot-pluggable vCPUs of a cloud VM are. `scripts/vm "
            "--maxcpus` (QEMU `-smp M`, kernel `maxcpus=N`: present but offline) gives the same guest "
            "times, but QEMU then emulates all M vCPUs and runs ten times slower on the host at 255. "
            "The per-mm per-CPU allocations are zeroed for every *possible* CPU; sums walk the online ones.",
            "- One boot per kernel and cell, kernels alternating within each cell; each boot runs the "
            "workloads in rounds. Under icount, guest time does not drift, so alternating boots gains "
            "nothing over rounds within a boot, and boots with many possible CPUs are slow on the host.",
            "- Single-process loops run pinned to CPU 0 (`numactl -C 0`), as in the regression report.",
            "- Address space layout randomisation is off in the guest (`randomize_va_space=0`). "
            "With it, each bash and each exec'd program gets new page-table shapes, which spread the "
            "bash loop by about 4% between runs (and cost about 10% of its time); without it, runs "
            "of one kernel agree within about 0.2%. The cost of the per-CPU work is the same either "
            "way; ratios are slightly larger than they would be with ASLR on.",
            "- Times are guest times under `-icount`: deterministic, but see *What TCG cannot price*. "
            "Elapsed time (CLOCK_MONOTONIC, or bash's `time` for the bash loop) is the measure; "
            "getrusage()'s user/system split is by tick samples, which beat with steady loops under icount.",
            "- Each cell: median over the rounds, ± the spread (max-min)/median. Percpu growth, rss_stat "
            "upgrades and perf profiles: first round only.", "",
            "## Headline", ""] + head + answers(runs, kernels, cells) + [TCG]
    plots = []
    if len(sweep) > 1:
        out += [f"## Possible CPUs: {sweep[0][0]} online, more possible", "",
                "The shape of many cloud VMs: a few vCPUs online, many hot-pluggable.", ""]
        for name in ("exec", "shloop"):
            p = plot(runs, kernels, sweep, a.outdir, name, sweep, f"possible CPUs ({sweep[0][0]} online)",
                     f"{name}-possible")
            out += [f"![{p}]({p}.svg)", ""]
            plots.append(p)
    if len(online) > 1:
        p = plot(runs, kernels, online, a.outdir, "exec", online, "online CPUs (-smp, all possible online)",
                 "exec-online")
        plots.append(p)
    out += ["## The alternatives", "",
            "Each kernel against base, in the same rounds: single-threaded fork/exec (`exec`, "
            "`shloop`, `exit`, `sh`) and threaded processes (`thread`: thread spawn; `threxit`: exit "
            "of a process with threads on every online CPU).", ""]
    for cell in dict.fromkeys(key_cells(cells)[1:]):
        out += alternatives(runs, kernels, cell)
    out += ["## Per workload", "", "Elapsed guest time per iteration, µs, for every cell.", ""]
    for name, desc in LATENCY:
        if any(key[0] == name for key in runs):
            out += [f"### {name}: {desc}", ""]
            out += table(runs, kernels, cells, name, wall_us, "{:.1f}".format)
            if name == "threxit":
                out += ["From the child's exit to its reaping by the parent, µs (the mm may be "
                        "freed later, by the last CPU to drop its lazy-TLB reference).", ""]
                out += table(runs, kernels, cells, name, exit_us, "{:.1f}".format)
    for name, desc in THROUGHPUT:
        if any(key[0] == name for key in runs):
            out += [f"### {name}: {desc}", "", "Operations per second of guest time.", ""]
            out += table(runs, kernels, cells, name, rate,
                         lambda v: f"{v:.0f}" if v >= 100 else f"{v:.2f}")
    out += ["## Per-CPU memory of idle single-threaded processes", "",
            "Growth of `Percpu:` in /proc/meminfo with 1000 idle processes alive, kB.", ""]
    out += idle_table(runs, kernels, cells)
    ups = sorted((key, rs) for key, rs in runs.items() if key[0].startswith("upgrades_"))
    if ups:
        out += ["## rss_stat upgrades", "",
                "Events of the tracepoint `kmem:rss_stat_upgrade` (kernels with the series: one per "
                "upgrade of a lazy mm) during the workload alone.", "",
                "| kernel | online/possible | workload | processes | upgrades | failed |", "|---|---|---|---|---|---|"]
        for (name, k, cell), rs in ups:
            r = rs[0]
            out.append(f"| {k} | {cell_label(cell)} | {name[9:]} | {r['procs']} | "
                       f"{int(med([int(x['events']) for x in rs]))} | {int(med([int(x['failed']) for x in rs]))} |")
        out.append("")
    perf = []
    for p in a.perf:
        key, d = p.split("=", 1)
        wl, k, smp, possible = key.split(":")
        perf.append((wl, k, (int(smp), int(possible)), d))
    if perf:
        out += ["## Where the time goes: perf profiles", ""] + perf_section(perf, kernels, a.folded_dir)
    if plots:
        out += ["## Plots", ""] + [f"![{p}]({p}.svg)\n" for p in plots]
    with open(os.path.join(a.outdir, "bench.md"), "w") as f:
        f.write("\n".join(out))
    with open(os.path.join(a.outdir, "headline.md"), "w") as f:
        f.write("\n".join(head))
    for svg in glob.glob(os.path.join(a.outdir, "*.svg")):
        if os.path.basename(svg)[:-4] not in plots:
            os.unlink(svg)
    if a.readme:
        write_readme(a.readme, head)


if __name__ == "__main__":
    main()
