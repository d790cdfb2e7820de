#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write damaged copies of a pipe-mode perf.data stream with deferred
callchains, for harness/tests/guest/perf-crafted.sh.

    perf-craft.py BASE OUTDIR [REPORT_BASE]

BASE is the output of `perf record -o - --call-graph fp,defer` (pipe mode,
little-endian, one event with sample_id_all). Each copy gets one kind of
bad or unusual PERF_RECORD_CALLCHAIN_DEFERRED; OUTDIR/NAME.data is written
for each, and their names are printed, one per line, as "NAME VALID":
VALID is 0 when the record's size cannot hold what it claims (perf must
warn and ignore it), 1 when the record is well formed but unusual.

REPORT_BASE, if given, is such a recording with the report event
unwind_report:unwind_user_report too: copies of it get one report sample
whose dynamic array of entries lies outside its raw data, or is shorter
than its nr field says (VALID 2: perf must warn and ignore the report).
"""
import os
import struct
import sys

PIPE_HEADER = 16
HEADER_ATTR = 64
SAMPLE = 9
DEFERRED = 22
TRACING_DATA = 66
REC_FIXED = 24                  # header, cookie, nr


def events(data):
    """(offset, type, size) of each event after the pipe header."""
    off = PIPE_HEADER
    while off + 8 <= len(data):
        typ, _misc, size = struct.unpack_from("<IHH", data, off)
        if size < 8:
            sys.exit("perf-craft: event of size %d at %d" % (size, off))
        yield off, typ, size
        off += size
        if typ == TRACING_DATA:
            # Its payload follows the event, padded to 8 bytes.
            payload = struct.unpack_from("<I", data, off - size + 8)[0]
            off += (payload + 7) & ~7


def record(cookie, nr, ips, trailer, size=None):
    """A CALLCHAIN_DEFERRED: the given nr, ips and sample_id trailer; size
    defaults to what they take (header.size is 16 bits, as in the file)."""
    body = struct.pack("<QQ", cookie, nr) + b"".join(struct.pack("<Q", i) for i in ips)
    body += trailer
    if size is None:
        size = 8 + len(body)
    return struct.pack("<IHH", DEFERRED, 0, size) + body[:max(size - 8, 0)]


HEADER_ATTR_TYPE = 64
TRACEPOINT = 2
# Sample fields before PERF_SAMPLE_RAW, in their order: (bit, size).
FIXED_BEFORE_CALLCHAIN = [(1 << 16, 8), (1 << 0, 8), (1 << 1, 8), (1 << 2, 8),
                          (1 << 3, 8), (1 << 6, 8), (1 << 9, 8), (1 << 7, 8),
                          (1 << 8, 8)]
SAMPLE_READ, SAMPLE_CALLCHAIN, SAMPLE_RAW = 1 << 4, 1 << 5, 1 << 10
# unwind_user_report's raw data: common fields (8 bytes), cookie, flags,
# nr, then the __data_loc word of entries (offset | length << 16).
REPORT_NR, REPORT_LOC, REPORT_DATA = 20, 24, 28


def report_variants(data):
    """Copies of a recording with one report sample damaged, or []."""
    evs = list(events(data))
    tracepoint_ids, sample_type = set(), None
    for off, typ, size in evs:
        if typ != HEADER_ATTR_TYPE:
            continue
        atype, asize = struct.unpack_from("<II", data, off + 8)
        stype = struct.unpack_from("<Q", data, off + 8 + 24)[0]
        ids = struct.unpack_from("<%dQ" % ((size - 8 - asize) // 8), data,
                                 off + 8 + asize)
        if atype == TRACEPOINT:
            tracepoint_ids.update(ids)
            sample_type = stype
    if not tracepoint_ids or not sample_type & (1 << 16) or \
       sample_type & SAMPLE_READ or not sample_type & SAMPLE_RAW:
        sys.exit("perf-craft: no report event with identifier and raw data")
    for off, typ, size in evs:
        if typ != SAMPLE:
            continue
        pos = off + 8
        if struct.unpack_from("<Q", data, pos)[0] not in tracepoint_ids:
            continue
        for bit, width in FIXED_BEFORE_CALLCHAIN:
            if sample_type & bit:
                pos += width
        if sample_type & SAMPLE_CALLCHAIN:
            pos += 8 + 8 * struct.unpack_from("<Q", data, pos)[0]
        raw_size = struct.unpack_from("<I", data, pos)[0]
        raw = pos + 4
        nr = struct.unpack_from("<I", data, raw + REPORT_NR)[0]
        loc = struct.unpack_from("<I", data, raw + REPORT_LOC)[0]
        if nr and loc == REPORT_DATA | (8 * nr) << 16 and \
           REPORT_DATA + 8 * nr <= raw_size:
            break
    else:
        sys.exit("perf-craft: no report sample with entries")

    def with_loc(value):
        return (data[:raw + REPORT_LOC] + struct.pack("<I", value) +
                data[raw + REPORT_LOC + 4:])
    return [
        # The array's offset past the end of the raw data.
        ("report-loc-past-end", 2, with_loc(0xfff0 | (8 * nr) << 16)),
        # The array shorter than nr entries.
        ("report-len-short", 2, with_loc(REPORT_DATA | (8 * nr - 8) << 16)),
    ]


def main():
    base, outdir = sys.argv[1:3]
    data = open(base, "rb").read()
    if data[:8] != b"PERFILE2":
        sys.exit("perf-craft: %s is not a little-endian pipe-mode stream" % base)
    evs = list(events(data))
    deferred = [e for e in evs if e[1] == DEFERRED]
    samples = [e for e in evs if e[1] == SAMPLE]
    if not deferred or not samples:
        sys.exit("perf-craft: %s has no deferred record or no sample" % base)
    off, _, size = deferred[0]
    cookie, nr = struct.unpack_from("<QQ", data, off + 8)
    ips = list(struct.unpack_from("<%dQ" % nr, data, off + REC_FIXED))
    trailer = data[off + REC_FIXED + 8 * nr:off + size]
    first_sample = samples[0][0]
    # The trailer's first word is pid | tid << 32: a tid nobody sampled.
    stranger = struct.pack("<II", 999999, 999999) + trailer[8:]

    def append(extra):
        return data + extra

    def before_first_sample(extra):
        return data[:first_sample] + extra + data[first_sample:]

    good = record(cookie, nr, ips, trailer)
    variants = [
        # Size cannot hold the struct itself.
        ("short-struct", 0, append(struct.pack("<IHH", DEFERRED, 0, 16) + b"\0" * 8)),
        # nr claims more addresses than the record holds.
        ("nr-too-big", 0, append(record(cookie, nr + 100, ips, trailer,
                                        size=8 + 16 + 8 * nr + len(trailer)))),
        # nr = 2^64 - 1: nr * 8 wraps.
        ("nr-max", 0, append(record(cookie, 2**64 - 1, ips, trailer,
                                    size=8 + 16 + 8 * nr + len(trailer)))),
        # Addresses fit only if the sample_id trailer is counted as addresses.
        ("nr-into-trailer", 0, append(record(cookie, nr + len(trailer) // 8, ips,
                                             trailer,
                                             size=8 + 16 + 8 * nr + len(trailer)))),
        # The stream ends in the middle of a good record.
        ("truncated", 1, append(good[:len(good) // 2])),
        ("cookie-zero", 1, append(record(0, nr, ips, trailer))),
        ("unknown-tid", 1, append(record(cookie, nr, ips, stranger))),
        ("before-samples", 1, before_first_sample(good)),
        # The cookie answered again, after its samples were stitched.
        ("cookie-reused", 1, append(good)),
    ]
    if len(sys.argv) > 3:
        variants += report_variants(open(sys.argv[3], "rb").read())
    os.makedirs(outdir, exist_ok=True)
    for name, valid, blob in variants:
        with open(os.path.join(outdir, name + ".data"), "wb") as f:
            f.write(blob)
        print(name, valid)


if __name__ == "__main__":
    main()
