// SPDX-License-Identifier: GPL-2.0
/*
 * One clock-sync hypercall of a guest: see sync_call.h.
 *
 * The guest is not trusted. What it sends costs a few checks and, at most
 * VMLAT_HC_MAX_RATE times a second, an O(1) amortized hull update in the
 * fixed-size fit of its own VM. What is refused is counted.
 */
#include "sync_call.h"
#include "vmlat_hypercall.h"

#define SYNC_COST_NS	VMLAT_BUCKET_COST_NS(VMLAT_HC_MAX_RATE)
#define SYNC_BURST_NS	(VMLAT_HC_BURST * SYNC_COST_NS)

/**
 * vmlat_sync_data_init() - a new VM: no exchange, no mapping, no counts
 * @d:	its sync state
 */
void vmlat_sync_data_init(struct vmlat_vm_sync_data *d)
{
	memset(d, 0, sizeof(*d));
	vmlat_clock_fit_init(&d->fit);
	vmlat_bucket_init(&d->rate, SYNC_BURST_NS);
}

/**
 * vmlat_sync_data_clear_stats() - zero the counters, keep the mapping
 * @d:	a VM's sync state
 */
void vmlat_sync_data_clear_stats(struct vmlat_vm_sync_data *d)
{
	d->calls = 0;
	d->user = 0;
	d->taken = 0;
	d->malformed = 0;
	d->replayed = 0;
	d->unpaired = 0;
	d->refused = 0;
	d->limited = 0;
	d->restarts = 0;
}

/* Complete the pending exchange with @a's g2: what became of it. */
static unsigned int sync_pair(struct vmlat_vm_sync_data *d,
			      const struct vmlat_sync_args *a, u64 now,
			      struct vmlat_sync_xchg *x)
{
	if (a->seq != d->pend_seq + 1 || !a->prev_g2) {
		d->unpaired++;
		return VMLAT_HC_PREV_UNPAIRED;
	}
	if (vmlat_clock_fit_add(&d->fit, d->pend_g1, d->pend_h, a->prev_g2)) {
		d->refused++;
		return VMLAT_HC_PREV_REFUSED;
	}
	d->taken++;
	d->last_ns = now;
	x->seq = d->pend_seq;
	x->g1 = d->pend_g1;
	x->h = d->pend_h;
	x->g2 = a->prev_g2;
	return VMLAT_HC_PREV_MAPPED;
}

/**
 * vmlat_sync_data_call() - a sync hypercall of the VM's guest
 * @d:		the VM's sync state
 * @a:		the call
 * @now:	the host time of the call
 * @x:		set to the exchange the call completed; its seq is 0 if
 *		none
 *
 * A call not made at CPL 0 changes nothing but @d->calls and @d->user:
 * not the session, not the pending exchange, not the rate budget. A call
 * over the rate limit changes nothing but counters: the guest may make it
 * again, with the same seq and g2.
 *
 * Context: the caller holds the VM's sync lock.
 * Return: the reply for the guest's RBX, VMLAT_HC_REPLY(call, prev); 0 if
 * it gets none (a call from another ring than 0, a header other than
 * version 2's: version 1 guests treat RBX as input only).
 */
u64 vmlat_sync_data_call(struct vmlat_vm_sync_data *d,
			 const struct vmlat_sync_args *a, u64 now,
			 struct vmlat_sync_xchg *x)
{
	unsigned int call = VMLAT_HC_CALL_TAKEN, prev = VMLAT_HC_PREV_NONE;
	bool v2 = a->hdr == VMLAT_HC_HDR;

	x->seq = 0;
	d->calls++;
	if (a->cpl != 0) {
		d->user++;
		return 0;
	}
	if ((!v2 && a->hdr != VMLAT_HC_HDR_V1) || !a->seq) {
		d->malformed++;
		call = VMLAT_HC_CALL_MALFORMED;
		goto out;
	}
	if (!vmlat_bucket_take(&d->rate, now, SYNC_COST_NS, SYNC_BURST_NS)) {
		d->limited++;
		call = VMLAT_HC_CALL_LIMITED;
		goto out;
	}
	if (d->pend && (a->seq == 1 || a->seq < d->pend_seq)) {
		/* The guest started over: so does its mapping. */
		vmlat_clock_fit_init(&d->fit);
		d->pend = false;
		d->restarts++;
		prev = VMLAT_HC_PREV_RESTARTED;
	} else if (d->pend && a->seq == d->pend_seq) {
		d->replayed++;
		call = VMLAT_HC_CALL_REPLAYED;
		goto out;
	} else if (d->pend) {
		prev = sync_pair(d, a, now, x);
	}
	d->pend = true;
	d->pend_seq = a->seq;
	d->pend_g1 = a->g1;
	d->pend_h = now;
out:
	return v2 ? VMLAT_HC_REPLY(call, prev) : 0;
}
