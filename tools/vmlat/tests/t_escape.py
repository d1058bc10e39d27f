# SPDX-License-Identifier: GPL-2.0
"""Names are any bytes their owner chose: a process's comm, a VM's QEMU
-name, a vCPU thread's name. A local user can put terminal escape
sequences in them. Every output of the command that names them (report,
top -b and -w, hist, export) shows a control character (C0, DEL, C1) or a byte
that is not UTF-8 as '?', as ps(1) does, and still shows the rest."""
import json
import os
import re
import shutil
import tempfile

from cmdtest import FIXTURES, load

# Colour, clear the screen, set the window title, and C1's CSI (U+009B).
VM_COMM = "red\x1b[31mX"
HOST_COMM = "clr\x1b[2J\x9b1m"
QEMU_NAME = b"web\x1b]0;pwned\x07\xff1"
THREAD = b"CPU 0/KVM\x1b[5m"

# Any C0 but tab and newline, DEL, or a C1 (as UTF-8: 0xc2 0x80-0x9f).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def shown(name, bad="?"):
    """@name (str, or bytes as the command reads them) as it must show,
    ill-formed UTF-8 as @bad (the export's is U+FFFD: its format is
    UTF-8, and the name stays valid as Python's decoder reads it)."""
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace").replace("\ufffd", bad)
    return CONTROL.sub("?", name)


def run(ctx):
    doc = load("contention-2")
    vm = [v for v in doc["vms"] if v["pid"] == 206][0]
    vm["comm"] = VM_COMM
    host = [p for v in doc["vms"] for p in v["preemptors"]
            if p["kind"] == "host"]
    for p in host:
        p["comm"] = HOST_COMM
    tmp = tempfile.mkdtemp(prefix="vmlat_escape.")
    try:
        path = os.path.join(tmp, "doc.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        proc = os.path.join(tmp, "proc")
        shutil.copytree(os.path.join(FIXTURES, "proc"), proc)
        with open(os.path.join(proc, "190", "cmdline"), "wb") as f:
            f.write(b"\0".join([b"qemu-system-x86_64", b"-name",
                                b"guest=" + QEMU_NAME]) + b"\0")
        with open(os.path.join(proc, "190", "task", "196", "comm"),
                  "wb") as f:
            f.write(THREAD + b"\n")
        env = {"VMLAT_PROC": proc, "VMLAT_LIBVIRT_RUN": tmp + "/none"}
        outs = {
            "report": ["report"],
            "top": ["top", "-b", "-n", "1", "-a"],
            "top -w": ["top", "-b", "-n", "1", "-a", "-w"],
            "hist": ["hist", "-k", "preempt"],
            "export": ["export", "--prometheus"],
        }
        want = {
            # its table cuts names at 16 bytes
            "report": [shown(VM_COMM), shown(QEMU_NAME)[:16],
                       "host task " + shown(HOST_COMM),
                       "VM %s (%s)" % (shown(QEMU_NAME), shown(THREAD))],
            # its default layout cuts names at 13 columns, with a '+'
            "top": [shown(VM_COMM), shown(QEMU_NAME)[:12] + "+"],
            "top -w": [shown(VM_COMM), shown(QEMU_NAME)],
            "hist": ["# " + shown(VM_COMM) + " (pid 206",
                     "# " + shown(QEMU_NAME) + " (pid 190"],
            "export": ['vm="%s"' % shown(VM_COMM),
                       'vm="%s"' % shown(QEMU_NAME, "\ufffd")],
        }
        for cmd, args in outs.items():
            rc, out, err = ctx.run(["-f", path] + args, env=env)
            bad = CONTROL.findall(out)
            missing = [w for w in want[cmd] if w not in out]
            ctx.check(rc == 0 and not bad and not missing,
                      "escape.%s" % cmd.replace(" -", "_"),
                      "exit %d, control characters %r, names not shown %r: "
                      "%s" % (rc, bad[:5], missing, err))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
