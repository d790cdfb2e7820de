#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""lint-warnings.py TREE LOG: print the compiler and sparse warnings of a
W=1 C=1 build log that the series is responsible for, exit 1 if any.

A warning is the series' when it points into a file the series adds, or at
a line the series added to a file of the base (from `git diff base` in the
prepared tree). Base files such as kernel/signal.c carry many sparse and
W=1 warnings of their own; those are not the series' to fix.
"""
import os
import re
import subprocess
import sys

WARN = re.compile(r"^(\S+?):(\d+):(?:\d+:)? (warning|error): (.*)$")
HUNK = re.compile(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@")


def added_lines(tree, path, cache):
    if path not in cache:
        in_base = subprocess.run(["git", "-C", tree, "cat-file", "-e", "base:" + path],
                                 capture_output=True).returncode == 0
        if not in_base:
            cache[path] = None          # a new file: every line is the series'
        else:
            diff = subprocess.run(["git", "-C", tree, "diff", "-U0", "base", "--", path],
                                  capture_output=True, text=True).stdout
            lines = set()
            for l in diff.splitlines():
                m = HUNK.match(l)
                if m:
                    start, count = int(m.group(1)), int(m.group(2) or 1)
                    lines.update(range(start, start + count))
            cache[path] = lines
    return cache[path]


def main():
    tree, log = os.path.realpath(sys.argv[1]), sys.argv[2]
    cache, found = {}, []
    with open(log, errors="replace") as f:
        for line in f:
            m = WARN.match(line.strip())
            if not m:
                continue
            path = os.path.normpath(m.group(1))
            if os.path.isabs(path):
                path = os.path.relpath(path, tree)
            if path.startswith(".."):
                continue
            lines = added_lines(tree, path, cache)
            if lines is None or int(m.group(2)) in lines:
                found.append(line.strip())
    for w in dict.fromkeys(found):
        print(w)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
