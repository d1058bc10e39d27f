/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vmlat's readers (debugfs) see of the records, and may do: copies
 * taken under the records' own locks, which stay behind this API. A VM is
 * named by an opaque handle, valid while the module is loaded (its slot
 * may be reused for another VM; see vmlat_view_vm()).
 *
 * Context: process context (every function may take raw spinlocks with
 * IRQs off, briefly; none sleeps), and for vmlat_view_vcpu_states() and
 * vmlat_view_stolen(), the kvm_hypercall probe too (guest_steal.c).
 */
#ifndef _VMLAT_VIEW_H
#define _VMLAT_VIEW_H

#include <linux/types.h>

#include "ahist.h"
#include "aspace.h"
#include "clock_fit.h"
#include "clock_sync.h"
#include "exit_stats.h"
#include "halt.h"
#include "lhp.h"
#include "nested.h"
#include "state.h"
#include "topk.h"
#include "types.h"

struct vmlat_vm;

/**
 * struct vmlat_view_vm - who a VM is
 * @id:		its id: unique per VM lifetime since load (a VMM may run
 *		several VMs, one after another or at once)
 * @pid:	tgid of its VMM process
 * @comm:	its name
 * @exited:	all its vCPU threads exited
 * @partly:	one of its vCPU threads was turned away at a cap: its
 *		figures miss that thread's time (records.h)
 *
 * A record at a cap can be reused in place for another VM while it is
 * read: after reading a VM's figures, ask vmlat_view_vm_same() whether
 * they were still the VM's the list named.
 */
struct vmlat_view_vm {
	u32 id;
	pid_t pid;
	char comm[TASK_COMM_LEN];
	bool exited;
	bool partly;
};

/**
 * struct vmlat_view_states - time in each state, as a vCPU or summed
 * @observed_ns: time since the first event (the sum of @time_ns)
 * @time_ns:	per enum vmlat_state
 * @exits:	kvm_exit events
 */
struct vmlat_view_states {
	u64 observed_ns;
	u64 time_ns[VMLAT_NR_STATES];
	u64 exits;
};

/**
 * struct vmlat_view_order - events out of order, and exits seen before
 * their kvm_exit (kernels that trace kvm_exit late: exit_late.h)
 * @unexpected:	events that made no sense in the state they came in
 * @late_exits:	exits whose guest time ended before their kvm_exit
 * @late_switched: of these, exits switched out before their kvm_exit
 * @late_ns:	time from those exits to their kvm_exit
 */
struct vmlat_view_order {
	u64 unexpected;
	u64 late_exits;
	u64 late_switched;
	u64 late_ns;
};

/**
 * struct vmlat_view_vcpu - a consistent copy of one vCPU
 * @vm:		its VM
 * @vm_pid:	its VM's pid
 * @tid:	its thread
 * @idx:	its index in the VM
 * @live:	its thread has not exited
 * @state:	enum vmlat_state
 * @st:		its state times
 * @order:	its events out of order and late exits
 * @nested:	its nested accounting, current interval included
 * @as:		the guest address space it runs and its stretch so far
 *		(@as.key VMLAT_AS_NONE: none, or its thread exited)
 * @halt:	its halts and halt-polling (halt.h)
 * @lhp:	its suspected lock-holder preemptions (lhp.h)
 */
struct vmlat_view_vcpu {
	const struct vmlat_vm *vm;
	pid_t vm_pid;
	pid_t tid;
	int idx;
	bool live;
	u8 state;
	struct vmlat_view_states st;
	struct vmlat_view_order order;
	struct vmlat_nested nested;
	struct vmlat_as_stretch as;
	struct vmlat_halt_stats halt;
	struct vmlat_lhp lhp;
};

/**
 * struct vmlat_view_as - a guest address space of a VM
 * @key:	its key (aspace.h)
 * @row:	its times, stretches in progress included
 * @tgid:	the guest process its guest named it after; 0: no name
 * @comm:	that process's name
 */
struct vmlat_view_as {
	u64 key;
	struct vmlat_as_row row;
	u32 tgid;
	char comm[VMLAT_AS_COMM_LEN];
};

/*
 * vmlat_view_guest_tasks() returns at most this many: the VM's table and
 * as many stretches in progress of address spaces without a row.
 */
#define VMLAT_VIEW_AS_MAX	(VMLAT_AS_SLOTS + 48)

/**
 * struct vmlat_view_guest_tasks - a VM's guest address spaces
 * @nr:		how many of @as
 * @as:		most time first
 * @other:	what address spaces without a row had (evicted, or past
 *		VMLAT_VIEW_AS_MAX)
 * @evicted:	address spaces that lost their row
 * @names:	its names' counters (their cache not copied)
 * @names_held:	how many names its cache holds
 * @whole:	its roots are keyed whole: the guest showed it has no KPTI
 */
struct vmlat_view_guest_tasks {
	unsigned int nr;
	struct vmlat_view_as as[VMLAT_VIEW_AS_MAX];
	struct vmlat_as_row other;
	u64 evicted;
	struct vmlat_as_names_stats names;
	unsigned int names_held;
	bool whole;
};

/**
 * struct vmlat_view_preemptor - an entry of a VM's top preemptors
 * @who:	the task
 * @stolen_ns:	time it ran while a vCPU of the VM waited
 * @slices:	how many times it was charged
 */
struct vmlat_view_preemptor {
	struct vmlat_preemptor who;
	u64 stolen_ns;
	u64 slices;
};

/**
 * struct vmlat_view_stolen - who ran while a VM's vCPUs waited
 * @host_ns:	host tasks
 * @other_ns:	VMs past its table of the VMs that took the most
 * @nr:		entries of @by: the VMs in that table that took any time,
 *		most first
 * @by:		a VM's id (one VM lifetime: it may have gone since) and
 *		the time its vCPUs ran
 */
struct vmlat_view_stolen {
	u64 host_ns;
	u64 other_ns;
	unsigned int nr;
	struct {
		u32 id;
		u64 ns;
	} by[VMLAT_TOPK_SLOTS];
};

/* The state of a VM's clock sync (enum vmlat_sync_state, doc_names.h). */
extern const char *const vmlat_sync_state_names[VMLAT_NR_SYNC_STATES];

/**
 * struct vmlat_view_sync - a VM's clock sync
 * @d:		its exchanges and counters
 * @state:	enum vmlat_sync_state
 * @map:	the mapping, if @state is VMLAT_SYNC_OK
 * @offset_ns:	host - guest time at the last exchange
 * @bound_ns:	the host time's error bound there
 * @exits:	VM exits of vmlat's calls (not in the exit statistics)
 * @exit_ns:	their handling time
 * @steal:	its steal calls (the guest's own steal)
 */
struct vmlat_view_sync {
	struct vmlat_vm_sync_data d;
	u8 state;
	struct vmlat_clock_map map;
	s64 offset_ns;
	u64 bound_ns;
	u64 exits;
	u64 exit_ns;
	struct vmlat_steal_gate steal;
};

/**
 * struct vmlat_view_dropped - what did not fit in the bounded tables
 * @vms:	VMs not tracked
 * @vcpus:	vCPU threads not tracked
 * @victims:	waits not attributed
 */
struct vmlat_view_dropped {
	u64 vms;
	u64 vcpus;
	u64 victims;
};

/**
 * struct vmlat_view_irq - a VM's interrupt deliveries (records.h)
 * @cell:	per source and where the target was: delivered (count,
 *		sum_ns, max_ns, and of sum_ns wait_ns, waiting for a CPU),
 *		lost, coalesced
 * @unmatched:	injections of a vector not seen pending
 */
struct vmlat_view_irq {
	struct vmlat_view_irq_cell {
		u64 count;
		u64 sum_ns;
		u64 max_ns;
		u64 wait_ns;
		u64 lost;
		u64 coalesced;
	} cell[VMLAT_NR_IRQ_SOURCES][VMLAT_NR_IRQ_ATS];
	u64 unmatched;
};

/**
 * struct vmlat_view_tables - how full the bounded tables are
 * @vms_live:	VM records with a live vCPU thread
 * @vms_exited:	VM records kept for display, reusable
 * @vms_max:	VM records in all
 * @vcpus_live:	vCPU records of live threads
 * @vcpus_exited: vCPU records kept for display, reusable
 * @vcpus_max:	vCPU records in all
 * @tasks:	vCPU threads in the task table, tracked or not
 * @tasks_untracked: of which vmlat had no room for
 * @tasks_max:	the most it takes
 * @probe_max:	the most slots a lookup in it reads now
 * @task_slots:	its slots now: it grows and shrinks with the vCPU threads
 * @bytes:	memory vmlat's records take, all of it: @tables_bytes, the
 *		records and blocks in use, and @pooled_bytes
 * @tables_bytes: the tables of slots and of tasks (allocated at load)
 * @vm_bytes:	per VM record
 * @vcpu_bytes:	per vCPU record
 * @block_bytes: per block a VM takes on first use (a histogram, its L2
 *		exit counters)
 * @vms:	VM records in use
 * @vcpus:	vCPU records in use
 * @blocks:	blocks VMs took
 * @pooled_bytes: records and blocks free in their pools
 * @missed:	records, blocks and task table entries a probe found
 *		none of (a thread without a record or an entry tries again
 *		at its next event; a sample without a histogram is lost)
 */
struct vmlat_view_tables {
	unsigned int vms_live;
	unsigned int vms_exited;
	unsigned int vms_max;
	unsigned int vcpus_live;
	unsigned int vcpus_exited;
	unsigned int vcpus_max;
	unsigned int tasks;
	unsigned int tasks_untracked;
	unsigned int tasks_max;
	unsigned int probe_max;
	unsigned int task_slots;
	size_t bytes;
	size_t tables_bytes;
	size_t vm_bytes;
	size_t vcpu_bytes;
	size_t block_bytes;
	unsigned long vms;
	unsigned long vcpus;
	unsigned long blocks;
	size_t pooled_bytes;
	u64 missed;
};

/* Quantiles shown of every histogram, in parts per million. */
#define VMLAT_NR_QUANTILES	4
extern const u32 vmlat_quantile_ppm[VMLAT_NR_QUANTILES];
extern const char *const vmlat_quantile_names[VMLAT_NR_QUANTILES];
#define VMLAT_PPM_P50		500000
#define VMLAT_PPM_P99		990000

/**
 * struct vmlat_view_list - the VMs known at one moment, with their vCPUs
 * @nr_vms:	how many VMs
 * @vms:	their handles, in slot order
 * @first:	@vcpus[@first[i] .. @first[i + 1]) are the vCPUs of @vms[i]
 * @vcpus:	vCPU record numbers (vmlat_view_vcpu()), grouped by VM; a
 *		record may have been given to another VM since: check the
 *		copy's @vm
 * @nr_vcpus:	how many of @vcpus
 * @seq:	each VM's identity count when listed (vmlat_view_vm_same())
 *
 * One list serves a whole read: every part of a table shows the same VMs,
 * and a VM's vCPUs are found without a pass over every vCPU record.
 */
struct vmlat_view_list {
	unsigned int nr_vms;
	const struct vmlat_vm **vms;
	unsigned int *first;
	unsigned int *vcpus;
	unsigned int nr_vcpus;
	unsigned int *seq;
};

/* @k: each index into @l->vcpus of the vCPUs of @l->vms[@i]. */
#define vmlat_view_for_each_vcpu(l, i, k)				\
	for ((k) = (l)->first[i]; (k) < (l)->first[(i) + 1]; (k)++)

int vmlat_view_list_get(struct vmlat_view_list *l);
void vmlat_view_list_put(struct vmlat_view_list *l);
void vmlat_view_vm(const struct vmlat_view_list *l, unsigned int i,
		   struct vmlat_view_vm *v);
bool vmlat_view_vm_same(const struct vmlat_view_list *l, unsigned int i);
bool vmlat_view_vcpu(unsigned int i, u64 now, struct vmlat_view_vcpu *v);
unsigned int vmlat_view_nr_vcpus(void);
struct vmlat_vcpu;
void vmlat_view_vcpu_states(struct vmlat_vcpu *vc, u64 now,
			    struct vmlat_view_states *st);
int vmlat_view_vm_states(const struct vmlat_view_list *l, unsigned int i,
			 u64 now, struct vmlat_view_states *sum);

void vmlat_view_exit(const struct vmlat_vm *vm, int slot,
		     struct vmlat_exit_row *row);
u64 vmlat_view_exits_undecoded(const struct vmlat_vm *vm);
void vmlat_view_hist(const struct vmlat_vm *vm, enum vmlat_hist_kind kind,
		     struct vmlat_hist_snap *h);
void vmlat_view_nested_hist(const struct vmlat_vm *vm,
			    enum vmlat_nested_hist kind,
			    struct vmlat_hist_snap *h);
int vmlat_view_reason_hist_slot(const struct vmlat_vm *vm, unsigned int i);
bool vmlat_view_reason_hist(const struct vmlat_vm *vm, int slot,
			    struct vmlat_hist_snap *h);
u64 vmlat_hist_snap_quantile(const struct vmlat_hist_snap *h, u32 ppm);
u64 vmlat_view_nested_exits(const struct vmlat_vm *vm, enum vmlat_nested_by by,
			    int slot);

bool vmlat_view_sync(const struct vmlat_vm *vm, struct vmlat_view_sync *v);
void vmlat_view_as_name(pid_t vm_pid, struct vmlat_view_as *a);
void vmlat_view_guest_tasks(const struct vmlat_view_list *l, unsigned int i,
			    u64 now, struct vmlat_view_guest_tasks *g);
unsigned int vmlat_view_preemptors(const struct vmlat_vm *vm,
				   struct vmlat_view_preemptor *out,
				   u64 *other_ns);
u64 vmlat_view_stolen_by(const struct vmlat_vm *victim,
			 const struct vmlat_vm *by);
u64 vmlat_view_stolen_by_other(const struct vmlat_vm *victim);
void vmlat_view_stolen(const struct vmlat_vm *victim,
		       struct vmlat_view_stolen *s);
void vmlat_view_dropped(struct vmlat_view_dropped *d);
void vmlat_view_irq(const struct vmlat_vm *vm, struct vmlat_view_irq *v);
void vmlat_view_irq_hist(const struct vmlat_vm *vm, enum vmlat_irq_src src,
			 struct vmlat_hist_snap *h);
void vmlat_view_expire_hist(const struct vmlat_vm *vm,
			    enum vmlat_expire_hist k, struct vmlat_hist_snap *h);
u64 vmlat_view_irq_unattributed(void);
void vmlat_view_tables(struct vmlat_view_tables *t);
void vmlat_view_order_sum(struct vmlat_view_order *sum);
unsigned int vmlat_view_svm_exit_code_bits(void);

void vmlat_reset(void);

#endif /* _VMLAT_VIEW_H */
