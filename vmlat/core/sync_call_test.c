// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/sync_call.c, what the host does with one
 * clock-sync hypercall: sessions, replies, the rate limit, and calls from
 * guest user space, which must change nothing an honest guest relies on.
 *
 * An honest guest here makes one call every 20 ms (half the host's rate)
 * whose guest clock is the host's: g1 = h - 1000, g2 = h + 1000.
 */
#include <kunit/test.h>

#include "sync_call.h"
#include "vmlat_hypercall.h"

#define MS		1000000ULL
#define T0		(1000 * MS)
#define PERIOD		(20 * MS)

static struct vmlat_vm_sync_data d, before;

/* The honest guest's session. */
struct honest {
	u64 seq;
	u64 prev_g2;
	u64 now;
};

/* Its next call, at its next time; returns the reply. */
static u64 honest_call(struct honest *g, u64 hdr, struct vmlat_sync_xchg *x)
{
	struct vmlat_sync_args a = {
		.hdr = hdr, .g1 = g->now - 1000, .prev_g2 = g->prev_g2,
		.seq = ++g->seq, .cpl = 0,
	};
	u64 reply = vmlat_sync_data_call(&d, &a, g->now, x);

	g->prev_g2 = g->now + 1000;
	g->now += PERIOD;
	return reply;
}

static u64 call(u64 hdr, u64 seq, int cpl, u64 now)
{
	struct vmlat_sync_args a = {
		.hdr = hdr, .g1 = now - 1000, .prev_g2 = now - 2000, .seq = seq,
		.cpl = cpl,
	};
	struct vmlat_sync_xchg x;

	return vmlat_sync_data_call(&d, &a, now, &x);
}

/* Everything but the counters @calls and @user is as in @before. */
static bool only_user_counted(void)
{
	struct vmlat_vm_sync_data c = d;

	c.calls = before.calls;
	c.user = before.user;
	return !memcmp(&c, &before, sizeof(c));
}

/* Version 2: every call answered, every exchange mapped, in order. */
static void vmlat_sync_call_honest_v2(struct kunit *test)
{
	struct honest g = { .now = T0 };
	struct vmlat_sync_xchg x;
	u64 r;
	int i;

	vmlat_sync_data_init(&d);
	r = honest_call(&g, VMLAT_HC_HDR, &x);
	KUNIT_EXPECT_EQ(test, r, VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN,
						VMLAT_HC_PREV_NONE));
	KUNIT_EXPECT_EQ(test, x.seq, 0ULL);
	for (i = 2; i <= 50; i++) {
		r = honest_call(&g, VMLAT_HC_HDR, &x);
		KUNIT_EXPECT_EQ_MSG(test, r,
				    VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN,
						   VMLAT_HC_PREV_MAPPED),
				    "call %d", i);
		KUNIT_EXPECT_EQ_MSG(test, x.seq, (u64)i - 1, "call %d", i);
	}
	KUNIT_EXPECT_TRUE(test, VMLAT_HC_IS_REPLY(r));
	KUNIT_EXPECT_EQ(test, d.taken, 49ULL);
	KUNIT_EXPECT_EQ(test, d.fit.exchanges, 49ULL);
	KUNIT_EXPECT_EQ(test, d.calls, 50ULL);
	KUNIT_EXPECT_EQ(test, d.restarts + d.replayed + d.unpaired +
			d.refused + d.limited + d.malformed + d.user, 0ULL);
}

/* Version 1 is still taken, and never gets a reply: its RBX is input. */
static void vmlat_sync_call_v1_no_reply(struct kunit *test)
{
	struct honest g = { .now = T0 };
	struct vmlat_sync_xchg x;
	int i;

	vmlat_sync_data_init(&d);
	for (i = 1; i <= 20; i++)
		KUNIT_EXPECT_EQ_MSG(test, honest_call(&g, VMLAT_HC_HDR_V1, &x),
				    0ULL, "call %d", i);
	KUNIT_EXPECT_EQ(test, d.taken, 19ULL);
	/* seq 0 and a version the host does not know: no reply either */
	KUNIT_EXPECT_EQ(test, call(VMLAT_HC_HDR_V1, 0, 0, g.now), 0ULL);
	KUNIT_EXPECT_EQ(test, call(VMLAT_HC_HDR_OF(3), 21, 0, g.now), 0ULL);
	KUNIT_EXPECT_EQ(test, d.malformed, 2ULL);
	KUNIT_EXPECT_EQ(test, call(VMLAT_HC_HDR, 0, 0, g.now),
			VMLAT_HC_REPLY(VMLAT_HC_CALL_MALFORMED, 0));
}

/*
 * Calls from guest user space (CPL 3, or a CPL that could not be read)
 * between an honest guest's: seq ~0, seq 1 again and again, the next
 * honest seq, at any rate. Only @user counts them; the honest mapping
 * grows as if they were not there.
 */
static void vmlat_sync_call_user_changes_nothing(struct kunit *test)
{
	static const u64 seqs[] = { ~0ULL, 1, 2, 0 };
	static const int cpls[] = { 3, 1, -EOPNOTSUPP };
	const u64 per_round = 2 * ARRAY_SIZE(seqs) * ARRAY_SIZE(cpls);
	struct honest g = { .now = T0 };
	struct vmlat_sync_xchg x;
	unsigned int i, j, k;
	u64 r;

	vmlat_sync_data_init(&d);
	for (i = 1; i <= 40; i++) {
		r = honest_call(&g, VMLAT_HC_HDR, &x);
		KUNIT_EXPECT_EQ_MSG(test, VMLAT_HC_REPLY_CALL(r),
				    (u64)VMLAT_HC_CALL_TAKEN, "honest call %u", i);
		before = d;
		for (j = 0; j < ARRAY_SIZE(seqs); j++) {
			for (k = 0; k < ARRAY_SIZE(cpls); k++) {
				u64 s = seqs[j] ? seqs[j] : g.seq + 1;

				/* 30 calls in the same ns: past any rate */
				KUNIT_EXPECT_EQ(test, call(VMLAT_HC_HDR, s, cpls[k],
							   g.now - PERIOD / 2), 0ULL);
				KUNIT_EXPECT_EQ(test, call(VMLAT_HC_HDR_V1, s,
							   cpls[k], g.now - PERIOD / 2),
						0ULL);
			}
		}
		KUNIT_EXPECT_TRUE_MSG(test, only_user_counted(),
				      "after honest call %u: user calls changed the state", i);
		KUNIT_EXPECT_EQ_MSG(test, d.user - before.user, per_round,
				    "after honest call %u: user calls not counted", i);
	}
	KUNIT_EXPECT_EQ(test, d.taken, 39ULL);
	KUNIT_EXPECT_EQ(test, d.restarts + d.replayed + d.unpaired +
			d.refused + d.limited, 0ULL);
}

/*
 * A new session: seq 1, or any seq lower than the last taken, restarts
 * the mapping (a guest that rebooted or reloaded its module); the same
 * seq again is a replay and changes nothing.
 */
static void vmlat_sync_call_sessions(struct kunit *test)
{
	struct honest g = { .now = T0 };
	struct vmlat_sync_xchg x;
	u64 r;
	int i;

	vmlat_sync_data_init(&d);
	for (i = 0; i < 10; i++)
		honest_call(&g, VMLAT_HC_HDR, &x);
	KUNIT_ASSERT_EQ(test, d.taken, 9ULL);

	before = d;
	r = call(VMLAT_HC_HDR, g.seq, 0, g.now);
	KUNIT_EXPECT_EQ(test, r, VMLAT_HC_REPLY(VMLAT_HC_CALL_REPLAYED, 0));
	KUNIT_EXPECT_EQ(test, d.replayed, 1ULL);
	KUNIT_EXPECT_EQ(test, d.fit.exchanges, before.fit.exchanges);
	KUNIT_EXPECT_EQ(test, d.pend_seq, before.pend_seq);

	/* a lower seq than the last: a new session, not a replay */
	g.seq = 4;
	g.prev_g2 = 0;
	r = honest_call(&g, VMLAT_HC_HDR, &x);
	KUNIT_EXPECT_EQ(test, r, VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN,
						VMLAT_HC_PREV_RESTARTED));
	KUNIT_EXPECT_EQ(test, d.restarts, 1ULL);
	KUNIT_EXPECT_EQ(test, d.fit.exchanges, 0ULL);
	r = honest_call(&g, VMLAT_HC_HDR, &x);
	KUNIT_EXPECT_EQ(test, r, VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN,
						VMLAT_HC_PREV_MAPPED));

	/* seq 1 after seq 1: a restart, not a replay */
	g.seq = 0;
	g.prev_g2 = 0;
	honest_call(&g, VMLAT_HC_HDR, &x);
	g.seq = 0;
	g.prev_g2 = 0;
	r = honest_call(&g, VMLAT_HC_HDR, &x);
	KUNIT_EXPECT_EQ(test, r, VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN,
						VMLAT_HC_PREV_RESTARTED));
	KUNIT_EXPECT_EQ(test, d.restarts, 3ULL);
	KUNIT_EXPECT_EQ(test, d.replayed, 1ULL);
}

/* A skipped number, a missing g2, a g2 before its g1: each reply says. */
static void vmlat_sync_call_unpaired_and_refused(struct kunit *test)
{
	struct honest g = { .now = T0 };
	struct vmlat_sync_xchg x;
	u64 r;

	vmlat_sync_data_init(&d);
	honest_call(&g, VMLAT_HC_HDR, &x);
	g.seq++;
	r = honest_call(&g, VMLAT_HC_HDR, &x);
	KUNIT_EXPECT_EQ(test, r, VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN,
						VMLAT_HC_PREV_UNPAIRED));
	g.prev_g2 = 0;
	r = honest_call(&g, VMLAT_HC_HDR, &x);
	KUNIT_EXPECT_EQ(test, r, VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN,
						VMLAT_HC_PREV_UNPAIRED));
	g.prev_g2 = g.now - PERIOD - 2000;	/* before its g1 */
	r = honest_call(&g, VMLAT_HC_HDR, &x);
	KUNIT_EXPECT_EQ(test, r, VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN,
						VMLAT_HC_PREV_REFUSED));
	KUNIT_EXPECT_EQ(test, x.seq, 0ULL);
	KUNIT_EXPECT_EQ(test, d.unpaired, 2ULL);
	KUNIT_EXPECT_EQ(test, d.refused, 1ULL);
}

/*
 * The rate limit: a burst, then one call per 1/VMLAT_HC_MAX_RATE s. A
 * call over it changes nothing but @limited: made again later with the
 * same seq and g2 (as the guest module does), it completes its exchange.
 */
static void vmlat_sync_call_limited_then_again(struct kunit *test)
{
	const u64 cost = 1000 * MS / VMLAT_HC_MAX_RATE;
	struct vmlat_sync_args a = { .hdr = VMLAT_HC_HDR, .cpl = 0 };
	struct vmlat_sync_xchg x;
	u64 now = T0, r;
	int i;

	vmlat_sync_data_init(&d);
	/* g1 100 ns before the host's time, g2 100 ns after */
	for (i = 1; i <= VMLAT_HC_BURST; i++) {
		a.seq = i;
		a.g1 = now - 100;
		a.prev_g2 = i > 1 ? now - 1000 + 100 : 0;
		r = vmlat_sync_data_call(&d, &a, now, &x);
		KUNIT_EXPECT_EQ_MSG(test, VMLAT_HC_REPLY_CALL(r),
				    (u64)VMLAT_HC_CALL_TAKEN, "burst call %d", i);
		now += 1000;
	}
	a.seq++;
	a.g1 = now - 100;
	a.prev_g2 = now - 1000 + 100;
	before = d;
	r = vmlat_sync_data_call(&d, &a, now, &x);
	KUNIT_EXPECT_EQ(test, r, VMLAT_HC_REPLY(VMLAT_HC_CALL_LIMITED, 0));
	KUNIT_EXPECT_EQ(test, d.limited, 1ULL);
	before.calls = d.calls;
	before.limited = d.limited;
	before.rate = d.rate;
	KUNIT_EXPECT_TRUE_MSG(test, !memcmp(&d, &before, sizeof(d)),
			      "a limited call changed more than counters");
	/* the same call (seq, g2), one cost later: taken, its exchange mapped */
	now += cost;
	a.g1 = now - 100;
	r = vmlat_sync_data_call(&d, &a, now, &x);
	KUNIT_EXPECT_EQ(test, r, VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN,
						VMLAT_HC_PREV_MAPPED));
	KUNIT_EXPECT_EQ(test, d.taken, (u64)VMLAT_HC_BURST);
	KUNIT_EXPECT_EQ(test, d.unpaired + d.refused, 0ULL);
	/* sustained at the rate: never limited */
	for (i = 0; i < 1000; i++) {
		a.prev_g2 = now + 100;
		now += cost;
		a.seq++;
		a.g1 = now - 100;
		r = vmlat_sync_data_call(&d, &a, now, &x);
		KUNIT_EXPECT_EQ_MSG(test, r,
				    VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN,
						   VMLAT_HC_PREV_MAPPED),
				    "call %d at the rate", i);
	}
	KUNIT_EXPECT_EQ(test, d.limited, 1ULL);
}

static struct kunit_case vmlat_sync_call_cases[] = {
	KUNIT_CASE(vmlat_sync_call_honest_v2),
	KUNIT_CASE(vmlat_sync_call_v1_no_reply),
	KUNIT_CASE(vmlat_sync_call_user_changes_nothing),
	KUNIT_CASE(vmlat_sync_call_sessions),
	KUNIT_CASE(vmlat_sync_call_unpaired_and_refused),
	KUNIT_CASE(vmlat_sync_call_limited_then_again),
	{}
};

static struct kunit_suite vmlat_sync_call_suite = {
	.name = "vmlat_sync_call",
	.test_cases = vmlat_sync_call_cases,
};

kunit_test_suites(&vmlat_sync_call_suite);
