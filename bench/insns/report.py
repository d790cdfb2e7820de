#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn make bench-insns' raw counts into bench/insns/results.md.

  bench/insns/report.py OUTDIR RESULTS.md

OUTDIR holds, per kernel K (guest, nounwind) and boot B, phases-K-B (the
probe's "PHASE NAME OPS" lines, in order) and counts-K-B (the plugin's
"VCPU COUNT" lines, two per phase). Each phase gives one figure per round:
the kernel instructions per operation. A target compares medians, and is
met only if it also holds between the extremes of the rounds: a count
repeats closely under TCG, but not exactly (timer ticks, RCU, the spin
that waits for a self-NMI), and that spread is what the data allows.
"""
import glob
import os
import re
import statistics
import sys


# Where the notes by hand begin in results.md; report.py keeps them.
NOTES_MARK = "<!-- notes by hand: bench/insns/report.py keeps what follows -->"


def load(outdir):
    """{kernel: {phase: [instructions per op, one per round]}}."""
    figures = {}
    for phases_path in sorted(glob.glob(os.path.join(outdir, "phases-*"))):
        m = re.match(r"phases-(.+)-(\d+)$", os.path.basename(phases_path))
        if not m:
            continue
        kernel, boot = m.groups()
        counts_path = os.path.join(outdir, f"counts-{kernel}-{boot}")
        phases = [ln.split()[1:] for ln in open(phases_path)
                  if ln.startswith("PHASE ")]
        counts = [ln.split() for ln in open(counts_path) if ln.strip()]
        if len(counts) != 2 * len(phases):
            sys.exit(f"{counts_path}: {len(counts)} marks for "
                     f"{len(phases)} phases")
        for i, (name, ops) in enumerate(phases):
            (cpu0, c0), (cpu1, c1) = counts[2 * i], counts[2 * i + 1]
            if cpu0 != cpu1:
                sys.exit(f"{counts_path}: phase {name} moved CPUs")
            per_op = (int(c1) - int(c0)) / int(ops)
            figures.setdefault(kernel, {}).setdefault(name, []).append(per_op)
    return figures


class Fig:
    """A figure with the spread of its rounds."""

    def __init__(self, rounds):
        self.rounds = rounds
        self.med = statistics.median(rounds)
        self.lo = min(rounds)
        self.hi = max(rounds)

    def __sub__(self, other):
        # The difference and its widest range over the two sets of rounds.
        d = Fig([self.med - other.med])
        d.lo = self.lo - other.hi
        d.hi = self.hi - other.lo
        return d

    def scale(self, k):
        f = Fig([self.med * k])
        f.lo, f.hi = sorted((self.lo * k, self.hi * k))
        return f

    def __str__(self):
        return f"{self.med:.1f} ({self.lo:.1f} to {self.hi:.1f})"


def main():
    outdir, results = sys.argv[1], sys.argv[2]
    figs = load(outdir)
    series, base = figs.get("guest", {}), figs.get("nounwind", {})
    lines = ["<!-- SPDX-License-Identifier: GPL-2.0 -->", "",
             "# Kernel instructions per operation (make bench-insns)", "",
             "Counted by bench/insns/plugin.c under TCG on CPU 0 of the "
             "guest; each figure is the median of the rounds, with their "
             "range. Produced by bench/insns/report.py from "
             f"{len(figs.get('guest', {}).get('null', []))} rounds per "
             "kernel.", "",
             "| phase | " + " | ".join(sorted(figs)) + " |",
             "| --- |" + " --- |" * len(figs)]
    names = sorted({n for k in figs.values() for n in k})
    for n in names:
        cells = [str(Fig(figs[k][n])) if n in figs[k] else "-"
                 for k in sorted(figs)]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")

    targets = []
    if "null" in series and "null" in base:
        d = Fig(series["null"]) - Fig(base["null"])
        targets.append(("null system call: at most +5 instructions over "
                        "the kernel without CONFIG_UNWIND_USER",
                        f"{'+' if d.med >= 0 else ''}{d}", d.hi <= 5))
    per_frame = {}
    for what in ("walk", "nmi-request", "nmi-perf"):
        if f"{what}-64" in series and f"{what}-8" in series:
            per_frame[what] = (Fig(series[f"{what}-64"]) -
                               Fig(series[f"{what}-8"])).scale(1 / 56)
    if "walk" in per_frame and "nmi-perf" in per_frame:
        w, p = per_frame["walk"], per_frame["nmi-perf"]
        targets.append(("deferred walker per frame no higher than perf's "
                        "in-NMI walk per frame (8 to 64 frames)",
                        f"{w} vs {p}", w.hi <= p.lo))
    for depth in (8, 64):
        req, perf, none = (series.get(f"{w}-{depth}")
                           for w in ("nmi-request", "nmi-perf", "nmi-none"))
        if req and perf and none:
            d = Fig(req) - Fig(none)
            p = Fig(perf) - Fig(none)
            targets.append((f"one sample at {depth} frames: the deferred "
                            "request with its entry's walk and pass, "
                            "against perf's in-NMI walk",
                            f"{d} vs {p} ({d.med / p.med:.2f}x)",
                            None))
    for depth in (8, 64):
        off = series.get(f"nmi-nofault-{depth}")
        on = series.get(f"nmi-nofault-asked-{depth}")
        if off and on:
            d = Fig(on) - Fig(off)
            targets.append((f"a self-NMI's unwind_user_nofault() at {depth} "
                            "frames (a system call: its checks, then "
                            "-EAGAIN) with no process opted in since boot: "
                            "cheaper than once one has (the features are "
                            "asked whether the task wants the deferred "
                            "pass), beyond the rounds' spread",
                            f"{Fig(off)} vs {Fig(on)} (-{d})", d.lo > 0))
    short, hostile = series.get("codeframe-short"), series.get("codeframe-hostile")
    if short and hostile:
        s, h = Fig(short), Fig(hostile)
        targets.append(("16 frames read from their code: ways out longer "
                        "than a reading decodes cost at most 10x one-"
                        "instruction ways (one PR_USER_STACK_READ)",
                        f"{h} vs {s} ({h.med / s.med:.1f}x)",
                        h.hi <= 10 * s.lo))
    if targets:
        lines += ["", "| target | measured | met |", "| --- | --- | --- |"]
        for what, measured, met in targets:
            verdict = "-" if met is None else ("yes" if met else "**no**")
            lines.append(f"| {what} | {measured} | {verdict} |")
    if per_frame:
        lines += ["", "Per frame, from the 64- and 8-frame phases: " +
                  "; ".join(f"{k} {v}" for k, v in sorted(per_frame.items())) +
                  "."]
    # The notes written by hand below the marker (history, findings)
    # stay; the tables above it are made anew.
    notes = ""
    if os.path.exists(results):
        text = open(results).read()
        at = text.find(NOTES_MARK)
        if at >= 0:
            notes = "\n" + text[at:]
    with open(results, "w") as f:
        f.write("\n".join(lines) + "\n" + notes)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
