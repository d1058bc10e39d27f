/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lock-free latency histograms (pure logic).
 *
 * The histograms of hist.h with their exact sum, minimum and maximum,
 * recorded by probes on several CPUs at once without a lock: every field
 * is an atomic counter. A reader copies them one by one into a struct
 * vmlat_hist_snap; a sample recorded meanwhile may be half-seen (in its
 * bucket but not yet in the sum, say), which a reader of live data
 * accepts.
 */
#ifndef _VMLAT_AHIST_H
#define _VMLAT_AHIST_H

#include "hist.h"
#include "pure.h"

/* A histogram that probes on several CPUs update without a lock. */
struct vmlat_ahist {
	vmlat_atomic64_t sum_ns;
	vmlat_atomic64_t min_ns;	/* U64_MAX while empty */
	vmlat_atomic64_t max_ns;
	vmlat_atomic64_t buckets[VMLAT_HIST_NR_BUCKETS];
};

/**
 * struct vmlat_hist_snap - a copy of a struct vmlat_ahist
 * @count:	the number of samples: the sum of @buckets
 * @sum_ns:	their sum (modulo 2^64)
 * @min_ns:	the smallest, or 0 if there is none
 * @max_ns:	the largest, or 0 if there is none
 * @buckets:	samples per bucket of hist.h
 */
struct vmlat_hist_snap {
	u64 count, sum_ns, min_ns, max_ns;
	u64 buckets[VMLAT_HIST_NR_BUCKETS];
};

/**
 * struct vmlat_ahist_src - where histograms made on first use come from
 * @take:	an empty histogram (vmlat_ahist_init()), or NULL if there is
 *		none to be had now: any context, no sleeping
 * @put:	take back one that @take gave and that was not used
 *
 * Most of the histograms a VM may have never get a sample: each is a
 * pointer, NULL until its first sample (vmlat_ahist_add_lazy()). The
 * glue's source is a pool its probes can take from (records.c); the
 * tests' is their own.
 */
struct vmlat_ahist_src {
	struct vmlat_ahist *(*take)(void);
	void (*put)(struct vmlat_ahist *h);
};

void vmlat_ahist_init(struct vmlat_ahist *h);
struct vmlat_ahist *vmlat_ahist_first(struct vmlat_ahist **p,
				      const struct vmlat_ahist_src *src);
void vmlat_ahist_read(const struct vmlat_ahist *h, struct vmlat_hist_snap *s);
void vmlat_ahist_read_add(const struct vmlat_ahist *h,
			  struct vmlat_hist_snap *s);

/**
 * vmlat_ahist_add() - record a sample
 * @h:	the histogram
 * @ns:	the sample, in nanoseconds
 *
 * Inline because probes call it for every event, as vmlat_hist_bucket().
 * The count is not kept apart: vmlat_ahist_read() adds up the buckets,
 * one atomic less per sample. The minimum and the maximum only ever move
 * towards the sample, so the result does not depend on the order in which
 * CPUs record their samples.
 *
 * Context: any context.
 */
static inline void vmlat_ahist_add(struct vmlat_ahist *h, u64 ns)
{
	vmlat_atomic64_inc(&h->buckets[vmlat_hist_bucket(ns)]);
	vmlat_atomic64_add(ns, &h->sum_ns);
	vmlat_atomic64_min(&h->min_ns, ns);
	vmlat_atomic64_max(&h->max_ns, ns);
}

/**
 * vmlat_ahist_add_lazy() - record a sample in a histogram made on first use
 * @p:		where the histogram is, or NULL while it has no sample
 * @src:	where a new one comes from
 * @ns:		the sample
 *
 * Context: any context.
 * Return: false if there was no histogram and none could be had: the
 * sample is lost (@src's take counts that).
 */
static inline bool vmlat_ahist_add_lazy(struct vmlat_ahist **p,
					const struct vmlat_ahist_src *src,
					u64 ns)
{
	struct vmlat_ahist *h = vmlat_ptr_load_acquire(p);

	if (!h) {
		h = vmlat_ahist_first(p, src);
		if (!h)
			return false;
	}
	vmlat_ahist_add(h, ns);
	return true;
}

#endif /* _VMLAT_AHIST_H */
