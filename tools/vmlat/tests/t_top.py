# SPDX-License-Identifier: GPL-2.0
"""vmlat top -b on two recorded reads: each VM's shares, exits per second
and vCPU count are those of the difference of the two documents as
Python reads them, in the default layout and the wide one (-w, with the
worst preemptor); sort orders, -p, -n, names; the default layout within
80 columns on every recorded document, names cut to fit."""
import csv
import io
import json
import os
import shutil
import subprocess
import tempfile
import unicodedata

import fleet
from cmdtest import doc_names, fixture, fixture_names, load
from t_escape import CONTROL

STATES = doc_names("VMLAT_STATES")
COLS = ["GUEST%", "KERN%", "USER%", "PREEMPT%", "WAIT%", "IDLE%", "BLK%"]
# The default layout's width, and its name column's.
TEXT_COLS = 80
NAME_COLS = 13


def parse(out):
    """The refreshes of top -b, in either layout: [{"title":...,
    "rows":[{col: value}]}], and the last header line."""
    blocks, cur, hdr = [], None, None
    for line in out.splitlines():
        if line.startswith("vmlat top - "):
            cur = {"title": line, "rows": []}
            blocks.append(cur)
        elif line.startswith("VM "):
            hdr = line
        elif line.strip() and cur is not None:
            f = line.split()
            # VM PID VCPUS 7 shares EXITS/s, then X (exited) in the
            # default layout; P99 (2 words or -) TOP... in the wide one.
            row = {"VM": f[0]}
            row["PID"] = int(f[1])
            row["VCPUS"] = int(f[2])
            for k, c in enumerate(COLS):
                row[c] = float(f[3 + k])
            row["EXITS/s"] = int(f[10])
            rest = f[11:]
            if "TOP PREEMPTOR" in hdr:
                row["exited"] = rest[-1:] == ["(exited)"]
                rest = rest[:-1] if row["exited"] else rest
                i = 1 if rest[0] == "-" else 2
                row["P99"] = " ".join(rest[:i])
                row["TOP"] = " ".join(rest[i:])
            else:
                row["exited"] = rest == ["X"]
                row["extra"] = rest if rest != ["X"] else []
            cur["rows"].append(row)
    return blocks, hdr


def cols(text):
    """@text's width on a terminal: a wide character (CJK) 2 columns, a
    combining or format one none, as glibc's wcwidth() counts them."""
    w = 0
    for ch in text:
        if unicodedata.combining(ch) or \
                unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return w


def fit(name, n):
    """@name in @n columns, as top's default layout shows it: padded, or
    cut with a '+' in its last column."""
    if cols(name) <= n:
        return name + " " * (n - cols(name))
    out, w = "", 0
    for ch in name:
        if w + cols(ch) > n - 1:
            break
        out += ch
        w += cols(ch)
    return out + "+" + " " * (n - 1 - w)


def expect(a, b):
    """{(pid, vm name from comm)...}: Python's delta of fixtures a, b."""
    dt = (b["now_ns"] - a["now_ns"]) / 1e9
    old = {(v["id"], v["pid"]): v for v in a["vms"]}
    exp = {}
    for v in b["vms"]:
        o = old.get((v["id"], v["pid"]))
        obs = v["observed_ns"] - (o["observed_ns"] if o else 0)
        e = {"VCPUS": len(v["vcpus"]),
             "EXITS/s": (v["exits_total"] - (o["exits_total"] if o else 0))
             / dt}
        for s, c in zip(STATES, COLS):
            d = v[s + "_ns"] - (o[s + "_ns"] if o else 0)
            e[c] = 100.0 * d / obs if obs else 0.0
        exp[v["pid"], v["id"]] = e
    return exp


def bad_rows(rows, by_pid):
    """What in @rows of a refresh differs from Python's delta @by_pid."""
    bad = []
    for r in rows:
        e = by_pid.get(r["PID"])
        if e is None:
            bad.append("pid %d unknown" % r["PID"])
            continue
        for c in COLS:
            if abs(r[c] - e[c]) > 0.051:
                bad.append("%s %s %.1f != %.2f" % (r["VM"], c, r[c], e[c]))
        if r["VCPUS"] != e["VCPUS"]:
            bad.append("%s vcpus %d" % (r["VM"], r["VCPUS"]))
        if abs(r["EXITS/s"] - e["EXITS/s"]) > 0.51:
            bad.append("%s exits/s %d != %.1f" % (r["VM"], r["EXITS/s"],
                                                   e["EXITS/s"]))
    return bad


def run(ctx):
    a, b = load("contention-1"), load("contention-2")
    rc, out, err = ctx.run(["-f", fixture("contention-1"), "-f",
                            fixture("contention-2"), "top", "-b", "-n", "1"])
    ctx.check(rc == 0, "top.runs", err)
    blocks, _ = parse(out)
    ctx.check(len(blocks) == 1, "top.one_refresh", out[:300])
    if not blocks:
        return
    rows = blocks[0]["rows"]
    exp = expect(a, b)
    ctx.check(len(rows) == len(exp), "top.a_row_per_vm",
              "%d rows, %d VMs" % (len(rows), len(exp)))
    # A VM by its pid (two VMs of one pid would need the id: none here).
    by_pid = {p: e for (p, _), e in exp.items()}
    ctx.check(not bad_rows(rows, by_pid),
              "top.shares_rates_vcpus_equal_the_json_delta",
              "; ".join(bad_rows(rows, by_pid)))
    wide_checks(ctx, a, b, by_pid)
    rc, out, err = ctx.run(["top", "-h"])
    ctx.check(rc == 0 and "\n  -w " in out and
              max(cols(ln) for ln in out.splitlines()) <= TEXT_COLS,
              "top.usage_tells_w_in_80_columns", (rc, out[:300], err))
    width_checks(ctx)
    name_checks(ctx)
    steal = [r["PREEMPT%"] + r["WAIT%"] for r in rows]
    ctx.check(steal == sorted(steal, reverse=True), "top.sorted_by_steal",
              steal)
    names = {r["PID"]: r["VM"] for r in rows}
    ctx.check(names.get(190) == "web1" and names.get(191) == "shop-db",
              "top.names_from_cmdline_and_libvirt", names)

    rc, out, _ = ctx.run(["-f", fixture("contention-1"), "-f",
                          fixture("contention-2"), "top", "-b", "-n", "1",
                          "-s", "name"])
    rows = parse(out)[0][0]["rows"] if rc == 0 else []
    vms = [r["VM"] for r in rows]
    ctx.check(rc == 0 and vms == sorted(vms), "top.sort_by_name", vms)
    rc, out, _ = ctx.run(["-f", fixture("contention-1"), "-f",
                          fixture("contention-2"), "top", "-b", "-n", "1",
                          "-s", "exits", "-r"])
    rows = parse(out)[0][0]["rows"] if rc == 0 else []
    ex = [r["EXITS/s"] for r in rows]
    ctx.check(rc == 0 and ex == sorted(ex), "top.sort_by_exits_reversed", ex)

    rc, out, _ = ctx.run(["-f", fixture("contention-1"), "-f",
                          fixture("contention-2"), "top", "-b", "-n", "1",
                          "-p", "190,207"])
    pids = sorted(r["PID"] for r in parse(out)[0][0]["rows"]) if rc == 0 \
        else []
    ctx.check(pids == [190, 207], "top.pid_filter", pids)

    # -n 2 over three reads: two refreshes; the VMs that exited in the
    # second interval are marked so: X in the default layout, (exited) in
    # the wide one.
    three = ["-f", fixture("contention-1"), "-f", fixture("contention-2"),
             "-f", fixture("contention-exited"), "top", "-b", "-n", "2"]
    ex_pids = {v["pid"] for v in load("contention-exited")["vms"]
               if v["exited"]}
    for opts, tag in (([], ""), (["-w"], ".wide")):
        rc, out, _ = ctx.run(three + opts)
        blocks = parse(out)[0] if rc == 0 else []
        marked = {r["PID"] for r in blocks[-1]["rows"] if r["exited"]} \
            if len(blocks) == 2 else set()
        ctx.check(len(blocks) == 2 and marked == ex_pids,
                  "top.two_refreshes_and_exited_vms" + tag,
                  "%d blocks, marked %s, json %s" % (len(blocks), marked,
                                                     ex_pids))

    # -o json and -o csv: the same numbers unrounded, for scripts
    two = ["-f", fixture("contention-1"), "-f", fixture("contention-2")]
    rc, out, err = ctx.run(two + ["top", "-o", "json"])
    try:
        docs = [json.loads(line) for line in out.splitlines()]
    except ValueError as e:
        docs, err = [], "%s: %s" % (e, out[:200])
    rc2, out2, err2 = ctx.run(two + ["top", "-o", "csv"])
    lines = list(csv.DictReader(io.StringIO(out2))) if rc2 == 0 else []
    bad = []
    for src, vms in (("json", docs[0]["vms"] if len(docs) == 1 else []),
                     ("csv", lines)):
        if len(vms) != len(exp):
            bad.append("%s: %d VMs, %d in the JSON" % (src, len(vms),
                                                       len(exp)))
        for v in vms:
            e = by_pid.get(int(v["pid"]))
            if e is None:
                bad.append("%s: pid %s unknown" % (src, v["pid"]))
                continue
            for s, c in zip(STATES, COLS):
                if abs(float(v[s + "_pct"]) - e[c]) > 0.001:
                    bad.append("%s: %s %s %s != %.4f" % (src, v["vm"], s,
                                                         v[s + "_pct"], e[c]))
            if int(v["vcpus"]) != e["VCPUS"] or \
                    abs(float(v["exits_per_s"]) - e["EXITS/s"]) > 0.001:
                bad.append("%s: %s vcpus %s exits/s %s" % (
                    src, v["vm"], v["vcpus"], v["exits_per_s"]))
    ctx.check(rc == 0 and rc2 == 0 and not bad,
              "top.json_and_csv_equal_the_json_delta",
              "; ".join(bad[:5]) + err + err2)
    rc, out, err = ctx.run(two + ["top", "-o", "xml"])
    ctx.check(rc == 2 and err == "vmlat: top: -o xml: text, json or csv "
              "(see vmlat top -h)\n" and not out, "top.bad_output_refused",
              (rc, err))

    # Saved documents without -n: a refresh per pair, then the end (the
    # last file is not read again and again), in every output.
    files = ["contention-1", "contention-2", "contention-exited"]
    for n in (1, 2, 3):
        args = [a for f in files[:n] for a in ("-f", fixture(f))]
        for opts, tag in ((["-b"], ""), (["-b", "-w"], ".wide"),
                          (["-o", "json"], ".json")):
            try:
                rc, out, err = ctx.run(args + ["top"] + opts, timeout=20)
            except subprocess.TimeoutExpired:
                rc, out, err = -1, "", "still running after 20 s"
            refreshes = len(out.splitlines()) if tag == ".json" \
                else len(parse(out)[0])
            ctx.check(rc == 0 and refreshes == max(1, n - 1),
                      "top.ends_after_%d_files%s" % (n, tag),
                      "exit %d, %d refreshes: %s" % (rc, refreshes,
                                                     err[:200]))
    # -d, as procps top and kvm_stat take it, is -i
    outs = [ctx.run(["-f", fixture("contention-1"), "top", "-b", "-n", "1",
                     opt, "0.5"]) for opt in ("-i", "-d")]
    ctx.check(outs[0][0] == 0 and outs[0] == outs[1], "top.d_is_i",
              [o[2] for o in outs])
    for bad_args, name in ((["-s", "bogus"], "sort_key"),
                           (["-i", "fast"], "interval"),
                           (["-d", "0.05"], "delay"),
                           (["-n", "0"], "count"),
                           (["-p", "x"], "pid")):
        rc, out, err = ctx.run(["-f", fixture("contention-1"), "top", "-b"]
                               + bad_args)
        ctx.check(rc == 2 and len(err.strip().splitlines()) == 1
                  and err.startswith("vmlat: top: %s %s: " % tuple(bad_args))
                  and err.endswith(" (see vmlat top -h)\n")
                  and not out, "top.bad_%s_refused" % name, (rc, err))


def width_checks(ctx):
    """The default layout fits 80 columns: every line of top -b on every
    recorded document, alone (with -a, a row per VM) and in pairs, by the
    longest title's order; on the 1024-VM document with KubeVirt's names
    (cut); its rows of 11 fields, 12 with X."""
    tmp = tempfile.mkdtemp(prefix="vmlat_top80.")
    try:
        path, doc = fleet.fleet_doc(tmp)
        lv = fleet.fleet_libvirt(tmp, doc)
        runs = [([fixture(n)], None) for n in fixture_names()]
        runs += [([fixture("contention-1"), fixture("contention-2")], None),
                 ([fixture("contention-2"), fixture("contention-exited")],
                  None),
                 ([path], {"VMLAT_LIBVIRT_RUN": lv,
                           "VMLAT_PROC": tmp + "/none"})]
        for files, env in runs:
            args = [x for f in files for x in ("-f", f)]
            tag = "+".join(os.path.basename(f)[:-5] for f in files)
            for opts in (["-a"], ["-a", "-s", "preempted", "-r"]):
                rc, out, err = ctx.run(args + ["top", "-b"] + opts, env=env)
                lines = out.splitlines()
                wide = [ln for ln in lines if cols(ln) > TEXT_COLS]
                blocks, hdr = parse(out) if rc == 0 else ([], "")
                rows = [r for b in blocks for r in b["rows"]]
                odd = [r for r in rows if r["extra"]]
                ctx.check(rc == 0 and rows and not wide and not odd and
                          hdr.startswith("VM "),
                          "top.fits_%d_columns.%s%s" % (
                              TEXT_COLS, tag, "".join(opts)),
                          "exit %d, %d rows, %d lines wider: %r %r %s" % (
                              rc, len(rows), len(wide), wide[:2], odd[:2],
                              err[:200]))
                if env:
                    break
        names = {r["PID"]: r["VM"] for r in rows}
        want = {v["pid"]: fit(fleet.fleet_domain(v)[0], NAME_COLS).strip()
                for v in doc["vms"]}
        ctx.check(names == want, "top.fits_80_columns.names_cut",
                  [(p, names.get(p), want[p]) for p in list(want)[:3]])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def name_checks(ctx):
    """Names wider than the name column, of wide (CJK) and combining
    characters and with terminal escapes: cut to its 13 columns with a
    '+', escaped; the rows stay aligned and within 80 columns. -w shows
    them whole, aligned by the widest."""
    # libvirt's domain names, from its pid files: any bytes but '/'.
    names = {190: "数据库服务器生产环境".encode(),
             191: "e\u0301te\u0301-prod-database".encode(),
             206: b"\x1b]0;pwned\x07-long-name\x9b",
             207: b"db2"}
    shown = {p: CONTROL.sub("?", n.decode("utf-8", "replace")
                            .replace("\ufffd", "?"))
             for p, n in names.items()}
    tmp = tempfile.mkdtemp(prefix="vmlat_topnames.")
    try:
        lv = os.path.join(tmp, "libvirt")
        os.makedirs(lv)
        for pid, name in names.items():
            with open(os.path.join(os.fsencode(lv), name + b".pid"),
                      "wb") as f:
                f.write(b"%d\n" % pid)
        env = {"VMLAT_LIBVIRT_RUN": lv, "VMLAT_PROC": tmp + "/none"}
        two = ["-f", fixture("contention-1"), "-f", fixture("contention-2"),
               "top", "-b", "-p", ",".join(str(p) for p in names)]
        for opts, tag in (([], ""), (["-w"], ".wide")):
            rc, out, err = ctx.run(two + opts, env=env)
            lines = out.splitlines()
            hdr = [ln for ln in lines if ln.startswith("VM ")]
            rows = [ln for ln in lines[2:] if ln.strip()]
            n = max(cols(s) for s in shown.values()) if tag else NAME_COLS
            bad = [ln for ln in rows
                   if not any(ln.startswith(fit(s, n) + " ") and
                              ln[len(fit(s, n)):].split()[0] == str(p)
                              for p, s in shown.items())]
            # aligned: each row's pid ends where the header's PID does
            end = cols(hdr[0][:hdr[0].index("PID") + 3]) if hdr else -1
            moved = [ln for ln in rows
                     if cols(ln[:ln.index(" %s " % ln.split()[1]) +
                                len(ln.split()[1]) + 1]) != end]
            ok = rc == 0 and len(rows) == len(names) and not bad and \
                not moved and not CONTROL.findall(out)
            if not tag:
                ok = ok and max(cols(ln) for ln in lines) <= TEXT_COLS
            ctx.check(ok, "top.names_cut_escaped_aligned" + tag,
                      "exit %d, %r, misaligned %r: %s" % (rc, bad[:2],
                                                          moved[:2], err))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def preemptor(p, doc):
    """Who preemptor @p (of document @doc) is, as the command says it."""
    names = {190: "web1", 191: "shop-db"}
    if p["kind"] == "host":
        return "host task %s[%d]" % (p["comm"], p["pid"])
    if p["kind"] == "vm":
        vm = [v for v in doc["vms"] if v["pid"] == p["vm"]]
        return "VM %s (" % names.get(p["vm"], vm[0]["comm"] if vm else
                                     p["comm"])
    if p["kind"] == "same_vm":
        return "its own "
    if p["kind"] == "idle":
        return "CPU %d waking from idle" % p["cpu"]
    return "nothing (%s)" % p["comm"]


def wide_checks(ctx, a, b, by_pid):
    """-w: the default layout's columns, then P99-PREEMPT and TOP
    PREEMPTOR: the preemptor that took the most in the interval (Python's
    delta of the two documents) and its share."""
    rc, out, err = ctx.run(["-f", fixture("contention-1"), "-f",
                            fixture("contention-2"), "top", "-b", "-w"])
    blocks, hdr = parse(out) if rc == 0 else ([], "")
    rows = blocks[0]["rows"] if len(blocks) == 1 else []
    ctx.check(rc == 0 and rows and "P99-PREEMPT" in hdr and
              "TOP PREEMPTOR" in hdr and len(rows) == len(by_pid) and
              not bad_rows(rows, by_pid), "top.wide.columns_and_shares",
              "; ".join(bad_rows(rows, by_pid)) + err + hdr)
    old = {(v["id"], v["pid"]): v for v in a["vms"]}
    bad = []
    for v in b["vms"]:
        o = old.get((v["id"], v["pid"]), {"preemptors": [],
                                          "observed_ns": 0})
        best, obs = None, v["observed_ns"] - o["observed_ns"]
        for p in v["preemptors"]:
            q = [x for x in o["preemptors"] if (x["kind"], x["pid"],
                                                x["cpu"]) ==
                 (p["kind"], p["pid"], p["cpu"])]
            d = p["stolen_ns"] - (q[0]["stolen_ns"] if q else 0)
            if d > 0 and (best is None or d > best[1]):
                best = (p, d)
        r = [r for r in rows if r["PID"] == v["pid"]]
        want = "-" if best is None else preemptor(best[0], b)
        pct = "" if best is None else " %.1f%%" % (100.0 * best[1] / obs)
        if not r or not r[0]["TOP"].startswith(want) or \
                not r[0]["TOP"].endswith(pct):
            bad.append("%d: %s, not %s...%s" % (
                v["pid"], r[0]["TOP"] if r else None, want, pct))
    ctx.check(rc == 0 and not bad, "top.wide.top_preemptor_of_the_delta",
              "; ".join(bad))
