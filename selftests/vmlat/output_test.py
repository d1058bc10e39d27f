#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""output_test.py - what /sys/kernel/debug/vmlat/ prints, for any input.

  - json: the document parses strictly (vmlat_ktest.json_strict(): UTF-8,
    no member twice in an object), schema 3: a VM's exit count is
    "exits_total", its "exits" the list per reason, and the two agree;
  - names: a VM process and a host hog named by prctl(PR_SET_NAME)
    (./scenario -n) with control bytes, blanks, backslashes, DEL, quotes,
    UTF-8, UTF-8 cut by the 15-byte limit and ill-formed UTF-8: every row
    of the vms and preemptors tables has as many blank-separated
    fields as the header, the name's field reads back (octal escapes) to
    the kernel's bytes, and in the JSON the name is what a UTF-8 decoder
    makes of those bytes (Python's errors="replace": U+FFFD per maximal
    ill-formed subpart);
  - knobs: blanks and a newline around a value are ignored, a value of
    blanks only is refused (EINVAL) and changes nothing.

Needs root, kvm_amd, $VMLAT_KO; run from the directory holding scenario.
TAP output; exit status 4 when everything was skipped.
"""
import errno
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vmlat_ktest import (SCHEMA_PATHS, VMLAT, SkipTest,  # noqa: E402
                         json_strict, keep, main, rd, rd_json, tap, wr)

COMM_MAX = 15   # TASK_COMM_LEN - 1: the kernel cuts longer names

# (what the test calls it, the name given to prctl(PR_SET_NAME))
NAMES = [
    ("controls", b"v m\t\r\x0b\x0c\\\x7f\x1bq\n"),
    ("utf8", "v\u00e9\u20ac\U0001f600".encode()),
    ("utf8_cut", b"abcdefghijklm" + "\U0001f600".encode()),
    ("ill_formed", b"\xff\xc0\xaf\"q\x80\xe2\x82"),
    ("dash", b"-"),
]


def scenario(args):
    """Run ./scenario ARGS (bytes allowed); its output records as
    {tag: [ {key: value} ]}."""
    p = subprocess.run([os.path.join(HERE, "scenario")] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300)
    out = p.stdout.decode("ascii", "replace")
    if p.returncode == 4:
        raise SkipTest(p.stderr.decode(errors="replace").strip()[-200:])
    if p.returncode != 0 or "status=ok" not in out:
        raise RuntimeError("scenario %s failed (%d): %s" %
                           (args, p.returncode,
                            p.stderr.decode(errors="replace")[-300:]))
    recs = {}
    for line in out.splitlines():
        f = line.split()
        if f:
            recs.setdefault(f[0], []).append(
                dict(kv.split("=", 1) for kv in f[1:] if "=" in kv))
    return recs


def unescape(field):
    """A table field back to the name's bytes: "-" is the empty name,
    \\ooo an octal byte."""
    if field == b"-":
        return b""
    out, i = bytearray(), 0
    while i < len(field):
        if field[i:i + 1] == b"\\":
            out.append(int(field[i + 1:i + 4], 8))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return bytes(out)


def table(name):
    """A table file as (header fields, [row fields]), split on blanks as
    the documentation says, in bytes (a name may not be UTF-8)."""
    with open(os.path.join(VMLAT, name), "rb") as f:
        data = f.read()
    keep("output_%s.txt" % name, data.decode("utf-8", "backslashreplace"))
    head, rows = None, []
    for line in data.split(b"\n"):
        if line.startswith(b"# ") and head is None and \
                not line.startswith(b"# reports"):
            head = line[2:].split(b" ")
        elif line and not line.startswith(b"#"):
            rows.append(line.split())
    return head, rows


def check_rows(tag, name):
    """Every row of table @name has as many fields as its header; returns
    (header, rows)."""
    head, rows = table(name)
    bad = [r for r in rows if len(r) != len(head)]
    tap(head is not None and not bad, "%s.%s_rows_as_wide_as_header" %
        (tag, name), "header %s, rows %s" % (head, bad[:2]))
    return head, rows


def t_json_strict():
    """The document of a VM with exits: strict JSON, of the schema
    Documentation/vmlat-json.schema.json describes (which json-schema
    checks it against), one "exits" member (the list), "exits_total" the
    count."""
    recs = scenario(["exits", "20"])
    pid = int(recs["vcpu"][0]["vm_pid"])
    with open(VMLAT + "/json", "rb") as f:
        raw = f.read()
    keep("output_json.json", raw.decode("utf-8", "backslashreplace"))
    js = rd_json()      # raises on a repeated member: the test fails
    want = [json_strict(rd(p))["properties"]["schema"]["const"]
            for p in SCHEMA_PATHS if os.path.isfile(p)][:1]
    tap(want and js["schema"] == want[0], "json.schema_of_the_schema_file",
        "document %s, schema file %s" % (js["schema"], want))
    vm = [v for v in js["vms"] if v["pid"] == pid]
    if not vm:
        tap(False, "json.vm_known", "no VM %d" % pid)
        return
    vm = vm[0]
    listed = sum(e["count"] for e in vm["exits"]) + vm["exits_undecoded"]
    tap(isinstance(vm["exits"], list) and
        vm["exits_total"] == listed and listed >= 80,
        "json.exits_total_is_the_sum_of_the_list",
        "exits_total %s, listed %d" % (vm.get("exits_total"), listed))
    tap(all("exits_total" in c and "exits" not in c for c in vm["vcpus"]),
        "json.vcpus_have_exits_total", str(vm["vcpus"])[:200])


def check_name(tag, given):
    """./scenario -n @given hog: the VM and the hog are named @given."""
    wr(VMLAT + "/reset", "1")
    recs = scenario(["-n", given, "hog", "1"])
    pid = int(recs["vcpu"][0]["vm_pid"])
    hog = int(recs["hog"][0]["pid"])
    comm = given[:COMM_MAX]
    want = comm.decode("utf-8", "replace")

    js = rd_json()
    vm = [v for v in js["vms"] if v["pid"] == pid]
    tap(vm and vm[0]["comm"] == want, tag + ".json_vm_comm",
        "vmlat %r, want %r" % (vm and vm[0]["comm"], want))
    pre = [p for v in vm for p in v["preemptors"] if p["pid"] == hog]
    tap(pre and pre[0]["kind"] == "host" and pre[0]["comm"] == want,
        tag + ".json_preemptor_comm",
        "vmlat %r, want %r" % (pre and pre[0], want))

    head, rows = check_rows(tag, "vms")
    row = [r for r in rows if r[0] == b"%d" % pid]
    got = row and unescape(row[0][head.index(b"comm")])
    tap(row and got == comm, tag + ".vms_comm_reads_back",
        "field %r, reads %r, want %r" % (row and row[0][1], got, comm))
    head, rows = check_rows(tag, "preemptors")
    row = [r for r in rows if r[0] == b"%d" % pid and r[3] == b"%d" % hog]
    got = row and unescape(row[0][head.index(b"comm")])
    tap(row and got == comm, tag + ".preemptors_comm_reads_back",
        "row %r, reads %r, want %r" % (row and row[0], got, comm))


def t_names():
    for tag, given in NAMES:
        try:
            check_name("names." + tag, given)
        except (RuntimeError, ValueError, KeyError, IndexError) as e:
            tap(False, "names." + tag, "%s: %s" % (type(e).__name__, e))


def write_errno(path, text):
    """Write @text to @path: "ok" or the errno's name."""
    try:
        wr(path, text)
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def t_knobs():
    """Blanks and a newline around a knob's value are ignored; blanks
    alone are refused and change nothing."""
    thr = VMLAT + "/threshold_preempt_us"
    snap = VMLAT + "/snapshot"
    ivl = VMLAT + "/snapshot_interval_ms"
    saved = {p: rd(p).strip() for p in (thr, ivl, snap)}
    try:
        # event first: a threshold in swap mode allocates a snapshot
        for path, text, want in ((snap, " event\n", "event"),
                                 (thr, " 5\n", "5"), (thr, "7 ", "7"),
                                 (thr, "\t12\t\n", "12"),
                                 (ivl, "  250", "250")):
            got = write_errno(path, text)
            now = rd(path).strip()
            tap(got == "ok" and now == want, "knobs.%s_takes_%r" %
                (os.path.basename(path), text),
                "write: %s, reads %r, want %r" % (got, now, want))
        before = rd(thr).strip()
        got = write_errno(thr, "  \n")
        tap(got == "EINVAL" and rd(thr).strip() == before,
            "knobs.blanks_only_refused",
            "write: %s, %r -> %r" % (got, before, rd(thr).strip()))
    finally:
        for p, v in saved.items():
            wr(p, v)


if __name__ == "__main__":
    main([t_json_strict, t_names, t_knobs], needs_tracefs=False)
