#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""cmd_test.py - the vmlat command ($VMLAT_CMD) on a live KVM host.

  errors  no vmlat loaded, debugfs not mounted, a user without the right
          to read debugfs: exit status 1 and one line that says what to
          do.
  live    two QEMU guests, "-name guest=web1,debug-threads=on" (2 vCPUs)
          and "-name db2" (1 vCPU), each running a multiboot kernel
          whose CPU loops on port I/O, and a host CPU hog
          (cmdtest-hog), all on CPU 1, kvm:kvm_exit traced by ftrace from before the guests
          start:
          - top -b -n 2: two refreshes; each guest by its name, its
            QEMU's pid and vCPU count; its shares add up to 100%;
          - report -d 3: the hog (its pid, from this test) is named among
            what took the guests' time;
          - hist -d 2: the guests' preempt, wait and exit histograms, no
            L2 ones;
          - with the guests stopped (SIGSTOP: their counts hold still):
            export --prometheus: each guest's vmlat_exits_total adds up
            to ftrace's kvm_exit events of its QEMU's threads (from
            /proc/PID/task), and its exit histogram's count is within
            one per vCPU of it (an exit still being handled); Debian's
            prometheus-node-exporter serves the file through its
            textfile collector with no scrape error, the same values,
            and promtool check metrics finds nothing in what it serves;
          - plot: PNGs that pngcheck decodes, an SVG time-share plot
            that names both guests.

Needs root, kvm_amd or kvm_intel, $VMLAT_KO, $VMLAT_CMD (the command),
$VMLAT_DEBTOOLS (tools/testhost/debtools.sh: promtool and node_exporter),
qemu-system-x86_64, gnuplot, pngcheck. TAP output.
"""
import glob
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vmlat_ktest import (TRACING, SkipTest, check_no_lost_events,  # noqa: E402
                         json_strict, keep, load, main, schema_keep, tap,
                         tracing_instance, unload)

CMD = os.environ.get("VMLAT_CMD", "")
DEBTOOLS = os.environ.get("VMLAT_DEBTOOLS", "")
INST = TRACING + "/instances/vmlat_cmd"
CPU = "1"


def vmlat(*args, user=None, timeout=120, env=None):
    """Run the command: (exit status, stdout, stderr); @env added to the
    environment."""
    argv = [CMD] + list(args)
    if user is not None:
        argv = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user,
                "--clear-groups"] + argv
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=timeout,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


def need_cmd():
    if not os.access(CMD, os.X_OK):
        raise SkipTest("needs $VMLAT_CMD, the vmlat command")


def one_line_error(name, rc, err, want):
    lines = err.strip().splitlines()
    tap(rc == 1 and len(lines) == 1 and lines[0].startswith("vmlat: ")
        and want in lines[0], name, "exit %d: %r" % (rc, err[:300]))


def t_errors():
    need_cmd()
    unload()
    try:
        rc, _, err = vmlat("report")
        one_line_error("errors.not_loaded", rc, err,
                       "not loaded: load it (modprobe vmlat)")
    finally:
        load(os.environ["VMLAT_KO"])
    rc, _, err = vmlat("top", "-b", "-n", "1", user=65534)
    one_line_error("errors.no_permission", rc, err, "run as root")
    # Lazily if busy (tracefs automounted in it, a file open): a new
    # debugfs is mounted on it again below all the same.
    p = subprocess.run(["umount", "/sys/kernel/debug"],
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode:
        p = subprocess.run(["umount", "-l", "/sys/kernel/debug"],
                           stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode:
        tap(False, "errors.debugfs_not_mounted", "umount: " + p.stderr)
        return
    try:
        rc, _, err = vmlat("hist")
        one_line_error("errors.debugfs_not_mounted", rc, err,
                       "debugfs is not mounted")
    finally:
        subprocess.run(["mount", "-t", "debugfs", "none",
                        "/sys/kernel/debug"], check=True)


HOG = """import ctypes
ctypes.CDLL(None).prctl(15, b"cmdtest-hog", 0, 0, 0)
while True:
    pass
"""


def hog():
    """A CPU hog named cmdtest-hog (set after exec) on CPU 1."""
    return subprocess.Popen(["taskset", "-c", CPU, sys.executable, "-c",
                             HOG])


def spin_kernel(tmp):
    """A multiboot kernel (QEMU's -kernel loads it, its "a.out kludge"
    addresses in the header, no ELF) whose one CPU loops on OUT to port
    0x80: a busy guest that exits to QEMU's userspace all the time."""
    magic, flags, base = 0x1BADB002, 0x00010000, 0x100000
    hdr = struct.pack("<8I", magic, flags, (-(magic + flags)) & 0xffffffff,
                      base, base, 0, 0, base + 32)
    path = os.path.join(tmp, "spin.bin")
    with open(path, "wb") as f:
        f.write(hdr + bytes([0xE6, 0x80, 0xEB, 0xFC]) + bytes(28))
    return path


def qemu(name_arg, smp, kernel):
    q = shutil.which("qemu-system-x86_64")
    if not q:
        raise SkipTest("needs qemu-system-x86_64")
    return subprocess.Popen(["taskset", "-c", CPU, q, "-enable-kvm",
                             "-name", name_arg, "-m", "64", "-smp", str(smp),
                             "-kernel", kernel, "-display", "none",
                             "-nodefaults", "-no-reboot"],
                            stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def top_blocks(out):
    """top -b's refreshes: [{pid: (name, vcpus, [7 shares])}]"""
    blocks = []
    for line in out.splitlines():
        if line.startswith("vmlat top - "):
            blocks.append({})
        elif blocks and line.strip() and not line.startswith("VM "):
            f = line.split()
            blocks[-1][int(f[1])] = (f[0], int(f[2]),
                                     [float(x) for x in f[3:10]])
    return blocks


def prom_samples(text):
    """{(name, frozenset(labels)): value} of Prometheus text."""
    res = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line)
        if not m:
            continue
        labels = frozenset(re.findall(r'([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"',
                                      m.group(3) or ""))
        res[m.group(1), labels] = float(m.group(4))
    return res


def exits_of(samples, vm):
    return sum(v for (n, l), v in samples.items()
               if n == "vmlat_exits_total" and ("vm", vm) in l)


def trace_exits(tids):
    """kvm_exit events of each tid in the instance's trace."""
    counts = dict.fromkeys(tids, 0)
    with open(INST + "/trace", encoding="utf-8", errors="replace") as f:
        for line in f:
            if "kvm_exit:" not in line:
                continue
            m = re.match(r'\s*.+?-(\d+)\s+\[', line)
            if m and int(m.group(1)) in counts:
                counts[int(m.group(1))] += 1
    return counts


def serve(prom_dir, port):
    """node_exporter serving @prom_dir's *.prom; its /metrics text."""
    ne = os.path.join(DEBTOOLS, "usr/bin/prometheus-node-exporter")
    p = subprocess.Popen([ne, "--web.listen-address=127.0.0.1:%d" % port,
                          "--collector.disable-defaults",
                          "--collector.textfile",
                          "--collector.textfile.directory=" + prom_dir],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         universal_newlines=True)
    try:
        for _ in range(100):
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/metrics" %
                                            port, timeout=5) as r:
                    return r.read().decode()
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("node_exporter did not answer")
    finally:
        p.terminate()
        p.wait()


def check_export(guests, tids, tmp):
    """With the guests stopped: vmlat's exit counts against ftrace's."""
    counts = trace_exits([t for ts in tids.values() for t in ts])
    check_no_lost_events(INST)
    out_dir = os.path.join(tmp, "textfile")
    os.mkdir(out_dir)
    rc, _, err = vmlat("export", "--prometheus", "-o",
                       os.path.join(out_dir, "vmlat.prom"))
    tap(rc == 0, "live.export_writes_the_file", err)
    with open(os.path.join(out_dir, "vmlat.prom"), encoding="utf-8") as f:
        text = f.read()
    keep("cmd_export.prom", text)
    got = prom_samples(text)
    for name in guests:
        want = sum(counts[t] for t in tids[name])
        tap(want > 0 and exits_of(got, name) == want,
            "live.export_exits_equal_ftrace.%s" % name,
            "vmlat %d, ftrace %d" % (exits_of(got, name), want))
        rc, out, _ = vmlat("hist", "-k", "exit", name)
        m = re.search(r"# (\d+) samples", out)
        n = int(m.group(1)) if m else -1
        tap(rc == 0 and want - len(tids[name]) <= n <= want,
            "live.hist_exit_count_equals_ftrace.%s" % name,
            "hist %d, ftrace %d, %d vCPUs" % (n, want, len(tids[name])))

    ne = os.path.join(DEBTOOLS, "usr/bin/prometheus-node-exporter")
    promtool = os.path.join(DEBTOOLS, "usr/bin/promtool")
    if not (os.access(ne, os.X_OK) and os.access(promtool, os.X_OK)):
        tap(False, "live.node_exporter_serves", "no node_exporter and "
            "promtool in $VMLAT_DEBTOOLS (%s)" % DEBTOOLS)
        return
    served = serve(out_dir, 19100)
    keep("cmd_node_exporter_metrics.txt", served)
    s = prom_samples(served)
    err = [k for k, v in s.items() if k[0] == "node_textfile_scrape_error"
           and v != 0]
    same = all(exits_of(s, g) == exits_of(got, g) for g in guests)
    tap(not err and ("node_textfile_scrape_error", frozenset()) in s and
        same, "live.node_exporter_serves_the_file",
        "scrape error %s, same exits %s" % (err, same))
    ours = "\n".join(ln for ln in served.splitlines()
                     if re.match(r"(# (HELP|TYPE) )?vmlat_", ln)) + "\n"
    p = subprocess.run([promtool, "check", "metrics"], input=ours,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    tap(p.returncode == 0 and not p.stdout.strip() and "vmlat_" in ours,
        "live.promtool_check_metrics_served", p.stdout[:400])


def check_plot(guests, tmp):
    d = os.path.join(tmp, "plots")
    rc, out, err = vmlat("plot", "-o", d)
    files = out.split()
    ok = rc == 0 and files
    bad = []
    for f in files:
        p = subprocess.run(["pngcheck", f], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        if p.returncode or "OK" not in p.stdout:
            bad.append(p.stdout.strip())
    tap(ok and not bad, "live.plot_png_decodes", "%s %s" % (err, bad))
    if KEEP_DIR and ok:
        for f in files:
            shutil.copy(f, os.path.join(KEEP_DIR, "cmd_plot_" +
                                        os.path.basename(f)))
    rc, out, err = vmlat("plot", "-t", "svg", "-o", d)
    svg = [f for f in out.split() if os.path.basename(f).startswith(
        "timeshare")]
    text = open(svg[0], encoding="utf-8").read() if svg else ""
    tap(rc == 0 and all(">%s" % g in text for g in guests),
        "live.plot_svg_names_the_guests", err or out[:200])


KEEP_DIR = os.environ.get("VMLAT_OUT")
START_S = 120


def wait_running(guests):
    """Until KVM's own statistics (its debugfs, not vmlat's) show each
    guest's vCPUs exiting, then 2 s more: QEMU takes seconds to start
    (tens on the debug kernel, KASAN and lockdep under TCG)."""
    t0 = time.time()
    while True:
        exits = {}
        for g, p in guests.items():
            if p.poll() is not None:
                raise RuntimeError("QEMU for %s exited (%d)" % (g,
                                                              p.returncode))
            exits[g] = sum(int(open(f).read()) for f in glob.glob(
                "/sys/kernel/debug/kvm/%d-*/exits" % p.pid))
        if all(n > 1000 for n in exits.values()):
            break
        if time.time() - t0 > START_S:
            raise RuntimeError("the guests did not run within %d s: KVM "
                               "exits %s" % (START_S, exits))
        time.sleep(0.5)
    time.sleep(2)


def wait_stopped(pids, timeout=120):
    """Until every thread of each of @pids is stopped (state T or t in
    /proc/PID/task/TID/stat): its last exit is behind it. @timeout: the
    point past which a thread is taken as never stopping."""
    end = time.monotonic() + timeout
    while True:
        running = []
        for pid in pids:
            for t in os.listdir("/proc/%d/task" % pid):
                try:
                    with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                        state = f.read().rpartition(")")[2].split()[0]
                except (OSError, IndexError):
                    continue        # gone
                if state not in ("T", "t", "Z", "X"):     # stopped or gone
                    running.append((pid, int(t), state))
        if not running:
            return
        if time.monotonic() > end:
            raise RuntimeError("threads still running %d s after SIGSTOP: "
                               "%s" % (timeout, running[:8]))
        time.sleep(0.05)


def check_save(pids, tmp):
    """vmlat save: the live document with the guests' names (QEMU's
    -name) and their vCPU threads' (debug-threads=on: "CPU 0/KVM"), valid
    under the schema (json-schema); read where no /proc names them, the
    report still does."""
    rc, out, err = vmlat("save")
    keep("cmd_save.json", out + err)
    try:
        doc = json_strict(out)
    except ValueError as e:
        doc = {"vms": []}
        err = "%s %s" % (err, e)
    schema_keep(out.encode())
    vms = {v["pid"]: v for v in doc["vms"]}
    got = {g: (vms.get(p, {}).get("name"),
               [c.get("thread") for c in vms.get(p, {}).get("vcpus", [])])
           for g, p in pids.items()}
    tap(rc == 0 and got["web1"] == ("web1", ["CPU 0/KVM", "CPU 1/KVM"]) and
        got["db2"][0] == "db2", "live.save_names", (rc, err[:200], got))
    path = os.path.join(tmp, "saved.json")
    with open(path, "w") as f:
        f.write(out)
    rc, rep, err = vmlat("-f", path, "report",
                         env={"VMLAT_PROC": tmp + "/no-proc",
                              "VMLAT_LIBVIRT_RUN": tmp + "/no-libvirt"})
    tap(rc == 0 and re.search(r"^web1 ", rep, re.M) and
        re.search(r"^db2 ", rep, re.M), "live.saved_report_elsewhere",
        (rc, err[:200], rep[:300]))


def t_live():
    need_cmd()
    if not os.path.isdir(INST.rsplit("/", 1)[0]):
        raise SkipTest("no tracefs instances")
    tmp = tempfile.mkdtemp(prefix="vmlat_cmd.")
    procs = []
    guests = {}
    try:
        with tracing_instance(INST, ["kvm/kvm_exit"], 40000):
            kernel = spin_kernel(tmp)
            guests["web1"] = qemu("guest=web1,debug-threads=on", 2, kernel)
            guests["db2"] = qemu("db2", 1, kernel)
            procs += guests.values()
            h = hog()
            procs.append(h)
            # taskset execs QEMU: the pid is QEMU's
            pids = {g: p.pid for g, p in guests.items()}
            wait_running(guests)

            rc, out, err = vmlat("top", "-b", "-n", "2", "-i", "1")
            keep("cmd_top.txt", out + err)
            blocks = top_blocks(out)
            tap(rc == 0 and len(blocks) == 2, "live.top_two_refreshes",
                err or out[:300])
            last = blocks[-1] if blocks else {}
            for g, n in (("web1", 2), ("db2", 1)):
                row = last.get(pids[g])
                tap(row is not None and row[0] == g and row[1] == n and
                    99.0 <= sum(row[2]) <= 101.0,
                    "live.top_names_the_guest.%s" % g, row)

            rc, out, err = vmlat("report", "-d", "3")
            keep("cmd_report.txt", out + err)
            who = "host task cmdtest-hog[%d]" % h.pid
            tap(rc == 0 and who in out and "Summary: " in out,
                "live.report_names_the_hog", err or out[-500:])

            rc, out, err = vmlat("hist", "-d", "2", "web1")
            keep("cmd_hist.txt", out + err)
            kinds = re.findall(r"^# web1 \(pid \d+, vm_id \d+\): (\S+)", out,
                               re.M)
            tap(rc == 0 and kinds == ["preempt", "wait", "exit"],
                "live.hist_kinds", kinds)

            # Hold the guests still: their counts stop moving once every
            # thread of theirs has stopped (a vCPU in KVM_RUN stops after
            # its exit: polled, however long a loaded test host takes).
            for p in guests.values():
                p.send_signal(signal.SIGSTOP)
            wait_stopped(list(pids.values()))
            wr_off = open(INST + "/tracing_on", "w")
            wr_off.write("0")
            wr_off.close()
            tids = {g: [int(t) for t in os.listdir("/proc/%d/task" % pid)]
                    for g, pid in pids.items()}
            check_export(list(guests), tids, tmp)
            check_plot(list(guests), tmp)
            check_save(pids, tmp)
    finally:
        for p in procs:
            p.send_signal(signal.SIGCONT)
            p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main([t_errors, t_live])
