#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the kernel build tree to build vmlat against; explain on stderr.
# Order: the running kernel's build dir, else the newest Debian headers.
set -eu

running=/lib/modules/$(uname -r)/build
if [ -f "$running/Makefile" ]; then
	echo "$running"
	exit 0
fi

newest=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1)
if [ -n "$newest" ] && [ -f "$newest/Makefile" ]; then
	echo "vmlat: no build dir for the running kernel $(uname -r); building against $newest (set KDIR= to choose)" >&2
	echo "$newest"
	exit 0
fi

echo "vmlat: no kernel headers found: apt-get install linux-headers-\$(uname -r) (or linux-headers-amd64), or set KDIR=/path/to/kernel/build" >&2
exit 1
