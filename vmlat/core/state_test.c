// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/state.c, the per-vCPU state machine.
 *
 * Scenarios are event lists with times, as the probes would feed them,
 * checked against the state times and intervals worked out by hand in
 * each case's comment. A random walk over all events checks the
 * invariant the debugfs numbers rely on: the state times always add up to
 * the observed time.
 */
#include <kunit/test.h>

#include "kunit_lcg.h"
#include "state.h"

/*
 * Not events of the table: vmlat_acct_left_guest() at that time, as the
 * kvm_exit probe calls it (the exit's own time) or the switch-out.
 */
#define VMLAT_EV_LEFT		VMLAT_NR_EVENTS
#define VMLAT_EV_LEFT_SWITCHED	(VMLAT_NR_EVENTS + 1)

struct ev {
	enum vmlat_event ev;
	bool hlt;
	u64 t;
	enum vmlat_done_kind done;	/* expected completed interval */
	u64 done_ns;
};

struct scenario {
	const char *desc;
	enum vmlat_event first;		/* at t = 0 */
	struct ev evs[12];
	unsigned int nr;
	u64 end;			/* snapshot time */
	u64 time_ns[VMLAT_NR_STATES];	/* expected at @end */
	enum vmlat_state state;		/* expected at @end */
	u64 unexpected;
	u64 late_exits, late_switched, late_ns;
};

#define E(e, t_)		{ VMLAT_EV_##e, false, t_, VMLAT_DONE_NONE, 0 }
#define EH(e, t_)		{ VMLAT_EV_##e, true, t_, VMLAT_DONE_NONE, 0 }
#define ED(e, t_, k, ns)	{ VMLAT_EV_##e, false, t_, VMLAT_DONE_##k, ns }

static const struct scenario scenarios[] = {
	{
		/* kernel 0-10, guest 10-25, kernel 25-30, user 30-50, guest */
		.desc = "exit handled in kernel, then in the VMM",
		.first = VMLAT_EV_EXIT,
		.evs = { ED(ENTRY, 10, EXIT, 10), E(EXIT, 25), E(USER_EXIT, 30),
			 ED(ENTRY, 50, EXIT, 25) },
		.nr = 4, .end = 60, .state = VMLAT_GUEST,
		.time_ns = { [VMLAT_GUEST] = 25, [VMLAT_KERNEL] = 15,
			     [VMLAT_USER] = 20 },
	},
	{
		/*
		 * preempted 10-40 (a spurious wake-up changes nothing), the
		 * exit then took 10 + 5 on CPU, net of the preemption
		 */
		.desc = "preempted during exit handling",
		.first = VMLAT_EV_EXIT,
		.evs = { E(OUT_RUNNABLE, 10), E(WAKEUP, 15),
			 ED(IN, 40, PREEMPT, 30), ED(ENTRY, 45, EXIT, 15) },
		.nr = 4, .end = 45, .state = VMLAT_GUEST,
		.time_ns = { [VMLAT_KERNEL] = 15, [VMLAT_PREEMPTED] = 30 },
	},
	{
		/* HLT exit, asleep 5-100 (idle), waits 100-130 for a CPU */
		.desc = "guest halts, wakes, waits for a CPU",
		.first = VMLAT_EV_ENTRY,
		.evs = { EH(EXIT, 0), E(OUT_SLEEP, 5), E(WAKEUP, 100),
			 ED(IN, 130, WAIT, 30), ED(ENTRY, 132, EXIT, 7) },
		.nr = 5, .end = 140, .state = VMLAT_GUEST,
		.time_ns = { [VMLAT_GUEST] = 8, [VMLAT_KERNEL] = 7,
			     [VMLAT_IDLE] = 95, [VMLAT_WAIT] = 30 },
	},
	{
		/* HLT handed to the VMM, which sleeps: still idle */
		.desc = "HLT exit to userspace, VMM sleeps",
		.first = VMLAT_EV_ENTRY,
		.evs = { EH(EXIT, 10), E(USER_EXIT, 11), E(OUT_SLEEP, 12),
			 E(WAKEUP, 50), ED(IN, 51, WAIT, 1) },
		.nr = 5, .end = 53, .state = VMLAT_USER,
		.time_ns = { [VMLAT_GUEST] = 10, [VMLAT_KERNEL] = 1,
			     [VMLAT_USER] = 3, [VMLAT_IDLE] = 38,
			     [VMLAT_WAIT] = 1 },
	},
	{
		/* the VMM sleeps on I/O: blocked, not idle; back in user */
		.desc = "VMM blocks on I/O after a port-I/O exit",
		.first = VMLAT_EV_ENTRY,
		.evs = { E(EXIT, 4), E(USER_EXIT, 6), E(OUT_SLEEP, 9),
			 E(WAKEUP, 29), ED(IN, 30, WAIT, 1),
			 ED(ENTRY, 35, EXIT, 10) },
		.nr = 6, .end = 35, .state = VMLAT_GUEST,
		.time_ns = { [VMLAT_GUEST] = 4, [VMLAT_KERNEL] = 2,
			     [VMLAT_USER] = 8, [VMLAT_BLOCKED] = 20,
			     [VMLAT_WAIT] = 1 },
	},
	{
		/*
		 * vmlat attached while the vCPU was in guest mode and saw
		 * a switch-out it could not have: counted, then followed
		 */
		.desc = "impossible switch-out from guest mode",
		.first = VMLAT_EV_ENTRY,
		.evs = { E(OUT_RUNNABLE, 5), ED(IN, 9, PREEMPT, 4) },
		.nr = 2, .end = 10, .state = VMLAT_KERNEL,
		.time_ns = { [VMLAT_GUEST] = 5, [VMLAT_PREEMPTED] = 4,
			     [VMLAT_KERNEL] = 1 },
		.unexpected = 1,
	},
	{
		/* switched in without the wake-up being seen */
		.desc = "switch-in from idle without a wake-up",
		.first = VMLAT_EV_EXIT,
		.evs = { E(OUT_SLEEP, 2), E(IN, 7) },
		.nr = 2, .end = 8, .state = VMLAT_KERNEL,
		.time_ns = { [VMLAT_KERNEL] = 3, [VMLAT_BLOCKED] = 5 },
		.unexpected = 1,
	},
	{
		/*
		 * 6.1 SVM: the exit at 10, its interrupt handled, kvm_exit
		 * at 14 (4 late); kernel from 10 to the kvm_entry at 20
		 */
		.desc = "kvm_exit traced after the host's interrupt",
		.first = VMLAT_EV_ENTRY,
		.evs = { E(LEFT, 10), E(EXIT, 14), ED(ENTRY, 20, EXIT, 10) },
		.nr = 3, .end = 25, .state = VMLAT_GUEST,
		.time_ns = { [VMLAT_GUEST] = 15, [VMLAT_KERNEL] = 10 },
		.late_exits = 1, .late_ns = 4,
	},
	{
		/*
		 * the exit at 8, preempted 10-40 before its kvm_exit at 45:
		 * handling 8-10, 40-45, 45-50 on CPU
		 */
		.desc = "preempted between the exit and its kvm_exit",
		.first = VMLAT_EV_ENTRY,
		.evs = { E(LEFT_SWITCHED, 8), E(OUT_RUNNABLE, 10),
			 ED(IN, 40, PREEMPT, 30), E(EXIT, 45),
			 ED(ENTRY, 50, EXIT, 12) },
		.nr = 5, .end = 50, .state = VMLAT_GUEST,
		.time_ns = { [VMLAT_GUEST] = 8, [VMLAT_KERNEL] = 12,
			     [VMLAT_PREEMPTED] = 30 },
		.late_exits = 1, .late_switched = 1, .late_ns = 37,
	},
	{
		/* an exit time before the kvm_entry ends no guest time */
		.desc = "exit time before the guest time began",
		.first = VMLAT_EV_ENTRY,
		.evs = { E(EXIT, 10), ED(ENTRY, 20, EXIT, 10), E(LEFT, 15),
			 E(EXIT, 22), ED(ENTRY, 30, EXIT, 10) },
		.nr = 5, .end = 30, .state = VMLAT_GUEST,
		.time_ns = { [VMLAT_GUEST] = 10, [VMLAT_KERNEL] = 20 },
		.late_exits = 1, .late_ns = 2,
	},
	{
		/* the guest left at 10, kvm_entry at 20 without a kvm_exit */
		.desc = "kvm_exit missing after the guest left",
		.first = VMLAT_EV_ENTRY,
		.evs = { E(LEFT, 10), E(ENTRY, 20), E(EXIT, 25) },
		.nr = 3, .end = 30, .state = VMLAT_KERNEL,
		.time_ns = { [VMLAT_GUEST] = 15, [VMLAT_KERNEL] = 15 },
		.unexpected = 1,
	},
	{
		/*
		 * woken while still going off CPU (its sched_waking came
		 * before the switch-out): waits 20-45, never asleep
		 */
		.desc = "woken before its switch-out",
		.first = VMLAT_EV_EXIT,
		.evs = { E(WAKEUP, 18), E(OUT_WOKEN, 20),
			 ED(IN, 45, WAIT, 25), ED(ENTRY, 47, EXIT, 22) },
		.nr = 4, .end = 47, .state = VMLAT_GUEST,
		.time_ns = { [VMLAT_KERNEL] = 22, [VMLAT_WAIT] = 25 },
	},
	{
		/*
		 * the same wake-up seen only at its enqueue (sched_wakeup,
		 * after the switch-out): blocked 20-30, waits 30-45
		 */
		.desc = "wake-up seen after its switch-out",
		.first = VMLAT_EV_EXIT,
		.evs = { E(WAKEUP, 18), E(OUT_SLEEP, 20), E(WAKEUP, 30),
			 ED(IN, 45, WAIT, 15) },
		.nr = 4, .end = 50, .state = VMLAT_KERNEL,
		.time_ns = { [VMLAT_KERNEL] = 25, [VMLAT_BLOCKED] = 10,
			     [VMLAT_WAIT] = 15 },
	},
	{
		/* timestamps of two CPUs slightly out of order */
		.desc = "time going backwards across CPUs",
		.first = VMLAT_EV_EXIT,
		.evs = { E(OUT_RUNNABLE, 10), ED(IN, 8, PREEMPT, 0),
			 ED(ENTRY, 12, EXIT, 12) },
		.nr = 3, .end = 12, .state = VMLAT_GUEST,
		.time_ns = { [VMLAT_KERNEL] = 12 },
	},
};

static void scenario_desc(const struct scenario *s, char *desc)
{
	strscpy(desc, s->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(scenario, scenarios, scenario_desc);

static void vmlat_acct_event_scenarios(struct kunit *test)
{
	const struct scenario *s = test->param_value;
	struct vmlat_vcpu_acct a;
	u64 times[VMLAT_NR_STATES], observed, sum = 0;
	struct vmlat_done done;
	unsigned int i;

	vmlat_acct_init(&a, s->first, 0);
	for (i = 0; i < s->nr; i++) {
		const struct ev *e = &s->evs[i];

		if (e->ev == VMLAT_EV_LEFT || e->ev == VMLAT_EV_LEFT_SWITCHED) {
			bool sw = e->ev == VMLAT_EV_LEFT_SWITCHED;

			KUNIT_EXPECT_TRUE_MSG(test,
					      vmlat_acct_left_guest(&a, e->t, sw),
					      "event %u: left guest mode", i);
			continue;
		}
		vmlat_acct_event(&a, e->ev, e->hlt, e->t, &done);
		KUNIT_EXPECT_EQ_MSG(test, done.kind, e->done,
				    "event %u: completed interval kind", i);
		KUNIT_EXPECT_EQ_MSG(test, done.ns, e->done_ns,
				    "event %u: completed interval length", i);
	}
	vmlat_acct_snapshot(&a, s->end, times, &observed);
	for (i = 0; i < VMLAT_NR_STATES; i++) {
		KUNIT_EXPECT_EQ_MSG(test, times[i], s->time_ns[i],
				    "time in %s", vmlat_state_names[i]);
		sum += times[i];
	}
	KUNIT_EXPECT_EQ_MSG(test, a.state, (u8)s->state, "%s: state at end",
			    s->desc);
	KUNIT_EXPECT_EQ_MSG(test, a.unexpected, s->unexpected,
			    "%s: unexpected events", s->desc);
	KUNIT_EXPECT_EQ_MSG(test, a.late_exits, s->late_exits,
			    "%s: exits seen before their kvm_exit", s->desc);
	KUNIT_EXPECT_EQ_MSG(test, a.late_switched, s->late_switched,
			    "%s: of them, switched out first", s->desc);
	KUNIT_EXPECT_EQ_MSG(test, a.late_ns, s->late_ns,
			    "%s: time from those exits to their kvm_exit",
			    s->desc);
	KUNIT_EXPECT_EQ_MSG(test, sum, observed,
			    "%s: state times add up to the observed time",
			    s->desc);
}

/* Every state entered is counted, and exits once per kvm_exit. */
static void vmlat_acct_event_counts_entries_and_exits(struct kunit *test)
{
	struct vmlat_vcpu_acct a;
	struct vmlat_done done;
	int i;

	vmlat_acct_init(&a, VMLAT_EV_ENTRY, 0);
	for (i = 0; i < 100; i++) {
		vmlat_acct_event(&a, VMLAT_EV_EXIT, false, 10 * i + 3, &done);
		vmlat_acct_event(&a, VMLAT_EV_ENTRY, false, 10 * i + 5, &done);
		KUNIT_ASSERT_EQ_MSG(test, done.kind, VMLAT_DONE_EXIT,
				    "round trip %d: completed kind", i);
		KUNIT_ASSERT_EQ_MSG(test, done.ns, 2ULL,
				    "round trip %d: exit length", i);
	}
	KUNIT_EXPECT_EQ(test, a.exits, 100ULL);
	KUNIT_EXPECT_EQ(test, a.enters[VMLAT_GUEST], 101ULL);
	KUNIT_EXPECT_EQ(test, a.enters[VMLAT_KERNEL], 100ULL);
	KUNIT_EXPECT_EQ(test, a.time_ns[VMLAT_KERNEL], 200ULL);
}

/*
 * Any event, in any state, at any (even earlier) time: the state times
 * stay a partition of the observed time and every state stays valid.
 */
static void vmlat_acct_event_random_walk_keeps_partition(struct kunit *test)
{
	struct vmlat_vcpu_acct a;
	struct vmlat_done done;
	u64 times[VMLAT_NR_STATES], observed, sum, t = 1000;
	u32 seed = 42;
	int i, j;

	vmlat_acct_init(&a, VMLAT_EV_EXIT, t);
	for (i = 0; i < 20000; i++) {
		seed = seed * 1103515245 + 12345;
		/* mostly forward, sometimes a little back */
		t += (seed >> 8) % 1000;
		t -= (seed >> 20) % 8 == 0 ? (seed >> 4) % 300 : 0;
		vmlat_acct_event(&a, (seed >> 16) % VMLAT_NR_EVENTS,
				 (seed >> 12) & 1, t, &done);
		KUNIT_ASSERT_LT_MSG(test, (int)a.state, VMLAT_NR_STATES,
				    "step %d: event %u at %llu", i,
				    (seed >> 16) % VMLAT_NR_EVENTS,
				    (unsigned long long)t);
		if (i % 97)
			continue;
		vmlat_acct_snapshot(&a, t, times, &observed);
		for (sum = 0, j = 0; j < VMLAT_NR_STATES; j++)
			sum += times[j];
		KUNIT_ASSERT_EQ_MSG(test, sum, observed,
				    "step %d: state times != observed time", i);
	}
	/* Random events are mostly out of place: they were noticed. */
	KUNIT_EXPECT_GT(test, a.unexpected, 0ULL);
}

/*
 * Three vCPUs' accounting for the fast paths' comparisons (too large for
 * a KASAN kernel's stack): the first started in kernel at @t, the other
 * two its copies to compare (@b) and to check a refusal against
 * (@before).
 */
static struct vmlat_vcpu_acct *three_accts(struct kunit *test, u64 t,
					   struct vmlat_vcpu_acct **b,
					   struct vmlat_vcpu_acct **before)
{
	struct vmlat_vcpu_acct *a = kunit_kzalloc(test, 3 * sizeof(*a),
						  GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, a);
	*b = a + 1;
	*before = a + 2;
	vmlat_acct_init(a, VMLAT_EV_ENTRY, t);
	return a;
}

/*
 * The fast path of the thread's own KVM events accounts them exactly as
 * the table does, done intervals included, and refuses (changing
 * nothing) what it does not handle. Mostly exit round trips, with
 * scheduler events and out-of-order events mixed in.
 */
static void vmlat_acct_owner_matches_event(struct kunit *test)
{
	static const enum vmlat_event trip[] = {
		VMLAT_EV_EXIT, VMLAT_EV_USER_EXIT, VMLAT_EV_ENTRY,
	};
	struct vmlat_vcpu_acct *a, *b, *before;
	struct vmlat_done da, db;
	unsigned int fast = 0, refused = 0;
	enum vmlat_event ev;
	u64 t = 1000;
	u32 seed = 7;
	bool hlt;
	int i;

	a = three_accts(test, t, &b, &before);
	for (i = 0; i < 30000; i++) {
		seed = seed * 1103515245 + 12345;
		t += (seed >> 8) % 500;
		t -= (seed >> 20) % 16 == 0 ? (seed >> 4) % 200 : 0;
		ev = (seed >> 16) % 4 ? trip[(seed >> 24) % 3] :
					(seed >> 16) % VMLAT_NR_EVENTS;
		hlt = (seed >> 12) & 1;
		memcpy(b, a, sizeof(*a));
		memcpy(before, a, sizeof(*a));
		vmlat_acct_event(a, ev, hlt, t, &da);
		if (vmlat_acct_owner(b, ev, hlt, t, &db)) {
			fast++;
			KUNIT_ASSERT_EQ_MSG(test, memcmp(a, b, sizeof(*a)), 0,
					    "step %d, event %d: state", i, ev);
			KUNIT_ASSERT_EQ_MSG(test, da.kind, db.kind,
					    "step %d, event %d: done kind", i,
					    ev);
			KUNIT_ASSERT_EQ_MSG(test, da.ns, db.ns,
					    "step %d, event %d: done ns", i,
					    ev);
		} else {
			refused++;
			KUNIT_ASSERT_EQ_MSG(test,
					    memcmp(b, before, sizeof(*b)), 0,
					    "step %d, event %d refused, wrote",
					    i, ev);
		}
	}
	KUNIT_EXPECT_GT(test, fast, 3000U);
	KUNIT_EXPECT_GT(test, refused, 3000U);
}

/*
 * The fast path of a late kvm_exit accounts it exactly as the guest's
 * leaving at the exit's time and then the kvm_exit do, and refuses
 * (changing nothing) where the vCPU is not in guest: random events, and
 * exits whose time is anywhere from before the last event to now.
 */
static void vmlat_acct_owner_late_exit_matches_event(struct kunit *test)
{
	unsigned int fast = 0, refused = 0, step;
	struct vmlat_vcpu_acct *a, *b, *before;
	u64 rng = 11, t = 1000, exit_ns;
	struct vmlat_done done;
	bool hlt;

	a = three_accts(test, t, &b, &before);
	for (step = 0; step < 30000; step++) {
		t += lcg_below(&rng, 500);
		hlt = lcg_below(&rng, 2);
		if (lcg_below(&rng, 3)) {
			/* Anything else, mostly entries back to guest. */
			vmlat_acct_event(a, lcg_below(&rng, 2) ? VMLAT_EV_ENTRY :
					 lcg_below(&rng, VMLAT_NR_EVENTS), hlt,
					 t, &done);
			continue;
		}
		/* From 100 ns before the last event (clamped there) to now. */
		exit_ns = a->since_ns - 100 +
			  lcg_below(&rng, t - a->since_ns + 101);
		memcpy(b, a, sizeof(*a));
		memcpy(before, a, sizeof(*a));
		if (vmlat_acct_owner_late_exit(b, hlt, exit_ns, t)) {
			fast++;
			KUNIT_ASSERT_TRUE_MSG(test,
					      vmlat_acct_left_guest(a, exit_ns,
								    false),
					      "step %u: fast from state %u", step,
					      before->state);
			vmlat_acct_event(a, VMLAT_EV_EXIT, hlt, t, &done);
			KUNIT_ASSERT_EQ_MSG(test, done.kind, VMLAT_DONE_NONE,
					    "step %u", step);
			KUNIT_ASSERT_EQ_MSG(test, memcmp(a, b, sizeof(*a)), 0,
					    "step %u: exit at %llu, now %llu",
					    step, (unsigned long long)exit_ns,
					    (unsigned long long)t);
		} else {
			refused++;
			KUNIT_ASSERT_EQ_MSG(test,
					    memcmp(b, before, sizeof(*b)), 0,
					    "step %u refused, wrote", step);
			KUNIT_ASSERT_FALSE_MSG(test,
					       vmlat_acct_left_guest(b, exit_ns,
								     false),
					       "step %u: refused in guest", step);
			vmlat_acct_event(a, VMLAT_EV_EXIT, hlt, t, &done);
		}
	}
	KUNIT_EXPECT_GT(test, fast, 1000U);
	KUNIT_EXPECT_GT(test, refused, 1000U);
}

/*
 * An event that changes nothing writes nothing (a wake-up of a running
 * vCPU comes from another CPU while its thread writes lock-free).
 */
static void vmlat_acct_noop_writes_nothing(struct kunit *test)
{
	struct vmlat_vcpu_acct a, before;
	struct vmlat_done done;

	vmlat_acct_init(&a, VMLAT_EV_ENTRY, 100);
	memcpy(&before, &a, sizeof(a));
	KUNIT_EXPECT_TRUE(test, vmlat_acct_event_is_noop(&a, VMLAT_EV_WAKEUP));
	vmlat_acct_event(&a, VMLAT_EV_WAKEUP, false, 200, &done);
	KUNIT_EXPECT_EQ(test, memcmp(&a, &before, sizeof(a)), 0);
	KUNIT_EXPECT_EQ(test, done.kind, VMLAT_DONE_NONE);
	/* ... while a switch-in of a running vCPU is noticed. */
	KUNIT_EXPECT_FALSE(test, vmlat_acct_event_is_noop(&a, VMLAT_EV_IN));
	vmlat_acct_event(&a, VMLAT_EV_IN, false, 300, &done);
	KUNIT_EXPECT_EQ(test, a.unexpected, 1ULL);
}

/*
 * The guest leaves only from guest mode: elsewhere (or once the thread
 * ended) vmlat_acct_left_guest() refuses and writes nothing. While its
 * kvm_exit is pending, or once its thread ended, the lock-free fast path
 * leaves the vCPU to the table (the two flags it tests as one word).
 */
static void vmlat_acct_left_guest_only_from_guest(struct kunit *test)
{
	struct vmlat_vcpu_acct a, before;
	struct vmlat_done done;

	vmlat_acct_init(&a, VMLAT_EV_EXIT, 100);
	memcpy(&before, &a, sizeof(a));
	KUNIT_EXPECT_FALSE(test, vmlat_acct_left_guest(&a, 110, false));
	KUNIT_EXPECT_EQ(test, memcmp(&a, &before, sizeof(a)), 0);

	vmlat_acct_event(&a, VMLAT_EV_ENTRY, false, 120, &done);
	KUNIT_EXPECT_TRUE(test, vmlat_acct_left_guest(&a, 130, true));
	KUNIT_EXPECT_FALSE_MSG(test, vmlat_acct_left_guest(&a, 135, false),
			       "left twice");
	memcpy(&before, &a, sizeof(a));
	KUNIT_EXPECT_FALSE(test, vmlat_acct_owner(&a, VMLAT_EV_EXIT, false,
						  140, &done));
	KUNIT_EXPECT_FALSE(test, vmlat_acct_owner(&a, VMLAT_EV_ENTRY, false,
						  140, &done));
	KUNIT_EXPECT_EQ(test, memcmp(&a, &before, sizeof(a)), 0);
	vmlat_acct_event(&a, VMLAT_EV_EXIT, false, 140, &done);
	KUNIT_EXPECT_FALSE(test, a.exit_pending);
	KUNIT_EXPECT_EQ(test, a.unexpected, 0ULL);
	KUNIT_EXPECT_TRUE(test, vmlat_acct_owner(&a, VMLAT_EV_ENTRY, false,
						 150, &done));
	KUNIT_EXPECT_EQ(test, done.ns, 20ULL);

	vmlat_acct_end(&a, 160);
	memcpy(&before, &a, sizeof(a));
	KUNIT_EXPECT_FALSE(test, vmlat_acct_left_guest(&a, 170, false));
	KUNIT_EXPECT_FALSE_MSG(test, vmlat_acct_owner(&a, VMLAT_EV_EXIT,
						      false, 170, &done),
			       "fast path after the thread ended");
	KUNIT_EXPECT_EQ(test, memcmp(&a, &before, sizeof(a)), 0);
}

/*
 * A reset counts from its time on; an exit handled across it keeps its
 * whole host time.
 */
static void vmlat_acct_reset_counts_from_then(struct kunit *test)
{
	u64 times[VMLAT_NR_STATES], observed;
	struct vmlat_vcpu_acct a;
	struct vmlat_done done;

	vmlat_acct_init(&a, VMLAT_EV_ENTRY, 100);
	vmlat_acct_event(&a, VMLAT_EV_EXIT, false, 150, &done);	/* kernel */
	vmlat_acct_reset(&a, 1, 170);
	KUNIT_EXPECT_EQ(test, a.reset_gen, 1U);
	vmlat_acct_snapshot(&a, 200, times, &observed);
	KUNIT_EXPECT_EQ(test, observed, 30ULL);
	KUNIT_EXPECT_EQ(test, times[VMLAT_KERNEL], 30ULL);
	KUNIT_EXPECT_EQ(test, times[VMLAT_GUEST], 0ULL);
	KUNIT_EXPECT_EQ(test, a.exits, 0ULL);
	vmlat_acct_event(&a, VMLAT_EV_ENTRY, false, 210, &done);
	KUNIT_EXPECT_EQ(test, done.kind, VMLAT_DONE_EXIT);
	KUNIT_EXPECT_EQ(test, done.ns, 60ULL);
	KUNIT_EXPECT_EQ(test, a.enters[VMLAT_GUEST], 1ULL);
	/* A reset older than the last event starts from that event. */
	vmlat_acct_reset(&a, 2, 205);
	vmlat_acct_snapshot(&a, 230, times, &observed);
	KUNIT_EXPECT_EQ(test, observed, 20ULL);
	KUNIT_EXPECT_EQ(test, times[VMLAT_GUEST], 20ULL);
}

/* A vCPU whose thread exited keeps its times: its clock stopped. */
/*
 * The wake-up that ends a sleep is remembered (the nested wake-up
 * latencies start there); one of a running vCPU changes nothing.
 */
static void vmlat_acct_remembers_wakeup(struct kunit *test)
{
	struct vmlat_vcpu_acct a;
	struct vmlat_done done;

	vmlat_acct_init(&a, VMLAT_EV_ENTRY, 0);
	vmlat_acct_event(&a, VMLAT_EV_EXIT, true, 10, &done);
	vmlat_acct_event(&a, VMLAT_EV_WAKEUP, false, 12, &done);
	KUNIT_EXPECT_EQ(test, a.woken_ns, 0ULL);
	vmlat_acct_event(&a, VMLAT_EV_OUT_SLEEP, false, 20, &done);
	vmlat_acct_event(&a, VMLAT_EV_WAKEUP, false, 90, &done);
	KUNIT_EXPECT_EQ(test, a.woken_ns, 90ULL);
	vmlat_acct_event(&a, VMLAT_EV_WAKEUP, false, 95, &done);
	KUNIT_EXPECT_EQ(test, a.woken_ns, 90ULL);
	vmlat_acct_event(&a, VMLAT_EV_IN, false, 100, &done);
	vmlat_acct_event(&a, VMLAT_EV_ENTRY, false, 105, &done);
	KUNIT_EXPECT_EQ(test, a.woken_ns, 90ULL);
}

static void vmlat_acct_end_stops_the_clock(struct kunit *test)
{
	u64 times[VMLAT_NR_STATES], observed;
	struct vmlat_vcpu_acct a;
	struct vmlat_done done;

	vmlat_acct_init(&a, VMLAT_EV_ENTRY, 100);
	vmlat_acct_event(&a, VMLAT_EV_EXIT, false, 150, &done);
	vmlat_acct_event(&a, VMLAT_EV_USER_EXIT, false, 170, &done);
	vmlat_acct_end(&a, 200);
	/* Late events (other CPUs) and later reads change nothing. */
	vmlat_acct_event(&a, VMLAT_EV_OUT_SLEEP, false, 300, &done);
	KUNIT_EXPECT_EQ(test, done.kind, VMLAT_DONE_NONE);
	vmlat_acct_end(&a, 400);
	vmlat_acct_snapshot(&a, 10000, times, &observed);
	KUNIT_EXPECT_EQ(test, observed, 100ULL);
	KUNIT_EXPECT_EQ(test, times[VMLAT_GUEST], 50ULL);
	KUNIT_EXPECT_EQ(test, times[VMLAT_KERNEL], 20ULL);
	KUNIT_EXPECT_EQ(test, times[VMLAT_USER], 30ULL);
	KUNIT_EXPECT_EQ(test, times[VMLAT_BLOCKED], 0ULL);
	KUNIT_EXPECT_EQ(test, a.unexpected, 0ULL);
}

static struct kunit_case vmlat_state_cases[] = {
	KUNIT_CASE_PARAM(vmlat_acct_event_scenarios, scenario_gen_params),
	KUNIT_CASE(vmlat_acct_event_counts_entries_and_exits),
	KUNIT_CASE(vmlat_acct_event_random_walk_keeps_partition),
	KUNIT_CASE(vmlat_acct_remembers_wakeup),
	KUNIT_CASE(vmlat_acct_end_stops_the_clock),
	KUNIT_CASE(vmlat_acct_owner_matches_event),
	KUNIT_CASE(vmlat_acct_owner_late_exit_matches_event),
	KUNIT_CASE(vmlat_acct_noop_writes_nothing),
	KUNIT_CASE(vmlat_acct_reset_counts_from_then),
	KUNIT_CASE(vmlat_acct_left_guest_only_from_guest),
	{}
};

static struct kunit_suite vmlat_state_suite = {
	.name = "vmlat_state",
	.test_cases = vmlat_state_cases,
};

kunit_test_suites(&vmlat_state_suite);
