# SPDX-License-Identifier: GPL-2.0
"""vmlat export --prometheus: its metrics against Python's own reading of
each fixture (cmdtest.load()), read by prometheus_client's parser of the
text exposition format (Debian's python3-prometheus-client), with the
checks of the format that lax parser leaves out; then the real tools,
Debian's promtool (check metrics, lint included) and node_exporter's
textfile collector (served over HTTP): from $VMLAT_DEBTOOLS (the
directory tools/testhost/debtools.sh unpacks them into, as make check
passes it), else from PATH, else those checks are skipped (a unit test
downloads nothing); then the error cases."""
import json
import math
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from decimal import Decimal

import cmdtest

try:
    text_string_to_metric_families = cmdtest.debian_import(
        "prometheus_client.parser").text_string_to_metric_families
    NO_PARSER = ""
except ImportError as x:
    text_string_to_metric_families = None
    NO_PARSER = "%r: install python3-prometheus-client (tools/install-deps)" \
        % x

HERE = os.path.dirname(os.path.abspath(__file__))

STATES = cmdtest.doc_names("VMLAT_STATES")
NESTED_HKINDS = cmdtest.doc_names("VMLAT_NESTED_HISTS")
HKINDS = cmdtest.doc_names("VMLAT_HIST_KINDS") + NESTED_HKINDS
PKINDS = cmdtest.doc_names("VMLAT_BY_KINDS")
SYNC_STATES = cmdtest.doc_names("VMLAT_SYNC_STATES")
SYNC_REJECTED = ["user", "malformed", "replayed", "unpaired", "refused",
                 "limited"]
LES = ["1e-06", "2.5e-06", "5e-06", "1e-05", "2.5e-05", "5e-05", "0.0001",
       "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025",
       "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"]


# ---- the text exposition format (0.0.4) ---------------------------------

class Expo:
    """One parsed exposition: samples in order, HELP and TYPE per family,
    and what is wrong with it (errors: a list of strings)."""

    def __init__(self):
        self.samples = []       # (name, {label: value}, raw value)
        self.help = {}
        self.type = {}
        self.errors = []
        self.family_order = []  # families, in the order of their samples
        self.by_name = {}       # name -> [(labels, raw)]
        self.series = {}        # (name, frozenset(labels)) -> raw

    def family_of(self, name):
        if name in self.type:
            return name
        for suf in ("_bucket", "_sum", "_count"):
            base = name[:-len(suf)]
            if name.endswith(suf) and \
                    self.type.get(base) in ("histogram", "summary"):
                return base
        return name

    def get(self, name, **labels):
        """The raw value of the one series NAME{LABELS}, or None."""
        return self.series.get((name, frozenset(labels.items())))

    def of_vm(self, name, vm_id):
        """[(labels, raw)] of NAME for the VM of id VM_ID."""
        return [(l, r) for l, r in self.by_name.get(name, [])
                if l.get("vm_id") == str(vm_id)]


METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
# The escapes the format has, in label values and in HELP: any other
# backslash is an error (which prometheus_client lets through).
VALUE_ESCAPES = re.compile(r'\\[\\n"]')
HELP_ESCAPES = re.compile(r"\\[\\n]")


def same_value(raw, value):
    """RAW, the text of a value, is the parser's VALUE."""
    try:
        v = float(raw)
    except ValueError:
        return False
    return v == value or (math.isnan(v) and math.isnan(value))


def parse_expo(text):
    """TEXT (an exposition) into an Expo, by prometheus_client's parser;
    its errors: what that parser refuses, and what it lets through (it is
    lax, by its own word) that the format or the textfile collector
    refuses: a timestamp, an escape that is none, a bad name, a label
    twice, # EOF, no newline at the end, families not contiguous, HELP or
    TYPE missing, twice, or after the family's samples, duplicate series.
    Each line that is not a comment is one of the parser's samples, in
    order; the raw value is the line's last field, the exact text (times
    are checked digit for digit)."""
    e = Expo()
    if text and not text.endswith("\n"):
        e.errors.append("no newline at the end")
    try:
        parsed = iter([s for f in text_string_to_metric_families(text)
                       for s in f.samples])
    except (ValueError, IndexError, KeyError) as x:
        e.errors.append("prometheus_client refuses it: %r" % x)
        return e
    seen_fams, current = set(), None
    for ln, line in enumerate(text.split("\n"), 1):
        line = line.strip()     # as the parser takes it
        if not line:
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                d = e.help if parts[1] == "HELP" else e.type
                if name in d:
                    e.errors.append("line %d: %s %s twice" %
                                    (ln, parts[1], name))
                if name in seen_fams:
                    e.errors.append("line %d: %s %s after its samples" %
                                    (ln, parts[1], name))
                d[name] = parts[3] if len(parts) > 3 else ""
                if parts[1] == "HELP" and \
                        "\\" in HELP_ESCAPES.sub("", d[name]):
                    e.errors.append("line %d: a bad escape in HELP" % ln)
                if parts[1] == "TYPE" and d[name] not in TYPES:
                    e.errors.append("line %d: type %r" % (ln, d[name]))
            if line.startswith("# EOF"):
                e.errors.append("line %d: # EOF (OpenMetrics, not 0.0.4)"
                                % ln)
            continue
        s = next(parsed, None)
        if s is None:
            e.errors.append("line %d: not one of the parser's samples" % ln)
            break
        name, labels, raw = s.name, s.labels, line.split()[-1]
        # Not the line's name: a counter without _total (the parser adds
        # it).
        if not METRIC_NAME.match(name) or not line.startswith(name) or \
                not all(LABEL_NAME.match(k) for k in labels):
            e.errors.append("line %d: a bad metric or label name: %r" %
                            (ln, line[:120]))
        if s.timestamp is not None:
            e.errors.append("line %d: a timestamp, or junk, after the "
                            "value (the textfile collector refuses "
                            "timestamps): %r" % (ln, line[:120]))
        elif not same_value(raw, s.value):
            e.errors.append("line %d: value %r read as %r" %
                            (ln, raw, s.value))
        bare = VALUE_ESCAPES.sub("", line)     # its quotes: the labels'
        if "\\" in bare:
            e.errors.append("line %d: a bad escape: %r" % (ln, line[:120]))
        if bare.count('"') != 2 * len(labels):
            e.errors.append("line %d: a label twice: %r" % (ln, line[:120]))
        fam = e.family_of(name)
        if fam != current:
            if fam in seen_fams:
                e.errors.append("line %d: family %s is not contiguous" %
                                (ln, fam))
            else:
                if fam not in e.help or fam not in e.type:
                    e.errors.append("line %d: family %s has no HELP or "
                                    "TYPE before its samples" % (ln, fam))
                e.family_order.append(fam)
            seen_fams.add(fam)
            current = fam
        key = (name, frozenset(labels.items()))
        if key in e.series:
            e.errors.append("line %d: series twice: %r" % (ln, line[:120]))
        e.series[key] = raw
        e.samples.append((name, labels, raw))
        e.by_name.setdefault(name, []).append((labels, raw))
    return e


# ---- expectations, from the JSON ---------------------------------------

def sec_ok(raw, ns):
    """RAW (the exported text) is exactly NS ns in seconds."""
    try:
        return Decimal(raw) * 10**9 == Decimal(ns) and \
            float(raw) == ns / 1e9
    except ArithmeticError:
        return False


def expected_name(vm):
    """The VM's name as names.c should find it: its libvirt domain (a pid
    file in fixtures/libvirt), else QEMU's -name in fixtures/proc, else
    its comm; exited VMs keep their comm (no earlier read named them)."""
    if vm["exited"]:
        return vm["comm"]
    lv = os.path.join(cmdtest.FIXTURES, "libvirt")
    for f in sorted(os.listdir(lv)):
        if f.endswith(".pid"):
            with open(os.path.join(lv, f)) as fh:
                if fh.read().strip() == str(vm["pid"]):
                    return f[:-4]
    try:
        with open(os.path.join(cmdtest.FIXTURES, "proc", str(vm["pid"]),
                               "cmdline"), "rb") as fh:
            args = fh.read().split(b"\0")
    except OSError:
        return vm["comm"]
    for i, a in enumerate(args[:-1]):
        if a in (b"-name", b"--name"):
            opts = args[i + 1].decode().replace(",,", "\0").split(",")
            for o in opts:
                if o.startswith("guest="):
                    return o[6:].replace("\0", ",")
            if "=" not in opts[0]:
                return opts[0].replace("\0", ",")
    return vm["comm"]


def cum_expected(h, le):
    """Samples of JSON histogram H whose bucket lies wholly at or below
    LE (hi - 1 <= le): what the le bucket must count."""
    if le == "+Inf":
        return h["count"]
    le_ns = Decimal(le) * 10**9
    return sum(c for lo, hi, c in h["buckets"] if hi - 1 <= le_ns)


def check_hist(bad, e, fam, vm_id, extra, h):
    """Histogram FAM of the VM with labels EXTRA against JSON H; what is
    wrong goes to BAD."""
    what = "%s vm_id=%s %s" % (fam, vm_id, extra)
    buckets = {l["le"]: r for l, r in e.of_vm(fam + "_bucket", vm_id)
               if all(l.get(k) == v for k, v in extra.items())}
    if sorted(buckets, key=lambda x: float(x)) != LES:
        bad.append("%s: le %s" % (what, sorted(buckets)))
        return
    prev = -1
    for le in LES:
        v = int(buckets[le])
        if v < prev:
            bad.append("%s: le=%s %d < %d" % (what, le, v, prev))
        prev = v
        want = cum_expected(h, le)
        if v != want:
            bad.append("%s: le=%s %d, JSON %d" % (what, le, v, want))
    lbl = dict(extra, vm_id=str(vm_id))
    count = [r for l, r in e.by_name.get(fam + "_count", [])
             if all(l.get(k) == v for k, v in lbl.items())]
    sums = [r for l, r in e.by_name.get(fam + "_sum", [])
            if all(l.get(k) == v for k, v in lbl.items())]
    if len(count) != 1 or int(count[0]) != h["count"] or \
            int(buckets["+Inf"]) != h["count"]:
        bad.append("%s: _count %s +Inf %s, JSON count %d" %
                   (what, count, buckets["+Inf"], h["count"]))
    if len(sums) != 1 or not sec_ok(sums[0], h["sum_ns"]):
        bad.append("%s: _sum %s, JSON %d ns" % (what, sums, h["sum_ns"]))


def check_doc(ctx, tag, e, d, names=None):
    """Expo E against document D: one check per kind of metric. NAMES:
    the VM names by id where they are not expected_name()'s."""
    vms = d["vms"]
    bad = {k: [] for k in ("labels", "info", "states", "vcpus", "exits",
                           "preempted", "latency", "exit_latency",
                           "nested", "sync", "module")}

    for vm in vms:
        i = vm["id"]
        # Every per-VM series carries vm, vm_pid, vm_id.
        name = (names or {}).get(i) or expected_name(vm)
        for n, l, _ in e.samples:
            if l.get("vm_id") == str(i) and \
                    (l.get("vm") != name or l.get("vm_pid") != str(vm["pid"])):
                bad["labels"].append("%s vm_id=%d: vm=%r vm_pid=%r, want "
                                     "%r %d" % (n, i, l.get("vm"),
                                                l.get("vm_pid"), name,
                                                vm["pid"]))
                break
        info = e.of_vm("vmlat_vm_info", i)
        if len(info) != 1 or info[0][1] != "1" or \
                info[0][0].get("comm") != vm["comm"] or \
                info[0][0].get("exited") != ("1" if vm["exited"] else "0"):
            bad["info"].append("vm_id=%d: %r" % (i, info))
        # A vCPU run by two threads in turn has an entry per thread: its
        # series are their sums.
        vcpus = {}
        for c in vm["vcpus"]:
            t = vcpus.setdefault(str(c["vcpu"]), {})
            for k in STATES + ["observed"]:
                t[k] = t.get(k, 0) + c[k + "_ns"]
        nv = e.of_vm("vmlat_vcpus", i)
        if len(nv) != 1 or int(nv[0][1]) != len(vcpus):
            bad["info"].append("vm_id=%d vcpus %r, JSON %d" %
                               (i, nv, len(vcpus)))

        # Time per state: the VM's, and each vCPU's.
        got = {l["state"]: r for l, r in
               e.of_vm("vmlat_vm_state_seconds_total", i)}
        if sorted(got) != sorted(STATES):
            bad["states"].append("vm_id=%d states %s" % (i, sorted(got)))
        for s in STATES:
            if s in got and not sec_ok(got[s], vm[s + "_ns"]):
                bad["states"].append("vm_id=%d %s: %s, JSON %d ns" %
                                     (i, s, got[s], vm[s + "_ns"]))
        obs = e.of_vm("vmlat_vm_observed_seconds_total", i)
        if len(obs) != 1 or not sec_ok(obs[0][1], vm["observed_ns"]):
            bad["states"].append("vm_id=%d observed %r, JSON %d" %
                                 (i, obs, vm["observed_ns"]))
        vc = {(l["vcpu"], l["state"]): r for l, r in
              e.of_vm("vmlat_vcpu_state_seconds_total", i)}
        vo = {l["vcpu"]: r for l, r in
              e.of_vm("vmlat_vcpu_observed_seconds_total", i)}
        if len(vc) != len(vcpus) * len(STATES) or len(vo) != len(vcpus):
            bad["vcpus"].append("vm_id=%d: %d vCPU state series, %d "
                                "observed, JSON %d vCPUs" %
                                (i, len(vc), len(vo), len(vcpus)))
        for idx, t in sorted(vcpus.items()):
            if not sec_ok(vo.get(idx, "x"), t["observed"]):
                bad["vcpus"].append("vm_id=%d vcpu %s observed %s" %
                                    (i, idx, vo.get(idx)))
            for s in STATES:
                if not sec_ok(vc.get((idx, s), "x"), t[s]):
                    bad["vcpus"].append("vm_id=%d vcpu %s %s: %s, JSON %d"
                                        % (i, idx, s, vc.get((idx, s)),
                                           t[s]))

        # Exits and their handling time, per reason.
        want = {(x["isa"], x["name"]): x["count"] for x in vm["exits"]}
        if vm["exits_undecoded"]:
            want[("", "undecoded")] = vm["exits_undecoded"]
        got = {(l.get("isa", ""), l["reason"]): int(r) for l, r in
               e.of_vm("vmlat_exits_total", i)}
        if got != want:
            bad["exits"].append("vm_id=%d exits %r, JSON %r" %
                                (i, got, want))
        got = {(l["isa"], l["reason"]): r for l, r in
               e.of_vm("vmlat_exit_handling_seconds_total", i)}
        want = {(x["isa"], x["name"]): x["total_ns"] for x in vm["exits"]}
        if set(got) != set(want) or \
                not all(sec_ok(got[k], want[k]) for k in want):
            bad["exits"].append("vm_id=%d handling %r, JSON %r" %
                                (i, got, want))

        # Preempted time by preemptor kind, and the rest.
        want = {k: 0 for k in PKINDS}
        for p in vm["preemptors"]:
            want[p["kind"]] += p["stolen_ns"]
        want["other"] = vm["preemptors_other_ns"]
        got = {l["preemptor_kind"]: r for l, r in
               e.of_vm("vmlat_preempted_seconds_total", i)}
        if set(got) != set(want) or \
                not all(sec_ok(got[k], want[k]) for k in want):
            bad["preempted"].append("vm_id=%d %r, JSON %r" %
                                    (i, got, want))

        # Latency histograms; the nested kinds only for nested VMs.
        nested = len(vm["nested"]["vcpus"]) > 0
        kinds = {l["kind"] for l, _ in
                 e.of_vm("vmlat_latency_seconds_count", i)}
        want_kinds = {k for k in vm["histograms"]
                      if nested or k not in NESTED_HKINDS}
        if kinds != want_kinds:
            bad["latency"].append("vm_id=%d kinds %s, want %s" %
                                  (i, sorted(kinds), sorted(want_kinds)))
        for k in sorted(want_kinds & kinds):
            check_hist(bad["latency"], e, "vmlat_latency_seconds", i,
                       {"kind": k}, vm["histograms"][k])
        got = {(l["isa"], l["reason"]) for l, _ in
               e.of_vm("vmlat_exit_latency_seconds_count", i)}
        want = {(x["isa"], x["name"]) for x in vm["exits"]
                if "histogram" in x}
        if got != want:
            bad["exit_latency"].append("vm_id=%d reasons %s, want %s" %
                                       (i, sorted(got), sorted(want)))
        for x in vm["exits"]:
            if "histogram" in x:
                check_hist(bad["exit_latency"], e,
                           "vmlat_exit_latency_seconds", i,
                           {"isa": x["isa"], "reason": x["name"]},
                           x["histogram"])

        # Nested: present iff the VM ran a nested guest.
        t = vm["nested"]["totals"]
        got = {l["part"]: r for l, r in
               e.of_vm("vmlat_nested_seconds_total", i)}
        hb = {l["handled_by"]: r for l, r in
              e.of_vm("vmlat_nested_l2_exits_total", i)}
        l12 = e.of_vm("vmlat_nested_l1_to_l2_total", i)
        sc = e.of_vm("vmlat_nested_l2_sync_calls_total", i)
        if not nested:
            if got or hb or l12 or sc:
                bad["nested"].append("vm_id=%d: nested series without "
                                     "nested vCPUs" % i)
        else:
            parts = {p: t[p + "_ns"] for p in
                     ("l1", "l2", "l2_exit_l0", "l2_exit_l1")}
            # A module before L2 sync calls were counted apart: none.
            parts["l2_sync"] = t.get("l2_sync_ns", 0)
            if set(got) != set(parts) or \
                    not all(sec_ok(got[p], parts[p]) for p in parts):
                bad["nested"].append("vm_id=%d parts %r, JSON %r" %
                                     (i, got, parts))
            if hb != {"l0": str(t["l2_exits_l0"]),
                      "l1": str(t["l2_exits_l1"])}:
                bad["nested"].append("vm_id=%d handled_by %r" % (i, hb))
            if len(l12) != 1 or int(l12[0][1]) != t["l1_to_l2"]:
                bad["nested"].append("vm_id=%d l1_to_l2 %r, JSON %d" %
                                     (i, l12, t["l1_to_l2"]))
            if len(sc) != 1 or \
                    int(sc[0][1]) != t.get("l2_sync_calls", 0):
                bad["nested"].append("vm_id=%d l2_sync_calls %r, JSON %d" %
                                     (i, sc, t.get("l2_sync_calls", 0)))

        # Clock sync: present iff the guest called.
        s = vm.get("sync")
        st = {l["state"]: r for l, r in
              e.of_vm("vmlat_clock_sync_state", i)}
        mapped = {n: e.of_vm(n, i) for n in (
            "vmlat_clock_sync_bound_seconds", "vmlat_clock_sync_drift_ppb",
            "vmlat_clock_sync_offset_seconds")}
        counters = {n: e.of_vm(n, i) for n in (
            "vmlat_clock_sync_exchanges_total",
            "vmlat_clock_sync_calls_total",
            "vmlat_clock_sync_restarts_total")}
        rej = {l["reason"]: r for l, r in
               e.of_vm("vmlat_clock_sync_rejected_calls_total", i)}
        if s is None:
            if st or rej or any(mapped.values()) or \
                    any(counters.values()):
                bad["sync"].append("vm_id=%d: sync series without sync" % i)
            continue
        if st != {x: "1" if x == s["state"] else "0" for x in SYNC_STATES}:
            bad["sync"].append("vm_id=%d state %r, JSON %s" %
                               (i, st, s["state"]))
        if "bound_ns" in s:
            b = mapped["vmlat_clock_sync_bound_seconds"]
            dr = mapped["vmlat_clock_sync_drift_ppb"]
            off = mapped["vmlat_clock_sync_offset_seconds"]
            if len(b) != 1 or not sec_ok(b[0][1], s["bound_ns"]) or \
                    len(dr) != 1 or int(dr[0][1]) != s["drift_ppb"] or \
                    len(off) != 1 or not sec_ok(off[0][1], s["offset_ns"]):
                bad["sync"].append("vm_id=%d mapping %r, JSON %r" %
                                   (i, mapped, s))
        elif any(mapped.values()):
            bad["sync"].append("vm_id=%d: mapping gauges unmapped" % i)
        for n, k in (("vmlat_clock_sync_exchanges_total", "exchanges"),
                     ("vmlat_clock_sync_calls_total", "calls"),
                     ("vmlat_clock_sync_restarts_total", "restarts")):
            v = counters[n]
            if len(v) != 1 or int(v[0][1]) != s[k]:
                bad["sync"].append("vm_id=%d %s %r, JSON %d" %
                                   (i, n, v, s[k]))
        if rej != {r: str(s[r]) for r in SYNC_REJECTED}:
            bad["sync"].append("vm_id=%d rejected %r" % (i, rej))

    # No series of a VM the document does not have.
    ids = {str(vm["id"]) for vm in vms}
    stray = {l.get("vm_id") for _, l, _ in e.samples
             if "vm_id" in l} - ids
    if stray:
        bad["labels"].append("series of VM ids %s" % sorted(stray))

    dr = d["dropped"]
    got = {l["what"]: int(r) for l, r in
           e.by_name.get("vmlat_dropped_total", [])}
    if got != {k: dr[k] for k in ("vms", "vcpus", "victims")}:
        bad["module"].append("dropped %r, JSON %r" % (got, dr))
    if e.get("vmlat_json_schema") != str(d["schema"]):
        bad["module"].append("schema %r" % e.get("vmlat_json_schema"))
    if e.get("vmlat_module_info", version=d["version"]) != "1":
        bad["module"].append("module_info %r" %
                             e.by_name.get("vmlat_module_info"))

    for k, v in bad.items():
        ctx.check(not v, "export.%s.%s" % (tag, k), "; ".join(v))


# ---- the tools ---------------------------------------------------------

def get_debtools():
    """(promtool, node_exporter), or (None, why): from $VMLAT_DEBTOOLS,
    a directory that must hold both (a wrong one is an error), else from
    PATH (Debian installs node_exporter as prometheus-node-exporter)."""
    d = os.environ.get("VMLAT_DEBTOOLS")
    if d:
        pt = os.path.join(d, "usr/bin/promtool")
        ne = os.path.join(d, "usr/bin/prometheus-node-exporter")
        if not (os.access(pt, os.X_OK) and os.access(ne, os.X_OK)):
            return False, "VMLAT_DEBTOOLS=%s holds no usr/bin/promtool " \
                "and usr/bin/prometheus-node-exporter" % d
        return (pt, ne), ""
    pt = shutil.which("promtool")
    ne = shutil.which("prometheus-node-exporter") or \
        shutil.which("node_exporter")
    if pt and ne:
        return (pt, ne), ""
    return None, "no promtool and node_exporter in PATH (packages " \
        "prometheus and prometheus-node-exporter; or VMLAT_DEBTOOLS=DIR, " \
        "where tools/testhost/debtools.sh unpacks them)"


def tool_check(ctx, name, tools, why, check):
    """@check(tools) -> (ok, why) as test @name; skipped without the
    tools, failed where $VMLAT_DEBTOOLS named none (tools False)."""
    if tools:
        ok, why = check(tools)
        ctx.check(ok, name, why)
    elif tools is None:
        ctx.skip(name, why)
    else:
        ctx.check(False, name, why)


def promtool_check(promtool, text):
    """(ok, why): `promtool check metrics` on TEXT, lint included."""
    p = subprocess.run([promtool, "check", "metrics"], input=text.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=120)
    out = p.stdout.decode("utf-8", "replace").strip()
    return p.returncode == 0 and not out, "exit %d: %s" % (p.returncode,
                                                           out[:400])


def only_vmlat(text):
    """TEXT's vmlat_ families (samples, HELP and TYPE)."""
    keep = []
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            name = line.split(" ", 3)[2]
        elif line.startswith("#") or not line:
            continue
        else:
            name = line
        if name.startswith("vmlat_"):
            keep.append(line)
    return "\n".join(keep) + "\n"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode("utf-8")


def same_values(file_e, served_e):
    """What differs between the vmlat series of the file and those
    node_exporter serves (values compared as numbers)."""
    def norm(series):
        # An empty label value is no label (node_exporter fills in the
        # labels a family's other series have, empty).
        return {(n, frozenset((k, v) for k, v in l if v)): r
                for (n, l), r in series.items() if n.startswith("vmlat_")}

    diff = []
    fs, ss = norm(file_e.series), norm(served_e.series)
    for k in fs.keys() - ss.keys():
        diff.append("not served: %s%s" % (k[0], dict(k[1])))
    for k in ss.keys() - fs.keys():
        diff.append("served, not in the file: %s%s" % (k[0], dict(k[1])))
    for k in fs.keys() & ss.keys():
        if float(fs[k]) != float(ss[k]):
            diff.append("%s%s: file %s, served %s" %
                        (k[0], dict(k[1]), fs[k], ss[k]))
    return diff


def node_exporter_checks(ctx, tools, docs):
    """Start node_exporter's textfile collector on a temp dir; for each
    (tag, args, env, file Expo) of DOCS, have vmlat write the file there
    with -o and compare what it serves."""
    promtool, ne = tools
    d = tempfile.mkdtemp(prefix="vmlat-ne-")
    port = free_port()
    log = open(os.path.join(d, "node_exporter.log"), "w+")
    proc = subprocess.Popen(
        [ne, "--web.listen-address=127.0.0.1:%d" % port,
         "--collector.disable-defaults", "--collector.textfile",
         "--collector.textfile.directory=%s" % d],
        stdout=log, stderr=subprocess.STDOUT)
    url = "http://127.0.0.1:%d/metrics" % port
    try:
        up, why = False, ""
        for _ in range(100):
            if proc.poll() is not None:
                break
            try:
                fetch(url, timeout=2)
                up = True
                break
            except OSError as x:
                why = repr(x)
                time.sleep(0.1)
        if not up:
            log.seek(0)
            why = "%s; exit %s; %s" % (why, proc.poll(), log.read()[-400:])
        ctx.check(up, "export.node_exporter.starts", why)
        if not up:
            for tag, _, _, _ in docs:
                ctx.check(False, "export.node_exporter.%s" % tag,
                          "node_exporter did not start")
            return
        prom = os.path.join(d, "vmlat.prom")
        for tag, args, env, file_e in docs:
            rc, out, err = ctx.run(args + ["-o", prom], env=env)
            if rc:
                ctx.check(False, "export.node_exporter.%s" % tag,
                          "vmlat -o: %d %s" % (rc, err))
                continue
            served = fetch(url)
            se = parse_expo(served)
            errs = []
            if se.get("node_textfile_scrape_error") != "0":
                errs.append("node_textfile_scrape_error %r" %
                            se.get("node_textfile_scrape_error"))
            if not any(l.get("file", "").endswith("vmlat.prom") for l, _ in
                       se.by_name.get("node_textfile_mtime_seconds", [])):
                errs.append("no node_textfile_mtime_seconds of vmlat.prom")
            errs += se.errors[:3]
            errs += same_values(file_e, se)[:5]
            ctx.check(not errs, "export.node_exporter.%s.served" % tag,
                      "; ".join(errs))
            ok, why = promtool_check(promtool, only_vmlat(served))
            ctx.check(ok, "export.node_exporter.%s.promtool" % tag, why)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(d, ignore_errors=True)


# ---- odd names, -o, filters, errors -----------------------------------

ODD_COMM = "a\"b\\c\nd"
ODD_CMDLINE = b"vm-a\0-name\0guest=bad\xff\xfename \"q\\,debug-threads=on\0"
# Bucket bounds on both sides of le bounds: [lo, hi) counts towards le
# only if hi - 1 <= le.
EDGE_HIST = {"count": 13, "min_ns": 900, "max_ns": 10000000005,
             "sum_ns": 20000030000,
             "buckets": [[900, 1001, 2], [1000, 1002, 3], [2000, 2501, 1],
                         [2400, 2502, 4], [9999999999, 10000000001, 1],
                         [10000000000, 10000000002, 1],
                         [10000000000, 20000000000, 1]]}


def synthetic_doc(tmp):
    """contention-1 with what the recorded documents lack: a comm that
    needs escaping (VM 4) and, through a proc dir of its own, a -name that
    is not valid UTF-8 (VM 3); a vCPU run by two threads (VM 1);
    histogram buckets at the le bounds (VM 2); undecoded exits (VM 5);
    clock sync waiting (VM 5) and mapped with a negative offset (VM 4);
    drops. (doc path, env, {vm id: name})."""
    d = cmdtest.load("contention-1")
    vm = {v["id"]: v for v in d["vms"]}
    vm[4]["comm"] = ODD_COMM
    c = dict(vm[1]["vcpus"][1], tid=999)
    vm[1]["vcpus"].append(c)
    for k in STATES + ["observed"]:
        vm[1][k + "_ns"] += c[k + "_ns"]
    vm[2]["histograms"]["preempt"] = EDGE_HIST
    vm[5]["exits_undecoded"] = 3
    vm[5]["sync"] = {"state": "waiting", "exchanges": 1, "last_ns": 5,
                     "calls": 4, "user": 1, "malformed": 1, "replayed": 0,
                     "unpaired": 0, "refused": 0, "limited": 0,
                     "restarts": 1, "exits": 2, "exit_ns": 100}
    vm[4]["sync"] = {"state": "ok", "exchanges": 7, "drift_ppb": -4567,
                     "drift_min_ppb": -5000, "drift_max_ppb": -4000,
                     "offset_ns": -5000000123, "bound_ns": 1234,
                     "at_guest_ns": 1, "host_ns": 2, "host_min_ns": 1,
                     "host_max_ns": 3, "last_ns": 9, "calls": 20, "user": 2,
                     "malformed": 3, "replayed": 4, "unpaired": 5,
                     "refused": 6, "limited": 7, "restarts": 0, "exits": 7,
                     "exit_ns": 700}
    d["dropped"] = {"vms": 1, "vcpus": 2, "victims": 3}
    path = os.path.join(tmp, "synthetic.json")
    with open(path, "w") as f:
        json.dump(d, f)
    proc = os.path.join(tmp, "proc")
    shutil.copytree(os.path.join(cmdtest.FIXTURES, "proc"), proc)
    os.makedirs(os.path.join(proc, "206"))
    with open(os.path.join(proc, "206", "cmdline"), "wb") as f:
        f.write(ODD_CMDLINE)
    names = {3: b"bad\xff\xfename \"q\\".decode("utf-8", "replace"),
             4: ODD_COMM}
    return d, path, {"VMLAT_PROC": proc}, names


def parser_selftest(ctx):
    """parse_expo() finds what it must, by prometheus_client's parser or
    its own checks: else the checks above prove nothing."""
    good = ('# HELP a_total x\n# TYPE a_total counter\n'
            'a_total{l="q\\"\\\\\\n"} 1\n')
    cases = {
        "not contiguous": good + "# HELP b x\n# TYPE b gauge\nb 1\n"
                          "a_total{l=\"2\"} 1\n",
        "no TYPE": "# HELP c x\nc 1\n",
        "twice": good + 'a_total{l="q\\"\\\\\\n"} 2\n',
        "timestamp": "# HELP d x\n# TYPE d gauge\nd 1 123\n",
        "bad escape": '# HELP d x\n# TYPE d gauge\nd{l="\\t"} 1\n',
        "bad escape in HELP": "# HELP d x\\ty\n# TYPE d gauge\nd 1\n",
        "label twice": '# HELP d x\n# TYPE d gauge\nd{l="1",l="2"} 1\n',
        "not the format": "# HELP d x\n# TYPE d gauge\nd{l=1} 1\n",
        "HELP after samples": "# HELP d x\n# TYPE d gauge\nd 1\n"
                              "# HELP d y\n",
        "counter without _total": "# HELP d x\n# TYPE d counter\nd 1\n",
        "bad name": "# HELP d-x x\n# TYPE d-x gauge\nd-x 1\n",
        "# EOF": "# HELP d x\n# TYPE d gauge\nd 1\n# EOF\n",
        "no newline at the end": "# HELP d x\n# TYPE d gauge\nd 1",
    }
    e = parse_expo(good)
    ok = not e.errors and e.get("a_total", l="q\"\\\n") == "1"
    why = [repr(e.errors)]
    for what, text in cases.items():
        if not parse_expo(text).errors:
            ok = False
            why.append("not found: " + what)
    ctx.check(ok, "export.parser_selftest", "; ".join(why))


def one_line(err):
    lines = err.splitlines()
    return len(lines) == 1 and lines[0].startswith("vmlat: ")


def error_checks(ctx, tmp):
    fx = cmdtest.fixture("contention-1")
    rc, out, err = ctx.run(["-f", os.path.join(tmp, "nope.json"), "export",
                            "--prometheus"])
    ctx.check(rc == 1 and one_line(err) and not out,
              "export.error.missing_file", "%d %r %r" % (rc, err, out[:80]))

    rc, out, err = ctx.run(["-f", fx, "export"])
    ctx.check(rc == 2 and one_line(err) and "--prometheus" in err and
              not out, "export.error.no_format", "%d %r" % (rc, err))

    rc, out, err = ctx.run(["-f", fx, "export", "--prometheus", "--bogus"])
    ctx.check(rc == 2 and one_line(err) and not out,
              "export.error.bad_option", "%d %r" % (rc, err))

    rc, out, err = ctx.run(["-f", fx, "export", "--prometheus", "-o"])
    ctx.check(rc == 2 and one_line(err) and not out,
              "export.error.o_without_file", "%d %r" % (rc, err))

    rc, out, err = ctx.run(["-f", fx, "export", "--prometheus", "web1",
                            "vm-a"])
    ctx.check(rc == 2 and one_line(err) and not out,
              "export.error.two_vms", "%d %r" % (rc, err))

    rc, out, err = ctx.run(["export", "-h"])
    ctx.check(rc == 0 and "--prometheus" in out and "-o" in out and
              not err, "export.help", "%d %r %r" % (rc, out[:80], err))

    d = cmdtest.load("contention-1")
    d["schema"] = 99
    bad = os.path.join(tmp, "schema99.json")
    with open(bad, "w") as f:
        json.dump(d, f)
    rc, out, err = ctx.run(["-f", bad, "export", "--prometheus"])
    words = err.replace(",", " ").replace(":", " ").replace("(", " ") \
        .replace(")", " ").split()
    ctx.check(rc == 1 and one_line(err) and "99" in words and
              str(cmdtest.load("contention-1")["schema"]) in words and
              not out, "export.error.schema", "%d %r" % (rc, err))

    rc, out, err = ctx.run(["-f", fx, "export", "--prometheus", "-o",
                            os.path.join(tmp, "no", "such", "dir",
                                         "vmlat.prom")])
    ctx.check(rc == 1 and one_line(err) and "no/such/dir" in err and
              not os.path.exists(os.path.join(tmp, "no")),
              "export.error.o_missing_dir", "%d %r" % (rc, err))


def output_file_checks(ctx, tmp):
    """-o: the same text as stdout, mode 0644 whatever the umask, nothing
    left beside it; an existing file is replaced."""
    fx = cmdtest.fixture("nested-sync")
    _, want, _ = ctx.run(["-f", fx, "export", "--prometheus"])
    d = os.path.join(tmp, "textfile")
    os.mkdir(d)
    prom = os.path.join(d, "vmlat.prom")
    with open(prom, "w") as f:
        f.write("old\n")
    os.chmod(prom, 0o600)
    old = os.umask(0o077)
    try:
        rc, out, err = ctx.run(["-f", fx, "export", "--prometheus", "-o",
                                prom])
    finally:
        os.umask(old)
    with open(prom, encoding="utf-8") as f:
        got = f.read()
    mode = os.stat(prom).st_mode & 0o7777
    ctx.check(rc == 0 and not out and not err and got == want,
              "export.output.same_as_stdout", "%d %r %r" % (rc, out[:80],
                                                            err))
    ctx.check(mode == 0o644, "export.output.mode_0644", oct(mode))
    ctx.check(os.listdir(d) == ["vmlat.prom"], "export.output.no_leftovers",
              os.listdir(d))


def filter_checks(ctx):
    fx = cmdtest.fixture("contention-1")
    for flt, vid in (("web1", "1"), ("shop-db", "2"), ("id:3", "3"),
                     ("207", "4"), ("vm-hog", "5")):
        rc, out, err = ctx.run(["-f", fx, "export", "--prometheus", flt])
        e = parse_expo(out)
        ids = {l.get("vm_id") for _, l, _ in e.samples if "vm_id" in l}
        ctx.check(rc == 0 and not err and not e.errors and ids == {vid} and
                  e.get("vmlat_json_schema") == "3",
                  "export.filter.%s" % flt, "%d %r ids %s %s" %
                  (rc, err, sorted(ids), e.errors[:2]))
    rc, out, err = ctx.run(["-f", fx, "export", "--prometheus", "nosuchvm"])
    e = parse_expo(out)
    ids = {l.get("vm_id") for _, l, _ in e.samples if "vm_id" in l}
    ctx.check(rc == 0 and one_line(err) and "nosuchvm" in err and
              not ids and not e.errors and
              e.get("vmlat_json_schema") == "3" and
              "vmlat_vm_info" not in e.help,
              "export.filter.no_match", "%d %r %s" % (rc, err, sorted(ids)))


# ---- the tests ---------------------------------------------------------

def run(ctx):
    if NO_PARSER:
        ctx.check(False, "export.prometheus_client", NO_PARSER)
        return
    parser_selftest(ctx)
    tools, tools_why = get_debtools()
    tmp = tempfile.mkdtemp(prefix="vmlat-export-")
    try:
        served_docs = []
        for name in cmdtest.fixture_names():
            args = ["-f", cmdtest.fixture(name), "export", "--prometheus"]
            rc, out, err = ctx.run(args)
            ctx.check(rc == 0 and not err and out,
                      "export.%s.runs" % name, "%d %r" % (rc, err))
            e = parse_expo(out)
            ctx.check(not e.errors, "export.%s.format" % name,
                      "; ".join(e.errors[:5]))
            check_doc(ctx, name, e, cmdtest.load(name))
            tool_check(ctx, "export.%s.promtool" % name, tools, tools_why,
                       lambda t, out=out: promtool_check(t[0], out))
            served_docs.append((name, args, None, e))

        # Names: QEMU's -name (pid 190), libvirt's over it (pid 191).
        e = parse_expo(ctx.run(["-f", cmdtest.fixture("contention-1"),
                                "export", "--prometheus"])[1])
        ctx.check(e.get("vmlat_vm_info", vm="web1", vm_pid="190",
                        vm_id="1", comm="qemu-system-x86",
                        exited="0") == "1" and
                  e.get("vmlat_vm_info", vm="shop-db", vm_pid="191",
                        vm_id="2", comm="qemu-system-x86",
                        exited="0") == "1",
                  "export.names.web1_shop_db",
                  e.by_name.get("vmlat_vm_info"))

        # What the recorded documents lack; written with -o, read as
        # bytes: any byte that is not UTF-8 is an error.
        d, path, env, names = synthetic_doc(tmp)
        prom = os.path.join(tmp, "synthetic.prom")
        args = ["-f", path, "export", "--prometheus"]
        rc, _, err = ctx.run(args + ["-o", prom], env=env)
        raw = b""
        if rc == 0:
            with open(prom, "rb") as f:
                raw = f.read()
        try:
            text, why = raw.decode("utf-8"), ""
        except UnicodeDecodeError as x:
            text, why = "", repr(x)
        e = parse_expo(text)
        ctx.check(rc == 0 and text and not err and not e.errors,
                  "export.synthetic.runs", "%d %r %s %s" %
                  (rc, err, why, e.errors[:3]))
        check_doc(ctx, "synthetic", e, d, names)
        tool_check(ctx, "export.synthetic.promtool", tools, tools_why,
                   lambda t: promtool_check(t[0], text))
        served_docs.append(("synthetic", args, env, e))

        output_file_checks(ctx, tmp)
        filter_checks(ctx)
        error_checks(ctx, tmp)

        if tools:
            node_exporter_checks(ctx, tools, served_docs)
        else:
            tool_check(ctx, "export.node_exporter", tools, tools_why, None)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
