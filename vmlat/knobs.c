// SPDX-License-Identifier: GPL-2.0
/*
 * The knobs, and their module parameters in /sys/module/vmlat/parameters/:
 *
 *   threshold_preempt_us, threshold_wait_us, threshold_exit_us,
 *   threshold_irq_us
 *			0 (off) .. 10 s; see threshold.c
 *   snapshot		swap, freeze or event
 *   snapshot_interval_ms	1 ms .. 1 h
 *   guest_steal	off, on, or VMM pids: which guests may ask for their
 *			own steal (guest_steal.c)
 *   reset		write 1: zero every statistic, forget the reports
 *
 * The debugfs files of the same names (0600) do the same. Debugfs under
 * lockdown=integrity serves only files that nobody may write (mode within
 * 0444), so a locked-down host sets the knobs here; modprobe and
 * /etc/modprobe.d/ can give them at load time too. A bad value is refused
 * with -EINVAL and a message saying what is allowed, and changes nothing.
 *
 * A parameter can be written while the module loads (modprobe's arguments
 * are set before vmlat_init()) and, through sysfs, until its files are
 * removed, which is after vmlat_exit(): knobs_state says what a write may
 * touch then.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/ratelimit.h>
#include <linux/string.h>

#include "guest_steal.h"
#include "knobs.h"
#include "threshold.h"
#include "view.h"

static DEFINE_MUTEX(knobs_mutex);
static enum {
	KNOBS_LOADING,	/* before vmlat_init() is done: no statistics yet */
	KNOBS_LIVE,
	KNOBS_GONE,	/* vmlat_exit() has begun: the tables go away */
} knobs_state;

/* @val without the blanks and newline around it, in @buf; NULL: too long. */
static char *knob_trim(const char *val, char *buf, size_t size)
{
	if (strscpy(buf, val, size) < 0)
		return NULL;
	return strim(buf);
}

/*
 * Take knobs_mutex for a change: 0, or -ENODEV (not taken) once vmlat is
 * unloading. knobs_end() releases it.
 */
static int knobs_begin(void)
{
	mutex_lock(&knobs_mutex);
	if (knobs_state != KNOBS_GONE)
		return 0;
	mutex_unlock(&knobs_mutex);
	return -ENODEV;
}

static void knobs_end(void)
{
	mutex_unlock(&knobs_mutex);
}

/*
 * Each threshold's refusals are rate-limited on their own, as if each had
 * its own pr_warn_ratelimited(): one knob's bad writes silence no other's.
 */
#define KNOB_RS(i)							\
	[i] = RATELIMIT_STATE_INIT(knob_threshold_rs_##i,		\
				   DEFAULT_RATELIMIT_INTERVAL,		\
				   DEFAULT_RATELIMIT_BURST)
static struct ratelimit_state knob_threshold_rs[] = {
	KNOB_RS(0), KNOB_RS(1), KNOB_RS(2), KNOB_RS(3),
};
static_assert(ARRAY_SIZE(knob_threshold_rs) == VMLAT_NR_REPORT_KINDS);

/* threshold_<kind>_us: microseconds, 0 (off) .. VMLAT_THRESHOLD_MAX_US */
static int knob_threshold_set(const struct vmlat_knob *k, const char *val)
{
	char buf[32], *s = knob_trim(val, buf, sizeof(buf));
	u64 us;
	int err;

	if (!s || kstrtou64(s, 10, &us) || us > VMLAT_THRESHOLD_MAX_US) {
		if (__ratelimit(&knob_threshold_rs[k->kind]))
			pr_warn("%s: write a number of microseconds from 0 (off) to %llu\n",
				k->name, VMLAT_THRESHOLD_MAX_US);
		return -EINVAL;
	}
	err = knobs_begin();
	if (!err) {
		err = vmlat_report_set_threshold(k->kind, us);
		knobs_end();
	}
	return err;
}

static int knob_threshold_show(const struct vmlat_knob *k, char *buf,
			       size_t size)
{
	return scnprintf(buf, size, "%llu\n",
			 vmlat_report_threshold_us(k->kind));
}

/*
 * snapshot: swap, freeze or event; -EOPNOTSUPP (with a message) for swap
 * without trace snapshots in this kernel.
 */
static int knob_snapshot_set(const struct vmlat_knob *k, const char *val)
{
	char buf[16], *s = knob_trim(val, buf, sizeof(buf));
	int mode, err;

	mode = s ? match_string(vmlat_snap_mode_names, VMLAT_NR_SNAP_MODES, s) :
		   -EINVAL;
	if (mode < 0) {
		pr_warn_ratelimited("snapshot: write swap (swap the main trace buffer), freeze (stop it) or event (only emit vmlat:vmlat_threshold)\n");
		return -EINVAL;
	}
	err = knobs_begin();
	if (!err) {
		err = vmlat_report_set_snap_mode(mode);
		knobs_end();
	}
	if (err == -EOPNOTSUPP)
		pr_warn_ratelimited("snapshot: this kernel has no trace snapshots (CONFIG_TRACER_SNAPSHOT): write freeze or event\n");
	return err;
}

static int knob_snapshot_show(const struct vmlat_knob *k, char *buf,
			      size_t size)
{
	return scnprintf(buf, size, "%s\n",
			 vmlat_snap_mode_names[vmlat_report_snap_mode()]);
}

/* snapshot_interval_ms: milliseconds, 1 .. VMLAT_INTERVAL_MAX_MS */
static int knob_interval_set(const struct vmlat_knob *k, const char *val)
{
	char buf[32], *s = knob_trim(val, buf, sizeof(buf));
	u64 ms;
	int err = -EINVAL;

	/* The range is the setter's to check. */
	if (s && !kstrtou64(s, 10, &ms)) {
		err = knobs_begin();
		if (!err) {
			err = vmlat_report_set_interval_ms(ms);
			knobs_end();
		}
	}
	if (err == -EINVAL)
		pr_warn_ratelimited("snapshot_interval_ms: write a number of milliseconds from 1 to %llu\n",
				    VMLAT_INTERVAL_MAX_MS);
	return err;
}

static int knob_interval_show(const struct vmlat_knob *k, char *buf,
			      size_t size)
{
	return scnprintf(buf, size, "%llu\n", vmlat_report_interval_ms());
}

/* guest_steal: off, on, or VMM pids (guest_steal.c) */
static int knob_guest_steal_set(const struct vmlat_knob *k, const char *val)
{
	char buf[VMLAT_KNOB_VALUE_MAX], *s = knob_trim(val, buf, sizeof(buf));
	int err = knobs_begin();

	if (!err) {
		err = vmlat_guest_steal_set(s);
		knobs_end();
	}
	return err;
}

static int knob_guest_steal_show(const struct vmlat_knob *k, char *buf,
				 size_t size)
{
	return vmlat_guest_steal_show(buf, size);
}

/* reset: "1" zeroes every statistic and forgets the reports. */
static int knob_reset_set(const struct vmlat_knob *k, const char *val)
{
	char buf[16], *s = knob_trim(val, buf, sizeof(buf));
	int err;

	if (!s || strcmp(s, "1")) {
		pr_warn_ratelimited("reset: write 1 to zero the statistics\n");
		return -EINVAL;
	}
	err = knobs_begin();
	if (!err) {
		/* Loading: nothing recorded yet, the tables may not exist. */
		if (knobs_state == KNOBS_LIVE)
			vmlat_reset();
		knobs_end();
	}
	return err;
}

int vmlat_knobs_init(void)
{
	mutex_lock(&knobs_mutex);
	knobs_state = KNOBS_LIVE;
	mutex_unlock(&knobs_mutex);
	return 0;
}

void vmlat_knobs_exit(void)
{
	mutex_lock(&knobs_mutex);
	knobs_state = KNOBS_GONE;
	mutex_unlock(&knobs_mutex);
}

/* ---- the table, and the module parameters ---------------------------- */

/*
 * Each knob: name, module parameter's mode, set, show (or, for one only
 * written, what its debugfs file reads), histogram kind, and the
 * parameter's description.
 */
#define VMLAT_KNOB_LIST(K)						\
	K(threshold_preempt_us, 0644, knob_threshold_set,		\
	  knob_threshold_show, NULL, VMLAT_HIST_PREEMPT,		\
	  "Report preemptions from this many us on (0: off, the default)") \
	K(threshold_wait_us, 0644, knob_threshold_set,			\
	  knob_threshold_show, NULL, VMLAT_HIST_WAIT,			\
	  "Report waits for a CPU from this many us on (0: off, the default)") \
	K(threshold_exit_us, 0644, knob_threshold_set,			\
	  knob_threshold_show, NULL, VMLAT_HIST_EXIT,			\
	  "Report exit handling from this many us on (0: off, the default)") \
	K(threshold_irq_us, 0644, knob_threshold_set,			\
	  knob_threshold_show, NULL, VMLAT_REPORT_IRQ,			\
	  "Report interrupts delivered this many us late or more (0: off, the default)") \
	K(snapshot, 0644, knob_snapshot_set, knob_snapshot_show, NULL, 0, \
	  "What a report does to tracing: swap (the snapshot buffer), freeze or event") \
	K(snapshot_interval_ms, 0644, knob_interval_set,		\
	  knob_interval_show, NULL, 0,					\
	  "At most one snapshot per this many ms (default 1000)")	\
	K(guest_steal, 0644, knob_guest_steal_set, knob_guest_steal_show, \
	  NULL, 0,							\
	  "Which guests may ask for their own steal: off (the default), on, or VMM pids, comma-separated") \
	K(reset, 0200, knob_reset_set, NULL,				\
	  "# write 1 to reset: zero every statistic and forget the reports (VMs and vCPUs stay known)\n", \
	  0, "Write 1: zero every statistic and forget the reports")

#define KNOB_ID(name, mode, set, show, help, kind, desc) VMLAT_KNOB_##name,
enum { VMLAT_KNOB_LIST(KNOB_ID) VMLAT_NR_KNOBS };

#define KNOB_ENTRY(name_, mode, set_, show_, help_, kind_, desc)	\
	[VMLAT_KNOB_##name_] = {					\
		.name = #name_, .set = set_, .show = show_,		\
		.help = help_, .kind = kind_,				\
	},
const struct vmlat_knob vmlat_knobs[VMLAT_NR_KNOBS] = {
	VMLAT_KNOB_LIST(KNOB_ENTRY)
};
const unsigned int vmlat_nr_knobs = VMLAT_NR_KNOBS;

static int knob_param_set(const char *val, const struct kernel_param *kp)
{
	const struct vmlat_knob *k = kp->arg;

	return k->set(k, val);
}

/* Only root reads a parameter of mode 0200, and gets -EPERM, as without .get. */
static int knob_param_get(char *buf, const struct kernel_param *kp)
{
	const struct vmlat_knob *k = kp->arg;

	return k->show ? k->show(k, buf, PAGE_SIZE) : -EPERM;
}

static const struct kernel_param_ops knob_param_ops = {
	.set = knob_param_set,
	.get = knob_param_get,
};

/* kernel_param.arg is not const; the ops above only read the knob. */
#define KNOB_PARAM(name, mode, set, show, help, kind, desc)		\
	module_param_cb(name, &knob_param_ops,				\
			(void *)&vmlat_knobs[VMLAT_KNOB_##name], mode);	\
	MODULE_PARM_DESC(name, desc);
VMLAT_KNOB_LIST(KNOB_PARAM)
