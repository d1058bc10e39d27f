// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/irq.c, a vCPU's pending interrupts: an
 * interrupt is delivered at the first VM entry after its injection, with
 * the time it became pending and what it was then; a vector pending twice
 * is one interrupt; what does not fit or is never injected is given up,
 * counted; and nothing is counted twice or forgotten.
 */
#include <kunit/test.h>

#include "irq.h"
#include "kunit_lcg.h"

static struct vmlat_irq_pend p;

/* A VM entry of @p's vCPU, without KVM's word on what it holds. */
static unsigned int pend_entry(u64 now, u64 wait, struct vmlat_irq_done *out)
{
	return vmlat_irq_pend_entry(&p, now, wait, NULL, NULL, out);
}

/* @p's vCPU: KVM injects @vec at @exits VM exits; @co as it returns it */
static enum vmlat_irq_match inject_at(u8 vec, u64 exits,
				      struct vmlat_irq_done *co)
{
	return vmlat_irq_pend_inject(&p, vec, exits, co);
}

/* KVM injects @vec into @p's vCPU, at no VM exits yet. */
static enum vmlat_irq_match inject(u8 vec)
{
	struct vmlat_irq_done co;

	return inject_at(vec, 0, &co);
}

/* Pending, entries without its injection, then injected and delivered. */
static void vmlat_irq_delivered_after_injection(struct kunit *test)
{
	struct vmlat_irq_done out[VMLAT_IRQ_PEND], pushed;

	memset(&p, 0, sizeof(p));
	KUNIT_EXPECT_EQ(test, vmlat_irq_pend_add(&p, 0xec, VMLAT_IRQ_IPI,
						 VMLAT_AT_PREEMPTED, 100, 40,
						 0, 0, &pushed), VMLAT_IRQ_ADDED);
	KUNIT_EXPECT_TRUE(test, vmlat_irq_pend_busy(&p));
	/* A VM entry before the injection delivers nothing. */
	KUNIT_EXPECT_EQ(test, pend_entry(150, 60, out), 0U);
	/* Another vector's injection is not this one's. */
	KUNIT_EXPECT_EQ(test, inject(0xed), VMLAT_IRQ_UNMATCHED);
	KUNIT_EXPECT_EQ(test, inject(0xec), VMLAT_IRQ_MATCHED);
	KUNIT_EXPECT_EQ(test, pend_entry(350, 130, out), 1U);
	KUNIT_EXPECT_EQ(test, out[0].ns, 250ULL);
	/* It waited for a CPU what the vCPU's waiting grew by meanwhile. */
	KUNIT_EXPECT_EQ(test, out[0].wait_ns, 90ULL);
	KUNIT_EXPECT_EQ(test, out[0].src, (u8)VMLAT_IRQ_IPI);
	KUNIT_EXPECT_EQ(test, out[0].at, (u8)VMLAT_AT_PREEMPTED);
	KUNIT_EXPECT_EQ(test, out[0].lost, (u8)0);
	KUNIT_EXPECT_FALSE(test, vmlat_irq_pend_busy(&p));
	/* Injected again (KVM's reinjection): nothing pending to match. */
	KUNIT_EXPECT_EQ(test, inject(0xec), VMLAT_IRQ_UNMATCHED);
	KUNIT_EXPECT_EQ(test, pend_entry(400, 130, out), 0U);
}

/* The part waiting for a CPU: never more than the latency, nor negative. */
static void vmlat_irq_wait_bounded(struct kunit *test)
{
	struct vmlat_irq_done out[VMLAT_IRQ_PEND], pushed;

	memset(&p, 0, sizeof(p));
	vmlat_irq_pend_add(&p, 0x20, VMLAT_IRQ_IPI, VMLAT_AT_PREEMPTED, 100,
			   500, 0, 0, &pushed);
	vmlat_irq_pend_add(&p, 0x21, VMLAT_IRQ_IPI, VMLAT_AT_PREEMPTED, 100,
			   500, 0, 0, &pushed);
	KUNIT_EXPECT_EQ(test, inject(0x20), VMLAT_IRQ_MATCHED);
	KUNIT_EXPECT_EQ(test, inject(0x21), VMLAT_IRQ_MATCHED);
	/* Waited longer than pending (a wait that began before): capped. */
	KUNIT_EXPECT_EQ(test, pend_entry(200, 900, out), 2U);
	KUNIT_EXPECT_EQ(test, out[0].wait_ns, 100ULL);
	/* Waiting time that went back (the vCPU's times were reset): none. */
	vmlat_irq_pend_add(&p, 0x22, VMLAT_IRQ_IPI, VMLAT_AT_PREEMPTED, 300,
			   900, 0, 0, &pushed);
	KUNIT_EXPECT_EQ(test, inject(0x22), VMLAT_IRQ_MATCHED);
	KUNIT_EXPECT_EQ(test, pend_entry(400, 50, out), 1U);
	KUNIT_EXPECT_EQ(test, out[0].ns, 100ULL);
	KUNIT_EXPECT_EQ(test, out[0].wait_ns, 0ULL);
}

/* One IRR bit: a vector pending again before its injection is one. */
static void vmlat_irq_coalesced(struct kunit *test)
{
	struct vmlat_irq_done out[VMLAT_IRQ_PEND], pushed;

	memset(&p, 0, sizeof(p));
	vmlat_irq_pend_add(&p, 0x30, VMLAT_IRQ_DEVICE, VMLAT_AT_HALTED, 100,
			   10, 0, 0, &pushed);
	KUNIT_EXPECT_EQ(test, vmlat_irq_pend_add(&p, 0x30, VMLAT_IRQ_DEVICE,
						 VMLAT_AT_GUEST, 200, 50, 0, 0, &pushed),
			VMLAT_IRQ_COALESCED);
	KUNIT_EXPECT_EQ(test, p.nr, (u8)1);
	KUNIT_EXPECT_EQ(test, inject(0x30), VMLAT_IRQ_MATCHED);
	/* Pending after its injection: the guest takes it again later. */
	KUNIT_EXPECT_EQ(test, vmlat_irq_pend_add(&p, 0x30, VMLAT_IRQ_DEVICE,
						 VMLAT_AT_HOST, 300, 100, 0, 0, &pushed),
			VMLAT_IRQ_ADDED);
	KUNIT_EXPECT_EQ(test, pend_entry(400, 100, out), 1U);
	KUNIT_EXPECT_EQ(test, out[0].ns, 300ULL);
	/* Timed from the first, its wait too */
	KUNIT_EXPECT_EQ(test, out[0].wait_ns, 90ULL);
	KUNIT_EXPECT_EQ(test, out[0].at, (u8)VMLAT_AT_HALTED);
	KUNIT_EXPECT_EQ(test, inject(0x30), VMLAT_IRQ_MATCHED);
	KUNIT_EXPECT_EQ(test, pend_entry(450, 100, out), 1U);
	KUNIT_EXPECT_EQ(test, out[0].ns, 150ULL);
	KUNIT_EXPECT_EQ(test, out[0].at, (u8)VMLAT_AT_HOST);
}

/* @vec accepted at @ns, at @exits, once and again before its injection */
static void add_twice(u8 vec, u64 ns, u64 exits)
{
	struct vmlat_irq_done pushed;

	vmlat_irq_pend_add(&p, vec, VMLAT_IRQ_IPI, VMLAT_AT_GUEST, ns, 0, 0,
			   exits, &pushed);
	vmlat_irq_pend_add(&p, vec, VMLAT_IRQ_DEVICE, VMLAT_AT_PREEMPTED,
			   ns + 100, 20, 0, exits, &pushed);
}

/*
 * Seen coalesced, set in the IRR after the first's injection: KVM
 * injects it again with nothing pending of its vector. That injection is
 * the coalesced one's, timed from its accept, once; and only its
 * vector's, within the limit's VM exits, before a new accept of the
 * vector, with room for it.
 */
static void vmlat_irq_uncoalesced(struct kunit *test)
{
	struct vmlat_irq_done out[VMLAT_IRQ_PEND], co, pushed;
	unsigned int i;

	memset(&p, 0, sizeof(p));
	add_twice(0x30, 1000, 5);
	KUNIT_EXPECT_EQ(test, inject_at(0x30, 6, &co), VMLAT_IRQ_MATCHED);
	KUNIT_EXPECT_EQ(test, pend_entry(1300, 0, out), 1U);
	KUNIT_EXPECT_EQ(test, out[0].ns, 300ULL);
	/* Another vector's unmatched injection is not its. */
	KUNIT_EXPECT_EQ(test, inject_at(0x31, 7, &co), VMLAT_IRQ_UNMATCHED);
	KUNIT_EXPECT_EQ(test, inject_at(0x30, 8, &co), VMLAT_IRQ_UNCOALESCED);
	KUNIT_EXPECT_EQ(test, co.src, (u8)VMLAT_IRQ_DEVICE);
	KUNIT_EXPECT_EQ(test, co.at, (u8)VMLAT_AT_PREEMPTED);
	KUNIT_EXPECT_EQ(test, p.injected, (u8)1);
	KUNIT_EXPECT_EQ(test, pend_entry(1600, 70, out), 1U);
	KUNIT_EXPECT_EQ(test, out[0].ns, 500ULL);
	KUNIT_EXPECT_EQ(test, out[0].wait_ns, 50ULL);
	KUNIT_EXPECT_EQ(test, out[0].src, (u8)VMLAT_IRQ_DEVICE);
	KUNIT_EXPECT_EQ(test, out[0].at, (u8)VMLAT_AT_PREEMPTED);
	/* Once. */
	KUNIT_EXPECT_EQ(test, inject_at(0x30, 9, &co), VMLAT_IRQ_UNMATCHED);

	/* The limit's exits after its accept: still; one more: no more. */
	add_twice(0x32, 2000, 10);
	KUNIT_EXPECT_EQ(test, inject_at(0x32, 10, &co), VMLAT_IRQ_MATCHED);
	KUNIT_EXPECT_EQ(test, inject_at(0x32, 10 + VMLAT_IRQ_MAX_ENTRIES, &co),
			VMLAT_IRQ_UNCOALESCED);
	memset(&p, 0, sizeof(p));
	add_twice(0x32, 2000, 10);
	KUNIT_EXPECT_EQ(test, inject_at(0x32, 10, &co), VMLAT_IRQ_MATCHED);
	KUNIT_EXPECT_EQ(test, inject_at(0x32, 11 + VMLAT_IRQ_MAX_ENTRIES, &co),
			VMLAT_IRQ_UNMATCHED);

	/* A new accept of its vector: that one is the injection's. */
	memset(&p, 0, sizeof(p));
	add_twice(0x33, 3000, 20);
	KUNIT_EXPECT_EQ(test, inject_at(0x33, 20, &co), VMLAT_IRQ_MATCHED);
	KUNIT_EXPECT_EQ(test, vmlat_irq_pend_add(&p, 0x33, VMLAT_IRQ_IPI,
						 VMLAT_AT_HOST, 3500, 0, 0, 20,
						 &pushed), VMLAT_IRQ_ADDED);
	KUNIT_EXPECT_EQ(test, inject_at(0x33, 21, &co), VMLAT_IRQ_MATCHED);
	KUNIT_EXPECT_EQ(test, inject_at(0x33, 21, &co), VMLAT_IRQ_UNMATCHED);

	/* No room for it: unmatched, and nothing given up for it. */
	memset(&p, 0, sizeof(p));
	add_twice(0x34, 4000, 30);
	for (i = 1; i < VMLAT_IRQ_PEND; i++)
		vmlat_irq_pend_add(&p, 0x40 + i, VMLAT_IRQ_IPI, VMLAT_AT_GUEST,
				   4000, 0, 0, 30, &pushed);
	KUNIT_EXPECT_EQ(test, inject_at(0x34, 30, &co), VMLAT_IRQ_MATCHED);
	KUNIT_EXPECT_EQ(test, inject_at(0x34, 30, &co), VMLAT_IRQ_UNMATCHED);
	KUNIT_EXPECT_EQ(test, p.nr, (u8)VMLAT_IRQ_PEND);
	KUNIT_EXPECT_EQ(test, p.injected, (u8)1);
}

/* No room: the oldest not injected makes it, and is given up, counted. */
static void vmlat_irq_pushed_out(struct kunit *test)
{
	struct vmlat_irq_done out[VMLAT_IRQ_PEND], pushed;
	unsigned int i, n;

	memset(&p, 0, sizeof(p));
	for (i = 0; i < VMLAT_IRQ_PEND; i++)
		KUNIT_ASSERT_EQ(test, vmlat_irq_pend_add(&p, 0x40 + i,
							 VMLAT_IRQ_OTHER,
							 VMLAT_AT_GUEST,
							 10 * (i + 1), 0,
							 0, 0, &pushed),
				VMLAT_IRQ_ADDED);
	/* 0x40 injected: 0x41, the oldest waiting, goes. */
	KUNIT_EXPECT_EQ(test, inject(0x40), VMLAT_IRQ_MATCHED);
	KUNIT_EXPECT_EQ(test, vmlat_irq_pend_add(&p, 0x50, VMLAT_IRQ_TIMER,
						 VMLAT_AT_HALTED, 100, 0,
						 0, 0, &pushed), VMLAT_IRQ_PUSHED);
	KUNIT_EXPECT_EQ(test, pushed.lost, (u8)1);
	KUNIT_EXPECT_EQ(test, p.nr, (u8)VMLAT_IRQ_PEND);
	KUNIT_EXPECT_EQ(test, inject(0x41), VMLAT_IRQ_UNMATCHED);
	KUNIT_EXPECT_EQ(test, inject(0x50), VMLAT_IRQ_MATCHED);
	n = pend_entry(200, 0, out);
	KUNIT_ASSERT_EQ(test, n, 2U);
	/* Oldest first. */
	KUNIT_EXPECT_EQ(test, out[0].ns, 190ULL);
	KUNIT_EXPECT_EQ(test, out[1].ns, 100ULL);
	KUNIT_EXPECT_EQ(test, out[1].src, (u8)VMLAT_IRQ_TIMER);
	KUNIT_EXPECT_EQ(test, p.nr, (u8)2);
	KUNIT_EXPECT_EQ(test, p.injected, (u8)0);
}

/* Never injected (APICv, a disabled APIC): given up, after the limit. */
static void vmlat_irq_never_injected(struct kunit *test)
{
	struct vmlat_irq_done out[VMLAT_IRQ_PEND], pushed;
	unsigned int i;
	u64 ns, wait;
	enum vmlat_irq_at at;

	memset(&p, 0, sizeof(p));
	vmlat_irq_pend_add(&p, 0x60, VMLAT_IRQ_IPI, VMLAT_AT_GUEST, 5, 0,
			   0, 0, &pushed);
	vmlat_irq_timer_expired(&p, 7, VMLAT_AT_GUEST, 0);
	for (i = 1; i < VMLAT_IRQ_MAX_ENTRIES; i++)
		KUNIT_ASSERT_EQ(test, pend_entry(10 * i, 0, out), 0U);
	KUNIT_EXPECT_EQ(test, pend_entry(1000, 0, out), 1U);
	KUNIT_EXPECT_EQ(test, out[0].lost, (u8)1);
	KUNIT_EXPECT_EQ(test, out[0].ns, 0ULL);
	KUNIT_EXPECT_EQ(test, out[0].src, (u8)VMLAT_IRQ_IPI);
	KUNIT_EXPECT_FALSE(test, vmlat_irq_timer_take(&p, &ns, &at, &wait));
	KUNIT_EXPECT_FALSE(test, vmlat_irq_pend_busy(&p));
}

/* What KVM says it holds (its APIC's IRR), and how often it was asked */
struct held {
	u8 vec;
	bool held;
	unsigned int asked;
	u64 tag;
};

static bool held_fn(const void *arg, u8 vec, u64 tag)
{
	struct held *h = (struct held *)arg;

	h->asked++;
	h->tag = tag;
	return h->held && vec == h->vec;
}

/*
 * Not injected past the limit while KVM holds it (the guest's interrupts
 * off for many exits): it waits on, KVM asked once each limit's entries
 * (with the tag it was made pending with), and is delivered timed from
 * its accept. Once KVM no longer holds one, it is given up within the
 * limit's entries.
 */
static void vmlat_irq_held_waits(struct kunit *test)
{
	struct vmlat_irq_done out[VMLAT_IRQ_PEND], pushed;
	struct held h = { .vec = 0x60, .held = true };
	unsigned int i, n;

	memset(&p, 0, sizeof(p));
	vmlat_irq_pend_add(&p, 0x60, VMLAT_IRQ_IPI, VMLAT_AT_GUEST, 5, 0,
			   0x1234, 0, &pushed);
	/* The same vector again: one interrupt, the first's tag */
	vmlat_irq_pend_add(&p, 0x60, VMLAT_IRQ_IPI, VMLAT_AT_GUEST, 7, 0,
			   0x5678, 0, &pushed);
	for (i = 1; i <= 3 * VMLAT_IRQ_MAX_ENTRIES; i++)
		KUNIT_ASSERT_EQ(test, vmlat_irq_pend_entry(&p, 10 * i, 0,
							   held_fn, &h, out),
				0U);
	KUNIT_EXPECT_EQ(test, h.asked, 3U);
	KUNIT_EXPECT_EQ(test, h.tag, 0x1234ULL);
	KUNIT_ASSERT_EQ(test, inject(0x60), VMLAT_IRQ_MATCHED);
	KUNIT_ASSERT_EQ(test, vmlat_irq_pend_entry(&p, 5000, 0, held_fn, &h,
						   out), 1U);
	KUNIT_EXPECT_EQ(test, out[0].lost, (u8)0);
	KUNIT_EXPECT_EQ(test, out[0].ns, 4995ULL);
	KUNIT_EXPECT_EQ(test, out[0].src, (u8)VMLAT_IRQ_IPI);

	/* Held a while, then no longer (the CPU delivered it: APICv) */
	vmlat_irq_pend_add(&p, 0x60, VMLAT_IRQ_DEVICE, VMLAT_AT_HOST, 6000, 0,
			   0, 0, &pushed);
	for (i = 1; i <= 2 * VMLAT_IRQ_MAX_ENTRIES; i++)
		KUNIT_ASSERT_EQ(test, vmlat_irq_pend_entry(&p, 6000 + i, 0,
							   held_fn, &h, out),
				0U);
	h.held = false;
	for (n = 0, i = 1; !n && i <= VMLAT_IRQ_MAX_ENTRIES + 1; i++)
		n = vmlat_irq_pend_entry(&p, 7000 + i, 0, held_fn, &h, out);
	KUNIT_EXPECT_EQ(test, n, 1U);
	KUNIT_EXPECT_EQ(test, i - 1, (unsigned int)VMLAT_IRQ_MAX_ENTRIES);
	KUNIT_EXPECT_EQ(test, out[0].lost, (u8)1);
	KUNIT_EXPECT_EQ(test, out[0].src, (u8)VMLAT_IRQ_DEVICE);
	KUNIT_EXPECT_FALSE(test, vmlat_irq_pend_busy(&p));
}

/* The timer: its first expiry counts until KVM accepts the interrupt. */
static void vmlat_irq_timer(struct kunit *test)
{
	enum vmlat_irq_at at = VMLAT_AT_BLOCKED;
	u64 ns = 0, wait = 0;

	memset(&p, 0, sizeof(p));
	KUNIT_EXPECT_FALSE(test, vmlat_irq_timer_take(&p, &ns, &at, &wait));
	vmlat_irq_timer_expired(&p, 1000, VMLAT_AT_HALTED, 70);
	vmlat_irq_timer_expired(&p, 2000, VMLAT_AT_GUEST, 80);
	KUNIT_EXPECT_TRUE(test, vmlat_irq_pend_busy(&p));
	KUNIT_EXPECT_TRUE(test, vmlat_irq_timer_take(&p, &ns, &at, &wait));
	KUNIT_EXPECT_EQ(test, ns, 1000ULL);
	KUNIT_EXPECT_EQ(test, at, VMLAT_AT_HALTED);
	KUNIT_EXPECT_EQ(test, wait, 70ULL);
	KUNIT_EXPECT_FALSE(test, vmlat_irq_timer_take(&p, &ns, &at, &wait));
	/* At time 0 (a clock that starts there): still an expiry. */
	vmlat_irq_timer_expired(&p, 0, VMLAT_AT_GUEST, 0);
	KUNIT_EXPECT_TRUE(test, vmlat_irq_timer_take(&p, &ns, &at, &wait));
}

/* Every state of the state machine has its place. */
static void vmlat_irq_at_states(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vmlat_irq_at(VMLAT_GUEST, false), VMLAT_AT_GUEST);
	KUNIT_EXPECT_EQ(test, vmlat_irq_at(VMLAT_KERNEL, false), VMLAT_AT_HOST);
	KUNIT_EXPECT_EQ(test, vmlat_irq_at(VMLAT_KERNEL, true),
			VMLAT_AT_HALTED);
	KUNIT_EXPECT_EQ(test, vmlat_irq_at(VMLAT_USER, false), VMLAT_AT_HOST);
	KUNIT_EXPECT_EQ(test, vmlat_irq_at(VMLAT_PREEMPTED, false),
			VMLAT_AT_PREEMPTED);
	KUNIT_EXPECT_EQ(test, vmlat_irq_at(VMLAT_WAIT, false),
			VMLAT_AT_PREEMPTED);
	KUNIT_EXPECT_EQ(test, vmlat_irq_at(VMLAT_IDLE, false), VMLAT_AT_HALTED);
	KUNIT_EXPECT_EQ(test, vmlat_irq_at(VMLAT_BLOCKED, false),
			VMLAT_AT_BLOCKED);
}

/*
 * Random adds, injections and entries: every interrupt that took an
 * entry ends exactly once, delivered or given up, or is still pending;
 * a delivery is never longer than the time since the first add, and
 * comes only after an injection.
 */
static void vmlat_irq_random_conserved(struct kunit *test)
{
	struct vmlat_irq_done out[VMLAT_IRQ_PEND], pushed, co;
	u64 seed = 39, now = 1000, first = 0, wait = 0, exits = 0;
	u64 taken = 0, delivered = 0, lost = 0, injections = 0;
	u64 coalesced = 0, uncoalesced = 0;
	enum vmlat_irq_added added;
	enum vmlat_irq_match match;
	unsigned int round, i, n;
	u8 vec;

	memset(&p, 0, sizeof(p));
	for (round = 0; round < 20000; round++) {
		now += 1 + lcg_below(&seed, 1000);
		/* The vCPU waited for a CPU for some of that, or not */
		wait += lcg_below(&seed, 2) * lcg_below(&seed, 1000);
		vec = 0x20 + lcg_below(&seed, 6);
		switch (lcg_below(&seed, 3)) {
		case 0:
			added = vmlat_irq_pend_add(&p, vec, VMLAT_IRQ_IPI,
						   VMLAT_AT_GUEST, now, wait,
						   0, exits, &pushed);
			if (added == VMLAT_IRQ_COALESCED) {
				coalesced++;
				break;
			}
			if (added == VMLAT_IRQ_PUSHED) {
				KUNIT_ASSERT_EQ(test, pushed.lost, (u8)1);
				lost++;
			}
			taken++;
			if (!first)
				first = now;
			break;
		case 1:
			match = vmlat_irq_pend_inject(&p, vec, exits, &co);
			injections += match != VMLAT_IRQ_UNMATCHED;
			/* A coalesced one no longer is: it takes an entry. */
			if (match == VMLAT_IRQ_UNCOALESCED) {
				uncoalesced++;
				taken++;
			}
			break;
		default:
			exits++;
			n = pend_entry(now, wait, out);
			KUNIT_ASSERT_LE(test, n, (unsigned int)VMLAT_IRQ_PEND);
			for (i = 0; i < n; i++) {
				if (out[i].lost) {
					lost++;
					continue;
				}
				delivered++;
				KUNIT_ASSERT_LE(test, out[i].ns, now - first);
				KUNIT_ASSERT_LE(test, out[i].wait_ns, out[i].ns);
			}
			break;
		}
		KUNIT_ASSERT_LE(test, p.nr, (u8)VMLAT_IRQ_PEND);
		KUNIT_ASSERT_LE(test, p.injected, p.nr);
		KUNIT_ASSERT_EQ(test, taken, delivered + lost + p.nr);
	}
	KUNIT_EXPECT_GT(test, delivered, 1000ULL);
	KUNIT_EXPECT_GT(test, lost, 0ULL);
	KUNIT_EXPECT_LE(test, delivered, injections);
	KUNIT_EXPECT_GT(test, uncoalesced, 0ULL);
	KUNIT_EXPECT_LT(test, uncoalesced, coalesced);
}

/*
 * A deadline that passed out of the guest: where the vCPU was, and its
 * wait until then, from its last waits.
 */
static void vmlat_irq_deadline_where(struct kunit *test)
{
	static const struct {
		u64 deadline;
		enum vmlat_irq_at at;
		u64 wait;
	} cases[] = {
		/* In the second wait: 100 of it after the deadline */
		{ 800, VMLAT_AT_PREEMPTED, 1500 },
		/* Between the two, in the host: the second wait all after */
		{ 500, VMLAT_AT_HOST, 1300 },
		/* At a wait's first instant: in it; at its end: out of it */
		{ 600, VMLAT_AT_PREEMPTED, 1300 },
		{ 900, VMLAT_AT_HOST, 1600 },
	};
	struct vmlat_irq_waits w = {};
	enum vmlat_irq_at at = VMLAT_AT_BLOCKED;
	unsigned int i;
	u64 wait = 1;

	/* waits [100, 400) and [600, 900); 1000 of wait before them */
	vmlat_irq_waits_add(&w, 400, 300);
	vmlat_irq_waits_add(&w, 900, 300);
	/* In the guest from the entry on, or the entry not known */
	KUNIT_EXPECT_FALSE(test, vmlat_irq_deadline(&w, 950, 950, 1600, &at,
						    &wait));
	KUNIT_EXPECT_FALSE(test, vmlat_irq_deadline(&w, 950, 0, 1600, &at,
						    &wait));
	KUNIT_EXPECT_EQ(test, wait, 1ULL);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		KUNIT_EXPECT_TRUE(test, vmlat_irq_deadline(&w, cases[i].deadline,
							   950, 1600, &at,
							   &wait));
		KUNIT_EXPECT_EQ(test, at, cases[i].at);
		KUNIT_EXPECT_EQ(test, wait, cases[i].wait);
	}
	/* A reset since: never below 0 */
	KUNIT_EXPECT_TRUE(test, vmlat_irq_deadline(&w, 50, 950, 200, &at,
						   &wait));
	KUNIT_EXPECT_EQ(test, wait, 0ULL);
}

/*
 * Random stretches out of the guest, on CPU and waiting: at a random
 * instant, where the vCPU was and its wait until then are what the
 * stretches themselves say, whenever at most VMLAT_IRQ_WAITS waits came
 * after it; with more, the wait is never below the truth.
 */
static void vmlat_irq_deadline_random(struct kunit *test)
{
	u64 seed = 40, begin[12], end[12];
	unsigned int round;

	for (round = 0; round < 2000; round++) {
		struct vmlat_irq_waits w = {};
		u64 now = 1 + lcg_below(&seed, 100), total = 0, d, want;
		u64 wait;
		unsigned int i, n = lcg_below(&seed, 12), later = 0;
		enum vmlat_irq_at at, want_at = VMLAT_AT_HOST;

		for (i = 0; i < n; i++) {
			begin[i] = now + lcg_below(&seed, 50);
			end[i] = begin[i] + 1 + lcg_below(&seed, 50);
			now = end[i];
			total += end[i] - begin[i];
			vmlat_irq_waits_add(&w, end[i], end[i] - begin[i]);
		}
		now += 1 + lcg_below(&seed, 50);
		d = lcg_below(&seed, now);
		want = 0;
		for (i = 0; i < n; i++) {
			if (begin[i] <= d && d < end[i])
				want_at = VMLAT_AT_PREEMPTED;
			if (end[i] > d)
				later++;
			if (begin[i] < d)
				want += (d < end[i] ? d : end[i]) - begin[i];
		}
		KUNIT_ASSERT_TRUE(test, vmlat_irq_deadline(&w, d, now, total,
							   &at, &wait));
		if (later <= VMLAT_IRQ_WAITS) {
			KUNIT_ASSERT_EQ(test, at, want_at);
			KUNIT_ASSERT_EQ(test, wait, want);
		} else {
			KUNIT_ASSERT_GE(test, wait, want);
		}
	}
}

static struct kunit_case vmlat_irq_cases[] = {
	KUNIT_CASE(vmlat_irq_delivered_after_injection),
	KUNIT_CASE(vmlat_irq_wait_bounded),
	KUNIT_CASE(vmlat_irq_coalesced),
	KUNIT_CASE(vmlat_irq_uncoalesced),
	KUNIT_CASE(vmlat_irq_pushed_out),
	KUNIT_CASE(vmlat_irq_never_injected),
	KUNIT_CASE(vmlat_irq_held_waits),
	KUNIT_CASE(vmlat_irq_timer),
	KUNIT_CASE(vmlat_irq_at_states),
	KUNIT_CASE(vmlat_irq_random_conserved),
	KUNIT_CASE(vmlat_irq_deadline_where),
	KUNIT_CASE(vmlat_irq_deadline_random),
	{}
};

static struct kunit_suite vmlat_irq_suite = {
	.name = "vmlat_irq",
	.test_cases = vmlat_irq_cases,
};

kunit_test_suites(&vmlat_irq_suite);
