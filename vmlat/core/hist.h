/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Log-linear latency histograms (pure logic).
 *
 * vmlat keeps one histogram per VM and kind of latency (preemption, wait,
 * exit handling, ...). A probe records a value with one increment of
 * counts[vmlat_hist_bucket(ns)]; sum, min and max are kept exactly beside
 * it (struct vmlat_ahist, ahist.h), and the quantiles of the debugfs
 * "histograms" and "exits" files are read back from the counts.
 *
 * Layout (VMLAT_HIST_NR_BUCKETS = 428 buckets of u64, 3424 bytes):
 *
 *	bucket 0	[0, 100 ns)			underflow
 *	buckets 1..426	[100 ns, 10 s)			log-linear
 *	bucket 427	[10 s, U64_MAX] (inclusive)	overflow
 *
 * Each power of two [2^e, 2^(e+1)) is cut into VMLAT_HIST_SUB = 16 equal
 * sub-buckets of width 2^(e-4), as in HdrHistogram: the index is then
 * just the position of the top bit plus the next four bits, no division.
 * 100 ns = 25 << 2 is a sub-bucket bound of [64, 128), so the first
 * bucket is a whole one, [100, 104); 10 s is not a bound, so the last
 * log-linear bucket is cut short: [9663676416, 10000000000).
 *
 * Error bound: a log-linear bucket [lo, hi) has (hi - lo) / lo <= 1/16,
 * with equality for every bucket starting at a power of two (e.g.
 * [128, 136)). vmlat_hist_quantile() returns a value that is never below
 * the exact sample it estimates and less than 1/16 = 6.25% above it for
 * samples in [100 ns, 10 s). Sixteen rather than eight sub-buckets
 * because 12.5% is too coarse to tell a 1 ms p99 from a 1.1 ms one.
 */
#ifndef _VMLAT_HIST_H
#define _VMLAT_HIST_H

#include "pure.h"

#define VMLAT_HIST_SUB_BITS	4
#define VMLAT_HIST_SUB		(1U << VMLAT_HIST_SUB_BITS)

#define VMLAT_HIST_MIN_NS	100ULL		/* first log-linear bound */
#define VMLAT_HIST_MAX_NS	10000000000ULL	/* overflow from here: 10 s */

/*
 * A value v >= 2^VMLAT_HIST_SUB_BITS has the "position"
 *	(ilog2(v) << VMLAT_HIST_SUB_BITS) + (v >> (ilog2(v) - VMLAT_HIST_SUB_BITS))
 * where the second term is in [VMLAT_HIST_SUB, 2 * VMLAT_HIST_SUB): it
 * counts sub-buckets, consecutively across powers of two. 100 ns is at
 * (6 << 4) + 25 = 121, so a value's index is its position minus 120.
 * hist.c checks these numbers at build time.
 */
#define VMLAT_HIST_POS_OFFSET	120
#define VMLAT_HIST_OVERFLOW	427		/* index of [10 s, U64_MAX] */
#define VMLAT_HIST_NR_BUCKETS	(VMLAT_HIST_OVERFLOW + 1)	/* 428 */

/* Quantiles are given in parts per million: p99.9 is 999000. */
#define VMLAT_HIST_PPM_ONE	1000000U

/**
 * vmlat_hist_bucket() - the bucket a latency falls into
 * @ns: the latency in nanoseconds
 *
 * Inline because probes call it for every event: two compares, one bit
 * scan, one shift.
 *
 * Context: any context.
 * Return: an index < VMLAT_HIST_NR_BUCKETS: 0 for @ns < 100,
 * VMLAT_HIST_OVERFLOW for @ns >= 10 s, else the i with
 * vmlat_hist_bucket_lo(i) <= @ns < vmlat_hist_bucket_hi(i).
 */
static inline unsigned int vmlat_hist_bucket(u64 ns)
{
	unsigned int log2;

	if (ns < VMLAT_HIST_MIN_NS)
		return 0;
	if (ns >= VMLAT_HIST_MAX_NS)
		return VMLAT_HIST_OVERFLOW;
	log2 = vmlat_fls64(ns) - 1;
	return (log2 << VMLAT_HIST_SUB_BITS) +
	       (unsigned int)(ns >> (log2 - VMLAT_HIST_SUB_BITS)) -
	       VMLAT_HIST_POS_OFFSET;
}

u64 vmlat_hist_bucket_lo(unsigned int i);
u64 vmlat_hist_bucket_hi(unsigned int i);
u64 vmlat_hist_quantile(const u64 *counts, u64 total, u64 max_ns, u32 ppm);

#endif /* _VMLAT_HIST_H */
