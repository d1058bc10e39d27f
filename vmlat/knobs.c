// SPDX-License-Identifier: GPL-2.0
/*
 * The knobs, and their module parameters in /sys/module/vmlat/parameters/:
 *
 *   threshold_preempt_us, threshold_wait_us, threshold_exit_us
 *			0 (off) .. 10 s; see report.c
 *   snapshot		swap, freeze or event
 *   snapshot_interval_ms	1 ms .. 1 h
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
#include <linux/string.h>

#include "knobs.h"
#include "report.h"
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

/**
 * vmlat_knob_threshold() - set threshold_<kind>_us from a string
 * @kind:	enum vmlat_hist_kind
 * @val:	a number of microseconds, 0 (off) .. VMLAT_THRESHOLD_MAX_US
 *
 * Context: process context.
 * Return: 0, -EINVAL (with a message; nothing changed) or -ENODEV.
 */
int vmlat_knob_threshold(enum vmlat_hist_kind kind, const char *val)
{
	char buf[32], *s = knob_trim(val, buf, sizeof(buf));
	u64 us;
	int err;

	if (!s || kstrtou64(s, 10, &us) || us > VMLAT_THRESHOLD_MAX_US) {
		pr_warn_ratelimited("threshold_%s_us: write a number of microseconds from 0 (off) to %llu\n",
				    vmlat_hist_kind_names[kind],
				    VMLAT_THRESHOLD_MAX_US);
		return -EINVAL;
	}
	err = knobs_begin();
	if (!err) {
		err = vmlat_report_set_threshold(kind, us);
		knobs_end();
	}
	return err;
}

/**
 * vmlat_knob_snapshot() - set the snapshot mode from a string
 * @val:	swap, freeze or event
 *
 * Context: process context.
 * Return: 0, -EINVAL, -EOPNOTSUPP (swap without trace snapshots in this
 * kernel; both with a message, nothing changed) or -ENODEV.
 */
int vmlat_knob_snapshot(const char *val)
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

/**
 * vmlat_knob_interval() - set snapshot_interval_ms from a string
 * @val:	a number of milliseconds, 1 .. VMLAT_INTERVAL_MAX_MS
 *
 * Context: process context.
 * Return: 0, -EINVAL (with a message; nothing changed) or -ENODEV.
 */
int vmlat_knob_interval(const char *val)
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

/**
 * vmlat_knob_reset() - zero every statistic and forget the reports
 * @val:	"1"
 *
 * Context: process context.
 * Return: 0, -EINVAL (with a message) or -ENODEV.
 */
int vmlat_knob_reset(const char *val)
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

/* ---- module parameters ------------------------------------------------- */

/* kernel_param.arg is not const. */
static enum vmlat_hist_kind param_kinds[VMLAT_NR_HIST_KINDS] = {
	VMLAT_HIST_PREEMPT, VMLAT_HIST_WAIT, VMLAT_HIST_EXIT,
};

static int param_threshold_set(const char *val, const struct kernel_param *kp)
{
	return vmlat_knob_threshold(*(const enum vmlat_hist_kind *)kp->arg, val);
}

static int param_threshold_get(char *buf, const struct kernel_param *kp)
{
	enum vmlat_hist_kind kind = *(const enum vmlat_hist_kind *)kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%llu\n",
			 vmlat_report_threshold_us(kind));
}

static const struct kernel_param_ops threshold_ops = {
	.set = param_threshold_set,
	.get = param_threshold_get,
};

module_param_cb(threshold_preempt_us, &threshold_ops,
		&param_kinds[VMLAT_HIST_PREEMPT], 0644);
MODULE_PARM_DESC(threshold_preempt_us,
		 "Report preemptions from this many us on (0: off, the default)");
module_param_cb(threshold_wait_us, &threshold_ops,
		&param_kinds[VMLAT_HIST_WAIT], 0644);
MODULE_PARM_DESC(threshold_wait_us,
		 "Report waits for a CPU from this many us on (0: off, the default)");
module_param_cb(threshold_exit_us, &threshold_ops,
		&param_kinds[VMLAT_HIST_EXIT], 0644);
MODULE_PARM_DESC(threshold_exit_us,
		 "Report exit handling from this many us on (0: off, the default)");

static int param_snapshot_set(const char *val, const struct kernel_param *kp)
{
	return vmlat_knob_snapshot(val);
}

static int param_snapshot_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 vmlat_snap_mode_names[vmlat_report_snap_mode()]);
}

static const struct kernel_param_ops snapshot_ops = {
	.set = param_snapshot_set,
	.get = param_snapshot_get,
};

module_param_cb(snapshot, &snapshot_ops, NULL, 0644);
MODULE_PARM_DESC(snapshot,
		 "What a report does to tracing: swap (the snapshot buffer), freeze or event");

static int param_interval_set(const char *val, const struct kernel_param *kp)
{
	return vmlat_knob_interval(val);
}

static int param_interval_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%llu\n", vmlat_report_interval_ms());
}

static const struct kernel_param_ops interval_ops = {
	.set = param_interval_set,
	.get = param_interval_get,
};

module_param_cb(snapshot_interval_ms, &interval_ops, NULL, 0644);
MODULE_PARM_DESC(snapshot_interval_ms,
		 "At most one snapshot per this many ms (default 1000)");

static int param_reset_set(const char *val, const struct kernel_param *kp)
{
	return vmlat_knob_reset(val);
}

static const struct kernel_param_ops reset_ops = {
	.set = param_reset_set,
};

module_param_cb(reset, &reset_ops, NULL, 0200);
MODULE_PARM_DESC(reset, "Write 1: zero every statistic and forget the reports");
