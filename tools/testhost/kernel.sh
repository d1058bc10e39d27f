#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel.sh prepare <6.1|6.12|6.12-rt|7.2|7.2-rt|debug>
#
# Makes sure a "kernel dir" (see CONTRACT.md) exists for the given kernel id
# and prints its absolute path as the last line of stdout. Progress goes to
# stderr. Stock kernels come from Debian's unsigned image package, unpacked
# into the cache (never installed); the debug kernel is built by
# debug-kernel.sh. Idempotent: a complete, up-to-date dir is reused as is.
#
# 6.1, 6.12 and 6.12-rt (PREEMPT_RT) are Debian 12's; 7.2 and 7.2-rt are
# Debian unstable's, read through a private apt configuration in the cache
# (apt-sid/) that leaves the machine's own as it was. Unstable's kbuild
# tools need a newer glibc than Debian 12's: own_kbuild() rebuilds them
# from linux-source-7.2 (see there).

set -euo pipefail
# set -e also inside $(...): a failing step there must not go unnoticed.
shopt -s inherit_errexit
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KERNELS_DIR=$VMLAT_CACHE/kernels
DEBS_DIR=$VMLAT_CACHE/debs
SID_DIR=$VMLAT_CACHE/apt-sid
BULLSEYE_DIR=$VMLAT_CACHE/apt-bullseye
# Options of every apt-get and apt-cache call: none for Debian 12 (the
# machine's own configuration), the private one for unstable (use_sid).
APT_OPTS=()
# Debian 12 ships the kernel in linux-image-*-unsigned; unstable in
# linux-binary-unsigned-* plus linux-modules-*, under usr/lib/modules.
SPLIT_IMAGE=0

usage() {
	echo "usage: $0 prepare <5.10|6.1|6.12|6.12-rt|7.2|7.2-rt|debug>" >&2
	exit 2
}

# The Debian mirror the machine's own apt sources name (not the security
# archive): unstable is read from the same one.
debian_mirror() {
	{
		sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
			tr ' ' '\n'
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/) { print $i; break } }' \
			/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true
	} | grep -E '^(https?|file)://.*/debian/?$' | head -n 1 | sed 's|/$||'
}

# Points APT_OPTS at suite $1 of the machine's Debian mirror (unstable:
# sid; Debian 11: bullseye): a sources list, package lists and a package
# cache of its own in the cache ($2), checked with Debian's archive
# keyring. Nothing of the machine's apt configuration changes.
use_suite() {
	local suite=$1 dir=$2 mirror
	mirror=$(debian_mirror || true)
	[[ -n $mirror ]] ||
		die "no Debian mirror in /etc/apt/sources.list*: cannot reach $suite"
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
		"$mirror" "$suite" >"$dir/sources.list"
	APT_OPTS=(-o "Dir::Etc::sourcelist=$dir/sources.list"
		-o Dir::Etc::sourceparts=/nonexistent
		-o "Dir::State::Lists=$dir/lists"
		-o "Dir::Cache=$dir/cache")
	# No lists yet: fetch them now (later, only when they went stale).
	compgen -G "$dir/lists/*_Packages*" >/dev/null || apt_update
}

use_sid() {
	use_suite sid "$SID_DIR"
	SPLIT_IMAGE=1
}

apt_update() {
	apt-get "${APT_OPTS[@]}" update >&2
}

# The ABI ("6.1.0-56") is what the metapackage currently depends on. It
# changes with every Debian security update, so it is never hard-coded.
abi_from_metapackage() {
	apt-cache "${APT_OPTS[@]}" depends "$1" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-.*-amd64$/ {
			sub(/^linux-image-/, "", $2); sub(/-amd64$/, "", $2)
			print $2; found = 1; exit
		} END { exit !found }'
}

candidate_version() {
	apt-cache "${APT_OPTS[@]}" policy "$1" 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { print $2; found = 1 }
		     END { exit !found }'
}

# The packages of a kernel's image and modules, one a line.
image_pkgs() {
	if ((SPLIT_IMAGE)); then
		printf 'linux-binary-unsigned-%s-amd64\nlinux-modules-%s-amd64\n' "$1" "$1"
	else
		printf 'linux-image-%s-amd64-unsigned\n' "$1"
	fi
}

image_pkg() {
	image_pkgs "$1" | head -n 1
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
	if (cd "$tmp" && apt-get "${APT_OPTS[@]}" download "$pkg=$version") >&2 &&
		mv "$tmp"/*.deb "$(deb_path "$pkg" "$version")"; then
		ok=1
	fi
	rm -rf "$tmp"
	((ok))
}

# What a complete stock kernel dir's .complete holds.
stock_key() {
	printf '%s %s, headers unpacked, modules uncompressed' "$(image_pkg "$1")" "$2"
	((OWN_CC)) && printf ', this gcc'
	((SPLIT_IMAGE)) && printf ', kbuild %s' "$(declare -f own_kbuild \
		toolchain_config kbuild_programs | sha256sum | cut -c1-16)"
	echo
}

# ---- unstable's kbuild tools, rebuilt for this machine -----------------
#
# linux-kbuild-7.2's programs (fixdep, modpost, objtool...) are linked
# against unstable's glibc (2.38 or later; Debian 12 has 2.36). The same
# programs are built here from linux-source-<major.minor> of the same
# version, with the kernel's own config, once per version and config
# (cached in sid-kbuild/), and put in the place of Debian's. The kernel
# itself is Debian's, unchanged; only the host tools of the module build
# are this machine's.

# The programs built for headers $1 (the unpacked linux-headers-<release>)
# from the source of the -common tree $2, as a dir holding them at the
# kbuild package's relative paths.
kbuild_programs() {
	local hdr=$1 srcpkg version key out tmp tarball
	srcpkg=linux-source-$(sed -n 's/^VERSION = //p' "$2/Makefile").$(sed -n 's/^PATCHLEVEL = //p' "$2/Makefile")
	version=$(candidate_version "$srcpkg") || die "no $srcpkg in unstable"
	key=$(printf '%s\n' "$srcpkg $version" "$(gcc --version | head -n 1)" |
		cat - "$hdr/.config" <(declare -f kbuild_programs) |
		sha256sum | cut -c1-16)
	out=$VMLAT_CACHE/sid-kbuild/$srcpkg-$key
	if [[ -f $out/.complete ]]; then
		printf '%s\n' "$out"
		return 0
	fi
	[[ -s $(deb_path "$srcpkg" "$version") ]] ||
		download_deb "$srcpkg" "$version" || die "cannot download $srcpkg"
	mkdir -p "$VMLAT_CACHE/sid-kbuild"
	tmp=$(mktemp -d "$VMLAT_CACHE/sid-kbuild/.$srcpkg.XXXXXX")
	tarball=./usr/src/$srcpkg.tar.xz
	log "unpacking $srcpkg $version to build its kbuild tools"
	dpkg-deb --fsys-tarfile "$(deb_path "$srcpkg" "$version")" |
		tar -xO "$tarball" | tar -xJ -C "$tmp"
	mkdir -p "$tmp/obj"
	cp "$hdr/.config" "$tmp/obj/.config"
	log "building $srcpkg's kbuild tools (log: $tmp/build.log)"
	if ! { make -C "$tmp/$srcpkg" O="$tmp/obj" CC=gcc olddefconfig &&
		make -C "$tmp/$srcpkg" O="$tmp/obj" CC=gcc -j"$(nproc)" \
			modules_prepare; } >"$tmp/build.log" 2>&1; then
		tail -n 30 "$tmp/build.log" >&2
		die "building $srcpkg's kbuild tools failed (log: $tmp/build.log)"
	fi
	mkdir -p "$tmp/out"
	mkdir -p "$tmp/obj/certs"
	(cd "$tmp/obj" && find scripts tools certs -type f -executable \
		-exec sh -c 'file -b "$1" | grep -q "^ELF.*executable"' _ {} \; \
		-print0 | xargs -0 cp --parents -t "$tmp/out")
	# What Kconfig found of this machine's toolchain (own_kbuild).
	cp "$tmp/obj/include/config/auto.conf" "$tmp/out/toolchain-auto.conf"
	cp "$tmp/obj/include/generated/autoconf.h" "$tmp/out/toolchain-autoconf.h"
	rm -rf "$out"
	mv "$tmp/out" "$out"
	mv "$tmp/build.log" "$out/"
	touch "$out/.complete"
	rm -rf "$tmp"
	printf '%s\n' "$out"
}

# Puts this machine's kbuild programs in the place of unstable's in the
# headers unpacked under $1, for kernel $2, and makes the module build use
# this machine's compiler.
own_kbuild() {
	local root=$1 release=$2 hdr common kbuild built f rel missing=()
	hdr=$root/usr/src/linux-headers-$release
	# The headers' Makefile includes the -common tree's (unpack_headers).
	common=$(sed -n 's|^include \(.*\)/Makefile$|\1|p' "$hdr/Makefile")
	common=$root/usr/src/$(basename "$common")
	kbuild=$(realpath "$hdr/scripts/..")
	[[ -d $kbuild && $kbuild == "$root"/* ]] ||
		die "no linux-kbuild tree behind $hdr/scripts"
	built=$(kbuild_programs "$hdr" "$common")
	# Debian's multiarch wrappers pick a .real-<arch> program: the x86-64
	# build replaces the wrapper, and the .real-* programs go.
	find "$kbuild" -type f -name '*.real-*' -delete
	while IFS= read -r -d '' f; do
		rel=${f#"$kbuild"/}
		if [[ -f $built/$rel ]]; then
			cp "$built/$rel" "$f"
		else
			missing+=("$rel")
		fi
	done < <(find "$kbuild" -type f -exec sh -c \
		'file -b "$1" | grep -q "^ELF"' _ {} \; -print0)
	# Programs that an external module build never runs may be left;
	# they are removed, so that a build that needs one fails clearly.
	for rel in "${missing[@]}"; do
		log "note: no rebuilt $rel (removed: the module build does not run it)"
		rm -f "$kbuild/$rel"
	done
	# Unstable builds its kernels with gcc-16 and pahole 1.32; this
	# machine has gcc 12 and pahole 1.24. Modules are built with this
	# gcc (Debian's headers turn off the compiler-version check), with
	# the config's toolchain facts (CONFIG_CC_HAS_*, CONFIG_GCC_*...) as
	# Kconfig found them for this gcc, the kernel's own options unchanged,
	# and without BTF of their own, which an older pahole could make in
	# a form the kernel rejects (CONFIG_MODULE_ALLOW_BTF_MISMATCH is off):
	# pahole does not run, so its version check does not apply either.
	toolchain_config "$hdr/include/config/auto.conf" \
		"$built/toolchain-auto.conf" '^'
	toolchain_config "$hdr/include/generated/autoconf.h" \
		"$built/toolchain-autoconf.h" '^#define '
	cat >>"$hdr/.kernelvariables" <<-'EOF2'
		# vmlat test harness (tools/testhost/kernel.sh own_kbuild): this
		# machine's compiler, no module BTF.
		CC = $(CROSS_COMPILE)gcc
		override CONFIG_DEBUG_INFO_BTF_MODULES :=
		override PAHOLE_VERSION = $(CONFIG_PAHOLE_VERSION)
	EOF2
}

# Debian 11 builds its kernel with gcc-10, which Debian 12 does not have:
# modules for it are built with this machine's gcc (a test harness's
# choice; a Debian 11 host builds them with its own gcc-10). The headers
# at $1 name the compiler in .kernelvariables.
own_cc() {
	local vars=$1/.kernelvariables
	[[ -f $vars ]] || die "no $vars"
	# shellcheck disable=SC2016 # make's $(...), not the shell's
	sed -i 's|^CC = \(.*\)$(CROSS_COMPILE)gcc-[0-9]*$|CC = \1$(CROSS_COMPILE)gcc|' "$vars"
	grep -q '^CC = .*(CROSS_COMPILE)gcc$' "$vars" ||
		die "$vars: no CC = ...gcc-N line to point at this machine's gcc"
}

# Replaces the toolchain symbols of config file $1 (auto.conf or
# autoconf.h), those Kconfig sets from what the toolchain can do rather
# than from a choice of the kernel's builder, by those of $2, the same
# file made by Kconfig for this machine's toolchain. $3 is what starts a
# symbol's line.
toolchain_config() {
	local file=$1 ours=$2 lead=$3
	local syms='CONFIG_(CC|GCC|AS|LD|TOOLCHAIN|PAHOLE|RUSTC|BINDGEN|CLANG)_'
	awk -v re="$lead$syms" '
		FNR == NR { if ($0 ~ re) mine[++n] = $0; next }
		$0 !~ re { print }
		END { for (i = 1; i <= n; i++) print mine[i] }' \
		"$ours" "$file" >"$file.new"
	mv "$file.new" "$file"
}

# True if the image packages are already unpacked or their .debs are at
# hand (downloading them if needed). They share the image's version.
image_at_hand() {
	local abi=$1 version=$2 pkg marker
	marker=$KERNELS_DIR/$abi/.complete
	[[ -f $marker && $(<"$marker") == "$(stock_key "$abi" "$version")" ]] && return 0
	for pkg in $(image_pkgs "$abi"); do
		[[ -s $(deb_path "$pkg" "$version") ]] ||
			download_deb "$pkg" "$version" || return 1
	done
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
		apt_update
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
	apt-cache "${APT_OPTS[@]}" depends "$top" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-(headers|kbuild)-/ { print $2 }'
}

# Downloads (into the cache) and unpacks the headers packages of $release
# into $root, then points the arch Makefile's absolute include of the
# -common tree (and, from 7.2 on, its KBUILD_OUTPUT) at $final (where
# $root ends up). Never installed: the linux-headers package depends on
# the kernel image, and installing that would put a kernel, initramfs
# hooks and their dependencies on this machine. The packages' own
# symlinks (scripts, tools) are relative.
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
		apt_update
	done
	mkdir -p "$root"
	for deb in "${debs[@]}"; do
		dpkg-deb -x "$deb" "$root"
	done
	mk=$root/usr/src/linux-headers-$release/Makefile
	[[ -f $mk ]] || die "no usr/src/linux-headers-$release/Makefile in the headers packages"
	sed -i -e "s|^include /usr/src/|include $final/usr/src/|" \
		-e "s|^KBUILD_OUTPUT=/usr/src/|KBUILD_OUTPUT=$final/usr/src/|" "$mk"
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
	tmp=$(mktemp -d "$KERNELS_DIR/.$abi.XXXXXX")
	chmod 755 "$tmp"
	for pkg in $(image_pkgs "$abi"); do
		deb=$(deb_path "$pkg" "$version")
		log "unpacking $(basename "$deb")"
		dpkg-deb -x "$deb" "$tmp"
	done
	if ((SPLIT_IMAGE)); then
		# usr/lib/modules/<release>/{vmlinuz.unsigned,kernel/...}:
		# the kernel dir keeps its modules in lib/modules.
		mkdir -p "$tmp/lib"
		mv "$tmp/usr/lib/modules" "$tmp/lib/modules"
		release=$(release_of_tree "$tmp")
		[[ -f $tmp/lib/modules/$release/vmlinuz.unsigned ]] ||
			die "no usr/lib/modules/$release/vmlinuz.unsigned in $pkg"
		ln -s "lib/modules/$release/vmlinuz.unsigned" "$tmp/vmlinuz"
	else
		release=$(release_of_tree "$tmp")
		[[ -f $tmp/boot/vmlinuz-$release ]] || die "no boot/vmlinuz-$release in $deb"
		ln -s "boot/vmlinuz-$release" "$tmp/vmlinuz"
	fi
	printf '%s\n' "$release" >"$tmp/release"
	unpack_headers "$release" "$tmp/headers" "$dir/headers"
	printf '%s\n' "$dir/headers/usr/src/linux-headers-$release" >"$tmp/kdir"
	((SPLIT_IMAGE)) && own_kbuild "$tmp/headers" "$release"
	((OWN_CC)) && own_cc "$tmp/headers/usr/src/linux-headers-$release"
	# Modules kept uncompressed: inside the test host, depmod and
	# modprobe read them under TCG, and DKMS runs depmod at every install
	# and removal; xz makes depmod 14 times slower (7.2's 4216 modules:
	# 12 s against 0.9 s on the build machine, minutes under TCG).
	find "$tmp/lib/modules" -name '*.ko.xz' -print0 |
		xargs -0 -r -P "$(nproc)" -n 200 xz -d
	find "$tmp/lib/modules" -name '*.ko.zst' -print0 |
		xargs -0 -r -P "$(nproc)" -n 200 zstd -q -d --rm
	# The package ships no modules.dep; modprobe (stage 1 list, and
	# `modprobe kvm_amd` inside the test host) needs it.
	depmod -b "$tmp" "$release"
	printf '%s\n' "$key" >"$tmp/.complete"
	rm -rf "$dir"
	mv "$tmp" "$dir"
}

# Whether the modules of the kernel at hand are built with this machine's
# gcc (own_cc), set by main().
OWN_CC=0

# Kernel arguments a stock kernel needs in the test host (boot.sh reads
# <kernel-dir>/cmdline), set by main().
STOCK_CMDLINE=

prepare_stock_locked() {
	local abi=$1 version=$2 dir=$3
	unpack_stock "$abi" "$version" "$dir"
	if [[ -n $STOCK_CMDLINE ]]; then
		printf '%s\n' "$STOCK_CMDLINE" >"$dir/cmdline"
	else
		rm -f "$dir/cmdline"
	fi
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
	6.12-rt) prepare_stock linux-image-6.12-rt-amd64 ;;
	7.2) use_sid; prepare_stock linux-image-amd64 ;;
	# Debian 11's kernel (not a lane of make check yet: issue 42)
	5.10)
		use_suite bullseye "$BULLSEYE_DIR"
		OWN_CC=1
		prepare_stock linux-image-amd64 ;;
	7.2-rt)
		# KVM refuses PREEMPT_RT without a constant-rate TSC, and
		# QEMU's TCG offers no invariant TSC (CPUID 0x80000007) to
		# say so, though its TSC runs at a constant rate. 7.2 can be
		# told (setcpuid=, which taints the kernel); 6.12 cannot, and
		# its RT kernel runs on the bochs (Intel) host, whose
		# Skylake-X has a constant TSC by family and model.
		STOCK_CMDLINE="setcpuid=constant_tsc"
		use_sid
		prepare_stock linux-image-rt-amd64 ;;
	debug) prepare_debug ;;
	*) usage ;;
	esac
}

main "$@"
