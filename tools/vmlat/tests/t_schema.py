# SPDX-License-Identifier: GPL-2.0
"""The command reads the module's schema 4 and the schema 3 before it
alike: each recorded document (schema 3), rewritten as schema 4 says
(Documentation/vmlat.rst, json: the schema's changes), gives the same
output; the rewritten documents and the saved ones are valid under
Documentation/vmlat-json.schema.json where they hold what it requires."""
import copy
import json
import os
import re
import shutil
import tempfile

from cmdtest import HERE, debian_import, fixture, fixture_names, load

SCHEMA = os.path.join(HERE, "..", "..", "..", "Documentation",
                      "vmlat-json.schema.json")
HISTS = ("preempt", "wait", "exit", "l2_exit_l0", "l2_exit_l1", "wakeup_l2",
         "wakeup_l1")


def hist_v4(h):
    h["p99_9_ns"] = h.pop("p99.9_ns")
    if not h["count"]:
        for k in ("min_ns", "p50_ns", "p90_ns", "p99_ns", "p99_9_ns",
                  "max_ns"):
            h[k] = None


def to_v4(doc):
    """Schema 3 -> 4: p99.9_ns is p99_9_ns, null for none, stolen_by only
    the VMs that took time."""
    d = copy.deepcopy(doc)
    d["schema"] = 4
    for v in d["vms"]:
        for k in HISTS:
            if k in v["histograms"]:
                hist_v4(v["histograms"][k])
        for x in v["exits"]:
            if "histogram" in x:
                hist_v4(x["histogram"])
        for p in v["preemptors"]:
            if p["kind"] in ("idle", "none"):
                p["pid"] = p["comm"] = None
            for k, none in (("vm", 0), ("vcpu", -1), ("cpu", -1)):
                if p[k] == none:
                    p[k] = None
            if p["kind"] not in ("vm", "same_vm"):
                p["vm"] = p["vcpu"] = None
        sb = v["stolen_by"]
        v["stolen_by"] = {
            "host_ns": sb.pop("host"),
            "vms": sorted(({"id": int(k), "stolen_ns": n}
                           for k, n in sb.items() if n),
                          key=lambda e: -e["stolen_ns"]),
            "other_ns": v.pop("stolen_by_other_ns", 0)}
        s = v.get("sync")
        if s and s["state"] != "ok":
            for k in ("drift_ppb", "drift_min_ppb", "drift_max_ppb",
                      "offset_ns", "bound_ns", "at_guest_ns", "host_ns",
                      "host_min_ns", "host_max_ns"):
                s[k] = None
    return d


COMMANDS = (["report"], ["report", "--json"], ["hist"], ["hist", "--ns"],
            ["export", "--prometheus", "--detail", "all"],
            ["top", "-b", "-n", "1", "-a"])


def same(r):
    """@r without the one line that differs by design: export's
    vmlat_json_schema sample, the document's schema."""
    rc, out, err = r
    return rc, re.sub(r"(?m)^vmlat_json_schema \d+\n", "", out), err


def run(ctx):
    tmp = tempfile.mkdtemp(prefix="vmlat_schema.")
    try:
        _run(ctx, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(ctx, tmp):
    names = fixture_names()
    for name in names:
        doc = load(name)
        if doc["schema"] != 3:
            continue
        v4 = os.path.join(tmp, name + ".json")
        with open(v4, "w", encoding="utf-8") as f:
            json.dump(to_v4(doc), f)
        for cmd in COMMANDS:
            r3 = same(ctx.run(["-f", fixture(name)] + cmd))
            r4 = same(ctx.run(["-f", v4] + cmd))
            ctx.check(r3[0] == 0 and r3 == r4, "schema.v3_as_v4.%s.%s" %
                      (name, "_".join(c.strip("-") for c in cmd[:2])),
                      (r3[0], r3[2], r4[0], r4[2]))
    # Two reads of one VM, one in each schema (a module upgraded between
    # them is not a case; a command reading a mix must not fail).
    rc, _, err = ctx.run(["-f", fixture("contention-1"), "-f",
                          os.path.join(tmp, "contention-2.json"), "report",
                          "-d", "1"])
    ctx.check(rc == 0, "schema.mixed_reads", err)

    try:
        jsonschema = debian_import("jsonschema")
    except ImportError as e:
        ctx.skip("schema.file_valid", "python3-jsonschema: %s" % e)
        return
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.Draft202012Validator
    try:
        cls.check_schema(schema)
        ok, why = True, ""
    except jsonschema.SchemaError as e:
        ok, why = False, e.message
    ctx.check(ok, "schema.file_valid", why)
    val = cls(schema)
    # The schema is not a formality: a schema 3 document, and schema 4
    # ones with one thing of schema 3 left in, fail it.
    base = load("contention-2")
    bad = {"schema_3": base}
    v4 = to_v4(base)
    b = copy.deepcopy(v4)
    b["vms"][0]["histograms"]["preempt"]["p99.9_ns"] = 1
    bad["dotted_key"] = b
    b = copy.deepcopy(v4)
    b["vms"][0]["stolen_by"]["vms"].append({"id": 99, "stolen_ns": 0})
    bad["stolen_by_zero"] = b
    b = copy.deepcopy(v4)
    [p for p in b["vms"][0]["preemptors"] if p["kind"] == "host"][0][
        "vcpu"] = -1
    bad["minus_one_for_none"] = b
    for k, d in bad.items():
        errs = list(val.iter_errors(d))
        ctx.check(errs, "schema.rejects.%s" % k, "valid, should not be")
