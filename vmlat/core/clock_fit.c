// SPDX-License-Identifier: GPL-2.0
/*
 * Guest -> host clock mapping from hypercall exchanges: see clock_fit.h.
 */
#include "clock_fit.h"

#define NS_PER_S	1000000000LL

/* A slope as a fraction, den > 0. */
struct frac {
	s64 num;
	s64 den;
};

/* Orientation of o -> a -> b: > 0 turns left (counter-clockwise). */
static vmlat_s128 cross(const struct vmlat_clock_pt *o,
			const struct vmlat_clock_pt *a,
			const struct vmlat_clock_pt *b)
{
	return (vmlat_s128)(a->x - o->x) * (b->y - o->y) -
	       (vmlat_s128)(a->y - o->y) * (b->x - o->x);
}

static int frac_cmp(struct frac a, struct frac b)
{
	vmlat_s128 l = (vmlat_s128)a.num * b.den, r = (vmlat_s128)b.num * a.den;

	return l < r ? -1 : l > r;
}

/* Slope from p to q, q to the right of p. */
static struct frac slope(const struct vmlat_clock_pt *p,
			 const struct vmlat_clock_pt *q)
{
	struct frac f = { q->y - p->y, q->x - p->x };

	return f;
}

/* n * m / d for d > 0, rounded down (up if @up); saturates. */
static s64 muldiv(s64 n, u64 m, s64 d, bool up)
{
	u64 mag = n < 0 ? -(u64)n : (u64)n;
	u64 q = vmlat_mul_div(mag, m, d);
	bool exact = q != U64_MAX &&
		     (vmlat_u128)q * (u64)d == (vmlat_u128)mag * m;

	if (q > (u64)S64_MAX)
		return n < 0 ? -S64_MAX : S64_MAX;
	if (n < 0)
		return -(s64)q - (!up && !exact);
	return (s64)q + (up && !exact);
}

/**
 * vmlat_clock_fit_init() - no exchange yet
 * @s:	the clock's state
 */
void vmlat_clock_fit_init(struct vmlat_clock_fit *s)
{
	memset(s, 0, sizeof(*s));
}

/* Add @p to a hull kept by guest time; @lower: the lower hull. */
static void hull_add(struct vmlat_clock_fit *s, struct vmlat_clock_pt *h, u32 *n,
		     const struct vmlat_clock_pt *p, bool lower)
{
	while (*n) {
		const struct vmlat_clock_pt *last = &h[*n - 1];

		if (last->x == p->x) {
			/* One point per guest time: the constraining one. */
			if (lower ? p->y >= last->y : p->y <= last->y)
				return;
			(*n)--;
			continue;
		}
		if (*n < 2)
			break;
		if (lower ? cross(&h[*n - 2], last, p) > 0 :
			    cross(&h[*n - 2], last, p) < 0)
			break;
		(*n)--;
	}
	if (*n == VMLAT_CLOCK_HULL) {
		memmove(h, h + 1, (VMLAT_CLOCK_HULL - 1) * sizeof(*h));
		(*n)--;
		s->evicted++;
	}
	h[(*n)++] = *p;
}

/**
 * vmlat_clock_fit_add() - take one exchange
 * @s:	the clock's state
 * @g1:	guest time before the hypercall
 * @h:	host time at the hypercall
 * @g2:	guest time after it
 *
 * Guest times are taken as offsets from the first exchange's g1, modulo
 * 2^64, so that a counter that wraps goes on; an exchange is taken only
 * if g1 <= g2 and it starts at or after the last one ended, all three as
 * offsets, and its g2 lies within VMLAT_CLOCK_SPAN. Every guest offset in
 * the hulls is then in [0, VMLAT_CLOCK_SPAN) and in order, whatever the
 * guest sends: what keeps cross() and slope() within 64 and 128 bits.
 *
 * Return: 0; -EINVAL if g2 is before g1; -ERANGE if the exchange starts
 * before the last one ended (replayed or out of order), or lies more than
 * VMLAT_CLOCK_SPAN from the first. Nothing changes on an error.
 */
int vmlat_clock_fit_add(struct vmlat_clock_fit *s, u64 g1, u64 h, u64 g2)
{
	u64 g0 = s->exchanges ? s->g0 : g1, h0 = s->exchanges ? s->h0 : h;
	u64 o1 = g1 - g0, o2 = g2 - g0;
	struct vmlat_clock_pt lo, up;

	/* Checked first, as before: a g2 "before" g1 is a malformed exchange. */
	if ((s64)(g2 - g1) < 0)
		return -EINVAL;
	if (o2 < o1)	/* g1 -> g2 wraps past the first exchange's g1 */
		return -ERANGE;
	if (s->exchanges && o1 < s->last_g2 - g0)
		return -ERANGE;
	if (o2 >= VMLAT_CLOCK_SPAN ||
	    (h - h0 >= VMLAT_CLOCK_SPAN && h0 - h >= VMLAT_CLOCK_SPAN))
		return -ERANGE;
	s->g0 = g0;
	s->h0 = h0;
	lo.x = o1;
	up.x = o2;
	lo.y = (s64)(h - h0);
	up.y = lo.y;
	hull_add(s, s->lower, &s->nl, &lo, true);
	hull_add(s, s->upper, &s->nu, &up, false);
	s->last_g2 = g2;
	s->exchanges++;
	return 0;
}

/* (a - 1) in ppb for a slope within [0, 2]; rounded down (up if @up). */
static s64 frac_ppb(struct frac a, bool up)
{
	return muldiv(a.num - a.den, NS_PER_S, a.den, up);
}

/*
 * The latest (@hi) or earliest host time at guest time @x over the lines
 * of slope @a that the lower (@hi) or upper hull allows.
 */
static s64 bound_at(const struct vmlat_clock_fit *s, struct frac a, s64 x, bool hi)
{
	const struct vmlat_clock_pt *h = hi ? s->lower : s->upper;
	u32 n = hi ? s->nl : s->nu, i;
	s64 best = hi ? S64_MAX : -S64_MAX, v;

	for (i = 0; i < n; i++) {
		/* x is the last g2: never left of a vertex */
		v = h[i].y + muldiv(a.num, x - h[i].x, a.den, hi);
		if (hi ? v < best : v > best)
			best = v;
	}
	return best;
}

static s64 earliest(s64 a, s64 b)
{
	return a < b ? a : b;
}

static s64 latest(s64 a, s64 b)
{
	return a > b ? a : b;
}

/* Whether slope @c lies in [@lo, @hi]. */
static bool frac_within(struct frac c, struct frac lo, struct frac hi)
{
	return frac_cmp(c, lo) >= 0 && frac_cmp(c, hi) <= 0;
}

/**
 * vmlat_clock_fit_solve() - the lines the exchanges allow
 * @s:	the clock's state
 * @f:	set to the feasible drifts, the middle line and the range of host
 *	times at the last exchange
 *
 * Context: O(VMLAT_CLOCK_HULL^2): for readers, not for probes.
 * Return: 0; -EAGAIN until the exchanges bound the slope both ways;
 * -EDOM if no line satisfies them all (a clock stepped, or a guest lied);
 * -ERANGE if the slope is outside [0, 2].
 */
int vmlat_clock_fit_solve(const struct vmlat_clock_fit *s, struct vmlat_clock_map *f)
{
	struct frac amin = { 0, 0 }, amax = { 0, 0 }, c;
	s64 x, lo, hi, blo, bhi;
	u32 i, j;
	int k;

	/* a <= slope(u, l) for u left of l; a >= slope(l, u) for l left of u */
	for (i = 0; i < s->nu; i++) {
		for (j = 0; j < s->nl; j++) {
			const struct vmlat_clock_pt *u = &s->upper[i];
			const struct vmlat_clock_pt *l = &s->lower[j];

			if (l->x > u->x) {
				c = slope(u, l);
				if (!amax.den || frac_cmp(c, amax) < 0)
					amax = c;
			} else if (u->x > l->x) {
				c = slope(l, u);
				if (!amin.den || frac_cmp(c, amin) > 0)
					amin = c;
			}
		}
	}
	if (!amin.den || !amax.den)
		return -EAGAIN;
	if (frac_cmp(amin, amax) > 0)
		return -EDOM;
	if (amin.num < 0 || amax.num > 2 * amax.den)
		return -ERANGE;

	f->drift_min_ppb = frac_ppb(amin, false);
	f->drift_max_ppb = frac_ppb(amax, true);
	f->drift_ppb = f->drift_min_ppb +
		       (f->drift_max_ppb - f->drift_min_ppb) / 2;

	/*
	 * The range of host times at x over the feasible lines: the latest
	 * is the largest, over slopes in [amin, amax], of the lowest line
	 * below the lower hull, a concave function of the slope whose
	 * maximum lies at a bound or at the slope of a hull edge; likewise
	 * the earliest.
	 */
	x = s->upper[s->nu - 1].x;
	hi = bound_at(s, amin, x, true);
	lo = bound_at(s, amin, x, false);
	for (k = 0; k < 2; k++) {
		const struct vmlat_clock_pt *h = k ? s->upper : s->lower;
		u32 n = k ? s->nu : s->nl;

		for (i = 0; i + 1 < n; i++) {
			c = slope(&h[i], &h[i + 1]);
			if (!frac_within(c, amin, amax))
				continue;
			if (k)
				lo = earliest(lo, bound_at(s, c, x, false));
			else
				hi = latest(hi, bound_at(s, c, x, true));
		}
	}
	hi = latest(hi, bound_at(s, amax, x, true));
	lo = earliest(lo, bound_at(s, amax, x, false));

	/* The middle line: the middle offset its slope allows. */
	c.num = NS_PER_S + f->drift_ppb;
	c.den = NS_PER_S;
	bhi = bound_at(s, c, x, true);
	blo = bound_at(s, c, x, false);
	f->at_guest_ns = s->g0 + x;
	f->host_ns = s->h0 + blo + (bhi - blo) / 2;
	f->host_min_ns = s->h0 + lo;
	f->host_max_ns = s->h0 + hi;
	return 0;
}

/**
 * vmlat_clock_map_host() - a guest time on the host's clock, by the middle line
 * @f:		a fit
 * @guest_ns:	the guest time (within VMLAT_CLOCK_SPAN of the fit's)
 *
 * Return: the host time, as a signed offset from @f->host_ns added to it.
 */
s64 vmlat_clock_map_host(const struct vmlat_clock_map *f, u64 guest_ns)
{
	s64 d = (s64)(guest_ns - f->at_guest_ns), corr;

	corr = muldiv(d, f->drift_ppb < 0 ? -f->drift_ppb : f->drift_ppb,
		      NS_PER_S, false);
	return (s64)f->host_ns + d + (f->drift_ppb < 0 ? -corr : corr);
}
