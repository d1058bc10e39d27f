# SPDX-License-Identifier: GPL-2.0
"""vmlat hist: every row counts exactly the JSON buckets of its range;
--ns prints the JSON's buckets; -d (two reads) the differences; nested
kinds only for VMs that run L2; exit:REASON."""
from cmdtest import doc_names, fixture, load

UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def ns_of(text):
    v, u = text.split()
    return float(v) * UNITS[u]


def parse(out):
    """{(vm name, title): {"count": n, "rows": [(lo_text, count)],
    "ns": [(lo, hi, count)]}}"""
    res, cur = {}, None
    for line in out.splitlines():
        if line.startswith("# ") and "(pid " in line:
            name = line[2:line.index(" (pid ")]
            title = line.split("): ", 1)[1].split(" - ")[0]
            cur = res.setdefault((name, title), {"count": 0, "rows": [],
                                                 "ns": []})
        elif line.startswith("# ") and " samples," in line:
            cur["count"] = int(line.split()[1])
        elif "|" in line and cur is not None:
            left = line.split("|")[0].split()
            cur["rows"].append((int(left[-1]), left[:-1]))
        elif cur is not None and line.strip() and line.split()[0].isdigit():
            f = [int(x) for x in line.split()]
            cur["ns"].append(tuple(f))
    return res


def row_bounds(words):
    """('4.10 us - 8.19 us' words) -> lo, hi in ns (powers of two)."""
    txt = " ".join(words)
    lo, hi = txt.split(" - ")
    lo = 0 if lo.strip() == "0" else ns_of(lo)
    return lo, None if hi.strip() == "..." else ns_of(hi)


def run(ctx):
    doc = load("contention-2")
    rc, out, err = ctx.run(["-f", fixture("contention-2"), "hist"])
    ctx.check(rc == 0, "hist.runs", err)
    got = parse(out)
    bad = []
    names = {190: "web1", 191: "shop-db"}
    for v in doc["vms"]:
        name = names.get(v["pid"], v["comm"])
        for kind in ("preempt", "wait", "exit"):
            h = v["histograms"][kind]
            g = got.get((name, kind))
            if g is None:
                bad.append("%s %s missing" % (name, kind))
                continue
            if g["count"] != h["count"] or \
                    sum(c for c, _ in g["rows"]) != h["count"]:
                bad.append("%s %s count %d" % (name, kind, g["count"]))
            for c, words in g["rows"]:
                lo, hi = row_bounds(words)
                # the powers of two are printed to 3 digits: match the
                # JSON's buckets by the printed bound, within 0.5%
                want = sum(b[2] for b in h["buckets"]
                           if b[0] >= lo * 0.995 and
                           (hi is None or b[0] < hi * 0.995))
                if want != c:
                    bad.append("%s %s %s: %d != %d" % (name, kind,
                                                       " ".join(words), c,
                                                       want))
        if (name, "l2_exit_l0") in got:
            bad.append("%s: L2 rows without nested vCPUs" % name)
    ctx.check(not bad, "hist.rows_count_the_json_buckets", "; ".join(bad))

    rc, out, _ = ctx.run(["-f", fixture("contention-2"), "hist", "--ns",
                          "-k", "wait", "web1"])
    g = parse(out).get(("web1", "wait"), {"ns": []})
    v = [v for v in doc["vms"] if v["pid"] == 190][0]
    ctx.check(rc == 0 and [list(b) for b in g["ns"]] ==
              v["histograms"]["wait"]["buckets"], "hist.ns_buckets_as_json",
              g["ns"][:3])

    a = load("contention-1")
    rc, out, _ = ctx.run(["-f", fixture("contention-1"), "-f",
                          fixture("contention-2"), "hist", "-d", "1", "-k",
                          "preempt"])
    got = parse(out)
    old = {(v["id"], v["pid"]): v for v in a["vms"]}
    bad = []
    for v in doc["vms"]:
        o = old[(v["id"], v["pid"])]
        name = names.get(v["pid"], v["comm"])
        want = v["histograms"]["preempt"]["count"] - \
            o["histograms"]["preempt"]["count"]
        g = got.get((name, "preempt"), {"count": -1})
        if g["count"] != want:
            bad.append("%s %d != %d" % (name, g["count"], want))
    ctx.check(rc == 0 and not bad, "hist.window_counts_the_difference",
              "; ".join(bad))

    nested = load("nested-sync")
    rc, out, _ = ctx.run(["-f", fixture("nested-sync"), "hist",
                          "nested_l1"])
    got = parse(out)
    v = [v for v in nested["vms"] if v["comm"] == "nested_l1"][0]
    ok = all(got.get(("nested_l1", k), {}).get("count") ==
             v["histograms"][k]["count"]
             for k in doc_names("VMLAT_NESTED_HISTS"))
    ctx.check(rc == 0 and ok, "hist.nested_kinds_for_a_nested_vm",
              sorted(got))
    rc, out, _ = ctx.run(["-f", fixture("nested-sync"), "hist", "-k",
                          "exit:vmmcall", "nested_l1"])
    x = [x for x in v["exits"] if x["name"] == "VMMCALL"][0]
    got = parse(out).get(("nested_l1", "exit VMMCALL"), {"count": -1})
    ctx.check(rc == 0 and got["count"] == x["histogram"]["count"],
              "hist.exit_reason", (got["count"], x["histogram"]["count"]))
    rc, _, err = ctx.run(["-f", fixture("nested-sync"), "hist", "-k",
                          "bogus"])
    ctx.check(rc == 2 and len(err.strip().splitlines()) == 1 and
              err.startswith("vmlat: hist: -k bogus: ") and
              err.endswith(" (see vmlat hist -h)\n"),
              "hist.bad_kind_refused", err)
    rc, _, err = ctx.run(["-f", fixture("nested-sync"), "hist", "no-vm"])
    ctx.check(rc == 1 and "no VM no-vm" in err, "hist.unknown_vm", err)
