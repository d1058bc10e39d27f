# shellcheck shell=bash disable=SC2034 # sets variables for the scripts that source it
# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the test-host harness (tools/testhost/*.sh).
# Sourced, never run. Everything heavy lives in the cache, never in the
# checkout; progress and errors go to stderr so that stdout stays free for
# the one value a script returns (e.g. the kernel dir printed by kernel.sh).

VMLAT_CACHE=${VMLAT_CACHE:-/var/cache/vmlat}
# No dirname/basename: stage2.sh sources this inside the test host, where
# every exec is slow (see stage2.sh).
TESTHOST_DIR=${BASH_SOURCE[0]%/*}
[[ $TESTHOST_DIR != "${BASH_SOURCE[0]}" ]] || TESTHOST_DIR=.
TESTHOST_DIR=$(cd "$TESTHOST_DIR" && pwd -P)
TH_PROG=${TH_PROG:-${0##*/}}
# What stage2.sh writes to the kernel log as the job starts.
TESTHOST_JOB_MARK="testhost: starting the job"

log() {
	printf '%s: %s\n' "$TH_PROG" "$*" >&2
}

die() {
	log "error: $*"
	exit 1
}

need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || die "'$c' not found (install it)"
	done
}

# Run "$@" with an exclusive lock on $1's lock file, so that two jobs that
# prepare the same cache entry at the same time do not race (one waits).
with_lock() {
	local lockfile=$1
	shift
	mkdir -p "$(dirname "$lockfile")"
	(
		flock 9
		"$@"
	) 9>"$lockfile"
}
