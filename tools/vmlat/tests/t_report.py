# SPDX-License-Identifier: GPL-2.0
"""vmlat report: its table is the JSON's shares; its diagnosis names, for
each VM it speaks of, the preemptor that took the most (per the JSON),
the exit reason that cost the most, the nested bounces and the clock
sync bound, with the JSON's numbers."""
from cmdtest import fixture, load

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
