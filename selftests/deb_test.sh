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
#    the example units, and depends on vmlat-dkms of its own version.
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
echo "1..11"
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

[ $fail -eq 0 ]
