#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# splat_scan_test.sh - tools/testhost/splat-scan.sh on kernel logs whose
# verdict is known: a WARN of 6.1's debugfs race with rmmod (from a debug
# test host's console, fuzz_test's readers and reloader) is no splat
# while its module list shows vmlat GOING, and is one otherwise; a splat
# inside it still counts. TAP output.

set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=vmlat/tap.sh
. "$TOP/selftests/vmlat/tap.sh"
SCAN=$TOP/tools/testhost/splat-scan.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Debian 6.1's debug test host, abridged (its registers left out).
cat >"$tmp/race.log" <<'LOG'
[  505.276771] vmlat: threshold_preempt_us: write a number of microseconds from 0 (off) to 10000000
[  505.721136] ------------[ cut here ]------------
[  505.731597] debugfs file owner did not clean up at exit: threshold_wait_us
[  505.743959] WARNING: CPU: 1 PID: 122 at fs/debugfs/file.c:334 full_proxy_open+0x127/0x532
[  505.745212] Modules linked in: vmlat(OE-) kvm_amd kvm irqbypass [last unloaded: vmlat(OE)]
[  505.772874] CPU: 1 PID: 122 Comm: python3 Tainted: G           OE      6.1.192-vmlat-debug #1
[  505.779450] RIP: 0010:full_proxy_open+0x127/0x532
[  505.811118] Call Trace:
[  505.812545]  <TASK>
[  505.825098]  ? debugfs_locked_down.isra.0+0xd9/0xd9
[  505.828906]  do_dentry_open+0x5b4/0xaea
[  505.838152]  path_openat+0x10b5/0x12d3
[  505.856935]  entry_SYSCALL_64_after_hwframe+0x4b/0xb5
[  505.869252]  </TASK>
[  505.870001] irq event stamp: 0
[  505.884108] ---[ end trace 0000000000000000 ]---
LOG

check() {	# check NAME WANT_STATUS FILE
	local got=0 why=
	"$SCAN" "$3" >"$tmp/out" 2>&1 || got=$?
	[ "$got" = "$2" ] || why="exit $got, not $2: $(head -c 300 "$tmp/out")"
	result "$([ -z "$why" ] && echo 1 || echo 0)" "$1" "$why"
}

echo "TAP version 13"
echo "1..7"
check "debugfs_race_going_is_no_splat" 0 "$tmp/race.log"
sed 's/vmlat(OE-)/vmlat(OE)/' "$tmp/race.log" >"$tmp/live.log"
check "debugfs_race_module_live_is_a_splat" 1 "$tmp/live.log"
sed 's/Modules linked in: vmlat(OE-) /Modules linked in: /' "$tmp/race.log" >"$tmp/gone.log"
check "debugfs_race_module_gone_is_a_splat" 1 "$tmp/gone.log"
sed 's/^\[  505.870001\] .*/[  505.870001] BUG: KASAN: use-after-free in vmlat_read+0x1\/0x2/' \
	"$tmp/race.log" >"$tmp/bug.log"
check "splat_inside_the_race_counts" 1 "$tmp/bug.log"
{ cat "$tmp/race.log"; echo "[  506.000000] WARNING: CPU: 0 PID: 1 at kernel/x.c:1 f+0x1/0x2"; } >"$tmp/after.log"
check "splat_after_the_race_counts" 1 "$tmp/after.log"
head -n 3 "$tmp/race.log" >"$tmp/cut.log"
check "race_message_at_the_end_counts" 1 "$tmp/cut.log"
# Without its end marker, the race's quiet ends at its own call trace: a
# later dump (a call trace alone) still counts.
{ grep -v 'end trace' "$tmp/race.log"; echo "[  506.000000] Call Trace:"; } >"$tmp/dump.log"
check "call_trace_after_the_race_counts" 1 "$tmp/dump.log"
[ "$fail" = 0 ]
