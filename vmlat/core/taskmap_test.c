// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/taskmap.c: the task table's map and the copy
 * that grows or shrinks it.
 *
 * The oracle is a plain array of the keys that should be in: after every
 * step of a random sequence of inserts, value changes and removals, over
 * keys made to share a few home slots (the hash is a multiplication by an
 * odd constant, so a key with any hash can be made), the map must find
 * every key with its latest value, no other key, and keep each key on an
 * unbroken run from its home. A copy into a map of another size, made a
 * few slots at a time with writers changing both maps between the steps,
 * must end with exactly the oracle's keys.
 */
#include <kunit/test.h>

#include "kunit_lcg.h"
#include "taskmap.h"

#define NKEYS	96
#define NSTEPS	6000

struct taskmap_model {
	const void *key[NKEYS];
	bool in[NKEYS];
	int idx[NKEYS];
	unsigned int n_in;
};

/* The inverse of the hash's odd multiplier mod 2^64 (Newton's method). */
static u64 taskmap_inverse(void)
{
	u64 x = VMLAT_TASK_GOLDEN_RATIO_64;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - VMLAT_TASK_GOLDEN_RATIO_64 * x;
	return x;
}

/* A key whose hash's top @bits bits are @home, the rest random. */
static const void *taskmap_key_at(u64 *state, unsigned int bits, u32 home)
{
	u64 hash = (u64)home << (64 - bits) |
		   (lcg_next(state) >> bits & ((1ULL << (64 - bits)) - 1));

	return (const void *)(unsigned long)(hash * taskmap_inverse());
}

/*
 * Keys crowded on @nhomes homes of a 2^@bits map: 0, 5, 9, the one before
 * last (its run wraps), then every 11th.
 */
static void taskmap_model_init(struct taskmap_model *md, unsigned int bits,
			       unsigned int nhomes, u64 *state)
{
	u32 home[NKEYS] = { 0, 5, 9, (1U << bits) - 2 };
	unsigned int k;

	memset(md, 0, sizeof(*md));
	for (k = 4; k < nhomes; k++)
		home[k] = (11 * k) & ((1U << bits) - 1);
	for (k = 0; k < NKEYS; k++)
		md->key[k] = taskmap_key_at(state, bits, home[k % nhomes]);
}

static struct vmlat_task_map *taskmap_new(struct kunit *test,
					  unsigned int bits, u32 limit)
{
	struct vmlat_task_map *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct vmlat_task_slot *s = kunit_kzalloc(test, sizeof(*s) << bits,
						  GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_NOT_NULL(test, s);
	vmlat_task_map_init(m, s, bits, limit);
	return m;
}

/* @m holds exactly @md's keys with their values, each on an unbroken run. */
static void taskmap_expect_model(struct kunit *test,
				 const struct vmlat_task_map *m,
				 const struct taskmap_model *md)
{
	unsigned int k, i, used = 0;

	KUNIT_EXPECT_EQ(test, m->keys, md->n_in);
	for (k = 0; k < NKEYS; k++)
		KUNIT_EXPECT_EQ_MSG(test, vmlat_task_map_probe(m, md->key[k]),
				    md->in[k] ? md->idx[k] : -1, "key %u", k);
	for (i = 0; i < vmlat_task_map_slots(m); i++) {
		const void *key = m->slot[i].key;
		u32 home, j;

		if (!key)
			continue;
		used++;
		home = vmlat_task_map_home(m, key);
		KUNIT_EXPECT_LT(test, (i - home) & m->mask,
				(u32)VMLAT_TASK_PROBES);
		for (j = home; j != i; j = (j + 1) & m->mask)
			KUNIT_EXPECT_NOT_NULL(test, m->slot[j].key);
	}
	KUNIT_EXPECT_EQ(test, used, md->n_in);
}

/* An insert of @key failed rightly: no free slot within reach of home. */
static void taskmap_expect_run_full(struct kunit *test,
				    const struct vmlat_task_map *m,
				    const void *key)
{
	u32 home = vmlat_task_map_home(m, key), i;

	for (i = 0; i < VMLAT_TASK_PROBES; i++)
		KUNIT_EXPECT_NOT_NULL(test, m->slot[(home + i) & m->mask].key);
}

/*
 * One random write to @m (and to @next, a map being copied from it, as
 * tasks.c does): insert, change a value, or remove. Return false if
 * @next lost a moved entry.
 */
static bool taskmap_step(struct kunit *test, struct vmlat_task_map *m,
			 struct vmlat_task_map *next, struct taskmap_model *md,
			 u64 *state)
{
	unsigned int k = lcg_below(state, NKEYS);
	int idx = (int)lcg_below(state, 1000000), s;
	bool ok = true;

	if (md->in[k] && lcg_below(state, 3) == 0) {
		s = vmlat_task_map_slot_of(m, md->key[k]);
		KUNIT_ASSERT_GE(test, s, 0);
		m->slot[s].idx = idx;
		s = next ? vmlat_task_map_slot_of(next, md->key[k]) : -1;
		if (s >= 0)
			next->slot[s].idx = idx;
		md->idx[k] = idx;
	} else if (md->in[k]) {
		s = vmlat_task_map_remove(m, md->key[k], next);
		KUNIT_EXPECT_NE(test, s, -ENOENT);
		ok = s == 0;
		if (next)
			vmlat_task_map_remove(next, md->key[k], NULL);
		md->in[k] = false;
		md->n_in--;
	} else {
		KUNIT_EXPECT_EQ(test, vmlat_task_map_remove(m, md->key[k],
							    next), -ENOENT);
		if (vmlat_task_map_full(m) || (next && vmlat_task_map_full(next)))
			return ok;
		/* As tasks.c: in both or in neither. */
		if (!vmlat_task_map_insert(m, md->key[k], idx)) {
			taskmap_expect_run_full(test, m, md->key[k]);
			return ok;
		}
		if (next && !vmlat_task_map_insert(next, md->key[k], idx)) {
			taskmap_expect_run_full(test, next, md->key[k]);
			KUNIT_EXPECT_EQ(test, vmlat_task_map_remove(
					m, md->key[k], next), 0);
			return ok;
		}
		md->in[k] = true;
		md->idx[k] = idx;
		md->n_in++;
	}
	return ok;
}

/* Random writes on crowded homes, the oracle checked after each. */
static void vmlat_task_map_follows_the_model(struct kunit *test)
{
	struct vmlat_task_map *m = taskmap_new(test, 8, ~0U);
	struct taskmap_model md;
	u64 state = 7;
	unsigned int step;

	taskmap_model_init(&md, 8, 4, &state);
	for (step = 0; step < NSTEPS; step++) {
		KUNIT_ASSERT_TRUE(test, taskmap_step(test, m, NULL, &md,
						     &state));
		taskmap_expect_model(test, m, &md);
		if (test->status == KUNIT_FAILURE)
			return;
	}
	KUNIT_EXPECT_GT(test, md.n_in, 20U);
}

/* Full is three quarters of the slots, or the limit if lower. */
static void vmlat_task_map_refuses_past_its_max(struct kunit *test)
{
	struct vmlat_task_map *m = taskmap_new(test, 4, ~0U);
	struct vmlat_task_map *l = taskmap_new(test, 4, 5);
	unsigned long k;

	KUNIT_EXPECT_EQ(test, m->max_keys, 12U);
	KUNIT_EXPECT_EQ(test, l->max_keys, 5U);
	for (k = 1; k <= 12; k++)
		KUNIT_EXPECT_TRUE(test, vmlat_task_map_insert(m, (void *)k, 0));
	KUNIT_EXPECT_FALSE(test, vmlat_task_map_insert(m, (void *)k, 0));
	KUNIT_EXPECT_EQ(test, vmlat_task_map_probe(m, (void *)k), -1);
	for (k = 1; k <= 5; k++)
		KUNIT_EXPECT_TRUE(test, vmlat_task_map_insert(l, (void *)k, 0));
	KUNIT_EXPECT_FALSE(test, vmlat_task_map_insert(l, (void *)k, 0));
}

/*
 * Copies back and forth between maps of 2^@a_bits and 2^@b_bits slots,
 * as the table grows and shrinks: @n slots a step, with up to @writes
 * random writes to both maps between steps. Each finished copy becomes
 * the map in use; one that ran out of room is dropped, as tasks.c does.
 */
static void taskmap_copy_under_writes(struct kunit *test, unsigned int a_bits,
				      unsigned int b_bits, u32 n,
				      unsigned int writes, u64 seed)
{
	unsigned int bits = a_bits < b_bits ? a_bits : b_bits;
	struct vmlat_task_map *cur = taskmap_new(test, a_bits, 64);
	unsigned int round, w, done = 0;
	struct taskmap_model md;
	u64 state = seed;

	taskmap_model_init(&md, bits, 12, &state);
	for (w = 0; w < 60; w++)
		KUNIT_ASSERT_TRUE(test, taskmap_step(test, cur, NULL, &md,
						     &state));
	for (round = 0; round < 40; round++) {
		struct vmlat_task_map *dst =
			taskmap_new(test, round % 2 ? a_bits : b_bits, 64);
		bool ok = true;
		u32 from = 0;

		while (ok && from < vmlat_task_map_slots(cur)) {
			ok = vmlat_task_map_copy(dst, cur, &from, n);
			for (w = lcg_below(&state, writes + 1); ok && w; w--)
				ok = taskmap_step(test, cur, dst, &md, &state);
		}
		taskmap_expect_model(test, cur, &md);
		if (ok) {
			taskmap_expect_model(test, dst, &md);
			cur = dst;
			done++;
		}
		if (test->status == KUNIT_FAILURE)
			return;
	}
	KUNIT_EXPECT_GT(test, done, 30U);
}

static void vmlat_task_map_grows_under_writes(struct kunit *test)
{
	taskmap_copy_under_writes(test, 7, 8, 3, 4, 11);
	taskmap_copy_under_writes(test, 7, 9, 1, 2, 12);
}

static void vmlat_task_map_shrinks_under_writes(struct kunit *test)
{
	taskmap_copy_under_writes(test, 8, 7, 5, 3, 13);
	taskmap_copy_under_writes(test, 9, 7, 2, 8, 14);
}

/* A map too small for the keys: the copy says it cannot finish. */
static void vmlat_task_map_copy_fails_when_full(struct kunit *test)
{
	struct vmlat_task_map *src = taskmap_new(test, 6, ~0U);
	struct vmlat_task_map *dst = taskmap_new(test, 3, ~0U);
	unsigned long k;
	bool ok = true;
	u32 from = 0;

	for (k = 1; k <= 10; k++)
		KUNIT_ASSERT_TRUE(test, vmlat_task_map_insert(src, (void *)k,
							      (int)k));
	while (ok && from < vmlat_task_map_slots(src))
		ok = vmlat_task_map_copy(dst, src, &from, 8);
	KUNIT_EXPECT_FALSE(test, ok);
	KUNIT_EXPECT_EQ(test, dst->keys, dst->max_keys);
}

static struct kunit_case vmlat_task_map_cases[] = {
	KUNIT_CASE(vmlat_task_map_follows_the_model),
	KUNIT_CASE(vmlat_task_map_refuses_past_its_max),
	KUNIT_CASE(vmlat_task_map_grows_under_writes),
	KUNIT_CASE(vmlat_task_map_shrinks_under_writes),
	KUNIT_CASE(vmlat_task_map_copy_fails_when_full),
	{}
};

static struct kunit_suite vmlat_task_map_suite = {
	.name = "vmlat_task_map",
	.test_cases = vmlat_task_map_cases,
};

kunit_test_suites(&vmlat_task_map_suite);
