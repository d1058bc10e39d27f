// SPDX-License-Identifier: GPL-2.0
/*
 * Log-linear latency histograms (pure logic, see hist.h).
 *
 * Only reading back is here: bucket bounds, quantiles and merging.
 * Recording is vmlat_hist_bucket(), inline in hist.h, plus the caller's
 * increment.
 */
#include "hist.h"

/* ilog2() of the first and of the last log-linear value. */
#define HIST_MIN_LOG2	6
#define HIST_MAX_LOG2	33

/* The position of @v (see hist.h), given @log2 = ilog2(@v). */
#define HIST_POS(v, log2) \
	(((u64)(log2) << VMLAT_HIST_SUB_BITS) + \
	 ((v) >> ((log2) - VMLAT_HIST_SUB_BITS)))

/* The constants hist.h spells out are the ones its layout implies. */
static_assert(VMLAT_HIST_MIN_NS >> HIST_MIN_LOG2 == 1,
	      "HIST_MIN_LOG2 is ilog2(VMLAT_HIST_MIN_NS)");
static_assert((VMLAT_HIST_MAX_NS - 1) >> HIST_MAX_LOG2 == 1,
	      "HIST_MAX_LOG2 is ilog2(VMLAT_HIST_MAX_NS - 1)");
static_assert(HIST_MIN_LOG2 >= VMLAT_HIST_SUB_BITS,
	      "sub-buckets are at least 1 ns wide");
static_assert((VMLAT_HIST_MIN_NS &
	       ((1ULL << (HIST_MIN_LOG2 - VMLAT_HIST_SUB_BITS)) - 1)) == 0,
	      "VMLAT_HIST_MIN_NS is a sub-bucket bound: bucket 1 is whole");
static_assert(HIST_POS(VMLAT_HIST_MIN_NS, HIST_MIN_LOG2) ==
	      VMLAT_HIST_POS_OFFSET + 1,
	      "VMLAT_HIST_MIN_NS goes to bucket 1");
static_assert(HIST_POS(VMLAT_HIST_MAX_NS - 1, HIST_MAX_LOG2) -
	      VMLAT_HIST_POS_OFFSET + 1 == VMLAT_HIST_OVERFLOW,
	      "the overflow bucket follows the one of VMLAT_HIST_MAX_NS - 1");

/**
 * vmlat_hist_bucket_lo() - lower bound of a bucket
 * @i: bucket index, < VMLAT_HIST_NR_BUCKETS
 *
 * Context: any context.
 * Return: the smallest value in bucket @i, in ns: 0 for the underflow
 * bucket, 10 s for the overflow bucket; U64_MAX if @i is out of range.
 */
u64 vmlat_hist_bucket_lo(unsigned int i)
{
	unsigned int pos, log2;
	u64 mant;

	if (i == 0)
		return 0;
	if (i == VMLAT_HIST_OVERFLOW)
		return VMLAT_HIST_MAX_NS;
	if (i > VMLAT_HIST_OVERFLOW)
		return U64_MAX;
	/* Invert vmlat_hist_bucket(): the top bit and the four below it. */
	pos = i + VMLAT_HIST_POS_OFFSET;
	log2 = (pos >> VMLAT_HIST_SUB_BITS) - 1;
	mant = VMLAT_HIST_SUB + (pos & (VMLAT_HIST_SUB - 1));
	return mant << (log2 - VMLAT_HIST_SUB_BITS);
}

/**
 * vmlat_hist_bucket_hi() - upper bound of a bucket
 * @i: bucket index, < VMLAT_HIST_NR_BUCKETS
 *
 * Bounds are contiguous: vmlat_hist_bucket_hi(i) ==
 * vmlat_hist_bucket_lo(i + 1) below the overflow bucket.
 *
 * Context: any context.
 * Return: the first value past bucket @i, in ns (exclusive), except for
 * the overflow bucket, which ends at U64_MAX inclusive; U64_MAX if @i is
 * out of range.
 */
u64 vmlat_hist_bucket_hi(unsigned int i)
{
	if (i >= VMLAT_HIST_OVERFLOW)
		return U64_MAX;
	return vmlat_hist_bucket_lo(i + 1);
}

/* The largest value bucket @i can hold. */
static u64 hist_bucket_last(unsigned int i)
{
	if (i >= VMLAT_HIST_OVERFLOW)
		return U64_MAX;
	return vmlat_hist_bucket_hi(i) - 1;
}

/*
 * ceil(@total * @ppm / 10^6), at least 1: the nearest-rank definition.
 * Split @total so that no product can overflow even for @total near
 * U64_MAX: whole * ppm <= total, and part * ppm < 10^12.
 */
static u64 hist_rank(u64 total, u32 ppm)
{
	u64 whole = total / VMLAT_HIST_PPM_ONE;
	u64 part = total % VMLAT_HIST_PPM_ONE;
	u64 rank;

	rank = whole * ppm +
	       (part * ppm + VMLAT_HIST_PPM_ONE - 1) / VMLAT_HIST_PPM_ONE;
	return rank ? rank : 1;
}

/**
 * vmlat_hist_quantile() - a quantile read back from bucket counts
 * @counts:	VMLAT_HIST_NR_BUCKETS bucket counts
 * @total:	the number of values, normally the sum of @counts
 * @max_ns:	the largest value recorded, or U64_MAX if not known
 * @ppm:	the quantile in parts per million (p50 = 500000,
 *		p99.9 = 999000); above VMLAT_HIST_PPM_ONE means the maximum
 *
 * Let x be the exact quantile: the k-th smallest of the @total values,
 * k = max(1, ceil(@total * @ppm / 10^6)). The result is the largest value
 * x's bucket can hold, vmlat_hist_bucket_hi() - 1, but at most @max_ns.
 * Hence x <= result, and result - x < x / 16 (6.25%) for 100 ns <= x <
 * 10 s; result < 100 ns for x < 100 ns; result = @max_ns for x >= 10 s.
 * With @ppm = 10^6 the result is @max_ns exactly.
 *
 * @counts may be live counters other CPUs increment meanwhile: if they
 * fall short of @total, the highest non-empty bucket stands in.
 *
 * Context: any context.
 * Return: the quantile in ns, or 0 if @total or every count is 0.
 */
u64 vmlat_hist_quantile(const u64 *counts, u64 total, u64 max_ns, u32 ppm)
{
	unsigned int i, found = VMLAT_HIST_NR_BUCKETS;
	u64 rank, seen = 0, last_ns;

	if (!total)
		return 0;
	if (ppm > VMLAT_HIST_PPM_ONE)
		ppm = VMLAT_HIST_PPM_ONE;
	rank = hist_rank(total, ppm);

	for (i = 0; i < VMLAT_HIST_NR_BUCKETS; i++) {
		if (!counts[i])
			continue;
		found = i;
		seen += counts[i];
		if (seen >= rank)
			break;
	}
	if (found == VMLAT_HIST_NR_BUCKETS)
		return 0;
	last_ns = hist_bucket_last(found);
	return last_ns < max_ns ? last_ns : max_ns;
}
