/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest's own steal (hypercall version 4, hypercall/vmlat_hypercall.h):
 * which VMs the host's operator lets ask (the knob guest_steal), and the
 * answer to a call, made of the calling vCPU's and VM's figures only.
 */
#ifndef _VMLAT_GUEST_STEAL_H
#define _VMLAT_GUEST_STEAL_H

#include <linux/types.h>

struct kvm_vcpu;
struct vmlat_vcpu;

/* At most this many VMs listed: the knob's value fits a line. */
#define VMLAT_GUEST_STEAL_MAX_PIDS	16

int vmlat_guest_steal_set(char *s);
int vmlat_guest_steal_show(char *buf, size_t size);
void vmlat_guest_steal_exit(void);
u64 vmlat_guest_steal_call(struct vmlat_vcpu *vc, struct kvm_vcpu *vcpu,
			   u64 page, int cpl);

#endif /* _VMLAT_GUEST_STEAL_H */
