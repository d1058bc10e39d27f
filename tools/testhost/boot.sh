#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# boot.sh <kernel-dir> <outdir> <job-script> [timeout_s (default 1200)]
#
# Boots a test host from a kernel dir made by kernel.sh, runs
# `sh <job-script>` in it (see stage2.sh) and waits for it to power off.
# Two kinds, by env VMLAT_TESTHOST (this is the one place that knows how
# each boots):
#
#   qemu (default)  QEMU TCG with emulated AMD SVM, so that kvm-amd loads
#	and runs real guests inside. The build machine's root is the test
#	host's (read-only, under a tmpfs overlay) and <outdir> is shared
#	read-write at the same path, so paths are identical inside and out.
#   bochs  Bochs with an emulated Intel VT-x CPU (EPT, VPID, unrestricted
#	guest), so that kvm-intel loads. Bochs has no 9p: the test host
#	runs on a root image (rootimg.sh) holding the job script, stage 2,
#	the kernel's modules, <outdir> and the paths in env
#	VMLAT_ROOT_PATHS (what the job uses), all at the same paths as
#	here; <outdir> is copied back out of the image after power-off.
#	The kernel boots from an ISO (isolinux).
#
# Results in <outdir>: console.log (serial console and the emulator's
# messages), job.log, job.done (job exit status), dmesg.txt; and
# console.boot1.log if a first boot died before its job started and the
# test host was booted once more (see main). Extra kernel
# command line arguments: <kernel-dir>/cmdline (if present) and env
# VMLAT_CMDLINE, in that order.
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
	# VMLAT_QEMU: another qemu-system-x86_64 (tools/testhost/qemu.sh's).
	local -a extra
	read -ra extra <<<"${VMLAT_QEMU_EXTRA:-}"
	timeout -k 10 "$timeout_s" "${VMLAT_QEMU:-qemu-system-x86_64}" \
		-accel tcg,thread=single -cpu EPYC,+svm -m 2048 -smp 2 \
		"${extra[@]}" \
		-nographic -no-reboot -nic none \
		-kernel "$kdir/vmlinuz" -initrd "$kdir/initrd.gz" \
		-append "$cmdline" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$(qemu_escape "$out"),mount_tag=out,security_model=none,multidevs=remap" \
		</dev/null >"$out/console.log" 2>&1
}

# Bochs' CPU: Skylake-X has VMX with EPT, VPID and unrestricted guest.
# One of them: bochs emulates several CPUs in turns, and two make the test
# host 2.2 times slower (a boot and a small job: 283 s against 127 s; its
# SMP quantum makes no difference). The tests then pin everything to CPU 0.
# ips: emulated instructions per emulated second; with clock sync=none the
# test host's time follows the instructions it ran (reproducible). Env
# VMLAT_BOCHS_CPU replaces this line of the bochsrc (experiments).
# Bochs' TSC counts ips ticks per emulated second, and the kernel is told
# so (tsc_early_khz: bochs_tsc_khz). Without it, 6.12 takes the model's
# CPUID frequency ("tsc: Detected 3500.000 MHz processor"), 35 times the
# TSC's, and its clock runs that much slower than the emulated machine:
# every workload the tests time in the kernel's clock (a 1 s hog, a
# guest's run) costs 35 times the instructions. The vmx-6.12-rt test host
# took 10:10 of a lane without it and 3:55 with it, every check passing
# both ways (and 4:25, 4:40 with the Sandy Bridge and Haswell models,
# whose kernels calibrate the TSC against the PIT).
BOCHS_CPU=${VMLAT_BOCHS_CPU:-"model=corei7_skylake_x, count=1, ips=100000000"}
BOCHS_MEGS=1024

# " tsc_early_khz=N": the TSC frequency of BOCHS_CPU's ips (nothing if it
# names none).
bochs_tsc_khz() {
	local ips
	ips=$(grep -o 'ips=[0-9]*' <<<"$BOCHS_CPU" | cut -d= -f2) || true
	[ -z "$ips" ] || echo " tsc_early_khz=$((ips / 1000))"
}

# A boot ISO for bochs (no -kernel there): isolinux, vmlinuz, initrd.gz.
make_iso() {
	local kdir=$1 dir=$2 cmdline=$3
	mkdir -p "$dir/iso/isolinux"
	cp "$kdir/vmlinuz" "$kdir/initrd.gz" "$dir/iso/"
	cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 \
		"$dir/iso/isolinux/"
	printf 'DEFAULT t\nPROMPT 0\nLABEL t\n  KERNEL /vmlinuz\n  APPEND initrd=/initrd.gz %s\n' \
		"$cmdline" >"$dir/iso/isolinux/isolinux.cfg"
	xorriso -as mkisofs -quiet -o "$dir/boot.iso" -b isolinux/isolinux.bin \
		-c isolinux/boot.cat -no-emul-boot -boot-load-size 4 \
		-boot-info-table "$dir/iso" 2>/dev/null
}

# Debian builds bochs with its debugger, whose term display draws the
# screen (and the status bar, every second) into a pseudo-terminal of its
# own, /dev/ptmx, and says which on standard error: 'Bochs connected to
# screen "/dev/pts/N"'. Nobody reads that terminal, so after some minutes
# its buffer is full, bochs blocks writing to it and the emulated machine
# stops, silent (the serial console included). Read it into /dev/null.
# Prints the reader's PID (nothing if bochs never said which terminal).
drain_bochs_screen() {	# drain_bochs_screen TERM_LOG BOCHS_PID
	local tlog=$1 pid=$2 pts i
	for ((i = 0; i < 600; i++)); do
		pts=$(grep -ao 'connected to screen "/dev/pts/[0-9]*"' "$tlog" 2>/dev/null |
			head -n 1 | grep -o '/dev/pts/[0-9]*') || true
		if [ -n "$pts" ] && [ -c "$pts" ]; then
			stty -F "$pts" raw -echo 2>/dev/null || true
			cat "$pts" >/dev/null 2>&1 </dev/null &
			echo $!
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "boot.sh: bochs named no screen terminal; it may stop when that fills" >&2
}

# The modules of the bochs test host's root image: what its job loads
# (kvm_intel) with what that needs, and the module indexes. The whole tree
# (500 MB, 90% of the image) made the image take a minute to build beside
# a running test host, for three modules.
BOCHS_MODULES="kvm_intel"

bochs_module_paths() {	# bochs_module_paths KDIR: one path per line
	local kdir=$1 rel m deps
	rel=$(<"$kdir/release")
	ls -d "$kdir/lib/modules/$rel"/modules.*
	for m in $BOCHS_MODULES; do
		deps=$(modprobe -d "$kdir" -S "$rel" --show-depends "$m" |
			awk '$1 == "insmod" { print $2 }')
		[[ -n $deps ]] || die "no module $m in $kdir/lib/modules/$rel"
		printf '%s\n' "$deps"
	done
}

run_bochs() {
	local kdir=$1 out=$2 timeout_s=$3 cmdline=$4 job=$5 stage2=$6 tmp rc=0
	local -a paths mods
	local modlist
	need_cmd bochs xorriso mke2fs debugfs script modprobe
	[[ -f /usr/lib/ISOLINUX/isolinux.bin ]] || die "no isolinux (install isolinux syslinux-common)"
	modlist=$(bochs_module_paths "$kdir") || exit 1
	mapfile -t mods <<<"$modlist"
	tmp=$(mktemp -d)
	make_iso "$kdir" "$tmp" "$cmdline testhost.root=disk$(bochs_tsc_khz)"
	read -ra paths <<<"${VMLAT_ROOT_PATHS:-}"
	"$TESTHOST_DIR/rootimg.sh" "$tmp/root.img" 512 "${stage2%/*}" "$job" \
		"$out" "${mods[@]}" "$kdir/release" "${paths[@]}"
	# term display (no window), no sound; standard input answers the
	# debugger's first prompt with "c" and stays open while it runs.
	cat >"$tmp/bochsrc" <<-EOF
		cpu: $BOCHS_CPU
		megs: $BOCHS_MEGS
		romimage: file=/usr/share/bochs/BIOS-bochs-latest
		vgaromimage: file=/usr/share/vgabios/vgabios.bin
		ata0-master: type=cdrom, path=$tmp/boot.iso, status=inserted
		ata0-slave: type=disk, path=$tmp/root.img, mode=flat
		boot: cdrom
		com1: enabled=1, mode=file, dev=$out/console.log
		clock: sync=none
		display_library: term
		plugin_ctrl: speaker=0
		sound: waveoutdrv=dummy, waveindrv=dummy, midioutdrv=dummy
		log: $tmp/bochs.log
		panic: action=fatal
		error: action=report
	EOF
	mkfifo "$tmp/stdin"
	# The serial console goes straight to console.log: with a job that
	# writes its progress to /dev/console, tail -f shows it live.
	# The term display needs a terminal: script(1) gives it one. bochs
	# does not always end on SIGTERM: SIGKILL.
	TERM=xterm timeout -s KILL "$timeout_s" script -qfec \
		"bochs -q -f $tmp/bochsrc" /dev/null <"$tmp/stdin" >"$tmp/term.log" 2>&1 &
	local pid=$! drain
	exec 8>"$tmp/stdin"
	echo c >&8
	drain=$(drain_bochs_screen "$tmp/term.log" "$pid")
	wait "$pid" || rc=$?
	exec 8>&-
	[ -z "$drain" ] || kill "$drain" 2>/dev/null || true
	grep -E '>>PANIC<<|\[(CPU0|SIM) *\] .*(panic|shutdown)' "$tmp/bochs.log" \
		>>"$out/console.log" 2>/dev/null || true
	# what the job wrote to <outdir> inside the image
	if debugfs -R "rdump $out $tmp" "$tmp/root.img" >/dev/null 2>&1 &&
		[[ -d $tmp/${out##*/} ]]; then
		cp -a "$tmp/${out##*/}/." "$out/"
	fi
	rm -rf "$tmp"
	return "$rc"
}

# run_host KIND KDIR OUT TIMEOUT CMDLINE JOB STAGE2: one boot.
run_host() {
	if [[ $1 == bochs ]]; then
		run_bochs "$2" "$3" "$4" "$5" "$6" "$7"
	else
		run_qemu "$2" "$3" "$4" "$5"
	fi
}

main() {
	local kdir out job timeout_s stage2 cmdline rc=0 start kind
	[[ $# -eq 3 || $# -eq 4 ]] || usage
	timeout_s=${4:-1200}
	[[ $timeout_s =~ ^[0-9]+$ && $timeout_s -ge 30 ]] || usage
	kind=${VMLAT_TESTHOST:-qemu}
	case $kind in
	qemu) need_cmd qemu-system-x86_64 timeout ;;
	bochs) need_cmd bochs timeout ;;
	*) die "VMLAT_TESTHOST=$kind: qemu or bochs" ;;
	esac
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
	rm -f "$out"/{console.log,console.boot1.log,job.log,job.done,dmesg.txt}

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

	log "booting $(<"$kdir/release") under $kind for $job (timeout ${timeout_s}s)"
	start=$SECONDS
	run_host "$kind" "$kdir" "$out" "$timeout_s" "$cmdline" "$job" \
		"$stage2" || rc=$?
	# A test host that died before its job started (stage 2 makes job.log
	# as it starts it) ran no vmlat: its stock kernel died under the
	# emulator (seen once, a double fault in 6.12's early boot under
	# -icount). Once more; the first console is kept apart, unscanned.
	if [[ ! -f $out/job.done && ! -f $out/job.log ]] &&
		((rc != 124 && rc != 137)) && [[ -f $out/console.log ]]; then
		mv "$out/console.log" "$out/console.boot1.log"
		log "the test host died before its job started (no vmlat" \
			"loaded; console.boot1.log): booting it once more"
		tail -n 5 "$out/console.boot1.log" >&2
		rc=0
		run_host "$kind" "$kdir" "$out" "$timeout_s" "$cmdline" "$job" \
			"$stage2" || rc=$?
	fi
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
