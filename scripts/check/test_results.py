#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit test of the results as data: scripts/check/results.py (make check's
closing line, make mutate's verdicts) and the records that scripts/lib/tally.sh
writes, read back through it."""
import json
import os
import shlex
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import results  # noqa: E402

# The default line: the first NAME of the registry ./lines.
with open(os.path.join(TOP, "lines")) as _f:
    DEFAULT_LINE = next(ln.split("\t")[0] for ln in _f if ln.strip() and not ln.startswith("#"))


LINE = {"line": "9.9", "base": "9.9.1", "source": "Debian's linux-source-9.9 9.9.1-1"}


def recs(*kinds):
    return [{"step": "s", "check": f"c{i}", "result": k, **LINE} for i, k in enumerate(kinds)]


class Results(unittest.TestCase):
    def test_total(self):
        self.assertEqual(results.total(recs("pass", "pass", "skip", "fail", "error", "nobuild")), (2, 3, 1))
        self.assertEqual(results.total([]), (0, 0, 0))

    def test_verdict(self):
        self.assertEqual(results.verdict(recs("pass", "skip")), "pass")
        self.assertEqual(results.verdict(recs("pass", "fail")), "fail")
        self.assertEqual(results.verdict(recs("fail", "error")), "error")
        self.assertEqual(results.verdict(recs("fail", "error", "nobuild")), "nobuild")
        self.assertEqual(results.verdict(recs("skip")), "error")
        self.assertEqual(results.verdict([]), "error")

    def run_results(self, lines, *args):
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as f:
            f.write("".join(lines))
            f.flush()
            out = subprocess.run([sys.executable, os.path.join(HERE, "results.py"), args[0], f.name, *args[1:]],
                                 capture_output=True, text=True)
        return out.returncode, out.stdout.strip()

    def test_command_line(self):
        lines = [json.dumps(r) + "\n" for r in recs("fail", "pass", "skip", "pass")]
        self.assertEqual(self.run_results(lines, "total"), (1, "2 passed, 1 failed, 1 skipped"))
        self.assertEqual(self.run_results(lines, "total", "--from", "1"), (0, "2 passed, 0 failed, 1 skipped"))
        self.assertEqual(self.run_results(lines, "verdict"), (0, "fail"))
        self.assertEqual(self.run_results(lines + ['{"check": "x", "result": "maybe"}\n'], "total")[0], 2)
        self.assertEqual(self.run_results(lines + ["1 passed, 0 failed\n"], "verdict")[0], 2)
        # A record that does not say its line and base is no result.
        self.assertEqual(self.run_results(lines + ['{"step": "s", "check": "x", "result": "pass"}\n'], "total")[0], 2)
        self.assertEqual(self.run_results(lines, "bases"),
                         (0, "line 9.9, base Linux 9.9.1 (Debian's linux-source-9.9 9.9.1-1)"))


class Tally(unittest.TestCase):
    """scripts/lib/tally.sh in bash: the records it writes, and its closing
    line, computed from them."""

    def bash(self, script, base=None):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, RESULTS=os.path.join(d, "r.jsonl"), STEP="t", BUILD=d)
            env.pop("LINE", None)   # the default line, the first of ./lines
            open(env["RESULTS"], "w").close()
            if base:
                with open(os.path.join(d, "base-version"), "w") as f:
                    f.write(base)
            out = subprocess.run(["bash", "-c", f'. "{TOP}/scripts/lib/lib.sh"; {script}'],
                                 capture_output=True, text=True, env=env)
            return out.returncode, out.stdout.splitlines(), results.read(env["RESULTS"])

    def test_records_round_trip(self):
        name = 'a "quoted" back\\slash\tand tab'
        rc, out, got = self.bash(f"tally pass {shlex.quote(name)} log.txt; tally skip s; tally fail f; tally_end lbl")
        self.assertEqual(rc, 1)
        self.assertEqual(out[-1], "lbl: 1 passed, 1 failed, 1 skipped")
        self.assertEqual(got[0], {"step": "t", "check": name, "result": "pass", "log": "log.txt",
                                  "line": DEFAULT_LINE, "base": "unknown", "source": "unknown"})
        self.assertEqual([r["result"] for r in got], ["pass", "skip", "fail"])

    def test_line_and_base(self):
        """Every record, its own or a parser's, says the line and the base
        that scripts/tree/tree.sh recorded; the closing lines name them."""
        tap = os.path.join(HERE, "testdata", "ksft-harness-fail.tap")
        rc, out, got = self.bash(f'tally pass a; python3 "$TOP/scripts/check/ktap.py" records {tap} k >"$BUILD/k.jsonl"; '
                                 'tally_records "$BUILD/k.jsonl"; tally_sub bash -c \'. "$TOP/scripts/lib/lib.sh"; '
                                 'die nope\'; tally_end',
                                 base="kernel 6.12.99\nsource Debian's linux-source-6.12 6.12.99-1\n")
        want = {"line": DEFAULT_LINE, "base": "6.12.99", "source": "Debian's linux-source-6.12 6.12.99-1"}
        self.assertEqual(len(got), 3)
        for r in got:
            self.assertEqual({k: r[k] for k in want}, want, r)
        self.assertEqual(out[-2:], [f"line {DEFAULT_LINE}, base Linux 6.12.99 (Debian's linux-source-6.12 6.12.99-1)",
                                    "1 passed, 2 failed, 0 skipped"])

    def test_sub_step_and_die(self):
        rc, out, got = self.bash(f"tally_sub bash -c 'exit 4'; tally_sub bash -c '. {TOP}/scripts/lib/lib.sh; "
                                 "die_build nope'; tally_end")
        self.assertEqual(rc, 1)
        self.assertEqual([r["result"] for r in got], ["fail", "nobuild"])
        self.assertEqual(out[-1], "0 passed, 2 failed, 0 skipped")

    def test_nothing_ran_fails(self):
        rc, out, got = self.bash("tally_end x")
        self.assertEqual((rc, out[-1]), (1, "x: 0 passed, 1 failed, 0 skipped"))

    def test_parser_records(self):
        tap = os.path.join(HERE, "testdata", "ksft-harness-fail.tap")
        rc, out, got = self.bash(f'python3 "$TOP/scripts/check/ktap.py" records {tap} k >"$BUILD/k.jsonl"; '
                                 'tally_records "$BUILD/k.jsonl"; tally_end')
        self.assertEqual(got, [{"step": "t", "check": "k: rss_stat.shared_mms_across_cpu_hotplug", "result": "fail",
                                "line": DEFAULT_LINE, "base": "unknown", "source": "unknown"}])
        self.assertIn("  FAIL: k: rss_stat.shared_mms_across_cpu_hotplug", out)


if __name__ == "__main__":
    unittest.main()
