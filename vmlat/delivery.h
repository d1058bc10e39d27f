/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interrupt delivery latency (delivery.c): when each interrupt for a
 * vCPU became pending, and when the vCPU entered the guest with it.
 * Context: the tracepoint each function is named after, preemption off.
 */
#ifndef _VMLAT_DELIVERY_H
#define _VMLAT_DELIVERY_H

#include <linux/types.h>

#include "irq.h"

struct hrtimer;
struct kvm_vcpu;
struct vmlat_vcpu;

void vmlat_on_apic_accept_irq(u32 vcpu_id, u16 dm, u8 vec);
void vmlat_on_inj_virq(unsigned int vec, bool reinjected);
void vmlat_on_irq_source(void);
void vmlat_on_hrtimer_expire(struct hrtimer *t);
void vmlat_on_wait_lapic_expire(u32 vcpu_id, s64 delta);
void vmlat_delivery_entry(struct vmlat_vcpu *vc, u64 now);
void vmlat_delivery_learn(struct kvm_vcpu *vcpu);
void vmlat_delivery_forget(void);

/* kvm_entry of @vc at @now: deliveries, if it has interrupts pending. */
static __always_inline void vmlat_delivery_check(struct vmlat_vcpu *vc,
						 struct vmlat_irq_pend *p,
						 u64 now)
{
	if (unlikely(vmlat_irq_pend_busy(p)))
		vmlat_delivery_entry(vc, now);
}

#endif /* _VMLAT_DELIVERY_H */
