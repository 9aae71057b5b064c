#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit test of scripts/check/kunit_summary.py, on kunit.py's JSON of real runs
(scripts/check/testdata/kunit-*.json, made with kunit.py parse --json from the
kernel's output: a run with a skip, a planted bug's failure, a kernel that
crashed half-way, a kernel that printed no test)."""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kunit_summary  # noqa: E402


def load(name):
    with open(os.path.join(HERE, "testdata", f"kunit-{name}.json")) as f:
        return json.load(f)


class Summary(unittest.TestCase):
    def test_pass_and_skip(self):
        counts, others = kunit_summary.summary(load("i386-pass-skip"))
        self.assertEqual(counts, {"passed": 15, "failed": 0, "skipped": 1})
        self.assertEqual(others, ["SKIPPED rss_stat.rss_stat_share_leaves_no_cid_offline_test"])

    def test_failure(self):
        counts, others = kunit_summary.summary(load("x86_64-fail"))
        self.assertEqual(counts, {"passed": 15, "failed": 1, "skipped": 0})
        self.assertEqual(others, ["FAILED rss_stat.rss_stat_share_leaves_no_cid_offline_test"])

    def test_crash_fails_the_cases_not_reached(self):
        counts, others = kunit_summary.summary(load("crash"))
        self.assertEqual(counts, {"passed": 8, "failed": 7, "skipped": 1})
        self.assertIn("FAILED owned_percpu_counter.(not reached)", others)

    def test_no_test(self):
        self.assertEqual(kunit_summary.summary(load("none"))[0],
                         {"passed": 0, "failed": 0, "skipped": 0})

    def test_unknown_status_is_an_error(self):
        doc = load("x86_64-fail")
        doc["sub_groups"][0]["test_cases"][0]["status"] = "MAYBE"
        with self.assertRaises(ValueError):
            kunit_summary.summary(doc)

    def test_records(self):
        recs = list(kunit_summary.records(load("crash"), "kunit-x"))
        self.assertEqual(len(recs), 16)
        self.assertEqual(sum(r["result"] == "fail" for r in recs), 7)
        self.assertIn({"check": "kunit-x: owned_percpu_counter.(not reached)", "result": "fail"}, recs)
        self.assertEqual(list(kunit_summary.records(load("none"), "kunit-x")), [])

    def test_command_line(self):
        run = [sys.executable, os.path.join(HERE, "kunit_summary.py")]
        out = subprocess.run(run + [os.path.join(HERE, "testdata", "kunit-x86_64-fail.json")],
                             capture_output=True, text=True)
        self.assertEqual((out.returncode, out.stdout.splitlines()[0]), (0, "15 1 0"))
        out = subprocess.run(run + ["--records", "k", os.path.join(HERE, "testdata", "kunit-i386-pass-skip.json")],
                             capture_output=True, text=True)
        self.assertIn('{"check":"k: rss_stat.rss_stat_share_leaves_no_cid_offline_test","result":"skip"}',
                      out.stdout.splitlines())
        self.assertEqual(len(out.stdout.splitlines()), 16)
        out = subprocess.run(run + ["/nonexistent.json"], capture_output=True, text=True)
        self.assertEqual((out.returncode, out.stdout), (2, ""))


if __name__ == "__main__":
    unittest.main()
