#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""vmlat_oracle.py - an independent reference for vmlat's per-vCPU statistics.

Reads the text of an ftrace buffer (the "trace" file of a tracefs instance)
recorded while vCPU threads ran, and computes for each given vCPU thread what
vmlat must report (docs: selftests/oracle/README and the vCPU state contract):

  - time in each state: guest, kernel, user, preempted, wait, idle, blocked,
    between the thread's first KVM event and its last event in the trace;
  - how many times each state was entered;
  - exits per reason (kvm_exit), with handling time, and exits to userspace;
  - preempted and wait intervals (count, total, percentiles) and, for every
    interval, which tasks ran on the CPU where the vCPU was queued, summed per
    preemptor (pid, comm) and per VM.

It is written from the kernel's tracepoint semantics only and shares no code
or logic with vmlat: it is the oracle the comparison tests trust. Python 3
standard library only.

Recording the trace (what the tests must do)
--------------------------------------------
  mkdir /sys/kernel/tracing/instances/NAME            (a private instance)
  echo mono > .../NAME/trace_clock                    (see "Clock" below)
  echo 16384 > .../NAME/buffer_size_kb                (per CPU; enough)
  enable sched/sched_switch sched/sched_waking sched/sched_wakeup
         sched/sched_migrate_task kvm/kvm_entry kvm/kvm_exit
         kvm/kvm_userspace_exit  (optional: kvm/kvm_hypercall,
         sched/sched_process_exit: where a vCPU thread stops being one)
  echo 1 > tracing_on; run the workload; echo 0 > tracing_on
  check per_cpu/cpu*/stats: "overrun", "commit overrun" and "dropped events"
  must all be 0; then copy .../NAME/trace.
The oracle also checks the header line "entries-in-buffer/entries-written:
X/Y" (X != Y means the ring buffer overwrote events) and "LOST EVENTS"
markers, and refuses an incomplete trace unless --allow-lost.

Clock
-----
The tests must set the instance's trace_clock to "mono": ftrace then stamps
events with ktime_get_mono_fast_ns(), CLOCK_MONOTONIC in ns, one clock for
all CPUs, the clock vmlat is to read (the assumption this oracle is built
on). The default "local" clock (sched_clock, per CPU, not synchronised
across CPUs) would make cross-CPU intervals (a wake-up on one CPU, the
switch-in on another) and any comparison with vmlat meaningless.
The text output of an in-ns clock is truncated to microseconds
("secs.usecs"), so every timestamp here is a multiple of 1000 ns, floored.
(9 fractional digits, e.g. from a converted binary trace, are read as ns.)
Events are processed in file order, never re-sorted: the kernel merges the
per-CPU buffers by their full-ns timestamps, so file order is time order even
where two truncated timestamps are equal.

Parsing
-------
A line is "<comm>-<pid> [(<tgid>)] [<cpu>] [<flags>] <secs>.<frac>: <event>:
<fields>". The <comm> printed there comes from the saved-cmdlines cache at
read time (the task's latest name, or "<...>"), not its name at the event:
comms are taken from the events' own fields (prev_comm, next_comm, comm).
The <pid> column is the task current on <cpu> at the event; for sched_switch
it is the previous task. Formats, identical on Debian 6.1 and 6.12:
  sched_switch:  prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==>
                 next_comm=%s next_pid=%d next_prio=%d
  sched_waking, sched_wakeup:  comm=%s pid=%d prio=%d target_cpu=%03d
  sched_migrate_task:  comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d
  kvm_entry:     vcpu %u, rip 0x%lx%s            (%s: "[immediate exit]"|"")
  kvm_exit:      vcpu %u reason %s%s%s rip 0x%lx info1 0x%016llx info2 ...
                 (SVM reason names are lower case: io, hlt, cpuid, hypercall,
                 interrupt, npf...; VMX ones upper case: IO_INSTRUCTION...)
  kvm_userspace_exit:  reason %s (%d)   (KVM_EXIT_IO, KVM_EXIT_HLT, ...;
                 "restart" for -EINTR, "error" for other errors)
  kvm_hypercall: nr 0x%lx a0 0x%lx a1 0x%lx a2 0x%lx a3 0x%lx

The state machine (per vCPU thread; decisions and why)
------------------------------------------------------
Observation starts at the thread's first kvm_entry/kvm_exit/
kvm_userspace_exit: before its first KVM_RUN a thread is not a vCPU and its
state is undefined (and a KVM event is also how vmlat learns that a thread is
a vCPU). It ends at the thread's last event in the trace; time after that is
not observed. Every later event that names the thread (in the <pid> column,
as prev/next of sched_switch, or as the task of a waking/wakeup/migrate)
advances its clock, so sum(state times) == observed time exactly.

  kvm_entry                 -> guest
  kvm_exit                  -> kernel (the exit's reason is the "last exit")
  kvm_userspace_exit        -> user
  sched_switch prev=vCPU:
    prev_state "R" or "R+"  -> preempted. "R+" is a preemption (the kernel
                               prints TASK_REPORT_MAX as "+"); plain "R" is
                               a voluntary switch of a still runnable task
                               (yield, or a wake-up that raced with going to
                               sleep). Both stay on the runqueue: preempted.
    "X" or "Z"              -> the thread died: observation ends.
    anything else (S, D, I, T, t, P, combinations): sleeping ->
                               idle if the last exit was HLT (svm "hlt",
                               vmx "HLT"): the guest halted, and the thread
                               sleeps on its behalf (in KVM's halt, or, with
                               the irqchip in userspace, in the VMM after
                               KVM_EXIT_HLT); blocked otherwise.
  sched_waking of the vCPU while idle/blocked -> wait, queued on target_cpu
  sched_switch next=vCPU    -> back to kernel or user, whichever it was in
                               when switched out.
Special cases, all counted in the vCPU's "anomalies":
  - Switched out while in guest: on 6.1 SVM, kvm_exit is traced in
    svm_handle_exit(), after vcpu_enter_guest() has re-enabled preemption,
    so a host interrupt that ends guest mode can reschedule the vCPU before
    its kvm_exit ("switched_out_in_guest"). The host is in the kernel then:
    on switch-in the vCPU resumes in "kernel", and the kvm_exit that follows
    keeps it there. The time from the real exit to the switch stays "guest":
    no event marks it. (6.12 traces kvm_exit with interrupts off.)
  - Wake-up racing with the switch-out: try_to_wake_up() traces
    sched_waking before it waits for the task to leave its CPU, so on
    another CPU a sched_waking can precede the vCPU's own
    sched_switch(prev_state=S). A sched_waking of a running vCPU is kept
    pending; a sched_wakeup while still running cancels it (the wake-up
    found the task on its runqueue: no sleep); a sleeping switch-out with a
    wake-up still pending goes straight to wait ("early_waking").
  - sched_wakeup of a sleeping vCPU without a sched_waking: enter wait at
    the wakeup ("wakeup_without_waking"; only if events were lost).
  - A KVM event of a vCPU that the trace shows switched out, or a switch-in
    from idle/blocked: a missed event; the vCPU is taken as running from
    there ("running_while_switched_out", "switch_in_without_waking").
  - kvm_entry while in guest (6.1 fastpath re-entry, no kvm_exit traced):
    stays guest ("entry_while_in_guest").

Migrations: a preempted or waiting vCPU is "queued" on a CPU: the CPU it was
switched out on, or target_cpu of its sched_waking (task_cpu() before
select_task_rq()); sched_migrate_task moves it to dest_cpu (load balancing
of a preempted vCPU, or the wake-up choosing another CPU), and sched_wakeup's
target_cpu (the final CPU) confirms it. The vCPU must then be switched in on
that CPU; a switch-in elsewhere is counted ("switched_in_elsewhere").

Preemptors: during a preempted or wait interval, the time is charged to the
task current on the vCPU's queued CPU, known from the last sched_switch on
that CPU (next_pid/next_comm) or, before the first one, from the <pid>
column of any event on that CPU. The idle task (pid 0, "swapper/N") is
charged too, as a preemptor of kind "idle" with its CPU, and in no matrix
row: a vCPU woken onto an idle CPU waits for the idle exit. Charged
time is summed per preemptor over intervals; "intervals" counts the
intervals in which a preemptor ran. By construction the preemptors' times of
a vCPU sum to its preempted_ns + wait_ns. Per VM, the per-vCPU sums are
added (two vCPUs of one VM waiting on the same CPU at once count twice).

Window: by default each vCPU is observed from its first KVM event to its
last event. With --start-marker TEXT, the statistics of every vCPU restart
at the first trace_marker write containing TEXT (what a reset of vmlat
does): states carry on, an open preempted/wait interval or exit is clipped
to the marker, an exit whose kvm_exit came before it gets no handling
sample. With --end-marker TEXT, every live vCPU is observed up to that
marker (what a read of vmlat sees): its current state's time is included;
an open preempted/wait interval is charged to its preemptors but not
counted in the interval statistics. Write the markers into the instance's
own trace_marker file, right after resetting and right before reading vmlat.

Exits: "count" is the number of kvm_exit events per reason; handling time
of an exit is the kernel + user time from that kvm_exit to the next
kvm_entry (preempted/wait/idle/blocked time in between excluded); exits with
no following kvm_entry in the window have no handling sample ("handled" <
"count"). "sorted_upper_ns" adds to each sample the time from the kvm_entry
before its kvm_exit: where kvm_exit is traced late (6.1 SVM), the exit
itself came somewhere in that interval, and a handling time counted from
it is no longer.

Accuracy against vmlat (for choosing tolerances): see the README.

Output: one JSON document (stdout or -o), described in the README. Exit
status 0, 1 if the trace is incomplete (lost events) or an invariant
failed, 2 for usage errors, 3 if none of the given vCPU threads has a KVM
event in the trace. --self-test replays built-in synthetic traces whose
results were worked out by hand, and prints TAP.
"""

import argparse
import json
import math
import re
import sys

STATES = ("guest", "kernel", "user", "preempted", "wait", "idle", "blocked")
RUNNING = ("guest", "kernel", "user")
QUEUED = ("preempted", "wait")
SLEEPING = ("idle", "blocked")
HLT_REASONS = ("hlt", "HLT")

# SVM exit names as ftrace prints them (SVM_EXIT_REASONS of
# arch/x86/include/uapi/asm/svm.h) -> (exit code, SVM_EXIT_* suffix).
SVM_EXITS = {
    "read_cr0": (0x0, "READ_CR0"), "read_cr2": (0x2, "READ_CR2"),
    "read_cr3": (0x3, "READ_CR3"), "read_cr4": (0x4, "READ_CR4"),
    "read_cr8": (0x8, "READ_CR8"), "write_cr0": (0x10, "WRITE_CR0"),
    "write_cr2": (0x12, "WRITE_CR2"), "write_cr3": (0x13, "WRITE_CR3"),
    "write_cr4": (0x14, "WRITE_CR4"), "write_cr8": (0x18, "WRITE_CR8"),
    "read_dr0": (0x20, "READ_DR0"), "read_dr1": (0x21, "READ_DR1"),
    "read_dr2": (0x22, "READ_DR2"), "read_dr3": (0x23, "READ_DR3"),
    "read_dr4": (0x24, "READ_DR4"), "read_dr5": (0x25, "READ_DR5"),
    "read_dr6": (0x26, "READ_DR6"), "read_dr7": (0x27, "READ_DR7"),
    "write_dr0": (0x30, "WRITE_DR0"), "write_dr1": (0x31, "WRITE_DR1"),
    "write_dr2": (0x32, "WRITE_DR2"), "write_dr3": (0x33, "WRITE_DR3"),
    "write_dr4": (0x34, "WRITE_DR4"), "write_dr5": (0x35, "WRITE_DR5"),
    "write_dr6": (0x36, "WRITE_DR6"), "write_dr7": (0x37, "WRITE_DR7"),
    "DE excp": (0x40, "EXCP_DE"), "DB excp": (0x41, "EXCP_DB"),
    "BP excp": (0x43, "EXCP_BP"), "OF excp": (0x44, "EXCP_OF"),
    "BR excp": (0x45, "EXCP_BR"), "UD excp": (0x46, "EXCP_UD"),
    "NM excp": (0x47, "EXCP_NM"), "DF excp": (0x48, "EXCP_DF"),
    "TS excp": (0x4a, "EXCP_TS"), "NP excp": (0x4b, "EXCP_NP"),
    "SS excp": (0x4c, "EXCP_SS"), "GP excp": (0x4d, "EXCP_GP"),
    "PF excp": (0x4e, "EXCP_PF"), "MF excp": (0x50, "EXCP_MF"),
    "AC excp": (0x51, "EXCP_AC"), "MC excp": (0x52, "EXCP_MC"),
    "XF excp": (0x53, "EXCP_XF"),
    "interrupt": (0x60, "INTR"), "nmi": (0x61, "NMI"), "smi": (0x62, "SMI"),
    "init": (0x63, "INIT"), "vintr": (0x64, "VINTR"),
    "cr0_sel_write": (0x65, "CR0_SEL_WRITE"), "read_idtr": (0x66, "IDTR_READ"),
    "read_gdtr": (0x67, "GDTR_READ"), "read_ldtr": (0x68, "LDTR_READ"),
    "read_rt": (0x69, "TR_READ"), "write_idtr": (0x6a, "IDTR_WRITE"),
    "write_gdtr": (0x6b, "GDTR_WRITE"), "write_ldtr": (0x6c, "LDTR_WRITE"),
    "write_rt": (0x6d, "TR_WRITE"), "rdtsc": (0x6e, "RDTSC"),
    "rdpmc": (0x6f, "RDPMC"), "pushf": (0x70, "PUSHF"), "popf": (0x71, "POPF"),
    "cpuid": (0x72, "CPUID"), "rsm": (0x73, "RSM"), "iret": (0x74, "IRET"),
    "swint": (0x75, "SWINT"), "invd": (0x76, "INVD"), "pause": (0x77, "PAUSE"),
    "hlt": (0x78, "HLT"), "invlpg": (0x79, "INVLPG"),
    "invlpga": (0x7a, "INVLPGA"), "io": (0x7b, "IOIO"), "msr": (0x7c, "MSR"),
    "task_switch": (0x7d, "TASK_SWITCH"), "ferr_freeze": (0x7e, "FERR_FREEZE"),
    "shutdown": (0x7f, "SHUTDOWN"), "vmrun": (0x80, "VMRUN"),
    "hypercall": (0x81, "VMMCALL"), "vmload": (0x82, "VMLOAD"),
    "vmsave": (0x83, "VMSAVE"), "stgi": (0x84, "STGI"), "clgi": (0x85, "CLGI"),
    "skinit": (0x86, "SKINIT"), "rdtscp": (0x87, "RDTSCP"),
    "icebp": (0x88, "ICEBP"), "wbinvd": (0x89, "WBINVD"),
    "monitor": (0x8a, "MONITOR"), "mwait": (0x8b, "MWAIT"),
    "xsetbv": (0x8d, "XSETBV"), "write_efer_trap": (0x8f, "EFER_WRITE_TRAP"),
    "write_cr0_trap": (0x90, "CR0_WRITE_TRAP"),
    "write_cr4_trap": (0x94, "CR4_WRITE_TRAP"),
    "write_cr8_trap": (0x98, "CR8_WRITE_TRAP"), "invpcid": (0xa2, "INVPCID"),
    "npf": (0x400, "NPF"),
    "avic_incomplete_ipi": (0x401, "AVIC_INCOMPLETE_IPI"),
    "avic_unaccelerated_access": (0x402, "AVIC_UNACCELERATED_ACCESS"),
    "vmgexit": (0x403, "VMGEXIT"), "invalid_guest_state": (-1, "ERR"),
}

# VMX exit names as ftrace prints them (VMX_EXIT_REASONS of
# arch/x86/include/uapi/asm/vmx.h; the name is the EXIT_REASON_* suffix).
VMX_EXITS = {
    "EXCEPTION_NMI": 0, "EXTERNAL_INTERRUPT": 1, "TRIPLE_FAULT": 2,
    "INIT_SIGNAL": 3, "SIPI_SIGNAL": 4, "INTERRUPT_WINDOW": 7,
    "NMI_WINDOW": 8, "TASK_SWITCH": 9, "CPUID": 10, "HLT": 12, "INVD": 13,
    "INVLPG": 14, "RDPMC": 15, "RDTSC": 16, "VMCALL": 18, "VMCLEAR": 19,
    "VMLAUNCH": 20, "VMPTRLD": 21, "VMPTRST": 22, "VMREAD": 23,
    "VMRESUME": 24, "VMWRITE": 25, "VMOFF": 26, "VMON": 27, "CR_ACCESS": 28,
    "DR_ACCESS": 29, "IO_INSTRUCTION": 30, "MSR_READ": 31, "MSR_WRITE": 32,
    "INVALID_STATE": 33, "MSR_LOAD_FAIL": 34, "MWAIT_INSTRUCTION": 36,
    "MONITOR_TRAP_FLAG": 37, "MONITOR_INSTRUCTION": 39,
    "PAUSE_INSTRUCTION": 40, "MCE_DURING_VMENTRY": 41,
    "TPR_BELOW_THRESHOLD": 43, "APIC_ACCESS": 44, "EOI_INDUCED": 45,
    "GDTR_IDTR": 46, "LDTR_TR": 47, "EPT_VIOLATION": 48, "EPT_MISCONFIG": 49,
    "INVEPT": 50, "RDTSCP": 51, "PREEMPTION_TIMER": 52, "INVVPID": 53,
    "WBINVD": 54, "XSETBV": 55, "APIC_WRITE": 56, "RDRAND": 57, "INVPCID": 58,
    "VMFUNC": 59, "ENCLS": 60, "RDSEED": 61, "PML_FULL": 62, "XSAVES": 63,
    "XRSTORS": 64, "UMWAIT": 67, "TPAUSE": 68, "BUS_LOCK": 74, "NOTIFY": 75,
}

LINE_RE = re.compile(
    r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?"
    r"\[(?P<cpu>\d+)\]\s+(?:\S{4,6}\s+)?"
    r"(?P<sec>\d+)\.(?P<frac>\d+):\s+(?P<event>\w+):\s?(?P<body>.*)$")
SWITCH_RE = re.compile(
    r"^prev_comm=(?P<pcomm>.*) prev_pid=(?P<ppid>-?\d+) prev_prio=-?\d+ "
    r"prev_state=(?P<pstate>\S+) ==> next_comm=(?P<ncomm>.*) "
    r"next_pid=(?P<npid>-?\d+) next_prio=-?\d+\s*$")
WAKE_RE = re.compile(
    r"^comm=(?P<comm>.*) pid=(?P<pid>-?\d+) prio=-?\d+ "
    r"target_cpu=(?P<cpu>\d+)\s*$")
MIGRATE_RE = re.compile(
    r"^comm=(?P<comm>.*) pid=(?P<pid>-?\d+) prio=-?\d+ "
    r"orig_cpu=(?P<orig>\d+) dest_cpu=(?P<dest>\d+)\s*$")
ENTRY_RE = re.compile(r"^vcpu (?P<vcpu>\d+), rip 0x(?P<rip>[0-9a-fA-F]+)")
# kvm_nested_vmenter's nested_rip; kvm_nested_vmrun's nrip (SVM, 5.10)
VMENTER_RE = re.compile(r"\bn(?:ested_)?rip: 0x([0-9a-fA-F]+)")
EXIT_RE = re.compile(r"^vcpu (?P<vcpu>\d+) reason (?P<reason>.*?) rip 0x")
UEXIT_RE = re.compile(r"^reason (?P<reason>\S+) \((?P<code>-?\d+)\)")
HCALL_RE = re.compile(r"^nr (?P<nr>0x[0-9a-fA-F]+)")
ENTRIES_RE = re.compile(
    r"^#\s*entries-in-buffer/entries-written:\s*(\d+)/(\d+)")
LOST_RE = re.compile(r"LOST\s+(\d+)\s+EVENTS")


def exit_info(reason):
    """(isa, code, name) of an exit reason as ftrace printed it."""
    if reason in SVM_EXITS:
        code, name = SVM_EXITS[reason]
        return "svm", code, name
    base = reason.split(" ")[0]         # VMX: "NAME[ FAILED_VMENTRY]"
    if base in VMX_EXITS:
        return "vmx", VMX_EXITS[base], reason
    m = re.match(r"^0x([0-9a-fA-F]+)$", reason)   # unknown: printed in hex
    isa = "vmx" if reason.isupper() else "svm"
    return isa, (int(m.group(1), 16) if m else None), reason


def dist(values):
    """count/total/min/percentiles/max of a list of ns (nearest rank)."""
    out = {"count": len(values), "total_ns": sum(values)}
    if not values:
        for k in ("min_ns", "p50_ns", "p90_ns", "p99_ns", "p99_9_ns",
                  "max_ns"):
            out[k] = None
        return out
    v = sorted(values)

    def rank(p):
        return v[max(0, math.ceil(p / 100.0 * len(v)) - 1)]
    out.update({"min_ns": v[0], "p50_ns": rank(50), "p90_ns": rank(90),
                "p99_ns": rank(99), "p99_9_ns": rank(99.9),
                "max_ns": v[-1], "sorted_ns": v})
    return out


class Vcpu:
    """State of one tracked vCPU thread."""

    def __init__(self, tid, vm_pid):
        self.tid = tid
        self.vm_pid = vm_pid
        self.vcpu = None
        self.comm = None
        self.state = None           # None: not observed yet (or dead)
        self.dead = False
        self.dead_ns = None         # its sched_process_exit, if traced
        self.first_ns = None
        self.since = None           # start of the current state
        self.last_ns = None         # the thread's last event
        self.resume = "kernel"      # state to return to on switch-in
        self.last_exit = None       # reason of the last kvm_exit
        self.qcpu = None            # CPU queued on while preempted/wait
        self.charge_ns = None       # charged to preemptors up to here
        self.ivl_start = None
        self.ivl_start_lo = None    # bracket_lo() of its start
        self.ivl_cpu = None
        self.ivl_by = {}            # preemptor pid -> ns in this interval
        self.pending_wake = None    # (ts, cpu) of a waking while running
        self.state_ns = dict.fromkeys(STATES, 0)
        self.entries = dict.fromkeys(STATES, 0)
        self.exits = {}             # reason -> count
        self.handling = {}          # reason -> [ns...]
        self.handling_upper = {}    # reason -> [ns + guest before...]
        self.cur_exit = None        # reason whose handling time runs
        self.cur_exit_ns = 0
        self.cur_exit_before = 0    # its kvm_exit - the kvm_entry before
        self.entry_ns = None        # the last kvm_entry
        self.uexits = {}            # KVM_EXIT_* -> count
        self.hypercalls = {}        # nr -> count
        self.preempt_ivls = []
        self.wait_ivls = []
        self.intervals = []         # with --intervals
        self.handled_exits = []     # with --intervals
        self.own_ns = None          # its last event (--intervals)
        self.floor_ns = None        # its last event before the kvm_entry
        self.cur_exit_floor = 0     # kvm_exit - floor_ns
        self.cur_exit_in = 0        # its switch-ins - CPU's event before
        self.cur_exit_lower = 0     # lower_ns of its segments ended
        self.seg_wait = False       # a segment began: its next own event
        self.seg_next_ns = None     # is that
        self.preemptors = {}        # pid -> {stolen, preempted, wait, ivls}
        self.anomalies = {}
        self.open_ns = 0            # open preempted/wait time at window end

    def anomaly(self, what):
        self.anomalies[what] = self.anomalies.get(what, 0) + 1


class Oracle:
    """Replays a trace; the per-vCPU results are in self.vcpus."""

    def __init__(self, vcpus, keep_intervals=False, start_marker=None,
                 end_marker=None):
        self.vcpus = vcpus                  # tid -> Vcpu
        self.keep_intervals = keep_intervals
        self.start_marker = start_marker
        self.end_marker = end_marker
        self.window_start_ns = None
        self.window_end_ns = None
        self.ended = False
        self.after_end = 0
        self.cpu_curr = {}                  # cpu -> pid
        self.cpu_last_ns = {}               # cpu -> its last event
        self.cpu_before_ns = None           # the event's CPU's one before
        self.cur_sched = False              # the event is sched_*
        self.comms = {}                     # pid -> latest comm seen
        self.events = {}
        self.lines = 0
        self.unparsed = 0
        self.unparsed_sample = []
        self.first_ns = None
        self.last_ns = None
        self.out_of_order = 0
        self.resolution_ns = None
        self.entries_in_buffer = None
        self.entries_written = None
        self.lost = 0
        self.cpus = set()
        self.cpu_curr_mismatch = 0

    # -- time accounting ---------------------------------------------------

    def advance(self, v, t):
        """Adds the time since v.since to v's current state."""
        if v.state is None or v.dead:
            return
        dt = t - v.since
        if dt < 0:          # cannot happen in file order; be safe
            dt = 0
        v.state_ns[v.state] += dt
        if v.cur_exit is not None and v.state in ("kernel", "user"):
            v.cur_exit_ns += dt
        if v.state in QUEUED:
            self.charge(v, t)
        v.since = max(v.since, t)
        v.last_ns = t

    def enter(self, v, state, t):
        """Moves v (already advanced to t) into state."""
        if state == v.state:
            return
        if v.state in QUEUED:
            self.close_interval(v, t)
        v.state = state
        v.since = t
        v.entries[state] += 1
        if state in QUEUED:
            v.charge_ns = t
            v.ivl_start = t
            v.ivl_start_lo = self.bracket_lo(t)
            v.ivl_cpu = v.qcpu
            v.ivl_by = {}

    def bracket_lo(self, t):
        """The least time vmlat's clock read for the event at t may
        have: its probe runs before ftrace's, so on a sched_* event the
        read lies after the CPU's event before (not vmlat's own: those
        come after its read). An interval's end elsewhere (a window
        marker) has no bracket: t."""
        if self.cur_sched and self.cpu_before_ns is not None:
            return self.cpu_before_ns
        return t

    def charge(self, v, t):
        """Charges v's queued time up to t to the task on its queued CPU."""
        dt = t - v.charge_ns
        if dt > 0:
            key = self.task_key(self.cpu_curr.get(v.qcpu, -1), v.qcpu, t)
            v.ivl_by[key] = v.ivl_by.get(key, 0) + dt
        v.charge_ns = max(v.charge_ns, t)

    def task_key(self, pid, cpu, t):
        """Preemptor key: the pid; pid 0 (one idle task per CPU) with its
        CPU, so it is reported as "swapper/<cpu>"; and whether the task
        was a vCPU by then. A vCPU thread is a vCPU from its first KVM
        event on (as for its own states): before its first KVM_RUN it is
        a VMM thread doing host work, and a host preemptor; so is the
        rest of its last slice after its sched_process_exit."""
        other = self.vcpus.get(pid)
        is_vcpu = (other is not None and other.first_ns is not None and
                   other.first_ns <= t and
                   (other.dead_ns is None or t <= other.dead_ns))
        return (pid, cpu if pid == 0 else None, is_vcpu)

    def key_comm(self, key):
        pid, cpu = key[0], key[1]
        return "swapper/%d" % cpu if pid == 0 else self.comms.get(pid)

    def close_interval(self, v, t):
        self.charge(v, t)
        length = t - v.ivl_start
        kind = v.state
        (v.preempt_ivls if kind == "preempted" else v.wait_ivls).append(length)
        for key, ns in v.ivl_by.items():
            p = v.preemptors.setdefault(
                key, {"stolen_ns": 0, "preempted_ns": 0, "wait_ns": 0,
                      "intervals": 0})
            p["stolen_ns"] += ns
            p["preempted_ns" if kind == "preempted" else "wait_ns"] += ns
            p["intervals"] += 1
        if self.keep_intervals:
            v.intervals.append({
                "kind": kind, "start_ns": v.ivl_start, "end_ns": t,
                "start_lo_ns": v.ivl_start_lo,
                "end_lo_ns": self.bracket_lo(t),
                "cpu": v.ivl_cpu,
                "by": [{"pid": k[0], "comm": self.key_comm(k), "ns": ns}
                       for k, ns in sorted(v.ivl_by.items(),
                                           key=lambda x: -x[1])]})
        v.ivl_by = {}

    def touch(self, tid, t):
        """An event names thread tid: advance its clock. Returns its Vcpu
        if it is tracked and observed."""
        v = self.vcpus.get(tid)
        if v is None or v.state is None or v.dead:
            return None
        self.advance(v, t)
        return v

    def running(self, v, t, cpu):
        """v is current on cpu (it emitted an event): it must be running."""
        if v.state in RUNNING:
            return
        v.anomaly("running_while_switched_out")
        if v.state in QUEUED:
            v.qcpu = v.qcpu if v.qcpu is not None else cpu
        self.enter(v, v.resume, t)

    def handled_exit(self, v, t):
        """--intervals: the exit whose kvm_entry is at t. Another probe at
        the same tracepoints reads its own times: a stall of the CPU
        between the two probes (or a slow probe) puts its time of each
        event anywhere between the CPU's events around it. The handling
        time runs in segments, from a kvm_exit or a switch-in to a
        switch-out or the kvm_entry; the other probe's is at least
        lower_ns, the sum over segments of the time from the thread's
        event after the segment's start to the CPU's event before its end.
        If it starts it at the exit itself (where kvm_exit is traced late),
        or reads a switch-in early, it is at most upper_ns: ns plus the
        time from the thread's last event before the kvm_entry that began
        the guest time to the kvm_exit, and from the CPU's event before
        each switch-in to it."""
        return {"reason": v.cur_exit, "entry_ns": t, "ns": v.cur_exit_ns,
                "upper_ns": v.cur_exit_ns + v.cur_exit_floor + v.cur_exit_in,
                "lower_ns": v.cur_exit_lower + self.segment_lower(v, t)}

    def segment_lower(self, v, t):
        """--intervals: the least handling time of v's current segment,
        which an event of its thread at t ends."""
        before = self.cpu_before_ns if self.cpu_before_ns is not None else t
        after = v.seg_next_ns if v.seg_next_ns is not None else t
        return max(0, before - after)

    # -- events --------------------------------------------------------------

    def kvm_event(self, tid, t, cpu, event, body):
        v = self.vcpus.get(tid)
        if v is None or v.dead:
            return
        if v.state is None:
            if event not in ("kvm_entry", "kvm_exit", "kvm_userspace_exit"):
                return
            v.first_ns = v.since = v.last_ns = t
        else:
            self.advance(v, t)
            self.running(v, t, cpu)
        if event == "kvm_entry":
            m = ENTRY_RE.match(body)
            if m and v.vcpu is None:
                v.vcpu = int(m.group("vcpu"))
            if v.cur_exit is not None:
                v.handling.setdefault(v.cur_exit, []).append(v.cur_exit_ns)
                v.handling_upper.setdefault(v.cur_exit, []).append(
                    v.cur_exit_ns + v.cur_exit_before)
                if self.keep_intervals:
                    v.handled_exits.append(self.handled_exit(v, t))
                v.cur_exit = None
            v.entry_ns = t
            v.floor_ns = v.own_ns if v.own_ns is not None else t
            if v.state == "guest":
                v.anomaly("entry_while_in_guest")
            self.enter(v, "guest", t)
        elif event == "kvm_exit":
            m = EXIT_RE.match(body)
            reason = m.group("reason") if m else "?"
            if m and v.vcpu is None:
                v.vcpu = int(m.group("vcpu"))
            v.exits[reason] = v.exits.get(reason, 0) + 1
            v.last_exit = reason
            v.cur_exit = reason     # a previous one never re-entered
            v.cur_exit_ns = 0
            v.cur_exit_before = 0 if v.entry_ns is None else t - v.entry_ns
            v.cur_exit_floor = 0 if v.entry_ns is None or \
                v.floor_ns is None else t - v.floor_ns
            v.cur_exit_in = v.cur_exit_lower = 0
            v.entry_ns = None
            v.resume = "kernel"
            self.enter(v, "kernel", t)
        elif event == "kvm_userspace_exit":
            m = UEXIT_RE.match(body)
            reason = m.group("reason") if m else "?"
            v.uexits[reason] = v.uexits.get(reason, 0) + 1
            v.resume = "user"
            self.enter(v, "user", t)
        elif event == "kvm_hypercall":
            m = HCALL_RE.match(body)
            nr = m.group("nr") if m else "?"
            v.hypercalls[nr] = v.hypercalls.get(nr, 0) + 1

    def sched_switch(self, t, cpu, body):
        m = SWITCH_RE.match(body)
        if not m:
            return False
        prev, nxt = int(m.group("ppid")), int(m.group("npid"))
        pstate = m.group("pstate")
        self.comms[prev] = m.group("pcomm")
        self.comms[nxt] = m.group("ncomm")
        # The time up to now ran "prev" on this CPU: charge it to the vCPUs
        # queued here before the CPU changes hands. (Only their preemptor
        # accounting moves: their state clocks advance on their own events.)
        if self.cpu_curr.get(cpu, prev) != prev:
            self.cpu_curr_mismatch += 1
        self.cpu_curr[cpu] = prev
        for v in self.vcpus.values():
            if v.state in QUEUED and v.qcpu == cpu and not v.dead:
                self.charge(v, t)
        v = self.touch(prev, t)
        if v is not None and v.cur_exit is not None and self.keep_intervals:
            v.cur_exit_lower += self.segment_lower(v, t)
        if v is not None:
            v.comm = m.group("pcomm")
            if v.state == "guest":
                v.anomaly("switched_out_in_guest")
                v.resume = "kernel"
            elif v.state in RUNNING:
                v.resume = v.state
            else:
                v.anomaly("switch_out_while_switched_out")
            if pstate in ("R", "R+"):
                v.qcpu = cpu
                self.enter(v, "preempted", t)
            elif "X" in pstate or "Z" in pstate:
                if v.state in QUEUED:
                    self.close_interval(v, t)
                v.dead = True
            elif v.pending_wake is not None:
                # Woken before it left the CPU: it never really sleeps.
                v.anomaly("early_waking")
                v.qcpu = v.pending_wake[1]
                self.enter(v, "wait", t)
            else:
                state = "idle" if v.last_exit in HLT_REASONS else "blocked"
                self.enter(v, state, t)
            v.pending_wake = None
        self.cpu_curr[cpu] = nxt
        v = self.touch(nxt, t)
        if v is not None and v.cur_exit is not None and self.keep_intervals:
            if self.cpu_before_ns is not None:
                v.cur_exit_in += t - self.cpu_before_ns
            v.seg_wait, v.seg_next_ns = True, None
        if v is not None:
            v.comm = m.group("ncomm")
            if v.state in QUEUED:
                if v.qcpu != cpu:
                    v.anomaly("switched_in_elsewhere")
            elif v.state in SLEEPING:
                v.anomaly("switch_in_without_waking")
            elif v.state in RUNNING:
                v.anomaly("switch_in_while_running")
            self.enter(v, v.resume, t)
            v.pending_wake = None
        return True

    def sched_wake(self, t, event, body):
        m = WAKE_RE.match(body)
        if not m:
            return False
        pid, tcpu = int(m.group("pid")), int(m.group("cpu"))
        self.comms[pid] = m.group("comm")
        v = self.touch(pid, t)
        if v is None:
            return True
        if event == "sched_waking":
            if v.state in SLEEPING:
                v.qcpu = tcpu
                self.enter(v, "wait", t)
            elif v.state in RUNNING:
                v.pending_wake = (t, tcpu)
        else:   # sched_wakeup: the task is on target_cpu's runqueue now
            if v.state in SLEEPING:
                v.anomaly("wakeup_without_waking")
                v.qcpu = tcpu
                self.enter(v, "wait", t)
            elif v.state == "wait":
                v.qcpu = tcpu       # charged up to t to the old CPU already
            elif v.state in RUNNING:
                v.pending_wake = None
        return True

    def sched_migrate(self, t, body):
        m = MIGRATE_RE.match(body)
        if not m:
            return False
        pid = int(m.group("pid"))
        self.comms[pid] = m.group("comm")
        v = self.touch(pid, t)
        if v is not None and v.state in QUEUED:
            v.qcpu = int(m.group("dest"))
        return True

    # -- window markers ------------------------------------------------------

    def window_start(self, t):
        """--start-marker: statistics restart at t, as after a reset of
        vmlat; states (and open intervals, clipped to t) carry on."""
        self.window_start_ns = t
        for v in self.vcpus.values():
            if v.state is None or v.dead:
                continue
            self.advance(v, t)
            v.first_ns = v.since = v.last_ns = t
            v.state_ns = dict.fromkeys(STATES, 0)
            v.entries = dict.fromkeys(STATES, 0)
            v.exits, v.handling, v.uexits, v.hypercalls = {}, {}, {}, {}
            v.handling_upper = {}
            v.cur_exit = None       # its kvm_exit is outside the window
            v.preempt_ivls, v.wait_ivls, v.intervals = [], [], []
            v.handled_exits = []
            v.preemptors, v.anomalies = {}, {}
            if v.state in QUEUED:
                v.ivl_start = v.charge_ns = v.ivl_start_lo = t
                v.ivl_by = {}

    def window_end(self, t):
        """--end-marker: every live vCPU is observed up to t (its current
        state's time included; an open preempted/wait interval is charged
        to its preemptors but not counted in the interval statistics);
        later lines are ignored."""
        self.window_end_ns = t
        for v in self.vcpus.values():
            if v.state is None or v.dead:
                continue
            self.advance(v, t)
            if v.state in QUEUED:
                for key, ns in v.ivl_by.items():
                    p = v.preemptors.setdefault(
                        key, {"stolen_ns": 0, "preempted_ns": 0,
                              "wait_ns": 0, "intervals": 0})
                    p["stolen_ns"] += ns
                    p["preempted_ns" if v.state == "preempted"
                      else "wait_ns"] += ns
                    p["intervals"] += 1
                v.open_ns = t - v.ivl_start
                v.ivl_by = {}
        self.ended = True

    # -- input ---------------------------------------------------------------

    def header_line(self, line):
        m = ENTRIES_RE.match(line)
        if m:
            self.entries_in_buffer = int(m.group(1))
            self.entries_written = int(m.group(2))

    def feed(self, line):
        self.lines += 1
        if line.startswith("#"):
            self.header_line(line)
            return
        if not line.strip():
            return
        m = LOST_RE.search(line)
        if m and not LINE_RE.match(line):
            self.lost += int(m.group(1))
            return
        m = LINE_RE.match(line)
        if not m:
            self.unparsed += 1
            if len(self.unparsed_sample) < 5:
                self.unparsed_sample.append(line.rstrip("\n"))
            return
        frac = m.group("frac")
        res = 10 ** (9 - min(len(frac), 9))
        if self.resolution_ns is None or res > self.resolution_ns:
            self.resolution_ns = res
        t = int(m.group("sec")) * 1000000000 + int(frac.ljust(9, "0")[:9])
        if self.last_ns is not None and t < self.last_ns:
            self.out_of_order += 1
        self.first_ns = t if self.first_ns is None else self.first_ns
        self.last_ns = t if self.last_ns is None else max(self.last_ns, t)
        cpu, pid = int(m.group("cpu")), int(m.group("pid"))
        event, body = m.group("event"), m.group("body")
        if self.ended:
            self.after_end += 1
            return
        if event == "tracing_mark_write":
            if (self.start_marker is not None and
                    self.window_start_ns is None and
                    self.start_marker in body):
                self.window_start(t)
            elif (self.end_marker is not None and
                  self.end_marker in body):
                self.window_end(t)
                return
        self.cpus.add(cpu)
        self.events[event] = self.events.get(event, 0) + 1
        # The <pid> column is the task current on <cpu>.
        self.cpu_curr.setdefault(cpu, pid)
        # --intervals: a vCPU thread's own events, in the order it ran
        # them (not vmlat's: those are what handled_exit() bounds).
        own = self.vcpus.get(pid) if self.keep_intervals and \
            not event.startswith("vmlat_") else None
        if own is not None and own.seg_wait:
            own.seg_wait, own.seg_next_ns = False, t
        # vmlat's own events come after its probes read the clock.
        self.cpu_before_ns = self.cpu_last_ns.get(cpu)
        self.cur_sched = event.startswith("sched_")
        if not event.startswith("vmlat_"):
            self.cpu_last_ns[cpu] = t
        if event == "sched_switch":
            ok = self.sched_switch(t, cpu, body)
        elif event in ("sched_waking", "sched_wakeup"):
            v = self.touch(pid, t)
            if v is not None:
                self.running(v, t, cpu)
            ok = self.sched_wake(t, event, body)
        elif event == "sched_migrate_task":
            v = self.touch(pid, t)
            if v is not None:
                self.running(v, t, cpu)
            ok = self.sched_migrate(t, body)
        elif event.startswith("kvm_"):
            self.kvm_event(pid, t, cpu, event, body)
            ok = True
        elif event == "sched_process_exit":
            # The thread is leaving (do_exit(), before its last switch):
            # it stops being a vCPU, its observation ends here, and the
            # rest of its last slice is host work (as vmlat retires it).
            v = self.touch(pid, t)
            if v is not None:
                self.running(v, t, cpu)
                self.advance(v, t)
                if v.state is not None and not v.dead:
                    v.last_ns = t
                    v.dead = True
                    v.dead_ns = t
            ok = True
        else:
            v = self.touch(pid, t)
            if v is not None:
                self.running(v, t, cpu)
            ok = True
        if own is not None:
            own.own_ns = t
            if event == "kvm_exit":
                own.seg_wait, own.seg_next_ns = True, None
        if not ok:
            self.unparsed += 1
            if len(self.unparsed_sample) < 5:
                self.unparsed_sample.append(line.rstrip("\n"))

    # -- results -------------------------------------------------------------

    def preemptor_row(self, victim, key, p):
        pid = key[0]
        row = {"pid": pid, "comm": self.key_comm(key), "kind": "host",
               "vm": None, "vcpu": None, "cpu": None}
        if pid == 0:
            row["kind"] = "idle"
            row["cpu"] = key[1]
        other = self.vcpus.get(pid)
        if key[2]:
            row["kind"] = ("same_vm" if other.vm_pid is not None and
                           other.vm_pid == victim.vm_pid else "vm")
            row["vm"] = other.vm_pid
            row["vcpu"] = other.vcpu
        row.update(p)
        return row

    def vcpu_result(self, v):
        observed = (v.last_ns - v.first_ns) if v.first_ns is not None else 0
        reasons = {}
        for reason, count in sorted(v.exits.items()):
            isa, code, name = exit_info(reason)
            h = dist(v.handling.get(reason, []))
            reasons[reason] = {
                "isa": isa, "code": None if code is None else hex(code),
                "name": name, "count": count, "handled": h["count"],
                "total_ns": h["total_ns"], "min_ns": h["min_ns"],
                "p50_ns": h["p50_ns"], "p99_ns": h["p99_ns"],
                "max_ns": h["max_ns"], "sorted_ns": h.get("sorted_ns", []),
                "sorted_upper_ns": sorted(v.handling_upper.get(reason, []))}
        rows = [self.preemptor_row(v, key, p)
                for key, p in v.preemptors.items()]
        rows.sort(key=lambda r: (-r["stolen_ns"], r["pid"]))
        for i, r in enumerate(rows):
            r["rank"] = i + 1
        res = {
            "tid": v.tid, "vm_pid": v.vm_pid, "vcpu": v.vcpu, "comm": v.comm,
            "observed": v.first_ns is not None,
            "first_ns": v.first_ns, "last_ns": v.last_ns,
            "observed_ns": observed,
            "state": "dead" if v.dead else v.state,
            "state_ns": dict(v.state_ns),
            "entries": dict(v.entries),
            "exits": sum(v.exits.values()),
            "exit_reasons": reasons,
            "userspace_exits": dict(sorted(v.uexits.items())),
            "hypercalls": dict(sorted(v.hypercalls.items())),
            "preempt": dist(v.preempt_ivls),
            "wait": dist(v.wait_ivls),
            "preemptors": rows,
            "anomalies": dict(sorted(v.anomalies.items())),
        }
        res["checks"] = {
            "state_sum_equals_observed":
                sum(v.state_ns.values()) == observed,
            "preemptors_sum_equals_closed_intervals":
                sum(r["stolen_ns"] for r in rows) ==
                res["preempt"]["total_ns"] + res["wait"]["total_ns"] +
                v.open_ns,
        }
        if self.keep_intervals:
            res["intervals"] = v.intervals
            res["handled_exits"] = v.handled_exits
        return res

    def vm_results(self, vres, vm_comms):
        vms = {}
        for r in vres:
            if not r["observed"]:
                continue
            vm = vms.setdefault(r["vm_pid"], {
                "vm_pid": r["vm_pid"], "comm": vm_comms.get(r["vm_pid"]),
                "vcpus": 0, "tids": [], "observed_ns": 0,
                "state_ns": dict.fromkeys(STATES, 0), "exits": 0,
                "exit_reasons": {}, "preemptors": {}})
            vm["vcpus"] += 1
            vm["tids"].append(r["tid"])
            vm["observed_ns"] += r["observed_ns"]
            vm["exits"] += r["exits"]
            for s in STATES:
                vm["state_ns"][s] += r["state_ns"][s]
            for reason, e in r["exit_reasons"].items():
                x = vm["exit_reasons"].setdefault(reason, {
                    "isa": e["isa"], "code": e["code"], "name": e["name"],
                    "count": 0, "handled": 0, "total_ns": 0})
                for k in ("count", "handled", "total_ns"):
                    x[k] += e[k]
            for p in r["preemptors"]:
                key = (p["pid"], p["comm"] if p["pid"] == 0 else None,
                       p["kind"])
                x = vm["preemptors"].setdefault(key, {
                    "pid": p["pid"], "comm": p["comm"], "kind": p["kind"],
                    "vm": p["vm"], "vcpu": p["vcpu"], "cpu": p["cpu"],
                    "stolen_ns": 0,
                    "preempted_ns": 0, "wait_ns": 0, "intervals": 0})
                for k in ("stolen_ns", "preempted_ns", "wait_ns",
                          "intervals"):
                    x[k] += p[k]
        out = []
        for vm in vms.values():
            rows = sorted(vm["preemptors"].values(),
                          key=lambda r: (-r["stolen_ns"], r["pid"]))
            for i, r in enumerate(rows):
                r["rank"] = i + 1
            vm["preemptors"] = rows
            out.append(vm)
        out.sort(key=lambda vm: (vm["vm_pid"] is None, vm["vm_pid"] or 0))
        # matrix: ns stolen from each victim VM, by "host" or "vm:<pid>";
        # an idle CPU waking up preempted nobody
        matrix = {}
        for vm in out:
            for p in vm["preemptors"]:
                if p["kind"] == "idle":
                    continue
                who = "host" if p["kind"] == "host" else "vm:%s" % p["vm"]
                row = matrix.setdefault(who, {})
                key = str(vm["vm_pid"])
                row[key] = row.get(key, 0) + p["stolen_ns"]
        return out, matrix

    def result(self, vm_comms, hogs, allow_lost):
        vres = [self.vcpu_result(v) for v in
                sorted(self.vcpus.values(), key=lambda v: v.tid)]
        vms, matrix = self.vm_results(vres, vm_comms)
        incomplete = (self.lost > 0 or
                      (self.entries_in_buffer is not None and
                       self.entries_in_buffer != self.entries_written))
        checks = {
            "trace_complete": not incomplete,
            "no_unparsed_lines": self.unparsed == 0,
            "in_time_order": self.out_of_order == 0,
        }
        for r in vres:
            for k, ok in r["checks"].items():
                checks[k] = checks.get(k, True) and ok
        return {
            "format": "vmlat-oracle/1",
            "trace": {
                "lines": self.lines, "events": dict(sorted(
                    self.events.items())),
                "cpus": sorted(self.cpus),
                "first_ns": self.first_ns, "last_ns": self.last_ns,
                "ts_resolution_ns": self.resolution_ns,
                "entries_in_buffer": self.entries_in_buffer,
                "entries_written": self.entries_written,
                "lost_events": self.lost,
                "unparsed_lines": self.unparsed,
                "unparsed_sample": self.unparsed_sample,
                "out_of_order": self.out_of_order,
                "cpu_curr_mismatch": self.cpu_curr_mismatch,
                "window_start_ns": self.window_start_ns,
                "window_end_ns": self.window_end_ns,
                "lines_after_window": self.after_end,
                "allow_lost": allow_lost,
            },
            "hogs": [{"pid": h, "comm": self.comms.get(h)} for h in hogs],
            "vcpus": vres,
            "vms": vms,
            "matrix": matrix,
            "checks": checks,
        }


# -- nested (L2) activity of one vCPU thread ----------------------------------

INJECT_RE = re.compile(r"^reason: (?P<reason>.*?) ext_inf1")
# L1's own VM entry instructions, as ftrace names the exits.
VMENTER_EXITS = ("vmrun", "VMLAUNCH", "VMRESUME")


class Nested:
    """What an L1 hypervisor's vCPU thread ran, from ftrace's KVM events.

    KVM traces kvm_nested_vmenter when L1's VMRUN (VMLAUNCH/VMRESUME) puts
    the vCPU in guest mode, and kvm_nested_vmexit_inject when it makes L1
    handle an exit of L2 (guest mode ends). So the level a kvm_entry
    enters is L2 from a kvm_nested_vmenter to the next
    kvm_nested_vmexit_inject, else L1. KVM traces kvm_nested_vmenter before
    its last checks of the entry (VMX: loading L2's CR3): an entry that
    fails them becomes a VM-entry failure exit to L1, with no
    kvm_nested_vmexit_inject. The first kvm_entry after a
    kvm_nested_vmenter enters L2 only at its nested_rip; at any other rip
    it resumes L1 after its VMLAUNCH/VMRESUME/VMRUN ("vmenter_failed"). A
    kvm_exit after an L2 entry is an
    L2 exit: KVM also traces kvm_nested_vmexit for it (checked). The L2
    exit is reflected to L1 if the next kvm_entry enters L1, else handled
    by L0; its round trip ends at the next L2 entry. A HLT exit's wake-up
    latency runs to the next entry into its level, from the later of the
    exit and the thread's last sched_waking (if traced).

    The [P1] heuristic, from the same events: L1's VMRUN exit makes the
    thread WAITING, a kvm_mmu_get_page on it then READY, an inject NORMAL;
    at each kvm_entry (from the first VMRUN exit or L2 entry on), READY
    says L2. Its verdicts are counted against the level: p1[truth][says].

    Feed it every line of a trace; only the thread tid counts. Needs
    kvm/kvm_entry, kvm_exit, kvm_nested_vmenter (5.10, SVM:
    kvm_nested_vmrun), kvm_nested_vmexit,
    kvm_nested_vmexit_inject; kvmmmu/kvm_mmu_get_page for the heuristic;
    sched/sched_waking for wake-ups that slept.
    """

    def __init__(self, tid):
        self.tid = tid
        self.next_level = "l1"
        self.entry_level = None
        self.entry_ns = None
        self.active = False
        self.p1_state = "normal"
        self.open = None            # [reason, exit ns, bounced]
        self.l2_exit_traced = True  # kvm_nested_vmexit of the last L2 exit
        self.halt = {}              # level -> HLT exit ns
        self.woken_ns = 0
        self.vmenter_rip = None     # nested_rip of a kvm_nested_vmenter
        self.r = {"l2_entries": 0, "l1_to_l2": 0, "vmenters": 0,
                  "vmenter_failed": 0, "injects": 0, "l1_ns": 0, "l2_ns": 0,
                  "handled": {}, "reflected": {},
                  "trips_l0": [], "trips_l1": [],
                  "wakeup_l1": [], "wakeup_l2": [],
                  "p1": [[0, 0], [0, 0]], "anomalies": {}}

    def anomaly(self, what):
        a = self.r["anomalies"]
        a[what] = a.get(what, 0) + 1

    def feed(self, line):
        m = LINE_RE.match(line)
        if not m:
            return
        t = int(m.group("sec")) * 10**9 + int(m.group("frac").ljust(9, "0")[:9])
        ev, body = m.group("event"), m.group("body")
        if ev == "sched_waking":
            w = WAKE_RE.match(body)
            if w and int(w.group("pid")) == self.tid:
                self.woken_ns = t
            return
        if int(m.group("pid")) != self.tid:
            return
        getattr(self, "on_" + ev, lambda t, body: None)(t, body)

    def guest_time(self, t):
        if self.entry_ns is not None:
            self.r[self.entry_level + "_ns"] += t - self.entry_ns
            self.entry_ns = None

    def on_kvm_entry(self, t, body):
        r = self.r
        if self.vmenter_rip is not None:
            e = ENTRY_RE.match(body)
            if e and int(e.group("rip"), 16) != self.vmenter_rip:
                r["vmenter_failed"] += 1
                self.next_level = "l1"
            self.vmenter_rip = None
        lvl = self.next_level
        self.guest_time(t)      # a re-entry without kvm_exit
        if not self.l2_exit_traced:
            self.anomaly("l2_exit_without_nested_vmexit")
            self.l2_exit_traced = True
        if lvl == "l2":
            self.active = True
        if self.active:
            r["p1"][lvl == "l2"][self.p1_state == "ready"] += 1
        if lvl == "l2":
            r["l2_entries"] += 1
            if self.entry_level == "l1":
                r["l1_to_l2"] += 1
        if self.open:
            reason, t0, bounced = self.open
            if lvl == "l1" and not bounced:
                r["reflected"][reason] = r["reflected"].get(reason, 0) + 1
                self.open[2] = True
            elif lvl == "l2":
                if not bounced:
                    r["handled"][reason] = r["handled"].get(reason, 0) + 1
                r["trips_l1" if bounced else "trips_l0"].append(t - t0)
                self.open = None
        if lvl in self.halt:
            r["wakeup_" + lvl].append(t - max(self.halt.pop(lvl),
                                              self.woken_ns))
        if lvl == "l2":
            self.halt.pop("l1", None)
        self.entry_level = lvl
        self.entry_ns = t

    def on_kvm_exit(self, t, body):
        e = EXIT_RE.match(body)
        reason = e.group("reason") if e else "?"
        lvl = self.entry_level
        self.guest_time(t)
        if lvl == "l2":
            self.active = True
            self.open = [reason, t, False]
            self.l2_exit_traced = False
        elif reason in VMENTER_EXITS:
            self.active = True
            self.p1_state = "waiting"
        if reason in ("hlt", "HLT") and lvl:
            self.halt[lvl] = t

    def on_kvm_nested_vmexit(self, t, body):
        if self.entry_level != "l2":
            self.anomaly("nested_vmexit_after_l1_entry")
        self.l2_exit_traced = True

    def on_kvm_nested_vmenter(self, t, body):
        self.r["vmenters"] += 1
        self.next_level = "l2"
        m = VMENTER_RE.search(body)
        self.vmenter_rip = int(m.group(1), 16) if m else None

    # What 5.10's KVM traces instead (SVM only): the same place in
    # nested_svm_vmrun(), before the entry's last checks.
    on_kvm_nested_vmrun = on_kvm_nested_vmenter

    def on_kvm_nested_vmexit_inject(self, t, body):
        self.r["injects"] += 1
        self.next_level = "l1"
        self.p1_state = "normal"

    def on_kvm_mmu_get_page(self, t, body):
        if self.p1_state == "waiting":
            self.p1_state = "ready"

    def result(self):
        """The counts (exit reasons as (isa, code, name) keys' names), the
        interval lists and the heuristic's verdicts."""
        return self.r


# -- self-test: synthetic traces with results worked out by hand -------------

def _sw(cpu, us, pcomm, ppid, pstate, ncomm, npid):
    return ("%16s-%-5d [%03d] d..2. 1.%06d: sched_switch: prev_comm=%s "
            "prev_pid=%d prev_prio=120 prev_state=%s ==> next_comm=%s "
            "next_pid=%d next_prio=120" % (pcomm if ppid else "<idle>", ppid,
                                          cpu, us, pcomm, ppid, pstate,
                                          ncomm, npid))


def _ev(comm, pid, cpu, us, event, body):
    return "%16s-%-5d [%03d] ..... 1.%06d: %s: %s" % (comm, pid, cpu, us,
                                                      event, body)


def _entry(us, cpu=1, rip=0x1000):
    return _ev("vcpu0", 100, cpu, us, "kvm_entry", "vcpu 0, rip %#x" % rip)


def _exit(us, reason, cpu=1):
    return _ev("vcpu0", 100, cpu, us, "kvm_exit",
               "vcpu 0 reason %s rip 0x1009 info1 0x0000000000000000 info2 "
               "0x0000000000000000 intr_info 0x00000000 error_code "
               "0x00000000" % reason)


def _uexit(us, reason, code, cpu=1):
    return _ev("vcpu0", 100, cpu, us, "kvm_userspace_exit",
               "reason %s (%d)" % (reason, code))


def _wake(comm, pid, cpu, us, event, tcpu):
    return _ev(comm, pid, cpu, us, event,
               "comm=vcpu0 pid=100 prio=120 target_cpu=%03d" % tcpu)


# vCPU 100 on CPU 1 next to "hog" (50): I/O exit, HLT and idle, wait behind
# the hog, preempted by a kworker then the hog (switched out in kernel),
# blocked, woken with a migration to idle CPU 0, dies.
_CASE_A = [
    "# entries-in-buffer/entries-written: 24/24   #P:2",
    _entry(0), _exit(10, "io"), _uexit(15, "KVM_EXIT_IO", 2), _entry(20),
    _exit(30, "hlt"), _uexit(32, "KVM_EXIT_HLT", 5),
    _sw(1, 35, "vcpu0", 100, "S", "hog", 50),
    _wake("hog", 50, 1, 100, "sched_waking", 1),
    _wake("hog", 50, 1, 101, "sched_wakeup", 1),
    _sw(1, 110, "hog", 50, "R", "vcpu0", 100),
    _entry(115), _exit(120, "interrupt"),
    _sw(1, 125, "vcpu0", 100, "R+", "kworker/1:0", 22),
    _sw(1, 140, "kworker/1:0", 22, "I", "hog", 50),
    _sw(1, 200, "hog", 50, "R", "vcpu0", 100),
    _entry(205), _exit(215, "io"), _uexit(220, "KVM_EXIT_IO", 2),
    _sw(1, 230, "vcpu0", 100, "D", "hog", 50),
    _wake("<idle>", 0, 0, 250, "sched_waking", 1),
    _ev("<idle>", 0, 0, 251, "sched_migrate_task",
        "comm=vcpu0 pid=100 prio=120 orig_cpu=1 dest_cpu=0"),
    _wake("<idle>", 0, 0, 252, "sched_wakeup", 0),
    _sw(0, 260, "swapper/0", 0, "R", "vcpu0", 100),
    _sw(0, 270, "vcpu0", 100, "X", "swapper/0", 0),
]
_EXPECT_A = {
    "observed_ns": 270000, "state": "dead",
    "state_ns": {"guest": 35000, "kernel": 22000, "user": 33000,
                 "preempted": 75000, "wait": 20000, "idle": 65000,
                 "blocked": 20000},
    "entries": {"guest": 4, "kernel": 5, "user": 5, "preempted": 1,
                "wait": 2, "idle": 1, "blocked": 1},
    "exits": {"io": (2, 1, 10000), "hlt": (1, 1, 10000),
              "interrupt": (1, 1, 10000)},
    "upper": {"io": [20000], "hlt": [20000], "interrupt": [15000]},
    "preemptors": {"hog": 71000, "kworker/1:0": 15000, "swapper/0": 9000},
    "anomalies": {},
    # each interval's ends, and the CPU's event before each (the waking
    # at 250 is CPU 0's first: no bracket)
    "brackets": [("wait", 100, 35, 110, 101),
                 ("preempted", 125, 120, 200, 140),
                 ("wait", 250, 250, 260, 252)],
}

# Switched out in guest (resumes in kernel), a waking that precedes the
# vCPU's own sleeping switch-out, a kvm_entry without kvm_exit.
_CASE_B = [
    _entry(0), _sw(1, 10, "vcpu0", 100, "R+", "hog", 50),
    _sw(1, 50, "hog", 50, "R", "vcpu0", 100),
    _exit(55, "interrupt"), _uexit(60, "KVM_EXIT_IO", 2),
    _wake("other", 7, 0, 70, "sched_waking", 1),
    _sw(1, 72, "vcpu0", 100, "S", "hog", 50),
    _wake("other", 7, 0, 80, "sched_wakeup", 1),
    _sw(1, 90, "hog", 50, "R", "vcpu0", 100),
    _entry(95), _entry(99), _exit(100, "hlt"),
]
_EXPECT_B = {
    "observed_ns": 100000, "state": "kernel",
    "state_ns": {"guest": 15000, "kernel": 10000, "user": 17000,
                 "preempted": 40000, "wait": 18000, "idle": 0,
                 "blocked": 0},
    "entries": {"guest": 2, "kernel": 2, "user": 2, "preempted": 1,
                "wait": 1, "idle": 0, "blocked": 0},
    "exits": {"interrupt": (1, 1, 22000), "hlt": (1, 0, 0)},
    "upper": {"interrupt": [77000], "hlt": []},
    "preemptors": {"hog": 58000},
    "anomalies": {"early_waking": 1, "entry_while_in_guest": 1,
                  "switched_out_in_guest": 1},
}

# Case A between two trace_marker writes at 50 and 210 us.
_CASE_C = (_CASE_A[:8] +
           [_ev("sh", 9, 0, 50, "tracing_mark_write", "vmlat_start")] +
           _CASE_A[8:17] +
           [_ev("sh", 9, 0, 210, "tracing_mark_write", "vmlat_end")] +
           _CASE_A[17:])
_EXPECT_C = {
    "observed_ns": 160000, "state": "guest",
    "state_ns": {"guest": 10000, "kernel": 10000, "user": 5000,
                 "preempted": 75000, "wait": 10000, "idle": 50000,
                 "blocked": 0},
    "entries": {"guest": 2, "kernel": 2, "user": 1, "preempted": 1,
                "wait": 1, "idle": 0, "blocked": 0},
    "exits": {"interrupt": (1, 1, 10000)},
    "upper": {"interrupt": [15000]},
    "preemptors": {"hog": 70000, "kworker/1:0": 15000},
    "anomalies": {},
}


def _nev(us, event, body=""):
    return _ev("vcpu0", 100, 1, us, event, body)


def _nexit(us, reason):
    return [_exit(us, reason),
            _nev(us, "kvm_nested_vmexit", "vcpu 0 reason %s rip 0x1009 "
                 "info1 0x0000000000000000" % reason)]


_INJ = "reason: %s ext_inf1: 0x0000000000000000 ext_inf2: 0x0"
_VMENTER = "rip: 0x1000 vmcb: 0x35000 nested_rip: 0x2000"
# L1 runs 0-10, VMRUNs (a shadow page: [P1] READY); L2 runs 12-20 and
# makes a hypercall, reflected (L1 25-30); L2 runs 32-40, an I/O exit
# handled by L0; L2 45-50, HLT reflected (L1 53-55); L2 runs from 58.
_CASE_N = ([_entry(0), _exit(10, "vmrun"), _nev(11, "kvm_nested_vmenter",
                                                 _VMENTER),
            _nev(11, "kvm_mmu_get_page", "sp gen 0 gfn 0 l4"),
            _entry(12, rip=0x2000)] +
           _nexit(20, "hypercall") +
           [_nev(21, "kvm_nested_vmexit_inject", _INJ % "hypercall"),
            _entry(25), _exit(30, "vmrun"),
            _nev(31, "kvm_nested_vmenter", _VMENTER),
            _entry(32, rip=0x2000)] +
           _nexit(40, "io") + [_entry(45)] + _nexit(50, "hlt") +
           [_nev(51, "kvm_nested_vmexit_inject", _INJ % "hlt"), _entry(53),
            _exit(55, "vmrun"), _nev(56, "kvm_nested_vmenter", _VMENTER),
            _entry(58, rip=0x2000)])
_EXPECT_N = {
    "l2_entries": 4, "l1_to_l2": 3, "vmenters": 3, "vmenter_failed": 0,
    "injects": 2,
    "l1_ns": 17000, "l2_ns": 21000, "handled": {"io": 1},
    "reflected": {"hypercall": 1, "hlt": 1}, "trips_l0": [5000],
    "trips_l1": [12000, 8000], "wakeup_l1": [], "wakeup_l2": [8000],
    "p1": [[2, 0], [3, 1]], "anomalies": {},
}


# L1's first VMRUN fails KVM's last checks (kvm_nested_vmenter, then L1
# resumes at 12 after its VMRUN, not at nested_rip 0x2000) and makes an
# I/O exit at 20; its second VMRUN enters L2 at 32, whose I/O exit at 40
# L0 handles (L2 again from 45).
_CASE_NF = ([_entry(0), _exit(10, "vmrun"),
             _nev(11, "kvm_nested_vmenter", _VMENTER),
             _entry(12, rip=0x1003), _exit(20, "io"), _entry(25),
             _exit(30, "vmrun"), _nev(31, "kvm_nested_vmenter", _VMENTER),
             _entry(32, rip=0x2000)] + _nexit(40, "io") +
            [_entry(45, rip=0x2000)])
_EXPECT_NF = {
    "l2_entries": 2, "l1_to_l2": 1, "vmenters": 2, "vmenter_failed": 1,
    "injects": 0, "l1_ns": 23000, "l2_ns": 8000, "handled": {"io": 1},
    "reflected": {}, "trips_l0": [5000], "trips_l1": [],
    "p1": [[2, 0], [2, 0]], "anomalies": {},
}


# The same as 5.10's KVM traces it: kvm_nested_vmrun, its nested_rip
# printed as nrip.
_VMRUN = ("rip: 0x0000000000001000 vmcb: 0x0000000000035000 nrip: "
          "0x0000000000002000 int_ctl: 0x01000000 event_inj: 0x00000000 "
          "npt: on")
_CASE_NF_5_10 = [ln.replace("kvm_nested_vmenter: " + _VMENTER,
                            "kvm_nested_vmrun: " + _VMRUN) for ln in _CASE_NF]


def _other(us, cpu=1, comm="vcpu0", pid=100):
    """An event of @comm on @cpu that names no vCPU (it wakes a kworker)."""
    return _ev(comm, pid, cpu, us, "sched_waking",
               "comm=kworker/u8:0 pid=29 prio=120 target_cpu=000")


# An exit preempted in its handling, with the thread's and the CPU's
# events around each end: vmlat's probe may read each sched_switch, as
# each kvm_exit and kvm_entry, anywhere between the CPU's events around
# it. Interrupt exit at 10 (the thread's next event at 12, its last
# before the switch-out at 20), preempted 30-50 (the CPU's last event
# before the switch-in at 40), its next event at 55, the last before the
# kvm_entry at 60 (vmlat's own event at 69 is written after its read).
_CASE_D = [
    _entry(0), _exit(10, "interrupt"), _other(12), _other(20),
    _sw(1, 30, "vcpu0", 100, "R+", "kworker/1:0", 22),
    _other(40, comm="kworker/1:0", pid=22),
    _sw(1, 50, "kworker/1:0", 22, "I", "vcpu0", 100),
    _other(55), _other(60),
    _ev("vcpu0", 100, 1, 69, "vmlat_exit", "duration_ns=40000"),
    _entry(70),
]
# ns: 10-30 and 50-70; lower_ns: 12-20 and 55-60; upper_ns: ns, the
# guest time before the exit (no event before the first kvm_entry), and
# 40-50.
_EXPECT_D = [{"reason": "interrupt", "entry_ns": 1000070000, "ns": 40000,
              "lower_ns": 13000, "upper_ns": 60000}]


def bounds_self_test(i):
    """The bounds of a preempted exit's handling time; print the TAP line;
    return whether it failed."""
    o = Oracle({100: Vcpu(100, 99)}, keep_intervals=True)
    for line in _CASE_D:
        o.feed(line + "\n")
    got = o.result({}, [], False)["vcpus"][0]["handled_exits"]
    print("%sok %d preempted_exit_bounds" % ("" if got == _EXPECT_D
                                              else "not ", i))
    if got != _EXPECT_D:
        print("# got %s, expected %s" % (got, _EXPECT_D))
    return got != _EXPECT_D


def nested_self_test(i):
    """The nested cases; print their TAP lines; return how many failed."""
    failed = 0
    for j, (name, lines, exp) in enumerate(
            [("nested_l1_l2_reflected_handled_p1", _CASE_N, _EXPECT_N),
             ("nested_failed_vmenter_resumes_l1", _CASE_NF, _EXPECT_NF),
             ("nested_5_10_vmrun", _CASE_NF_5_10, _EXPECT_NF)]):
        n = Nested(100)
        for line in lines:
            n.feed(line + "\n")
        got = n.result()
        bad = [k for k in exp if got[k] != exp[k]]
        print("%sok %d %s" % ("not " if bad else "", i + j, name))
        for k in bad:
            print("# %s: got %s, expected %s" % (k, got[k], exp[k]))
        failed += 1 if bad else 0
    return failed


def self_test():
    """Replays the synthetic cases; prints TAP; returns the exit status."""
    cases = [("basic_states_preemptors_migration", _CASE_A, _EXPECT_A, {}),
             ("switched_out_in_guest_early_waking", _CASE_B, _EXPECT_B, {}),
             ("window_markers", _CASE_C, _EXPECT_C,
              {"start_marker": "vmlat_start", "end_marker": "vmlat_end"})]
    print("TAP version 13")
    print("1..%d" % (len(cases) + 4))
    failed = 0
    for i, (name, lines, exp, kw) in enumerate(cases, 1):
        o = Oracle({100: Vcpu(100, 99)}, keep_intervals=True, **kw)
        for line in lines:
            o.feed(line + "\n")
        r = o.result({}, [], False)
        v = r["vcpus"][0]
        # --intervals lists the same handled exits, in the order of time
        listed = {}
        for h in v["handled_exits"]:
            listed.setdefault(h["reason"], []).append(h)
        r["checks"]["handled_exits_listed_in_order"] = all(
            [x["entry_ns"] for x in hs] == sorted(x["entry_ns"] for x in hs)
            and sum(x["ns"] for x in hs) == v["exit_reasons"][k]["total_ns"]
            for k, hs in listed.items()) and \
            sum(map(len, listed.values())) == \
            sum(e["handled"] for e in v["exit_reasons"].values()) and \
            all(x["lower_ns"] <= x["ns"] <= x["upper_ns"]
                for x in v["handled_exits"])
        got = {
            "observed_ns": v["observed_ns"], "state": v["state"],
            "state_ns": v["state_ns"], "entries": v["entries"],
            "exits": {k: (e["count"], e["handled"], e["total_ns"])
                      for k, e in v["exit_reasons"].items()},
            "upper": {k: e["sorted_upper_ns"]
                      for k, e in v["exit_reasons"].items()},
            "preemptors": {p["comm"]: p["stolen_ns"]
                           for p in v["preemptors"]},
            "anomalies": v["anomalies"],
            "brackets": [(x["kind"], *(x[k] // 1000 - 10**6 for k in (
                "start_ns", "start_lo_ns", "end_ns", "end_lo_ns")))
                for x in v["intervals"]],
        }
        bad = [k for k in exp if got[k] != exp[k]]
        bad += [k for k, ok in r["checks"].items() if not ok]
        if bad:
            failed += 1
            print("not ok %d %s" % (i, name))
            for k in bad:
                print("# %s: got %s, expected %s" % (k, got.get(k),
                                                     exp.get(k)))
        else:
            print("ok %d %s" % (i, name))
    failed += nested_self_test(len(cases) + 1)
    failed += bounds_self_test(len(cases) + 4)
    return 1 if failed else 0


KV_RE = re.compile(r"(\w+)=(\S+)")


def read_scenario(path):
    """vCPUs, VM comms and hogs from the output of selftests/vmlat/scenario."""
    vcpus, vm_comms, hogs = {}, {}, []
    with open(path) as f:
        for line in f:
            tag = line.split(" ", 1)[0]
            kv = dict(KV_RE.findall(line))
            if tag == "vcpu" and "vcpu_tid" in kv:
                vm = int(kv["vm_pid"]) if "vm_pid" in kv else None
                vcpus[int(kv["vcpu_tid"])] = vm
                if vm is not None and "vm_comm" in kv:
                    vm_comms[vm] = kv["vm_comm"]
            elif tag == "hog" and "pid" in kv:
                hogs.append(int(kv["pid"]))
    return vcpus, vm_comms, hogs


def parse_vcpu_arg(s):
    tid, _, vm = s.partition(":")
    try:
        return int(tid), (int(vm) if vm else None)
    except ValueError:
        raise argparse.ArgumentTypeError("expected TID or TID:VM_PID: %r" % s)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Per-vCPU state times, exits and preemptors from an "
                    "ftrace text trace (independent oracle for vmlat).")
    ap.add_argument("trace", nargs="?",
                    help="ftrace 'trace' file text, or - for stdin")
    ap.add_argument("--vcpu", action="append", type=parse_vcpu_arg,
                    default=[], metavar="TID[:VM_PID]",
                    help="a vCPU thread (repeatable)")
    ap.add_argument("--scenario", metavar="FILE",
                    help="take vCPU threads, VMs and hogs from the output "
                         "of selftests/vmlat/scenario")
    ap.add_argument("--hog", action="append", type=int, default=[],
                    metavar="PID", help="a hog pid, only listed in output")
    ap.add_argument("--allow-lost", action="store_true",
                    help="analyse a trace that lost events anyway")
    ap.add_argument("--start-marker", metavar="TEXT",
                    help="restart the statistics at the first trace_marker "
                         "write containing TEXT (e.g. when vmlat is reset)")
    ap.add_argument("--end-marker", metavar="TEXT",
                    help="end the window of every live vCPU at the first "
                         "later trace_marker write containing TEXT (e.g. "
                         "when vmlat is read); ignore what follows")
    ap.add_argument("--intervals", action="store_true",
                    help="list every preempted/wait interval and every "
                         "handled exit")
    ap.add_argument("-o", "--output", metavar="FILE",
                    help="write the JSON here instead of stdout")
    ap.add_argument("--self-test", action="store_true",
                    help="check the oracle on built-in synthetic traces "
                         "(TAP output) and exit")
    args = ap.parse_args(argv)
    if args.self_test:
        return self_test()
    if args.trace is None:
        ap.error("no trace file")

    vcpus, vm_comms, hogs = {}, {}, list(args.hog)
    if args.scenario:
        vcpus, vm_comms, h = read_scenario(args.scenario)
        hogs += h
    for tid, vm in args.vcpu:
        vcpus[tid] = vm if vm is not None else vcpus.get(tid)
    if not vcpus:
        ap.error("no vCPU threads: give --vcpu or --scenario")

    oracle = Oracle({tid: Vcpu(tid, vm) for tid, vm in vcpus.items()},
                    keep_intervals=args.intervals,
                    start_marker=args.start_marker,
                    end_marker=args.end_marker)
    f = sys.stdin if args.trace == "-" else open(args.trace, errors="replace")
    with f:
        for line in f:
            oracle.feed(line)
    res = oracle.result(vm_comms, hogs, args.allow_lost)
    text = json.dumps(res, indent=1) + "\n"
    if args.output:
        with open(args.output, "w") as out:
            out.write(text)
    else:
        sys.stdout.write(text)

    if not any(v["observed"] for v in res["vcpus"]):
        print("vmlat_oracle: no KVM event of the given vCPU threads",
              file=sys.stderr)
        return 3
    failed = [k for k, ok in res["checks"].items() if not ok and
              not (k == "trace_complete" and args.allow_lost)]
    if failed:
        print("vmlat_oracle: failed checks: " + ", ".join(failed),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
