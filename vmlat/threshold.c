// SPDX-License-Identifier: GPL-2.0
/*
 * Latency thresholds, reports and trace snapshots.
 *
 * When a completed preemption, wait or exit handling lasts at least its
 * threshold, the probe that completed it calls vmlat_report(): the report
 * goes into a bounded ring (the "reports" file) and, unless the last
 * snapshot is less than snapshot_interval_ms old, a snapshot is queued.
 * Probes run in the scheduler with runqueue locks held, where neither a
 * work item can be queued (waking a worker takes runqueue locks) nor a
 * trace buffer swapped, so an irq_work queues the work, and the work, in
 * process context, emits the vmlat_threshold trace event (the place for
 * "snapshot" and "traceoff" triggers of any tracing instance) and then,
 * as the "snapshot" knob says:
 *   swap	swaps the main trace buffer with its snapshot buffer;
 *   freeze	turns the main trace buffer off (tracing_on reads 0), as
 *		osnoise's stop_tracing_us does;
 *   event	nothing more: the triggers set on vmlat_threshold decide.
 * Thresholds all 0 (the default): the probes' only cost is a static
 * branch that is never taken.
 *
 * vmlat does not allocate the snapshot buffer: the exported functions that
 * do (tracing_alloc_snapshot(), tracing_snapshot_alloc()) WARN when the
 * allocation fails, and the one that does not is private to the tracing
 * core. The user allocates it, through tracefs ("echo 1 > snapshot", or
 * the alloc_snapshot boot parameter), where a failure is a plain ENOMEM,
 * and may free it again at any time. Nor can vmlat ask whether it exists.
 * It learns it from tracing_snapshot() itself: without a snapshot buffer,
 * that writes "*** SNAPSHOT NOT ALLOCATED ***" into the main buffer and
 * turns it off, so a main buffer that was on before the call and is off
 * after it had none. The report then says "failed" and a message says
 * what to do. A buffer already off is not swapped at all: it holds
 * nothing newer, and the call could not tell whether it swapped.
 * Kernels without CONFIG_TRACER_SNAPSHOT refuse mode swap, and start in
 * mode event.
 *
 * The knobs (thresholds, snapshot mode and interval) are set through
 * vmlat_report_set_*(), which refuse a bad value with -EINVAL and change
 * nothing; debugfs/thresholds.c shows them and the ring.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/irq_work.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "threshold.h"
#include "vmlat_trace.h"

const char *const vmlat_snap_mode_names[VMLAT_NR_SNAP_MODES] = {
	[VMLAT_SNAP_MODE_SWAP]	= "swap",
	[VMLAT_SNAP_MODE_FREEZE]	= "freeze",
	[VMLAT_SNAP_MODE_EVENT]	= "event",
};

DEFINE_STATIC_KEY_FALSE(vmlat_thresholds_on);
u64 vmlat_threshold_ns[VMLAT_NR_REPORT_KINDS];

/* Threshold writers, whom the static key follows; probes use READ_ONCE(). */
static DEFINE_MUTEX(vmlat_cfg_mutex);
static int vmlat_snap_mode = VMLAT_HAVE_TRACE_SNAPSHOT ?
			    VMLAT_SNAP_MODE_SWAP : VMLAT_SNAP_MODE_EVENT;
static u64 vmlat_snap_interval_ns = 1000 * NSEC_PER_MSEC;

/*
 * The ring of the latest reports, and the report a snapshot is pending
 * for (only one can be: the next is at least an interval later, or the
 * pending one still waits and the newcomer is rate-limited).
 */
static DEFINE_RAW_SPINLOCK(vmlat_ring_lock);
static struct vmlat_report vmlat_ring[VMLAT_REPORTS];
static u64 vmlat_ring_seq;		/* reports made: the last seq */
static u64 vmlat_last_snap_ns;		/* when the last snapshot was taken */
static bool vmlat_snap_pending;
static struct vmlat_report vmlat_pending;
static u64 vmlat_snaps_taken;
static u64 vmlat_snaps_limited;
static u64 vmlat_snaps_failed;
static u64 vmlat_report_gen;		/* bumped by every reset */

static void vmlat_snap_workfn(struct work_struct *work);
static DECLARE_WORK(vmlat_snap_work, vmlat_snap_workfn);

static void vmlat_snap_irq_workfn(struct irq_work *iw)
{
	schedule_work(&vmlat_snap_work);
}

static struct irq_work vmlat_snap_irq_work =
	VMLAT_IRQ_WORK_INIT(vmlat_snap_irq_workfn);

/**
 * vmlat_report() - an interval crossed its threshold
 * @r:	the report; seq and snap are filled in here
 *
 * Context: any probe (runqueue locks may be held, IRQs may be off). Takes
 * a raw spinlock briefly; queues an irq_work at most once per interval.
 */
void vmlat_report(struct vmlat_report *r)
{
	unsigned long flags;
	bool queue = false;
	s64 since_last;

	raw_spin_lock_irqsave(&vmlat_ring_lock, flags);
	r->seq = ++vmlat_ring_seq;
	/*
	 * Measured from when the last snapshot was taken, not queued: the
	 * work runs after a varying delay, and it is the snapshots that are
	 * to be spaced.
	 */
	since_last = (s64)(r->end_ns - vmlat_last_snap_ns);
	if (vmlat_snap_pending || (vmlat_last_snap_ns &&
				   since_last < (s64)READ_ONCE(vmlat_snap_interval_ns))) {
		r->snap = VMLAT_SNAP_LIMITED;
		vmlat_snaps_limited++;
	} else {
		r->snap = VMLAT_SNAP_QUEUED;
		vmlat_snap_pending = true;
		vmlat_pending = *r;
		queue = true;
	}
	vmlat_ring[(r->seq - 1) % VMLAT_REPORTS] = *r;
	raw_spin_unlock_irqrestore(&vmlat_ring_lock, flags);

	if (queue)
		irq_work_queue(&vmlat_snap_irq_work);
}

/*
 * Swap the main trace buffer with its snapshot buffer. Return false, with
 * a message, if there was no swap: the buffer was off, or it had no
 * snapshot buffer (tracing_snapshot() turned it off then).
 */
static bool vmlat_snap_swap(void)
{
	if (!VMLAT_HAVE_TRACE_SNAPSHOT)
		return false;
	if (!tracing_is_on()) {
		pr_warn_ratelimited("snapshot: the main trace buffer is off, nothing swapped (echo 1 > /sys/kernel/tracing/tracing_on traces again)\n");
		return false;
	}
	tracing_snapshot();
	if (!tracing_is_on()) {
		pr_warn_ratelimited("snapshot: no snapshot buffer, so the kernel stopped the main trace buffer: echo 1 > /sys/kernel/tracing/snapshot allocates one (or write freeze or event to snapshot)\n");
		return false;
	}
	return true;
}

static void vmlat_snap_workfn(struct work_struct *work)
{
	struct vmlat_report r;
	unsigned long flags;
	struct vmlat_report *slot;
	bool done = true;
	u64 gen;

	raw_spin_lock_irqsave(&vmlat_ring_lock, flags);
	if (!vmlat_snap_pending) {	/* reset meanwhile */
		raw_spin_unlock_irqrestore(&vmlat_ring_lock, flags);
		return;
	}
	r = vmlat_pending;
	gen = vmlat_report_gen;
	raw_spin_unlock_irqrestore(&vmlat_ring_lock, flags);

	/* First the event, so that a swapped buffer holds it too. */
	trace_vmlat_threshold(&r);
	switch (READ_ONCE(vmlat_snap_mode)) {
	case VMLAT_SNAP_MODE_SWAP:
		done = vmlat_snap_swap();
		break;
	case VMLAT_SNAP_MODE_FREEZE:
		tracing_off();
		break;
	default:
		break;
	}

	raw_spin_lock_irqsave(&vmlat_ring_lock, flags);
	if (gen != vmlat_report_gen) {
		/*
		 * Reset while the snapshot was taken: it forgot this report,
		 * and a pending flag or time set now would rate-limit reports
		 * made after it.
		 */
		raw_spin_unlock_irqrestore(&vmlat_ring_lock, flags);
		return;
	}
	slot = &vmlat_ring[(r.seq - 1) % VMLAT_REPORTS];
	if (slot->seq == r.seq)
		slot->snap = done ? VMLAT_SNAP_TAKEN : VMLAT_SNAP_FAILED;
	if (done)
		vmlat_snaps_taken++;
	else
		vmlat_snaps_failed++;
	vmlat_snap_pending = false;
	vmlat_last_snap_ns = ktime_get_mono_fast_ns();	/* as reports' */
	raw_spin_unlock_irqrestore(&vmlat_ring_lock, flags);
}

/**
 * vmlat_report_reset() - forget every report
 *
 * Context: process context.
 */
void vmlat_report_reset(void)
{
	raw_spin_lock_irq(&vmlat_ring_lock);
	memset(vmlat_ring, 0, sizeof(vmlat_ring));
	vmlat_ring_seq = 0;
	vmlat_last_snap_ns = 0;
	vmlat_snap_pending = false;
	vmlat_snaps_taken = 0;
	vmlat_snaps_limited = 0;
	vmlat_snaps_failed = 0;
	vmlat_report_gen++;
	raw_spin_unlock_irq(&vmlat_ring_lock);
}

/**
 * vmlat_report_exit() - wait for a pending snapshot to finish
 *
 * Context: process context, after every probe is detached.
 */
void vmlat_report_exit(void)
{
	irq_work_sync(&vmlat_snap_irq_work);
	cancel_work_sync(&vmlat_snap_work);
	if (static_key_enabled(&vmlat_thresholds_on))
		static_branch_disable(&vmlat_thresholds_on);
}

/* ---- knobs ------------------------------------------------------------ */

/* Turn the probes' threshold check on iff a threshold is set. */
static void thresholds_update_key(void)
{
	bool on = false;
	int i;

	lockdep_assert_held(&vmlat_cfg_mutex);
	for (i = 0; i < VMLAT_NR_REPORT_KINDS; i++)
		on |= READ_ONCE(vmlat_threshold_ns[i]) != 0;
	if (on && !static_key_enabled(&vmlat_thresholds_on))
		static_branch_enable(&vmlat_thresholds_on);
	else if (!on && static_key_enabled(&vmlat_thresholds_on))
		static_branch_disable(&vmlat_thresholds_on);
}

/**
 * vmlat_report_set_threshold() - report intervals of @kind from @us on
 * @kind:	enum vmlat_hist_kind, or VMLAT_REPORT_IRQ
 * @us:		0 (off) .. VMLAT_THRESHOLD_MAX_US
 *
 * Context: process context.
 * Return: 0, or -EINVAL for a value out of range (nothing changed then).
 */
int vmlat_report_set_threshold(unsigned int kind, u64 us)
{
	if (us > VMLAT_THRESHOLD_MAX_US)
		return -EINVAL;
	mutex_lock(&vmlat_cfg_mutex);
	WRITE_ONCE(vmlat_threshold_ns[kind], us * NSEC_PER_USEC);
	thresholds_update_key();
	mutex_unlock(&vmlat_cfg_mutex);
	return 0;
}

u64 vmlat_report_threshold_us(unsigned int kind)
{
	return READ_ONCE(vmlat_threshold_ns[kind]) / NSEC_PER_USEC;
}

/**
 * vmlat_report_set_snap_mode() - what a report's snapshot does
 * @mode:	enum vmlat_snap_mode
 *
 * Swap mode needs the snapshot buffer, which the user allocates (see the
 * top of this file): it is not checked for here, as it can be freed again
 * at any time anyway.
 *
 * Context: process context.
 * Return: 0, -EINVAL, or -EOPNOTSUPP for swap on a kernel without trace
 * snapshots (nothing changed then).
 */
int vmlat_report_set_snap_mode(int mode)
{
	if (mode < 0 || mode >= VMLAT_NR_SNAP_MODES)
		return -EINVAL;
	if (mode == VMLAT_SNAP_MODE_SWAP && !VMLAT_HAVE_TRACE_SNAPSHOT)
		return -EOPNOTSUPP;
	WRITE_ONCE(vmlat_snap_mode, mode);
	return 0;
}

int vmlat_report_snap_mode(void)
{
	return READ_ONCE(vmlat_snap_mode);
}

/**
 * vmlat_report_set_interval_ms() - the least time between two snapshots
 * @ms:	1 .. VMLAT_INTERVAL_MAX_MS
 *
 * Return: 0 or -EINVAL.
 */
int vmlat_report_set_interval_ms(u64 ms)
{
	if (ms < 1 || ms > VMLAT_INTERVAL_MAX_MS)
		return -EINVAL;
	WRITE_ONCE(vmlat_snap_interval_ns, ms * NSEC_PER_MSEC);
	return 0;
}

u64 vmlat_report_interval_ms(void)
{
	return READ_ONCE(vmlat_snap_interval_ns) / NSEC_PER_MSEC;
}

/**
 * vmlat_report_copy() - the reports kept, and the snapshot counters
 * @ring:	VMLAT_REPORTS entries: report number n is at (n - 1) %
 *		VMLAT_REPORTS
 * @seq:	set to the number of the last report (0: none)
 * @taken:	set to the snapshots taken
 * @limited:	set to the snapshots rate-limited
 * @failed:	set to the swaps that could not be made
 *
 * Context: process context.
 */
void vmlat_report_copy(struct vmlat_report *ring, u64 *seq, u64 *taken,
		       u64 *limited, u64 *failed)
{
	raw_spin_lock_irq(&vmlat_ring_lock);
	memcpy(ring, vmlat_ring, sizeof(vmlat_ring));
	*seq = vmlat_ring_seq;
	*taken = vmlat_snaps_taken;
	*limited = vmlat_snaps_limited;
	*failed = vmlat_snaps_failed;
	raw_spin_unlock_irq(&vmlat_ring_lock);
}
