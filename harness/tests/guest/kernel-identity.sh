#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: the guest runs the kernel that was just built from the prepared tree,
# not some other image: its release and build stamp match the build's
# generated headers (KOBJ, set by harness/guest-tests).
gen=$KOBJ/include/generated
release=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$gen/utsrelease.h")
stamp=$(sed -n 's/^#define UTS_VERSION "\(.*\)"/\1/p' "$gen/utsversion.h")
echo "TAP version 13"
echo "1..2"
if [ "$(uname -r)" = "$release" ]; then
	echo "ok 1 release is $release"
else
	echo "not ok 1 release is $(uname -r), the build made $release"
fi
if [ -n "$stamp" ] && [ "$(uname -v)" = "$stamp" ]; then
	echo "ok 2 build stamp matches: ${stamp//#/}"
else
	echo "not ok 2 build stamp '$(uname -v | tr -d '#')' is not the build's '${stamp//#/}'"
fi
