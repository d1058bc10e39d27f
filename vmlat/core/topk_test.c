// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/topk.c: the space-saving top-k table.
 *
 * A model beside the table knows what every key was charged in all, and
 * after every charge of long adversarial sequences the table is held to
 * what topk.h promises: the values and "other" add up to the total, so do
 * the weights, a slot's value is at most its key's total and its weight
 * at least that, a key without a slot was charged at most the least
 * weight, and so any key with more than 1/VMLAT_TOPK_SLOTS of the total
 * has a slot, and vmlat_topk_find_in() finds a key where its slot is, or
 * nowhere. Their messages say "<sequence> #<step>". Small hand-worked
 * cases pin down which slot a newcomer takes, what it inherits, "fresh"
 * and the ranking.
 */
#include <kunit/test.h>

#include "kunit_lcg.h"
#include "topk.h"

/* The slot of @key in @t, or -1. */
static int find_slot(const struct vmlat_topk *t, u64 key)
{
	int i;

	for (i = 0; i < VMLAT_TOPK_SLOTS; i++)
		if (t->slot[i].hits && t->slot[i].key == key)
			return i;
	return -1;
}

/*
 * The model: keys are numbered 0..@nr_keys - 1. The first NR_HEAVY are
 * the keys U64_MAX, U64_MAX - 1, ...; the others 0, 1, 2, ...: both ends
 * of the range are keys.
 */
#define NR_HEAVY	4
#define MAX_KEYS	4096

struct model {
	struct vmlat_topk t;
	u64 total;
	unsigned int nr_keys;	/* ids below this were charged */
	unsigned int step;
	const char *desc;
	u64 charged[MAX_KEYS];	/* by id */
	bool in_table[MAX_KEYS];	/* by id, kept from the table */
};

static u64 id_key(unsigned int id)
{
	return id < NR_HEAVY ? U64_MAX - id : (u64)(id - NR_HEAVY);
}

static unsigned int key_id(u64 key)
{
	return key > U64_MAX - NR_HEAVY ? (unsigned int)(U64_MAX - key) :
					  (unsigned int)key + NR_HEAVY;
}

/* Every promise of topk.h, checked after step @m->step. */
static void check_promises(struct kunit *test, struct model *m)
{
	const struct vmlat_topk *t = &m->t;
	u64 values = t->other, weights = 0, least = U64_MAX;
	unsigned int i, used = 0;

	for (i = 0; i < VMLAT_TOPK_SLOTS; i++) {
		const struct vmlat_topk_slot *s = &t->slot[i];
		unsigned int id = key_id(s->key);

		if (!s->hits)
			continue;
		used++;
		values += s->value;
		weights += s->weight;
		if (s->weight < least)
			least = s->weight;
		KUNIT_ASSERT_LT_MSG(test, id, m->nr_keys,
				    "%s #%u: slot %u: key %llu never charged",
				    m->desc, m->step, i,
				    (unsigned long long)s->key);
		KUNIT_ASSERT_LE_MSG(test, s->value, m->charged[id],
				    "%s #%u: slot %u: value > key's total",
				    m->desc, m->step, i);
		KUNIT_ASSERT_GE_MSG(test, s->weight, m->charged[id],
				    "%s #%u: slot %u: weight < key's total",
				    m->desc, m->step, i);
		KUNIT_ASSERT_EQ_MSG(test, vmlat_topk_find_in(t->slot,
							     VMLAT_TOPK_SLOTS,
							     s->key),
				    find_slot(t, s->key),
				    "%s #%u: slot %u: found elsewhere",
				    m->desc, m->step, i);
	}
	KUNIT_ASSERT_EQ_MSG(test, values, m->total,
			    "%s #%u: other + values != total charged",
			    m->desc, m->step);
	KUNIT_ASSERT_EQ_MSG(test, weights, m->total,
			    "%s #%u: weights != total charged",
			    m->desc, m->step);
	if (used < VMLAT_TOPK_SLOTS)
		least = 0;	/* never evicted: no key may lack a slot */

	for (i = 0; i < m->nr_keys; i++) {
		if (m->in_table[i])
			continue;
		KUNIT_ASSERT_LE_MSG(test, m->charged[i], least,
				    "%s #%u: key %llu: no slot, > least weight",
				    m->desc, m->step,
				    (unsigned long long)id_key(i));
		/* The guarantee: more than 1/VMLAT_TOPK_SLOTS keeps a slot. */
		KUNIT_ASSERT_LE_MSG(test, m->charged[i] * VMLAT_TOPK_SLOTS,
				    m->total,
				    "%s #%u: key %llu: %llu of %llu, no slot",
				    m->desc, m->step,
				    (unsigned long long)id_key(i),
				    (unsigned long long)m->charged[i],
				    (unsigned long long)m->total);
		KUNIT_ASSERT_EQ_MSG(test, vmlat_topk_find_in(t->slot,
							     VMLAT_TOPK_SLOTS,
							     id_key(i)), -1,
				    "%s #%u: key %llu: no slot, found one",
				    m->desc, m->step,
				    (unsigned long long)id_key(i));
	}
}

/* Charge @value to key @id, check what vmlat_topk_add() says, then all. */
static void charge(struct kunit *test, struct model *m, unsigned int id,
		   u64 value)
{
	struct vmlat_topk_slot before[VMLAT_TOPK_SLOTS];
	u64 key = id_key(id);
	int had = find_slot(&m->t, key);
	unsigned int i, idx;
	bool fresh = had >= 0;	/* the opposite of the truth */

	KUNIT_ASSERT_LT_MSG(test, id, (unsigned int)MAX_KEYS,
			    "%s #%u: the model has room", m->desc,
			    m->step);
	memcpy(before, m->t.slot, sizeof(before));
	idx = vmlat_topk_add(&m->t, key, value, &fresh);
	KUNIT_ASSERT_LT_MSG(test, idx, (unsigned int)VMLAT_TOPK_SLOTS,
			    "%s #%u: index of key %llu", m->desc, m->step,
			    (unsigned long long)key);
	KUNIT_ASSERT_EQ_MSG(test, m->t.slot[idx].key, key,
			    "%s #%u: the returned slot %u", m->desc,
			    m->step, idx);
	KUNIT_ASSERT_EQ_MSG(test, fresh, had < 0,
			    "%s #%u: fresh for key %llu (slot %d before)",
			    m->desc, m->step, (unsigned long long)key, had);
	if (had >= 0) {
		KUNIT_ASSERT_EQ_MSG(test, idx, (unsigned int)had,
				    "%s #%u: key %llu moved", m->desc,
				    m->step, (unsigned long long)key);
		KUNIT_ASSERT_EQ_MSG(test, m->t.slot[idx].value,
				    before[idx].value + value,
				    "%s #%u: value of key %llu", m->desc,
				    m->step, (unsigned long long)key);
	} else {
		KUNIT_ASSERT_EQ_MSG(test, m->t.slot[idx].value, value,
				    "%s #%u: fresh slot kept its old value",
				    m->desc, m->step);
	}
	KUNIT_ASSERT_EQ_MSG(test, m->t.slot[idx].hits,
			    had >= 0 ? before[idx].hits + 1 : 1,
			    "%s #%u: hits of key %llu", m->desc, m->step,
			    (unsigned long long)key);
	/* No other slot changed. */
	for (i = 0; i < VMLAT_TOPK_SLOTS; i++)
		if (i != idx)
			KUNIT_ASSERT_TRUE_MSG(test,
					      !memcmp(&before[i], &m->t.slot[i],
						      sizeof(before[i])),
					      "%s #%u: slot %u changed",
					      m->desc, m->step, i);

	m->charged[id] += value;
	m->total += value;
	if (id >= m->nr_keys)
		m->nr_keys = id + 1;
	for (i = 0; i < VMLAT_TOPK_SLOTS; i++)
		if (before[i].hits)
			m->in_table[key_id(before[i].key)] = false;
	for (i = 0; i < VMLAT_TOPK_SLOTS; i++)
		if (m->t.slot[i].hits)
			m->in_table[key_id(m->t.slot[i].key)] = true;
	check_promises(test, m);
	m->step++;
}

static struct model *model_new(struct kunit *test, const char *desc)
{
	struct model *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL_MSG(test, m, "%s: model", desc);
	vmlat_topk_init(&m->t);
	m->desc = desc;
	return m;
}

/* With at most VMLAT_TOPK_SLOTS keys nothing is evicted: all exact. */
static void vmlat_topk_few_keys_exact(struct kunit *test)
{
	static const unsigned int nr_keys[] = { 1, 5, 7, VMLAT_TOPK_SLOTS };
	unsigned int k, n, id;
	u64 hits[VMLAT_TOPK_SLOTS], seed = 7;

	for (k = 0; k < ARRAY_SIZE(nr_keys); k++) {
		struct model *m = model_new(test, "few keys");

		memset(hits, 0, sizeof(hits));
		for (n = 0; n < 2000; n++) {
			id = lcg_below(&seed, nr_keys[k]);
			charge(test, m, id, lcg_below(&seed, 1000));
			hits[id]++;
		}
		KUNIT_EXPECT_EQ_MSG(test, m->t.other, 0ULL,
				    "%u keys: nothing evicted", nr_keys[k]);
		for (id = 0; id < nr_keys[k]; id++) {
			int s = find_slot(&m->t, id_key(id));

			KUNIT_ASSERT_GE_MSG(test, s, 0, "%u keys: key id %u",
					    nr_keys[k], id);
			KUNIT_EXPECT_EQ_MSG(test, m->t.slot[s].value,
					    m->charged[id],
					    "%u keys: value of key id %u",
					    nr_keys[k], id);
			KUNIT_EXPECT_EQ_MSG(test, m->t.slot[s].weight,
					    m->charged[id],
					    "%u keys: weight of key id %u",
					    nr_keys[k], id);
			KUNIT_EXPECT_EQ_MSG(test, m->t.slot[s].hits, hits[id],
					    "%u keys: hits of key id %u",
					    nr_keys[k], id);
		}
	}
}

/*
 * Many small one-off keys, each charged once, between a few heavy keys
 * that are charged less per slice than a one-off: a newcomer must not be
 * what the next one-off evicts, or a heavy key never builds up.
 */
static void vmlat_topk_heavy_among_one_offs(struct kunit *test)
{
	struct model *m = model_new(test, "heavy among one-offs");
	unsigned int n, next = NR_HEAVY;
	u64 seed = 1;

	for (n = 0; n < 3000; n++) {
		u64 r = lcg_below(&seed, 100);

		if (r < 20)		/* about 1/5 of the total */
			charge(test, m, 0, 10 + lcg_below(&seed, 5));
		else if (r < 35)	/* about 1/7 of the total */
			charge(test, m, 1, 5 + lcg_below(&seed, 10));
		else
			charge(test, m, next++, 1 + lcg_below(&seed, 30));
	}
	KUNIT_EXPECT_GE_MSG(test, find_slot(&m->t, id_key(0)), 0,
			    "the heaviest key has a slot at the end");
}

/*
 * Heavy keys that take turns: in each round one of them is charged
 * every other slice, one-offs in between. While a heavy key waits for
 * its turn, a scheme whose weights did not keep growing would let the
 * one-offs and the other heavy keys push it out.
 */
static void vmlat_topk_heavy_keys_take_turns(struct kunit *test)
{
	struct model *m = model_new(test, "heavy keys take turns");
	unsigned int round, n, next = NR_HEAVY;
	u64 seed = 2;

	for (round = 0; round < 40; round++) {
		unsigned int heavy = round % 3;

		for (n = 0; n < 100; n++) {
			if (n % 2)
				charge(test, m, heavy,
				       15 + lcg_below(&seed, 10));
			else
				charge(test, m, next++,
				       1 + lcg_below(&seed, 40));
		}
	}
	for (n = 0; n < 3; n++)
		KUNIT_EXPECT_GE_MSG(test, find_slot(&m->t, id_key(n)), 0,
				    "heavy key %u has a slot at the end", n);
}

/* Random keys of random weights: the promises hold whatever comes. */
static void vmlat_topk_random_keys(struct kunit *test)
{
	struct model *m = model_new(test, "random keys");
	unsigned int n;
	u64 seed = 3;

	for (n = 0; n < 4000; n++) {
		unsigned int id = lcg_below(&seed, 64);
		u64 value = lcg_below(&seed, 2) ? lcg_below(&seed, 100) :
			    lcg_below(&seed, 100000);

		/* Low ids are drawn as often as any: skew towards them. */
		if (lcg_below(&seed, 4) == 0)
			id %= 3;
		charge(test, m, id, value);
	}
}

/*
 * Free slots in index order; when full, the first slot of strictly least
 * weight is taken over, its value goes to "other" and its weight is
 * inherited.
 */
static void vmlat_topk_replaces_first_least_weight(struct kunit *test)
{
	static const u64 weights[VMLAT_TOPK_SLOTS] = {
		50, 30, 32, 30, 60, 70, 80, 90,
	};
	/* Newcomers, each of value 1, and the slot each must take over. */
	static const struct {
		u64 key;
		unsigned int slot;
		u64 inherit;
	} nc[] = {
		{ 99, 1, 30 },	/* 30 at 1 and 3: the first */
		{ 98, 3, 30 },	/* 3 still has 30, 1 has 31 now */
		{ 97, 1, 31 },	/* 31 at 1 and 3: the first */
		{ 96, 3, 31 },
		{ 95, 1, 32 },	/* 32 at 1, 2 and 3 */
		{ 94, 2, 32 },
		{ 93, 3, 32 },
		{ 92, 1, 33 },	/* 33 at 1, 2 and 3 */
	};
	struct vmlat_topk t;
	unsigned int i, idx;
	u64 other = 0, prev_value;
	bool fresh;

	vmlat_topk_init(&t);
	for (i = 0; i < VMLAT_TOPK_SLOTS; i++) {
		fresh = false;
		idx = vmlat_topk_add(&t, 10 + i, weights[i], &fresh);
		KUNIT_EXPECT_EQ_MSG(test, idx, i, "key %u takes free slot %u",
				    10 + i, i);
		KUNIT_EXPECT_TRUE_MSG(test, fresh, "key %u is fresh", 10 + i);
	}
	for (i = 0; i < ARRAY_SIZE(nc); i++) {
		unsigned int want = nc[i].slot;

		prev_value = t.slot[want].value;
		fresh = false;
		idx = vmlat_topk_add(&t, nc[i].key, 1, &fresh);
		other += prev_value;
		KUNIT_EXPECT_EQ_MSG(test, idx, want, "newcomer %llu",
				    (unsigned long long)nc[i].key);
		KUNIT_EXPECT_TRUE_MSG(test, fresh, "newcomer %llu is fresh",
				      (unsigned long long)nc[i].key);
		KUNIT_EXPECT_EQ_MSG(test, t.slot[want].weight,
				    nc[i].inherit + 1,
				    "newcomer %llu inherits the weight",
				    (unsigned long long)nc[i].key);
		KUNIT_EXPECT_EQ_MSG(test, t.slot[want].value, 1ULL,
				    "newcomer %llu has only its own value",
				    (unsigned long long)nc[i].key);
		KUNIT_EXPECT_EQ_MSG(test, t.slot[want].hits, 1ULL,
				    "newcomer %llu: one hit",
				    (unsigned long long)nc[i].key);
		KUNIT_EXPECT_EQ_MSG(test, t.other, other,
				    "newcomer %llu: evicted value to other",
				    (unsigned long long)nc[i].key);
	}
}

/* An evicted key that comes back: inherited weight, value from anew. */
static void vmlat_topk_evicted_key_comes_back(struct kunit *test)
{
	struct vmlat_topk t;
	unsigned int i, idx;
	bool fresh;

	vmlat_topk_init(&t);
	for (i = 0; i < VMLAT_TOPK_SLOTS; i++)	/* key i: 10 * (i + 1) */
		vmlat_topk_add(&t, i, 10 * (i + 1), &fresh);

	idx = vmlat_topk_add(&t, 100, 5, &fresh);	/* evicts key 0 */
	KUNIT_EXPECT_EQ_MSG(test, idx, 0U, "key 100 takes key 0's slot");
	KUNIT_EXPECT_EQ_MSG(test, t.other, 10ULL, "key 0's 10 in other");

	/* Key 0 again: the least weight is key 100's 15. */
	fresh = false;
	idx = vmlat_topk_add(&t, 0, 3, &fresh);
	KUNIT_EXPECT_EQ_MSG(test, idx, 0U, "key 0 takes key 100's slot");
	KUNIT_EXPECT_TRUE_MSG(test, fresh, "key 0 is fresh again");
	KUNIT_EXPECT_EQ_MSG(test, t.slot[0].value, 3ULL,
			    "key 0 counts only what it got since (not 13)");
	KUNIT_EXPECT_EQ_MSG(test, t.slot[0].weight, 18ULL,
			    "key 0 inherits key 100's weight 15");
	KUNIT_EXPECT_EQ_MSG(test, t.slot[0].hits, 1ULL,
			    "key 0 hits count anew");
	KUNIT_EXPECT_EQ_MSG(test, t.other, 15ULL, "10 of key 0, 5 of key 100");

	fresh = true;
	idx = vmlat_topk_add(&t, 0, 4, &fresh);
	KUNIT_EXPECT_EQ_MSG(test, idx, 0U, "key 0 keeps its slot");
	KUNIT_EXPECT_FALSE_MSG(test, fresh, "key 0 is not fresh the 2nd time");
	KUNIT_EXPECT_EQ_MSG(test, t.slot[0].value, 7ULL, "key 0: 3 + 4");
	KUNIT_EXPECT_EQ_MSG(test, t.slot[0].weight, 22ULL, "key 0: 18 + 4");
}

/* A charge of 0 still takes a slot and counts a hit. */
static void vmlat_topk_zero_value_counts(struct kunit *test)
{
	struct vmlat_topk t;
	u8 idx[VMLAT_TOPK_SLOTS];
	bool fresh = false;

	vmlat_topk_init(&t);
	KUNIT_EXPECT_EQ_MSG(test, vmlat_topk_rank(&t, idx), 0U,
			    "empty table ranks nothing");
	KUNIT_EXPECT_EQ_MSG(test, vmlat_topk_add(&t, 0, 0, &fresh), 0U,
			    "key 0 of value 0 takes slot 0");
	KUNIT_EXPECT_TRUE_MSG(test, fresh, "first charge of 0 is fresh");
	KUNIT_EXPECT_EQ_MSG(test, t.slot[0].hits, 1ULL, "first charge of 0");
	KUNIT_EXPECT_EQ_MSG(test, vmlat_topk_add(&t, 0, 0, &fresh), 0U,
			    "key 0 keeps slot 0");
	KUNIT_EXPECT_FALSE_MSG(test, fresh, "second charge of 0 is not fresh");
	KUNIT_EXPECT_EQ_MSG(test, t.slot[0].hits, 2ULL, "second charge of 0");
	KUNIT_EXPECT_EQ_MSG(test, t.slot[0].value, 0ULL, "value stays 0");
	KUNIT_EXPECT_EQ_MSG(test, vmlat_topk_rank(&t, idx), 1U,
			    "a slot of value 0 is ranked");
}

struct rank_case {
	const char *desc;
	u64 values[VMLAT_TOPK_SLOTS];
	unsigned int nr;		/* keys 0..nr-1 get values[] */
	u8 want[VMLAT_TOPK_SLOTS];
};

static const struct rank_case rank_cases[] = {
	{ "one", { 5 }, 1, { 0 } },
	{ "three descending", { 9, 5, 1 }, 3, { 0, 1, 2 } },
	{ "three ascending", { 1, 5, 9 }, 3, { 2, 1, 0 } },
	{ "full, ties by index", { 5, 9, 5, 0, 9, 1, 7, 5 }, 8,
	  { 1, 4, 6, 0, 2, 7, 5, 3 } },
	{ "all equal", { 4, 4, 4, 4, 4, 4, 4, 4 }, 8,
	  { 0, 1, 2, 3, 4, 5, 6, 7 } },
	{ "U64_MAX and 0", { 0, U64_MAX, 1 }, 3, { 1, 2, 0 } },
};

static void rank_case_desc(const struct rank_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rank, rank_cases, rank_case_desc);

static void vmlat_topk_rank_by_value(struct kunit *test)
{
	const struct rank_case *c = test->param_value;
	struct vmlat_topk t;
	u8 idx[VMLAT_TOPK_SLOTS];
	unsigned int i, n;
	bool fresh;

	vmlat_topk_init(&t);
	for (i = 0; i < c->nr; i++)
		vmlat_topk_add(&t, 1000 + i, c->values[i], &fresh);
	n = vmlat_topk_rank(&t, idx);
	KUNIT_ASSERT_EQ_MSG(test, n, c->nr, "%s: used slots", c->desc);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, idx[i], c->want[i], "%s: rank %u",
				    c->desc, i);
}

static struct kunit_case vmlat_topk_cases[] = {
	KUNIT_CASE(vmlat_topk_few_keys_exact),
	KUNIT_CASE(vmlat_topk_heavy_among_one_offs),
	KUNIT_CASE(vmlat_topk_heavy_keys_take_turns),
	KUNIT_CASE(vmlat_topk_random_keys),
	KUNIT_CASE(vmlat_topk_replaces_first_least_weight),
	KUNIT_CASE(vmlat_topk_evicted_key_comes_back),
	KUNIT_CASE(vmlat_topk_zero_value_counts),
	KUNIT_CASE_PARAM(vmlat_topk_rank_by_value, rank_gen_params),
	{}
};

static struct kunit_suite vmlat_topk_suite = {
	.name = "vmlat_topk",
	.test_cases = vmlat_topk_cases,
};

kunit_test_suites(&vmlat_topk_suite);
