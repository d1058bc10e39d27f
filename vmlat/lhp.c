// SPDX-License-Identifier: GPL-2.0
/*
 * Lock-holder preemption, suspected: a vCPU is preempted inside a
 * critical section of its guest kernel, and another vCPU of the same VM
 * spins on the lock it holds. A CPU with pause-loop exiting (Intel) or a
 * pause filter (AMD) makes such a spinner exit with PAUSE after a burst
 * of PAUSE instructions: KVM then yields the spinner's CPU to a
 * preempted sibling (kvm_vcpu_on_spin()). KVM does not say which vCPU
 * holds the lock, and neither can vmlat: every sibling preempted at the
 * spinner's exit is a suspect.
 *
 * The spinner's PAUSE exit counts itself on each preempted sibling
 * (vmlat_lhp_spin()); a preemption that ends with such counts is a
 * suspected lock-holder preemption of that vCPU, with its duration, the
 * spins it caused and who held its CPU the longest meanwhile, the
 * preemptor the charging names (charge.h). The siblings are the VM's
 * vCPUs by id, delivery's table (records.h: struct vmlat_vm_irq), walked
 * up to the highest id the VM has: KVM's own walk in kvm_vcpu_on_spin()
 * reads every vCPU of the VM too, twice.
 *
 * A guest with Hyper-V's enlightenments may say so itself instead:
 * HvNotifyLongSpinWait, which KVM answers with the same yield, counts as
 * a PAUSE exit does (vmlat_on_kvm_hv_hypercall()).
 *
 * Where the CPU has neither feature (QEMU's emulated SVM lacks the pause
 * filter), or KVM runs the VM with PAUSE in the guest
 * (KVM_CAP_X86_DISABLE_EXITS), a spinner that does not call never exits:
 * nothing is counted.
 */
#include <linux/atomic.h>
#include <linux/string.h>

#include "lhp.h"
#include "records.h"
#include "vmlat_trace.h"

/**
 * vmlat_lhp_spin() - a PAUSE exit of @vc, or its long-spin-wait call: a
 * spinner
 * @vc:	the spinning vCPU
 *
 * Context: kvm_exit or kvm_hv_hypercall tracepoint in @vc's thread,
 * preemption disabled: the records read are freed only after a grace
 * period (records.c).
 */
void vmlat_lhp_spin(struct vmlat_vcpu *vc)
{
	struct vmlat_vm *vm = vc->vm;
	/* Pairs with the cmpxchg of vmlat_vm_irq(). */
	struct vmlat_vm_irq *q = smp_load_acquire(&vm->irq);
	unsigned int i, end;

	if (!q)
		return;
	end = min_t(unsigned int, READ_ONCE(q->ids_end), VMLAT_IRQ_IDS);
	for (i = 0; i < end; i++) {
		struct vmlat_vcpu *s = READ_ONCE(q->by_id[i]);

		if (s && s != vc && s->vm == vm &&
		    READ_ONCE(s->acct.state) == VMLAT_PREEMPTED)
			atomic_inc(&s->spun_on);
	}
}

/**
 * vmlat_lhp_preempted() - @vc was preempted: no spin counted on it yet
 * @vc:	the vCPU
 *
 * A spinner that found @vc preempted just before its last preemption
 * ended may count on it after vmlat_lhp_done() took the counts; such a
 * late count is not this preemption's. Writes nothing when there is none.
 *
 * Context: sched_switch, @vc's lock held, before @vc's state says
 * preempted: a count cleared after it could be this preemption's.
 */
void vmlat_lhp_preempted(struct vmlat_vcpu *vc)
{
	if (unlikely(atomic_read(&vc->spun_on)))
		atomic_set(&vc->spun_on, 0);
}

/**
 * vmlat_lhp_done() - a preemption of @vc ended
 * @vc:	the vCPU
 * @ns:	how long it lasted
 * @by:	who held its CPU the longest meanwhile
 *
 * Context: sched_switch, @vc's lock held.
 * Return: the PAUSE exits (and calls) of siblings during it; 0: not
 * suspected.
 */
unsigned int vmlat_lhp_done(struct vmlat_vcpu *vc, u64 ns,
			    const struct vmlat_by *by)
{
	struct vmlat_lhp *l = &vc->lhp;
	/* Pairs with the release in vmlat_records_reset(). */
	u32 gen = smp_load_acquire(&vmlat_reset_gen);
	unsigned int spins;

	if (likely(!atomic_read(&vc->spun_on)))
		return 0;
	spins = atomic_xchg(&vc->spun_on, 0);
	if (!spins)
		return 0;
	if (l->reset_gen != gen) {
		memset(l, 0, sizeof(*l));
		l->reset_gen = gen;
	}
	l->count++;
	l->ns += ns;
	l->spins += spins;
	if (ns > l->max_ns) {
		l->max_ns = ns;
		l->max_by = *by;
	}
	return spins;
}

/**
 * vmlat_lhp_event() - the trace event of a suspected lock-holder preemption
 * @vc:		the preempted vCPU
 * @ns:		the preemption's duration
 * @spins:	its siblings' PAUSE exits (and calls) meanwhile
 * @by:		who held its CPU the longest meanwhile
 */
void vmlat_lhp_event(struct vmlat_vcpu *vc, u64 ns, unsigned int spins,
		     const struct vmlat_by *by)
{
	trace_vmlat_lock_holder(vc->vm->pid, vc->idx, ns, spins, by);
}

/**
 * vmlat_lhp_read() - a copy of @vc's suspected lock-holder preemptions
 * @vc:	the vCPU
 * @l:	the copy, zero if a reset came after its last one
 *
 * Context: @vc's lock held.
 */
void vmlat_lhp_read(struct vmlat_vcpu *vc, struct vmlat_lhp *l)
{
	*l = vc->lhp;
	/* Pairs with the release in vmlat_records_reset(). */
	if (l->reset_gen != smp_load_acquire(&vmlat_reset_gen))
		memset(l, 0, sizeof(*l));
}

/**
 * vmlat_lhp_add() - @l's figures added to @sum's, the longest's preemptor kept
 * @sum:	a VM's, say
 * @l:		one of its vCPUs'
 */
void vmlat_lhp_add(struct vmlat_lhp *sum, const struct vmlat_lhp *l)
{
	sum->count += l->count;
	sum->ns += l->ns;
	sum->spins += l->spins;
	if (l->max_ns > sum->max_ns) {
		sum->max_ns = l->max_ns;
		sum->max_by = l->max_by;
	}
}
