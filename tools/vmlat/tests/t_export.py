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
import xml.etree.ElementTree as ET
from decimal import Decimal

import cmdtest
import fleet

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
# A VM's identity labels (export.c's vm_ident()).
ID_KEYS = ("vm", "uuid", "namespace", "name", "vm_pid", "vm_id")
# The default histogram bounds, and those of --detail buckets.
LES_SCHED = ["0.0001", "0.001", "0.01", "0.1", "+Inf"]
LES_EXIT = ["1e-05", "0.0001", "0.001", "0.01", "+Inf"]
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
        self.by_vm = {}         # name -> {identity: [(labels, raw)]}

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

    def of_vm(self, name, ident):
        """[(labels, raw)] of NAME for the VM of identity labels IDENT
        (a dict): the series with those and no other identity labels."""
        if name not in self.by_vm:
            idx = self.by_vm[name] = {}
            for l, r in self.by_name.get(name, []):
                i = frozenset((k, v) for k, v in l.items() if k in ID_KEYS)
                idx.setdefault(i, []).append((l, r))
        return list(self.by_vm[name].get(frozenset(ident.items()), []))


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


def expected_name(vm, proc=None, libvirt=None):
    """(name, from libvirt) of the VM as names.c should find them: its
    libvirt domain (a pid file in LIBVIRT, default fixtures/libvirt), else
    QEMU's -name in PROC (default fixtures/proc), else its comm."""
    domain = libvirt_domains(libvirt).get(vm["pid"])
    if domain:
        return domain, True
    for a in cmdline_opts(vm, proc, "name"):
        opts = a.decode("utf-8", "replace").replace(",,", "\0").split(",")
        for o in opts:
            if o.startswith("guest="):
                return o[6:].replace("\0", ","), False
        if "=" not in opts[0]:
            return opts[0].replace("\0", ","), False
        break
    return vm["comm"], False


# What libvirt_domains() read, by directory and its files.
DOMAINS = {}


def libvirt_domains(libvirt):
    """{pid: domain} of the pid files in LIBVIRT (default
    fixtures/libvirt), read once per directory and list of files (each
    test writes its own directory)."""
    lv = libvirt or os.path.join(cmdtest.FIXTURES, "libvirt")
    key = (lv, tuple(sorted(os.listdir(lv))) if os.path.isdir(lv) else ())
    if key not in DOMAINS:
        DOMAINS[key] = {}
        for f in key[1]:
            if f.endswith(".pid"):
                with open(os.path.join(lv, f)) as fh:
                    DOMAINS[key].setdefault(int(fh.read().strip()), f[:-4])
    return DOMAINS[key]


def cmdline_opts(vm, proc, opt):
    """The values of QEMU option OPT (-opt V, --opt V, -opt=V, --opt=V)
    in the VM's command line in PROC (default fixtures/proc), the first
    first."""
    try:
        with open(os.path.join(proc or os.path.join(cmdtest.FIXTURES,
                                                    "proc"),
                               str(vm["pid"]), "cmdline"), "rb") as fh:
            args = fh.read().split(b"\0")[:-1]
    except OSError:
        return []
    vals = []
    for i, a in enumerate(args):
        for dash in (b"-", b"--"):
            o = dash + opt.encode()
            if a == o and i + 1 < len(args):
                vals.append(args[i + 1])
            elif a.startswith(o + b"="):
                vals.append(a[len(o) + 1:])
    return vals


UUID_RE = re.compile(r"\s*([0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})"
                     r"\s*\Z")


def expected_uuid(vm, name, from_libvirt, proc=None, libvirt=None):
    """The VM's UUID, lowercase, or None: its libvirt domain's status
    file's <domain><uuid>, else QEMU's first -uuid."""
    if from_libvirt:
        lv = libvirt or os.path.join(cmdtest.FIXTURES, "libvirt")
        try:
            root = ET.parse(os.path.join(lv, name + ".xml")).getroot()
            dom = root if root.tag == "domain" else root.find("domain")
            m = UUID_RE.match(dom.findtext("uuid"))
            if m:
                return m.group(1).lower()
        except (OSError, ET.ParseError, AttributeError, TypeError):
            pass
    vals = cmdline_opts(vm, proc, "uuid")
    if vals:
        m = UUID_RE.match(vals[0].decode("utf-8", "replace"))
        return m.group(1).lower() if m else None
    return None


K8S_LABEL = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\Z")
K8S_SUBDOMAIN = re.compile(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?\Z")


def expected_idents(d, names=None, proc=None, libvirt=None):
    """{vm id: identity labels} of the document's live VMs: vm; uuid if
    it has one; namespace and name for a libvirt domain named
    <namespace>_<name> (a DNS-1123 label and subdomain); vm_pid and vm_id
    unless its UUID is its own among the live VMs. NAMES: the VM names by
    id where they are not expected_name()'s."""
    live = [vm for vm in d["vms"] if not vm["exited"]]
    ids, uuids = {}, {}
    for vm in live:
        name, lv = expected_name(vm, proc, libvirt)
        if names and vm["id"] in names:
            name = names[vm["id"]]
        i = {"vm": name}
        u = expected_uuid(vm, name, lv, proc, libvirt)
        if u:
            i["uuid"] = u
            uuids[u] = uuids.get(u, 0) + 1
        ns, _, n = name.partition("_")
        if lv and K8S_LABEL.match(ns) and K8S_SUBDOMAIN.match(n):
            i["namespace"], i["name"] = ns, n
        ids[vm["id"]] = i
    for vm in live:
        i = ids[vm["id"]]
        if "uuid" not in i or uuids[i["uuid"]] > 1:
            i["vm_pid"], i["vm_id"] = str(vm["pid"]), str(vm["id"])
    return ids


def cum_expected(h, le):
    """Samples of JSON histogram H whose bucket lies wholly at or below
    LE (hi - 1 <= le): what the le bucket must count."""
    if le == "+Inf":
        return h["count"]
    le_ns = Decimal(le) * 10**9
    return sum(c for lo, hi, c in h["buckets"] if hi - 1 <= le_ns)


def check_hist(bad, e, fam, ident, extra, h, les):
    """Histogram FAM of the VM of labels IDENT with labels EXTRA against
    JSON H, at bounds LES; what is wrong goes to BAD."""
    what = "%s %s %s" % (fam, ident_str(ident), extra)
    buckets = {l["le"]: r for l, r in e.of_vm(fam + "_bucket", ident)
               if all(l.get(k) == v for k, v in extra.items())}
    if sorted(buckets, key=lambda x: float(x)) != les:
        bad.append("%s: le %s" % (what, sorted(buckets)))
        return
    prev = -1
    for le in les:
        v = int(buckets[le])
        if v < prev:
            bad.append("%s: le=%s %d < %d" % (what, le, v, prev))
        prev = v
        want = cum_expected(h, le)
        if v != want:
            bad.append("%s: le=%s %d, JSON %d" % (what, le, v, want))
    count = [r for l, r in e.of_vm(fam + "_count", ident)
             if all(l.get(k) == v for k, v in extra.items())]
    sums = [r for l, r in e.of_vm(fam + "_sum", ident)
            if all(l.get(k) == v for k, v in extra.items())]
    if len(count) != 1 or int(count[0]) != h["count"] or \
            int(buckets["+Inf"]) != h["count"]:
        bad.append("%s: _count %s +Inf %s, JSON count %d" %
                   (what, count, buckets["+Inf"], h["count"]))
    if len(sums) != 1 or not sec_ok(sums[0], h["sum_ns"]):
        bad.append("%s: _sum %s, JSON %d ns" % (what, sums, h["sum_ns"]))


def ident_str(ident):
    return ",".join("%s=%s" % (k, ident[k]) for k in ID_KEYS if k in ident)


# The families of each --detail, besides the default ones.
DETAIL_FAMILIES = {
    "vcpu": ["vmlat_vcpu_state_seconds_total"],
    "reason": ["vmlat_exit_reason_seconds",
               "vmlat_exit_handling_seconds_total"],
    "exit": ["vmlat_exit_seconds"],
    "preemptor": ["vmlat_preempted_seconds_total",
                  "vmlat_lock_holder_preemptions_total",
                  "vmlat_lock_holder_seconds_total",
                  "vmlat_lock_holder_spins_total"],
    "nested": ["vmlat_nested_seconds_total", "vmlat_nested_l2_exits_total",
               "vmlat_nested_l2_sync_calls_total",
               "vmlat_nested_l1_to_l2_total"] +
              ["vmlat_nested_%s_seconds" % k for k in NESTED_HKINDS],
    "sync": ["vmlat_clock_sync_state", "vmlat_clock_sync_bound_seconds",
             "vmlat_clock_sync_drift_ratio",
             "vmlat_clock_sync_offset_seconds",
             "vmlat_clock_sync_exchanges_total",
             "vmlat_clock_sync_calls_total",
             "vmlat_clock_sync_restarts_total",
             "vmlat_clock_sync_rejected_calls_total"],
    "irq": ["vmlat_irq_delivery_seconds", "vmlat_irq_by_state_seconds_total",
            "vmlat_irq_wait_seconds_total", "vmlat_irq_lost_total"],
    "halt": ["vmlat_halts_total", "vmlat_halt_polls_total",
             "vmlat_halt_poll_seconds_total", "vmlat_halt_wakeups_total",
             "vmlat_halt_wakeup_seconds_total"],
    "buckets": [],
}
IRQ_SOURCES = ["timer", "ipi", "device", "other"]
DETAILS = sorted(DETAIL_FAMILIES)
DEFAULT_FAMILIES = ["vmlat_vm_info", "vmlat_vcpus",
                    "vmlat_vm_state_seconds_total", "vmlat_exits_total",
                    "vmlat_preempt_seconds", "vmlat_wait_seconds"]
MODULE_FAMILIES = ["vmlat_dropped_total", "vmlat_json_schema",
                   "vmlat_module_info"]


def check_doc(ctx, tag, e, d, names=None, detail=(), proc=None,
              libvirt=None):
    """Expo E, exported with --detail DETAIL (a list of names), against
    document D: one check per kind of metric. NAMES: the VM names by id
    where they are not expected_name()'s; PROC, LIBVIRT: where the names
    were read (default fixtures/proc, fixtures/libvirt)."""
    bad = {k: [] for k in ("labels", "families", "info", "states",
                           "vcpus", "exits", "preempted", "latency",
                           "exit_latency", "nested", "sync", "irq", "halt",
                           "module")}
    detail = set(DETAILS if "all" in detail else detail)
    fine = "buckets" in detail
    les_sched = LES if fine else LES_SCHED
    les_exit = LES if fine else LES_EXIT
    idents = expected_idents(d, names, proc, libvirt)

    # Families: the default ones and those of DETAIL, no others (those
    # of VMs that have them: nested, sync).
    want = set(DEFAULT_FAMILIES + MODULE_FAMILIES)
    for k in detail:
        want |= set(DETAIL_FAMILIES[k])
    got = set(e.family_order)
    if not idents:
        want -= set(DEFAULT_FAMILIES)
    if got - want or (want - got) & set(DEFAULT_FAMILIES +
                                        MODULE_FAMILIES):
        bad["families"].append("families %s, want %s" %
                               (sorted(got), sorted(want)))

    # No label that changes during a VM's life; no series of a VM that is
    # not a live one of the document.
    known = {frozenset(i.items()) for i in idents.values()}
    for n, l, _ in e.samples:
        if "exited" in l:
            bad["labels"].append("%s: label exited" % n)
            break
        i = frozenset((k, v) for k, v in l.items() if k in ID_KEYS)
        if i and i not in known:
            bad["labels"].append("%s: a series of no live VM: %s" %
                                 (n, dict(i)))
            break

    for vm in d["vms"]:
        if vm["exited"]:
            continue
        ident = idents[vm["id"]]
        i = ident_str(ident)
        info = e.of_vm("vmlat_vm_info", ident)
        if len(info) != 1 or info[0][1] != "1" or \
                set(info[0][0]) != set(ident) | {"comm"} or \
                info[0][0].get("comm") != vm["comm"]:
            bad["info"].append("%s: %r" % (i, info))
        # A vCPU run by two threads in turn has an entry per thread: its
        # series are their sums.
        vcpus = {}
        for c in vm["vcpus"]:
            t = vcpus.setdefault(str(c["vcpu"]), {})
            for k in STATES + ["observed"]:
                t[k] = t.get(k, 0) + c[k + "_ns"]
        nv = e.of_vm("vmlat_vcpus", ident)
        if len(nv) != 1 or int(nv[0][1]) != len(vcpus):
            bad["info"].append("%s vcpus %r, JSON %d" % (i, nv, len(vcpus)))

        # Time per state: the VM's, and each vCPU's.
        got = {l["state"]: r for l, r in
               e.of_vm("vmlat_vm_state_seconds_total", ident)}
        if sorted(got) != sorted(STATES):
            bad["states"].append("%s states %s" % (i, sorted(got)))
        for s in STATES:
            if s in got and not sec_ok(got[s], vm[s + "_ns"]):
                bad["states"].append("%s %s: %s, JSON %d ns" %
                                     (i, s, got[s], vm[s + "_ns"]))
        vc = {(l["vcpu"], l["state"]): r for l, r in
              e.of_vm("vmlat_vcpu_state_seconds_total", ident)}
        if len(vc) != ("vcpu" in detail) * len(vcpus) * len(STATES):
            bad["vcpus"].append("%s: %d vCPU state series, JSON %d vCPUs"
                                % (i, len(vc), len(vcpus)))
        for idx, t in sorted(vcpus.items()) if "vcpu" in detail else []:
            for s in STATES:
                if not sec_ok(vc.get((idx, s), "x"), t[s]):
                    bad["vcpus"].append("%s vcpu %s %s: %s, JSON %d"
                                        % (i, idx, s, vc.get((idx, s)),
                                           t[s]))

        # Exits: the VM's, or per reason; handling time and latencies
        # per reason, the reason's histogram or its counter.
        ex = e.of_vm("vmlat_exits_total", ident)
        if "reason" in detail:
            want = {(x["isa"], x["name"]): x["count"] for x in vm["exits"]}
            if vm["exits_undecoded"]:
                want[("", "undecoded")] = vm["exits_undecoded"]
            got = {(l.get("isa", ""), l["reason"]): int(r) for l, r in ex}
        else:
            want = {(): sum(x["count"] for x in vm["exits"]) +
                    vm["exits_undecoded"]}
            got = {tuple(sorted(set(l) - set(ident))): int(r)
                   for l, r in ex}
        if got != want or len(ex) != len(want):
            bad["exits"].append("%s exits %r, JSON %r" % (i, got, want))
        got = {(l["isa"], l["reason"]): r for l, r in
               e.of_vm("vmlat_exit_handling_seconds_total", ident)}
        want = {(x["isa"], x["name"]): x["total_ns"] for x in vm["exits"]
                if "histogram" not in x and "reason" in detail}
        if set(got) != set(want) or \
                not all(sec_ok(got[k], want[k]) for k in want):
            bad["exits"].append("%s handling %r, JSON %r" % (i, got, want))
        got = {(l["isa"], l["reason"]) for l, _ in
               e.of_vm("vmlat_exit_reason_seconds_count", ident)}
        want = {(x["isa"], x["name"]) for x in vm["exits"]
                if "histogram" in x and "reason" in detail}
        if got != want:
            bad["exit_latency"].append("%s reasons %s, want %s" %
                                       (i, sorted(got), sorted(want)))
        for x in vm["exits"] if "reason" in detail else []:
            if "histogram" in x:
                check_hist(bad["exit_latency"], e,
                           "vmlat_exit_reason_seconds", ident,
                           {"isa": x["isa"], "reason": x["name"]},
                           x["histogram"], les_exit)
        if "exit" in detail:
            check_hist(bad["exit_latency"], e, "vmlat_exit_seconds", ident,
                       {}, vm["histograms"]["exit"], les_exit)
        elif e.of_vm("vmlat_exit_seconds_count", ident):
            bad["exit_latency"].append("%s: vmlat_exit_seconds" % i)

        # Preempted time by preemptor kind, and the rest.
        want = {k: 0 for k in PKINDS}
        for p in vm["preemptors"]:
            want[p["kind"]] += p["stolen_ns"]
        want["other"] = vm["preemptors_other_ns"]
        if "preemptor" not in detail:
            want = {}
        got = {l["preemptor_kind"]: r for l, r in
               e.of_vm("vmlat_preempted_seconds_total", ident)}
        if set(got) != set(want) or \
                not all(sec_ok(got[k], want[k]) for k in want):
            bad["preempted"].append("%s %r, JSON %r" % (i, got, want))

        # Latency histograms, a family per kind; the nested kinds only
        # for nested VMs.
        nested = len(vm["nested"]["vcpus"]) > 0 and "nested" in detail
        for k in HKINDS:
            fam = "vmlat_%s%s_seconds" % ("nested_" if k in NESTED_HKINDS
                                          else "", k)
            if k == "exit":
                continue
            if k in NESTED_HKINDS and not nested:
                if e.of_vm(fam + "_count", ident):
                    bad["latency"].append("%s: %s" % (i, fam))
                continue
            check_hist(bad["latency"], e, fam, ident, {},
                       vm["histograms"][k],
                       les_exit if k.startswith("l2_exit") else les_sched)

        # Nested: present iff the VM ran a nested guest, and asked for.
        t = vm["nested"]["totals"]
        got = {l["part"]: r for l, r in
               e.of_vm("vmlat_nested_seconds_total", ident)}
        hb = {l["handled_by"]: r for l, r in
              e.of_vm("vmlat_nested_l2_exits_total", ident)}
        l12 = e.of_vm("vmlat_nested_l1_to_l2_total", ident)
        sc = e.of_vm("vmlat_nested_l2_sync_calls_total", ident)
        if not nested:
            if got or hb or l12 or sc:
                bad["nested"].append("%s: nested series without nested "
                                     "vCPUs or --detail nested" % i)
        else:
            # Not l2_exit_l0, l2_exit_l1: their histograms' _sum.
            parts = {p: t[p + "_ns"] for p in ("l1", "l2")}
            # A module before L2 sync calls were counted apart: none.
            parts["l2_sync"] = t.get("l2_sync_ns", 0)
            if set(got) != set(parts) or \
                    not all(sec_ok(got[p], parts[p]) for p in parts):
                bad["nested"].append("%s parts %r, JSON %r" %
                                     (i, got, parts))
            if hb != {"l0": str(t["l2_exits_l0"]),
                      "l1": str(t["l2_exits_l1"])}:
                bad["nested"].append("%s handled_by %r" % (i, hb))
            if len(l12) != 1 or int(l12[0][1]) != t["l1_to_l2"]:
                bad["nested"].append("%s l1_to_l2 %r, JSON %d" %
                                     (i, l12, t["l1_to_l2"]))
            if len(sc) != 1 or \
                    int(sc[0][1]) != t.get("l2_sync_calls", 0):
                bad["nested"].append("%s l2_sync_calls %r, JSON %d" %
                                     (i, sc, t.get("l2_sync_calls", 0)))

        # Interrupt delivery: the sources the VM had, and no other; the
        # sums by where the target was, of the pairs it had; the wait for
        # a CPU; the lost, where any (irq).
        cells = vm.get("irq", []) if "irq" in detail else []
        had = [x for x in IRQ_SOURCES if "irq" in detail and
               vm["histograms"].get("irq_" + x, {}).get("count")]
        got = sorted({l["source"] for l, _ in
                      e.of_vm("vmlat_irq_delivery_seconds_count", ident)})
        if got != sorted(had):
            bad["irq"].append("%s sources %s, JSON %s" % (i, got, had))
        for x in had:
            check_hist(bad["irq"], e, "vmlat_irq_delivery_seconds", ident,
                       {"source": x}, vm["histograms"]["irq_" + x],
                       les_sched)
        got = {(l["source"], l["at"]): r for l, r in
               e.of_vm("vmlat_irq_by_state_seconds_total", ident)}
        want = {(c["source"], c["at"]): c["sum_ns"] for c in cells
                if c["count"]}
        if sorted(got) != sorted(want) or \
                any(not sec_ok(got[k], want[k]) for k in want):
            bad["irq"].append("%s by state %r, JSON %r" % (i, got, want))
        got = {l["source"]: r for l, r in
               e.of_vm("vmlat_irq_wait_seconds_total", ident)}
        want = {x: sum(c.get("wait_ns", 0) for c in cells
                       if c["source"] == x) for x in had}
        if sorted(got) != sorted(want) or \
                any(not sec_ok(got[k], want[k]) for k in want):
            bad["irq"].append("%s wait %r, JSON %r" % (i, got, want))
        got = {l["source"]: int(r) for l, r in
               e.of_vm("vmlat_irq_lost_total", ident)}
        want = {}
        for c in cells:
            if c["lost"]:
                want[c["source"]] = want.get(c["source"], 0) + c["lost"]
        if got != want:
            bad["irq"].append("%s lost %r, JSON %r" % (i, got, want))

        # Halt-polling: the VMs that halted, each family the JSON's sums
        # (halt).
        h = vm.get("halt", {}) if "halt" in detail else {}
        fams = {n: {l.get("result"): r for l, r in e.of_vm(n, ident)}
                for n in DETAIL_FAMILIES["halt"]}
        want = {}
        if h.get("halts"):
            want = {
                "vmlat_halts_total": {None: h["halts"]},
                "vmlat_halt_polls_total": {"hit": h["hits"],
                                           "miss": h["polled"] - h["hits"]},
                "vmlat_halt_poll_seconds_total": {"hit": h["hit_ns"],
                                                  "miss": h["miss_ns"]},
                "vmlat_halt_wakeups_total": {None: h["woken"]},
                "vmlat_halt_wakeup_seconds_total": {None: h["wake_ns"]},
            }
        for n in DETAIL_FAMILIES["halt"]:
            w, g = want.get(n, {}), fams[n]
            secs = n.endswith("_seconds_total")
            if sorted(g, key=str) != sorted(w, key=str) or any(
                    not (sec_ok(g[k], w[k]) if secs else
                         int(g[k]) == w[k]) for k in w):
                bad["halt"].append("%s %s %r, JSON %r" % (i, n, g, w))

        # Lock-holder preemptions: the VMs that had one, each family the
        # JSON's (lock_holder).
        lh = (vm.get("lock_holder") or {}) if "preemptor" in detail else {}
        lfams = DETAIL_FAMILIES["preemptor"][1:]
        want = {}
        if lh.get("count"):
            want = dict(zip(lfams, (lh["count"], lh["ns"], lh["spins"])))
        for n in lfams:
            g = [r for _, r in e.of_vm(n, ident)]
            w = [want[n]] if n in want else []
            if len(g) != len(w) or any(
                    not (sec_ok(x, y) if n.endswith("_seconds_total") else
                         int(x) == y) for x, y in zip(g, w)):
                bad["preempted"].append("%s %s %r, JSON %r" % (i, n, g, w))

        # Clock sync: present iff the guest called, and asked for.
        s = vm.get("sync") if "sync" in detail else None
        st = {l["state"]: r for l, r in
              e.of_vm("vmlat_clock_sync_state", ident)}
        mapped = {n: e.of_vm(n, ident) for n in (
            "vmlat_clock_sync_bound_seconds",
            "vmlat_clock_sync_drift_ratio",
            "vmlat_clock_sync_offset_seconds")}
        counters = {n: e.of_vm(n, ident) for n in (
            "vmlat_clock_sync_exchanges_total",
            "vmlat_clock_sync_calls_total",
            "vmlat_clock_sync_restarts_total")}
        rej = {l["reason"]: r for l, r in
               e.of_vm("vmlat_clock_sync_rejected_calls_total", ident)}
        if s is None:
            if st or rej or any(mapped.values()) or \
                    any(counters.values()):
                bad["sync"].append("%s: sync series without sync or "
                                   "--detail sync" % i)
            continue
        if st != {x: "1" if x == s["state"] else "0" for x in SYNC_STATES}:
            bad["sync"].append("%s state %r, JSON %s" % (i, st, s["state"]))
        if "bound_ns" in s:
            b = mapped["vmlat_clock_sync_bound_seconds"]
            dr = mapped["vmlat_clock_sync_drift_ratio"]
            off = mapped["vmlat_clock_sync_offset_seconds"]
            # A ratio: drift_ppb / 1e9, exactly.
            if len(b) != 1 or not sec_ok(b[0][1], s["bound_ns"]) or \
                    len(dr) != 1 or not sec_ok(dr[0][1], s["drift_ppb"]) or \
                    len(off) != 1 or not sec_ok(off[0][1], s["offset_ns"]):
                bad["sync"].append("%s mapping %r, JSON %r" %
                                   (i, mapped, s))
        elif any(mapped.values()):
            bad["sync"].append("%s: mapping gauges unmapped" % i)
        for n, k in (("vmlat_clock_sync_exchanges_total", "exchanges"),
                     ("vmlat_clock_sync_calls_total", "calls"),
                     ("vmlat_clock_sync_restarts_total", "restarts")):
            v = counters[n]
            if len(v) != 1 or int(v[0][1]) != s[k]:
                bad["sync"].append("%s %s %r, JSON %d" % (i, n, v, s[k]))
        if rej != {r: str(s[r]) for r in SYNC_REJECTED}:
            bad["sync"].append("%s rejected %r" % (i, rej))

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


def series_per_vm(e):
    """{identity (frozenset of its labels): series} of Expo E: every line
    with a value that has a VM's identity labels."""
    n = {}
    for _, l, _ in e.samples:
        i = frozenset((k, v) for k, v in l.items() if k in ID_KEYS)
        if i:
            n[i] = n.get(i, 0) + 1
    return n


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


# ---- the series budget, --detail, identity -------------------------------

# Series per VM by default (vmlat-command.rst, "Series budget").
BUDGET = 25
# A label of a line of the format: name, value (escapes kept).
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def budget_check(ctx, tag, e, d):
    """At most BUDGET series per live VM of D, counted from E per VM
    identity; every live VM has its series."""
    per = series_per_vm(e)
    live = sum(not vm["exited"] for vm in d["vms"])
    over = [(dict(i).get("vm"), n) for i, n in per.items() if n > BUDGET]
    ctx.check(len(per) == live and not over, "export.%s.budget" % tag,
              "%d identities, %d live VMs; over %d: %s" %
              (len(per), live, BUDGET, over[:5]))


def fleet_checks(ctx, tmp, tools, tools_why):
    """The recorded-and-replicated 1024-VM document (fleet.py): within the
    budget, promtool passes it, by default and with every detail; named
    by libvirt as KubeVirt names VMs, and by nothing (their comm, told
    apart by vm_pid and vm_id)."""
    path, d = fleet.fleet_doc(tmp)
    empty = os.path.join(tmp, "fleet-proc")
    os.makedirs(empty, exist_ok=True)
    lv = fleet.fleet_libvirt(tmp, d)
    for tag, env in (("kubevirt", {"VMLAT_PROC": empty,
                                   "VMLAT_LIBVIRT_RUN": lv}),
                     ("unnamed", {"VMLAT_PROC": empty,
                                  "VMLAT_LIBVIRT_RUN": empty})):
        for detail in ([], ["all"]):
            t = "fleet.%s%s" % (tag, "".join(".detail_" + x
                                             for x in detail))
            rc, out, err = ctx.run(["-f", path, "export", "--prometheus"] +
                                   ["--detail=" + x for x in detail],
                                   env=env, timeout=300)
            if detail:
                # 155,000 lines: promtool checks the format, the series
                # of each VM are counted as they are written.
                per = {}
                for line in out.splitlines():
                    if line and not line.startswith("#"):
                        i = frozenset(
                            (k, v) for k, v in LABEL.findall(line)
                            if k in ID_KEYS)
                        per[i] = per.get(i, 0) + 1
                per.pop(frozenset(), None)
                ctx.check(rc == 0 and not err, "export.%s.runs" % t,
                          "%d %r" % (rc, err))
                ctx.check(len(per) == len(d["vms"]),
                          "export.%s.vms" % t, len(per))
            else:
                e = parse_expo(out)
                ctx.check(rc == 0 and not err and not e.errors,
                          "export.%s.runs" % t, "%d %r %s" %
                          (rc, err, e.errors[:3]))
                per = series_per_vm(e)
                budget_check(ctx, t, e, d)
            idents = expected_idents(d, proc=empty,
                                     libvirt=env["VMLAT_LIBVIRT_RUN"])
            want = {frozenset(i.items()) for i in idents.values()}
            keys = {tuple(sorted(dict(i))) for i in per}
            ctx.check(set(per) == want and len(want) == len(d["vms"]) and
                      keys == ({("name", "namespace", "uuid", "vm")}
                               if tag == "kubevirt" else
                               {("vm", "vm_id", "vm_pid")}),
                      "export.%s.identity" % t, sorted(keys))
            tool_check(ctx, "export.%s.promtool" % t, tools, tools_why,
                       lambda x, out=out: promtool_check(x[0], out))


def nested_sync_live(tmp, name="nested-sync"):
    """(path, document): nested-sync's document (or NAME's), in TMP, with
    its VMs live. They are the only nested and clock-syncing ones (irq's:
    the only ones with interrupt deliveries; lock-holder's: with
    lock-holder preemptions), and had exited when it was recorded; only
    live VMs are exported."""
    d = cmdtest.load(name)
    for vm in d["vms"]:
        vm["exited"] = False
    path = os.path.join(tmp, "%s-live.json" % name)
    with open(path, "w") as f:
        json.dump(d, f)
    return path, d


def detail_checks(ctx, tmp):
    """--detail: each name alone adds its families and no other; names
    add up, given in one list or again; a wrong list is refused (exit
    status 2, one line, nothing written)."""
    nested, live = nested_sync_live(tmp)
    irq = nested_sync_live(tmp, "irq")
    lock = nested_sync_live(tmp, "lock-holder")
    busy = (cmdtest.fixture("contention-2"), cmdtest.load("contention-2"))
    for args, detail in [(["--detail", x], [x]) for x in DETAILS] + [
            (["--detail", "vcpu", "--detail", "reason,exit"],
             ["vcpu", "reason", "exit"]),
            (["--detail=preemptor,buckets,nested,sync"],
             ["preemptor", "buckets", "nested", "sync"]),
            (["--detail", "vcpu,all"], ["all"])]:
        for path, d in (busy, (nested, live), irq, lock):
            tag = "detail.%s.%s" % ("+".join(detail),
                                    os.path.basename(path)[:-5])
            rc, out, err = ctx.run(["-f", path, "export", "--prometheus"] +
                                   args)
            e = parse_expo(out)
            ctx.check(rc == 0 and not err and not e.errors,
                      "export.%s.runs" % tag, "%d %r %s" %
                      (rc, err, e.errors[:3]))
            check_doc(ctx, tag, e, d, detail=detail)

    fx = cmdtest.fixture("contention-1")
    prom = os.path.join(tmp, "refused.prom")
    for bad, word in (("bogus", "bogus"), ("vcpu,bogus", "bogus"),
                      ("", "empty"), ("vcpu,", "empty"), (",vcpu", "empty"),
                      ("vcpu,,exit", "empty"), ("VCPU", "VCPU"),
                      ("all,", "empty"), ("vcpus", "vcpus")):
        for o in ([], ["-o", prom]):
            rc, out, err = ctx.run(["-f", fx, "export", "--prometheus",
                                    "--detail", bad] + o)
            ctx.check(rc == 2 and one_line(err) and word in err and
                      err.startswith("vmlat: export: --detail") and
                      not out and not os.path.exists(prom),
                      "export.detail.refused.%r%s" % (bad, ".o" if o
                                                      else ""),
                      "%d %r %r" % (rc, err, out[:80]))
    rc, out, err = ctx.run(["-f", fx, "export", "--prometheus", "--detail"])
    ctx.check(rc == 2 and one_line(err) and not out,
              "export.detail.refused.no_value", "%d %r" % (rc, err))


U1 = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
U2 = "0E6F1D2C-3B4A-4958-A7B6-C5D4E3F2A1B0"
U3 = "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"


def write_cmdline(proc, pid, args):
    os.makedirs(os.path.join(proc, str(pid)), exist_ok=True)
    with open(os.path.join(proc, str(pid), "cmdline"), "wb") as f:
        f.write(b"\0".join(a.encode() for a in
                           ["qemu-system-x86_64"] + args) + b"\0")


def write_domain(lv, name, pid, u=None):
    os.makedirs(lv, exist_ok=True)
    with open(os.path.join(lv, name + ".pid"), "w") as f:
        f.write("%d\n" % pid)
    if u:
        with open(os.path.join(lv, name + ".xml"), "w") as f:
            f.write("<domstatus state='running' pid='%d'>\n"
                    "  <domain type='kvm' id='1'>\n"
                    "    <name>%s</name>\n    <uuid>%s</uuid>\n"
                    "  </domain>\n</domstatus>\n" % (pid, name, u))


def info_of(e, vm):
    """The labels of the vmlat_vm_info series of the VM named VM."""
    got = [l for l, _ in e.by_name.get("vmlat_vm_info", [])
           if l.get("vm") == vm]
    return got[0] if len(got) == 1 else got


def identity_checks(ctx, tmp):
    """The identity labels, from libvirt's status files and QEMU's command
    lines written here: uuid (libvirt's, else -uuid, lowercase; none if
    it is not one), namespace and name (libvirt domains named as KubeVirt
    names them only), vm_pid and vm_id (no UUID, or one two live VMs
    share), each VM's the same whatever the other VMs are."""
    n = [0]

    def export(fx, proc, lv, filt=None):
        n[0] += 1
        rc, out, err = ctx.run(["-f", cmdtest.fixture(fx), "export",
                                "--prometheus"] + ([filt] if filt else []),
                               env={"VMLAT_PROC": proc,
                                    "VMLAT_LIBVIRT_RUN": lv})
        e = parse_expo(out)
        return rc == 0 and not err and not e.errors, e

    # contention-1: web1 (190) a KubeVirt domain with a status file;
    # 191 a libvirt domain without one, its -uuid in upper case; 206
    # and 207 share a -uuid (206 QEMU-named like a KubeVirt domain);
    # 203 has a -uuid that is none.
    proc, lv = os.path.join(tmp, "id1", "proc"), os.path.join(tmp, "id1",
                                                             "lv")
    write_domain(lv, "default_web-7", 190, U1)
    write_domain(lv, "Prod_DB", 191)
    write_cmdline(proc, 190, ["-name", "guest=ignored", "-uuid", U2])
    write_cmdline(proc, 191, ["-name", "guest=Prod_DB", "-uuid", U2])
    write_cmdline(proc, 206, ["-name", "guest=team_db2", "-uuid=" + U3])
    write_cmdline(proc, 207, ["--name", "x", "--uuid", U3])
    write_cmdline(proc, 203, ["-uuid", "not-a-uuid"])
    ok, e = export("contention-1", proc, lv)
    want = {
        "default_web-7": {"vm": "default_web-7", "uuid": U1,
                          "namespace": "default", "name": "web-7"},
        "Prod_DB": {"vm": "Prod_DB", "uuid": U2.lower()},
        "team_db2": {"vm": "team_db2", "uuid": U3, "vm_pid": "206",
                     "vm_id": "3"},
        "x": {"vm": "x", "uuid": U3, "vm_pid": "207", "vm_id": "4"},
        "vm-hog": {"vm": "vm-hog", "vm_pid": "203", "vm_id": "5"},
    }
    got = {k: {a: b for a, b in info_of(e, k).items() if a != "comm"}
           if isinstance(info_of(e, k), dict) else None for k in want}
    ctx.check(ok and got == want, "export.identity.labels",
              {k: (got[k], want[k]) for k in want if got[k] != want[k]})
    check_doc(ctx, "identity", e, cmdtest.load("contention-1"), proc=proc,
              libvirt=lv)

    # A VM's labels are its own: the same exported alone (filtered).
    for vm in ("default_web-7", "x", "vm-hog"):
        ok2, e2 = export("contention-1", proc, lv, vm)
        ctx.check(ok2 and info_of(e2, vm) == info_of(e, vm),
                  "export.identity.filtered.%s" % vm,
                  (info_of(e2, vm), info_of(e, vm)))

    # contention-exited: web1 (190, live) shares its UUID with vm-a
    # (206), which exited: no vm_pid, vm_id for web1; no series of
    # vm-a.
    proc, lv = os.path.join(tmp, "id2", "proc"), os.path.join(tmp, "id2",
                                                             "lv")
    os.makedirs(lv)
    write_cmdline(proc, 190, ["-name", "web1", "-uuid", U1])
    write_cmdline(proc, 206, ["-name", "vm-a", "-uuid", U1])
    ok, e = export("contention-exited", proc, lv)
    d = cmdtest.load("contention-exited")
    exited = {vm["pid"] for vm in d["vms"] if vm["exited"]}
    ctx.check(ok and 206 in exited and
              info_of(e, "web1") == {"vm": "web1", "uuid": U1,
                                     "comm": "qemu-system-x86"} and
              not [l for _, l, _ in e.samples
                   if l.get("vm_pid") in {str(p) for p in exited}],
              "export.identity.exited_uuid", info_of(e, "web1"))
    check_doc(ctx, "identity_exited", e, d, proc=proc, libvirt=lv)

    # The KubeVirt rule: <namespace>_<name>, a DNS-1123 label and
    # subdomain, from libvirt only.
    for dom, ns in (("default_web-7", ("default", "web-7")),
                    ("kube-system_vm.a-1", ("kube-system", "vm.a-1")),
                    ("a_b_c", None), ("Default_web", None), ("_web", None),
                    ("ns_", None), ("-ns_web", None), ("ns_web-", None),
                    ("web", None), ("n" * 64 + "_web", None)):
        lv = os.path.join(tmp, "k8s-%d" % n[0])
        write_domain(lv, dom, 190, U1)
        ok, e = export("contention-1", os.path.join(tmp, "none"), lv, "190")
        got = info_of(e, dom)
        want = {"vm": dom, "uuid": U1, "comm": "qemu-system-x86"}
        if ns:
            want["namespace"], want["name"] = ns
        ctx.check(ok and got == want, "export.identity.kubevirt.%s" % dom,
                  (got, want))


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
    for flt, name in (("web1", "web1"), ("shop-db", "shop-db"),
                      ("id:3", "vm-a"), ("207", "vm-b"),
                      ("vm-hog", "vm-hog")):
        rc, out, err = ctx.run(["-f", fx, "export", "--prometheus", flt])
        e = parse_expo(out)
        vms = {l.get("vm") for _, l, _ in e.samples if "vm" in l}
        ctx.check(rc == 0 and not err and not e.errors and vms == {name} and
                  e.get("vmlat_json_schema") == "3",
                  "export.filter.%s" % flt, "%d %r vms %s %s" %
                  (rc, err, sorted(vms), e.errors[:2]))
    rc, out, err = ctx.run(["-f", fx, "export", "--prometheus", "nosuchvm"])
    e = parse_expo(out)
    vms = {l.get("vm") for _, l, _ in e.samples if "vm" in l}
    ctx.check(rc == 0 and one_line(err) and "nosuchvm" in err and
              not vms and not e.errors and
              e.get("vmlat_json_schema") == "3" and
              "vmlat_vm_info" not in e.help,
              "export.filter.no_match", "%d %r %s" % (rc, err, sorted(vms)))
    # An exited VM is not exported, named or not.
    fx = cmdtest.fixture("contention-exited")
    rc, out, err = ctx.run(["-f", fx, "export", "--prometheus", "vm-a"])
    e = parse_expo(out)
    ctx.check(rc == 0 and one_line(err) and "vm-a" in err and
              not [l for _, l, _ in e.samples if "vm" in l] and
              not e.errors, "export.filter.exited", "%d %r" % (rc, err))


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
        docs = [(name, cmdtest.fixture(name), cmdtest.load(name), None)
                for name in cmdtest.fixture_names()]
        path, d = nested_sync_live(tmp)
        docs.append(("nested-sync-live", path, d, None))
        path, d = nested_sync_live(tmp, "irq")
        docs.append(("irq-live", path, d, None))
        path, d = nested_sync_live(tmp, "lock-holder")
        docs.append(("lock-holder-live", path, d, None))
        for name, path, d, names in docs:
            for detail in ([], ["all"]):
                tag = name + "".join(".detail_" + x for x in detail)
                args = ["-f", path, "export", "--prometheus"] + \
                    ["--detail=" + x for x in detail]
                rc, out, err = ctx.run(args)
                ctx.check(rc == 0 and not err and out,
                          "export.%s.runs" % tag, "%d %r" % (rc, err))
                e = parse_expo(out)
                ctx.check(not e.errors, "export.%s.format" % tag,
                          "; ".join(e.errors[:5]))
                check_doc(ctx, tag, e, d, detail=detail)
                tool_check(ctx, "export.%s.promtool" % tag, tools,
                           tools_why,
                           lambda t, out=out: promtool_check(t[0], out))
                if not detail:
                    budget_check(ctx, tag, e, d)
                served_docs.append((tag, args, None, e))

        # Names: QEMU's -name (pid 190: no UUID, so vm_pid and vm_id),
        # libvirt's over it (pid 191, its UUID from the domain's status
        # file).
        e = parse_expo(ctx.run(["-f", cmdtest.fixture("contention-1"),
                                "export", "--prometheus"])[1])
        ctx.check(e.get("vmlat_vm_info", vm="web1", vm_pid="190",
                        vm_id="1", comm="qemu-system-x86") == "1" and
                  e.get("vmlat_vm_info", vm="shop-db",
                        uuid="6f1b8c2e-4d3a-4b7e-9a51-0c2d3e4f5a6b",
                        comm="qemu-system-x86") == "1",
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
        check_doc(ctx, "synthetic", e, d, names, proc=env["VMLAT_PROC"])
        tool_check(ctx, "export.synthetic.promtool", tools, tools_why,
                   lambda t: promtool_check(t[0], text))
        served_docs.append(("synthetic", args, env, e))
        args = args + ["--detail", "all"]
        rc, text, err = ctx.run(args, env=env)
        e = parse_expo(text)
        ctx.check(rc == 0 and text and not err and not e.errors,
                  "export.synthetic.detail_all.runs", "%d %r %s" %
                  (rc, err, e.errors[:3]))
        check_doc(ctx, "synthetic.detail_all", e, d, names,
                  detail=["all"], proc=env["VMLAT_PROC"])
        tool_check(ctx, "export.synthetic.detail_all.promtool", tools,
                   tools_why, lambda t: promtool_check(t[0], text))
        served_docs.append(("synthetic.detail_all", args, env, e))

        output_file_checks(ctx, tmp)
        filter_checks(ctx)
        error_checks(ctx, tmp)
        detail_checks(ctx, tmp)
        identity_checks(ctx, tmp)
        fleet_checks(ctx, tmp, tools, tools_why)

        if tools:
            node_exporter_checks(ctx, tools, served_docs)
        else:
            tool_check(ctx, "export.node_exporter", tools, tools_why, None)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
