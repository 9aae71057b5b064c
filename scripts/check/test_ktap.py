#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit test of scripts/check/ktap.py, on the TAP of real kselftest guests
(scripts/check/testdata/ksft-*.tap: the patched test kernel's full run, the
base norseq kernel's rss_stat run, whose cases skip, and a harness run of
a planted bug's failing case) and on lines made to show one rule each."""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ktap  # noqa: E402


def fixture(name):
    return ktap.read(os.path.join(HERE, "testdata", f"ksft-{name}.tap"))


class Parse(unittest.TestCase):
    def test_full_run(self):
        results = fixture("patched")
        count = {}
        for r in results:
            count[r.collection] = count.get(r.collection, 0) + 1
        self.assertEqual(count, {"proc": 20, "rseq": 11, "mm": 6})
        self.assertEqual({r.status for r in results}, {"ok"})
        self.assertEqual([r.test for r in results if r.collection == "mm"][-1], "rss_stat")

    def test_skipped_cases_of_a_test(self):
        (r,) = fixture("base-norseq")
        self.assertEqual((r.collection, r.test, r.status), ("mm", "rss_stat", "ok"))
        skipped = [c for c in r.cases if c[1] == "skip"]
        self.assertEqual([c[0] for c in skipped], [
            "rss_stat.upgrade_once_per_shared_mm_never_on_fork_exec",
            "rss_stat.idle_processes_take_no_percpu_memory",
            "rss_stat.failed_upgrade_fails_clone_keeps_counters_lazy_exact",
            "rss_stat.failed_upgrade_for_io_wq_worker_cancels_request"])
        self.assertEqual(skipped[0][2], "kernel without lazy rss_stat (no tracepoint kmem:mm_make_shared)")
        self.assertEqual(len(r.cases), 12)

    def test_harness_failure_keeps_its_output(self):
        (r,) = fixture("harness-fail")
        self.assertEqual((r.collection, r.test, r.status), ("", "rss_stat.shared_mms_across_cpu_hotplug", "fail"))
        self.assertIn("# rss_stat.c:1664:shared_mms_across_cpu_hotplug:cid 0 on CPUs 0 and 0", r.output)

    def test_directives(self):
        lines = ["TAP version 13", "1..5",
                 "# selftests: proc: a", "# output of a",
                 "ok 1 selftests: proc: a # SKIP no namespaces",
                 "not ok 2 selftests: mm: rss_stat # exit=1",
                 "ok 3 selftests: rseq: b # exit=0",
                 "not ok 0 bash ./run_vmtests.sh -t mlock # timed out after 1200s (status 124)",
                 "okay, not a result", "ok",
                 "# # ok 2 case_two # SKIP why not", "#  ok 3 not_a_case", "# not ok 4 case_four",
                 "ok 5 selftests: mm: c"]
        r = ktap.parse(lines)
        self.assertEqual([(x.name, x.status, x.reason) for x in r], [
            ("selftests: proc: a", "skip", "no namespaces"),
            ("selftests: mm: rss_stat", "fail", "exit=1"),
            ("selftests: rseq: b", "ok", "exit=0"),
            ("bash ./run_vmtests.sh -t mlock", "fail", "timed out after 1200s (status 124)"),
            ("selftests: mm: c", "ok", "")])
        self.assertEqual(r[0].output, ["# selftests: proc: a", "# output of a"])
        self.assertEqual(r[4].cases, [("case_two", "skip", "why not"), ("case_four", "fail", "")])
        self.assertEqual(r[4].output[:2], ["okay, not a result", "ok"])


class CommandLine(unittest.TestCase):
    def run_ktap(self, *args):
        out = subprocess.run([sys.executable, os.path.join(HERE, "ktap.py"), *args],
                             capture_output=True, text=True)
        return out.returncode, out.stdout.splitlines()

    def test_records(self):
        rc, out = self.run_ktap("records", os.path.join(HERE, "testdata", "ksft-harness-fail.tap"), "patched")
        self.assertEqual((rc, out), (0, ['{"check":"patched: rss_stat.shared_mms_across_cpu_hotplug","result":"fail"}']))
        rc, out = self.run_ktap("records", os.path.join(HERE, "testdata", "ksft-patched.tap"), "k")
        self.assertEqual(len(out), 37)
        self.assertEqual(json.loads(out[-1]), {"check": "k: selftests: mm: rss_stat", "result": "pass"})

    def test_queries(self):
        tap = os.path.join(HERE, "testdata", "ksft-patched.tap")
        self.assertEqual(self.run_ktap("has", tap, "mm", "rss_stat")[0], 0)
        self.assertEqual(self.run_ktap("has", tap, "rseq", "rss_stat")[0], 1)
        rc, out = self.run_ktap("outcomes", tap, "rseq")
        self.assertEqual(len(out), 11)
        self.assertIn("run_param_test.sh ok", out)
        self.assertEqual(out, sorted(out))
        tap = os.path.join(HERE, "testdata", "ksft-base-norseq.tap")
        self.assertEqual(len(self.run_ktap("skipped", tap, "rss_stat")[1]), 4)
        self.assertEqual(self.run_ktap("skipped", tap, "mlock2-tests")[1], [])


if __name__ == "__main__":
    unittest.main()
