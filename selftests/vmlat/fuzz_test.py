#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fuzz_test.py - vmlat against hostile input and churn.

Meant for the debug kernel (KASAN, lockdep, kmemleak), where selftests/run
fails the kernel on any splat or leak; it runs on the stock kernels too.

  knobs       every writable file under /sys/kernel/debug/vmlat gets its
              edge cases (boundaries, signs, overflow, whitespace, NUL,
              long strings) and KNOB_INPUTS random byte strings. A write
              either succeeds or fails with EINVAL; a refused write leaves
              what every knob reads unchanged; an accepted one leaves a
              value the file's own grammar allows. Reading every file
              after each accepted write, and after each file's inputs,
              succeeds.
  hypercalls  hostile guests (./sync_guest flood) make calls with wrong
              headers, seq 0, replayed and skipped numbers, garbage times
              and random 64-bit registers (3 in 8 calls; one in 3 of
              those with another hypercall number) while an honest one
              syncs, and another honest one's ring 3 makes 50 hostile
              calls between two of its own, every fourth all random
              (./sync_guest user): both mappings are intact (all 40
              exchanges taken, nothing counted against them but the
              ring-3 calls, in "user"). The hostile guests' steal calls
              for random pages (guest_steal on) are each answered,
              refused as malformed or limited, and counted. The seeds
              are printed.
  concurrent  for CONC_SECONDS: knob writers, readers of every file (the
              JSON document must parse), guests making exits and hostile
              hypercalls, and vmlat unloaded and loaded again in a loop
              (for longer if it took fewer than 3 reloads, as long as
              each reload makes progress).
              No process fails but for files that vanish with the module,
              vmlat is unloaded and reloaded at least 3 times, the guests
              finish.
  load-churn  vmlat unloaded and loaded LOAD_CHURN times while VMs are
              made and destroyed in threads that live on (a load between
              a guest's entry and its exit): every load succeeds, the
              guests go on, the kernel reports nothing (KASAN on the
              debug kernel).
  kvm-reload  kvm_amd unloaded and loaded KVM_RELOADS times with vmlat
              loaded and readers running: every kvm hook is attached
              again each time and counts a new guest's exits.

Prints the number of inputs of each kind. Needs root, kvm_amd, $VMLAT_KO;
run from the directory holding tiny_guest and sync_guest. TAP output;
exit status 4 when everything was skipped.
"""
import errno
import json
import os
import random
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vmlat_ktest import (VMLAT, dmesg, insmod, json_strict,  # noqa: E402
                         keep, kernel_reports, load, main, rd, rd_json,
                         rmmod, tap, wr)

SEED = int(os.environ.get("VMLAT_FUZZ_SEED", "20261124"))
KNOB_INPUTS = int(os.environ.get("VMLAT_FUZZ_INPUTS", "400"))
CONC_SECONDS = int(os.environ.get("VMLAT_FUZZ_SECONDS", "20"))
KVM_RELOADS = 2
# concurrent: one unload and load of vmlat that takes longer has hung (a
# liveness limit, not a timing check: a slow reload only makes the case
# longer).
RELOAD_STALL_S = 120
U64 = 2**64

# The knobs' grammar: what an accepted write may leave the file reading.
THRESHOLD_MAX = 10 * 10**6          # VMLAT_THRESHOLD_MAX_US
INTERVAL_MAX = 3600 * 1000          # VMLAT_INTERVAL_MAX_MS
SNAP_MODES = ("swap", "freeze", "event")
STEAL_PIDS_MAX = 16                 # VMLAT_GUEST_STEAL_MAX_PIDS
PID_MAX_LIMIT = 4194304


def value_ok(name, text):
    """Is @text what knob @name may read?"""
    v = text.strip()
    if name.startswith("threshold_"):
        return v.isdigit() and int(v) <= THRESHOLD_MAX
    if name == "snapshot_interval_ms":
        return v.isdigit() and 1 <= int(v) <= INTERVAL_MAX
    if name == "snapshot":
        return v in SNAP_MODES
    if name == "reset":
        return v.startswith("#")
    if name == "guest_steal":
        pids = v.split(",")
        return v in ("off", "on") or (
            len(pids) <= STEAL_PIDS_MAX and
            all(p.isdigit() and 1 <= int(p) <= PID_MAX_LIMIT for p in pids))
    return True


def writable():
    """The writable files of vmlat's directory, by name."""
    return sorted(f for f in os.listdir(VMLAT)
                  if os.stat(os.path.join(VMLAT, f)).st_mode & 0o200)


def knob_values(knobs):
    return {k: rd(os.path.join(VMLAT, k)) for k in knobs if k != "reset"}


def write_raw(path, data):
    """One write(2) of @data: 0 or the errno."""
    fd = os.open(path, os.O_WRONLY)
    try:
        n = os.write(fd, data)
        return 0 if n == len(data) else errno.EIO
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


def edge_cases():
    cases = [b"", b"\n", b" ", b"0", b"1", b"-1", b"-0", b"+1", b"1\n",
             b" 1", b"1 ", b"\t1\n", b"01", b"0x10", b"1e3", b"1.5",
             b"%d" % THRESHOLD_MAX, b"%d" % (THRESHOLD_MAX + 1),
             b"%d" % INTERVAL_MAX, b"%d" % (INTERVAL_MAX + 1),
             b"%d" % (U64 - 1), b"%d" % U64, b"%d" % (2**63),
             b"9" * 40, b"1" * 4096, b"\x00", b"1\x00junk", b"\xff\xfe",
             b"swap", b"freeze", b"event", b"swap\n", b"SWAP", b"swa",
             b"swapx", b"event event", b"\x80swap",
             b"on", b"off", b"on\n", b"ON", b"1,2,3", b" 7 , 8 ", b"1,,2",
             b",1", b"1,", b"on,1", b"%d" % PID_MAX_LIMIT,
             b"%d" % (PID_MAX_LIMIT + 1),
             b",".join([b"5"] * STEAL_PIDS_MAX),
             b",".join([b"5"] * (STEAL_PIDS_MAX + 1))]
    return cases


def random_input(rng):
    kind = rng.randrange(4)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(64)))
    if kind == 1:
        return str(rng.randrange(-2**70, 2**70)).encode()
    if kind == 2:
        return rng.choice(SNAP_MODES).encode() + \
            bytes(rng.randrange(256) for _ in range(rng.randrange(3)))
    return bytes(rng.choice(b"0123456789 \n\t-+x,")
                 for _ in range(1 + rng.randrange(24)))


def read_all():
    """Read every file of vmlat's directory; the JSON must parse
    (strictly)."""
    for f in os.listdir(VMLAT):
        if f == "json":
            rd_json()
        else:
            rd(os.path.join(VMLAT, f))


def t_knobs():
    rng = random.Random(SEED)
    restore_defaults()
    knobs = writable()
    if not knobs:
        raise RuntimeError("no writable file in %s" % VMLAT)
    bad = []
    n = 0
    read_in = set()         # (file written, every knob's value): read all
    before = knob_values(knobs)
    for k in knobs:
        path = os.path.join(VMLAT, k)
        inputs = edge_cases() + [random_input(rng)
                                 for _ in range(KNOB_INPUTS)]
        for data in inputs:
            err = write_raw(path, data)
            n += 1
            after = knob_values(knobs)
            # Every file must still read after a change, once for each
            # state the knobs are left in by a write to each file ("1",
            # " 1" and "+1" leave the same). A refused write changes
            # nothing (checked below); reading everything after each of
            # them too took 4 of the debug kernel's minutes, and after
            # every accepted one, 3.
            state = (k, tuple(sorted(after.items())))
            if not err and state not in read_in:
                read_in.add(state)
                read_all()
            if err not in (0, errno.EINVAL):
                bad.append("%s <- %r: %s" % (k, data[:40],
                                             os.strerror(err)))
            elif err and after != before:
                bad.append("%s <- %r refused but changed %s" %
                           (k, data[:40], sorted(x for x in after
                                                 if after[x] != before[x])))
            elif not err and k != "reset" and not value_ok(k, after[k]):
                bad.append("%s <- %r accepted, reads %r" %
                           (k, data[:40], after[k]))
            before = after
            if len(bad) > 20:
                break
        read_all()
    restore_defaults()
    keep("fuzz_knobs.txt", "\n".join(bad))
    tap(not bad, "knobs", "%d inputs to %d files (%s), every file read in "
        "%d states; %d wrong: %s" % (n, len(knobs), " ".join(knobs),
                                     len(read_in), len(bad),
                                     "; ".join(bad[:3])))


TRACING_ON = "/sys/kernel/tracing/tracing_on"
TRACING_WAS_ON = None


def restore_defaults():
    """Knobs off; the main trace buffer on again if it was (a report in
    swap mode without a snapshot buffer turns it off)."""
    global TRACING_WAS_ON
    if TRACING_WAS_ON is None and os.path.exists(TRACING_ON):
        TRACING_WAS_ON = rd(TRACING_ON).strip()
    elif TRACING_WAS_ON is not None:
        wr(TRACING_ON, TRACING_WAS_ON)
    for k in writable():
        path = os.path.join(VMLAT, k)
        if k.startswith("threshold_"):
            write_raw(path, b"0")
        elif k == "snapshot":
            write_raw(path, b"event")
        elif k == "guest_steal":
            write_raw(path, b"off")


def guest(*args):
    return subprocess.Popen([os.path.join(HERE, args[0])] + list(args[1:]),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True)


def finish(p, what):
    out, err = p.communicate(timeout=600)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (what, p.returncode,
                                                   err[-300:]))
    return {k: v for k, v in (kv.split("=", 1) for kv in out.split()
                              if "=" in kv)}


def vm_of(pid):
    for vm in rd_json()["vms"]:
        if vm["pid"] == pid:
            return vm
    raise RuntimeError("VM %d not in the JSON document" % pid)


def honest_ok(sync, exchanges, user=0):
    return sync is not None and sync["state"] == "ok" and \
        sync["exchanges"] == exchanges and sync.get("user", 0) == user and \
        not any(sync[k] for k in ("malformed", "replayed", "unpaired",
                                  "refused", "limited", "restarts"))


def t_hypercalls():
    calls, ring3 = 3000, 50
    honest = guest("sync_guest", "honest", "40", "20", "0")
    # An honest syncer whose ring 3 makes 50 hostile calls between two of
    # its own: seq ~0, 1, its next seq, v1 and v2 headers.
    user = guest("sync_guest", "user", "40", "20", "0", str(ring3))
    # The steal calls among them answered: their page read and written.
    wr(VMLAT + "/guest_steal", "on")
    try:
        hostile = [guest("sync_guest", "flood", str(calls))
                   for _ in range(2)]
        floods = [finish(p, "sync_guest flood") for p in hostile]
        h = finish(honest, "sync_guest honest")
        u = finish(user, "sync_guest user")
    finally:
        wr(VMLAT + "/guest_steal", "off")
    sync = vm_of(int(h["pid"]))["sync"]
    usync = vm_of(int(u["pid"]))["sync"]
    steal = [(vm_of(int(f["pid"]))["sync"], int(f["steal"])) for f in floods]
    ok = honest_ok(sync, 40) and \
        honest_ok(usync, 40, int(u["user_calls"])) and \
        all(n > 0 and s["steal_calls"] == n and s["steal_user"] == 0 and
            s["steal_taken"] + s["steal_limited"] + s["steal_malformed"] == n
            and s["steal_taken"] > 0 and s["steal_malformed"] > 0
            for s, n in steal)
    rnd = sum(int(f["random"]) + int(f["other_nr"]) for f in floods)
    tap(ok, "hypercalls", "%d hostile calls at CPL 0 from %d guests (%d of "
        "them random, seeds %s), %s at CPL 3 (seed %s); honest VM: %s; VM "
        "with a hostile ring 3: %s; hostile steal calls: %s" %
        (calls * len(hostile), len(hostile), rnd,
         ",".join(f["seed"] for f in floods), u["user_calls"], u["seed"],
         sync, usync,
         [({k: v for k, v in s.items() if k.startswith("steal_")}, n)
          for s, n in steal]))


class Loop(threading.Thread):
    """Runs @fn until stopped; counts runs and unexpected errors."""

    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn = fn
        self.stop = threading.Event()
        self.runs = 0
        self.errors = []

    def run(self):
        while not self.stop.is_set():
            try:
                self.fn(self)
            except (FileNotFoundError, json.JSONDecodeError) as e:
                # The module went away (or came back) mid-read: a
                # truncated document is a file that vanished, not a bug.
                if os.path.isdir(VMLAT) and \
                        not isinstance(e, FileNotFoundError):
                    self.errors.append(repr(e)[:200])
            except OSError as e:
                # ENODEV/ENXIO/EIO: debugfs removed the file under us.
                if e.errno not in (errno.ENOENT, errno.ENODEV, errno.ENXIO,
                                   errno.EIO):
                    self.errors.append(repr(e)[:200])
            except Exception as e:  # anything else is a failure
                self.errors.append(repr(e)[:200])
            self.runs += 1


def t_concurrent():
    ko = os.environ["VMLAT_KO"]
    rng = random.Random(SEED + 1)
    reloads = [0]

    # An open debugfs file holds a reference on 6.1 (debugfs' proxy takes
    # one on the module): rmmod then fails with EBUSY, as it should. The
    # reloader tries once with readers going, then between two reads.
    gate = threading.Lock()

    def reader(_):
        for f in os.listdir(VMLAT):
            with gate:
                with open(os.path.join(VMLAT, f), "rb") as fp:
                    data = fp.read()
            if f == "json":
                json_strict(data)

    def writer(_):
        ks = writable()
        if not ks:      # vmlat is being loaded or unloaded
            return
        with gate:
            write_raw(os.path.join(VMLAT, rng.choice(ks)),
                      random_input(rng))

    def reloader(_):
        if rmmod():
            with gate:
                if rmmod():
                    raise RuntimeError("rmmod vmlat failed with no reader")
        time.sleep(0.2)
        load(ko)
        reloads[0] += 1
        time.sleep(0.5)

    guests = [guest("tiny_guest", "seconds", str(CONC_SECONDS)),
              # hostile calls for the same time (on the debug kernel,
              # 20000 of them took a minute past it)
              guest("sync_guest", "flood", "1000000", str(CONC_SECONDS))]
    loops = [Loop(reader), Loop(reader), Loop(writer), Loop(reloader)]
    for t in loops:
        t.start()
    # At least CONC_SECONDS, and until vmlat went away and came back three
    # times (an insmod reads the kernel's BTF: slow under TCG and KASAN,
    # slower on a loaded machine). No deadline on the three as such: the
    # reloader is given up on only when one reload of its makes no
    # progress for RELOAD_STALL_S (a hung rmmod or insmod).
    time.sleep(CONC_SECONDS)
    seen, since = reloads[0], time.monotonic()
    while reloads[0] < 3 and time.monotonic() - since < RELOAD_STALL_S:
        time.sleep(1)
        if reloads[0] != seen:
            seen, since = reloads[0], time.monotonic()
    for t in loops:
        t.stop.set()
    for t in loops:
        t.join(60)
    if not os.path.isdir(VMLAT):
        load(ko)
    restore_defaults()
    errors = [e for t in loops for e in t.errors]
    for p, what in zip(guests, ("tiny_guest", "sync_guest flood")):
        try:
            finish(p, what)
        except Exception as e:
            errors.append(str(e)[:200])
    hung = [t for t in loops if t.is_alive()]
    ok = not errors and not hung and reloads[0] >= 3
    tap(ok, "concurrent", "%d reads, %d random writes, %d reloads of "
        "vmlat, guests running; %d hung loops; errors: %s" %
        (loops[0].runs + loops[1].runs, loops[2].runs,
         reloads[0], len(hung), "; ".join(errors[:3]) or "none"))


def kvm_hooks():
    """The kvm: hooks of vmlat's status, name -> (state, hits)."""
    hooks = {}
    for line in rd(VMLAT + "/status").splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].startswith("kvm:"):
            hooks[f[0]] = (f[1], int(f[2]))
    return hooks


def t_kvm_reload():
    stop = threading.Event()
    errors = []

    def reader():
        while not stop.is_set():
            try:
                read_all()
            except Exception as e:
                errors.append(repr(e)[:200])

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    bad = []
    try:
        for i in range(KVM_RELOADS):
            for cmd in (["modprobe", "-r", "kvm_amd", "kvm"],
                        ["modprobe", "kvm_amd", "nested=1"]):
                r = subprocess.run(cmd, stderr=subprocess.PIPE,
                                   universal_newlines=True)
                if r.returncode:
                    raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr))
            before = kvm_hooks()
            finish(guest("tiny_guest", "exits", "100"), "tiny_guest")
            after = kvm_hooks()
            # (but those whose event this kernel's KVM has not)
            detached = [h for h, (s, _) in after.items() if s != "attached"
                        and os.path.isdir("/sys/kernel/tracing/events/" +
                                          h.replace(":", "/"))]
            exits = after["kvm:kvm_exit"][1] - before["kvm:kvm_exit"][1]
            if detached or exits < 100:
                bad.append("reload %d: detached %s, %d exits counted" %
                           (i + 1, detached, exits))
    finally:
        stop.set()
        th.join(30)
    tap(not bad and not errors, "kvm-reload",
        "%d reloads with readers running: %s" %
        (KVM_RELOADS, "; ".join(bad + errors[:3]) or "hooks attached, "
         "exits counted each time"))


LOAD_CHURN = int(os.environ.get("VMLAT_LOAD_CHURN", "5"))
# Small tables: the churn holds one VM at a time, and a load of the
# default ones took 9.6 s on the debug kernel (0.8 s on 6.12).
LOAD_CHURN_ARGS = ["max_vms=4", "max_vcpus=16"]


def t_load_churn():
    """vmlat unloaded and loaded (with small tables) LOAD_CHURN times
    while ./tiny_guest churn makes and destroys VMs in threads it keeps
    (each runs up to 4 VMs in turn): a load can come between a kvm_entry and the exit that ends that
    guest mode, and the VM be destroyed while its thread lives on. Every
    unload and load succeeds, the guests keep going, and the kernel logs
    no report meanwhile (on the debug kernel, KASAN's of a destroyed vCPU
    read at the thread's next context switch)."""
    ko = os.environ["VMLAT_KO"]
    dmesg(clear=True)
    p = guest("tiny_guest", "churn", "100000000")
    loads, err, t0, took = 0, "", time.monotonic(), 0.0
    try:
        time.sleep(0.5)
        for _ in range(LOAD_CHURN):
            if rmmod():
                err = "rmmod vmlat failed"
                break
            rc, err = insmod(ko, *LOAD_CHURN_ARGS)
            if rc:
                break
            loads += 1
            time.sleep(0.3)
        running = p.poll() is None
        took = time.monotonic() - t0 - 0.5 - 0.3 * loads
    finally:
        p.kill()
        _, perr = p.communicate()
        rmmod()
        load(ko)
    log = kernel_reports(dmesg())
    tap(loads == LOAD_CHURN and running, "load-churn.loads_with_guests",
        "%d of %d loads (%.1f s per unload and load)%s; churn %s" % (
            loads, LOAD_CHURN, took / max(1, loads),
            " (%s)" % err if err else "",
            "running" if running else "ended: " + perr.strip()[-200:]))
    tap(not log, "load-churn.no_kernel_report", "; ".join(log[:3]) or
        "nothing logged")


if __name__ == "__main__":
    main([t_knobs, t_hypercalls, t_concurrent, t_kvm_reload, t_load_churn],
         needs_tracefs=False)
