// SPDX-License-Identifier: GPL-2.0
/*
 * Preemption charging (charge.h). Locks: a CPU's victim list lock, then
 * (in vmlat_charge()) the victim VM's lock; never the other way round.
 * Wake-ups take a CPU's lock in hard IRQ context, so it is taken with
 * IRQs off wherever they may be on.
 */
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/smp.h>

#include "charge.h"

DEFINE_PER_CPU(struct vmlat_cpu, vmlat_cpus);

/*
 * Charge @by, which ran @ns on @cpu, to @victim, which waited there.
 * @cpu's idle task is no task that took the CPU: the CPU was waking up
 * for the vCPU (idle exit, IPI). That is the kind "idle", per CPU,
 * nameless, and in no stolen_by table (it preempted nobody).
 * Context: @cpu's victim list lock held.
 */
static void vmlat_charge(struct vmlat_vcpu *victim, struct task_struct *by,
			 int cpu, u64 ns)
{
	struct vmlat_vm *vm = victim->vm;
	bool idle = is_idle_task(by);
	struct vmlat_vcpu *byvc = idle ? NULL : vmlat_vcpu_of(by);
	pid_t pid = idle ? 0 : by->pid;
	struct vmlat_preemptor *p;
	u8 kind = VMLAT_BY_HOST;
	unsigned int slot;
	bool fresh;

	if (idle)
		kind = VMLAT_BY_IDLE;
	else if (byvc)
		kind = byvc->vm == vm ? VMLAT_BY_SAME_VM : VMLAT_BY_VM;

	/* The interval's longest slice: what its trace event names. */
	if (ns > victim->iv_by.ns) {
		struct vmlat_by *b = &victim->iv_by;

		b->kind = kind;
		b->pid = pid;
		b->vm_pid = byvc ? byvc->vm->pid : 0;
		b->vcpu = byvc ? byvc->idx : -1;
		b->ns = ns;
		b->as = byvc ? vmlat_as_event_key(READ_ONCE(byvc->acct.as.key)) :
			       0;
		if (idle)
			b->comm[0] = '\0';
		else
			vmlat_copy_comm(b->comm, by->comm);
	}

	raw_spin_lock(&vm->lock);
	if (byvc)
		vmlat_topk_add(&vm->by_vm, byvc->vm->id, ns, &fresh);
	else if (!idle)
		vm->stolen_by_host += ns;
	slot = vmlat_topk_add(&vm->top, vmlat_preemptor_key(kind, pid, cpu),
			      ns, &fresh);
	p = &vm->preemptors[slot];
	if (fresh) {
		p->kind = kind;
		p->pid = pid;
		p->vm_pid = byvc ? byvc->vm->pid : 0;
		p->vcpu = byvc ? byvc->idx : -1;
		p->cpu = idle ? cpu : -1;
	}
	/*
	 * The name it has now, at each slice: a task first seen between its
	 * fork and its exec, or renamed since, shows its new name.
	 */
	if (idle)
		p->comm[0] = '\0';
	else
		vmlat_copy_comm(p->comm, by->comm);
	raw_spin_unlock(&vm->lock);
}

static void vmlat_by_none(struct vmlat_by *b, int cpu)
{
	memset(b, 0, sizeof(*b));
	b->kind = VMLAT_BY_NONE;
	b->cpu = cpu;
	b->vcpu = -1;
}

/*
 * @vc waits on @cpu from @now; @by: who ran so far in this interval (it
 * moved from another CPU), or NULL: the interval begins.
 * Context: @c->lock held.
 */
static void vmlat_victim_add(struct vmlat_cpu *c, int cpu,
			     struct vmlat_vcpu *vc, u64 now,
			     const struct vmlat_by *by)
{
	if (vc->victim_cpu >= 0)
		return;
	if (c->nr_victims >= VMLAT_MAX_VICTIMS) {
		atomic64_inc(&vmlat_stats.dropped_victims);
		return;
	}
	c->victims[c->nr_victims++] = vc;
	vc->victim_cpu = cpu;
	vc->victim_since_ns = now;
	if (by) {
		vc->iv_by = *by;
		vc->iv_by.cpu = cpu;
	} else {
		vmlat_by_none(&vc->iv_by, cpu);
	}
}

/* Context: @c->lock held. */
static void vmlat_victim_del(struct vmlat_cpu *c, struct vmlat_vcpu *vc)
{
	unsigned int i;

	for (i = 0; i < c->nr_victims; i++) {
		if (c->victims[i] == vc) {
			c->victims[i] = c->victims[--c->nr_victims];
			break;
		}
	}
	vc->victim_cpu = -1;
}

/**
 * vmlat_victim_leave() - @vc waits on no CPU any more
 * @vc:	a vCPU
 * @by:	if not NULL: set to who ran the longest slice where it waited
 */
void vmlat_victim_leave(struct vmlat_vcpu *vc, struct vmlat_by *by)
{
	int cpu = READ_ONCE(vc->victim_cpu);
	unsigned long flags;
	struct vmlat_cpu *c;

	if (by)
		vmlat_by_none(by, cpu);
	if (cpu < 0)
		return;
	c = per_cpu_ptr(&vmlat_cpus, cpu);
	raw_spin_lock_irqsave(&c->lock, flags);
	if (vc->victim_cpu == cpu) {
		if (by)
			*by = vc->iv_by;
		vmlat_victim_del(c, vc);
	}
	raw_spin_unlock_irqrestore(&c->lock, flags);
}

/**
 * vmlat_charge_switch() - a context switch on this CPU
 * @prev:	the task that ran: charged to every vCPU waiting here
 * @pv:		its vCPU record, or NULL
 * @runnable:	@prev stays on the runqueue: @pv begins to wait here
 * @now:	the switch's time
 *
 * Charges prev for its time on this CPU to every vCPU that waited here
 * meanwhile, next included: so call it before next leaves the list.
 *
 * Context: sched_switch, runqueue lock held, IRQs off.
 */
void vmlat_charge_switch(struct task_struct *prev, struct vmlat_vcpu *pv,
			 bool runnable, u64 now)
{
	struct vmlat_cpu *c = this_cpu_ptr(&vmlat_cpus);
	int cpu = smp_processor_id();
	unsigned int i;
	u64 from;

	raw_spin_lock(&c->lock);
	for (i = 0; i < c->nr_victims; i++) {
		from = max(c->last_switch_ns, c->victims[i]->victim_since_ns);
		if (now > from)
			vmlat_charge(c->victims[i], prev, cpu, now - from);
	}
	c->last_switch_ns = now;
	if (pv && runnable)
		vmlat_victim_add(c, cpu, pv, now, NULL);
	raw_spin_unlock(&c->lock);
}

/**
 * vmlat_victim_woken() - a woken vCPU waits on @cpu's queue from @now
 * @vc:		the vCPU
 * @cpu:	the CPU whose queue holds it
 * @now:	when its wait began (its sched_waking)
 *
 * Context: sched_wakeup, that runqueue's lock held.
 */
void vmlat_victim_woken(struct vmlat_vcpu *vc, int cpu, u64 now)
{
	struct vmlat_cpu *c = per_cpu_ptr(&vmlat_cpus, cpu);

	raw_spin_lock(&c->lock);
	vmlat_victim_add(c, cpu, vc, now, NULL);
	raw_spin_unlock(&c->lock);
}

/**
 * vmlat_victim_migrate() - a waiting vCPU moves to @dest_cpu's queue
 * @vc:		the vCPU, waiting on some CPU
 * @dest_cpu:	where it goes; what ran so far goes with it
 *
 * Context: sched_migrate_task, runqueue locks held.
 */
void vmlat_victim_migrate(struct vmlat_vcpu *vc, int dest_cpu)
{
	u64 since = READ_ONCE(vc->victim_since_ns);
	struct vmlat_by by;
	struct vmlat_cpu *c;

	vmlat_victim_leave(vc, &by);
	c = per_cpu_ptr(&vmlat_cpus, dest_cpu);
	raw_spin_lock(&c->lock);
	vmlat_victim_add(c, dest_cpu, vc, max(since, vmlat_now_ns()), &by);
	raw_spin_unlock(&c->lock);
}

/* Context: process context, before any probe is attached. */
int vmlat_charge_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		raw_spin_lock_init(&per_cpu_ptr(&vmlat_cpus, cpu)->lock);
	return 0;
}
