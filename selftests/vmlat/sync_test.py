#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""sync_test.py - the host side of vmlat's clock-sync hypercall.

  honest   ./sync_guest honest: 60 exchanges, one every 20 ms, whose guest
           clock is the host's CLOCK_MONOTONIC minus 5 s, read by the VMM
           right before and after each KVM_RUN. The true mapping is known
           without vmlat: host = guest + 5 s. vmlat's "sync" has taken
           every exchange and refused nothing; its drift bounds hold 0 and
           its host-time bounds at the last exchange hold the truth; the
           bound is at most 4 median round trips (as the VMM measured
           them). Each
           vmlat:vmlat_sync event that ftrace records has its host time
           between its guest times moved by 5 s. The sync calls' exits are
           in the sync counters, not in the exit statistics.
  flood    a hostile guest (./sync_guest flood) makes 3000 calls as fast
           as it can (malformed, seq 0, replayed, skipping, garbage times)
           next to an honest one: every call is counted, the malformed
           exactly, the rate limit holds (calls over it are ignored and
           counted), and the honest VM's mapping is as in "honest".

Needs root, kvm_amd, $VMLAT_KO; run from the directory holding sync_guest.
TAP output; exit status 4 when everything was skipped.
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vmlat_ktest import (TRACING, VMLAT, SkipTest, keep, main, rd, tap,  # noqa: E402
                         wr)

INST = TRACING + "/instances/vmlat_sync_test"
OFF = 5 * 10**9
MAX_RATE = 100      # VMLAT_HC_MAX_RATE
BURST = 10


def start(*args):
    return subprocess.Popen([os.path.join(HERE, "sync_guest")] + list(args),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True)


def finish(p):
    out, err = p.communicate(timeout=300)
    if p.returncode == 4:
        raise SkipTest(err.strip().splitlines()[-1:] or "skip")
    if p.returncode != 0:
        raise RuntimeError("sync_guest failed (%d): %s" % (p.returncode,
                                                           err[-300:]))
    return {k: int(v) if v.isdigit() else v
            for k, v in (kv.split("=", 1) for kv in out.split() if "=" in kv)}


def sync_of(js, pid):
    for vm in js["vms"]:
        if vm["pid"] == pid:
            return vm
    raise RuntimeError("vmlat does not know VM %d" % pid)


def check_honest(tag, vm, w):
    s = vm["sync"]
    n = w["exchanges"]
    tap(s is not None and s["state"] == "ok" and s["exchanges"] == n,
        tag + ".all_exchanges_taken", json.dumps(s))
    if not s or s["state"] != "ok":
        return
    bad = {k: s[k] for k in ("malformed", "replayed", "unpaired", "refused",
                             "limited", "restarts") if s[k]}
    tap(not bad and s["calls"] == n + 1, tag + ".nothing_refused",
        "calls %d %s" % (s["calls"], bad))
    tap(s["drift_min_ppb"] <= 0 <= s["drift_max_ppb"],
        tag + ".true_drift_within_bounds",
        "[%d, %d] ppb, middle %d" % (s["drift_min_ppb"], s["drift_max_ppb"],
                                     s["drift_ppb"]))
    true_host = s["at_guest_ns"] + OFF
    tap(s["host_min_ns"] <= true_host <= s["host_max_ns"],
        tag + ".true_host_time_within_bounds",
        "true %d in [%d, %d] (middle %+d ns)" %
        (true_host, s["host_min_ns"], s["host_max_ns"],
         s["host_ns"] - true_host))
    tap(s["bound_ns"] <= 4 * w["rtt_p50_ns"], tag + ".bound_few_round_trips",
        "bound %d ns, round trips %d..%d ns, median %d" %
        (s["bound_ns"], w["rtt_min_ns"], w["rtt_max_ns"], w["rtt_p50_ns"]))
    tap(s["at_guest_ns"] == w["last_g2"], tag + ".bounds_at_last_exchange",
        "%d vs %d" % (s["at_guest_ns"], w["last_g2"]))
    vmm = [e for e in vm["exits"] if e["name"] == "VMMCALL"]
    tap(s["exits"] == n + 1 and not vmm, tag + ".sync_exits_apart",
        "sync exits %d, VMMCALL in exits: %s" % (s["exits"], vmm))


def traced(argv_list):
    """Start the sync_guest runs in argv_list under ftrace (vmlat_sync);
    return (their records, vmlat json, trace text)."""
    if os.path.isdir(INST):
        os.rmdir(INST)
    os.mkdir(INST)
    try:
        wr(INST + "/trace_clock", "mono")
        wr(INST + "/buffer_size_kb", "4096")
        wr(INST + "/events/vmlat/vmlat_sync/enable", "1")
        wr(VMLAT + "/reset", "1")
        wr(INST + "/tracing_on", "1")
        procs = [start(*a) for a in argv_list]
        recs = [finish(p) for p in procs]
        js = json.loads(rd(VMLAT + "/json"))
        wr(INST + "/tracing_on", "0")
        trace = rd(INST + "/trace")
    finally:
        wr(INST + "/tracing_on", "0")
        os.rmdir(INST)
    return recs, js, trace


def t_honest():
    (w,), js, trace = traced([["honest", "60", "20", str(OFF)]])
    keep("sync_honest.json", json.dumps(js, indent=1))
    keep("sync_honest_trace.txt", trace)
    vm = sync_of(js, w["pid"])
    check_honest("honest", vm, w)
    evs = [dict(kv.split("=", 1) for kv in ln.split("vmlat_sync: ")[1].split())
           for ln in trace.splitlines() if "vmlat_sync: " in ln]
    evs = [{k: int(v) for k, v in e.items()} for e in evs
           if int(e["vm_pid"]) == w["pid"]]
    inside = [e for e in evs
              if e["g1_ns"] <= e["h_ns"] - OFF <= e["g2_ns"]]
    tap(len(evs) == w["exchanges"] and len(inside) == len(evs),
        "honest.vmlat_sync_events_host_time_between_guest_times",
        "%d events, %d inside, first %s" % (len(evs), len(inside),
                                            evs[:1]))


def t_flood():
    (h, f), js, _ = traced([["honest", "60", "20", str(OFF)],
                            ["flood", "3000"]])
    keep("sync_flood.json", json.dumps(js, indent=1))
    check_honest("flood.honest_vm", sync_of(js, h["pid"]), h)
    s = sync_of(js, f["pid"])["sync"]
    tap(s is not None and s["calls"] == f["calls"], "flood.every_call_counted",
        "vmlat %s sent %d" % (s and s["calls"], f["calls"]))
    if s is None:
        return
    tap(s["malformed"] == f["malformed"], "flood.malformed_counted",
        "vmlat %d sent %d" % (s["malformed"], f["malformed"]))
    wellformed = f["calls"] - f["malformed"]
    processed = wellformed - s["limited"]
    allowed = MAX_RATE * f["duration_ms"] // 1000 + BURST + 1
    tap(s["limited"] > 0 and 0 < processed <= allowed,
        "flood.rate_limited", "well-formed %d, limited %d, processed %d, "
        "allowed in %d ms: %d" % (wellformed, s["limited"], processed,
                                  f["duration_ms"], allowed))
    counted = s["replayed"] + s["unpaired"] + s["refused"] + \
        s["exchanges"] + s["restarts"]
    tap(counted <= processed, "flood.processed_calls_accounted",
        "replayed %d unpaired %d refused %d taken %d restarts %d of %d" %
        (s["replayed"], s["unpaired"], s["refused"], s["exchanges"],
         s["restarts"], processed))


if __name__ == "__main__":
    main([t_honest, t_flood])
