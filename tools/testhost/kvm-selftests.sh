#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvm-selftests.sh
#	Builds (or reuses) the upstream KVM selftests that vmlat's tests use as
#	real, independent KVM workloads (nested ones included), from the same
#	linux-source-6.1 tree as the debug kernel, and prints the directory
#	that holds them (flat: <dir>/svm_vmcall_test ...) as the only line of
#	stdout. Progress goes to stderr.
#
# The binaries are dynamically linked against the build machine's glibc:
# they run inside the test host, which sees the build machine's root.
# Cache: ${VMLAT_CACHE:-/var/cache/vmlat}/kvm-selftests-<package version>,
# with the selftests' library in lib/ (objects, and the path of the source
# tree they came from) and the uapi headers in usr/include.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=tools/testhost/lib.sh
. "$HERE/lib.sh"

# stdout carries only the result, written to fd 3.
exec 3>&1 1>&2

CACHE=${VMLAT_CACHE:-/var/cache/vmlat}
SRC_PKG=linux-source-6.1
# SVM ones for the QEMU test host, VMX ones for the bochs one (Intel).
TESTS=(svm_vmcall_test svm_int_ctl_test userspace_io_test kvm_clock_test
	vmx_close_while_nested_test vmx_tsc_adjust_test)

have_all() {
	local t
	for t in "${TESTS[@]}"; do
		[[ -x $1/$t ]] || return 1
	done
}

build_locked() {
	local src=$1 out=$2 key=$3 tmp obj log t bin missing=() t0=$SECONDS
	if [[ -f $out/.complete && $(<"$out/.complete") == "$key" ]] && have_all "$out"; then
		log "reusing $out"
		return 0
	fi
	tmp=$(mktemp -d "$CACHE/.kvm-selftests.XXXXXX")
	obj=$tmp/obj
	log=$tmp/build.log
	# Out of tree (O=) so that the shared source stays pristine: the debug
	# kernel builds from it with O= too, which Kbuild refuses once the
	# source holds generated headers. `make headers` with O= installs the
	# uapi headers where the selftests look for them when O= is given
	# (KHDR_INCLUDES = $O/usr/include).
	log "installing uapi headers (log: $log)"
	make -C "$src" O="$obj" headers >>"$log" 2>&1 || {
		tail -n 40 "$log" >&2
		die "make headers failed"
	}
	log "building tools/testing/selftests TARGETS=kvm with -j$(nproc)"
	# -k and no status check: in Debian's 6.1 tree an unrelated test
	# (dirty_log_test) fails to link; what matters is checked below.
	make -k -j"$(nproc)" -C "$src/tools/testing/selftests" TARGETS=kvm \
		O="$obj" >>"$log" 2>&1 || true
	log "built in $((SECONDS - t0)) s"

	mkdir -p "$tmp/out"
	for t in "${TESTS[@]}"; do
		bin=$(find "$obj/kselftest/kvm" -type f -name "$t" -perm -u+x | head -n1)
		if [[ -n $bin ]]; then
			cp "$bin" "$tmp/out/$t"
		else
			missing+=("$t")
		fi
	done
	if ((${#missing[@]})); then
		grep -E 'error|Error' "$log" | tail -n 40 >&2 || true
		die "not built: ${missing[*]} (log kept: $log)"
	fi
	# The selftests' library (libkvm) and the uapi headers it was built
	# with, for vmlat's own KVM selftest programs (selftests/vmlat's
	# Makefile, KVM_LIB=<this dir>): their sources change more often
	# than this cache's key.
	cp -r "$obj/kselftest/kvm/lib" "$tmp/out/lib"
	[[ -f $tmp/out/lib/kvm_util.o && -f $tmp/out/lib/x86_64/svm.o ]] ||
		die "libkvm objects not built (log kept: $log)"
	cp -r "$obj/usr" "$tmp/out/usr"
	printf '%s\n' "$src" >"$tmp/out/lib/source"
	# The log stays with the binaries: it tells which tests did not build.
	mv "$log" "$tmp/out/build.log"
	printf '%s\n' "$key" >"$tmp/out/.complete"
	rm -rf "$out"
	mv "$tmp/out" "$out"
	rm -rf "$tmp"
	log "KVM selftests ready in $out"
}

main() {
	local src pkgver out
	[[ $# -eq 0 ]] || { echo "usage: $0" >&2; exit 2; }
	# debug-kernel.sh owns unpacking (and checking) the shared source tree.
	src=$(bash "$HERE/debug-kernel.sh" source | tail -n1)
	[[ -f $src/tools/testing/selftests/kvm/Makefile ]] ||
		die "no KVM selftests in '$src'"
	pkgver=$(dpkg-query -W -f='${Version}' "$SRC_PKG") ||
		die "$SRC_PKG is not installed"
	out=$CACHE/kvm-selftests-$pkgver
	mkdir -p "$CACHE"
	(
		flock 9
		build_locked "$src" "$out" "$SRC_PKG $pkgver libkvm"
	) 9>"$CACHE/.kvm-selftests-$pkgver.lock"
	printf '%s\n' "$out" >&3
}

main "$@"
