#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The Python work of the stock streams: a file read in a loop, three
Python calls deep, by Debian's python3.11 as shipped.

    stock_io.py FILE N [--read-own-stack]

Reads 64 KiB of FILE N times; with --read-own-stack, then reads its own
stack with PR_USER_STACK_READ (stock_clients.py read).
"""
import sys


def a(path, n):
    return b(path, n)


def b(path, n):
    return c(path, n)


def c(path, n):
    s = 0
    for _ in range(n):
        with open(path, "rb") as f:
            s += len(f.read(65536))
    return s


a(sys.argv[1], int(sys.argv[2]))
if sys.argv[3:] == ["--read-own-stack"]:
    import stock_clients
    stock_clients.read_own_stack()
