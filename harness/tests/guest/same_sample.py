#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fp,defer's user chain against perf's dwarf unwinding of the same sample.

    same_sample.py SCRIPT COMM

SCRIPT is `perf script --no-inline -F event,comm,tid,ip,sym,symoff,dso,dsoff`
output (one line per frame: a recursion's return address may be its IP) of a
recording made through dwarf_also.so: its dwarf event's samples carry the
kernel's user chain (deferred, or walked in the interrupt) and a copy of
the user stack, and perf prints the kernel's user frames first, then the
frames it unwinds from the copy. Both start at the sample's user IP,
which splits them. Dwarf's return addresses are printed minus one (added
back here).

Frames compare by address, innermost out to the shorter chain's end, and
up to the kernel's first marked frame (perf script prints it "ADDR ? SYM":
guessed, or resting on a convention, so making no claim). Where the two
first differ, the frame inside them is looked up in its object's
.eh_frame (through .eh_frame_hdr): without an FDE there, dwarf had no
table for that step and its caller is its unwinder's guess, while the
kernel's, unmarked, came from the instructions it read. Prints:

    samples N paired P agree A differ D untabled U frames F

N samples of COMM, P with both chains, A of them the same on every frame
both have, D not where dwarf had a table, U not where it had none; F
frames compared. On stderr, the first five samples of D and of U, both
chains.
"""
import re
import struct
import sys


def samples(path, comm):
    """The dwarf event's samples of COMM: lists of user frames
    (addr, marked, text)."""
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                if cur is not None:
                    yield cur
                cur = None
                continue
            if not line[0].isspace():
                fields = line.split()
                cur = ([] if len(fields) >= 3 and fields[0] == comm and
                       "dwarf" in fields[2] else None)
                continue
            if cur is None:
                continue
            fields = line.split(None, 1)
            if len(fields) < 2 or "[kernel.kallsyms]" in fields[1]:
                continue
            addr = int(fields[0], 16)
            cur.append((addr, fields[1].startswith("? "), fields[1]))
    if cur is not None:
        yield cur


DSO = re.compile(r"\((/[^)+]+)\+0x([0-9a-f]+)\)$")


def place(frame):
    """(object path, file offset) of a frame as perf script prints it."""
    m = DSO.search(frame[2])
    return (m.group(1), int(m.group(2), 16)) if m else (None, None)


def agreeing(ours, dwarf):
    """How many frames, innermost out, the chains share (up to the
    kernel's first marked frame), and whether they share all they can."""
    same = 0
    for (a, marked, _), (b, _, _) in zip(ours, dwarf):
        if marked:
            return same, True
        if a != b:
            return same, False
        same += 1
    return same, True


def split(user):
    """(kernel's chain, dwarf's chain) or None when one is missing. Both
    start at the user IP; where it recurs (an IP just after a call that
    the chain also returns to), the split that agrees longest is taken:
    another split would compare dwarf's printed addresses, one less than
    the kernel's, with them."""
    best = None
    for k in range(1, len(user)):
        if user[k][0] != user[0][0]:
            continue
        dwarf = user[k:k + 1] + [(a + 1, m, t) for a, m, t in user[k + 1:]]
        score = agreeing(user[:k], dwarf)
        if best is None or score > best[0]:
            best = (score, user[:k], dwarf)
    return best and best[1:]


class Tables:
    """Which addresses of an object its .eh_frame has an FDE for."""

    def __init__(self):
        self.objects = {}

    def load(self, path):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        if data[:4] != b"\x7fELF" or data[4] != 2:
            return None
        phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
        phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHH", data,
                                                               0x38)
        loads = []
        for i in range(phnum):
            typ, _, off, vaddr, _, filesz = struct.unpack_from(
                "<IIQQQQ", data, phoff + 56 * i)
            if typ == 1:
                loads.append((off, vaddr, filesz))
        secs = {}
        strtab = struct.unpack_from("<Q", data, shoff + shentsize *
                                    shstrndx + 0x18)[0]
        for i in range(shnum):
            name, _, _, addr, off = struct.unpack_from(
                "<IIQQQ", data, shoff + shentsize * i)
            end = data.index(b"\0", strtab + name)
            secs[data[strtab + name:end].decode()] = (addr, off)
        if ".eh_frame_hdr" not in secs or ".eh_frame" not in secs:
            return (data, loads, [], None)
        haddr, hoff = secs[".eh_frame_hdr"]
        if data[hoff + 2:hoff + 4] != b"\x03\x3b":
            return None
        count = struct.unpack_from("<I", data, hoff + 8)[0]
        rows = [struct.unpack_from("<ii", data, hoff + 12 + 8 * i)
                for i in range(count)]
        rows = [(haddr + pc, haddr + fde) for pc, fde in rows]
        return (data, loads, rows, secs[".eh_frame"])

    def covered(self, path, dsoff, ip):
        """Is the instruction at file offset @dsoff (an IP, or a return
        address less one) inside an FDE? None when unknown."""
        if path not in self.objects:
            self.objects[path] = self.load(path)
        obj = self.objects[path]
        if obj is None or dsoff is None:
            return None
        data, loads, rows, eh = obj
        pc = dsoff if ip else dsoff - 1
        for off, vaddr, filesz in loads:
            if off <= pc < off + filesz:
                pc += vaddr - off
                break
        else:
            return None
        lo, hi = 0, len(rows)
        while lo < hi:
            mid = (lo + hi) // 2
            if rows[mid][0] <= pc:
                lo = mid + 1
            else:
                hi = mid
        if not lo:
            return False
        start, fde = rows[lo - 1]
        at = fde - eh[0] + eh[1]
        # length, CIE pointer, pc_begin (pcrel sdata4), pc_range (4 bytes)
        rng = struct.unpack_from("<I", data, at + 12)[0]
        return pc < start + rng


def main():
    path, comm = sys.argv[1], sys.argv[2]
    n = paired = agree = differ = untabled = frames = 0
    shown = {True: 0, False: 0}
    tables = Tables()
    for user in samples(path, comm):
        n += 1
        pair = split(user)
        if not pair:
            continue
        paired += 1
        ours, dwarf = pair
        same, whole = agreeing(ours, dwarf)
        frames += same + (not whole)
        if whole:
            agree += 1
            continue
        # The frame inside the first difference: had dwarf a table there?
        obj, off = place(ours[same - 1])
        table = tables.covered(obj, off, same == 1) is not False
        if table:
            differ += 1
        else:
            untabled += 1
        if shown[table] < 5:
            shown[table] += 1
            print("differs, %s: kernel's chain:"
                  % ("dwarf had a table there" if table else
                     "dwarf had no table for frame %d" % (same - 1)),
                  file=sys.stderr)
            for f in ours:
                print("    %x %s" % (f[0], f[2]), file=sys.stderr)
            print("  dwarf's (addresses as the kernel's: return addresses "
                  "one more than printed):",
                  file=sys.stderr)
            for f in dwarf:
                print("    %x %s" % (f[0], f[2]), file=sys.stderr)
    print("samples %d paired %d agree %d differ %d untabled %d frames %d"
          % (n, paired, agree, differ, untabled, frames))


if __name__ == "__main__":
    main()
