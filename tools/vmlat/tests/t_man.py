# SPDX-License-Identifier: GPL-2.0
"""The man pages (make man: vmlat(8) from Documentation/vmlat-command.rst,
vmlat(4) from Documentation/vmlat.rst) and make install: they build, the
same bytes twice, render without a warning of groff or man, vmlat(8)
documents every command and option the -h texts list, vmlat(4) every
debugfs file and module parameter of the module; make install puts the
command, the man pages and the completion where they belong."""
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

from cmdtest import HERE
from helptext import Help

SRC = os.path.normpath(os.path.join(HERE, ".."))
TOP = os.path.normpath(os.path.join(SRC, "..", ".."))
PAGES = ("vmlat.8", "vmlat.4")
SECTIONS_8 = ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "FILES",
              "EXAMPLES", "SEE ALSO")
SECTIONS_4 = ("NAME", "SYNOPSIS", "DESCRIPTION", "FILES", "SEE ALSO")


def make(args, env=None):
    """make -C tools/vmlat ARGS, as from a shell: no make above it (its
    flags, its jobserver) and none of the Makefile's variables set."""
    e = {k: v for k, v in os.environ.items() if k not in (
        "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "OUTPUT",
        "DESTDIR", "prefix", "mandir", "bashcompdir", "PYTHON")}
    if env:
        e.update(env)
    p = subprocess.run(["make", "-s", "-C", SRC] + args, env=e,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300)
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")


def unroff(s):
    """A line of rst2man's roff as text: fonts dropped, escapes read."""
    s = re.sub(r"^\.(B|BI|I|IR|BR|SH|SS)\s+", "", s)
    s = re.sub(r"\\f[BIRP]", "", s)
    for roff, text in ((r"\ ", " "), (r"\-", "-"), (r"\(aq", "'"),
                       (r"\(dq", '"'), (r"\(ga", "`"), (r"\e", "\\"),
                       (r"\&", "")):
        s = s.replace(roff, text)
    return s.strip()


def roff_sections(roff):
    """{.SH title: [lines]} of a page, in order, and {.SH title: option
    tags}: the options of each .TP tag (an option list's item)."""
    sections, tags = {}, {}
    cur = None
    lines = roff.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".SH "):
            cur = unroff(line)
            sections[cur] = []
            tags[cur] = set()
            continue
        if cur is None:
            continue
        sections[cur].append(line)
        if line == ".TP" and i + 1 < len(lines):
            tag = unroff(lines[i + 1])
            tags[cur].update(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)",
                                        tag))
    return sections, tags


def render(ctx, path, name):
    """Render PATH with groff as man(1) does (tbl, preconv), every
    warning on; and with man -l if there is one. The text (no
    overstriking), or None."""
    if not shutil.which("groff"):
        ctx.skip("%s.renders" % name, "no groff (groff-base)")
        return None
    p = subprocess.run(["groff", "-t", "-k", "-man", "-Tutf8", "-ww",
                        "-P-cbou", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    err = p.stderr.decode("utf-8", "replace")
    ctx.check(p.returncode == 0 and not err, "%s.renders" % name,
              "groff: exit %d: %s" % (p.returncode, err[:400]))
    if shutil.which("man"):
        m = subprocess.run(["man", "-l", "-Tutf8", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=dict(os.environ, MANWIDTH="80"), timeout=60)
        err = m.stderr.decode("utf-8", "replace")
        ctx.check(m.returncode == 0 and not err, "%s.man_l" % name,
                  "man -l: exit %d: %s" % (m.returncode, err[:400]))
    else:
        ctx.skip("%s.man_l" % name, "no man (man-db)")
    return p.stdout.decode("utf-8", "replace")


def check_vmlat8(ctx, roff, text, help_):
    sections, tags = roff_sections(roff)
    missing = [s for s in SECTIONS_8 if s not in sections]
    ctx.check(not missing, "man.vmlat8.sections",
              "no %s in %s" % (missing, list(sections)))
    ctx.check(re.search(r"^VMLAT\(8\)", text, re.M) and
              re.search(r"^NAME\n +vmlat - \S", text, re.M),
              "man.vmlat8.name", text[:300])
    synopsis = "\n".join(unroff(l) for l in sections.get("SYNOPSIS", []))
    for cmd in help_.commands:
        ctx.check(cmd.upper() in sections and
                  re.search(r"^%s$" % cmd.upper(), text, re.M),
                  "man.vmlat8.command.%s" % cmd,
                  "no section %s" % cmd.upper())
        # "-f FILE..." for a command of several reads, "-f FILE" for one
        ctx.check(re.search(r"vmlat \[-f FILE\](\.\.\.)? %s\b" % cmd,
                            synopsis), "man.vmlat8.synopsis.%s" % cmd,
                  synopsis[:400])
    # Global options in OPTIONS; a command's in its section (or, like
    # -f and -h, among the global ones).
    glob = tags.get("OPTIONS", set())
    missing = sorted(help_.globals - glob)
    ctx.check(not missing, "man.vmlat8.options",
              "vmlat -h lists %s, OPTIONS documents %s" % (missing,
                                                          sorted(glob)))
    for cmd in help_.commands:
        have = tags.get(cmd.upper(), set()) | glob
        missing = sorted(help_.options[cmd] - have)
        ctx.check(not missing, "man.vmlat8.options.%s" % cmd,
                  "vmlat %s -h lists %s, the man page's %s documents %s" %
                  (cmd, missing, cmd.upper(),
                   sorted(tags.get(cmd.upper(), set()))))


def check_vmlat4(ctx, roff, text):
    sections, _ = roff_sections(roff)
    missing = [s for s in SECTIONS_4 if s not in sections]
    ctx.check(not missing, "man.vmlat4.sections",
              "no %s in %s" % (missing, list(sections)))
    ctx.check(re.search(r"^VMLAT\(4\)", text, re.M),
              "man.vmlat4.name", text[:200])
    # Every file the module makes in debugfs has a subsection, every
    # module parameter is named (but the test build's, in its #ifdef
    # VMLAT_TEST_BUILD: vmlat/test_build.h).
    files, params = set(), set()
    for d in ("debugfs", "vmlat"):
        for root, _, names in os.walk(os.path.join(TOP, d)):
            for n in names:
                if not n.endswith(".c"):
                    continue
                with open(os.path.join(root, n), encoding="utf-8") as f:
                    c = re.sub(r"^#ifdef VMLAT_TEST_BUILD\n.*?^#(?:else|endif)",
                               "", f.read(), flags=re.M | re.S)
                files.update(re.findall(r'debugfs_create_file\("(\w+)"',
                                        c))
                params.update(re.findall(
                    r"^module_param(?:_named|_cb)?\((\w+),", c, re.M))
    subs = {unroff(l) for l in roff.splitlines() if l.startswith(".SS ")}
    missing = sorted(files - subs)
    ctx.check(files and not missing, "man.vmlat4.debugfs_files",
              "no subsection for %s (of %s)" % (missing, sorted(files)))
    missing = sorted(p for p in params if not re.search(r"\b%s\b" % p,
                                                        text))
    ctx.check(params and not missing, "man.vmlat4.module_params",
              "%s not in vmlat(4) (of %s)" % (missing, sorted(params)))


def check_install(ctx, tmp, out):
    """make install DESTDIR=... prefix=/usr with the binary under test
    (make -o: not rebuilt)."""
    binary = os.path.join(out, "vmlat")
    shutil.copy2(ctx.bin, binary)
    dest = os.path.join(tmp, "dest")
    rc, msg = make(["OUTPUT=" + out, "-o", binary, "install",
                    "DESTDIR=" + dest, "prefix=/usr"])
    ctx.check(rc == 0, "install.runs", msg)
    if rc:
        return
    inst = os.path.join(dest, "usr/sbin/vmlat")
    with open(inst, "rb") as a, open(ctx.bin, "rb") as b:
        same = a.read() == b.read()
    ctx.check(same and os.stat(inst).st_mode & 0o777 == 0o755,
              "install.binary", "%s: not the binary, or not 0755" % inst)
    for page, sect in (("vmlat.8", "man8"), ("vmlat.4", "man4")):
        gz = os.path.join(dest, "usr/share/man", sect, page + ".gz")
        ok, why = os.path.isfile(gz), "no %s" % gz
        if ok:
            with open(gz, "rb") as f:
                head = f.read(10)
            with gzip.open(gz) as f, open(os.path.join(out, page),
                                          "rb") as g:
                same = f.read() == g.read()
            # gzip -n: no name (FLG 0) and no time (MTIME 0) in the header.
            ok = (same and head[3] == 0 and head[4:8] == b"\0\0\0\0" and
                  os.stat(gz).st_mode & 0o777 == 0o644)
            why = "%s: same %s, header %r, mode %o" % (
                gz, same, head, os.stat(gz).st_mode & 0o777)
        ctx.check(ok, "install.%s" % page.replace(".", ""), why)
    comp = os.path.join(dest, "usr/share/bash-completion/completions/vmlat")
    ok = os.path.isfile(comp)
    if ok:
        with open(comp, "rb") as a, open(os.path.join(
                SRC, "completion", "vmlat"), "rb") as b:
            ok = a.read() == b.read() and \
                os.stat(comp).st_mode & 0o777 == 0o644
    ctx.check(ok, "install.completion", "%s: missing or not the file"
              % comp)
    found = sorted(os.path.relpath(os.path.join(r, n), dest)
                   for r, _, ns in os.walk(dest) for n in ns)
    ctx.check(found == sorted([
        "usr/sbin/vmlat", "usr/share/man/man8/vmlat.8.gz",
        "usr/share/man/man4/vmlat.4.gz",
        "usr/share/bash-completion/completions/vmlat"]),
        "install.nothing_else", found)


def run(ctx):
    if not shutil.which("make"):
        ctx.skip("man.builds", "no make")
        return
    help_ = Help(ctx)
    tmp = tempfile.mkdtemp(prefix="vmlat-man-")
    try:
        a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        rc, msg = make(["OUTPUT=" + a, "man"])
        if rc and "no docutils" in msg:
            ctx.skip("man.builds", "no docutils: install python3-docutils")
            return
        ctx.check(rc == 0 and all(os.path.isfile(os.path.join(a, p))
                                  for p in PAGES), "man.builds", msg)
        if rc:
            return
        # Another build, elsewhere, later: the same bytes.
        rc, msg = make(["OUTPUT=" + b, "man"])
        for p in PAGES:
            with open(os.path.join(a, p), "rb") as f, \
                    open(os.path.join(b, p), "rb") as g:
                x, y = f.read(), g.read()
            ctx.check(rc == 0 and x == y and tmp.encode() not in x,
                      "man.reproducible.%s" % p.replace(".", ""),
                      "%s: two builds differ (or name the build directory)"
                      % p if rc == 0 else msg)
        # SOURCE_DATE_EPOCH is the date of the page.
        c = os.path.join(tmp, "c.8")
        mkman = [sys.executable, os.path.join(SRC, "man", "mkman"),
                 "--version", "9.9", os.path.join(SRC, "man", "vmlat.8.rst"),
                 c]
        p = subprocess.run(mkman, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, env=dict(
                               os.environ, SOURCE_DATE_EPOCH="31536000"))
        th = ""
        if p.returncode == 0:
            with open(c) as f:
                th = re.search(r"^\.TH .*$", f.read(), re.M).group(0)
        ctx.check(th == '.TH "VMLAT" 8 "1971-01-01" "vmlat 9.9" '
                  '"System Manager\'s Manual"', "man.source_date_epoch",
                  th or p.stdout)

        for page, check in (("vmlat.8", check_vmlat8),
                            ("vmlat.4", check_vmlat4)):
            path = os.path.join(a, page)
            text = render(ctx, path, "man." + page.replace(".", ""))
            with open(path, encoding="utf-8") as f:
                roff = f.read()
            if text is None:
                continue
            if check is check_vmlat8:
                check(ctx, roff, text, help_)
            else:
                check(ctx, roff, text)
        check_install(ctx, tmp, a)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
