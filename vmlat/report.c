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
 * Knobs (debugfs, 0600): threshold_preempt_us, threshold_wait_us,
 * threshold_exit_us (0: off, up to 10 s), snapshot (swap|freeze|event),
 * snapshot_interval_ms (1 ms .. 1 h). A bad value is refused with
 * -EINVAL and a message saying what is allowed, and changes nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/irq_work.h>
#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "report.h"
#include "vmlat.h"
#include "vmlat_trace.h"

/*
 * Exported by kernel/trace/trace.c in every kernel vmlat supports (6.1,
 * 6.12), declared only in its private trace.h: allocates the main
 * buffer's snapshot buffer without taking a snapshot (the public
 * tracing_snapshot_alloc() also swaps at once).
 */
int tracing_alloc_snapshot(void);

enum vmlat_snap_mode {
	VMLAT_MODE_SWAP,
	VMLAT_MODE_FREEZE,
	VMLAT_MODE_EVENT,
	VMLAT_NR_MODES
};

static const char *const vmlat_mode_names[VMLAT_NR_MODES] = {
	[VMLAT_MODE_SWAP]	= "swap",
	[VMLAT_MODE_FREEZE]	= "freeze",
	[VMLAT_MODE_EVENT]	= "event",
};

#define VMLAT_INTERVAL_MAX_MS	(3600ULL * MSEC_PER_SEC)

DEFINE_STATIC_KEY_FALSE(vmlat_thresholds_on);
u64 vmlat_threshold_ns[VMLAT_NR_HIST_KINDS];

/* Knob writers; the probes read the knobs with READ_ONCE(). */
static DEFINE_MUTEX(vmlat_cfg_mutex);
static int vmlat_snap_mode = VMLAT_MODE_SWAP;
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

static void vmlat_snap_workfn(struct work_struct *work);
static DECLARE_WORK(vmlat_snap_work, vmlat_snap_workfn);

static void vmlat_snap_irq_workfn(struct irq_work *iw)
{
	schedule_work(&vmlat_snap_work);
}

static struct irq_work vmlat_snap_irq_work =
	IRQ_WORK_INIT(vmlat_snap_irq_workfn);

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

static void vmlat_snap_workfn(struct work_struct *work)
{
	struct vmlat_report r;
	unsigned long flags;
	struct vmlat_report *slot;

	raw_spin_lock_irqsave(&vmlat_ring_lock, flags);
	if (!vmlat_snap_pending) {	/* reset meanwhile */
		raw_spin_unlock_irqrestore(&vmlat_ring_lock, flags);
		return;
	}
	r = vmlat_pending;
	raw_spin_unlock_irqrestore(&vmlat_ring_lock, flags);

	/* First the event, so that a swapped buffer holds it too. */
	trace_vmlat_threshold(&r);
	mutex_lock(&vmlat_cfg_mutex);
	switch (vmlat_snap_mode) {
	case VMLAT_MODE_SWAP:
		tracing_snapshot();
		break;
	case VMLAT_MODE_FREEZE:
		tracing_off();
		break;
	default:
		break;
	}
	mutex_unlock(&vmlat_cfg_mutex);

	raw_spin_lock_irqsave(&vmlat_ring_lock, flags);
	slot = &vmlat_ring[(r.seq - 1) % VMLAT_REPORTS];
	if (slot->seq == r.seq)
		slot->snap = VMLAT_SNAP_TAKEN;
	vmlat_snaps_taken++;
	vmlat_snap_pending = false;
	vmlat_last_snap_ns = vmlat_now_ns();
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

/* ---- debugfs ---------------------------------------------------------- */

static const char *const vmlat_snap_names[] = {
	[VMLAT_SNAP_QUEUED]	= "queued",
	[VMLAT_SNAP_TAKEN]	= "taken",
	[VMLAT_SNAP_LIMITED]	= "limited",
};

static const char *const vmlat_by_names[] = {
	[VMLAT_BY_HOST]		= "host",
	[VMLAT_BY_VM]		= "vm",
	[VMLAT_BY_SAME_VM]	= "same_vm",
	[VMLAT_BY_NONE]		= "-",
};

static void report_show_one(struct seq_file *m, const struct vmlat_report *r)
{
	const char *reason = "-";
	int slot;

	if (r->kind == VMLAT_HIST_EXIT) {
		slot = r->isa ? vmlat_exit_slot(r->isa, r->exit_reason) : -1;
		reason = slot >= 0 ? vmlat_exit_slot_name(slot) : "undecoded";
	}
	seq_printf(m, "%-6llu %-7s %-7d ", r->seq,
		   vmlat_hist_kind_names[r->kind], r->vm_pid);
	vmlat_seq_comm(m, r->vm_comm);
	seq_printf(m, " %-4d %-3d %-12llu %-16llu %-16llu %-20s %-7s %-7d ",
		   r->vcpu, r->cpu, r->duration_ns, r->start_ns, r->end_ns,
		   reason, vmlat_by_names[r->by.kind], r->by.pid);
	vmlat_seq_comm(m, r->by.comm);
	seq_printf(m, " %-7d %-5d %s\n", r->by.vm_pid, r->by.vcpu,
		   vmlat_snap_names[r->snap]);
}

static int reports_show(struct seq_file *m, void *unused)
{
	struct vmlat_report *ring;
	u64 seq, taken, limited, first;
	u64 i;

	ring = kmalloc(sizeof(vmlat_ring), GFP_KERNEL);
	if (!ring)
		return -ENOMEM;
	raw_spin_lock_irq(&vmlat_ring_lock);
	memcpy(ring, vmlat_ring, sizeof(vmlat_ring));
	seq = vmlat_ring_seq;
	taken = vmlat_snaps_taken;
	limited = vmlat_snaps_limited;
	raw_spin_unlock_irq(&vmlat_ring_lock);

	first = seq > VMLAT_REPORTS ? seq - VMLAT_REPORTS + 1 : 1;
	seq_printf(m, "# reports %llu (the last %d kept), snapshots taken %llu, rate-limited %llu\n",
		   seq, VMLAT_REPORTS, taken, limited);
	seq_puts(m, "# seq kind vm_pid vm_comm vcpu cpu duration_ns start_ns end_ns exit_reason by by_pid by_comm by_vm_pid by_vcpu snapshot\n");
	for (i = first; i <= seq; i++)
		report_show_one(m, &ring[(i - 1) % VMLAT_REPORTS]);
	kfree(ring);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(reports);

/*
 * Reads a knob value written from userspace into @buf (NUL-terminated,
 * trailing newline stripped). Returns 0 or -EINVAL/-EFAULT.
 */
static int knob_read(const char __user *ubuf, size_t count, char *buf,
		     size_t size)
{
	if (!count || count >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	strim(buf);
	return 0;
}

/* Turn the probes' threshold check on iff a threshold is set. */
static void thresholds_update_key(void)
{
	bool on = false;
	int i;

	lockdep_assert_held(&vmlat_cfg_mutex);
	for (i = 0; i < VMLAT_NR_HIST_KINDS; i++)
		on |= READ_ONCE(vmlat_threshold_ns[i]) != 0;
	if (on && !static_key_enabled(&vmlat_thresholds_on))
		static_branch_enable(&vmlat_thresholds_on);
	else if (!on && static_key_enabled(&vmlat_thresholds_on))
		static_branch_disable(&vmlat_thresholds_on);
}

/* The snapshot buffer, for swap mode once a threshold is set. */
static int snapshot_prepare(int mode, bool any_threshold)
{
	int err;

	if (mode != VMLAT_MODE_SWAP || !any_threshold)
		return 0;
	err = tracing_alloc_snapshot();
	if (err)
		pr_warn("cannot allocate the trace snapshot buffer (error %d): use snapshot mode freeze or event\n",
			err);
	return err;
}

static bool any_threshold_but(int kind, u64 ns)
{
	int i;

	for (i = 0; i < VMLAT_NR_HIST_KINDS; i++) {
		if (i == kind ? ns : READ_ONCE(vmlat_threshold_ns[i]))
			return true;
	}
	return false;
}

static ssize_t threshold_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	int kind = (long)file_inode(file)->i_private;
	char buf[32];
	u64 us;
	int err;

	err = knob_read(ubuf, count, buf, sizeof(buf));
	if (!err)
		err = kstrtou64(buf, 10, &us);
	if (err || us > VMLAT_THRESHOLD_MAX_US) {
		pr_warn_ratelimited("threshold_%s_us: write a number of microseconds from 0 (off) to %llu\n",
				    vmlat_hist_kind_names[kind],
				    VMLAT_THRESHOLD_MAX_US);
		return err == -EFAULT ? err : -EINVAL;
	}
	mutex_lock(&vmlat_cfg_mutex);
	err = snapshot_prepare(vmlat_snap_mode,
			       any_threshold_but(kind, us * NSEC_PER_USEC));
	if (!err) {
		WRITE_ONCE(vmlat_threshold_ns[kind], us * NSEC_PER_USEC);
		thresholds_update_key();
	}
	mutex_unlock(&vmlat_cfg_mutex);
	return err ?: count;
}

static int threshold_show(struct seq_file *m, void *unused)
{
	int kind = (long)m->private;

	seq_printf(m, "%llu\n",
		   READ_ONCE(vmlat_threshold_ns[kind]) / NSEC_PER_USEC);
	return 0;
}

DEFINE_SHOW_STORE_ATTRIBUTE(threshold);

static ssize_t snapshot_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	char buf[16];
	int err, mode;

	err = knob_read(ubuf, count, buf, sizeof(buf));
	mode = err ? -EINVAL : match_string(vmlat_mode_names, VMLAT_NR_MODES,
					    buf);
	if (mode < 0) {
		pr_warn_ratelimited("snapshot: write swap (swap the main trace buffer), freeze (stop it) or event (only emit vmlat:vmlat_threshold)\n");
		return err == -EFAULT ? err : -EINVAL;
	}
	mutex_lock(&vmlat_cfg_mutex);
	err = snapshot_prepare(mode, any_threshold_but(-1, 0));
	if (!err)
		WRITE_ONCE(vmlat_snap_mode, mode);
	mutex_unlock(&vmlat_cfg_mutex);
	return err ?: count;
}

static int snapshot_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "%s\n", vmlat_mode_names[READ_ONCE(vmlat_snap_mode)]);
	return 0;
}

DEFINE_SHOW_STORE_ATTRIBUTE(snapshot);

static ssize_t interval_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	char buf[32];
	u64 ms;
	int err;

	err = knob_read(ubuf, count, buf, sizeof(buf));
	if (!err)
		err = kstrtou64(buf, 10, &ms);
	if (err || ms < 1 || ms > VMLAT_INTERVAL_MAX_MS) {
		pr_warn_ratelimited("snapshot_interval_ms: write a number of milliseconds from 1 to %llu\n",
				    VMLAT_INTERVAL_MAX_MS);
		return err == -EFAULT ? err : -EINVAL;
	}
	WRITE_ONCE(vmlat_snap_interval_ns, ms * NSEC_PER_MSEC);
	return count;
}

static int interval_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "%llu\n",
		   READ_ONCE(vmlat_snap_interval_ns) / NSEC_PER_MSEC);
	return 0;
}

DEFINE_SHOW_STORE_ATTRIBUTE(interval);

/**
 * vmlat_report_debugfs_create() - the knobs and the "reports" file
 * @dir:	/sys/kernel/debug/vmlat
 */
void vmlat_report_debugfs_create(struct dentry *dir)
{
	char name[32];
	long kind;

	for (kind = 0; kind < VMLAT_NR_HIST_KINDS; kind++) {
		snprintf(name, sizeof(name), "threshold_%s_us",
			 vmlat_hist_kind_names[kind]);
		debugfs_create_file(name, 0600, dir, (void *)kind,
				    &threshold_fops);
	}
	debugfs_create_file("snapshot", 0600, dir, NULL, &snapshot_fops);
	debugfs_create_file("snapshot_interval_ms", 0600, dir, NULL,
			    &interval_fops);
	debugfs_create_file("reports", 0444, dir, NULL, &reports_fops);
}
