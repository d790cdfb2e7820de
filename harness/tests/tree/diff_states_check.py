#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""harness/tests/tree/diff_states_check.py: tree.py's diff of two states
sees a change that keeps a file's size and time.

`tree.py steps --save` diffs each step of a new file with the next one.
A step that only reorders lines (two #include lines swapped) keeps the
file's size, and the steps, copied with their times, can share one: a
diff that trusted git's stat cache lost such a step, and the patch that
made it lost its growth. Exits 0 if the diff has the change.
"""
import importlib.util
import os
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "tree", os.path.join(here, "..", "..", "tree.py"))
tree = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tree)



def reorder_seen():
    """One try: two states that differ by a swap of two lines, with the
    same size and time."""
    path = "kernel/unwind/x.c"
    with tempfile.TemporaryDirectory(prefix="diffcheck.", dir=tree.BUILD) as tmp:
        for d, text in (("a", '#include "a.h"\n#include "b.h"\n'),
                        ("b", '#include "b.h"\n#include "a.h"\n')):
            f = os.path.join(tmp, d, path)
            os.makedirs(os.path.dirname(f))
            with open(f, "w") as fh:
                fh.write(text)
            os.utime(f, (1000000000, 1000000000))
        diff = tree.diff_states(os.path.join(tmp, "a"), os.path.join(tmp, "b"),
                                [path])
    return '+#include "a.h"' in diff


os.makedirs(tree.BUILD, exist_ok=True)
# Whether a stat cache would match depends on inode reuse: try often.
for attempt in range(30):
    if not reorder_seen():
        print("diff_states lost a change that keeps the size and time "
              "(try %d of 30)" % (attempt + 1))
        sys.exit(1)
print("diff_states saw a reorder of two lines in 30 tries of 30")
