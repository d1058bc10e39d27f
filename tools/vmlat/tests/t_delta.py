# SPDX-License-Identifier: GPL-2.0
"""Deltas the module's totals do not make simple: a reset between the two
reads (a VM's totals went down: the later read is taken whole), the same
document from standard input read twice, malformed members that must not
crash any command."""
import json
import os
import tempfile

from cmdtest import fixture, load
from t_top import COLS, STATES, parse


def run(ctx):
    earlier = load("contention-2")
    later = load("contention-2")
    # Read after a reset: each VM's guest time has grown past what it was
    # before the reset, its other times have not, its observed time is
    # less. Subtracting field by field would mix the two.
    later["now_ns"] = earlier["now_ns"] + 10**9
    for v in later["vms"]:
        for s in STATES:
            v[s + "_ns"] = v[s + "_ns"] * 3 // 2 if s == "guest" \
                else v[s + "_ns"] // 4
        v["observed_ns"] = sum(v[s + "_ns"] for s in STATES)
    tmp = tempfile.mkdtemp(prefix="vmlat_delta.")
    p = os.path.join(tmp, "after-reset.json")
    with open(p, "w", encoding="utf-8") as f:
        json.dump(later, f)
    rc, out, err = ctx.run(["-f", fixture("contention-2"), "-f", p, "top",
                            "-b", "-n", "1"])
    rows = parse(out)[0][0]["rows"] if rc == 0 else []
    bad = []
    for v in later["vms"]:
        r = [r for r in rows if r["PID"] == v["pid"]]
        if not r:
            bad.append("pid %d missing" % v["pid"])
            continue
        for s, c in zip(STATES, COLS):
            want = 100.0 * v[s + "_ns"] / v["observed_ns"]
            if abs(r[0][c] - want) > 0.051:
                bad.append("%d %s %.1f != %.2f" % (v["pid"], c, r[0][c],
                                                   want))
    ctx.check(rc == 0 and rows and not bad,
              "delta.reset_between_reads_takes_the_later_whole",
              err or "; ".join(bad))

    with open(fixture("contention-2"), "rb") as f:
        doc = f.read()
    rc, out, err = ctx.run(["-f", "-", "top", "-b", "-n", "2"], stdin=doc)
    ctx.check(rc == 0 and out.count("vmlat top - ") == 2,
              "delta.stdin_read_twice", err)

    bad_docs = {
        "bucket_not_a_list": {"histograms": {"preempt": {
            "count": 1, "buckets": [5, None, {}, [1], [1, 2, 3]]}}},
        "vcpus_an_object": {"vcpus": {"a": 1}},
        "sync_a_number": {"sync": 5},
        "strings_for_numbers": {"observed_ns": "x", "pid": "y",
                                "exits": [{"name": 7, "count": "z"}]},
    }
    for name, vm in bad_docs.items():
        vm.update({"id": 1, "comm": "x"})
        vm.setdefault("pid", 5)
        p = os.path.join(tmp, name + ".json")
        with open(p, "w", encoding="utf-8") as f:
            json.dump({"schema": 3, "vms": [vm]}, f)
        res = [ctx.run(["-f", p] + c)[0] for c in
               (["top", "-b", "-n", "1"], ["report"], ["hist"],
                ["export", "--prometheus"])]
        ctx.check(all(r in (0, 1) for r in res), "delta.malformed.%s" % name,
                  res)
    rc, _, err = ctx.run(["-f", fixture("contention-2"), "report", "-d",
                          "nan"])
    ctx.check(rc == 2, "delta.nan_duration_refused", err)
