/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Latency thresholds: reports of intervals that crossed one, kept in a
 * bounded ring, and the trace snapshot each may take (report.c).
 */
#ifndef _VMLAT_REPORT_H
#define _VMLAT_REPORT_H

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

/* What became of a report's snapshot. */
enum vmlat_snap_state {
	VMLAT_SNAP_QUEUED,	/* the deferred work has not run yet */
	VMLAT_SNAP_TAKEN,	/* swapped, frozen, or the event emitted */
	VMLAT_SNAP_LIMITED,	/* within snapshot_interval_ms of the last */
	VMLAT_SNAP_FAILED,	/* swap: buffer off, or no snapshot buffer */
};

/**
 * struct vmlat_report - one interval that crossed its threshold
 * @seq:	report number since load or reset, from 1
 * @kind:	enum vmlat_hist_kind: preempt, wait or exit
 * @snap:	enum vmlat_snap_state
 * @vm_pid:	the VM (VMM tgid)
 * @vm_comm:	its name
 * @vcpu:	vCPU index
 * @cpu:	preempt/wait: the CPU it waited for; exit: where it ran
 * @duration_ns: the interval's duration (exit: host time on CPU)
 * @start_ns:	its start (exit: the kvm_exit), "mono" clock
 * @end_ns:	its end
 * @isa:	exit: VMLAT_ISA_SVM/VMX, 0 if undecoded
 * @exit_reason: exit: the raw code
 * @as:		the guest address space the vCPU ran (aspace.h key, 0 if
 *		none): preempt/wait: when it lost its CPU; exit: at the exit
 * @by:		preempt/wait: the task that ran the longest slice meanwhile
 */
struct vmlat_report {
	u64 seq;
	u8 kind;
	u8 snap;
	pid_t vm_pid;
	char vm_comm[TASK_COMM_LEN];
	int vcpu;
	int cpu;
	u64 duration_ns;
	u64 start_ns;
	u64 end_ns;
	u32 isa;
	u32 exit_reason;
	u64 as;
	struct vmlat_by by;
};

DECLARE_STATIC_KEY_FALSE(vmlat_thresholds_on);
extern u64 vmlat_threshold_ns[VMLAT_NR_HIST_KINDS];

/* Whether an interval of @kind lasting @ns is to be reported. */
static __always_inline bool vmlat_over_threshold(enum vmlat_hist_kind kind,
						 u64 ns)
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

int vmlat_report_set_threshold(enum vmlat_hist_kind kind, u64 us);
u64 vmlat_report_threshold_us(enum vmlat_hist_kind kind);
int vmlat_report_set_snap_mode(int mode);
int vmlat_report_snap_mode(void);
int vmlat_report_set_interval_ms(u64 ms);
u64 vmlat_report_interval_ms(void);
void vmlat_report_copy(struct vmlat_report *ring, u64 *seq, u64 *taken,
		       u64 *limited, u64 *failed);

#endif /* _VMLAT_REPORT_H */
