// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat's clock (clock.h): choosing it at load, and taking its instants
 * to CLOCK_MONOTONIC.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/clocksource.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <asm/cpufeature.h>

#include "clock.h"

/*
 * The longest TSC interval the conversion is exact for to the last ns
 * (clocks_calc_mult_shift()); longer ones lose precision only (the
 * product is 96 bits wide), not range.
 */
#define VMLAT_TSC_PRECISE_S	10

/* The longest a TSC reading may lie back from now (vmlat_tsc_time_ns()). */
#define VMLAT_TSC_BACK_MAX_S	10

struct vmlat_clock vmlat_clock __read_mostly;
DEFINE_STATIC_KEY_FALSE(vmlat_clock_tsc);

/* VMLAT_TSC_BACK_MAX_S in TSC cycles (0: no TSC rate). */
static u64 vmlat_tsc_max __read_mostly;

/**
 * vmlat_tsc_usable() - whether TSC intervals can be taken to ns
 *
 * The TSC ticks at the rate it was calibrated at, as it does where it is
 * constant by design, or where the kernel still trusts it (without a
 * constant TSC, a change of CPU frequency marks it unstable).
 *
 * Return: true if vmlat_tsc_ns() converts TSC intervals.
 */
bool vmlat_tsc_usable(void)
{
	return vmlat_clock.mult && (boot_cpu_has(X86_FEATURE_CONSTANT_TSC) ||
				    !check_tsc_unstable());
}

/*
 * vmlat_tsc_time_ns() where vmlat's clock is not the TSC: the mono clock
 * now less the TSC's advance since, the two read back to back.
 */
u64 vmlat_tsc_time_ns_mono(u64 tsc, u64 since_ns, u64 now_ns)
{
	u64 ns, mono, d;

	if (!vmlat_tsc_usable())
		return 0;
	mono = ktime_get_mono_fast_ns();
	d = rdtsc_ordered() - tsc;
	if (d > vmlat_tsc_max)	/* negative too: after now */
		return 0;
	ns = mono - vmlat_tsc_ns(d);
	if (ns < since_ns || ns > now_ns)
		return 0;
	return ns;
}

/*
 * The pairs of readings vmlat_clock_mono() takes at most, and the span
 * (ns of vmlat's clock) a pair must fit in for it to stop there.
 */
#define VMLAT_MONO_PAIRS	4
#define VMLAT_MONO_PAIR_NS	2000

/**
 * vmlat_clock_mono() - an instant of vmlat's clock on CLOCK_MONOTONIC
 * @ns:	the instant, vmlat_now_ns()
 *
 * Exact on the mono clock. On the TSC one, the offset between the clocks
 * is read now: the mono clock between two readings of vmlat's, taken as
 * their midpoint. An emulator (or an NMI, or a hypervisor below) can stop
 * the CPU between two reads for as long as it likes (0.7 ms has been
 * seen under TCG), which would move the instant that much; so the pair
 * whose readings lie closest together is kept, of a few. Reports, its
 * only callers, are rare.
 *
 * Context: any.
 * Return: CLOCK_MONOTONIC at @ns, as ktime_get_mono_fast_ns() reads it,
 * within half the kept pair's span and the clocks' drift over the
 * instant's age (parts per million of it).
 */
u64 vmlat_clock_mono(u64 ns)
{
	u64 a, b, mono, span, best = U64_MAX, off = 0;
	int i;

	if (!static_branch_likely(&vmlat_clock_tsc))
		return ns;
	for (i = 0; i < VMLAT_MONO_PAIRS && best > VMLAT_MONO_PAIR_NS; i++) {
		a = vmlat_now_ns_ordered();
		mono = ktime_get_mono_fast_ns();
		b = vmlat_now_ns_ordered();
		span = b - a;
		if (span < best) {
			best = span;
			off = mono - (a + span / 2);
		}
	}
	return ns + off;
}

/*
 * The clock the status file names: "tsc", "tsc-unstable" (the kernel
 * stopped trusting it since: instants of different CPUs may be skewed),
 * or "mono".
 */
const char *vmlat_clock_name(void)
{
	if (!static_branch_likely(&vmlat_clock_tsc))
		return "mono";
	return check_tsc_unstable() ? "tsc-unstable" : "tsc";
}

/*
 * Context: process context, before any probe is attached. The TSC is
 * chosen only where the kernel found it synchronised across CPUs and
 * still trusts it. One found unstable later stays: vmlat's clock does
 * not jump; the status file says so.
 */
int vmlat_clock_init(void)
{
	unsigned long flags;

	if (boot_cpu_has(X86_FEATURE_TSC) && tsc_khz)
		clocks_calc_mult_shift(&vmlat_clock.mult, &vmlat_clock.shift,
				       tsc_khz, NSEC_PER_MSEC,
				       VMLAT_TSC_PRECISE_S);
	if (vmlat_clock.mult)
		vmlat_tsc_max = (u64)tsc_khz * MSEC_PER_SEC *
				VMLAT_TSC_BACK_MAX_S;
	if (!vmlat_clock.mult || check_tsc_unstable()) {
		pr_info("the TSC is not the host's clock: stamping events with ktime_get_mono_fast_ns()\n");
		return 0;
	}
	local_irq_save(flags);
	vmlat_clock.ns0 = ktime_get_mono_fast_ns();
	vmlat_clock.tsc0 = rdtsc_ordered();
	local_irq_restore(flags);
	static_branch_enable(&vmlat_clock_tsc);
	return 0;
}
