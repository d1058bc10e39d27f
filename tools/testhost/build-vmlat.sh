#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-vmlat.sh <kernel-id> <kernel-dir>
#
# Builds vmlat.ko (and vmlat_kunit.ko where the kernel has KUnit) for one
# test kernel with W=1, in build/<kernel-id>/src: a copy of the checkout,
# so that kernels never share object files. Fails on any compiler warning.
# Prints the directory holding the modules as the last line of stdout.
# $VMLAT_BUILD_ARGS: more make variables (tools/bench: VMLAT_FLOOR=1).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -eq 2 ]] || { echo "usage: $0 <kernel-id> <kernel-dir>" >&2; exit 2; }
id=$1
kd=$2
top=$(cd "$TESTHOST_DIR/../.." && pwd -P)
out=$top/build/$id
src=$out/src
kdir=$(<"$kd/kdir")

need_cmd make rsync
mkdir -p "$src"
rsync -a --delete --exclude /build --exclude .git \
	--exclude '*.o' --exclude '*.ko' "$top/" "$src/"
# shellcheck disable=SC2086 # make variables, one word each
if ! make -C "$kdir" M="$src" W=1 ${VMLAT_BUILD_ARGS:-} modules \
	>"$out/build.log" 2>&1; then
	cat "$out/build.log" >&2
	die "building vmlat for $id failed"
fi
if grep -E 'warning:' "$out/build.log" >&2; then
	die "building vmlat for $id gave warnings (W=1): see $out/build.log"
fi
log "built $(cd "$src" && ls -- *.ko | tr '\n' ' ')for $(<"$kd/release")"
echo "$src"
