// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/nested.c, the nested (L2) state machine.
 *
 * Sequences of kvm_exit/kvm_entry as an L1 hypervisor's vCPU thread
 * produces them, with the intervals and counts worked out by hand in each
 * case's comment; then a random walk checks the invariants the debugfs
 * numbers rely on: L1 and L2 time add up to the guest time, and every
 * classified L2 exit is counted once and completes at most one round trip.
 */
#include <kunit/test.h>

#include "exit_codes.h"
#include "nested.h"

#define SLOT_IO		VMLAT_EXIT_SVM_IOIO
#define SLOT_HLT	VMLAT_EXIT_SVM_HLT
#define SLOT_VMMCALL	VMLAT_EXIT_SVM_VMMCALL
#define SLOT_VMRUN	VMLAT_EXIT_SVM_VMRUN

/*
 * The vCPU's guest time, kvm_entry to kvm_exit (a re-entry without an exit
 * goes on), as its state machine gives it to a dormant machine that
 * becomes active: kept here apart from the machine, which does not add it
 * up itself before then.
 */
static struct {
	u64 ns;
	u64 since;
	bool in;
} guest;

static void init(struct vmlat_nested *n)
{
	vmlat_nested_init(n);
	memset(&guest, 0, sizeof(guest));
}

/* The guest time up to @t, an event of the vCPU's. */
static void guest_to(u64 t)
{
	if (guest.in)
		guest.ns += t - guest.since;
	guest.since = t;
}

static void exit_full(struct vmlat_nested *n, bool l2, int slot, bool hlt,
		      bool vmenter, u64 t)
{
	guest_to(t);
	guest.in = false;
	vmlat_nested_exit(n, l2, slot, hlt, vmenter, t, guest.ns);
}

static void exit_at(struct vmlat_nested *n, bool l2, int slot, u64 t)
{
	exit_full(n, l2, slot, vmlat_exit_slot_is_hlt(slot),
		  vmlat_exit_slot_is_vmenter(slot), t);
}

/* @d: what the entry completed (nothing if it says so). */
static void entry_at(struct vmlat_nested *n, bool l2, u64 woken, u64 t,
		     struct vmlat_nested_done *d)
{
	guest_to(t);
	guest.in = true;
	if (!vmlat_nested_entry(n, l2, woken, t, d, guest.ns)) {
		d->handled = VMLAT_LEVEL_NONE;
		d->nr = 0;
	}
}

static void expect_iv(struct kunit *test, const struct vmlat_nested_done *d,
		      unsigned int i, u8 hist, int slot, u64 ns)
{
	KUNIT_ASSERT_GT(test, d->nr, i);
	KUNIT_EXPECT_EQ(test, d->iv[i].hist, hist);
	KUNIT_EXPECT_EQ(test, d->iv[i].slot, slot);
	KUNIT_EXPECT_EQ(test, d->iv[i].ns, ns);
}

/*
 * L1 runs 0-10, VMRUN; L2 runs 12-20, VMMCALL reflected: L1 runs 25-30,
 * VMRUN; L2 runs 32-40, I/O handled by L0; L2 runs 45-50.
 */
static void vmlat_nested_reflected_and_handled(struct kunit *test)
{
	struct vmlat_nested n;
	struct vmlat_nested_done d;

	init(&n);
	entry_at(&n, false, 0, 0, &d);
	KUNIT_EXPECT_EQ(test, d.nr, 0U);
	KUNIT_EXPECT_FALSE(test, n.active);
	exit_at(&n, false, SLOT_VMRUN, 10);
	KUNIT_EXPECT_TRUE(test, n.active);
	entry_at(&n, true, 0, 12, &d);
	KUNIT_EXPECT_EQ(test, d.nr, 0U);
	KUNIT_EXPECT_EQ(test, n.l1_to_l2, 1ULL);

	exit_at(&n, true, SLOT_VMMCALL, 20);
	entry_at(&n, false, 0, 25, &d);
	KUNIT_EXPECT_EQ(test, d.handled, VMLAT_LEVEL_L1);
	KUNIT_EXPECT_EQ(test, d.slot, SLOT_VMMCALL);
	KUNIT_EXPECT_EQ(test, d.nr, 0U);
	exit_at(&n, false, SLOT_VMRUN, 30);
	entry_at(&n, true, 0, 32, &d);
	KUNIT_EXPECT_EQ(test, d.handled, VMLAT_LEVEL_NONE);
	KUNIT_EXPECT_EQ(test, d.nr, 1U);
	expect_iv(test, &d, 0, VMLAT_NH_L2_EXIT_L1, SLOT_VMMCALL, 12);

	exit_at(&n, true, SLOT_IO, 40);
	entry_at(&n, true, 0, 45, &d);
	KUNIT_EXPECT_EQ(test, d.handled, VMLAT_LEVEL_L2);
	KUNIT_EXPECT_EQ(test, d.slot, SLOT_IO);
	expect_iv(test, &d, 0, VMLAT_NH_L2_EXIT_L0, SLOT_IO, 5);
	exit_at(&n, true, SLOT_IO, 50);

	KUNIT_EXPECT_EQ(test, n.l1_ns, 15ULL);
	KUNIT_EXPECT_EQ(test, n.l2_ns, 21ULL);
	KUNIT_EXPECT_EQ(test, n.l2_exit_l1_ns, 12ULL);
	KUNIT_EXPECT_EQ(test, n.l2_exit_l0_ns, 5ULL);
	KUNIT_EXPECT_EQ(test, n.l2_entries, 3ULL);
	KUNIT_EXPECT_EQ(test, n.l1_to_l2, 2ULL);
	KUNIT_EXPECT_EQ(test, n.l2_exits_l0, 1ULL);
	KUNIT_EXPECT_EQ(test, n.l2_exits_l1, 1ULL);
	KUNIT_EXPECT_TRUE(test, n.l2_exit_open);
}

/*
 * An L2 sync call, reflected: L2 runs 0-10 and makes it (VMLAT_SLOT_L2_SYNC),
 * L1 runs 12-15 and exits for an MSR of its own (counted as usual, no L2
 * exit), runs 16-20, its VMRUN resumes L2 at 22 (the round trip: 12); L2
 * then makes a plain VMMCALL at 30, reflected, resumed at 40 (10). Then a
 * sync call L0 handles alone (an L1 that does not intercept VMMCALL),
 * 50-53. Then a sync call at 60 whose first VMRUN (65) fails: L1 runs
 * again at 66 and its second VMRUN (70) is its own exit; L2 runs at 72
 * (12). Only the plain call is an L2 exit.
 */
static void vmlat_nested_sync_apart(struct kunit *test)
{
	struct vmlat_nested n;
	struct vmlat_nested_done d;

	init(&n);
	entry_at(&n, true, 0, 0, &d);
	exit_at(&n, true, VMLAT_SLOT_L2_SYNC, 10);
	KUNIT_EXPECT_FALSE(test, vmlat_nested_resumes_sync(&n));
	entry_at(&n, false, 0, 12, &d);
	KUNIT_EXPECT_EQ(test, d.handled, VMLAT_LEVEL_NONE);
	KUNIT_EXPECT_EQ(test, d.nr, 0U);
	exit_at(&n, false, VMLAT_EXIT_SVM_MSR, 15);
	KUNIT_EXPECT_TRUE(test, vmlat_nested_resumes_sync(&n));
	entry_at(&n, false, 0, 16, &d);
	KUNIT_EXPECT_TRUE(test, vmlat_nested_resumes_sync(&n));
	/* events.c gives L1's VMRUN exit the sync slot now */
	exit_full(&n, false, VMLAT_SLOT_L2_SYNC, false, true, 20);
	entry_at(&n, true, 0, 22, &d);
	KUNIT_EXPECT_EQ(test, d.handled, VMLAT_LEVEL_NONE);
	KUNIT_EXPECT_EQ(test, d.nr, 0U);
	KUNIT_EXPECT_FALSE(test, vmlat_nested_resumes_sync(&n));
	KUNIT_EXPECT_EQ(test, n.l2_sync_calls, 1ULL);
	KUNIT_EXPECT_EQ(test, n.l2_sync_ns, 12ULL);

	exit_at(&n, true, SLOT_VMMCALL, 30);
	entry_at(&n, false, 0, 32, &d);
	KUNIT_EXPECT_EQ(test, d.handled, VMLAT_LEVEL_L1);
	KUNIT_EXPECT_FALSE(test, vmlat_nested_resumes_sync(&n));
	exit_at(&n, false, SLOT_VMRUN, 38);
	entry_at(&n, true, 0, 40, &d);
	expect_iv(test, &d, 0, VMLAT_NH_L2_EXIT_L1, SLOT_VMMCALL, 10);

	exit_at(&n, true, VMLAT_SLOT_L2_SYNC, 50);
	entry_at(&n, true, 0, 53, &d);
	KUNIT_EXPECT_EQ(test, d.handled, VMLAT_LEVEL_NONE);
	KUNIT_EXPECT_EQ(test, d.nr, 0U);

	exit_at(&n, true, VMLAT_SLOT_L2_SYNC, 60);
	entry_at(&n, false, 0, 62, &d);
	KUNIT_EXPECT_TRUE(test, vmlat_nested_resumes_sync(&n));
	exit_full(&n, false, VMLAT_SLOT_L2_SYNC, false, true, 65);
	entry_at(&n, false, 0, 66, &d);
	KUNIT_EXPECT_FALSE(test, vmlat_nested_resumes_sync(&n));
	exit_at(&n, false, SLOT_VMRUN, 70);
	entry_at(&n, true, 0, 72, &d);
	KUNIT_EXPECT_EQ(test, d.nr, 0U);

	KUNIT_EXPECT_EQ(test, n.l2_sync_calls, 3ULL);
	KUNIT_EXPECT_EQ(test, n.l2_sync_ns, 27ULL);
	KUNIT_EXPECT_EQ(test, n.l2_exits_l1, 1ULL);
	KUNIT_EXPECT_EQ(test, n.l2_exits_l0, 0ULL);
	KUNIT_EXPECT_EQ(test, n.l2_exit_l1_ns, 10ULL);
	KUNIT_EXPECT_EQ(test, n.l2_exit_l0_ns, 0ULL);
	KUNIT_EXPECT_EQ(test, n.l2_entries, 5ULL);
	KUNIT_EXPECT_EQ(test, n.l1_ns, 20ULL);
	KUNIT_EXPECT_EQ(test, n.l2_ns, 35ULL);
}

/*
 * Wake-up latencies: L2 halts at 100 and the thread is woken at 180, L2
 * runs at 183 (3, and the round trip 83 handled by L0); L1 halts at 200,
 * is not put to sleep (the wake-up known is older), runs at 204 (4).
 */
static void vmlat_nested_wakeups(struct kunit *test)
{
	struct vmlat_nested n;
	struct vmlat_nested_done d;

	init(&n);
	entry_at(&n, true, 0, 90, &d);
	exit_at(&n, true, SLOT_HLT, 100);
	entry_at(&n, true, 180, 183, &d);
	KUNIT_EXPECT_EQ(test, d.nr, 2U);
	expect_iv(test, &d, 0, VMLAT_NH_L2_EXIT_L0, SLOT_HLT, 83);
	expect_iv(test, &d, 1, VMLAT_NH_WAKEUP_L2, -1, 3);

	/* An L2 exit reflected, then L1 halts and is resumed */
	exit_at(&n, true, SLOT_VMMCALL, 190);
	entry_at(&n, false, 180, 195, &d);
	exit_at(&n, false, SLOT_HLT, 200);
	entry_at(&n, false, 180, 204, &d);
	KUNIT_EXPECT_EQ(test, d.nr, 1U);
	expect_iv(test, &d, 0, VMLAT_NH_WAKEUP_L1, -1, 4);

	/* An L2 HLT reflected to L1: L2 runs again when L1 resumes it. */
	exit_at(&n, false, SLOT_VMRUN, 210);
	entry_at(&n, true, 180, 212, &d);
	exit_at(&n, true, SLOT_HLT, 220);
	entry_at(&n, false, 180, 222, &d);
	exit_at(&n, false, SLOT_VMRUN, 226);
	entry_at(&n, true, 180, 230, &d);
	KUNIT_EXPECT_EQ(test, d.nr, 2U);
	expect_iv(test, &d, 0, VMLAT_NH_L2_EXIT_L1, SLOT_HLT, 10);
	expect_iv(test, &d, 1, VMLAT_NH_WAKEUP_L2, -1, 10);
	KUNIT_EXPECT_FALSE(test, n.l2_halted);
	KUNIT_EXPECT_FALSE(test, n.l1_halted);
}

/*
 * [P1]: WAITING after L1's VMRUN, READY after kvm_mmu_get_page, NORMAL
 * after kvm_nested_vmexit_inject. Its verdict at each entry, against the
 * truth: [truth is L2][says L2].
 */
static void vmlat_nested_heuristic(struct kunit *test)
{
	struct vmlat_nested n;
	struct vmlat_nested_done d;

	init(&n);
	/* Not a hypervisor: no verdict counted. */
	entry_at(&n, false, 0, 0, &d);
	exit_at(&n, false, SLOT_IO, 1);
	vmlat_nested_mmu_page(&n);
	KUNIT_EXPECT_EQ(test, n.heur_state, VMLAT_HEUR_NORMAL);
	entry_at(&n, false, 0, 2, &d);
	KUNIT_EXPECT_EQ(test, vmlat_nested_heur_judged(&n), 0ULL);

	/* VMRUN, a shadow page: says L2, right (twice: L0-handled exit). */
	exit_at(&n, false, SLOT_VMRUN, 3);
	KUNIT_EXPECT_EQ(test, n.heur_state, VMLAT_HEUR_WAITING);
	vmlat_nested_mmu_page(&n);
	KUNIT_EXPECT_EQ(test, n.heur_state, VMLAT_HEUR_READY);
	entry_at(&n, true, 0, 4, &d);
	exit_at(&n, true, SLOT_IO, 5);
	entry_at(&n, true, 0, 6, &d);
	KUNIT_EXPECT_EQ(test, n.heur[1][1], 2ULL);
	/* Reflected: says L1, right. */
	exit_at(&n, true, SLOT_VMMCALL, 7);
	vmlat_nested_inject(&n);
	entry_at(&n, false, 0, 8, &d);
	KUNIT_EXPECT_EQ(test, n.heur[0][0], 1ULL);
	/* VMRUN without a shadow page (TDP MMU, cached root): wrong. */
	exit_at(&n, false, SLOT_VMRUN, 9);
	entry_at(&n, true, 0, 10, &d);
	KUNIT_EXPECT_EQ(test, n.heur[1][0], 1ULL);
	KUNIT_EXPECT_EQ(test, n.heur[0][1], 0ULL);
	KUNIT_EXPECT_EQ(test, vmlat_nested_heur_agree(&n), 3ULL);
	KUNIT_EXPECT_EQ(test, vmlat_nested_heur_judged(&n), 4ULL);
}

/* A reset zeroes the counts; an L2 exit in progress completes whole. */
static void vmlat_nested_reset_keeps_state(struct kunit *test)
{
	struct vmlat_nested n;
	struct vmlat_nested_done d;

	init(&n);
	entry_at(&n, true, 0, 0, &d);
	exit_at(&n, true, SLOT_IO, 10);
	vmlat_nested_reset(&n);
	KUNIT_EXPECT_EQ(test, n.l2_ns, 0ULL);
	KUNIT_EXPECT_EQ(test, n.l2_entries, 0ULL);
	KUNIT_EXPECT_TRUE(test, n.active);
	entry_at(&n, true, 0, 30, &d);
	expect_iv(test, &d, 0, VMLAT_NH_L2_EXIT_L0, SLOT_IO, 20);
	KUNIT_EXPECT_EQ(test, n.l2_exits_l0, 1ULL);
	KUNIT_EXPECT_EQ(test, n.l2_entries, 1ULL);
}

/*
 * The guest time in progress counts in a reader's snapshot, once; a
 * re-entry's too.
 */
static void vmlat_nested_snapshot_counts_current(struct kunit *test)
{
	struct vmlat_nested n, copy;
	struct vmlat_nested_done d;

	init(&n);
	entry_at(&n, true, 0, 100, &d);
	copy = n;
	vmlat_nested_snapshot(&copy, 150);
	KUNIT_EXPECT_EQ(test, copy.l2_ns, 50ULL);
	KUNIT_EXPECT_EQ(test, n.l2_ns, 0ULL);
	exit_at(&n, true, SLOT_IO, 160);
	copy = n;
	vmlat_nested_snapshot(&copy, 500);
	KUNIT_EXPECT_EQ(test, copy.l2_ns, 60ULL);

	/* A re-entry without kvm_exit (6.1's fastpath) keeps the time. */
	entry_at(&n, false, 0, 600, &d);
	entry_at(&n, false, 0, 610, &d);
	exit_at(&n, false, SLOT_IO, 615);
	KUNIT_EXPECT_EQ(test, n.l1_ns, 15ULL);
}

/*
 * A vCPU that has not run L2 nor executed VMRUN: the machine is dormant,
 * writes nothing at an exit round trip (0-10, 12-20 I/O), takes the L1
 * wake-up of a HLT (L1 runs 22-40, entry at 45: 5). L1's VMRUN at 50
 * wakes it with the guest time so far, 10 + 8 + 18 + 5 = 41; from then
 * on it counts: L2 runs 52-60, L1 62-65 (41 + 3).
 */
static void vmlat_nested_dormant(struct kunit *test)
{
	struct vmlat_nested n, fresh;
	struct vmlat_nested_done d;

	init(&n);
	vmlat_nested_init(&fresh);
	entry_at(&n, false, 0, 0, &d);
	exit_at(&n, false, SLOT_IO, 10);
	entry_at(&n, false, 0, 12, &d);
	exit_at(&n, false, SLOT_IO, 20);
	KUNIT_EXPECT_EQ(test, memcmp(&n, &fresh, sizeof(n)), 0);

	entry_at(&n, false, 0, 22, &d);
	exit_at(&n, false, SLOT_HLT, 40);
	entry_at(&n, false, 30, 45, &d);
	KUNIT_EXPECT_EQ(test, d.nr, 1U);
	expect_iv(test, &d, 0, VMLAT_NH_WAKEUP_L1, -1, 5);
	KUNIT_EXPECT_FALSE(test, n.active);
	KUNIT_EXPECT_FALSE(test, n.l1_halted);
	KUNIT_EXPECT_EQ(test, n.l1_ns, 0ULL);

	exit_at(&n, false, SLOT_VMRUN, 50);
	KUNIT_EXPECT_TRUE(test, n.active);
	KUNIT_EXPECT_EQ(test, n.heur_state, VMLAT_HEUR_WAITING);
	KUNIT_EXPECT_EQ(test, n.l1_ns, 41ULL);
	entry_at(&n, true, 0, 52, &d);
	KUNIT_EXPECT_EQ(test, n.l1_to_l2, 1ULL);
	KUNIT_EXPECT_EQ(test, vmlat_nested_heur_judged(&n), 1ULL);
	exit_at(&n, true, SLOT_VMMCALL, 60);
	entry_at(&n, false, 0, 62, &d);
	KUNIT_EXPECT_EQ(test, d.handled, VMLAT_LEVEL_L1);
	exit_at(&n, false, SLOT_IO, 65);
	KUNIT_EXPECT_EQ(test, n.l2_ns, 8ULL);
	KUNIT_EXPECT_EQ(test, n.l1_ns, 44ULL);
}

/*
 * Woken by its first entry into L2 (vmlat came after L1's VMRUN): L1 ran
 * 0-10, L2 enters at 20; before any entry, an L2 entry knows no level.
 * Or by an exit of L2.
 */
static void vmlat_nested_woken_by_l2(struct kunit *test)
{
	struct vmlat_nested n;
	struct vmlat_nested_done d;

	init(&n);
	entry_at(&n, false, 0, 0, &d);
	exit_at(&n, false, SLOT_IO, 10);
	entry_at(&n, true, 0, 20, &d);
	KUNIT_EXPECT_TRUE(test, n.active);
	KUNIT_EXPECT_EQ(test, n.l1_ns, 10ULL);
	KUNIT_EXPECT_EQ(test, n.l1_to_l2, 1ULL);
	exit_at(&n, true, SLOT_IO, 25);
	KUNIT_EXPECT_EQ(test, n.l2_ns, 5ULL);

	init(&n);
	entry_at(&n, true, 0, 0, &d);
	KUNIT_EXPECT_TRUE(test, n.active);
	KUNIT_EXPECT_EQ(test, n.l1_to_l2, 0ULL);
	KUNIT_EXPECT_EQ(test, n.l2_entries, 1ULL);

	/*
	 * By an exit of L2 whose entry went unseen: that interval counts as
	 * L1's (the guest time given), the exit is L2's, reflected at 15.
	 */
	init(&n);
	entry_at(&n, false, 0, 0, &d);
	exit_at(&n, true, SLOT_VMMCALL, 10);
	KUNIT_EXPECT_TRUE(test, n.active);
	KUNIT_EXPECT_EQ(test, n.l1_ns, 10ULL);
	KUNIT_EXPECT_EQ(test, n.level, VMLAT_LEVEL_L2);
	entry_at(&n, false, 0, 15, &d);
	KUNIT_EXPECT_EQ(test, d.handled, VMLAT_LEVEL_L1);
	KUNIT_EXPECT_EQ(test, d.slot, SLOT_VMMCALL);
}

static u32 rnd_state;

static u32 rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 16;
}

/*
 * Random exits and entries at random levels: L1 + L2 time is the guest
 * time; each L2 exit is classified exactly once (at the first entry after
 * it) and completes one round trip at the next L2 entry; the round trips
 * add up to the time from their exits to those entries.
 */
static void vmlat_nested_random_walk(struct kunit *test)
{
	static const int slots[] = { SLOT_IO, SLOT_HLT, SLOT_VMMCALL,
				     SLOT_VMRUN, -1 };
	u64 t = 0, guest_ns = 0, l2_exits = 0, classified = 0, trips = 0;
	u64 entered;
	u64 trip_ns = 0, open_since = 0;
	struct vmlat_nested_done d;
	struct vmlat_nested n;
	bool open = false, unclassified = false;
	unsigned int i, j;
	bool l2;

	rnd_state = 42;
	init(&n);
	for (i = 0; i < 5000; i++) {
		l2 = rnd() & 1;
		entry_at(&n, l2, t - (rnd() % 50), t, &d);
		entered = t;
		if (d.handled) {
			classified++;
			KUNIT_EXPECT_TRUE_MSG(test, unclassified,
					      "step %u: nothing to handle", i);
			unclassified = false;
		}
		for (j = 0; j < d.nr; j++) {
			if (d.iv[j].hist != VMLAT_NH_L2_EXIT_L0 &&
			    d.iv[j].hist != VMLAT_NH_L2_EXIT_L1)
				continue;
			trips++;
			trip_ns += d.iv[j].ns;
			KUNIT_EXPECT_TRUE_MSG(test, open && l2,
					      "step %u, interval %u: L2 open",
					      i, j);
			KUNIT_EXPECT_EQ_MSG(test, d.iv[j].ns, t - open_since,
					    "step %u, interval %u: length",
					    i, j);
			open = false;
		}
		if (l2)
			KUNIT_EXPECT_FALSE_MSG(test, open,
					       "step %u: L2 entry, exit open",
					       i);
		t += 1 + rnd() % 100;
		guest_ns += t - entered;
		exit_at(&n, l2, slots[rnd() % ARRAY_SIZE(slots)], t);
		if (l2) {
			l2_exits++;
			open = true;
			unclassified = true;
			open_since = t;
		}
		t += rnd() % 100;
	}
	KUNIT_EXPECT_EQ(test, n.l1_ns + n.l2_ns, guest_ns);
	KUNIT_EXPECT_EQ(test, n.l2_exits_l0 + n.l2_exits_l1, classified);
	KUNIT_EXPECT_EQ(test, classified + unclassified, l2_exits);
	KUNIT_EXPECT_EQ(test, n.l2_exit_l0_ns + n.l2_exit_l1_ns, trip_ns);
	KUNIT_EXPECT_EQ(test, trips + open, l2_exits);
}

static struct kunit_case vmlat_nested_cases[] = {
	KUNIT_CASE(vmlat_nested_reflected_and_handled),
	KUNIT_CASE(vmlat_nested_sync_apart),
	KUNIT_CASE(vmlat_nested_wakeups),
	KUNIT_CASE(vmlat_nested_heuristic),
	KUNIT_CASE(vmlat_nested_reset_keeps_state),
	KUNIT_CASE(vmlat_nested_snapshot_counts_current),
	KUNIT_CASE(vmlat_nested_dormant),
	KUNIT_CASE(vmlat_nested_woken_by_l2),
	KUNIT_CASE(vmlat_nested_random_walk),
	{}
};

static struct kunit_suite vmlat_nested_suite = {
	.name = "vmlat_nested",
	.test_cases = vmlat_nested_cases,
};

kunit_test_suites(&vmlat_nested_suite);
