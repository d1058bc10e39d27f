#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debtools.sh
#
# Makes sure Debian's promtool (package prometheus) and node_exporter
# (package prometheus-node-exporter) are unpacked in the cache and prints
# the directory that holds both, as the last line of stdout: callers run
# "$dir/usr/bin/promtool" and "$dir/usr/bin/prometheus-node-exporter".
# Progress goes to stderr. The vmlat command's tests check its Prometheus
# output with them (tools/vmlat/tests/t_export.py).
#
# The packages are never installed: that would start (and enable) the
# Prometheus and node_exporter services on this machine. Their .debs (the
# machine's candidate versions, checked by apt against its lists) are
# fetched with `apt-get download` and unpacked with `dpkg-deb -x` into
# ${VMLAT_CACHE:-/var/cache/vmlat}/debtools/<pkg>_<version>_<pkg>_<version>
# (both packages' versions: a new version of either is a new directory;
# "_" is in neither names nor versions of Debian packages), the .debs
# kept beside. A complete directory is reused as is, without network;
# apt-get update runs only if the apt lists cannot give the packages (no
# lists yet, or stale ones naming versions the mirror no longer has).

set -euo pipefail
# set -e also inside $(...): a failing step there must not go unnoticed.
shopt -s inherit_errexit
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DEBTOOLS_DIR=$VMLAT_CACHE/debtools
PKGS=(prometheus prometheus-node-exporter)
BINS=(usr/bin/promtool usr/bin/prometheus-node-exporter)

# The download directory being filled, removed if the script dies.
DL_TMP=

cleanup() {
	[[ -z $DL_TMP ]] || rm -rf -- "$DL_TMP"
}

usage() {
	echo "usage: $0" >&2
	exit 2
}

candidate_version() {
	apt-cache policy "$1" 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { print $2; found = 1 }
		     END { exit !found }'
}

# The directory of the given "<pkg> <version>" pairs: an epoch's ":" is
# "%3a", as in the names of .deb files.
dir_of() {
	local name=
	while (($#)); do
		name+=${name:+_}$1_${2//:/%3a}
		shift 2
	done
	printf '%s/%s\n' "$DEBTOOLS_DIR" "$name"
}

# What a complete directory's .complete holds.
key_of() {
	printf '%s\n' "$* unpacked"
}

have_bins() {
	local b
	for b in "${BINS[@]}"; do
		[[ -x $1/$b ]] || return 1
	done
}

is_complete() {
	local dir=$1
	shift
	[[ -f $dir/.complete && $(<"$dir/.complete") == "$(key_of "$@")" ]] &&
		have_bins "$dir"
}

# The "<pkg> <version>" pairs of the candidate versions, on one line;
# fails if the apt lists do not name them all.
resolve() {
	local pkg version out=()
	for pkg in "${PKGS[@]}"; do
		version=$(candidate_version "$pkg") || return 1
		out+=("$pkg" "$version")
	done
	printf '%s\n' "${out[*]}"
}

# Downloads the .debs of "<pkg> <version>"... into the new directory $1;
# non-zero if apt-get download fails (stale or missing lists).
download() {
	local tmp=$1 specs=()
	shift
	while (($# >= 2)); do
		specs+=("$1=$2")
		shift 2
	done
	# apt drops privileges to _apt for downloads; let it write here.
	chown _apt: "$tmp" 2>/dev/null || true
	log "downloading ${specs[*]}"
	(cd "$tmp" && apt-get download -q "${specs[@]}") >&2
}

# Unpacks the .debs in $1 there, checks the binaries run and makes it
# $2, complete for "<pkg> <version>"... (atomically: a half-written
# directory never has the final name).
unpack() {
	local tmp=$1 dir=$2 deb b
	shift 2
	chown "$(id -u):$(id -g)" "$tmp"
	chmod 755 "$tmp"
	for deb in "$tmp"/*.deb; do
		log "unpacking ${deb##*/}"
		dpkg-deb -x "$deb" "$tmp"
	done
	for b in "${BINS[@]}"; do
		[[ -x $tmp/$b ]] || die "no $b in the packages $*"
		# They must run here, not only be there.
		"$tmp/$b" --version >&2 || die "the unpacked $b does not run"
	done
	key_of "$@" >"$tmp/.complete"
	rm -rf "$dir"
	mv "$tmp" "$dir"
	log "ready: $dir"
}

# Under the cache's lock: two callers never download at once (the second
# one reuses what the first unpacked). Prints the directory.
prepare_locked() {
	local attempt line dir
	local -a pv
	trap cleanup EXIT
	for attempt in 1 2; do
		if line=$(resolve); then
			read -ra pv <<<"$line"
			dir=$(dir_of "${pv[@]}")
			if is_complete "$dir" "${pv[@]}"; then
				log "reusing $dir"
				printf '%s\n' "$dir"
				return 0
			fi
			DL_TMP=$(mktemp -d "$DEBTOOLS_DIR/.dl.XXXXXX")
			if download "$DL_TMP" "${pv[@]}"; then
				unpack "$DL_TMP" "$dir" "${pv[@]}"
				DL_TMP=
				printf '%s\n' "$dir"
				return 0
			fi
			cleanup
			DL_TMP=
		fi
		((attempt == 1)) || break
		[[ $EUID -eq 0 ]] ||
			die "cannot get ${PKGS[*]} with the apt lists, and refreshing them (apt-get update) needs root"
		log "cannot get ${PKGS[*]} with the apt lists; running apt-get update"
		apt-get update -q >&2
	done
	die "cannot download ${PKGS[*]} (see apt's messages above)"
}

main() {
	[[ $# -eq 0 ]] || usage
	need_cmd apt-get apt-cache dpkg-deb flock
	mkdir -p "$DEBTOOLS_DIR"
	with_lock "$DEBTOOLS_DIR/.lock" prepare_locked
}

main "$@"
