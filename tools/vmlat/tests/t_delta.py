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


def counters_subtracted(ctx, tmp):
    """The counters of the exit reasons, the steal, the nested totals,
    the clock sync and the top preemptors over an interval: the later
    read's minus the earlier's.
    The later read is the earlier one with known amounts added (and its
    VMs run for 0.5 s of the second between the two): the report over
    that interval must show those amounts, not the totals; the sync's
    exchanges are the total since the guest's first call."""
    earlier = load("nested-sync")
    for v in earlier["vms"]:
        if v["comm"] == "sync_guest":   # not 0 before: totals differ
            v["sync"].update(malformed=5, limited=10)
        elif v["comm"] == "nested_l1":
            v["preemptors"][0]["stolen_ns"] = 50 * 10**6
    later = json.loads(json.dumps(earlier))
    later["now_ns"] = earlier["now_ns"] + 10**9
    ran = 500 * 10**6
    for v in later["vms"]:
        if v["comm"] not in ("sync_guest", "nested_l1"):
            continue
        for o in [v] + v["vcpus"]:
            o["observed_ns"] += ran
            o["guest_ns"] += ran - 200 * 10**6
            o["preempted_ns"] += 200 * 10**6
        if v["comm"] == "sync_guest":
            for k, add in (("exchanges", 7), ("calls", 14), ("malformed", 2),
                           ("replayed", 1), ("limited", 4)):
                v["sync"][k] += add
        else:
            t = v["nested"]["totals"]
            for k, add in (("l2_exits_l0", 100), ("l2_exits_l1", 50),
                           ("l2_entries", 150), ("l1_to_l2", 50),
                           ("l2_exit_l0_ns", 10**6),
                           ("l2_exit_l1_ns", 10 * 10**6)):
                t[k] += add
            v["preemptors"][0]["stolen_ns"] += 200 * 10**6
            v["preemptors"][0]["slices"] += 3
            # 40 CPUID exits of 2.5 ms, after 400 before: their handling
            # is the host kernel's time in the interval
            cpuid = [x for x in v["exits"] if x["name"] == "CPUID"][0]
            cpuid["count"] += 40
            cpuid["total_ns"] += 100 * 10**6
            for o in [v] + v["vcpus"]:
                o["guest_ns"] -= 100 * 10**6
                o["kernel_ns"] += 100 * 10**6
                o["exits_total"] += 40
            for k in ("handling_ns", "kernel_ns"):
                v["steal"][k] += 100 * 10**6
    docs = []
    for name, doc in (("earlier", earlier), ("later", later)):
        docs += ["-f", os.path.join(tmp, name + ".json")]
        with open(docs[-1], "w", encoding="utf-8") as f:
            json.dump(doc, f)
    rc, out, err = ctx.run(docs + ["report", "-d", "1s"])
    want = ("clock sync ok: 57 exchanges",
            "3 calls were malformed, replayed or unpaired, 0 refused and 4 "
            "over the rate limit",
            "of its 150 L2 exits, 50 were reflected to L1 and 100 handled "
            "by the host alone",
            "host task kworker/0:2[150] 200 ms",
            "20.0% of its vCPU time (100 ms) in the host handling its 40 "
            "exits (type-2 steal): 20.0% in the host kernel",
            "CPUID 100.0% of the exits' time (40 exits, 100 ms in all, "
            "mean 2.50 ms)")
    missing = [w for w in want if w not in out]
    ctx.check(rc == 0 and not missing,
              "delta.counters_are_later_minus_earlier",
              err or "missing %s in: %s" % (missing, out[-600:]))


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

    counters_subtracted(ctx, tmp)

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
