#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Bytes that sampling wrote to a perf.data file, from `perf report -D`.

Reads the dump on stdin and prints "SAMPLES SAMPLE_BYTES RECORD_BYTES":
the PERF_RECORD_SAMPLE records, their bytes, and the bytes of the
PERF_RECORD_CALLCHAIN_DEFERRED records. The file's size divided by its
samples also counts what does not grow with them (headers, mmap and comm
records), which weighs more in a recording with fewer samples: fp's
in-interrupt walk makes a profiled program run longer, and take more
samples, than fp,defer does.
"""
import re
import sys

SIZE = re.compile(r"\[(0x[0-9a-f]+)\]: (PERF_RECORD_[A-Z_]+)")


def main():
    samples = sample_bytes = record_bytes = 0
    for line in sys.stdin:
        m = SIZE.search(line)
        if not m:
            continue
        size = int(m.group(1), 16)
        if m.group(2) == "PERF_RECORD_SAMPLE":
            samples += 1
            sample_bytes += size
        elif m.group(2) == "PERF_RECORD_CALLCHAIN_DEFERRED":
            record_bytes += size
    print(samples, sample_bytes, record_bytes)


if __name__ == "__main__":
    main()
