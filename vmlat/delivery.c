// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupt delivery latency: from the moment an interrupt for a vCPU
 * becomes pending to the VM entry that delivers it (core/irq.h says
 * when each is), per VM, by source and by where the target was.
 *
 * kvm_apic_accept_irq names its target by vcpu_id only, with no VM. KVM
 * delivers within a VM, so the VM is the sender's: vmlat attributes an
 * accept made in a vCPU thread of a VM it follows (an IPI, a timer, a
 * device the vCPU thread emulates or signals) to the vCPU of that id in
 * that VM (struct vmlat_vm_irq.by_id). An accept made by another thread
 * of a VMM (an I/O thread writing an irqfd, a vhost worker, which works
 * in its owner's mm) goes to the VM of that VMM's mm, if it runs one
 * VM (vmlat_vm_of_mm()). An accept made elsewhere (a kworker, a device's
 * hard IRQ, a VMM of two VMs) is counted as unattributed: the delivery
 * is not timed.
 *
 * The source: a kvm_msi_set_irq or kvm_set_irq just before, in the same
 * thread and exit, is a device's, as is any accept made by a VMM's other
 * threads; an accept for another vCPU than the
 * sender's own is an IPI; for its own, the LAPIC timer if it expired, or
 * if the exit being handled is the VMX preemption timer's (KVM's
 * hypervisor timer); anything else is "other". The LAPIC timer is pending
 * from its hrtimer's expiry (timer:hrtimer_expire_entry), which wakes or
 * kicks the vCPU: KVM accepts the interrupt only once the vCPU's thread
 * runs, so that is the wake-up latency too.
 *
 * Locking: a vCPU's pending interrupts are under its lock (records.h),
 * taken by the sender, the timer's expiry and the vCPU's own thread;
 * kvm_entry takes it only when something is pending (two loads).
 */
#include <linux/hrtimer.h>
#include <linux/kvm_host.h>
#include <linux/math64.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <asm/apicdef.h>
#include <asm/tsc.h>

#include "clock.h"
#include "delivery.h"
#include "events.h"
#include "kvm_x86.h"
#include "records.h"
#include "tasks.h"
#include "threshold.h"
#include "vmlat_trace.h"

/*
 * KVM's apic_timer_fn, read from a vCPU's LAPIC timer at its record's
 * creation: an expiring hrtimer with this function is a LAPIC timer. Only
 * compared, never called; forgotten when kvm goes.
 */
static void *vmlat_apic_timer_fn __read_mostly;

/*
 * A device interrupt is being delivered by the current vCPU thread, in
 * this exit of its vCPU: kvm_msi_set_irq or kvm_set_irq came before its
 * accepts, on this CPU.
 */
struct vmlat_irq_marker {
	const struct task_struct *task;
	u64 exits;
};

static DEFINE_PER_CPU(struct vmlat_irq_marker, vmlat_irq_marker);

/* The exits the current thread's vCPU made, or 0: a marker's age. */
static __always_inline u64 vmlat_marker_exits(const struct vmlat_vcpu *vc)
{
	return vc ? READ_ONCE(vc->acct.exits) : 0;
}

/**
 * vmlat_on_irq_source() - a device's interrupt comes (kvm_msi_set_irq,
 * kvm_set_irq): the accepts that follow in this thread are its
 */
void vmlat_on_irq_source(void)
{
	struct vmlat_irq_marker *m = this_cpu_ptr(&vmlat_irq_marker);

	if (!atomic_read(&vmlat_live_vcpus))
		return;
	m->task = current;
	m->exits = vmlat_marker_exits(vmlat_vcpu_current());
}

/*
 * Where @vc is, for an interrupt made pending now. Its thread changes its
 * state without the lock while on CPU: the exit's reason comes before the
 * state that says it is handling one (vmlat_kvm_exit()).
 *
 * Context: its lock.
 */
static __always_inline enum vmlat_irq_at vmlat_vcpu_at_now(struct vmlat_vcpu *vc)
{
	u8 state = READ_ONCE(vc->acct.state);

	/* Pairs with the write barrier of vmlat_kvm_exit()'s seqcount. */
	smp_rmb();
	return vmlat_irq_at(state, state == VMLAT_KERNEL &&
			    vmlat_exit_slot_is_hlt(READ_ONCE(vc->exit_slot)));
}

/*
 * @vc's time waiting for a CPU so far (runnable, off CPU: preempted, or
 * woken and not running yet), the wait in progress too: what a pending
 * interrupt's wait is the growth of. Those states' times, and the state
 * while in one of them, change under its lock only: the thread's own
 * lock-free writes, while on CPU, touch the other states'.
 *
 * Context: its lock, or its own thread on CPU.
 */
static u64 vmlat_vcpu_wait_ns(const struct vmlat_vcpu *vc, u64 now)
{
	u64 t[VMLAT_NR_STATES], observed;

	vmlat_acct_snapshot(&vc->acct, now, t, &observed);
	return t[VMLAT_PREEMPTED] + t[VMLAT_WAIT];
}

/* @vm's vCPU of id @id, if it has a live record. Context: a probe. */
static __always_inline struct vmlat_vcpu *
vmlat_irq_target(struct vmlat_vm *vm, u32 id)
{
	/* Pairs with the cmpxchg of vmlat_vm_irq(). */
	struct vmlat_vm_irq *q = smp_load_acquire(&vm->irq);
	struct vmlat_vcpu *vc;

	if (!q || id >= VMLAT_IRQ_IDS)
		return NULL;
	vc = READ_ONCE(q->by_id[id]);
	if (!vc || vc->vm != vm || vc->vcpu_id != id || !READ_ONCE(vc->task))
		return NULL;
	return vc;
}

/*
 * An accept's tag, for vmlat_irq_held(): the id + 1 of its sending vCPU
 * and the sender's exits then, or 0 from another thread.
 */
static __always_inline u64 vmlat_irq_tag(const struct vmlat_vcpu *sender)
{
	if (!sender)
		return 0;
	return (u64)(sender->vcpu_id + 1) << 32 |
	       (u32)vmlat_marker_exits(sender);
}

/*
 * @vc's timer on VMX's preemption timer expired, with the VM exit at
 * *@ns: KVM keeps that timer while the vCPU's thread runs in the host or
 * waits for a CPU (it moves to an hrtimer only when the vCPU halts), so a
 * deadline that passed then expires only once the vCPU enters the guest
 * again, at once. Such an interrupt is pending from its deadline, where
 * the vCPU was then (core/irq.c's vmlat_irq_deadline()): preempted, with
 * the wait since part of its delivery. Left as it is where the deadline
 * is not known (layout group lapic_deadline or exit_tsc refused, a scaled
 * TSC, or a TSC vmlat does not trust).
 *
 * Context: @vc's thread, its lock held.
 */
static void vmlat_hv_timer_deadline(struct vmlat_vcpu *vc, u64 *ns,
				    enum vmlat_irq_at *at, u64 *wait)
{
	u64 tsc, deadline;

	if (vmlat_kvm_timer_deadline_tsc(vc->kvm_vcpu, &tsc))
		return;
	deadline = vmlat_tsc_time_ns(tsc, vc->acct.first_ns, *ns);
	if (deadline && vmlat_irq_deadline(&vc->waits, deadline,
					   vc->hv_entered_ns, *wait, at, wait))
		*ns = deadline;
}

/**
 * vmlat_on_apic_accept_irq() - KVM accepted an interrupt into a local APIC
 * @vcpu_id:	the target's vcpu_id
 * @dm:		delivery mode
 * @vec:	vector
 */
void vmlat_on_apic_accept_irq(u32 vcpu_id, u16 dm, u8 vec)
{
	struct vmlat_irq_marker *m = this_cpu_ptr(&vmlat_irq_marker);
	struct vmlat_vcpu *sender, *target;
	struct vmlat_irq_done pushed;
	enum vmlat_irq_added added;
	enum vmlat_irq_src src;
	enum vmlat_irq_at at;
	unsigned long flags;
	struct vmlat_vm *vm;
	u64 ns, wait;

	if (!atomic_read(&vmlat_live_vcpus))
		return;
	/*
	 * KVM passes the ICR's and the MSI's delivery mode as it stands there
	 * (APIC_DM_*, bits 8-10). Fixed and lowest priority are injected as a
	 * vector; NMI, SMI, INIT, SIPI are not (no kvm_inj_virq).
	 */
	if (dm > APIC_DM_LOWEST)
		return;
	sender = in_task() ? vmlat_vcpu_current() : NULL;
	if (sender)
		vm = sender->vm;
	/* Not a vCPU thread: one turned away at the caps is not a device. */
	else if (in_task() && current->mm && vmlat_task_find(current) < 0)
		vm = vmlat_vm_of_mm(current->mm);
	else
		vm = NULL;
	target = vm ? vmlat_irq_target(vm, vcpu_id) : NULL;
	/* Found by mm: unless the record went to another VM meanwhile. */
	if (target && !sender && READ_ONCE(vm->mm) != current->mm)
		target = NULL;
	if (!target) {
		atomic64_inc(&vmlat_stats.irq_unattributed);
		return;
	}
	ns = vmlat_now_ns();
	raw_spin_lock_irqsave(&target->lock, flags);
	at = vmlat_vcpu_at_now(target);
	wait = vmlat_vcpu_wait_ns(target, ns);
	if (!sender || (m->task == current &&
			m->exits == vmlat_marker_exits(sender))) {
		/* A VMM's thread other than its vCPUs' signals a device's. */
		src = VMLAT_IRQ_DEVICE;
	} else if (target != sender) {
		src = VMLAT_IRQ_IPI;
	} else if (vmlat_irq_timer_take(&target->irq, &ns, &at, &wait)) {
		src = VMLAT_IRQ_TIMER;
	} else if (vmlat_exit_slot_is_ptimer(target->exit_slot) &&
		   target->exit_ns) {
		/* The hypervisor timer expired with the guest's exit. */
		src = VMLAT_IRQ_TIMER;
		ns = target->exit_ns;
		at = VMLAT_AT_GUEST;
		vmlat_hv_timer_deadline(target, &ns, &at, &wait);
	} else {
		src = VMLAT_IRQ_OTHER;
	}
	added = vmlat_irq_pend_add(&target->irq, vec, src, at, ns, wait,
				   vmlat_irq_tag(sender),
				   vmlat_marker_exits(target), &pushed);
	raw_spin_unlock_irqrestore(&target->lock, flags);
	if (likely(added == VMLAT_IRQ_ADDED))
		return;
	/* The block is there: the target was found through it. */
	if (added == VMLAT_IRQ_COALESCED)
		atomic64_inc(&vm->irq->cell[src][at].coalesced);
	else
		atomic64_inc(&vm->irq->cell[pushed.src][pushed.at].lost);
}

/**
 * vmlat_on_inj_virq() - KVM injects @vec into the current vCPU, for its
 * next VM entry
 * @vec:	the vector
 * @reinjected:	again, after an entry that did not deliver it (6.1 on)
 */
void vmlat_on_inj_virq(unsigned int vec, bool reinjected)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_current();
	enum vmlat_irq_match match;
	struct vmlat_irq_done co;
	struct vmlat_vm_irq *q;
	unsigned long flags;

	/*
	 * The interrupt injected before, again: no new one. Its entry is
	 * still injected (the entry that did not deliver it was cancelled)
	 * or was delivered at that entry; marking another entry of its
	 * vector, accepted meanwhile, would deliver that one too early.
	 */
	if (reinjected)
		return;
	if (!vc)
		return;
	if (!READ_ONCE(vc->irq.nr) && !READ_ONCE(vc->irq.has_co)) {
		match = VMLAT_IRQ_UNMATCHED;
	} else {
		raw_spin_lock_irqsave(&vc->lock, flags);
		match = vmlat_irq_pend_inject(&vc->irq, vec,
					      vmlat_marker_exits(vc), &co);
		raw_spin_unlock_irqrestore(&vc->lock, flags);
		if (match == VMLAT_IRQ_MATCHED)
			return;
	}
	/* Pairs with the cmpxchg of vmlat_vm_irq(). */
	q = smp_load_acquire(&vc->vm->irq);
	if (!q)
		return;
	/*
	 * An accept counted coalesced whose sender set the IRR only after
	 * this vCPU injected the vector (core/irq.h): a delivery of its own.
	 * The block is there: the accept was counted in it.
	 */
	if (match == VMLAT_IRQ_UNCOALESCED)
		atomic64_dec_if_positive(&q->cell[co.src][co.at].coalesced);
	else
		atomic64_inc(&q->unmatched);
}

/*
 * A delivery to @vc at @now crossed threshold_irq_us: its report. If its
 * vCPU waited for a CPU meanwhile, who held the CPU: the task that ran
 * the longest slice of its last wait (@vc's iv_by: its thread runs, no
 * other writes it now).
 */
static noinline void vmlat_irq_report(struct vmlat_vcpu *vc,
				      const struct vmlat_irq_done *d, u64 now)
{
	struct vmlat_report r = {
		.kind = VMLAT_REPORT_IRQ,
		.cpu = smp_processor_id(),
		.duration_ns = d->ns,
		.isa = d->src,
		.exit_reason = d->at,
		.by = { .kind = VMLAT_BY_NONE, .vcpu = -1 },
	};

	if (d->wait_ns && vc->iv_by.kind != VMLAT_BY_NONE)
		r.by = vc->iv_by;
	vmlat_vcpu_report(vc, &r, now - d->ns, now);
}

/* Count @d, a delivery to @vc at @now (or one given up). */
static void vmlat_irq_count(struct vmlat_vcpu *vc, struct vmlat_vm_irq *q,
			    const struct vmlat_irq_done *d, u64 now)
{
	struct vmlat_irq_cell *c = &q->cell[d->src][d->at];
	struct vmlat_vm *vm = vc->vm;

	if (d->lost) {
		atomic64_inc(&c->lost);
		return;
	}
	atomic64_inc(&c->count);
	atomic64_add(d->ns, &c->sum_ns);
	vmlat_atomic64_max(&c->max_ns, d->ns);
	if (d->wait_ns)
		atomic64_add(d->wait_ns, &c->wait_ns);
	vmlat_vm_hist_add(&vm->irq_hist[d->src], d->ns);
	trace_vmlat_irq(vm->pid, vc->idx, d->ns, d->src, d->at, d->wait_ns);
	if (unlikely(vmlat_over_threshold(VMLAT_REPORT_IRQ, d->ns)))
		vmlat_irq_report(vc, d, now);
}

/*
 * vmlat_irq_held_fn for @arg, a vCPU's record in its thread: whether its
 * APIC's IRR has @vec, or the vCPU that sent it may not have set it yet.
 * KVM traces kvm_apic_accept_irq before it sets the IRR, in the sender's
 * exit handling, which may be preempted between the two (seen on a test
 * host of one CPU, the target running meanwhile): until the sender exits
 * again or is back in the guest, its accept may be unfinished. An accept
 * from another thread (a device's) has no such answer.
 *
 * The sender is read first: once it has left that exit, it set the IRR
 * before. Read the other way round, a reader stalled between the two
 * loads found the IRR still clear and then the sender back in the guest,
 * and gave up an interrupt KVM injected later (seen under TCG on 7.2: the
 * sender preempted inside the tracepoint for 33 ms, the target's CPU
 * stalled 18 ms between the loads).
 *
 * Context: @arg's vmlat_delivery_entry(), its lock held.
 */
static bool vmlat_irq_held(const void *arg, u8 vec, u64 tag)
{
	const struct vmlat_vcpu *vc = arg;
	struct vmlat_vcpu *sender;

	if (tag >> 32) {
		sender = vmlat_irq_target(vc->vm, (tag >> 32) - 1);
		if (sender && sender != vc &&
		    (u32)vmlat_marker_exits(sender) == (u32)tag &&
		    READ_ONCE(sender->acct.state) != VMLAT_GUEST)
			return true;
		/*
		 * Pairs with the write barrier of the sender's seqcount, after
		 * its IRR store, at the events that take it out of that exit.
		 */
		smp_rmb();
	}
	return vmlat_kvm_irr_test(vc->kvm_vcpu, vec);
}

/**
 * vmlat_delivery_entry() - @vc entered the guest with interrupts pending
 * @vc:		the current thread's record
 * @now:	its kvm_entry's time
 */
void vmlat_delivery_entry(struct vmlat_vcpu *vc, u64 now)
{
	struct vmlat_irq_done out[VMLAT_IRQ_PEND];
	struct vmlat_vm_irq *q;
	unsigned long flags;
	unsigned int i, n;

	raw_spin_lock_irqsave(&vc->lock, flags);
	n = vmlat_irq_pend_entry(&vc->irq, now, vmlat_vcpu_wait_ns(vc, now),
				 vmlat_irq_held, vc, out);
	raw_spin_unlock_irqrestore(&vc->lock, flags);
	/* Pairs with the cmpxchg of vmlat_vm_irq(). */
	q = smp_load_acquire(&vc->vm->irq);
	if (!n || !q)
		return;
	for (i = 0; i < n; i++)
		vmlat_irq_count(vc, q, &out[i], now);
}

/**
 * vmlat_on_hrtimer_expire() - an hrtimer expires: if it is a LAPIC
 * timer's, its vCPU's timer interrupt is pending from now
 * @t:	the hrtimer
 */
void vmlat_on_hrtimer_expire(struct hrtimer *t)
{
	struct task_struct *task;
	struct kvm_vcpu *vcpu;
	struct vmlat_vcpu *vc;
	enum vmlat_irq_at at;
	unsigned long flags;
	u64 now;
	void *fn = READ_ONCE(vmlat_apic_timer_fn);

	if (likely(!fn || (void *)ACCESS_PRIVATE(t, function) != fn))
		return;
	if (!atomic_read(&vmlat_live_vcpus))
		return;
	vcpu = vmlat_kvm_lapic_timer_vcpu(t);
	if (!vcpu)
		return;
	rcu_read_lock();
	task = pid_task(rcu_dereference(vcpu->pid), PIDTYPE_PID);
	vc = task ? vmlat_vcpu_of(task) : NULL;
	rcu_read_unlock();
	if (!vc || vc->kvm_vcpu != vcpu)
		return;
	raw_spin_lock_irqsave(&vc->lock, flags);
	at = vmlat_vcpu_at_now(vc);
	/*
	 * The timer's interrupt took the vCPU out of the guest, on its own
	 * CPU: where kvm_exit comes first, the vCPU is already in kernel.
	 */
	if (at == VMLAT_AT_HOST && task == current &&
	    (vc->exit_slot == VMLAT_EXIT_SVM_INTR ||
	     vc->exit_slot == VMLAT_EXIT_VMX_EXTERNAL_INTERRUPT))
		at = VMLAT_AT_GUEST;
	now = vmlat_now_ns();
	vmlat_irq_timer_expired(&vc->irq, now, at, vmlat_vcpu_wait_ns(vc, now));
	raw_spin_unlock_irqrestore(&vc->lock, flags);
}

/**
 * vmlat_on_wait_lapic_expire() - the current vCPU thread enters the guest
 * with its TSC-deadline timer's interrupt: how early or late, against the
 * guest's deadline
 * @vcpu_id:	the vCPU's id
 * @delta:	the guest's TSC now less its deadline, in guest TSC cycles:
 *		below 0, KVM fired the timer that far ahead (its timer
 *		advance) and busy-waits it; above, the guest gets it late
 *
 * In ns by the host's TSC rate, only where the guest's TSC runs at it
 * (not scaled: layout group exit_tsc). Context: kvm_wait_lapic_expire
 * tracepoint, in the vCPU's thread just before the VM entry.
 */
void vmlat_on_wait_lapic_expire(u32 vcpu_id, s64 delta)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_current();
	const struct kvm_vcpu *vcpu;
	enum vmlat_expire_hist k;
	u64 cycles, ns;

	if (!vc || vc->vcpu_id != vcpu_id || !tsc_khz)
		return;
	vcpu = vc->kvm_vcpu;
	if (!vmlat_kvm_vcpu_loaded(vcpu) ||
	    !vmlat_layout_ok(VMLAT_LAYOUT_EXIT_TSC) ||
	    !vmlat_kvm_tsc_unscaled(vmlat_kvm_l1_tsc_ratio(vcpu)))
		return;
	k = delta < 0 ? VMLAT_EXPIRE_EARLY : VMLAT_EXPIRE_LATE;
	cycles = delta < 0 ? -(u64)delta : (u64)delta;
	ns = mul_u64_u32_div(cycles, 1000000, tsc_khz);
	vmlat_vm_hist_add(&vc->vm->expire_hist[k], ns);
}

/**
 * vmlat_delivery_learn() - learn KVM's apic_timer_fn from @vcpu's timer
 * @vcpu:	a vCPU its thread just gave a record, in KVM_RUN
 */
void vmlat_delivery_learn(struct kvm_vcpu *vcpu)
{
	struct hrtimer *t;
	void *fn;

	if (READ_ONCE(vmlat_apic_timer_fn))
		return;
	t = vmlat_kvm_lapic_timer(vcpu);
	if (!t)
		return;
	fn = (void *)READ_ONCE(ACCESS_PRIVATE(t, function));
	if (fn)
		WRITE_ONCE(vmlat_apic_timer_fn, fn);
}

/*
 * kvm goes away (its hooks are detached): its apic_timer_fn is no
 * longer KVM's. Context: process context.
 */
void vmlat_delivery_forget(void)
{
	WRITE_ONCE(vmlat_apic_timer_fn, NULL);
}
