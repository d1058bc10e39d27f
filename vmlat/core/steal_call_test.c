// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/steal_call.c, the host's side of a guest's
 * steal call: who is answered (CPL 0 only, allowed only, a page that
 * exists, within the rate), and what: each figure in the register the
 * ABI (vmlat_hypercall.h) gives it, and the exit reasons ranked as a
 * full sort of all of them would rank them.
 */
#include <kunit/test.h>

#include "kunit_lcg.h"
#include "steal_call.h"

#define MS		1000000ULL
#define TAKEN		VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN, 0)
#define LIMITED		VMLAT_HC_REPLY(VMLAT_HC_CALL_LIMITED, 0)
#define MALFORMED	VMLAT_HC_REPLY(VMLAT_HC_CALL_MALFORMED, 0)
#define DENIED		VMLAT_HC_REPLY(VMLAT_HC_CALL_DENIED, 0)

static struct vmlat_steal_gate g;

/* Not CPL 0: no reply, not even a refusal, and nothing paid. */
static void vmlat_steal_call_user_no_reply(struct kunit *test)
{
	vmlat_steal_gate_init(&g);
	KUNIT_EXPECT_EQ(test, vmlat_steal_gate(&g, 0, 3, true, MS), 0ULL);
	KUNIT_EXPECT_EQ(test, vmlat_steal_gate(&g, 0, -95, true, MS), 0ULL);
	KUNIT_EXPECT_EQ(test, vmlat_steal_gate(&g, 0, 3, false, MS), 0ULL);
	KUNIT_EXPECT_EQ(test, g.calls, 3ULL);
	KUNIT_EXPECT_EQ(test, g.user, 3ULL);
	KUNIT_EXPECT_EQ(test, g.denied + g.taken + g.limited + g.malformed,
			0ULL);
	/* The budget is whole: a full burst still goes through. */
	for (int i = 0; i < VMLAT_HC_STEAL_BURST; i++)
		KUNIT_ASSERT_EQ(test, vmlat_steal_gate(&g, 0, 0, true, MS),
				TAKEN);
}

/* Not allowed: refused for any page, even one that does not exist. */
static void vmlat_steal_call_denied_first(struct kunit *test)
{
	vmlat_steal_gate_init(&g);
	KUNIT_EXPECT_EQ(test, vmlat_steal_gate(&g, 0, 0, false, MS), DENIED);
	KUNIT_EXPECT_EQ(test, vmlat_steal_gate(&g, VMLAT_HC_STEAL_PAGES, 0,
					       false, MS), DENIED);
	KUNIT_EXPECT_EQ(test, vmlat_steal_gate(&g, ~0ULL, 0, false, MS),
			DENIED);
	KUNIT_EXPECT_EQ(test, g.denied, 3ULL);
	KUNIT_EXPECT_EQ(test, g.malformed, 0ULL);
	for (int i = 0; i < VMLAT_HC_STEAL_BURST; i++)
		KUNIT_ASSERT_EQ(test, vmlat_steal_gate(&g, 0, 0, true, MS),
				TAKEN);
}

/* Every page below VMLAT_HC_STEAL_PAGES exists; none from there on. */
static void vmlat_steal_call_pages(struct kunit *test)
{
	u64 p;

	vmlat_steal_gate_init(&g);
	for (p = 0; p < VMLAT_HC_STEAL_PAGES; p++) {
		KUNIT_EXPECT_NE(test, vmlat_steal_page_part(p),
				VMLAT_STEAL_PART_NONE);
		KUNIT_EXPECT_EQ(test, vmlat_steal_gate(&g, p, 0, true, MS),
				TAKEN);
	}
	for (p = VMLAT_HC_STEAL_PAGES; p < VMLAT_HC_STEAL_PAGES + 3; p++)
		KUNIT_EXPECT_EQ(test, vmlat_steal_gate(&g, p, 0, true, MS),
				MALFORMED);
	KUNIT_EXPECT_EQ(test, vmlat_steal_gate(&g, 1ULL << 63, 0, true, MS),
			MALFORMED);
	KUNIT_EXPECT_EQ(test, g.taken, (u64)VMLAT_HC_STEAL_PAGES);
	KUNIT_EXPECT_EQ(test, g.malformed, 4ULL);
}

/* A burst, then the rate; a limited call changes nothing but its count. */
static void vmlat_steal_call_rate(struct kunit *test)
{
	u64 now = 10000 * MS, cost = 1000000000ULL / VMLAT_HC_STEAL_RATE;
	struct vmlat_steal_gate before;
	int i;

	vmlat_steal_gate_init(&g);
	for (i = 0; i < VMLAT_HC_STEAL_BURST; i++)
		KUNIT_ASSERT_EQ(test, vmlat_steal_gate(&g, 0, 0, true, now),
				TAKEN);
	before = g;
	KUNIT_EXPECT_EQ(test, vmlat_steal_gate(&g, 0, 0, true, now), LIMITED);
	before.calls++;
	before.limited++;
	KUNIT_EXPECT_EQ(test, memcmp(&g, &before, sizeof(g)), 0);
	/* At the rate, every call goes through, for a long time. */
	for (i = 0; i < 5 * VMLAT_HC_STEAL_BURST; i++) {
		now += cost;
		KUNIT_ASSERT_EQ(test, vmlat_steal_gate(&g, 0, 0, true, now),
				TAKEN);
	}
	KUNIT_EXPECT_EQ(test, g.limited, 1ULL);
	/* Clearing the counters keeps the budget: still empty. */
	vmlat_steal_gate_clear_stats(&g);
	KUNIT_EXPECT_EQ(test, g.calls, 0ULL);
	KUNIT_EXPECT_EQ(test, vmlat_steal_gate(&g, 0, 0, true, now), LIMITED);
}

/* Each figure in its register, and nothing else anywhere. */
static void vmlat_steal_call_layout(struct kunit *test)
{
	struct vmlat_steal_src s = {
		.time_ns = { [VMLAT_GUEST] = 11, [VMLAT_KERNEL] = 12,
			     [VMLAT_USER] = 13, [VMLAT_PREEMPTED] = 14,
			     [VMLAT_WAIT] = 15, [VMLAT_IDLE] = 16,
			     [VMLAT_BLOCKED] = 17 },
		.observed_ns = 18, .exits = 19, .vcpu = 3,
		.host_ns = 21, .vms_ns = 22, .own_ns = 23,
	};
	const struct vmlat_steal_exit x = {
		.isa = 2, .code = 0x7b, .count = 31, .total_ns = 32,
	};
	static const u64 want[VMLAT_HC_STEAL_P_EXITS + 2][4] = {
		[VMLAT_HC_STEAL_P_STEAL] = { 14, 15, 12, 13 },
		[VMLAT_HC_STEAL_P_TIME] = { 11, 16, 17, 18 },
		[VMLAT_HC_STEAL_P_INFO] = { 19, 3, VMLAT_HC_STEAL_PAGES, 0 },
		[VMLAT_HC_STEAL_P_TAKERS] = { 21, 22, 23, 0 },
		[VMLAT_HC_STEAL_P_EXITS] = { 2ULL << 32 | 0x7b, 31, 32, 0 },
		/* rank 1: none */
	};
	u64 out[4];
	unsigned int p, r;

	vmlat_steal_top_add(&s, &x);
	for (p = 0; p < ARRAY_SIZE(want); p++) {
		memset(out, 0xa5, sizeof(out));
		vmlat_steal_page(&s, p, out);
		for (r = 0; r < 4; r++)
			KUNIT_EXPECT_EQ_MSG(test, out[r], want[p][r],
					    "page %u value %u", p, r);
	}
}

/* The reasons of vmlat_steal_call_top(): off its stack (KASAN's frames). */
static struct vmlat_steal_exit all[64];

/* The ranking, against a full sort of every reason. */
static void vmlat_steal_call_top(struct kunit *test)
{
	struct vmlat_steal_src s;
	u64 seed = 42;
	unsigned int round, n, i, j, more, ranked;

	for (round = 0; round < 200; round++) {
		memset(&s, 0, sizeof(s));
		n = 1 + lcg_below(&seed, ARRAY_SIZE(all));
		for (i = 0, ranked = 0; i < n; i++) {
			all[i].isa = 1;
			all[i].code = i;
			all[i].count = lcg_below(&seed, 4);
			/* Few distinct values: ties are common. */
			all[i].total_ns = lcg_below(&seed, 10) * 1000;
			ranked += all[i].count != 0;
			vmlat_steal_top_add(&s, &all[i]);
		}
		/* The oracle: each reason's rank is the reasons before it. */
		for (i = 0, more = 0; i < n; i++) {
			unsigned int rank = 0;

			if (!all[i].count)
				continue;
			for (j = 0; j < n; j++)
				if (all[j].count &&
				    (all[j].total_ns > all[i].total_ns ||
				     (all[j].total_ns == all[i].total_ns &&
				      j < i)))
					rank++;
			if (rank >= VMLAT_HC_STEAL_TOP) {
				more++;
				continue;
			}
			KUNIT_ASSERT_LT(test, rank, s.nr_top);
			KUNIT_EXPECT_EQ_MSG(test, s.top[rank].code, all[i].code,
					    "round %u rank %u", round, rank);
		}
		/* Every reason with exits is ranked or beyond the top. */
		KUNIT_EXPECT_EQ(test, s.nr_top + more, ranked);
	}
}

static struct kunit_case vmlat_steal_call_cases[] = {
	KUNIT_CASE(vmlat_steal_call_user_no_reply),
	KUNIT_CASE(vmlat_steal_call_denied_first),
	KUNIT_CASE(vmlat_steal_call_pages),
	KUNIT_CASE(vmlat_steal_call_rate),
	KUNIT_CASE(vmlat_steal_call_layout),
	KUNIT_CASE(vmlat_steal_call_top),
	{}
};

static struct kunit_suite vmlat_steal_call_suite = {
	.name = "vmlat_steal_call",
	.test_cases = vmlat_steal_call_cases,
};

kunit_test_suites(&vmlat_steal_call_suite);
