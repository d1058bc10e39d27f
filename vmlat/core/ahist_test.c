// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/ahist.c: lock-free latency histograms.
 *
 * The tests run on one thread. What they check is what a copy of a
 * histogram says: the bucket of every sample, the count, the sum, the
 * minimum and the maximum, including at 0, near U64_MAX and across
 * S64_MAX (the counters are signed underneath). Then that the copy does
 * not depend on the order of the samples: a minimum and a maximum that
 * only move towards each sample are what makes samples recorded by
 * several CPUs at once come out as any serial order of them would.
 */
#include <kunit/test.h>

#include "ahist.h"

#define NS_PER_S	1000000000ULL
/* The first u64 that is a negative s64. */
#define S63		BIT_ULL(63)

/* 3.4 KB each: too big for a kernel stack, so suite init allocates them. */
struct ahist_ctx {
	struct vmlat_ahist h, parts[3];
	struct vmlat_hist_snap got, prev, want;
};

static int ahist_test_init(struct kunit *test)
{
	struct ahist_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	if (!c)
		return -ENOMEM;
	/* Garbage first: vmlat_ahist_init() must set every field. */
	memset(&c->h, 0xa5, sizeof(c->h));
	vmlat_ahist_init(&c->h);
	memset(c->parts, 0xa5, sizeof(c->parts));
	vmlat_ahist_init(&c->parts[0]);
	vmlat_ahist_init(&c->parts[1]);
	vmlat_ahist_init(&c->parts[2]);
	test->priv = c;
	return 0;
}

/* What a copy must say after @v[0..@n): worked out the plain way. */
static void ref_snap(const u64 *v, unsigned int n, struct vmlat_hist_snap *s)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++) {
		s->buckets[vmlat_hist_bucket(v[i])]++;
		s->count++;
		s->sum_ns += v[i];
		if (!i || v[i] < s->min_ns)
			s->min_ns = v[i];
		if (v[i] > s->max_ns)
			s->max_ns = v[i];
	}
}

/* Field by field, saying which input (@what) and which field differ. */
static void expect_snap_eq(struct kunit *test,
			   const struct vmlat_hist_snap *got,
			   const struct vmlat_hist_snap *want,
			   const char *what)
{
	unsigned int i;

	KUNIT_EXPECT_EQ_MSG(test, got->count, want->count, "%s: count", what);
	KUNIT_EXPECT_EQ_MSG(test, got->sum_ns, want->sum_ns, "%s: sum", what);
	KUNIT_EXPECT_EQ_MSG(test, got->min_ns, want->min_ns, "%s: min", what);
	KUNIT_EXPECT_EQ_MSG(test, got->max_ns, want->max_ns, "%s: max", what);
	for (i = 0; i < VMLAT_HIST_NR_BUCKETS; i++)
		KUNIT_EXPECT_EQ_MSG(test, got->buckets[i], want->buckets[i],
				    "%s: bucket %u", what, i);
}

static void vmlat_ahist_empty_reads_zero(struct kunit *test)
{
	struct ahist_ctx *c = test->priv;

	memset(&c->got, 0xa5, sizeof(c->got));
	vmlat_ahist_read(&c->h, &c->got);
	expect_snap_eq(test, &c->got, &c->want, "empty");
}

/* Bucket edges of hist.h, both ends of the range, both sides of S63. */
static const u64 bucket_samples[] = {
	0, 1, 99, 100, 103, 104, 1000, 1000, (1ULL << 33) - 1, 1ULL << 33,
	10 * NS_PER_S - 1, 10 * NS_PER_S, S63 - 1, S63, U64_MAX - 1, U64_MAX,
	0, U64_MAX,
};

/* Each sample adds one to its bucket and to the count, nothing else. */
static void vmlat_ahist_sample_lands_in_its_bucket(struct kunit *test)
{
	struct ahist_ctx *c = test->priv;
	unsigned int i, b, n = ARRAY_SIZE(bucket_samples);

	vmlat_ahist_read(&c->h, &c->prev);
	for (i = 0; i < n; i++) {
		u64 ns = bucket_samples[i];

		vmlat_ahist_add(&c->h, ns);
		vmlat_ahist_read(&c->h, &c->got);
		KUNIT_EXPECT_EQ_MSG(test, c->got.count, (u64)i + 1,
				    "count after sample %u (%llu ns)", i,
				    (unsigned long long)ns);
		for (b = 0; b < VMLAT_HIST_NR_BUCKETS; b++) {
			u64 want = c->prev.buckets[b] +
				   (b == vmlat_hist_bucket(ns));

			KUNIT_EXPECT_EQ_MSG(test, c->got.buckets[b], want,
					    "sample %u (%llu ns): bucket %u",
					    i, (unsigned long long)ns, b);
		}
		c->prev = c->got;
	}
	ref_snap(bucket_samples, n, &c->want);
	expect_snap_eq(test, &c->got, &c->want, "all bucket samples");
}

/* Sequences with their count, sum (modulo 2^64), min and max by hand. */
struct seq_case {
	const char *desc;
	u64 v[6];
	unsigned int n;
	u64 sum, min, max;
};

static const struct seq_case seq_cases[] = {
	{ "one 0 ns sample", { 0 }, 1, 0, 0, 0 },
	{ "one U64_MAX sample", { U64_MAX }, 1, U64_MAX, U64_MAX, U64_MAX },
	{ "0 and U64_MAX among others", { 5000, 0, U64_MAX, 100 }, 4,
	  5099, 0, U64_MAX },
	{ "across S64_MAX", { S63, 5, S63 + 1 }, 3, 6, 5, S63 + 1 },
	{ "U64_MAX - 1 first, then smaller", { U64_MAX - 1, 7, 7 }, 3,
	  12, 7, U64_MAX - 1 },
	{ "S63 - 1 and S63", { S63 - 1, S63 }, 2, U64_MAX, S63 - 1, S63 },
	{ "ascending", { 1, 2, 3, 100, 200, 300 }, 6, 606, 1, 300 },
	{ "descending", { 300, 200, 100, 3, 2, 1 }, 6, 606, 1, 300 },
	{ "equal", { 42, 42, 42 }, 3, 126, 42, 42 },
};

static void seq_case_desc(const struct seq_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(seq, seq_cases, seq_case_desc);

static void vmlat_ahist_min_max_sum(struct kunit *test)
{
	const struct seq_case *sc = test->param_value;
	struct ahist_ctx *c = test->priv;
	unsigned int i;

	for (i = 0; i < sc->n; i++)
		vmlat_ahist_add(&c->h, sc->v[i]);
	vmlat_ahist_read(&c->h, &c->got);
	KUNIT_EXPECT_EQ_MSG(test, c->got.count, (u64)sc->n, "%s: count",
			    sc->desc);
	KUNIT_EXPECT_EQ_MSG(test, c->got.sum_ns, sc->sum, "%s: sum", sc->desc);
	KUNIT_EXPECT_EQ_MSG(test, c->got.min_ns, sc->min, "%s: min", sc->desc);
	KUNIT_EXPECT_EQ_MSG(test, c->got.max_ns, sc->max, "%s: max", sc->desc);
	/* The same answers, worked out the plain way. */
	ref_snap(sc->v, sc->n, &c->want);
	expect_snap_eq(test, &c->got, &c->want, sc->desc);
}

/* Init again: empty; the next sample is the minimum, not 0 or a stale one. */
static void vmlat_ahist_reinit_empties(struct kunit *test)
{
	struct ahist_ctx *c = test->priv;
	static const u64 after[] = { 500 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bucket_samples); i++)
		vmlat_ahist_add(&c->h, bucket_samples[i]);
	vmlat_ahist_init(&c->h);
	vmlat_ahist_read(&c->h, &c->got);
	expect_snap_eq(test, &c->got, &c->want, "re-initialised");

	vmlat_ahist_add(&c->h, after[0]);
	vmlat_ahist_read(&c->h, &c->got);
	ref_snap(after, ARRAY_SIZE(after), &c->want);
	expect_snap_eq(test, &c->got, &c->want, "one 500 ns sample after init");
}

/* Step @p[0..@n) to its next permutation; false after the last one. */
static bool next_perm(u8 *p, unsigned int n)
{
	unsigned int i, j;
	u8 t;

	for (i = n - 1; i > 0 && p[i - 1] >= p[i]; i--)
		;
	if (!i)
		return false;
	for (j = n - 1; p[j] <= p[i - 1]; j--)
		;
	t = p[i - 1];
	p[i - 1] = p[j];
	p[j] = t;
	for (j = n - 1; i < j; i++, j--) {
		t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	return true;
}

/*
 * Every order of a set of samples gives the same copy: all 720 orders of
 * six samples with both extremes, both sides of S63 and a repeated value.
 */
static void vmlat_ahist_any_order_same_result(struct kunit *test)
{
	static const u64 v[] = { 0, U64_MAX, S63, S63 - 1, 150, 150 };
	struct ahist_ctx *c = test->priv;
	u8 p[ARRAY_SIZE(v)] = { 0, 1, 2, 3, 4, 5 };
	unsigned int i, nr = 0;
	char what[64];

	ref_snap(v, ARRAY_SIZE(v), &c->want);
	do {
		vmlat_ahist_init(&c->h);
		for (i = 0; i < ARRAY_SIZE(v); i++)
			vmlat_ahist_add(&c->h, v[p[i]]);
		vmlat_ahist_read(&c->h, &c->got);
		snprintf(what, sizeof(what),
			 "order %u: samples %u %u %u %u %u %u", nr,
			 p[0], p[1], p[2], p[3], p[4], p[5]);
		expect_snap_eq(test, &c->got, &c->want, what);
		nr++;
	} while (next_perm(p, ARRAY_SIZE(p)));
	KUNIT_EXPECT_EQ_MSG(test, nr, 720U, "every order of 6 samples tried");
}

/*
 * Samples dealt to several histograms, one read and the others added to
 * the copy: the copy of one histogram holding them all, whichever part
 * holds the extremes, with empty parts anywhere (the first included: its
 * minimum of 0 must not stick) and with every part empty.
 */
static void vmlat_ahist_read_add_is_the_union(struct kunit *test)
{
	static const u64 v[] = { 150, U64_MAX, 99, S63, 7, 10 * NS_PER_S, 150 };
	static const u8 deals[][ARRAY_SIZE(v)] = {
		{ 0, 0, 0, 0, 0, 0, 0 },	/* all in the first */
		{ 2, 2, 2, 2, 2, 2, 2 },	/* all in the last */
		{ 1, 2, 1, 2, 1, 2, 1 },	/* the first empty */
		{ 0, 1, 2, 0, 1, 2, 0 },
		{ 2, 0, 1, 1, 0, 2, 2 },
	};
	struct ahist_ctx *c = test->priv;
	unsigned int d, i;
	char what[48];

	for (d = 0; d < ARRAY_SIZE(deals); d++) {
		for (i = 0; i < ARRAY_SIZE(c->parts); i++)
			vmlat_ahist_init(&c->parts[i]);
		for (i = 0; i < ARRAY_SIZE(v); i++)
			vmlat_ahist_add(&c->parts[deals[d][i]], v[i]);
		vmlat_ahist_read(&c->parts[0], &c->got);
		vmlat_ahist_read_add(&c->parts[1], &c->got);
		vmlat_ahist_read_add(&c->parts[2], &c->got);
		ref_snap(v, ARRAY_SIZE(v), &c->want);
		snprintf(what, sizeof(what), "deal %u", d);
		expect_snap_eq(test, &c->got, &c->want, what);
	}
	for (i = 0; i < ARRAY_SIZE(c->parts); i++)
		vmlat_ahist_init(&c->parts[i]);
	vmlat_ahist_read(&c->parts[0], &c->got);
	vmlat_ahist_read_add(&c->parts[1], &c->got);
	ref_snap(v, 0, &c->want);
	expect_snap_eq(test, &c->got, &c->want, "all empty");
}

/*
 * Histograms made on first use (vmlat_ahist_add_lazy()): a source with two
 * histograms; its take can find none, or play another CPU that stores its
 * own histogram first.
 */
static struct {
	struct vmlat_ahist h[2];
	struct vmlat_ahist **race;	/* take stores h[1] here first */
	unsigned int taken, put;
	struct vmlat_ahist *put_back;
	bool none;
} lazy;

static struct vmlat_ahist *lazy_take(void)
{
	if (lazy.none)
		return NULL;
	lazy.taken++;
	vmlat_ahist_init(&lazy.h[0]);
	if (lazy.race) {
		vmlat_ahist_init(&lazy.h[1]);
		WRITE_ONCE(*lazy.race, &lazy.h[1]);
	}
	return &lazy.h[0];
}

static void lazy_put(struct vmlat_ahist *h)
{
	lazy.put_back = h;
	lazy.put++;
}

static const struct vmlat_ahist_src lazy_src = {
	.take = lazy_take,
	.put = lazy_put,
};

static void vmlat_ahist_made_on_first_sample(struct kunit *test)
{
	struct ahist_ctx *c = test->priv;
	struct vmlat_hist_snap *s = &c->got;
	struct vmlat_ahist *p = NULL;

	memset(&lazy, 0, sizeof(lazy));
	vmlat_ahist_read(p, s);
	KUNIT_EXPECT_EQ(test, s->count, 0ULL);
	KUNIT_EXPECT_EQ(test, s->min_ns, 0ULL);

	/* none to be had: the sample is lost, nothing is stored */
	lazy.none = true;
	KUNIT_EXPECT_FALSE(test, vmlat_ahist_add_lazy(&p, &lazy_src, 5));
	KUNIT_EXPECT_NULL(test, p);

	/* made at the first sample, and only then */
	lazy.none = false;
	KUNIT_EXPECT_TRUE(test, vmlat_ahist_add_lazy(&p, &lazy_src, 5));
	KUNIT_EXPECT_TRUE(test, vmlat_ahist_add_lazy(&p, &lazy_src, 9));
	KUNIT_EXPECT_PTR_EQ(test, p, &lazy.h[0]);
	KUNIT_EXPECT_EQ(test, lazy.taken, 1U);
	vmlat_ahist_read(p, s);
	KUNIT_EXPECT_EQ(test, s->count, 2ULL);
	KUNIT_EXPECT_EQ(test, s->sum_ns, 14ULL);

	/* another CPU stored one first: its is used, ours given back */
	p = NULL;
	lazy.race = &p;
	KUNIT_EXPECT_TRUE(test, vmlat_ahist_add_lazy(&p, &lazy_src, 7));
	KUNIT_EXPECT_PTR_EQ(test, p, &lazy.h[1]);
	KUNIT_EXPECT_EQ(test, lazy.put, 1U);
	KUNIT_EXPECT_PTR_EQ(test, lazy.put_back, &lazy.h[0]);
	vmlat_ahist_read(p, s);
	KUNIT_EXPECT_EQ(test, s->count, 1ULL);
	KUNIT_EXPECT_EQ(test, s->max_ns, 7ULL);
}

static struct kunit_case vmlat_ahist_cases[] = {
	KUNIT_CASE(vmlat_ahist_empty_reads_zero),
	KUNIT_CASE(vmlat_ahist_sample_lands_in_its_bucket),
	KUNIT_CASE_PARAM(vmlat_ahist_min_max_sum, seq_gen_params),
	KUNIT_CASE(vmlat_ahist_reinit_empties),
	KUNIT_CASE(vmlat_ahist_any_order_same_result),
	KUNIT_CASE(vmlat_ahist_read_add_is_the_union),
	KUNIT_CASE(vmlat_ahist_made_on_first_sample),
	{}
};

static struct kunit_suite vmlat_ahist_suite = {
	.name = "vmlat_ahist",
	.init = ahist_test_init,
	.test_cases = vmlat_ahist_cases,
};

kunit_test_suites(&vmlat_ahist_suite);
