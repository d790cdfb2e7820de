#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the x86-64 return-path reader against an ELF file's .eh_frame.

    harness/code-frames-check/check.py [-v] ELF...

For every system call instruction in the file's code (the IP after it)
and every return address (the instruction after each call), the reader
(built on the host from arch/x86/kernel/unwind_user_code.c by this
directory's Makefile) reads the frame; the compiler's call frame
information says what it is. A frame is right when the CFA rule and the
caller's %rbp rule agree with the CFI row at the site (at the call, for a
return address, as unwinders look it up). Where the CFI takes the CFA
from %rbp and the reading from %rsp (or the reverse), both can be right;
those are counted apart. Return addresses after calls to functions known
not to return (NORETURN) are counted apart too ("noreturn"): no live
stack holds them, and the code after them is often another function's.

Prints per file and kind (syscall, return, noreturn): sites, frames
read, right, wrong, and how many of those read are exact (the rest rest
on a convention, and the walk marks what follows them); exits 1 if a
syscall or return frame is wrong, exact or not. --min KIND=FRACTION
(repeatable) also exits 1 if a file's frames of that kind are read at
fewer than that fraction of its sites: a reading that gives up more
often than it did; --min-exact KIND=FRACTION the same for exact ones.
"""
import bisect
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
CHECK = os.path.join(TOP, "build", "code-frames-check", "check")
# Functions that never return: no stack holds the address after a call
# to one, and the code there may be another function's.
NORETURN = {
    "__assert_fail", "__assert_perror_fail", "__stack_chk_fail", "abort",
    "__libc_fatal", "__fortify_fail", "__chk_fail", "exit", "_exit",
    "_Exit", "__libc_message", "__malloc_assert", "__libc_longjmp",
    "__longjmp_chk", "longjmp", "siglongjmp", "_longjmp", "pthread_exit",
    "__pthread_unwind", "__pthread_unwind_next", "__do_cancel",
    "__libc_start_call_main", "__run_exit_handlers", "__libc_dynarr_emplace_enlarge",
    "_dl_signal_error", "_dl_signal_exception", "_dl_fatal_printf",
    "__tls_get_addr_slow", "_Unwind_Resume", "__cxa_throw", "__cxa_rethrow",
    "__fdelt_warn", "__libc_alloc_buffer_create_failure",
    "_Py_FatalErrorFunc", "Py_FatalError", "_Py_FatalErrorFormat",
    "_PyObject_AssertFailed", "Py_Exit", "_Py_FatalError_TstateNULL",
    "_ZSt9terminatev", "__cxa_bad_cast", "__cxa_bad_typeid",
    "_ZSt20__throw_length_errorPKc", "_ZSt17__throw_bad_allocv",
    "_ZSt19__throw_logic_errorPKc", "_ZSt24__throw_out_of_range_fmtPKcz",
    "_ZSt20__throw_out_of_rangePKc", "_ZSt28__throw_bad_array_new_lengthv",
    "_ZSt16__throw_bad_castv", "_ZSt25__throw_bad_function_callv",
    "_ZSt21__throw_runtime_errorPKc", "_ZSt19__throw_system_errori",
    "_ZSt20__throw_system_errori", "OPENSSL_die",
}


def sites(elf):
    """(kind, address) of syscall IPs and return addresses."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", elf],
                         capture_output=True, text=True, check=True).stdout
    insn = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)")
    prev = None
    found = []
    for line in out.splitlines():
        m = insn.match(line)
        if not m:
            if not line.strip() or line.endswith(">:"):
                prev = None
            continue
        addr, mnem, args = int(m.group(1), 16), m.group(2), m.group(3)
        if prev == "syscall":
            found.append(("syscall", addr))
        elif prev == "noreturn":
            found.append(("noreturn", addr))
        elif prev and prev.startswith("call"):
            found.append(("return", addr))
        prev = mnem
        callee = re.search(r"<([^@+>]+)", args)
        if mnem.startswith("call") and callee and callee.group(1) in NORETURN:
            prev = "noreturn"
    return found


def cfi(elf):
    """FDE ranges and rows: [(start, end, [(loc, cfa, rbp)])], sorted."""
    # readelf exits 1 on a missing debug link, having printed the rest.
    out = subprocess.run(["readelf", "-wF", elf], capture_output=True,
                         text=True, check=False).stdout
    fdes = []
    cies = {}
    cols = None
    cur = None
    for line in out.splitlines():
        m = re.match(r"([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ CIE", line)
        if m:
            cur = (None, None, [])
            cies[m.group(1)] = cur
            cols = None
            continue
        m = re.search(r"FDE cie=(\S+) pc=([0-9a-f]+)\.\.([0-9a-f]+)", line)
        if m:
            cur = (int(m.group(2), 16), int(m.group(3), 16), [], m.group(1))
            fdes.append(cur)
            cols = None
            continue
        if cur is None:
            continue
        f = line.split()
        if f and f[0] == "LOC":
            cols = f
            continue
        if cols and f and re.fullmatch(r"[0-9a-f]+", f[0]):
            row = dict(zip(cols, f))
            cur[2].append((int(f[0], 16), row.get("CFA"), row.get("rbp", "u")))
    # An FDE without rows of its own has its CIE's.
    for start, _, rows, cie in fdes:
        if not rows and cies.get(cie) and cies[cie][2]:
            rows.append((start,) + cies[cie][2][0][1:])
    fdes.sort()
    return fdes


def fde(fdes, starts, addr):
    i = bisect.bisect_right(starts, addr) - 1
    if i < 0 or not fdes[i][0] <= addr < fdes[i][1]:
        return None
    return fdes[i]


def truth(fdes, starts, addr):
    f = fde(fdes, starts, addr)
    if f is None:
        return None
    rows = f[2]
    best = None
    for row in rows:
        if row[0] <= addr:
            best = row
    return best


def main():
    args = sys.argv[1:]
    verbose = "-v" in args
    mins = {}
    mins_exact = {}
    for opt, into in (("--min", mins), ("--min-exact", mins_exact)):
        while opt in args:
            i = args.index(opt)
            kind, _, frac = args[i + 1].partition("=")
            into[kind] = float(frac)
            del args[i:i + 2]
    files = [a for a in args if a != "-v"]
    bad = 0
    for elf in files:
        fdes = cfi(elf)
        starts = [f[0] for f in fdes]
        found = sites(elf)
        # The reading checks the stack's alignment (16 bytes at every
        # call, one word off at every return), so it needs the stack
        # pointer mod 16. At a return address it is aligned. After a
        # system call the CFI gives it when it takes the CFA from %rsp
        # (the CFA is 16-byte aligned); where the CFA comes from %rbp,
        # both are tried: read if both read, wrong if either is.
        def sp_low(kind, addr):
            if kind != "syscall":
                return [0]
            row = truth(fdes, starts, addr)
            if row and row[1] and row[1].startswith("rsp+"):
                return [-int(row[1][4:]) & 15]
            return [0, 8]
        queries = [(i, a, sp) for i, (k, a) in enumerate(found)
                   for sp in sp_low(k, a)]
        out = subprocess.run([CHECK, elf], input="".join(
            "%x %x\n" % (a, sp) for _, a, sp in queries),
            capture_output=True, text=True, check=True).stdout.split("\n")
        answers = [[] for _ in found]
        for (i, _, _), line in zip(queries, out):
            answers[i].append(line)
        res = []
        for (_, addr), lines in zip(found, answers):
            read = [line for line in lines if line.split()[1] != "-"]
            # The frame must agree; exact only if exact both ways.
            frames = set(" ".join(line.split()[:4]) for line in read)
            exact = all(line.split()[4] == "exact" for line in read)
            if len(read) < len(lines):
                res.append("%x -" % addr)
            elif len(frames) > 1:
                res.append("%x ? ? ? ?" % addr)
            else:
                res.append("%s %s" % (frames.pop(),
                                      "exact" if exact else "inferred"))
        stats = {}
        for (kind, addr), line in zip(found, res):
            # A call that ends its function never returns (to
            # __stack_chk_fail, abort...): no stack holds its address.
            if kind == "return":
                f = fde(fdes, starts, addr - 1)
                if f is not None and addr >= f[1]:
                    kind = "noreturn"
            s = stats.setdefault(kind, [0, 0, 0, 0, 0, 0, 0])
            s[0] += 1
            f = line.split()
            row = truth(fdes, starts, addr if kind == "syscall" else addr - 1)
            if row is None or row[1] in (None, "exp", "ZERO") or row[2] == "exp":
                s[4] += 1
                continue
            if f[1] == "-":
                if verbose:
                    print("gave up %x (%s)" % (addr, kind))
                continue
            s[1] += 1
            if f[1] == "?":
                s[3] += 1
                print("WRONG %s %x: read differently with the stack "
                      "aligned and one word off" % (kind, addr))
                continue
            if f[4] == "exact":
                s[6] += 1
            base = {"sp": "rsp", "fp": "rbp"}[f[1]]
            want_fp = "same" if row[2] in ("u", "s") else row[2]
            if row[1] == "%s+%s" % (base, f[2]) and want_fp == f[3]:
                s[2] += 1
            elif not row[1].startswith(base + "+") and want_fp == f[3]:
                # The CFA from the other register (%rbp in a function
                # with a frame pointer): both may be right, as here the
                # stack pointer is fixed; this cannot tell.
                s[5] += 1
            else:
                s[3] += 1
                if kind != "noreturn" or verbose:
                    print("WRONG %s %x: read %s+%s rbp %s, CFI says %s rbp %s"
                          % (kind, addr, base, f[2], f[3], row[1], row[2]))
        for kind, s in sorted(stats.items()):
            print("%s %s: %d sites, %d read, %d right, %d wrong "
                  "(%d without CFI, %d with the CFA from the other "
                  "register), %d exact" % (os.path.basename(elf), kind, *s))
            if kind != "noreturn":
                bad += s[3]
            if kind in mins and s[1] < mins[kind] * s[0]:
                print("%s %s: %d of %d read, under %.2f"
                      % (os.path.basename(elf), kind, s[1], s[0], mins[kind]))
                bad += 1
            if kind in mins_exact and s[6] < mins_exact[kind] * s[0]:
                print("%s %s: %d of %d exact, under %.2f"
                      % (os.path.basename(elf), kind, s[6], s[0],
                         mins_exact[kind]))
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
