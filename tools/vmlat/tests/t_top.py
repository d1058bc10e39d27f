# SPDX-License-Identifier: GPL-2.0
"""vmlat top -b on two recorded reads: each VM's shares, exits per second
and vCPU count are those of the difference of the two documents as
Python reads them; sort orders, -p, -n, names."""
import csv
import io
import json
import subprocess

from cmdtest import doc_names, fixture, load

STATES = doc_names("VMLAT_STATES")
COLS = ["GUEST%", "KERN%", "USER%", "PREEMPT%", "WAIT%", "IDLE%", "BLK%"]


def parse(out):
    """The refreshes of top -b: [{"title":..., "rows":[{col: value}]}]."""
    blocks, cur, hdr = [], None, None
    for line in out.splitlines():
        if line.startswith("vmlat top - "):
            cur = {"title": line, "rows": []}
            blocks.append(cur)
        elif line.startswith("VM "):
            hdr = line
        elif line.strip() and cur is not None:
            f = line.split()
            # VM PID VCPUS 7 shares EXITS/s P99 (2 words or -) TOP...
            i = 0
            row = {"VM": f[0]}
            row["PID"] = int(f[1])
            row["VCPUS"] = int(f[2])
            for k, c in enumerate(COLS):
                row[c] = float(f[3 + k])
            row["EXITS/s"] = int(f[10])
            rest = f[11:]
            i = 1 if rest[0] == "-" else 2
            row["P99"] = " ".join(rest[:i])
            row["TOP"] = " ".join(rest[i:])
            cur["rows"].append(row)
    return blocks, hdr


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
    ctx.check(not bad, "top.shares_rates_vcpus_equal_the_json_delta",
              "; ".join(bad))
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
    # second interval are marked so.
    rc, out, _ = ctx.run(["-f", fixture("contention-1"), "-f",
                          fixture("contention-2"), "-f",
                          fixture("contention-exited"), "top", "-b", "-n",
                          "2"])
    blocks = parse(out)[0] if rc == 0 else []
    ex_pids = {v["pid"] for v in load("contention-exited")["vms"]
               if v["exited"]}
    marked = {int(line.split()[1]) for line in out.splitlines()[-10:]
              if line.endswith("(exited)")}
    ctx.check(len(blocks) == 2 and marked == ex_pids,
              "top.two_refreshes_and_exited_vms", "%d blocks, marked %s, "
              "json %s" % (len(blocks), marked, ex_pids))

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
    # last file is not read again and again).
    files = ["contention-1", "contention-2", "contention-exited"]
    for n in (1, 2, 3):
        args = [a for f in files[:n] for a in ("-f", fixture(f))]
        try:
            rc, out, err = ctx.run(args + ["top", "-b"], timeout=20)
        except subprocess.TimeoutExpired:
            rc, out, err = -1, "", "still running after 20 s"
        blocks = parse(out)[0]
        ctx.check(rc == 0 and len(blocks) == max(1, n - 1),
                  "top.ends_after_%d_files" % n,
                  "exit %d, %d refreshes: %s" % (rc, len(blocks), err[:200]))
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
