// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/keyfilter.c: the counting filter in front of
 * vmlat's task table.
 *
 * A model beside the filter knows which keys are in the table. After
 * every step of a long random sequence of adds and deletes, over hashes
 * crowded into a few buckets so that keys share them, the filter must say
 * "maybe" for every key in the table (a "no" there would hide a vCPU) and
 * "no" for every bucket that holds none (else it filters nothing). A
 * bucket filled past its counter's range stays "maybe" for good.
 */
#include <kunit/test.h>

#include "keyfilter.h"
#include "kunit_lcg.h"

#define NKEYS	64
#define NSTEPS	20000
/* The buckets the keys are crowded into, and the shift to them. */
#define NBUCKETS	5
#define BUCKET_SHIFT	(64 - VMLAT_KEYFILTER_BITS)

static int keyfilter_test_init(struct kunit *test)
{
	struct vmlat_keyfilter *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	memset(f, 0xa5, sizeof(*f));	/* init must clear every counter */
	vmlat_keyfilter_init(f);
	test->priv = f;
	return 0;
}

/* The bucket is the hash's top bits: both ends and one between. */
static void vmlat_keyfilter_bucket_is_the_top_bits(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vmlat_keyfilter_bucket(0), 0U);
	KUNIT_EXPECT_EQ(test, vmlat_keyfilter_bucket(BIT_ULL(BUCKET_SHIFT) - 1),
			0U);
	KUNIT_EXPECT_EQ(test, vmlat_keyfilter_bucket(BIT_ULL(BUCKET_SHIFT)), 1U);
	KUNIT_EXPECT_EQ(test, vmlat_keyfilter_bucket(U64_MAX),
			VMLAT_KEYFILTER_SIZE - 1);
}

/*
 * Random adds and deletes of NKEYS keys over NBUCKETS buckets (the two
 * ends of the array among them); the model's answer for every bucket
 * after every step.
 */
static void vmlat_keyfilter_follows_the_table(struct kunit *test)
{
	static const u32 buckets[NBUCKETS] = {
		0, 1, 77, VMLAT_KEYFILTER_SIZE - 2, VMLAT_KEYFILTER_SIZE - 1,
	};
	struct vmlat_keyfilter *f = test->priv;
	u64 hash[NKEYS], state = 42;
	bool in[NKEYS] = { false };
	unsigned int per[NBUCKETS] = { 0 };
	unsigned int step, k, b, n_in = 0;

	for (k = 0; k < NKEYS; k++)
		hash[k] = (u64)buckets[k % NBUCKETS] << BUCKET_SHIFT |
			  (lcg_next(&state) >> VMLAT_KEYFILTER_BITS);
	for (step = 0; step < NSTEPS; step++) {
		k = (lcg_next(&state) >> 33) % NKEYS;
		if (in[k]) {
			vmlat_keyfilter_del(f, hash[k]);
			per[k % NBUCKETS]--;
			n_in--;
		} else {
			vmlat_keyfilter_add(f, hash[k]);
			per[k % NBUCKETS]++;
			n_in++;
		}
		in[k] = !in[k];
		for (b = 0; b < NBUCKETS; b++) {
			u64 probe = (u64)buckets[b] << BUCKET_SHIFT |
				    (lcg_next(&state) >> VMLAT_KEYFILTER_BITS);

			KUNIT_ASSERT_EQ_MSG(test, vmlat_keyfilter_maybe(f, probe),
					    per[b] != 0,
					    "step %u: bucket %u holds %u keys",
					    step, buckets[b], per[b]);
		}
	}
	/* The sequence went through both empty and crowded tables. */
	KUNIT_EXPECT_GT(test, n_in, 0U);
	/* A bucket no key hashes to was never touched. */
	KUNIT_EXPECT_FALSE(test, vmlat_keyfilter_maybe(f, 2ULL << BUCKET_SHIFT));
}

/*
 * 300 keys in one bucket: the counter stops at its top and stays "maybe"
 * when they all leave (never a "no" for a key still there); a neighbour
 * bucket is not touched.
 */
static void vmlat_keyfilter_full_bucket_stays_maybe(struct kunit *test)
{
	struct vmlat_keyfilter *f = test->priv;
	u64 h = 9ULL << BUCKET_SHIFT;
	unsigned int i;

	for (i = 0; i < 300; i++)
		vmlat_keyfilter_add(f, h + i);
	for (i = 0; i < 299; i++) {
		vmlat_keyfilter_del(f, h + i);
		KUNIT_ASSERT_TRUE_MSG(test, vmlat_keyfilter_maybe(f, h + 299),
				      "%u keys still in", 299 - i);
	}
	vmlat_keyfilter_del(f, h + 299);
	KUNIT_EXPECT_TRUE(test, vmlat_keyfilter_maybe(f, h));
	KUNIT_EXPECT_FALSE(test, vmlat_keyfilter_maybe(f, 8ULL << BUCKET_SHIFT));
	KUNIT_EXPECT_FALSE(test, vmlat_keyfilter_maybe(f, 10ULL << BUCKET_SHIFT));

	/* Below the top, the count is exact: 254 in, 254 out, "no". */
	h = 11ULL << BUCKET_SHIFT;
	for (i = 0; i < VMLAT_KEYFILTER_STUCK - 1; i++)
		vmlat_keyfilter_add(f, h);
	for (i = 0; i < VMLAT_KEYFILTER_STUCK - 1; i++)
		vmlat_keyfilter_del(f, h);
	KUNIT_EXPECT_FALSE(test, vmlat_keyfilter_maybe(f, h));
}

static struct kunit_case vmlat_keyfilter_cases[] = {
	KUNIT_CASE(vmlat_keyfilter_bucket_is_the_top_bits),
	KUNIT_CASE(vmlat_keyfilter_follows_the_table),
	KUNIT_CASE(vmlat_keyfilter_full_bucket_stays_maybe),
	{}
};

static struct kunit_suite vmlat_keyfilter_suite = {
	.name = "vmlat_keyfilter",
	.init = keyfilter_test_init,
	.test_cases = vmlat_keyfilter_cases,
};

kunit_test_suites(&vmlat_keyfilter_suite);
