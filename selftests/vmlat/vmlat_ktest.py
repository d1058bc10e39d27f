# SPDX-License-Identifier: GPL-2.0
"""vmlat_ktest - what vmlat's Python selftests share.

TAP output (tap(), run_suite()), small file helpers, ftrace timestamps, and
the load/unload of vmlat around a suite. Installed next to the tests by
selftests/vmlat/Makefile.
"""
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time

VMLAT = "/sys/kernel/debug/vmlat"
TRACING = "/sys/kernel/tracing"
# Where a run keeps what its checks looked at (selftests/run sets it).
KEEP = os.environ.get("VMLAT_OUT")

results = []


class SkipTest(Exception):
    """A test that cannot run here: reported as "ok ... # SKIP why"."""


def tap(ok, name, why=""):
    """Print one TAP result line and remember it."""
    results.append((ok, name, why))
    line = "%s %d %s" % ("ok" if ok else "not ok", len(results), name)
    if why:
        line += " # " + str(why).replace("\n", " ")
    print(line, flush=True)


def wr(path, text):
    with open(path, "w") as f:
        f.write(text)


def rd(path):
    with open(path) as f:
        return f.read()


def _unique_members(pairs):
    """json object_pairs_hook: an object that names a member twice is an
    error, not a silent choice of one of the values."""
    seen = set()
    for k, _ in pairs:
        if k in seen:
            raise ValueError("duplicate JSON member %r in an object with "
                             "members %s" % (k, [k for k, _ in pairs]))
        seen.add(k)
    return dict(pairs)


def _no_constant(name):
    raise ValueError("%s is not JSON" % name)


def json_strict(data):
    """Parse a JSON document (bytes or str) strictly: bytes must be UTF-8,
    a member may not repeat in an object, no NaN or Infinity."""
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    return json.loads(data, object_pairs_hook=_unique_members,
                      parse_constant=_no_constant)


def rd_json(path=None):
    """Read and parse strictly (json_strict()) a JSON file: vmlat's
    document by default."""
    with open(path or VMLAT + "/json", "rb") as f:
        return json_strict(f.read())


def keep(name, text):
    """Save what a check looked at under $VMLAT_OUT, for a human reading a
    failure."""
    if KEEP:
        wr(os.path.join(KEEP, name), text)


def linux_guest_initramfs(tmp, init, files=()):
    """A cpio in @tmp for a Linux test guest: busybox, @init as /init and
    each path of @files at the root; its path."""
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "bin"))
    shutil.copy("/bin/busybox", os.path.join(root, "bin", "busybox"))
    for f in files:
        shutil.copy(f, root)
    wr(os.path.join(root, "init"), init)
    os.chmod(os.path.join(root, "init"), 0o755)
    cpio = os.path.join(tmp, "guest.cpio")
    subprocess.run("cd %s && find . | cpio -o -H newc --quiet > %s" %
                   (root, cpio), shell=True, check=True)
    return cpio


def linux_guest_argv(qemu, kernel, cpio, params=""):
    """QEMU's command line for a Linux test guest on the test host's KVM:
    one vCPU, the console on standard input and output. In-kernel irqchip
    off: with it, some boots hang (see sync_test.py, boot_guest())."""
    return [qemu, "-enable-kvm", "-cpu", "kvm64", "-machine",
            "kernel-irqchip=off", "-m", "256", "-smp", "1",
            "-nographic", "-no-reboot", "-kernel", kernel, "-initrd", cpio,
            "-append", ("console=ttyS0 panic=-1 quiet mitigations=off " +
                        params).rstrip()]


def ts_ns(field):
    """A trace timestamp "123.456789:" in ns."""
    sec, _, frac = field.rstrip(":").partition(".")
    return int(sec) * 10**9 + int(frac.ljust(9, "0"))


@contextlib.contextmanager
def tracing_instance(inst, events, buffer_kb):
    """A fresh tracing instance at @inst (a leftover one removed) on the
    "mono" clock, @buffer_kb per CPU, recording @events ("sys/event");
    turned off and removed when the block ends."""
    if os.path.isdir(inst):
        os.rmdir(inst)
    os.mkdir(inst)
    try:
        wr(inst + "/trace_clock", "mono")
        wr(inst + "/buffer_size_kb", str(buffer_kb))
        for e in events:
            wr(inst + "/events/" + e + "/enable", "1")
        yield
    finally:
        wr(inst + "/tracing_on", "0")
        os.rmdir(inst)


def check_no_lost_events(inst):
    """Raise RuntimeError if the tracing instance @inst lost events."""
    for cpu in os.listdir(inst + "/per_cpu"):
        for line in rd(inst + "/per_cpu/%s/stats" % cpu).splitlines():
            k, _, v = line.partition(":")
            if k in ("overrun", "commit overrun", "dropped events") \
                    and int(v) != 0:
                raise RuntimeError("ftrace lost events on %s: %s" %
                                   (cpu, line))


def run_suite(tests, needs_tracefs=True):
    """Load $VMLAT_KO, run each test function (its name less a leading
    "t_" or "test_" names it), unload. Return the exit status: 4 if
    everything was skipped, 1 if anything failed, else 0."""
    print("TAP version 13")
    ko = os.environ.get("VMLAT_KO")
    if os.geteuid() != 0 or not ko or not os.path.isfile(ko):
        print("1..0 # SKIP needs root and $VMLAT_KO")
        return 4
    if not os.path.exists("/dev/kvm"):
        print("1..0 # SKIP no /dev/kvm")
        return 4
    if needs_tracefs and not os.path.isdir(TRACING + "/instances"):
        print("1..0 # SKIP no tracefs at %s" % TRACING)
        return 4
    if os.path.isdir(VMLAT):
        print("1..0 # SKIP vmlat is already loaded")
        return 4
    names = {}
    for t in tests:
        name = t.__name__
        for prefix in ("t_", "test_"):
            if name.startswith(prefix):
                name = name[len(prefix):]
        names[t] = name.replace("_", "-")
    # $VMLAT_TESTS: run only these tests (names as in the results, e.g.
    # "exits hog"), as kselftest_harness's -t does.
    only = os.environ.get("VMLAT_TESTS", "").split()
    unknown = set(only) - set(names.values())
    if unknown:
        print("not ok 1 select-tests # no test named %s in $VMLAT_TESTS" %
              " ".join(sorted(unknown)))
        print("1..1")
        return 1
    if only:
        tests = [t for t in tests if names[t] in only]
    subprocess.run(["insmod", ko], check=True)
    skipped = 0
    try:
        for t in tests:
            name = names[t]
            try:
                t()
            except SkipTest as e:
                tap(True, name, "SKIP %s" % e)
                skipped += 1
            except Exception as e:  # a broken step fails, the rest runs
                tap(False, name, "%s: %s" % (type(e).__name__,
                                             str(e)[:400]))
            time.sleep(0.2)
    finally:
        subprocess.run(["rmmod", "vmlat"])
    print("1..%d" % len(results))
    if results and skipped == len(results):
        return 4
    return 0 if all(ok for ok, _, _ in results) else 1


def main(tests, **kw):
    sys.exit(run_suite(tests, **kw))
