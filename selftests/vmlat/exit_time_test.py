#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""exit_time_test.py - guest time ends at the VM exit, not at its kvm_exit.

On 6.1 SVM, KVM traces kvm_exit in svm_handle_exit(), after
vcpu_enter_guest() has taken the host interrupt that caused the exit and
re-enabled preemption: the host's interrupt handling, and any preemption
it led to, come before the kvm_exit of the exit. On 6.12 (and on VMX)
kvm_exit comes first, with interrupts off.

The workload is ./scenario spin: a guest that computes (its exits are the
host's interrupts, plus an I/O exit now and then) next to a CPU hog on the
same CPU, which preempts the vCPU where the tick lets it. It runs twice:
in the preemption mode the kernel booted with (Debian: voluntary, which
reschedules the vCPU only after its kvm_exit), and with full preemption
(/sys/kernel/debug/sched/preempt), where preempt_enable() in
vcpu_enter_guest() switches the vCPU out before its kvm_exit on 6.1 SVM.
ftrace records,
on the "mono" clock vmlat reads, the vCPU's kvm_entry/kvm_exit, the
context switches and every host interrupt entry (irq_vectors:*_entry,
irq:irq_handler_entry). Between a kvm_entry and its kvm_exit, a host
interrupt handled in the vCPU thread or a switch-out of it proves that the
guest had left by then. From the trace alone this computes:

  guest_bound   sum over round trips of (first such host event, or the
                kvm_exit) - kvm_entry: guest time can be no more
  late_on_cpu   sum of kvm_exit - first host event, less the preemption
                in between: host time a kvm_exit-based count calls guest

Checks: vmlat's guest time is at most guest_bound plus half of
late_on_cpu (and SLACK per round trip: the text trace's resolution and the
two probes' skew; and the time by which vmlat's kvm_entry probe read its
clock before ftrace's kvm_entry, as the record measures it from
vmlat:vmlat_exit, which that probe writes: a loaded test host can stall
between the two; and the part over one tick period of the silence of the
vCPU's CPU before a kvm_entry, or before the vmlat_exit ahead of it: a CPU
with a task to run takes its tick, so a longer silence is a stall, and
vmlat's probe may have read its clock anywhere in it; the tick period is
the median interval between the trace's local timer interrupts): it
moved at least half of the host's time out of the
guest (without the correction it is guest_bound + late_on_cpu, further
out than that where the host's time before kvm_exit is over twice SLACK a
trip, as on 6.1 under TCG: about 130 us); vmlat counted
no unexpected event for the vCPU (a switch-out in guest mode was one);
vmlat's count of exits switched out before their kvm_exit is ftrace's
(+-1 at the window's edges); vmlat's status says whether this kernel
traces exits late, as ftrace shows it does, and names the preemption
model the kernel says it runs (PREEMPT_RT in uname -v,
/sys/kernel/debug/sched/preempt, which the second run changes).

Needs root, kvm_amd, $VMLAT_KO; run from the directory holding scenario.
TAP output; exit status 4 when everything was skipped.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vmlat_ktest import (KEEP, SLACK_NS, TRACING, VMLAT,  # noqa: E402
                         SkipTest, check_no_lost_events, main, rd, rd_json,
                         status_fields, tap, tracing_instance, ts_ns, wr)

INST = TRACING + "/instances/vmlat_exit_time_test"
BASE_EVENTS = ["sched/sched_switch", "kvm/kvm_entry", "kvm/kvm_exit",
               "irq/irq_handler_entry", "vmlat/vmlat_exit"]
SECONDS = "3"

LINE = re.compile(r"^\s*(.*)-(\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(\d+)\]\s+"
                  r"(?:\S+\s+)?(\d+\.\d+):\s+(\w+):\s?(.*)$")
PREV = re.compile(r"prev_pid=(\d+)")
NEXT = re.compile(r"next_pid=(\d+)")


def irq_events():
    """Every interrupt entry event of this kernel's irq_vectors system."""
    d = TRACING + "/events/irq_vectors"
    if not os.path.isdir(d):
        return []
    return ["irq_vectors/" + e for e in sorted(os.listdir(d))
            if e.endswith("_entry")]


def is_irq(event):
    return event == "irq_handler_entry" or event.endswith("_entry") and \
        event not in ("kvm_entry",)


def measure(trace, tid):
    """Walk the vCPU thread's round trips in the trace (file order is time
    order); return the numbers of the module docstring."""
    m = dict(trips=0, trips_irq=0, trips_switch=0, guest_trace=0,
             guest_bound=0, late_on_cpu=0, late_max=0,
             entry_in_guest=0, entry_lag=0, entry_lag_max=0, tick=0,
             stalled=0)
    in_guest = False
    entry = first = out = None
    pre = 0
    irq = sw = False
    last = {}       # per CPU: the event before, (pid, time, name)
    prior = {}      # per CPU: the one before that
    ticks, tick_at = [], {}
    lags = []       # kvm_entry (or the vmlat_exit before it) - CPU's event
    for line in trace.splitlines():
        f = LINE.match(line)
        if not f:
            continue
        pid, t, ev, body = int(f.group(2)), ts_ns(f.group(4)), \
            f.group(5), f.group(6)
        cpu = f.group(3)
        before = last.get(cpu)
        prior[cpu], last[cpu] = before, (pid, t, ev)
        if ev == "local_timer_entry":
            if cpu in tick_at:
                ticks.append(t - tick_at[cpu])
            tick_at[cpu] = t
        if ev == "kvm_entry" and pid == tid and before and \
                before[0] == tid and before[2] == "vmlat_exit":
            # vmlat's kvm_entry probe read its clock, then wrote this
            # vmlat_exit, before ftrace's kvm_entry: how much earlier
            # its guest time begins, as this run measured it
            m["entry_lag"] += t - before[1]
            m["entry_lag_max"] = max(m["entry_lag_max"], t - before[1])
            p = prior.get(cpu)
            if p:
                lags.append(before[1] - p[1])
        elif ev == "kvm_entry" and pid == tid and before:
            lags.append(t - before[1])
        if ev == "sched_switch":
            p, n = PREV.search(body), NEXT.search(body)
            if in_guest and p and int(p.group(1)) == tid:
                first = first if first is not None else t
                out, sw = t, True
            elif in_guest and n and int(n.group(1)) == tid and \
                    out is not None:
                pre += t - out
                out = None
            continue
        if pid != tid:
            continue
        if ev == "kvm_entry":
            if in_guest:
                m["entry_in_guest"] += 1
                continue
            in_guest, entry, first, out, pre = True, t, None, None, 0
            irq = sw = False
        elif ev == "kvm_exit" and in_guest:
            in_guest = False
            m["trips"] += 1
            m["trips_irq"] += irq
            m["trips_switch"] += sw
            m["guest_trace"] += t - entry - pre
            m["guest_bound"] += (first if first is not None else t) - entry
            if first is not None:
                late = t - first - pre
                m["late_on_cpu"] += late
                m["late_max"] = max(m["late_max"], late)
        elif in_guest and is_irq(ev):
            first = first if first is not None else t
            irq = True
    # A CPU running a task takes its tick every period: one silent for
    # longer did not run (the emulator stalled) or had interrupts off.
    # Where that silence precedes a kvm_entry (or the vmlat_exit before
    # it), vmlat's probe may have read its clock anywhere in it.
    if ticks:
        m["tick"] = sorted(ticks)[len(ticks) // 2]
        m["stalled"] = sum(x - m["tick"] for x in lags if x > m["tick"])
    return m


def vmlat_vcpu(vm_json, tid):
    for v in vm_json["vms"]:
        for c in v["vcpus"]:
            if c["tid"] == tid:
                return c
    return None


def kernel_preemption():
    """The preemption model, as the kernel itself says: "rt" where its
    version string names PREEMPT_RT (init/Makefile's preempt flag; 7.2 has
    no /sys/kernel/realtime), else the current mode of PREEMPT_DYNAMIC,
    else the model the version string names."""
    flags = os.uname().version.split()
    if "PREEMPT_RT" in flags:
        return "rt"
    if os.path.exists(PREEMPT):
        return preempt_mode()
    for flag, model in (("PREEMPT_LAZY", "lazy"), ("PREEMPT", "full")):
        if flag in flags:
            return model
    # No flag: PREEMPT_VOLUNTARY or PREEMPT_NONE, which it does not tell.
    return "voluntary|none"


PREEMPT = "/sys/kernel/debug/sched/preempt"


def preempt_mode():
    """The current mode of PREEMPT_DYNAMIC ("(voluntary)" is marked)."""
    for w in rd(PREEMPT).split():
        if w.startswith("("):
            return w.strip("()")
    return None


def t_spin_next_to_hog():
    spin("exit_time")


def t_spin_full_preemption():
    if not os.path.exists(PREEMPT):
        raise SkipTest("no %s (PREEMPT_DYNAMIC)" % PREEMPT)
    old = preempt_mode()
    wr(PREEMPT, "full")
    try:
        spin("exit_time_full", full=True)
    finally:
        if old:
            wr(PREEMPT, old)


def spin(tag, full=False):
    events = BASE_EVENTS + irq_events()
    with tracing_instance(INST, events, 16384):
        wr(INST + "/trace", "")
        wr(INST + "/tracing_on", "1")
        wr(VMLAT + "/reset", "1")
        p = subprocess.run([os.path.join(HERE, "scenario"), "spin",
                            SECONDS], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=300)
        vm_json = rd_json()
        status = rd(VMLAT + "/status")
        wr(INST + "/tracing_on", "0")
        if p.returncode == 4:
            raise SkipTest("scenario: no /dev/kvm")
        if p.returncode != 0 or "status=ok" not in p.stdout:
            raise RuntimeError("scenario spin failed (%d): %s" %
                               (p.returncode, p.stderr.strip()[-300:]))
        check_no_lost_events(INST)
        trace = rd(INST + "/trace")
    if KEEP:
        wr(os.path.join(KEEP, tag + "_trace.txt"), trace)
        wr(os.path.join(KEEP, tag + "_vmlat.json"),
           json.dumps(vm_json, indent=1))
        wr(os.path.join(KEEP, tag + "_status.txt"), status)

    tid = None
    for line in p.stdout.splitlines():
        f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        if line.startswith("vcpu "):
            tid = int(f["vcpu_tid"])
    c = vmlat_vcpu(vm_json, tid) if tid else None
    if c is None:
        tap(False, tag + ".vcpu_known", "tid %s not in vmlat's json" %
            tid)
        return
    m = measure(trace, tid)
    late_trace = m["trips_irq"] > 0
    print("# ftrace: %d round trips, %d with a host interrupt before "
          "kvm_exit, %d switched out before kvm_exit, %d kvm_entry in "
          "guest mode" % (m["trips"], m["trips_irq"], m["trips_switch"],
                          m["entry_in_guest"]))
    print("# ftrace: guest by kvm_exit %d ns, bound %d ns, host time "
          "before kvm_exit %d ns (%d ns per late trip, max %d ns)" %
          (m["guest_trace"], m["guest_bound"], m["late_on_cpu"],
           m["late_on_cpu"] // max(1, m["trips_irq"] + m["trips_switch"]),
           m["late_max"]))
    print("# vmlat: guest %d ns, kernel %d ns, preempted %d ns, exits %d, "
          "unexpected %s, late exits %s (switched %s, %s ns)" %
          (c["guest_ns"], c["kernel_ns"], c["preempted_ns"], c["exits_total"],
           c.get("unexpected"), c.get("late_exits"),
           c.get("late_switched"), c.get("late_ns")))

    # vmlat's guest time may begin before ftrace's kvm_entry by what the
    # record measured at each entry (entry_lag: a loaded test host can
    # stall between the two probes for milliseconds), and by a stall the
    # CPU's silence shows before vmlat wrote its vmlat_exit (stalled)
    slack = m["late_on_cpu"] // 2 + m["trips"] * SLACK_NS + \
        m["entry_lag"] + m["stalled"]
    tap(c["guest_ns"] <= m["guest_bound"] + slack,
        tag + ".guest_time_ends_at_the_exit",
        "vmlat guest %d ns, ftrace bound %d + slack %d (late on CPU %d, "
        "entry lag %d, at most %d; stalled %d, over a %d ns tick)" %
        (c["guest_ns"], m["guest_bound"], slack, m["late_on_cpu"],
         m["entry_lag"], m["entry_lag_max"], m["stalled"], m["tick"]))
    # Until vmlat has seen its first kvm_exit it cannot know that exits are
    # traced late: a switch-out in guest mode before that (ftrace counts
    # it, vmlat's late_switched does not) is two events out of order (the
    # switch-out and the kvm_exit after it), and no others may be.
    unlearnt = max(0, m["trips_switch"] - c.get("late_switched", 0))
    tap(c.get("unexpected", -1) <= 2 * unlearnt and
        c.get("unexpected", -1) >= 0, tag + ".no_unexpected_events",
        "vmlat unexpected %s, switch-outs before kvm_exit vmlat did not "
        "count as late %d" % (c.get("unexpected"), unlearnt))
    tap(abs(c.get("late_switched", -9) - m["trips_switch"]) <= 1,
        tag + ".switched_before_kvm_exit_counted",
        "vmlat %s ftrace %d" % (c.get("late_switched"), m["trips_switch"]))
    if full:
        # Full preemption reschedules at preempt_enable(), before a late
        # kvm_exit: the switch-outs this run is for must have happened.
        tap(not late_trace or m["trips_switch"] > 0,
            tag + ".preempted_before_kvm_exit",
            "ftrace: %d trips with a host interrupt, %d switched out" %
            (m["trips_irq"], m["trips_switch"]))
    st = status_fields(status)
    tap(st.get("exit_trace") == ("late" if late_trace else "prompt"),
        tag + ".status_says_how_exits_are_traced",
        "status %s, ftrace: %d trips with a host interrupt inside" %
        (st or "has no exit_trace line", m["trips_irq"]))
    tap(st.get("unexpected") is not None and
        int(st["unexpected"]) >= (c.get("unexpected") or 0),
        tag + ".status_shows_unexpected", str(st))
    # Read at the end of the run, as the kernel says it now.
    kern = status_fields(status, "kernel:")
    tap(kern.get("preempt") in kernel_preemption().split("|"),
        tag + ".status_names_the_preemption_model",
        "status %s, kernel %s" % (kern or "has no kernel line",
                                  kernel_preemption()))


if __name__ == "__main__":
    main([t_spin_next_to_hog, t_spin_full_preemption])
