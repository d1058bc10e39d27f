# SPDX-License-Identifier: GPL-2.0
"""VM names: QEMU's -name in its forms, libvirt's pid files first, the
comm when there is neither; vCPU threads named "CPU N/KVM"."""
import os
import shutil
import tempfile

from cmdtest import fixture, load

FORMS = [
    (["-name", "guest=web1,debug-threads=on"], "web1"),
    (["-name", "web2"], "web2"),
    (["-name", "web3,debug-threads=on"], "web3"),
    (["-name", "debug-threads=on,guest=web4"], "web4"),
    (["-name", "guest=a,,b,process=x"], "a,b"),
    (["--name", "guest=web6"], "web6"),
    (["-name=web7"], "web7"),
    (["-m", "64"], None),
]


def run(ctx):
    doc = load("contention-2")
    vm = [v for v in doc["vms"] if v["pid"] == 190][0]
    tmp = tempfile.mkdtemp(prefix="vmlat_names.")
    try:
        for args, want in FORMS:
            d = os.path.join(tmp, "proc", "190")
            shutil.rmtree(os.path.join(tmp, "proc"), ignore_errors=True)
            os.makedirs(d)
            with open(os.path.join(d, "cmdline"), "wb") as f:
                f.write(b"\0".join(x.encode() for x in
                                   ["qemu-system-x86_64"] + args) + b"\0")
            rc, out, _ = ctx.run(["-f", fixture("contention-2"), "top", "-b",
                                  "-n", "1", "-a", "-p", "190"],
                                 env={"VMLAT_PROC": os.path.join(tmp, "proc"),
                                      "VMLAT_LIBVIRT_RUN": tmp + "/none"})
            rows = [ln.split()[0] for ln in out.splitlines()[2:] if ln]
            exp = want or vm["comm"]
            # top's default layout cuts a name at 13 columns, with a '+'
            exp = exp if len(exp) <= 13 else exp[:12] + "+"
            ctx.check(rc == 0 and rows == [exp], "names.%s" %
                      " ".join(args).replace(" ", "_"), (rows, exp))
        lv = os.path.join(tmp, "libvirt")
        os.makedirs(lv)
        with open(os.path.join(lv, "prod-web.pid"), "w") as f:
            f.write("190\n")
        rc, out, _ = ctx.run(["-f", fixture("contention-2"), "top", "-b",
                              "-n", "1", "-p", "190"],
                             env={"VMLAT_LIBVIRT_RUN": lv})
        rows = [ln.split()[0] for ln in out.splitlines()[2:] if ln]
        ctx.check(rows == ["prod-web"], "names.libvirt_domain_first", rows)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # db2's vCPU, a preemptor of web1's, is named by its thread's name
    # when it has one: web1 runs with debug-threads=on, so shop-db sees
    # "VM web1 (CPU 0/KVM)".
    rc, out, _ = ctx.run(["-f", fixture("contention-2"), "report",
                          "shop-db"])
    ctx.check(rc == 0 and "VM web1 (CPU 0/KVM)" in out,
              "names.vcpu_thread_names", out[-400:])
