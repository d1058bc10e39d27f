#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# initramfs.sh [-f] <kernel-dir>
#
# Builds <kernel-dir>/initrd.gz: a static busybox, the stage-1 /init and the
# modules the kernel needs to reach its root file system (the build machine's
# root shared over virtio-9p, under an overlay). Everything else the test
# host uses comes from that shared root, so this stays tiny.
#
# The module list is resolved with modprobe against the kernel's own
# modules.dep, not hard-coded: names and dependencies differ between 6.1 and
# 6.12, and the debug kernel has them all built in (then the list is empty).
# Rebuilt only when an input changes (key in <kernel-dir>/initrd.key); -f
# forces a rebuild.

set -euo pipefail
# set -e also inside $(...): a failing step there must not go unnoticed.
shopt -s inherit_errexit
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# What the stage-1 init mounts; modprobe adds their dependencies in order.
# QEMU: the build machine's root over virtio-9p, under an overlay.
ROOT_MODULES=(virtio_pci 9pnet_virtio 9p overlay)
# bochs: a root image on its emulated PIIX IDE disk (ext2, served by ext4).
DISK_MODULES=(ata_piix sd_mod ext4)
BUSYBOX=${BUSYBOX:-/bin/busybox}

usage() {
	echo "usage: $0 [-f] <kernel-dir>" >&2
	exit 2
}

# Prints module files (absolute paths) in a valid load order. Each
# --show-depends list is already ordered dependencies-first; keeping only
# the first occurrence of a module preserves that order across the lists.
module_files() {
	local kdir=$1 release=$2 m out
	shift 2
	for m in "$@"; do
		# -C /dev/null: the build machine's modprobe.d must not leak in.
		if ! out=$(modprobe -C /dev/null -d "$kdir" -S "$release" \
			--show-depends "$m" 2>&1); then
			log "note: no module $m for $release, assuming it is built in"
			continue
		fi
		awk '$1 == "insmod" { print $2 }' <<<"$out"
	done | awk '!seen[$0]++'
}

# busybox's insmod cannot read compressed modules: store them plain.
copy_module() {
	local src=$1 dst=$2
	case $src in
	*.ko.xz) xz -dc "$src" >"$dst" ;;
	*.ko.zst) zstd -qdc "$src" >"$dst" ;;
	*.ko.gz) gzip -dc "$src" >"$dst" ;;
	*.ko) cp "$src" "$dst" ;;
	*) die "unknown module file type: $src" ;;
	esac
}

check_busybox() {
	[[ -x $BUSYBOX ]] || die "$BUSYBOX missing (install busybox-static)"
	# A dynamically linked busybox (package "busybox") cannot run in the
	# initramfs, which has no libc.
	local ldd_out
	ldd_out=$(LC_ALL=C ldd "$BUSYBOX" 2>&1 || true)
	[[ $ldd_out == *'not a dynamic'* ]] ||
		die "$BUSYBOX is not static (install busybox-static)"
}

# Key over every input, so that a change of init, of this script, of
# busybox or of a module rebuilds the image. Paths are made relative to the
# kernel dir so that moving the cache does not matter.
initrd_key() {
	local kdir=$1 release=$2
	shift 2
	{
		printf 'release %s\n' "$release"
		sha256sum "$TESTHOST_DIR/init" "${BASH_SOURCE[0]}" "$BUSYBOX" |
			cut -d' ' -f1
		local f
		for f in "$@"; do
			printf '%s %s\n' "$(sha256sum <"$f" | cut -d' ' -f1)" "${f#"$kdir"/}"
		done
	} | sha256sum | cut -d' ' -f1
}

build_image() {
	local kdir=$1 out=$2 stage f name
	shift 2
	stage=$(mktemp -d)
	# shellcheck disable=SC2064 # expand now: $stage is local
	trap "rm -rf '$stage'" EXIT
	mkdir -p "$stage"/{bin,dev,proc,sys,lower,rw,newroot,lib/modules}
	cp "$BUSYBOX" "$stage/bin/busybox"
	install -m 755 "$TESTHOST_DIR/init" "$stage/init"
	# The kernel opens /dev/console for init before anything is mounted.
	mknod -m 600 "$stage/dev/console" c 5 1 || die "mknod failed (run as root)"
	mknod -m 666 "$stage/dev/null" c 1 3
	# "$@": the 9p root's modules, "--", the disk root's
	local list=$stage/modules.list
	: >"$stage/modules.list"
	: >"$stage/modules-disk.list"
	for f in "$@"; do
		if [[ $f == -- ]]; then
			list=$stage/modules-disk.list
			continue
		fi
		name=$(basename "$f")
		name=${name%.xz}
		name=${name%.zst}
		name=${name%.gz}
		[[ -f $stage/lib/modules/$name ]] ||
			copy_module "$f" "$stage/lib/modules/$name"
		printf '%s\n' "$name" >>"$list"
	done
	# Fixed timestamps: the same inputs give the same image.
	find "$stage" -exec touch -h -d @0 {} +
	(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
		cpio --null --create --format=newc --reproducible --owner=0:0 --quiet) |
		gzip -9 -n >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$stage"
	trap - EXIT
}

main() {
	local force=0 kdir release key mods dmods
	if [[ ${1-} == -f ]]; then
		force=1
		shift
	fi
	[[ $# -eq 1 ]] || usage
	kdir=$(realpath "$1")
	[[ -f $kdir/release ]] || die "$kdir is not a kernel dir (no release file)"
	release=$(<"$kdir/release")
	need_cmd modprobe cpio gzip xz ldd
	check_busybox

	mapfile -t mods < <(module_files "$kdir" "$release" "${ROOT_MODULES[@]}")
	mapfile -t dmods < <(module_files "$kdir" "$release" "${DISK_MODULES[@]}")
	key=$(initrd_key "$kdir" "$release" "${mods[@]}" "${dmods[@]}")
	if ((!force)) && [[ -f $kdir/initrd.gz && -f $kdir/initrd.key &&
		$(<"$kdir/initrd.key") == "$key" ]]; then
		log "reusing $kdir/initrd.gz"
		return 0
	fi
	log "building $kdir/initrd.gz; modules: ${mods[*]##*/}; disk root: ${dmods[*]##*/}"
	build_image "$kdir" "$kdir/initrd.gz" "${mods[@]}" -- "${dmods[@]}"
	printf '%s\n' "$key" >"$kdir/initrd.key"
}

main "$@"
