/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Latency thresholds: reports of intervals that crossed one, kept in a
 * bounded ring, and the trace snapshot each may take (threshold.c).
 */
#ifndef _VMLAT_THRESHOLD_H
#define _VMLAT_THRESHOLD_H

#include <linux/jump_label.h>
#include <linux/sched.h>

#include "types.h"

#define VMLAT_REPORTS		64	/* the ring keeps the latest */
#define VMLAT_THRESHOLD_MAX_US	(10ULL * USEC_PER_SEC)
#define VMLAT_INTERVAL_MAX_MS	(3600ULL * MSEC_PER_SEC)

/* What a report's snapshot does (the "snapshot" knob). */
enum vmlat_snap_mode {
	VMLAT_SNAP_MODE_SWAP,	/* swap the main trace buffer */
	VMLAT_SNAP_MODE_FREEZE,	/* turn the main trace buffer off */
	VMLAT_SNAP_MODE_EVENT,	/* only emit vmlat:vmlat_threshold */
	VMLAT_NR_SNAP_MODES
};

extern const char *const vmlat_snap_mode_names[VMLAT_NR_SNAP_MODES];

DECLARE_STATIC_KEY_FALSE(vmlat_thresholds_on);
extern u64 vmlat_threshold_ns[VMLAT_NR_REPORT_KINDS];

/*
 * Whether an interval of @kind (enum vmlat_hist_kind, or VMLAT_REPORT_IRQ)
 * lasting @ns is to be reported.
 */
static __always_inline bool vmlat_over_threshold(unsigned int kind, u64 ns)
{
	u64 t;

	if (!static_branch_unlikely(&vmlat_thresholds_on))
		return false;
	t = READ_ONCE(vmlat_threshold_ns[kind]);
	return t && ns >= t;
}

void vmlat_report(struct vmlat_report *r);
void vmlat_report_reset(void);
void vmlat_report_exit(void);

int vmlat_report_set_threshold(unsigned int kind, u64 us);
u64 vmlat_report_threshold_us(unsigned int kind);
int vmlat_report_set_snap_mode(int mode);
int vmlat_report_snap_mode(void);
int vmlat_report_set_interval_ms(u64 ms);
u64 vmlat_report_interval_ms(void);
void vmlat_report_copy(struct vmlat_report *ring, u64 *seq, u64 *taken,
		       u64 *limited, u64 *failed);

#endif /* _VMLAT_THRESHOLD_H */
