# SPDX-License-Identifier: GPL-2.0
"""The 1024-VM document of the export's series budget test (t_export.py)
and benchmark (bench_export.py): fixtures/fleet-1024.json.xz, derived from
the recorded many-VMs document by make-fleet-fixture; and a libvirt run
directory that names its VMs as KubeVirt's libvirt names them, each with
a UUID of its own."""
import json
import lzma
import os
import uuid

import cmdtest

FLEET = os.path.join(cmdtest.FIXTURES, "fleet-1024.json.xz")
NR_NAMESPACES = 16

STATUS_XML = """<!--
WARNING: THIS IS AN AUTO-GENERATED FILE. CHANGES TO IT ARE LIKELY TO BE
OVERWRITTEN AND LOST.
-->

<domstatus state='running' reason='booted' pid='%(pid)d'>
  <monitor path='/var/run/kubevirt-private/libvirt/qemu/lib/domain-%(id)d-%(name)s/monitor.sock' type='unix'/>
  <vcpus>
    <vcpu id='0' pid='%(tid)d'/>
  </vcpus>
  <domain type='kvm' id='%(id)d'>
    <name>%(name)s</name>
    <uuid>%(uuid)s</uuid>
    <memory unit='KiB'>65536</memory>
  </domain>
</domstatus>
"""


def fleet_doc(tmp):
    """(path, document): the 1024-VM document decompressed into TMP."""
    with lzma.open(FLEET, "rb") as f:
        text = f.read()
    path = os.path.join(tmp, "fleet-1024.json")
    with open(path, "wb") as f:
        f.write(text)
    return path, json.loads(text)


def fleet_domain(vm):
    """The libvirt domain name and UUID that fleet_libvirt() gives VM."""
    name = "tenant-%02d_vm-%04d" % (vm["id"] % NR_NAMESPACES, vm["id"])
    return name, str(uuid.uuid5(uuid.NAMESPACE_URL, "vmlat-fleet/" + name))


def fleet_libvirt(tmp, doc):
    """A libvirt run directory in TMP naming every VM of DOC: a pid file
    and a status file each; its path."""
    d = os.path.join(tmp, "libvirt")
    os.makedirs(d, exist_ok=True)
    for vm in doc["vms"]:
        name, u = fleet_domain(vm)
        with open(os.path.join(d, name + ".pid"), "w") as f:
            f.write("%d" % vm["pid"])
        with open(os.path.join(d, name + ".xml"), "w") as f:
            f.write(STATUS_XML % {"pid": vm["pid"], "id": vm["id"],
                                  "name": name, "uuid": u,
                                  "tid": vm["vcpus"][0]["tid"]})
    return d
