# SPDX-License-Identifier: GPL-2.0
"""Unit test of the bench plan (scripts/bench/plan.py; make check runs it):
cells and their roles, where and how often each workload runs and with
which guest command, the cache model's phases and the L rule, the memory
rule, the estimate, and the comparisons that the registry's roles give.
The expected values are those of make bench before the plan existed
(scripts/bench/bench.sh and scripts/guest/bench-guest of then)."""
import os
import subprocess
import tempfile
import unittest

import plan
from plan import Cell

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The registry of the 6.12 line, whose roles the tests below know
# (scripts/check/test_lines.py reads every line's).
REGISTRY = os.path.join(TOP, "patches", "6.12", "kernels")
EVERY = "idle shloop exec exit sh thread threxit sysfork sysexec".split()
ALL_ONLINE = "pf_threads pf_procs execrate pipe messaging".split()


def names(workloads):
    return [w.name for w in workloads]


class CellTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(plan.parse_cell("4/255"), Cell(4, 255))
        self.assertEqual(str(Cell(64, 64)), "64/64")
        for bad in ("0/4", "5/4", "4/256", "4/", "/4", "04/4", "4/4/4", "a/b", ""):
            with self.assertRaises(ValueError, msg=bad):
                plan.parse_cell(bad)

    def test_cells(self):
        self.assertEqual(plan.parse_cells(plan.QUICK_CELLS), [Cell(4, 4), Cell(4, 255)])
        with self.assertRaisesRegex(ValueError, "given twice"):
            plan.parse_cells("4/4 4/255 4/4")
        with self.assertRaisesRegex(ValueError, "no cell"):
            plan.parse_cells(" ")

    def test_roles(self):
        full = plan.cell_roles(plan.parse_cells(plan.FULL_CELLS))
        self.assertEqual(full, {"max_possible": Cell(4, 255), "min_possible": Cell(4, 4),
                                "max_online": Cell(64, 64)})
        quick = plan.cell_roles(plan.parse_cells(plan.QUICK_CELLS))
        self.assertEqual(quick, {"max_possible": Cell(4, 255), "min_possible": Cell(4, 4),
                                 "max_online": Cell(4, 255)})
        # Ties: the most possible with the fewest online; as many online
        # with the fewest possible; the most online with the most possible.
        ties = plan.cell_roles(plan.parse_cells("8/255 4/255 4/8 8/16 4/16"))
        self.assertEqual(ties, {"max_possible": Cell(4, 255), "min_possible": Cell(4, 8),
                                "max_online": Cell(8, 255)})
        self.assertEqual(plan.cell_roles([Cell(2, 2)]),
                         {"max_possible": Cell(2, 2), "min_possible": Cell(2, 2), "max_online": Cell(2, 2)})

    def test_memory(self):
        self.assertEqual(plan.memory_mib(Cell(4, 255)), 1280)
        self.assertEqual(plan.memory_mib(Cell(64, 64)), 5120)
        self.assertEqual(plan.memory_mib(Cell(1, 1)), 1088)


class WorkloadTest(unittest.TestCase):
    def rounds(self, cells):
        cs = plan.parse_cells(cells)
        roles = plan.cell_roles(cs)
        return {str(c): names(plan.round_of(c, cs, roles)) for c in cs}

    def test_where(self):
        # The full sweep: the first cell counts the upgrades, the one with
        # the most possible CPUs profiles the bash loop, those with every
        # possible CPU online run the per-CPU workloads and perf bench sched.
        r = self.rounds(plan.FULL_CELLS)
        self.assertEqual(r["4/4"], EVERY + ALL_ONLINE + ["upgrades"])
        self.assertEqual(r["4/64"], EVERY)
        self.assertEqual(r["4/128"], EVERY)
        self.assertEqual(r["4/255"], EVERY + ["perf:shloop"])
        for c in ("8/8", "32/32", "64/64"):
            self.assertEqual(r[c], EVERY + ALL_ONLINE)
        # Another first cell, and one cell with every role.
        self.assertEqual(self.rounds("4/255 4/4")["4/255"], EVERY + ["upgrades", "perf:shloop"])
        self.assertEqual(self.rounds("2/2")["2/2"], EVERY + ALL_ONLINE + ["upgrades", "perf:shloop"])
        self.assertEqual(names(plan.every_cell()), EVERY)

    def test_once(self):
        c = Cell(4, 255)
        lines = plan.run_lines(plan.round_of(c, [c], plan.cell_roles([c])), 500, c, 3)
        rounds = {r: [n for q, n, _ in lines if q == r] for r in (1, 2, 3)}
        self.assertEqual(rounds[1], EVERY + ["upgrades", "perf:shloop"])
        for r in (2, 3):
            self.assertEqual(rounds[r], [n for n in EVERY if n != "idle"])

    def test_commands(self):
        # The guest commands of bench-guest before the plan, at ITERS=500.
        c = Cell(4, 4)
        cmd = {w.name: w.command(500, c) for w in plan.WORKLOADS}
        self.assertEqual(cmd["exec"], "numactl -C 0 forkbench exec 500 /bin/true")
        self.assertEqual(cmd["sh"], "numactl -C 0 forkbench sh 250")
        self.assertEqual(cmd["threxit"], "numactl -C 0 forkbench threxit 100")
        self.assertEqual(cmd["execrate"], "forkbench execrate 125")
        self.assertEqual(plan.BY_NAME["execrate"].command(500, Cell(3, 3)), "forkbench execrate 167")
        self.assertEqual(cmd["pipe"], "numactl -C 0 /opt/perf/perf bench sched pipe -l 20000 | perf_total pipe 20000")
        self.assertEqual(cmd["messaging"],
                         "/opt/perf/perf bench sched messaging -p -g 10 -l 100 | perf_total messaging 1")
        self.assertEqual(plan.BY_NAME["messaging"].command(3, c),
                         "/opt/perf/perf bench sched messaging -p -g 10 -l 1 | perf_total messaging 1")
        self.assertEqual(cmd["shloop"], "numactl -C 0 bash -c \"TIMEFORMAT='name=shloop iters=500 wall_s=%3R "
                         "sys_s=%3S user_s=%3U'; time { for ((i=0;i<500;i++)); do /bin/true; done; }\" 2>&1")
        self.assertEqual(cmd["perf:shloop"],
                         "profile shloop numactl -C 0 bash -c 'for ((i=0;i<500;i++)); do /bin/true; done'")

    def test_run_file_quoting(self):
        # bench-guest sources the file: each COMMAND arrives as written.
        c = Cell(4, 4)
        lines = plan.run_lines(plan.round_of(c, [c], plan.cell_roles([c])), 500, c, 2) + plan.cache_lines(500)
        with tempfile.NamedTemporaryFile("w", suffix=".run") as f:
            f.write(plan.run_file_text(lines))
            f.flush()
            out = subprocess.run(["sh", "-c", 'run() { printf "%s|%s|%s\\0" "$1" "$2" "$3"; }; . "$1"', "sh", f.name],
                                 check=True, capture_output=True, text=True).stdout
        self.assertEqual(out.split("\0")[:-1], [f"{r}|{n}|{cmd}" for r, n, cmd in lines])

    def test_before(self):
        self.assertEqual(plan.before("exit"), ["idle", "shloop", "exec"])
        self.assertEqual(plan.before("idle"), [])
        self.assertEqual(plan.before("status"), [])
        self.assertEqual([w.name for w in plan.every_cell() if not plan.uses_perf(w)],
                         "idle shloop exec exit sh thread threxit".split())


class PhaseTest(unittest.TestCase):
    def test_length(self):
        self.assertEqual([plan.phase_length(n) for n in (500, 2500, 10, 9, 5, 4, 1)], [100, 500, 2, 1, 1, 1, 1])

    def test_schedule(self):
        self.assertEqual(plan.cache_lengths(100), [100, 300, 200, 600])
        self.assertEqual(plan.CACHE_PAIRS, ((1, 3), (2, 6)))
        lines = plan.cache_lines(500)
        self.assertEqual([n for _, n, _ in lines], ["cache:exec", "cache:shloop", "cache:exit", "cache:thread"])
        self.assertTrue(lines[0][2].startswith("numactl -C 0 forkbench -m exec 600,100,300,200,600 >/dev/null; "))
        self.assertIn("for ((i=0;i<6*100;i++))", lines[1][2])
        self.assertIn("for k in 1 3 2 6; do", lines[1][2])
        said = [p for _, _, cmd in lines for p in cmd.split("; ") if p.startswith('echo "name=cache_phase')]
        self.assertEqual(said[5], 'echo "name=cache_phase workload=shloop iters=300 phase=5"')
        self.assertEqual(len(said), 16)
        self.assertEqual(plan.cache_said(500), "exec shloop exit thread at 100 x 1 3 2 6 iterations, "
                                               "after 600 as a warm-up")


class PlanTest(unittest.TestCase):
    def setUp(self):
        self.registry = plan.read_registry(REGISTRY)

    def test_make(self):
        p = plan.make(self.registry)
        self.assertEqual(p["base"]["kernel"], "unknown")
        base = {"line": "6.12", "line_desc": "the LTS line", "kernel": "6.12.1", "source": "KSRC=/x"}
        self.assertEqual(plan.make(self.registry, quick=True, base=base)["base"], base)
        self.assertTrue(p["full_sweep"])
        self.assertEqual(len(p["boots"]), 9 * len(self.registry))
        self.assertEqual(p["cache_cells"], ["4/255", "64/64"])
        self.assertEqual(p["estimate_s"], 8562)          # make bench's estimate before the plan
        self.assertEqual(p["host_mib"], 5120 + 512)
        q = plan.make(self.registry, quick=True)
        self.assertFalse(q["full_sweep"])
        self.assertEqual((q["reps"], q["estimate_s"], q["cache_cells"]), (2, 2157, ["4/255"]))
        b = q["boots"][-1]
        self.assertEqual((b["run"], b["cell"], b["plugin"], b["command"]),
                         ("runs/cache-4/255/freelist", "4/255", True, ["bench-guest", "/bench/cache-4-255.run"]))
        self.assertEqual(plan.make(self.registry, cache=False)["cache_cells"], [])

    def test_errors(self):
        for kw, msg in ((dict(kernels="base nope"), "'nope' is not one of"), (dict(kernels="base base"), "twice"),
                        (dict(iters="0"), "positive"), (dict(reps="x"), "positive"), (dict(cells="4/4 9/8"), "CELLS")):
            with self.assertRaisesRegex(ValueError, msg):
                plan.make(self.registry, **kw)


class ComparisonTest(unittest.TestCase):
    def setUp(self):
        self.roles = {k.name: k.role for k in plan.read_registry(REGISTRY)}
        self.all = list(self.roles)

    def test_roles_of_the_registry(self):
        self.assertEqual(self.roles, {"base": "reference", "patched": "candidate", "rssonly": "candidate",
                                      "lazyoff": "candidate", "onealloc": "candidate", "ideal": "floor",
                                      "nocid": "floor", "freelist": "alternative"})

    def test_pairs(self):
        c = plan.comparisons(self.roles, self.all)
        self.assertEqual((c.reference, c.candidate, c.floor, c.deepest_floor), ("base", "patched", "ideal", "nocid"))
        self.assertEqual(c.table_pairs(self.all), [("patched", "base"), ("patched", "ideal")]
                         + [(k, "base") for k in ("rssonly", "lazyoff", "onealloc", "ideal", "nocid", "freelist")])
        self.assertEqual(c.headline_pairs(), [("patched", "base"), ("patched", "ideal")])
        self.assertEqual(c.alternative_pairs(), [("freelist", "patched"), ("patched", "ideal")])
        self.assertEqual(c.floor_pairs(), [("patched", "base"), ("patched", "ideal"), ("patched", "nocid")])

    def test_missing_kernels(self):
        # Not measured, not compared: no stand-in from another kernel of
        # the same role.
        c = plan.comparisons(self.roles, ["base", "rssonly", "nocid"])
        self.assertEqual((c.reference, c.candidate, c.floor, c.deepest_floor), ("base", None, None, "nocid"))
        self.assertEqual(c.headline_pairs(), [])
        self.assertEqual(c.table_pairs(["base", "rssonly", "nocid"]), [("rssonly", "base"), ("nocid", "base")])
        c = plan.comparisons(self.roles, ["base", "patched", "nocid"])
        self.assertEqual(c.floor_pairs(), [("patched", "base"), ("patched", "nocid")])
        self.assertEqual(c.alternative_pairs(), [])

    def test_bad_registry(self):
        with tempfile.NamedTemporaryFile("w") as f:
            f.write("# NAME ROLE PATCHES BOOT DESCRIPTION\na\treference\tp\t-\tone\nb\tbest\tp\t-\ttwo\n")
            f.flush()
            with self.assertRaisesRegex(ValueError, "role 'best'"):
                plan.read_registry(f.name)
        with tempfile.NamedTemporaryFile("w") as f:
            f.write("a\treference\tp\t-\tone\nb\treference\tp\t-\ttwo words\there\n")
            f.flush()
            with self.assertRaisesRegex(ValueError, "one kernel with the role reference"):
                plan.read_registry(f.name)


if __name__ == "__main__":
    unittest.main()
