// SPDX-License-Identifier: GPL-2.0
/*
 * The host side of the clock-sync hypercall: see clock_sync.h.
 *
 * The guest is not trusted. What it sends costs the host a few checks
 * and, at most VMLAT_HC_MAX_RATE times a second, an O(1) amortized hull
 * update in a fixed-size table of its own VM, under that VM's lock; it
 * never allocates and never touches another VM's state. What is refused
 * is counted.
 */
#include <linux/string.h>
#include <linux/time64.h>

#include "clock_sync.h"
#include "vmlat_hypercall.h"

#define SYNC_COST_NS	(NSEC_PER_SEC / VMLAT_HC_MAX_RATE)
#define SYNC_BURST_NS	(10 * SYNC_COST_NS)

/**
 * vmlat_vm_sync_init() - a new VM: no exchange, no mapping
 * @s:	its sync state
 */
void vmlat_vm_sync_init(struct vmlat_vm_sync *s)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&s->lock, flags);
	vmlat_clock_fit_init(&s->d.fit);
	s->d.pend = false;
	s->d.last_ns = 0;
	s->d.credit_ns = SYNC_BURST_NS;
	s->d.refill_ns = 0;
	raw_spin_unlock_irqrestore(&s->lock, flags);
	vmlat_vm_sync_clear_stats(s);
}

/**
 * vmlat_vm_sync_clear_stats() - zero the counters, keep the mapping
 * @s:	a VM's sync state
 */
void vmlat_vm_sync_clear_stats(struct vmlat_vm_sync *s)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&s->lock, flags);
	s->d.calls = 0;
	s->d.taken = 0;
	s->d.malformed = 0;
	s->d.replayed = 0;
	s->d.unpaired = 0;
	s->d.refused = 0;
	s->d.limited = 0;
	s->d.restarts = 0;
	raw_spin_unlock_irqrestore(&s->lock, flags);
	atomic64_set(&s->exits, 0);
	atomic64_set(&s->exit_ns, 0);
}

/* Context: @s->lock held. */
static bool rate_ok(struct vmlat_vm_sync *s, u64 now)
{
	if (now > s->d.refill_ns) {
		s->d.credit_ns = min_t(u64, SYNC_BURST_NS, s->d.credit_ns +
				       (now - s->d.refill_ns));
		s->d.refill_ns = now;
	}
	if (s->d.credit_ns < SYNC_COST_NS)
		return false;
	s->d.credit_ns -= SYNC_COST_NS;
	return true;
}

/**
 * vmlat_vm_sync_call() - a sync hypercall of the VM's guest
 * @s:		the VM's sync state
 * @now:	the host time of the call
 * @a0:		header
 * @a1:		g1 of this exchange
 * @a2:		g2 of the previous one
 * @a3:		seq
 * @x:		set to the exchange the call completed, if any
 *
 * Context: kvm_hypercall tracepoint, a vCPU thread of the VM.
 * Return: true if an exchange was taken into the mapping (in @x).
 */
bool vmlat_vm_sync_call(struct vmlat_vm_sync *s, u64 now, unsigned long a0,
			unsigned long a1, unsigned long a2, unsigned long a3,
			struct vmlat_sync_xchg *x)
{
	unsigned long flags;
	bool taken = false;

	raw_spin_lock_irqsave(&s->lock, flags);
	s->d.calls++;
	if (a0 != VMLAT_HC_HDR || !a3) {
		s->d.malformed++;
		goto out;
	}
	if (!rate_ok(s, now)) {
		s->d.limited++;
		goto out;
	}
	if (a3 == 1 && s->d.pend) {
		/* The guest started over: so does its mapping. */
		vmlat_clock_fit_init(&s->d.fit);
		s->d.pend = false;
		s->d.restarts++;
	}
	if (s->d.pend) {
		if (a3 <= s->d.pend_seq) {
			s->d.replayed++;
			goto out;
		}
		if (a3 == s->d.pend_seq + 1 && a2) {
			if (vmlat_clock_fit_add(&s->d.fit, s->d.pend_g1,
					   s->d.pend_h, a2)) {
				s->d.refused++;
			} else {
				s->d.taken++;
				s->d.last_ns = now;
				x->seq = s->d.pend_seq;
				x->g1 = s->d.pend_g1;
				x->h = s->d.pend_h;
				x->g2 = a2;
				taken = true;
			}
		} else {
			s->d.unpaired++;
		}
	}
	s->d.pend = true;
	s->d.pend_seq = a3;
	s->d.pend_g1 = a1;
	s->d.pend_h = now;
out:
	raw_spin_unlock_irqrestore(&s->lock, flags);
	return taken;
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
