#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: the guest set up as README's one command sets up a machine, before
# any other stream but the smoke tests: every object under /usr/bin and
# /usr/lib/x86_64-linux-gnu gets its SFrame table, from the cache the
# host filled (stock-common.sh), so that every stream after this one, and
# `make run`, sees Debian's own programs walked exactly. C2S is set by
# harness/run-tests.
echo "TAP version 13"
. "$(dirname "$0")/stock-common.sh"
echo "1..1"
if [ ! -x "${C2S:-}" ] || [ ! -d "$stock_cache" ]; then
	echo "ok 1 # SKIP cfi2sframe or the host's cache (make stock-cache) missing"
	exit 0
fi
start=$(date +%s)
if stock_on && grep -q " 0 failed; " /tmp/stock-on.out; then
	echo "ok 1 the stock tables given at boot in $(($(date +%s) - start)) s: $(cat /tmp/stock-on.out)"
else
	echo "not ok 1 the stock tables given at boot"
	sed 's/^/# /' /tmp/stock-on.out | tail -5
fi
