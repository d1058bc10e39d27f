/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vmlat's glue, its readers (view.h) and its trace events share:
 * limits, the kinds of interval and of preemptor with their one table of
 * names each, who-ran records and threshold reports. No logic, no lock,
 * no table.
 */
#ifndef _VMLAT_TYPES_H
#define _VMLAT_TYPES_H

#include <linux/sched.h>
#include <linux/types.h>

#include "aspace.h"
#include "clock.h"
#include "doc_names.h"
#include "exit_codes.h"

/*
 * The most records: module parameters max_vms and max_vcpus, fixed at
 * load (records.c); records are made as VMs come, only the tables of
 * slots are as large. The defaults fit a large host. And how many exited
 * VMs stay shown: keep_exited.
 */
#define VMLAT_MAX_VMS_DEFAULT	1024
#define VMLAT_MAX_VCPUS_DEFAULT	8192
#define VMLAT_KEEP_EXITED_DEFAULT	16
#define VMLAT_MAX_VMS_LIMIT	4096
#define VMLAT_MAX_VCPUS_LIMIT	65536

/*
 * The kinds of interval with a histogram of their own per VM, and of
 * preemptor: enum vmlat_hist_kind and enum vmlat_preemptor_kind, in
 * doc_names.h with their one list of names each. As debugfs, JSON and the
 * trace events name them:
 */
extern const char *const vmlat_hist_kind_names[VMLAT_NR_HIST_KINDS];
/* What a latency report is of: those kinds, then "irq". */
extern const char *const vmlat_report_kind_names[VMLAT_NR_REPORT_KINDS];
extern const char *const vmlat_by_kind_names[VMLAT_NR_BY_KINDS];

/*
 * A vCPU's exit reason slot (exit_codes.h) is 0 or more, or
 * VMLAT_SLOT_UNDECODED; or this, for the exit of a clock-sync hypercall;
 * or VMLAT_SLOT_L2_SYNC (nested.h), for those of an L2's.
 */
#define VMLAT_SLOT_SYNC		(-2)

/* Who dealt with an L2 exit: the index of struct vmlat_vm.nested_exits. */
enum vmlat_nested_by {
	VMLAT_NESTED_BY_L0,	/* handled by the host */
	VMLAT_NESTED_BY_L1,	/* reflected to the L1 hypervisor */
	VMLAT_NR_NESTED_BY
};

/**
 * struct vmlat_by - who ran the longest slice while a vCPU waited
 * @kind:	enum vmlat_preemptor_kind
 * @cpu:	the CPU the vCPU waited for
 * @pid:	the task (for vCPUs: the vCPU thread), or 0 (idle, none)
 * @vm_pid:	for vCPUs: the pid of their VM, else 0
 * @vcpu:	for vCPUs: their index, else -1
 * @ns:		the slice
 * @as:		for vCPUs: the guest address space it ran then (aspace.h
 *		key, see vmlat_as_event_key()), else 0: [P0]'s recursion,
 *		the guest process that took the time
 * @comm:	the task's name; empty for idle and none
 */
struct vmlat_by {
	u8 kind;
	int cpu;
	pid_t pid;
	pid_t vm_pid;
	int vcpu;
	u64 ns;
	u64 as;
	char comm[TASK_COMM_LEN];
};

/**
 * struct vmlat_preemptor - a task that ran while a vCPU of a VM waited for
 * its CPU: the payload of a slot of the VM's top-k table (topk.h), which
 * counts its stolen time and slices
 * @kind:	enum vmlat_preemptor_kind
 * @pid:	the task (for vCPUs: the vCPU thread); 0 for idle
 * @comm:	its name at its last slice; empty for idle
 * @vm_pid:	for vCPUs: the pid of their VM, else 0
 * @vcpu:	for vCPUs: their index, else -1
 * @cpu:	for idle: the CPU that was idle, else -1
 */
struct vmlat_preemptor {
	u8 kind;
	pid_t pid;
	char comm[TASK_COMM_LEN];
	pid_t vm_pid;
	int vcpu;
	int cpu;
};

/*
 * A preemptor's key in the top-k table: the same task as the same kind;
 * for idle (every idle task is pid 0), the CPU.
 */
static inline u64 vmlat_preemptor_key(u8 kind, pid_t pid, int cpu)
{
	return (u64)kind << 32 | (kind == VMLAT_BY_IDLE ? (u32)cpu : (u32)pid);
}

/*
 * A guest address space as events and reports give it: its key, or 0 when
 * there is none (CR3 0, the guest's paging off, names none either).
 */
static inline u64 vmlat_as_event_key(u64 key)
{
	return key == VMLAT_AS_NONE ? 0 : key;
}

/* Copy a task name as tracepoints do (no task_lock(): see records.c). */
static inline void vmlat_copy_comm(char *dst, const char *comm)
{
	memcpy(dst, comm, TASK_COMM_LEN);
	dst[TASK_COMM_LEN - 1] = '\0';
}

/* What became of a threshold report's snapshot (threshold.c). */
enum vmlat_snap_state {
	VMLAT_SNAP_QUEUED,	/* the deferred work has not run yet */
	VMLAT_SNAP_TAKEN,	/* swapped, frozen, or the event emitted */
	VMLAT_SNAP_LIMITED,	/* within snapshot_interval_ms of the last */
	VMLAT_SNAP_FAILED,	/* swap: buffer off, or no snapshot buffer */
};

/**
 * struct vmlat_report - one interval that crossed its threshold
 * @seq:	report number since load or reset, from 1
 * @kind:	enum vmlat_hist_kind: preempt, wait or exit; or
 *		VMLAT_REPORT_IRQ, an interrupt's delivery
 * @snap:	enum vmlat_snap_state
 * @vm_pid:	the VM (VMM tgid)
 * @vm_comm:	its name
 * @vcpu:	vCPU index
 * @cpu:	preempt/wait: the CPU it waited for; exit: where it ran;
 *		irq: where it was delivered
 * @duration_ns: the interval's duration (exit: host time on CPU)
 * @start_ns:	its start (exit: the kvm_exit), "mono" clock
 * @end_ns:	its end
 * @isa:	exit: VMLAT_ISA_SVM/VMX, 0 if undecoded; irq: its source
 *		(enum vmlat_irq_src)
 * @exit_reason: exit: the raw code; irq: where its vCPU was (enum
 *		vmlat_irq_at)
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

#endif /* _VMLAT_TYPES_H */
