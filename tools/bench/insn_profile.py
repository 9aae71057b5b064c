#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per operation of a workload on two kernels, by function.

Reads the plugin.log of each kernel's insnprof boot (scripts/insn-profile.sh,
tools/bench/insnprof.c): two marked runs of the workload, at L and 3L
operations, each as lines "insnprof RUN VADDR OWN OTHERS" and "insnprof RUN
end". The cost per operation is the second run minus the first over OPS
(2L). Addresses are given the kernel function of the System.map text symbol
at or below them; user-space addresses are one row. Prints a markdown
report on stdout.

usage: insn_profile.py --workload W --ops N --setup TEXT [--rows N]
                       NAME_A LOG_A MAP_A NAME_B LOG_B MAP_B
"""
import argparse
import bisect
import collections
import sys

USER = "[user space]"
KERNEL_START = 0xffff800000000000


def symbols(path):
    """Sorted (addresses, names) of the text symbols of a System.map."""
    syms = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in "tTwW":
                syms.append((int(parts[0], 16), parts[2]))
    if not syms:
        sys.exit(f"insn_profile: no text symbols in {path}")
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def runs(path):
    """{run: {vaddr: (own, others)}} of the complete runs of a plugin.log."""
    seen, done = collections.defaultdict(dict), set()
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts or parts[0] != "insnprof":
                continue
            if len(parts) == 3 and parts[2] == "end":
                done.add(int(parts[1]))
            elif len(parts) == 5:
                # A block retranslated with another length is another line.
                r, vaddr = int(parts[1]), int(parts[2], 16)
                o, t = seen[r].get(vaddr, (0, 0))
                seen[r][vaddr] = (o + int(parts[3]), t + int(parts[4]))
            else:
                sys.exit(f"insn_profile: {path}: bad line: {line.strip()}")
    return {r: seen[r] for r in done}


def per_op(log, sysmap, ops):
    """({function: instructions}, {function: instructions}) per operation
    on the marking vCPU and on the others: run 2 minus run 1, over ops."""
    got = runs(log)
    if sorted(got) != [1, 2]:
        sys.exit(f"insn_profile: {log}: want two complete marked runs, found {sorted(got) or 'none'}")
    addrs, names = symbols(sysmap)
    own, others = collections.Counter(), collections.Counter()
    for sign, r in ((-1, 1), (1, 2)):
        for vaddr, (o, t) in got[r].items():
            if vaddr < KERNEL_START:
                fn = USER
            else:
                i = bisect.bisect_right(addrs, vaddr) - 1
                fn = names[i] if i >= 0 else "[below the kernel text]"
            own[fn] += sign * o / ops
            others[fn] += sign * t / ops
    return own, others


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", required=True)
    ap.add_argument("--ops", type=int, required=True)
    ap.add_argument("--setup", required=True)
    ap.add_argument("--rows", type=int, default=25)
    ap.add_argument("kernels", nargs=6)
    args = ap.parse_args()
    if args.ops <= 0:
        sys.exit("insn_profile: --ops must be positive")
    na, la, ma, nb, lb, mb = args.kernels
    a_own, a_oth = per_op(la, ma, args.ops)
    b_own, b_oth = per_op(lb, mb, args.ops)
    # Counter's + would drop negative entries: add by hand.
    a_all, b_all = collections.Counter(), collections.Counter()
    for src, dst in ((a_own, a_all), (a_oth, a_all), (b_own, b_all), (b_oth, b_all)):
        for k, v in src.items():
            dst[k] += v

    def total(c):
        return sum(c.values())

    print(f"# Instructions per `{args.workload}` operation: {na} against {nb}\n")
    print(f"{args.setup}. Counted by the insnprof plugin as -icount counts guest time "
          f"(each iteration of a rep-prefixed string instruction is one), over "
          f"{args.ops} operations (the run of 3L minus the run of L, so that the "
          f"marks' own cost cancels).\n")
    print(f"| instructions per operation | {na} | {nb} | {na} - {nb} | {na}/{nb} |")
    print("|---|---|---|---|---|")
    for what, x, y in (("the workload's vCPU (CPU 0)", a_own, b_own),
                       ("the other vCPUs", a_oth, b_oth),
                       ("all vCPUs (what -icount charges)", a_all, b_all)):
        tx, ty = total(x), total(y)
        print(f"| {what} | {tx:,.0f} | {ty:,.0f} | {tx - ty:+,.0f} | "
              f"{tx / ty if ty else float('nan'):.4f} |")
    diff = {k: a_all[k] - b_all[k] for k in set(a_all) | set(b_all)}
    rows = sorted(diff, key=lambda k: (-abs(diff[k]), k))[:args.rows]
    shown = sum(diff[k] for k in rows)
    print(f"\nThe {len(rows)} functions whose counts differ most, all vCPUs. A function "
          "that one build inlines into its caller and the other does not shows as "
          "two rows of opposite sign.\n")
    print(f"| function | {na} | {nb} | difference |")
    print("|---|---|---|---|")
    for k in rows:
        print(f"| `{k}` | {a_all[k]:,.1f} | {b_all[k]:,.1f} | {diff[k]:+,.1f} |")
    print(f"\nThese rows add up to {shown:+,.0f} of the {total(a_all) - total(b_all):+,.0f}; "
          f"the other {len(diff) - len(rows)} functions to "
          f"{total(a_all) - total(b_all) - shown:+,.0f}.")


if __name__ == "__main__":
    main()
