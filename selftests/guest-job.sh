#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test host (see selftests/run and tools/testhost/boot.sh).
# Writes one TAP file per test program into $VMLAT_OUT (*.tap; *.ktap for
# KUnit), which selftests/run counts. Every test runs under a timeout: one
# hung test must not eat the whole run.
#
# Env: VMLAT_OUT, VMLAT_KO, VMLAT_KUNIT_KO, SELFTESTS_BIN, KVM_SELFTESTS;
#      VMLAT_ONLY (optional): run only these parts, a space-separated list
#      of test names (hooks_test, sync_test...), kvm_selftests and kunit;
#      a Python test as NAME:CASE,CASE runs only those cases of it;
#      VMLAT_SKIP (optional): parts not to run, whatever VMLAT_ONLY says;
#      a Python test as NAME:CASE,CASE runs without those cases.
set -u

OUT=$VMLAT_OUT
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
KMEMLEAK=/sys/kernel/debug/kmemleak
STATUS=/sys/kernel/debug/vmlat/status

echo "test host: $(uname -r), $(nproc) CPUs"

# Only leaks of objects allocated from now on are of interest, and the
# scan at the end finds them all: no automatic scan meanwhile (every 10
# minutes kmemleak scans all memory, under KASAN and TCG a slow one).
if [ -w $KMEMLEAK ]; then
	echo clear >$KMEMLEAK
	echo scan=off >$KMEMLEAK
fi

# KVM with nested virtualisation, as every test expects it: kvm_amd on
# the QEMU test host (SVM), kvm_intel on the bochs one (VMX).
if grep -qw vmx /proc/cpuinfo; then
	VENDOR=kvm_intel
	KVM_TESTS="vmx_close_while_nested_test vmx_tsc_adjust_test userspace_io_test kvm_clock_test"
else
	VENDOR=kvm_amd
	KVM_TESTS="svm_vmcall_test svm_int_ctl_test userspace_io_test kvm_clock_test"
fi
if ! modprobe $VENDOR nested=1; then
	echo "modprobe $VENDOR nested=1 failed"
fi

wanted() {	# wanted PART: is PART in VMLAT_ONLY (or is it unset), not in VMLAT_SKIP?
	case " ${VMLAT_SKIP:-} " in *" $1 "*) return 1 ;; esac
	[ -z "${VMLAT_ONLY:-}" ] && return 0
	case " $VMLAT_ONLY " in *" $1 "*|*" $1:"*) return 0 ;; esac
	return 1
}

# cases_of PART [LIST]: the cases of a test (Python, or C through
# ksft_util.h's vmlat_case_wanted()) that LIST (default
# VMLAT_ONLY) names as "PART:case,case", space-separated (run_suite's
# $VMLAT_TESTS, or with VMLAT_SKIP its $VMLAT_SKIP_TESTS); empty: none.
cases_of() {
	for w_ in ${2-${VMLAT_ONLY:-}}; do
		case $w_ in "$1":*) echo "${w_#*:}" | tr , ' ' ;; esac
	done
}

# run_logged FILE CMD...: CMD's output (stdout and stderr) into FILE; with
# VMLAT_LIVE=1 onto standard output too, as it comes (bochs: the job's
# output is the only live view of a slow test host). CMD's exit status.
run_logged() {
	f_=$1
	shift
	if [ "${VMLAT_LIVE:-}" = 1 ]; then
		{ "$@" 2>&1; echo $? >"$f_.rc"; } | tee "$f_"
		rc_=$(cat "$f_.rc")
		rm -f "$f_.rc"
		return "$rc_"
	fi
	"$@" >"$f_" 2>&1
}

# One of vmlat's selftests, under the timeout: its TAP into NAME.tap, its
# exit status and duration into NAME.log.
run_test() {	# run_test NAME PATH
	echo "--- $1"
	t0_=$(date +%s)
	# Twice the time for the tests in VMLAT_SLOW_TESTS (selftests/run:
	# dkms_test, whose DKMS builds vmlat under TCG for 500 s on 7.2, and
	# the debug kernel's records_test, whose 200 VMs KASAN makes slow).
	to_=$TEST_TIMEOUT
	case " ${VMLAT_SLOW_TESTS:-} " in
	*" $1 "*) to_=$((TEST_TIMEOUT * 2)) ;;
	esac
	VMLAT_KO=$VMLAT_KO VMLAT_TESTS=$(cases_of "$1") \
		VMLAT_SKIP_TESTS=$(cases_of "$1" "${VMLAT_SKIP:-}") \
		run_logged "$OUT/$1.tap" timeout -k 10 "$to_" "$2"
	rc_=$?
	echo "exit status $rc_" >>"$OUT/$1.log"
	# A test killed at its timeout may leave vmlat loaded: every test
	# after it would skip ("vmlat is already loaded").
	if [ "$rc_" -eq 124 ] || [ "$rc_" -eq 137 ]; then
		rmmod vmlat 2>/dev/null &&
			echo "vmlat left loaded: removed" >>"$OUT/$1.log"
	fi
	echo "took $(($(date +%s) - t0_)) s" >>"$OUT/$1.log"
}

tap_one() {	# tap_one FILE NUM STATUS NAME [DIRECTIVE]
	echo "${3} ${2} ${4}${5:+ # $5}" >>"$1"
}

hits() {	# hits HOOK: the hook's hit count in vmlat's status
	awk -v h="$1" '$1 == h { print $3 }' $STATUS 2>/dev/null
}

# 1. vmlat's own selftests (kselftest_harness TAP).
for t in "$SELFTESTS_BIN"/*_test "$SELFTESTS_BIN"/*_test.sh \
	"$SELFTESTS_BIN"/*_test.py; do
	[ -x "$t" ] || continue
	name=$(basename "$t"); name=${name%.sh}; name=${name%.py}
	wanted "$name" || continue
	case $name in lockdown_test|signed_test) continue ;; esac	# last, see below
	# The case studies only when named (make cases): too slow for CI.
	[ "$name" = cases_test ] && case " ${VMLAT_ONLY:-} " in
		*" cases_test "* | *" cases_test:"*) ;; *) continue ;; esac
	run_test "$name" "$t"
done

# 2. Upstream KVM selftests with vmlat loaded: they must still pass, and
#    vmlat must really have been watching (its kvm_exit count rose).
f=$OUT/kvm_selftests_with_vmlat.tap
n=0
if ! wanted kvm_selftests; then
	:
elif echo "TAP version 13" >"$f" && insmod "$VMLAT_KO"; then
	for t in $KVM_TESTS; do
		n=$((n + 1))
		echo "--- $t"
		t0_=$(date +%s)
		before=$(hits kvm:kvm_exit)
		run_logged "$OUT/$t.log" timeout -k 10 "$TEST_TIMEOUT" "$KVM_SELFTESTS/$t"
		rc=$?
		after=$(hits kvm:kvm_exit)
		if [ $rc -eq 4 ]; then
			tap_one "$f" $n ok "$t" "SKIP $(tail -n 1 "$OUT/$t.log")"
		elif [ $rc -ne 0 ]; then
			tap_one "$f" $n "not ok" "$t" "exit status $rc"
		elif [ -z "$before" ] || [ -z "$after" ] || [ "$after" -le "$before" ]; then
			tap_one "$f" $n "not ok" "$t" "vmlat saw no kvm_exit ($before -> $after)"
		else
			tap_one "$f" $n ok "$t"
		fi
		echo "took $(($(date +%s) - t0_)) s" >>"$OUT/$t.log"
	done
	cp $STATUS "$OUT/status_after_kvm_selftests.txt"
	rmmod vmlat || tap_one "$f" $((n + 1)) "not ok" "rmmod_vmlat"
else
	tap_one "$f" 1 "not ok" "insmod_vmlat"
fi

# 3. KUnit suites (debug kernel only: stock kernels have no KUnit).
if ! wanted kunit; then
	:
elif [ -d /sys/kernel/debug/kunit ] || grep -q '^CONFIG_KUNIT=y' \
	"/lib/modules/$(uname -r)/build/.config" 2>/dev/null; then
	echo "--- kunit"
	t0_=$(date +%s)
	if [ -f "$VMLAT_KUNIT_KO" ] && insmod "$VMLAT_KUNIT_KO"; then
		for d in /sys/kernel/debug/kunit/vmlat_*; do
			[ -f "$d/results" ] && cp "$d/results" "$OUT/kunit_$(basename "$d").ktap"
		done
		rmmod vmlat_kunit
	else
		echo "KTAP version 1" >"$OUT/kunit.ktap"
		echo "    not ok 1 insmod_vmlat_kunit" >>"$OUT/kunit.ktap"
	fi
	echo "took $(($(date +%s) - t0_)) s" >"$OUT/kunit.log"
fi

# 4. kmemleak: report what leaked during the run.
if [ -w $KMEMLEAK ]; then
	echo scan >$KMEMLEAK
	sleep 5
	echo scan >$KMEMLEAK
	cat $KMEMLEAK >"$OUT/kmemleak.txt"
fi

# lockdown_test raises the kernel's lockdown, which stays until reboot and
# refuses unsigned modules and most of debugfs (kmemleak too): last.
t=$SELFTESTS_BIN/lockdown_test.py
if [ -x "$t" ] && wanted lockdown_test; then
	run_test lockdown_test "$t"
fi

# signed_test: vmlat signed, refused unsigned, where the kernel enforces
# module signatures under lockdown. With $VMLAT_KO_SIGNED (the debug
# kernel, which trusts the test key) the test enforces both itself if the
# boot did not, and neither can be undone before a reboot: after all.
t=$SELFTESTS_BIN/signed_test.py
if [ -x "$t" ] && wanted signed_test; then
	if [ -n "${VMLAT_KO_SIGNED:-}" ]; then
		VMLAT_KO=$VMLAT_KO_SIGNED
		export VMLAT_ENFORCE_SIGNATURES=1
	fi
	run_test signed_test "$t"
fi
exit 0
