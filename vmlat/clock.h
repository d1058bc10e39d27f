/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmlat's clock: what every probe stamps its events with.
 *
 * Where the host trusts its TSC (constant rate, or still the kernel's
 * clocksource), it is the TSC itself, taken to nanoseconds at the rate it
 * was calibrated at and started at CLOCK_MONOTONIC's value when vmlat was
 * loaded: a TSC read and a multiply, where ktime_get_mono_fast_ns() (the
 * clock of ftrace's "mono" trace clock) reads the timekeeper's latch and
 * calls the clocksource through a pointer, at every kvm_exit, kvm_entry
 * and context switch. Elsewhere it is ktime_get_mono_fast_ns() itself.
 *
 * Both tick at the same rate but for NTP's frequency correction (a few
 * parts per million), so intervals are the same; instants drift apart by
 * that much. What vmlat shows as an instant on the host's clock (a
 * report's start and end) is taken to CLOCK_MONOTONIC when it is made,
 * vmlat_clock_mono(); what it exchanges with a guest (clock sync) is read
 * from CLOCK_MONOTONIC directly.
 */
#ifndef _VMLAT_CLOCK_H
#define _VMLAT_CLOCK_H

#include <linux/jump_label.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <asm/tsc.h>

/* TSC cycles to ns; mult 0: the TSC's rate is not known. */
struct vmlat_clock {
	u64 tsc0;	/* the TSC at load */
	u64 ns0;	/* CLOCK_MONOTONIC then */
	u32 mult;
	u32 shift;
};

extern struct vmlat_clock vmlat_clock;
DECLARE_STATIC_KEY_FALSE(vmlat_clock_tsc);

/*
 * @cycles of the TSC in ns, at its calibrated rate (mult 0: 0): the
 * 128-bit product shifted down, as mul_u64_u32_shr() computes it but in
 * two instructions (its generic form's __int128 makes the probes realign
 * their stack). The result fits in 64 bits: a shift of at most 32 and a
 * 32-bit mult leave a product below 2^96.
 */
static __always_inline u64 vmlat_tsc_ns(u64 cycles)
{
	u64 ns;

	asm ("mulq %[mult]\n\tshrdq %%cl, %%rdx, %%rax"
	     : "=a" (ns)
	     : "a" (cycles), [mult] "rm" ((u64)vmlat_clock.mult),
	       "c" (vmlat_clock.shift)
	     : "rdx", "cc");
	return ns;
}

/*
 * The instant of vmlat's clock at which the TSC read @tsc, a reading
 * taken since load, where the clock is the TSC (vmlat_clock_tsc).
 */
static __always_inline u64 vmlat_clock_at_tsc(u64 tsc)
{
	return vmlat_clock.ns0 + vmlat_tsc_ns(tsc - vmlat_clock.tsc0);
}

/*
 * Now on vmlat's clock, safe in any context. The TSC is read as
 * native_sched_clock() reads it, with RDTSC alone: no LFENCE or RDTSCP to
 * wait for the instructions before it. A probe's instant may then be
 * taken a few tens of cycles early, before loads of its own; what orders
 * its events against other CPUs' (the runqueue lock, the VM exit or
 * entry) still comes first, and an interval never goes negative
 * (vmlat_span()). The scheduler measures run and wait times so. Three
 * probes of every exit round trip stamp their event here.
 */
static __always_inline u64 vmlat_now_ns(void)
{
	if (static_branch_likely(&vmlat_clock_tsc))
		return vmlat_clock_at_tsc(rdtsc());
	return ktime_get_mono_fast_ns();
}

/*
 * The same, the TSC read ordered after the instructions before it: for a
 * reading that must bracket another clock's (vmlat_clock_mono()).
 */
static __always_inline u64 vmlat_now_ns_ordered(void)
{
	if (static_branch_likely(&vmlat_clock_tsc))
		return vmlat_clock_at_tsc(rdtsc_ordered());
	return ktime_get_mono_fast_ns();
}

bool vmlat_tsc_usable(void);
u64 vmlat_tsc_time_ns_mono(u64 tsc, u64 since_ns, u64 now_ns);

/**
 * vmlat_tsc_time_ns() - when the host's TSC read @tsc, on vmlat's clock
 * @tsc:	a host TSC reading, from before now
 * @since_ns:	the earliest instant it may be
 * @now_ns:	vmlat_now_ns() of the caller, just before
 *
 * Where vmlat's clock is the TSC, exactly as vmlat_now_ns() would have
 * read it then, inline: every exit traced late (exit_late.h) reads one.
 * Else the mono clock now less the TSC's advance since, the two read back
 * to back (vmlat_tsc_time_ns_mono()). Not from @now_ns: the caller's own
 * time between reading it and the TSC (tens of microseconds under an
 * emulator) would move the instant that much.
 *
 * Context: any, preemption off (the TSC read is this CPU's).
 * Return: the instant, or 0 if the TSC's rate is not known, the TSC is not
 * trusted (where vmlat's clock is not the TSC), or the instant falls
 * outside [@since_ns, @now_ns].
 */
static __always_inline u64 vmlat_tsc_time_ns(u64 tsc, u64 since_ns,
					     u64 now_ns)
{
	u64 ns;

	if (!static_branch_likely(&vmlat_clock_tsc))
		return vmlat_tsc_time_ns_mono(tsc, since_ns, now_ns);
	/*
	 * vmlat's clock is the TSC itself: the reading is an instant of it,
	 * even where the kernel stopped trusting the TSC since.
	 */
	if ((s64)(tsc - vmlat_clock.tsc0) < 0)	/* before load */
		return 0;
	ns = vmlat_clock_at_tsc(tsc);
	if (ns < since_ns || ns > now_ns)
		return 0;
	return ns;
}
u64 vmlat_clock_mono(u64 ns);
const char *vmlat_clock_name(void);
int vmlat_clock_init(void);

#endif /* _VMLAT_CLOCK_H */
