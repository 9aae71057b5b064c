#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The bench plan: the one owner of make bench's facts. The cells and
their roles, the workloads (the guest command of each, its iteration rule,
unit, description, the cells it runs in, once or every round), the cache
model's phase schedule and geometry, the guest memory rule, the time
estimate's constants, and which kernels of the registry ./kernels are
compared with which (their ROLE column).

scripts/bench/bench.sh asks it for the plan of a run (plan.json, saved beside
the raw results, which the report reads) and for the command files that
the guest's runner (scripts/guest/bench-guest) executes; scripts/lib/bench.sh
(bench_vm, cell_ok), scripts/bench/insn-profile.sh and scripts/bench/irqsoff.sh ask it
for the facts they share with make bench. Test: test_plan.py.

A workload is one Workload(...) entry of WORKLOADS, in the order a round
runs them (the order matters: each leaves the page allocator and the slabs
as the next one finds them).

usage: plan.py make --registry FILE [--quick] [--cells "N/M ..."]
                    [--kernels "NAME ..."] [--iters N] [--reps N]
                    [--cache 0|1] [--line NAME --line-desc TEXT
                    --base VERSION --source TEXT] -o PLAN.json
       plan.py get PLAN.json KEY      what bash needs (see get())
       plan.py stage PLAN.json DIR    the command files, DIR/bench/*.run
       plan.py show PLAN.json         the boots and their guest commands
       plan.py cell N/M               "ONLINE POSSIBLE MEM_MIB", or an error
       plan.py before WORKLOAD        the workloads before it in a round
       plan.py run-file --iters N --cell N/M WORKLOAD...
                                      a command file of one round
       plan.py insn --iters N WORKLOAD
                                      "OPS<TAB>guest command" of insn-profile
       plan.py cells ROLE...          the full sweep's cells with these roles
Errors: "error: ..." on stderr, exit status 2 (scripts/lib/core.sh's die)."""
import json
import re
import shlex
import sys
from typing import Callable, NamedTuple, Optional

# ---- Cells: N/M, N online of M possible vCPUs -------------------------------

MAX_CPUS = 255          # the pc machine's vCPUs; the guest kernels have NR_CPUS=256


class Cell(NamedTuple):
    online: int
    possible: int

    def __str__(self):
        return f"{self.online}/{self.possible}"


def parse_cell(text):
    """'4/255' -> Cell(4, 255); ValueError unless 1 <= N <= M <= 255."""
    m = re.fullmatch(r"([1-9][0-9]*)/([1-9][0-9]*)", text)
    if not m or not 1 <= int(m[1]) <= int(m[2]) <= MAX_CPUS:
        raise ValueError(f"'{text}' is not ONLINE/POSSIBLE vCPUs with 1 <= ONLINE <= POSSIBLE <= {MAX_CPUS}")
    return Cell(int(m[1]), int(m[2]))


def parse_cells(text):
    cells = [parse_cell(c) for c in text.split()]
    if not cells:
        raise ValueError("no cell")
    for c in cells:
        if cells.count(c) > 1:
            raise ValueError(f"'{c}' given twice")
    return cells


# The roles of a run's cells: what the report compares, and where the
# cache model and the profile run. The first cell has a role too (FIRST).
ROLES = {
    "max_possible": "the most possible CPUs (the fewest online among those)",
    "min_possible": "as many online as max_possible, the fewest possible",
    "max_online": "the most online CPUs (the most possible among those)",
}
FIRST = "first"


def cell_roles(cells):
    """{role: cell} of the cells of a run."""
    most = max(cells, key=lambda c: (c.possible, -c.online))
    return {"max_possible": most,
            "min_possible": min((c for c in cells if c.online == most.online), key=lambda c: c.possible),
            "max_online": max(cells, key=lambda c: (c.online, c.possible))}


# ---- The sweeps ---------------------------------------------------------------

FULL_CELLS = "4/4 4/64 4/128 4/255 8/8 32/32 64/64"
FULL_REPS = 3
QUICK_CELLS = "4/4 4/255"
QUICK_REPS = 2
ITERS = 500
# The cache model's cells (CACHE=1, the default): each kernel boots once
# more in them, under QEMU's cache plugin.
CACHE_ROLES = ("max_possible", "max_online")

# ---- The guest ----------------------------------------------------------------


def memory_mib(cell):
    """Guest RAM: 1 GiB and 64 MiB per online vCPU."""
    return 1024 + 64 * cell.online


MEMORY_WORDS = "-m 1 GiB + 64 MiB per online vCPU"
QEMU_MIB = 512          # host memory of a guest's QEMU and cache plugin, beyond its RAM


def phase_length(iters):
    """L, the cache model's (and insn-profile's) unit run: ITERS/5, at least 1."""
    return max(1, iters // 5)


# ---- The workloads ------------------------------------------------------------
# where: "every" cell, "all_online" (every possible CPU online), FIRST, or a
# cell role. unit: "µs" per operation, "ms" per run, "/s" operations per
# second, "kB", or "" (no table of its own). table: the order of the
# report's tables (None: none). cache: the order in the cache model's boot
# (None: not modelled), whose phase command runs the workload at the
# lengths of cache_lengths() in one process, between marks.

PIN = "numactl -C 0"    # single-process loops on CPU 0, as in the regression report
PERF = "/opt/perf/perf"  # the base tree's perf (scripts/bench/perf-build.sh): perf bench


class Workload(NamedTuple):
    name: str
    command: Callable[[int, Cell], str]     # (ITERS, cell) -> the guest command line
    where: str = "every"
    once: bool = False                      # the first round only
    unit: str = "µs"
    table: Optional[int] = None
    describe: str = ""
    op: str = ""                            # one operation, in the cache model's tables
    cache: Optional[int] = None
    phase_command: Optional[Callable[[int], str]] = None    # (L) -> the cache model's command
    profile: str = ""                       # perf record of this workload's processes


def shloop_body(n):
    return f"for ((i=0;i<{n};i++)); do /bin/true; done"


def perf_bench(name, args, n, pin=True):
    """perf bench, its total time as one result line (bench-guest's perf_total)."""
    return f"{PIN + ' ' if pin else ''}{PERF} bench {args} | perf_total {name} {n}"


def forkbench_phases(mode):
    def command(l):
        lengths = ",".join(str(k * l) for k in (CACHE_WARMUP,) + CACHE_PHASES)
        return f"{PIN} forkbench -m {mode} {lengths} >/dev/null"
    return command


def shloop_phases(l):
    # One bash for all phases; the text of its program as it has always been.
    return (f'{PIN} bash -ec "for ((i=0;i<{CACHE_WARMUP}*{l};i++)); do /bin/true; done\n'
            f"\t\t\tfor k in {' '.join(map(str, CACHE_PHASES))}; do\n"
            f"\t\t\t\tmark; for ((i=0;i<k*{l};i++)); do /bin/true; done; mark\n"
            '\t\t\tdone"')


def upgrades(n):
    """Lazy mms made shared during n fork+exec and n processes starting a
    thread, on kernels with the tracepoint (the series)."""
    t = "/sys/kernel/tracing"
    return (f"t={t}; [ -d $t/events/kmem/mm_make_shared ] || exit 0; "
            "echo 1 >$t/events/kmem/mm_make_shared/enable; "
            "for w in exec thread; do : >$t/trace; "
            f"{PIN} forkbench $w {n} >/dev/null; "
            f"printf 'name=upgrades_%s procs=%s events=%s failed=%s\\n' \"$w\" {n} "
            "\"$(grep -c 'mm_make_shared:' $t/trace || true)\" "
            "\"$(grep -c 'mm_make_shared:.* err=-' $t/trace || true)\"; done; "
            "echo 0 >$t/events/kmem/mm_make_shared/enable")


WORKLOADS = [
    Workload("idle", lambda n, c: "forkbench idle 1000", once=True, unit="kB",
             describe="Percpu growth with 1000 idle processes alive"),
    # The regression report's loop, timed by bash's time keyword.
    Workload("shloop", lambda n, c: f"{PIN} bash -c \"TIMEFORMAT='name=shloop iters={n} wall_s=%3R "
             f"sys_s=%3S user_s=%3U'; time {{ {shloop_body(n)}; }}\" 2>&1", table=2,
             describe="bash loop of /bin/true, pinned to CPU 0 (the regression report's loop)",
             op="bash loop iteration", cache=2, phase_command=shloop_phases),
    Workload("exec", lambda n, c: f"{PIN} forkbench exec {n} /bin/true", table=1,
             describe="fork + exec of a static /bin/true + wait (lat_proc exec)",
             op="fork+exec", cache=1, phase_command=forkbench_phases("exec")),
    Workload("exit", lambda n, c: f"{PIN} forkbench exit {n}", table=3,
             describe="fork + _exit + wait (lat_proc fork)",
             op="fork+exit", cache=3, phase_command=forkbench_phases("exit")),
    Workload("sh", lambda n, c: f"{PIN} forkbench sh {n // 2}", table=4,
             describe="fork + /bin/sh -c true + wait (lat_proc shell)"),
    Workload("thread", lambda n, c: f"{PIN} forkbench thread {n}", table=5,
             describe="fork a child that starts and joins one thread (thread spawn: the upgrade)",
             op="thread spawn", cache=4, phase_command=forkbench_phases("thread")),
    Workload("threxit", lambda n, c: f"{PIN} forkbench threxit {n // 5}", table=6,
             describe="fork a child with a thread pinned to every online CPU, each faulting 16 pages, "
                      "then the child exits (threaded exit); per process"),
    # The kernel's own fork and exec benchmarks (tools/perf/bench/syscall.c).
    Workload("sysfork", lambda n, c: perf_bench("sysfork", f"syscall fork -l {n}", n), table=7,
             describe="perf bench syscall fork (the kernel's own, tools/perf of the base tree): fork + wait"),
    Workload("sysexec", lambda n, c: perf_bench("sysexec", f"syscall execve -l {n}", n), table=8,
             describe="perf bench syscall execve (the kernel's own): fork + execve of /bin/true + wait"),
    # The per-CPU workloads (page_fault1 with 16 MiB per CPU) and perf bench
    # sched, where every possible CPU is online.
    Workload("pf_threads", lambda n, c: "forkbench pf_threads 16", where="all_online", unit="/s", table=11,
             describe="page_fault1, threads: one per CPU in one process, 16 MiB each (faults/s)"),
    Workload("pf_procs", lambda n, c: "forkbench pf_procs 16", where="all_online", unit="/s", table=12,
             describe="page_fault1, processes: one per CPU, 16 MiB each (faults/s)"),
    Workload("execrate", lambda n, c: f"forkbench execrate {-(-n // c.online)}", where="all_online",
             unit="/s", table=13, describe="one worker per CPU re-execing a static binary (execs/s)"),
    # perf bench sched: "Total time" with 3 decimals (1 ms). At ITERS=500 at
    # 4/4: 20000 round trips take 1.6 s of guest time; a messaging run of
    # 100 loops, 5.8 s, from the start signal to the last of its 400
    # processes reaped, its result per run (iters=1). 10 loops took 1.1 s
    # and spread 1.5% at 4/4, 6% at 64/64.
    Workload("pipe", lambda n, c: perf_bench("pipe", f"sched pipe -l {n * 40}", n * 40), where="all_online",
             table=9, describe="perf bench sched pipe: two processes passing a token through a pipe, both on "
                               "CPU 0 (context switches); µs per round trip"),
    Workload("messaging", lambda n, c: perf_bench("messaging", f"sched messaging -p -g 10 -l {phase_length(n)}",
                                                   1, pin=False),
             where="all_online", unit="ms", table=10,
             describe="perf bench sched messaging -p -g 10: 10 groups of 20 senders and 20 receivers over "
                      "pipes, on every CPU, 100 loops: wakeups and context switches, and the exit of its 400 "
                      "processes (perf forks them before it starts its clock); ms per run"),
    Workload("upgrades", lambda n, c: upgrades(n), where=FIRST, once=True, unit="",
             describe="lazy mms made shared (tracepoint kmem:mm_make_shared)"),
    # No profile of the threaded exit: sampling every online vCPU at 64
    # vCPUs took more than 20 minutes of host time per boot, and what the
    # exit's sums cost under icount is their instruction count, which the
    # threxit times measure directly.
    Workload("perf:shloop", lambda n, c: f"profile shloop {PIN} bash -c '{shloop_body(n)}'",
             where="max_possible", once=True, unit="", profile="shloop",
             describe="perf record -e cpu-clock -g of the bash loop's own processes"),
]
BY_NAME = {w.name: w for w in WORKLOADS}

# The cache model's phases: each modelled workload runs L x CACHE_PHASES
# iterations, each between two marks, in one process after CACHE_WARMUP x L
# unmarked ones; the cost per operation is taken from the differences of
# CACHE_PAIRS (3L - L and 6L - 2L), which cancel what a run costs once.
CACHE_PHASES = (1, 3, 2, 6)
CACHE_WARMUP = 6
CACHE_PAIRS = ((1, 3), (2, 6))
# insn-profile: a warm-up of L, then L and 3L between marks: per operation
# (M(3L) - M(L)) / 2L.
INSN_RUNS = (1, 1, 3)
INSN_WORKLOADS = ("exit", "exec", "sh", "thread", "status")    # forkbench -m's modes

# The caches of a Sapphire Rapids core, per vCPU, LRU.
CACHES = {"d": (49152, 12, 64), "i": (32768, 8, 64), "l2": (2097152, 16, 64)}
CACHE_WORDS = ("caches per vCPU of a Sapphire Rapids core: L1D 48 KiB 12-way, L1I 32 KiB 8-way, "
               "L2 2 MiB 16-way, 64-byte lines, LRU")


def plugin_args():
    names = {"d": ("dcachesize", "dassoc", "dblksize"), "i": ("icachesize", "iassoc", "iblksize"),
             "l2": ("l2cachesize", "l2assoc", "l2blksize")}
    return ",".join(f"{n}={v}" for c, vals in CACHES.items() for n, v in zip(names[c], vals)) + ",evict=lru"


def runs_in(w, cell, cells, roles):
    if w.where == "every":
        return True
    if w.where == "all_online":
        return cell.online == cell.possible
    if w.where == FIRST:
        return cell == cells[0]
    return cell == roles[w.where]


def round_of(cell, cells, roles):
    """The workloads of a round in cell, in their order."""
    return [w for w in WORKLOADS if runs_in(w, cell, cells, roles)]


def every_cell():
    return [w for w in WORKLOADS if w.where == "every"]


def uses_perf(w):
    """Whether w needs the perf that make bench stages (insn-profile has none)."""
    return PERF in w.command(ITERS, Cell(1, 1))


def before(name):
    """The workloads that run before name in every cell's rounds (none
    when name is not one of them)."""
    names = [w.name for w in every_cell()]
    return names[:names.index(name)] if name in names else []


def run_lines(workloads, iters, cell, reps):
    """[(round, name, command)]: what bench-guest runs, in order."""
    return [(r, w.name, w.command(iters, cell)) for r in range(1, reps + 1) for w in workloads
            if r == 1 or not w.once]


def cache_workloads():
    return sorted((w for w in WORKLOADS if w.cache is not None), key=lambda w: w.cache)


def cache_lengths(l):
    return [k * l for k in CACHE_PHASES]


def cache_lines(iters):
    """The cache model's boot: one line a workload, which prints one
    name=cache_phase line a phase (phase P: marks 2P and 2P+1)."""
    l, out, p = phase_length(iters), [], 0
    for w in cache_workloads():
        said = []
        for n in cache_lengths(l):
            said.append(f'echo "name=cache_phase workload={w.name} iters={n} phase={p}"')
            p += 1
        out.append((1, f"cache:{w.name}", "; ".join([w.phase_command(l)] + said)))
    return out


def cache_said(iters):
    l = phase_length(iters)
    return (f"{' '.join(w.name for w in cache_workloads())} at {l} x {' '.join(map(str, CACHE_PHASES))} "
            f"iterations, after {CACHE_WARMUP * l} as a warm-up")


# ---- The time estimate ----------------------------------------------------------
# Expected host seconds of one boot, from this project's full sweep on its
# idle 2-core host, two guests at once (kernel builds on the same cores
# make it about twice as long): a guest boots in BOOT_S, then runs
# (SLOW_BASE + SLOW_PER_CPU * N) / 100 times as long as guest time with N
# online vCPUs (QEMU goes round-robin over them at every exit). Guest
# seconds: GUEST_BOOT_S to boot; per round, LOOP_S and SYSCALL_S (perf
# bench syscall) per 1000 iterations, and THREXIT_S_PER_10_CPUS; where all
# CPUs are online, PERCPU_S plus PERCPU_S_PER_10_CPUS for the per-CPU
# workloads, and SCHED_S per 1000 iterations for perf bench sched (pipe
# and messaging took 1.6 s and 5.8 s of guest time at ITERS=500 at 4/4);
# PERF_S per perf profile. A cache-model boot: CACHE_BOOT_S, then CACHE_S
# of host time per 1000 iterations of its workloads, times the slowdown.
EST = dict(BOOT_S=5, SLOW_BASE=75, SLOW_PER_CPU=1, GUEST_BOOT_S=3, LOOP_S=18, THREXIT_S_PER_10_CPUS=1,
           PERCPU_S=2, PERCPU_S_PER_10_CPUS=3, SCHED_S=15, PERF_S=20, SYSCALL_S=6, CACHE_BOOT_S=60,
           CACHE_S=350)


def estimate_s(cells, roles, nkernels, iters, reps, cache_cells):
    e = EST

    def slow(n):
        return e["SLOW_BASE"] + e["SLOW_PER_CPU"] * n

    total = 0
    for c in cells:
        n = c.online
        guest = e["GUEST_BOOT_S"] + reps * ((e["LOOP_S"] + e["SYSCALL_S"]) * iters // 1000
                                            + e["THREXIT_S_PER_10_CPUS"] * n // 10)
        if n == c.possible:
            guest += reps * (e["PERCPU_S"] + e["PERCPU_S_PER_10_CPUS"] * n // 10 + e["SCHED_S"] * iters // 1000)
        if any(w.profile and runs_in(w, c, cells, roles) for w in WORKLOADS):
            guest += e["PERF_S"]
        total += nkernels * (e["BOOT_S"] + guest * slow(n) // 100)
    for c in cache_cells:
        total += nkernels * (e["CACHE_BOOT_S"] + e["CACHE_S"] * iters // 1000) * slow(c.online) // 100
    return total


# ---- The kernels' roles (the registry ./kernels, its ROLE column) -------------
# reference: what every other kernel is compared with (one); candidate: the
# series, the first one, and variants of it; floor: bench-only lower bounds,
# from the least taken away (the first: no per-CPU rss_stat) to the most
# (the last: no per-mm per-CPU work at all); alternative: another proposal,
# compared with the candidate too.
KERNEL_ROLES = ("reference", "candidate", "floor", "alternative")


class Kernel(NamedTuple):
    name: str
    role: str
    patches: str
    boot: str
    describe: str


def read_registry(path):
    """The registry: [Kernel], in its order (NAME ROLE PATCHES BOOT
    DESCRIPTION, tab-separated, DESCRIPTION the rest of the line)."""
    out = []
    with open(path) as f:
        for line in f:
            fields = re.split(r"\t+", line.rstrip("\n"), maxsplit=4)
            if line.startswith("#") or len(fields) < 5:
                continue
            k = Kernel(*fields)
            if k.role not in KERNEL_ROLES:
                raise ValueError(f"{path}: kernel {k.name}: role '{k.role}' is not one of {', '.join(KERNEL_ROLES)}")
            out.append(k)
    if [k.role for k in out].count("reference") != 1:
        raise ValueError(f"{path}: want one kernel with the role reference")
    return out


class Comparisons(NamedTuple):
    """The kernels a run's report compares, by their roles in the registry,
    among those it measured (None, or [], for what it did not measure)."""
    reference: Optional[str]        # the reference
    candidate: Optional[str]        # the registry's first candidate
    floor: Optional[str]            # the registry's first floor: no per-CPU rss_stat
    deepest_floor: Optional[str]    # its last floor, when not the first: no per-mm per-CPU work
    floors: list                    # the floors measured, in the registry's order
    alternatives: list              # the alternatives measured

    def table_pairs(self, kernels):
        """The ratio columns of a table: candidate/reference,
        candidate/floor, then every other kernel against the reference."""
        pairs = [(self.candidate, self.reference), (self.candidate, self.floor)]
        pairs += [(k, self.reference) for k in kernels if k not in (self.reference, self.candidate)]
        return [(a, b) for a, b in pairs if a and b]

    def headline_pairs(self):
        return [(a, b) for a, b in ((self.candidate, self.reference), (self.candidate, self.floor)) if a and b]

    def alternative_pairs(self):
        """Beside each kernel against the reference: each alternative
        against the candidate, and the candidate against the floor."""
        pairs = [(a, self.candidate) for a in self.alternatives] + [(self.candidate, self.floor)]
        return [(a, b) for a, b in pairs if a and b]

    def floor_pairs(self):
        """The candidate against the reference and each floor (the cache model)."""
        return [(self.candidate, b) for b in [self.reference] + self.floors if self.candidate and b]


def comparisons(roles, kernels):
    """roles: {name: role} of the registry, in its order; kernels: those
    measured."""
    def named(role):
        return [k for k, r in roles.items() if r == role]

    def measured(k):
        return k if k in kernels else None
    floors = named("floor")
    return Comparisons(measured((named("reference") or [None])[0]), measured((named("candidate") or [None])[0]),
                       measured(floors[0]) if floors else None,
                       measured(floors[-1]) if len(floors) > 1 else None,
                       [k for k in floors if k in kernels], [k for k in named("alternative") if k in kernels])


# ---- The plan of a run ----------------------------------------------------------


def make(registry, quick=False, cells=None, kernels=None, iters=None, reps=None, cache=True, base=None):
    """The plan of a run, as a dict (plan.json); ValueError on a bad argument."""
    names = [k.name for k in registry]
    try:
        cell_list = parse_cells(cells if cells is not None else (QUICK_CELLS if quick else FULL_CELLS))
    except ValueError as e:
        raise ValueError(f"CELLS: {e}") from None
    ks = (kernels if kernels is not None else " ".join(names)).split()
    if not ks:
        raise ValueError("KERNELS: no kernel")
    for k in ks:
        if k not in names:
            raise ValueError(f"KERNELS: '{k}' is not one of: {' '.join(names)} (./kernels)")
        if ks.count(k) > 1:
            raise ValueError(f"KERNELS: '{k}' given twice")
    for v in (iters, reps):
        if v is not None and not re.fullmatch(r"[1-9][0-9]*", str(v)):
            raise ValueError(f"ITERS/REPS: '{v}' is not a positive number")
    n = int(iters) if iters is not None else ITERS
    full_reps = FULL_REPS if not quick else QUICK_REPS
    r = int(reps) if reps is not None else full_reps
    roles = cell_roles(cell_list)
    cache_cells = list(dict.fromkeys(roles[x] for x in CACHE_ROLES)) if cache else []
    runs, boots = {}, []
    for c in cell_list:
        rnd = round_of(c, cell_list, roles)
        f = f"{c.online}-{c.possible}.run"
        runs[f] = run_lines(rnd, n, c, r)
        boots += [dict(run=f"runs/{c}/{k}", kernel=k, cell=str(c), memory_mib=memory_mib(c), plugin=False,
                       file=f"/bench/{f}", command=["bench-guest", f"/bench/{f}"],
                       what=": " + " ".join(w.name for w in rnd)) for k in ks]
    for c in cache_cells:
        f = f"cache-{c.online}-{c.possible}.run"
        runs[f] = cache_lines(n)
        boots += [dict(run=f"runs/cache-{c}/{k}", kernel=k, cell=str(c), memory_mib=memory_mib(c), plugin=True,
                       file=f"/bench/{f}", command=["bench-guest", f"/bench/{f}"],
                       what=f", cache model: {cache_said(n)}") for k in ks]
    role_of = {k.name: k.role for k in registry}
    return {
        # the line (./lines) and its base, as scripts/tree/tree.sh recorded it
        "base": dict(base or {"line": "unknown", "line_desc": "unknown", "kernel": "unknown", "source": "unknown"}),
        "cells": [str(c) for c in cell_list],
        "roles": {role: str(c) for role, c in roles.items()},
        "kernels": [{"name": k, "role": role_of[k]} for k in ks],
        "registry": role_of,        # every kernel's role, in the registry's order: the report's comparisons
        "iters": n, "reps": r, "quick": bool(quick),
        "full_sweep": ([str(c) for c in cell_list] == FULL_CELLS.split() and ks == names
                       and n == ITERS and r == FULL_REPS and bool(cache)),
        "cache_cells": [str(c) for c in cache_cells],
        "memory": MEMORY_WORDS, "host_mib": max(memory_mib(c) for c in cell_list) + QEMU_MIB,
        "estimate_s": estimate_s(cell_list, roles, len(ks), n, r, cache_cells),
        "workloads": [dict(name=w.name, where=w.where, once=w.once, unit=w.unit, table=w.table,
                           describe=w.describe, op=w.op, cache=w.cache, profile=w.profile) for w in WORKLOADS],
        "cache": {"phases": list(CACHE_PHASES), "warmup": CACHE_WARMUP, "pairs": [list(p) for p in CACHE_PAIRS],
                  "L": phase_length(n), "plugin_args": plugin_args(), "words": CACHE_WORDS,
                  "l2_period": CACHES["l2"][0] // CACHES["l2"][1], "l2_ways": CACHES["l2"][1]},
        "boots": boots,
        "runs": runs,
    }


def run_file_text(lines):
    """A command file of bench-guest: one 'run ROUND NAME COMMAND' a
    command, shell-quoted (bench-guest sources it)."""
    return "".join(f"run {r} {shlex.quote(name)} {shlex.quote(cmd)}\n" for r, name, cmd in lines)


def get(plan, key):
    """What scripts/bench/bench.sh reads, one value or one item a line."""
    if key == "boots":      # RUN KERNEL CELL PLUGIN(0|1) COMMAND-FILE WHAT, tab-separated
        return "\n".join("\t".join([b["run"], b["kernel"], b["cell"], str(int(b["plugin"])), b["file"], b["what"]])
                         for b in plan["boots"])
    if key == "kernels":
        return " ".join(k["name"] for k in plan["kernels"])
    if key in ("cells", "cache_cells"):
        return " ".join(plan[key])
    if key == "cache_said":
        return cache_said(plan["iters"])
    if key in ("plugin_args", "words", "l2_period", "l2_ways"):
        return str(plan["cache"][key])
    if key == "full_sweep":
        return str(int(plan["full_sweep"]))
    if key in ("iters", "reps", "estimate_s", "host_mib", "memory"):
        return str(plan[key])
    raise ValueError(f"plan.py get: no key '{key}'")


def show(plan):
    """The dry run: the boots and the exact guest commands of each."""
    out = [f"cells {' '.join(plan['cells'])}; roles "
           + ", ".join(f"{r} {c}" for r, c in plan["roles"].items())
           + f"; kernels {' '.join(k['name'] + ' (' + k['role'] + ')' for k in plan['kernels'])}; "
           f"{plan['iters']} iterations, {plan['reps']} rounds; cache model in "
           f"{' '.join(plan['cache_cells']) or 'no cell'}; "
           f"{len(plan['boots'])} boots, about {plan['estimate_s']} s of one guest's host time"]
    for b in plan["boots"]:
        out.append(f"boot {b['run']}: {b['kernel']}, {b['cell']} vCPUs, {b['memory_mib']} MiB"
                   + (", cache plugin" if b["plugin"] else "") + f": {' '.join(b['command'])}")
    for f, lines in plan["runs"].items():
        out.append(f"file /bench/{f}:")
        out += [f"  round {r} {name}: {cmd}" for r, name, cmd in lines]
    return "\n".join(out)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="plan.py", usage=__doc__.split("usage: ")[1].split("Errors:")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("--registry", required=True)
    m.add_argument("--line", default="unknown")
    m.add_argument("--line-desc", default="unknown")
    m.add_argument("--base", default="unknown", help="the base's kernel version")
    m.add_argument("--source", default="unknown", help="where the base comes from")
    m.add_argument("--quick", action="store_true")
    m.add_argument("--cells")
    m.add_argument("--kernels")
    m.add_argument("--iters")
    m.add_argument("--reps")
    m.add_argument("--cache", default="1")
    m.add_argument("-o", required=True)
    g = sub.add_parser("get")
    g.add_argument("plan")
    g.add_argument("key")
    s = sub.add_parser("stage")
    s.add_argument("plan")
    s.add_argument("dir")
    sh = sub.add_parser("show")
    sh.add_argument("plan")
    c = sub.add_parser("cell")
    c.add_argument("cell")
    b = sub.add_parser("before")
    b.add_argument("workload")
    rf = sub.add_parser("run-file")
    rf.add_argument("--iters", type=int, required=True)
    rf.add_argument("--cell", required=True)
    rf.add_argument("workloads", nargs="*")
    i = sub.add_parser("insn")
    i.add_argument("--iters", type=int, required=True)
    i.add_argument("workload")
    cs = sub.add_parser("cells")
    cs.add_argument("roles", nargs="+")
    a = ap.parse_args(argv)

    def load(path):
        with open(path) as f:
            return json.load(f)
    if a.cmd == "make":
        if a.cache not in ("0", "1"):
            raise ValueError(f"CACHE={a.cache}: want 0 or 1")
        base = {"line": a.line, "line_desc": a.line_desc, "kernel": a.base, "source": a.source}
        plan = make(read_registry(a.registry), a.quick, a.cells, a.kernels, a.iters, a.reps, a.cache == "1", base)
        with open(a.o, "w") as f:
            json.dump(plan, f, indent=1, ensure_ascii=False)
            f.write("\n")
    elif a.cmd == "get":
        print(get(load(a.plan), a.key))
    elif a.cmd == "stage":
        import os
        os.makedirs(os.path.join(a.dir, "bench"), exist_ok=True)
        for name, lines in load(a.plan)["runs"].items():
            with open(os.path.join(a.dir, "bench", name), "w") as f:
                f.write(run_file_text(lines))
    elif a.cmd == "show":
        print(show(load(a.plan)))
    elif a.cmd == "cell":
        cell = parse_cell(a.cell)
        print(cell.online, cell.possible, memory_mib(cell))
    elif a.cmd == "before":
        print(" ".join(before(a.workload)))
    elif a.cmd == "run-file":
        cell = parse_cell(a.cell)
        ws = []
        for name in a.workloads:
            ok = [w.name for w in every_cell() if not uses_perf(w)]
            if name not in ok:
                raise ValueError(f"'{name}' is not one of {' '.join(ok)}")
            ws.append(BY_NAME[name])
        sys.stdout.write(run_file_text(run_lines(ws, a.iters, cell, 1)))
    elif a.cmd == "insn":
        if a.workload not in INSN_WORKLOADS:
            raise ValueError(f"WORKLOAD '{a.workload}': want {', '.join(INSN_WORKLOADS[:-1])} or {INSN_WORKLOADS[-1]}")
        l = phase_length(a.iters)
        print(f"{(INSN_RUNS[-1] - INSN_RUNS[-2]) * l}\t{PIN} forkbench -m {a.workload} "
              + ",".join(str(k * l) for k in INSN_RUNS) + " >/dev/null")
    elif a.cmd == "cells":
        roles = cell_roles(parse_cells(FULL_CELLS))
        for r in a.roles:
            if r not in roles:
                raise ValueError(f"no cell role '{r}' ({', '.join(roles)})")
        print(" ".join(dict.fromkeys(str(roles[r]) for r in a.roles)))


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except BrokenPipeError:     # its output read only in part (| head): not an error
        sys.stderr.close()
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
