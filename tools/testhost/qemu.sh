#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# qemu.sh
#
# Makes sure the machine's own QEMU (Debian's qemu-system-x86, the same
# source version), rebuilt with qemu-svm-evtinj.patch, is in the cache and
# prints the path of its qemu-system-x86_64 as the last line of stdout.
# Progress goes to stderr. The test hosts of the kernel IDs K-lapic boot
# under it (selftests/run): the ones whose Linux guests use KVM's
# in-kernel LAPIC.
#
# Why: QEMU's TCG emulation of SVM delivers the interrupt that VMRUN
# injects (EVENTINJ) at once, in helper_vmrun(), but leaves its vector as
# the CPU's pending exception (cs->exception_index). The next time the
# vCPU leaves its translated code without an interrupt to take (a kick:
# round-robin TCG kicks it at the end of every time slice),
# cpu_handle_exception() delivers that vector again, whatever the
# guest's IF, with no #VMEXIT. A Linux guest of the test host's KVM with
# the in-kernel LAPIC takes its interrupts that way (KVM injects them
# through EVENTINJ and, with PV EOI, sees no exit at the handler's
# start): the second one comes inside an interrupts-off section and the
# guest deadlocks on a lock it holds (two boots in three hung, with or
# without vmlat). Debian 12's QEMU 7.2 and bookworm-backports' 10.0.2
# have the assignment alike. The patch clears the index once the
# interrupt is delivered, as every other path that delivers one does.
#
# Built from `apt-get source` of the installed version (a private apt
# configuration in the cache reads the machine's Debian archives as
# deb-src: nothing of the machine's own changes), x86_64-softmmu only,
# with what the test hosts use (TCG, 9p). Its firmware is the machine's
# (/usr/share/qemu, the same version's). The build's packages (meson,
# the glib, pixman, libcap-ng and libattr headers) are installed by apt.
# The result lives in ${VMLAT_CACHE:-/var/cache/vmlat}/qemu/<version>-<key>/bin,
# <key> covering the patch, this script and the compiler; a complete one
# is reused as is. A build takes 6 minutes of a quiet 2-CPU machine (10
# beside a test host).

set -euo pipefail
# set -e also inside $(...): a failing step there must not go unnoticed.
shopt -s inherit_errexit
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

QEMU_DIR=$VMLAT_CACHE/qemu
APT_DIR=$QEMU_DIR/apt-src
PATCH=$TESTHOST_DIR/qemu-svm-evtinj.patch
PKG=qemu-system-x86
# Debian's firmware path (qemu-system-x86_64 -L help): its SeaBIOS, the
# iPXE ROMs.
FIRMWARE=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu
BUILD_DEPS=(meson ninja-build pkg-config libglib2.0-dev libpixman-1-dev
	libcap-ng-dev libattr1-dev dpkg-dev xz-utils)

# The machine's Debian archives (debian, debian-security), as deb-src
# lines: its one-line sources and its deb822 ones alike.
src_lines() {
	awk '$1 == "deb" && $0 ~ /debian(-security)?\/? / { $1 = "deb-src"; print }' \
		/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true
	awk 'BEGIN { RS = ""; FS = "\n" }
	{
		types = uris = suites = comps = signed = ""
		for (i = 1; i <= NF; i++) {
			split($i, kv, ":[[:space:]]*")
			v = substr($i, index($i, ":") + 1); sub(/^[[:space:]]+/, "", v)
			if (kv[1] == "Types") types = v
			else if (kv[1] == "URIs") uris = v
			else if (kv[1] == "Suites") suites = v
			else if (kv[1] == "Components") comps = v
			else if (kv[1] == "Signed-By") signed = v
		}
		if (types !~ /(^| )deb( |$)/) next
		nu = split(uris, u, " "); ns = split(suites, s, " ")
		for (a = 1; a <= nu; a++) {
			if (u[a] !~ /\/debian(-security)?\/?$/) continue
			for (b = 1; b <= ns; b++)
				printf "deb-src %s%s %s %s\n",
					signed == "" ? "" : "[signed-by=" signed "] ",
					u[a], s[b], comps
		}
	}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
}

apt_src() {
	apt-get -o "Dir::Etc::sourcelist=$APT_DIR/sources.list" \
		-o Dir::Etc::sourceparts=/nonexistent \
		-o "Dir::State::Lists=$APT_DIR/lists" \
		-o "Dir::Cache=$APT_DIR/cache" "$@"
}

ensure_build_deps() {
	local p missing=()
	for p in "${BUILD_DEPS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed' || missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	[[ $EUID -eq 0 ]] || die "missing packages: ${missing[*]} (run as root or install them)"
	log "apt-get install ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "${missing[@]}" >&2 || {
		apt-get update -q >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends "${missing[@]}" >&2
	} || die "apt-get install ${missing[*]} failed"
}

# Builds into $1 (a new directory), from source version $2.
build_locked() {
	local dir=$1 srcver=$2 tmp src
	[[ -f $dir/.complete ]] && return 0
	ensure_build_deps
	mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
	src_lines >"$APT_DIR/sources.list"
	[[ -s $APT_DIR/sources.list ]] ||
		die "no Debian archive in /etc/apt/sources.list*: cannot fetch qemu's source"
	tmp=$(mktemp -d "$QEMU_DIR/.build.XXXXXX")
	# shellcheck disable=SC2064 # the path now
	trap "rm -rf -- '$tmp'" EXIT
	chown _apt: "$tmp" 2>/dev/null || true
	log "apt-get source qemu=$srcver"
	if ! (cd "$tmp" && apt_src source "qemu=$srcver") >&2; then
		apt_src update >&2 || die "apt-get update (deb-src) failed"
		(cd "$tmp" && apt_src source "qemu=$srcver") >&2 ||
			die "apt-get source qemu=$srcver failed (no longer in the archive?)"
	fi
	src=$(find "$tmp" -maxdepth 1 -mindepth 1 -type d -name 'qemu-*' | head -n 1)
	[[ -n $src ]] || die "apt-get source unpacked no qemu-* tree"
	patch -d "$src" -p1 --forward <"$PATCH" >&2 ||
		die "$PATCH does not apply to qemu $srcver"
	mkdir "$tmp/build"
	log "building qemu-system-x86_64 (qemu $srcver, with ${PATCH##*/})"
	(cd "$tmp/build" &&
		"$src/configure" --prefix=/usr --target-list=x86_64-softmmu \
			--without-default-features --enable-tcg --enable-virtfs \
			--enable-attr --enable-cap-ng --disable-docs \
			--disable-werror --firmwarepath="$FIRMWARE" &&
		ninja qemu-system-x86_64) >"$tmp/build.log" 2>&1 || {
		tail -n 30 "$tmp/build.log" >&2
		die "building qemu failed"
	}
	# A prefix of its own: QEMU finds its data (keymaps, option ROMs) and
	# firmware (SeaBIOS) relative to its binary, here the machine's.
	mkdir -p "$dir/bin"
	cp "$tmp/build/qemu-system-x86_64" "$dir/bin/"
	for d in /usr/share/qemu ${FIRMWARE//:/ }; do
		[[ -e $dir/${d#/usr/} ]] && continue
		mkdir -p "$(dirname "$dir/${d#/usr/}")"
		ln -s "$d" "$dir/${d#/usr/}"
	done
	cp "$PATCH" "$dir/"
	printf '%s\n' "$srcver" >"$dir/.complete"
	rm -rf -- "$tmp"
	trap - EXIT
}

main() {
	local srcver key dir
	[[ $# -eq 0 ]] || { echo "usage: $0" >&2; exit 2; }
	need_cmd dpkg-query flock
	srcver=$(dpkg-query -W -f='${source:Version}' "$PKG" 2>/dev/null) ||
		die "$PKG is not installed (tools/install-deps)"
	key=$({ cat "$PATCH" "${BASH_SOURCE[0]}"; gcc --version | head -n 1; } |
		sha256sum | cut -c1-16)
	dir=$QEMU_DIR/${srcver#*:}-$key
	mkdir -p "$QEMU_DIR"
	if [[ -f $dir/.complete ]]; then
		log "reusing $dir (qemu $srcver, with ${PATCH##*/})"
	else
		with_lock "$QEMU_DIR/.lock" build_locked "$dir" "$srcver"
	fi
	printf '%s\n' "$dir/bin/qemu-system-x86_64"
}

main "$@"
