#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms-sandbox.sh <kernel-dir> <outdir> <package.deb>...
#
# Installs packages with one dpkg -i, a DKMS package among them, as a host
# whose only kernel is <kernel-dir>'s (kernel.sh) would: the DKMS
# package's postinst has Debian's dkms build, sign and install the modules
# for that kernel. It runs natively, not in
# an emulated test host, where DKMS' compile took 8 of make check's
# minutes: in a private mount namespace, chrooted into an overlay of this
# machine's root whose upper layer (on a tmpfs) takes every change. This
# machine's files are never written. The upper layer is then copied to
# <outdir>/state (what dpkg and dkms changed, to be laid over a test
# host's root: dkms_test.sh), and dpkg's output and exit status to
# <outdir>/dpkg.log and <outdir>/dpkg.rc. Deletions (overlayfs whiteouts)
# are listed in <outdir>/deleted.
#
# Exit status: 0 if the sandbox ran (whatever dpkg's status), 1 if it
# could not be set up, 2 for bad arguments.
set -euo pipefail
shopt -s inherit_errexit
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -ge 3 ]] || { echo "usage: $0 <kernel-dir> <outdir> <package.deb>..." >&2; exit 2; }
kd=$(realpath "$1")
out=$2
shift 2
debs=()
for d in "$@"; do
	[[ -f $d ]] || die "no package $d"
	debs+=("$(realpath "$d")")
done
[[ -f $kd/release && -f $kd/kdir ]] || die "no kernel dir $kd"
need_cmd unshare chroot dpkg dkms
release=$(<"$kd/release")
headers=$(<"$kd/kdir")
rm -rf "$out"
mkdir -p "$out"
out=$(realpath "$out")
log "dpkg -i ${debs[*]##*/} for $release (natively, in an overlay of /)"

# In the namespace: the overlay's upper layer must not lie inside its
# lower one (/), so it is on a tmpfs of its own; copied out at the end.
unshare --mount --propagation private -- bash -euo pipefail -c '
	release=$1 headers=$2 out=$3 kd=$4
	shift 4
	t=$(mktemp -d)
	mount -t tmpfs -o size=2g,mode=0755 vmlat-dkms "$t"
	mkdir "$t/upper" "$t/work" "$t/root" "$t/mods" "$t/mods-work"
	mount -t overlay overlay \
		-o "lowerdir=/,upperdir=$t/upper,workdir=$t/work" "$t/root"
	for d in proc sys dev dev/pts run tmp; do
		[ -d "/$d" ] && mount --rbind "/$d" "$t/root/$d"
	done
	# The kernel'"'"'s modules where a host has them (as in a test host),
	# their own overlay taking what DKMS and depmod add.
	m=$t/root/lib/modules/$release
	mkdir -p "$m"
	mount -t overlay overlay -o "lowerdir=$kd/lib/modules/$release,upperdir=$t/mods,workdir=$t/mods-work" "$m"
	ln -sfn "$headers" "$m/build"
	rc=0
	DEBIAN_FRONTEND=noninteractive chroot "$t/root" dpkg -i "$@" \
		>"$out/dpkg.log" 2>&1 || rc=$?
	echo "$rc" >"$out/dpkg.rc"
	umount "$m"
	for d in tmp run dev/pts dev sys proc; do
		umount -l "$t/root/$d" 2>/dev/null || true
	done
	umount "$t/root"
	# The link is the test host'"'"'s to make (at the headers'"'"' path there).
	rm -f "$t/mods/build"
	rel=$(realpath -m --relative-to=/ "/lib/modules/$release")
	rm -rf "$t/upper/$rel"
	mkdir -p "$t/upper/$rel"
	cp -a "$t/mods/." "$t/upper/$rel/"
	(cd "$t/upper" && find . -type c -printf "%P\n") >"$out/deleted"
	mkdir "$out/state"
	(cd "$t/upper" && find . ! -type c ! -name . -printf "%P\n" |
		tar --no-recursion -cf - -T -) | tar -C "$out/state" -xf -
	umount "$t"
	rmdir "$t"
' sandbox "$release" "$headers" "$out" "$kd" "${debs[@]}"
log "dpkg exited with $(<"$out/dpkg.rc"); $(find "$out/state" -type f | wc -l) files changed, $(wc -l <"$out/deleted") deleted"
