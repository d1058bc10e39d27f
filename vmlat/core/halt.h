/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Halt-polling (pure logic): what a vCPU's halts cost and what KVM's
 * polling in them bought.
 *
 * After a HLT exit KVM halts the vCPU (kvm_vcpu_halt(); 5.10's
 * kvm_vcpu_block()): if the vCPU's poll window is open
 * (vcpu->halt_poll_ns, and the guest did not turn polling off through
 * MSR_KVM_POLL_CONTROL), its thread first polls on CPU for an event, up to
 * the window; then it sleeps until one comes. KVM traces the halt's end
 * (kvm_vcpu_wakeup: the halt's length, whether the thread slept, whether
 * the wake-up brought an event), then may grow or shrink the window
 * (kvm_halt_poll_ns, traced before kvm_vcpu_wakeup, with the window the
 * halt had).
 *
 * A poll that ended without sleeping is a hit: the vCPU was back in the
 * guest without a wake-up. One that ended in a sleep is a miss: CPU time
 * that bought nothing. A hit saves about what a sleeping halt's wake-up
 * takes, from the wake-up to the halt's end (woken and waiting for a CPU,
 * switched in, back in KVM): the halts that slept measure it.
 *
 * The halt's poll is told from vmlat's state machine: the time from the
 * halt's beginning (its end less its length) to the thread's first
 * switch-out asleep in KVM after the HLT exit (the state machine's
 * "idle"). The caller serialises everything on one struct vmlat_halt (the
 * vCPU's own thread writes it).
 */
#ifndef _VMLAT_HALT_H
#define _VMLAT_HALT_H

#include "pure.h"

/**
 * struct vmlat_halt_stats - a vCPU's halts
 * @halts:	halts KVM ended (kvm_vcpu_wakeup)
 * @polled:	of which KVM polled first: its window was open (KVM's
 *		halt_attempted_poll)
 * @hits:	polls that ended without a sleep (KVM's
 *		halt_successful_poll from 5.16 on)
 * @hit_ns:	their length: CPU time (KVM's halt_poll_success_ns)
 * @miss_ns:	the CPU time of the polls that ended in a sleep (KVM's
 *		halt_poll_fail_ns)
 * @slept:	halts whose thread slept (polled or not)
 * @slept_ns:	their time from that sleep to their end: asleep, then
 *		woken and back on a CPU (KVM's halt_wait_ns)
 * @woken:	of @slept, those vmlat saw woken after they slept
 * @wake_ns:	their time from the wake-up to the halt's end: what a hit
 *		saves, about
 * @invalid:	halts ended by a wake-up that brought the vCPU no event
 *		(KVM's !valid: a signal, a spurious wake-up)
 * @grows:	times KVM grew the vCPU's window
 * @shrinks:	times KVM shrank it (to 0 after a halt past the maximum,
 *		with the default halt_poll_ns_shrink)
 * @unseen:	of @slept, halts vmlat did not see fall asleep in KVM after
 *		a HLT exit (loaded during one; a halt KVM began again on
 *		the next KVM_RUN, the thread having left for its VMM; 5.10's
 *		wait of a vCPU for its INIT): their poll and sleep are in
 *		neither sum
 */
struct vmlat_halt_stats {
	u64 halts;
	u64 polled;
	u64 hits;
	u64 hit_ns;
	u64 miss_ns;
	u64 slept;
	u64 slept_ns;
	u64 woken;
	u64 wake_ns;
	u64 invalid;
	u64 grows;
	u64 shrinks;
	u64 unseen;
};

/**
 * struct vmlat_halt - one vCPU's halts
 * @s:		its statistics
 * @asleep_ns:	its first switch-out asleep in KVM after a HLT exit, since
 *		that exit or its last halt; 0: none
 * @window_ns:	the window its halt began with, as KVM's change of it said
 * @window_set:	KVM changed the window in the halt ending: @window_ns holds
 */
struct vmlat_halt {
	struct vmlat_halt_stats s;
	u64 asleep_ns;
	u32 window_ns;
	bool window_set;
};

/**
 * struct vmlat_halt_end - how KVM ended a halt, and what vmlat knows of it
 * @now_ns:	the end (kvm_vcpu_wakeup), on the caller's clock
 * @halt_ns:	the halt's length, as KVM traced it
 * @waited:	KVM's: the thread slept
 * @valid:	KVM's: the wake-up brought the vCPU an event
 * @window_ns:	the vCPU's poll window now (after any change: see
 *		struct vmlat_halt.window_ns)
 * @may_poll:	the guest left polling on (MSR_KVM_POLL_CONTROL bit 0)
 * @woken_ns:	the last wake-up that ended a sleep of the vCPU (struct
 *		vmlat_vcpu_acct.woken_ns)
 */
struct vmlat_halt_end {
	u64 now_ns;
	u64 halt_ns;
	bool waited;
	bool valid;
	u32 window_ns;
	bool may_poll;
	u64 woken_ns;
};

/* A kvm_exit: a sleep before it is no halt's. */
static inline void vmlat_halt_arm(struct vmlat_halt *h)
{
	h->asleep_ns = 0;
}

/* The thread was switched out asleep at @now_ns. */
static inline void vmlat_halt_asleep(struct vmlat_halt *h, u64 now_ns)
{
	if (!h->asleep_ns)
		h->asleep_ns = now_ns;
}

void vmlat_halt_init(struct vmlat_halt *h);
void vmlat_halt_reset(struct vmlat_halt *h);
void vmlat_halt_window(struct vmlat_halt *h, bool grow, u32 old_ns);
u64 vmlat_halt_ended(struct vmlat_halt *h, const struct vmlat_halt_end *e);
void vmlat_halt_add(struct vmlat_halt_stats *sum,
		    const struct vmlat_halt_stats *s);

#endif /* _VMLAT_HALT_H */
