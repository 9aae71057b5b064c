# SPDX-License-Identifier: GPL-2.0
"""The cache model of the bench report: per-operation instructions and
misses from the phases of the cache-model boots (name=cache lines, from
cache_marks.py), a modelled time, and the words around them.

Each workload ran its phases (the plan's: L, 3L, 2L and 6L times) between
marks, in one process after unmarked runs; per operation, each of the
plan's pairs (pair A: (M(3L) - M(L)) / 2L, pair B: (M(6L) - M(2L)) / 4L)
cancels what a run costs once (the marks' own processes in the bash
loop). The figure given is the mean of the pairs; how far apart they are
says how stable it is."""
from bench_stats import cell_label, wall_us
# make bench's MODEL_NS: ns per instruction, per L2 hit, per L2 miss.
MODEL_NS = (0.33, 5, 40)
# (label, field of the plugin's totals)
METRICS = [("instructions", "iaccess"), ("L1D misses", "dmiss"), ("L1I misses", "imiss"),
           ("L2 misses", "l2miss")]


def workloads(data):
    """The modelled workloads, in the order of their boot: [(name, what one
    operation is)]."""
    ws = sorted((w for w in data.plan["workloads"] if w["cache"] is not None), key=lambda w: w["cache"])
    return [(w["name"], w["op"]) for w in ws]


def pairs(data, k, cell, workload):
    """{field: (pair A, pair B)} per operation, or None when the run lacks
    a phase."""
    by = {int(r["iters"]): r for r in data.runs.get(("cache", k, cell), []) if r["workload"] == workload}
    plan = data.plan["cache"]
    lo = plan["L"]
    if sorted(by) != sorted(k * lo for k in plan["phases"]):
        return None
    fields = [f for _, f in METRICS] + ["l2access"]
    return {f: tuple((int(by[b * lo][f]) - int(by[a * lo][f])) / ((b - a) * lo) for a, b in plan["pairs"])
            for f in fields}


def per_op(data, k, cell, workload):
    p = pairs(data, k, cell, workload)
    return {f: (a + b) / 2 for f, (a, b) in p.items()} if p else None


def gap(data, ks, cell, workload, f):
    """The largest |A - B| over the kernels ks, against the largest figure
    of them, in percent: how far one row's figures can be trusted (a
    figure near zero beside a large one is not a gap of its own)."""
    ps = [pairs(data, k, cell, workload)[f] for k in ks]
    top = max(abs(a + b) / 2 for a, b in ps)
    return 100.0 * max(abs(a - b) for a, b in ps) / top if top else 0.0


def model_us(op, ns):
    """Modelled time of one operation, µs: instructions, L1 misses that hit
    L2, L2 misses, at ns = (insn, l2 hit, l2 miss) each."""
    insn, hit, miss = ns
    return (op["iaccess"] * insn + (op["l2access"] - op["l2miss"]) * hit + op["l2miss"] * miss) / 1000.0


def cells(data):
    return sorted({key[2] for key in data.runs if key[0] == "cache"})


def measured(data, kernels, cells):
    """The kernels with a cache-model run in one of cells."""
    return [k for k in kernels if any(per_op(data, k, c, "exec") for c in cells)]


def miss_table(data, kernels, cell):
    ks = measured(data, kernels, [cell])
    c = data.comparisons(ks)
    ref, cand = c.reference, c.candidate
    diff = bool(ref and cand)
    out = ["| per operation | " + " | ".join(ks) + (f" | {cand} - {ref}" if diff else "")
           + " | pairs A, B apart |", "|" + "---|" * (len(ks) + 2 + diff)]
    for name, what in workloads(data):
        ops = {k: per_op(data, k, cell, name) for k in ks}
        if not all(ops.values()):
            continue
        for label, f in METRICS:
            apart = gap(data, ks, cell, name, f)
            row = [f"{what} (`{name}`), {label}"] + [f"{ops[k][f]:,.0f}" for k in ks]
            if diff:
                row.append(f"{ops[cand][f] - ops[ref][f]:+,.0f}")
            out.append("| " + " | ".join(row + [f"{apart:.1f}%"]) + " |")
    return out + [""]


def model_table(data, kernels, cell, ns):
    ks = measured(data, kernels, [cell])
    rps = data.comparisons(ks).floor_pairs()
    out = ["| µs per operation | " + " | ".join(f"{k} (model)" for k in ks)
           + "".join(f" | {a}/{b} model | {a}/{b} icount" for a, b in rps) + " |",
           "|" + "---|" * (1 + len(ks) + 2 * len(rps))]
    for name, what in workloads(data):
        ops = {k: per_op(data, k, cell, name) for k in ks}
        if not all(ops.values()):
            continue
        mod = {k: model_us(ops[k], ns) for k in ks}
        ic = data.medians(ks, name, cell, wall_us)
        row = [f"{what} (`{name}`)"] + [f"{mod[k]:.1f}" for k in ks]
        for a, b in rps:
            row += [f"{mod[a] / mod[b]:.3f}", f"{ic[a] / ic[b]:.3f}" if a in ic and b in ic else "-"]
        out.append("| " + " | ".join(row) + " |")
    return out + [""]


def count(x):
    """A per-operation count for prose: a mean of differences below zero is
    zero within the run's noise."""
    return f"{x:,.0f}" if x >= 0 else "about 0"


def headline(data, kernels, ns):
    """One sentence for the README: what the series (the candidate) saves
    per fork+exec in the max_possible cell, in misses, and the modelled
    ratio."""
    cell = data.roles["max_possible"]
    c = data.comparisons(kernels)
    ref, cand = c.reference, c.candidate
    if not ref or not cand:
        return []
    b, p = per_op(data, ref, cell, "exec"), per_op(data, cand, cell, "exec")
    if not b or not p:
        return []
    ic = data.medians([ref, cand], "exec", cell, wall_us)
    mod = model_us(p, ns) / model_us(b, ns)
    apart = max(gap(data, [ref, cand], cell, "exec", f) for f in ("l2miss", "dmiss"))

    def saves(f, what):
        d = b[f] - max(p[f], 0)
        return f"{d:,.0f} {what} fewer" if d >= 0 else f"{-d:,.0f} {what} more"
    return [f"Cache model (QEMU's cache plugin, a Sapphire Rapids core's L1 and L2 per vCPU): at "
            f"{cell_label(cell)}, a fork+exec takes {count(b['l2miss'])} L2 misses on {ref} and "
            f"{count(p['l2miss'])} on {cand}, so {saves('l2miss', 'L2 misses')} and "
            f"{saves('dmiss', 'L1D misses')} per fork+exec with the series (the two run-length pairs "
            f"{apart:.1f}% apart at most); modelled time {cand}/{ref} {mod:.3f} "
            f"(icount {ic[cand] / ic[ref]:.3f}).", ""]


def aliasing(data, kernels, cs):
    """Why the base's L2 misses are what they are, from the per-CPU unit
    size that its guests' kernels printed and the modelled L2's set period
    (bytes of physical address after which its sets repeat) and ways, which
    bench.sh adds from its plugin arguments (name=percpu_unit lines)."""
    cell = data.roles["max_possible"]
    ref = data.comparisons(kernels).reference
    units = data.runs.get(("percpu_unit", ref, cell))
    b = per_op(data, ref, cell, "exec") if ref and cell in cs else None
    if not units or not b:
        return []
    unit, period, ways = (int(units[0][f]) for f in ("bytes", "l2_period", "l2_ways"))
    if unit % period:
        return []
    return [f"**How to read the {ref}'s L2 misses.** In the {ref}'s guest at {cell_label(cell)} the "
            f"per-CPU allocator's units are {unit // 1024} KiB apart (the kernel's `percpu: Embedded "
            f"... u{unit}` line), a multiple of the modelled L2's {period // 1024} KiB set "
            "period, so the copies of an object of the first per-CPU chunk (whose units are "
            "contiguous) on all possible CPUs fall into one L2 set, and one L1D set: a walk over more "
            f"possible CPUs than a set has ways ({ways}) misses on every CPU, and so would one on "
            "any L2 indexed by physical address bits whose set period divides the unit. At "
            f"{cell_label(cell)} a fork+exec on the {ref} takes {b['l2miss'] / cell[1]:.1f} L2 misses "
            "per possible CPU: it zeroes two per-CPU objects (rss_stat's counters, mm_cid's slots) "
            "for each of its two mms and sets the cid slots in mm_init_cid() for each and again in "
            "exec_mmap(), seven walks. How many lines a walk touches depends on where the allocator "
            "placed the object in that boot: both objects are 16 bytes, aligned to 4 (the counters) or "
            "8 (`struct mm_cid`), and across a line boundary one takes two lines on every CPU, so "
            "that the base's figure can differ from boot to boot. All phases "
            "of a workload run in one process, so that the operations' objects keep their place "
            "within a boot.", ""]


def section(data, kernels, ns, model):
    """The report's cache-model section: how to read it, the tables per
    cell, what it leaves out."""
    cs = cells(data)
    if not cs:
        return [], []
    plan = data.plan["cache"]
    lo = plan["L"]
    lengths = [str(k * lo) for k in plan["phases"]]
    said = [f"pair {chr(ord('A') + i)} = (M({b * lo}) - M({a * lo})) / {(b - a) * lo}"
            for i, (a, b) in enumerate(plan["pairs"])]
    out = ["## Cache model: misses per operation and a modelled time", "",
           f"Model: {model}. Each kernel boots once more in each of these cells, under the "
           "plugin, and runs each workload between two marks (scripts/bench/mark.c: an instruction the "
           f"patched plugin answers by printing its totals) at {', '.join(lengths[:-1])} and {lengths[-1]} "
           f"iterations, in one process after {plan['warmup'] * lo} unmarked ones. Per operation: "
           f"{', '.join(said)}, which cancels what a run costs once; the tables "
           "give the mean of the pairs, and the last column the largest gap between them over the "
           "kernels, against the row's largest figure (a row whose pairs are far apart is not a "
           "measurement; L2 rows are the least steady: the page allocator now and then hands out "
           "pages that have left the L2, and clear_page() then misses on all 64 lines of each, at "
           "random points of a run). The figures are those of the caches of vCPU 0, where every modelled "
           "workload runs pinned, user and kernel, instructions too (the plugin's instruction "
           "fetches); the other vCPUs' caches, which see their own idle ticks and periodic work by "
           "the phase's length in guest time, not by its operations, are left out.", "",
           "Modelled time = instructions x %s ns + L1 misses that hit L2 x %s ns + L2 misses x %s ns "
           "(MODEL_NS, make bench MODEL_NS=\"INSN L2HIT L2MISS\"): one instruction a cycle at 3 GHz, "
           "Sapphire Rapids' 16-cycle L2, an L2 miss served by its L3 or memory. It is a model, not a "
           "measurement: read its ratios beside the icount ones, not its microseconds." % tuple(
               f"{x:g}" for x in ns), ""]
    for cell in cs:
        out += [f"### {cell_label(cell)} (online/possible vCPUs)", ""] + miss_table(data, kernels, cell)
        out += model_table(data, kernels, cell, ns)
    out += aliasing(data, kernels, cs) + ["![cache-l2](cache-l2.svg)", "", UNPRICED]
    return out, [(cs, "cache-l2")]


UNPRICED = """### What the model leaves out

- **Coherence between CPUs.** Each vCPU's caches are private, and no store
  invalidates another vCPU's copy. Every modelled workload runs pinned to
  CPU 0 (its threads too), so no line of theirs moves between CPUs; the
  threaded exit over all CPUs (`threxit`), where lines would, is not
  modelled.
- **Locked instructions.** A `lock`-prefixed read-modify-write costs one
  instruction here, some 20 cycles on a real core. The floors (`ideal`,
  `nocid`) update rss_stat with atomics, the patched kernel's owner with
  plain adds; pricing them would lower patched/ideal and patched/nocid.
  The base's per-CPU allocator takes a mutex and a spinlock for each of
  an mm's two allocations, the patched kernel neither for a lazy mm:
  patched/base would fall too.
- **TLB and page walks.** No TLB is modelled, and the page walker's and
  accessed/dirty bits' memory traffic is not seen (only the guest's loads,
  stores and fetches are). Each possible CPU's per-CPU unit lies in pages
  of its own, so the base's zeroing at each allocation touches a page per
  possible CPU (255 at 4/255; when the chunk is mapped with 4 KiB pages,
  a likely TLB miss each), and check_mm()'s sums at teardown one per
  online CPU; a lazy mm on the patched kernel touches none. Pricing it
  would lower patched/base further at many possible CPUs.
- **The rest of a memory system.** No hardware prefetcher and no overlap
  of misses: each miss costs its full latency, which over-prices
  streaming (a page being cleared or copied: 64 misses, where a core's
  prefetchers hide most). No write-backs. There is no shared last-level
  cache: every L2 miss costs the same third MODEL_NS figure, whether the
  line is in another core's L3 slice or in DRAM. The L2 is filled only
  by L1 misses and replaced by exact LRU; instruction lines (host
  addresses of guest RAM) and data lines (guest-physical) never share an
  L2 line.
- **The guest CPU.** The guests are QEMU's `qemu64` CPU, as in the icount
  runs, so the kernel's code paths (string instructions, alternatives,
  mitigations) are those it picks for that CPU, not for a Sapphire
  Rapids. A `rep`-prefixed string instruction counts as one instruction
  (scripts/bench/cache-marker.patch), each of its data accesses as one.
- **Other vCPUs.** Only vCPU 0's caches count: work that an operation
  leaves to another CPU (an unbound kworker, say) is not seen, and vCPU
  0's own ticks and periodic work during a phase are charged to its
  operations, in proportion to the phase's length in guest time (the
  other vCPUs' would be too, 63 of them at 64/64, and would charge a
  slower kernel more for the same work).
"""
