#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel.sh prepare <6.1|6.12|debug>
#
# Makes sure a "kernel dir" (see CONTRACT.md) exists for the given kernel id
# and prints its absolute path as the last line of stdout. Progress goes to
# stderr. Stock kernels come from Debian's unsigned image package, unpacked
# into the cache (never installed); the debug kernel is built by
# debug-kernel.sh. Idempotent: a complete, up-to-date dir is reused as is.

set -euo pipefail
# set -e also inside $(...): a failing step there must not go unnoticed.
shopt -s inherit_errexit
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KERNELS_DIR=$VMLAT_CACHE/kernels
DEBS_DIR=$VMLAT_CACHE/debs

usage() {
	echo "usage: $0 prepare <6.1|6.12|debug>" >&2
	exit 2
}

# The ABI ("6.1.0-56") is what the metapackage currently depends on. It
# changes with every Debian security update, so it is never hard-coded.
abi_from_metapackage() {
	apt-cache depends "$1" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-.*-amd64$/ {
			sub(/^linux-image-/, "", $2); sub(/-amd64$/, "", $2)
			print $2; found = 1; exit
		} END { exit !found }'
}

candidate_version() {
	apt-cache policy "$1" 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { print $2; found = 1 }
		     END { exit !found }'
}

image_pkg() {
	printf 'linux-image-%s-amd64-unsigned\n' "$1"
}

# The cache keeps the .deb so that a re-unpack needs no network.
deb_path() {
	printf '%s/%s_%s.deb\n' "$DEBS_DIR" "$1" "$2"
}

# Returns non-zero instead of dying, so that the caller can refresh stale
# apt lists and retry: once Debian ships a security update, the mirror no
# longer has the version that old lists name.
download_deb() {
	local pkg=$1 version=$2 tmp ok=0
	mkdir -p "$DEBS_DIR"
	tmp=$(mktemp -d "$DEBS_DIR/.dl.XXXXXX")
	# apt drops privileges to _apt for downloads; let it write here.
	chown _apt: "$tmp" 2>/dev/null || true
	log "downloading $pkg=$version"
	if (cd "$tmp" && apt-get download "$pkg=$version") >&2 &&
		mv "$tmp"/*.deb "$(deb_path "$pkg" "$version")"; then
		ok=1
	fi
	rm -rf "$tmp"
	((ok))
}

# What a complete stock kernel dir's .complete holds.
stock_key() {
	printf '%s %s, headers unpacked\n' "$(image_pkg "$1")" "$2"
}

# True if the image package is already unpacked or its .deb is at hand
# (downloading it if needed).
image_at_hand() {
	local abi=$1 version=$2 pkg marker
	pkg=$(image_pkg "$abi")
	marker=$KERNELS_DIR/$abi/.complete
	[[ -f $marker && $(<"$marker") == "$(stock_key "$abi" "$version")" ]] && return 0
	[[ -s $(deb_path "$pkg" "$version") ]] && return 0
	download_deb "$pkg" "$version"
}

# Prints "<abi> <version>" of the image the metapackage $1 currently means,
# with that image at hand. apt-get update runs only if the local lists
# cannot give it (no lists yet, or stale ones).
resolve_image() {
	local meta=$1 attempt abi version
	for attempt in 1 2; do
		if abi=$(abi_from_metapackage "$meta") &&
			version=$(candidate_version "$(image_pkg "$abi")") &&
			image_at_hand "$abi" "$version"; then
			printf '%s %s\n' "$abi" "$version"
			return 0
		fi
		((attempt == 1)) || break
		log "cannot get the image of $meta from the apt lists; running apt-get update"
		apt-get update >&2
	done
	die "cannot get the kernel image of $meta"
}

# The package holds exactly one lib/modules/<release>: that name is the
# kernel's `uname -r`, whatever the package naming scheme.
release_of_tree() {
	local dirs=("$1"/lib/modules/*/)
	[[ ${#dirs[@]} -eq 1 && -d ${dirs[0]} ]] ||
		die "expected one lib/modules/<release> in $1"
	basename "${dirs[0]}"
}

# The packages external modules are built against: linux-headers-<release>
# and what it depends on of its own kind (-common, linux-kbuild-*).
headers_pkgs() {
	local top=linux-headers-$1
	printf '%s\n' "$top"
	apt-cache depends "$top" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-(headers|kbuild)-/ { print $2 }'
}

# Downloads (into the cache) and unpacks the headers packages of $release
# into $root, then points the arch Makefile's absolute include of the
# -common tree at $final (where $root ends up). Never installed: the
# linux-headers package depends on the kernel image, and installing that
# would put a kernel, initramfs hooks and their dependencies on this
# machine. The packages' own symlinks (scripts, tools) are relative.
unpack_headers() {
	local release=$1 root=$2 final=$3 attempt pkg version pkgs mk deb
	local -a debs
	for attempt in 1 2; do
		debs=()
		pkgs=$(headers_pkgs "$release")
		if [[ $(wc -l <<<"$pkgs") -ge 3 ]]; then
			for pkg in $pkgs; do
				version=$(candidate_version "$pkg") || break
				deb=$(deb_path "$pkg" "$version")
				[[ -s $deb ]] || download_deb "$pkg" "$version" || break
				debs+=("$deb")
			done
		fi
		[[ ${#debs[@]} -ge 3 && ${#debs[@]} -eq $(wc -l <<<"$pkgs") ]] && break
		((attempt == 1)) || die "cannot get the headers packages of $release"
		log "cannot get the headers of $release from the apt lists; running apt-get update"
		apt-get update >&2
	done
	mkdir -p "$root"
	for deb in "${debs[@]}"; do
		dpkg-deb -x "$deb" "$root"
	done
	mk=$root/usr/src/linux-headers-$release/Makefile
	[[ -f $mk ]] || die "no usr/src/linux-headers-$release/Makefile in the headers packages"
	sed -i "s|^include /usr/src/|include $final/usr/src/|" "$mk"
}

# Unpacks the image package, and the headers packages under headers/, into
# $dir (atomically: a half-written dir is never left under the final name).
unpack_stock() {
	local abi=$1 version=$2 dir=$3 pkg key deb tmp release
	pkg=$(image_pkg "$abi")
	key=$(stock_key "$abi" "$version")
	if [[ -f $dir/.complete && $(<"$dir/.complete") == "$key" ]]; then
		log "reusing $dir ($key)"
		return 0
	fi
	deb=$(deb_path "$pkg" "$version")
	tmp=$(mktemp -d "$KERNELS_DIR/.$abi.XXXXXX")
	chmod 755 "$tmp"
	log "unpacking $(basename "$deb")"
	dpkg-deb -x "$deb" "$tmp"
	release=$(release_of_tree "$tmp")
	[[ -f $tmp/boot/vmlinuz-$release ]] || die "no boot/vmlinuz-$release in $deb"
	ln -s "boot/vmlinuz-$release" "$tmp/vmlinuz"
	printf '%s\n' "$release" >"$tmp/release"
	unpack_headers "$release" "$tmp/headers" "$dir/headers"
	printf '%s\n' "$dir/headers/usr/src/linux-headers-$release" >"$tmp/kdir"
	# The package ships no modules.dep; modprobe (stage 1 list, and
	# `modprobe kvm_amd` inside the test host) needs it.
	depmod -b "$tmp" "$release"
	printf '%s\n' "$key" >"$tmp/.complete"
	rm -rf "$dir"
	mv "$tmp" "$dir"
}

prepare_stock_locked() {
	local abi=$1 version=$2 dir=$3
	unpack_stock "$abi" "$version" "$dir"
	"$TESTHOST_DIR/initramfs.sh" "$dir" >&2
}

prepare_stock() {
	local meta=$1 image abi version dir
	need_cmd apt-get apt-cache dpkg-deb depmod flock
	mkdir -p "$KERNELS_DIR"
	image=$(resolve_image "$meta")
	read -r abi version <<<"$image"
	dir=$KERNELS_DIR/$abi
	with_lock "$KERNELS_DIR/.$abi.lock" prepare_stock_locked "$abi" "$version" "$dir"
	printf '%s\n' "$dir"
}

# Kernel arguments the debug kernel needs in the test host, read by boot.sh
# from <kernel-dir>/cmdline. acpi=noirq: under TCG, KASAN + lockdep make
# the ACPI interpreter so slow that QEMU's _PRT method (a While loop) hits
# the 30 s AML loop timeout; the virtio-pci devices then get no INTx line
# and the 9p root mount hangs forever. The MP-table/$PIR routing the
# firmware also provides works.
DEBUG_CMDLINE="acpi=noirq"

prepare_debug_locked() {
	local dir=$1 release
	release=$(<"$dir/release")
	if [[ ! -f $dir/lib/modules/$release/modules.dep ]]; then
		depmod -b "$dir" "$release"
	fi
	printf '%s\n' "$DEBUG_CMDLINE" >"$dir/cmdline"
	"$TESTHOST_DIR/initramfs.sh" "$dir" >&2
}

prepare_debug() {
	local script=$TESTHOST_DIR/debug-kernel.sh out dir
	[[ -f $script ]] || die "$script is missing"
	out=$(bash "$script") || die "debug-kernel.sh failed"
	dir=$(tail -n1 <<<"$out")
	# Pass on its other output as progress.
	sed '$d' <<<"$out" >&2
	[[ $dir == /* && -f $dir/vmlinuz && -f $dir/release ]] ||
		die "debug-kernel.sh did not print a kernel dir (got '$dir')"
	with_lock "$dir/.initrd.lock" prepare_debug_locked "$dir"
	printf '%s\n' "$dir"
}

main() {
	[[ $# -eq 2 && $1 == prepare ]] || usage
	case $2 in
	6.1) prepare_stock linux-image-amd64 ;;
	6.12) prepare_stock linux-image-6.12-amd64 ;;
	debug) prepare_debug ;;
	*) usage ;;
	esac
}

main "$@"
