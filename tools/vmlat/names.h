/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VM names: a VMM's pid to its libvirt domain name or QEMU's -name and
 * its UUID, its vCPU threads to their names ("CPU 0/KVM").
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
 * uuid_arg() - the UUID of @len bytes at @s, the form QEMU's -uuid and
 * libvirt's <uuid> take (8-4-4-4-12 hex digits; blanks around it are
 * dropped), lowercase into @buf (at least 37 bytes); 0, or -1 if it is
 * not one.
 */
int uuid_arg(const char *s, size_t len, char *buf, size_t n);

/*
 * kubevirt_name() - the namespace and name of a KubeVirt VM from its
 * libvirt domain's name, "<namespace>_<name>": a DNS-1123 label, '_', a
 * DNS-1123 subdomain (neither has a '_'); 0, or -1 if @domain is not of
 * that form.
 */
int kubevirt_name(const char *domain, char *ns, size_t nns, char *name,
		  size_t nname);

/*
 * names_resolve() - fill in the name of every VM of @s (its comm when
 * it has none), whether libvirt named it, its UUID, and its vCPUs'
 * thread names. A VM is named by its libvirt domain (a pid file in
 * $VMLAT_LIBVIRT_RUN, default /run/libvirt/qemu, read once per call; its
 * UUID from the domain's status file <domain>.xml there), else by QEMU's
 * -name in its command line ($VMLAT_PROC, default /proc); its UUID, if
 * not libvirt's, is QEMU's -uuid there. Names seen once are kept for VMs
 * that exit later (a cache the caller keeps across reads). A VM whose
 * names the document carries (vmlat save) keeps them.
 */
void names_resolve(struct snap *s);

#endif /* VMLAT_NAMES_H */
