#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/insns/sframe.md from bench/insns/run-sframe's counts.

  bench/insns/sframe-report.py OUTDIR RESULTS.md

Per build (fp, gsframe, file), the kernel instructions per frame of the
walk in prctl(PR_USER_STACK_READ): (selfread-64 - selfread-8) / 56, each
the median of its rounds with the widest range the rounds allow. The
target, a table given for the file within 1.2x of the assembler's
section per frame, is met only if it holds at the extremes.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import Fig, load  # noqa: E402


def main():
    outdir, results = sys.argv[1], sys.argv[2]
    figures = load(outdir)
    per_frame = {}
    lines = ["# Kernel instructions per frame: a table given for the file",
             "",
             "`make bench-sframe-cost` (bench/insns/run-sframe): the walk in",
             "`prctl(PR_USER_STACK_READ)` from 8 and 64 frames of the probe's",
             "C code, counted by the plugin of `make bench-insns`; per frame",
             "(64 - 8) / 56, median of the rounds (range).",
             "",
             "| build | selfread-8 | selfread-64 | per frame |",
             "| --- | --- | --- | --- |"]
    for build in ("fp", "gsframe", "file"):
        if build not in figures:
            sys.exit(f"{outdir}: no counts for {build}")
        f8 = Fig(figures[build]["selfread-8"])
        f64 = Fig(figures[build]["selfread-64"])
        per_frame[build] = (f64 - f8).scale(1 / 56)
        lines.append(f"| {build} | {f8} | {f64} | {per_frame[build]} |")
    gs, fl = per_frame["gsframe"], per_frame["file"]
    ratio = fl.med / gs.med
    worst = fl.hi / gs.lo
    lines += ["",
              f"Table given for the file against the assembler's section, "
              f"per frame: {ratio:.2f}x (at the extremes of the rounds "
              f"{worst:.2f}x); target at most 1.2x: "
              f"{'met' if worst <= 1.2 else '**not met**'}."]
    with open(results, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
