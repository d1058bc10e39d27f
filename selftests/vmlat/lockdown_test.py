#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""lockdown_test.py - vmlat's knobs as module parameters, and vmlat under
the kernel's lockdown (integrity).

Debugfs under lockdown serves only files that nobody may write (mode
within 0444): vmlat's statistics stay readable, its 0600 knobs are
refused, and the module parameters in /sys/module/vmlat/parameters/ set
the knobs instead.

  load-args:   modprobe-style arguments at load: the knobs read what was
               given (in sysfs and in debugfs, the same knobs); a bad one
               (a knob's, or a table size: max_vms, max_vcpus) makes the
               load fail with EINVAL and its message.
  params:      every parameter refuses bad values with EINVAL and a
               message, unchanged, and takes a good one, which the debugfs
               file of the same name then reads; reset=1 forgets the
               reports (their count goes to 0).
  unload-race: parameters written in a loop while vmlat is loaded and
               unloaded UNLOAD_RACE_CYCLES times (6; 20 from
               $VMLAT_UNLOAD_RACE_CYCLES in make soak): each write succeeds
               or finds no parameter (ENOENT) or a module going away
               (ENODEV), and the host stays up (no splat: selftests/run
               scans the log).
  layout:      the status file's layout line: every member of kvm's and
               (AMD) kvm_amd's layouts that vmlat reads confirmed from
               BTF, nothing refused, no "members differ" in the kernel
               log; kvm_amd reloaded under vmlat is confirmed again (its
               module notifier), "unchecked" while it is out. On 5.10,
               whose modules have no BTF: each module "unconfirmed",
               naming its missing BTF, loaded before vmlat or after.
  layout-skew: (AMD, not 5.10) $VMLAT_KO_TEST, selftests/run's test build
               (make VMLAT_TEST_BUILD=1), loaded instead with
               test_case=layout-skew, expecting the VMCB's exit code 8
               bytes from where it is: one kernel log line
               names vmcb.control.exit_code, the build's offset and BTF's,
               and what is refused (svm_exit); the status line says the
               same; kvm_exit still attaches, and a VM's exits are all
               counted undecoded, none read from the wrong offset. Then
               the stock vmlat again, confirmed.
  no-mod-btf:  (not on 5.10, which has no module BTF and confirms kvm's
               hooks by their arity) the test build with
               test_case=no-mod-btf, which takes the kernel for one built
               without module BTF: the
               load fails with EOPNOTSUPP and one kernel log line saying
               what is missing, and the kernel no longer lists the module
               (/proc/modules): nothing of it stays. Then the stock vmlat
               again.
  kvm-no-btf:  (AMD, not 5.10) the test build with test_case=kvm-no-btf,
               which finds no BTF for module kvm (as when the kernel
               drops a module's BTF that does not match vmlinux's), with
               kvm loaded: the
               load fails the same way, its one line naming module kvm's
               missing BTF. With kvm loaded after it: vmlat loads, every
               hook of kvm stays detached with that reason in the status
               file, the built-in ones (scheduler, timer) attach, and one
               line says so. Then
               kvm_amd and the stock vmlat again.
  lockdown:    the kernel's lockdown raised to integrity at run time (as
               Secure Boot does at boot; it cannot be lowered again, so
               this case comes last and guest-job.sh runs this test last);
               the lockdown file then says [integrity].
  lockdown-debugfs: each knob file in debugfs is refused (EPERM, and the
               kernel's "debugfs access is restricted"), each statistics
               file reads.
  lockdown-params: the parameters still refuse bad values and take good
               ones.
  lockdown-reports: threshold_exit_us=1, snapshot=event and an interval of
               1 ms set by parameter: ./scenario exits makes reports, and
               ftrace (an instance with vmlat:vmlat_threshold on) records
               exactly as many events as the reports file counts snapshots.
  lockdown-unsigned: on a kernel that checks module signatures, an unsigned
               vmlat is then refused with EPERM and the kernel's "unsigned
               module loading is restricted" (the test's vmlat is
               unsigned; signed modules are the way in, see
               Documentation/vmlat.rst).

Needs root, KVM, $VMLAT_KO; run from the directory holding scenario.
TAP output; exit status 4 when everything was skipped.
"""
import errno
import os
import re
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vmlat_ktest import (KNOB_BAD, KNOB_MESSAGE, LOCKDOWN,  # noqa: E402
                         TRACING, VMLAT, SkipTest, check_knobs, dmesg,
                         insmod, keep, knobs_default, lockdown_level, main,
                         raw_write, rd, reports, reports_settled, rmmod,
                         scenario, tap, wr)

PARAMS = "/sys/module/vmlat/parameters"
# Every cycle's unload passes the window where a write could touch freed
# tables (reset, each sixth write): with knobs.c's KNOBS_GONE check taken
# out, KASAN reported the write in the first cycle on the debug kernel.
UNLOAD_RACE_CYCLES = int(os.environ.get("VMLAT_UNLOAD_RACE_CYCLES", "6"))
INST = TRACING + "/instances/vmlat_lockdown_test"
KO = os.environ.get("VMLAT_KO", "")
# selftests/run's test build (vmlat/test_build.h): its test_case refuses
KO_TEST = os.environ.get("VMLAT_KO_TEST", "")

# ---- parameters -------------------------------------------------------------

def test_load_args():
    if rmmod():
        raise RuntimeError("rmmod vmlat failed")
    try:
        dmesg(clear=True)
        rc, err = insmod(KO, "threshold_exit_us=7", "snapshot=event",
                         "snapshot_interval_ms=250")
        # A build that measures says only that it loaded: no warning of
        # tools/bench's floor build, whose probes measure nothing.
        log = dmesg()
        tap(rc == 0 and "vmlat: version " in log and "floor" not in log,
            "load-args.log_says_loaded",
            "kernel log: %r" % log.strip()[-300:])
        got = {k: rd(PARAMS + "/" + k).strip() if rc == 0 else None
               for k in ("threshold_exit_us", "snapshot",
                         "snapshot_interval_ms", "threshold_wait_us")}
        dbg = {k: rd(VMLAT + "/" + k).strip() if rc == 0 else None
               for k in got}
        want = {"threshold_exit_us": "7", "snapshot": "event",
                "snapshot_interval_ms": "250", "threshold_wait_us": "0"}
        if rc == 0:
            keep("lockdown_test_parameters.txt", subprocess.run(
                "grep . %s/*" % PARAMS, shell=True, stdout=subprocess.PIPE,
                universal_newlines=True).stdout)
        tap(rc == 0 and got == want and dbg == want, "load-args.given",
            "insmod %d %s; parameters %s; debugfs %s" % (rc, err, got, dbg))
        bad = {}
        # the table sizes are load-time parameters only (records.c)
        sizes = {"max_vms": "max_vms: write a number from 1 to",
                 "max_vcpus": "max_vcpus: write a number from 1 to"}
        for knob, value in (("threshold_exit_us", "abc"),
                            ("snapshot", "bogus"),
                            ("snapshot_interval_ms", "0"),
                            ("max_vms", "0"),
                            ("max_vcpus", "65537")):
            arg = "%s=%s" % (knob, value)
            msg = KNOB_MESSAGE.get(knob) or sizes[knob]
            rmmod()
            dmesg(clear=True)
            rc2, err2 = insmod(KO, arg)
            log = dmesg()
            bad[arg] = (rc2, os.path.isdir("/sys/module/vmlat"),
                        msg in log, err2[-80:])
        tap(all(rc2 != 0 and not loaded and said
                for rc2, loaded, said, _ in bad.values()),
            "load-args.bad_refused",
            "; ".join("%s: insmod %d, loaded %s, message %s (%s)" %
                      ((a,) + v) for a, v in bad.items()))
    finally:
        if not os.path.isdir("/sys/module/vmlat"):
            insmod(KO)
    knobs_default(PARAMS)


def test_params():
    knobs_default(PARAMS)
    check_knobs("params", PARAMS, KNOB_BAD, twin=VMLAT)
    knobs_default(PARAMS)
    wr(PARAMS + "/threshold_exit_us", "1")
    scenario("exits", "2")
    wr(PARAMS + "/threshold_exit_us", "0")
    (n_before, _, _), _ = reports()
    e = raw_write(PARAMS + "/reset", "1")
    (n_after, _, _), _ = reports()
    tap(n_before > 0 and e == 0 and n_after == 0, "params.reset",
        "%d reports, reset errno %d, then %d" % (n_before, e, n_after))
    knobs_default(PARAMS)


def test_unload_race():
    stop = threading.Event()
    errs = {}
    writes = [0]

    def writer():
        vals = [("reset", "1"), ("threshold_exit_us", "3"),
                ("threshold_exit_us", "0"), ("snapshot", "freeze"),
                ("snapshot", "swap"), ("snapshot_interval_ms", "5")]
        i = 0
        while not stop.is_set():
            k, v = vals[i % len(vals)]
            i += 1
            e = raw_write(PARAMS + "/" + k, v)
            writes[0] += e == 0
            errs[e] = errs.get(e, 0) + 1

    t = threading.Thread(target=writer)
    t.start()
    cycles = 0
    try:
        for _ in range(UNLOAD_RACE_CYCLES):
            if rmmod() or insmod(KO)[0]:
                break
            cycles += 1
    finally:
        stop.set()
        t.join()
        if not os.path.isdir("/sys/module/vmlat"):
            insmod(KO)
    wrong = {e: n for e, n in errs.items()
             if e not in (0, errno.ENOENT, errno.ENODEV)}
    tap(cycles == UNLOAD_RACE_CYCLES and writes[0] > 0 and not wrong,
        "unload-race", "%d of %d unload/load cycles; %d writes taken; "
        "errnos %s" % (cycles, UNLOAD_RACE_CYCLES, writes[0],
                       dict(sorted(errs.items()))))
    knobs_default(PARAMS)


# ---- layouts -----------------------------------------------------------------

LAYOUT = re.compile(r"^# layout: kvm (\S+) (\d+)/(\d+) kvm_amd (\S+) (\d+)/(\d+) "
                    r"refused ([^\s;]+)(.*)$", re.M)
DIFFER = "members differ from this build's headers"


def amd():
    with open("/proc/cpuinfo") as f:
        return " svm " in f.read()


def layout_line():
    """The status file's layout line, as a match of LAYOUT."""
    m = LAYOUT.search(rd(VMLAT + "/status"))
    if not m:
        raise RuntimeError("no layout line in the status file")
    return m


def confirmed(m, first):
    """Whether LAYOUT's match @m says its module from group @first on is
    confirmed, all its members."""
    return (m.group(first) == "confirmed" and int(m.group(first + 1)) > 0 and
            m.group(first + 1) == m.group(first + 2))


def linux_5_10():
    return os.uname().release.startswith("5.10.")


def from_btf(m, first, mod):
    """Whether LAYOUT's match @m says module @mod (from group @first on)
    is confirmed, all its members; on 5.10, whose modules have no BTF,
    that none is, for that reason."""
    if not linux_5_10():
        return confirmed(m, first)
    return (m.group(first) == "unconfirmed" and m.group(first + 1) == "0" and
            "%s: no BTF for module %s (-2)" % (mod, mod) in m.group(8))


def test_layout():
    m = layout_line()
    lines = [m.group(0)]
    ok = from_btf(m, 1, "kvm") and m.group(7) == "none"
    ok &= linux_5_10() or not m.group(8)
    ok &= from_btf(m, 4, "kvm_amd") if amd() else m.group(4) == "unchecked"
    if amd():
        # kvm_amd out and back while vmlat is loaded: its notifier.
        if subprocess.run(["rmmod", "kvm_amd"]).returncode:
            raise RuntimeError("rmmod kvm_amd failed")
        out = layout_line()
        if subprocess.run(["modprobe", "kvm_amd", "nested=1"]).returncode:
            raise RuntimeError("modprobe kvm_amd nested=1 failed")
        back = layout_line()
        lines += [out.group(0), back.group(0)]
        ok &= out.group(4) == "unchecked" and from_btf(back, 4, "kvm_amd")
        ok &= back.group(7) == "none"
    log = [ln for ln in dmesg().splitlines() if DIFFER in ln]
    keep("lockdown_test_layout.txt", "\n".join(lines + log) + "\n")
    tap(ok and not log, "layout", "; ".join(lines + log))


def test_layout_skew():
    if linux_5_10():
        raise SkipTest("Linux 5.10: kvm_amd has no BTF to check a layout "
                       "against (the layout test checks that it says so)")
    if not amd():
        raise SkipTest("kvm_intel: no struct of kvm_amd's to skew")
    if not KO_TEST:
        raise SkipTest("no $VMLAT_KO_TEST (selftests/run builds it)")
    if rmmod():
        raise RuntimeError("rmmod vmlat failed")
    dmesg(clear=True)
    try:
        rc, err = insmod(KO_TEST, "test_case=layout-skew")
        if rc:
            raise RuntimeError("insmod %s: %s" % (KO_TEST, err))
        m = layout_line()
        scenario("exits", "2")
        status = rd(VMLAT + "/status")
        exits = rd(VMLAT + "/exits")
        log = dmesg()
    finally:
        rmmod()
        rc, err = insmod(KO)
    if rc:
        raise RuntimeError("insmod %s: %s" % (KO, err))
    again = layout_line()
    keep("lockdown_test_layout_skew.txt",
         "%s\n%s\n%s\n%s" % (log, status, exits, again.group(0)))

    # One line, the build's offset 8 bytes past BTF's.
    said = [ln for ln in log.splitlines() if DIFFER in ln]
    w = re.search(r"vmlat: kvm_amd: 1 of (\d+) " + re.escape(DIFFER) +
                  r" \(first vmcb\.control\.exit_code: offset (\d+) "
                  r"size (\d+), BTF offset (\d+) size \3\): refused "
                  r"svm_exit: SVM exit reasons undecoded$",
                  said[0] if said else "")
    ok = len(said) == 1 and w and int(w.group(2)) == int(w.group(4)) + 8
    # The status line: kvm confirmed, kvm_amd all but one, the same why.
    ok = ok and confirmed(m, 1) and m.group(4) == "differ"
    ok = ok and int(m.group(5)) == int(m.group(6)) - 1
    ok = ok and m.group(7) == "svm_exit"
    ok = ok and m.group(8) == "; kvm_amd: vmcb.control.exit_code: offset " \
        "%s size %s, BTF offset %s size %s" % (w.group(2), w.group(3),
                                               w.group(4), w.group(3))
    # kvm_exit attached; every exit undecoded.
    attached = re.search(r"^kvm:kvm_exit\s+attached\s+(\d+)", status, re.M)
    decoded = undecoded = 0
    for ln in exits.splitlines():
        f = ln.split()
        if len(f) < 5 or ln.startswith("#"):
            continue
        if f[3] == "undecoded":
            undecoded += int(f[4])
        else:
            decoded += int(f[4])
    ok = ok and attached and int(attached.group(1)) > 0
    ok = ok and undecoded > 0 and decoded == 0
    ok = ok and confirmed(again, 4) and again.group(7) == "none"
    # the stock build has no test_case
    stock_param = os.path.exists(PARAMS + "/test_case")
    ok = ok and not stock_param
    tap(bool(ok), "layout-skew",
        "log %r; status %r; kvm_exit %s; exits decoded %d undecoded %d; "
        "stock vmlat again: %r, its test_case %s" % (said, m.group(0),
                                   attached.group(0) if attached else None,
                                   decoded, undecoded, again.group(0),
                                   stock_param))


# ---- kernels whose kvm hooks cannot be confirmed ---------------------------

NO_MOD_BTF = ("vmlat: kvm's tracepoints cannot be confirmed: this kernel has "
              "no module BTF (CONFIG_DEBUG_INFO_BTF_MODULES is not set) and "
              "is not Linux 5.10; vmlat does not load")
KVM_NO_BTF = ("vmlat: kvm's tracepoints cannot be confirmed: no BTF for "
              "module kvm (-2); vmlat does not load (the kernel drops a "
              "module's BTF that does not match vmlinux's: see its log)")
KVM_NO_BTF_LATER = ("vmlat: cannot confirm the prototypes of module kvm's "
                    "tracepoints (no BTF for module kvm (-2)): its hooks stay "
                    "detached until it loads with its BTF")
def vmlat_lines(log):
    return [ln[ln.index("vmlat: "):] for ln in log.splitlines()
            if "vmlat: " in ln]


def refused_load(case):
    """Load the test build with test_case=@case, which must refuse:
    (insmod's status and error, vmlat's kernel log lines, whether the
    kernel still lists it)."""
    dmesg(clear=True)
    rc, err = insmod(KO_TEST, "test_case=" + case)
    lines = vmlat_lines(dmesg())
    with open("/proc/modules") as f:
        listed = any(ln.split()[0] == "vmlat" for ln in f)
    return rc, err, lines, listed


def refused_ok(got, line):
    rc, err, lines, listed = got
    return (rc != 0 and err.endswith("Operation not supported") and
            lines == [line] and not listed)


def stock_again():
    if os.path.isdir("/sys/module/vmlat"):
        rmmod()
    rc, err = insmod(KO)
    if rc:
        raise RuntimeError("insmod %s: %s" % (KO, err))


def test_no_mod_btf():
    if linux_5_10():
        raise SkipTest("Linux 5.10: kvm's hooks confirmed by their arity")
    if not KO_TEST:
        raise SkipTest("no $VMLAT_KO_TEST (selftests/run builds it)")
    if rmmod():
        raise RuntimeError("rmmod vmlat failed")
    try:
        got = refused_load("no-mod-btf")
    finally:
        stock_again()
    keep("lockdown_test_no_mod_btf.txt", "%r\n" % (got,))
    tap(refused_ok(got, NO_MOD_BTF), "no-mod-btf",
        "insmod %d %r; log %r; in /proc/modules %s" % got)


def kvm_modules(load):
    cmd = (["modprobe", "kvm_amd", "nested=1"] if load else
           ["modprobe", "-r", "kvm_amd", "kvm"])
    if subprocess.run(cmd).returncode:
        raise RuntimeError(" ".join(cmd) + " failed")


def test_kvm_no_btf():
    if linux_5_10():
        raise SkipTest("Linux 5.10: kvm's hooks confirmed by their arity")
    if not amd():
        raise SkipTest("kvm_intel: the test reloads kvm_amd")
    if not KO_TEST:
        raise SkipTest("no $VMLAT_KO_TEST (selftests/run builds it)")
    if rmmod():
        raise RuntimeError("rmmod vmlat failed")
    status = ""
    try:
        loaded = refused_load("kvm-no-btf")
        kvm_modules(False)
        try:
            dmesg(clear=True)
            rc, err = insmod(KO_TEST, "test_case=kvm-no-btf")
        finally:
            kvm_modules(True)
        log = vmlat_lines(dmesg())
        if rc == 0:
            status = rd(VMLAT + "/status")
    finally:
        stock_again()
    keep("lockdown_test_kvm_no_btf.txt", "%r\n%r\n%s" % (loaded, log, status))
    hooks = re.findall(r"^(\w+):(\S+)\s+(attached|detached)"
                       r"\s+\d+\s+(.*)$", status, re.M)
    kvm = [h for h in hooks if h[0] in ("kvm", "kvmmmu")]
    builtin = [h for h in hooks if h[0] not in ("kvm", "kvmmmu")]
    why = "cannot confirm prototype: no BTF for module kvm (-2)"
    later = (rc == 0 and KVM_NO_BTF_LATER in log and
             len(kvm) >= 7 and all(h[2] == "detached" and h[3] == why
                                   for h in kvm) and
             len(builtin) >= 6 and all(h[2] == "attached" for h in builtin))
    tap(refused_ok(loaded, KVM_NO_BTF) and later, "kvm-no-btf",
        "kvm loaded: insmod %d %r, log %r, in /proc/modules %s; "
        "kvm loaded after: insmod %d, log %r, hooks %r" %
        (loaded + (rc, log, hooks)))


# ---- lockdown ---------------------------------------------------------------

def need_lockdown():
    if lockdown_level() != "integrity":
        raise SkipTest("the kernel is not locked down (see the lockdown case)")


def test_lockdown():
    level = lockdown_level()
    if level is None:
        raise SkipTest("no %s (kernel without the lockdown LSM)" % LOCKDOWN)
    if level == "none":
        wr(LOCKDOWN, "integrity")
    level = lockdown_level()
    tap(level == "integrity", "lockdown", "%s reads %r" %
        (LOCKDOWN, rd(LOCKDOWN).strip()))


def test_lockdown_debugfs():
    need_lockdown()
    knobs, stats = [], []
    for name in sorted(os.listdir(VMLAT)):
        mode = os.stat(os.path.join(VMLAT, name)).st_mode & 0o7777
        (knobs if mode & ~0o444 else stats).append(name)
    dmesg(clear=True)
    refused = {k: raw_write(os.path.join(VMLAT, k), "0") for k in knobs}
    log = dmesg()
    tap(len(knobs) >= 6 and all(e == errno.EPERM for e in refused.values())
        and "debugfs access is restricted" in log,
        "lockdown-debugfs.knobs_refused",
        "errnos %s; kernel log: %r" % (refused, log.strip()[-160:]))
    failed = {}
    for s in stats:
        try:
            if not rd(os.path.join(VMLAT, s)):
                failed[s] = "empty"
        except OSError as e:
            failed[s] = errno.errorcode.get(e.errno, e.errno)
    tap(len(stats) >= 10 and not failed, "lockdown-debugfs.stats_readable",
        "%d files; failed: %s" % (len(stats), failed))


def test_lockdown_params():
    need_lockdown()
    knobs_default(PARAMS)
    check_knobs("lockdown-params", PARAMS, KNOB_BAD)
    knobs_default(PARAMS)


def test_lockdown_reports():
    need_lockdown()
    knobs_default(PARAMS)
    if os.path.isdir(INST):
        os.rmdir(INST)
    os.mkdir(INST)
    try:
        wr(INST + "/events/vmlat/vmlat_threshold/enable", "1")
        wr(PARAMS + "/snapshot", "event")
        wr(PARAMS + "/snapshot_interval_ms", "1")
        wr(PARAMS + "/threshold_exit_us", "1")
        scenario("exits", "2")
        wr(PARAMS + "/threshold_exit_us", "0")
        # Every report's snapshot decided (no snapshot work pending),
        # then the trace: the counts and the trace alike, however late a
        # loaded test host runs the work.
        (n, taken, _), _ = reports_settled()
        trace = rd(INST + "/trace")
        text = rd(VMLAT + "/reports")
    finally:
        wr(INST + "/events/vmlat/vmlat_threshold/enable", "0")
        os.rmdir(INST)
        knobs_default(PARAMS)
    keep("lockdown_test_reports.txt", text)
    events = trace.count("vmlat_threshold:")
    tap(n > 0 and taken > 0 and events == taken, "lockdown-reports",
        "%d reports, %d snapshots (events) taken; ftrace recorded %d "
        "vmlat_threshold events" % (n, taken, events))


def test_lockdown_unsigned():
    need_lockdown()
    if not os.path.exists("/sys/module/module/parameters/sig_enforce"):
        raise SkipTest("this kernel does not check module signatures")
    if rmmod():
        raise RuntimeError("rmmod vmlat failed under lockdown")
    dmesg(clear=True)
    rc, err = insmod(KO)
    log = dmesg()
    loaded = os.path.isdir("/sys/module/vmlat")
    tap(rc != 0 and not loaded and
        "unsigned module loading is restricted" in log,
        "lockdown-unsigned", "insmod %d (%s), loaded %s; kernel log: %r" %
        (rc, err[-80:], loaded, log.strip()[-160:]))


if __name__ == "__main__":
    main([test_load_args, test_params, test_unload_race, test_layout,
          test_layout_skew, test_no_mod_btf, test_kvm_no_btf, test_lockdown,
          test_lockdown_debugfs, test_lockdown_params, test_lockdown_reports,
          test_lockdown_unsigned])
