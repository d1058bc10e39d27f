// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/halt.c, a vCPU's halts and halt-polling, fed
 * as vmlat feeds them: the state machine (state.c) sees the exits and the
 * switch-outs asleep, KVM's kvm_halt_poll_ns and kvm_vcpu_wakeup end each
 * halt. A poll that ended on CPU is a hit, all of it polling; one that
 * ended in a sleep is a miss, polling up to the sleep; a halt is polled
 * only with the window it began with open and the guest's consent.
 */
#include <kunit/test.h>

#include "halt.h"
#include "kunit_lcg.h"
#include "state.h"

static struct vmlat_vcpu_acct a;

static void ev(enum vmlat_event e, bool hlt, u64 now)
{
	struct vmlat_done done;

	vmlat_acct_event(&a, e, hlt, now, &done);
}

/* KVM ends a halt at @now that lasted @halt_ns. */
static u64 end(u64 now, u64 halt_ns, bool waited, u32 window, bool may_poll)
{
	struct vmlat_halt_end e = {
		.now_ns = now, .halt_ns = halt_ns, .waited = waited,
		.valid = true, .window_ns = window, .may_poll = may_poll,
		.woken_ns = a.woken_ns,
	};

	return vmlat_halt_ended(&a.halt, &e);
}

/* A vCPU in the guest at 0, its HLT exit at @exit_ns. */
static void halt_exit(u64 exit_ns)
{
	vmlat_acct_init(&a, VMLAT_EV_ENTRY, 0);
	ev(VMLAT_EV_EXIT, true, exit_ns);
}

/* The event came while it polled: a hit, all of the halt on CPU. */
static void vmlat_halt_poll_hit(struct kunit *test)
{
	halt_exit(100);
	KUNIT_EXPECT_EQ(test, end(180, 70, false, 10000, true), 70ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.halts, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.polled, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.hits, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.hit_ns, 70ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.miss_ns, 0ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.slept, 0ULL);
}

/* It polled, slept, was woken: the poll up to the sleep was a miss. */
static void vmlat_halt_poll_miss(struct kunit *test)
{
	halt_exit(100);
	/* the halt began at 110 */
	ev(VMLAT_EV_OUT_SLEEP, false, 160);
	KUNIT_EXPECT_EQ(test, a.state, (u8)VMLAT_IDLE);
	ev(VMLAT_EV_WAKEUP, false, 400);
	ev(VMLAT_EV_IN, false, 450);
	KUNIT_EXPECT_EQ(test, end(470, 360, true, 10000, true), 50ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.polled, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.hits, 0ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.miss_ns, 50ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.slept, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.slept_ns, 310ULL);
	/* What a hit saves: from the wake-up to the halt's end. */
	KUNIT_EXPECT_EQ(test, a.halt.s.woken, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.wake_ns, 70ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.unseen, 0ULL);
}

/* Woken before it was off CPU (TASK_WAKING): asleep and woken at once. */
static void vmlat_halt_woken_as_it_slept(struct kunit *test)
{
	halt_exit(100);
	ev(VMLAT_EV_OUT_WOKEN, false, 160);
	ev(VMLAT_EV_IN, false, 200);
	KUNIT_EXPECT_EQ(test, end(220, 110, true, 10000, true), 50ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.slept_ns, 60ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.woken, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.wake_ns, 60ULL);
}

/* A closed window, or the guest's MSR_KVM_POLL_CONTROL: no poll. */
static void vmlat_halt_not_polled(struct kunit *test)
{
	halt_exit(100);
	KUNIT_EXPECT_EQ(test, end(120, 10, false, 0, true), 0ULL);
	ev(VMLAT_EV_OUT_SLEEP, false, 130);
	ev(VMLAT_EV_WAKEUP, false, 300);
	ev(VMLAT_EV_IN, false, 310);
	KUNIT_EXPECT_EQ(test, end(320, 195, true, 10000, false), 0ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.halts, 2ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.polled, 0ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.hits, 0ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.hit_ns + a.halt.s.miss_ns, 0ULL);
	/* Slept all the same: its sleep and wake-up count. */
	KUNIT_EXPECT_EQ(test, a.halt.s.slept, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.slept_ns, 190ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.wake_ns, 20ULL);
}

/*
 * KVM changes the window after the halt, before kvm_vcpu_wakeup: the halt
 * had the old one. Shrunk to 0, it had polled; grown from 0, it had not.
 */
static void vmlat_halt_window_before_change(struct kunit *test)
{
	halt_exit(100);
	vmlat_halt_window(&a.halt, false, 200000);
	KUNIT_EXPECT_EQ(test, end(150, 40, false, 0, true), 40ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.hits, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.shrinks, 1ULL);

	vmlat_halt_window(&a.halt, true, 0);
	KUNIT_EXPECT_EQ(test, end(200, 40, false, 10000, true), 0ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.hits, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.polled, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.grows, 1ULL);

	/* The change was this halt's only: the next reads the window. */
	KUNIT_EXPECT_EQ(test, end(300, 40, false, 10000, true), 40ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.polled, 2ULL);
}

/*
 * A sleep that is not the halt's: before the HLT exit (a new exit forgets
 * it), after another exit, or in the VMM (a halt KVM begins again on the
 * next KVM_RUN): unseen, its poll and sleep in no sum.
 */
static void vmlat_halt_other_sleeps(struct kunit *test)
{
	vmlat_acct_init(&a, VMLAT_EV_EXIT, 0);
	ev(VMLAT_EV_OUT_SLEEP, false, 10);
	ev(VMLAT_EV_WAKEUP, false, 20);
	ev(VMLAT_EV_IN, false, 30);
	ev(VMLAT_EV_ENTRY, false, 40);
	ev(VMLAT_EV_EXIT, true, 100);
	ev(VMLAT_EV_OUT_SLEEP, false, 150);
	ev(VMLAT_EV_WAKEUP, false, 300);
	ev(VMLAT_EV_IN, false, 310);
	KUNIT_EXPECT_EQ(test, end(320, 200, true, 10000, true), 30ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.miss_ns, 30ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.unseen, 0ULL);

	/* asleep at 150 was that halt's: the next one, from 330, unseen */
	KUNIT_EXPECT_EQ(test, end(400, 70, true, 10000, true), 0ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.slept, 2ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.unseen, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.polled, 2ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.miss_ns, 30ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.slept_ns, 170ULL);

	/* Asleep after an exit that was no HLT: a block, no halt's. */
	ev(VMLAT_EV_ENTRY, false, 410);
	ev(VMLAT_EV_EXIT, false, 420);
	ev(VMLAT_EV_OUT_SLEEP, false, 430);
	KUNIT_EXPECT_EQ(test, a.state, (u8)VMLAT_BLOCKED);
	ev(VMLAT_EV_WAKEUP, false, 440);
	ev(VMLAT_EV_IN, false, 450);
	KUNIT_EXPECT_EQ(test, end(560, 60, true, 10000, true), 0ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.unseen, 2ULL);

	/* A HLT exit, then asleep in the VMM: no halt's either. */
	ev(VMLAT_EV_ENTRY, false, 570);
	ev(VMLAT_EV_EXIT, true, 580);
	ev(VMLAT_EV_USER_EXIT, false, 590);
	ev(VMLAT_EV_OUT_SLEEP, false, 600);
	ev(VMLAT_EV_WAKEUP, false, 610);
	ev(VMLAT_EV_IN, false, 620);
	KUNIT_EXPECT_EQ(test, end(700, 60, true, 10000, true), 0ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.unseen, 3ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.slept_ns, 170ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.miss_ns, 30ULL);
}

/*
 * A halt that slept at once, KVM's clock read at its beginning a little
 * after vmlat's at its sleep: no poll, not a negative one.
 */
static void vmlat_halt_clocks_apart(struct kunit *test)
{
	halt_exit(100);
	ev(VMLAT_EV_OUT_SLEEP, false, 120);
	ev(VMLAT_EV_WAKEUP, false, 300);
	ev(VMLAT_EV_IN, false, 310);
	/* began at 125 by KVM's length */
	KUNIT_EXPECT_EQ(test, end(320, 195, true, 10000, true), 0ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.polled, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.miss_ns, 0ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.slept_ns, 200ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.unseen, 0ULL);
}

/* A reset starts the counts again, not the halt under way. */
static void vmlat_halt_reset_keeps_halt(struct kunit *test)
{
	halt_exit(100);
	KUNIT_EXPECT_EQ(test, end(150, 40, false, 10000, true), 40ULL);
	ev(VMLAT_EV_ENTRY, false, 160);
	ev(VMLAT_EV_EXIT, true, 200);
	ev(VMLAT_EV_OUT_SLEEP, false, 230);
	vmlat_acct_reset(&a, 1, 240);
	KUNIT_EXPECT_EQ(test, a.halt.s.halts, 0ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.hit_ns, 0ULL);
	ev(VMLAT_EV_WAKEUP, false, 300);
	ev(VMLAT_EV_IN, false, 310);
	KUNIT_EXPECT_EQ(test, end(320, 110, true, 10000, true), 20ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.halts, 1ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.miss_ns, 20ULL);
}

/* An invalid wake-up (no event: a signal) counts, and a VM sums. */
static void vmlat_halt_invalid_and_sum(struct kunit *test)
{
	struct vmlat_halt_stats sum = {};
	struct vmlat_halt_end e = {
		.now_ns = 500, .halt_ns = 100, .waited = false, .valid = false,
		.window_ns = 10000, .may_poll = true,
	};

	halt_exit(100);
	vmlat_halt_ended(&a.halt, &e);
	KUNIT_EXPECT_EQ(test, a.halt.s.invalid, 1ULL);
	vmlat_halt_add(&sum, &a.halt.s);
	vmlat_halt_add(&sum, &a.halt.s);
	KUNIT_EXPECT_EQ(test, sum.halts, 2ULL);
	KUNIT_EXPECT_EQ(test, sum.invalid, 2ULL);
	KUNIT_EXPECT_EQ(test, sum.hit_ns, 200ULL);
	/* A halt longer than the clock has run (a clock's step): bounded. */
	e.halt_ns = 1000;
	KUNIT_EXPECT_EQ(test, vmlat_halt_ended(&a.halt, &e), 500ULL);
}

/*
 * Random halts, each with a known poll, sleep and wake-up, through the
 * state machine as vmlat feeds it: the sums are the halts' own, and every
 * halt is a hit, a miss or not polled.
 */
static void vmlat_halt_random_conserved(struct kunit *test)
{
	u64 t = 1000, hit_ns = 0, miss_ns = 0, slept_ns = 0, wake_ns = 0;
	u64 polled = 0, hits = 0, slept = 0;
	u64 seed = 7;
	int i;

	vmlat_acct_init(&a, VMLAT_EV_ENTRY, t);
	for (i = 0; i < 2000; i++) {
		u64 exit = t + 1 + lcg_below(&seed, 100);
		u64 start = exit + lcg_below(&seed, 20);
		u64 poll = lcg_below(&seed, 300);
		bool open = lcg_below(&seed, 4);
		bool sleeps = lcg_below(&seed, 2);
		u64 asleep = 0, woke = 0, stop;

		ev(VMLAT_EV_EXIT, true, exit);
		if (!open)
			poll = 0;
		if (sleeps) {
			asleep = start + poll + 1;
			woke = asleep + 1 + lcg_below(&seed, 500);
			stop = woke + 1 + lcg_below(&seed, 50);
			ev(VMLAT_EV_OUT_SLEEP, false, asleep);
			ev(VMLAT_EV_WAKEUP, false, woke);
			ev(VMLAT_EV_IN, false, stop - 1);
			slept++;
			slept_ns += stop - asleep;
			wake_ns += stop - woke;
			if (open)
				miss_ns += asleep - start;
		} else {
			stop = start + poll;
			if (open) {
				hits++;
				hit_ns += poll;
			}
		}
		polled += open;
		end(stop, stop - start, sleeps, open ? 10000 : 0, true);
		t = stop + 1;
		ev(VMLAT_EV_ENTRY, false, t);
	}
	KUNIT_EXPECT_EQ(test, a.halt.s.halts, 2000ULL);
	KUNIT_EXPECT_EQ(test, a.halt.s.polled, polled);
	KUNIT_EXPECT_EQ(test, a.halt.s.hits, hits);
	KUNIT_EXPECT_EQ(test, a.halt.s.hit_ns, hit_ns);
	KUNIT_EXPECT_EQ(test, a.halt.s.miss_ns, miss_ns);
	KUNIT_EXPECT_EQ(test, a.halt.s.slept, slept);
	KUNIT_EXPECT_EQ(test, a.halt.s.slept_ns, slept_ns);
	KUNIT_EXPECT_EQ(test, a.halt.s.woken, slept);
	KUNIT_EXPECT_EQ(test, a.halt.s.wake_ns, wake_ns);
	KUNIT_EXPECT_EQ(test, a.halt.s.unseen, 0ULL);
	KUNIT_EXPECT_EQ(test, a.unexpected, 0ULL);
}

static struct kunit_case vmlat_halt_cases[] = {
	KUNIT_CASE(vmlat_halt_poll_hit),
	KUNIT_CASE(vmlat_halt_poll_miss),
	KUNIT_CASE(vmlat_halt_woken_as_it_slept),
	KUNIT_CASE(vmlat_halt_not_polled),
	KUNIT_CASE(vmlat_halt_window_before_change),
	KUNIT_CASE(vmlat_halt_other_sleeps),
	KUNIT_CASE(vmlat_halt_clocks_apart),
	KUNIT_CASE(vmlat_halt_reset_keeps_halt),
	KUNIT_CASE(vmlat_halt_invalid_and_sum),
	KUNIT_CASE(vmlat_halt_random_conserved),
	{}
};

static struct kunit_suite vmlat_halt_suite = {
	.name = "vmlat_halt",
	.test_cases = vmlat_halt_cases,
};

kunit_test_suites(&vmlat_halt_suite);
