#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""steal_test.py - vmlat's type-1 steal against the guest's own steal time.

A Linux guest (the test host's own kernel, $VMLAT_GUEST_KERNEL, under
qemu-system-x86_64 -enable-kvm, one vCPU) runs a workload that computes and
sleeps by turns. Its vCPU thread is pinned alone on CPU 1; the rest of QEMU
and this test run on CPU 0. While the guest works, a hog runs on CPU 1 for
HOG_S seconds, and nothing else contends for it. Three figures of the
time the vCPU was ready but not running, over the same window:

  guest     the guest's own steal time (cpu0's steal in /proc/stat, read
            by the guest before and after), which KVM feeds from the vCPU
            thread's run_delay (record_steal_time());
  rundelay  the vCPU thread's run_delay (/proc/<pid>/task/<tid>/schedstat,
            the scheduler's own figure, the one KVM publishes), read by
            this test before and after;
  vmlat     preempted_ns + wait_ns of that vCPU in vmlat's json ([P3]'s
            type-1 steal), read with run_delay.

and a fourth, the same vCPU's preempted_ns + wait_ns as the guest itself
got them from the host when it read its steal (vmlat_guest.ko's steal
file: the steal hypercall, the host's guest_steal on),

and, from an ftrace record of the vCPU thread's scheduler and KVM events in
the same window, the components of run_delay (runnable after a preemption,
on a runqueue after a wake-up) and of vmlat's figure (from the wake-up call
on), so a difference can be told apart.

Tolerances (why), with n the window's runnable intervals (preemptions
and wake-ups) in the ftrace record. None is a fixed share or a fixed
time per interval (30 and 50 us an interval were allowed): a loaded
machine runs the emulator slower and stalls it, and the offsets per
interval grow with that; each is what the record measured or brackets:
  - vmlat vs ftrace (the sum of the record's intervals, clock points of
    the same tracepoints): the probes run one after the other in each
    __schedule() (seen: vmlat's event 9 to 28 us before ftrace's
    sched_switch on average, 2 ms at most, when the emulator's own
    thread was descheduled between them; vmlat's sum 0.9 to 2.4%
    below). At a switch-in vmlat writes its event, so the record has
    that distance: each interval's end is moved to vmlat's event (the
    sum of event minus sched_switch). What the record cannot show
    directly it brackets (brackets()): in one __schedule(), interrupts
    off, nothing else is recorded on that CPU, so vmlat's clock read at
    a switch-out (where it writes no event), and its clock read before
    its event at a switch-in, lie between the CPU's event before (an
    interrupt entry, recorded on the vCPU's CPU for this, a wake-up, a
    KVM event) and the switch: the sum of those spans, at both ends of
    every interval (SLACK for an end at a wake-up call, on the waker's
    CPU); and the window's edges: the vCPU's figures are read somewhere
    in each sample (sample()'s t0..t1), the record is cut at their
    inner ends: the vCPU's runnable time during the two samples, as the
    record has it. Plus SLACK per interval (the text trace's 1 us
    resolution and the probes' cost).
  - vmlat vs rundelay: vmlat counts a wake-up from its call
    (sched_waking), run_delay from the enqueue, which lies between it
    and sched_wakeup: vmlat - rundelay should be the record's
    sched_waking .. sched_wakeup time, or less by up to all of it, and
    within the stale runqueue clock below. run_delay takes the
    runqueue clock of __schedule()'s start at both ends of an interval,
    vmlat the sched_switch tracepoint, after the pick of the next task
    (seen: 14 to 34 us per interval under TCG, vmlat 0.5% above and 3.4%
    below): both lie in the same brackets as above, which bound their
    distance, with the window's edges and SLACK per interval.
    Stale runqueue clock: a wake-up that preempts the running task asks
    the __schedule() that follows to skip its clock update
    (check_preempt_curr(), rq_clock_skip_update()), so run_delay's end
    at that switch is the clock of the wake-up's enqueue or later, up to
    hundreds of microseconds before the switch under TCG (an exit from
    the guest, its handling and KVM's run loop lie between; seen: 5.8%
    of run_delay on a slow machine with a preemption every 2 ms). The
    ftrace record bounds it: at a preemption (prev_state R) after a
    sched_wakeup onto that CPU since the CPU's previous switch, the
    switch's time minus that wake-up's. Summed over the vCPU thread's
    switch-outs (run_delay starts earlier, vmlat is lower) and switch-ins
    (run_delay ends earlier, vmlat is higher), these widen the tolerance
    on their side only.
  - guest vs rundelay: the guest's /proc/stat counts in USER_HZ (10 ms)
    ticks, at its own ticks (at most 10 ms), and KVM publishes run_delay
    only at the next entry: at each end of the window, a tick of
    /proc/stat, a guest tick and a preemption of lag (the window's
    longest runnable interval); and the guest reads its steal after the
    host's first sample and before its second: the vCPU's runnable time
    in the record between the host's reads and the guest's (the guest
    read s0 before the host saw it, s1 after the host said stop).
    (Seen: < 0.6% on 6.1 and 6.12 at first, then -2.6% on 6.1 and -3.0
    to -4.0% on 7.2 RT, before the longest interval was allowed for.)
  - every interval the thread spent runnable off CPU in the ftrace
    record has its vmlat_preempt or vmlat_wait: exactly, the event next
    to ftrace's sched_switch of the switch-in on that CPU, with no other
    sched_switch between (vmlat's probe runs just before or after
    ftrace's, in one __schedule(); under TCG the two may be hundreds of
    microseconds apart).

The guest boots once for both windows; one that shows no prompt within
GUEST_HUNG_S (a good boot takes 15 to 60 s) is booted again while
GUEST_BOOTS_S allow (vmlat_ktest.py, boot_until_up()).

Needs root, kvm_amd, $VMLAT_KO, 2 CPUs. TAP output; exit status 4 when
everything was skipped.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vmlat_ktest import (KEEP, SLACK_NS, TRACING, VMLAT,  # noqa: E402
                         ConsoleGuest, SkipTest, boot_until_up,
                         check_no_lost_events, irq_entry_events, keep,
                         linux_guest_argv,
                         linux_guest_initramfs,
                         main, rd, rd_json, run_native, tap,
                         tracing_instance, ts_ns, wr)

INST = TRACING + "/instances/vmlat_steal_test"
EVENTS = ["sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup",
          "sched/sched_migrate_task", "kvm/kvm_entry", "kvm/kvm_exit",
          "kvm/kvm_userspace_exit", "vmlat/vmlat_preempt", "vmlat/vmlat_wait"]
HOG_S = float(os.environ.get("VMLAT_STEAL_HOG_S", "4"))
# The guest's /proc/stat steal at each end of its window: a USER_HZ tick
# (10 ms) and a tick of its own (at most 10 ms: HZ 100 or more), both ends.
GUEST_TICKS_NS = 2 * (10 + 10) * 10**6
VCPU_CPU = 1

# The guest: one line per step on its console; the test says when to go
# and when to stop on the console's input.
GUEST_INIT = r"""#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp
/bin/busybox mount -t devtmpfs dev /dev
exec >/dev/ttyS0 2>&1 </dev/ttyS0
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t debugfs debugfs /sys/kernel/debug
/bin/busybox stty -echo
# its own steal as the host answers it (vmlat_guest.ko): no names, few
# clock-sync calls
[ -e /vmlat_guest.ko ] && /bin/busybox insmod /vmlat_guest.ko names=0 rate_hz=1
steal() {
    while read -r name user nice sys idle iow irq sirq steal rest; do
        [ "$name" = cpu0 ] && echo "$steal" && break
    done </proc/stat
}
answer() {
    f=/sys/kernel/debug/vmlat_guest/steal
    [ -e $f ] && while read -r cpu vcpu observed ready rest; do
        [ "$cpu" = 0 ] && echo "$ready" && return
    done <$f
    echo -
}
work() {
    while :; do
        i=0
        while [ $i -lt 300 ]; do i=$((i + 1)); done
        /bin/busybox usleep 2000
    done
}
echo "=== ready"
while read -r cmd; do
    case $cmd in
    go)
        echo "=== s0 $(steal) $(answer)"
        work &
        w=$! ;;
    stop)
        kill $w
        wait $w
        echo "=== s1 $(steal) $(answer)" ;;
    *)
        break ;;
    esac
done
echo "=== end"
/bin/busybox poweroff -f
"""


def vcpu_of(pid):
    js = rd_json()
    for vm in js["vms"]:
        if vm["pid"] == pid and vm["vcpus"]:
            return vm["vcpus"][0]
    return None


def run_delay(pid, tid):
    return int(rd("/proc/%d/task/%d/schedstat" % (pid, tid)).split()[1])


def sample(pid, tid):
    """vmlat's vCPU row and run_delay, read together."""
    t0 = time.monotonic_ns()
    v = vcpu_of(pid)
    r = run_delay(pid, tid)
    t1 = time.monotonic_ns()
    return {"vcpu": v, "run_delay": r, "t0": t0, "t1": t1}


def pin(pid, tid, alone):
    """The vCPU thread on VCPU_CPU; QEMU's other threads on CPU 0 if
    @alone, else on VCPU_CPU too."""
    for t in os.listdir("/proc/%d/task" % pid):
        os.sched_setaffinity(int(t), {VCPU_CPU} if int(t) == tid or
                             not alone else {0})


def hog():
    return subprocess.Popen(
        [sys.executable, "-c", "while True: pass"],
        preexec_fn=lambda: os.sched_setaffinity(0, {VCPU_CPU}))


LINE = re.compile(r"^\s*(.*)-(\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(\d+)\]\s+"
                  r"(?:\S+\s+)?(\d+\.\d+):\s+(\w+):\s?(.*)$")


def components(trace, tid, t0, t1, slack=SLACK_NS):
    """The vCPU thread's off-CPU runnable time in the trace between t0 and
    t1 (CLOCK_MONOTONIC ns), by kind:
      preempt_ns    switched out runnable .. switched in
      wake_rq_ns    woken: on a runqueue (sched_wakeup) .. switched in
      wake_call_ns  woken: sched_waking .. sched_wakeup
      late_wake_ns  switched out asleep after a sched_waking that came
                    while it was still on CPU: sched_wakeup .. switched in
      unwoken_ns    switched out asleep, back on CPU with no wake-up at
                    all (kept runnable by a pending signal): switch-out ..
                    switched in
    and the counts of each; how far run_delay's ends may lie before
    the switches (the stale runqueue clock, in this file's docstring):
      stale_out_ns  at the switch-outs of a preemption (run_delay longer)
      stale_in_ns   at the switch-ins (run_delay shorter);
    and how far vmlat's and the scheduler's clock points may lie from
    ftrace's switches, as the record brackets them (bracket_ns, summed
    over the intervals; see brackets())."""
    c = dict.fromkeys(("preempt_ns", "wake_rq_ns", "wake_call_ns",
                       "late_wake_ns", "unwoken_ns", "preempts", "wakes",
                       "late_wakes", "unwoken", "stale_out_ns",
                       "stale_in_ns"), 0)
    st, since, waking, wakeup = "run", None, None, None
    since_ref = None
    lastwake = {}        # per CPU: the last sched_wakeup onto it since
                         # its last sched_switch

    c["max_ns"] = 0     # the longest runnable interval in the window

    def add(kind, start, end):
        start, end = max(start, t0), min(end, t1)
        if end > start:
            c[kind + "_ns"] += end - start
            c["max_ns"] = max(c["max_ns"], end - start)

    c["missed"] = []     # (kind, switch-in time) with no vmlat event
    # per CPU, in its order: [what, time, kind] of every event recorded
    # there: its sched_switches ("switch", or "end" of an interval),
    # vmlat_preempt/vmlat_wait events ("vmlat"), anything else ("other")
    percpu = {}
    # the intervals counted: (kind, where the switch-out that began it is
    # in percpu, or None for one that began at a wake-up or before t0,
    # where the switch-in that ended it is)
    ivs = []
    for ln in trace.splitlines():
        m = LINE.match(ln)
        if ln.startswith("#") or not m:
            continue
        cpu, t, name = "[%03d]" % int(m.group(3)), ts_ns(m.group(4)), \
            m.group(5)
        seq = percpu.setdefault(cpu, [])
        if name in ("vmlat_preempt", "vmlat_wait"):
            seq.append(["vmlat", t, None])
            continue
        seq.append(["switch" if name == "sched_switch" else "other", t,
                    None])
        if not name.startswith("sched_"):
            continue
        ev = name[len("sched_"):]
        kv = {}
        for f in m.group(6).replace(" ==> ", " ").split():
            k, _, v = f.partition("=")
            kv[k] = v
        if ev == "switch":
            w = lastwake.pop(cpu, None)
            stale = (t - max(w, t0) if w is not None and t0 <= t <= t1 and
                     kv["prev_state"].startswith("R") else 0)
        if ev == "wakeup":
            lastwake["[%03d]" % int(kv["target_cpu"])] = t
        if ev == "switch" and kv.get("prev_pid") == str(tid):
            if kv["prev_state"].startswith("R"):
                st = "preempted"
                c["stale_out_ns"] += stale
            else:
                st = "asleep_woken" if waking is not None else "asleep"
            since, wakeup = t, None
            since_ref = (cpu, len(seq) - 1) if t >= t0 else None
        elif ev == "switch" and kv.get("next_pid") == str(tid):
            n = t0 <= t <= t1
            if n and st != "run":
                seq[-1][0::2] = ["end", st]
                c["stale_in_ns"] += stale
                began_out = st in ("preempted", "asleep") or \
                    (st == "asleep_woken" and wakeup is None)
                ivs.append((st, since_ref if began_out else None,
                            (cpu, len(seq) - 1)))
            if st == "preempted":
                add("preempt", since, t)
                c["preempts"] += n
            elif st == "woken":
                add("wake_rq", wakeup or waking, t)
                add("wake_call", waking, wakeup or waking)
                c["wakes"] += n
            elif st == "asleep_woken":
                add("late_wake", wakeup or since, t)
                c["late_wakes"] += n
            elif st == "asleep":
                add("unwoken", since, t)
                c["unwoken"] += n
            st, waking, wakeup = "run", None, None
        elif ev == "waking" and kv.get("pid") == str(tid):
            if st == "asleep":
                st, waking, wakeup = "woken", t, None
            elif st == "run":
                waking = t
        elif ev == "wakeup" and kv.get("pid") == str(tid):
            if st == "run":
                waking = None   # it was still on its runqueue
            elif st in ("woken", "asleep_woken"):
                wakeup = t
    # vmlat's event of a completed preemption or wait comes from its
    # probe on the same switch-in, on that CPU, just before or after
    # ftrace's (the probes run in the order they were attached): next to
    # it in the CPU's order. How far apart the two were is in the record:
    # vmlat's event, written just after its clock read, minus ftrace's
    # sched_switch (vmlat_lag_ns, summed).
    c["vmlat_lag_ns"] = 0
    matched, order = {}, set()
    for cpu, seq in percpu.items():
        for i, (what, t, kind) in enumerate(seq):
            if what != "end":
                continue
            for j in (i - 1, i + 1):
                if 0 <= j < len(seq) and seq[j][0] == "vmlat":
                    seq[j][0] = "matched"
                    c["vmlat_lag_ns"] += seq[j][1] - t
                    matched[(cpu, i)] = j
                    order.add(j < i)
                    break
            else:
                c["missed"].append((kind, t))
    c["vmlat_first"] = order == {True}
    c["bracket_ns"] = brackets(percpu, ivs, matched, c["vmlat_first"],
                               t0, t1, slack)
    return c


def brackets(percpu, ivs, matched, vmlat_first, t0, t1, slack):
    """How far, at most, vmlat's clock points and run_delay's lie from
    ftrace's events at the two ends of the intervals @ivs, summed, as the
    record itself brackets them: in one __schedule(), interrupts off, the
    runqueue clock is read at its start and vmlat's probe and ftrace's
    read theirs at the sched_switch tracepoint, one after the other; no
    other event comes between on that CPU. So all three lie after the
    CPU's event before (a timer or IPI entry, a wake-up, a KVM event:
    interrupt entries on the vCPU's CPU are recorded for this) and no
    later than the later of the two at the switch (if vmlat's probe runs
    second, no later than the CPU's next event). A loaded emulator's
    stall between them, or slower code, widens the bracket with it. An
    interval that began at a wake-up (sched_waking, on the waker's CPU,
    where little is recorded) gets @slack (SLACK_NS) for that end: its
    two probes' cost (and the time from sched_waking to the enqueue is
    measured, wake_call_ns)."""
    def near(seq, i, step):
        i += step
        while 0 <= i < len(seq):
            if seq[i][0] not in ("vmlat", "matched"):
                return seq[i][1]
            i += step
        return None

    total = 0
    for kind, start, end in ivs:
        cpu, i = end
        seq = percpu[cpu]
        j = matched.get(end)
        if j is None:
            continue        # no vmlat event: a failure of its own
        before = near(seq, min(i, j), -1)
        total += max(seq[i][1], seq[j][1]) - \
            (before if before is not None else t0)
        if start is None:
            total += slack
            continue
        seq = percpu[start[0]]
        k = start[1]
        before = near(seq, k, -1)
        before = before if before is not None else t0
        if vmlat_first:
            total += seq[k][1] - before
        else:
            after = near(seq, k, 1)
            total += (after if after is not None else t1) - before
    return total


def runnable(trace, tid, t0, t1):
    """The vCPU thread's runnable time off CPU between @t0 and @t1, as the
    record has it."""
    c = components(trace, tid, t0, t1)
    return sum(c[k] for k in ("preempt_ns", "wake_rq_ns", "wake_call_ns",
                              "late_wake_ns", "unwoken_ns"))


def window(g, tid, alone):
    """One window of HOG_S seconds of contention; the three figures."""
    pin(g.q.pid, tid, alone)
    time.sleep(0.5)
    # the vCPU thread's switches and wake-ups, and every switch and
    # wake-up on its CPU (the stale runqueue clock, in the docstring)
    flt = "prev_pid == %d || next_pid == %d || CPU == %d" % (tid, tid,
                                                             VCPU_CPU)
    # and every interrupt entry on its CPU: the event before a switch
    # there brackets the scheduler's and vmlat's clock reads (brackets())
    irqs = irq_entry_events()
    with tracing_instance(INST, EVENTS + irqs, 8192):
        for e in irqs:
            wr(INST + "/events/%s/filter" % e, "CPU == %d" % VCPU_CPU)
        wr(INST + "/events/sched/sched_switch/filter", flt)
        for e in ("sched_waking", "sched_migrate_task"):
            wr(INST + "/events/sched/%s/filter" % e, "pid == %d" % tid)
        wr(INST + "/events/sched/sched_wakeup/filter",
           "pid == %d || target_cpu == %d" % (tid, VCPU_CPU))
        for e in ("kvm_entry", "kvm_exit", "kvm_userspace_exit"):
            wr(INST + "/events/kvm/%s/filter" % e, "common_pid == %d" % tid)
        for e in ("vmlat_preempt", "vmlat_wait"):
            wr(INST + "/events/vmlat/%s/filter" % e, "vm_pid == %d" % g.q.pid)
        wr(INST + "/tracing_on", "1")
        a = sample(g.q.pid, tid)
        g.say("go")
        s0 = g.expect("s0", 60)
        t_s0 = time.monotonic_ns()      # the guest read s0 before this
        h = hog()
        time.sleep(HOG_S)
        h.kill()
        h.wait()
        time.sleep(0.5)
        t_stop = time.monotonic_ns()    # and s1 after this
        g.say("stop")
        s1 = g.expect("s1", 60)
        b = sample(g.q.pid, tid)
        wr(INST + "/tracing_on", "0")
        check_no_lost_events(INST)
        trace = rd(INST + "/trace")
    if s0 is None or s1 is None:
        raise RuntimeError("the guest did not report its steal: %s" %
                           " | ".join(g.out[-5:]))
    d = {k: b["vcpu"][k] - a["vcpu"][k] for k in b["vcpu"]
         if k.endswith("_ns")}
    s0, a0 = (s0.split() + ["-"])[:2]
    s1, a1 = (s1.split() + ["-"])[:2]
    w = {"vmlat_ready_ns": d["preempted_ns"] + d["wait_ns"],
         "run_delay_ns": b["run_delay"] - a["run_delay"],
         # /proc/stat counts in USER_HZ, 100 on x86
         "guest_steal_ns": (int(s1) - int(s0)) * 10**7,
         # vmlat's figure as the guest got it, when it read its steal
         "answer_ready_ns": int(a1) - int(a0) if "-" not in (a0, a1)
         else None,
         "vmlat": d}
    name = "steal_%s_trace.txt" % ("vcpu_alone" if alone else "qemu_on_cpu")
    keep(name, trace)
    at = (tid, a["t0"], a["t1"], b["t0"], b["t1"], t_s0, t_stop)
    if KEEP:    # on the build machine if it can (run_native())
        p = run_native([sys.executable, os.path.abspath(__file__),
                        "--figures", os.path.join(KEEP, name)] +
                       [str(x) for x in at + (SLACK_NS,)])
        if p.returncode:
            raise RuntimeError("steal_test.py --figures: %s" %
                               p.stderr.strip()[-300:])
        w.update(json.loads(p.stdout))
    else:
        w.update(figures(trace, *at, SLACK_NS))
    return w


def figures(trace, tid, a_t0, a_t1, b_t0, b_t1, t_s0, t_stop, slack):
    """What the ftrace record of a window says (window()); the sample
    before it read the vCPU's figures in [@a_t0, @a_t1], the sample after
    in [@b_t0, @b_t1], the guest its steal before @t_s0 and after
    @t_stop; @slack: SLACK_NS."""
    return {"ftrace": components(trace, tid, a_t1, b_t0, slack),
            # vmlat and run_delay are read somewhere in [t0, t1] of each
            # sample, the record's window is [a.t1, b.t0]: at most the
            # vCPU's runnable time in those two stretches apart
            "edges_ns": runnable(trace, tid, a_t0, a_t1) +
            runnable(trace, tid, b_t0, b_t1),
            # the guest's window lies within the host's, short of it by
            # at most the vCPU's runnable time in these two stretches
            "guest_edges_ns": runnable(trace, tid, a_t0, t_s0) +
            runnable(trace, tid, t_stop, b_t1)}


SCENARIOS = [("vcpu_alone", True), ("qemu_on_cpu", False)]


def measure(qemu, kernel, cpio, hung_s):
    """One guest boot, a window per scenario; None if the boot showed no
    prompt within @hung_s."""
    g = ConsoleGuest(linux_guest_argv(qemu, kernel, cpio))
    res = {}
    try:
        if g.expect("ready", hung_s) is None:
            g.q.kill()
            return None
        tid = None
        for _ in range(50):
            v = vcpu_of(g.q.pid)
            if v:
                tid = v["tid"]
                break
            time.sleep(0.1)
        if tid is None:
            raise RuntimeError("vmlat never saw the guest's vCPU")
        for name, alone in SCENARIOS:
            res[name] = window(g, tid, alone)
        g.say("quit")
        g.expect("end", 30)
    finally:
        g.stop()
        keep("steal_guest_console.txt", "\n".join(g.out) + "\n")
    return res


def check(name, w):
    print("# %s: %s" % (name, json.dumps(w)))
    vmlat, rdl, guest = (w["vmlat_ready_ns"], w["run_delay_ns"],
                         w["guest_steal_ns"])
    c = w["ftrace"]
    tap(not c["missed"], name + ".every_runnable_interval_counted",
        "%d preemptions, %d wake-ups, %d woken before the switch-out, %d "
        "kept runnable by a signal; without a vmlat_preempt/vmlat_wait: "
        "%s" % (c["preempts"], c["wakes"], c["late_wakes"], c["unwoken"],
                c["missed"][:10]))
    n = c["preempts"] + c["wakes"] + c["late_wakes"] + c["unwoken"]
    ft = sum(c[k] for k in ("preempt_ns", "wake_rq_ns", "wake_call_ns",
                            "late_wake_ns", "unwoken_ns"))
    # each interval's end moved to vmlat's clock point, as the record
    # measured it at every switch-in; what is left, as the record
    # brackets it (the docstring's tolerances): the clock points at both
    # ends of every interval (bracket_ns), the window's edges (edges_ns),
    # and SLACK per interval (the text trace's resolution)
    want = ft + c["vmlat_lag_ns"]
    res = (n + 1) * SLACK_NS
    tol = c["bracket_ns"] + w["edges_ns"] + res
    tap(ft > 10**9 // 2 and abs(vmlat - want) <= tol,
        name + ".vmlat_ready_is_ftrace",
        "vmlat %d ns, ftrace's intervals %d ns %+d ns of measured lag at "
        "the switch-ins (%+.2f%%), tolerance %d (bracketed %d, edges %d, "
        "%d intervals; vmlat's probe %s)" %
        (vmlat, ft, c["vmlat_lag_ns"], 100.0 * (vmlat - want) / max(want, 1),
         tol, c["bracket_ns"], w["edges_ns"], n,
         "first" if c["vmlat_first"] else "second"))
    # vmlat's waits begin at the wake-up call, run_delay's at the enqueue,
    # which lies between it and sched_wakeup (the wake-up calls' time is
    # measured); run_delay's ends may lie before the switches (stale
    # runqueue clock); the rest as above
    want = rdl + c["wake_call_ns"]
    tol_rdl = c["bracket_ns"] + w["edges_ns"] + res
    lo = -c["stale_out_ns"] - c["wake_call_ns"] - tol_rdl
    hi = c["stale_in_ns"] + tol_rdl
    tap(rdl > 10**9 // 2 and lo <= vmlat - want <= hi,
        name + ".vmlat_ready_is_run_delay",
        "vmlat %d ns, run_delay %d ns + %d ns of wake-up calls (%+.2f%%), "
        "bounds %d..%d" % (vmlat, rdl, c["wake_call_ns"],
                           100.0 * (vmlat - want) / max(want, 1), lo, hi))
    # the guest's reading: at each end a USER_HZ tick of /proc/stat and
    # a guest tick (GUEST_TICKS_NS), and a lag of up to a preemption (the
    # lag of `steal` in Documentation/vmlat.rst: the longest runnable
    # interval of the window); and the guest's window is not the host's:
    # it is short of it by the vCPU's runnable time between the host's
    # read and the guest's at each end, which the record has
    # (guest_edges_ns)
    tol = GUEST_TICKS_NS + 2 * c["max_ns"] + w["guest_edges_ns"]
    tap(abs(guest - rdl) <= tol, name + ".guest_steal_is_run_delay",
        "guest %d ns, run_delay %d ns (%+.2f%%), tolerance %d (the "
        "longest interval %d ns, at the edges %d ns)" %
        (guest, rdl, 100.0 * (guest - rdl) / max(rdl, 1), tol,
         c["max_ns"], w["guest_edges_ns"]))
    # the guest's steal is run_delay: both tolerances
    want = guest + c["wake_call_ns"]
    lo, hi = lo - tol, hi + tol
    tap(lo <= vmlat - want <= hi, name + ".vmlat_ready_is_guest_steal",
        "vmlat %d ns, guest %d ns + %d ns of wake-up calls (%+.2f%%), "
        "bounds %d..%d" % (vmlat, guest, c["wake_call_ns"],
                           100.0 * (vmlat - want) / max(want, 1), lo, hi))
    # What the guest got when it asked the host for its steal (its
    # vmlat_guest.ko, as it read /proc/stat): vmlat's own figure at the
    # guest's two reads, which the host's samples bracket. Short of the
    # host's by the vCPU's runnable time between the host's reads and
    # the guest's (guest_edges_ns), the clock points' brackets and SLACK
    # at each end; and against the guest's /proc/stat steal, within the
    # bounds vmlat's own is.
    ans = w.get("answer_ready_ns")
    if ans is None:
        tap(True, name + ".guest_answer_is_vmlat",
            "SKIP the guest did not get its steal (no $VMLAT_GUEST_KO?)")
        return
    tol = w["guest_edges_ns"] + c["bracket_ns"] + 4 * SLACK_NS
    tap(ans > 10**9 // 2 and 0 <= vmlat - ans <= tol,
        name + ".guest_answer_is_vmlat",
        "the guest got %d ns, vmlat's JSON %d ns (%+d ns), tolerance 0..%d"
        % (ans, vmlat, ans - vmlat, tol))
    tap(lo <= ans - want <= hi, name + ".guest_answer_is_guest_steal",
        "the guest got %d ns, its own steal %d ns + %d ns of wake-up calls "
        "(%+.2f%%), bounds %d..%d" % (
            ans, guest, c["wake_call_ns"],
            100.0 * (ans - want) / max(want, 1), lo, hi))


def t_guest_steal():
    kernel = os.environ.get("VMLAT_GUEST_KERNEL", "")
    qemu = shutil.which("qemu-system-x86_64")
    if not (os.path.isfile(kernel) and qemu):
        raise SkipTest("needs $VMLAT_GUEST_KERNEL and qemu-system-x86_64")
    if os.cpu_count() < 2:
        raise SkipTest("needs 2 CPUs")
    os.sched_setaffinity(0, {0})
    # the guest may ask for its own steal
    wr(VMLAT + "/guest_steal", "on")
    tmp = tempfile.mkdtemp(prefix="vmlat_steal_test.")
    try:
        ko = os.environ.get("VMLAT_GUEST_KO", "")
        cpio = linux_guest_initramfs(tmp, GUEST_INIT,
                                     [ko] if os.path.isfile(ko) else [])
        m, attempt, secs = boot_until_up(
            lambda hung_s: measure(qemu, kernel, cpio, hung_s))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if m is None:
        tap(False, "guest_steal.boots", "%d boots hung in %.0f s" % (
            attempt, secs))
        return
    print("# boot %d" % attempt)
    keep("steal_figures.json", json.dumps(m, indent=1))
    for name, _ in SCENARIOS:
        check(name, m[name])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--figures"]:
        # steal_test.py --figures TRACE TID A_T0 A_T1 B_T0 B_T1 T_S0
        # T_STOP SLACK_NS: figures() as JSON (what run_native() runs)
        with open(sys.argv[2]) as f:
            print(json.dumps(figures(f.read(),
                                     *[int(x) for x in sys.argv[3:11]])))
        sys.exit(0)
    main([t_guest_steal])
