#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench_export.py BIN [-n RUNS] [--detail LIST]... - what `BIN export
--prometheus -o FILE` costs on the 1024-VM document (fixtures/fleet-1024
.json.xz, make-fleet-fixture), its VMs named by libvirt as KubeVirt
names them (fleet.py): series (lines with a value), series per VM,
bytes, and wall time (median and minimum of RUNS runs, each a process
reading the 10.9 MB document, naming the VMs and writing the file with
fsync and rename, as the export's timer does). By default with no
detail and with --detail all; each --detail LIST given replaces those
("" for none). A benchmark, not a test: it asserts nothing. The figures
of Documentation/vmlat-command.rst come from it."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fleet  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bin")
    ap.add_argument("-n", "--runs", type=int, default=10)
    ap.add_argument("--detail", action="append")
    a = ap.parse_args()
    details = a.detail if a.detail is not None else ["", "all"]
    tmp = tempfile.mkdtemp(prefix="vmlat-bench-")
    try:
        path, doc = fleet.fleet_doc(tmp)
        proc = os.path.join(tmp, "proc")
        os.mkdir(proc)
        env = dict(os.environ, VMLAT_PROC=proc,
                   VMLAT_LIBVIRT_RUN=fleet.fleet_libvirt(tmp, doc))
        prom = os.path.join(tmp, "vmlat.prom")
        nr = len(doc["vms"])
        print("%d VMs, %d bytes of JSON; %d runs each" %
              (nr, os.path.getsize(path), a.runs))
        print("%-8s %8s %8s %10s %9s %9s" % ("detail", "series", "per VM",
                                             "bytes", "median s",
                                             "min s"))
        for d in details:
            args = [a.bin, "-f", path, "export", "--prometheus", "-o", prom]
            if d:
                args += ["--detail", d]
            times = []
            for _ in range(a.runs):
                t = time.monotonic()
                subprocess.run(args, env=env, check=True)
                times.append(time.monotonic() - t)
            with open(prom, "rb") as f:
                text = f.read()
            series = sum(1 for ln in text.split(b"\n")
                         if ln and not ln.startswith(b"#"))
            print("%-8s %8d %8.1f %10d %9.3f %9.3f" %
                  (d or "(none)", series, series / nr, len(text),
                   statistics.median(times), min(times)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
