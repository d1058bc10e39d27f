# SPDX-License-Identifier: GPL-2.0
"""vmlat_ktest - what vmlat's Python selftests share.

TAP output (tap(), run_suite()), small file helpers, ftrace timestamps, and
the load/unload of vmlat around a suite. Installed next to the tests by
selftests/vmlat/Makefile.
"""
import contextlib
import ctypes
import errno
import glob
import json
import os
import platform
import re
import select
import shutil
import stat
import subprocess
import sys
import time

VMLAT = "/sys/kernel/debug/vmlat"
TRACING = "/sys/kernel/tracing"
# Where a run keeps what its checks looked at (selftests/run sets it).
KEEP = os.environ.get("VMLAT_OUT")
# A vmlat interval against ftrace's: 1 us of text-trace resolution plus
# twice the cost of one ftrace event (vmlat's probe and ftrace's on the same
# tracepoint, each end): 10 us on the stock kernels, 30 on the debug kernel
# (KASAN, lockdep), set by $VMLAT_SLACK_US (selftests/run).
SLACK_NS = int(float(os.environ.get("VMLAT_SLACK_US", "10")) * 1000)

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
    return ok


def wr(path, text):
    with open(path, "w") as f:
        f.write(text)


def rd(path):
    with open(path) as f:
        return f.read()


def status_fields(text, name="exit_trace"):
    """The "# <name> ..." line of vmlat's status, as a dict: its names and
    values ("# exit_trace late unexpected 0": exit_trace is one of them;
    "# kernel: preempt full": "kernel:" names the line)."""
    for line in text.splitlines():
        if line.startswith("# %s " % name):
            f = line[2:].split()
            if name.endswith(":"):
                f = f[1:]
            return dict(zip(f[::2], f[1::2]))
    return {}


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


# Documentation/vmlat-json.schema.json, installed beside this file (or
# in the source tree): every document of vmlat's that rd_json() reads is
# kept, and run_suite() checks them all against it at the end
# (json_schema_check.py, natively if it can: Python under TCG is slow),
# as the suite's last test, json-schema.
HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_PATHS = (os.path.join(HERE, "vmlat-json.schema.json"),
                 os.path.join(HERE, "..", "..", "Documentation",
                              "vmlat-json.schema.json"))
# At most this much kept (fuzz_test reads some 3000 small documents):
# what does not fit is counted, and said in json-schema's line.
SCHEMA_MAX_BYTES = 64 << 20
_schema_docs = {}       # a document's bytes -> its number (no twice)
_schema_kept = [0, 0]   # bytes kept, documents not kept


def schema_keep(raw):
    """Keep @raw, a document of vmlat's, for run_suite()'s json-schema."""
    if raw in _schema_docs:
        return
    if _schema_kept[0] + len(raw) <= SCHEMA_MAX_BYTES:
        _schema_docs[raw] = len(_schema_docs)
        _schema_kept[0] += len(raw)
    else:
        _schema_kept[1] += 1


def _schema_test():
    """The json-schema test: every document kept, against the schema."""
    if not _schema_docs:
        return
    schema = [p for p in SCHEMA_PATHS if os.path.isfile(p)]
    if not schema:
        tap(True, "json-schema", "SKIP no vmlat-json.schema.json in %s" %
            (SCHEMA_PATHS,))
        return
    d = os.path.join(KEEP or "/tmp", "json-schema-%d" % os.getpid())
    os.makedirs(d, exist_ok=True)
    shutil.copy(schema[0], os.path.join(d, "schema.json"))
    for raw, n in _schema_docs.items():
        with open(os.path.join(d, "%05d.json" % n), "wb") as f:
            f.write(raw)
    r = run_native(["python3", os.path.join(HERE, "json_schema_check.py"),
                    d])
    try:
        res = json.loads(r.stdout)
    except ValueError:
        res = None
    if r.returncode == 2 and res:
        tap(True, "json-schema", "SKIP %s" % res.get("why"))
    elif r.returncode or not res:
        tap(False, "json-schema", "json_schema_check.py: exit %d: %s" %
            (r.returncode, (r.stderr or r.stdout)[-300:]))
    else:
        tap(not res["errors"] and res["checked"] == len(_schema_docs),
            "json-schema", "%d documents checked%s%s" % (
                res["checked"], ", %d more not kept" % _schema_kept[1]
                if _schema_kept[1] else "",
                "; " + "; ".join(res["errors"]) if res["errors"] else ""))
        if not res["errors"]:
            shutil.rmtree(d, ignore_errors=True)


def rd_json(path=None):
    """Read and parse strictly (json_strict()) a JSON file: vmlat's
    document by default, which is then checked against the schema."""
    with open(path or VMLAT + "/json", "rb") as f:
        raw = f.read()
    doc = json_strict(raw)
    if path is None:
        schema_keep(raw)
    return doc


def keep(name, text):
    """Save what a check looked at under $VMLAT_OUT, for a human reading a
    failure."""
    if KEEP:
        wr(os.path.join(KEEP, name), text)


def _shared_libs(prog):
    """The shared objects @prog loads, its dynamic loader too (ldd's
    paths), or SkipTest when it cannot run here."""
    r = subprocess.run(["ldd", prog], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    if r.returncode:
        if "not a dynamic executable" in r.stdout:
            return []
        raise SkipTest("%s: ldd failed: %s" % (prog, r.stdout.strip()))
    libs = []
    for ln in r.stdout.splitlines():
        if "not found" in ln:
            raise SkipTest("%s: %s" % (prog, ln.strip()))
        m = re.search(r"(/\S+) \(0x", ln)
        if m:
            libs.append(m.group(1))
    return libs


def linux_guest_initramfs(tmp, init, files=(), progs=()):
    """A cpio in @tmp for a Linux test guest: busybox, @init as /init,
    each path of @files at the root, and each of @progs (a program's name
    found on $PATH, e.g. Debian's sysbench, or a file's absolute path) at
    its path, with the shared objects it loads at theirs; its path. A
    program that is not installed raises SkipTest."""
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "bin"))
    # /dev/null before any mount: busybox sh opens it for a job in the
    # background, and fails the job without it.
    os.makedirs(os.path.join(root, "dev"))
    os.mknod(os.path.join(root, "dev", "null"), 0o666 | stat.S_IFCHR,
             os.makedev(1, 3))
    shutil.copy("/bin/busybox", os.path.join(root, "bin", "busybox"))
    for f in files:
        shutil.copy(f, root)
    for name in progs:
        prog = (name if os.path.isabs(name) and os.path.isfile(name)
                else shutil.which(name))
        if not prog:
            raise SkipTest("needs %s in the test host (tools/install-deps "
                           "installs it)" % name)
        for f in [prog] + _shared_libs(prog):
            dst = root + f
            if not os.path.exists(dst):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy(f, dst)     # follows symlinks: the file itself
    wr(os.path.join(root, "init"), init)
    os.chmod(os.path.join(root, "init"), 0o755)
    cpio = os.path.join(tmp, "guest.cpio")
    subprocess.run("cd %s && find . | cpio -o -H newc --quiet > %s" %
                   (root, cpio), shell=True, check=True)
    return cpio


def guest_modules(kernel, *kos):
    """The paths of the guest kernel's modules @kos ("kernel/fs/ext4/
    ext4.ko"...) and of those they need, in an order insmod can load them
    (modules.dep's), from beside @kernel (tools/testhost/kernel.sh's
    layout: <dir>/vmlinuz, <dir>/lib/modules/<release>/); SkipTest if
    they are not there."""
    d = glob.glob(os.path.join(os.path.dirname(kernel), "lib", "modules",
                               "*", "modules.dep"))
    if len(d) != 1:
        raise SkipTest("no modules.dep beside %s" % kernel)
    deps = {}
    for ln in rd(d[0]).splitlines():
        name, _, need = ln.partition(":")
        deps[name] = need.split()
    order = []
    for ko in kos:
        if ko not in deps:
            raise SkipTest("%s is not in %s" % (ko, d[0]))
        # modules.dep lists what a module needs, each one after the
        # modules that need it: loaded from the right
        for m in list(reversed(deps[ko])) + [ko]:
            if m not in order:
                order.append(m)
    return [os.path.join(os.path.dirname(d[0]), m) for m in order]


# A Linux test guest that has not reached its workload in this long hung.
# Only a hang waits for it, so it is no estimate of a boot: 10 to 40 s
# under TCG on an idle machine, more than 150 s for two guests booting
# at once in a cold make check (the test host at nice 5 beside the debug
# kernel's build). Half of guest-job.sh's timeout of a whole test.
GUEST_HUNG_S = 300
# All the boots of one guest, a hung boot booted again, within this long:
# what guest-job.sh's timeout of a whole test (600 s) leaves after it.
GUEST_BOOTS_S = 420


def boot_until_up(boot):
    """@boot(hung_s) boots a test guest and returns what it got, or None if
    the guest did not come up within hung_s: called again until it gets
    something, each call given at most GUEST_HUNG_S, all of them
    GUEST_BOOTS_S. Returns (what it got or None, how many boots, seconds
    spent)."""
    got, boots, t0 = None, 0, time.time()
    while got is None:
        left = t0 + GUEST_BOOTS_S - time.time()
        if left < 60:
            break
        boots += 1
        got = boot(min(GUEST_HUNG_S, left))
    return got, boots, time.time() - t0


def linux_guest_argv(qemu, kernel, cpio, params="", smp=1, cpu="kvm64",
                     disk=None, irqchip="off"):
    """QEMU's command line for a Linux test guest on the test host's KVM: @smp
    vCPUs of model @cpu, the console on standard input and output, the raw
    image @disk as its virtio disk (/dev/vda) if given. In-kernel irqchip
    off unless @irqchip is "on": with it, some boots hang in the QEMU (TCG)
    test hosts (see sync_test.py, boot_guest()). No NIC: its iPXE ROM would
    wait for Ctrl-B at every boot. tsc=reliable no_timer_check: no TSC
    calibration against the PIT, no clocksource watchdog and no check of
    the IO-APIC's timer (measured in a 6.12 test host: the guest reached
    its init at 8.4 s of its uptime instead of 11.0 to 11.6). pci=noearly:
    no early scan of the PCI bus for an AGP bridge (the guest's kvm64 CPU
    is of a family with a GART: aperture_64.c scans twice, by port I/O,
    each access an exit to the test host's QEMU) nor for early quirks
    (measured in a 7.2 test host: init at 5.0 to 5.7 s of uptime instead of
    7.8 to 14.4)."""
    return [qemu, "-enable-kvm", "-cpu", cpu, "-nic", "none"] + (
        ["-drive", "file=%s,if=virtio,format=raw" % disk] if disk else []) + [
        "-machine",
            "kernel-irqchip=" + irqchip, "-m", "256", "-smp", str(smp),
            "-nographic", "-no-reboot", "-kernel", kernel, "-initrd", cpio,
            "-append", ("console=ttyS0 panic=-1 quiet mitigations=off "
                        "tsc=reliable no_timer_check pci=noearly " +
                        params).rstrip()]


class ConsoleGuest:
    """A test guest's QEMU started with @argv (linux_guest_argv()), its
    serial console on standard input and output, read line by line;
    @preexec_fn as subprocess.Popen's."""

    def __init__(self, argv, preexec_fn=None):
        self.q = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, preexec_fn=preexec_fn)
        self.buf = b""
        self.out = []

    def expect(self, tag, timeout):
        """The rest of the first console line starting "=== tag", or None
        after timeout seconds."""
        end = time.time() + timeout
        while True:
            while b"\n" in self.buf:
                ln, self.buf = self.buf.split(b"\n", 1)
                ln = ln.decode(errors="replace").strip("\r")
                self.out.append(ln)
                # (after SeaBIOS, the first line starts with escapes)
                if "=== " + tag in ln:
                    return ln.split("=== " + tag, 1)[1].strip()
            left = end - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([self.q.stdout], [], [], left)
            if r:
                data = os.read(self.q.stdout.fileno(), 4096)
                if not data:
                    return None
                self.buf += data

    def say(self, text):
        self.q.stdin.write(text.encode() + b"\n")
        self.q.stdin.flush()

    def stop(self):
        if self.q.poll() is None:
            try:
                self.q.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.q.kill()
                self.q.wait()


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


def dmesg(clear=False):
    """The kernel log (emptied first with @clear)."""
    if clear:
        subprocess.run(["dmesg", "-C"], check=False)
        return ""
    return subprocess.run(["dmesg"], stdout=subprocess.PIPE,
                          universal_newlines=True).stdout


# What a kernel report in the log starts with or says (a WARNING's "cut
# here" line, BUG, Oops, KASAN's and general protection faults).
KERNEL_REPORT = re.compile(r"WARNING|cut here|BUG:|Oops|KASAN|general protection")


def kernel_reports(log):
    """The lines of the kernel log @log that belong to a kernel report."""
    return [ln for ln in log.splitlines() if KERNEL_REPORT.search(ln)]


def raw_write(path, text):
    """Write @text to @path in one write(): 0 or the errno (of the open
    or of the write)."""
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as e:
        return e.errno
    try:
        os.write(fd, text.encode())
        return 0
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


# finit_module(2) and delete_module(2) on x86_64 (the only architecture
# with the KVM vendors vmlat knows). Called directly: running insmod or
# rmmod costs an exec of a dynamically linked program, 0.4 to 0.7 s on the
# debug kernel (KASAN and lockdep under TCG), per load and per unload.
_MODULE_SYSCALLS = {"x86_64": (313, 176)}.get(platform.machine())
_LIBC = ctypes.CDLL(None, use_errno=True) if _MODULE_SYSCALLS else None


def insmod(ko, *args):
    """insmod KO ARGS: (exit status, its error as insmod words it: the
    errno's strerror, e.g. "Key was rejected by service")."""
    if not _MODULE_SYSCALLS:
        p = subprocess.run(["insmod", ko] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        return p.returncode, p.stderr.strip()
    try:
        fd = os.open(ko, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as e:
        return 1, "insmod: ERROR: could not load module %s: %s" % (
            ko, e.strerror)
    try:
        if _LIBC.syscall(ctypes.c_long(_MODULE_SYSCALLS[0]),
                         ctypes.c_long(fd),
                         ctypes.c_char_p(" ".join(args).encode()),
                         ctypes.c_long(0)) == 0:
            return 0, ""
        err = ctypes.get_errno()
    finally:
        os.close(fd)
    return 1, "insmod: ERROR: could not insert module %s: %s" % (
        ko, os.strerror(err))


def rmmod(name="vmlat"):
    """rmmod NAME: its exit status (0, or 1 if the module is not loaded
    or still in use: O_NONBLOCK, as rmmod)."""
    if not _MODULE_SYSCALLS:
        return subprocess.run(["rmmod", name], stderr=subprocess.PIPE,
                              universal_newlines=True).returncode
    return 0 if _LIBC.syscall(ctypes.c_long(_MODULE_SYSCALLS[1]),
                              ctypes.c_char_p(name.encode()),
                              ctypes.c_long(os.O_NONBLOCK)) == 0 else 1


def load(ko, *args):
    """insmod KO ARGS, or RuntimeError with insmod's error."""
    rc, err = insmod(ko, *args)
    if rc:
        raise RuntimeError(err)


def unload():
    """rmmod vmlat, or RuntimeError."""
    if rmmod():
        raise RuntimeError("rmmod vmlat failed")


LOCKDOWN = "/sys/kernel/security/lockdown"


def lockdown_level():
    """The kernel's lockdown level (the lockdown file's [bracketed] one,
    securityfs mounted if it was not), or None without the lockdown
    LSM."""
    if not os.path.exists(LOCKDOWN):
        subprocess.run(["mount", "-t", "securityfs", "securityfs",
                        "/sys/kernel/security"], stderr=subprocess.DEVNULL)
    if not os.path.exists(LOCKDOWN):
        return None
    text = rd(LOCKDOWN)
    return text[text.index("[") + 1:text.index("]")] if "[" in text else None


def scenario(*args):
    """Run ./scenario ARGS (next to the tests); return its records as
    (tag, dict) pairs. Exit status 4 skips the test."""
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run([os.path.join(here, "scenario")] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    if p.returncode == 4:
        raise SkipTest(p.stderr.strip().splitlines()[-1:] or "skip")
    if p.returncode != 0 or "status=ok" not in p.stdout:
        raise RuntimeError("scenario %s failed (%d): %s" %
                           (" ".join(args), p.returncode,
                            p.stderr.strip()[-300:]))
    recs = []
    for line in p.stdout.splitlines():
        f = line.split()
        if f:
            recs.append((f[0], dict(kv.split("=", 1) for kv in f[1:]
                                    if "=" in kv)))
    return recs


_native_seq = 0
# How long a request waits for tools/testhost/native-runner.py to claim
# it before it runs here (no runner: a test run by hand, a Bochs host).
NATIVE_CLAIM_S = 5


def run_native(argv, timeout=600):
    """Run @argv (python3 on a script that only reads and writes files in
    $VMLAT_OUT) on the build machine, through $VMLAT_NATIVE's runner
    (tools/testhost/native-runner.py: what a QEMU test host's TCG runs
    several times slower), or here if no runner claims it; return a
    subprocess.CompletedProcess (text)."""
    global _native_seq
    d, out = os.environ.get("VMLAT_NATIVE"), os.environ.get("VMLAT_OUT")
    if d and out and os.path.isdir(d) and all(
            os.path.realpath(a).startswith(os.path.realpath(out) + os.sep)
            for a in argv[2:] if a.startswith("/")):
        _native_seq += 1
        rid = "%d-%d" % (os.getpid(), _native_seq)
        req = os.path.join(d, rid + ".req")
        with open(req + ".tmp", "w") as f:
            json.dump(argv, f)
        os.rename(req + ".tmp", req)
        res = os.path.join(d, rid + ".res")
        t0 = time.monotonic()
        while True:
            if os.path.exists(res):
                r = rd_json(res)
                os.unlink(res)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(d, rid + ".run"))
                return subprocess.CompletedProcess(
                    argv, r["rc"], r["stdout"], r["stderr"])
            waited = time.monotonic() - t0
            if waited > NATIVE_CLAIM_S and os.path.exists(req):
                try:    # unclaimed: take it back, unless claimed now
                    os.rename(req, req + ".local")
                except FileNotFoundError:
                    continue
                os.unlink(req + ".local")
                break
            if waited > timeout + NATIVE_CLAIM_S:
                raise RuntimeError("native run of %s: no result in %d s" %
                                   (os.path.basename(argv[1]), timeout))
            time.sleep(0.05)
    return subprocess.run(argv, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=timeout)


def reports():
    """The reports file: ((reports, snapshots taken, rate-limited), list
    of rows as dicts)."""
    lines = rd(VMLAT + "/reports").splitlines()
    m = re.match(r"# reports (\d+) .* snapshots taken (\d+), "
                 r"rate-limited (\d+)(?:, failed (\d+))?", lines[0])
    cols = lines[1][2:].split()
    rows = [dict(zip(cols, ln.split())) for ln in lines[2:] if ln.strip()]
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))), rows


# How long vmlat's deferred snapshot work may take to run at most: no
# check relies on it (reports_settled() returns as soon as the work ran),
# the point past which it is taken as never coming.
SETTLE_S = 120


def reports_settled():
    """Wait until vmlat's deferred work has decided every report's
    snapshot, and return reports() then. Each report is rate-limited at
    once or queued, and a queued one is taken or failed by the work item
    (vmlat/threshold.c): the header's reports equal taken + rate-limited +
    failed exactly when no work is pending. A poll, not a fixed sleep: a
    loaded test host runs the work item late. (At SETTLE_S it returns
    all the same, for the checks to show what was left.)"""
    end = time.monotonic() + SETTLE_S
    while True:
        head = rd(VMLAT + "/reports").splitlines()[0]
        m = re.match(r"# reports (\d+) .* snapshots taken (\d+), "
                     r"rate-limited (\d+)(?:, failed (\d+))?", head)
        n, taken, limited, failed = (int(x or 0) for x in m.groups())
        if n == taken + limited + failed or time.monotonic() > end:
            return reports()
        time.sleep(0.05)


# The knobs (debugfs files, and module parameters of the same names):
# values each must refuse with EINVAL, the message it then logs, a value it
# takes, and its value after load.
KNOB_BAD = {
    "threshold_preempt_us": ["\n", "abc", "-1", "1.5", "12x", "10000001",
                             "99999999999999999999999"],
    "threshold_wait_us": ["-5", "0x", "20000000"],
    "threshold_exit_us": ["one", "10000001"],
    "threshold_irq_us": ["late", "10000001", "-0x1"],
    "snapshot": ["\n", "bogus", "swap freeze", "off"],
    "snapshot_interval_ms": ["0", "-1", "3600001", "ms"],
    "reset": ["0", "2", "yes"],
}
KNOB_MESSAGE = {
    "threshold_preempt_us": "threshold_preempt_us: write a number",
    "threshold_wait_us": "threshold_wait_us: write a number",
    "threshold_exit_us": "threshold_exit_us: write a number",
    "threshold_irq_us": "threshold_irq_us: write a number",
    "snapshot": "snapshot: write swap",
    "snapshot_interval_ms": "snapshot_interval_ms: write a number",
    "reset": "reset: write 1",
}
KNOB_GOOD = {"threshold_preempt_us": "5000", "threshold_wait_us": "10000000",
             "threshold_exit_us": "0", "threshold_irq_us": "250",
             "snapshot": "event",
             "snapshot_interval_ms": "3600000"}
KNOB_DEFAULT = {"threshold_preempt_us": "0", "threshold_wait_us": "0",
                "threshold_exit_us": "0", "threshold_irq_us": "0",
                "snapshot": "swap",
                "snapshot_interval_ms": "1000"}


def knobs_default(where=VMLAT):
    """Every knob in directory @where back to its value after load, and a
    reset."""
    for k, v in KNOB_DEFAULT.items():
        wr(where + "/" + k, v)
    wr(where + "/reset", "1")


def check_knobs(prefix, where, knobs, twin=None):
    """Each of @knobs in directory @where refuses its KNOB_BAD values with
    EINVAL and its message, and reads as before; then takes its KNOB_GOOD
    value (reset has none, and is not read), which the file of the same
    name in @twin (if given) reads too. Results PREFIX.KNOB.*."""
    for knob in sorted(knobs):
        path = where + "/" + knob
        readable = knob in KNOB_GOOD
        before = rd(path) if readable else None
        dmesg(clear=True)
        errs = [raw_write(path, b) for b in KNOB_BAD[knob]]
        after = rd(path) if readable else None
        log = dmesg()
        tap(all(e == errno.EINVAL for e in errs),
            "%s.%s.einval" % (prefix, knob),
            "errnos %s for %r" % (errs, KNOB_BAD[knob]))
        if readable:
            tap(after == before, "%s.%s.unchanged" % (prefix, knob),
                "%r -> %r" % (before, after))
        tap(KNOB_MESSAGE[knob] in log, "%s.%s.message" % (prefix, knob),
            "kernel log: %r" % log.strip()[-200:])
        if not readable:
            continue
        # A good value is taken, so the refusals above meant something.
        e = raw_write(path, KNOB_GOOD[knob])
        got = rd(path).strip()
        same = rd(twin + "/" + knob).strip() if twin else got
        tap(e == 0 and got == KNOB_GOOD[knob] and same == got,
            "%s.%s.accepts" % (prefix, knob),
            "errno %d, reads %r%s" % (e, got,
                                     ", %s reads %r" % (twin, same)
                                     if twin else ""))


def irq_entry_events():
    """The host's interrupt entry events (irq_vectors' *_entry and
    irq:irq_handler_entry), for a tracing_instance() that must show when
    a CPU left what it ran for an interrupt."""
    d = TRACING + "/events/irq_vectors"
    vec = (["irq_vectors/" + e for e in sorted(os.listdir(d))
            if e.endswith("_entry")] if os.path.isdir(d) else [])
    return vec + ["irq/irq_handler_entry"]


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
    # $VMLAT_SKIP_TESTS: run all but these.
    only = os.environ.get("VMLAT_TESTS", "").split()
    skip = os.environ.get("VMLAT_SKIP_TESTS", "").split()
    unknown = set(only + skip) - set(names.values())
    if unknown:
        print("not ok 1 select-tests # no test named %s in $VMLAT_TESTS "
              "or $VMLAT_SKIP_TESTS" % " ".join(sorted(unknown)))
        print("1..1")
        return 1
    if only:
        tests = [t for t in tests if names[t] in only]
    tests = [t for t in tests if names[t] not in skip]
    rc, err = insmod(ko)
    if rc:
        print("not ok 1 insmod # %s" % err)
        print("1..1")
        return 1
    skipped = 0
    try:
        for t in tests:
            name = names[t]
            t0 = time.monotonic()
            try:
                t()
            except SkipTest as e:
                tap(True, name, "SKIP %s" % e)
                skipped += 1
            except Exception as e:  # a broken step fails, the rest runs
                tap(False, name, "%s: %s" % (type(e).__name__,
                                             str(e)[:400]))
            # for selftests/run's slowest cases
            print("# case %s took %d s" % (name, time.monotonic() - t0))
            sys.stdout.flush()
            time.sleep(0.2)
    finally:
        rmmod()
    try:
        _schema_test()
    except Exception as e:  # noqa: BLE001 (reported, as a test's)
        tap(False, "json-schema", "%s: %s" % (type(e).__name__, str(e)[:400]))
    print("1..%d" % len(results))
    if results and skipped == len(results):
        return 4
    return 0 if all(ok for ok, _, _ in results) else 1


def main(tests, **kw):
    sys.exit(run_suite(tests, **kw))
