// SPDX-License-Identifier: GPL-2.0
/*
 * Event dispatch: each probe's event (events.h) goes to its vCPU's state
 * machines (core/state.c, core/nested.c), and what an event completes is
 * counted in its VM: histograms, exit statistics, vmlat's trace events,
 * and a report when it crosses a threshold (threshold.h). Context switches
 * also go to preemption charging (charge.h), clock-sync hypercalls to
 * the VM's clock sync (clock_sync.h).
 *
 * Everything here runs in tracepoint probes: KVM's entry/exit path and the
 * scheduler (runqueue lock held). Hence: no allocation, no sleeping locks
 * (raw spinlocks, taken briefly; a vCPU's own KVM events mostly take
 * none), no printing.
 */
#include <linux/kvm_host.h>
#include <linux/moduleparam.h>

#include "charge.h"
#include "compat.h"
#include "delivery.h"
#include "events.h"
#include "exit_late.h"
#include "guest_steal.h"
#include "kvm_x86.h"
#include "lhp.h"
#include "records.h"
#include "threshold.h"
#include "vmlat_hypercall.h"
#include "vmlat.h"
#include "vmlat_trace.h"

/*
 * The record of the current thread, running @vcpu; created (and NULL
 * returned) at its first KVM event @ev. At a kvm_entry, a vCPU that never
 * ran at the address of the record's, which did, is a new vCPU: it gets
 * a new record.
 */
static __always_inline struct vmlat_vcpu *
vmlat_vcpu_get(struct kvm_vcpu *vcpu, enum vmlat_event ev, u64 now)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_current();

	if (likely(vc && vc->kvm_vcpu == vcpu)) {
		if (ev != VMLAT_EV_ENTRY)
			return vc;
		if (likely(!vmlat_kvm_vcpu_never_ran(vcpu))) {
			if (unlikely(!vc->ran))
				vmlat_vcpu_ran(vc);
			return vc;
		}
		if (!vc->ran)	/* its own first entry */
			return vc;
	}
	return vmlat_vcpu_new(vc, vcpu, ev, now);
}

/*
 * A completed exit of @vm to one histogram: its reason's, or the VM's
 * (records.h, @hist).
 */
static __always_inline void vmlat_vm_exit_done(struct vmlat_vm *vm, int slot,
					       u64 ns)
{
	if (!vmlat_exit_stats_done(&vm->exits, slot, ns, &vmlat_hist_src))
		vmlat_vm_hist_add(&vm->hist[VMLAT_HIST_EXIT], ns);
}

/**
 * vmlat_vcpu_report() - report @r, of @vc, crossing its threshold
 * @vc:		the vCPU
 * @r:		the report: its kind, duration, cpu, isa, exit_reason and
 *		by set; the rest is @vc's, filled in here
 * @start:	when the interval began, on vmlat's clock
 * @now:	when it ended, the same
 *
 * The instants go on CLOCK_MONOTONIC (ftrace's "mono" trace clock, the
 * snapshot's).
 */
void vmlat_vcpu_report(struct vmlat_vcpu *vc, struct vmlat_report *r,
		       u64 start, u64 now)
{
	r->end_ns = vmlat_clock_mono(now);
	r->start_ns = r->end_ns - (now - start);
	r->vm_pid = vc->vm->pid;
	r->vcpu = vc->idx;
	r->as = vmlat_as_event_key(READ_ONCE(vc->acct.as.key));
	memcpy(r->vm_comm, vc->vm->comm, sizeof(r->vm_comm));
	vmlat_report(r);
}

/* An interval crossed its threshold: its report. */
static noinline void vmlat_interval_report(struct vmlat_vcpu *vc,
					   enum vmlat_hist_kind kind, u64 ns,
					   const struct vmlat_by *by, u64 now)
{
	struct vmlat_report r = { .kind = kind, .duration_ns = ns };

	if (kind == VMLAT_HIST_EXIT) {
		r.cpu = smp_processor_id();
		r.isa = vc->exit_isa;
		r.exit_reason = vc->exit_reason;
		r.by.kind = VMLAT_BY_NONE;
		r.by.vcpu = -1;
		vmlat_vcpu_report(vc, &r, vc->exit_ns, now);
	} else {
		r.cpu = by->cpu;
		r.by = *by;
		vmlat_vcpu_report(vc, &r, now - ns, now);
	}
}

/* Count what a completed interval was: histograms, trace event, report. */
static __always_inline void vmlat_vcpu_done(struct vmlat_vcpu *vc,
					    const struct vmlat_done *done,
					    int slot, const struct vmlat_by *by,
					    u64 now)
{
	struct vmlat_vm *vm = vc->vm;
	enum vmlat_hist_kind kind;

	switch (done->kind) {
	case VMLAT_DONE_PREEMPT:
		kind = VMLAT_HIST_PREEMPT;
		vmlat_vm_hist_add(&vm->hist[kind], done->ns);
		trace_vmlat_preempt(vm->pid, vc->idx, done->ns,
				    vmlat_as_event_key(vc->acct.as.key), by);
		break;
	case VMLAT_DONE_WAIT:
		kind = VMLAT_HIST_WAIT;
		vmlat_vm_hist_add(&vm->hist[kind], done->ns);
		trace_vmlat_wait(vm->pid, vc->idx, done->ns,
				 vmlat_as_event_key(vc->acct.as.key), by);
		break;
	case VMLAT_DONE_EXIT:
		/*
		 * The exits of clock sync are not the guest's workload; an
		 * L2's count in its vCPU's nested statistics.
		 */
		if (unlikely(slot < VMLAT_SLOT_UNDECODED)) {
			if (slot == VMLAT_SLOT_SYNC)
				atomic64_add(done->ns, &vm->sync.exit_ns);
			return;
		}
		kind = VMLAT_HIST_EXIT;
		vmlat_vm_exit_done(vm, slot, done->ns);
		/*
		 * Tested first: else the compiler loads the event's fields
		 * at every exit, before the tracepoint's own static branch.
		 */
		if (trace_vmlat_exit_enabled())
			trace_vmlat_exit(vm->pid, vc->idx, done->ns,
					 vc->exit_isa, vc->exit_reason);
		break;
	default:
		return;
	}
	if (unlikely(vmlat_over_threshold(kind, done->ns)))
		vmlat_interval_report(vc, kind, done->ns, by, now);
}

/*
 * What a kvm_entry or kvm_exit tells the nested state machine, as flags
 * (in registers: a struct on the stack costs its zeroing on kernels built
 * with CONFIG_INIT_STACK_ALL_ZERO, at every exit).
 */
#define VMLAT_NIN_EVENT		0x1	/* a kvm_entry or kvm_exit */
#define VMLAT_NIN_L2		0x2	/* is_guest_mode(): L2 exited/entered */
#define VMLAT_NIN_VMENTER	0x4	/* the exit is L1's VMRUN/VMLAUNCH/VMRESUME */

/*
 * Feed the nested state machine a kvm_entry or kvm_exit of @a's vCPU;
 * true if it completed something to count (in @nd).
 * Context: in a write section of its vCPU's seq, in its thread.
 */
static __always_inline bool vmlat_nested_event(struct vmlat_vcpu_acct *a,
					       enum vmlat_event ev, bool hlt,
					       unsigned int nin, int slot,
					       u64 now,
					       struct vmlat_nested_done *nd)
{
	if (!nin)
		return false;
	/* Tested first: else the compiler reads the arguments before. */
	if (likely(ev == VMLAT_EV_EXIT ?
		   vmlat_nested_skips_exit(&a->nested, nin & VMLAT_NIN_L2, hlt,
					   nin & VMLAT_NIN_VMENTER) :
		   vmlat_nested_skips_entry(&a->nested, nin & VMLAT_NIN_L2)))
		return false;
	if (ev == VMLAT_EV_EXIT) {
		vmlat_nested_exit(&a->nested, nin & VMLAT_NIN_L2, slot, hlt,
				  nin & VMLAT_NIN_VMENTER, now,
				  a->time_ns[VMLAT_GUEST]);
		return false;
	}
	return vmlat_nested_entry(&a->nested, nin & VMLAT_NIN_L2, a->woken_ns,
				  now, nd, a->time_ns[VMLAT_GUEST]);
}

/* Count what a kvm_entry completed in the nested state machine. */
static noinline void vmlat_nested_done(struct vmlat_vcpu *vc,
				       const struct vmlat_nested_done *nd)
{
	struct vmlat_vm *vm = vc->vm;
	struct vmlat_vm_nested_exits *n;
	unsigned int i;
	int slot;

	n = nd->handled ? vmlat_vm_nested_exits(vm) : NULL;
	if (n) {
		i = nd->handled == VMLAT_LEVEL_L1 ? VMLAT_NESTED_BY_L1 :
						    VMLAT_NESTED_BY_L0;
		if (nd->slot >= 0)
			atomic64_inc(&n->exits[i][nd->slot]);
		else
			atomic64_inc(&n->undecoded[i]);
	}
	for (i = 0; i < nd->nr; i++) {
		vmlat_vm_hist_add(&vm->nested_hist[nd->iv[i].hist],
				  nd->iv[i].ns);
		if (nd->iv[i].hist != VMLAT_NH_L2_EXIT_L0 &&
		    nd->iv[i].hist != VMLAT_NH_L2_EXIT_L1)
			continue;
		slot = nd->iv[i].slot;
		trace_vmlat_nested_exit(vm->pid, vc->idx, nd->iv[i].ns,
					slot < 0 ? 0 : vmlat_exit_slot_isa(slot),
					slot < 0 ? 0 : vmlat_exit_slot_code(slot),
					nd->iv[i].hist == VMLAT_NH_L2_EXIT_L1);
	}
}

/*
 * Catch up with a reset @vc has not counted from yet.
 * Context: in a write section of @vc->seq.
 */
static __always_inline void vmlat_vcpu_catch_up(struct vmlat_vcpu *vc)
{
	/* Pairs with the release in vmlat_records_reset(): the time is set. */
	u32 gen = smp_load_acquire(&vmlat_reset_gen);

	if (unlikely(vc->acct.reset_gen != gen))
		vmlat_acct_reset(&vc->acct, gen, READ_ONCE(vmlat_reset_ns));
}

/*
 * Module parameter guest_tasks: follow the guests' address spaces (read
 * the guest's CR3 at every exit, guest_tasks). At load only: a cursor
 * that stopped would go on counting stale stretches.
 */
static bool vmlat_gta = true;
module_param_named(guest_tasks, vmlat_gta, bool, 0444);
MODULE_PARM_DESC(guest_tasks, "Follow guest processes by their CR3 at every VM exit (default Y); set at load");
static DEFINE_STATIC_KEY_TRUE(vmlat_gta_on);

/*
 * An exit of @vc completed, @ns of handling: to its address space's
 * reasons (aspace.h).
 * Context: in a write section of @vc->seq.
 */
static __always_inline void vmlat_vcpu_as_exit(struct vmlat_vcpu *vc,
					       int slot, u64 ns)
{
	if (static_branch_likely(&vmlat_gta_on))
		vmlat_as_cursor_exit(&vc->acct.as, slot, ns);
}

/*
 * One event of @vc, under its lock; @by: for a switch-in, who ran the
 * longest slice while it waited (what a completed preemption or wait is
 * attributed to).
 */
static noinline void vmlat_vcpu_event(struct vmlat_vcpu *vc,
				      enum vmlat_event ev, bool hlt, u64 now,
				      const struct vmlat_by *by,
				      unsigned int nin, int nslot)
{
	struct vmlat_nested_done *nd = &vc->nested_done;
	unsigned int spins = 0;
	struct vmlat_done done;
	unsigned long flags;
	bool count_nd;
	int slot;

	raw_spin_lock_irqsave(&vc->lock, flags);
	/* Write nothing then: see vmlat_owner_event(). */
	if (!nin && vmlat_acct_event_is_noop(&vc->acct, ev)) {
		raw_spin_unlock_irqrestore(&vc->lock, flags);
		return;
	}
	slot = vc->exit_slot;
	/*
	 * Before the state says preempted (the write barrier below orders
	 * the two): a spinner that finds it so counts for this preemption.
	 */
	if (ev == VMLAT_EV_OUT_RUNNABLE)
		vmlat_lhp_preempted(vc);
	raw_write_seqcount_begin(&vc->seq);
	vmlat_vcpu_catch_up(vc);
	vmlat_acct_event(&vc->acct, ev, hlt, now, &done);
	if (done.kind == VMLAT_DONE_EXIT)
		vmlat_vcpu_as_exit(vc, slot, done.ns);
	count_nd = vmlat_nested_event(&vc->acct, ev, hlt, nin, nslot, now, nd);
	raw_write_seqcount_end(&vc->seq);
	if (done.kind == VMLAT_DONE_PREEMPT)
		spins = vmlat_lhp_done(vc, done.ns, by);
	if (done.kind == VMLAT_DONE_PREEMPT || done.kind == VMLAT_DONE_WAIT)
		vmlat_irq_waits_add(&vc->waits, now, done.ns);
	raw_spin_unlock_irqrestore(&vc->lock, flags);
	vmlat_vcpu_done(vc, &done, slot, by, now);
	if (unlikely(spins))
		vmlat_lhp_event(vc, done.ns, spins, by);
	if (unlikely(count_nd))
		vmlat_nested_done(vc, nd);
}

static_assert(VMLAT_GUEST < VMLAT_USER && VMLAT_KERNEL < VMLAT_USER &&
	      VMLAT_PREEMPTED > VMLAT_USER && VMLAT_WAIT > VMLAT_USER &&
	      VMLAT_IDLE > VMLAT_USER && VMLAT_BLOCKED > VMLAT_USER,
	      "the on-CPU states are the ones up to VMLAT_USER");

/*
 * One of the current thread's own KVM events (kvm_exit, kvm_userspace_exit,
 * kvm_entry): three per exit round trip, so without the lock when it can
 * be. While the vCPU is on CPU (guest, kernel, user), only this thread
 * writes its accounting: what other CPUs report then (a wake-up of a
 * running task) changes nothing and writes nothing, and what takes it off
 * CPU (its switch-out) runs in this thread. The write barrier is for
 * readers (vmlat_vcpu_read_acct()); it is the raw one, without lockdep's
 * annotation, which cannot know that the writers in hard IRQ context (a
 * wake-up of a halted vCPU) and these never meet. Anything unexpected
 * goes the locked way.
 *
 * Context: @vc's thread, preemption off.
 */
static __always_inline void vmlat_owner_event(struct vmlat_vcpu *vc,
					      enum vmlat_event ev, bool hlt,
					      u64 now, unsigned int nin,
					      int nslot)
{
	struct vmlat_nested_done *nd = &vc->nested_done;
	u8 old = READ_ONCE(vc->acct.state);
	struct vmlat_done done;
	bool count_nd;

	/*
	 * The states it takes are on CPU (up to VMLAT_USER): no other
	 * writer then, and a reset (the catch-up) changes neither the state
	 * nor the flags it reads.
	 */
	if (unlikely(!vmlat_acct_owner_takes(&vc->acct, old, ev))) {
		vmlat_vcpu_event(vc, ev, hlt, now, NULL, nin, nslot);
		return;
	}
	raw_write_seqcount_begin(&vc->seq);
	vmlat_vcpu_catch_up(vc);
	vmlat_acct_owner_step(&vc->acct, old, ev, hlt, now, &done);
	if (done.kind == VMLAT_DONE_EXIT)
		vmlat_vcpu_as_exit(vc, vc->exit_slot, done.ns);
	count_nd = vmlat_nested_event(&vc->acct, ev, hlt, nin, nslot, now, nd);
	raw_write_seqcount_end(&vc->seq);
	if (done.kind == VMLAT_DONE_EXIT)
		vmlat_vcpu_done(vc, &done, vc->exit_slot, NULL, now);
	if (unlikely(count_nd))
		vmlat_nested_done(vc, nd);
}

/*
 * vmlat_late_exit_event()'s accounting off its fast path: a switch-out
 * ended the guest time first (or, @exit_ns 0, the exit's time is
 * unknown). Return: when the exit began, or 0 if unknown.
 */
static noinline u64 vmlat_late_exit_acct(struct vmlat_vcpu_acct *a,
					 bool hlt, u64 exit_ns, u64 now)
{
	struct vmlat_done done;

	if (exit_ns)
		vmlat_acct_left_guest(a, exit_ns, false);
	if (a->exit_pending)
		exit_ns = a->left_ns;
	vmlat_acct_event(a, VMLAT_EV_EXIT, hlt, now, &done);
	return exit_ns;
}

/*
 * The kvm_exit of @vc where exits are traced late (exit_late.h): the
 * guest time ends at the exit, read from the TSC, unless a switch-out
 * already ended it. Lock-free as vmlat_owner_event(), whose reasons hold:
 * the vCPU is on CPU (in guest or, since that switch-out, in kernel),
 * and interrupts, on here, bring only wake-ups of a running task, which
 * write nothing.
 *
 * Context: @vc's thread, preemption off.
 * Return: when the exit began.
 */
static __always_inline u64 vmlat_late_exit_event(struct vmlat_vcpu *vc,
						 struct kvm_vcpu *vcpu,
						 bool hlt, u64 now,
						 unsigned int nin, int nslot)
{
	struct vmlat_nested_done *nd = &vc->nested_done;
	u8 state = READ_ONCE(vc->acct.state);
	u64 exit_ns = 0;
	bool count_nd;

	if (state != VMLAT_GUEST && state != VMLAT_KERNEL) {
		vmlat_vcpu_event(vc, VMLAT_EV_EXIT, hlt, now, NULL, nin, nslot);
		return now;
	}
	if (state == VMLAT_GUEST)
		exit_ns = vmlat_exit_time_ns(vcpu, vc->acct.since_ns, now);
	raw_write_seqcount_begin(&vc->seq);
	vmlat_vcpu_catch_up(vc);
	if (likely(exit_ns) &&
	    vmlat_acct_owner_late_exit(&vc->acct, hlt, exit_ns, now))
		exit_ns = vc->acct.left_ns;
	else
		exit_ns = vmlat_late_exit_acct(&vc->acct, hlt, exit_ns, now);
	count_nd = vmlat_nested_event(&vc->acct, VMLAT_EV_EXIT, hlt, nin,
				      nslot, now, nd);
	raw_write_seqcount_end(&vc->seq);
	if (unlikely(count_nd))
		vmlat_nested_done(vc, nd);
	return exit_ns ?: now;
}

/*
 * A write of the current thread's @vc's accounting outside its state
 * machine, as vmlat_owner_event() writes: without the lock while it is
 * on CPU, with it otherwise. Return: whether it took the lock (for
 * vmlat_owner_write_end()).
 */
static __always_inline bool vmlat_owner_write_begin(struct vmlat_vcpu *vc,
						    unsigned long *flags)
{
	bool locked = READ_ONCE(vc->acct.state) > VMLAT_USER;

	if (unlikely(locked))
		raw_spin_lock_irqsave(&vc->lock, *flags);
	raw_write_seqcount_begin(&vc->seq);
	return locked;
}

static __always_inline void vmlat_owner_write_end(struct vmlat_vcpu *vc,
						  bool locked,
						  unsigned long flags)
{
	raw_write_seqcount_end(&vc->seq);
	if (unlikely(locked))
		raw_spin_unlock_irqrestore(&vc->lock, flags);
}

/* Apply @fn to the nested state of the current thread's @vc. */
static void vmlat_owner_nested(struct vmlat_vcpu *vc,
			       void (*fn)(struct vmlat_nested *n))
{
	unsigned long flags;
	bool locked = vmlat_owner_write_begin(vc, &flags);

	fn(&vc->acct.nested);
	vmlat_owner_write_end(vc, locked, flags);
}

/* Context: process context, before any probe is attached. */
int vmlat_events_init(void)
{
	if (!vmlat_gta)
		static_branch_disable(&vmlat_gta_on);
	return 0;
}

/*
 * @vc was found running the address space @key at an exit: end its
 * stretch in the one it ran, for its VM's table.
 */
static noinline void vmlat_vcpu_as_moved(struct vmlat_vcpu *vc, u64 key,
					 bool user)
{
	struct vmlat_vm *vm = vc->vm;
	struct vmlat_as_stretch s;
	struct vmlat_as_times t;
	unsigned long flags;
	bool ended, locked;

	locked = vmlat_owner_write_begin(vc, &flags);
	vmlat_vcpu_catch_up(vc);
	vmlat_acct_as_times(vc->acct.time_ns, &t);
	ended = vmlat_as_cursor_move(&vc->acct.as, key, &t, &s);
	vc->acct.as.user = user;
	vmlat_owner_write_end(vc, locked, flags);
	if (!ended)
		return;
	raw_spin_lock_irqsave(&vm->as_lock, flags);
	vmlat_as_table_add(&vm->as, &s);
	raw_spin_unlock_irqrestore(&vm->as_lock, flags);
}

/* @vc's address space was seen at CPL 3: it runs guest user code. */
static noinline void vmlat_vcpu_as_user(struct vmlat_vcpu *vc)
{
	unsigned long flags;
	bool locked = vmlat_owner_write_begin(vc, &flags);

	vc->acct.as.user = true;
	vmlat_owner_write_end(vc, locked, flags);
}

/*
 * Which guest address space the exit of @vc found running ([P4] GTA):
 * before the exit is accounted, so that the guest interval it ends goes
 * to that address space (aspace.h). One load or VMREAD, and a compare;
 * the CPL too while the address space has not been seen at CPL 3, which
 * is when the guest can show that it does not use KPTI (its VM's roots
 * keyed whole from then on: a root with bit 12 set moves to a key of its
 * own, its time until then left under the folded one).
 *
 * Context: in @vc's thread, L1 running: its kvm_exit, or, where exits are
 * traced late (exit_late.h), the sched_switch that takes it off CPU before
 * its kvm_exit.
 */
static __always_inline void vmlat_vcpu_aspace(struct vmlat_vcpu *vc,
					      struct kvm_vcpu *vcpu, u32 isa,
					      const struct vmcb *vmcb)
{
	const struct vmlat_as_cursor *c = &vc->acct.as;
	struct vmlat_as_names *names = &vc->vm->names;
	int cpl = -EOPNOTSUPP;
	u64 cr3, key;
	bool user;

	if (!static_branch_likely(&vmlat_gta_on))
		return;
	if (unlikely(vmlat_kvm_read_guest_cr3(vcpu, isa, &vc->vmcb_checked,
					      vmcb, &cr3, &cpl)))
		return;
	key = vmlat_as_key(cr3, !vmlat_as_names_whole(names));
	/* Its CPL only matters while not seen at 3 and if it is 3 now. */
	if (likely(key == c->key && (c->user || (unsigned int)cpl < 3)))
		return;
	if (cpl < 0)	/* not read with the CR3: VMX's VMREAD, only now */
		cpl = vmlat_kvm_read_cpl(vcpu, isa, &vc->vmcb_checked);
	user = cpl == 3;
	/* Bit 12 clear: the key is the same folded or whole. */
	if (unlikely(vmlat_as_shows_whole(cr3, user)))
		vmlat_as_names_set_whole(names);
	if (key != c->key)
		vmlat_vcpu_as_moved(vc, key, user);
	else if (user)
		vmlat_vcpu_as_user(vc);
}

/*
 * @vc's thread is switched out while vmlat has it in guest mode: where
 * exits are traced late, it left the guest before (at the exit, read from
 * the TSC, or at the latest now) and its kvm_exit is still to come.
 *
 * Context: sched_switch of @vc's thread, on its CPU.
 */
static noinline void vmlat_switched_in_guest(struct vmlat_vcpu *vc, u64 now)
{
	unsigned long flags;
	u64 exit_ns = 0;

	/*
	 * The thread is in KVM_RUN (in guest mode), its vCPU loaded and
	 * alive, unless vmlat missed the exit that ended guest mode: then the
	 * vCPU is not read (its VMM may have destroyed it), its guest time
	 * ends now. The exit's address space, read where the exit left it,
	 * before its time goes to the host's states: they are its
	 * (aspace.h), as where kvm_exit comes first. (Its last exit's
	 * vendor: the same.)
	 */
	if (vmlat_kvm_vcpu_loaded(vc->kvm_vcpu)) {
		if (static_branch_likely(&vmlat_gta_on) && vc->exit_isa &&
		    !vmlat_kvm_in_l2(vc->kvm_vcpu))
			vmlat_vcpu_aspace(vc, (struct kvm_vcpu *)vc->kvm_vcpu,
					  vc->exit_isa, NULL);
		exit_ns = vmlat_exit_time_ns(vc->kvm_vcpu,
					     READ_ONCE(vc->acct.since_ns), now);
	}
	raw_spin_lock_irqsave(&vc->lock, flags);
	raw_write_seqcount_begin(&vc->seq);
	vmlat_vcpu_catch_up(vc);
	vmlat_acct_left_guest(&vc->acct, exit_ns ?: now, true);
	raw_write_seqcount_end(&vc->seq);
	raw_spin_unlock_irqrestore(&vc->lock, flags);
}

/*
 * A vCPU enters guest mode: @vcpu, current its thread.
 * Context: kvm_entry tracepoint, preemption disabled.
 */
static __always_inline void vmlat_kvm_entry(struct kvm_vcpu *vcpu)
{
	u64 now = vmlat_now_ns();
	struct vmlat_vcpu *vc = vmlat_vcpu_get(vcpu, VMLAT_EV_ENTRY, now);
	unsigned int nin = VMLAT_NIN_EVENT |
			   (vmlat_kvm_in_l2(vcpu) ? VMLAT_NIN_L2 : 0);

	if (!vc)
		return;
	vmlat_owner_event(vc, VMLAT_EV_ENTRY, false, now, nin,
			  VMLAT_SLOT_UNDECODED);
	vmlat_delivery_check(vc, &vc->irq, now);
}

/*
 * The slot of an exit of a nested guest's vCPU: VMLAT_SLOT_L2_SYNC for
 * the two L0 exits of an L2's clock-sync call to its L1 (the L2 kernel's
 * hypercall with vmlat's number, which L1's vmlat.ko answers; then L1's
 * VMRUN that resumes L2 after it), else @slot. L0 never sees the call
 * itself: KVM reflects the exit to L1 without its kvm_hypercall, so the
 * number and CPL are read where the hardware left them, as
 * vmlat_on_kvm_hypercall() takes them for a call of the host's own guests.
 *
 * Context: vmlat_kvm_exit() of @vc, an exit of L2 or of L1's VMRUN
 * (VMLAUNCH, VMRESUME); this thread alone writes @vc's nested state.
 */
static int vmlat_l2_sync_slot(struct vmlat_vcpu *vc, struct kvm_vcpu *vcpu,
			      u32 isa, int slot, unsigned int nin)
{
	u64 rax;

	if (!(nin & VMLAT_NIN_L2))
		return vmlat_nested_resumes_sync(&vc->acct.nested) ?
		       VMLAT_SLOT_L2_SYNC : slot;
	if (!vmlat_exit_slot_is_hypercall(slot) ||
	    vmlat_kvm_read_rax(vcpu, isa, &vc->vmcb_checked, &rax) ||
	    rax != VMLAT_HC_NR ||
	    vmlat_kvm_read_cpl(vcpu, isa, &vc->vmcb_checked) != 0)
		return slot;
	return VMLAT_SLOT_L2_SYNC;
}

/*
 * The exits of vmlat_kvm_exit() off its fast path: of L2, of L1's VMRUN
 * (VMLAUNCH, VMRESUME), PAUSE and VMX's preemption timer (@sf, the
 * slot's VMLAT_EXITF_*). Return: the slot to count the exit in.
 */
static noinline int vmlat_exit_rare(struct vmlat_vcpu *vc,
				    struct kvm_vcpu *vcpu, u32 isa, int slot,
				    unsigned int nin, unsigned int sf)
{
	if (nin & (VMLAT_NIN_L2 | VMLAT_NIN_VMENTER))
		return vmlat_l2_sync_slot(vc, vcpu, isa, slot, nin);
	/* A spinner of its own VM's locks, not of an L2's. */
	if (sf & VMLAT_EXITF_PAUSE)
		vmlat_lhp_spin(vc);
	/* Where a deadline that passed before it was (delivery.c) */
	else if (sf & VMLAT_EXITF_PTIMER)
		vc->hv_entered_ns = vc->acct.state == VMLAT_GUEST ?
				    vc->acct.entered_ns : 0;
	return slot;
}

/*
 * A vCPU leaves guest mode (its probe): with the raw exit code
 * @given when the tracepoint passes it (@have), else read from the VMCB
 * or VMCS.
 */
static __always_inline void vmlat_kvm_exit(struct kvm_vcpu *vcpu, u32 isa,
					   bool have, u64 given)
{
	u64 now = vmlat_now_ns(), code = given, exit_ns = now;
	struct vmlat_vcpu *vc, *created;
	const struct vmcb *vmcb;
	int slot = VMLAT_SLOT_UNDECODED;
	unsigned int sf = 0;
	bool hlt, decoded;

	vmlat_exit_trace_check();
	vc = vmlat_vcpu_get(vcpu, VMLAT_EV_EXIT, now);
	/* NULL: just created at this exit (or not tracked) */
	created = vc ? NULL : vmlat_vcpu_current();
	if (!vc && !created)
		return;

	/* SVM: one VMCB for the code, CR3 and CPL; else each its own way. */
	vmcb = isa == VMLAT_ISA_SVM ?
	       vmlat_svm_exit_vmcb(vcpu, &(vc ?: created)->vmcb_checked) : NULL;
	if (!have && likely(vmcb))
		code = READ_ONCE(vmcb->control.exit_code);
	decoded = have || vmcb ||
		  !vmlat_read_exit_code(vcpu, isa, &code,
					&(vc ?: created)->vmcb_checked);
	if (decoded) {
		slot = vmlat_exit_slot(isa, code);
		sf = vmlat_exit_slot_flags(slot);
	}
	hlt = sf & VMLAT_EXITF_HLT;

	if (vc) {
		unsigned int nin = VMLAT_NIN_EVENT |
			(vmlat_kvm_in_l2(vcpu) ? VMLAT_NIN_L2 : 0) |
			(sf & VMLAT_EXITF_VMENTER ? VMLAT_NIN_VMENTER : 0);

		/* An L2 guest's time is its L1 process's, who runs it. */
		if (!(nin & VMLAT_NIN_L2))
			vmlat_vcpu_aspace(vc, vcpu, isa, vmcb);
		if (unlikely((nin & VMLAT_NIN_L2) || (sf & VMLAT_EXITF_RARE)))
			slot = vmlat_exit_rare(vc, vcpu, isa, slot, nin, sf);
		/*
		 * The reason before the state: who finds the vCPU in kernel
		 * from another CPU (vmlat_vcpu_at_now()) finds this exit's.
		 * The seqcount's write barrier orders the two stores.
		 */
		WRITE_ONCE(vc->exit_slot, slot);

		if (vmlat_exit_traced_late())
			exit_ns = vmlat_late_exit_event(vc, vcpu, hlt, now, nin,
							slot);
		else
			vmlat_owner_event(vc, VMLAT_EV_EXIT, hlt, now, nin,
					  slot);
	} else {
		vc = created;
		WRITE_ONCE(vc->exit_slot, slot);
		raw_write_seqcount_begin(&vc->seq);
		vc->acct.halted = hlt;
		raw_write_seqcount_end(&vc->seq);
	}
	/* Only this thread reads them, at its next kvm_entry. */
	vc->exit_isa = decoded ? isa : 0;
	vc->exit_reason = decoded ? (u32)code : 0;
	vc->exit_ns = exit_ns;
	vmlat_exit_stats_count(&vc->vm->exits, slot);
}

/*
 * The current vCPU thread returns to its VMM.
 * Context: kvm_userspace_exit tracepoint, preemption disabled.
 */
static __always_inline void vmlat_userspace_exit(void)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_current();

	if (!vc)
		return;
	/* A KVM_RUN that entered the guest: KVM set last_vmentry_cpu. */
	if (unlikely(!vc->ran) && vc->exit_ns)
		vmlat_vcpu_ran(vc);
	vmlat_owner_event(vc, VMLAT_EV_USER_EXIT, false, vmlat_now_ns(), 0,
			  VMLAT_SLOT_UNDECODED);
}

/*
 * The probes of kvm_entry, kvm_exit and kvm_userspace_exit, the three
 * events of every exit round trip: here, with the events' code inlined,
 * one call less per event than probes.c's way. probes.c's table names
 * them; what its comment says of probes holds for them.
 *
 * Context: kvm_entry and kvm_exit are traced with preemption disabled
 * (probes.c), kvm_userspace_exit not from 7.x on.
 */
void vmlat_probe_kvm_entry(void *data, struct kvm_vcpu *vcpu,
			   bool force_immediate_exit)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_hit(VMLAT_HOOK_KVM_ENTRY);
	vmlat_kvm_entry(vcpu);
}

/* kvm_entry before "force_immediate_exit" (upstream 6.9, 6.1.y in 2025). */
void vmlat_probe_kvm_entry_v1(void *data, struct kvm_vcpu *vcpu)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_hit(VMLAT_HOOK_KVM_ENTRY);
	vmlat_kvm_entry(vcpu);
}

void vmlat_probe_kvm_exit(void *data, struct kvm_vcpu *vcpu, u32 isa)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_hit(VMLAT_HOOK_KVM_EXIT);
	vmlat_kvm_exit(vcpu, isa, false, 0);
}

/* The older kvm_exit (5.10's), which passes the raw exit code first. */
void vmlat_probe_kvm_exit_v0(void *data, unsigned int exit_reason,
			     struct kvm_vcpu *vcpu, u32 isa)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_hit(VMLAT_HOOK_KVM_EXIT);
	vmlat_kvm_exit(vcpu, isa, true, exit_reason);
}

void vmlat_probe_kvm_userspace_exit(void *data, __u32 reason, int errno)
{
	if (VMLAT_FLOOR)
		return;
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_KVM_USERSPACE_EXIT);
	vmlat_userspace_exit();
	preempt_enable_notrace();
}

/**
 * vmlat_on_halt_poll_ns() - KVM changed a vCPU's poll window
 * @grow:	grown (or shrunk)
 * @vcpu_id:	the vCPU's id
 * @old:	the window before, the one the halt ending had
 *
 * Context: kvm_halt_poll_ns tracepoint, in the halting vCPU's thread, at
 * the end of its halt and before kvm_vcpu_wakeup.
 */
void vmlat_on_halt_poll_ns(bool grow, unsigned int vcpu_id, unsigned int old)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_current();
	unsigned long flags;
	bool locked;

	if (!vc || vc->vcpu_id != vcpu_id)
		return;
	locked = vmlat_owner_write_begin(vc, &flags);
	vmlat_vcpu_catch_up(vc);
	vmlat_halt_window(&vc->acct.halt, grow, old);
	vmlat_owner_write_end(vc, locked, flags);
}

/**
 * vmlat_on_vcpu_wakeup() - KVM ended a halt of the current vCPU thread
 * @ns:		the halt's length, polling included
 * @waited:	the thread slept
 * @valid:	the wake-up brought the vCPU an event
 *
 * The window and the guest's consent are read from the vCPU the thread
 * runs, once vmlat_kvm_vcpu_loaded() showed it alive: KVM changes them
 * only in this thread (the window) or in its exits (the MSR).
 *
 * Context: kvm_vcpu_wakeup tracepoint, in the vCPU's thread, on CPU.
 */
void vmlat_on_vcpu_wakeup(u64 ns, bool waited, bool valid)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_current();
	struct vmlat_halt_end e = {
		.halt_ns = ns, .waited = waited, .valid = valid,
	};
	const struct kvm_vcpu *vcpu;
	unsigned long flags;
	bool locked;

	if (!vc || !vmlat_layout_ok(VMLAT_LAYOUT_HALT))
		return;
	vcpu = vc->kvm_vcpu;
	if (!vmlat_kvm_vcpu_loaded(vcpu))
		return;
	e.window_ns = vmlat_kvm_halt_window(vcpu, &e.may_poll);
	e.now_ns = vmlat_now_ns();
	locked = vmlat_owner_write_begin(vc, &flags);
	vmlat_vcpu_catch_up(vc);
	e.woken_ns = vc->acct.woken_ns;
	vmlat_halt_ended(&vc->acct.halt, &e);
	vmlat_owner_write_end(vc, locked, flags);
}

/**
 * vmlat_on_mmu_get_page() - KVM's MMU looked up or made a shadow page
 *
 * Context: kvmmmu:kvm_mmu_get_page tracepoint, MMU lock held; current
 * may be a vCPU thread or any thread of a VMM (the ioctls of dirty
 * logging).
 */
void vmlat_on_mmu_get_page(void)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_current();

	/* A READ_ONCE(): it is ours to write, readers copy it under seq. */
	if (vc && READ_ONCE(vc->acct.nested.heur_state) == VMLAT_HEUR_WAITING)
		vmlat_owner_nested(vc, vmlat_nested_mmu_page);
}

/**
 * vmlat_on_nested_vmexit_inject() - KVM makes L1 handle an exit of L2
 *
 * Context: kvm_nested_vmexit_inject tracepoint, in the vCPU's thread.
 */
void vmlat_on_nested_vmexit_inject(void)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_current();

	if (vc && READ_ONCE(vc->acct.nested.heur_state) != VMLAT_HEUR_NORMAL)
		vmlat_owner_nested(vc, vmlat_nested_inject);
}

/*
 * A name hypercall (version 3): the guest says which process owns a
 * page-table root (aspace.h). Checked and rate-limited under the sync
 * lock; only the calls let through (VMLAT_HC_NAME_RATE a second at most)
 * take the VM's as_lock, which its vCPUs' exits take too.
 */
static u64 vmlat_vm_name_call(struct vmlat_vm *vm, struct kvm_vcpu *vcpu,
			      u64 root, u64 tgid, u64 comm0, int cpl)
{
	struct vmlat_as_name_args a = {
		.root = root, .tgid = tgid, .comm = { comm0 }, .cpl = cpl,
	};
	unsigned long flags;
	u64 reply;

	if (cpl == 0)
		a.comm[1] = vmlat_kvm_read_rdi(vcpu);
	reply = vmlat_vm_name_gate(&vm->sync, &a, ktime_get_mono_fast_ns());
	if (reply != VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN, 0))
		return reply;
	raw_spin_lock_irqsave(&vm->as_lock, flags);
	vmlat_as_name_set(&vm->names, &vm->as, &a);
	raw_spin_unlock_irqrestore(&vm->as_lock, flags);
	return reply;
}

/* Hyper-V's HvNotifyLongSpinWait (HVCALL_NOTIFY_LONG_SPIN_WAIT, TLFS). */
#define VMLAT_HV_NOTIFY_LONG_SPIN_WAIT	0x0008

/**
 * vmlat_on_kvm_hv_hypercall() - a guest made a Hyper-V hypercall
 * @code:	its call code
 * @extra:	it has a rep count, a rep start or a variable header, which
 *		make KVM refuse a long-spin-wait notification
 *
 * A guest with Hyper-V's enlightenments (Windows with hv-spinlocks) says
 * that a vCPU spun on a lock too long with HvNotifyLongSpinWait instead of
 * leaving it to pause-loop exiting: KVM yields the spinner's CPU to a
 * preempted sibling (kvm_vcpu_on_spin()), as for a PAUSE exit, and so
 * does vmlat's count of spins (lhp.c). KVM traces only calls from CPL 0
 * in protected mode, before its checks of the call's access
 * (KVM_CAP_HYPERV_ENFORCE_CPUID) and reserved bits: a call it refuses for
 * those still shows a spinning guest. Each call is an exit of the guest,
 * which bounds their rate as for PAUSE exits. Any other call returns at
 * once.
 *
 * Context: kvm_hv_hypercall tracepoint, in the vCPU's thread, handling the
 * exit (the kvm_exit probe ran), preemption off.
 */
void vmlat_on_kvm_hv_hypercall(u16 code, bool extra)
{
	struct vmlat_vcpu *vc;

	if (likely(code != VMLAT_HV_NOTIFY_LONG_SPIN_WAIT) || extra)
		return;
	vc = vmlat_vcpu_current();
	if (!vc)
		return;
	/* A spinner of its own VM's locks, not of an L2's (as for PAUSE). */
	if (vmlat_kvm_vcpu_loaded(vc->kvm_vcpu) &&
	    vmlat_kvm_in_l2(vc->kvm_vcpu))
		return;
	vmlat_lhp_spin(vc);
}

/**
 * vmlat_on_kvm_hypercall() - a guest made a hypercall
 * @nr:		its number (RAX)
 * @a0:		RBX
 * @a1:		RCX
 * @a2:		RDX
 * @a3:		RSI
 *
 * vmlat's clock-sync calls (hypercall/vmlat_hypercall.h) go to their VM's
 * mapping with the CPL they were made at (KVM fires this tracepoint before
 * its own CPL check); a version 2 call from CPL 0 gets its reply in RBX.
 * Name calls (version 3) go to the VM's names, steal calls (version 4)
 * to guest_steal.c. The exits of calls from CPL 0 leave the exit
 * statistics for the VM's sync counters (vmlat's own traffic); the others
 * are the guest's own. Any other number returns at once.
 *
 * Context: kvm_hypercall tracepoint, in the vCPU's thread, handling the
 * exit (the kvm_exit probe ran), preemption off.
 */
void vmlat_on_kvm_hypercall(unsigned long nr, unsigned long a0,
			    unsigned long a1, unsigned long a2,
			    unsigned long a3)
{
	struct vmlat_sync_args a = {
		.hdr = a0, .g1 = a1, .prev_g2 = a2, .seq = a3,
		.cpl = -EOPNOTSUPP,
	};
	struct vmlat_sync_xchg x;
	struct kvm_vcpu *vcpu;
	struct vmlat_vcpu *vc;
	struct vmlat_vm *vm;
	u64 reply;
	int slot;

	if (likely(nr != VMLAT_HC_NR))
		return;
	vc = vmlat_vcpu_current();
	if (!vc)
		return;
	vm = vc->vm;
	/*
	 * The record's vCPU, if this thread runs it now: alive. Its
	 * registers unreadable (their layout refused, layout.h), the call's
	 * CPL stays unknown: refused, as a call from user mode.
	 */
	vcpu = (struct kvm_vcpu *)vc->kvm_vcpu;
	if (!vmlat_layout_ok(VMLAT_LAYOUT_REGS) ||
	    !vmlat_kvm_vcpu_loaded(vcpu))
		vcpu = NULL;
	else if (vmlat_kvm_in_l2(vcpu))
		/*
		 * An L2's call its L1 does not intercept: its clock is not
		 * the VM's. KVM answers it (unknown number); the exit is
		 * counted as an L2 sync call (vmlat_l2_sync_slot()).
		 */
		return;
	else
		a.cpl = vmlat_kvm_read_cpl(vcpu, vc->exit_isa,
					   &vc->vmcb_checked);
	/*
	 * A call from CPL 0 is vmlat's traffic: its exit leaves the exit
	 * statistics first, so that a steal call's answer has the guest's
	 * own exits only.
	 */
	slot = vc->exit_slot;
	if (a.cpl == 0 && slot != VMLAT_SLOT_SYNC) {
		/*
		 * The exit leaves the count its kvm_exit added to, unless a
		 * reset came since (the exit's accounting caught up with the
		 * generation before it): then the reset took it. A reset
		 * whose clearing came between the two in the same generation
		 * took it too: never below 0.
		 */
		if (vc->acct.reset_gen == smp_load_acquire(&vmlat_reset_gen))
			vmlat_exit_stats_uncount(&vm->exits, slot);
		atomic64_inc(&vm->sync.exits);
		WRITE_ONCE(vc->exit_slot, VMLAT_SLOT_SYNC);
	}
	if (a0 == VMLAT_HC_HDR_NAME) {
		reply = vmlat_vm_name_call(vm, vcpu, a1, a2, a3, a.cpl);
	} else if (a0 == VMLAT_HC_HDR_STEAL) {
		reply = vmlat_guest_steal_call(vc, vcpu, a1, a.cpl);
	} else {
		/* The host's side of the guest's clock: CLOCK_MONOTONIC. */
		reply = vmlat_vm_sync_call(&vm->sync, &a,
					   ktime_get_mono_fast_ns(), &x);
		if (x.seq)
			trace_vmlat_sync(vm->pid, vc->idx, x.seq, x.g1, x.h,
					 x.g2);
	}
	/* Only into the registers of a vCPU this thread runs now. */
	if (reply && vcpu)
		vmlat_kvm_set_rbx(vcpu, reply);
}

/* ---- the scheduler ------------------------------------------------ */

/*
 * The context switch of a vCPU, or on a CPU a vCPU waits for: out of line,
 * so that the many others pay for no more than vmlat_on_sched_switch()'s
 * few registers.
 */
static noinline void vmlat_switch_vcpu(bool preempt, struct task_struct *prev,
				       unsigned int prev_state,
				       struct vmlat_vcpu *pv,
				       struct vmlat_vcpu *nv)
{
	u64 now = vmlat_now_ns();
	unsigned int state = vmlat_task_state(prev);
	enum vmlat_event ev;
	bool runnable;

	/*
	 * As __schedule(): a preempted task stays on the runqueue, and so
	 * does one that meant to sleep with a signal pending. __schedule()
	 * made that one TASK_RUNNING again but passes the tracepoint the
	 * state it read before (6.1, 6.12): only the task's own state
	 * tells. A waker makes prev TASK_RUNNING only with this runqueue's
	 * lock, or once prev is off this CPU; before that, one that found
	 * it off the runqueue marks it TASK_WAKING: its sched_waking came
	 * while prev was on CPU, its sched_wakeup comes later, and prev is
	 * runnable from now on.
	 */
	runnable = preempt || prev_state == TASK_RUNNING ||
		   state == TASK_RUNNING;
	if (runnable)
		ev = VMLAT_EV_OUT_RUNNABLE;
	else if (state == TASK_WAKING)
		ev = VMLAT_EV_OUT_WOKEN;
	else
		ev = VMLAT_EV_OUT_SLEEP;

	if (pv) {
		/*
		 * Never in guest mode where kvm_exit is prompt. Not the static
		 * key: it is set by a work item, which may have to wait for
		 * this CPU while the vCPU is preempted here.
		 */
		if (READ_ONCE(pv->acct.state) == VMLAT_GUEST &&
		    vmlat_exit_trace_mode() == VMLAT_EXIT_TRACE_LATE)
			vmlat_switched_in_guest(pv, now);
		vmlat_vcpu_event(pv, ev, false, now, NULL, 0,
				 VMLAT_SLOT_UNDECODED);
	}

	/* Before next leaves the victim list: it is charged too. */
	vmlat_charge_switch(prev, pv, runnable, now);

	if (nv) {
		struct vmlat_by by;

		this_cpu_write(vmlat_cur_vcpu, nv);
		vmlat_victim_leave(nv, &by);
		vmlat_vcpu_event(nv, VMLAT_EV_IN, false, now, &by, 0,
				 VMLAT_SLOT_UNDECODED);
	}
}

/**
 * vmlat_on_sched_switch() - a context switch
 * @preempt:	prev was preempted
 * @prev:	the task leaving the CPU
 * @next:	the task taking it
 * @prev_state:	prev's state as the scheduler saw it
 *
 * Context: sched_switch tracepoint, runqueue lock held, IRQs off.
 */
void vmlat_on_sched_switch(bool preempt, struct task_struct *prev,
			   struct task_struct *next, unsigned int prev_state)
{
	struct vmlat_vcpu *pv, *nv;

	if (!atomic_read(&vmlat_live_vcpus))
		return;

	pv = vmlat_vcpu_of(prev);
	nv = vmlat_vcpu_of(next);
	/*
	 * Neither task is a vCPU and no vCPU waits here: nothing to account,
	 * and no clock read or lock. (Most context switches of a host ended
	 * at the probe's gate, vmlat_switch_may_count(); these passed it on
	 * a neighbour's filter byte.) We hold this runqueue's lock, so no
	 * victim can appear here meanwhile (charge.h); a later one is
	 * charged from its own victim_since_ns, never from a skipped switch.
	 */
	if (!pv && !nv && !vmlat_cpu_has_victims())
		return;
	vmlat_switch_vcpu(preempt, prev, prev_state, pv, nv);
}

/**
 * vmlat_on_sched_waking() - a task is being woken
 * @p:	the task
 *
 * Context: sched_waking tracepoint, on the waker's CPU.
 */
void vmlat_on_sched_waking(struct task_struct *p)
{
	struct vmlat_vcpu *vc;

	if (!atomic_read(&vmlat_live_vcpus))
		return;
	vc = vmlat_vcpu_of(p);
	if (vc)
		vmlat_vcpu_event(vc, VMLAT_EV_WAKEUP, false, vmlat_now_ns(),
				 NULL, 0, VMLAT_SLOT_UNDECODED);
}

/**
 * vmlat_on_sched_wakeup() - a woken task is on a runqueue
 * @p:	the task; task_cpu(@p) is the CPU whose queue holds it
 *
 * Context: sched_wakeup tracepoint, that runqueue's lock held.
 */
void vmlat_on_sched_wakeup(struct task_struct *p)
{
	struct vmlat_vcpu *vc;
	u8 state;

	if (!atomic_read(&vmlat_live_vcpus))
		return;
	vc = vmlat_vcpu_of(p);
	if (!vc)
		return;
	state = READ_ONCE(vc->acct.state);
	if (state != VMLAT_WAIT && state != VMLAT_IDLE &&
	    state != VMLAT_BLOCKED)
		return;
	/*
	 * Its sched_waking came while it was still on its way off CPU (it
	 * changed nothing then): the wake-up completes here, after the
	 * switch-out, and the vCPU waits from now on.
	 */
	if (state != VMLAT_WAIT)
		vmlat_vcpu_event(vc, VMLAT_EV_WAKEUP, false, vmlat_now_ns(),
				 NULL, 0, VMLAT_SLOT_UNDECODED);
	/*
	 * Its wait began at sched_waking (the same try_to_wake_up()) or
	 * just now: what ran on its CPU since then is charged, as the wait
	 * time counts.
	 */
	vmlat_victim_woken(vc, task_cpu(p), READ_ONCE(vc->acct.entered_ns));
}

/**
 * vmlat_on_sched_migrate() - a task moves to another CPU's queue
 * @p:		the task
 * @dest_cpu:	where it goes
 *
 * Context: sched_migrate_task tracepoint, runqueue locks held.
 */
void vmlat_on_sched_migrate(struct task_struct *p, int dest_cpu)
{
	struct vmlat_vcpu *vc;

	if (!atomic_read(&vmlat_live_vcpus))
		return;
	vc = vmlat_vcpu_of(p);
	if (!vc || READ_ONCE(vc->victim_cpu) < 0)
		return;
	vmlat_victim_migrate(vc, dest_cpu);
}

/**
 * vmlat_on_sched_exit() - a thread exits
 * @p:	the thread (current)
 *
 * Context: sched_process_exit tracepoint, process context.
 */
void vmlat_on_sched_exit(struct task_struct *p)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_of(p);

	if (!vc) {
		if (unlikely(vmlat_task_untracked(vmlat_task_find(p))))
			vmlat_untracked_exited(p);
		return;
	}
	vmlat_victim_leave(vc, NULL);
	vmlat_vcpu_exited(vc, p);
}
