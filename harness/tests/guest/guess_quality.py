#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Recall and precision of the user chains of one zstd recording against
those of its frame-pointer build, by function name.

    guess_quality.py TRUTH.script TEST.script

Each file is `perf script -F comm,tid,ip,sym,dso` output. Samples are
sorted into places (the innermost user function, and the kernel entry of
kernel samples). A place's true chain is the most common user chain
(function names, innermost first) of the frame-pointer build's samples
there. For each sample of TEST in a place that has one: recall is the
longest common subsequence of its chain and the true one over the true
one's length, precision that over its own length. Prints one line:

    samples N recall R precision P

the means over the compared samples (0 samples: nothing to compare).
"""
import collections
import sys


def samples(path):
    """[(place, [function, ...])] of the zstd samples in a script output."""
    out = []
    comm, chain, entry = None, [], "user"

    def flush():
        if comm and comm.startswith("zstd") and chain:
            out.append((chain[0] + "|" + entry, tuple(chain)))

    for line in open(path, errors="replace"):
        if not line.strip():
            flush()
            comm, chain, entry = None, [], "user"
            continue
        if line[0] in " \t":
            f = line.split()
            # perf script marks a guessed frame "ADDRESS ? SYMBOL".
            if len(f) > 2 and f[1] == "?":
                del f[1]
            if len(f) < 2:
                continue
            if "kernel.kallsyms" in line:
                entry = f[1]
                continue
            chain.append(f[1])
            continue
        flush()
        comm, chain, entry = line.split()[0], [], "user"
    flush()
    return out


def lcs(a, b):
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def main(truth_path, test_path):
    by_place = collections.defaultdict(collections.Counter)
    for place, chain in samples(truth_path):
        by_place[place][chain] += 1
    truth = {p: c.most_common(1)[0][0] for p, c in by_place.items()}
    n, rec, prec = 0, 0.0, 0.0
    for place, chain in samples(test_path):
        want = truth.get(place)
        if not want:
            continue
        common = lcs(chain, want)
        n += 1
        rec += common / len(want)
        prec += common / len(chain)
    if not n:
        print("samples 0 recall 0 precision 0")
        return
    print("samples %d recall %.3f precision %.3f" % (n, rec / n, prec / n))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
