#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""analyzer_test.py - vmlat's live statistics against an ftrace oracle.

For each workload of ./scenario (exits, hog, two-vms, wait, idle) this
records ftrace's own sched and kvm events in a private tracefs instance
(clock "mono", the clock vmlat reads) while vmlat is loaded, resets vmlat
and writes a trace marker just before the workload, writes another marker
and reads /sys/kernel/debug/vmlat/json just after it, then runs the
independent oracle (./vmlat_oracle.py, which shares no code with vmlat) on
the trace and compares.

Tolerances (why: selftests/oracle/README):
  - counts are exact: exits per reason; preempted/wait intervals +-1;
  - state times per vCPU: |vmlat - oracle| <= 1% of the observed time
    + entries(state) x SLACK, SLACK = 1 us of text-trace resolution plus
    twice the cost of one ftrace event (the two ends of each interval are
    read by different probes): 10 us on the stock kernels, 30 us on the
    debug kernel (KASAN, lockdep), set by $VMLAT_SLACK_US; preempted
    and wait times, and the time charged to their preemptors, widened by
    their intervals' brackets: vmlat's probe runs before ftrace's, so its
    clock read lies between the event before on that CPU and the event,
    and a loaded machine stalls an emulated CPU between the two (25 ms in
    a second of a hog's preemptions, seen in CI);
  - preemption and exit-handling percentiles from vmlat's buckets:
    between the oracle's exact values (less SLACK) and 1/16 above them
    (plus SLACK), those taken a 20th of the intervals below and above the
    rank (RANK_TOL);
  - exit handling time of each exit (vmlat's vmlat_exit events next to the
    oracle's exits, in order): within 2 x SLACK plus the gap between the
    two kvm_entry probes (in the trace) plus the run's jitter (the spread
    of the oracle's CPUID handling times, 10th to 90th percentile), all
    but a 20th of them (a stall of the CPU between the two kvm_exit probes
    does not show), those never
    above the time from the kvm_entry before; every one within the
    oracle's bounds (a stall between vmlat's probe and ftrace's, at any of
    the exit's kvm_exit, sched_switch and kvm_entry, puts vmlat's reading
    anywhere between the CPU's events around it); vmlat's total per reason
    is the sum of its events;
  - vmlat's own invariant is exact: a vCPU's state times sum to its observed
    time;
  - where kvm_exit is traced late (6.1 SVM, "exit_trace late" in vmlat's
    status), vmlat ends guest time at the VM exit, before the kvm_exit the
    oracle goes by: guest time may only be lower and kernel time only
    higher than the oracle's, and their sum is compared as a state time;
    an exit-handling percentile's upper side takes each interval from the
    kvm_entry before its kvm_exit (the exit came after that), as does each
    exit's handling time, and the total per reason lies between ftrace's,
    less 10 ms (PAUSE_NS), and that bound's.

Needs root, kvm_amd, $VMLAT_KO; run from the directory holding scenario and
vmlat_oracle.py. TAP output; exit status 4 when everything was skipped.
"""
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vmlat_oracle import LINE_RE  # noqa: E402
from vmlat_ktest import (KEEP, SLACK_NS, TRACING, VMLAT,  # noqa: E402
                         SkipTest, check_no_lost_events, keep, main, rd,
                         rd_json, run_native, status_fields, tap,
                         tracing_instance, ts_ns, wr)

INST = TRACING + "/instances/vmlat_analyzer_test"
EVENTS = ["sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup",
          "sched/sched_migrate_task", "sched/sched_process_exit",
          "kvm/kvm_entry", "kvm/kvm_exit",
          "kvm/kvm_userspace_exit", "kvm/kvm_hypercall"]
# Traced just before a switch (__schedule()'s update_curr()) and a timer's
# wake-up on the same CPU: they bracket vmlat's clock reads at the ends of
# an interval (the oracle's start_lo_ns and end_lo_ns: brackets()) to
# microseconds on a quiet machine.
BRACKET_EVENTS = ["sched/sched_stat_runtime", "timer/hrtimer_expire_entry"]
STATES = ["guest", "kernel", "user", "preempted", "wait", "idle", "blocked"]
QUEUED = ["preempted", "wait"]     # the states the oracle lists intervals of
RANK_TOL = 0.05     # percentiles: a 20th of the intervals either way
PAUSE_NS = 10 * 10**6   # exit handling totals: one stall of a CPU
IDLE_SLEEP_NS = 5 * 10**6   # scenario idle: the VMM's sleep after a HLT
def marker(text):
    wr(INST + "/trace_marker", text)


def record(name, args, extra_events=(), intervals=False):
    """Run ./scenario ARGS under ftrace (EVENTS and @extra_events); return
    (scenario text, vmlat json, oracle json, directory of the files) or
    raise RuntimeError. @intervals: the oracle lists intervals and exits."""
    extra_events = [e for e in extra_events
                    if os.path.isdir(TRACING + "/events/" + e)]
    with tracing_instance(INST, EVENTS + extra_events, 16384):
        wr(INST + "/trace", "")
        wr(INST + "/tracing_on", "1")
        wr(VMLAT + "/reset", "1")
        marker("vmlat_start " + name)
        # args: one scenario's arguments, or a list of steps: scenario
        # arguments (started, not waited for) or ("noise", N) (N short
        # busy host tasks on CPU 1 at once, waited for)
        steps = args if isinstance(args[0], (list, tuple)) else [args]
        runs, procs = [], []
        for a in steps:
            if a[0] == "noise":
                time.sleep(0.3)
                noise = [subprocess.Popen(
                    ["taskset", "-c", "1", "sh", "-c",
                     "i=0; while [ $i -lt 200 ]; do i=$((i+1)); done"])
                    for _ in range(a[1])]
                for q in noise:
                    q.wait(timeout=60)
                continue
            runs.append(a)
            procs.append(subprocess.Popen(
                [os.path.join(HERE, "scenario")] + a,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                universal_newlines=True))
        outs = [q.communicate(timeout=300) for q in procs]
        marker("vmlat_end " + name)
        vm = rd_json()
        wr(INST + "/tracing_on", "0")
        stdout = "".join(o[0] for o in outs)
        for a, q, (out, err) in zip(runs, procs, outs):
            if q.returncode == 4:
                raise SkipTest(err.strip().splitlines()[-1:] or "skip")
            if q.returncode != 0 or "status=ok" not in out:
                raise RuntimeError("scenario %s failed (%d): %s" %
                                   (" ".join(a), q.returncode,
                                    err.strip()[-300:]))
        check_no_lost_events(INST)
        trace = rd(INST + "/trace")

    tmp = "/tmp/vmlat_analyzer_%s" % name
    os.makedirs(tmp, exist_ok=True)
    if KEEP:
        tmp = os.path.join(KEEP, "analyzer_%s" % name)
        os.makedirs(tmp, exist_ok=True)
    wr(tmp + "/scenario.txt", stdout)
    wr(tmp + "/trace.txt", trace)
    wr(tmp + "/vmlat.json", json.dumps(vm, indent=1))
    # the oracle reads and writes files only: on the build machine when
    # a runner is there (run_native())
    o = run_native([sys.executable, os.path.join(HERE, "vmlat_oracle.py"),
                    "--scenario", tmp + "/scenario.txt",
                    "--start-marker", "vmlat_start " + name,
                    "--end-marker", "vmlat_end " + name,
                    "-o", tmp + "/oracle.json", tmp + "/trace.txt"] +
                   (["--intervals"] if intervals else []))
    if o.returncode != 0:
        raise RuntimeError("oracle failed (%d): %s" %
                           (o.returncode, o.stderr.strip()[-300:]))
    return stdout, vm, rd_json(tmp + "/oracle.json"), tmp


def scen_lines(text, tag):
    out = []
    for line in text.splitlines():
        f = line.split()
        if not f or f[0] != tag:
            continue
        out.append(dict(kv.split("=", 1) for kv in f[1:] if "=" in kv))
    return out


def vmlat_vm(vm_json, pid):
    for v in vm_json["vms"]:
        if v["pid"] == pid:
            return v
    return None


def vmlat_vcpu(vm_json, tid):
    for v in vm_json["vms"]:
        for c in v["vcpus"]:
            if c["tid"] == tid:
                return v, c
    return None, None


def oracle_vcpu(ora, tid):
    for c in ora["vcpus"]:
        if c["tid"] == tid:
            return c
    return None


def near(a, b, slack):
    return abs(a - b) <= slack


def exits_traced_late():
    """Whether vmlat's status says kvm_exit is traced late here."""
    return status_fields(rd(VMLAT + "/status")).get("exit_trace") == "late"


def check_moved(tag, c, o, slack):
    """Late kvm_exit: guest time moved to kernel, never the other way."""
    both = c["guest_ns"] + c["kernel_ns"]
    theirs = o["state_ns"]["guest"] + o["state_ns"]["kernel"]
    tap(near(both, theirs, slack), "%s.guest_plus_kernel_time" % tag,
        "vmlat %d oracle %d slack %d" % (both, theirs, slack))


def brackets(o, kinds):
    """How far vmlat's clock reads may lie before ftrace's stamps at the
    ends of the preempted and wait intervals of @kinds of a vCPU (@o: the
    oracle's record of it, with --intervals): vmlat's probe on a
    tracepoint runs before ftrace's, so its read lies between the event
    before on that CPU and the event (the oracle's start_lo_ns and
    end_lo_ns). Under load an emulated CPU stalls between the two for
    milliseconds. Returns (down, up): vmlat's total may be down below the
    oracle's (its reads at the ends late in the bracket) and up above it
    (at the starts); an end at the window's edges has no bracket."""
    ivls = [i for i in o.get("intervals", []) if i["kind"] in kinds]
    return (sum(i["end_ns"] - i["end_lo_ns"] for i in ivls),
            sum(i["start_ns"] - i["start_lo_ns"] for i in ivls))


def check_states(tag, vm_json, ora, tids, states):
    """vmlat's per-state times of each vCPU against the oracle's, and the
    exact sum invariant; where the oracle lists intervals (--intervals),
    preempted and wait times within their ends' brackets (brackets())."""
    for i, tid in enumerate(tids):
        if len(tids) > 1:
            tag = "%s.vcpu%d" % (tag.split(".")[0], i)
        _, c = vmlat_vcpu(vm_json, tid)
        o = oracle_vcpu(ora, tid)
        if c is None or o is None:
            tap(False, "%s.vcpu_%d_known" % (tag, tid),
                "vmlat %s, oracle %s" % (c is not None, o is not None))
            continue
        total = sum(c[s + "_ns"] for s in STATES)
        tap(total == c["observed_ns"], "%s.state_sum_equals_observed" % tag,
            "sum %d observed %d" % (total, c["observed_ns"]))
        slack = o["observed_ns"] // 100 + 2 * SLACK_NS
        tap(near(c["observed_ns"], o["observed_ns"], slack),
            "%s.observed_time" % tag,
            "vmlat %d oracle %d slack %d" % (c["observed_ns"],
                                             o["observed_ns"], slack))
        late = exits_traced_late()
        kinds = set(i["kind"] for i in o.get("intervals", []))
        for s in states:
            slack = o["observed_ns"] // 100 + \
                (o["entries"][s] + 1) * SLACK_NS
            mine, theirs = c[s + "_ns"], o["state_ns"][s]
            down, up = brackets(o, [s])
            if late and s == "guest":
                ok = mine <= theirs + slack
                check_moved(tag, c, o, slack)
            elif late and s == "kernel":
                ok = mine >= theirs - slack
            else:
                ok = theirs - down - slack <= mine <= theirs + up + slack
            tap(ok, "%s.%s_time" % (tag, s),
                "vmlat %d oracle %d slack %d%s%s" %
                (mine, theirs, slack,
                 ", brackets -%d +%d" % (down, up) if s in kinds else "",
                 " (kvm_exit traced late)" if late else ""))


def stolen_slack(o):
    """Tolerance on time charged to preemptors of vCPU o (oracle record):
    1% of its observed time, plus both ends' skew of every preempted and
    wait interval."""
    return o["observed_ns"] // 100 + \
        (o["preempt"]["count"] + o["wait"]["count"] + 1) * 2 * SLACK_NS


def hist_count(vm, kind):
    return vm["histograms"][kind]["count"]


def check_quantile(name, mine, srt, p, upper=None, lower=None):
    """A percentile read from vmlat's buckets against the oracle's sorted
    intervals: never below the exact value, less than 1/16 above it, plus
    the two probes' skew on each sample. Where intervals bunch up at a
    bucket bound, a few microseconds of skew move some of them across it
    (and single-threaded TCG can pause a CPU between vmlat's probe and
    ftrace's for much longer): so the exact values are taken RANK_TOL of
    the intervals below and above the percentile's rank. @upper: sorted
    bounds of the same intervals taken from further back (the percentile
    of bounds bounds the percentile), for the upper side; @lower: the same
    ending earlier, for the lower side."""
    if not srt:
        tap(False, name, "the oracle has no intervals")
        return
    k = max(1, math.ceil(RANK_TOL * len(srt)))
    r = max(0, math.ceil(p / 100.0 * len(srt)) - 1)
    up = upper if upper and len(upper) == len(srt) else srt
    down = lower if lower and len(lower) == len(srt) else srt
    lo, hi = down[max(0, r - k)], up[min(len(up) - 1, r + k)]
    # (mine null: vmlat has no sample, schema 4)
    tap(mine is not None and
        lo - 2 * SLACK_NS <= mine <= hi * 17 // 16 + 2 * SLACK_NS, name,
        "vmlat %s oracle %d (%d ranks below: %d, above%s: %d)" %
        (mine, srt[r], k, lo, " from the kvm_entry before" if up is upper
         else "", hi))


def preempt_ends(path, o, pid):
    """The oracle's preemptions of a vCPU (its intervals, @o: with
    --intervals) of VM @pid, each ending at vmlat's own vmlat_preempt
    event for it where the trace at @path has one: vmlat's probe on the
    switch-in reads its clock before it writes that event, and both come
    before ftrace's sched_switch (under TCG the other CPU's turn may fall
    between them). Sorted lengths: lower bounds of what vmlat measured."""
    ivls = [i for i in o.get("intervals", []) if i["kind"] == "preempted"]
    events = {}                 # CPU: times of the VM's vmlat_preempt
    with open(path) as f:
        for line in f:
            m = LINE_RE.match(line)
            if m and m.group("event") == "vmlat_preempt" and \
                    "vm_pid=%d " % pid in m.group("body"):
                events.setdefault(int(m.group("cpu")), []).append(
                    ts_ns(m.group("sec") + "." + m.group("frac")))
    out = []
    for i in ivls:
        ts = [t for t in events.get(i["cpu"], [])
              if i["start_ns"] < t <= i["end_ns"]]
        out.append((ts[-1] if ts else i["end_ns"]) - i["start_ns"])
    return sorted(out)


def vmlat_exit_events(path, tid, name):
    """vmlat's own vmlat_exit events of thread @tid in the trace at @path,
    between the markers of record @name: [(ts_ns, reason, duration_ns)]."""
    out, inside = [], False
    with open(path) as f:
        for line in f:
            m = LINE_RE.match(line)
            if not m:
                continue
            ev, body = m.group("event"), m.group("body")
            if ev == "tracing_mark_write":
                if "vmlat_start " + name in body:
                    inside = True
                elif "vmlat_end " + name in body:
                    break
                continue
            if not inside or ev != "vmlat_exit" or int(m.group("pid")) != tid:
                continue
            kv = dict(x.split("=", 1) for x in body.split() if "=" in x)
            out.append((ts_ns(m.group("sec") + "." + m.group("frac")),
                        kv["reason"], int(kv["duration_ns"])))
    return out


def check_exit_pairs(o, events, late):
    """Each exit's handling time, as vmlat's vmlat_exit event gave it, next
    to the oracle's from the kvm_exit and kvm_entry events of the same run.

    Both are read at the same two tracepoints by different probes: they
    differ by the cost of an ftrace event at each end (2 x SLACK) and by
    the gap between vmlat_exit (written by vmlat's kvm_entry probe) and
    ftrace's kvm_entry, for all but a few exits (RANK_TOL). A stall of the
    CPU between the two probes (TCG: the emulator's thread interrupted or
    switched out by the machine running it, or running the other vCPU:
    single-threaded TCG runs them in turns) moves vmlat's times further, but
    never beyond the CPU's events around them, at each kvm_exit,
    sched_switch and kvm_entry of the exit: every exit lies within the
    oracle's lower_ns and upper_ns (less and plus 2 x SLACK and that gap).
    Smaller stalls come and go too (TCG under load: tens of us), and one
    may fall between two probes as well as into an exit: "equal" allows
    the machine's jitter in this run besides, as the oracle measures it on
    the same work repeated, the spread of its CPUID handling times (from
    the 10th to the 90th percentile). Where kvm_exit is traced late (6.1
    SVM), vmlat's time starts at the exit itself, before the kvm_exit: any
    exit may be longer, up to upper_ns."""
    mine = o.get("handled_exits")
    if mine is None or len(mine) != len(events):
        tap(False, "exits.events_pair_with_oracle",
            "vmlat_exit events %d, oracle's handled exits %s" %
            (len(events), None if mine is None else len(mine)))
        return
    cpuid = sorted(h["ns"] for h in mine
                   if h["reason"].split(" ")[0].lower() == "cpuid")
    jitter = cpuid[len(cpuid) * 9 // 10] - cpuid[len(cpuid) // 10] \
        if len(cpuid) >= 20 else 0
    wrong, apart, far = [], [], []
    for h, (ts, reason, d) in zip(mine, events):
        if reason != h["reason"].split(" ")[0]:
            wrong.append((h["entry_ns"], h["reason"], reason))
            continue
        gap = abs(h["entry_ns"] - ts)
        top = h["upper_ns"] if late else h["ns"]
        row = (h["entry_ns"], reason, d, h["lower_ns"], h["ns"],
               h["upper_ns"])
        if not h["lower_ns"] - 2 * SLACK_NS - gap <= d <= \
                h["upper_ns"] + 2 * SLACK_NS + gap:
            far.append(row)
        elif not h["ns"] - 2 * SLACK_NS - gap - jitter <= d <= \
                top + 2 * SLACK_NS + gap + jitter:
            apart.append(row)
    tap(not wrong, "exits.events_pair_with_oracle",
        "%d pairs, reasons differ at %s" % (len(mine), wrong[:3]))
    tap(not far, "exits.each_handling_time_within_bounds",
        "%d of %d outside (entry_ns reason vmlat oracle lower, exact, "
        "upper): %s" % (len(far), len(mine), far[:3]))
    most = math.floor(RANK_TOL * len(mine))
    tap(len(apart) <= most, "exits.handling_times_equal",
        "%d of %d (at most %d) differ by more than 2 x %d ns + %d ns of "
        "jitter%s: %s" %
        (len(apart), len(mine), most, SLACK_NS, jitter,
         " (kvm_exit traced late)" if late else "", apart[:3]))


def t_exits():
    n = 200
    text, vm_json, ora, tmp = record("exits", ["exits", str(n)],
                                     ["vmlat/vmlat_exit"], intervals=True)
    vcpu = scen_lines(text, "vcpu")[0]
    pid, tid = int(vcpu["vm_pid"]), int(vcpu["vcpu_tid"])
    vm = vmlat_vm(vm_json, pid)
    o = oracle_vcpu(ora, tid)
    if vm is None or o is None:
        tap(False, "exits.vm_known", "vmlat %s oracle %s" % (vm, o))
        return
    mine = {(e["isa"], e["code"]): e["count"] for e in vm["exits"]}
    theirs = {(r["isa"], int(r["code"], 16)): r["count"]
              for r in o["exit_reasons"].values() if r["code"] is not None}
    tap(mine == theirs, "exits.per_reason_counts_equal_ftrace",
        "vmlat %s ftrace %s" % (sorted(mine.items()), sorted(theirs.items())))
    tap(vm["exits_undecoded"] == 0, "exits.none_undecoded",
        str(vm["exits_undecoded"]))
    # The workload's own exits are all there, by vmlat's name for the
    # host's ISA (SVM: "IOIO", "NPF"; VMX: "IO_INSTRUCTION",
    # "EPT_VIOLATION").
    names = {e["name"]: e["count"] for e in vm["exits"]}
    isas = {e["isa"] for e in vm["exits"]}
    tap(len(isas) == 1, "exits.one_isa", str(sorted(isas)))
    for ex in scen_lines(text, "expect"):
        if "exit" not in ex:
            continue
        want = int(ex["count"])
        name = ex["vmx"] if "vmx" in isas else ex["exit"]
        got = names.get(name, 0)
        tap(got >= want, "exits.%s_at_least_%d" % (name, want),
            "vmlat %d" % got)
    # Every completed exit is in the exit-handling histogram; the oracle
    # counts the exits whose kvm_entry followed ("handled").
    handled = sum(r["handled"] for r in o["exit_reasons"].values())
    hc = hist_count(vm, "exit")
    tap(hc == handled, "exits.histogram_counts_handled_exits",
        "hist %d oracle handled %d (exits %d)" % (hc, handled,
                                                   sum(mine.values())))
    # Handling time of each exit, from vmlat's vmlat_exit events of the
    # same run; per reason, vmlat's total is the sum of its events and the
    # median from its per-reason buckets is checked as percentiles are.
    # Where kvm_exit is traced late, vmlat's handling of an exit begins at
    # the exit itself, which ftrace does not show: somewhere after the
    # kvm_entry before it (the oracle's sorted_upper_ns); there the total
    # lies between ftrace's and that bound's.
    late = exits_traced_late()
    events = vmlat_exit_events(tmp + "/trace.txt", tid, "exits")
    check_exit_pairs(o, events, late)
    ev_total = {}
    for _, reason, d in events:
        ev_total[reason] = ev_total.get(reason, 0) + d
    byk = {(e["isa"], e["code"]): e for e in vm["exits"]}
    for key, r in sorted(o["exit_reasons"].items()):
        if r["code"] is None or not r["handled"]:
            continue
        e = byk.get((r["isa"], int(r["code"], 16)))
        if e is None:
            tap(False, "exits.%s_handling_known" % key, "not in vmlat")
            continue
        mine_ev = ev_total.get(key.split(" ")[0], 0)
        tap(e["total_ns"] == mine_ev, "exits.%s_total_is_its_events" % key,
            "vmlat %d, its vmlat_exit events %d" % (e["total_ns"], mine_ev))
        slack = o["observed_ns"] // 100 + r["handled"] * 2 * SLACK_NS + \
            PAUSE_NS
        if late:
            # vmlat's handling begins at the exit itself, ftrace's at the
            # late kvm_exit, after the host took its interrupts (an
            # interrupt exit's handling is mostly that): ftrace's interval
            # misses a part the bound from the kvm_entry before does not.
            # A fixed allowance for that part fails under load, where the
            # host's interrupt handling on a loaded CPU took 13 ms more.
            upper = sum(r["sorted_upper_ns"])
            tap(r["total_ns"] - slack <= e["total_ns"] <= upper + slack,
                "exits.%s_handling_total" % key,
                "vmlat %d oracle %d..%d slack %d" % (
                    e["total_ns"], r["total_ns"], upper, slack))
        if r["handled"] >= 20 and "histogram" in e:
            check_quantile("exits.%s_handling_p50" % key,
                           e["histogram"]["p50_ns"], r["sorted_ns"], 50,
                           r["sorted_upper_ns"] if late else None)


def t_hog():
    # $VMLAT_HOG: the workload next to the hog, "hog 2" (a VM doing port
    # I/O in a loop for 2 s) by default. A slow test host (bochs) takes
    # "spin 1": a computing guest, preempted at the host's timer interrupts.
    text, vm_json, ora, tmp = record("hog", os.environ.get("VMLAT_HOG",
                                                           "hog 2").split(),
                                     ["vmlat/vmlat_preempt"] + BRACKET_EVENTS,
                                     intervals=True)
    vcpu = scen_lines(text, "vcpu")[0]
    hog = scen_lines(text, "hog")[0]
    pid, tid = int(vcpu["vm_pid"]), int(vcpu["vcpu_tid"])
    check_states("hog", vm_json, ora, [tid], ["preempted", "guest"])
    vm = vmlat_vm(vm_json, pid)
    o = oracle_vcpu(ora, tid)
    if vm is None or o is None or not vm["preemptors"]:
        tap(False, "hog.top_preemptor_is_hog", "no preemptors")
        return
    top = vm["preemptors"][0]
    tap(top["kind"] == "host" and top["pid"] == int(hog["pid"]) and
        top["comm"] == hog["comm"], "hog.top_preemptor_is_hog",
        "vmlat top %s, hog %s" % (top, hog))
    otop = o["preemptors"][0] if o["preemptors"] else {}
    tap(otop.get("pid") == int(hog["pid"]), "hog.oracle_agrees_top_is_hog",
        "oracle top %s" % otop)
    stolen = top["stolen_ns"]
    want = otop.get("stolen_ns", 0)
    slack = stolen_slack(o)
    # the hog's time lies inside the vCPU's intervals: their brackets
    down, up = brackets(o, QUEUED)
    tap(want - down - slack <= stolen <= want + up + slack,
        "hog.hog_stolen_time", "vmlat %d oracle %d slack %d, brackets "
        "-%d +%d" % (stolen, want, slack, down, up))
    lower = preempt_ends(tmp + "/trace.txt", o, pid)
    for q, p in (("p50_ns", 50), ("p90_ns", 90), ("p99_ns", 99)):
        check_quantile("hog.preempt_%s" % q, vm["histograms"]["preempt"][q],
                       o["preempt"].get("sorted_ns"), p, lower=lower)
    pc = hist_count(vm, "preempt")
    tap(abs(pc - o["preempt"]["count"]) <= 1, "hog.preempt_interval_count",
        "vmlat %d oracle %d" % (pc, o["preempt"]["count"]))


def t_two_vms():
    text, vm_json, ora, _ = record("two-vms", ["two-vms", "2"],
                                   BRACKET_EVENTS, intervals=True)
    vcpus = scen_lines(text, "vcpu")
    if len(vcpus) != 2:
        tap(False, "two-vms.two_vcpus", text[-300:])
        return
    tids = [int(v["vcpu_tid"]) for v in vcpus]
    pids = [int(v["vm_pid"]) for v in vcpus]
    check_states("two-vms", vm_json, ora, tids, ["preempted"])
    for me, other in ((0, 1), (1, 0)):
        vm = vmlat_vm(vm_json, pids[me])
        tag = "two-vms.vm%d" % me
        if vm is None or not vm["preemptors"]:
            tap(False, tag + "_names_other_vm", "no preemptors")
            continue
        top = vm["preemptors"][0]
        tap(top["kind"] == "vm" and top["vm"] == pids[other] and
            top["pid"] == tids[other], tag + "_names_other_vm",
            "top %s, other vm %d vcpu tid %d" % (top, pids[other],
                                                 tids[other]))
        # stolen_by lists the VMs that took time, by id (schema 4)
        ovm = vmlat_vm(vm_json, pids[other])
        mat = sum(e["stolen_ns"] for e in vm["stolen_by"]["vms"]
                  if ovm and e["id"] == ovm["id"])
        ora_mat = ora["matrix"].get("vm:%d" % pids[other], {}) \
            .get(str(pids[me]), 0)
        o = oracle_vcpu(ora, tids[me])
        slack = stolen_slack(o)
        down, up = brackets(o, QUEUED)
        tap(mat > 0 and ora_mat - down - slack <= mat <= ora_mat + up + slack,
            tag + "_matrix_cell", "vmlat %d oracle %d slack %d, brackets "
            "-%d +%d" % (mat, ora_mat, slack, down, up))


def t_wait():
    text, vm_json, ora, _ = record("wait", ["wait", "2"], BRACKET_EVENTS,
                                   intervals=True)
    vcpu = scen_lines(text, "vcpu")[0]
    pid, tid = int(vcpu["vm_pid"]), int(vcpu["vcpu_tid"])
    check_states("wait", vm_json, ora, [tid], ["wait", "idle", "preempted"])
    vm = vmlat_vm(vm_json, pid)
    o = oracle_vcpu(ora, tid)
    if vm is None or o is None:
        tap(False, "wait.vm_known")
        return
    wc = hist_count(vm, "wait")
    tap(o["wait"]["count"] > 0 and abs(wc - o["wait"]["count"]) <= 1,
        "wait.wait_interval_count", "vmlat %d oracle %d" %
        (wc, o["wait"]["count"]))


def t_idle():
    """A halting guest alone on its CPU: every wake-up finds the CPU idle.
    That wait is the CPU's (kind "idle", with the CPU), never a host task
    "swapper/N", and in no stolen_by row."""
    text, vm_json, ora, _ = record("idle", ["idle", "2"])
    preemptors = rd(VMLAT + "/preemptors")
    keep("analyzer_idle_preemptors.txt", preemptors)
    vcpu = scen_lines(text, "vcpu")[0]
    tid, pid = int(vcpu["vcpu_tid"]), int(vcpu["vm_pid"])
    cpu = int(vcpu["cpu"])
    check_states("idle", vm_json, ora, [tid],
                 ["idle", "guest", "kernel", "user", "blocked"])
    o = oracle_vcpu(ora, tid)
    vm, c = vmlat_vcpu(vm_json, tid)
    if not o or not c:
        return
    # The VMM sleeps IDLE_SLEEP_NS after each of the guest's HLT exits:
    # at least that much idle each (less the way from its call to the
    # switch-out, SLACK), by the workload's own count, whatever share of
    # the run a slow test host's exit handling takes.
    hlt = int(scen_lines(text, "done")[0]["hlt"])
    tap(hlt > 0 and c["idle_ns"] >= hlt * (IDLE_SLEEP_NS - SLACK_NS),
        "idle.mostly_idle", "idle %d of %d ns; the VMM slept after %d HLT "
        "exits" % (c["idle_ns"], c["observed_ns"], hlt))
    idle = [p for p in vm["preemptors"] if p["kind"] == "idle"]
    oidle = sum(p["stolen_ns"] for p in o["preemptors"]
                if p["kind"] == "idle" and p["cpu"] == cpu)
    swapper = [p for p in vm["preemptors"] if p["kind"] != "idle" and
               (not p["pid"] or (p["comm"] or "").startswith("swapper/"))]
    tap(not swapper, "idle.no_idle_task_as_host_task", str(swapper))
    tap(len(idle) == 1 and idle[0]["cpu"] == cpu and
        idle[0]["pid"] is None and idle[0]["comm"] is None,
        "idle.idle_cpu_is_kind_idle",
        "cpu %d, idle entries %s, oracle %d ns" % (cpu, idle, oidle))
    slack = stolen_slack(o)
    mine = idle[0]["stolen_ns"] if idle else 0
    tap(oidle > 0 and near(mine, oidle, slack), "idle.idle_cpu_time",
        "vmlat %d oracle %d slack %d" % (mine, oidle, slack))
    ohost = ora["matrix"].get("host", {}).get(str(pid), 0)
    tap(near(vm["stolen_by"]["host_ns"], ohost, slack),
        "idle.idle_not_in_stolen_by_host",
        "vmlat %d oracle (host tasks only) %d slack %d, idle %d" %
        (vm["stolen_by"]["host_ns"], ohost, slack, mine))
    rows = [ln.split() for ln in preemptors.splitlines()
            if ln.split()[:1] == [str(pid)]]
    tap(any(r[2] == "idle" and r[-1] == str(cpu) for r in rows) and
        not any("swapper/" in r[4] for r in rows),
        "idle.preemptors_table_shows_idle_cpu", str(rows))


def oracle_vm(ora, pid):
    for v in ora["vms"]:
        if v["vm_pid"] == pid:
            return v
    return None


def preemptor_key(p):
    """A preemptor as vmlat keys it: a task by kind and pid, an idle CPU
    by its number (vmlat's has no pid, null; the oracle's swapper's 0)."""
    if p["kind"] == "idle":
        return (p["kind"], None, p["cpu"])
    return (p["kind"], p["pid"], None)


def t_crowd():
    """A host hog and three VMs on one CPU (the README's demo), a dozen
    short host tasks meeting the first VM before the other two start.
    vmlat keeps 8 preemptors per VM (space-saving top-k): every preemptor
    that took more than an eighth of a VM's stolen time in the oracle must
    be listed, none may be shown with more time than the oracle gives it,
    none with less than that minus what went to "other", and the rows
    plus "other" must add up to the oracle's total."""
    text, vm_json, ora, _ = record("crowd", [["hog", "4"], ("noise", 12),
                                             ["two-vms", "2"]])
    vcpus = scen_lines(text, "vcpu")
    if len(vcpus) != 3:
        tap(False, "crowd.three_vcpus", text[-300:])
        return
    for i, vc in enumerate(vcpus):
        pid = int(vc["vm_pid"])
        tag = "crowd.vm%d" % i
        vm, ovm = vmlat_vm(vm_json, pid), oracle_vm(ora, pid)
        o = oracle_vcpu(ora, int(vc["vcpu_tid"]))
        if vm is None or ovm is None or o is None:
            tap(False, tag + "_known")
            continue
        mine = {preemptor_key(p): p["stolen_ns"] for p in vm["preemptors"]}
        theirs = {preemptor_key(p): p["stolen_ns"]
                  for p in ovm["preemptors"]}
        total = sum(theirs.values())
        heavy = sorted(k for k, ns in theirs.items() if ns * 8 > total)
        missing = [k for k in heavy if k not in mine]
        tap(heavy and not missing, tag + "_heavy_preemptors_listed",
            "heavy %s missing %s (other %d)" % (heavy, missing,
                                                vm["preemptors_other_ns"]))
        slack = stolen_slack(o)
        other = vm["preemptors_other_ns"]
        bad = {k: (ns, theirs.get(k, 0)) for k, ns in mine.items()
               if not theirs.get(k, 0) - other - slack <= ns <=
               theirs.get(k, 0) + slack}
        tap(not bad, tag + "_stolen_within_oracle",
            "vmlat, oracle beyond slack %d, other %d: %s" %
            (slack, other, bad))
        sum_mine = sum(mine.values()) + other
        tap(near(sum_mine, total, slack), tag + "_rows_plus_other_total",
            "vmlat %d oracle %d slack %d" % (sum_mine, total, slack))


def total_exits(vm_json):
    return sum(e["count"] for v in vm_json["vms"] for e in v["exits"])


def t_reset():
    """Statistics files are read-only; reset refuses anything but "1"
    (-EINVAL, nothing changed) and zeroes the statistics on "1"."""
    import errno
    import stat
    files = ["vms", "vcpus", "exits", "histograms", "preemptors", "matrix",
             "steal", "guest_tasks", "json"]
    modes = {f: stat.S_IMODE(os.stat(VMLAT + "/" + f).st_mode)
             for f in files + ["reset"]}
    tap(all(modes[f] == 0o444 for f in files) and modes["reset"] == 0o600,
        "reset.file_modes", str(modes))
    p = subprocess.run([os.path.join(HERE, "scenario"), "exits", "50"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("scenario exits 50: %s" % p.stderr[-200:])
    js = rd_json()
    before = total_exits(js)
    # the scenario's guest runs with paging: its address space is known
    spaces = sum(len(v["guest_tasks"]) for v in js["vms"])
    for bad in ("2", "abc", "-1"):
        try:
            wr(VMLAT + "/reset", bad)
            got = "accepted"
        except OSError as e:
            got = errno.errorcode.get(e.errno, str(e.errno))
        after = total_exits(rd_json())
        tap(got == "EINVAL" and after == before and before >= 200,
            "reset.refuses_%s" % bad,
            "write %r: %s, exits %d -> %d" % (bad, got, before, after))
    wr(VMLAT + "/reset", "1")
    after = rd_json()
    hsum = sum(h["count"] for v in after["vms"]
               for h in v["histograms"].values())
    tap(total_exits(after) == 0 and hsum == 0 and spaces > 0 and
        all(not v["preemptors"] and not v["guest_tasks"]
            for v in after["vms"]),
        "reset.zeroes_statistics",
        "exits %d histogram samples %d, address spaces %d before" % (
            total_exits(after), hsum, spaces))


if __name__ == "__main__":
    main([t_exits, t_hog, t_two_vms, t_wait, t_idle, t_crowd, t_reset])
