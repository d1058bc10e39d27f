#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vmlat attaches a probe only after reading the tracepoint's prototype from
# BTF with its own parser. Check it against an independent reader of the
# same BTF, bpftool's C dump of each typedef btf_trace_<name> (libbpf's
# parser, not ours):
#  - every hook vmlat reports attached has bpftool's prototype;
#  - vmlat's parser (vmlat-btfproto, next to this script) reads every
#    tracepoint of the running kernel's vmlinux and kvm BTF as bpftool does.
# Needs root, kvm_amd loaded and $VMLAT_KO. TAP output; exit 4 = skip.
set -u

STATUS=/sys/kernel/debug/vmlat/status
BTF=/sys/kernel/btf

skip() { echo "1..0 # SKIP $*"; exit 4; }

[ -n "${VMLAT_KO:-}" ] && [ -f "$VMLAT_KO" ] || skip "VMLAT_KO not set"
command -v bpftool >/dev/null || skip "bpftool not installed"
[ -r $BTF/vmlinux ] || skip "no $BTF/vmlinux"
[ -r $BTF/kvm ] || skip "kvm not loaded (no $BTF/kvm)"
lsmod | grep -q '^vmlat ' && skip "vmlat already loaded"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rmmod vmlat 2>/dev/null' EXIT

# What libbpf makes of each btf_trace_* typedef: "name|(args)" lines.
# libbpf's C dumper gives a type whose name an earlier type has already
# taken the name with "___N" appended (btf_dump_resolve_name()): Linux
# 7.2's kvm BTF repeats base types such as bool, u32 and __u64, dumped as
# bool___2... The prototype names the type by its own name: drop that.
dump() {	# dump BTF_FILE [BASE]
	if [ $# -gt 1 ]; then
		bpftool -B "$2" btf dump file "$1" format c
	else
		bpftool btf dump file "$1" format c
	fi | sed -n 's/^typedef void (\*btf_trace_\([a-z0-9_]*\))(void \*\(, \)\{0,1\}\(.*\));$/\1|(\3)/p' |
		sed -e 's/|()$/|(void)/' -e 's/\([A-Za-z0-9_]\)___[0-9][0-9]*\b/\1/g'
}
dump $BTF/vmlinux >"$tmp/oracle"
dump $BTF/kvm $BTF/vmlinux >>"$tmp/oracle"

echo "TAP version 13"
if ! insmod "$VMLAT_KO"; then
	echo "1..1"
	echo "not ok 1 insmod_vmlat"
	exit 1
fi
grep -v '^#' $STATUS >"$tmp/status"
n=$(wc -l <"$tmp/status")
echo "1..$((n + 2))"
i=0 fail=0
while read -r hook state hits detail; do
	i=$((i + 1))
	name=${hook#*:}
	want=$(awk -F'|' -v n="$name" '$1 == n { print $2; exit }' "$tmp/oracle")
	if [ -z "$want" ]; then
		echo "not ok $i $name # bpftool finds no btf_trace_$name"
		fail=1
	elif [ "$state" != attached ]; then
		echo "not ok $i $name # detached ($detail) though BTF says $want"
		fail=1
	elif [ "$detail" != "$want" ]; then
		echo "not ok $i $name # vmlat read $detail, bpftool reads $want"
		fail=1
	else
		echo "ok $i $name # $detail"
	fi
done <"$tmp/status"

# The parser over every real prototype, not only the 13 vmlat hooks.
ours="$(dirname "$0")/vmlat-btfproto"
for f in vmlinux kvm; do
	i=$((i + 1))
	if [ $f = vmlinux ]; then
		"$ours" $BTF/vmlinux | sort >"$tmp/ours.$f"
		dump $BTF/vmlinux | sort >"$tmp/theirs.$f"
	else
		"$ours" -B $BTF/vmlinux $BTF/kvm | sort >"$tmp/ours.$f"
		# bpftool may dump the base's types too: keep kvm's own
		dump $BTF/kvm $BTF/vmlinux | sort |
			comm -23 - "$tmp/theirs.vmlinux" >"$tmp/theirs.$f"
	fi
	total=$(wc -l <"$tmp/theirs.$f")
	if [ "$total" -gt 0 ] && cmp -s "$tmp/ours.$f" "$tmp/theirs.$f"; then
		echo "ok $i all_${f}_prototypes_match_bpftool # $total tracepoints"
	else
		echo "not ok $i all_${f}_prototypes_match_bpftool # of $total:"
		diff "$tmp/ours.$f" "$tmp/theirs.$f" | head -n 10 | sed 's/^/#   /'
		fail=1
	fi
done
exit $fail
