// SPDX-License-Identifier: GPL-2.0
/*
 * Lock-free latency histograms (pure logic, see ahist.h).
 *
 * Recording is vmlat_ahist_add(), inline in ahist.h.
 */
#include "ahist.h"

/**
 * vmlat_ahist_init() - empty a histogram
 * @h:	the histogram
 *
 * Not atomic as a whole: a sample recorded meanwhile may be partly kept.
 *
 * Context: any context.
 */
void vmlat_ahist_init(struct vmlat_ahist *h)
{
	int i;

	vmlat_atomic64_set(&h->sum_ns, 0);
	vmlat_atomic64_set(&h->min_ns, U64_MAX);
	vmlat_atomic64_set(&h->max_ns, 0);
	for (i = 0; i < VMLAT_HIST_NR_BUCKETS; i++)
		vmlat_atomic64_set(&h->buckets[i], 0);
}

/**
 * vmlat_ahist_first() - the histogram at *@p, made now if it has none
 * @p:		where it is, or NULL
 * @src:	where a new one comes from
 *
 * Of several CPUs that make one at once, the first to store it wins; the
 * others give theirs back.
 *
 * Context: any context.
 * Return: the histogram, or NULL if none could be had.
 */
struct vmlat_ahist *vmlat_ahist_first(struct vmlat_ahist **p,
				      const struct vmlat_ahist_src *src)
{
	struct vmlat_ahist *h = vmlat_ptr_load_acquire(p), *old;

	if (h)
		return h;
	h = src->take();
	if (!h)
		return NULL;
	/* Fully ordered: whoever sees the pointer sees it initialised. */
	old = vmlat_ptr_cmpxchg(p, NULL, h);
	if (!old)
		return h;
	src->put(h);
	return old;
}

/**
 * vmlat_ahist_read() - copy a histogram (each field is read atomically;
 * a concurrent update may be half-seen, which a reader of live data
 * accepts)
 * @h:	the histogram, or NULL: one made on first use that has none
 * @s:	the copy
 *
 * Context: any context.
 */
void vmlat_ahist_read(const struct vmlat_ahist *h, struct vmlat_hist_snap *s)
{
	int i;

	if (!h) {
		memset(s, 0, sizeof(*s));
		return;
	}
	s->sum_ns = vmlat_atomic64_read(&h->sum_ns);
	s->min_ns = vmlat_atomic64_read(&h->min_ns);
	s->max_ns = vmlat_atomic64_read(&h->max_ns);
	/* The count is the buckets' sum: one atomic less per sample. */
	s->count = 0;
	for (i = 0; i < VMLAT_HIST_NR_BUCKETS; i++) {
		s->buckets[i] = vmlat_atomic64_read(&h->buckets[i]);
		s->count += s->buckets[i];
	}
	if (!s->count)
		s->min_ns = 0;
}

/**
 * vmlat_ahist_read_add() - add a histogram's samples to a copy
 * @h:	the histogram, or NULL (none made yet: nothing to add)
 * @s:	a copy (of other histograms), which then holds the samples of both
 *
 * What vmlat_ahist_read() of one histogram holding the samples of both
 * would copy: a kind of sample kept apart in several histograms (each
 * added to by one, as a VM's exits are to their reason's, ahist.h's
 * cost once per sample) is read whole.
 *
 * Context: any context.
 */
void vmlat_ahist_read_add(const struct vmlat_ahist *h,
			  struct vmlat_hist_snap *s)
{
	u64 n = 0, c, min, max;
	int i;

	if (!h)
		return;
	for (i = 0; i < VMLAT_HIST_NR_BUCKETS; i++) {
		c = vmlat_atomic64_read(&h->buckets[i]);
		s->buckets[i] += c;
		n += c;
	}
	if (!n)
		return;
	s->sum_ns += vmlat_atomic64_read(&h->sum_ns);
	min = vmlat_atomic64_read(&h->min_ns);
	max = vmlat_atomic64_read(&h->max_ns);
	if (!s->count || min < s->min_ns)
		s->min_ns = min;
	if (max > s->max_ns)
		s->max_ns = max;
	s->count += n;
}
