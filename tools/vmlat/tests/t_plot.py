# SPDX-License-Identifier: GPL-2.0
"""vmlat plot: the files it writes (as many as it says, named for the VMs
Python's own reading of the fixture finds), PNGs that the real image tool
pngcheck accepts at the size asked, SVGs that parse as XML and name every
VM, delta plots, and its errors."""
import copy
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import xml.etree.ElementTree as ET

import cmdtest

FIXTURES = ["contention-2", "nested-sync", "many-vms"]
KINDS = cmdtest.doc_names("VMLAT_HIST_KINDS")
NESTED_KINDS = cmdtest.doc_names("VMLAT_NESTED_HISTS")
GNUPLOT_MISSING = "vmlat: gnuplot not found: install it (apt install gnuplot-nox)"
SVG = "{http://www.w3.org/2000/svg}"

# plot.c's sizes: every plot 1000 wide; a histogram 600 high; the time
# share plot 150 + 18 per VM high, within [600, 4800].
PLOT_W, HIST_H = 1000, 600


def timeshare_h(nr_vms):
    return min(max(150 + 18 * nr_vms, 600), 4800)


def qemu_name(arg):
    """The guest name of QEMU's -name value, or None."""
    opts = arg.split(",")
    for o in opts:
        if o.startswith("guest="):
            return o[6:] or None
    return opts[0] if opts and opts[0] and "=" not in opts[0] else None


def resolved_names(doc):
    """VM (id, pid) -> name, resolved from the fixture's libvirt pid files
    and /proc as vmlat resolves them: a live VM's libvirt domain, else its
    QEMU -name, else (and for a VM that has exited) its comm."""
    libvirt = {}
    d = os.path.join(cmdtest.FIXTURES, "libvirt")
    for f in os.listdir(d):
        if f.endswith(".pid"):
            with open(os.path.join(d, f)) as fh:
                libvirt[int(fh.read().strip())] = f[:-4]
    names = {}
    for v in doc["vms"]:
        name = v["comm"]
        if not v.get("exited"):
            if v["pid"] in libvirt:
                name = libvirt[v["pid"]]
            else:
                path = os.path.join(cmdtest.FIXTURES, "proc", str(v["pid"]),
                                    "cmdline")
                if os.path.exists(path):
                    with open(path, "rb") as fh:
                        args = fh.read().decode("utf-8", "replace").split("\0")
                    for i, a in enumerate(args[:-1]):
                        if a in ("-name", "--name") and qemu_name(args[i + 1]):
                            name = qemu_name(args[i + 1])
                            break
        names[(v["id"], v["pid"])] = name
    return names


def safe(name):
    """[A-Za-z0-9._-] kept, any other byte '_'."""
    return "".join(chr(b) if re.match(rb"[A-Za-z0-9._-]", bytes([b])) else "_"
                   for b in name.encode("utf-8"))


def nested(v):
    return len(v["nested"]["vcpus"]) > 0


def shown_kinds(v, counts):
    """The kinds plotted for VM @v, given each kind's count."""
    kinds = KINDS + (NESTED_KINDS if nested(v) else [])
    return [k for k in kinds if counts.get(k, 0) > 0]


def expected_files(doc, names, ext, counts=None):
    """timeshare.EXT, then a hist file per VM with a kind to plot."""
    files = ["timeshare." + ext]
    for v in doc["vms"]:
        c = counts[(v["id"], v["pid"])] if counts else \
            {k: h["count"] for k, h in v["histograms"].items()}
        if shown_kinds(v, c):
            files.append("hist-%s-%d-%d.%s" % (safe(names[(v["id"], v["pid"])]),
                                               v["pid"], v["id"], ext))
    return files


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def svg_texts(path):
    """The <text>s of the SVG at @path; none if it does not parse."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return []
    return ["".join(t.itertext()) for t in root.iter(SVG + "text")]


def run_plot(ctx, name, args, tmp):
    """Run vmlat ARGS -o TMP; (status, listed paths, stderr), and check
    that the listed files are exactly those in TMP."""
    rc, out, err = ctx.run(args + ["-o", tmp])
    ctx.check(rc == 0, "%s.exit" % name, "exit %d: %s" % (rc, err))
    listed = [l for l in out.splitlines() if l]
    missing = [p for p in listed if not os.path.isfile(p)]
    ctx.check(listed and not missing, "%s.listed_exist" % name,
              "missing %s of %s" % (missing, listed))
    there = sorted(os.listdir(tmp))
    ctx.check(sorted(os.path.basename(p) for p in listed) == there and
              len(set(listed)) == len(listed) and
              all(os.path.dirname(p) == tmp for p in listed),
              "%s.listed_are_all" % name,
              "listed %s, there %s" % (listed, there))
    return rc, listed, err


def png_problem(path, size):
    """Why the PNG at @path is not a valid image of @size, or None."""
    pngcheck = shutil.which("pngcheck")
    if not pngcheck:
        return "pngcheck is not installed"
    p = subprocess.run([pngcheck, path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    out = p.stdout.decode("utf-8", "replace").strip()
    if p.returncode or "OK" not in out:
        return out
    got = png_size(path)
    if got != size:
        return "%s: %s, not %s" % (os.path.basename(path), got, size)
    return None


def svg_problem(path, size):
    """Why the SVG at @path is not an SVG document of @size, or None."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        return "%s: %s" % (os.path.basename(path), e)
    if root.tag != SVG + "svg":
        return "%s: root %s" % (os.path.basename(path), root.tag)
    got = (root.get("width"), root.get("height"))
    if got != (str(size[0]), str(size[1])):
        return "%s: %s, not %s" % (os.path.basename(path), got, size)
    return None


def check_fixture(ctx, fixture, ext):
    doc = cmdtest.load(fixture)
    names = resolved_names(doc)
    name = "plot.%s.%s" % (fixture, ext)
    tmp = tempfile.mkdtemp(prefix="vmlat-plot-")
    try:
        args = ["-f", cmdtest.fixture(fixture), "plot"]
        if ext == "svg":
            args += ["-t", "svg"]
        rc, listed, _ = run_plot(ctx, name, args, tmp)
        if rc:
            return
        want = expected_files(doc, names, ext)
        got = [os.path.basename(p) for p in listed]
        ctx.check(sorted(got) == sorted(want), "%s.files" % name,
                  "got %s, want %s" % (got, want))

        ts = os.path.join(tmp, "timeshare." + ext)
        ts_size = (PLOT_W, timeshare_h(len(doc["vms"])))
        problem = png_problem if ext == "png" else svg_problem
        bad = [problem(os.path.join(tmp, f), ts_size if f == "timeshare." + ext
                       else (PLOT_W, HIST_H)) for f in got]
        bad = [b for b in bad if b]
        ctx.check(not bad, "%s.%s" % (name, "pngcheck_and_size" if ext == "png"
                                      else "xml_and_size"),
                  "%d of %d: %s" % (len(bad), len(got), bad[:3]))
        if ext != "svg" or not os.path.isfile(ts):
            return

        texts = svg_texts(ts)
        unnamed = sorted({n for n in names.values()
                          if not any(n in t for t in texts)})
        ctx.check(not unnamed, "%s.timeshare_names" % name,
                  "not in the plot: %s" % unnamed)
        wrong, absent = [], []
        for v in doc["vms"]:
            f = "hist-%s-%d-%d.svg" % (safe(names[(v["id"], v["pid"])]),
                                       v["pid"], v["id"])
            if f not in got:
                continue
            texts = svg_texts(os.path.join(tmp, f))
            says = any("l2_exit_l0" in t for t in texts)
            if says != nested(v):
                wrong.append("%s (nested %s)" % (f, nested(v)))
            c = {k: h["count"] for k, h in v["histograms"].items()}
            absent += ["%s: %s %d" % (f, k, c[k]) for k in shown_kinds(v, c)
                       if not any(t.startswith("%s %d," % (k, c[k])) or
                                  (" %s %d," % (k, c[k])) in t
                                  for t in texts)]
        ctx.check(not wrong, "%s.nested_kinds" % name,
                  "l2_exit_l0 where it does not belong, or missing: %s" % wrong)
        ctx.check(not absent, "%s.title_counts" % name,
                  "not in the titles: %s" % absent[:5])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def delta_expect(a, b):
    """For a plot -d between documents @a and @b: the VMs plotted (those
    of @b but the ones that had exited by @a), their names (a name seen
    in @a is kept, as vmlat keeps it for a VM that exits) and counts."""
    before = {(v["id"], v["pid"]): v for v in a["vms"]}
    names = resolved_names(b)
    names.update({k: n for k, n in resolved_names(a).items() if k in names})
    vms = [v for v in b["vms"]
           if not before.get((v["id"], v["pid"]), {}).get("exited")]
    counts = {}
    for v in vms:
        va = before.get((v["id"], v["pid"]))
        counts[(v["id"], v["pid"])] = {
            k: h["count"] - (va["histograms"][k]["count"] if va else 0)
            for k, h in v["histograms"].items()}
    return dict(b, vms=vms), names, counts


def check_delta(ctx, first, second):
    a, b = cmdtest.load(first), cmdtest.load(second)
    doc, names, counts = delta_expect(a, b)
    name = "plot.delta.%s.%s" % (first, second)
    tmp = tempfile.mkdtemp(prefix="vmlat-plot-")
    try:
        rc, listed, _ = run_plot(ctx, name, [
            "-f", cmdtest.fixture(first), "-f", cmdtest.fixture(second),
            "plot", "-d", "1", "-t", "svg"], tmp)
        if rc:
            return
        want = expected_files(doc, names, "svg", counts)
        got = [os.path.basename(p) for p in listed]
        ctx.check(sorted(got) == sorted(want), "%s.files" % name,
                  "got %s, want %s" % (got, want))
        ts = os.path.join(tmp, "timeshare.svg")
        bad = svg_problem(ts, (PLOT_W, timeshare_h(len(doc["vms"]))))
        ctx.check(not bad, "%s.xml_and_size" % name, bad)
        texts = svg_texts(ts)
        secs = "%.2f s" % ((b["now_ns"] - a["now_ns"]) / 1e9)
        ctx.check(any(secs in t for t in texts), "%s.window" % name,
                  "no %r in %s" % (secs, [t for t in texts if "vCPU" in t]))

        def labelled(v):
            label = "%s (pid %d" % (names[(v["id"], v["pid"])], v["pid"])
            return any(t.startswith(label) for t in texts)

        missing = [names[(v["id"], v["pid"])] for v in doc["vms"]
                   if not labelled(v)]
        left_out = [names[(v["id"], v["pid"])] for v in b["vms"]
                    if v not in doc["vms"] and labelled(v)]
        ctx.check(not missing and not left_out, "%s.timeshare_vms" % name,
                  "missing %s; there, though exited before: %s" %
                  (missing, left_out))
        # each kind's count in the window, not since load
        absent = []
        for v in doc["vms"]:
            f = "hist-%s-%d-%d.svg" % (safe(names[(v["id"], v["pid"])]),
                                       v["pid"], v["id"])
            if f not in got:
                continue
            c = counts[(v["id"], v["pid"])]
            texts = svg_texts(os.path.join(tmp, f))
            absent += ["%s: %s %d" % (f, k, c[k]) for k in shown_kinds(v, c)
                       if not any(t.startswith("%s %d," % (k, c[k])) or
                                  (" %s %d," % (k, c[k])) in t
                                  for t in texts)]
        ctx.check(not absent, "%s.title_counts" % name,
                  "not in the titles: %s" % absent[:5])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_filter_and_names(ctx):
    """A VM filter, and names that are hard on gnuplot, XML and files."""
    tmp = tempfile.mkdtemp(prefix="vmlat-plot-")
    try:
        out = os.path.join(tmp, "web1")
        rc, listed, _ = run_plot(ctx, "plot.filter", [
            "-f", cmdtest.fixture("contention-2"), "plot", "web1"], out)
        got = sorted(os.path.basename(p) for p in listed)
        ctx.check(got == ["hist-web1-190-1.png", "timeshare.png"],
                  "plot.filter.files", got)
        if got:
            bad = png_problem(os.path.join(out, "timeshare.png"),
                              (PLOT_W, timeshare_h(1)))
            ctx.check(not bad, "plot.filter.pngcheck_and_size", bad)

        doc = cmdtest.load("contention-2")
        odd = ["it's \"q\" \\ & <b>", "tab\there", "\u00e9t\u00e9 \u2603",
               "{a}_b^c@d", "\ufffdx", "-rf .."]
        vms = []
        for i, comm in enumerate(odd):
            v = copy.deepcopy(doc["vms"][2 + i % 3])
            v.update(id=100 + i, pid=9000 + i, comm=comm)
            vms.append(v)
        doc["vms"] = vms
        src = os.path.join(tmp, "odd.json")
        with open(src, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        out = os.path.join(tmp, "odd")
        rc, listed, _ = run_plot(ctx, "plot.odd_names",
                                 ["-f", src, "plot", "-t", "svg"], out)
        want = ["timeshare.svg"] + ["hist-%s-%d-%d.svg" % (safe(c), 9000 + i,
                                                           100 + i)
                                    for i, c in enumerate(odd)]
        got = [os.path.basename(p) for p in listed]
        ctx.check(sorted(got) == sorted(want), "plot.odd_names.files",
                  "got %s, want %s" % (got, want))
        ts = os.path.join(out, "timeshare.svg")
        if os.path.isfile(ts):
            bad = svg_problem(ts, (PLOT_W, timeshare_h(len(odd))))
            ctx.check(not bad, "plot.odd_names.xml_and_size", bad)
            texts = svg_texts(ts)
            # a control character is drawn as '?'
            missing = [c for c in odd
                       if not any(c.replace("\t", "?") in t for t in texts)]
            ctx.check(not missing, "plot.odd_names.in_svg",
                      "not in the plot: %r" % missing)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_errors(ctx):
    tmp = tempfile.mkdtemp(prefix="vmlat-plot-")
    fix = cmdtest.fixture("contention-2")
    try:
        for args, what in ((["-t", "gif"], "type"), (["-d", "soon"], "duration"),
                           (["-d", "0"], "zero_duration"), (["a", "b"], "args")):
            out = os.path.join(tmp, what)
            rc, so, err = ctx.run(["-f", fix, "plot", "-o", out] + args)
            ctx.check(rc == 2 and len(err.splitlines()) == 1 and
                      err.startswith("vmlat: ") and not so and
                      not os.path.exists(out), "plot.usage.%s" % what,
                      "exit %d, stderr %r, stdout %r" % (rc, err, so))

        out = os.path.join(tmp, "nogp")
        rc, so, err = ctx.run(["-f", fix, "plot", "-o", out],
                              env={"PATH": "/nonexistent"})
        ctx.check(rc == 1 and err.strip() == GNUPLOT_MISSING and not so and
                  not os.path.exists(out), "plot.no_gnuplot",
                  "exit %d, stderr %r" % (rc, err))

        plain = os.path.join(tmp, "file")
        with open(plain, "w") as f:
            f.write("not a directory\n")
        for out, what in ((plain, "not_dir"),
                          (os.path.join(plain, "sub"), "under_file")):
            rc, so, err = ctx.run(["-f", fix, "plot", "-o", out])
            ctx.check(rc == 1 and len(err.splitlines()) == 1 and
                      err.startswith("vmlat: plot: ") and not so,
                      "plot.dir.%s" % what, "exit %d, stderr %r" % (rc, err))

        rc, so, err = ctx.run(["-f", fix, "plot", "-o", tmp, "nosuch"])
        ctx.check(rc == 1 and len(err.splitlines()) == 1 and not so,
                  "plot.no_such_vm", "exit %d, stderr %r" % (rc, err))

        rc, so, err = ctx.run(["plot", "-h"])
        ctx.check(rc == 0 and so.startswith("usage: vmlat plot"),
                  "plot.help", "exit %d, stdout %r" % (rc, so))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(ctx):
    for fixture in FIXTURES:
        for ext in ("png", "svg"):
            check_fixture(ctx, fixture, ext)
    check_delta(ctx, "contention-1", "contention-2")
    # vm-a, vm-b and vm-hog had exited by the first: left out
    check_delta(ctx, "contention-exited", "nested-sync")
    check_filter_and_names(ctx)
    check_errors(ctx)
