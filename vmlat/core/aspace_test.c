// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/aspace.c: guest address spaces.
 *
 * The keys: the PCID, noflush and LAM bits of CR3 do not change the key,
 * any address bit does, and KPTI's two halves are one key only when asked.
 *
 * The attribution: a vCPU driven through the real state machine (state.c)
 * by long random event sequences, with a random address space read at
 * each exit and the cursor moved there as the glue does. A model beside
 * it counts every interval it makes up to the key aspace.h says it
 * belongs to (the guest interval ending at an exit and the host time
 * after it: the key read at that exit). After each sequence the rows
 * (with the stretch in progress) are the model's exactly while nothing
 * was evicted, never more than it; rows, "other" and the stretch in
 * progress add up to the vCPU's guest, exit, preempted and wait times;
 * a key with more than 1/VMLAT_AS_SLOTS of the time has a row and one
 * without a row had at most the least weight. Messages name the seed.
 *
 * The names (what a guest says of its roots): a call from another ring
 * than 0 gets no reply and changes nothing; each field out of range is
 * malformed and sets no name; the rate is the token bucket's, to the
 * call; any number of roots leaves at most VMLAT_AS_NAMES names, and never
 * drops the name of a row; a new process on a root with time ends its row
 * (its time and name kept apart under an ended key), and names never
 * change a row's times.
 */
#include <kunit/test.h>

#include "aspace.h"
#include "kunit_lcg.h"
#include "state.h"
#include "vmlat_hypercall.h"

static void vmlat_as_key_masks_flags(struct kunit *test)
{
	u64 pgd = 0x12344000ULL;	/* 8 KiB aligned, bit 13 clear */

	/* PCID (bits 0..11), LAM (61, 62) and noflush (63) */
	KUNIT_EXPECT_EQ(test, vmlat_as_key(pgd | 0xfff, true), pgd);
	KUNIT_EXPECT_EQ(test, vmlat_as_key(pgd | 7ULL << 61, true), pgd);
	KUNIT_EXPECT_EQ(test, vmlat_as_key(pgd | 0x801 | 1ULL << 63, false),
			pgd);
	/* KPTI's user half (+4 KiB, user PCID bit 11) folds when asked */
	KUNIT_EXPECT_EQ(test, vmlat_as_key(pgd | 0x1000 | 0x800 | 5, true),
			vmlat_as_key(pgd | 5, true));
	KUNIT_EXPECT_NE(test, vmlat_as_key(pgd | 0x1000, false),
			vmlat_as_key(pgd, false));
	/* any other address bit is another address space */
	KUNIT_EXPECT_NE(test, vmlat_as_key(pgd | 0x2000, true),
			vmlat_as_key(pgd, true));
	KUNIT_EXPECT_NE(test, vmlat_as_key(pgd | 1ULL << 51, true),
			vmlat_as_key(pgd, true));
	/* no CR3 is the cursor's "none" */
	KUNIT_EXPECT_NE(test, vmlat_as_key(~0ULL, false), VMLAT_AS_NONE);
	KUNIT_EXPECT_NE(test, vmlat_as_key(~0ULL, true), VMLAT_AS_NONE);
}

static void vmlat_as_cursor_stretches(struct kunit *test)
{
	struct vmlat_as_times now = { .ns = { 10, 20, 30, 40 } };
	struct vmlat_as_stretch s;
	struct vmlat_as_cursor c;

	vmlat_as_cursor_init(&c);
	KUNIT_EXPECT_FALSE(test, vmlat_as_cursor_move(&c, 0x1000, &now, &s));
	KUNIT_EXPECT_EQ(test, c.key, 0x1000ULL);
	now.ns[VMLAT_AS_GUEST] += 5;
	KUNIT_EXPECT_FALSE(test, vmlat_as_cursor_move(&c, 0x1000, &now, &s));
	c.user = true;
	now.ns[VMLAT_AS_EXIT] += 7;
	now.ns[VMLAT_AS_WAIT] += 1;
	KUNIT_ASSERT_TRUE(test, vmlat_as_cursor_move(&c, 0x4000, &now, &s));
	KUNIT_EXPECT_EQ(test, s.key, 0x1000ULL);
	KUNIT_EXPECT_TRUE(test, s.user);
	KUNIT_EXPECT_EQ(test, s.t.ns[VMLAT_AS_GUEST], 5ULL);
	KUNIT_EXPECT_EQ(test, s.t.ns[VMLAT_AS_EXIT], 7ULL);
	KUNIT_EXPECT_EQ(test, s.t.ns[VMLAT_AS_PREEMPTED], 0ULL);
	KUNIT_EXPECT_EQ(test, s.t.ns[VMLAT_AS_WAIT], 1ULL);
	KUNIT_EXPECT_FALSE(test, c.user);
	/* key 0 (CR3 0: paging off) is a key like any other */
	KUNIT_EXPECT_TRUE(test, vmlat_as_cursor_move(&c, 0, &now, &s));
	KUNIT_EXPECT_EQ(test, s.key, 0x4000ULL);
	KUNIT_EXPECT_EQ(test, vmlat_as_total(&s.t), 0ULL);
	/* after a reset (times back to 0) a stretch has no negative time */
	memset(&now, 0, sizeof(now));
	vmlat_as_cursor_stretch(&c, &now, &s);
	KUNIT_EXPECT_EQ(test, vmlat_as_total(&s.t), 0ULL);
}

/* ---- the attribution, against a model ------------------------------ */

#define MAX_KEYS	64
/* Exit reasons: slots 0..MAX_REASONS-1, and undecoded (slot -1) last. */
#define MAX_REASONS	12

struct as_model {
	struct vmlat_vcpu_acct a;
	struct vmlat_as_table t;
	u64 now;
	bool keyed;			/* the cursor has a key */
	unsigned int last;		/* the key of the last step */
	unsigned int nr_reasons;	/* reasons the exits draw from */
	u64 step_exit;			/* the step's exit handling */
	u64 done_mismatch;		/* completed exits not of that time */
	struct vmlat_as_times first;	/* the times at the first key */
	struct vmlat_as_times want[MAX_KEYS];	/* per key id, exact */
	u64 want_slices[MAX_KEYS];
	/* per key id and reason (undecoded at MAX_REASONS): ns and count */
	u64 want_rns[MAX_KEYS][MAX_REASONS + 1];
	u64 want_rcount[MAX_KEYS][MAX_REASONS + 1];
	bool user[MAX_KEYS];
};

static u64 key_of(unsigned int id)
{
	return (u64)(id + 1) << 13;
}

static unsigned int id_of(u64 key)
{
	return (unsigned int)(key >> 13) - 1;
}

/* What the glue does at a kvm_exit, before the machine accounts it. */
static void model_exit(struct as_model *m, unsigned int id, bool user)
{
	struct vmlat_as_stretch s;
	struct vmlat_as_times now;

	vmlat_acct_as_times(m->a.time_ns, &now);
	if (!m->keyed) {
		m->first = now;
		m->keyed = true;
	}
	if (vmlat_as_cursor_move(&m->a.as, key_of(id), &now, &s))
		vmlat_as_table_add(&m->t, &s);
	if (user) {
		m->a.as.user = true;
		m->user[id] = true;
	}
}

/* @ns more of time @i for the key @id, as the model counts it. */
static u64 model_add(struct as_model *m, unsigned int id, int i, u64 ns)
{
	if (i >= 0)
		m->want[id].ns[i] += ns;
	if (i == VMLAT_AS_EXIT)
		m->step_exit += ns;
	m->now += ns;
	return m->now;
}

/*
 * One random step: the guest runs, exits (the address space read there is
 * @id's), and the exit is handled (maybe with a trip to the VMM) or the
 * scheduler takes the vCPU off and back before the next entry. The model
 * counts each interval to @id directly, from the times it makes up.
 */
static void model_step(struct as_model *m, u64 *rng, unsigned int nr_keys,
		       unsigned int heavy)
{
	struct vmlat_done done;
	unsigned int id;
	int slot;
	u64 t;

	/* the heavy key runs most of the time */
	id = lcg_below(rng, 4) ? heavy : lcg_below(rng, nr_keys);
	/* its exit's reason, undecoded (-1) now and then */
	slot = (int)lcg_below(rng, m->nr_reasons + 1) - 1;
	m->step_exit = 0;
	if (m->keyed && id != m->last)
		m->want_slices[m->last]++;
	m->last = id;
	t = model_add(m, id, VMLAT_AS_GUEST, 1 + lcg_below(rng, 1000));
	model_exit(m, id, lcg_below(rng, 3) == 0);
	vmlat_acct_event(&m->a, VMLAT_EV_EXIT, false, t, &done);
	t = model_add(m, id, VMLAT_AS_EXIT, 1 + lcg_below(rng, 300));
	switch (lcg_below(rng, 4)) {
	case 0:
		vmlat_acct_event(&m->a, VMLAT_EV_USER_EXIT, false, t, &done);
		t = model_add(m, id, VMLAT_AS_EXIT, 1 + lcg_below(rng, 300));
		break;
	case 1:
		vmlat_acct_event(&m->a, VMLAT_EV_OUT_RUNNABLE, false, t,
				 &done);
		t = model_add(m, id, VMLAT_AS_PREEMPTED,
			      1 + lcg_below(rng, 5000));
		vmlat_acct_event(&m->a, VMLAT_EV_IN, false, t, &done);
		t = model_add(m, id, VMLAT_AS_EXIT, 1 + lcg_below(rng, 100));
		break;
	case 2:
		/* blocked: the guest's own time, no address space's */
		vmlat_acct_event(&m->a, VMLAT_EV_OUT_SLEEP, false, t, &done);
		t = model_add(m, id, -1, 1 + lcg_below(rng, 5000));
		vmlat_acct_event(&m->a, VMLAT_EV_WAKEUP, false, t, &done);
		t = model_add(m, id, VMLAT_AS_WAIT, 1 + lcg_below(rng, 2000));
		vmlat_acct_event(&m->a, VMLAT_EV_IN, false, t, &done);
		t = model_add(m, id, VMLAT_AS_EXIT, 1 + lcg_below(rng, 100));
		break;
	default:
		break;
	}
	vmlat_acct_event(&m->a, VMLAT_EV_ENTRY, false, t, &done);
	/* what the glue does with the exit it completed */
	if (done.kind != VMLAT_DONE_EXIT || done.ns != m->step_exit) {
		m->done_mismatch++;
		return;
	}
	vmlat_as_cursor_exit(&m->a.as, slot, done.ns);
	slot = slot < 0 ? MAX_REASONS : slot;
	m->want_rns[id][slot] += m->step_exit;
	m->want_rcount[id][slot]++;
}

/*
 * Row @r's (key @id's) reasons, with @s's if it is the stretch in
 * progress of that key (as a reader merges them), against the model: the
 * entries and "other" add up to the decoded exits' time and count; each
 * entry at most the model's, no reason twice; all of them exactly when
 * there is room for every reason and nothing was evicted.
 */
static void check_reasons(struct kunit *test, struct as_model *m,
			  unsigned int seed, int r, unsigned int id,
			  const struct vmlat_as_stretch *s)
{
	struct vmlat_as_reasons got = m->t.row[r].reasons;
	bool exact = !m->t.evicted && m->nr_reasons <= VMLAT_AS_REASONS;
	u64 decoded = 0, decoded_n = 0, listed = 0, listed_n = 0;
	bool in[MAX_REASONS] = {};
	unsigned int k;
	int slot;

	if (s->key == key_of(id))
		vmlat_as_reasons_merge(&got, &s->reasons);
	for (k = 0; k < m->nr_reasons; k++) {
		decoded += m->want_rns[id][k];
		decoded_n += m->want_rcount[id][k];
	}
	for (k = 0; k < VMLAT_AS_REASONS; k++) {
		if (!got.slot[k])
			continue;
		slot = got.slot[k] - 1;
		KUNIT_ASSERT_LT_MSG(test, slot, (int)m->nr_reasons,
				    "%u: key %u reason %d never made", seed,
				    id, slot);
		KUNIT_EXPECT_FALSE_MSG(test, in[slot], "%u: key %u reason %d twice",
				       seed, id, slot);
		in[slot] = true;
		KUNIT_EXPECT_LE_MSG(test, got.ns[k], m->want_rns[id][slot],
				    "%u: key %u reason %d time", seed, id,
				    slot);
		KUNIT_EXPECT_LE_MSG(test, got.count[k],
				    m->want_rcount[id][slot],
				    "%u: key %u reason %d count", seed, id,
				    slot);
		if (exact) {
			KUNIT_EXPECT_EQ_MSG(test, got.ns[k],
					    m->want_rns[id][slot],
					    "%u: key %u reason %d time exact",
					    seed, id, slot);
			KUNIT_EXPECT_EQ_MSG(test, got.count[k],
					    m->want_rcount[id][slot],
					    "%u: key %u reason %d count exact",
					    seed, id, slot);
		}
		listed += got.ns[k];
		listed_n += got.count[k];
	}
	/* all of the key's exits, or since its row took its slot */
	KUNIT_EXPECT_LE_MSG(test, listed + got.other_ns, decoded,
			    "%u: key %u reasons and other: the time", seed,
			    id);
	if (!m->t.evicted) {
		KUNIT_EXPECT_EQ_MSG(test, listed + got.other_ns, decoded,
				    "%u: key %u reasons and other: all the time",
				    seed, id);
		KUNIT_EXPECT_EQ_MSG(test, listed_n + got.other_count,
				    decoded_n,
				    "%u: key %u reasons and other: all the exits",
				    seed, id);
	}
	if (!exact)
		return;
	KUNIT_EXPECT_EQ_MSG(test, got.other_ns, 0ULL,
			    "%u: key %u nothing in other", seed, id);
	for (k = 0; k < m->nr_reasons; k++)
		KUNIT_EXPECT_EQ_MSG(test, in[k], !!m->want_rcount[id][k],
				    "%u: key %u reason %u listed", seed, id, k);
}

/* The time a list of reasons holds, its "other" included. */
static u64 reasons_sum(const struct vmlat_as_reasons *r)
{
	u64 sum = r->other_ns;
	int i;

	for (i = 0; i < VMLAT_AS_REASONS; i++)
		sum += r->ns[i];
	return sum;
}

static u64 rows_reasons(const struct vmlat_as_table *t)
{
	u64 sum = 0;
	int k;

	for (k = 0; k < VMLAT_AS_SLOTS; k++)
		if (t->slot[k].hits)
			sum += reasons_sum(&t->row[k].reasons);
	return sum;
}

static u64 model_decoded(const struct as_model *m, unsigned int nr_keys)
{
	unsigned int id, k;
	u64 sum = 0;

	for (id = 0; id < nr_keys; id++)
		for (k = 0; k < m->nr_reasons; k++)
			sum += m->want_rns[id][k];
	return sum;
}

static void check_model(struct kunit *test, struct as_model *m,
			unsigned int seed,
			unsigned int nr_keys)
{
	struct vmlat_as_times now, sum = {}, rows = {};
	struct vmlat_as_stretch s;
	u64 total = 0, least = U64_MAX, weight;
	unsigned int i, k, id;
	int r;

	/* the stretch in progress, as a reader adds it */
	vmlat_acct_as_times(m->a.time_ns, &now);
	vmlat_as_cursor_stretch(&m->a.as, &now, &s);
	KUNIT_ASSERT_EQ_MSG(test, s.key, key_of(m->last), "%u: cursor",
			    seed);

	for (k = 0; k < VMLAT_AS_SLOTS; k++) {
		if (!m->t.slot[k].hits)
			continue;
		weight = m->t.slot[k].weight;
		least = weight < least ? weight : least;
	}
	for (id = 0; id < nr_keys; id++) {
		const struct vmlat_as_times *w = &m->want[id];
		u64 wt = vmlat_as_total(w);

		total += wt;
		for (i = 0; i < VMLAT_NR_AS_TIMES; i++)
			sum.ns[i] += w->ns[i];
		r = vmlat_as_table_find(&m->t, key_of(id));
		if (r < 0) {
			KUNIT_EXPECT_LE_MSG(test, wt - vmlat_as_total(&s.t) *
					    (id == id_of(s.key)), least,
					    "%u: key %u without a row", seed,
					    id);
			continue;
		}
		/* a row is exact since its key took it: at most the model */
		for (i = 0; i < VMLAT_NR_AS_TIMES; i++)
			KUNIT_EXPECT_LE_MSG(test, m->t.row[r].t.ns[i] +
					    (id == id_of(s.key) ? s.t.ns[i] : 0),
					    w->ns[i], "%u: key %u time %u",
					    seed, id, i);
		KUNIT_EXPECT_LE_MSG(test, m->t.row[r].slices,
				    m->want_slices[id], "%u: key %u slices",
				    seed, id);
		KUNIT_EXPECT_TRUE_MSG(test, !m->t.row[r].user || m->user[id],
				      "%u: key %u user", seed, id);
		check_reasons(test, m, seed, r, id, &s);
		if (!m->t.evicted) {
			for (i = 0; i < VMLAT_NR_AS_TIMES; i++)
				KUNIT_EXPECT_EQ_MSG(test, m->t.row[r].t.ns[i] +
						    (id == id_of(s.key) ?
						     s.t.ns[i] : 0),
						    w->ns[i],
						    "%u: key %u time %u exact",
						    seed, id, i);
			KUNIT_EXPECT_EQ_MSG(test, m->t.row[r].slices,
					    m->want_slices[id],
					    "%u: key %u slices exact", seed,
					    id);
		}
		/* more than 1/VMLAT_AS_SLOTS of the time keeps a row */
	}
	for (id = 0; id < nr_keys; id++)
		if ((vmlat_as_total(&m->want[id]) - (id == id_of(s.key) ?
		     vmlat_as_total(&s.t) : 0)) * VMLAT_AS_SLOTS >
		    total - vmlat_as_total(&s.t))
			KUNIT_EXPECT_GE_MSG(test, vmlat_as_table_find(&m->t, key_of(id)),
					    0, "%u: heavy key %u has a row",
					    seed, id);

	/* the rows, "other" and the stretch in progress are all the time */
	for (k = 0; k < VMLAT_AS_SLOTS; k++)
		for (i = 0; m->t.slot[k].hits && i < VMLAT_NR_AS_TIMES; i++)
			rows.ns[i] += m->t.row[k].t.ns[i];
	for (i = 0; i < VMLAT_NR_AS_TIMES; i++) {
		KUNIT_EXPECT_EQ_MSG(test, rows.ns[i] + m->t.other.t.ns[i] +
				    s.t.ns[i], now.ns[i] - m->first.ns[i],
				    "%u: time %u adds up", seed, i);
		KUNIT_EXPECT_EQ_MSG(test, sum.ns[i],
				    now.ns[i] - m->first.ns[i],
				    "%u: model time %u adds up", seed, i);
	}
	KUNIT_EXPECT_EQ_MSG(test, m->t.other_weight,
			    vmlat_as_total(&m->t.other.t),
			    "%u: other's weight", seed);
	KUNIT_EXPECT_EQ_MSG(test, m->done_mismatch, 0ULL,
			    "%u: exits completed with another time", seed);
	/* rows, "other" and the stretch in progress: every decoded exit */
	KUNIT_EXPECT_EQ_MSG(test, reasons_sum(&m->t.other.reasons) +
			    reasons_sum(&s.reasons) + rows_reasons(&m->t),
			    model_decoded(m, nr_keys),
			    "%u: every decoded exit's time by reason", seed);
}

static void run_model(struct kunit *test, unsigned int seed,
		      unsigned int nr_keys, unsigned int nr_reasons,
		      unsigned int steps)
{
	struct as_model *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	u64 rng = seed;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, m);
	vmlat_acct_init(&m->a, VMLAT_EV_ENTRY, 1000);
	vmlat_as_table_init(&m->t);
	m->now = 1000;
	m->nr_reasons = nr_reasons;
	KUNIT_ASSERT_EQ(test, m->a.as.key, VMLAT_AS_NONE);
	for (i = 0; i < steps; i++)
		model_step(m, &rng, nr_keys, (unsigned int)(seed % nr_keys));
	check_model(test, m, seed, nr_keys);
}

/*
 * Fewer keys than rows and reasons than a row lists: every row exact,
 * nothing evicted, each reason's time and count exact.
 */
static void vmlat_as_few_keys_exact(struct kunit *test)
{
	unsigned int seed;

	for (seed = 1; seed <= 20; seed++)
		run_model(test, seed, VMLAT_AS_SLOTS, VMLAT_AS_REASONS, 2000);
}

/*
 * Many keys and reasons: "other" takes the evicted, the heavy key keeps
 * its row; no reason has more than it had.
 */
static void vmlat_as_many_keys_bounded(struct kunit *test)
{
	unsigned int seed;

	for (seed = 100; seed < 120; seed++)
		run_model(test, seed, MAX_KEYS, MAX_REASONS, 5000);
}

/* A reset mid-way: stretches count from the times' new zero. */
static void vmlat_as_reset_restarts_stretch(struct kunit *test)
{
	struct vmlat_vcpu_acct a;
	struct vmlat_as_times now;
	struct vmlat_as_stretch s;
	struct vmlat_done done;

	vmlat_acct_init(&a, VMLAT_EV_ENTRY, 0);
	vmlat_acct_as_times(a.time_ns, &now);
	vmlat_as_cursor_move(&a.as, 0x2000, &now, &s);
	vmlat_acct_event(&a, VMLAT_EV_EXIT, false, 500, &done);
	vmlat_acct_event(&a, VMLAT_EV_ENTRY, false, 700, &done);
	vmlat_as_cursor_exit(&a.as, 3, done.ns);
	KUNIT_EXPECT_EQ(test, a.as.reasons.count[0], 1ULL);
	vmlat_acct_reset(&a, 1, 800);
	KUNIT_EXPECT_EQ(test, a.as.key, 0x2000ULL);
	vmlat_acct_event(&a, VMLAT_EV_EXIT, false, 1000, &done);
	vmlat_acct_as_times(a.time_ns, &now);
	KUNIT_ASSERT_TRUE(test, vmlat_as_cursor_move(&a.as, 0x4000, &now, &s));
	KUNIT_EXPECT_EQ(test, s.key, 0x2000ULL);
	KUNIT_EXPECT_EQ(test, s.t.ns[VMLAT_AS_GUEST], 200ULL);
	KUNIT_EXPECT_EQ(test, s.t.ns[VMLAT_AS_EXIT], 0ULL);
	/* the exit before the reset is gone with its time */
	KUNIT_EXPECT_EQ(test, s.reasons.ns[0], 0ULL);
	KUNIT_EXPECT_EQ(test, s.reasons.slot[0], 0);
}

/*
 * One list fed a random stream of exits of 12 reasons, the first ones
 * more often: the entries and "other" add up to the stream, no entry has
 * more than its reason had nor a reason twice, and a reason with more
 * than 1/VMLAT_AS_REASONS of the time has an entry (space-saving's
 * guarantee, topk.h).
 */
static void vmlat_as_reasons_bounded(struct kunit *test)
{
	u64 want_ns[MAX_REASONS], want_n[MAX_REASONS], total, listed, ns, rng;
	struct vmlat_as_reasons r;
	bool in[MAX_REASONS];
	unsigned int seed, i, k;

	for (seed = 1; seed <= 20; seed++) {
		memset(&r, 0, sizeof(r));
		memset(want_ns, 0, sizeof(want_ns));
		memset(want_n, 0, sizeof(want_n));
		memset(in, 0, sizeof(in));
		rng = seed;
		total = 0;
		for (i = 0; i < 5000; i++) {
			/* reason k, the lower ones more often */
			k = (unsigned int)lcg_below(&rng, MAX_REASONS);
			k = (unsigned int)lcg_below(&rng, k + 1);
			ns = 1 + lcg_below(&rng, 1000);
			want_ns[k] += ns;
			want_n[k]++;
			total += ns;
			vmlat_as_reasons_add(&r, k + 1, ns, 1);
		}
		listed = r.other_ns;
		for (i = 0; i < VMLAT_AS_REASONS; i++) {
			KUNIT_ASSERT_NE_MSG(test, r.slot[i], 0, "%u: full", seed);
			k = r.slot[i] - 1;
			KUNIT_ASSERT_LT(test, k, (unsigned int)MAX_REASONS);
			KUNIT_EXPECT_FALSE_MSG(test, in[k], "%u: %u twice", seed,
					       k);
			in[k] = true;
			KUNIT_EXPECT_LE_MSG(test, r.ns[i], want_ns[k],
					    "%u: reason %u time", seed, k);
			KUNIT_EXPECT_LE_MSG(test, r.count[i], want_n[k],
					    "%u: reason %u count", seed, k);
			listed += r.ns[i];
		}
		KUNIT_EXPECT_EQ_MSG(test, listed, total, "%u: all the time",
				    seed);
		for (k = 0; k < MAX_REASONS; k++)
			if (want_ns[k] * VMLAT_AS_REASONS > total)
				KUNIT_EXPECT_TRUE_MSG(test, in[k],
						      "%u: heavy reason %u",
						      seed, k);
	}
}

/*
 * A full list: a newcomer takes the entry of least weight (its time and
 * count to "other"), from 0 with that weight; a merge adds to the same
 * reasons.
 */
static void vmlat_as_reasons_full(struct kunit *test)
{
	struct vmlat_as_reasons r = {}, r2;
	int i;

	for (i = 0; i < VMLAT_AS_REASONS; i++)
		vmlat_as_reasons_add(&r, i + 1, 10 * (i + 1), i + 1);
	r2 = r;
	vmlat_as_reasons_add(&r, 40, 5, 2);	/* takes reason 1's (10) */
	KUNIT_EXPECT_EQ(test, r.slot[0], 40);
	KUNIT_EXPECT_EQ(test, r.ns[0], 5ULL);
	KUNIT_EXPECT_EQ(test, r.count[0], 2ULL);
	KUNIT_EXPECT_EQ(test, r.weight[0], 15ULL);
	KUNIT_EXPECT_EQ(test, r.other_ns, 10ULL);
	KUNIT_EXPECT_EQ(test, r.other_count, 1ULL);
	/* the least weight is now the newcomer's: 41 takes it */
	vmlat_as_reasons_add(&r, 41, 1, 1);
	KUNIT_EXPECT_EQ(test, r.slot[0], 41);
	KUNIT_EXPECT_EQ(test, r.weight[0], 16ULL);
	KUNIT_EXPECT_EQ(test, r.other_ns, 15ULL);
	KUNIT_EXPECT_EQ(test, r.other_count, 3ULL);
	vmlat_as_reasons_merge(&r, &r2);	/* 1 back in 41's place */
	KUNIT_EXPECT_EQ(test, r.slot[0], 1);
	KUNIT_EXPECT_EQ(test, r.ns[0], 10ULL);
	KUNIT_EXPECT_EQ(test, r.count[0], 1ULL);
	KUNIT_EXPECT_EQ(test, r.other_ns, 16ULL);
	KUNIT_EXPECT_EQ(test, r.other_count, 4ULL);
	for (i = 1; i < VMLAT_AS_REASONS; i++) {
		KUNIT_EXPECT_EQ(test, r.slot[i], i + 1);
		KUNIT_EXPECT_EQ(test, r.ns[i], 20ULL * (i + 1));
		KUNIT_EXPECT_EQ(test, r.count[i], 2ULL * (i + 1));
	}
}

/* One gate per test: the glue's, in the VM's sync state. */
static struct vmlat_as_name_gate *test_gate;

/*
 * A name call of @tgid "name<tgid>" for @root, from CPL @cpl, as the glue
 * makes it: through the gate, then set if it let the call through.
 */
static u64 name_call(struct vmlat_as_names *n, struct vmlat_as_table *t,
		     u64 root, u64 tgid, int cpl, u64 now)
{
	struct vmlat_as_name_args a = { .root = root, .tgid = tgid, .cpl = cpl };
	char comm[16] = "";
	u64 reply;

	snprintf(comm, sizeof(comm), "name%llu", (unsigned long long)tgid);
	memcpy(a.comm, comm, sizeof(a.comm));
	reply = vmlat_as_name_gate(test_gate, &a, now);
	if (reply == VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN, 0))
		vmlat_as_name_set(n, t, &a);
	return reply;
}

static void gate_init(struct kunit *test)
{
	test_gate = kunit_kzalloc(test, sizeof(*test_gate), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, test_gate);
	vmlat_as_name_gate_init(test_gate);
}

#define TAKEN	VMLAT_HC_REPLY(VMLAT_HC_CALL_TAKEN, 0)
#define LIMITED	VMLAT_HC_REPLY(VMLAT_HC_CALL_LIMITED, 0)
#define BAD	VMLAT_HC_REPLY(VMLAT_HC_CALL_MALFORMED, 0)

static void vmlat_as_names_checked(struct kunit *test)
{
	struct vmlat_as_names *n = kunit_kzalloc(test, sizeof(*n), GFP_KERNEL);
	struct vmlat_as_table *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	const struct vmlat_as_name *got;
	u64 now = 1000000000ULL;

	KUNIT_ASSERT_TRUE(test, n && t);
	gate_init(test);
	vmlat_as_names_init(n);
	vmlat_as_table_init(t);
	/* CPL 3, or unknown: no reply, nothing set */
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 5, 3, now), 0ULL);
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 5, -1, now), 0ULL);
	KUNIT_EXPECT_EQ(test, test_gate->user, 2ULL);
	/* each field out of range */
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000 | 2, 5, 0, now), BAD);
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000 | 1ULL << 52, 5, 0, now),
			BAD);
	KUNIT_EXPECT_EQ(test, name_call(n, t, VMLAT_HC_NAME_NEW, 5, 0, now),
			BAD);
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 0, 0, now), BAD);
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 1ULL << 32, 0, now), BAD);
	/* key 0: KPTI's user half of nothing */
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x1000 | VMLAT_HC_NAME_NEW, 5, 0,
					now), BAD);
	KUNIT_EXPECT_EQ(test, test_gate->malformed, 6ULL);
	KUNIT_EXPECT_EQ(test, vmlat_as_names_count(n), 0U);
	/* a good one: found by its key, KPTI's user half too */
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 0xffffffffULL, 0, now),
			TAKEN);
	got = vmlat_as_name_find(n, vmlat_as_key(0x11000 | 0x805, true));
	KUNIT_ASSERT_NOT_NULL(test, got);
	KUNIT_EXPECT_EQ(test, got->tgid, 0xffffffffU);
	KUNIT_EXPECT_STREQ(test, got->comm, "name4294967295");
	KUNIT_EXPECT_NULL(test, vmlat_as_name_find(n, 0x12000));
	KUNIT_EXPECT_EQ(test, test_gate->calls, 9ULL);
	KUNIT_EXPECT_EQ(test, test_gate->taken, 1ULL);
}

static void vmlat_as_names_rate(struct kunit *test)
{
	struct vmlat_as_names *n = kunit_kzalloc(test, sizeof(*n), GFP_KERNEL);
	struct vmlat_as_table *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	u64 now = 5000000000ULL, cost = 1000000000ULL / VMLAT_HC_NAME_RATE;
	int i;

	KUNIT_ASSERT_TRUE(test, n && t);
	gate_init(test);
	vmlat_as_names_init(n);
	vmlat_as_table_init(t);
	for (i = 0; i < VMLAT_HC_NAME_BURST; i++)
		KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 9, 0, now), TAKEN);
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 9, 0, now), LIMITED);
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 9, 0, now + cost - 1),
			LIMITED);
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 9, 0, now + cost), TAKEN);
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 9, 0, now + cost), LIMITED);
	/* a long pause refills the burst, no more */
	now += 1000 * cost * VMLAT_HC_NAME_BURST;
	for (i = 0; i < VMLAT_HC_NAME_BURST; i++)
		KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 9, 0, now), TAKEN);
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 9, 0, now), LIMITED);
	KUNIT_EXPECT_EQ(test, test_gate->limited, 4ULL);
	/* a malformed call costs nothing */
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 0, 0, now + cost), BAD);
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x10000, 9, 0, now + cost), TAKEN);
}

/* A stretch of @ns guest time in @key: makes or feeds its row. */
static void add_time(struct vmlat_as_table *t, u64 key, u64 ns)
{
	struct vmlat_as_stretch st = { .key = key, .user = true };

	st.t.ns[VMLAT_AS_GUEST] = ns;
	vmlat_as_table_add(t, &st);
}

static void vmlat_as_names_bounded(struct kunit *test)
{
	struct vmlat_as_names *n = kunit_kzalloc(test, sizeof(*n), GFP_KERNEL);
	struct vmlat_as_table *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	struct vmlat_as_table *before;
	u64 now = 0, rng = 7, k;
	unsigned int rows = 0;
	int i;

	before = kunit_kzalloc(test, sizeof(*before), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, n && t && before);
	gate_init(test);
	vmlat_as_names_init(n);
	vmlat_as_table_init(t);
	/* 12 rows, named */
	for (i = 1; i <= 12; i++) {
		add_time(t, (u64)i << 20, 1000 * i);
		KUNIT_EXPECT_EQ(test, name_call(n, t, (u64)i << 20, i, 0, now),
				TAKEN);
	}
	*before = *t;
	/* 20000 names of made-up roots, some said new, at the rate */
	for (i = 0; i < 20000; i++) {
		now += 1000000000ULL / VMLAT_HC_NAME_RATE;
		k = (lcg_below(&rng, 1ULL << 30) + 1) << 13 | 1ULL << 50;
		KUNIT_EXPECT_EQ(test, name_call(n, t, k | (i & 1), 100 + i, 0,
						now), TAKEN);
	}
	KUNIT_EXPECT_LE(test, vmlat_as_names_count(n), (unsigned int)VMLAT_AS_NAMES);
	KUNIT_EXPECT_GT(test, n->dropped, 19000ULL - VMLAT_AS_NAMES);
	/* the rows keep their names, and their times: names count nothing */
	for (i = 1; i <= 12; i++) {
		const struct vmlat_as_name *got =
			vmlat_as_name_find(n, (u64)i << 20);

		KUNIT_EXPECT_TRUE_MSG(test, got && got->tgid == (u32)i, "row %d", i);
		rows += vmlat_as_table_find(t, (u64)i << 20) >= 0;
	}
	KUNIT_EXPECT_EQ(test, rows, 12U);
	KUNIT_EXPECT_EQ(test, memcmp(before, t, sizeof(*t)), 0);
}

/*
 * A guest without KPTI and with 4 KiB PGDs (Linux 6.16 and later): two
 * processes' roots differ in bit 12 only. Folded, the second one's fork
 * would end the first one's row; once the guest showed it has no KPTI
 * (user code on a root with bit 12 clear, or a name's root with it set),
 * each is a key of its own.
 */
static void vmlat_as_names_whole_roots(struct kunit *test)
{
	struct vmlat_as_names *n = kunit_kzalloc(test, sizeof(*n), GFP_KERNEL);
	struct vmlat_as_table *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	const u64 a = 0x290c000, b = 0x290d000;
	const struct vmlat_as_name *got;
	int r;

	KUNIT_ASSERT_TRUE(test, n && t);
	/* what shows it: user code on bit 12 clear, nothing else */
	KUNIT_EXPECT_TRUE(test, vmlat_as_shows_whole(a | 0x803, true));
	KUNIT_EXPECT_FALSE(test, vmlat_as_shows_whole(b | 0x803, true));
	KUNIT_EXPECT_FALSE(test, vmlat_as_shows_whole(a, false));
	KUNIT_EXPECT_FALSE(test, vmlat_as_shows_whole(b, false));

	gate_init(test);
	vmlat_as_names_init(n);
	vmlat_as_table_init(t);
	KUNIT_EXPECT_FALSE(test, n->whole);
	KUNIT_EXPECT_EQ(test, name_call(n, t, a, 94, 0, 1), TAKEN);
	add_time(t, a, 5000);
	/* the neighbour's fork: its name shows 4 KiB roots, ends nothing */
	KUNIT_EXPECT_EQ(test, name_call(n, t, b | VMLAT_HC_NAME_NEW, 101, 0, 2),
			TAKEN);
	KUNIT_EXPECT_TRUE(test, n->whole);
	KUNIT_EXPECT_EQ(test, n->ended, 0ULL);
	r = vmlat_as_table_find(t, a);
	KUNIT_ASSERT_GE(test, r, 0);
	KUNIT_EXPECT_EQ(test, t->row[r].t.ns[VMLAT_AS_GUEST], 5000ULL);
	got = vmlat_as_name_find(n, a);
	KUNIT_EXPECT_TRUE(test, got && got->tgid == 94);
	got = vmlat_as_name_find(n, b);
	KUNIT_EXPECT_TRUE(test, got && got->tgid == 101);

	/* the same guest, shown by its exits first: names keyed whole too */
	vmlat_as_names_init(n);
	vmlat_as_table_init(t);
	if (vmlat_as_shows_whole(a, true))	/* as the exit path does */
		vmlat_as_names_set_whole(n);
	KUNIT_EXPECT_TRUE(test, vmlat_as_names_whole(n));
	KUNIT_EXPECT_EQ(test, name_call(n, t, a, 94, 0, 3), TAKEN);
	add_time(t, a, 5000);
	KUNIT_EXPECT_EQ(test, name_call(n, t, b | VMLAT_HC_NAME_NEW, 101, 0, 4),
			TAKEN);
	KUNIT_EXPECT_EQ(test, n->ended, 0ULL);
	KUNIT_EXPECT_GE(test, vmlat_as_table_find(t, a), 0);
	got = vmlat_as_name_find(n, a);
	KUNIT_EXPECT_TRUE(test, got && got->tgid == 94);

	/* a KPTI guest's names (the kernel half): still folded, one key */
	vmlat_as_names_init(n);
	vmlat_as_table_init(t);
	KUNIT_EXPECT_EQ(test, name_call(n, t, a, 94, 0, 5), TAKEN);
	KUNIT_EXPECT_FALSE(test, n->whole);
	got = vmlat_as_name_find(n, vmlat_as_key(b | 0x805, true));
	KUNIT_EXPECT_TRUE(test, got && got->tgid == 94);
}

static void vmlat_as_names_new_ends_row(struct kunit *test)
{
	struct vmlat_as_names *n = kunit_kzalloc(test, sizeof(*n), GFP_KERNEL);
	struct vmlat_as_table *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	const struct vmlat_as_name *got;
	u64 key = 0x40000, ended;
	int r, e;

	KUNIT_ASSERT_TRUE(test, n && t);
	gate_init(test);
	vmlat_as_names_init(n);
	vmlat_as_table_init(t);
	KUNIT_EXPECT_EQ(test, name_call(n, t, key, 10, 0, 1), TAKEN);
	add_time(t, key, 5000);
	/* the same process again (the list at load): nothing ends */
	KUNIT_EXPECT_EQ(test, name_call(n, t, key, 10, 0, 2), TAKEN);
	KUNIT_EXPECT_GE(test, vmlat_as_table_find(t, key), 0);
	KUNIT_EXPECT_EQ(test, n->ended, 0ULL);
	/* said new by the same process (its fork, after the list): no end */
	KUNIT_EXPECT_EQ(test, name_call(n, t, key | VMLAT_HC_NAME_NEW, 10, 0, 2),
			TAKEN);
	KUNIT_EXPECT_EQ(test, n->ended, 0ULL);
	/* a new process on that root: the old one's row and name move */
	KUNIT_EXPECT_EQ(test, name_call(n, t, key | VMLAT_HC_NAME_NEW, 11, 0, 3),
			TAKEN);
	KUNIT_EXPECT_EQ(test, n->ended, 1ULL);
	KUNIT_EXPECT_LT(test, vmlat_as_table_find(t, key), 0);
	for (e = -1, r = 0; r < VMLAT_AS_SLOTS; r++)
		if (t->slot[r].hits && vmlat_as_key_ended(t->slot[r].key))
			e = r;
	KUNIT_ASSERT_GE(test, e, 0);
	ended = t->slot[e].key;
	KUNIT_EXPECT_EQ(test, vmlat_as_key(ended, true), key);
	KUNIT_EXPECT_EQ(test, t->row[e].t.ns[VMLAT_AS_GUEST], 5000ULL);
	got = vmlat_as_name_find(n, ended);
	KUNIT_EXPECT_TRUE(test, got && got->tgid == 10);
	got = vmlat_as_name_find(n, key);
	KUNIT_EXPECT_TRUE(test, got && got->tgid == 11);
	/* the new process's time is a row of its own */
	add_time(t, key, 700);
	r = vmlat_as_table_find(t, key);
	KUNIT_ASSERT_GE(test, r, 0);
	KUNIT_EXPECT_EQ(test, t->row[r].t.ns[VMLAT_AS_GUEST], 700ULL);
	/* new again without time: a name to replace, no row to end */
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x80000 | VMLAT_HC_NAME_NEW, 12, 0,
					4), TAKEN);
	KUNIT_EXPECT_EQ(test, name_call(n, t, 0x80000 | VMLAT_HC_NAME_NEW, 13, 0,
					5), TAKEN);
	KUNIT_EXPECT_EQ(test, n->ended, 2ULL);
	got = vmlat_as_name_find(n, 0x80000);
	KUNIT_EXPECT_TRUE(test, got && got->tgid == 13);
	/* every row's generation is its own: 40 ends of one root */
	for (r = 0; r < 40; r++) {
		add_time(t, key, 1000000);
		name_call(n, t, key | VMLAT_HC_NAME_NEW, 20 + r, 0, 10 + r);
	}
	for (r = 0; r < VMLAT_AS_SLOTS; r++)
		for (e = r + 1; e < VMLAT_AS_SLOTS; e++)
			KUNIT_EXPECT_FALSE(test, t->slot[r].hits && t->slot[e].hits &&
					   t->slot[r].key == t->slot[e].key);
}

static struct kunit_case vmlat_aspace_cases[] = {
	KUNIT_CASE(vmlat_as_key_masks_flags),
	KUNIT_CASE(vmlat_as_cursor_stretches),
	KUNIT_CASE(vmlat_as_few_keys_exact),
	KUNIT_CASE(vmlat_as_many_keys_bounded),
	KUNIT_CASE(vmlat_as_reset_restarts_stretch),
	KUNIT_CASE(vmlat_as_reasons_bounded),
	KUNIT_CASE(vmlat_as_reasons_full),
	KUNIT_CASE(vmlat_as_names_checked),
	KUNIT_CASE(vmlat_as_names_rate),
	KUNIT_CASE(vmlat_as_names_bounded),
	KUNIT_CASE(vmlat_as_names_new_ends_row),
	KUNIT_CASE(vmlat_as_names_whole_roots),
	{}
};

static struct kunit_suite vmlat_aspace_suite = {
	.name = "vmlat_aspace",
	.test_cases = vmlat_aspace_cases,
};

kunit_test_suites(&vmlat_aspace_suite);
