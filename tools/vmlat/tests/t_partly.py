# SPDX-License-Identifier: GPL-2.0
"""A VM the module marks partly_tracked (a vCPU thread turned away at its
caps): report says so in its diagnosis and in --json, export gives it the
sparse series vmlat_vm_partly_tracked; the other VMs have neither."""
import json
import os
import re
import shutil
import tempfile

from cmdtest import load


def run(ctx):
    doc = load("contention-2")
    live = [v for v in doc["vms"] if not v["exited"]]
    mark = live[0]
    for v in doc["vms"]:
        v["partly_tracked"] = v is mark
    tmp = tempfile.mkdtemp(prefix="vmlat_partly.")
    try:
        path = os.path.join(tmp, "partly.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        rc, out, err = ctx.run(["-f", path, "report"])
        blocks = re.split(r"\n(?=\S.*\(pid \d+, vm_id \d+\))", out)
        marked = [b.split("\n", 1)[0] for b in blocks
                  if "partly tracked" in b]
        ctx.check(rc == 0 and len(marked) == 1 and
                  "vm_id %d)" % mark["id"] in marked[0],
                  "partly.report_names_the_vm", (rc, err, marked))
        rc, out, err = ctx.run(["-f", path, "report", "--json"])
        try:
            got = {v["vm_id"]: v["partly_tracked"]
                   for v in json.loads(out)["vms"]}
        except (ValueError, KeyError) as e:
            got = e
        ctx.check(rc == 0 and got == {v["id"]: v is mark for v in live
                                      if v["id"] in got},
                  "partly.report_json", got)
        rc, out, err = ctx.run(["-f", path, "export", "--prometheus"])
        rows = [ln for ln in out.splitlines()
                if ln.startswith("vmlat_vm_partly_tracked{")]
        ctx.check(rc == 0 and len(rows) == 1 and
                  rows[0].endswith(" 1") and
                  ('vm_id="%d"' % mark["id"] in rows[0] or
                   'vm="%s"' % mark["comm"] in rows[0]),
                  "partly.export_sparse_series", (rc, err, rows))
        # The control: the same document, no VM marked.
        for v in doc["vms"]:
            v["partly_tracked"] = False
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        rc, rep, _ = ctx.run(["-f", path, "report"])
        rc2, prom, _ = ctx.run(["-f", path, "export", "--prometheus"])
        ctx.check(rc == 0 and rc2 == 0 and "partly tracked" not in rep and
                  "vmlat_vm_partly_tracked" not in prom,
                  "partly.none_when_fully_tracked", "")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
