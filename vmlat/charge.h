/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Preemption charging: who ran while a vCPU waited for its CPU ([P0]
 * Algorithms 1-2, online as in the digest's §6.2).
 *
 * While a vCPU is preempted or woken-but-waiting, it is a "victim" on the
 * CPU whose queue holds it; at every context switch on that CPU, the task
 * that just ran is charged the time it ran since the victim started
 * waiting: to the victim VM's top preemptors and stolen_by tables, and, if
 * it is the longest slice so far, as who the interval is attributed to.
 * The CPU's idle task is no preemptor: its time (the CPU waking up for a
 * woken vCPU) is charged as kind "idle" of that CPU, in no stolen_by table.
 */
#ifndef _VMLAT_CHARGE_H
#define _VMLAT_CHARGE_H

#include <linux/percpu.h>
#include <linux/spinlock.h>

#include "records.h"

#define VMLAT_MAX_VICTIMS	16

/* A CPU's queue: vCPUs waiting on it, and when it last switched. */
struct vmlat_cpu {
	raw_spinlock_t lock;
	u64 last_switch_ns;
	unsigned int nr_victims;
	struct vmlat_vcpu *victims[VMLAT_MAX_VICTIMS];
};

DECLARE_PER_CPU(struct vmlat_cpu, vmlat_cpus);

/*
 * Whether a vCPU waits on this CPU. Victims are only added to a CPU's list
 * under its runqueue's lock (sched_switch, sched_wakeup,
 * sched_migrate_task), so in sched_switch none can appear meanwhile.
 */
static __always_inline bool vmlat_cpu_has_victims(void)
{
	return this_cpu_read(vmlat_cpus.nr_victims);
}

void vmlat_charge_switch(struct task_struct *prev, struct vmlat_vcpu *pv,
			 bool runnable, u64 now);
void vmlat_victim_leave(struct vmlat_vcpu *vc, struct vmlat_by *by);
void vmlat_victim_woken(struct vmlat_vcpu *vc, int cpu, u64 now);
void vmlat_victim_migrate(struct vmlat_vcpu *vc, int dest_cpu);
int vmlat_charge_init(void);

#endif /* _VMLAT_CHARGE_H */
