#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The results of the checks, as data: the JSON lines that scripts/lib/tally.sh
appends to $RESULTS, one per check,

    {"step": "selftests", "check": "patched: selftests: mm: rss_stat", "result": "pass",
     "line": "6.12", "base": "6.12.118", "source": "Debian's linux-source-6.12 6.12.118-1~deb12u1"}

where line is the line of ./lines the check ran on, base and source what
its base kernel is (scripts/tree/tree.sh records them; "unknown" before the
tree is made), and result is pass, fail or skip, or, for a script that stopped, error
(bad input, a missing tree: die) or nobuild (it could not build what it
tests: die_build). make check's closing line and make mutate's verdicts
are computed here. Test: scripts/check/test_results.py.

usage: results.py total FILE [--from N]   "N passed, N failed, N skipped" of the
                                         records after the first N lines (error
                                         and nobuild count as failed); exit 1
                                         when one failed
       results.py bases FILE [--from N]   the lines and bases of those records, one
                                         "line L, base Linux V (SOURCE)" a line
       results.py verdict FILE            what a step's records say of it: pass,
                                         fail, nobuild, error (one word)
"""
import json
import sys

RESULTS = ("pass", "fail", "skip", "error", "nobuild")
FIELDS = ("step", "check", "result", "line", "base", "source")


def read(path, start=0):
    """The records of FILE after its first START lines."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if n <= start or not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("result") not in RESULTS or any(k not in rec for k in FIELDS):
                raise ValueError(f"{path}:{n}: not a result record (fields {', '.join(FIELDS)}): {line.strip()}")
            out.append(rec)
    return out


def total(records):
    """(passed, failed, skipped): error and nobuild count as failed."""
    n = {r: sum(1 for rec in records if rec["result"] == r) for r in RESULTS}
    return n["pass"], n["fail"] + n["error"] + n["nobuild"], n["skip"]


def bases(records):
    """The (line, base, source) of the records, in their order, each once."""
    return list(dict.fromkeys((r["line"], r["base"], r["source"]) for r in records))


def verdict(records):
    """What a step's records say: nobuild or error when it stopped (the
    build first: a mutant that breaks it is not caught), fail when a check
    failed, pass when at least one passed and none failed; a step with no
    result at all is an error."""
    seen = {rec["result"] for rec in records}
    for v in ("nobuild", "error", "fail"):
        if v in seen:
            return v
    return "pass" if "pass" in seen else "error"


def main(argv):
    try:
        if len(argv) in (2, 4) and argv[0] == "total" and (len(argv) == 2 or argv[2] == "--from"):
            p, f, s = total(read(argv[1], int(argv[3]) if len(argv) == 4 else 0))
            print(f"{p} passed, {f} failed, {s} skipped")
            return 0 if f == 0 else 1
        if len(argv) in (2, 4) and argv[0] == "bases" and (len(argv) == 2 or argv[2] == "--from"):
            for line, base, source in bases(read(argv[1], int(argv[3]) if len(argv) == 4 else 0)):
                print(f"line {line}, base Linux {base} ({source})")
            return 0
        if len(argv) == 2 and argv[0] == "verdict":
            print(verdict(read(argv[1])))
            return 0
    except (OSError, ValueError) as e:
        print(f"results.py: {e}", file=sys.stderr)
        return 2
    sys.exit(__doc__.split("usage: ")[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
