// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's steal call (hypercall version 4): see steal_call.h.
 */
#include "steal_call.h"

#define STEAL_COST_NS	VMLAT_BUCKET_COST_NS(VMLAT_HC_STEAL_RATE)
#define STEAL_BURST_NS	(VMLAT_HC_STEAL_BURST * STEAL_COST_NS)

/**
 * vmlat_steal_gate_init() - a full rate budget, no calls
 * @g:	a VM's gate
 */
void vmlat_steal_gate_init(struct vmlat_steal_gate *g)
{
	memset(g, 0, sizeof(*g));
	vmlat_bucket_init(&g->rate, STEAL_BURST_NS);
}

/**
 * vmlat_steal_gate_clear_stats() - zero the counters, keep the budget
 * @g:	a VM's gate
 */
void vmlat_steal_gate_clear_stats(struct vmlat_steal_gate *g)
{
	struct vmlat_bucket rate = g->rate;

	memset(g, 0, sizeof(*g));
	g->rate = rate;
}

/**
 * vmlat_steal_page_part() - which figures page @page is made of
 * @page:	the guest's RCX
 *
 * Return: VMLAT_STEAL_PART_NONE for a page that does not exist.
 */
enum vmlat_steal_part vmlat_steal_page_part(u64 page)
{
	if (page <= VMLAT_HC_STEAL_P_INFO)
		return VMLAT_STEAL_PART_VCPU;
	if (page == VMLAT_HC_STEAL_P_TAKERS)
		return VMLAT_STEAL_PART_TAKERS;
	if (page < VMLAT_HC_STEAL_PAGES)
		return VMLAT_STEAL_PART_EXITS;
	return VMLAT_STEAL_PART_NONE;
}

/**
 * vmlat_steal_gate() - whether to answer a steal call, counted
 * @g:		the VM's gate
 * @page:	the page asked for (RCX)
 * @cpl:	the privilege level it was made at; < 0: unknown
 * @allowed:	whether the host's operator allows this VM the call
 * @now:	host time of the call
 *
 * A call from CPL 3 (or an unknown CPL) gets no reply at all: KVM
 * refuses it. One the host does not allow is told so, before anything
 * else: a guest learns nothing of the host's figures then, not even the
 * pages they would have. Only calls allowed and well formed pay into the
 * rate limit.
 *
 * Return: the reply for the guest's RBX, VMLAT_HC_REPLY(call, 0), or 0
 * for none.
 */
u64 vmlat_steal_gate(struct vmlat_steal_gate *g, u64 page, int cpl,
		     bool allowed, u64 now)
{
	g->calls++;
	if (cpl != 0) {
		g->user++;
		return 0;
	}
	if (!allowed) {
		g->denied++;
		return VMLAT_HC_REPLY(VMLAT_HC_CALL_DENIED, 0);
	}
	if (vmlat_steal_page_part(page) == VMLAT_STEAL_PART_NONE) {
		g->malformed++;
		return VMLAT_HC_REPLY(VMLAT_HC_CALL_MALFORMED, 0);
	}
	if (!vmlat_bucket_take(&g->rate, now, STEAL_COST_NS, STEAL_BURST_NS)) {
		g->limited++;
		return VMLAT_HC_REPLY(VMLAT_HC_CALL_LIMITED, 0);
	}
	g->taken++;
	return VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN, 0);
}

/**
 * vmlat_steal_top_add() - an exit reason, into the ranking if it is among
 * the VMLAT_HC_STEAL_TOP that took the most time
 * @s:	the figures; @s->nr_top 0 to begin with
 * @x:	the reason
 *
 * An insertion into a short sorted array: ties keep the order they came
 * in. A reason with no exits is not ranked.
 */
void vmlat_steal_top_add(struct vmlat_steal_src *s,
			 const struct vmlat_steal_exit *x)
{
	unsigned int i;

	if (!x->count)
		return;
	i = s->nr_top < VMLAT_HC_STEAL_TOP ? s->nr_top++ : VMLAT_HC_STEAL_TOP;
	if (i == VMLAT_HC_STEAL_TOP) {
		if (x->total_ns <= s->top[i - 1].total_ns)
			return;
		i--;
	}
	for (; i > 0 && s->top[i - 1].total_ns < x->total_ns; i--)
		s->top[i] = s->top[i - 1];
	s->top[i] = *x;
}

/**
 * vmlat_steal_page() - page @page of the answer
 * @s:		the figures its part needs (vmlat_steal_page_part())
 * @page:	a page that exists
 * @out:	its four values, for RCX, RDX, RSI and RDI
 */
void vmlat_steal_page(const struct vmlat_steal_src *s, u64 page, u64 out[4])
{
	const struct vmlat_steal_exit *x;
	unsigned int r, v;

	out[0] = out[1] = out[2] = out[3] = 0;
	switch (page) {
	case VMLAT_HC_STEAL_P_STEAL:
	case VMLAT_HC_STEAL_P_TIME:
		for (r = 0; r < 4; r++) {
			v = vmlat_steal_vcpu_value(page, r);
			out[r] = v == VMLAT_STEAL_OBSERVED ? s->observed_ns :
				 s->time_ns[v];
		}
		return;
	case VMLAT_HC_STEAL_P_INFO:
		out[0] = s->exits;
		out[1] = s->vcpu;
		out[2] = VMLAT_HC_STEAL_PAGES;
		return;
	case VMLAT_HC_STEAL_P_TAKERS:
		out[0] = s->host_ns;
		out[1] = s->vms_ns;
		out[2] = s->own_ns;
		return;
	}
	if (page < VMLAT_HC_STEAL_P_EXITS || page >= VMLAT_HC_STEAL_PAGES ||
	    page - VMLAT_HC_STEAL_P_EXITS >= s->nr_top)
		return;
	x = &s->top[page - VMLAT_HC_STEAL_P_EXITS];
	out[0] = (u64)x->isa << 32 | x->code;
	out[1] = x->count;
	out[2] = x->total_ns;
}
