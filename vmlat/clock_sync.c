// SPDX-License-Identifier: GPL-2.0
/*
 * The host side of the clock-sync hypercall: see clock_sync.h. The
 * decisions are core/sync_call.c's; this adds the VM's lock.
 */
#include "clock_sync.h"

/**
 * vmlat_vm_sync_init() - a new VM: no exchange, no mapping
 * @s:	its sync state
 */
void vmlat_vm_sync_init(struct vmlat_vm_sync *s)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&s->lock, flags);
	vmlat_sync_data_init(&s->d);
	vmlat_as_name_gate_init(&s->names);
	vmlat_steal_gate_init(&s->steal);
	raw_spin_unlock_irqrestore(&s->lock, flags);
	atomic64_set(&s->exits, 0);
	atomic64_set(&s->exit_ns, 0);
}

/**
 * vmlat_vm_sync_clear_stats() - zero the counters, keep the mapping
 * @s:	a VM's sync state
 */
void vmlat_vm_sync_clear_stats(struct vmlat_vm_sync *s)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&s->lock, flags);
	vmlat_sync_data_clear_stats(&s->d);
	vmlat_as_name_gate_clear_stats(&s->names);
	vmlat_steal_gate_clear_stats(&s->steal);
	raw_spin_unlock_irqrestore(&s->lock, flags);
	atomic64_set(&s->exits, 0);
	atomic64_set(&s->exit_ns, 0);
}

/**
 * vmlat_vm_sync_call() - a sync hypercall of the VM's guest
 * @s:		the VM's sync state
 * @a:		the call
 * @now:	the host time of the call
 * @x:		set to the exchange the call completed; seq 0 if none
 *
 * Context: kvm_hypercall tracepoint, a vCPU thread of the VM.
 * Return: the reply for the guest's RBX, or 0 for none
 * (vmlat_sync_data_call()).
 */
u64 vmlat_vm_sync_call(struct vmlat_vm_sync *s,
		       const struct vmlat_sync_args *a, u64 now,
		       struct vmlat_sync_xchg *x)
{
	unsigned long flags;
	u64 reply;

	raw_spin_lock_irqsave(&s->lock, flags);
	reply = vmlat_sync_data_call(&s->d, a, now, x);
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return reply;
}

/**
 * vmlat_vm_sync_copy() - a consistent copy, for readers
 * @s:		a VM's sync state
 * @copy:	the copy
 */
void vmlat_vm_sync_copy(struct vmlat_vm_sync *s,
			struct vmlat_vm_sync_data *copy)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&s->lock, flags);
	*copy = s->d;
	raw_spin_unlock_irqrestore(&s->lock, flags);
}

/**
 * vmlat_vm_name_gate() - a name hypercall of the VM's guest, checked
 * @s:		the VM's sync state
 * @a:		the call
 * @now:	the host time of the call
 *
 * Context: kvm_hypercall tracepoint, a vCPU thread of the VM.
 * Return: vmlat_as_name_gate()'s.
 */
u64 vmlat_vm_name_gate(struct vmlat_vm_sync *s,
		       const struct vmlat_as_name_args *a, u64 now)
{
	unsigned long flags;
	u64 reply;

	raw_spin_lock_irqsave(&s->lock, flags);
	reply = vmlat_as_name_gate(&s->names, a, now);
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return reply;
}

/**
 * vmlat_vm_name_gate_copy() - the gate's counters, for readers
 * @s:		a VM's sync state
 * @copy:	the copy
 */
void vmlat_vm_name_gate_copy(struct vmlat_vm_sync *s,
			     struct vmlat_as_name_gate *copy)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&s->lock, flags);
	*copy = s->names;
	raw_spin_unlock_irqrestore(&s->lock, flags);
}

/**
 * vmlat_vm_steal_gate() - a steal call of the VM's guest, checked
 * @s:		the VM's sync state
 * @page:	the page asked for
 * @cpl:	the privilege level of the call; < 0: unknown
 * @allowed:	whether the host allows the VM the call
 * @now:	the host time of the call
 *
 * Context: kvm_hypercall tracepoint, a vCPU thread of the VM.
 * Return: vmlat_steal_gate()'s.
 */
u64 vmlat_vm_steal_gate(struct vmlat_vm_sync *s, u64 page, int cpl,
			bool allowed, u64 now)
{
	unsigned long flags;
	u64 reply;

	raw_spin_lock_irqsave(&s->lock, flags);
	reply = vmlat_steal_gate(&s->steal, page, cpl, allowed, now);
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return reply;
}

/**
 * vmlat_vm_steal_gate_copy() - the gate's counters, for readers
 * @s:		a VM's sync state
 * @copy:	the copy
 */
void vmlat_vm_steal_gate_copy(struct vmlat_vm_sync *s,
			      struct vmlat_steal_gate *copy)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&s->lock, flags);
	*copy = s->steal;
	raw_spin_unlock_irqrestore(&s->lock, flags);
}
