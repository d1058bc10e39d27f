# SPDX-License-Identifier: GPL-2.0
"""vmlat report: its table is the JSON's shares; its diagnosis names, for
each VM it speaks of, the preemptor that took the most (per the JSON),
the exit reason that cost the most, the nested bounces and the clock
sync bound, with the JSON's numbers."""
import json

from cmdtest import doc_names, fixture, load

NAMES = {190: "web1", 191: "shop-db"}


def sections(out):
    """{vm name: its diagnosis text}"""
    res, cur = {}, None
    for line in out.splitlines():
        if line and not line.startswith(" ") and "(pid " in line and \
                line.rstrip().endswith(":"):
            cur = line.split(" (pid ")[0]
            res[cur] = ""
        elif line.startswith("  ") and cur:
            res[cur] += line.strip() + "\n"
        elif not line.strip():
            pass
        else:
            cur = None
    return res


def fmt_ms(ns):
    return ns / 1e6


def run(ctx):
    doc = load("contention-2")
    rc, out, err = ctx.run(["-f", fixture("contention-2"), "report"])
    ctx.check(rc == 0, "report.runs", err)
    sec = sections(out)
    bad = []
    for v in doc["vms"]:
        name = NAMES.get(v["pid"], v["comm"])
        obs = v["observed_ns"]
        t1 = 100.0 * v["steal"]["ready_ns"] / obs
        if t1 < 1.0:
            continue
        text = sec.get(name, "")
        if "lost %.1f%%" % t1 not in text:
            bad.append("%s: no 'lost %.1f%%'" % (name, t1))
        top = max((p for p in v["preemptors"]
                   if p["kind"] not in ("idle", "none")),
                  key=lambda p: p["stolen_ns"], default=None)
        if top is None:
            continue
        if top["kind"] == "host":
            who = "host task %s[%d]" % (top["comm"], top["pid"])
        elif top["kind"] == "vm":
            who = "VM %s" % NAMES.get(top["vm"], top["comm"])
        else:
            who = "its own"
        line = [ln for ln in text.splitlines() if ln.startswith("taken by")]
        if not line or not line[0][len("taken by: "):].startswith(who):
            bad.append("%s: first taker is not %s: %s" % (name, who, line))
        if v["exits"] and 100.0 * v["steal"]["handling_ns"] / obs >= 5:
            x = max(v["exits"], key=lambda x: x["total_ns"])
            beh = [ln for ln in text.splitlines()
                   if ln.startswith("behind it")]
            if not beh or not beh[0].startswith("behind it: %s " % x["name"]) \
                    or "(%d exits" % x["count"] not in beh[0]:
                bad.append("%s: top reason not %s: %s" % (name, x["name"],
                                                         beh))
    ctx.check(not bad, "report.diagnosis_names_the_top_taker_and_reason",
              "; ".join(bad))
    ctx.check("Summary: " in out, "report.summary", out[-300:])

    doc = load("nested-sync")
    rc, out, err = ctx.run(["-f", fixture("nested-sync"), "report"])
    sec = sections(out)
    v = [v for v in doc["vms"] if v["comm"] == "nested_l1"][0]
    t = v["nested"]["totals"]
    text = sec.get("nested_l1", "")
    ctx.check(rc == 0 and ("%d were reflected to L1 and %d handled by the "
                           "host" % (t["l2_exits_l1"], t["l2_exits_l0"]))
              in text.replace("\n", " "), "report.nested_bounces", text)
    s = [v for v in doc["vms"] if v["sync"]][0]
    text = sec.get(s["comm"], "")
    bound_us = s["sync"]["bound_ns"] / 1e3
    want = "%d exchanges" % s["sync"]["exchanges"]
    ctx.check(rc == 0 and "clock sync %s" % s["sync"]["state"] in text and
              want in text and ("%.0f us" % bound_us in text or
                                "%.1f us" % bound_us in text or
                                "%.2f us" % bound_us in text),
              "report.clock_sync", text)

    # The window: two reads; the VMs that ran in it only.
    rc, out, err = ctx.run(["-f", fixture("contention-2"), "-f",
                            fixture("contention-exited"), "report", "-d",
                            "1s"])
    a, b = load("contention-2"), load("contention-exited")
    dt = (b["now_ns"] - a["now_ns"]) / 1e9
    head = out.splitlines()[0] if out else ""
    want = ("over %.2f s" % dt) if dt >= 1 else ("over %.0f ms" % (dt * 1e3))
    ctx.check(rc == 0 and want in head, "report.window", (head, want))
    rc, _, err = ctx.run(["-f", fixture("contention-2"), "report", "-d",
                          "soon"])
    ctx.check(rc == 2 and len(err.strip().splitlines()) == 1 and
              err.startswith("vmlat: report: -d soon: ") and
              err.endswith(" (see vmlat report -h)\n"),
              "report.bad_duration_refused", err)
    json_checks(ctx)


# ---- report --json --------------------------------------------------------

STATES = doc_names("VMLAT_STATES")
STEAL = ["ready_ns", "preempted_ns", "wait_ns", "handling_ns", "kernel_ns",
         "user_ns"]
UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, "us"))


def fmt_ns(ns):
    """@ns as the command writes it for people: 3 digits and a unit."""
    for div, unit in UNITS:
        if ns >= div:
            v = ns / div
            return ("%.0f %s" if v >= 100 else "%.1f %s" if v >= 10
                    else "%.2f %s") % (v, unit)
    return "%d ns" % ns


def sub(b, a):
    """Counter @b less @a, as the command takes it: @b itself if it went
    down (it started again: a top preemptor that left the module's list
    and came back)."""
    return b - a if b >= a else b


def hist_delta(a, b):
    """Histogram @b less @a (None: b itself), bucket by bucket, as the
    command takes the difference of two reads: {count, sum_ns, min_ns,
    max_ns, buckets}."""
    if a is None or b["count"] < a["count"]:
        return b
    old = {lo: c for lo, _, c in a["buckets"]}
    bk = [[lo, hi, sub(c, old.get(lo, 0))] for lo, hi, c in b["buckets"]
          if sub(c, old.get(lo, 0))]
    d = {"count": sum(c for _, _, c in bk),
         "sum_ns": sub(b["sum_ns"], a["sum_ns"]), "buckets": bk}
    if bk:
        d["min_ns"] = max(bk[0][0], b["min_ns"])
        d["max_ns"] = min(bk[-1][1] - 1, b["max_ns"])
    return d


def quantile(h, q):
    """The upper bound of the bucket that holds quantile @q of @h, at
    most its largest sample; None for no sample."""
    if not h["count"] or not h["buckets"]:
        return None
    want = max(1, int(q * h["count"] + 0.999999))
    seen = 0
    for _, hi, c in h["buckets"]:
        seen += c
        if seen >= want:
            return min(hi - 1, h["max_ns"])
    return h["max_ns"]


def vm_window(a, v):
    """VM @v of a later document over the window from document @a (None:
    its totals), as Python reads the two: {field: value}."""
    o = None
    if a is not None:
        o = [x for x in a["vms"] if (x["id"], x["pid"]) == (v["id"],
                                                            v["pid"])]
        o = o[0] if o and o[0]["observed_ns"] <= v["observed_ns"] else None

    def less(key, member=None):
        x, y = v[key], o[key] if o else 0
        if member:
            x, y = x[member], y[member] if o else 0
        return sub(x, y)
    w = {"observed_ns": less("observed_ns"), "exits": less("exits_total"),
         "time_ns": {s: less(s + "_ns") for s in STATES},
         "steal": {k: less("steal", k) for k in STEAL},
         "preemptors_other_ns": less("preemptors_other_ns")}
    pre = {}
    for p in v["preemptors"]:
        key = (p["kind"], p["pid"], p["cpu"])
        q = [x for x in (o["preemptors"] if o else [])
             if (x["kind"], x["pid"], x["cpu"]) == key]
        d = (sub(p["stolen_ns"], q[0]["stolen_ns"] if q else 0),
             sub(p["slices"], q[0]["slices"] if q else 0))
        if d[0]:
            pre[key] = d
    w["preemptors"] = pre
    ex = {}
    for x in v["exits"]:
        q = [y for y in (o["exits"] if o else [])
             if (y["isa"], y["code"]) == (x["isa"], x["code"])]
        d = (sub(x["count"], q[0]["count"] if q else 0),
             sub(x["total_ns"], q[0]["total_ns"] if q else 0))
        if d[0]:
            ex[x["isa"], x["code"]] = d
    w["exit_reasons"] = ex
    w["latency"] = {k: hist_delta(o["histograms"][k] if o else None, h)
                    for k, h in v["histograms"].items()}
    return w


def dotted_keys(x, path=""):
    """The keys with a dot anywhere in the JSON value @x."""
    if isinstance(x, dict):
        return [path + "." + k for k in x if "." in k] + [
            d for k, y in x.items() for d in dotted_keys(y, path + "/" + k)]
    if isinstance(x, list):
        return [d for y in x for d in dotted_keys(y, path + "[]")]
    return []


def table_rows(out):
    """The text report's table: [the words of each row], in its order."""
    rows, on = [], False
    for line in out.splitlines():
        if line.startswith("VM "):
            on = True
        elif on and not line.strip():
            break
        elif on and not line.startswith("("):
            rows.append(line.split())
    return rows


def bad_vm(j, w, v, text_row, text_sec):
    """What of VM @j (report --json's) differs from Python's reading @w of
    document VM @v, the text report's table row and diagnosis."""
    bad = []
    obs = w["observed_ns"]
    for k, want in (("pid", v["pid"]), ("vm_id", v["id"]),
                    ("vcpus", len(v["vcpus"])), ("exited", v["exited"]),
                    ("observed_ns", obs), ("exits", w["exits"]),
                    ("time_ns", w["time_ns"]), ("steal", w["steal"]),
                    ("preemptors_other_ns", w["preemptors_other_ns"])):
        if j.get(k) != want:
            bad.append("%s %r != %r" % (k, j.get(k), want))
    for s in STATES:
        if abs(j["shares"][s] - w["time_ns"][s] / obs) > 1e-12:
            bad.append("share %s %r" % (s, j["shares"][s]))
    pre = {(p["kind"], p["pid"] or 0 if p["kind"] != "idle" else 0,
            p["cpu"] if p["cpu"] is not None else -1):
           (p["stolen_ns"], p["slices"]) for p in j["preemptors"]}
    if pre != w["preemptors"] or [p["stolen_ns"] for p in j["preemptors"]] \
            != sorted((p["stolen_ns"] for p in j["preemptors"]),
                      reverse=True):
        bad.append("preemptors %r != %r" % (pre, w["preemptors"]))
    ex = {(x["isa"], x["code"]): (x["count"], x["total_ns"])
          for x in j["exit_reasons"]}
    if ex != w["exit_reasons"] or [x["total_ns"] for x in
                                   j["exit_reasons"]] != sorted(
            (x["total_ns"] for x in j["exit_reasons"]), reverse=True):
        bad.append("exit_reasons %r != %r" % (ex, w["exit_reasons"]))
    for k in ("preempt", "wait", "exit"):
        h, jh = w["latency"][k], j["latency"][k]
        want = {"count": h["count"], "sum_ns": h["sum_ns"],
                "min_ns": h.get("min_ns") if h["count"] else None,
                "max_ns": h.get("max_ns") if h["count"] else None,
                "p50_ns": quantile(h, 0.5), "p90_ns": quantile(h, 0.9),
                "p99_ns": quantile(h, 0.99), "p99_9_ns": quantile(h, 0.999)}
        if jh != want:
            bad.append("latency %s %r != %r" % (k, jh, want))
    # the text report's table: its rounded shares and p99 are these
    p99 = j["latency"]["preempt"]["p99_ns"]
    want = [j["vm"], str(v["pid"]), str(len(v["vcpus"]))] + \
        fmt_ns(obs).split() + ["%.1f" % (100.0 * j["shares"][s]) for s in
                               ("guest", "preempted", "wait", "kernel",
                                "user", "idle", "blocked")] + \
        (fmt_ns(p99).split() if p99 else ["-"]) + \
        (["(exited)"] if v["exited"] else [])
    if text_row != want:
        bad.append("table %r != %r" % (text_row, want))
    # the diagnosis: the text report's lines of the VM, their marks off
    lines = [("- " if i == 0 else "") + t for f in j["findings"]
             for i, t in enumerate(f["text"])]
    if "\n".join(lines) + "\n" * bool(lines) != text_sec.get(j["vm"], ""):
        bad.append("findings %r != %r" % (lines, text_sec.get(j["vm"])))
    return bad


def json_checks(ctx):
    """report --json on recorded documents, alone (totals) and in pairs
    (-d: a window): one JSON document, no key with a dot; every figure
    Python's own reading of the documents, and the text report's."""
    runs = [(None, n) for n in ("contention-2", "nested-sync", "many-vms")]
    runs += [("contention-1", "contention-2"),
             ("contention-2", "contention-exited")]
    for first, later in runs:
        args = (["-f", fixture(first)] if first else []) + \
            ["-f", fixture(later), "report"] + (["-d", "1"] if first else [])
        tag = "%s%s" % (first + "+" if first else "", later)
        rc, out, err = ctx.run(args + ["--json"])
        try:
            j = json.loads(out)
        except ValueError as e:
            ctx.check(False, "report.json.%s.parses" % tag, "%s %s %s" % (
                e, out[:200], err))
            continue
        rc2, text, err2 = ctx.run(args)
        a = load(first) if first else None
        b = load(later)
        sec, rows = sections(text), table_rows(text)
        ctx.check(rc == 0 and not err and rc2 == 0 and
                  not dotted_keys(j) and sorted(j) ==
                  ["dropped", "summary", "version", "vms",
                   "vms_without_time", "window_ns"],
                  "report.json.%s.one_document" % tag,
                  (rc, err, dotted_keys(j)[:3], sorted(j)))
        bad = []
        if j["window_ns"] != (b["now_ns"] - a["now_ns"] if a else None):
            bad.append("window_ns %r" % j["window_ns"])
        if j["version"] != b["version"] or j["dropped"] != {
                "vms": b["dropped"]["vms"], "vcpus": b["dropped"]["vcpus"]}:
            bad.append("version, dropped %r %r" % (j["version"],
                                                   j["dropped"]))
        docs = {(v["id"], v["pid"]): v for v in b["vms"]}
        wins = {k: vm_window(a, v) for k, v in docs.items()}
        ran = {k for k, w in wins.items() if w["observed_ns"]}
        got = {(x["vm_id"], x["pid"]) for x in j["vms"]}
        if got != ran or j["vms_without_time"] != len(docs) - len(ran):
            bad.append("VMs %r, want %r" % (sorted(got), sorted(ran)))
        lost = [(x["steal"]["ready_ns"] + x["steal"]["handling_ns"]) /
                x["observed_ns"] for x in j["vms"]]
        if lost != sorted(lost, reverse=True):
            bad.append("not the most lost first: %r" % lost)
        if len(rows) != len(j["vms"]):
            bad.append("%d rows in the text's table" % len(rows))
        for x, row in zip(j["vms"], rows):
            k = (x["vm_id"], x["pid"])
            if k in docs:
                bad += ["%s: %s" % (x["vm"], e) for e in bad_vm(
                    x, wins[k], docs[k], row, sec)]
            if x["nested"] is not None and not a:
                t = docs[k]["nested"]["totals"]
                bad += ["%s: nested %s" % (x["vm"], f) for f in t
                        if x["nested"].get(f) != t[f]]
            if (x["sync"] is None) != (docs[k]["sync"] is None) or \
                    (x["sync"] and not a and any(
                        x["sync"][f] != docs[k]["sync"][f] for f in
                        ("state", "exchanges", "bound_ns", "drift_ppb"))):
                bad.append("%s: sync %r" % (x["vm"], x["sync"]))
        # the summary: the text's, and the takers of the preemptors
        s = j["summary"]
        line = [ln for ln in text.splitlines() if ln.startswith("Summary: ")]
        takers = {}
        for x in j["vms"]:
            seen = set()
            for p in x["preemptors"]:
                if p["kind"] == "none":
                    continue
                who = "VMs' own vCPUs" if p["kind"] == "same_vm" \
                    else p["who"]
                t = takers.setdefault(who, [0, 0])
                t[0] += p["stolen_ns"]
                t[1] += who not in seen
                seen.add(who)
        top = j["vms"][0]
        if s["text"] != (line[0][len("Summary: "):] if line else None) or \
                {t["who"]: [t["stolen_ns"], t["vms"]] for t in s["takers"]} \
                != takers or s["most_lost"] != {
                    "vm": top["vm"], "pid": top["pid"],
                    "vm_id": top["vm_id"], "lost_ns":
                    top["steal"]["ready_ns"] + top["steal"]["handling_ns"]}:
            bad.append("summary %r" % s)
        ctx.check(not bad, "report.json.%s.figures_equal_the_documents_and_"
                  "text" % tag, "; ".join(bad[:4]))
    rc, out, err = ctx.run(["-f", fixture("contention-2"), "report",
                            "--json", "no-such-vm"])
    ctx.check(rc == 1 and not out and err == "vmlat report: no VM "
              "no-such-vm\n", "report.json.no_vm", (rc, out[:100], err))
    rc, out, err = ctx.run(["report", "-h"])
    ctx.check(rc == 0 and "--json" in out.splitlines()[0] and
              "\n  --json " in out, "report.json.usage", out)
