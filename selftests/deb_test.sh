#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb_test.sh OUTDIR: vmlat's Debian packaging (debian/, make deb's
# tools/mkdeb), on this machine; dkms_test installs the packages in a test
# host.
#  - debian/check-version passes on the tree, and fails when the
#    changelog's version, or dkms.conf's, is not VMLAT_VERSION (copies of
#    the three files, one altered);
#  - two builds, into OUTDIR/a and OUTDIR/b (two build paths), print the
#    paths of vmlat-dkms_<VMLAT_VERSION>_all.deb and
#    vmlat_<VMLAT_VERSION>_<arch>.deb, and leave git's view of the
#    checkout as it was;
#  - the two builds' packages are byte-identical (cmp);
#  - lintian finds no error and no warning in either build's .changes
#    (the two packages, the command's -dbgsym, the .buildinfo);
#  - vmlat-dkms holds in /usr/src/vmlat-<version> the files git tracks of
#    the module's parts (Kbuild, dkms.conf and the module's directories)
#    and nothing else there, and its postinst has DKMS build that version;
#    vmlat holds the command, its two man pages, the bash completion and
#    the example units, and depends on vmlat-dkms of its own version;
#  - dkms.conf's BUILD_EXCLUSIVE_KERNEL takes the kernels from
#    vmlat/wrapper/compat.h's floor (its #error) on, 7.x and later too,
#    and none below it; on a copy whose compat.h says 6.2 the check fails;
#  - dpkg -i of both packages for a kernel vmlat does not build on (the
#    headers of Debian's 6.12, copied and changed: release and headers
#    saying the release below compat.h's floor, 5.9; a .config without
#    CONFIG_KVM; the unchanged kernel on a machine that says i686,
#    setarch): DKMS skips ("... includes a
#    BUILD_EXCLUSIVE directive ..." then "Skipped."), builds nothing,
#    dpkg exits 0 and vmlat-dkms's Status is "install ok installed"
#    (tools/testhost/dkms-sandbox.sh: natively, in an overlay of this
#    machine's root; needs root and a complete Debian 6.12 kernel dir of
#    tools/testhost/kernel.sh, $VMLAT_DEB_KERNEL or the newest in
#    $VMLAT_CACHE/kernels; without them these three say SKIP).
# Needs dpkg-dev, debhelper, dh-dkms, lintian and git. TAP; exit 4 = skip.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd -P)
# shellcheck source-path=SCRIPTDIR source=vmlat/tap.sh
. "$TOP/selftests/vmlat/tap.sh"
OUT=${1:?usage: $0 OUTDIR}

for c in dpkg-buildpackage dh dh_dkms lintian git; do
	command -v $c >/dev/null || skip "$c is missing (tools/install-deps)"
done
git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1 || skip "$TOP is not a git checkout"

ok() { "$@" >/dev/null 2>&1 && echo 1 || echo 0; }

echo "TAP version 13"
echo "1..16"
rm -rf "$OUT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)

version=$(sed -n 's/^#define VMLAT_VERSION[[:space:]]*"\(.*\)"/\1/p' "$TOP/vmlat/vmlat.h")
arch=$(dpkg-architecture -qDEB_HOST_ARCH)

# The version check, on the tree, then on copies with one version off.
why=$("$TOP/debian/check-version" "$TOP" 2>&1)
result "$(ok "$TOP/debian/check-version" "$TOP")" version_check_agrees "$why"
v=$OUT/versions
mkdir -p "$v/debian" "$v/vmlat"
cp "$TOP/vmlat/vmlat.h" "$v/vmlat/"
cp "$TOP/dkms.conf" "$TOP/debian/check-version" "$v/"
sed "1s/(\([^)]*\))/(\1+1)/" "$TOP/debian/changelog" >"$v/debian/changelog"
c_rc=0
c_why=$("$v/check-version" "$v" 2>&1) || c_rc=$?
cp "$TOP/debian/changelog" "$v/debian/"
sed -i 's/^PACKAGE_VERSION=".*"/PACKAGE_VERSION="0.0.0"/' "$v/dkms.conf"
d_rc=0
d_why=$("$v/check-version" "$v" 2>&1) || d_rc=$?
result "$([ $c_rc = 1 ] && [ $d_rc = 1 ] && echo 1 || echo 0)" \
	version_check_catches_mismatch \
	"changelog off: exit $c_rc ($c_why); dkms.conf off: exit $d_rc ($d_why)"

# Two builds, in two build paths.
before=$(git -C "$TOP" status --porcelain --untracked-files=all)
want="$OUT/%s/vmlat-dkms_${version}_all.deb $OUT/%s/vmlat_${version}_${arch}.deb"
for b in a b; do
	rc=0
	"$TOP/tools/mkdeb" "$OUT/$b" >"$OUT/$b.paths" 2>"$OUT/$b.log" || rc=$?
	got=$(tr '\n' ' ' <"$OUT/$b.paths")
	# shellcheck disable=SC2059 # the format is ours
	exp=$(printf "$want" "$b" "$b")
	result "$([ $rc = 0 ] && [ "$got" = "$exp " ] && echo 1 || echo 0)" \
		"build_$b" "exit $rc, printed: $got; see $OUT/$b.log"
done
after=$(git -C "$TOP" status --porcelain --untracked-files=all)
result "$([ "$before" = "$after" ] && echo 1 || echo 0)" checkout_left_clean \
	"$(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | tr '\n' ' ')"

dkms_deb=vmlat-dkms_${version}_all.deb
cmd_deb=vmlat_${version}_${arch}.deb
for d in "$dkms_deb" "$cmd_deb"; do
	why=$(cmp "$OUT/a/$d" "$OUT/b/$d" 2>&1)
	result "$(ok cmp "$OUT/a/$d" "$OUT/b/$d")" "identical_${d%%_*}" \
		"${why:-cmp: $d the same in a/ and b/}"
done

# lintian: no error, no warning (its informational tags are not asked).
for b in a b; do
	changes=$OUT/$b/vmlat_${version}_${arch}.changes
	rc=0
	lintian --fail-on error,warning "$changes" >"$OUT/lintian-$b.txt" 2>&1 || rc=$?
	tags=$(grep -E '^[EW]: ' "$OUT/lintian-$b.txt" | tr '\n' ' ')
	result "$([ $rc = 0 ] && [ -f "$changes" ] && [ -z "$tags" ] && echo 1 || echo 0)" \
		"lintian_clean_$b" "exit $rc${tags:+: $tags}"
done

# vmlat-dkms: the module's tracked files, and no other, in /usr/src.
src=usr/src/vmlat-$version
(cd "$TOP" && git ls-files -- Kbuild dkms.conf vmlat debugfs tracepoints \
	hypercall guest) | sort >"$OUT/want-src.txt"
dpkg-deb --fsys-tarfile "$OUT/a/$dkms_deb" | tar -t |
	sed -n "s|^\./$src/\(.*[^/]\)$|\1|p" | sort >"$OUT/got-src.txt"
diffs=$(diff "$OUT/want-src.txt" "$OUT/got-src.txt" | grep '^[<>]' | tr '\n' ' ')
post=$(dpkg-deb --ctrl-tarfile "$OUT/a/$dkms_deb" | tar -xOf - ./postinst 2>/dev/null)
dkms_dep=$(dpkg-deb -f "$OUT/a/$dkms_deb" Depends)
ok=0
[ -s "$OUT/want-src.txt" ] && [ -z "$diffs" ] &&
	grep -q '^DKMS_VERSION='"$version"'$' <<<"$post" &&
	grep -q 'common.postinst' <<<"$post" &&
	[[ $dkms_dep == *dkms* ]] && ok=1
result $ok dkms_package_contents \
	"$(wc -l <"$OUT/got-src.txt") files in /$src${diffs:+, missing (<) or extra (>): $diffs}; Depends: $dkms_dep"

# vmlat: the command and what goes with it; its version's module.
missing=
files=$(dpkg-deb --fsys-tarfile "$OUT/a/$cmd_deb" | tar -t)
for f in usr/sbin/vmlat usr/share/man/man8/vmlat.8.gz \
	usr/share/man/man4/vmlat.4.gz usr/share/bash-completion/completions/vmlat \
	usr/share/doc/vmlat/examples/vmlat-export.service \
	usr/share/doc/vmlat/examples/vmlat-export.timer; do
	grep -qx "\./$f" <<<"$files" || missing+=" /$f"
done
dep=$(dpkg-deb -f "$OUT/a/$cmd_deb" Depends)
ok=0
[ -z "$missing" ] && [[ ", $dep, " == *", vmlat-dkms (= $version), "* ]] && ok=1
result $ok command_package_contents "${missing:+missing:$missing; }Depends: $dep"

# dkms.conf's kernel regex against compat.h's floor, as DKMS matches it
# (bash's =~ on the kernel release): floor_check DIR prints what
# disagrees, nothing if all agrees.
floor_check() {
	local d=$1
	bash -c '
		d=$1
		floor=$(sed -n "s/^#if LINUX_VERSION_CODE < KERNEL_VERSION(\([0-9]*\), *\([0-9]*\), *0)$/\1 \2/p" \
			"$d/vmlat/wrapper/compat.h")
		read -r M m <<<"$floor"
		[ -n "$m" ] || { echo "no floor in compat.h"; exit; }
		# shellcheck disable=SC1091
		. "$d/dkms.conf"
		re=$BUILD_EXCLUSIVE_KERNEL
		[ -n "$re" ] || { echo "no BUILD_EXCLUSIVE_KERNEL"; exit; }
		yes="$M.$m $M.$((m + 1)) $M.$((m + 9)) $M.$((m + 10)) $M.99"
		yes+=" $((M + 1)).0 $((M + 1)).2 $((M + 1)).20 $((M + 4)).0 $((M + 10)).0"
		no="$((M - 1)).99 $((M - 1)).0 1.0 $M.$((m - 1))"
		[ "$m" -gt 0 ] || no="$((M - 1)).99 $((M - 1)).0 1.0"
		for v in $yes; do
			for k in "$v.0" "$v.3-1-amd64" "$v.117+deb12-amd64" "$v.0-rc1"; do
				[[ $k =~ $re ]] || echo -n "$k refused; "
			done
		done
		for v in $no; do
			for k in "$v.0" "$v.3-1-amd64" "$v.117+deb12-amd64"; do
				[[ $k =~ $re ]] && echo -n "$k taken; "
			done
		done
		true
	' floor_check "$d"
}
why=$(floor_check "$TOP")
floor=$(sed -n 's/^#if LINUX_VERSION_CODE < KERNEL_VERSION(\(.*\))$/\1/p' "$TOP/vmlat/wrapper/compat.h")
agree="compat.h floor ($floor) and dkms.conf BUILD_EXCLUSIVE_KERNEL agree"
result "$([ -z "$why" ] && [ -n "$floor" ] && echo 1 || echo 0)" dkms_kernel_regex_is_compat_floor \
	"${why:-$agree}"
f=$OUT/floor
mkdir -p "$f/vmlat/wrapper"
cp "$TOP/dkms.conf" "$f/"
sed 's/^\(#if LINUX_VERSION_CODE < KERNEL_VERSION(\)[0-9]*, *[0-9]*, *0)$/\16, 2, 0)/' \
	"$TOP/vmlat/wrapper/compat.h" >"$f/vmlat/wrapper/compat.h"
why=$(floor_check "$f")
result "$([ -n "$why" ] && echo 1 || echo 0)" dkms_kernel_regex_check_catches_mismatch \
	"compat.h at 6.2: ${why:-nothing found}"

# DKMS on kernels vmlat does not build on: a copy of a Debian 6.12 kernel
# dir (kernel.sh's) whose headers are changed. excl_kernel KIND RELEASE
# DIR: old (release and version.h say RELEASE), nokvm (.config,
# auto.conf and autoconf.h without CONFIG_KVM).
excl_kernel() {
	local kind=$1 rel=$2 dir=$3 src h l maj min r
	src=$(<"$kd/kdir")
	mkdir -p "$dir/lib/modules/$rel" "$dir/headers"
	h=$dir/headers/linux-headers-$rel
	cp -a "$src" "$h" || return 1
	# Its relative links (into linux-kbuild) would point nowhere.
	for l in scripts tools; do
		if [ -L "$h/$l" ]; then ln -sfn "$(realpath "$src/$l")" "$h/$l" || return 1; fi
	done
	case $kind in
	old)
		maj=${rel%%.*} r=${rel#*.} min=${r%%.*}
		sed -i "s/^#define LINUX_VERSION_CODE .*/#define LINUX_VERSION_CODE $(((maj << 16) + (min << 8)))/
			s/^#define LINUX_VERSION_MAJOR .*/#define LINUX_VERSION_MAJOR $maj/
			s/^#define LINUX_VERSION_PATCHLEVEL .*/#define LINUX_VERSION_PATCHLEVEL $min/
			s/^#define LINUX_VERSION_SUBLEVEL .*/#define LINUX_VERSION_SUBLEVEL 0/" \
			"$h/include/generated/uapi/linux/version.h" &&
			echo "#define UTS_RELEASE \"$rel\"" >"$h/include/generated/utsrelease.h"
		;;
	nokvm)
		sed -i 's/^CONFIG_KVM=.*/# CONFIG_KVM is not set/' "$h/.config" \
			"$h/include/config/auto.conf" &&
			sed -i '/^#define CONFIG_KVM_MODULE 1$/d' "$h/include/generated/autoconf.h" &&
			! grep -q '^CONFIG_KVM=' "$h/.config"
		;;
	esac || return 1
	echo "$rel" >"$dir/release"
	echo "$h" >"$dir/kdir"
}

# excl_result NAME KERNEL-DIR OUT [WRAPPER...]: dpkg -i of both packages
# in the sandbox, for that kernel; DKMS must skip and dpkg end configured.
excl_result() {
	local name=$1 k=$2 o=$3 rel rc st msg mods ok=0
	shift 3
	rel=$(<"$k/release")
	"$@" "$TOP/tools/testhost/dkms-sandbox.sh" "$k" "$o" \
		"$OUT/a/$dkms_deb" "$OUT/a/$cmd_deb" >"$o.log" 2>&1
	rc=$(cat "$o/dpkg.rc" 2>/dev/null || echo none)
	st=$(dpkg-query --admindir="$o/state/var/lib/dpkg" -f '${Status}' -W vmlat-dkms 2>/dev/null)
	msg=$(grep -m1 -E '^Error!|BUILD_EXCLUSIVE|^Error' "$o/dpkg.log" 2>/dev/null)
	mods=$(cd "$o/state" 2>/dev/null && find . -name 'vmlat*.ko*' | tr '\n' ' ')
	[ "$rc" = 0 ] && [ "$st" = "install ok installed" ] && [ -z "$mods" ] &&
		grep -q 'includes a BUILD_EXCLUSIVE directive which does not match this kernel/arch/config' "$o/dpkg.log" &&
		grep -qx 'Skipped.' "$o/dpkg.log" && ok=1
	result $ok "$name" "$rel: dpkg exit $rc, Status: ${st:-none}; DKMS: ${msg:-no message}${mods:+; built: $mods}; see $o/dpkg.log"
}

# The release just below compat.h's floor (5.9 for 5.10): DKMS must skip it.
floor=$(sed -n 's/^#if LINUX_VERSION_CODE < KERNEL_VERSION(\([0-9]*\), *\([0-9]*\), *0)$/\1 \2/p' \
	"$TOP/vmlat/wrapper/compat.h")
read -r fmaj fmin <<<"$floor"
if [ "${fmin:-0}" -gt 0 ]; then below=$fmaj.$((fmin - 1)); else below=$((fmaj - 1)).99; fi
excl=(dkms_skips_kernel_below_floor dkms_skips_kernel_without_kvm dkms_skips_arch_i686)
kd=${VMLAT_DEB_KERNEL:-}
if [ -z "$kd" ]; then
	for d in "${VMLAT_CACHE:-/var/cache/vmlat}"/kernels/6.12.*+deb12; do
		[ -f "$d/.complete" ] && kd=$d
	done
fi
nope=
[ "$(id -u)" = 0 ] || nope="not root"
for c in unshare chroot dkms setarch; do
	command -v $c >/dev/null || nope="$c is missing"
done
[ -n "$nope" ] || [ -f "${kd:-/nonexistent}/kdir" ] ||
	nope="no Debian 6.12 kernel dir (tools/testhost/kernel.sh prepare 6.12)"
if [ -n "$nope" ]; then
	for t in "${excl[@]}"; do
		n=$((n + 1))
		echo "ok $n $t # SKIP $nope"
	done
else
	e=$OUT/excl
	mkdir -p "$e"
	if excl_kernel old "$below.0-6-amd64" "$e/k-old"; then
		excl_result "${excl[0]}" "$e/k-old" "$e/old"
	else
		result 0 "${excl[0]}" "copying the headers of $kd failed"
	fi
	if excl_kernel nokvm "$(<"$kd/release")" "$e/k-nokvm"; then
		excl_result "${excl[1]}" "$e/k-nokvm" "$e/nokvm"
	else
		result 0 "${excl[1]}" "copying the headers of $kd failed"
	fi
	# The kernel unchanged; uname -m, from which DKMS takes the
	# architecture, says i686 (as aarch64 would on arm64).
	excl_result "${excl[2]}" "$kd" "$e/arch" setarch i686
fi

[ $fail -eq 0 ]
