#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""vmlat_cmd_unit.py BIN - the vmlat command's tests on JSON documents
recorded from real runs (tests/fixtures/, see record-fixtures): each
t_*.py module's run(ctx) checks one part against Python's own reading
of the same documents (and, for export and plot, against promtool,
node_exporter and pngcheck). TAP; ends with "N passed, N failed"."""
import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cmdtest import Ctx  # noqa: E402


def main():
    if len(sys.argv) != 2:
        print("usage: %s VMLAT_BINARY" % sys.argv[0], file=sys.stderr)
        return 2
    ctx = Ctx(os.path.abspath(sys.argv[1]))
    print("TAP version 13")
    only = os.environ.get("VMLAT_CMD_TESTS", "").split()
    for f in sorted(os.listdir(HERE)):
        if not (f.startswith("t_") and f.endswith(".py")):
            continue
        if only and f[2:-3] not in only:
            continue
        print("# %s" % f)
        try:
            importlib.import_module(f[:-3]).run(ctx)
        except Exception as e:  # one module's crash is its failure
            ctx.check(False, "%s.runs" % f[2:-3], repr(e))
    print("1..%d" % ctx.n)
    print("%d passed, %d failed%s" % (
        ctx.passed, ctx.failed,
        ", %d skipped" % ctx.skipped if ctx.skipped else ""))
    return 1 if ctx.failed else 0


if __name__ == "__main__":
    sys.exit(main())
