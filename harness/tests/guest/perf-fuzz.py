#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fuzz the perf tool's reading of deferred callchains, for a bounded time.

    perf-fuzz.py [--seconds S] [--seed N] [--jobs J] [--keep DIR] PERF BASE...

Each BASE is a pipe-mode recording with deferred callchains (perf record
-o - --call-graph fp,defer, with or without the report event
unwind_report:unwind_user_report), as harness/tests/guest/perf-crafted.sh
records in the guest. Each input is a copy of a BASE, cut to its first
samples so that perf reads it in a fraction of a second, with one to four
mutations aimed at what the deferred parsing reads: the
PERF_RECORD_CALLCHAIN_DEFERRED records (cookie, nr, addresses, size, the
thread of their sample_id trailer, their place in the stream), the
cookie after PERF_CONTEXT_USER_DEFERRED in samples' callchains, samples'
threads, the report event's raw fields (nr, the __data_loc word), and
bytes of those events flipped at random. PERF (the perf built with
AddressSanitizer and UBSan, make perf-asan) reads each with perf report,
perf script, perf report -D or perf inject, in turn.

A finding is a run killed by a signal, one that hangs (60 s), or any
sanitizer report (but perf 6.12's own in maps.c, see perf-crafted.sh).
Each is kept in DIR (default: the current directory) as
fuzz-NNNN.data with the command that failed, and printed once per kind.

The seed (default: from the clock) is printed: the same seed, bases and
count of inputs give the same inputs. TAP on stdout; exit 1 on a finding.
"""
import argparse
import concurrent.futures
import importlib.util
import os
import random
import struct
import subprocess
import sys
import tempfile
import time

_spec = importlib.util.spec_from_file_location(
    "perf_craft", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "perf-craft.py"))
craft = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(craft)

SAMPLE, DEFERRED, ROUND = craft.SAMPLE, craft.DEFERRED, 68
HEADER_ATTR = craft.HEADER_ATTR_TYPE
CONTEXT_USER_DEFERRED = 2**64 - 640
CONTEXT_MARKERS = [2**64 - 32, 2**64 - 128, 2**64 - 512, 2**64 - 640,
                   2**64 - 2048, 2**64 - 4095]
KEEP_SAMPLES = 300
COMMANDS = ["report --stdio", "script", "report -D", "inject -o {out}"]
KNOWN_UBSAN = "util/maps.c:1040:5: runtime error: null pointer passed as argument 2"
INTERESTING = [0, 1, 2, 7, 8, 127, 128, 255, 256, 0x7fff, 0x8000, 0xffff,
               0x10000, 0x7fffffff, 0x80000000, 0xffffffff, 2**32,
               2**63 - 1, 2**63, 2**64 - 1, 2**64 - 2, 2**64 - 640]


class Stream:
    """A pipe-mode recording as its header and a list of event blobs."""

    def __init__(self, data):
        self.header = data[:craft.PIPE_HEADER]
        self.events = []
        off = craft.PIPE_HEADER
        # Mutated streams may hold any size: what cannot be an event (a
        # size below a header's) ends the list as one opaque tail.
        while off + 8 <= len(data):
            typ, _misc, size = struct.unpack_from("<IHH", data, off)
            if size < 8:
                break
            end = off + size
            if typ == craft.TRACING_DATA and end <= len(data):
                payload = struct.unpack_from("<I", data, off + 8)[0] \
                    if off + 12 <= len(data) else 0
                end += (payload + 7) & ~7
            self.events.append(bytearray(data[off:end]))
            off = end
        if off < len(data):
            self.events.append(bytearray(data[off:]))
        self.sample_types = {}
        for ev in self.events:
            if self.type(ev) != HEADER_ATTR:
                continue
            asize = struct.unpack_from("<I", ev, 12)[0]
            stype = struct.unpack_from("<Q", ev, 8 + 24)[0]
            for i in range(8 + asize, len(ev) - 7, 8):
                self.sample_types[struct.unpack_from("<Q", ev, i)[0]] = stype

    @staticmethod
    def type(ev):
        return struct.unpack_from("<I", ev, 0)[0] if len(ev) >= 8 else -1

    def cut(self, samples):
        """Keep every event but samples, deferred records and rounds
        after the first @samples samples, and after enough of the samples
        that carry raw data (the report event's) to mutate: a recording
        whose interpreter was slow to start may hold hundreds of clock
        samples before its first report."""
        raw_total = sum(1 for e in self.events if self.has_raw(e))
        want_raw = min(raw_total, max(1, samples // 4))
        kept, n, raw = [], 0, 0
        for ev in self.events:
            t = self.type(ev)
            if t in (SAMPLE, DEFERRED, ROUND):
                if n >= samples and raw >= want_raw:
                    continue
                n += t == SAMPLE
                raw += self.has_raw(ev)
            kept.append(ev)
        self.events = kept

    def has_raw(self, ev):
        if self.type(ev) != SAMPLE:
            return False
        f = self.sample_fields(ev)
        return bool(f and f[2] is not None)

    def blob(self):
        return bytes(self.header) + b"".join(bytes(e) for e in self.events)

    def of_type(self, t):
        return [i for i, e in enumerate(self.events) if self.type(e) == t]

    def sample_fields(self, ev):
        """Offsets of (tid, callchain, raw) in a sample, None if absent."""
        if len(ev) < 16:
            return None
        stype = self.sample_types.get(struct.unpack_from("<Q", ev, 8)[0])
        if stype is None or not stype & (1 << 16) or stype & craft.SAMPLE_READ:
            return None
        pos, tid = 8, None
        for bit, width in craft.FIXED_BEFORE_CALLCHAIN:
            if stype & bit:
                if bit == 1 << 1:
                    tid = pos
                pos += width
        chain = raw = None
        if stype & craft.SAMPLE_CALLCHAIN:
            if pos + 8 > len(ev):
                return None
            chain = pos
            pos += 8 + 8 * struct.unpack_from("<Q", ev, pos)[0]
        if stype & craft.SAMPLE_RAW and pos + 4 <= len(ev):
            raw = pos
        return tid, chain, raw


def put(ev, off, fmt, value):
    if 0 <= off and off + struct.calcsize(fmt) <= len(ev):
        struct.pack_into(fmt, ev, off, value)


def number(rnd, near=None):
    if near is not None and rnd.random() < 0.4:
        return (near + rnd.choice([-2, -1, 1, 2, 8, 64])) % 2**64
    if rnd.random() < 0.7:
        return rnd.choice(INTERESTING)
    return rnd.getrandbits(64)


def cookies_of(st):
    out = []
    for i in st.of_type(DEFERRED):
        if len(st.events[i]) >= 16:
            out.append(struct.unpack_from("<Q", st.events[i], 8)[0])
    return out or [1]


def tids_of(st):
    out = set()
    for i in st.of_type(SAMPLE):
        f = st.sample_fields(st.events[i])
        if f and f[0] is not None:
            out.add(struct.unpack_from("<Q", st.events[i], f[0])[0])
    return sorted(out) or [0]


# Each mutation changes st in place and returns its name.
def m_deferred_field(st, rnd):
    idx = st.of_type(DEFERRED)
    if not idx:
        return None
    ev = st.events[rnd.choice(idx)]
    what = rnd.choice(["cookie", "nr", "ip", "tid", "pid"])
    if what == "cookie":
        put(ev, 8, "<Q", rnd.choice(cookies_of(st)) if rnd.random() < 0.5
            else number(rnd))
    elif what == "nr":
        nr = struct.unpack_from("<Q", ev, 16)[0] if len(ev) >= 24 else 0
        put(ev, 16, "<Q", number(rnd, nr))
    elif what == "ip":
        if len(ev) >= 32:
            off = 24 + 8 * rnd.randrange((len(ev) - 24) // 8)
            put(ev, off, "<Q", rnd.choice(CONTEXT_MARKERS) if rnd.random() < 0.5
                else number(rnd))
    else:
        # The sample_id trailer starts with pid, tid when TID is sampled;
        # its place is the record's end less what the attr's fields take,
        # so try the words near the end.
        off = len(ev) - 8 * rnd.randint(1, 4)
        val = rnd.choice(tids_of(st)) if rnd.random() < 0.5 else number(rnd)
        put(ev, off + (4 if what == "tid" else 0), "<I", val & 0xffffffff)
    return "deferred-" + what


def m_size(st, rnd):
    idx = st.of_type(DEFERRED) + st.of_type(SAMPLE)
    if not idx:
        return None
    ev = st.events[rnd.choice(idx)]
    size = struct.unpack_from("<H", ev, 6)[0]
    new = rnd.choice([0, 8, 16, 24, size - 8, size + 8, size - 1, size + 1,
                      rnd.randrange(0x10000)]) & 0xffff
    put(ev, 6, "<H", new)
    return "size"


def m_chain_cookie(st, rnd):
    cands = []
    for i in st.of_type(SAMPLE):
        f = st.sample_fields(st.events[i])
        if f and f[1] is not None:
            cands.append((i, f[1]))
    if not cands:
        return None
    i, chain = rnd.choice(cands)
    ev = st.events[i]
    nr = struct.unpack_from("<Q", ev, chain)[0]
    # An earlier mutation may have made nr any number: look only at the
    # words the event holds.
    ips = [chain + 8 + 8 * k for k in range(min(nr, (len(ev) - chain - 8) // 8))]
    marks = [o for o in ips if struct.unpack_from("<Q", ev, o)[0] == CONTEXT_USER_DEFERRED]
    what = rnd.choice(["cookie", "marker-last", "marker-anywhere", "nr"])
    if what == "cookie" and marks and marks[-1] + 16 <= len(ev):
        put(ev, marks[-1] + 8, "<Q", rnd.choice(cookies_of(st))
            if rnd.random() < 0.5 else number(rnd))
    elif what == "marker-last" and ips:
        put(ev, ips[-1], "<Q", CONTEXT_USER_DEFERRED)
    elif what == "marker-anywhere" and ips:
        put(ev, rnd.choice(ips), "<Q", CONTEXT_USER_DEFERRED)
    else:
        put(ev, chain, "<Q", number(rnd, nr))
        what = "nr"
    return "chain-" + what


def m_sample_tid(st, rnd):
    cands = [(i, f[0]) for i in st.of_type(SAMPLE)
             for f in [st.sample_fields(st.events[i])] if f and f[0] is not None]
    if not cands:
        return None
    i, off = rnd.choice(cands)
    put(st.events[i], off + rnd.choice([0, 4]), "<I",
        rnd.choice(tids_of(st)) & 0xffffffff if rnd.random() < 0.5
        else number(rnd) & 0xffffffff)
    return "sample-tid"


def m_report(st, rnd):
    cands = []
    for i in st.of_type(SAMPLE):
        f = st.sample_fields(st.events[i])
        if f and f[2] is not None:
            cands.append((i, f[2] + 4))
    if not cands:
        return None
    i, raw = rnd.choice(cands)
    ev = st.events[i]
    what = rnd.choice(["nr", "loc-offset", "loc-len", "cookie", "flags", "raw-size"])
    if what == "nr":
        put(ev, raw + craft.REPORT_NR, "<I", number(rnd) & 0xffffffff)
    elif what in ("loc-offset", "loc-len") and raw + craft.REPORT_LOC + 4 <= len(ev):
        loc = struct.unpack_from("<I", ev, raw + craft.REPORT_LOC)[0]
        part = rnd.choice([0, 8, 28, 0xfff8, 0xffff, rnd.randrange(0x10000)])
        loc = (loc & 0xffff0000) | part if what == "loc-offset" else \
            (loc & 0xffff) | part << 16
        put(ev, raw + craft.REPORT_LOC, "<I", loc)
    elif what == "cookie":
        put(ev, raw + 8, "<Q", rnd.choice(cookies_of(st)) if rnd.random() < 0.5
            else number(rnd))
    elif what == "flags":
        put(ev, raw + 16, "<I", number(rnd) & 0xffffffff)
    else:
        put(ev, raw - 4, "<I", number(rnd) & 0xffffffff)
    return "report-" + what


def m_flip(st, rnd):
    """Bits flipped in a deferred record, or in the callchain or raw data
    of a sample: what the deferred parsing reads. (Flips elsewhere in a
    sample test perf's own parser, which perf-crafted does not cover
    either; the first such run found a bug of perf 6.12, patch 0038.)"""
    spans = [(i, 0, len(st.events[i])) for i in st.of_type(DEFERRED)]
    for i in st.of_type(SAMPLE):
        f = st.sample_fields(st.events[i])
        if f and f[1] is not None:
            spans.append((i, f[1], len(st.events[i])))
    if not spans:
        return None
    i, lo, hi = rnd.choice(spans)
    ev = st.events[i]
    for _ in range(rnd.randint(1, 8)):
        if hi > lo:
            ev[rnd.randrange(lo, hi)] ^= 1 << rnd.randrange(8)
    return "flip"


def m_move(st, rnd):
    idx = st.of_type(DEFERRED)
    if not idx:
        return None
    i = rnd.choice(idx)
    ev = st.events[i]
    what = rnd.choice(["duplicate", "delete", "earlier", "last", "retype"])
    if what == "duplicate":
        st.events.insert(rnd.randrange(len(st.events) + 1), bytearray(ev))
    elif what == "delete":
        del st.events[i]
    elif what == "earlier":
        del st.events[i]
        st.events.insert(rnd.randrange(i + 1), ev)
    elif what == "last":
        del st.events[i]
        st.events.append(ev)
    else:
        # A sample read as a deferred record, or the other way round.
        s = st.of_type(SAMPLE)
        j = rnd.choice(s) if s and rnd.random() < 0.5 else i
        put(st.events[j], 0, "<I", DEFERRED if j != i else SAMPLE)
    return "move-" + what


def m_truncate(st, rnd):
    blob = st.blob()
    cut = rnd.randrange(len(blob) // 2, len(blob))
    st.__init__(blob[:cut])
    return "truncate"


MUTATIONS = [(m_deferred_field, 6), (m_chain_cookie, 4), (m_report, 4),
             (m_size, 2), (m_sample_tid, 2), (m_flip, 3), (m_move, 3),
             (m_truncate, 1)]


def mutate(base, rnd):
    st = Stream(base)
    names = []
    funcs = [f for f, _ in MUTATIONS]
    weights = [w for _, w in MUTATIONS]
    for _ in range(rnd.randint(1, 4)):
        name = rnd.choices(funcs, weights)[0](st, rnd)
        if name:
            names.append(name)
    return st.blob(), names


def run(perf, cmd, path, workdir):
    args = [perf] + cmd.format(out=os.path.join(workdir, "inject.data")).split() + ["-i", path]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0",
               UBSAN_OPTIONS="print_stacktrace=1", HOME=workdir)
    try:
        p = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60, env=env, cwd=workdir)
    except subprocess.TimeoutExpired:
        return "hung", ""
    err = p.stderr.decode(errors="replace")
    out = p.stdout.decode(errors="replace")
    reports = [ln for ln in err.splitlines()
               if ("AddressSanitizer" in ln or "runtime error:" in ln)
               and KNOWN_UBSAN not in ln]
    if reports:
        return "sanitizer: " + reports[0].split(" in ")[0][-160:], err
    if p.returncode < 0:
        return "killed by signal %d" % -p.returncode, err
    warned = ("CALLCHAIN_DEFERRED records were ignored" in out + err,
              "unwind_user_report of tid" in out + err)
    return warned, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--keep", default=".")
    ap.add_argument("perf")
    ap.add_argument("bases", nargs="+")
    a = ap.parse_args()
    a.perf = os.path.abspath(a.perf)
    seed = a.seed if a.seed is not None else int(time.time())
    print("TAP version 13")
    print("# perf-fuzz: seed %d, %g s, %d jobs, reader %s" % (seed, a.seconds, a.jobs, a.perf))
    bases = []
    for b in a.bases:
        st = Stream(open(b, "rb").read())
        st.cut(KEEP_SAMPLES)
        if st.of_type(DEFERRED):
            bases.append(st.blob())
    n = 0
    if not bases:
        print("not ok 1 perf-fuzz: a base recording with deferred records")
        print("1..1")
        return 1
    rnd = random.Random(seed)
    deadline = time.monotonic() + a.seconds
    workdir = tempfile.mkdtemp(prefix="perf-fuzz.")
    findings, runs, warned, kinds = {}, 0, [0, 0], {}
    os.makedirs(a.keep, exist_ok=True)

    def one(k, blob, cmd):
        wd = os.path.join(workdir, str(k % (4 * a.jobs)))
        os.makedirs(wd, exist_ok=True)
        path = os.path.join(wd, "in.data")
        with open(path, "wb") as f:
            f.write(blob)
        return run(a.perf, cmd, path, wd)

    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        pending = {}
        k = 0
        while time.monotonic() < deadline or pending:
            while time.monotonic() < deadline and len(pending) < a.jobs:
                blob, names = mutate(rnd.choice(bases), rnd)
                cmd = COMMANDS[k % len(COMMANDS)]
                for nm in names:
                    kinds[nm.split("-")[0]] = kinds.get(nm.split("-")[0], 0) + 1
                pending[pool.submit(one, k, blob, cmd)] = (k, blob, cmd, names)
                k += 1
            done, _ = concurrent.futures.wait(
                pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for fut in done:
                idx, blob, cmd, names = pending.pop(fut)
                runs += 1
                verdict, err = fut.result()
                if isinstance(verdict, tuple):
                    warned[0] += verdict[0]
                    warned[1] += verdict[1]
                    continue
                if verdict in findings:
                    continue
                keep = os.path.join(a.keep, "fuzz-%04d.data" % idx)
                with open(keep, "wb") as f:
                    f.write(blob)
                findings[verdict] = (keep, cmd, names, err)
    subprocess.run(["rm", "-rf", workdir])
    print("# %d inputs read; mutations: %s" % (runs, ", ".join(
        "%s %d" % kv for kv in sorted(kinds.items()))))
    print("# runs that warned of ignored deferred records: %d, of ignored reports: %d"
          % tuple(warned))
    n += 1
    if findings:
        for verdict, (keep, cmd, names, err) in sorted(findings.items()):
            print("# %s: perf %s -i %s (mutations: %s)" % (verdict, cmd, keep, ", ".join(names)))
            for ln in err.splitlines()[:12]:
                print("#   " + ln)
        # The kinds on the result line itself: CI shows that line, not
        # always the comments above it.
        print("not ok %d perf-fuzz: %d kinds of finding in %d inputs, seed %d: %s"
              % (n, len(findings), runs, seed, "; ".join(sorted(findings))[:300]))
    else:
        print("ok %d perf-fuzz: %d mutated inputs, seed %d: no crash, hang or sanitizer report"
              % (n, runs, seed))
    n += 1
    # A fuzzer whose inputs never reach the checks it means to test finds
    # nothing for the wrong reason.
    if warned[0] and (warned[1] or not any(b"unwind_user_report" in b for b in bases)):
        print("ok %d perf-fuzz: inputs reached perf's checks of deferred records (%d) and reports (%d)"
              % (n, warned[0], warned[1]))
    else:
        print("not ok %d perf-fuzz: inputs reached perf's checks of deferred records (%d) and reports (%d)"
              % (n, warned[0], warned[1]))
    print("1..%d" % n)
    return 0 if not findings and warned[0] else 1


if __name__ == "__main__":
    sys.exit(main())
