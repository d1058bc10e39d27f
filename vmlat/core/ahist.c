// SPDX-License-Identifier: GPL-2.0
/* Placeholder of the lock-free histogram (replaced by the core-tests branch). */
#include "ahist.h"

void vmlat_ahist_init(struct vmlat_ahist *h)
{
	int i;

	atomic64_set(&h->sum_ns, 0);
	atomic64_set(&h->min_ns, U64_MAX);
	atomic64_set(&h->max_ns, 0);
	for (i = 0; i < VMLAT_HIST_NR_BUCKETS; i++)
		atomic64_set(&h->buckets[i], 0);
}

void vmlat_ahist_add(struct vmlat_ahist *h, u64 ns)
{
	s64 old;

	atomic64_inc(&h->buckets[vmlat_hist_bucket(ns)]);
	atomic64_add(ns, &h->sum_ns);
	old = atomic64_read(&h->min_ns);
	while ((u64)old > ns && !atomic64_try_cmpxchg(&h->min_ns, &old, ns))
		;
	old = atomic64_read(&h->max_ns);
	while ((u64)old < ns && !atomic64_try_cmpxchg(&h->max_ns, &old, ns))
		;
}

/**
 * vmlat_ahist_read() - copy a histogram (each field is read atomically;
 * a concurrent update may be half-seen, which a reader of live data
 * accepts)
 * @h:	the histogram
 * @s:	the copy
 */
void vmlat_ahist_read(const struct vmlat_ahist *h, struct vmlat_hist_snap *s)
{
	int i;

	s->sum_ns = atomic64_read(&h->sum_ns);
	s->min_ns = atomic64_read(&h->min_ns);
	s->max_ns = atomic64_read(&h->max_ns);
	/* The count is the buckets' sum: one atomic less per sample. */
	s->count = 0;
	for (i = 0; i < VMLAT_HIST_NR_BUCKETS; i++) {
		s->buckets[i] = atomic64_read(&h->buckets[i]);
		s->count += s->buckets[i];
	}
	if (!s->count)
		s->min_ns = 0;
}
