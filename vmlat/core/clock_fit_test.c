// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/clock_fit.c, the guest -> host clock mapping.
 *
 * Synthetic exchanges from a known line (drift, offset) with a known
 * round-trip jitter: the true line must lie in the bounds, the bounds must
 * be about one round trip wide; adversarial inputs (a lie, replays, out of
 * order, one exchange, identical timestamps, a wrapping counter, more
 * vertices than the hulls hold). A slow reference that keeps every point
 * (no hull) gives the same bounds.
 */
#include <kunit/test.h>

#include "clock_fit.h"

#define NS	1000000000LL

static u32 rnd_state;

static u32 rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* The true line: host = g + g * ppb / 1e9 + off (g relative to @base). */
struct line {
	u64 base;
	s64 ppb;
	s64 off;
};

static u64 truth(const struct line *l, u64 g)
{
	s64 d = (s64)(g - l->base);
	s64 corr = (s64)vmlat_mul_div(d < 0 ? -d : d,
				      l->ppb < 0 ? -l->ppb : l->ppb, NS);
	bool neg_d = d < 0, neg_ppb = l->ppb < 0;

	if (neg_d != neg_ppb)
		corr = -corr;
	return l->base + l->off + d + corr;
}

struct xchg {
	u64 g1, h, g2;
};

/*
 * @n exchanges every @period ns from guest time @start, round trips in
 * [@rtt_min, @rtt_max], the host stamping somewhere strictly inside.
 */
static void make_exchanges(struct xchg *x, int n, const struct line *l,
			   u64 start, u64 period, u32 rtt_min, u32 rtt_max)
{
	int i;

	for (i = 0; i < n; i++) {
		u32 rtt = rtt_min + rnd() % (rtt_max - rtt_min + 1);

		x[i].g1 = start + i * period + rnd() % (period / 4);
		x[i].g2 = x[i].g1 + rtt;
		x[i].h = truth(l, x[i].g1 + 1 + rnd() % (rtt - 1));
	}
}

static int feed(struct vmlat_clock_fit *s, const struct xchg *x, int n)
{
	int i, err;

	for (i = 0; i < n; i++) {
		err = vmlat_clock_fit_add(s, x[i].g1, x[i].h, x[i].g2);
		if (err)
			return err;
	}
	return 0;
}

/* The true line lies in what the fit allows; @what names the caller's fit. */
static void expect_truth_inside(struct kunit *test,
				const struct vmlat_clock_map *f,
				const struct line *l, const char *what)
{
	u64 t = truth(l, f->at_guest_ns);

	KUNIT_EXPECT_LE_MSG(test, f->drift_min_ppb, l->ppb,
			    "%s: least drift above the true one", what);
	KUNIT_EXPECT_GE_MSG(test, f->drift_max_ppb, l->ppb,
			    "%s: largest drift below the true one", what);
	KUNIT_EXPECT_LE_MSG(test, f->host_min_ns, t,
			    "%s: least host time above the true one", what);
	KUNIT_EXPECT_GE_MSG(test, f->host_max_ns, t,
			    "%s: largest host time below the true one", what);
	KUNIT_EXPECT_LE_MSG(test, f->host_min_ns, f->host_ns,
			    "%s: middle host time below the least", what);
	KUNIT_EXPECT_GE_MSG(test, f->host_max_ns, f->host_ns,
			    "%s: middle host time above the largest", what);
}

/* Big: static, not on the stack (KASAN kernels warn at 2 KiB frames). */
static struct xchg xs[2000];
static struct vmlat_clock_fit s, s2, copy;

/* 50 ppm fast, 3 s ahead, round trips 2-20 us, one exchange per 10 ms. */
static void vmlat_clock_fit_known_line(struct kunit *test)
{
	struct line l = { .base = 5 * NS, .ppb = 50000, .off = 3 * NS };
	struct vmlat_clock_map f;
	s64 mapped;

	rnd_state = 1;
	vmlat_clock_fit_init(&s);
	make_exchanges(xs, 200, &l, 5 * NS, 10000000, 2000, 20000);
	KUNIT_ASSERT_EQ(test, feed(&s, xs, 200), 0);
	KUNIT_ASSERT_EQ(test, vmlat_clock_fit_solve(&s, &f), 0);
	expect_truth_inside(test, &f, &l, "known line");
	/* About one round trip wide, the drift to a fraction of a ppm. */
	KUNIT_EXPECT_LE(test, f.host_max_ns - f.host_min_ns, 2 * 20000ULL);
	KUNIT_EXPECT_LE(test, f.drift_max_ppb - f.drift_min_ppb, 10000LL);
	/* The middle line maps the guest's times near the truth. */
	mapped = vmlat_clock_map_host(&f, xs[100].g1) - (s64)truth(&l, xs[100].g1);
	KUNIT_EXPECT_LE(test, mapped, 40000LL);
	KUNIT_EXPECT_GE(test, mapped, -40000LL);
	KUNIT_EXPECT_EQ(test, s.evicted, 0ULL);
}

/* Slower guest clock, a counter about to wrap around 2^64. */
static void vmlat_clock_fit_wrapping_counter(struct kunit *test)
{
	u64 start = U64_MAX - 500000000ULL;
	struct line l = { .base = start, .ppb = -120000, .off = -7 * NS };
	struct vmlat_clock_map f;

	rnd_state = 2;
	vmlat_clock_fit_init(&s);
	make_exchanges(xs, 100, &l, start, 10000000, 1000, 5000);
	KUNIT_ASSERT_EQ(test, feed(&s, xs, 100), 0);
	KUNIT_ASSERT_LT(test, xs[99].g1, start);	/* it did wrap */
	KUNIT_ASSERT_EQ(test, vmlat_clock_fit_solve(&s, &f), 0);
	expect_truth_inside(test, &f, &l, "wrapping counter");
}

/* One exchange bounds nothing; malformed and replayed ones change nothing. */
static void vmlat_clock_fit_refuses(struct kunit *test)
{
	struct vmlat_clock_map f;

	vmlat_clock_fit_init(&s);
	KUNIT_EXPECT_EQ(test, vmlat_clock_fit_solve(&s, &f), -EAGAIN);
	KUNIT_EXPECT_EQ(test, vmlat_clock_fit_add(&s, 100, 1000, 50), -EINVAL);
	KUNIT_EXPECT_EQ(test, s.exchanges, 0ULL);
	KUNIT_EXPECT_EQ(test, vmlat_clock_fit_add(&s, 100, 1000, 110), 0);
	KUNIT_EXPECT_EQ(test, vmlat_clock_fit_solve(&s, &f), -EAGAIN);
	copy = s;
	/* replayed, overlapping, out of order */
	KUNIT_EXPECT_EQ(test, vmlat_clock_fit_add(&s, 100, 1000, 110), -ERANGE);
	KUNIT_EXPECT_EQ(test, vmlat_clock_fit_add(&s, 105, 1010, 120), -ERANGE);
	KUNIT_EXPECT_EQ(test, vmlat_clock_fit_add(&s, 10, 900, 20), -ERANGE);
	/* too far from the first */
	KUNIT_EXPECT_EQ(test, vmlat_clock_fit_add(&s, 200, 1000, 100 + VMLAT_CLOCK_SPAN),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, vmlat_clock_fit_add(&s, 200, 1000 + VMLAT_CLOCK_SPAN,
					     210), -ERANGE);
	KUNIT_EXPECT_EQ(test, memcmp(&s, &copy, sizeof(s)), 0);
	KUNIT_EXPECT_EQ(test, vmlat_clock_fit_add(&s, 200, 1100, 210), 0);
	KUNIT_EXPECT_EQ(test, vmlat_clock_fit_solve(&s, &f), 0);
}

/*
 * A host stamp outside its guest window (a guest lying, or a clock
 * stepping) leaves no line: refused, not averaged in. A slow exchange
 * (1 ms) that is honest changes nothing the others decide.
 */
static void vmlat_clock_fit_lie_and_outlier(struct kunit *test)
{
	struct line l = { .base = 0, .ppb = 0, .off = NS };
	struct vmlat_clock_map f, f2;

	rnd_state = 3;
	make_exchanges(xs, 50, &l, 0, 10000000, 2000, 4000);
	vmlat_clock_fit_init(&s);
	KUNIT_ASSERT_EQ(test, feed(&s, xs, 50), 0);
	KUNIT_ASSERT_EQ(test, vmlat_clock_fit_solve(&s, &f), 0);

	s2 = s;
	KUNIT_ASSERT_EQ(test, vmlat_clock_fit_add(&s2, 600000000, 600000000 + NS +
					     100000, 600003000), 0);
	KUNIT_EXPECT_EQ(test, vmlat_clock_fit_solve(&s2, &f2), -EDOM);

	s2 = s;
	KUNIT_ASSERT_EQ(test, vmlat_clock_fit_add(&s2, 600000000, 600000000 + NS +
					     500000, 601000000), 0);
	KUNIT_ASSERT_EQ(test, vmlat_clock_fit_solve(&s2, &f2), 0);
	expect_truth_inside(test, &f2, &l, "with a slow honest exchange");
	KUNIT_EXPECT_EQ(test, f2.drift_min_ppb, f.drift_min_ppb);
}

/* Exchanges of no duration pin the line exactly. */
static void vmlat_clock_fit_identical_timestamps(struct kunit *test)
{
	struct vmlat_clock_map f;
	int i;

	vmlat_clock_fit_init(&s);
	for (i = 0; i < 10; i++)
		KUNIT_ASSERT_EQ_MSG(test,
				    vmlat_clock_fit_add(&s, 1000 + i * 1000,
							5000 + i * 1000,
							1000 + i * 1000), 0,
				    "exchange %d", i);
	KUNIT_ASSERT_EQ(test, vmlat_clock_fit_solve(&s, &f), 0);
	KUNIT_EXPECT_EQ(test, f.drift_min_ppb, 0LL);
	KUNIT_EXPECT_EQ(test, f.drift_max_ppb, 0LL);
	KUNIT_EXPECT_EQ(test, f.host_min_ns, f.at_guest_ns + 4000);
	KUNIT_EXPECT_EQ(test, f.host_max_ns, f.at_guest_ns + 4000);
	KUNIT_EXPECT_EQ(test, vmlat_clock_map_host(&f, 7), 4007LL);
}

/* More hull vertices than kept: bounded memory, still true, looser. */
static void vmlat_clock_fit_bounded_hulls(struct kunit *test)
{
	struct line l = { .base = 0, .ppb = 3000, .off = 0 };
	struct vmlat_clock_map f;
	int i;

	vmlat_clock_fit_init(&s);
	/*
	 * Round trips growing then shrinking along a parabola make every
	 * point a hull vertex.
	 */
	for (i = 0; i < 2000; i++) {
		u64 g1 = (u64)i * 1000000;
		u64 rtt = 100 + (u64)(i - 1000) * (i - 1000) / 100;

		xs[i].g1 = g1;
		xs[i].g2 = g1 + 2 * rtt;
		xs[i].h = truth(&l, g1 + rtt);
	}
	KUNIT_ASSERT_EQ(test, feed(&s, xs, 2000), 0);
	KUNIT_EXPECT_LE(test, s.nl, (u32)VMLAT_CLOCK_HULL);
	KUNIT_EXPECT_LE(test, s.nu, (u32)VMLAT_CLOCK_HULL);
	KUNIT_EXPECT_GT(test, s.evicted, 0ULL);
	KUNIT_ASSERT_EQ(test, vmlat_clock_fit_solve(&s, &f), 0);
	expect_truth_inside(test, &f, &l, "bounded hulls");
}

/*
 * The hull's invariants: guest offsets in [0, VMLAT_CLOCK_SPAN), in order,
 * the last g2 at or after every vertex. What keeps cross() and slope() in
 * range: a fit that breaks them can overflow s64 there.
 */
static void expect_hull_sane(struct kunit *test,
			     const struct vmlat_clock_fit *f, const char *what)
{
	u64 last = f->last_g2 - f->g0;
	u32 i;

	for (i = 0; i < f->nl; i++) {
		KUNIT_EXPECT_TRUE_MSG(test, f->lower[i].x >= 0 &&
				      (u64)f->lower[i].x <= last,
				      "%s: lower vertex %u at %lld, last g2 at %llu",
				      what, i, (long long)f->lower[i].x,
				      (unsigned long long)last);
		if (i)
			KUNIT_EXPECT_LT_MSG(test, f->lower[i - 1].x,
					    f->lower[i].x,
					    "%s: lower vertex %u out of order",
					    what, i);
	}
	for (i = 0; i < f->nu; i++) {
		KUNIT_EXPECT_TRUE_MSG(test, f->upper[i].x >= 0 &&
				      (u64)f->upper[i].x <= last,
				      "%s: upper vertex %u at %lld, last g2 at %llu",
				      what, i, (long long)f->upper[i].x,
				      (unsigned long long)last);
		if (i)
			KUNIT_EXPECT_LT_MSG(test, f->upper[i - 1].x,
					    f->upper[i].x,
					    "%s: upper vertex %u out of order",
					    what, i);
	}
	KUNIT_EXPECT_LT_MSG(test, last, VMLAT_CLOCK_SPAN,
			    "%s: last g2 beyond the span", what);
}

/*
 * A guest that sends g1 = last g2 + 2^63 - 1 and g2 = g1 + 2^63 - 1: each
 * step "forward" modulo 2^64, g2 near the first exchange, g1 half the
 * clock away. Refused, nothing changes, and honest exchanges after it
 * still make a mapping.
 */
static void vmlat_clock_fit_half_clock_jump(struct kunit *test)
{
	struct line l = { .base = 0, .ppb = 0, .off = NS };
	struct vmlat_clock_map f;
	u64 g1, g2;

	rnd_state = 4;
	make_exchanges(xs, 20, &l, 0, 10000000, 2000, 4000);
	vmlat_clock_fit_init(&s);
	KUNIT_ASSERT_EQ(test, feed(&s, xs, 10), 0);
	copy = s;
	g1 = s.last_g2 + (u64)S64_MAX;
	g2 = g1 + (u64)S64_MAX;
	KUNIT_EXPECT_EQ(test, vmlat_clock_fit_add(&s, g1, xs[10].h, g2), -ERANGE);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(&s, &copy, sizeof(s)), 0,
			    "a refused exchange changed the fit");
	expect_hull_sane(test, &s, "after the jump");
	KUNIT_ASSERT_EQ(test, feed(&s, xs + 10, 10), 0);
	KUNIT_ASSERT_EQ_MSG(test, vmlat_clock_fit_solve(&s, &f), 0,
			    "honest exchanges after the jump make no mapping");
	expect_truth_inside(test, &f, &l, "after the jump");
}

/*
 * After honest exchanges, one with g1 = (the first g1 if @from_first, else
 * the last g2) + @d1 and g2 = g1 + @d2.
 */
static void hostile_exchange(struct kunit *test, bool from_first, u64 d1,
			     u64 d2, const char *what)
{
	struct vmlat_clock_map f;
	u64 g1, g2;
	int err;

	vmlat_clock_fit_init(&s);
	KUNIT_ASSERT_EQ(test, feed(&s, xs, 4), 0);
	g1 = (from_first ? s.g0 : s.last_g2) + d1;
	g2 = g1 + d2;
	copy = s;
	err = vmlat_clock_fit_add(&s, g1, xs[4].h, g2);
	if (err)
		KUNIT_EXPECT_EQ_MSG(test, memcmp(&s, &copy, sizeof(s)), 0,
				    "%s: refused (%d) but changed", what, err);
	expect_hull_sane(test, &s, what);
	err = vmlat_clock_fit_solve(&s, &f);
	KUNIT_EXPECT_TRUE_MSG(test, !err || err == -EAGAIN || err == -EDOM ||
			      err == -ERANGE, "%s: solve says %d", what, err);
}

/*
 * Hostile guest times, each g1 and g2 from a table of offsets around the
 * last exchange, the first one and the ends of the span and of the 64-bit
 * clock, after honest exchanges: whatever is taken keeps the hull sane
 * (UBSan, in userspace, checks every product and sum of solve()), and
 * honest exchanges after them still make a mapping or say why not.
 */
static void vmlat_clock_fit_hostile_times(struct kunit *test)
{
	static const u64 d[] = {
		0, 1, 2, 1000, VMLAT_CLOCK_SPAN - 1, VMLAT_CLOCK_SPAN,
		VMLAT_CLOCK_SPAN + 1, (u64)S64_MAX - 1, (u64)S64_MAX,
		(u64)S64_MAX + 1, -VMLAT_CLOCK_SPAN, -1000ULL, -2ULL, -1ULL,
	};
	struct line l = { .base = 0, .ppb = 0, .off = NS };
	unsigned int i, j, base;
	char what[64];

	rnd_state = 5;
	make_exchanges(xs, 8, &l, 1000 * NS, 10000000, 2000, 4000);
	for (base = 0; base < 2; base++) {
		for (i = 0; i < ARRAY_SIZE(d); i++) {
			for (j = 0; j < ARRAY_SIZE(d); j++) {
				snprintf(what, sizeof(what),
					 "from %s, g1 +%#llx, g2 +%#llx",
					 base ? "first g1" : "last g2",
					 (unsigned long long)d[i],
					 (unsigned long long)d[j]);
				hostile_exchange(test, base, d[i], d[j], what);
			}
		}
	}
}

/* ---- the slow reference: every point, every pair ---------------------- */

struct rfrac {
	s64 num, den;
};

static int rcmp(struct rfrac a, struct rfrac b)
{
	vmlat_s128 l = (vmlat_s128)a.num * b.den, r = (vmlat_s128)b.num * a.den;

	return l < r ? -1 : l > r;
}

/*
 * Random honest exchanges: the feasible slopes from every pair of points
 * (no hull) are those the hulls give. The fit reports them rounded out to
 * whole ppb: min * den <= (num - den) * 1e9 < (min + 1) * den, and the
 * mirror image for max (checked by multiplication only).
 */
static void vmlat_clock_fit_matches_all_pairs(struct kunit *test)
{
	struct line l = { .base = 0, .ppb = -30000, .off = 12345 };
	struct rfrac amin = { 0, 0 }, amax = { 0, 0 }, c;
	struct vmlat_clock_map f;
	vmlat_s128 v;
	int i, j, round;
	char what[32];

	for (round = 0; round < 20; round++) {
		int n = 3 + round * 2;

		snprintf(what, sizeof(what), "round %d (%d exchanges)", round,
			 n);
		rnd_state = 100 + round;
		make_exchanges(xs, n, &l, 0, 1000000, 500, 50000);
		vmlat_clock_fit_init(&s);
		KUNIT_ASSERT_EQ_MSG(test, feed(&s, xs, n), 0, "%s: add", what);
		KUNIT_ASSERT_EQ_MSG(test, vmlat_clock_fit_solve(&s, &f), 0,
				    "%s: solve", what);
		expect_truth_inside(test, &f, &l, what);

		amin.den = 0;
		amax.den = 0;
		for (i = 0; i < n; i++) {
			for (j = 0; j < n; j++) {
				/* upper point of i, lower point of j */
				s64 xu = xs[i].g2 - xs[0].g1, xl = xs[j].g1 - xs[0].g1;
				s64 dy = (s64)(xs[j].h - xs[i].h);

				if (xl > xu) {
					c.num = dy;
					c.den = xl - xu;
					if (!amax.den || rcmp(c, amax) < 0)
						amax = c;
				} else if (xu > xl) {
					c.num = -dy;
					c.den = xu - xl;
					if (!amin.den || rcmp(c, amin) > 0)
						amin = c;
				}
			}
		}
		v = (vmlat_s128)(amin.num - amin.den) * NS;
		KUNIT_EXPECT_TRUE_MSG(test,
			(vmlat_s128)f.drift_min_ppb * amin.den <= v &&
			v < (vmlat_s128)(f.drift_min_ppb + 1) * amin.den,
			"%s: least drift %lld ppb", what,
			(long long)f.drift_min_ppb);
		v = (vmlat_s128)(amax.num - amax.den) * NS;
		KUNIT_EXPECT_TRUE_MSG(test,
			(vmlat_s128)f.drift_max_ppb * amax.den >= v &&
			v > (vmlat_s128)(f.drift_max_ppb - 1) * amax.den,
			"%s: largest drift %lld ppb", what,
			(long long)f.drift_max_ppb);
	}
}

static struct kunit_case vmlat_clock_fit_cases[] = {
	KUNIT_CASE(vmlat_clock_fit_known_line),
	KUNIT_CASE(vmlat_clock_fit_wrapping_counter),
	KUNIT_CASE(vmlat_clock_fit_refuses),
	KUNIT_CASE(vmlat_clock_fit_lie_and_outlier),
	KUNIT_CASE(vmlat_clock_fit_identical_timestamps),
	KUNIT_CASE(vmlat_clock_fit_bounded_hulls),
	KUNIT_CASE(vmlat_clock_fit_half_clock_jump),
	KUNIT_CASE(vmlat_clock_fit_hostile_times),
	KUNIT_CASE(vmlat_clock_fit_matches_all_pairs),
	{}
};

static struct kunit_suite vmlat_clock_fit_suite = {
	.name = "vmlat_clock_fit",
	.test_cases = vmlat_clock_fit_cases,
};

kunit_test_suites(&vmlat_clock_fit_suite);
