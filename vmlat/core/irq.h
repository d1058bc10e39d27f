/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interrupt delivery latency (pure logic): the interrupts made pending
 * for one vCPU and not delivered yet.
 *
 * An interrupt is pending from the moment KVM accepts it into the
 * target's local APIC (kvm_apic_accept_irq), or, for the LAPIC timer,
 * from the expiry of its hrtimer (the accept comes later, in the target's
 * own thread, once it runs). It is delivered at the first VM entry
 * (kvm_entry) of the target after KVM injected its vector
 * (kvm_inj_virq): the delivery latency is the time between. Each pending
 * interrupt remembers where it came from (enum vmlat_irq_src) and where
 * its target was when it became pending (enum vmlat_irq_at): what made a
 * late delivery late.
 *
 * What KVM never injects (with APICv or AVIC the CPU delivers it; a
 * disabled APIC drops it) is dropped once it has waited
 * VMLAT_IRQ_MAX_ENTRIES VM entries of its target and the caller says KVM
 * does not hold it (not in its APIC's IRR, nor still being made pending
 * by its sender; asked then and each VMLAT_IRQ_MAX_ENTRIES entries
 * after), counted as not injected: it would otherwise hold a place and
 * lend its old time to a later interrupt of its vector.
 *
 * An interrupt made pending while its vector already is (and not yet
 * injected) is the same interrupt to the guest, counted coalesced. The
 * caller sees an accept before KVM sets the IRR, and an injection after
 * KVM cleared it: a sender stalled between its accept and its IRR store
 * while the target injected the vector (an emulated CPU descheduled,
 * under load) made a separate interrupt of one it saw coalesced. KVM
 * injects it later with nothing pending of its vector. The last
 * interrupt counted coalesced is remembered for that: an injection of
 * its vector that matches nothing, within VMLAT_IRQ_MAX_ENTRIES VM exits
 * of its target, is taken for that one's, pending from its accept (and
 * no longer coalesced). The other way round cannot happen: an accept
 * seen after an injection comes after it in KVM too. What else leaves an
 * injection unmatched (an accept vmlat could not attribute) in that
 * window is taken for it as well.
 *
 * The caller serialises everything on one struct vmlat_irq_pend.
 */
#ifndef _VMLAT_IRQ_H
#define _VMLAT_IRQ_H

#include "doc_names.h"	/* enum vmlat_irq_src, enum vmlat_irq_at */
#include "pure.h"
#include "state.h"

extern const char *const vmlat_irq_src_names[VMLAT_NR_IRQ_SOURCES];
extern const char *const vmlat_irq_at_names[VMLAT_NR_IRQ_ATS];
/* Each source's histogram: "irq_timer", ... */
extern const char *const vmlat_irq_hist_names[VMLAT_NR_IRQ_SOURCES];
/* The TSC-deadline timer's: "timer_early", "timer_late" */
extern const char *const vmlat_expire_hist_names[VMLAT_NR_EXPIRE_HISTS];

/* Interrupts one vCPU may have pending and waiting for their delivery. */
#define VMLAT_IRQ_PEND		4
/* VM entries an interrupt may wait for its injection before it is dropped */
#define VMLAT_IRQ_MAX_ENTRIES	16

/**
 * struct vmlat_irq_entry - one pending interrupt
 * @ns:		when it became pending
 * @wait:	its target's time waiting for a CPU until then (runnable,
 *		off CPU: preempted, or woken and not yet running)
 * @vec:	its vector
 * @src:	enum vmlat_irq_src
 * @at:		enum vmlat_irq_at: its target's state then
 * @injected:	KVM injected it: delivered at the next VM entry
 * @entries:	VM entries of the target since it became pending, or
 *		since KVM last said it still holds it, up to
 *		VMLAT_IRQ_MAX_ENTRIES
 * @tag:	the caller's, for vmlat_irq_held_fn (who made it pending)
 */
struct vmlat_irq_entry {
	u64 ns;
	u64 wait;
	u64 tag;
	u8 vec;
	u8 src;
	u8 at;
	u8 injected;
	u8 entries;
};

/**
 * struct vmlat_irq_pend - a vCPU's pending interrupts
 * @timer_ns:	its LAPIC timer's hrtimer expired then and KVM has not yet
 *		accepted the timer's interrupt; 0: none
 * @timer_wait:	the vCPU's time waiting for a CPU until then
 * @timer_at:	enum vmlat_irq_at when it expired
 * @timer_entries: VM entries since
 * @nr:		entries in @e, the oldest first
 * @injected:	of which injected
 * @has_co:	@co holds the last interrupt counted coalesced
 * @e:		the pending interrupts
 * @co:		that interrupt, as it would have been added
 * @co_exits:	its target's VM exits when it was
 */
struct vmlat_irq_pend {
	u64 timer_ns;
	u64 timer_wait;
	u8 timer_at;
	u8 timer_entries;
	u8 nr;
	u8 injected;
	u8 has_co;
	struct vmlat_irq_entry e[VMLAT_IRQ_PEND];
	struct vmlat_irq_entry co;
	u64 co_exits;
};

/**
 * struct vmlat_irq_done - a delivered interrupt, or one given up
 * @ns:		its delivery latency (0 for one given up)
 * @wait_ns:	of which its target waited for a CPU
 * @src:	enum vmlat_irq_src
 * @at:		enum vmlat_irq_at
 * @lost:	not delivered: pushed out by a newer one (@pend full), or
 *		never injected (dropped after VMLAT_IRQ_MAX_ENTRIES, KVM
 *		no longer holding it)
 */
struct vmlat_irq_done {
	u64 ns;
	u64 wait_ns;
	u8 src;
	u8 at;
	u8 lost;
};

/*
 * Whether KVM still holds vector @vec pending for the vCPU @arg names (in
 * its APIC's IRR), or may still be making it pending (@tag, given when it
 * became pending, says by whom); false if not, or it cannot tell.
 */
typedef bool (*vmlat_irq_held_fn)(const void *arg, u8 vec, u64 tag);

/* What vmlat_irq_pend_add() did with a new pending interrupt. */
enum vmlat_irq_added {
	VMLAT_IRQ_ADDED,	/* a new entry */
	VMLAT_IRQ_COALESCED,	/* its vector was pending: no new entry */
	VMLAT_IRQ_PUSHED,	/* a new entry, the oldest one pushed out */
};

/* What vmlat_irq_pend_inject() matched an injection with. */
enum vmlat_irq_match {
	VMLAT_IRQ_UNMATCHED,	/* nothing pending of its vector */
	VMLAT_IRQ_MATCHED,	/* its vector's oldest entry not injected */
	VMLAT_IRQ_UNCOALESCED,	/* the last one counted coalesced */
};

/**
 * vmlat_irq_at() - where a vCPU is, for an interrupt made pending then
 * @state:	its state (enum vmlat_state)
 * @hlt:	the exit it is handling is a HLT (halt-polling, in kernel)
 */
static inline enum vmlat_irq_at vmlat_irq_at(u8 state, bool hlt)
{
	switch (state) {
	case VMLAT_GUEST:
		return VMLAT_AT_GUEST;
	case VMLAT_KERNEL:
		return hlt ? VMLAT_AT_HALTED : VMLAT_AT_HOST;
	case VMLAT_USER:
		return VMLAT_AT_HOST;
	case VMLAT_PREEMPTED:
	case VMLAT_WAIT:
		return VMLAT_AT_PREEMPTED;
	case VMLAT_IDLE:
		return VMLAT_AT_HALTED;
	default:
		return VMLAT_AT_BLOCKED;
	}
}

enum vmlat_irq_added vmlat_irq_pend_add(struct vmlat_irq_pend *p, u8 vec,
					enum vmlat_irq_src src,
					enum vmlat_irq_at at, u64 ns, u64 wait,
					u64 tag, u64 exits,
					struct vmlat_irq_done *pushed);
enum vmlat_irq_match vmlat_irq_pend_inject(struct vmlat_irq_pend *p, u8 vec,
					   u64 exits,
					   struct vmlat_irq_done *co);
unsigned int vmlat_irq_pend_entry(struct vmlat_irq_pend *p, u64 now,
				  u64 wait, vmlat_irq_held_fn held,
				  const void *arg, struct vmlat_irq_done *out);
void vmlat_irq_timer_expired(struct vmlat_irq_pend *p, u64 ns,
			     enum vmlat_irq_at at, u64 wait);
bool vmlat_irq_timer_take(struct vmlat_irq_pend *p, u64 *ns,
			  enum vmlat_irq_at *at, u64 *wait);

/* The waits for a CPU a vCPU remembers: vmlat_irq_deadline(). */
#define VMLAT_IRQ_WAITS		4

/**
 * struct vmlat_irq_waits - a vCPU's last waits for a CPU (runnable, off
 * CPU: preempted, or woken and not yet running), each remembered when it
 * ends
 * @end:	when each ended; 0: none yet
 * @ns:		how long it lasted
 * @next:	the slot the next one takes (the oldest's)
 */
struct vmlat_irq_waits {
	u64 end[VMLAT_IRQ_WAITS];
	u64 ns[VMLAT_IRQ_WAITS];
	u8 next;
};

/* @w's vCPU ended a wait of @ns at @end. */
static inline void vmlat_irq_waits_add(struct vmlat_irq_waits *w, u64 end,
				       u64 ns)
{
	w->end[w->next] = end;
	w->ns[w->next] = ns < end ? ns : end;
	w->next = (w->next + 1) % VMLAT_IRQ_WAITS;
}

bool vmlat_irq_deadline(const struct vmlat_irq_waits *w, u64 deadline,
			u64 entered, u64 wait_now, enum vmlat_irq_at *at,
			u64 *wait);

/*
 * Whether a VM entry of the vCPU has anything to do: one load, for
 * kvm_entry's fast path (a remembered coalesced interrupt is not: it is
 * bounded by exits, not entries). Racy reads are fine: what another CPU
 * adds meanwhile waits for the next entry.
 */
static inline bool vmlat_irq_pend_busy(const struct vmlat_irq_pend *p)
{
	return READ_ONCE(p->nr) || READ_ONCE(p->timer_ns);
}

#endif /* _VMLAT_IRQ_H */
