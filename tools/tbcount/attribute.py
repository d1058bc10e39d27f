#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""attribute.py KO SECTIONS BLOCKS TRIPS - tbcount.so's blocks, by function

KO: the vmlat.ko the test host loaded; SECTIONS: "name address" lines,
its /sys/module/vmlat/sections; BLOCKS: tbcount.so's output; TRIPS: the
exit round trips the workload made. Prints the instructions vmlat's own
code executed per round trip, in all and by function (those of at least
0.5 a trip), on one line:

  vmlat's own code (tools/tbcount): 436 instructions an exit round trip: \
vmlat_probe_kvm_exit 203, ...
"""
import bisect
import re
import subprocess
import sys


def functions(ko, sections):
    """(start, end, name) of KO's functions, at their loaded addresses."""
    out = subprocess.run(["objdump", "-t", ko], check=True,
                         capture_output=True, text=True).stdout
    funcs = []
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) .{6}F (\S+)\s+([0-9a-f]+)\s+(\S+)$",
                     line)
        if m and m.group(2) in sections:
            start = sections[m.group(2)] + int(m.group(1), 16)
            funcs.append((start, start + max(int(m.group(3), 16), 1),
                          m.group(4)))
    return sorted(funcs)


def main():
    ko, secfile, blockfile, trips = sys.argv[1:5]
    trips = int(trips)
    sections = {}
    for line in open(secfile):
        f = line.split()
        if len(f) == 2 and f[1].startswith("0x"):
            sections[f[0]] = int(f[1], 16)
    funcs = functions(ko, sections)
    if not funcs or trips <= 0:
        sys.exit("attribute.py: no functions of %s, or no trips" % ko)
    starts = [f[0] for f in funcs]
    by = {}
    for line in open(blockfile):
        vaddr, insns, execs = line.split()
        vaddr = int(vaddr, 16)
        i = bisect.bisect_right(starts, vaddr) - 1
        if i < 0 or vaddr >= funcs[i][1]:
            continue        # another module's
        name = funcs[i][2]
        by[name] = by.get(name, 0) + int(insns) * int(execs)
    total = sum(by.values()) / trips
    parts = ["%s %.0f" % (n, c / trips)
             for n, c in sorted(by.items(), key=lambda x: -x[1])
             if c / trips >= 0.5]
    print("vmlat's own code (tools/tbcount): %.0f instructions an exit "
          "round trip: %s" % (total, ", ".join(parts)))


if __name__ == "__main__":
    main()
