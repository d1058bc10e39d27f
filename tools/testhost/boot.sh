#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# boot.sh <kernel-dir> <outdir> <job-script> [timeout_s (default 1200)]
#
# Boots a test host (QEMU TCG with emulated AMD SVM, so that kvm-amd loads
# and runs real guests inside) from a kernel dir made by kernel.sh, runs
# `sh <job-script>` in it (see stage2.sh) and waits for it to power off.
# The build machine's root is the test host's (read-only, under a tmpfs
# overlay) and <outdir> is shared read-write at the same path, so paths are
# identical inside and outside. Results in <outdir>: console.log (serial
# console and QEMU's messages), job.log, job.done (job exit status),
# dmesg.txt. Extra kernel command line arguments: <kernel-dir>/cmdline (if
# present) and env VMLAT_CMDLINE, in that order.
#
# Exit status: 0 if the job ran to its end (job.done exists, whatever the
# job's own status), 124 if QEMU was killed by the timeout, 1 otherwise
# (crash, panic, failed boot: see console.log), 2 for bad arguments.

set -euo pipefail
# set -e also inside $(...): a failing step there must not go unnoticed.
shopt -s inherit_errexit
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	echo "usage: $0 <kernel-dir> <outdir> <job-script> [timeout_s]" >&2
	exit 2
}

# The paths travel on the kernel command line, which splits on blanks.
check_path() {
	[[ $1 != *[[:space:]]* ]] || { log "path with blanks not supported: '$1'"; exit 2; }
}

# QEMU's -virtfs option parser needs commas doubled.
qemu_escape() {
	printf '%s' "${1//,/,,}"
}

run_qemu() {
	local kdir=$1 out=$2 timeout_s=$3 cmdline=$4
	# -nic none: no network needed, and no NIC to probe.
	# multidevs=remap: the shared root spans several file systems; remap
	# keeps inode numbers unique inside the test host.
	# thread=single: with one host thread per vCPU (MTTCG), QEMU 7.2 lets
	# a vCPU run stale translated code after another vCPU patched kernel
	# text: a static key flip (a tracepoint enabled or disabled, by ftrace
	# as well as by vmlat) then ends in "Oops: int3" at an address whose
	# int3 is no longer in memory, on stock 6.12 without vmlat too.
	# Round-robin TCG sees every write before the next instruction.
	# VMLAT_QEMU_EXTRA: more QEMU options, for tools/bench's -icount.
	local -a extra
	read -ra extra <<<"${VMLAT_QEMU_EXTRA:-}"
	timeout -k 10 "$timeout_s" qemu-system-x86_64 \
		-accel tcg,thread=single -cpu EPYC,+svm -m 2048 -smp 2 \
		"${extra[@]}" \
		-nographic -no-reboot -nic none \
		-kernel "$kdir/vmlinuz" -initrd "$kdir/initrd.gz" \
		-append "$cmdline" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$(qemu_escape "$out"),mount_tag=out,security_model=none,multidevs=remap" \
		</dev/null >"$out/console.log" 2>&1
}

main() {
	local kdir out job timeout_s stage2 cmdline rc=0 start
	[[ $# -eq 3 || $# -eq 4 ]] || usage
	timeout_s=${4:-1200}
	[[ $timeout_s =~ ^[0-9]+$ && $timeout_s -ge 30 ]] || usage
	need_cmd qemu-system-x86_64 timeout
	kdir=$(realpath "$1")
	mkdir -p "$2"
	out=$(realpath "$2")
	job=$(realpath "$3")
	stage2=$TESTHOST_DIR/stage2.sh
	[[ -f $kdir/vmlinuz && -f $kdir/initrd.gz ]] ||
		die "$kdir is not a prepared kernel dir (run kernel.sh prepare)"
	[[ -f $job ]] || die "no job script $job"
	check_path "$kdir"
	check_path "$out"
	check_path "$job"
	check_path "$stage2"
	# Results of an earlier run must not pass for this one's.
	rm -f "$out"/{console.log,job.log,job.done,dmesg.txt}

	# loglevel=6 (no "quiet"): WARNINGs, lockdep and KASAN reports reach the
	# console even if the test host dies before dmesg.txt is written.
	cmdline="console=ttyS0 panic=-1 loglevel=6"
	cmdline+=" testhost.out=$out testhost.job=$job testhost.kdir=$kdir"
	cmdline+=" testhost.stage2=$stage2 testhost.timeout=$timeout_s"
	# Arguments this kernel needs in the test host (optional file, written
	# by kernel.sh; e.g. acpi=noirq for the debug kernel).
	if [[ -f $kdir/cmdline ]]; then
		cmdline+=" $(<"$kdir/cmdline")"
	fi
	cmdline+=${VMLAT_CMDLINE:+ $VMLAT_CMDLINE}

	log "booting $(<"$kdir/release") for $job (timeout ${timeout_s}s)"
	start=$SECONDS
	run_qemu "$kdir" "$out" "$timeout_s" "$cmdline" || rc=$?
	if [[ -f $out/job.done ]]; then
		log "done in $((SECONDS - start))s, job status $(<"$out/job.done")"
		return 0
	fi
	if ((rc == 124 || rc == 137)); then
		log "timed out after ${timeout_s}s; last console lines:"
		rc=124
	else
		log "test host stopped without finishing the job (qemu status $rc);" \
			"last console lines:"
		rc=1
	fi
	tail -n 20 "$out/console.log" >&2
	return "$rc"
}

main "$@"
