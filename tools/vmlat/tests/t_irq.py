# SPDX-License-Identifier: GPL-2.0
"""Interrupt delivery in the vmlat command, on a real document of
irq_test (fixtures/irq.json: a LAPIC timer next to a hog, IPIs with
and without a hog, a device's interrupts through an irqfd): vmlat hist
shows each source's histogram of a VM with deliveries, its count the
document's, and no row for a source without; vmlat report says, per
late source (p99 from 100 us), how late and where the vCPU was, each
share the document's cells' share of the delivery time, then the part
waiting for a CPU and who took the VM's the most (its top preemptor);
--json has the finding and the
histograms; a document without interrupts (an older module's) shows
none of it. Halt-polling: a finding for each VM whose polls took 1% of
its vCPUs' time (two in the document: polls next to a hog that never
pay off, and IPIs whose polls mostly do), each figure the document's.
TSC-deadline timers: a finding for each VM whose timers reached the
guest p99 100 us or more past their deadline, or fired early by 50 us
at their p50 (one in the document: 150 late), its counts, quantiles,
maximum, mean and busy-wait the document's histograms'. Lock-holder
preemptions (fixtures/lock-holder.json: irq_test's lock-holder case on
the Intel test host, a vCPU holding a guest spinlock preempted by a hog
while the other spun): a finding for the VM that had them, its count,
spins, times and the longest's preemptor the document's; none for a VM
without (irq.json's)."""
import json
import re

from cmdtest import doc_names, fixture, load

SOURCES = doc_names("VMLAT_IRQ_SOURCES")
ATS = doc_names("VMLAT_IRQ_ATS")
EXPIRE = doc_names("VMLAT_EXPIRE_HISTS")
PROSE = {"timer": "LAPIC timer interrupts", "ipi": "IPIs",
         "device": "device interrupts", "other": "other interrupts"}
AT_PROSE = {"guest": "running in the guest",
            "host": "in the host handling an exit",
            "halted": "halted (its wake-up and the wait for its CPU)",
            "preempted": "preempted or waiting for its CPU",
            "blocked": "blocked in the host"}
UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
NOTE_NS = 100000
EARLY_NOTE_NS = 50000   # timer_early's p50 that makes a finding


def ns_of(text):
    v, u = text.split()
    return float(v) * UNITS[u]


def close(shown, ns):
    """@shown (3 significant digits) is @ns."""
    return abs(ns_of(shown) - ns) <= max(ns * 0.006, 1)


def vm_blocks(out):
    """{pid: [lines]} of report's diagnosis."""
    res, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^\S.* \(pid (\d+), vm_id \d+\)", line)
        if m:
            cur = res.setdefault(int(m.group(1)), [])
        elif cur is not None and line.startswith("  "):
            cur.append(line)
        elif not line.strip():
            cur = None
    return res


def run(ctx):
    doc = load("irq")
    rc, out, err = ctx.run(["-f", fixture("irq"), "hist"])
    bad, seen = [], 0
    for v in doc["vms"]:
        for k in ["irq_" + s for s in SOURCES] + EXPIRE:
            h = v["histograms"].get(k, {"count": 0})
            m = re.search(r"^# .*\(pid %d, vm_id %d\): %s - .*\n# (\d+) "
                          "samples" % (v["pid"], v["id"], k), out, re.M)
            if h["count"] and (not m or int(m.group(1)) != h["count"]):
                bad.append("%d %s: %s of %d" % (v["pid"], k,
                                                m and m.group(1), h["count"]))
            if not h["count"] and "(pid %d, vm_id %d): %s " % (
                    v["pid"], v["id"], k) in out:
                bad.append("%d %s shown, no sample" % (v["pid"], k))
            seen += bool(h["count"]) and k in EXPIRE
    ctx.check(rc == 0 and not bad and seen,
              "irq.hist_sources_with_deliveries", (rc, err, bad, seen))
    rc, out, err = ctx.run(["-f", fixture("irq"), "hist", "-k",
                            "irq_device"])
    ctx.check(rc == 0 and out.count("): irq_device - ") == len(doc["vms"]),
              "irq.hist_kind_irq_device", (rc, err))

    rc, out, err = ctx.run(["-f", fixture("irq"), "report"])
    blocks = vm_blocks(out)
    bad, said = [], 0
    for v in doc["vms"]:
        lines = blocks.get(v["pid"], [])
        for s in SOURCES:
            h = v["histograms"]["irq_" + s]
            ln = [x for x in lines if x.startswith(
                "  - its %s were delivered" % PROSE[s])]
            if not h["count"] or h["p99_ns"] < NOTE_NS:
                if ln:
                    bad.append("%d %s: said though p99 %s" % (
                        v["pid"], s, h["p99_ns"]))
                continue
            if len(ln) != 1:
                bad.append("%d %s: %d lines" % (v["pid"], s, len(ln)))
                continue
            said += 1
            m = re.search(r"delivered p99 (\S+ \S+) late \(max (\S+ \S+), "
                          r"mean (\S+ \S+), (\d+) delivered", ln[0])
            if not (m and close(m.group(1), h["p99_ns"]) and
                    close(m.group(2), h["max_ns"]) and
                    close(m.group(3), h["sum_ns"] // h["count"]) and
                    int(m.group(4)) == h["count"]):
                bad.append("%d %s: %s" % (v["pid"], s, ln[0]))
                continue
            cells = {c["at"]: c for c in v["irq"] if c["source"] == s}
            total = sum(c["sum_ns"] for c in cells.values())
            want = ["%.1f%% %s" % (100.0 * cells[a]["sum_ns"] / total,
                                   AT_PROSE[a])
                    for a in ATS if a in cells and cells[a]["sum_ns"]]
            tail = ln[0].split("; of that time, ")[-1].rstrip(".").split(
                "; ")
            if tail[0].split(", ") != want:
                bad.append("%d %s: %s, want %s" % (v["pid"], s, ln[0],
                                                   want))
            # The part waiting for a CPU, and the VM's top taker
            wait = sum(c.get("wait_ns", 0) for c in cells.values())
            takers = sorted((p for p in v.get("preemptors", [])
                             if p["kind"] != "none"),
                            key=lambda p: -p["stolen_ns"])
            want_w = []
            if wait:
                want_w = ["%.1f%% waiting for a CPU" % (
                    100.0 * min(wait, total) / total)]
                if takers and takers[0]["kind"] == "host":
                    want_w[0] += " (the VM's waits: mostly host task " \
                        "%s[%d])" % (takers[0]["comm"], takers[0]["pid"])
                elif takers and takers[0]["kind"] == "idle":
                    want_w[0] += " (the VM's waits: mostly CPU %d waking " \
                        "from idle)" % takers[0]["cpu"]
            if tail[1:] != want_w and not (
                    want_w and takers and
                    takers[0]["kind"] not in ("host", "idle") and
                    len(tail) == 2 and tail[1].startswith(want_w[0])):
                bad.append("%d %s: %s, want %s" % (v["pid"], s, ln[0],
                                                   want_w))
    ctx.check(rc == 0 and said and not bad, "irq.report_late_sources",
              (rc, err, said, bad))

    rc, out, err = ctx.run(["-f", fixture("irq"), "report", "--json"])
    bad = []
    try:
        rep = {v["pid"]: v for v in json.loads(out)["vms"]}
    except (ValueError, KeyError) as e:
        rep = {}
        bad.append(str(e))
    for v in doc["vms"]:
        r = rep.get(v["pid"], {})
        late = any(v["histograms"]["irq_" + s]["count"] and
                   v["histograms"]["irq_" + s]["p99_ns"] >= NOTE_NS
                   for s in SOURCES)
        kinds = [f["kind"] for f in r.get("findings", [])]
        if late != ("irq_delivery" in kinds):
            bad.append("%d: findings %s" % (v["pid"], kinds))
        got = sorted(k for k in r.get("latency", {}) if k.startswith("irq_"))
        want = sorted("irq_" + s for s in SOURCES
                      if v["histograms"]["irq_" + s]["count"])
        if got != want:
            bad.append("%d: latency %s, want %s" % (v["pid"], got, want))
    ctx.check(rc == 0 and rep and not bad, "irq.report_json", (rc, err, bad))

    # Halt-polling: a finding for each VM whose polls took 1% of its
    # vCPUs' time, with the document's figures; none for the others.
    rc, out, err = ctx.run(["-f", fixture("irq"), "report"])
    blocks = vm_blocks(out)
    bad, said = [], 0
    for v in doc["vms"]:
        h = v.get("halt", {})
        cpu = h.get("hit_ns", 0) + h.get("miss_ns", 0)
        ln = [x for x in blocks.get(v["pid"], [])
              if x.startswith("  - its vCPUs polled for ")]
        if not v["observed_ns"] or 100.0 * cpu / v["observed_ns"] < 1.0:
            if ln:
                bad.append("%d: said, %d of %d" % (v["pid"], cpu,
                                                   v["observed_ns"]))
            continue
        said += 1
        m = ln and re.match(
            r"  - its vCPUs polled for ([\d.]+ \w+) of CPU in their halts "
            r"\((\S+)% of their time\): (\d+) of (\d+) polls paid off "
            r"\((\S+)%\)(?:, the (\d+) that did not took ([\d.]+ \w+))?"
            r"(?:; one that pays off saves about the ([\d.]+ \w+) a halt "
            r"that slept took from its wake-up to its end \((\d+) such "
            r"halts\))?(; most polls did not pay off)?", ln[0])
        hit_pct = 100.0 * h["hits"] / h["polled"] if h["polled"] else 0
        if not (m and close(m.group(1), cpu) and
                abs(float(m.group(2)) - 100.0 * cpu / v["observed_ns"])
                <= 0.05 and int(m.group(3)) == h["hits"] and
                int(m.group(4)) == h["polled"] and
                abs(float(m.group(5)) - hit_pct) <= 0.05 and
                (m.group(6) is None) == (h["polled"] == h["hits"]) and
                (m.group(6) is None or
                 (int(m.group(6)) == h["polled"] - h["hits"] and
                  close(m.group(7), h["miss_ns"]))) and
                (m.group(8) is None) == (not h["woken"]) and
                (m.group(8) is None or
                 (close(m.group(8), h["wake_ns"] // h["woken"]) and
                  int(m.group(9)) == h["woken"])) and
                bool(m.group(10)) == (hit_pct < 50)):
            bad.append("%d: %s, want %s" % (v["pid"], ln, h))
    ctx.check(rc == 0 and said and not bad, "irq.report_halt_polling",
              (rc, err, said, bad))

    # TSC-deadline timers: a finding where late (p99) or early (p50)
    # enough, with the document's figures; none for the others.
    bad, said = [], 0
    for v in doc["vms"]:
        late = v["histograms"]["timer_late"]
        early = v["histograms"]["timer_early"]
        ln = [x for x in blocks.get(v["pid"], [])
              if x.startswith("  - its TSC-deadline timers: ")]
        want = (late["count"] and late["p99_ns"] >= NOTE_NS) or \
            (early["count"] and early["p50_ns"] >= EARLY_NOTE_NS)
        if not want:
            if ln:
                bad.append("%d: said %s" % (v["pid"], ln))
            continue
        said += 1
        m = ln and re.match(
            r"  - its TSC-deadline timers: (\d+) of (\d+) reached the guest "
            r"past their deadline(?:, p99 ([\d.]+ \w+) late \(max "
            r"([\d.]+ \w+), mean ([\d.]+ \w+)\))?(?:; (\d+) fired early, "
            r"and KVM busy-waited ([\d.]+ \w+) of CPU to their deadlines "
            r"\(p50 ([\d.]+ \w+) each\))?; KVM's timer advance "
            r"\(lapic_timer_advance_ns\) (did not cover|is more than)",
            ln[0])
        if not (m and int(m.group(1)) == late["count"] and
                int(m.group(2)) == late["count"] + early["count"] and
                (m.group(3) is None) == (not late["count"]) and
                (m.group(3) is None or
                 (close(m.group(3), late["p99_ns"]) and
                  close(m.group(4), late["max_ns"]) and
                  close(m.group(5), late["sum_ns"] // late["count"]))) and
                (m.group(6) is None) == (not early["count"]) and
                (m.group(6) is None or
                 (int(m.group(6)) == early["count"] and
                  close(m.group(7), early["sum_ns"]) and
                  close(m.group(8), early["p50_ns"]))) and
                (m.group(9) == "did not cover") ==
                bool(late["count"] and late["p99_ns"] >= NOTE_NS)):
            bad.append("%d: %s, want %s %s" % (v["pid"], ln, late, early))
    ctx.check(rc == 0 and said and not bad, "irq.report_timer_deadline",
              (rc, err, said, bad))

    # Lock-holder preemptions: the document's figures, and the longest's
    # preemptor as preemptors names a host task.
    bad, said = [], 0
    for name in ("lock-holder", "irq"):
        d = load(name)
        rc2, out2, err2 = ctx.run(["-f", fixture(name), "report"])
        blk = vm_blocks(out2)
        for v in d["vms"]:
            lh = v.get("lock_holder") or {}
            ln = [x for x in blk.get(v["pid"], [])
                  if x.startswith("  - lock-holder preemption suspected")]
            if not lh.get("count"):
                if ln:
                    bad.append("%d: said %s" % (v["pid"], ln))
                continue
            said += 1
            by = lh["max_by"]
            m = ln and re.match(
                r"  - lock-holder preemption suspected (\d+) times: a vCPU "
                r"was preempted while another of its vCPUs spun \((\d+) "
                r"PAUSE exits or long-spin-wait calls\), ([\d.]+ \w+) in "
                r"all, the longest "
                r"([\d.]+ \w+), by host task (\S+)\[(\d+)\]; ", ln[0])
            if not (rc2 == 0 and m and int(m.group(1)) == lh["count"] and
                    int(m.group(2)) == lh["spins"] and
                    close(m.group(3), lh["ns"]) and
                    close(m.group(4), lh["max_ns"]) and
                    by["kind"] == "host" and m.group(5) == by["comm"] and
                    int(m.group(6)) == by["pid"]):
                bad.append("%d: %s, want %s (%s)" % (v["pid"], ln, lh,
                                                      err2))
    ctx.check(said == 1 and not bad, "irq.report_lock_holder", (said, bad))

    # A document of a module without interrupt delivery: nothing of it.
    rc, out, err = ctx.run(["-f", fixture("contention-2"), "report"])
    rc2, out2, _ = ctx.run(["-f", fixture("contention-2"), "hist"])
    ctx.check(rc == 0 and rc2 == 0 and "were delivered p99" not in out and
              "irq_" not in out2, "irq.none_in_an_older_document",
              (rc, err))
