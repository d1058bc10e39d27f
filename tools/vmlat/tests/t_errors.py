# SPDX-License-Identifier: GPL-2.0
"""Documents the command cannot read: each one line that says what to
do, exit status 1. Wrong options: one line, exit status 2."""
import json
import os
import re
import tempfile

from cmdtest import HERE, fixture, fixture_names, load


def module_schema():
    """The schema the module writes (vmlat/core/doc_names.h), and the
    oldest the command reads: the recorded fixtures' (made by an older
    module)."""
    with open(os.path.join(HERE, "..", "..", "..", "vmlat", "core",
                           "doc_names.h"),
              encoding="utf-8") as f:
        newest = int(re.search(r"#define VMLAT_JSON_SCHEMA\s+(\d+)",
                               f.read()).group(1))
    return min(load(n)["schema"] for n in fixture_names()), newest


OLDEST, NEWEST = module_schema()


def run(ctx):
    with open(fixture("contention-2"), encoding="utf-8") as f:
        doc = json.load(f)
    cases = []
    tmp = tempfile.mkdtemp(prefix="vmlat_errors.")
    for schema, name in ((99, "newer"), (2, "older")):
        doc["schema"] = schema
        p = os.path.join(tmp, name + ".json")
        with open(p, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        cases.append((p, "schema_%s" % name,
                      "schema %d, this command reads schemas %d to %d" %
                      (schema, OLDEST, NEWEST)))
    del doc["schema"]
    p = os.path.join(tmp, "none.json")
    with open(p, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    cases.append((p, "schema_missing", "no schema"))
    p = os.path.join(tmp, "cut.json")
    with open(p, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc)[:1000])
    cases.append((p, "truncated", "not a vmlat JSON document"))
    cases.append((os.path.join(tmp, "missing.json"), "missing_file",
                  "No such file"))
    for path, name, want in cases:
        for cmd in (["top", "-b", "-n", "1"], ["report"], ["hist"]):
            rc, out, err = ctx.run(["-f", path] + cmd)
            lines = err.strip().splitlines()
            ok = rc == 1 and len(lines) == 1 and want in lines[0] and \
                lines[0].startswith("vmlat: ")
            ctx.check(ok, "errors.%s.%s" % (name, cmd[0]), (rc, err[:300]))
    rc, _, err = ctx.run(["bogus"])
    ctx.check(rc == 2 and "no command 'bogus'" in err, "errors.no_command",
              err)
    # A wrong option: one line, worded alike by every command, status 2.
    for cmd in ("top", "report", "hist", "export", "plot"):
        rc, out, err = ctx.run(["-f", fixture("contention-2"), cmd,
                                "--bogus"])
        want = "vmlat: %s: unknown option '--bogus' (see vmlat %s -h)\n" % (
            cmd, cmd)
        ctx.check(rc == 2 and err == want and not out,
                  "errors.bad_option.%s" % cmd, (rc, err[:300]))
    # The command's version is the module's (vmlat/vmlat.h), and it says
    # which schemas of the module's JSON it reads: the module's, and the
    # fixtures' (recorded by an older module).
    with open(os.path.join(HERE, "..", "..", "..", "vmlat", "vmlat.h"),
              encoding="utf-8") as f:
        version = re.search(r'#define VMLAT_VERSION\s+"([^"]+)"',
                            f.read()).group(1)
    want = "vmlat %s (reads the module's JSON schemas %d to %d)\n" % (
        version, OLDEST, NEWEST)
    for opt in ("--version", "-V"):
        rc, out, err = ctx.run([opt])
        ctx.check(rc == 0 and out == want and not err,
                  "errors.version%s" % opt, (rc, out, err))
