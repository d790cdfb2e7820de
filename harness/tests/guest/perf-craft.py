#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write damaged copies of a pipe-mode perf.data stream with deferred
callchains, for harness/tests/guest/perf-crafted.sh.

    perf-craft.py BASE OUTDIR

BASE is the output of `perf record -o - --call-graph fp,defer` (pipe mode,
little-endian, one event with sample_id_all). Each copy gets one kind of
bad or unusual PERF_RECORD_CALLCHAIN_DEFERRED; OUTDIR/NAME.data is written
for each, and their names are printed, one per line, as "NAME VALID":
VALID is 0 when the record's size cannot hold what it claims (perf must
warn and ignore it), 1 when the record is well formed but unusual.
"""
import os
import struct
import sys

PIPE_HEADER = 16
HEADER_ATTR = 64
SAMPLE = 9
DEFERRED = 22
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


def record(cookie, nr, ips, trailer, size=None):
    """A CALLCHAIN_DEFERRED: the given nr, ips and sample_id trailer; size
    defaults to what they take (header.size is 16 bits, as in the file)."""
    body = struct.pack("<QQ", cookie, nr) + b"".join(struct.pack("<Q", i) for i in ips)
    body += trailer
    if size is None:
        size = 8 + len(body)
    return struct.pack("<IHH", DEFERRED, 0, size) + body[:max(size - 8, 0)]


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
    os.makedirs(outdir, exist_ok=True)
    for name, valid, blob in variants:
        with open(os.path.join(outdir, name + ".data"), "wb") as f:
            f.write(blob)
        print(name, valid)


if __name__ == "__main__":
    main()
