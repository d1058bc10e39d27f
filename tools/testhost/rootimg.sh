#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rootimg.sh <image> <size_mib> <path>...
#
# Builds <image>: an ext2 file system holding what a test host with no
# shared root (bochs: no virtio, no 9p) runs on. It holds the files of the
# packages in ROOT_PACKAGES (a shell, busybox, kmod, coreutils, python3 and
# its standard library...), the shared libraries every program and Python
# extension among them links to, and each <path> (a file or directory of
# the build machine: the checkout's tools and test programs, the test
# kernel's modules, the output dir), all at the same absolute paths as on
# the build machine, so the job scripts of the QEMU test host run there
# unchanged. <size_mib>: free room for results on top of that.
#
# ext2, not ext4: with no journal, what the test host synced before it
# powered off is where debugfs (e2fsprogs) reads it back, without mounting
# (see boot.sh). Built as root from a staging dir with mke2fs -d: no loop
# device, no mount.

set -euo pipefail
shopt -s inherit_errexit
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# What the job scripts and the Python tests run, by package. Their
# alternatives (awk) and merged-/usr symlinks are followed when copied.
ROOT_PACKAGES=(bash dash busybox-static coreutils kmod mawk grep sed findutils
	procps util-linux gzip tar python3.11-minimal libpython3.11-minimal
	libpython3.11-stdlib python3-minimal python3 libc-bin)
# VMLAT_ROOT_QEMU=1: QEMU too, to run a Linux guest in the test host
# (its firmware: SeaBIOS; no NIC), cpio for its initramfs, json-c for
# the vmlat command run in it, cyclictest for the guest's own latency.
if [[ ${VMLAT_ROOT_QEMU:-} == 1 ]]; then
	ROOT_PACKAGES+=(qemu-system-x86 qemu-system-data seabios cpio
		libjson-c5 rt-tests)
fi

usage() {
	echo "usage: $0 <image> <size_mib> <path>..." >&2
	exit 2
}

# Prints the package files worth copying: no documentation, no manuals,
# no Python test suite.
package_files() {
	dpkg -L "${ROOT_PACKAGES[@]}" 2>/dev/null |
		grep -Ev '^/usr/share/(doc|man|info|locale|lintian|bug)/|/test/|/tests/|/idlelib/|/tkinter/|/ensurepip/|/lib2to3/' |
		while read -r f; do
			# (an if: a package listing a directory last, as
			# rt-tests does, must not fail the pipeline)
			if [[ -f $f || -L $f ]]; then
				printf '%s\n' "$f"
			fi
		done
}

# The absolute paths read, each followed by every hop of its target if it
# is a symlink (alternatives, merged /usr: /usr/bin/awk ->
# /etc/alternatives/awk -> /usr/bin/mawk).
with_link_targets() {
	local f t
	while read -r f; do
		printf '%s\n' "$f"
		while [[ -L $f ]]; do
			t=$(readlink "$f")
			[[ $t == /* ]] || t=${f%/*}/$t
			t=$(realpath -s "$t")
			[[ -e $t || -L $t ]] || break
			printf '%s\n' "$t"
			f=$t
		done
	done
}

# Copies the absolute paths read (files and symlinks, with their
# targets) into the staging dir $1 at the same paths, in one tar pass: a
# cp per file took a minute and a half for the packages' 1000 files.
stage_paths() {
	local stage=$1
	with_link_targets | sed 's|^/||' | sort -u |
		tar -C / --no-recursion -cf - -T - | tar -C "$stage" -xf -
}

# Every shared library an ELF file in the staging dir needs: one ldd for
# them all (one per file took 48 s), its "FILE:" lines skipped.
library_closure() {
	local stage=$1
	find "$stage" -type f \( -perm -u+x -o -name '*.so*' \) -print0 |
		xargs -0 -r file -N --mime-type 2>/dev/null |
		awk -F': ' '$2 ~ /x-(pie-)?executable|x-sharedlib/ { print $1 }' |
		sed "s|^$stage||" |
		# static ones (busybox) make ldd fail, after the others
		{ LC_ALL=C xargs -r -d '\n' ldd 2>/dev/null || true; } |
		awk '/:$/ { next }
		     $2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		sort -u
}

main() {
	local img size stage f used_kib
	[[ $# -ge 2 ]] || usage
	img=$1 size=$2
	shift 2
	[[ $size =~ ^[0-9]+$ ]] || usage
	need_cmd dpkg mke2fs file ldd
	stage=$(mktemp -d)
	# shellcheck disable=SC2064 # expand now: $stage is local
	trap "rm -rf '$stage'" EXIT
	# merged /usr: /bin -> usr/bin and so on, with their targets
	for f in bin sbin lib lib64; do
		if [[ -L /$f ]]; then
			mkdir -p "$stage/$(readlink "/$f")"
			cp -a "/$f" "$stage/"
		fi
	done
	package_files | stage_paths "$stage"
	library_closure "$stage" | stage_paths "$stage"
	# alternatives (no package lists them) and a few files of /etc
	for f in /usr/bin/awk /etc/ld.so.cache /etc/passwd /etc/group \
		/etc/nsswitch.conf; do
		[[ -e $f ]] && printf '%s\n' "$f"
	done | stage_paths "$stage"
	for f in "$@"; do
		[[ -e $f ]] || die "no such path: $f"
		mkdir -p "$stage$(dirname "$f")"
		cp -a "$f" "$stage$(dirname "$f")/"
	done
	mkdir -p "$stage"/{proc,sys,dev,tmp,root,run,var/tmp}
	chmod 1777 "$stage/tmp" "$stage/var/tmp"
	used_kib=$(du -sk "$stage" | cut -f1)
	rm -f "$img"
	mke2fs -q -t ext2 -F -d "$stage" -L vmlat-root "$img" \
		"$((used_kib * 5 / 4 / 1024 + size + 64))M"
	rm -rf "$stage"
	trap - EXIT
	log "$img: $((used_kib / 1024)) MiB of files, $size MiB free"
}

main "$@"
