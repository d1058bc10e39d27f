#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# splat-scan.sh [--from-job] <file>...
#
# --from-job: only what follows the line stage2.sh logs to the kernel as
# the job starts (TESTHOST_JOB_MARK), in each file: boot is not scanned
# (bochs' CPU models make stock kernels WARN at boot, see
# ../../Documentation/vmlat.rst). A file without the line is scanned whole.
#
# Prints every kernel "splat" line found in the given logs (console.log,
# dmesg.txt...) as <file>:<line>: <text>, with the frames that follow each
# "Call Trace:" as context. Exit status: 0 if none, 1 if any, 2 if a file
# cannot be read. The patterns are case-sensitive on purpose: the kernel
# spells these in capitals, while benign lines such as QEMU's "warning: TCG
# doesn't support..." or "kasan: KernelAddressSanitizer initialized" do not.

set -euo pipefail
# set -e also inside $(...): a failing step there must not go unnoticed.
shopt -s inherit_errexit
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# One extended regular expression per kind of splat.
SPLAT_PATTERNS=(
	'BUG:'                            # BUG: KASAN/KFENCE/soft lockup/sleeping...
	'kernel BUG at'
	'WARNING:'                        # WARN*(), lockdep, refcount_t...
	'possible [a-z ]*(locking|dependency|deadlock|inversion)'
	'inconsistent lock state'
	'suspicious RCU usage'
	'bad unlock balance'
	'KASAN:'
	'UBSAN:'
	'scheduling while atomic'
	'unreferenced object 0x'          # kmemleak (verbose or debugfs dump)
	'new suspected memory leaks'
	'(^|[^A-Za-z])Oops([^A-Za-z]|$)'
	'general protection fault'
	'detected stalls? on CPU'         # RCU stall
	'self-detected stall'
	'rcu: INFO:'
	'hard LOCKUP'
	'blocked for more than [0-9]+ seconds' # hung task
	'list_(add|del) corruption'
	'Kernel panic'
	'Call Trace:'
	# The kernel's word that vmlat uses an interface it will remove
	# (7.2: "work func ... [vmlat] enqueued on deprecated workqueue").
	'\[vmlat(_guest|_kunit)?\].*deprecated|deprecated.*\[vmlat(_guest|_kunit)?\]'
)

# Lines that match a pattern above but are no splat. Keep this short and
# specific: each entry hides a real message of a stock kernel.
BENIGN_PATTERNS=(
	# Printed at boot on any CPU without SRSO microcode (every TCG "EPYC").
	'Speculative Return Stack Overflow: WARNING: See'
)

# The kernel's debugfs races rmmod (seen on 6.1's debug test host):
# try_stop_module() drops the module's references before it marks the
# module GOING, and full_proxy_open(), finding no reference to take and
# the module not GOING yet, WARNs that the owner "did not clean up at
# exit" and refuses the open (-ENXIO), as it does when it finds it GOING.
# fuzz_test's readers open vmlat's files while it unloads. That WARN is
# the kernel's race, not a splat, when the same WARN's module list shows
# vmlat GOING ("vmlat(OE-)"): set by then, and a module that did leave a
# file behind would be gone from the list. Its call trace (the first one
# after, or none past its end marker) goes with it; any other splat line
# inside it still counts.
DEBUGFS_RACE='debugfs file owner did not clean up at exit: '
DEBUGFS_RACE_GOING='Modules linked in:.* vmlat\([A-Z]*-\)'

usage() {
	echo "usage: $0 [--from-job] <file>..." >&2
	exit 2
}

# After "Call Trace:", keep printing while lines look like stack frames
# ("func+0x1a/0x30", "<TASK>", "</IRQ>"...).
scan() {
	local from=$1 re benign
	shift
	re=$(IFS='|'; printf '%s' "${SPLAT_PATTERNS[*]}")
	benign=$(IFS='|'; printf '%s' "${BENIGN_PATTERNS[*]}")
	awk -v re="$re" -v benign="$benign" -v from="$from" \
		-v race="$DEBUGFS_RACE" -v going="$DEBUGFS_RACE_GOING" '
		function flush() {
			if (held != "") {
				printf "%s", held
				found = 1
			}
			held = ""
		}
		FNR == 1 {
			flush()
			ctx = 0
			quiet = 0
			skip = 0
			if (from != "") {
				cmd = "grep -qF \"" from "\" \"" FILENAME "\""
				skip = system(cmd) == 0
				close(cmd)
			}
		}
		skip {
			if (index($0, from))
				skip = 0
			next
		}
		# The debugfs race: its message and WARNING line held until its
		# module list says whether vmlat was GOING.
		index($0, race) {
			flush()
			held = FILENAME ":" FNR ": " $0 "\n"
			nheld = 1
			next
		}
		held != "" {
			if ($0 ~ going) {
				held = ""
				quiet = 1
				next
			}
			if (nheld == 1 && /WARNING:/) {
				held = held FILENAME ":" FNR ": " $0 "\n"
				nheld++
				next
			}
			flush()
		}
		quiet && /---\[ end trace/ { quiet = 0 }
		quiet && /Call Trace:/ {
			quiet = 0
			next
		}
		$0 ~ re && $0 !~ benign {
			print FILENAME ":" FNR ": " $0
			found = 1
			ctx = /Call Trace:/ ? 64 : 0
			if (/Oops: int3/)
				int3 = 1
			next
		}
		# An int3 trap reports the address after the int3, which the
		# "Code:" line marks <xx>: the byte before it must be the int3
		# (cc). Anything else means the CPU ran an int3 that memory no
		# longer held: text patching (static keys, tracepoints) had
		# replaced it and the emulator ran its stale translation of the
		# page (QEMU TCG with a thread per vCPU, see boot.sh).
		int3 && /Code: / {
			int3 = 0
			for (i = 2; i <= NF; i++)
				if ($i ~ /^<[0-9a-f][0-9a-f]>$/)
					break
			if (i <= NF && $(i - 1) != "cc") {
				print FILENAME ":" FNR ": " $0
				print FILENAME ":" FNR ": the emulator'"'"'s fault: int3 trap, but memory holds " \
					$(i - 1) ", not cc, before the trapping address: stale translated code after kernel text patching"
			}
		}
		ctx > 0 && /\+0x[0-9a-f]+\/0x[0-9a-f]+|<\/?(TASK|IRQ|NMI|SOFTIRQ|EOI)>/ {
			print FILENAME ":" FNR ": " $0
			ctx--
			next
		}
		{ ctx = 0 }
		END {
			flush()
			exit found ? 1 : 0
		}
	' "$@"
}

main() {
	local f from=
	if [[ ${1-} == --from-job ]]; then
		from=$TESTHOST_JOB_MARK
		shift
	fi
	[[ $# -ge 1 ]] || usage
	for f in "$@"; do
		[[ -r $f ]] || { log "cannot read $f"; exit 2; }
	done
	scan "$from" "$@"
}

main "$@"
