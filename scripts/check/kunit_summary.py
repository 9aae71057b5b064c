#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The counts of a KUnit run, from the JSON that kunit.py writes (--json).

Prints "PASSED FAILED SKIPPED" on the first line, then one line per case
that did not pass: "FAILED suite.case" or "SKIPPED suite.case". A case
is a leaf of the tree (a parameterised case counts once per parameter);
kunit.py's ERROR (the kernel crashed in it) counts as failed. Exits 2
when the file is missing or not kunit.py's JSON. With --records LABEL,
prints instead a JSON line per case, as scripts/lib/tally.sh records it:
{"check": "LABEL: suite.case", "result": "pass|fail|skip"}.

usage: kunit_summary.py [--records LABEL] FILE
"""
import json
import sys

VERDICT = {"PASS": "passed", "SKIP": "skipped", "FAIL": "failed", "ERROR": "failed"}


def cases(group, path=()):
    """(name, status) of every leaf case under a kunit.py JSON group; the
    top group (kunit.py's "KUnit Test Group") names no part of a name."""
    for sub in group.get("sub_groups", []):
        yield from cases(sub, path + (sub["name"],))
    for case in group.get("test_cases", []):
        yield ".".join(path + (case["name"] or "(not reached)",)), case["status"]


def summary(doc):
    """{passed, failed, skipped} counts and the cases that did not pass."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    others = []
    for name, status in cases(doc):
        verdict = VERDICT.get(status)
        if verdict is None:
            raise ValueError(f"case {name}: unknown status {status!r}")
        counts[verdict] += 1
        if verdict != "passed":
            others.append(f"{verdict.upper()} {name}")
    return counts, others


RECORD = {"passed": "pass", "failed": "fail", "skipped": "skip"}


def records(doc, label):
    """The tally records of every case, in order."""
    for name, status in cases(doc):
        if status not in VERDICT:
            raise ValueError(f"case {name}: unknown status {status!r}")
        yield {"check": f"{label}: {name}", "result": RECORD[VERDICT[status]]}


def main(argv):
    label = None
    if len(argv) == 4 and argv[1] == "--records":
        label = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) != 2:
        sys.exit(__doc__.split("usage: ")[1])
    try:
        with open(argv[1]) as f:
            doc = json.load(f)
        counts, others = summary(doc)
        recs = list(records(doc, label)) if label is not None else []
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"kunit_summary: {argv[1]}: {e}", file=sys.stderr)
        return 2
    if label is not None:
        for rec in recs:
            print(json.dumps(rec, separators=(",", ":")))
        return 0
    print(counts["passed"], counts["failed"], counts["skipped"])
    for line in others:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
