#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The system-call samples of one recording: how many reach their root
with fp,defer, against the truth of --call-graph dwarf in the same run.

    syscall_roots.py [--all] SCRIPT COMM ROOT[,ROOT...]

SCRIPT is `perf script -F event,comm,tid,ip,sym,symoff,dso` output of a
recording with three cpu-clock events: call-graph=dwarf (the truth,
unwound by perf from the C library's .eh_frame), call-graph=fp (the
in-interrupt walk) and the recording's own, fp,defer. A system-call sample is a kernel sample of COMM whose kernel
chain passes entry_SYSCALL_64; it reaches its root when its user chain
holds one of the ROOT functions (main, a thread's start function).
--all counts every sample of COMM instead, kernel and user mode, and
compares caller edges from the first return address on: a sample's own
IP is nearly never another sample's, so the edge from it says little.
SCRIPT then carries dsoff too, and each line ends with "notcall N": the
samples with a return address after the first, not marked, that follows
no call instruction in its object's file (read at that file offset).

Prints one line per event ("dwarf", "fp", "defer"):

    EVENT samples N rooted R placed P placed_rooted Q wrong W exact_rooted E
          wrong_exact X

N system-call samples, R of them rooted, E of those with no frame marked
(perf script prints a marked frame, guessed or resting on a convention,
as "ADDRESS ? SYMBOL"); X of the W samples with an unseen caller edge
have it to a frame that carries no mark: a frame reported exact that
dwarf never saw; P of them in places (the
innermost user IP) where dwarf roots at least half its samples, Q of
those rooted. W samples have a caller edge (callee IP, caller return
address, compared by address) that no dwarf sample of the run has: a
frame skipped or made up; not counted are fp,defer's edges from an
address where every dwarf chain that reaches it ends short of a root
(dwarf cannot unwind there), or from code no FDE of its object covers
(read with readelf, where SCRIPT carries dsoff), nor the edges of the
chain above such a frame, which no dwarf chain of that place can witness,
printed on stderr as
unverifiable. On stderr, the five commonest places where
fp,defer stops short of a root dwarf reaches, and its three commonest
caller edges dwarf never saw (a rare true edge, or a wrong frame), each
with the whole user chain of its first sample (function+offset). A kernel-half address is a kernel frame even where
perf names no symbol for it (a kprobe's trampoline). Addresses compare as they are in the one
process: perf prints dwarf's return addresses minus one, which is added
back.
"""
import bisect
import collections
import re
import subprocess
import sys

KERNEL = "[kernel.kallsyms]"
# x86-64's kernel half: every address from here up is the kernel's.
KERNEL_START = 0xffff800000000000


def samples(path, comm):
    """(event, [(sym, dso, addr)] kernel and user frames) of COMM."""
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                if cur:
                    yield cur
                cur = None
                continue
            if not line[0].isspace():
                fields = line.split()
                if len(fields) < 3 or fields[0] != comm:
                    cur = None
                    continue
                event = ("dwarf" if "dwarf" in fields[2] else
                         "fp" if "call-graph=fp" in fields[2] else "defer")
                cur = (event, [])
                continue
            if cur is None:
                continue
            fields = line.split(None, 1)
            if len(fields) < 2:
                continue
            addr = int(fields[0], 16)
            marked = fields[1].startswith("? ")
            if marked:
                fields[1] = fields[1][2:]
            sym, _, dso = fields[1].rpartition(" (")
            dso = dso.rstrip(")")
            dsoff = None
            if "+0x" in dso:
                dso, _, off_hex = dso.rpartition("+0x")
                dsoff = int(off_hex, 16)
            sym, _, off = sym.rpartition("+0x") if "+0x" in sym else (sym, "", "")
            # A kernel address perf cannot name (a kprobe's or ftrace's
            # trampoline, [unknown]) is still a kernel frame, not the
            # first of the user chain.
            if addr >= KERNEL_START:
                dso = KERNEL
            frames = cur[1]
            # Inlined functions repeat the address: one frame.
            if frames and frames[-1][2] == addr:
                continue
            frames.append((sym, dso, addr, off, marked, dsoff))
    if cur:
        yield cur


FILES = {}
FDES = {}


def fde_ranges(dso):
    """The (start, end) object addresses the FDEs of DSO's .eh_frame
    cover, sorted, and its PT_LOAD (offset, size, vaddr) triples: from
    readelf. None if it cannot be read."""
    if dso not in FDES:
        FDES[dso] = None
        try:
            frames = subprocess.run(
                ["readelf", "--debug-dump=frames", dso], capture_output=True,
                text=True, errors="replace", check=False).stdout
            heads = subprocess.run(
                ["readelf", "-lW", dso], capture_output=True, text=True,
                errors="replace", check=False).stdout
        except OSError:
            return None
        ranges = sorted((int(m.group(1), 16), int(m.group(2), 16))
                        for m in re.finditer(r"pc=([0-9a-f]+)\.\.([0-9a-f]+)",
                                             frames))
        loads = [(int(m.group(1), 16), int(m.group(3), 16), int(m.group(2), 16))
                 for m in re.finditer(r"^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)"
                                      r"\s+0x[0-9a-f]+\s+0x([0-9a-f]+)",
                                      heads, re.M)]
        if ranges and loads:
            FDES[dso] = (ranges, loads)
    return FDES[dso]


def without_fde(dso, off):
    """Is the code at file offset OFF of DSO covered by no FDE (so that
    dwarf cannot unwind from there)? None if that cannot be told."""
    info = fde_ranges(dso) if off is not None else None
    if not info:
        return None
    ranges, loads = info
    for p_off, size, vaddr in loads:
        if p_off <= off < p_off + size:
            pc = off - p_off + vaddr
            i = bisect.bisect_right(ranges, (pc, float("inf"))) - 1
            return i < 0 or not ranges[i][0] <= pc < ranges[i][1]
    return None


def after_call(dso, off):
    """Does the byte at file offset @off of @dso follow a call instruction
    (call rel32, or call through a register or memory, any REX prefix)?
    None if the file cannot be read there."""
    if dso not in FILES:
        try:
            with open(dso, "rb") as f:
                FILES[dso] = f.read()
        except OSError:
            FILES[dso] = None
    data = FILES[dso]
    if data is None or off is None or off < 8 or off > len(data):
        return None
    if data[off - 5] == 0xE8:
        return True
    for k in range(2, 9):
        op = off - k
        if data[op] != 0xFF or (data[op + 1] >> 3) & 7 != 2:
            continue
        modrm = data[op + 1]
        mod, rm = modrm >> 6, modrm & 7
        size = 2 + (rm == 4 and mod != 3)
        if mod == 1:
            size += 1
        elif mod == 2 or (mod == 0 and rm == 5):
            size += 4
        elif mod == 0 and rm == 4 and data[op + 2] & 7 == 5:
            size += 4
        if size == k or (size + 1 == k and 0x40 <= data[op - 1] <= 0x4F):
            return True
    return False


def no_witness(user, stuck):
    """The index of the first frame of USER from which dwarf cannot
    unwind (no FDE covers it, or every dwarf chain reaching it ends
    there): dwarf's chains witness no edge of this one's from there on."""
    for i, f in enumerate(user):
        if f[2] in stuck or without_fde(
                f[1], f[5] - (i > 0) if f[5] is not None else None):
            return i
    return len(user)


def main():
    args = sys.argv[1:]
    every = args[:1] == ["--all"]
    if every:
        args = args[1:]
    path, comm, roots = args[0], args[1], set(args[2].split(","))
    chains = collections.defaultdict(list)
    edges = set()
    # Addresses where a dwarf chain ends short of a root: with no FDE
    # there (glibc's clone3 ends its CFI before the system call), dwarf
    # cannot unwind, and is no witness for an edge from them.
    stuck = set()
    for event, frames in samples(path, comm):
        user = [f for f in frames if f[1] != KERNEL]
        if event == "dwarf":
            user = user[:1] + [(s, d, a + 1, o, m, f)
                               for s, d, a, o, m, f in user[1:]]
            edges.update((a[2], b[2]) for a, b in
                         zip(user[every:], user[every + 1:]))
            if user and not any(f[0] in roots for f in user):
                stuck.add(user[-1][2])
        if not user:
            continue
        if not every and (frames[0][1] != KERNEL or not any(
                f[0].startswith("entry_SYSCALL_64") for f in frames
                if f[1] == KERNEL)):
            continue
        chains[event].append(user)
    place_n = collections.Counter()
    place_rooted = collections.Counter()
    for user in chains["dwarf"]:
        place_n[user[0][2]] += 1
        place_rooted[user[0][2]] += any(f[0] in roots for f in user)
    unwound = set(a for a, _ in edges)
    stuck -= unwound
    misses = collections.Counter()
    unseen = collections.Counter()
    unverifiable = collections.Counter()
    unseen_chain = {}
    for event in ("dwarf", "fp", "defer"):
        n = rooted = placed = placed_rooted = wrong = exact_rooted = 0
        wrong_exact = notcall = 0
        for user in chains[event]:
            if every and any(not f[4] and f[1] != "[unknown]" and
                             after_call(f[1], f[5]) is False
                             for f in user[1:]):
                notcall += 1
            is_rooted = any(f[0] in roots for f in user)
            n += 1
            rooted += is_rooted
            exact_rooted += is_rooted and not any(f[4] for f in user)
            place = user[0][2]
            if place_n[place] and 2 * place_rooted[place] >= place_n[place]:
                placed += 1
                placed_rooted += is_rooted
                if event == "defer" and not is_rooted:
                    misses[(user[0][0], len(user), user[-1][0],
                            user[-1][1].rsplit("/", 1)[-1])] += 1
            bad = [(a, b) for a, b in zip(user[every:], user[every + 1:])
                   if (a[2], b[2]) not in edges]
            if bad and event == "defer" and all(
                    user.index(a) >= no_witness(user, stuck) for a, _ in bad):
                a, b = bad[0]
                unverifiable[(a[0], b[0], b[1].rsplit("/", 1)[-1])] += 1
                bad = []
            if bad:
                wrong += 1
                wrong_exact += any(not b[4] for _, b in bad)
                if event == "defer":
                    a, b = bad[0]
                    key = (a[0], b[0], b[1].rsplit("/", 1)[-1],
                           user.index(b))
                    unseen[key] += 1
                    unseen_chain.setdefault(key, " ".join(
                        "%s%s+0x%s" % ("? " if f[4] else "", f[0],
                                       f[3] or "?") for f in user))
        if every and not n:
            continue
        print("%s samples %d rooted %d placed %d placed_rooted %d wrong %d "
              "exact_rooted %d wrong_exact %d%s"
              % (event, n, rooted, placed, placed_rooted, wrong,
                 exact_rooted, wrong_exact,
                 " notcall %d" % notcall if every and event != "dwarf"
                 else ""))
    # Where fp,defer stops short of dwarf's root: innermost function,
    # frames found, the last one (on stderr, for the test's log).
    for (sym, nr, last, dso), count in misses.most_common(5):
        print("defer misses %d: from %s, %d frames, last %s (%s)"
              % (count, sym, nr, last, dso), file=sys.stderr)
    # Edges from where dwarf cannot unwind: neither confirmed nor counted.
    for (callee, caller, dso), count in unverifiable.most_common(3):
        print("defer unverifiable caller %d: %s <- %s (%s): dwarf's chains "
              "all end at the callee" % (count, callee, caller, dso),
              file=sys.stderr)
    for (callee, caller, dso, depth), count in unseen.most_common(3):
        print("defer unseen caller %d: %s <- %s (%s), frame %d: %s"
              % (count, callee, caller, dso, depth,
                 unseen_chain[(callee, caller, dso, depth)]),
              file=sys.stderr)


if __name__ == "__main__":
    main()
