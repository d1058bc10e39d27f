#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stage 2 of the test host: PID 1 after stage 1 has switch_rooted into the
# overlay of the build machine's root. Mounts the pseudo file systems, makes
# the test kernel's modules visible to modprobe, runs the job with a
# timeout, saves its status and the kernel log into the output share, and
# powers off. Parameters come from the kernel command line (see boot.sh):
#   testhost.out=<outdir> testhost.job=<script> testhost.kdir=<kernel-dir>
#   testhost.timeout=<seconds boot.sh gives the whole test host>
# Whatever fails, the EXIT trap powers the machine off: if PID 1 exited
# instead, the kernel would panic (and reboot, which QEMU turns into exit).

set -euo pipefail
# set -e also inside $(...): a failing step there must not go unnoticed.
shopt -s inherit_errexit
TH_PROG=testhost-stage2
# stage 1 runs us by absolute path.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "${BASH_SOURCE[0]%/*}/lib.sh"

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
out=

# Everything here runs before the job on every boot. util-linux's mount and
# friends are dynamically linked, and loading them over 9p costs ~1 s per
# exec on the debug kernel (KASAN + lockdep under TCG); the static busybox
# of the shared root costs a fraction of that.
bb() {
	busybox "$@"
}

uptime_s() {
	local up _
	read -r up _ </proc/uptime
	printf '%s\n' "$up"
}

param() {
	local a words
	read -ra words </proc/cmdline
	for a in "${words[@]}"; do
		if [[ $a == "testhost.$1="* ]]; then
			printf '%s\n' "${a#*=}"
			return 0
		fi
	done
	return 1
}

mount_pseudo_fs() {
	bb mount -t proc proc /proc
	bb mount -t sysfs sysfs /sys
	# devtmpfs creates /dev/kvm by itself when kvm loads: no udev needed.
	bb mount -t devtmpfs devtmpfs /dev
	# What udev would add: bash's <(...) (dkms uses it) needs /dev/fd.
	bb ln -sfn /proc/self/fd /dev/fd
	bb ln -sfn /proc/self/fd/0 /dev/stdin
	bb ln -sfn /proc/self/fd/1 /dev/stdout
	bb ln -sfn /proc/self/fd/2 /dev/stderr
	bb mkdir -p /dev/pts /dev/shm
	# Nice to have (ptys, POSIX shm); a minimal debug kernel may lack them.
	bb mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts ||
		log "warning: no devpts"
	bb mount -t tmpfs tmpfs /dev/shm || log "warning: no tmpfs on /dev/shm"
	bb mount -t debugfs debugfs /sys/kernel/debug
	bb mount -t tracefs tracefs /sys/kernel/tracing
}

# modprobe (kmod, from the shared root) looks in /lib/modules/<uname -r>;
# show it the test kernel's modules instead of the build machine's.
bind_modules() {
	local kdir=$1
	[[ -d $kdir/lib/modules ]] || die "$kdir/lib/modules missing"
	bb mkdir -p /lib/modules
	bb mount -o bind "$kdir/lib/modules" /lib/modules
}

setup_misc() {
	echo testhost >/proc/sys/kernel/hostname
	bb ip link set lo up 2>/dev/null || true
}

# Runs the job with a clean, documented environment and the cwd in the
# output dir; job.done records its exit status (124: timed out).
run_job() {
	local job=$1 kdir=$2 timeout_s=$3 rc=0 start=$SECONDS
	log "running $job (timeout ${timeout_s}s) on $(</proc/sys/kernel/osrelease)," \
		"uptime $(uptime_s)s"
	echo "$TESTHOST_JOB_MARK" >/dev/kmsg
	(
		cd "$out"
		exec env -i PATH="$PATH" HOME=/root TERM=dumb LC_ALL=C \
			VMLAT_KDIR_DIR="$kdir" VMLAT_OUT="$out" \
			timeout -k 10 "$timeout_s" sh "$job"
	) </dev/null >"$out/job.log" 2>&1 || rc=$?
	printf '%s\n' "$rc" >"$out/job.done"
	log "job exited with status $rc after $((SECONDS - start))s"
}

# The job gets what is left of boot.sh's budget after the boot, minus a
# reserve for the firmware before the kernel's clock starts, timeout's kill
# grace and dmesg+sync+poweroff. Its own timeout then fires before QEMU's,
# so job.done, job.log and dmesg.txt are still written.
job_timeout() {
	local total_s=$1 up_s reserve_s=25 left_s
	up_s=$(uptime_s)
	left_s=$((total_s - ${up_s%.*} - reserve_s))
	((left_s >= 5)) || left_s=5
	echo "$left_s"
}

finish() {
	set +e
	if [[ -n $out && -d $out ]]; then
		dmesg >"$out/dmesg.txt" 2>&1
	fi
	sync
	log "powering off"
	busybox poweroff -f
	# No busybox? Ask the kernel directly.
	echo o >/proc/sysrq-trigger
	sleep 60
}

main() {
	local job kdir total_s
	trap finish EXIT
	mount_pseudo_fs
	out=$(param out) || die "no testhost.out="
	job=$(param job) || die "no testhost.job="
	kdir=$(param kdir) || die "no testhost.kdir="
	total_s=$(param timeout) || total_s=1200
	bind_modules "$kdir"
	setup_misc
	run_job "$job" "$kdir" "$(job_timeout "$total_s")"
}

main "$@"
