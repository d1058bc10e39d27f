#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""native-runner.py DIR OUT SCRIPT... - run a QEMU test host's analyses
natively, on the build machine.

A QEMU test host shares the build machine's root (read-only) and its
output directory OUT (read-write) at the same paths, and runs Python
under TCG, several times slower than here: the ftrace oracle took 13 to
23 s there on analyzer_test's crowd trace and 1.5 to 2 s here. What only
reads files the test host wrote to OUT and writes its result there can
run here instead, while the test host waits (idle).

The test host (vmlat_ktest.run_native()) asks in DIR (under OUT):
<id>.req, a JSON list: argv. This runner claims it (renames it to
<id>.run), runs it with a timeout and writes <id>.res: {"rc", "stdout",
"stderr"}, each file made under another name and renamed into place.
It runs only python3 on one of the SCRIPTs, with every argument that
is an absolute path inside OUT; anything else is answered with rc 126
and why. It ends on SIGTERM (selftests/run, after the test host's
power-off) or when DIR goes.
"""
import json
import os
import signal
import subprocess
import sys
import time

TIMEOUT_S = 600
POLL_S = 0.05


def check(argv, out, scripts):
    """Why @argv may not run here, or None."""
    if not (isinstance(argv, list) and len(argv) >= 2 and
            all(isinstance(a, str) for a in argv)):
        return "not a list of strings of two or more"
    if os.path.basename(argv[0]) not in ("python3", "python3.11"):
        return "not python3: %r" % argv[0]
    if os.path.realpath(argv[1]) not in scripts:
        return "not an allowed script: %r" % argv[1]
    for a in argv[2:]:
        if a.startswith("/") and \
                not os.path.realpath(a).startswith(out + os.sep):
            return "a path outside %s: %r" % (out, a)
    return None


def serve(d, out, scripts, base):
    try:
        names = sorted(n for n in os.listdir(d) if n.endswith(".req"))
    except FileNotFoundError:
        return False
    for n in names:
        rid = n[:-len(".req")]
        run = os.path.join(d, rid + ".run")
        try:
            os.rename(os.path.join(d, n), run)
        except FileNotFoundError:
            continue        # the test host took it back (no runner seen)
        try:
            with open(run) as f:
                argv = json.load(f)
        except (OSError, ValueError) as e:
            argv, why = None, "unreadable request: %s" % e
        else:
            why = check(argv, out, scripts)
        if why:
            res = {"rc": 126, "stdout": "", "stderr": "native-runner: " + why}
        else:
            try:
                p = subprocess.run([base] + argv[1:], cwd=out,
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE,
                                   universal_newlines=True,
                                   timeout=TIMEOUT_S)
                res = {"rc": p.returncode, "stdout": p.stdout,
                       "stderr": p.stderr}
            except subprocess.TimeoutExpired:
                res = {"rc": 124, "stdout": "",
                       "stderr": "native-runner: timed out after %d s" %
                       TIMEOUT_S}
            except OSError as e:    # answered all the same: never a crash
                res = {"rc": 126, "stdout": "",
                       "stderr": "native-runner: %s" % e}
        tmp = os.path.join(d, rid + ".res.tmp")
        with open(tmp, "w") as f:
            json.dump(res, f)
        os.rename(tmp, os.path.join(d, rid + ".res"))
    return True


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: native-runner.py DIR OUT SCRIPT...")
    d, out = sys.argv[1], os.path.realpath(sys.argv[2])
    scripts = {os.path.realpath(s) for s in sys.argv[3:]}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while serve(d, out, scripts, sys.executable):
        time.sleep(POLL_S)


if __name__ == "__main__":
    main()
