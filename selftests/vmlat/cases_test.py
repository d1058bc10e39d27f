#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""cases_test.py - the seed papers' experiments, live, with Linux guests.

Each case reproduces one experiment of the papers (digest section 8) in the
test host with Debian-kernel Linux guests (the test host's own kernel under
qemu-system-x86_64 -enable-kvm, one vCPU) running Debian's sysbench, and
checks that vmlat shows what the paper showed, against what the guest
itself measured. Documentation/vmlat-cases.rst walks through
each as a diagnosis with the figures of the latest run. They are too slow
for make check: `make cases` runs them (in the 6.12-icount test host,
whose clock counts instructions, so that a guest's own work takes the
same time whatever shares its CPU).

The guest under study ("vm-a") runs sysbench cpu --cpu-max-prime=10000
(the papers' job), with a fixed number of events calibrated to about
RUN_S seconds alone, RUNS times per phase, waiting WAIT_FRAC of RUN_S
between runs ([P4]: 200 ms after 324 ms). Its vCPU thread and the other
guest's are pinned to host CPU 1, QEMU's other threads to CPU 0. The guest
stamps each run's start and end with its CLOCK_MONOTONIC (kvmclock, the
host's clock) and its /proc/stat steal; the test reads vmlat's JSON at
each stamp as it comes on the console, and resets vmlat at each phase's
start. Phases, one boot:

  alone    nothing else on CPU 1.
  vm       a second guest ("vm-b") on CPU 1 runs the same job in a loop,
           waiting RUN_S between runs ([P4]'s VM2: 800 ms).
  hog      vm-b stopped (SIGSTOP), a host CPU hog named burnP6 on CPU 1.
  three    vm-b, now running the job without pauses, and burnP6.
  io       vm-a alone runs sysbench fileio instead (random reads and
           writes, an fsync every 10) on an ext4 file system on its
           virtio disk, an image in the test host's memory.

Cases (each a group of checks):

  accounting  every run: the vCPU's time in vmlat's states (guest, exit
           handling in the kernel and in QEMU, preempted, waiting, idle,
           blocked) sums to the guest's own measure of the run, within 3%
           + 20 ms (the two ends are read on the host as the stamps reach
           it, milliseconds after the guest wrote them).
  contention  [P4] 5.5 (324 +- 5 ms alone, 443 +- 116 ms with a second VM
           pinned to the same CPU): the runs are slower with vm-b, vmlat's
           preempted and waiting time explains the difference (the mean
           slowdown less the mean growth of preempted + waiting time,
           within 10% of a run alone), and names vm-b as the preemptor
           of at least 90% of the stolen time.
  host-hog  [P0] (the job about 2x slower next to burnP6; preempted about
           half its lifetime; preemptor burnP6): the run takes 1.6 to 2.5
           times as long, preempted + waiting is 35 to 65% of it, the
           host's burnP6 took at least 90% of it, named as such; the
           guest's own /proc/stat steal is printed beside.
  three-way  [P0] Fig. 14 (the task, the other VM and the host about a
           third of the CPU each: 274, 270, 260 ms): vm-a's own time (in
           the guest and its exits), the time vm-b took and the time the
           host took are each 20 to 47% of the runs.
  type2-steal  [P3] (a single VM: mpstat's steal 0.00 while host-side
           exit handling is 7.9%, WRMSR 90%): in the alone and io phases,
           the guest's /proc/stat steal over the runs is at most one
           10 ms tick per run, while vmlat's exit handling is at least 1%
           of the runs with sysbench cpu (its exits: the host's timer
           interrupts, the guest's tick and its LAPIC, which QEMU
           emulates in userspace: kernel-irqchip=off, see
           linux_guest_argv()) and at least 5% with sysbench fileio (each
           request a virtio notification QEMU handles), by reason.

The memory case (memory, [P4] Table II) and the nested ones
(nested-wakeup and nested-sync, [P1]) boot guests of their own: see
t_memory(), t_nested_wakeup() and t_nested_sync().

Needs root, kvm_amd or kvm_intel, $VMLAT_KO, $VMLAT_GUEST_KERNEL,
qemu-system-x86_64, sysbench, 2 CPUs. TAP output; exit status 4 when
everything was skipped.
"""
import contextlib
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vmlat_ktest import (TRACING, VMLAT, ConsoleGuest, SkipTest,  # noqa: E402
                         guest_modules, keep, linux_guest_argv,
                         linux_guest_initramfs, main, rd,
                         schema_keep, tap, tracing_instance, wr)

CPU = 1         # the host CPU the guests share
RUNS = int(os.environ.get("VMLAT_CASE_RUNS", "4"))
RUN_S = int(os.environ.get("VMLAT_CASE_RUN_S", "1"))
WAIT_FRAC = 200 / 324.0
BOOT_S = 180    # a boot that takes longer hung
STATES = ("guest", "kernel", "user", "preempted", "wait", "idle", "blocked")
PAPERS = {
    "contention": "[P4] alone 324 +- 5 ms, with VM2 443 +- 116 ms",
    "host-hog": "[P0] about 2x slower, preempted about 50%, by burnP6",
    "three-way": "[P0] task 274 ms, other VM 270 ms, host 260 ms",
    "type2-steal": "[P3] mpstat steal 0.00%, exit handling 7.90%, "
                   "WRMSR 90.25%",
}

# The guest under study. The host says "cal S" (sysbench cpu's events in
# S seconds alone: "=== ev N"), "disk" (its virtio disk mounted and
# sysbench fileio's files made on it), "run TAG RUNS ARG WAIT_MS", "quit".
# A run of TAG mem* is sysbench memory writing ARG in all, of io* sysbench
# fileio doing ARG requests, else sysbench cpu's ARG events.
SUBJECT_INIT = r"""#!/bin/busybox sh
B=/bin/busybox
$B mkdir -p /proc /dev /sys /mnt
$B mount -t devtmpfs dev /dev
$B mount -t proc proc /proc
exec >/dev/ttyS0 2>&1 </dev/ttyS0
$B stty -echo
job() { /usr/bin/sysbench cpu --cpu-max-prime=10000 --threads=1 "$@" run; }
io() { /usr/bin/sysbench fileio --file-num=4 --file-total-size=%(io_size)s "$@"; }
now() { $B awk '/^now at/ { print $3; exit }' /proc/timer_list; }
steal() { $B awk '/^cpu / { print $9 }' /proc/stat; }
total() { $B awk '/total time:/ { print $NF }'; }
echo "=== ready"
while read cmd tag n ev wait_ms; do
    case $cmd in
    cal)
        echo "=== ev $(job --time=$tag | $B awk '/total number of events/ { print $NF }')";;
    disk)
%(insmods)s
        $B mount -t ext4 /dev/vda /mnt && cd /mnt && io prepare >/dev/null
        echo "=== disk $($B ls /mnt | $B grep -c test_file)";;
    run)
        i=0
        while [ $i -lt $n ]; do
            i=$((i + 1))
            echo "=== s $tag $i $(now) $(steal)"
            case $tag in
            mem*) t=$(/usr/bin/sysbench memory --memory-block-size=%(mem_block)s \
                        --memory-total-size=$ev --memory-oper=write run | total);;
            io*) t=$(io --file-test-mode=rndrw --file-fsync-freq=10 \
                        --events=$ev --time=0 run | total);;
            *) t=$(job --events=$ev --time=0 | total);;
            esac
            echo "=== e $tag $i $(now) $(steal) $t"
            $B usleep $((wait_ms * 1000))
        done
        echo "=== done $tag";;
    quit) break;;
    esac
done
echo "=== end"
$B poweroff -f
"""


# The other guest: "go EVENTS WAIT_MS" (again: anew) runs the same job in
# a loop, pausing WAIT_MS between runs.
OTHER_INIT = r"""#!/bin/busybox sh
B=/bin/busybox
$B mkdir -p /proc /dev
$B mount -t devtmpfs dev /dev
exec >/dev/ttyS0 2>&1 </dev/ttyS0
$B stty -echo
echo "=== ready"
while read cmd ev wait_ms; do
    [ -n "$l" ] && $B kill $l
    while :; do
        /usr/bin/sysbench cpu --cpu-max-prime=10000 --threads=1 \
            --events=$ev --time=0 run >/dev/null
        $B usleep $((wait_ms * 1000))
    done &
    l=$!
    echo "=== going $wait_ms"
done
"""


# A host CPU hog named as [P0]'s (a script's name is its task's comm).
HOG = "#!/bin/sh\nwhile :; do :; done\n"
# The I/O-heavy phase: sysbench fileio, random reads and writes with an
# fsync every 10, over 4 files of IO_SIZE on the guest's virtio disk (an
# ext4 image in the test host's memory), IO_EVENTS requests a run.
IO_SIZE, IO_EVENTS = "16M", 4000
# The memory case: sysbench memory writes a block of MEM_BLOCK over and
# over, MEM_TOTAL in all, in a 256 MiB guest whose QEMU the host holds to
# MEM_LIMIT (a cgroup, with swap on zram in the test host).
MEM_BLOCK, MEM_TOTAL, MEM_LIMIT = "128M", "1G", 176 << 20
MEM_RUNS = 2
CGROUP = "/sys/fs/cgroup"


def insmods(mods, indent="", params=None):
    """Shell lines loading the modules @mods in order, each with its
    parameters in @params {path suffix: "param=value"}."""
    params = params or {}
    return "\n".join(
        '%s$B insmod %s %s || echo "=== insmod failed %s"' % (
            indent, m, " ".join(v for k, v in params.items()
                                if m.endswith(k)), m) for m in mods)


def subject(tmp, kernel, tag):
    """The initramfs of a guest that takes the host's commands
    (SUBJECT_INIT) and an ext4 image for its virtio disk, in @tmp/@tag;
    their paths."""
    # (ext4 takes its checksums from the crypto API: crc32c)
    mods = guest_modules(kernel, "kernel/drivers/block/virtio_blk.ko",
                         "kernel/crypto/crc32c_generic.ko",
                         "kernel/fs/ext4/ext4.ko")
    init = SUBJECT_INIT % {"io_size": IO_SIZE, "mem_block": MEM_BLOCK,
                           "insmods": insmods(mods, "        ")}
    cpio = linux_guest_initramfs(os.path.join(tmp, tag), init,
                                 progs=["sysbench"] + mods)
    disk = os.path.join(tmp, tag + ".img")
    subprocess.run(["mke2fs", "-q", "-F", "-t", "ext4", disk, "128M"],
                   check=True, stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT)
    return cpio, disk


def guest_env():
    kernel = os.environ.get("VMLAT_GUEST_KERNEL", "")
    qemu = shutil.which("qemu-system-x86_64")
    if not (os.path.isfile(kernel) and qemu):
        raise SkipTest("needs $VMLAT_GUEST_KERNEL and qemu-system-x86_64")
    if len(os.sched_getaffinity(0)) < 2:
        raise SkipTest("needs 2 CPUs")
    return qemu, kernel


def named(argv, name):
    """QEMU's @argv with -name @name: the vmlat command names the VM so."""
    return argv + ["-name", name]


def report(tag):
    """The vmlat command's report of the phase so far (vmlat is reset at
    its start), kept as cases_<tag>_report.txt for Documentation."""
    cmd = os.environ.get("VMLAT_CMD", "")
    if os.path.isfile(cmd):
        r = subprocess.run([cmd, "report"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        keep("cases_%s_report.txt" % tag, r.stdout)
        return r.stdout
    return None


def vm_of(js, pid):
    vm = [v for v in js["vms"] if v["pid"] == pid]
    return vm[0] if vm else None


def pin(pid):
    """@pid's vCPU threads (vmlat's JSON names them) on CPU (1), its
    other threads on CPU 0; the vCPU's tid, or None if vmlat does not know the
    VM's vCPU yet."""
    vm = vm_of(rd_json_fast(), pid)
    if not vm or not vm["vcpus"]:
        return None
    tids = {v["tid"] for v in vm["vcpus"]}
    for t in os.listdir("/proc/%d/task" % pid):
        os.sched_setaffinity(int(t), {CPU} if int(t) in tids else {0})
    return vm["vcpus"][0]["tid"]


def rd_json_fast():
    # (output_test parses it strictly; this is read at each stamp; the
    # schema is checked at the end, json-schema)
    with open(VMLAT + "/json", "rb") as f:
        raw = f.read()
    schema_keep(raw)
    return json.loads(raw)


class Snap:
    """A VM's first vCPU and the VM (times, stolen_by, exits,
    preemptors) in vmlat's JSON, and the host's clock, read together."""

    def __init__(self, pid):
        self.t = time.monotonic_ns()
        js = rd_json_fast()
        self.js = js
        vm = vm_of(js, pid)
        self.vm = vm
        self.vcpu = vm["vcpus"][0] if vm else None


def stamps(rest):
    """(guest CLOCK_MONOTONIC ns, steal ticks[, sysbench's total time s])
    of a "=== s|e TAG I NOW STEAL [TOTAL]" line, from NOW on."""
    f = rest.split()
    v = [int(f[0]), int(f[1])]
    if len(f) > 2:
        v.append(float(f[2].rstrip("s")))
    return v


def run_phase(a, tag, events, wait_ms, n=RUNS, reset=True):
    """@a's @n runs of the job in phase @tag (sysbench cpu with @events
    events; for a tag "mem...", sysbench memory writing @events in all;
    for "io...", sysbench fileio making @events requests), vmlat reset
    first if @reset: a list of dicts with the guest's
    window (ns), steal (ticks), sysbench's time (ms), and vmlat's vCPU
    and VM before and after."""
    if reset:
        wr(VMLAT + "/reset", "1")
    a.say("run %s %d %s %d" % (tag, n, events, wait_ms))
    runs = []
    for i in range(1, n + 1):
        s = a.expect("s %s %d " % (tag, i), 120)
        s0 = Snap(a.q.pid)
        e = a.expect("e %s %d " % (tag, i), 300)
        s1 = Snap(a.q.pid)
        if s is None or e is None or not s0.vcpu or not s1.vcpu:
            raise RuntimeError("phase %s run %d: no stamp: %s" % (
                tag, i, " | ".join(a.out[-5:])))
        gs, ge = stamps(s), stamps(e)
        runs.append({"window": ge[0] - gs[0], "steal": ge[1] - gs[1],
                     "sysbench_ms": ge[2] * 1000, "host": s1.t - s0.t,
                     "before": s0, "after": s1})
    a.expect("done " + tag, 60)
    report(tag)
    # The phase's first and last documents: `vmlat -f ... -f ... report`
    keep("cases_%s_first.json" % tag, json.dumps(runs[0]["before"].js))
    keep("cases_%s_last.json" % tag, json.dumps(runs[-1]["after"].js))
    return runs


def delta(run, key):
    return run["after"].vcpu[key] - run["before"].vcpu[key]


def stolen(run):
    return delta(run, "preempted_ns") + delta(run, "wait_ns")


def stolen_by(run, key):
    """What host tasks ("host") or the VM of id @key took from the run's
    VM between its two reads (schema 4: only the VMs that took time)."""
    def took(sb):
        if key == "host":
            return sb["host_ns"]
        return sum(e["stolen_ns"] for e in sb["vms"] if str(e["id"]) == key)
    return (took(run["after"].vm["stolen_by"]) -
            took(run["before"].vm["stolen_by"]))


def mean(xs):
    return sum(xs) / len(xs)


def ms(ns):
    return "%.0f" % (ns / 1e6)


def boot_pin(g, tag):
    if g.expect("ready", BOOT_S) is None:
        raise RuntimeError("%s did not boot: %s" % (tag, " | ".join(
            g.out[-5:])))
    for _ in range(50):
        if pin(g.q.pid):
            return
        time.sleep(0.1)
    raise RuntimeError("%s: vmlat does not know its vCPU" % tag)


def check_accounting(phases):
    worst, n, bad = 0.0, 0, []
    for tag, runs in phases.items():
        for i, r in enumerate(runs):
            seen = sum(delta(r, s + "_ns") for s in STATES)
            err = abs(seen - r["window"])
            n += 1
            tol = 0.03 * r["window"] + 20 * 10**6
            worst = max(worst, err / tol)
            if err > tol:
                bad.append("%s %d: guest %s ms, vmlat %s ms" % (
                    tag, i + 1, ms(r["window"]), ms(seen)))
    tap(not bad and n > 0, "accounting.states_sum_to_the_guests_time",
        "%d runs, worst %.0f%% of the tolerance%s" % (
            n, worst * 100, "; " + "; ".join(bad) if bad else ""))


def phase_line(tag, runs):
    w = [r["window"] for r in runs]
    sb = [r["sysbench_ms"] for r in runs]
    st = [stolen(r) for r in runs]
    return ("%s: run %s ms (sysbench %s), stolen %s ms" % (
        tag, ms(mean(w)), "%.0f" % mean(sb), ms(mean(st))))


def check_contention(alone, shared, b_id):
    a_w, s_w = mean([r["window"] for r in alone]), mean(
        [r["window"] for r in shared])
    a_st, s_st = mean([stolen(r) for r in alone]), mean(
        [stolen(r) for r in shared])
    slow, explained = s_w - a_w, s_st - a_st
    why = "%s; %s; %s" % (phase_line("alone", alone),
                          phase_line("vm", shared), PAPERS["contention"])
    tap(slow > 0.1 * a_w, "contention.slower_with_the_other_vm", why)
    tap(abs(slow - explained) <= 0.1 * a_w,
        "contention.stolen_time_explains_it",
        "slower by %s ms, stolen %s ms more" % (ms(slow), ms(explained)))
    by_b = sum(stolen_by(r, str(b_id)) for r in shared)
    total = sum(stolen(r) for r in shared)
    tap(total > 0 and by_b >= 0.9 * total,
        "contention.names_the_other_vm",
        "vm-b (id %d) took %s of %s ms" % (b_id, ms(by_b), ms(total)))


def check_hog(alone, hog):
    a_w = mean([r["window"] for r in alone])
    h_w = mean([r["window"] for r in hog])
    st = sum(stolen(r) for r in hog)
    w = sum(r["window"] for r in hog)
    guest_steal = sum(r["steal"] for r in hog) * 10**7
    why = "%s; %s; guest's /proc/stat steal %s ms of the runs; %s" % (
        phase_line("alone", alone), phase_line("hog", hog), ms(
            guest_steal / len(hog)), PAPERS["host-hog"])
    tap(1.6 <= h_w / a_w <= 2.5, "host-hog.about_twice_as_slow",
        "%.2fx: %s" % (h_w / a_w, why))
    tap(0.35 <= st / w <= 0.65, "host-hog.preempted_about_half",
        "%.0f%% of the runs" % (st * 100 / w))
    by_host = sum(stolen_by(r, "host") for r in hog)
    pre = hog[-1]["after"].vm["preemptors"]
    top = pre[0] if pre else {}
    tap(by_host >= 0.9 * st and top.get("kind") == "host" and
        top.get("comm") == "burnP6", "host-hog.names_burnP6",
        "host took %s of %s ms; top preemptor %s" % (
            ms(by_host), ms(st), top))


def check_three(three, b_id):
    w = sum(r["window"] for r in three)
    own = sum(delta(r, "guest_ns") + delta(r, "kernel_ns") +
              delta(r, "user_ns") for r in three)
    vm_b = sum(stolen_by(r, str(b_id)) for r in three)
    host = sum(stolen_by(r, "host") for r in three)
    shares = [x / w for x in (own, vm_b, host)]
    tap(all(0.2 <= s <= 0.47 for s in shares), "three-way.a_third_each",
        "vm-a %.0f%%, vm-b %.0f%%, host %.0f%% of %s ms of runs; %s" % (
            shares[0] * 100, shares[1] * 100, shares[2] * 100, ms(w),
            PAPERS["three-way"]))


def type2(runs):
    """(the runs' time, vmlat's exit handling in it, the guest's own
    steal ticks, the exit reasons' shares)"""
    w = sum(r["window"] for r in runs)
    handling = sum(delta(r, "kernel_ns") + delta(r, "user_ns")
                   for r in runs)
    ticks = sum(r["steal"] for r in runs)
    exits = sorted(runs[-1]["after"].vm["exits"],
                   key=lambda e: -e["total_ns"])
    total = sum(e["total_ns"] for e in exits) or 1
    mix = ", ".join("%s %.0f%%" % (e["name"], e["total_ns"] * 100 / total)
                    for e in exits[:4])
    return w, handling, ticks, mix


def check_type2(alone, io):
    """[P3]'s steal that a guest cannot see, on one VM alone on its CPU:
    with sysbench cpu, and with sysbench fileio (I/O-heavy: each request
    a virtio exit to QEMU): the guest's /proc/stat steal stays within a
    tick a run while vmlat's exit handling is at least 1% of the runs,
    and at least 5% with the I/O."""
    for tag, runs, least in (("cpu", alone, 0.01), ("fileio", io, 0.05)):
        w, handling, ticks, mix = type2(runs)
        tap(ticks <= len(runs) and handling >= least * w,
            "type2-steal.%s.the_guest_cannot_see_exit_handling" % tag,
            "guest steal %d ticks (%d ms) in %d runs, vmlat exit handling "
            "%.1f%% of %s ms: %s; %s" % (
                ticks, ticks * 10, len(runs), handling * 100 / w, ms(w),
                mix, PAPERS["type2-steal"]))


def t_colocated():
    """The five phases on one boot of vm-a and vm-b; the contention,
    host-hog, three-way, type-2 steal and accounting checks."""
    qemu, kernel = guest_env()
    tmp = tempfile.mkdtemp(prefix="vmlat_cases.")
    hog, a, b = None, None, None
    try:
        cpio_a, disk_a = subject(tmp, kernel, "a")
        cpio_b = linux_guest_initramfs(tmp + "/b", OTHER_INIT,
                                       progs=["sysbench"])
        a = ConsoleGuest(named(linux_guest_argv(qemu, kernel, cpio_a,
                                                 disk=disk_a), "vm-a"))
        b = ConsoleGuest(named(linux_guest_argv(qemu, kernel, cpio_b), "vm-b"))
        t0 = time.time()
        boot_pin(a, "vm-a")
        boot_pin(b, "vm-b")
        print("# booted in %.0f s" % (time.time() - t0), flush=True)
        # this test on CPU 0 too: its reads must not preempt the guests
        os.sched_setaffinity(0, {0})
        a.say("cal %d" % RUN_S)
        ev = a.expect("ev", 120)
        if not ev or not ev.isdigit() or int(ev) < 1:
            raise RuntimeError("calibration: %r: %s" % (ev, " | ".join(
                a.out[-5:])))
        ev = int(ev)
        wait_ms = int(RUN_S * 1000 * WAIT_FRAC)
        phases = {}
        phases["alone"] = run_phase(a, "alone", ev, wait_ms)
        b.say("go %d %d" % (ev, RUN_S * 1000))
        b.expect("going", 60)
        phases["vm"] = run_phase(a, "vm", ev, wait_ms)
        os.kill(b.q.pid, signal.SIGSTOP)
        wr(tmp + "/burnP6", HOG)
        os.chmod(tmp + "/burnP6", 0o755)
        hog = subprocess.Popen(
            [tmp + "/burnP6"],
            preexec_fn=lambda: os.sched_setaffinity(0, {CPU}))
        phases["hog"] = run_phase(a, "hog", ev, wait_ms)
        os.kill(b.q.pid, signal.SIGCONT)
        # as [P0]'s other VM (compiling): busy throughout
        b.say("go %d 0" % ev)
        b.expect("going 0", 60)
        phases["three"] = run_phase(a, "three", ev, wait_ms)
        b_id = vm_of(rd_json_fast(), b.q.pid)["id"]
        os.kill(b.q.pid, signal.SIGSTOP)
        hog.kill()
        hog.wait()
        hog = None
        a.say("disk")
        if a.expect("disk", 120) != "4":
            raise RuntimeError("no files on the disk: " +
                               " | ".join(a.out[-5:]))
        phases["io"] = run_phase(a, "io", IO_EVENTS, wait_ms)
        a.say("quit")
        a.expect("end", 60)
    finally:
        os.sched_setaffinity(0, set(range(os.cpu_count())))
        if hog:
            hog.kill()
            hog.wait()
        for g in (a, b):
            if g and g.q.poll() is None:
                os.kill(g.q.pid, signal.SIGCONT)
                g.q.kill()
                g.q.wait()
        if a:
            keep("cases_vm_a_console.txt", "\n".join(a.out))
        shutil.rmtree(tmp, ignore_errors=True)
    print("# %d events a run" % ev, flush=True)
    for tag, runs in phases.items():
        print("# " + phase_line(tag, runs), flush=True)
    check_accounting(phases)
    check_contention(phases["alone"], phases["vm"], b_id)
    check_hog(phases["alone"], phases["hog"])
    check_three(phases["three"], b_id)
    check_type2(phases["alone"], phases["io"])


def npf_share(runs):
    """(the runs' time, the share of it in two-dimensional paging faults:
    NPF on AMD, EPT_VIOLATION on Intel, and their count)"""
    w = sum(r["window"] for r in runs)
    ns = count = 0
    for r in runs:
        b = {e["name"]: e for e in r["before"].vm["exits"]}
        for e in r["after"].vm["exits"]:
            if e["name"] in ("NPF", "EPT_VIOLATION"):
                ns += e["total_ns"] - b.get(e["name"], {}).get("total_ns", 0)
                count += e["count"] - b.get(e["name"], {}).get("count", 0)
    return w, ns / w, count


@contextlib.contextmanager
def zram_swap(size):
    """Swap on a zram device of @size bytes in the test host, for the
    time of the block."""
    if subprocess.run(["modprobe", "zram", "num_devices=1"]).returncode:
        raise SkipTest("no zram module")
    try:
        wr("/sys/block/zram0/disksize", str(size))
        subprocess.run(["mkswap", "/dev/zram0"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["swapon", "/dev/zram0"], check=True)
        yield
    finally:
        subprocess.run(["swapoff", "/dev/zram0"])
        subprocess.run(["rmmod", "zram"])


def mem_cgroup():
    """A cgroup v2 group with the memory controller, for vm-m's QEMU;
    its path."""
    if not os.path.exists(CGROUP + "/cgroup.controllers"):
        subprocess.run(["mount", "-t", "cgroup2", "none", CGROUP],
                       check=True)
    if "memory" not in rd(CGROUP + "/cgroup.controllers"):
        raise SkipTest("no memory controller in cgroup v2")
    wr(CGROUP + "/cgroup.subtree_control", "+memory")
    path = CGROUP + "/vmlat-cases-mem"
    if not os.path.isdir(path):
        os.mkdir(path)
    return path


def mem_phases(qemu, kernel, cpio, cg, guests):
    """vm-m's runs free and limited, vm-c's snapshots around the limited
    ones, and vm-m's cgroup's memory.stat; the guests into @guests."""
    m = ConsoleGuest(named(linux_guest_argv(qemu, kernel, cpio), "vm-m"),
                     preexec_fn=lambda: wr(cg + "/cgroup.procs",
                                           str(os.getpid())))
    guests.append(m)
    c = ConsoleGuest(named(linux_guest_argv(qemu, kernel, cpio), "vm-c"))
    guests.append(c)
    boot_pin(m, "vm-m")
    boot_pin(c, "vm-c")
    # vm-c on CPU 0 beside QEMU's other threads: the two guests do not
    # take each other's CPU
    for t in os.listdir("/proc/%d/task" % c.q.pid):
        os.sched_setaffinity(int(t), {0})
    c.say("cal %d" % RUN_S)
    ev = int(c.expect("ev", 120) or 0)
    runs = {}
    # the first touch of the guest's memory: not measured
    run_phase(m, "mem-warm", MEM_TOTAL, 0, n=1)
    runs["free"] = run_phase(m, "mem-free", MEM_TOTAL, 0, n=MEM_RUNS)
    wr(cg + "/memory.max", str(MEM_LIMIT))
    wr(VMLAT + "/reset", "1")
    c.say("run cpu 1000 %d 0" % ev)
    c.expect("s cpu 1", 60)
    vmc = [Snap(c.q.pid)]
    runs["limited"] = run_phase(m, "mem-limited", MEM_TOTAL, 0,
                                n=MEM_RUNS, reset=False)
    vmc.append(Snap(c.q.pid))
    keep("cases_vm_m_console.txt", "\n".join(m.out))
    return runs, vmc, rd(cg + "/memory.stat")


def t_memory():
    """[P4] Table II: a guest writing 128 MiB over and over (sysbench
    memory) spends 10.6 to 17.8% of its time in EPT-violation exits when
    the host overcommits memory, a CPU-only guest about 0. Here: vm-m
    (256 MiB) runs sysbench memory with its QEMU free, then held to
    MEM_LIMIT by a cgroup, with swap on zram; vm-c runs sysbench cpu
    beside it, unlimited. Under the limit vm-m's NPF/EPT_VIOLATION exits
    take at least 5% of its runs, and at least 5 times their share
    without it; vm-c's take under 2%."""
    qemu, kernel = guest_env()
    tmp = tempfile.mkdtemp(prefix="vmlat_cases.")
    cg = mem_cgroup()
    guests = []
    try:
        cpio, _ = subject(tmp, kernel, "m")
        with zram_swap(1 << 30):
            try:
                runs, vmc, swapped = mem_phases(qemu, kernel, cpio, cg,
                                                guests)
            finally:
                # the guests gone and the limit lifted before swapoff
                # brings back what is left in swap
                for g in guests:
                    if g.q.poll() is None:
                        g.q.kill()
                        g.q.wait()
                wr(cg + "/memory.max", "max")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if os.path.isdir(cg):
            os.rmdir(cg)
    keep("cases_mem_cgroup_stat.txt", swapped)
    w0, free, n0 = npf_share(runs["free"])
    w1, limited, n1 = npf_share(runs["limited"])
    wc, cpu_only, nc = npf_share([{"before": vmc[0], "after": vmc[1],
                                   "window": vmc[1].t - vmc[0].t}])
    why = ("vm-m free: %s ms, NPF %.1f%% (%d); under %d MiB: %s ms, NPF "
           "%.1f%% (%d); vm-c: NPF %.2f%% (%d) of %s ms; [P4] Table II "
           "VM1-3 10.6-17.8%%, VM4-5 0%%" % (
               ms(w0 / len(runs["free"])), free * 100, n0, MEM_LIMIT >> 20,
               ms(w1 / len(runs["limited"])), limited * 100, n1,
               cpu_only * 100, nc, ms(wc)))
    tap(limited >= 0.05 and limited >= 5 * free,
        "memory.overcommit_shows_in_npf_exits", why)
    # (kernel-irqchip=off: the guest's LAPIC is QEMU's, and its MMIO
    # exits are NPF exits too: 0.3 to 0.6% of a guest's time seen)
    tap(cpu_only < 0.02, "memory.cpu_only_guest_about_0", why)


# A Linux L1 hypervisor: the guest loads KVM (nested) and runs
# ./scenario idle (its L2 halts; the VMM sleeps 5 ms after each HLT).
NESTED_SECS = 3
# What an L1's /init starts with: the file systems its tools read (KVM's
# and vmlat's debugfs), the console for standard input and output.
L1_PROLOGUE = r"""#!/bin/busybox sh
B=/bin/busybox
$B mkdir -p /proc /dev /sys
$B mount -t devtmpfs dev /dev
$B mount -t proc proc /proc
$B mount -t sysfs sys /sys
$B mount -t debugfs debugfs /sys/kernel/debug
exec >/dev/ttyS0 2>&1 </dev/ttyS0
$B stty -echo
"""
NESTED_INIT = L1_PROLOGUE + r"""%(insmods)s
echo "=== kvm $($B ls /dev/kvm) nested $($B cat /sys/module/%(vendor)s/parameters/nested)"
%(scenario)s idle %(secs)d
echo "=== scenario $?"
read quit
echo "=== end"
$B poweroff -f
"""


def l1_kvm(kernel):
    """What a Linux L1 needs to run KVM on this host's vendor: (VMX?, the
    vendor module's name, its path's tail, the guest kernel's modules to
    load in order, the vCPU model that offers SVM or VMX)."""
    with open("/proc/cpuinfo") as f:
        vmx = " vmx " in f.read()
    vendor = "kvm_intel" if vmx else "kvm_amd"
    ko = "/%s.ko" % vendor.replace("_", "-")
    return (vmx, vendor, ko,
            guest_modules(kernel, "kernel/arch/x86/kvm" + ko),
            "kvm64,+vmx" if vmx else "kvm64,+svm")


def t_nested_wakeup():
    """[P1]: an L2 guest's wake-up latency against an L1 guest's (300 us
    against 73 us), with the L0-L1 bounces between. A Linux L1 (the test
    host's kernel, one vCPU with SVM or VMX) loads KVM and runs
    ./scenario idle as its L2: after each L2 HLT, reflected to L1, L1's
    VMM sleeps 5 ms, L1 halts, and L1's timer wakes it to run L2 again.
    vmlat on the test host (L0) sees both wake-ups of that one vCPU: L1's
    (wakeup_l1) and L2's (wakeup_l2, through L1's whole stack): each
    counted at least 100 times, L2's median at least twice L1's, and at
    least one exit reflected to L1 per L2 wake-up."""
    qemu, kernel = guest_env()
    vmx, vendor, ko, mods, cpu = l1_kvm(kernel)
    scenario = os.path.join(HERE, "scenario")
    tmp = tempfile.mkdtemp(prefix="vmlat_cases.")
    try:
        init = NESTED_INIT % {
            "insmods": insmods(mods, params={ko: "nested=1"}),
            "vendor": vendor, "scenario": scenario, "secs": NESTED_SECS}
        cpio = linux_guest_initramfs(tmp, init, progs=mods + [scenario])
        # One L2 run in about four hung in L1 (its VMM's vCPU thread
        # never came back): booted again, three boots at most.
        for attempt in range(1, 4):
            wr(VMLAT + "/reset", "1")
            g = ConsoleGuest(named(linux_guest_argv(
                qemu, kernel, cpio, cpu=cpu), "vm-l1"))
            said = None
            if g.expect("kvm", BOOT_S) is not None:
                said = g.expect("scenario", 60)
            if said is not None:
                break
            keep("cases_nested_hung%d.txt" % attempt, "\n".join(g.out))
            g.q.kill()
            g.q.wait()
        report("nested")
        g.say("quit")
        g.expect("end", 60)
        g.stop()
        vm = vm_of(rd_json_fast(), g.q.pid)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    keep("cases_nested_console.txt", "\n".join(g.out))
    if not tap(said == "0" and vm is not None, "nested-wakeup.l1_runs_l2",
               "scenario %s, boot %d: %s" % (said, attempt,
                                             " | ".join(g.out[-6:]))):
        return
    h = vm["histograms"]
    l1, l2 = h["wakeup_l1"], h["wakeup_l2"]
    nt = vm["nested"]["totals"]
    why = ("L2 wake-ups %d, median %.0f us; L1 %d, median %.0f us; %d "
           "exits reflected to L1, %d handled by L0; [P1] L2 300 us, L1 "
           "73 us" % (l2["count"], (l2["p50_ns"] or 0) / 1e3, l1["count"],
                      (l1["p50_ns"] or 0) / 1e3, nt["l2_exits_l1"],
                      nt["l2_exits_l0"]))
    tap(l1["count"] >= 100 and l2["count"] >= 100 and
        l2["p50_ns"] >= 2 * l1["p50_ns"],
        "nested-wakeup.l2_wakes_slower_than_l1", why)
    tap(nt["l2_exits_l1"] >= l2["count"],
        "nested-wakeup.bounces_through_l1", why)


# [P1]'s chained clock sync: a Linux L1 loads KVM, vmlat.ko (the host of
# its own L2) and vmlat_guest.ko (clock=mono: L1's CLOCK_MONOTONIC, the
# clock its vmlat stamps L2's calls with), and runs ./sync_guest honest
# as its L2, whose clock is L1's CLOCK_MONOTONIC less CHAIN_OFF_NS.
CHAIN_OFF_NS = 5 * 10**9
CHAIN_INIT = L1_PROLOGUE + r"""%(insmods)s
$B insmod %(vmlat_ko)s max_vms=8 max_vcpus=16 || echo "=== insmod failed vmlat"
$B insmod %(guest_ko)s clock=mono rate_hz=50 || echo "=== insmod failed vmlat_guest"
echo "=== pair0 $(%(sync_guest)s clockpair)"
echo "=== honest $(%(sync_guest)s honest 100 20 %(off)d)"
$B sleep 2
echo "=== pair1 $(%(sync_guest)s clockpair)"
echo "=== json $($B tr -d '\n' </sys/kernel/debug/vmlat/json)"
echo "=== guest $($B tr '\n' ' ' </sys/kernel/debug/vmlat_guest/status)"
read quit
echo "=== end"
$B poweroff -f
"""


def kv(line):
    """{k: int or str} of a "k=v k=v" line."""
    return {k: int(v) if v.lstrip("-").isdigit() else v
            for k, v in (f.split("=", 1) for f in (line or "").split()
                         if "=" in f)}


def synctrace():
    """tools/vmlat-synctrace as a module (its chain_envelope()), from the
    tree vmlat.ko was built in."""
    from importlib.machinery import SourceFileLoader
    path = os.path.join(os.path.dirname(os.environ.get("VMLAT_KO", "")),
                        "tools", "vmlat-synctrace")
    if not os.path.isfile(path):
        raise SkipTest("no %s" % path)
    return SourceFileLoader("vmlat_synctrace", path).load_module()


def clockpair():
    r = subprocess.run([os.path.join(HERE, "sync_guest"), "clockpair"],
                       stdout=subprocess.PIPE, universal_newlines=True,
                       check=True)
    return kv(r.stdout)


# The host's ftrace counts of the L0 exits an L2 sync call costs: the
# L2's hypercall and L1's VM entry that resumes it, by kvm_exit's
# exit_reason; the hypercalls reflected to L1, by the code
# kvm_nested_vmexit_inject gives L1.
NSYNC_INST = TRACING + "/instances/vmlat_cases_nested_sync"
NSYNC_HIST = (("kvm/kvm_exit", "exit_reason"),
              ("kvm/kvm_nested_vmexit_inject", "exit_code"))
NSYNC_CODES = {"svm": (0x81, (0x80,)), "vmx": (18, (20, 24))}
HIST_COUNT = re.compile(r"\{ \w+:\s*(\d+) \} hitcount:\s*(\d+)")


@contextlib.contextmanager
def hist_triggers(inst, specs):
    """A hist trigger counting hits by key for each (event, key) of
    @specs, on a fresh tracing instance at @inst; removed at the end."""
    trig = ["%s/events/%s/trigger" % (inst, ev) for ev, _ in specs]
    spec = ["hist:keys=%s:vals=hitcount:size=256" % k for _, k in specs]
    with tracing_instance(inst, (), 64):
        for t, sp in zip(trig, spec):
            wr(t, sp)
        try:
            yield
        finally:
            for t, sp in zip(trig, spec):
                wr(t, "!" + sp)


def nsync_counts():
    """{event: {code: hits}} of the NSYNC_HIST triggers."""
    return {ev: {int(c): int(n) for c, n in HIST_COUNT.findall(
        rd("%s/events/%s/hist" % (NSYNC_INST, ev)))}
        for ev, _ in NSYNC_HIST}


def l0_sync_apart(isa, vm, inner, l1vm, hist):
    """The host counts the L2's sync calls apart from L1's exits (issue
    20): as many as L1's vmlat took from its L2 at CPL 0; with the L2
    hypercalls it reflected otherwise, every one kvm_nested_vmexit_inject
    gave L1; and the host's exit counts of the L1 VM leave out the two
    exits of each (ftrace's kvm_exit count less them)."""
    hc, enters = NSYNC_CODES[isa]
    t = vm["nested"]["totals"]
    calls = t.get("l2_sync_calls", 0)
    refl = sum(e["reflected_to_l1"] for e in vm["nested"]["exits"]
               if e["isa"] == isa and e["code"] == hc)
    l1_hc = sum(e["count"] for e in l1vm.get("exits", [])
                if e["isa"] == isa and e["code"] == hc)
    inj = hist["kvm/kvm_nested_vmexit_inject"].get(hc, 0)
    tap(calls >= 100 and calls == inner["exits"] and refl == l1_hc and
        calls + refl == inj,
        "nested-sync.host_counts_l2_sync_calls_apart",
        "host: %d L2 sync calls (%d ns each), %d other L2 hypercalls "
        "reflected; L1's vmlat: %d sync exits, %d other hypercall exits of "
        "its L2; ftrace: %d hypercalls injected into L1" % (
            calls, t.get("l2_sync_ns", 0) // max(calls, 1), refl,
            inner["exits"], l1_hc, inj))
    ex = {e["code"]: e["count"] for e in vm["exits"] if e["isa"] == isa}
    fx = hist["kvm/kvm_exit"]
    # L1's own sync calls are kept apart too (vm["sync"]["exits"]).
    want_hc = fx.get(hc, 0) - calls - vm["sync"]["exits"]
    want_enter = sum(fx.get(c, 0) for c in enters) - calls
    got_enter = sum(ex.get(c, 0) for c in enters)
    tap(ex.get(hc, 0) == want_hc and got_enter == want_enter,
        "nested-sync.l1_exit_counts_leave_them_out",
        "host's exits of L1: hypercall %d, VM entries %d; ftrace's kvm_exit "
        "less the sync exits: %d, %d" % (ex.get(hc, 0), got_enter, want_hc,
                                         want_enter))


def t_nested_sync():
    """[P1]'s chained clock sync (issue 20's test): L2's clock mapped to
    L1's by the vmlat.ko loaded in L1, L1's to the host's by the host's
    vmlat from vmlat_guest.ko's calls in L1; tools/vmlat-synctrace chains
    the two. The truth at the inner mapping's guest time g: L1's
    CLOCK_MONOTONIC is g + CHAIN_OFF_NS (sync_guest's clock), L1's TSC by
    two pairs of L1's clocks read together (sync_guest clockpair in L1),
    the host's TSC by KVM's tsc-offset of L1's vCPU, the host's
    CLOCK_MONOTONIC by two pairs read on the host. It lies within the
    chained bound, widened by the pairs' own read skews. And the host
    counts the L2's sync calls apart from L1's exits (l0_sync_apart())."""
    qemu, kernel = guest_env()
    ko, gko = os.environ.get("VMLAT_KO", ""), os.environ.get(
        "VMLAT_GUEST_KO", "")
    if not (os.path.isfile(ko) and os.path.isfile(gko)):
        raise SkipTest("needs $VMLAT_KO and $VMLAT_GUEST_KO")
    st = synctrace()
    vmx, vendor, kvm_ko, mods, cpu = l1_kvm(kernel)
    sg = os.path.join(HERE, "sync_guest")
    tmp = tempfile.mkdtemp(prefix="vmlat_cases.")
    g = None
    t0 = time.time()
    stack = contextlib.ExitStack()
    try:
        init = CHAIN_INIT % {
            "insmods": insmods(mods, params={kvm_ko: "nested=1"}),
            "vmlat_ko": ko, "guest_ko": gko, "sync_guest": sg,
            "off": CHAIN_OFF_NS}
        cpio = linux_guest_initramfs(tmp, init,
                                     progs=mods + [ko, gko, sg])
        stack.enter_context(hist_triggers(NSYNC_INST, NSYNC_HIST))
        wr(VMLAT + "/reset", "1")
        p0 = clockpair()
        g = ConsoleGuest(named(linux_guest_argv(qemu, kernel, cpio, cpu=cpu),
                               "vm-l1"))
        pair1 = g.expect("pair1", BOOT_S + 120)
        l1js = g.expect("json", 60)
        g.expect("guest", 60)   # L1 has read all it will, and waits
        # Stopped, L1 makes no exit between the host's two counts.
        os.kill(g.q.pid, signal.SIGSTOP)
        try:
            vm = vm_of(rd_json_fast(), g.q.pid)
            hist = nsync_counts()
            keep("cases_nested_sync_host_nested.txt", rd(VMLAT + "/nested"))
            rep = report("nested_sync")
        finally:
            os.kill(g.q.pid, signal.SIGCONT)
        offs = [int(rd(f)) for f in glob.glob(
            "/sys/kernel/debug/kvm/%d-*/vcpu*/tsc-offset" % g.q.pid)]
        p1 = clockpair()
        g.say("quit")
        g.expect("end", 60)
        g.stop()
    finally:
        if g and g.q.poll() is None:
            g.q.kill()
            g.q.wait()
        shutil.rmtree(tmp, ignore_errors=True)
        stack.close()
    secs = time.time() - t0
    out = "\n".join(g.out)
    keep("cases_nested_sync_console.txt", out)
    pair0 = kv(out.split("=== pair0", 1)[1].splitlines()[0]
               if "=== pair0" in out else "")
    honest = kv(out.split("=== honest", 1)[1].splitlines()[0]
                if "=== honest" in out else "")
    inner = l1vm = None
    try:
        l2 = [v for v in json.loads(l1js or "{}").get("vms", [])
              if v.get("sync")]
        l1vm = l2[0] if l2 else None
        inner = l1vm["sync"] if l2 else None
    except ValueError:
        pass
    outer = vm["sync"] if vm else None
    if not tap(bool(pair1 and inner and outer and
                    inner.get("state") == "ok" and
                    outer.get("state") == "ok" and len(set(offs)) == 1),
               "nested-sync.both_levels_mapped",
               "L2 -> L1 %s; L1 -> L0 %s; tsc-offsets %s; sync_guest %s; "
               "%s" % (inner, outer, offs, honest,
                       " | ".join(g.out[-4:]))):
        return
    tap(inner["exchanges"] == honest.get("exchanges"),
        "nested-sync.l1_vmlat_took_every_l2_exchange",
        "L1's vmlat %d, sync_guest %s" % (inner["exchanges"],
                                          honest.get("exchanges")))
    l0_sync_apart("vmx" if vmx else "svm", vm, inner, l1vm, hist)
    if rep is not None:
        said = re.search(r"L2 made (\d+) clock-sync calls to L1", rep)
        tap(said and int(said.group(1)) == inner["exits"],
            "nested-sync.report_says_the_l2_sync_calls",
            "vmlat report: %r; L1's vmlat: %d" % (
                said and said.group(0), inner["exits"]))
    pair1 = kv(pair1)
    gt = inner["at_guest_ns"]
    l1_mono = gt + CHAIN_OFF_NS
    # L1's CLOCK_MONOTONIC -> L1's TSC -> host TSC -> host CLOCK_MONOTONIC
    l1_tsc = pair0["tsc"] + (l1_mono - pair0["mono_ns"]) * (
        pair1["tsc"] - pair0["tsc"]) // (pair1["mono_ns"] - pair0["mono_ns"])
    host_tsc = l1_tsc - offs[0]
    true_host = p0["mono_ns"] + (host_tsc - p0["tsc"]) * (
        p1["mono_ns"] - p0["mono_ns"]) // (p1["tsc"] - p0["tsc"])
    eps = (pair0["skew_ns"] + pair1["skew_ns"] + p0["skew_ns"] +
           p1["skew_ns"] + 1000)
    lo, mid, hi = st.chain_envelope([inner, outer], gt)
    tap(lo - eps <= true_host <= hi + eps,
        "nested-sync.truth_within_the_chained_bound",
        "L2 %d -> host %d in [%+d, %+d] ns around it, true %+d (+-%d "
        "read skew); L2 -> L1 bound %d ns, L1 -> L0 %d ns; %.0f s" % (
            gt, mid, lo - mid, hi - mid, true_host - mid, eps,
            inner["bound_ns"], outer["bound_ns"], secs))


if __name__ == "__main__":
    main([t_colocated, t_memory, t_nested_wakeup, t_nested_sync])
