# SPDX-License-Identifier: GPL-2.0
"""perf profiles of the bench report: perf script output folded into
stacks, and a table per workload and cell of the functions that matter."""
import collections
import os
import re

IDLE_LEAVES = ("pv_native_safe_halt", "native_safe_halt", "default_idle", "acpi_safe_halt",
               "cpu_idle_poll", "poll_idle", "intel_idle")
# The rss sums that leave a frame: a lazy set's one-pass sum is inline (in
# check_mm()), only its per-CPU path, __owned_percpu_counters_sum_many(), shows.
SUMS = ("__percpu_counter_sum", "percpu_counter_sum_many", "__owned_percpu_counters_sum_many",
        "owned_percpu_counter_sum")


def has(frames, *names):
    return any(f in names for f in frames)


# Rows of the perf tables: (label, predicate on the call chain, root first).
PERF_ROWS = [
    ("mm_init", lambda fr: has(fr, "mm_init")),
    ("pcpu_alloc* (all callers)", lambda fr: any(f.startswith("pcpu_alloc") for f in fr)),
    ("free_percpu", lambda fr: has(fr, "free_percpu")),
    ("percpu_counter_*", lambda fr: any(f.startswith(("percpu_counter_", "__percpu_counter_")) for f in fr)),
    ("owned_percpu_counter*", lambda fr: any("owned_percpu_counter" in f for f in fr)),
    ("mm_cid per-CPU state (mm_init_cid, sched_mm_cid_alloc_shared)",
     lambda fr: has(fr, "mm_init_cid", "sched_mm_cid_alloc_shared")),
    ("__mmdrop", lambda fr: has(fr, "__mmdrop")),
    ("rss sums in __mmdrop (check_mm)", lambda fr: has(fr, "__mmdrop") and has(fr, *SUMS)),
    ("exit_mmap", lambda fr: has(fr, "exit_mmap")),
]


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


def perf_section(perf, build_dir, own):
    """perf: [(workload, kernel, cell, dir)] -> one table per workload and
    cell; own: the workloads profiled in their own processes (the plan's),
    the others on all CPUs."""
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
        systemwide = wl not in own
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
            out.append("| function | " + " | ".join(f"{k} samples | %" for k in ks) + " |")
            out.append("|---|" + "---|---|" * len(ks))
        else:
            out.append("| function | " + " | ".join(f"{k} incl. | self" for k in ks) + " |")
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
                    out += [f"{k}:", "", "```"] + top + ["```", ""]
    return out
