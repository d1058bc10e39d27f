// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/hist.c: log-linear latency histograms.
 *
 * Bucket bounds are checked value by value at every edge, and quantiles
 * against the slow, obviously correct answer: sort the raw samples and
 * pick the nearest rank. The error bound the tests hold the histogram to
 * is written here independently of hist.h (REL_ERR_DENOM), so a change of
 * layout that loosens it fails loudly instead of silently.
 */
#include <kunit/test.h>

#ifdef KUNIT_USERSPACE_SHIM
#include <stdlib.h>
#else
#include <linux/sort.h>
#endif

#include "hist.h"
#include "kunit_lcg.h"

/* The documented bound: a quantile is less than 1/16 = 6.25% high. */
#define REL_ERR_DENOM	16

#define NS_PER_US	1000ULL
#define NS_PER_MS	1000000ULL
#define NS_PER_S	1000000000ULL

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return (x > y) - (x < y);
}

static void sort_u64(u64 *v, size_t n)
{
#ifdef KUNIT_USERSPACE_SHIM
	qsort(v, n, sizeof(*v), cmp_u64);
#else
	sort(v, n, sizeof(*v), cmp_u64, NULL);
#endif
}

struct bucket_case {
	const char *desc;
	u64 ns;
	unsigned int bucket;
};

/*
 * Hand-computed: in [2^e, 2^(e+1)) buckets are 2^(e-4) wide, bucket 1 is
 * [100, 104) and bucket 8 the first of [128, 256).
 */
static const struct bucket_case bucket_cases[] = {
	{ "0 ns underflows", 0, 0 },
	{ "1 ns underflows", 1, 0 },
	{ "99 ns underflows", 99, 0 },
	{ "100 ns opens bucket 1", 100, 1 },
	{ "103 ns closes bucket 1", 103, 1 },
	{ "104 ns opens bucket 2", 104, 2 },
	{ "127 ns closes bucket 7", 127, 7 },
	{ "128 ns opens bucket 8", 128, 8 },
	{ "135 ns closes bucket 8", 135, 8 },
	{ "136 ns opens bucket 9", 136, 9 },
	{ "255 ns closes bucket 23", 255, 23 },
	{ "256 ns opens bucket 24", 256, 24 },
	{ "1000 ns is in [992, 1024)", 1000, 55 },
	{ "2^33-1 ns closes bucket 423", (1ULL << 33) - 1, 423 },
	{ "2^33 ns opens bucket 424", 1ULL << 33, 424 },
	{ "2^33+2^29-1 ns closes bucket 424", (1ULL << 33) + (1ULL << 29) - 1,
	  424 },
	{ "2^33+2^29 ns opens bucket 425", (1ULL << 33) + (1ULL << 29), 425 },
	{ "9663676416 ns opens bucket 426", 9663676416ULL, 426 },
	{ "10 s - 1 ns closes bucket 426", 10 * NS_PER_S - 1, 426 },
	{ "10 s overflows", 10 * NS_PER_S, 427 },
	{ "10 s + 1 ns overflows", 10 * NS_PER_S + 1, 427 },
	{ "2^63 ns overflows", 1ULL << 63, 427 },
	{ "U64_MAX overflows", U64_MAX, 427 },
};

static void bucket_case_desc(const struct bucket_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bucket, bucket_cases, bucket_case_desc);

static void vmlat_hist_bucket_known_values(struct kunit *test)
{
	const struct bucket_case *c = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, vmlat_hist_bucket(c->ns), c->bucket,
			    "%s", c->desc);
}

static void vmlat_hist_bucket_lo_maps_to_itself(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < VMLAT_HIST_NR_BUCKETS; i++) {
		u64 lo = vmlat_hist_bucket_lo(i);

		KUNIT_EXPECT_EQ_MSG(test, vmlat_hist_bucket(lo), i,
				    "lo(%u) = %llu", i, (unsigned long long)lo);
		if (i > 0)
			KUNIT_EXPECT_EQ_MSG(test, vmlat_hist_bucket(lo - 1),
					    i - 1, "lo(%u) - 1 = %llu", i,
					    (unsigned long long)(lo - 1));
		KUNIT_EXPECT_EQ_MSG(test,
				    vmlat_hist_bucket(vmlat_hist_bucket_hi(i) - 1),
				    i, "hi(%u) - 1", i);
	}
}

static void vmlat_hist_bucket_bounds_contiguous(struct kunit *test)
{
	unsigned int i;

	KUNIT_EXPECT_EQ(test, vmlat_hist_bucket_lo(0), 0ULL);
	KUNIT_EXPECT_EQ(test, vmlat_hist_bucket_hi(0), 100ULL);
	KUNIT_EXPECT_EQ(test, vmlat_hist_bucket_lo(1), 100ULL);
	KUNIT_EXPECT_EQ(test, vmlat_hist_bucket_lo(VMLAT_HIST_OVERFLOW),
			10 * NS_PER_S);
	KUNIT_EXPECT_EQ(test, vmlat_hist_bucket_hi(VMLAT_HIST_OVERFLOW),
			U64_MAX);
	KUNIT_EXPECT_EQ(test, VMLAT_HIST_OVERFLOW, VMLAT_HIST_NR_BUCKETS - 1);
	for (i = 0; i < VMLAT_HIST_NR_BUCKETS; i++) {
		KUNIT_EXPECT_LT_MSG(test, vmlat_hist_bucket_lo(i),
				    vmlat_hist_bucket_hi(i),
				    "bucket %u is not empty", i);
		if (i < VMLAT_HIST_OVERFLOW)
			KUNIT_EXPECT_EQ_MSG(test, vmlat_hist_bucket_hi(i),
					    vmlat_hist_bucket_lo(i + 1),
					    "no gap or overlap after bucket %u",
					    i);
	}
	/* Out-of-range indexes get a bound no value is below. */
	KUNIT_EXPECT_EQ(test, vmlat_hist_bucket_lo(VMLAT_HIST_NR_BUCKETS),
			U64_MAX);
	KUNIT_EXPECT_EQ(test, vmlat_hist_bucket_hi(VMLAT_HIST_NR_BUCKETS),
			U64_MAX);
}

/* (hi - lo) / lo <= 1/16 for every log-linear bucket, with equality. */
static void vmlat_hist_bucket_relative_error_at_most_1_16(struct kunit *test)
{
	unsigned int i, attained = 0;

	for (i = 1; i < VMLAT_HIST_OVERFLOW; i++) {
		u64 lo = vmlat_hist_bucket_lo(i);
		u64 width = vmlat_hist_bucket_hi(i) - lo;

		KUNIT_EXPECT_LE_MSG(test, width * REL_ERR_DENOM, lo,
				    "bucket %u = [%llu, +%llu) is too wide", i,
				    (unsigned long long)lo,
				    (unsigned long long)width);
		if (width * REL_ERR_DENOM == lo)
			attained++;
	}
	/* Every power of two from 128 ns to 2^33 ns opens a widest bucket. */
	KUNIT_EXPECT_EQ_MSG(test, attained, 27U,
			    "the stated worst case is the real one");
}

/* Random values of every magnitude land between their bucket's bounds. */
static void vmlat_hist_bucket_value_within_bounds(struct kunit *test)
{
	u64 seed = 1;
	unsigned int n;

	for (n = 0; n < 100000; n++) {
		u64 r = lcg_next(&seed);
		u64 ns = r >> (lcg_next(&seed) >> 58);	/* shift 0..63 */
		unsigned int b = vmlat_hist_bucket(ns);

		KUNIT_ASSERT_LT_MSG(test, b, (unsigned int)VMLAT_HIST_NR_BUCKETS,
				    "%llu ns", (unsigned long long)ns);
		KUNIT_ASSERT_LE_MSG(test, vmlat_hist_bucket_lo(b), ns,
				    "%llu ns in bucket %u",
				    (unsigned long long)ns, b);
		if (b < VMLAT_HIST_OVERFLOW)
			KUNIT_ASSERT_LT_MSG(test, ns, vmlat_hist_bucket_hi(b),
					    "%llu ns in bucket %u",
					    (unsigned long long)ns, b);
	}
}

/* Synthetic latency distributions: fill @v[0..@n) from @seed. */
struct dist_case {
	const char *desc;
	void (*gen)(u64 *v, u32 n, u64 *seed);
	u32 n;
};

static void gen_uniform_2ms(u64 *v, u32 n, u64 *seed)
{
	u32 i;

	for (i = 0; i < n; i++)
		v[i] = lcg_below(seed, 2 * NS_PER_MS);
}

/* Equally many values in each power of two from 1 ns to 2^37 ns (137 s). */
static void gen_log_uniform(u64 *v, u32 n, u64 *seed)
{
	u32 i;

	for (i = 0; i < n; i++) {
		u64 lo = 1ULL << lcg_below(seed, 37);

		v[i] = lo + lcg_below(seed, lo);
	}
}

/* Mostly fast exits around 2 us, a tail of 5 ms preemptions. */
static void gen_bimodal(u64 *v, u32 n, u64 *seed)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (lcg_below(seed, 100) < 95)
			v[i] = 1500 + lcg_below(seed, NS_PER_US);
		else
			v[i] = 4 * NS_PER_MS + lcg_below(seed, 2 * NS_PER_MS);
	}
}

static void gen_single_value(u64 *v, u32 n, u64 *seed)
{
	u32 i;

	for (i = 0; i < n; i++)
		v[i] = 12345;
}

static void gen_underflow(u64 *v, u32 n, u64 *seed)
{
	u32 i;

	for (i = 0; i < n; i++)
		v[i] = lcg_below(seed, VMLAT_HIST_MIN_NS);
}

static void gen_overflow(u64 *v, u32 n, u64 *seed)
{
	u32 i;

	for (i = 0; i < n; i++)
		v[i] = i % 7 ? 10 * NS_PER_S + lcg_below(seed, 10 * NS_PER_S) :
			       U64_MAX;
}

/* Only the first and last value of buckets: where rounding would show. */
static void gen_bucket_edges(u64 *v, u32 n, u64 *seed)
{
	u32 i;

	for (i = 0; i < n; i++) {
		unsigned int b = lcg_below(seed, VMLAT_HIST_OVERFLOW);

		v[i] = i % 2 ? vmlat_hist_bucket_lo(b) :
			       vmlat_hist_bucket_hi(b) - 1;
	}
}

static const struct dist_case dist_cases[] = {
	{ "uniform 0..2 ms", gen_uniform_2ms, 10007 },
	{ "log-uniform 1 ns..137 s", gen_log_uniform, 10007 },
	{ "bimodal 2 us / 5 ms", gen_bimodal, 10007 },
	{ "single value 12345 ns", gen_single_value, 1000 },
	{ "one sample", gen_log_uniform, 1 },
	{ "two samples", gen_bimodal, 2 },
	{ "three samples", gen_log_uniform, 3 },
	{ "all underflow", gen_underflow, 1000 },
	{ "all overflow", gen_overflow, 1000 },
	{ "bucket edges", gen_bucket_edges, 4099 },
	{ "empty", gen_uniform_2ms, 0 },
};

static void dist_case_desc(const struct dist_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(dist, dist_cases, dist_case_desc);

static const u32 test_ppms[] = {
	0, 1, 10, 250000, 500000, 900000, 990000, 999000, 999900, 999999,
	1000000, 1000001, 4000000000U,
};

/* Check one quantile against the sorted samples @v[0..@n). */
static void check_quantile(struct kunit *test, const struct dist_case *c,
			   const u64 *counts, const u64 *v, u32 n, u32 ppm)
{
	u64 max_ns = v[n - 1], got, exact, k;
	u32 q = ppm < VMLAT_HIST_PPM_ONE ? ppm : VMLAT_HIST_PPM_ONE;

	/* Nearest rank; n * q cannot overflow for these small n. */
	k = ((u64)n * q + VMLAT_HIST_PPM_ONE - 1) / VMLAT_HIST_PPM_ONE;
	exact = v[(k ? k : 1) - 1];
	got = vmlat_hist_quantile(counts, n, max_ns, ppm);

	KUNIT_ASSERT_GE_MSG(test, got, exact, "%s, ppm %u: below the exact",
			    c->desc, ppm);
	KUNIT_ASSERT_LE_MSG(test, got, max_ns, "%s, ppm %u: above max",
			    c->desc, ppm);
	KUNIT_ASSERT_EQ_MSG(test, vmlat_hist_bucket(got),
			    vmlat_hist_bucket(exact),
			    "%s, ppm %u: %llu ns not in the bucket of %llu ns",
			    c->desc, ppm, (unsigned long long)got,
			    (unsigned long long)exact);
	if (exact < VMLAT_HIST_MIN_NS)
		KUNIT_ASSERT_LT_MSG(test, got, VMLAT_HIST_MIN_NS,
				    "%s, ppm %u", c->desc, ppm);
	else if (exact < VMLAT_HIST_MAX_NS)
		KUNIT_ASSERT_LT_MSG(test, (got - exact) * REL_ERR_DENOM, exact,
				    "%s, ppm %u: %llu ns is >= 6.25%% above %llu ns",
				    c->desc, ppm, (unsigned long long)got,
				    (unsigned long long)exact);
	else
		KUNIT_ASSERT_EQ_MSG(test, got, max_ns,
				    "%s, ppm %u: overflow reads as max",
				    c->desc, ppm);
	if (ppm >= VMLAT_HIST_PPM_ONE)
		KUNIT_ASSERT_EQ_MSG(test, got, exact,
				    "%s, ppm %u: p100 is exact", c->desc, ppm);
}

static void vmlat_hist_quantile_matches_sorted_samples(struct kunit *test)
{
	const struct dist_case *c = test->param_value;
	u64 seed = 42, *v, *counts;
	unsigned int i;
	u32 s;

	v = kunit_kcalloc(test, c->n ? c->n : 1, sizeof(*v), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL_MSG(test, v, "%s: samples", c->desc);
	counts = kunit_kcalloc(test, VMLAT_HIST_NR_BUCKETS, sizeof(*counts),
			       GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL_MSG(test, counts, "%s: counts", c->desc);

	c->gen(v, c->n, &seed);
	for (s = 0; s < c->n; s++)
		counts[vmlat_hist_bucket(v[s])]++;
	sort_u64(v, c->n);

	for (i = 0; i < ARRAY_SIZE(test_ppms); i++) {
		if (!c->n)
			KUNIT_EXPECT_EQ_MSG(test,
					    vmlat_hist_quantile(counts, 0, 0,
								test_ppms[i]),
					    0ULL, "empty, ppm %u", test_ppms[i]);
		else
			check_quantile(test, c, counts, v, c->n, test_ppms[i]);
	}
}

static void vmlat_hist_quantile_no_counts_is_zero(struct kunit *test)
{
	u64 *counts = kunit_kcalloc(test, VMLAT_HIST_NR_BUCKETS,
				    sizeof(*counts), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, counts);
	KUNIT_EXPECT_EQ(test, vmlat_hist_quantile(counts, 0, U64_MAX, 500000),
			0ULL);
	/* A total the counts do not back (reset meanwhile): still no value. */
	KUNIT_EXPECT_EQ(test, vmlat_hist_quantile(counts, 5, U64_MAX, 500000),
			0ULL);
}

static void vmlat_hist_quantile_clamps_to_max_ns(struct kunit *test)
{
	u64 *counts = kunit_kcalloc(test, VMLAT_HIST_NR_BUCKETS,
				    sizeof(*counts), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, counts);
	counts[vmlat_hist_bucket(130)] = 1;	/* [128, 136) */
	KUNIT_EXPECT_EQ(test, vmlat_hist_quantile(counts, 1, U64_MAX, 500000),
			135ULL);
	KUNIT_EXPECT_EQ(test, vmlat_hist_quantile(counts, 1, 130, 500000),
			130ULL);

	counts[VMLAT_HIST_OVERFLOW] = 1;
	KUNIT_EXPECT_EQ(test, vmlat_hist_quantile(counts, 2, U64_MAX, 990000),
			U64_MAX);
	KUNIT_EXPECT_EQ(test,
			vmlat_hist_quantile(counts, 2, 20 * NS_PER_S, 990000),
			20 * NS_PER_S);
}

/* The rank is exact even where total * ppm would overflow 64 bits. */
static void vmlat_hist_quantile_huge_counts_exact_rank(struct kunit *test)
{
	unsigned int a = vmlat_hist_bucket(1000), b = vmlat_hist_bucket(5000);
	u64 *counts = kunit_kcalloc(test, VMLAT_HIST_NR_BUCKETS,
				    sizeof(*counts), GFP_KERNEL);
	u64 half = 1ULL << 62;

	KUNIT_ASSERT_NOT_NULL(test, counts);
	counts[a] = half;
	counts[b] = half;
	KUNIT_EXPECT_EQ(test,
			vmlat_hist_quantile(counts, 2 * half, U64_MAX, 500000),
			vmlat_hist_bucket_hi(a) - 1);
	KUNIT_EXPECT_EQ(test,
			vmlat_hist_quantile(counts, 2 * half, U64_MAX, 500001),
			vmlat_hist_bucket_hi(b) - 1);

	/* U64_MAX values: rank ceil(U64_MAX * 0.5) lands in the second half. */
	counts[a] = U64_MAX / 2;	/* 2^63 - 1 */
	counts[b] = U64_MAX / 2 + 1;
	KUNIT_EXPECT_EQ(test,
			vmlat_hist_quantile(counts, U64_MAX, U64_MAX, 500000),
			vmlat_hist_bucket_hi(b) - 1);
	KUNIT_EXPECT_EQ(test,
			vmlat_hist_quantile(counts, U64_MAX, U64_MAX, 499999),
			vmlat_hist_bucket_hi(a) - 1);
}

/* Live counters may lag the total: the highest non-empty bucket answers. */
static void vmlat_hist_quantile_counts_short_of_total(struct kunit *test)
{
	u64 *counts = kunit_kcalloc(test, VMLAT_HIST_NR_BUCKETS,
				    sizeof(*counts), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, counts);
	counts[vmlat_hist_bucket(200)] = 3;
	counts[vmlat_hist_bucket(3000)] = 1;
	KUNIT_EXPECT_EQ(test,
			vmlat_hist_quantile(counts, 10, U64_MAX, 990000),
			vmlat_hist_bucket_hi(vmlat_hist_bucket(3000)) - 1);
	KUNIT_EXPECT_EQ(test, vmlat_hist_quantile(counts, 10, U64_MAX, 1),
			vmlat_hist_bucket_hi(vmlat_hist_bucket(200)) - 1);
}

static struct kunit_case vmlat_hist_cases[] = {
	KUNIT_CASE_PARAM(vmlat_hist_bucket_known_values, bucket_gen_params),
	KUNIT_CASE(vmlat_hist_bucket_lo_maps_to_itself),
	KUNIT_CASE(vmlat_hist_bucket_bounds_contiguous),
	KUNIT_CASE(vmlat_hist_bucket_relative_error_at_most_1_16),
	KUNIT_CASE(vmlat_hist_bucket_value_within_bounds),
	KUNIT_CASE_PARAM(vmlat_hist_quantile_matches_sorted_samples,
			 dist_gen_params),
	KUNIT_CASE(vmlat_hist_quantile_no_counts_is_zero),
	KUNIT_CASE(vmlat_hist_quantile_clamps_to_max_ns),
	KUNIT_CASE(vmlat_hist_quantile_huge_counts_exact_rank),
	KUNIT_CASE(vmlat_hist_quantile_counts_short_of_total),
	{}
};

static struct kunit_suite vmlat_hist_suite = {
	.name = "vmlat_hist",
	.test_cases = vmlat_hist_cases,
};

kunit_test_suites(&vmlat_hist_suite);
