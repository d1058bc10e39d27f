#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vmlat installed the way a KVM host installs out-of-tree modules: the
# vmlat-dkms package (make deb) with dpkg and Debian's dkms, in the test
# host, whose root is an overlay: what dpkg and dkms write goes away with
# it.
#  - dpkg -i builds and installs vmlat for the running kernel (DKMS'
#    common.postinst), dkms status says installed;
#  - the installed vmlat.ko is DKMS' build, signed with DKMS' own MOK key
#    (what Secure Boot hosts enroll with mokutil), not the test's;
#  - modprobe vmlat loads it and it sees a guest's exits (kvm_exit hits
#    grow by at least the 4 x 50 exits of ./scenario exits 50);
#  - dpkg -r removes it: no vmlat module under /lib/modules, no source in
#    /usr/src, nothing in dkms status, modprobe finds nothing.
# Needs root, dkms (on the shared root), $VMLAT_DEB (the package) and
# $VMLAT_HEADERS (the running kernel's unpacked headers, which the test
# host's /lib/modules/<release>/build is pointed at). TAP; exit 4 = skip.
#
# With $VMLAT_DKMS_STATE (tools/testhost/dkms-sandbox.sh's output dir),
# dpkg -i ran natively, for this kernel, in an overlay of the same root
# (DKMS' compile takes 8 minutes under TCG, 1 natively): its status and
# output are there, and what it changed (state/, deleted) is laid over
# the test host's root here, as if it had run in the test host. The rest
# runs as without.
set -u

STATUS=/sys/kernel/debug/vmlat/status
HERE=$(cd "$(dirname "$0")" && pwd)
REL=$(uname -r)

skip() { echo "1..0 # SKIP $*"; exit 4; }

[ -f "${VMLAT_DEB:-}" ] || skip "VMLAT_DEB not set"
[ -n "${VMLAT_HEADERS:-}" ] || skip "no headers given (VMLAT_HEADERS): selftests/run gives them on the kernels of VMLAT_DKMS_ON (6.12)"
[ -f "$VMLAT_HEADERS/Makefile" ] || skip "no unpacked headers in $VMLAT_HEADERS"
command -v dkms >/dev/null || skip "dkms not installed"
lsmod | grep -q '^vmlat ' && skip "vmlat already loaded"
dpkg -s vmlat-dkms >/dev/null 2>&1 && skip "vmlat-dkms already installed"

n=0 fail=0
result() {	# result OK NAME [WHY]
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n $2${3:+ # $3}"
	else
		echo "not ok $n $2${3:+ # $3}"
		fail=$((fail + 1))
	fi
}

hits() {
	awk -v h="$1" '$1 == h { print $3 }' $STATUS 2>/dev/null
}

echo "TAP version 13"
echo "1..9"
# The image package's build link points at /usr/src, where the headers
# would be installed; here they are unpacked in the cache.
ln -sfn "$VMLAT_HEADERS" "/lib/modules/$REL/build"

log=${VMLAT_OUT:-/tmp}/dkms_test_dpkg.log
t0=$(date +%s)
if [ -n "${VMLAT_DKMS_STATE:-}" ]; then
	st=$VMLAT_DKMS_STATE
	rc=$(cat "$st/dpkg.rc" 2>/dev/null || echo "none")
	cp "$st/dpkg.log" "$log" 2>/dev/null
	# What dpkg -i changed, over this root: files, links and dirs, then
	# what it deleted.
	if [ -d "$st/state" ] && (cd "$st/state" && tar -cf - .) | tar -C / -xf - &&
		(cd / && xargs -r rm -rf <"$st/deleted"); then
		where="natively (dkms-sandbox.sh), laid over this root"
	else
		rc="$rc, laying $st/state over / failed"
		where="natively"
	fi
	ln -sfn "$VMLAT_HEADERS" "/lib/modules/$REL/build"
else
	dpkg -i "$VMLAT_DEB" >"$log" 2>&1
	rc=$?
	where="in $(($(date +%s) - t0)) s"
fi
result "$([ "$rc" = 0 ] && echo 1 || echo 0)" dpkg_install "exit status $rc $where; see $log"

st=$(dkms status vmlat 2>&1)
case $st in *"$REL"*installed*) ok=1 ;; *) ok=0 ;; esac
result $ok dkms_status_installed "$st"

ko=$(modinfo -n vmlat 2>/dev/null)
case $ko in "/lib/modules/$REL/updates/dkms/vmlat.ko"*) ok=1 ;; *) ok=0 ;; esac
result $ok installed_for_running_kernel "modinfo -n: $ko"

signer=$(modinfo -F signer vmlat 2>/dev/null)
case $signer in *DKMS*) ok=1 ;; *) ok=0 ;; esac
result $ok signed_by_dkms_key "signer: $signer"

ok=0 why=
if modprobe vmlat && [ -f $STATUS ]; then
	before=$(hits kvm:kvm_exit)
	if (cd "$HERE" && ./scenario exits 50 >/dev/null 2>&1); then
		after=$(hits kvm:kvm_exit)
		why="kvm_exit hits $before -> $after"
		[ -n "$before" ] && [ -n "$after" ] &&
			[ $((after - before)) -ge 200 ] && ok=1
	else
		why="scenario exits 50 failed"
	fi
else
	why="modprobe vmlat failed"
fi
result $ok modprobe_sees_exits "$why"
rmmod vmlat 2>/dev/null

dpkg -r vmlat-dkms >>"$log" 2>&1
rc=$?
result $((rc == 0)) dpkg_remove "exit status $rc"

left=$(find /lib/modules/"$REL" /usr/src -maxdepth 4 -name 'vmlat*' 2>/dev/null |
	tr '\n' ' ')
result "$([ -z "$left" ] && echo 1 || echo 0)" no_files_left "$left"

st=$(dkms status vmlat 2>&1)
result "$([ -z "$st" ] && echo 1 || echo 0)" dkms_status_empty "$st"

modprobe -n vmlat >/dev/null 2>&1
rc=$?
result $((rc != 0)) modprobe_finds_nothing "modprobe -n vmlat: $rc"

[ $fail -eq 0 ]
