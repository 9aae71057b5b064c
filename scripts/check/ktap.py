#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read the TAP that a kselftest guest prints (scripts/guest/selftest-guest):
one or more TAP documents, as run_kselftest.sh prints them, each a
"TAP version 13" line, a plan and result lines

    ok 3 selftests: rseq: basic_percpu_ops_mm_cid_test
    not ok 4 selftests: mm: rss_stat # exit=1
    ok 5 selftests: proc: proc-tid0 # SKIP

with the output of each test before its result line, as "# " lines; among
them, the results of a kselftest_harness program's cases ("# ok 2 NAME",
"# # ok 2 NAME # SKIP why"). A result line is a failure unless it says ok;
an ok with a SKIP directive is a skip. The test's name is the description
without its directive; COLLECTION and TEST are its parts when it reads
"selftests: COLLECTION: TEST". Test: scripts/check/test_ktap.py.

usage: ktap.py records FILE [LABEL]   a JSON line per result (scripts/lib/tally.sh)
       ktap.py outcomes FILE COLL     "TEST ok|fail|skip" of a collection, sorted
       ktap.py has FILE COLL TEST     exit 0 when TEST of COLL has a result
       ktap.py skipped FILE TEST      the skipped cases of TEST, one a line
       ktap.py failures FILE          each failing result with its output
"""
import json
import re
import sys

RESULT = re.compile(r"^(not )?ok(?: (\d+))?(?: -)?(?: (.*?))?(?:\s+#\s*(.*))?$")
CASE = re.compile(r"^#(?: #)* (not )?ok \d+ (.*?)(?:\s+#\s*(SKIP)\b\s*(.*))?$")
HEADER = re.compile(r"^(?:[KT]AP version \d+|1\.\.\d+)$")
SELFTEST = re.compile(r"^selftests: ([^:]+): (.+)$")


class Result:
    """One result line, its output and its harness cases."""

    def __init__(self, ok, name, directive, output):
        self.name = name
        m = SELFTEST.match(name)
        self.collection, self.test = (m.group(1), m.group(2)) if m else ("", name)
        skip = re.match(r"SKIP\b\s*(.*)", directive or "", re.I)
        self.status = "fail" if not ok else "skip" if skip else "ok"
        self.reason = skip.group(1) if skip else (directive or "")
        self.output = output
        self.cases = []
        for line in output:
            c = CASE.match(line)
            if c:
                status = "fail" if c.group(1) else "skip" if c.group(3) else "ok"
                self.cases.append((c.group(2), status, c.group(4) or ""))


def parse(lines):
    """The results of the TAP lines, in order. Lines that are neither a
    header, a result nor "#" output (a program's stray stderr) are kept as
    output of the next result."""
    results, output = [], []
    for line in lines:
        line = line.rstrip("\n")
        if HEADER.match(line):
            continue
        m = RESULT.match(line)
        if m and (m.group(2) or m.group(3)):
            results.append(Result(not m.group(1), m.group(3) or "", m.group(4), output))
            output = []
        else:
            output.append(line)
    return results


def read(path):
    with open(path, errors="replace") as f:
        return parse(f)


STATUS = {"ok": "pass", "fail": "fail", "skip": "skip"}


def records(results, label=""):
    """The tally records (scripts/lib/tally.sh) of the results."""
    for r in results:
        yield {"check": f"{label}: {r.name}" if label else r.name, "result": STATUS[r.status],
               **({"reason": r.reason} if r.reason else {})}


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    cmd, results = argv[0], read(argv[1])
    if cmd == "records" and len(argv) in (2, 3):
        for rec in records(results, argv[2] if len(argv) == 3 else ""):
            print(json.dumps(rec, separators=(",", ":")))
    elif cmd == "outcomes" and len(argv) == 3:
        for test, status in sorted((r.test, r.status) for r in results if r.collection == argv[2]):
            print(test, status)
    elif cmd == "has" and len(argv) == 4:
        return 0 if any(r.collection == argv[2] and r.test == argv[3] for r in results) else 1
    elif cmd == "skipped" and len(argv) == 3:
        for r in results:
            if r.test == argv[2]:
                for name, status, why in r.cases:
                    if status == "skip":
                        print(f"{name} # SKIP {why}".rstrip())
    elif cmd == "failures" and len(argv) == 2:
        for r in results:
            if r.status == "fail":
                print(f"not ok {r.name}" + (f" # {r.reason}" if r.reason else ""))
                for line in r.output[-25:]:
                    print("    " + line)
    else:
        raise SystemExit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
