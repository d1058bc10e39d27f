# SPDX-License-Identifier: GPL-2.0
"""vmlat save: the document as it was, plus the names this host gives its
VMs; read where neither the VMs' /proc nor libvirt is (another machine),
it names them as the host did. The control: the same document unsaved,
read there, shows the VMMs' comm."""
import json
import os
import shutil
import tempfile

from cmdtest import fixture, load

ADDED_VM = ("name", "libvirt", "uuid")


def strip_added(doc):
    """@doc without what save adds: the module's document again."""
    doc = json.loads(json.dumps(doc))
    doc.pop("saved", None)
    for v in doc["vms"]:
        for k in ADDED_VM:
            v.pop(k, None)
        for c in v["vcpus"]:
            c.pop("thread", None)
    return doc


def run(ctx):
    tmp = tempfile.mkdtemp(prefix="vmlat_save.")
    elsewhere = {"VMLAT_PROC": os.path.join(tmp, "no-proc"),
                 "VMLAT_LIBVIRT_RUN": os.path.join(tmp, "no-libvirt")}
    try:
        rc, out, err = ctx.run(["-f", fixture("contention-2"), "save"])
        ctx.check(rc == 0, "save.exit_0", err)
        try:
            saved = json.loads(out.encode("utf-8", "surrogateescape"))
        except ValueError as e:
            saved = None
            ctx.check(False, "save.valid_json", e)
        if saved is None:
            return
        orig = load("contention-2")
        ctx.check(strip_added(saved) == orig, "save.document_unchanged",
                  "a member of the module's document differs")
        by_pid = {v["pid"]: v for v in saved["vms"]}
        # The fixtures' host: libvirt's shop-db (pid 191, its UUID in
        # shop-db.xml), QEMU's -name web1 (pid 190); the rest unnamed.
        with open(os.path.join(os.path.dirname(fixture("x")), "libvirt",
                               "shop-db.xml")) as f:
            xml = f.read()
        uuid = xml.split("<uuid>")[1].split("</uuid>")[0].strip().lower()
        got = {p: (v.get("name"), v.get("libvirt"), v.get("uuid"))
               for p, v in by_pid.items() if p in (190, 191)}
        ctx.check(got == {190: ("web1", False, None),
                          191: ("shop-db", True, uuid)},
                  "save.names_of_this_host", got)
        unnamed = [v for p, v in by_pid.items() if p not in (190, 191)]
        ctx.check(unnamed and all("name" in v and v["name"] is None
                                  for v in unnamed),
                  "save.unnamed_vm_name_null",
                  [(v["pid"], v.get("name")) for v in unnamed])
        threads = [c.get("thread") for c in by_pid[190]["vcpus"]]
        ctx.check(threads and threads[0] == "CPU 0/KVM",
                  "save.vcpu_thread_names", threads)
        ctx.check(saved.get("saved", {}).get("by", "").startswith("vmlat "),
                  "save.saved_by", saved.get("saved"))
        path = os.path.join(tmp, "saved.json")
        with open(path, "w") as f:
            f.write(out)

        # Elsewhere: the unsaved document loses the names (the control),
        # the saved one keeps them.
        rc0, plain, _ = ctx.run(["-f", fixture("contention-2"), "report"],
                                env=elsewhere)
        rc1, named, err = ctx.run(["-f", path, "report"], env=elsewhere)
        ctx.check(rc0 == 0 and "shop-db" not in plain and
                  "web1" not in plain, "save.control_unsaved_loses_names",
                  plain[:300])
        ctx.check(rc1 == 0 and "shop-db" in named and "web1" in named and
                  "VM web1 (CPU 0/KVM)" in named,
                  "save.report_elsewhere_names", (rc1, err, named[:300]))
        rc, prom, err = ctx.run(["-f", path, "export", "--prometheus"],
                                 env=elsewhere)
        ctx.check(rc == 0 and ('uuid="%s"' % uuid) in prom and
                  'vm="shop-db"' in prom, "save.export_elsewhere_uuid",
                  (rc, err))
        # Saving a saved document again changes nothing.
        rc, again, err = ctx.run(["-f", path, "save"], env=elsewhere)
        ok = rc == 0
        if ok:
            a, b = json.loads(again), dict(saved)
            a.pop("saved", None)
            b.pop("saved", None)
            ok = a == b
        ctx.check(ok, "save.resave_keeps_names", err)

        # A name of any bytes stays a valid document, and is printed
        # escaped when read back.
        proc = os.path.join(tmp, "proc", "190")
        os.makedirs(os.path.join(proc, "task"))
        with open(os.path.join(proc, "cmdline"), "wb") as f:
            f.write(b"qemu\0-name\0guest=\x1b]0;pwned\x07ev\xffil\0")
        rc, out, err = ctx.run(["-f", fixture("contention-2"), "save"],
                               env={"VMLAT_PROC": os.path.join(tmp, "proc")})
        try:
            doc = json.loads(out.encode("utf-8", "surrogateescape")
                             .decode("utf-8"))
            name = [v for v in doc["vms"] if v["pid"] == 190][0]["name"]
        except (ValueError, UnicodeDecodeError, IndexError) as e:
            name = e
        ctx.check(rc == 0 and name == "\x1b]0;pwned\x07ev\ufffdil",
                  "save.hostile_name_valid_utf8", (rc, err, repr(name)))
        with open(path, "w") as f:
            f.write(out)
        rc, rep, err = ctx.run(["-f", path, "report"], env=elsewhere)
        ctx.check(rc == 0 and "\x1b" not in rep and "\x07" not in rep and
                  "pwned" in rep, "save.hostile_name_escaped_in_report",
                  (rc, err))

        rc, _, err = ctx.run(["-f", fixture("contention-2"), "save", "web1"])
        ctx.check(rc == 2 and "takes no VM" in err, "save.refuses_a_vm",
                  (rc, err))
        rc, out, err = ctx.run(["save", "-h"])
        ctx.check(rc == 0 and out.startswith("usage: vmlat [-f FILE] save"),
                  "save.help", (rc, out[:80]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
