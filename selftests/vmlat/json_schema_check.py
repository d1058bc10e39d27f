#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""json_schema_check.py DIR - check each DIR/*.json but schema.json, a
document of vmlat's a test read, against DIR/schema.json (a copy of
Documentation/vmlat-json.schema.json), with Debian's python3-jsonschema.

Run by vmlat_ktest.run_suite() at the end of a suite, natively when it
can (tools/testhost/native-runner.py). Prints one JSON object: {"checked":
N, "errors": ["FILE: message at /path", ...] (the first 5)}; exit status
0, or 2 if it could not check (no jsonschema, no schema).
"""
import glob
import json
import os
import sys


def jsonschema_module():
    try:
        import jsonschema
    except ImportError:
        # A python3 earlier in PATH (pyenv's) does not look in Debian's
        # directory.
        sys.path.append("/usr/lib/python3/dist-packages")
        import jsonschema
    return jsonschema


def main(d):
    try:
        js = jsonschema_module()
    except ImportError as e:
        print(json.dumps({"checked": 0, "errors": [], "why": str(e)}))
        return 2
    with open(os.path.join(d, "schema.json"), encoding="utf-8") as f:
        v = js.Draft202012Validator(json.load(f))
    checked, errors = 0, []
    for p in sorted(glob.glob(os.path.join(d, "*.json"))):
        if os.path.basename(p) == "schema.json":
            continue
        with open(p, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
        checked += 1
        for e in v.iter_errors(doc):
            if len(errors) < 5:
                errors.append("%s: %s at /%s" % (
                    os.path.basename(p), e.message[:200],
                    "/".join(str(x) for x in e.path)))
            break
    print(json.dumps({"checked": checked, "errors": errors}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
