#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tooling_test.py - vmlat beside the host's own KVM tooling.

An operator's host already runs tools on the tracepoints vmlat hooks:
`perf kvm stat record`, `kvm_stat` (tracepoint mode: perf counters on
kvm:kvm_exit) and ftrace sessions. vmlat must load and unload while they
run, change nothing they see, and show what it shows alone.

  alone:  ./scenario exits N with only vmlat on the tracepoints: vmlat's
          count of each exit reason the scenario makes exactly N of
          (I/O, CPUID, hypercall, HLT) is N.
  beside: vmlat unloaded; an ftrace instance (kvm_exit), kvm_stat -l -t
          and perf kvm stat record -a started; vmlat loaded; ./scenario
          exits N (run A); vmlat unloaded; ./scenario exits N again (run
          B, the tools alone after vmlat left); the tools stopped.
    beside.vmlat_same_as_alone     vmlat's counts of run A's reasons are
                                   those it showed alone (N each);
    beside.vmlat_exits_are_ftrace  vmlat's exits of run A's VM, all
                                   reasons, are ftrace's kvm_exit events
                                   of its vCPU thread, exactly;
    beside.ftrace_complete         the instance lost no events and has
                                   both runs' exits;
    beside.perf_is_ftrace          perf's kvm:kvm_exit samples of each
                                   run's vCPU thread are ftrace's events;
    beside.perf_report             perf kvm stat report reads the record
                                   and counts 2N I/O, CPUID and
                                   hypercall exits;
    beside.kvm_stat_is_ftrace      the sum of kvm_stat's kvm_exit column
                                   is ftrace's kvm_exit events (nothing
                                   else runs a guest in the test host).

Needs root, KVM, $VMLAT_KO, perf and $VMLAT_KVM_STAT (kvm_stat from
linux-source's tools/kvm/kvm_stat); run from the directory holding
scenario. TAP output; exit status 4 when everything was skipped.
"""
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vmlat_ktest import (TRACING, VMLAT, SkipTest,  # noqa: E402
                         check_no_lost_events, keep, load, main, rd,
                         rd_json, scenario, tap, tracing_instance, unload,
                         wr)

N = int(os.environ.get("VMLAT_TOOLING_EXITS", "100"))
KO = os.environ.get("VMLAT_KO", "")
KVM_STAT = os.environ.get("VMLAT_KVM_STAT", "")
INST = TRACING + "/instances/vmlat_tooling_test"
ALONE = {}


def vcpu_of(recs):
    v = [r for tag, r in recs if tag == "vcpu"][0]
    return int(v["vm_pid"]), int(v["vcpu_tid"])


def expected(recs, vmx):
    """{vmlat's name of a reason: count} the scenario says it made exactly
    (not NPF: its count is the pages the guest touched, a minimum; KVM's
    own faults come on top)."""
    return {(r["vmx"] if vmx else r["exit"]): int(r["count"])
            for tag, r in recs
            if tag == "expect" and "exit" in r and r["exit"] != "NPF"}


def vmlat_exits(pid):
    """vmlat's exits of the VM of PID: ({name: count}, isas)."""
    for vm in rd_json()["vms"]:
        if vm["pid"] == pid:
            return ({e["name"]: e["count"] for e in vm["exits"]},
                    {e["isa"] for e in vm["exits"]})
    return {}, set()


def test_alone():
    recs = scenario("exits", str(N))
    pid, _ = vcpu_of(recs)
    got, isas = vmlat_exits(pid)
    want = expected(recs, "vmx" in isas)
    ALONE.update({k: got.get(k, 0) for k in want})
    tap(len(want) >= 4 and ALONE == want, "alone",
        "vmlat %s, the scenario made %s" % (ALONE, want))


def perf_enable(ctl, ack, p, timeout=120):
    """Enable the events of perf record started with -D -1 and
    --control fifo:CTL,ACK, and wait for its ack: from then on it records
    (its start-up, which synthesises every task, takes seconds in the
    test host)."""
    c = os.open(ctl, os.O_RDWR)
    a = os.open(ack, os.O_RDONLY | os.O_NONBLOCK)
    try:
        os.write(c, b"enable\n")
        got, end = b"", time.monotonic() + timeout
        while b"ack" not in got:
            if p.poll() is not None or time.monotonic() > end:
                raise RuntimeError("perf record did not ack 'enable' (%s)"
                                   % ("exited %d" % p.returncode
                                      if p.poll() is not None else
                                      "%d s" % timeout))
            select.select([a], [], [], 1)
            try:
                chunk = os.read(a, 64)
            except BlockingIOError:
                chunk = b""
            if not chunk:
                time.sleep(0.1)     # no writer yet: EOF at once
            got += chunk
    finally:
        os.close(a)
        os.close(c)


def stop(p, timeout=120):
    """SIGINT P (as ^C does: perf writes its record, kvm_stat ends its
    log) and wait for it; its stdout."""
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=timeout)
    return out


class LineLog:
    """The lines a tool prints on its stdout, each with the time
    (time.monotonic()) it came, read by a thread of its own."""

    def __init__(self, p):
        self.lines = []
        self.cond = threading.Condition()
        self.t = threading.Thread(target=self._read, args=(p.stdout,),
                                  daemon=True)
        self.t.start()

    def _read(self, f):
        for ln in f:
            with self.cond:
                self.lines.append((time.monotonic(), ln))
                self.cond.notify_all()
        with self.cond:
            self.lines.append((time.monotonic(), None))     # EOF
            self.cond.notify_all()

    def wait_lines_after(self, t, n, timeout=120):
        """Until @n lines came after @t (or EOF, or @timeout s: the
        point past which the tool is taken as stuck; the check then
        shows what it printed)."""
        end = time.monotonic() + timeout
        with self.cond:
            while (sum(1 for at, ln in self.lines if at > t and ln)
                   < n and not any(ln is None for _, ln in self.lines)):
                left = end - time.monotonic()
                if left <= 0:
                    return
                self.cond.wait(left)

    def text(self):
        self.t.join(60)
        with self.cond:
            return "".join(ln for _, ln in self.lines if ln)


def test_beside():
    perf = shutil.which("perf")
    if not perf or not os.path.isfile(KVM_STAT):
        raise SkipTest("needs perf (linux-perf) and $VMLAT_KVM_STAT")
    if not ALONE:
        raise SkipTest("the alone case did not run")
    tmp = tempfile.mkdtemp()
    data = os.path.join(tmp, "perf.data")
    ctl, ack = os.path.join(tmp, "ctl"), os.path.join(tmp, "ack")
    os.mkfifo(ctl)
    os.mkfifo(ack)
    unload()
    tools = []
    try:
        with tracing_instance(INST, ["kvm/kvm_exit"], 4096):
            wr(INST + "/tracing_on", "1")
            ks = subprocess.Popen(
                [sys.executable, KVM_STAT, "-l", "-c", "-t", "-s", "1",
                 "-f", "^kvm_exit$"], stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, universal_newlines=True,
                env=dict(os.environ, PYTHONUNBUFFERED="1"))
            tools.append(ks)
            banner = ks.stdout.readline()   # after its counters opened
            ks_log = LineLog(ks)
            pf = subprocess.Popen(
                [perf, "kvm", "stat", "record", "-a", "-o", data,
                 "-D", "-1", "--control", "fifo:%s,%s" % (ctl, ack)],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                universal_newlines=True)
            tools.append(pf)
            perf_enable(ctl, ack, pf)
            load(KO)
            rec_a = scenario("exits", str(N))
            pid_a, tid_a = vcpu_of(rec_a)
            got, isas = vmlat_exits(pid_a)
            want = expected(rec_a, "vmx" in isas)
            unload()
            rec_b = scenario("exits", str(N))
            _, tid_b = vcpu_of(rec_b)
            # kvm_stat's log counts run B's last exits once it has read
            # its counters after run B ended: the second line it prints
            # after that (the first may have read them before). Waited
            # for, not a fixed sleep.
            ks_log.wait_lines_after(time.monotonic(), 2)
            perf_out = stop(pf)
            ks.send_signal(signal.SIGINT)
            ks.wait(timeout=120)
            ks_out = banner + ks_log.text()
            tools = []
            wr(INST + "/tracing_on", "0")
            check_no_lost_events(INST)
            trace = rd(INST + "/trace")
    finally:
        for p in tools:
            p.kill()
            p.wait()
        if not os.path.isdir(VMLAT):
            load(KO)              # as run_suite left it
    keep("tooling_kvm_stat.csv", ks_out)
    keep("tooling_perf_record.txt", perf_out)

    mine = {k: got.get(k, 0) for k in want}
    tap(mine == ALONE, "beside.vmlat_same_as_alone",
        "beside the tools %s, alone %s" % (mine, ALONE))

    ft = {}
    for ln in trace.splitlines():
        if ": kvm_exit: " in ln and not ln.startswith("#"):
            tid = int(ln.split(": kvm_exit: ")[0].split()[0].rsplit("-", 1)[1])
            ft[tid] = ft.get(tid, 0) + 1
    total = sum(got.values())
    tap(total == ft.get(tid_a), "beside.vmlat_exits_are_ftrace",
        "vmlat %d exits of run A's VM, ftrace %s kvm_exit of its vCPU" %
        (total, ft.get(tid_a)))
    tap(ft.get(tid_a, 0) >= 4 * N and ft.get(tid_b, 0) >= 4 * N,
        "beside.ftrace_complete", "kvm_exit events: run A %s, run B %s" %
        (ft.get(tid_a), ft.get(tid_b)))

    p = subprocess.run([perf, "script", "-i", data, "-F", "tid,event"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    pc = {}
    for ln in p.stdout.splitlines():
        f = ln.split()
        if len(f) >= 2 and f[1].startswith("kvm:kvm_exit"):
            pc[int(f[0])] = pc.get(int(f[0]), 0) + 1
    keep("tooling_perf_script.txt", "exit %d\n%s\nkvm_exit by tid: %s\n" %
         (p.returncode, p.stderr, pc))
    tap(p.returncode == 0 and pc.get(tid_a) == ft.get(tid_a) and
        pc.get(tid_b) == ft.get(tid_b), "beside.perf_is_ftrace",
        "perf kvm_exit samples run A %s, run B %s; ftrace %s, %s (%s)" %
        (pc.get(tid_a), pc.get(tid_b), ft.get(tid_a), ft.get(tid_b),
         p.stderr.strip()[-120:]))

    p = subprocess.run([perf, "kvm", "-i", data, "stat", "report",
                        "--event=vmexit"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    keep("tooling_perf_report.txt", p.stdout)
    # the kernel's names of the reasons both runs made exactly N of, as
    # perf prints them (not HLT: perf pairs an exit with the next entry,
    # and a run's last HLT has none)
    names = {(r["vmx"] if "vmx" in isas else r["svm"]): 2 * N
             for tag, r in rec_a if tag == "expect" and
             r.get("exit") in ("IOIO", "CPUID", "VMMCALL")}
    rep = {f[0]: int(f[1]) for f in (ln.split() for ln in
                                     p.stdout.splitlines())
           if len(f) > 1 and f[0] in names and f[1].isdigit()}
    tap(p.returncode == 0 and len(names) == 3 and rep == names,
        "beside.perf_report", "exit %d, perf's samples %s, want %s" %
        (p.returncode, rep, names))

    rows = [ln.split(",") for ln in ks_out.splitlines()]
    col = rows[0].index("kvm_exit") if rows and "kvm_exit" in rows[0] else -1
    ks_sum = sum(int(r[col]) for r in rows[1:]
                 if col >= 0 and len(r) > col and r[col].strip().isdigit())
    tap(col >= 0 and ks_sum == sum(ft.values()), "beside.kvm_stat_is_ftrace",
        "kvm_stat kvm_exit %d over %d lines, ftrace %d (banner %r)" %
        (ks_sum, len(rows) - 1, sum(ft.values()), rows[0][:4] if rows else None))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main([test_alone, test_beside])
