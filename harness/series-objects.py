#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""series-objects.py TREE [CONFIG]: the kernel objects the series adds or
patches, one per line; with CONFIG (a .config), only those that config
builds.

The series' objects are the .c files of the overlay and the .c files its
patches touch, outside tools/, scripts/ and samples/ (read from the
prepared tree's `git diff base`). Whether a config builds one is read from
the Kbuild makefiles on its path, the way Kbuild reads them: an object or
directory listed under obj-y, or under obj-$(CONFIG_X) with X set to y or
m, inside any `ifdef`/`ifeq ($(CONFIG_X),y)` around the line. That is
enough for the makefiles the series touches; an object its directory's
makefile does not name is not built (and said so on stderr).
"""
import os
import re
import subprocess
import sys

SKIP = ("tools/", "scripts/", "samples/", "Documentation/")
ASSIGN = re.compile(r"^([\w-]+)-(y|\$\(CONFIG_(\w+)\))\s*[:+]?=\s*(.*)$")
COND = re.compile(r"^if(n?)(def|eq)\s*\(?\s*(?:\$\()?CONFIG_(\w+)\)?\s*(?:,\s*(\w*)\s*\))?")


def series_objects(tree):
    out = subprocess.run(["git", "-C", tree, "diff", "--name-only", "base"],
                         capture_output=True, text=True, check=True).stdout
    objs = set()
    for f in out.split():
        if f.endswith(".c") and not f.startswith(SKIP):
            objs.add(f[:-2] + ".o")
    return sorted(objs)


def read_config(path):
    conf = {}
    for line in open(path):
        m = re.match(r"^CONFIG_(\w+)=(.*)$", line)
        if m:
            conf[m.group(1)] = m.group(2)
    return conf


def makefile_lines(path):
    """Logical lines (continuations joined) with the conditions around
    each: a list of (line, [(symbol, wanted)])."""
    lines, conds, cur = [], [], ""
    for raw in open(path):
        raw = raw.split("#", 1)[0].rstrip("\n")
        if raw.endswith("\\"):
            cur += raw[:-1] + " "
            continue
        line = (cur + raw).strip()
        cur = ""
        m = COND.match(line)
        if m:
            neg, kind, sym, val = m.groups()
            want = True if kind == "def" or (val or "") == "y" else (val or "")
            if kind == "eq" and val == "":
                want = False
            conds.append((sym, want if not neg else not want))
        elif line.startswith("else") and conds:
            sym, want = conds[-1]
            conds[-1] = (sym, not want if isinstance(want, bool) else want)
        elif line.startswith("endif") and conds:
            conds.pop()
        elif line:
            lines.append((line, list(conds)))
    return lines


def cond_holds(conf, conds):
    for sym, want in conds:
        on = conf.get(sym) in ("y", "m")
        if isinstance(want, bool) and on != want:
            return False
    return True


def listed(conf, makefile, name):
    """True if @makefile builds @name (an object or 'dir/'), False if it
    lists it only under unset options, None if it does not list it."""
    if not os.path.exists(makefile):
        return None
    found = None
    # x86 names some objects by the word size: signal_$(BITS).o.
    bits = "64" if conf.get("64BIT") == "y" else "32"
    for line, conds in makefile_lines(makefile):
        line = line.replace("$(BITS)", bits)
        m = ASSIGN.match(line)
        if not m or name not in m.group(4).split():
            continue
        var, when, sym, _ = m.groups()
        on = when == "y" or conf.get(sym) in ("y", "m")
        on = on and cond_holds(conf, conds)
        if var in ("obj", "lib", "core", "drivers", "libs") and on:
            return True
        if var not in ("obj", "lib", "core", "drivers", "libs"):
            # A composite object (foo-y += name.o), built if foo.o is, or
            # a list another line takes in whole ($(mmu-y)).
            holder = listed(conf, makefile, var + ".o")
            if not holder:
                holder = listed(conf, makefile, "$(%s-y)" % var)
            if holder and on:
                return True
        found = False if found is None else found
    return found


def built(tree, conf, obj):
    parts = obj.split("/")
    depth = len(parts) - 1
    while depth > 0:
        d = "/".join(parts[:depth])
        name = parts[depth] + ("" if depth == len(parts) - 1 else "/")
        res = listed(conf, os.path.join(tree, d, "Makefile"), name)
        if res is None and depth < len(parts) - 1:
            # Top-level directories are listed in the main Makefile or Kbuild.
            res = listed(conf, os.path.join(tree, d, "Kbuild"), name)
        up = depth
        # A Makefile may name an object of a directory below it by its
        # path (kernel/unwind/Makefile: sframe/read.o); that directory
        # then needs no Makefile of its own.
        while res is None and depth == len(parts) - 1 and up > 1:
            up -= 1
            res = listed(conf, os.path.join(tree, "/".join(parts[:up]), "Makefile"),
                         "/".join(parts[up:]))
        if res is False:
            return False
        if res is None and depth == len(parts) - 1:
            # Not named for this config (signal_64.o on a 32-bit kernel).
            print("series-objects: %s is not in %s/Makefile: not built"
                  % (obj, d), file=sys.stderr)
            return False
        depth = up - 1
    return True


def main():
    tree = os.path.realpath(sys.argv[1])
    objs = series_objects(tree)
    if len(sys.argv) > 2:
        conf = read_config(sys.argv[2])
        objs = [o for o in objs if built(tree, conf, o)]
    print("\n".join(objs))


if __name__ == "__main__":
    main()
