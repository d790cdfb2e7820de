#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tally TAP and KTAP results.

  tap.py [--quiet] NAME=FILE...   print every leaf result of each stream,
                                  then "N passed, N failed, N skipped"
  tap.py --counts FILE            print "passed failed skipped" for one file

A stream may be plain TAP (kselftest_harness), KTAP with nested subtests
(KUnit, also when it is read out of a kernel console log behind printk
timestamps), or kselftest's runner output, which nests a test's own TAP
behind "# ". Only leaves count: a summary line for a suite counts only when
it reports a failure that none of its subtests explains (a crash, a
timeout). A plan that promises more results than arrive counts the missing
ones as failures. Exit status: 1 if anything failed, else 0.
"""
import re
import sys

STAMP = re.compile(r"^(?:<\d+>)?\[\s*\d+\.\d+\]\s?(?:\[\s*[CT]\d+\]\s?)?")
RESULT = re.compile(r"^(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?([^#]*?)\s*(?:#\s*(.*))?$")
PLAN = re.compile(r"^1\.\.(\d+)")
SUBTEST = re.compile(r"^#\s*Subtest:\s*(.*)$")
KSELFTEST = re.compile(r"^#\s*selftests:\s*(.*)$")
TAPLINE = re.compile(r"^(?:ok\b|not ok\b|1\.\.\d|TAP version|KTAP version|#\s*Subtest:)")


def depth_and_body(line):
    """Nesting depth of a line: 4 spaces or one '# ' in front of TAP each."""
    depth = 0
    while True:
        if line.startswith("    "):
            line = line[4:]
        elif line.startswith("# ") and TAPLINE.match(line[2:].lstrip()):
            line = line[2:]
        elif line.startswith("\t"):
            line = line[1:]
        else:
            break
        depth += 1
    return depth, line.strip()


class Tally:
    def __init__(self, stream, quiet=False):
        self.stream = stream
        self.quiet = quiet
        self.passed = self.failed = self.skipped = 0
        self.names = {}       # depth -> subtest name announced at that depth
        self.plans = {}       # depth -> [planned, seen]
        self.children = {}    # depth -> (results, failures) seen below it

    def report(self, verdict, name):
        if not self.quiet:
            print("%-8s %s: %s" % (verdict, self.stream, name))

    def close_plan(self, depth, label):
        plan = self.plans.pop(depth, None)
        if plan and plan[1] < plan[0]:
            missing = plan[0] - plan[1]
            self.failed += missing
            self.report("not ok", "%s: %d of %d planned results missing"
                        % (label, missing, plan[0]))

    def feed(self, raw):
        line = STAMP.sub("", raw.rstrip("\r\n"))
        depth, body = depth_and_body(line)
        m = SUBTEST.match(body)
        if m:
            self.names[depth] = m.group(1).strip()
            return
        m = KSELFTEST.match(body)
        if m:
            # kselftest's runner names the test whose TAP follows, nested.
            self.names[depth + 1] = m.group(1).strip()
            return
        m = PLAN.match(body)
        if m:
            planned = int(m.group(1))
            seen = self.children.get(depth, (0, 0))[0]
            if seen:
                # A trailing plan: the results it counts came before it.
                self.plans[depth] = [planned, seen]
                self.close_plan(depth, self.names.get(depth, self.stream))
            else:
                self.plans[depth] = [planned, 0]
            return
        m = RESULT.match(body)
        if not m:
            return
        ok = m.group(1) == "ok"
        name = m.group(3).strip() or "test %s" % (m.group(2) or "?")
        directive = (m.group(4) or "").strip()
        prefix = [self.names[d] for d in sorted(self.names) if d <= depth]
        full = ".".join(prefix[-2:] + [name]) if prefix else name
        if depth in self.plans:
            self.plans[depth][1] += 1
        below = self.children.pop(depth + 1, None)
        self.close_plan(depth + 1, full)
        for d in [d for d in self.names if d > depth]:
            del self.names[d]
        # Report up to the parent that this result happened below it.
        res, fails = self.children.get(depth, (0, 0))
        self.children[depth] = (res + 1, fails + (0 if ok else 1))
        if below and below[0]:
            # A summary line: count it only if it reports a failure that no
            # subtest accounts for (the test died or timed out).
            if not ok and below[1] == 0:
                self.failed += 1
                self.report("not ok", full + " (died or timed out)")
            return
        if directive.upper().startswith("SKIP"):
            self.skipped += 1
            self.report("skip", full + (" # " + directive if directive else ""))
        elif ok:
            self.passed += 1
            self.report("ok", full)
        else:
            self.failed += 1
            self.report("not ok", full)

    def finish(self):
        for depth in sorted(self.plans, reverse=True):
            self.close_plan(depth, self.stream)


def tally_file(stream, path, quiet=False):
    t = Tally(stream, quiet)
    try:
        with open(path, errors="replace") as f:
            for raw in f:
                t.feed(raw)
    except FileNotFoundError:
        t.failed += 1
        t.report("not ok", "no output (%s missing)" % path)
    t.finish()
    return t


def main(argv):
    if len(argv) == 2 and argv[0] == "--counts":
        t = tally_file("-", argv[1], quiet=True)
        print(t.passed, t.failed, t.skipped)
        return 0
    quiet = bool(argv) and argv[0] == "--quiet"
    if quiet:
        argv = argv[1:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    passed = failed = skipped = 0
    for arg in argv:
        stream, _, path = arg.partition("=")
        t = tally_file(stream, path, quiet)
        passed, failed, skipped = passed + t.passed, failed + t.failed, skipped + t.skipped
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
