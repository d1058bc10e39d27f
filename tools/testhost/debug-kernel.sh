#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh [build]
#	Builds (or reuses) vmlat's debug kernel: linux-source-6.1 from Debian,
#	`make tinyconfig` + debug.config (KUnit, lockdep, KASAN, kmemleak, BTF,
#	ftrace, virtio-9p/overlay built in, kvm + kvm-amd as modules, module
#	signatures checked, the lockdown LSM; the project's test key,
#	build/vmlat-test-key.pem, trusted). Prints
#	the kernel dir (layout: CONTRACT.md "Kernel ids and kernel dirs") as
#	the last line of stdout; progress goes to stderr.
# debug-kernel.sh source
#	Only makes sure the unpacked linux-source-6.1 tree is in the cache and
#	prints its path (kvm-selftests.sh builds from the same tree).
#
# The kernel dir is ${VMLAT_CACHE:-/var/cache/vmlat}/debug-<hash>, <hash>
# covering debug.config, the linux-source-6.1 package version, the
# toolchain (gcc, pahole) and this script, so a stale build is never reused.
# Its build/ subdir is the O= build tree that `kdir` names: external
# modules build with `make -C <kdir> M=$PWD` (vmlinux stays there, it is
# the base for the modules' split BTF).
#
# The source tree in the cache is shared and stays pristine: every build
# is out of tree (O=), which Kbuild refuses if the source was ever
# configured in place.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
SELF=$HERE/$(basename "${BASH_SOURCE[0]}")
if [[ -f $HERE/lib.sh ]]; then
	# shellcheck source=tools/testhost/lib.sh
	. "$HERE/lib.sh"
else
	log() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }
	die() { log "error: $*"; exit 1; }
fi

# stdout carries only the result: everything else (make, apt, tar...) goes
# to stderr, and the result is written to fd 3.
exec 3>&1 1>&2

CACHE=${VMLAT_CACHE:-/var/cache/vmlat}
SRC_PKG=linux-source-6.1
SRC_TARBALL=/usr/src/$SRC_PKG.tar.xz
SRC_DIR=$CACHE/src/$SRC_PKG
# Outside the tree: the tree itself must stay byte-identical to the tarball.
SRC_STAMP=$CACHE/src/$SRC_PKG.version
FRAGMENT=$HERE/debug.config

APT_UPDATED=
apt_install() {
	[[ $EUID -eq 0 ]] || die "missing packages: $* (run as root or install them)"
	log "apt-get install $*"
	if ! apt-get install -y --no-install-recommends "$@"; then
		[[ -z $APT_UPDATED ]] || die "apt-get install $* failed"
		APT_UPDATED=1
		apt-get update
		apt-get install -y --no-install-recommends "$@" ||
			die "apt-get install $* failed"
	fi
}

# Tools the kernel build needs, as "command-or-file:package". pahole turns
# DWARF into BTF: without it Kconfig silently drops DEBUG_INFO_BTF (the
# config check below would catch it, but installing is the fix).
BUILD_DEPS=(
	gcc:build-essential make:build-essential flex:flex bison:bison bc:bc
	pahole:dwarves depmod:kmod xz:xz-utils flock:util-linux
	/usr/include/gelf.h:libelf-dev
	# CONFIG_MODULE_SIG: sign-file and extract-cert link libcrypto,
	# found by pkg-config; openssl makes the keys.
	openssl:openssl /usr/include/openssl/evp.h:libssl-dev
	pkg-config:pkg-config
)

ensure_build_deps() {
	local dep what pkg missing=()
	for dep in "${BUILD_DEPS[@]}"; do
		what=${dep%%:*}
		pkg=${dep#*:}
		if [[ $what == /* ]]; then
			[[ -e $what ]] && continue
		else
			command -v "$what" >/dev/null 2>&1 && continue
			# depmod lives in /sbin, which a non-login PATH may lack.
			[[ -x /sbin/$what || -x /usr/sbin/$what ]] && continue
		fi
		missing+=("$pkg")
	done
	if ((${#missing[@]})); then
		# shellcheck disable=SC2207 # package names have no blanks
		missing=($(printf '%s\n' "${missing[@]}" | sort -u))
		apt_install "${missing[@]}"
	fi
}

src_pkg_version() {
	dpkg-query -W -f='${Status} ${Version}\n' "$SRC_PKG" 2>/dev/null |
		awk '$3 == "installed" { print $4; found = 1 } END { exit !found }'
}

# VERSION.PATCHLEVEL.SUBLEVEL of an unpacked tree, e.g. 6.1.192.
tree_version() {
	awk -F' *= *' '$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
		$1 == "SUBLEVEL" { s = $2 } END { print v "." p "." s }' "$1/Makefile"
}

# Makes $SRC_DIR an unpacked copy of the installed linux-source-6.1.
# Called with the source lock held.
ensure_source_locked() {
	local pkgver tmp old

	pkgver=$(src_pkg_version) || {
		apt_install "$SRC_PKG"
		pkgver=$(src_pkg_version) || die "$SRC_PKG is not installed"
	}
	[[ -f $SRC_TARBALL ]] || die "$SRC_TARBALL missing (reinstall $SRC_PKG)"

	if [[ -f $SRC_DIR/Makefile ]]; then
		if [[ -f $SRC_STAMP && $(<"$SRC_STAMP") == "$pkgver" ]]; then
			return 0
		fi
		# A tree unpacked by hand (or by an earlier harness) has no stamp:
		# adopt it if its version is the package's upstream version.
		if [[ ! -f $SRC_STAMP && $(tree_version "$SRC_DIR") == "${pkgver%%-*}" ]]; then
			log "adopting $SRC_DIR as $SRC_PKG $pkgver"
			printf '%s\n' "$pkgver" >"$SRC_STAMP"
			return 0
		fi
		log "$SRC_DIR is not $SRC_PKG $pkgver: unpacking again"
	fi

	# Unpack next to the final place and rename: a half-unpacked tree never
	# appears under the final name.
	log "unpacking $SRC_TARBALL ($pkgver)"
	mkdir -p "$CACHE/src"
	tmp=$(mktemp -d "$CACHE/src/.unpack.XXXXXX")
	tar -xJf "$SRC_TARBALL" -C "$tmp"
	[[ -f $tmp/$SRC_PKG/Makefile ]] || die "$SRC_TARBALL has no $SRC_PKG/Makefile"
	if [[ -e $SRC_DIR ]]; then
		old=$(mktemp -d "$CACHE/src/.old.XXXXXX")
		mv "$SRC_DIR" "$old/"
		rm -rf "$old"
	fi
	mv "$tmp/$SRC_PKG" "$SRC_DIR"
	rmdir "$tmp"
	printf '%s\n' "$pkgver" >"$SRC_STAMP"
}

ensure_source() {
	mkdir -p "$CACHE/src"
	(
		flock 9
		ensure_source_locked
	) 9>"$CACHE/src/.$SRC_PKG.lock"
	# Kbuild refuses O= builds from a configured source tree; say how to
	# recover rather than letting make fail deep inside the build.
	local f
	for f in .config include/config arch/x86/include/generated; do
		[[ ! -e $SRC_DIR/$f ]] ||
			die "$SRC_DIR is not pristine ($f exists: someone built in it);" \
				"run 'make -C $SRC_DIR mrproper' or delete $SRC_DIR"
	done
}

# Every symbol defined by some Kconfig file of the tree, one per line.
kconfig_symbols() {
	find "$SRC_DIR" -name 'Kconfig*' -type f -exec cat {} + |
		sed -n 's/^[[:space:]]*\(menu\)\{0,1\}config[[:space:]]\{1,\}\([A-Za-z0-9_]\{1,\}\).*/\2/p' |
		sort -u
}

# Checks that every assignment of the fragment survived olddefconfig.
# Prints all failures, then fails: fixing them one build at a time is slow.
verify_config() {
	local config=$1 line sym got bad=() known
	known=$(kconfig_symbols)
	while IFS= read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
			sym=${BASH_REMATCH[1]}
			grep -qxF -- "$line" "$config" && continue
			got=$(grep -m1 -E "^(# )?${sym}[= ]" "$config" || true)
			bad+=("$line	(got: ${got:-absent})")
		elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
			sym=${BASH_REMATCH[1]}
			got=$(grep -m1 -E "^$sym=" "$config" || true)
			[[ -z $got ]] || bad+=("$line	(got: $got)")
		else
			continue
		fi
		# A misspelt symbol would pass "is not set" and fail "=y" for a
		# reason that is hard to see: name it.
		grep -qxF -- "${sym#CONFIG_}" <<<"$known" ||
			bad+=("$sym	(no such Kconfig symbol in $SRC_PKG)")
	done <"$FRAGMENT"
	if ((${#bad[@]})); then
		log "options of $(basename "$FRAGMENT") that did not survive olddefconfig:"
		printf '  %s\n' "${bad[@]}" >&2
		die "${#bad[@]} option(s) not as requested in $config"
	fi
	log "all $(grep -cE '^(CONFIG_|# CONFIG_.* is not set)' "$FRAGMENT") options of $(basename "$FRAGMENT") verified"
}

# Runs make in the O= tree, output to the build log; on failure the tail of
# the log is what explains it.
kmake() {
	local dir=$1
	shift
	if ! make -C "$SRC_DIR" O="$dir/build" "$@" >>"$dir/build.log" 2>&1; then
		tail -n 60 "$dir/build.log" >&2
		die "make $* failed (full log: $dir/build.log)"
	fi
}

build_locked() {
	local dir=$1 key=$2 obj release t0
	obj=$dir/build
	if [[ -f $dir/.complete && $(<"$dir/.complete") == "$key" ]]; then
		log "reusing $dir"
		return 0
	fi
	# An interrupted build is resumed: make only redoes what is missing.
	mkdir -p "$obj"
	: >"$dir/build.log"
	t0=$SECONDS

	# The project's test key (CONFIG_SYSTEM_TRUSTED_KEYS): private key and
	# certificate in one PEM file, as the kernel's own signing_key.pem;
	# selftests/run signs vmlat with it for the debug-signed boot. Made
	# once per build dir, so a resumed build keeps the key it embeds.
	if [[ ! -s $obj/vmlat-test-key.pem ]]; then
		openssl req -new -x509 -newkey rsa:2048 -sha256 -nodes -days 36500 \
			-batch -subj "/O=vmlat/CN=vmlat test signing key" \
			-keyout "$obj/.vmlat-test-key.tmp" \
			-out "$obj/.vmlat-test-key.crt" >>"$dir/build.log" 2>&1 ||
			die "openssl could not make the test key (see $dir/build.log)"
		cat "$obj/.vmlat-test-key.tmp" "$obj/.vmlat-test-key.crt" \
			>"$obj/vmlat-test-key.pem"
		rm -f "$obj/.vmlat-test-key.tmp" "$obj/.vmlat-test-key.crt"
	fi

	log "configuring (tinyconfig + $(basename "$FRAGMENT"))"
	kmake "$dir" tinyconfig
	# -m: merge only; olddefconfig below resolves the dependencies.
	"$SRC_DIR/scripts/kconfig/merge_config.sh" -m -O "$obj" \
		"$obj/.config" "$FRAGMENT" >>"$dir/build.log" 2>&1 ||
		die "merge_config.sh failed (see $dir/build.log)"
	kmake "$dir" olddefconfig
	verify_config "$obj/.config"

	log "building bzImage and modules with -j$(nproc) (log: $dir/build.log)"
	kmake "$dir" -j"$(nproc)" bzImage modules
	log "built in $((SECONDS - t0)) s"

	release=$(make -s -C "$SRC_DIR" O="$obj" kernelrelease 2>>"$dir/build.log") ||
		die "make kernelrelease failed"
	[[ -n $release ]] || die "empty kernelrelease"
	# Stripped copies (--strip-debug keeps .BTF): a 30 MB kvm.ko read over
	# 9p under TCG is slow. The unstripped ones stay in build/ for
	# decoding stack traces.
	rm -rf "${dir:?}/lib"
	kmake "$dir" INSTALL_MOD_PATH="$dir" INSTALL_MOD_STRIP=1 modules_install
	[[ -f $dir/lib/modules/$release/modules.dep ]] ||
		die "modules_install left no modules.dep (is depmod installed?)"

	cp "$obj/arch/x86/boot/bzImage" "$dir/vmlinuz"
	cp "$obj/.config" "$dir/config"
	printf '%s\n' "$release" >"$dir/release"
	printf '%s\n' "$obj" >"$dir/kdir"
	printf '%s\n' "$key" >"$dir/.complete"
	log "debug kernel $release ready in $((SECONDS - t0)) s"
}

build() {
	local pkgver key hash dir
	ensure_build_deps
	ensure_source
	pkgver=$(<"$SRC_STAMP")
	[[ -f $FRAGMENT ]] || die "$FRAGMENT missing"
	key=$(
		printf '%s %s\n' "$SRC_PKG" "$pkgver"
		printf 'gcc %s\n' "$(gcc -dumpfullversion)"
		printf 'pahole %s\n' "$(pahole --version)"
		cat "$FRAGMENT" "$SELF"
	)
	hash=$(sha256sum <<<"$key" | cut -c1-16)
	dir=$CACHE/debug-$hash
	mkdir -p "$dir"
	(
		flock 9
		build_locked "$dir" "$hash"
	) 9>"$CACHE/.debug-$hash.lock"
	printf '%s\n' "$dir" >&3
}

case ${1:-build} in
build) build ;;
source)
	ensure_source
	printf '%s\n' "$SRC_DIR" >&3
	;;
*)
	echo "usage: $0 [build|source]" >&2
	exit 2
	;;
esac
