# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# TAP for vmlat's shell tests (sourced): skip WHY ends the test as
# skipped (exit 4, as kselftest's KSFT_SKIP); result OK NAME [WHY] prints
# one result, OK 1 or 0, and counts failures in $fail, results in $n;
# skipped NAME WHY skips one.

n=0
fail=0

skip() { echo "1..0 # SKIP $*"; exit 4; }

# skipped NAME WHY: one result skipped
skipped() {
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

result() {	# result OK NAME [WHY]
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n $2${3:+ # $3}"
	else
		echo "not ok $n $2${3:+ # $3}"
		fail=$((fail + 1))
	fi
}
