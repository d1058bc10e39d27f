/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VM names: a VMM's pid to its libvirt domain name or QEMU's -name, its
 * vCPU threads to their names ("CPU 0/KVM").
 */
#ifndef VMLAT_NAMES_H
#define VMLAT_NAMES_H

#include <stddef.h>

struct snap;

/*
 * qemu_name_arg() - the guest name of a QEMU -name option's value
 * ("guest=web1,debug-threads=on", "web1", "a,,b" is "a,b") into @buf;
 * 0, or -1 if it names none.
 */
int qemu_name_arg(const char *arg, char *buf, size_t n);

/*
 * vm_name_of() - @pid's VM name into @buf: its libvirt domain (a pid file
 * in $VMLAT_LIBVIRT_RUN, default /run/libvirt/qemu), else QEMU's -name
 * in its command line ($VMLAT_PROC, default /proc); 0, or -1 (not a
 * named VM, or gone).
 */
int vm_name_of(int pid, char *buf, size_t n);

/*
 * names_resolve() - fill in the name of every VM of @s (its comm when
 * it has none) and its vCPUs' thread names. Names seen once are kept
 * for VMs that exit later (a cache the caller keeps across reads).
 */
void names_resolve(struct snap *s);

#endif /* VMLAT_NAMES_H */
