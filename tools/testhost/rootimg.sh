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
			[[ -f $f || -L $f ]] && printf '%s\n' "$f"
		done
}

# Copies $1 into the staging dir $2 at the same path; a symlink brings its
# target along (alternatives, merged /usr).
stage_path() {
	local f=$1 stage=$2 t
	[[ -e $stage$f || -L $stage$f ]] && return 0
	# from /: coreutils 9.1's --parents fails on absolute sources elsewhere
	(cd / && cp -a --parents "${f#/}" "$stage/")
	# every hop: /usr/bin/awk -> /etc/alternatives/awk -> /usr/bin/mawk
	if [[ -L $f ]]; then
		t=$(readlink "$f")
		[[ $t == /* ]] || t=${f%/*}/$t
		t=$(realpath -s "$t")
		[[ -e $t || -L $t ]] && stage_path "$t" "$stage"
	fi
	return 0
}

# Every shared library an ELF file in the staging dir needs.
library_closure() {
	local stage=$1
	find "$stage" -type f \( -perm -u+x -o -name '*.so*' \) -print0 |
		xargs -0 -r file -N --mime-type 2>/dev/null |
		awk -F': ' '$2 ~ /x-(pie-)?executable|x-sharedlib/ { print $1 }' |
		while read -r f; do
			# static ones (busybox) make ldd fail
			{ LC_ALL=C ldd "${f#"$stage"}" 2>/dev/null || true; } |
				awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
		done | sort -u
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
	while read -r f; do
		stage_path "$f" "$stage"
	done < <(package_files)
	while read -r f; do
		stage_path "$f" "$stage"
	done < <(library_closure "$stage")
	# alternatives (no package lists them) and a few files of /etc
	for f in /usr/bin/awk /etc/ld.so.cache /etc/passwd /etc/group \
		/etc/nsswitch.conf; do
		[[ -e $f ]] && stage_path "$f" "$stage"
	done
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
