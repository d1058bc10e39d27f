/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest -> host clock mapping from hypercall exchanges (pure logic).
 *
 * An exchange is three timestamps: the guest's clock before its
 * hypercall (g1), the host's clock when the host saw it (h), the guest's
 * clock after it returned (g2). Any mapping host = a * guest + b that is
 * true satisfies, for every exchange,
 *
 *	a * g1 + b <= h <= a * g2 + b
 *
 * so the line lies below every point (g1, h) and above every point
 * (g2, h). Only the lower convex hull of the first set and the upper hull
 * of the second constrain it: both are kept incrementally, exchanges
 * coming in guest-time order ([P0] §1.7, the "fully incremental convex
 * hull" of Jabbarifar et al.). What they allow is the feasible set of
 * lines: slopes in [a_min, a_max], and at any guest time a range of host
 * times. vmlat reports the middle line and that range.
 *
 * Fixed point only: times are u64 ns, kept relative to the first
 * exchange as s64; slopes are fractions of two s64 compared and scaled
 * in 128-bit arithmetic; a drift is reported in parts per billion.
 */
#ifndef _VMLAT_CLOCK_FIT_H
#define _VMLAT_CLOCK_FIT_H

#include "pure.h"

#define VMLAT_CLOCK_HULL		32	/* vertices kept per hull */
/*
 * Exchanges further than this from the first are refused (2^60 ns, 36
 * years): with slopes within [0, 2], every product and sum then fits.
 */
#define VMLAT_CLOCK_SPAN		BIT_ULL(60)

struct vmlat_clock_pt {
	s64 x;		/* guest time - origin */
	s64 y;		/* host time - origin */
};

/**
 * struct vmlat_clock_fit - the exchanges of one guest clock
 * @g0:		origin of guest times (g1 of the first exchange)
 * @h0:		origin of host times (h of the first exchange)
 * @last_g2:	g2 of the last exchange taken
 * @nl:		vertices in @lower
 * @nu:		vertices in @upper
 * @lower:	lower convex hull of the points (g1, h), by guest time
 * @upper:	upper convex hull of the points (g2, h), by guest time
 * @exchanges:	exchanges taken
 * @evicted:	hull vertices dropped to keep the hulls bounded (the oldest
 *		go: the bounds get looser, never wrong)
 */
struct vmlat_clock_fit {
	u64 g0;
	u64 h0;
	u64 last_g2;
	u32 nl;
	u32 nu;
	struct vmlat_clock_pt lower[VMLAT_CLOCK_HULL];
	struct vmlat_clock_pt upper[VMLAT_CLOCK_HULL];
	u64 exchanges;
	u64 evicted;
};

/**
 * struct vmlat_clock_map - what the exchanges so far allow
 * @drift_min_ppb: the smallest feasible slope, as (a - 1) * 1e9
 * @drift_max_ppb: the largest
 * @drift_ppb:	the middle one, the slope reported
 * @at_guest_ns: a guest time (the last exchange's g2)
 * @host_ns:	the middle line's host time there
 * @host_min_ns: the earliest host time any feasible line gives there
 * @host_max_ns: the latest
 */
struct vmlat_clock_map {
	s64 drift_min_ppb;
	s64 drift_max_ppb;
	s64 drift_ppb;
	u64 at_guest_ns;
	u64 host_ns;
	u64 host_min_ns;
	u64 host_max_ns;
};

void vmlat_clock_fit_init(struct vmlat_clock_fit *s);
int vmlat_clock_fit_add(struct vmlat_clock_fit *s, u64 g1, u64 h, u64 g2);
int vmlat_clock_fit_solve(const struct vmlat_clock_fit *s, struct vmlat_clock_map *f);
s64 vmlat_clock_map_host(const struct vmlat_clock_map *f, u64 guest_ns);

#endif /* _VMLAT_CLOCK_FIT_H */
