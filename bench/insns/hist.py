#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per operation, function by function, of two kernels.

  bench/insns/hist.py OUTDIR [PHASE...]

OUTDIR holds, for K in before and after (bench/insns/hist): phases-K,
the probe's "PHASE NAME OPS" lines and the guest's kallsyms as "SYM"
lines; hist-K, the plugin's "mark VCPU" blocks of "ADDRESS INSTRUCTIONS"
lines, one block per mark, the block at a phase's second mark being what
ran in the phase. For each PHASE (default walk-8 and walk-64) it prints
the functions whose instructions per operation differ between the
kernels, then, when both walk-8 and walk-64 are asked, the same per
frame: (walk-64 - walk-8) / 56, the frames the two walks differ by.
"""
import bisect
import os
import sys
from collections import defaultdict


def load(outdir, kernel):
    """{phase: {function: instructions per op, the mean of the rounds}}."""
    phases, syms = [], []
    for ln in open(os.path.join(outdir, f"phases-{kernel}")):
        f = ln.split()
        if ln.startswith("PHASE "):
            phases.append((f[1], int(f[2])))
        elif ln.startswith("SYM ") and len(f) >= 4 and f[2] in "tTwW":
            syms.append((int(f[1], 16), f[3]))
    syms.sort()
    addrs = [a for a, _ in syms]

    def name(addr):
        i = bisect.bisect_right(addrs, addr) - 1
        return syms[i][1] if i >= 0 else "?"

    blocks, cur = [], None
    for ln in open(os.path.join(outdir, f"hist-{kernel}")):
        f = ln.split()
        if f[0] == "mark":
            cur = defaultdict(int)
            blocks.append(cur)
        else:
            cur[int(f[0], 16)] += int(f[1])
    if len(blocks) != 2 * len(phases):
        sys.exit(f"hist-{kernel}: {len(blocks)} marks for {len(phases)} phases")
    per = defaultdict(lambda: defaultdict(float))
    rounds = defaultdict(int)
    for i, (ph, ops) in enumerate(phases):
        rounds[ph] += 1
        for addr, n in blocks[2 * i + 1].items():
            per[ph][name(addr)] += n / ops
    return {ph: {fn: v / rounds[ph] for fn, v in fns.items()}
            for ph, fns in per.items()}


def table(title, b, a, limit=25, floor=0.5):
    print(f"\n{title}: before {sum(b.values()):.1f}, after "
          f"{sum(a.values()):.1f}, difference "
          f"{sum(a.values()) - sum(b.values()):+.1f}\n")
    print("| function | before | after | difference |")
    print("| --- | --- | --- | --- |")
    diffs = sorted(((a.get(f, 0) - b.get(f, 0), f) for f in set(a) | set(b)),
                   key=lambda d: -abs(d[0]))
    for d, f in diffs[:limit]:
        if abs(d) < floor:
            break
        print(f"| {f} | {b.get(f, 0):.1f} | {a.get(f, 0):.1f} | {d:+.1f} |")


def main():
    outdir = sys.argv[1]
    asked = sys.argv[2:] or ["walk-8", "walk-64"]
    before, after = load(outdir, "before"), load(outdir, "after")
    for ph in asked:
        table(ph, before.get(ph, {}), after.get(ph, {}))
    if "walk-8" in asked and "walk-64" in asked:
        def frame(k):
            w8, w64 = k.get("walk-8", {}), k.get("walk-64", {})
            return {f: (w64.get(f, 0) - w8.get(f, 0)) / 56
                    for f in set(w8) | set(w64)}
        table("per frame, (walk-64 - walk-8) / 56", frame(before),
              frame(after), floor=0.05)


if __name__ == "__main__":
    main()
