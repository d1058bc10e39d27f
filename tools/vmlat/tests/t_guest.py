# SPDX-License-Identifier: GPL-2.0
"""vmlat report in a guest: on vmlat_guest.ko's steal.json (a real one,
fixtures/guest/), the guest's own steal in the host report's words, its
numbers the document's; who took its time as the three totals; its
kernel's steal accounting; each refusal of the host one line saying what
to do; --json's guest member the document's figures."""
import copy
import json
import os
import tempfile

from cmdtest import FIXTURES

DOC = os.path.join(FIXTURES, "guest", "steal.json")


def fmt_pct(part, whole):
    return "%.1f%%" % (100.0 * part / whole)


def write(tmp, name, doc):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path


def run(ctx):
    with open(DOC, encoding="utf-8") as f:
        doc = json.load(f)
    vm = doc["vms"][0]
    obs = vm["observed_ns"]
    rc, out, err = ctx.run(["-f", DOC, "report"])
    lines = out.splitlines()
    ctx.check(rc == 0 and lines and lines[0].startswith(
        "vmlat report: this guest, as its host's vmlat measured it"),
        "guest.report_says_this_guest", (rc, err, lines[:1]))
    t1 = [ln for ln in lines if "(type-1 steal)" in ln]
    t2 = [ln for ln in lines if "(type-2 steal)" in ln]
    ready = vm["steal"]["ready_ns"]
    handling = vm["steal"]["handling_ns"]
    ctx.check(len(t1) == 1 and "lost %s" % fmt_pct(ready, obs) in t1[0] and
              len(t2) == 1 and "spent %s" % fmt_pct(handling, obs) in t2[0],
              "guest.report_type1_type2_are_the_documents",
              (t1, t2, fmt_pct(ready, obs), fmt_pct(handling, obs)))
    ctx.check("%s (this guest):" % vm["comm"] in lines and
              "This guest's kernel does not subtract the steal time KVM "
              "reports: its tasks' run times include the time its vCPUs "
              "were runnable but not running." in lines,
              "guest.report_names_the_guest_and_its_accounting", out[-600:])

    with tempfile.TemporaryDirectory() as tmp:
        # The three takers, each with a share of its own (a copy of the
        # real document with other VMs and its own vCPUs taking too).
        d = copy.deepcopy(doc)
        sb = d["vms"][0]["stolen_by"]
        sb["other_ns"], sb["own_ns"] = 3 * 10**7, 2 * 10**6
        rc, out, err = ctx.run(["-f", write(tmp, "takers", d), "report"])
        taken = [ln.strip() for ln in out.splitlines()
                 if ln.strip().startswith("taken by:")]
        want = "taken by: host tasks 60.8 ms (%s), other VMs 30.0 ms (%s), " \
            "its own vCPUs 2.00 ms (%s)." % (
                fmt_pct(sb["host_ns"], obs), fmt_pct(sb["other_ns"], obs),
                fmt_pct(sb["own_ns"], obs))
        ctx.check(rc == 0 and taken == [want], "guest.report_takers_totals",
                  (taken, want))
        d["guest"]["steal_accounting"] = "subtracted"
        rc, out, err = ctx.run(["-f", write(tmp, "sub", d), "report"])
        ctx.check(rc == 0 and "subtracts the steal time KVM reports "
                  "(CONFIG_PARAVIRT_TIME_ACCOUNTING): its tasks' run times "
                  "leave out" in out, "guest.report_subtracted", out[-300:])

        rc, out, err = ctx.run(["-f", write(tmp, "json", d), "report",
                                "--json"])
        try:
            g = json.loads(out)["guest"]
        except (ValueError, KeyError):
            g = None
        ctx.check(rc == 0 and g == {
            "steal_accounting": "subtracted",
            "taken_by_host_tasks_ns": sb["host_ns"],
            "taken_by_other_vms_ns": sb["other_ns"],
            "taken_by_own_vcpus_ns": sb["own_ns"]},
            "guest.report_json_guest_member", (rc, err, g))

        # What the host said instead of answering: one line, what to do.
        said = {"denied": "does not allow this guest its steal",
                "no-host": "no vmlat on the host answers",
                "limited": "ask again in a second",
                "confidential": "cannot ask its host for its steal "
                                "(confidential)"}
        bad = []
        for state, words in said.items():
            d = copy.deepcopy(doc)
            d["guest"]["steal"] = state
            d["vms"] = []
            rc, out, err = ctx.run(["-f", write(tmp, state, d), "report"])
            if rc == 0 or out or len(err.splitlines()) != 1 or \
                    words not in err:
                bad.append((state, rc, err))
        ctx.check(not bad, "guest.refusals_one_line", bad)
