/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The events vmlat's probes (probes.c) hand over, one function each
 * (events.c). Context: the tracepoint each is named after.
 */
#ifndef _VMLAT_EVENTS_H
#define _VMLAT_EVENTS_H

#include <linux/types.h>

#include "charge.h"
#include "tasks.h"

struct kvm_vcpu;
struct task_struct;

struct vmlat_report;
struct vmlat_vcpu;

int vmlat_events_init(void);
void vmlat_vcpu_report(struct vmlat_vcpu *vc, struct vmlat_report *r,
		       u64 start, u64 now);
/*
 * The probes of the three events of every exit round trip, with their
 * events' code inlined (events.c): prototypes exactly as the tracepoints
 * declare them, as probes.c's.
 */
void vmlat_probe_kvm_entry(void *data, struct kvm_vcpu *vcpu,
			   bool force_immediate_exit);
void vmlat_probe_kvm_entry_v1(void *data, struct kvm_vcpu *vcpu);
void vmlat_probe_kvm_exit(void *data, struct kvm_vcpu *vcpu, u32 isa);
void vmlat_probe_kvm_exit_v0(void *data, unsigned int exit_reason,
			     struct kvm_vcpu *vcpu, u32 isa);
void vmlat_probe_kvm_userspace_exit(void *data, __u32 reason, int errno);
void vmlat_on_halt_poll_ns(bool grow, unsigned int vcpu_id, unsigned int old);
void vmlat_on_vcpu_wakeup(u64 ns, bool waited, bool valid);
void vmlat_on_mmu_get_page(void);
void vmlat_on_nested_vmexit_inject(void);
void vmlat_on_kvm_hv_hypercall(u16 code, bool extra);
void vmlat_on_kvm_hypercall(unsigned long nr, unsigned long a0,
			    unsigned long a1, unsigned long a2,
			    unsigned long a3);
/*
 * The scheduler's events come from every task of the host, most of them
 * no vCPU thread: the probes (probes.c) ask these gates inline, so that
 * such an event costs a byte of the task filter (tasks.h) or two, and no
 * call. An event let through on another task's byte (the same filter
 * bucket) costs what it did before the gates: the vmlat_on_sched_*()
 * function looks the tasks up and does nothing.
 */

/*
 * Whether a switch from @prev to @next may be vmlat's: either may be a
 * vCPU thread, or a vCPU waits on this CPU (then what runs is charged).
 * Context: sched_switch, this runqueue's lock held (charge.h).
 */
static __always_inline bool vmlat_switch_may_count(const struct task_struct *prev,
						   const struct task_struct *next)
{
	return vmlat_task_maybe(prev) || vmlat_task_maybe(next) ||
	       vmlat_cpu_has_victims();
}

void vmlat_on_sched_switch(bool preempt, struct task_struct *prev,
			   struct task_struct *next, unsigned int prev_state);
void vmlat_on_sched_waking(struct task_struct *p);
void vmlat_on_sched_wakeup(struct task_struct *p);
void vmlat_on_sched_migrate(struct task_struct *p, int dest_cpu);
void vmlat_on_sched_exit(struct task_struct *p);

#endif /* _VMLAT_EVENTS_H */
