/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A token bucket (pure logic), as the host rate-limits a guest's
 * hypercalls (clock sync, names): credit in ns of the host's clock, a
 * call costs one period of the rate, and the credit saved up is at most
 * a burst of calls. A call over the rate changes nothing.
 */
#ifndef _VMLAT_BUCKET_H
#define _VMLAT_BUCKET_H

#include "pure.h"

/**
 * struct vmlat_bucket - a token bucket
 * @credit_ns:	the credit
 * @refill_ns:	when @credit_ns was last refilled
 */
struct vmlat_bucket {
	u64 credit_ns;
	u64 refill_ns;
};

/* A call's cost at @rate calls a second. */
#define VMLAT_BUCKET_COST_NS(rate)	(1000000000ULL / (rate))

/**
 * vmlat_bucket_init() - a full bucket
 * @b:		the bucket
 * @burst_ns:	its size: the cost of a burst of calls
 */
static inline void vmlat_bucket_init(struct vmlat_bucket *b, u64 burst_ns)
{
	b->credit_ns = burst_ns;
	b->refill_ns = 0;
}

/**
 * vmlat_bucket_take() - take one call's worth of credit, if there is
 * @b:		the bucket
 * @now:	the host time of the call
 * @cost_ns:	a call's cost
 * @burst_ns:	the bucket's size
 *
 * Return: true if the call is within the rate (and paid for).
 */
static inline bool vmlat_bucket_take(struct vmlat_bucket *b, u64 now,
				     u64 cost_ns, u64 burst_ns)
{
	if (now > b->refill_ns) {
		u64 room = burst_ns - b->credit_ns;

		b->credit_ns += now - b->refill_ns < room ?
				now - b->refill_ns : room;
		b->refill_ns = now;
	}
	if (b->credit_ns < cost_ns)
		return false;
	b->credit_ns -= cost_ns;
	return true;
}

#endif /* _VMLAT_BUCKET_H */
