// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupt delivery latency: a vCPU's pending interrupts (irq.h).
 */
#include "irq.h"

const char *const vmlat_irq_src_names[VMLAT_NR_IRQ_SOURCES] = {
	VMLAT_IRQ_SOURCES(VMLAT_NAME_, VMLAT_COMMA_)
};

const char *const vmlat_irq_at_names[VMLAT_NR_IRQ_ATS] = {
	VMLAT_IRQ_ATS(VMLAT_NAME_, VMLAT_COMMA_)
};

const char *const vmlat_irq_hist_names[VMLAT_NR_IRQ_SOURCES] = {
	VMLAT_IRQ_SOURCES(VMLAT_IRQ_HIST_NAME_, VMLAT_COMMA_)
};

const char *const vmlat_expire_hist_names[VMLAT_NR_EXPIRE_HISTS] = {
	VMLAT_EXPIRE_HISTS(VMLAT_NAME_, VMLAT_COMMA_)
};

/* Remove entry @i of @p, keeping the others' order (oldest first). */
static void vmlat_irq_remove(struct vmlat_irq_pend *p, unsigned int i)
{
	if (p->e[i].injected)
		p->injected--;
	for (; i + 1 < p->nr; i++)
		p->e[i] = p->e[i + 1];
	p->nr--;
}

/**
 * vmlat_irq_pend_add() - an interrupt became pending
 * @p:		its target's pending interrupts
 * @vec:	its vector
 * @src:	where it came from
 * @at:		where its target was
 * @ns:		when
 * @wait:	its target's time waiting for a CPU until then
 * @tag:	the caller's, given back to vmlat_irq_pend_entry()'s @held
 * @exits:	its target's VM exits until then
 * @pushed:	the entry pushed out, for VMLAT_IRQ_PUSHED
 *
 * An interrupt whose vector is already pending and not yet injected is
 * the same interrupt to the guest (one bit of its APIC's IRR): the entry
 * keeps its earlier time, and this one is remembered (irq.h says why).
 * Otherwise it takes a new entry; if there is none, the oldest entry not
 * injected yet (or else the oldest) makes room.
 *
 * Return: what became of it.
 */
enum vmlat_irq_added vmlat_irq_pend_add(struct vmlat_irq_pend *p, u8 vec,
					enum vmlat_irq_src src,
					enum vmlat_irq_at at, u64 ns, u64 wait,
					u64 tag, u64 exits,
					struct vmlat_irq_done *pushed)
{
	enum vmlat_irq_added ret = VMLAT_IRQ_ADDED;
	struct vmlat_irq_entry *e;
	unsigned int i, out = 0;

	for (i = 0; i < p->nr; i++)
		if (p->e[i].vec == vec && !p->e[i].injected)
			break;
	if (i < p->nr) {
		e = &p->co;
		p->co_exits = exits;
		p->has_co = 1;
		ret = VMLAT_IRQ_COALESCED;
		goto fill;
	}
	/* A new one of its vector comes after it in KVM too. */
	if (p->has_co && p->co.vec == vec)
		p->has_co = 0;
	if (p->nr == VMLAT_IRQ_PEND) {
		for (i = 0; i < p->nr; i++)
			if (!p->e[i].injected) {
				out = i;
				break;
			}
		e = &p->e[out];
		pushed->ns = 0;
		pushed->wait_ns = 0;
		pushed->src = e->src;
		pushed->at = e->at;
		pushed->lost = 1;
		vmlat_irq_remove(p, out);
		ret = VMLAT_IRQ_PUSHED;
	}
	e = &p->e[p->nr];
fill:
	e->ns = ns;
	e->wait = wait;
	e->tag = tag;
	e->vec = vec;
	e->src = src;
	e->at = at;
	e->injected = 0;
	e->entries = 0;
	if (ret != VMLAT_IRQ_COALESCED)
		WRITE_ONCE(p->nr, p->nr + 1);
	return ret;
}

/**
 * vmlat_irq_pend_inject() - KVM injected @vec for the next VM entry
 * @p:		the vCPU's pending interrupts
 * @vec:	the vector
 * @exits:	the vCPU's VM exits until now
 * @co:		the one no longer coalesced, for VMLAT_IRQ_UNCOALESCED: its
 *		@src and @at
 *
 * The oldest pending entry of @vec, not injected yet, is. With none, the
 * last interrupt counted coalesced is, if it was of @vec, within
 * VMLAT_IRQ_MAX_ENTRIES exits, and there is room for it (irq.h).
 *
 * Return: what the injection matched.
 */
enum vmlat_irq_match vmlat_irq_pend_inject(struct vmlat_irq_pend *p, u8 vec,
					   u64 exits,
					   struct vmlat_irq_done *co)
{
	unsigned int i;

	for (i = 0; i < p->nr; i++) {
		if (p->e[i].vec != vec || p->e[i].injected)
			continue;
		p->e[i].injected = 1;
		p->injected++;
		return VMLAT_IRQ_MATCHED;
	}
	if (p->has_co && exits - p->co_exits > VMLAT_IRQ_MAX_ENTRIES)
		p->has_co = 0;
	if (!p->has_co || p->co.vec != vec || p->nr == VMLAT_IRQ_PEND)
		return VMLAT_IRQ_UNMATCHED;
	p->has_co = 0;
	p->e[p->nr] = p->co;
	p->e[p->nr].injected = 1;
	p->injected++;
	WRITE_ONCE(p->nr, p->nr + 1);
	co->src = p->co.src;
	co->at = p->co.at;
	return VMLAT_IRQ_UNCOALESCED;
}

/**
 * vmlat_irq_pend_entry() - the vCPU entered the guest
 * @p:		its pending interrupts
 * @now:	when
 * @wait:	its time waiting for a CPU until now
 * @held:	whether KVM still holds a vector pending, or NULL
 * @arg:	@held's argument
 * @out:	what this entry delivered or gave up, VMLAT_IRQ_PEND at most
 *
 * Injected entries are delivered now: of their latency, the vCPU waited
 * for a CPU what its waiting time grew by since (none if it went back: a
 * reset). The others wait. Each VMLAT_IRQ_MAX_ENTRIES entries, one that
 * @held says KVM still holds waits on (the guest may keep its interrupts
 * off, or a higher vector in service, for many exits), as does one whose
 * sender may not have made it pending yet; one it does not (or all,
 * without @held) is given up (@out's lost). So is a timer expiry
 * KVM has not accepted in VMLAT_IRQ_MAX_ENTRIES entries.
 *
 * Return: the number of @out filled in.
 */
unsigned int vmlat_irq_pend_entry(struct vmlat_irq_pend *p, u64 now,
				  u64 wait, vmlat_irq_held_fn held,
				  const void *arg, struct vmlat_irq_done *out)
{
	struct vmlat_irq_entry *e;
	unsigned int i = 0, n = 0;
	u64 w;

	if (p->timer_ns && ++p->timer_entries >= VMLAT_IRQ_MAX_ENTRIES)
		WRITE_ONCE(p->timer_ns, 0);
	while (i < p->nr) {
		e = &p->e[i];
		if (e->injected) {
			out[n].ns = now > e->ns ? now - e->ns : 0;
			w = wait > e->wait ? wait - e->wait : 0;
			out[n].wait_ns = w < out[n].ns ? w : out[n].ns;
			out[n].lost = 0;
		} else if (++e->entries >= VMLAT_IRQ_MAX_ENTRIES &&
			   !(held && held(arg, e->vec, e->tag))) {
			out[n].ns = 0;
			out[n].wait_ns = 0;
			out[n].lost = 1;
		} else {
			if (e->entries >= VMLAT_IRQ_MAX_ENTRIES)
				e->entries = 0;
			i++;
			continue;
		}
		out[n].src = e->src;
		out[n].at = e->at;
		n++;
		vmlat_irq_remove(p, i);
	}
	return n;
}

/**
 * vmlat_irq_timer_expired() - the vCPU's LAPIC timer expired
 * @p:		its pending interrupts
 * @ns:		when
 * @at:		where the vCPU was
 * @wait:	its time waiting for a CPU until then
 *
 * KVM accepts the timer's interrupt later, in the vCPU's thread; until
 * then the first expiry is the one that counts.
 */
void vmlat_irq_timer_expired(struct vmlat_irq_pend *p, u64 ns,
			     enum vmlat_irq_at at, u64 wait)
{
	if (p->timer_ns)
		return;
	p->timer_at = at;
	p->timer_wait = wait;
	p->timer_entries = 0;
	WRITE_ONCE(p->timer_ns, ns ? ns : 1);
}

/**
 * vmlat_irq_timer_take() - KVM accepted an interrupt from the vCPU's own
 * thread, with no other source: its timer's, if it expired
 * @p:		its pending interrupts
 * @ns:		when the timer expired
 * @at:		where the vCPU was then
 * @wait:	its time waiting for a CPU until then
 *
 * Return: whether the timer had expired (and is now taken).
 */
bool vmlat_irq_timer_take(struct vmlat_irq_pend *p, u64 *ns,
			  enum vmlat_irq_at *at, u64 *wait)
{
	if (!p->timer_ns)
		return false;
	*ns = p->timer_ns;
	*at = p->timer_at;
	*wait = p->timer_wait;
	WRITE_ONCE(p->timer_ns, 0);
	return true;
}

/**
 * vmlat_irq_deadline() - where a vCPU was when its timer's deadline
 * passed, for a timer KVM keeps while the vCPU's thread runs in the host
 * or waits for a CPU (VMX's preemption timer): it makes the interrupt
 * pending only at the VM exit that follows the vCPU's next VM entry
 * @w:		the vCPU's last waits; it runs now, on CPU
 * @deadline:	when the deadline passed
 * @entered:	the VM entry whose guest stretch that VM exit ended (0:
 *		not known)
 * @wait_now:	the vCPU's time waiting for a CPU until now
 * @at:		set to where it was at @deadline
 * @wait:	set to its time waiting for a CPU until @deadline
 *
 * A deadline from @entered on passed in the guest: the VM exit came with
 * it, and times it. One before passed while the vCPU was out of the
 * guest: preempted or waiting, if one of @w's waits holds it, else in the
 * host (handling an exit, or asleep other than halted: a halt moves the
 * timer to an hrtimer). Its wait until the deadline is @wait_now less
 * what of @w's waits came after it: more waits since than @w holds (or
 * a reset of the vCPU's times meanwhile) leave it too high, never below
 * 0.
 *
 * Return: true if the deadline passed out of the guest (@at and @wait
 * set), false if in it (or @entered is not known).
 */
bool vmlat_irq_deadline(const struct vmlat_irq_waits *w, u64 deadline,
			u64 entered, u64 wait_now, enum vmlat_irq_at *at,
			u64 *wait)
{
	u64 after = 0;
	unsigned int i;

	if (!entered || deadline >= entered)
		return false;
	*at = VMLAT_AT_HOST;
	for (i = 0; i < VMLAT_IRQ_WAITS; i++) {
		u64 end = w->end[i], begin = end - w->ns[i];

		if (end <= deadline)
			continue;
		if (begin <= deadline) {
			*at = VMLAT_AT_PREEMPTED;
			after += end - deadline;
		} else {
			after += w->ns[i];
		}
	}
	*wait = after < wait_now ? wait_now - after : 0;
	return true;
}
