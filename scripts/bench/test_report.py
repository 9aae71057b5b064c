# SPDX-License-Identifier: GPL-2.0
"""Unit test of the bench report (make check runs it): a small raw file of
scripts/bench/bench.sh (testdata/raw.txt), with one kernel missing from a cell,
through bench_stats, bench_tables, bench_prose and report.report(); and
insn_profile's sums of the insnprof plugin's counts."""
import os
import tempfile
import unittest

import bench_cache
import bench_prose
import cache_marks
import insn_profile
import bench_tables
import report
from bench_stats import Data, ratio, read_kernels, spread, wall_us

# testdata/raw.txt, exec at 4/255: base 2.0, 2.3, 2.1 s for 500 (4000,
# 4600, 4200 µs; median 4200, not the mean 4267; spread 600/4200 = 14.3%),
# patched 1.89 s (3780 µs: 0.900 of base), ideal 1.8 s (3600 µs:
# patched/ideal 1.050). At 4/4, no ideal at all. testdata/kernels: a
# registry of three kernels. testdata/plan.json: the plan of that run
# (plan.py make --cells "4/4 4/255" --iters 50 --reps 3: the cache
# model's L is 10), which the report reads beside raw.txt.
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.data = Data(os.path.join(DATA, "raw.txt"))
        self.registry = read_kernels(os.path.join(DATA, "kernels"))
        self.kernels = self.data.kernels(list(self.registry))

    def tearDown(self):
        self.dir.cleanup()

    def test_registry_and_roles(self):
        self.assertEqual(list(self.registry), ["base", "patched", "ideal"])
        self.assertEqual(self.registry["ideal"], "the floor")
        self.assertEqual(self.data.roles, {"max_possible": (4, 255), "min_possible": (4, 4), "max_online": (4, 255)})
        self.assertEqual(self.data.cells, [(4, 4), (4, 255)])

    def test_medians_spreads_ratios(self):
        val = self.data.medians(self.kernels, "exec", (4, 255), wall_us)
        self.assertAlmostEqual(val["base"], 4200.0)
        self.assertAlmostEqual(val["patched"], 3780.0)
        self.assertAlmostEqual(spread(self.data.values("exec", "base", (4, 255), wall_us)), 100 * 600 / 4200)
        self.assertEqual(ratio(val, "patched", "base"), "0.900")
        self.assertEqual(ratio(val, "patched", "ideal"), "1.050")
        # Two rounds: the median is their mean.
        self.assertAlmostEqual(self.data.medians(self.kernels, "exec", (4, 4), wall_us)["base"], 3100.0)

    def test_kernel_missing_from_a_cell(self):
        val = self.data.medians(self.kernels, "exec", (4, 4), wall_us)
        self.assertNotIn("ideal", val)
        self.assertIsNone(ratio(val, "patched", "ideal"))
        rows = bench_tables.table(self.data, self.kernels, "exec", wall_us, "{:.1f}".format)
        self.assertEqual(rows[0], "| online/possible | base | patched | ideal | patched/base | patched/ideal | ideal/base |")
        self.assertEqual(rows[2], "| 4/4 | 3100.0 ±6.5% | 2900.0 ±0.0% | - | 0.935 | - | - |")
        self.assertEqual(rows[3], "| 4/255 | 4200.0 ±14.3% | 3780.0 ±0.0% | 3600.0 ±0.0% | 0.900 | 1.050 | 0.857 |")

    def test_headline(self):
        out, head, plots, _ = report.report(self.data, self.registry, "setup", "short setup", self.dir.name)
        self.assertEqual(head[0], "**With 4 CPUs online of 255 possible, a fork+exec costs 10.0% less with the "
                                  "series than without (patched/base 0.900), within 5.0% of the ideal kernel, which "
                                  "does no per-mm per-CPU work at all.**")
        self.assertIn("| fork+exec (`exec`), 4/255 CPUs, µs | 4200.0 | 3780.0 | 3600.0 | 0.900 | 1.050 |", head)
        self.assertIn("| `Percpu:` growth, 1000 idle processes, 4/255 CPUs, kB | +6144 | +3072 | - |  |  |", head)
        # ideal is missing at 4/4: no growth for it; the cell 4/255 is
        # max_possible and max_online, and is named once.
        self.assertEqual(head[-4], "From 4 to 255 possible CPUs (4 online), a fork+exec costs: "
                                   "base +1100 µs (+35.5%), patched +880 µs (+30.3%).")
        self.assertEqual(sum(line.startswith("| fork+exec (`exec`), 4/255") for line in head), 1)
        # perf bench sched: µs per round trip, ms per messaging run.
        self.assertIn("| context switch (`pipe`), 4/4 CPUs, µs | 80.00 | 80.80 | - | 1.010 | - |", head)
        self.assertIn("| scheduler wakeups (`messaging`), 4/4 CPUs, ms | 6600.0 | 6534.0 | - | 0.990 | - |", head)
        text = "\n".join(out)
        self.assertIn("**What does the scheduler pay?** perf bench sched pipe patched/base 1.010 at 4/4; "
                      "sched messaging patched/base 0.990 at 4/4.", text)
        # Not measured, not said: no n/a, no threaded page faults.
        self.assertNotIn("n/a", text)
        self.assertNotIn("page faults", text)
        self.assertIn("patched/base 1.010 at 4/255.", text)
        self.assertNotIn("at 4/255, 1.010 at 4/255", text)
        self.assertEqual([p[3] for p in plots], ["exec-possible", "shloop-possible"])
        # The line and its base: the plan's, as make tree recorded them.
        self.assertIn("The 6.12 line (the LTS line): Linux 6.12.117, Debian's linux-source-6.12 6.12.117-1~deb12u1. "
                      "Kernels, all built from configs/guest.config and configs/6.12/", text)

    def test_cache_model(self):
        # testdata: exec at 4/255 run 10, 30, 20 and 60 times; base costs
        # 1300 L2 misses per operation in both pairs, patched 300 in pair A
        # (30 - 10) and 310 in pair B (60 - 20): 305; a gap of 10 against the
        # row's largest figure, 1300: 0.8%.
        out, head, _, cache_plots = report.report(self.data, self.registry, "setup", "short",
                                                  self.dir.name, "the model", (0.33, 5, 40))
        self.assertEqual(head[-2], "Cache model (QEMU's cache plugin, a Sapphire Rapids core's L1 and L2 per "
                                   "vCPU): at 4/255, a fork+exec takes 1,300 L2 misses on base and 305 on "
                                   "patched, so 995 L2 misses fewer and 1,000 L1D misses fewer per "
                                   "fork+exec with the series (the two run-length pairs 0.8% apart at most); "
                                   "modelled time patched/base 0.769 (icount 0.900).")
        self.assertIn("| fork+exec (`exec`), L2 misses | 1,300 | 305 | -995 | 0.8% |", out)
        # base: 200000 x 0.33 + (15000 - 1300) x 5 + 1300 x 40 ns = 186.5 µs.
        self.assertIn("| fork+exec (`exec`) | 186.5 | 143.4 | 0.769 | 0.900 |", out)
        self.assertEqual(cache_plots, [([(4, 255)], "cache-l2")])
        # Units 256 KiB apart alias in the 128 KiB set period; base's 1,300
        # L2 misses per fork+exec are 5.1 per possible CPU.
        text = "\n".join(out)
        self.assertIn("In the base's guest at 4/255 the per-CPU allocator's units are 256 KiB apart (the "
                      "kernel's `percpu: Embedded ... u262144` line), a multiple of the modelled L2's 128 KiB "
                      "set period", text)
        self.assertIn("At 4/255 a fork+exec on the base takes 5.1 L2 misses per possible CPU", text)
        # The marks of a boot: phase P is marks 2P and 2P+1; one missing
        # mark is an error, not a shifted pairing.
        log, res = os.path.join(self.dir.name, "plugin.log"), os.path.join(self.dir.name, "results.txt")
        marks = [(0, 10), (1, 15), (2, 20), (3, 40)]
        with open(log, "w") as f:
            f.writelines(f"cache-mark {i} vcpu=0 daccess=9 dmiss=9 iaccess=9 imiss=9 l2access=9 l2miss=9 "
                         f"own_daccess={v} own_dmiss=1 own_iaccess={v} own_imiss=2 own_l2access=3 own_l2miss={v}\n"
                         for i, v in marks)
        with open(res, "w") as f:
            f.write("round=1 name=cache_phase workload=exec iters=10 phase=0\n"
                    "round=1 name=cache_phase workload=exec iters=30 phase=1\n")
        self.assertEqual(cache_marks.phase_lines(log, res)[1], "name=cache workload=exec iters=30 "
                         "daccess=20 dmiss=0 iaccess=20 imiss=0 l2access=0 l2miss=20")
        with open(log, "w") as f:
            f.write("cache-mark 0 vcpu=0 daccess=1 dmiss=1 iaccess=1 imiss=1 l2access=1 l2miss=1 own_daccess=1 "
                    "own_dmiss=1 own_iaccess=1 own_imiss=1 own_l2access=1 own_l2miss=1\n")
        with self.assertRaises(SystemExit):
            cache_marks.phase_lines(log, res)

    def test_count_below_zero_is_noise(self):
        self.assertEqual([bench_cache.count(x) for x in (1976.4, 0.2, -1.3)], ["1,976", "0", "about 0"])

    def test_at_names_each_cell_once(self):
        self.assertEqual(bench_prose.at(("1.000", (4, 255)), ("1.000", (4, 255)), (None, (64, 64))), "1.000 at 4/255")

    def test_insn_profile_per_op(self):
        # Run 1 (L = 1 op) and run 2 (3L = 3 ops): per op, run 2 minus run 1
        # over 2. Address ...1000 is there twice in each run: both count.
        # ...1010 is inside foo; ...1000 is foo and ...2000 bar, not the
        # section markers at the same addresses; 0x400000 is user space,
        # ...c0001000 (a module's) outside the kernel's text. A run without
        # its end line is not complete: an error, not a run of zeros.
        sysmap, log = os.path.join(self.dir.name, "System.map"), os.path.join(self.dir.name, "plugin.log")
        with open(sysmap, "w") as f:
            f.write("ffffffff81000000 T _stext\nffffffff81001000 T foo\nffffffff81001000 t __foo_text_end\n"
                    "ffffffff81002000 t __bar_text_start\n"
                    "ffffffff81002000 t bar\nffffffff81003000 T _etext\nffffffff82000000 D some_data\n")
        with open(log, "w") as f:
            f.write("insnprof 1 ffffffff81001000 100 10\ninsnprof 1 ffffffff81001000 50 0\n"
                    "insnprof 1 ffffffff81002000 30 0\ninsnprof 1 400000 20 2\ninsnprof 1 end\n"
                    "insnprof 2 ffffffff81001000 300 30\ninsnprof 2 ffffffff81001000 150 0\n"
                    "insnprof 2 ffffffff81001010 6 0\ninsnprof 2 ffffffff81002000 90 0\n"
                    "insnprof 2 400000 20 2\ninsnprof 2 ffffffffc0001000 8 0\ninsnprof 2 end\n")
        own, others = insn_profile.per_op(log, sysmap, 2)
        outside = insn_profile.OUTSIDE
        self.assertEqual(dict(own), {"foo": 153, "bar": 30, "[user space]": 0, outside: 4})
        self.assertEqual(dict(others), {"foo": 10, "bar": 0, "[user space]": 0, outside: 0})
        with open(log, "a") as f:
            f.write("insnprof 3 ffffffff81002000 90 0\n")
        self.assertEqual(insn_profile.per_op(log, sysmap, 2)[0]["bar"], 30)
        with open(log, "w") as f:
            f.write("insnprof 1 ffffffff81002000 30 0\ninsnprof 1 end\ninsnprof 2 ffffffff81002000 90 0\n")
        with self.assertRaises(SystemExit):
            insn_profile.per_op(log, sysmap, 2)


if __name__ == "__main__":
    unittest.main()
