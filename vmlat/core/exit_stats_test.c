// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/exit_stats.c: a VM's exit statistics.
 *
 * A model beside the statistics (plain arrays, filled as the exits come)
 * says what every reason's row, the undecoded count and each reason's
 * histogram must read after a sequence of exits: counted at their start,
 * timed at their end, some taken back. Init must clear memory that held
 * garbage, the first VMLAT_EXIT_REASON_HISTS reasons seen (and only they)
 * get a histogram, made at their first sample and kept across resets, a
 * sample for which none can be had is lost without harm, and a count
 * taken back never goes below zero.
 */
#include <kunit/test.h>

#include "exit_stats.h"
#include "kunit_lcg.h"

/* A negative slot that is not VMLAT_SLOT_UNDECODED (records.h has -2). */
#define OTHER_SLOT	(-2)
#define NR_REASONS	(VMLAT_EXIT_REASON_HISTS + 3)

struct exit_ctx {
	struct vmlat_exit_stats s;
	/* the model, by reason index (not slot) */
	u64 count[NR_REASONS], total[NR_REASONS], min[NR_REASONS],
	    max[NR_REASONS], samples[NR_REASONS];
	u64 undecoded;
	struct vmlat_hist_snap h;
	/* the histograms' source: hands out @made in order */
	struct vmlat_ahist made[VMLAT_EXIT_REASON_HISTS];
	unsigned int taken, given_back, asked;
	bool none;		/* take finds none */
};

/* The case running: the source's take and put have no argument. */
static struct exit_ctx *cur;

static struct vmlat_ahist *test_take(void)
{
	cur->asked++;
	if (cur->none || cur->taken == VMLAT_EXIT_REASON_HISTS)
		return NULL;
	vmlat_ahist_init(&cur->made[cur->taken]);
	return &cur->made[cur->taken++];
}

static void test_put(struct vmlat_ahist *h)
{
	cur->given_back++;
}

static const struct vmlat_ahist_src test_src = {
	.take = test_take,
	.put = test_put,
};

/* The slot of reason @r: spread over the slots, the last one included. */
static int slot_of(unsigned int r)
{
	return r == 0 ? VMLAT_EXIT_NR_SLOTS - 1 :
			(int)(r * 7 % (VMLAT_EXIT_NR_SLOTS - 1));
}

static int exit_test_init(struct kunit *test)
{
	struct exit_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	if (!c)
		return -ENOMEM;
	/* Garbage first: init must set every counter and histogram. */
	memset(&c->s, 0xa5, sizeof(c->s));
	vmlat_exit_stats_init(&c->s);
	test->priv = c;
	cur = c;
	return 0;
}

/* Every histogram made is given back once, and only those. */
static void exit_test_exit(struct kunit *test)
{
	struct exit_ctx *c = test->priv;

	vmlat_exit_stats_release(&c->s, &test_src);
	KUNIT_EXPECT_EQ(test, c->given_back, c->taken);
	cur = NULL;
}

static void expect_as_model(struct kunit *test, struct exit_ctx *c,
			    const char *when)
{
	struct vmlat_exit_row row;
	unsigned int r;

	for (r = 0; r < NR_REASONS; r++) {
		vmlat_exit_stats_read(&c->s, slot_of(r), &row);
		KUNIT_EXPECT_EQ_MSG(test, row.count, c->count[r],
				    "%s: reason %u count", when, r);
		KUNIT_EXPECT_EQ_MSG(test, row.total_ns, c->total[r],
				    "%s: reason %u total_ns", when, r);
	}
	KUNIT_EXPECT_EQ_MSG(test, vmlat_exit_stats_undecoded(&c->s),
			    c->undecoded, "%s: undecoded", when);
}

static void vmlat_exit_stats_reset_clears_all(struct kunit *test)
{
	struct exit_ctx *c = test->priv;
	struct vmlat_exit_row row;
	unsigned int i;
	int slot;

	for (slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
		vmlat_exit_stats_read(&c->s, slot, &row);
		KUNIT_EXPECT_EQ_MSG(test, row.count, 0ULL, "slot %d", slot);
		KUNIT_EXPECT_EQ_MSG(test, row.total_ns, 0ULL, "slot %d", slot);
		KUNIT_EXPECT_FALSE_MSG(test,
				       vmlat_exit_stats_hist(&c->s, slot, &c->h),
				       "slot %d has a histogram", slot);
	}
	KUNIT_EXPECT_EQ(test, vmlat_exit_stats_undecoded(&c->s), 0ULL);
	for (i = 0; i < VMLAT_EXIT_REASON_HISTS; i++)
		KUNIT_EXPECT_EQ(test, vmlat_exit_stats_hist_slot(&c->s, i),
				VMLAT_SLOT_UNDECODED);
	memset(&c->h, 0xa5, sizeof(c->h));
	vmlat_exit_stats_hists_add(&c->s, &c->h);
	/* nothing added to what @h held */
	KUNIT_EXPECT_EQ(test, c->h.max_ns, 0xa5a5a5a5a5a5a5a5ULL);
}

/*
 * Exits of NR_REASONS reasons, interleaved at random, plus undecoded and
 * uncounted ones: every row, the undecoded count and each histogram as
 * the model says.
 */
static void vmlat_exit_stats_follow_the_exits(struct kunit *test)
{
	struct exit_ctx *c = test->priv;
	unsigned int seen[NR_REASONS], order[NR_REASONS], nr_seen = 0, i, r, k;
	bool first_seen[NR_REASONS] = {}, kept;
	u64 rng = 20261128, ns, all = 0, all_n = 0;

	for (r = 0; r < NR_REASONS; r++)
		c->min[r] = U64_MAX;
	for (i = 0; i < 4000; i++) {
		r = (unsigned int)lcg_below(&rng, NR_REASONS + 2);
		ns = lcg_below(&rng, 5000000);
		if (r == NR_REASONS) {		/* undecoded */
			vmlat_exit_stats_count(&c->s, VMLAT_SLOT_UNDECODED);
			KUNIT_EXPECT_FALSE(test, vmlat_exit_stats_done(&c->s,
					VMLAT_SLOT_UNDECODED, ns, &test_src));
			c->undecoded++;
			continue;
		}
		if (r == NR_REASONS + 1) {	/* counted nowhere */
			vmlat_exit_stats_count(&c->s, OTHER_SLOT);
			KUNIT_EXPECT_FALSE(test, vmlat_exit_stats_done(&c->s,
					OTHER_SLOT, ns, &test_src));
			continue;
		}
		if (!first_seen[r]) {
			first_seen[r] = true;
			order[r] = nr_seen;
			seen[nr_seen++] = r;
		}
		vmlat_exit_stats_count(&c->s, slot_of(r));
		c->count[r]++;
		/* the first reasons seen have a histogram, the others not */
		kept = order[r] < VMLAT_EXIT_REASON_HISTS;
		KUNIT_EXPECT_EQ_MSG(test,
				    vmlat_exit_stats_done(&c->s, slot_of(r), ns,
							  &test_src),
				    kept, "exit %u, reason %u", i, r);
		/* made at the reason's first sample, one each */
		KUNIT_EXPECT_EQ_MSG(test, c->taken, nr_seen <
				    VMLAT_EXIT_REASON_HISTS ? nr_seen :
				    VMLAT_EXIT_REASON_HISTS, "exit %u", i);
		c->total[r] += ns;
		if (kept) {
			c->samples[r]++;
			if (ns < c->min[r])
				c->min[r] = ns;
			if (ns > c->max[r])
				c->max[r] = ns;
			all += ns;
			all_n++;
		}
	}
	KUNIT_ASSERT_EQ(test, nr_seen, (unsigned int)NR_REASONS);
	expect_as_model(test, c, "after the exits");
	for (k = 0; k < NR_REASONS; k++) {
		r = seen[k];
		if (k < VMLAT_EXIT_REASON_HISTS) {
			KUNIT_ASSERT_TRUE_MSG(test, vmlat_exit_stats_hist(&c->s,
					slot_of(r), &c->h), "reason %u", r);
			KUNIT_EXPECT_EQ(test, vmlat_exit_stats_hist_slot(&c->s, k),
					slot_of(r));
			KUNIT_EXPECT_EQ_MSG(test, c->h.count, c->samples[r],
					    "reason %u", r);
			KUNIT_EXPECT_EQ_MSG(test, c->h.min_ns, c->min[r],
					    "reason %u", r);
			KUNIT_EXPECT_EQ_MSG(test, c->h.max_ns, c->max[r],
					    "reason %u", r);
		} else {
			KUNIT_EXPECT_FALSE_MSG(test, vmlat_exit_stats_hist(&c->s,
					slot_of(r), &c->h), "reason %u", r);
			KUNIT_EXPECT_EQ_MSG(test, c->samples[r], 0ULL,
					    "reason %u", r);
		}
	}
	memset(&c->h, 0, sizeof(c->h));
	vmlat_exit_stats_hists_add(&c->s, &c->h);
	KUNIT_EXPECT_EQ(test, c->h.count, all_n);
	KUNIT_EXPECT_EQ(test, c->h.sum_ns, all);

	vmlat_exit_stats_reset(&c->s);
	memset(c->count, 0, sizeof(c->count));
	memset(c->total, 0, sizeof(c->total));
	c->undecoded = 0;
	expect_as_model(test, c, "after a reset");
	/* The histograms stay, empty, for the next reasons: none is made. */
	memset(&c->h, 0, sizeof(c->h));
	vmlat_exit_stats_hists_add(&c->s, &c->h);
	KUNIT_EXPECT_EQ(test, c->h.count, 0ULL);
	vmlat_exit_stats_count(&c->s, slot_of(NR_REASONS - 1));
	KUNIT_EXPECT_TRUE(test, vmlat_exit_stats_done(&c->s,
				slot_of(NR_REASONS - 1), 7, &test_src));
	KUNIT_EXPECT_EQ(test, c->taken, (unsigned int)VMLAT_EXIT_REASON_HISTS);
	KUNIT_ASSERT_TRUE(test, vmlat_exit_stats_hist(&c->s,
				slot_of(NR_REASONS - 1), &c->h));
	KUNIT_EXPECT_EQ(test, c->h.count, 1ULL);
	KUNIT_EXPECT_EQ(test, c->h.max_ns, 7ULL);
}

/*
 * No histogram to be had: the reason keeps its slot, its count and total,
 * its sample is lost; the next sample, once one can be had, gets one.
 */
static void vmlat_exit_stats_no_histogram(struct kunit *test)
{
	struct exit_ctx *c = test->priv;
	int slot = slot_of(3);

	c->none = true;
	vmlat_exit_stats_count(&c->s, slot);
	KUNIT_EXPECT_TRUE(test, vmlat_exit_stats_done(&c->s, slot, 100,
						      &test_src));
	c->count[3] = 1;
	c->total[3] = 100;
	expect_as_model(test, c, "no histogram");
	KUNIT_EXPECT_EQ(test, vmlat_exit_stats_hist_slot(&c->s, 0), slot);
	KUNIT_ASSERT_TRUE(test, vmlat_exit_stats_hist(&c->s, slot, &c->h));
	KUNIT_EXPECT_EQ(test, c->h.count, 0ULL);
	KUNIT_EXPECT_EQ(test, c->taken, 0U);
	KUNIT_EXPECT_EQ(test, c->asked, 1U);

	/* Its histogram known, still none: asked once more, in the total. */
	vmlat_exit_stats_count(&c->s, slot);
	KUNIT_EXPECT_TRUE(test, vmlat_exit_stats_done(&c->s, slot, 150,
						      &test_src));
	c->count[3] = 2;
	c->total[3] = 250;
	expect_as_model(test, c, "no histogram, known");
	KUNIT_EXPECT_EQ(test, c->asked, 2U);

	c->none = false;
	vmlat_exit_stats_count(&c->s, slot);
	vmlat_exit_stats_done(&c->s, slot, 300, &test_src);
	KUNIT_ASSERT_TRUE(test, vmlat_exit_stats_hist(&c->s, slot, &c->h));
	KUNIT_EXPECT_EQ(test, c->h.count, 1ULL);
	KUNIT_EXPECT_EQ(test, c->h.min_ns, 300ULL);
	KUNIT_EXPECT_EQ(test, c->taken, 1U);
	c->count[3] = 3;
	c->total[3] = 550;
	expect_as_model(test, c, "a histogram at last");
}

/*
 * A reset frees the histograms for the next reasons seen, in the order
 * they come: each reason's samples go to the one it holds now, not to
 * the one it held before.
 */
static void vmlat_exit_stats_reset_reorders(struct kunit *test)
{
	struct exit_ctx *c = test->priv;
	int a = slot_of(1), b = slot_of(2);

	vmlat_exit_stats_done(&c->s, a, 100, &test_src);
	vmlat_exit_stats_done(&c->s, b, 200, &test_src);
	vmlat_exit_stats_done(&c->s, a, 300, &test_src);
	KUNIT_EXPECT_EQ(test, vmlat_exit_stats_hist_slot(&c->s, 0), a);
	KUNIT_EXPECT_EQ(test, vmlat_exit_stats_hist_slot(&c->s, 1), b);
	KUNIT_ASSERT_TRUE(test, vmlat_exit_stats_hist(&c->s, a, &c->h));
	KUNIT_EXPECT_EQ(test, c->h.count, 2ULL);

	vmlat_exit_stats_reset(&c->s);
	KUNIT_EXPECT_TRUE(test, vmlat_exit_stats_done(&c->s, b, 5, &test_src));
	KUNIT_EXPECT_TRUE(test, vmlat_exit_stats_done(&c->s, a, 9, &test_src));
	KUNIT_EXPECT_TRUE(test, vmlat_exit_stats_done(&c->s, a, 11, &test_src));
	KUNIT_EXPECT_EQ(test, vmlat_exit_stats_hist_slot(&c->s, 0), b);
	KUNIT_EXPECT_EQ(test, vmlat_exit_stats_hist_slot(&c->s, 1), a);
	KUNIT_ASSERT_TRUE(test, vmlat_exit_stats_hist(&c->s, b, &c->h));
	KUNIT_EXPECT_EQ(test, c->h.count, 1ULL);
	KUNIT_EXPECT_EQ(test, c->h.max_ns, 5ULL);
	KUNIT_ASSERT_TRUE(test, vmlat_exit_stats_hist(&c->s, a, &c->h));
	KUNIT_EXPECT_EQ(test, c->h.count, 2ULL);
	KUNIT_EXPECT_EQ(test, c->h.min_ns, 9ULL);
	KUNIT_EXPECT_EQ(test, c->h.max_ns, 11ULL);
	KUNIT_EXPECT_EQ(test, c->taken, 2U);
}

/* A count taken back: once per count, never below zero. */
static void vmlat_exit_stats_uncount_stops_at_zero(struct kunit *test)
{
	struct exit_ctx *c = test->priv;

	vmlat_exit_stats_count(&c->s, slot_of(1));
	vmlat_exit_stats_count(&c->s, slot_of(1));
	vmlat_exit_stats_count(&c->s, VMLAT_SLOT_UNDECODED);
	vmlat_exit_stats_uncount(&c->s, slot_of(1));
	vmlat_exit_stats_uncount(&c->s, VMLAT_SLOT_UNDECODED);
	c->count[1] = 1;
	expect_as_model(test, c, "one of two taken back");
	/* a reset came between a count and its taking back */
	vmlat_exit_stats_reset(&c->s);
	vmlat_exit_stats_uncount(&c->s, slot_of(1));
	vmlat_exit_stats_uncount(&c->s, VMLAT_SLOT_UNDECODED);
	vmlat_exit_stats_uncount(&c->s, OTHER_SLOT);
	c->count[1] = 0;
	expect_as_model(test, c, "taken back after a reset");
}

static struct kunit_case vmlat_exit_stats_cases[] = {
	KUNIT_CASE(vmlat_exit_stats_reset_clears_all),
	KUNIT_CASE(vmlat_exit_stats_follow_the_exits),
	KUNIT_CASE(vmlat_exit_stats_uncount_stops_at_zero),
	KUNIT_CASE(vmlat_exit_stats_no_histogram),
	KUNIT_CASE(vmlat_exit_stats_reset_reorders),
	{}
};

static struct kunit_suite vmlat_exit_stats_suite = {
	.name = "vmlat_exit_stats",
	.init = exit_test_init,
	.exit = exit_test_exit,
	.test_cases = vmlat_exit_stats_cases,
};

kunit_test_suites(&vmlat_exit_stats_suite);
