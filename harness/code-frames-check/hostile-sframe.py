#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""cfi2sframe -c reads an object's own SFrame section: input it must not
trust. Copies of OBJECT with its first function's row count, row offset
or size made huge must each end with a clean error (exit 2), not a crash.

    hostile-sframe.py CFI2SFRAME OBJECT
"""
import struct
import subprocess
import sys
import tempfile

c2s, obj = sys.argv[1:3]
data = bytearray(open(obj, "rb").read())
phoff = struct.unpack_from("<Q", data, 32)[0]
phnum = struct.unpack_from("<H", data, 56)[0]
sec = None
for i in range(phnum):
    if struct.unpack_from("<I", data, phoff + 56 * i)[0] == 0x6474e554:
        sec = struct.unpack_from("<Q", data, phoff + 56 * i + 8)[0]
if sec is None:
    sys.exit("hostile-sframe: %s has no PT_GNU_SFRAME" % obj)
fde = sec + 28 + struct.unpack_from("<I", data, sec + 20)[0]
bad = 0
for name, field in (("rows", 12), ("row offset", 8), ("size", 4)):
    copy = bytearray(data)
    struct.pack_into("<I", copy, fde + field, 0x7fffffff if field == 8 else 0xffffffff)
    with tempfile.NamedTemporaryFile(suffix=".elf") as f:
        f.write(copy)
        f.flush()
        r = subprocess.run([c2s, "-c", f.name], capture_output=True, text=True,
                           timeout=120)
    print("%s: exit %d: %s" % (name, r.returncode, r.stderr.strip()[-100:]))
    bad += r.returncode != 2
sys.exit(1 if bad else 0)
