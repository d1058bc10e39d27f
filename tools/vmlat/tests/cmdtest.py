# SPDX-License-Identifier: GPL-2.0
"""What the vmlat command's tests share: running the command, reading
fixtures, TAP results, Debian's Python modules."""
import importlib
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
# The module's lists of the names of its states and kinds, which the
# module and the command are built from.
DOC_NAMES = os.path.join(HERE, "..", "..", "..", "vmlat", "core",
                         "doc_names.h")
# Where Debian's python3-* packages (tools/install-deps) put their modules.
DEBIAN_DIST_PACKAGES = "/usr/lib/python3/dist-packages"


def debian_import(name):
    """Module NAME of a Debian package (python3-prometheus-client...).
    Debian installs it for its own python3; a python3 found before it on
    PATH (pyenv's, a virtualenv's) does not look in Debian's directory, so
    that directory is tried after the interpreter's own: last, adding
    modules, overriding none. ImportError if it is not there either."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if DEBIAN_DIST_PACKAGES in sys.path:
            raise
    sys.path.append(DEBIAN_DIST_PACKAGES)
    importlib.invalidate_caches()
    return importlib.import_module(name)


def doc_names(macro):
    """The names of list @macro in doc_names.h ("VMLAT_STATES": ["guest",
    "kernel", ...]), in its order: the names the document uses."""
    with open(DOC_NAMES) as f:
        text = f.read()
    m = re.search(r"#define %s\(x, sep\)((?:.*\\\n)*.*)" % macro, text)
    if not m:
        raise ValueError("%s: no list %s" % (DOC_NAMES, macro))
    return re.findall(r'x\(\w+, "([^"]+)"\)', m.group(1))


class Ctx:
    """@bin: the vmlat binary under test. check() records one result."""

    def __init__(self, binary):
        self.bin = binary
        self.n = 0
        self.passed = 0
        self.failed = 0
        self.skipped = 0

    def check(self, ok, name, why=""):
        self.n += 1
        if ok:
            self.passed += 1
            print("ok %d %s" % (self.n, name))
        else:
            self.failed += 1
            print("not ok %d %s # %s" % (self.n, name,
                                         str(why).replace("\n", " | ")[:500]))

    def skip(self, name, why):
        """Test @name cannot run here, for @why (a tool not installed)."""
        self.n += 1
        self.skipped += 1
        print("ok %d %s # SKIP %s" % (self.n, name,
                                      str(why).replace("\n", " | ")[:500]))

    def run(self, args, env=None, timeout=60, stdin=None):
        """Run vmlat ARGS; (exit status, stdout, stderr)."""
        e = dict(os.environ)
        e.setdefault("VMLAT_PROC", os.path.join(FIXTURES, "proc"))
        e.setdefault("VMLAT_LIBVIRT_RUN", os.path.join(FIXTURES, "libvirt"))
        if env:
            e.update(env)
        p = subprocess.run([self.bin] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=e, timeout=timeout,
                           input=stdin)
        return (p.returncode, p.stdout.decode("utf-8", "replace"),
                p.stderr.decode("utf-8", "replace"))


def fixture(name):
    """The path of fixture NAME (tests/fixtures/NAME.json)."""
    return os.path.join(FIXTURES, name + ".json")


def load(name):
    """Fixture NAME as Python's json reads it: the independent reading."""
    with open(fixture(name), encoding="utf-8") as f:
        return json.load(f)


def fixture_names():
    return sorted(f[:-5] for f in os.listdir(FIXTURES) if f.endswith(".json"))
