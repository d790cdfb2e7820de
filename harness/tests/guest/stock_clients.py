#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Stacks of stock programs as ftrace, PR_USER_STACK_READ and
unwindprof give them, named alike, and whether each is full.

    stock_clients.py read                  (run by python3.11 itself)
    stock_clients.py own FILE              the stack own_stack.so read
    stock_clients.py ftrace TRACE COMM     stacks of COMM's events
    stock_clients.py folded FILE COMM      unwindprof's folded stacks
    stock_clients.py full FOLDED [NAME...]  count the full ones (the
                                           rest to stderr)

A frame is named by the function of the object's symbol tables (.symtab,
.dynsym, and its detached debug file's, as perf names them) that holds
the file offset, else "[object]" (unwindprof names a frame alike).
Stacks print root first, ";"-separated, one per line with a count
("folded"), and a frame the kernel marked (a guess, or
resting on a convention) is prefixed "?". A stack is full when it holds
a root (__libc_start_call_main, start_thread, or ld.so's _dl_start in
its start-up) with no frame marked, and, if it runs in the program's
main() (not in ld.so's start-up, another thread or the exit handlers),
every NAME given.

"read" reads the stack of a Python function three calls deep with
prctl(PR_USER_STACK_READ) through ctypes (the interpreter as Debian
ships it, not rebuilt) and prints it, and, on stderr, the raw entries.
"own" does the same for the stack own_stack.so (an LD_PRELOAD) read in
another stock program's first write().
"""
import bisect
import collections
import os
import re
import struct
import sys

GUESSED = 1 << 63
# Where a stack ends: a program's main thread, another thread, ld.so
# loading the program.
LDSO_ROOTS = {"_dl_start_user", "_dl_start"}
ROOTS = {"__libc_start_call_main", "start_thread"} | LDSO_ROOTS
PR_USER_STACK_READ = 0x55535452


def in_main(frames):
    """Whether a stack runs in the program's main(): rooted where the C
    library calls it, and not in the exit handlers it runs after main()
    returns. ld.so's start-up (before main()) and other threads are not:
    the NAMEs "full" asks for, main()'s callees, are not on their stacks."""
    return ("__libc_start_call_main" in frames and
            "__run_exit_handlers" not in frames)


class Symbols:
    """Function symbols of ELF files, by file offset."""

    def __init__(self):
        self.files = {}

    @staticmethod
    def _read(path):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        return data if data[:4] == b"\x7fELF" and data[4] == 2 else None

    @staticmethod
    def _funcs(data, loads):
        """(file offset, size, name) of the function symbols in @data's
        symbol tables, placed by @loads (vaddr, offset, size)."""
        shoff = struct.unpack_from("<Q", data, 0x28)[0]
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3a)
        secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + shentsize * i)
                for i in range(shnum)]
        syms = []
        for _, typ, _, _, off, size, link, _, _, entsize in secs:
            if typ not in (2, 11) or not entsize:   # SYMTAB, DYNSYM
                continue
            stroff = secs[link][4]
            for j in range(size // entsize):
                name, info, _, shndx, value, ssize = struct.unpack_from(
                    "<IBBHQQ", data, off + j * entsize)
                if info & 0xf != 2 or not shndx or not value:  # FUNC
                    continue
                for vaddr, foff, filesz in loads:
                    if vaddr <= value < vaddr + filesz:
                        value += foff - vaddr
                        break
                end = data.index(b"\0", stroff + name)
                syms.append((value, ssize,
                             data[stroff + name:end].decode(errors="replace")))
        return syms

    def load(self, path):
        """The object's function symbols, and its detached debug file's
        (/usr/lib/debug/.build-id/, as perf reads them: the C library's
        local functions are named only there)."""
        data = self._read(path)
        if data is None:
            return []
        phoff = struct.unpack_from("<Q", data, 0x20)[0]
        phnum = struct.unpack_from("<H", data, 0x38)[0]
        loads, build_id = [], None
        for i in range(phnum):
            typ, _, off, vaddr, _, filesz = struct.unpack_from(
                "<IIQQQQ", data, phoff + 56 * i)
            if typ == 1:
                loads.append((vaddr, off, filesz))
            elif typ == 4:                              # PT_NOTE
                at = off
                while at + 12 <= off + filesz:
                    nsz, dsz, ntype = struct.unpack_from("<III", data, at)
                    desc = at + 12 + (nsz + 3) // 4 * 4
                    if ntype == 3 and data[at + 12:at + 15] == b"GNU":
                        build_id = data[desc:desc + dsz].hex()
                    at = desc + (dsz + 3) // 4 * 4
        syms = self._funcs(data, loads)
        if build_id:
            debug = self._read("/usr/lib/debug/.build-id/%s/%s.debug"
                               % (build_id[:2], build_id[2:]))
            if debug is not None:
                syms += self._funcs(debug, loads)
        syms.sort()
        return syms

    def name(self, path, off):
        if path not in self.files:
            syms = self.load(path)
            self.files[path] = ([v for v, _, _ in syms], syms)
        starts, syms = self.files[path]
        i = bisect.bisect_right(starts, off) - 1
        # The symbol that holds @off (several may start there: any).
        while i >= 0 and starts[i] <= off:
            value, size, name = syms[i]
            if off < value + size:
                return name
            if off - value > 1 << 20:
                break
            i -= 1
        return "[%s]" % os.path.basename(path)


def folded(frames, syms):
    """@frames innermost first, (path, offset, marked): root first."""
    names = []
    for i, (path, off, marked) in enumerate(frames):
        # A return address names the call's function: look one before.
        n = syms.name(path, off - (i > 0)) if path else "[unknown]"
        names.append(("?" if marked else "") + n)
    return ";".join(reversed(names))


def name_own_stack(entries, maps_lines):
    """Print PR_USER_STACK_READ's @entries named by the reader's maps,
    folded; the raw entries on stderr."""
    maps = []
    for line in maps_lines:
        parts = line.split()
        if len(parts) >= 6 and parts[5].startswith("/"):
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            maps.append((lo, hi, int(parts[2], 16), parts[5]))
    frames = []
    for e in entries:
        addr = e & ~GUESSED
        print("%#x%s" % (addr, " ?" if e & GUESSED else ""), file=sys.stderr)
        place = next(((p, addr - lo + pgoff) for lo, hi, pgoff, p in maps
                      if lo <= addr < hi), (None, addr))
        frames.append((place[0], place[1], bool(e & GUESSED)))
    print("%s 1" % folded(frames, Symbols()))


def read_own_stack():
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.restype = ctypes.c_int

    def deep(n):
        if n:
            return deep(n - 1)
        buf = (ctypes.c_uint64 * 512)()
        got = libc.prctl(PR_USER_STACK_READ, buf, ctypes.c_ulong(512),
                         ctypes.c_ulong(0), ctypes.c_ulong(0))
        if got < 0:
            raise OSError(ctypes.get_errno(), "PR_USER_STACK_READ")
        return list(buf[:got])

    entries = deep(3)
    with open("/proc/self/maps") as f:
        name_own_stack(entries, f.readlines())


def own_stack_file(path):
    """own_stack.so's file: entries ("ADDR" or "ADDR ?"), "--", maps."""
    with open(path) as f:
        lines = f.read().splitlines()
    cut = lines.index("--")
    entries = []
    for line in lines[:cut]:
        if line.startswith("error"):
            sys.exit("PR_USER_STACK_READ: " + line)
        addr, _, mark = line.partition(" ")
        entries.append(int(addr, 16) | (GUESSED if mark == "?" else 0))
    name_own_stack(entries, lines[cut + 1:])


def ftrace_stacks(path, comm):
    """The user stacks of COMM's events in a trace with
    userstacktrace_delay: cookie of each event, then the stack."""
    inodes = {}
    want = set()
    stacks = {}
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            m = re.search(r"<user unwind inode> inode=(\d+) dev=(\S+) path=(.*)$",
                          line)
            if m:
                inodes[(m.group(1), m.group(2))] = m.group(3)
                continue
            m = re.search(r"<user stack deferred> cookie=(\S+)", line)
            if m:
                if re.match(r"\s*%s-\d+ " % re.escape(comm), line):
                    want.add(m.group(1))
                continue
            m = re.search(r"<user stack> cookie=(\S+)", line)
            if m:
                cur = stacks.setdefault(m.group(1), []) \
                    if m.group(1) in want else None
                continue
            m = re.match(r" => (\?\s*)?(\S+)(?: \+(\S+) inode=(\d+) dev=(\S+))?",
                         line)
            if m and cur is not None:
                cur.append((m.group(4), m.group(5), m.group(3), bool(m.group(1))))
                continue
            cur = None
    for cookie, frames in stacks.items():
        yield [(inodes.get((i, d)), int(off, 16) if off else 0, marked)
               for i, d, off, marked in frames]


def main():
    cmd = sys.argv[1]
    if cmd == "read":
        read_own_stack()
    elif cmd == "own":
        own_stack_file(sys.argv[2])
    elif cmd == "ftrace":
        syms = Symbols()
        count = collections.Counter(folded(frames, syms) for frames in
                                    ftrace_stacks(sys.argv[2], sys.argv[3]))
        for stack, n in count.items():
            print("%s %d" % (stack, n))
    elif cmd == "folded":
        # unwindprof's own: COMM;user frames;kernel frames_[k] COUNT
        with open(sys.argv[2]) as f:
            for line in f:
                stack, _, n = line.rstrip("\n").rpartition(" ")
                parts = stack.split(";")
                if parts[0] != sys.argv[3]:
                    continue
                user = [p for p in parts[1:] if not p.endswith("_[k]")]
                print("%s %s" % (";".join(user), n))
    elif cmd == "full":
        n = full = 0
        need = set(sys.argv[3:])
        with open(sys.argv[2]) as f:
            for line in f:
                stack, _, c = line.rstrip("\n").rpartition(" ")
                n += int(c)
                frames = stack.split(";")
                if (ROOTS & set(frames) and
                        (not in_main(frames) or need <= set(frames)) and
                        not any(f.startswith("?") for f in frames)):
                    full += int(c)
                else:
                    print("not full: %s %s" % (stack, c), file=sys.stderr)
        print("%s %d %d" % (sys.argv[2], n, full))


if __name__ == "__main__":
    main()
