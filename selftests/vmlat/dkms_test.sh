#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vmlat installed the way a KVM host installs it: its two packages (make
# deb), vmlat-dkms and vmlat, with dpkg and Debian's dkms, in the test
# host, whose root is an overlay: what dpkg and dkms write goes away with
# it.
#  - dpkg -i of both builds and installs vmlat for the running kernel
#    (DKMS' common.postinst, from dh_dkms), dkms status says installed;
#  - the installed vmlat.ko is DKMS' build, signed with DKMS' own MOK key
#    (what Secure Boot hosts enroll with mokutil), not the test's;
#  - the command: /usr/sbin/vmlat of the module's version, man -w finds
#    vmlat(8) and vmlat(4), the bash completion is in place;
#  - modprobe vmlat loads it and it sees a guest's exits (kvm_exit hits
#    grow by at least the 4 x 50 exits of ./scenario exits 50), and the
#    installed command's report, on the live module, exits 0 and names
#    the scenario's VM (its process name, from the scenario's output);
#  - dpkg -r vmlat vmlat-dkms removes it all: no file the packages listed,
#    no vmlat module under /lib/modules, no source in /usr/src, nothing
#    in dkms status, modprobe finds nothing.
# Needs root, dkms (on the shared root), $VMLAT_DEBS (the two packages'
# paths, vmlat-dkms's first) and $VMLAT_HEADERS (the running kernel's
# unpacked headers, which the test host's /lib/modules/<release>/build is
# pointed at). TAP; exit 4 = skip.
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
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$HERE/tap.sh"
REL=$(uname -r)

# $VMLAT_DEBS: word-split on purpose (paths of build/, without spaces).
debs=
for d in ${VMLAT_DEBS:-}; do
	[ -f "$d" ] || skip "no package $d (VMLAT_DEBS)"
	debs="$debs $d"
done
case $debs in
*/vmlat-dkms_*.deb*/vmlat_*.deb*) ;;
*) skip "VMLAT_DEBS does not name vmlat-dkms's and vmlat's packages (make deb): '${VMLAT_DEBS:-}'" ;;
esac
[ -n "${VMLAT_HEADERS:-}" ] || skip "no headers given (VMLAT_HEADERS): selftests/run gives them on the kernels of VMLAT_DKMS_ON (6.12)"
[ -f "$VMLAT_HEADERS/Makefile" ] || skip "no unpacked headers in $VMLAT_HEADERS"
command -v dkms >/dev/null || skip "dkms not installed"
command -v man >/dev/null || skip "man not installed (man-db)"
lsmod | grep -q '^vmlat ' && skip "vmlat already loaded"
for p in vmlat-dkms vmlat; do
	dpkg -s $p >/dev/null 2>&1 && skip "$p already installed"
done


hits() {
	awk -v h="$1" '$1 == h { print $3 }' $STATUS 2>/dev/null
}

echo "TAP version 13"
echo "1..14"
# The image package's build link points at /usr/src, where the headers
# would be installed; here they are unpacked in the cache.
ln -sfn "$VMLAT_HEADERS" "/lib/modules/$REL/build"

out=${VMLAT_OUT:-/tmp}
log=$out/dkms_test_dpkg.log
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
	# shellcheck disable=SC2086 # the packages' paths
	dpkg -i $debs >"$log" 2>&1
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

# DKMS signs with the kernel's own sign-file: Debian 11's (5.10) needs
# OpenSSL 1.1, which a Debian 11 host has and this root (Debian 12) has
# not.
sf=/lib/modules/$REL/build/scripts/sign-file
lib=$(ldd "$sf" 2>/dev/null | awk '/not found/ { print $1; exit }')
signer=$(modinfo -F signer vmlat 2>/dev/null)
case $signer in *DKMS*) ok=1 ;; *) ok=0 ;; esac
if [ $ok = 0 ] && [ -n "$lib" ]; then
	skipped signed_by_dkms_key "this root cannot run $REL's sign-file ($lib not found; a host of its own distribution has it): unsigned"
else
	result $ok signed_by_dkms_key "signer: $signer"
fi

# The command: the vmlat package's, of the module's version.
cmd=/usr/sbin/vmlat
owner=$(dpkg -S $cmd 2>/dev/null)
cv=$($cmd --version 2>&1 | head -n 1)
mv=$(modinfo -F version vmlat 2>/dev/null)
ok=0
[ "$owner" = "vmlat: $cmd" ] && [ -n "$mv" ] &&
	[ "${cv#vmlat "$mv" }" != "$cv" ] && ok=1
result $ok command_of_module_version "dpkg -S: $owner; --version: $cv; module: $mv"

page=$(man -w vmlat 2>&1)
result "$([ "$page" = /usr/share/man/man8/vmlat.8.gz ] && echo 1 || echo 0)" \
	man_page_vmlat_8 "man -w vmlat: $page"
page=$(man -w 4 vmlat 2>&1)
result "$([ "$page" = /usr/share/man/man4/vmlat.4.gz ] && echo 1 || echo 0)" \
	man_page_vmlat_4 "man -w 4 vmlat: $page"

comp=/usr/share/bash-completion/completions/vmlat
owner=$(dpkg -S $comp 2>/dev/null)
result "$([ -s $comp ] && [ "$owner" = "vmlat: $comp" ] && echo 1 || echo 0)" \
	bash_completion_installed "dpkg -S: $owner"

ok=0 why='' vm=''
scen=$out/dkms_test_scenario.out
if modprobe vmlat && [ -f $STATUS ]; then
	before=$(hits kvm:kvm_exit)
	if (cd "$HERE" && ./scenario exits 50 >"$scen" 2>&1); then
		after=$(hits kvm:kvm_exit)
		why="kvm_exit hits $before -> $after"
		[ -n "$before" ] && [ -n "$after" ] &&
			[ $((after - before)) -ge 200 ] && ok=1
		vm=$(sed -n 's/^vcpu .* vm_comm=\([^ ]*\) .*/\1/p' "$scen" | head -n 1)
	else
		why="scenario exits 50 failed, see $scen"
	fi
else
	why="modprobe vmlat failed"
fi
result $ok modprobe_sees_exits "$why"

# The installed command on the live module: the scenario's VM (exited,
# kept for display) is in its report, by its process name.
rep=$out/dkms_test_report.txt
ok=0
$cmd report >"$rep" 2>&1
rc=$?
why="exit status $rc, VM '$vm', see $rep"
[ $rc -eq 0 ] && [ -n "$vm" ] && grep -qF -- "$vm" "$rep" && ok=1
result $ok installed_command_reports_the_vm "$why"
rmmod vmlat 2>/dev/null

# What the packages installed, to be gone after dpkg -r.
listed=$out/dkms_test_files.txt
dpkg -L vmlat-dkms vmlat >"$listed" 2>/dev/null
dpkg -r vmlat vmlat-dkms >>"$log" 2>&1
rc=$?
result $((rc == 0)) dpkg_remove "exit status $rc"

# Files and links the packages listed; their own directories (a name
# with vmlat in it); what DKMS built and kept.
left=$(
	while IFS= read -r f; do
		if [ -d "$f" ] && [ ! -L "$f" ]; then
			case ${f##*/} in *vmlat*) echo "$f" ;; esac
		elif [ -e "$f" ] || [ -L "$f" ]; then
			echo "$f"
		fi
	done <"$listed"
	find /lib/modules/"$REL" /usr/src /var/lib/dkms -maxdepth 4 \
		-name 'vmlat*' 2>/dev/null
)
nlisted=$(grep -c . "$listed")
[ -z "$left" ] && [ "$nlisted" -gt 0 ] && ok=1 || ok=0
result $ok no_files_left "of $nlisted paths the packages listed; left: $(echo "${left:-none}" | tr '\n' ' ')"

st=$(dkms status vmlat 2>&1)
result "$([ -z "$st" ] && echo 1 || echo 0)" dkms_status_empty "$st"

modprobe -n vmlat >/dev/null 2>&1
rc=$?
result $((rc != 0)) modprobe_finds_nothing "modprobe -n vmlat: $rc"

[ $fail -eq 0 ]
