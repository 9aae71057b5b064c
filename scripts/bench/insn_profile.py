#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per operation of a workload on two kernels, by function.

Reads the plugin.log of each kernel's insnprof boot (scripts/bench/insn-profile.sh,
scripts/bench/insnprof.c): two marked runs of the workload, at L and 3L
operations, each as lines "insnprof RUN VADDR OWN OTHERS" (one per
instruction address) and "insnprof RUN end". The cost per operation is the
second run minus the first over OPS (2L). Addresses are given the kernel
function of the System.map text symbol at or below them; user-space
addresses are one row, and so are kernel addresses outside the kernel's
text. Prints a markdown report on stdout.

usage: insn_profile.py --workload W --ops N --setup TEXT [--rows N]
                       NAME_A LOG_A MAP_A NAME_B LOG_B MAP_B
"""
import argparse
import bisect
import collections
import re
import sys

USER = "[user space]"
OUTSIDE = "[kernel, outside its text: modules, BPF, trampolines]"
KERNEL_START = 0xffff800000000000


def is_marker(name):
    """A symbol that marks a section, not a function: at the same address
    as one (__softirqentry_text_start and __do_softirq), the function's
    name is the one to show."""
    return name in ("_text", "_stext", "_etext", "_sinittext", "_einittext") or \
        re.fullmatch(r"__\w*_(start|end)", name) is not None


def symbols(path):
    """(addresses, names, text): the functions of a System.map, sorted by
    address, one name per address (a function's before a section
    marker's), and the kernel's text and init text as address ranges."""
    by_addr, marks = {}, {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or parts[1] not in "tTwW":
                continue
            addr, name = int(parts[0], 16), parts[2]
            if name in ("_stext", "_etext", "_sinittext", "_einittext"):
                marks[name] = addr
            if addr not in by_addr or (is_marker(by_addr[addr]) and not is_marker(name)):
                by_addr[addr] = name
    if "_stext" not in marks or "_etext" not in marks:
        sys.exit(f"insn_profile: no _stext and _etext in {path}")
    text = [(marks["_stext"], marks["_etext"])]
    if "_sinittext" in marks and "_einittext" in marks:
        text.append((marks["_sinittext"], marks["_einittext"]))
    addrs = sorted(by_addr)
    return addrs, [by_addr[a] for a in addrs], text


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
                # Lines of one address add up.
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
    addrs, names, text = symbols(sysmap)
    own, others = collections.Counter(), collections.Counter()
    for sign, r in ((-1, 1), (1, 2)):
        for vaddr, (o, t) in got[r].items():
            if vaddr < KERNEL_START:
                fn = USER
            elif not any(lo <= vaddr < hi for lo, hi in text):
                fn = OUTSIDE
            else:
                fn = names[bisect.bisect_right(addrs, vaddr) - 1]
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
    print(f"{args.setup}. Counted by the insnprof plugin per instruction, as -icount "
          f"counts guest time (each iteration of a rep-prefixed string instruction is "
          f"one; an instruction that faults counts once more, when it runs again), over "
          f"{args.ops} operations (the run of 3L minus the run of L, so that the "
          f"marks' own cost cancels).\n")
    print(f"| instructions per operation | {na} | {nb} | {na} - {nb} | {na}/{nb} |")
    print("|---|---|---|---|---|")
    for what, x, y in (("the workload's vCPU (CPU 0)", a_own, b_own),
                       ("the other vCPUs", a_oth, b_oth),
                       ("all vCPUs (what -icount charges as time)", a_all, b_all)):
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
          f"the other {len(diff) - len(rows):,} functions to "
          f"{total(a_all) - total(b_all) - shown:+,.0f}.")


if __name__ == "__main__":
    main()
