/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmlat's live analyzer: VMs, vCPUs, their states, exits, histograms and
 * preemptors, fed by the probes and read by debugfs.
 */
#ifndef _VMLAT_ANALYZER_H
#define _VMLAT_ANALYZER_H

#include <linux/atomic.h>
#include <linux/sched.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>

#include "clock_sync.h"
#include "exit_codes.h"
#include "hist.h"
#include "state.h"

#define VMLAT_MAX_VMS		64
#define VMLAT_MAX_VCPUS		512
#define VMLAT_TOP_PREEMPTORS	8
#define VMLAT_REASON_HISTS	8	/* per VM: the first reasons seen */

enum vmlat_hist_kind {
	VMLAT_HIST_PREEMPT,
	VMLAT_HIST_WAIT,
	VMLAT_HIST_EXIT,
	VMLAT_NR_HIST_KINDS
};

extern const char *const vmlat_hist_kind_names[VMLAT_NR_HIST_KINDS];

/* A histogram that probes on several CPUs update without a lock. */
struct vmlat_ahist {
	atomic64_t sum_ns;
	atomic64_t min_ns;	/* U64_MAX while empty */
	atomic64_t max_ns;
	atomic64_t buckets[VMLAT_HIST_NR_BUCKETS];
};

enum vmlat_preemptor_kind {
	VMLAT_BY_HOST,		/* a host task */
	VMLAT_BY_VM,		/* a vCPU of another VM */
	VMLAT_BY_SAME_VM,	/* a vCPU of the same VM */
	VMLAT_BY_NONE,		/* nothing ran (an interval of no time) */
};

/**
 * struct vmlat_by - who ran the longest slice while a vCPU waited
 * @kind:	enum vmlat_preemptor_kind
 * @cpu:	the CPU the vCPU waited for
 * @pid:	the task (for vCPUs: the vCPU thread), or 0
 * @vm_pid:	for vCPUs: the pid of their VM, else 0
 * @vcpu:	for vCPUs: their index, else -1
 * @ns:		the slice
 * @comm:	the task's name
 */
struct vmlat_by {
	u8 kind;
	int cpu;
	pid_t pid;
	pid_t vm_pid;
	int vcpu;
	u64 ns;
	char comm[TASK_COMM_LEN];
};

/**
 * struct vmlat_preemptor - who ran while a vCPU of a VM waited for its CPU
 * @kind:	enum vmlat_preemptor_kind
 * @pid:	the task (for vCPUs: the vCPU thread)
 * @comm:	its name
 * @vm_pid:	for vCPUs: the pid of their VM, else 0
 * @vcpu:	for vCPUs: their index, else -1
 * @stolen_ns:	time it ran there (since it has had this entry)
 * @weight_ns:	@stolen_ns plus the weight of the entry it replaced: what
 *		decides which entry the next newcomer replaces
 * @slices:	how many times it was charged
 */
struct vmlat_preemptor {
	u8 kind;
	pid_t pid;
	char comm[TASK_COMM_LEN];
	pid_t vm_pid;
	int vcpu;
	u64 stolen_ns;
	u64 weight_ns;
	u64 slices;
};

/**
 * struct vmlat_vm - one VM, named by its VMM process
 * @lock:	protects @preemptors, @other_ns and @stolen_by
 * @kvm:	the struct kvm, as a key only: never dereferenced
 * @pid:	tgid of the VMM process
 * @comm:	its name
 * @live_vcpus:	vCPU threads not exited; 0 and @exited: the VM is gone
 * @exited:	all its vCPU threads exited (kept for display until reused)
 * @exit_count:	exits per reason slot (exit_codes.h)
 * @exit_ns:	handling time per reason slot
 * @exit_undecoded: exits whose reason could not be read or is unknown
 * @hist:	preemption, wait and exit-handling durations
 * @reason_slot: which exit reason slot each of @reason_hist serves (-1)
 * @reason_hist: exit-handling durations of the first reasons seen
 * @nested_exits: L2 exits per reason slot: [0] handled by L0, [1]
 *		reflected to L1 (nested.h)
 * @nested_undecoded: the same for L2 exits of unknown reason
 * @nested_hist: L2 exit round trips and wake-up latencies (nested.h)
 * @sync:	clock sync with its guest (clock_sync.h)
 * @preemptors:	top preemptors by stolen time (a bounded table)
 * @other_ns:	stolen time of preemptors that did not fit in the table
 * @stolen_by:	stolen time by host tasks ([0]) and by each VM ([1 + slot])
 */
struct vmlat_vm {
	raw_spinlock_t lock;
	const void *kvm;
	pid_t pid;
	char comm[TASK_COMM_LEN];
	atomic_t live_vcpus;
	bool exited;
	atomic64_t exit_count[VMLAT_EXIT_NR_SLOTS];
	atomic64_t exit_ns[VMLAT_EXIT_NR_SLOTS];
	atomic64_t exit_undecoded;
	struct vmlat_ahist hist[VMLAT_NR_HIST_KINDS];
	atomic_t reason_slot[VMLAT_REASON_HISTS];
	struct vmlat_ahist reason_hist[VMLAT_REASON_HISTS];
	atomic64_t nested_exits[2][VMLAT_EXIT_NR_SLOTS];
	atomic64_t nested_undecoded[2];
	struct vmlat_ahist nested_hist[VMLAT_NR_NESTED_HISTS];
	struct vmlat_vm_sync sync;
	struct vmlat_preemptor preemptors[VMLAT_TOP_PREEMPTORS];
	u64 other_ns;
	u64 stolen_by[1 + VMLAT_MAX_VMS];
};

/**
 * struct vmlat_vcpu - one vCPU thread
 * @lock:	serialises its state machine's scheduler events (its own,
 *		and wake-ups from other CPUs) and readers; its thread's own
 *		KVM events take it only when unexpected
 * @seq:	write barrier of @acct, for readers: vmlat_vcpu_read_acct()
 * @task:	the thread, as a key; NULL once it exited
 * @kvm_vcpu:	the struct kvm_vcpu it runs, as a key only
 * @vm:		its VM
 * @tid:	thread id
 * @idx:	vCPU index in its VM
 * @exit_slot:	reason slot of the exit being handled, or -1
 * @acct:	state accounting
 * @victim_cpu:	CPU whose queue it waits on while preempted/woken, or -1
 *		(under that CPU's lock)
 * @victim_since_ns: since when it waits there
 * @iv_by:	who ran the longest slice on that CPU since it began to
 *		wait (under that CPU's lock)
 * @exit_isa:	the exit being handled: VMLAT_ISA_*, 0 if undecoded
 * @exit_reason: its raw code
 * @exit_ns:	its kvm_exit time
 * @vmcb_checked: the last VMCB pointer found plausible (wrapper/kvm_x86.h)
 * @nested_done: what its last kvm_entry completed in the nested state
 *		machine (its thread's scratch space)
 */
struct vmlat_vcpu {
	raw_spinlock_t lock;
	seqcount_t seq;
	const struct task_struct *task;
	const void *kvm_vcpu;
	struct vmlat_vm *vm;
	pid_t tid;
	int idx;
	int exit_slot;
	struct vmlat_vcpu_acct acct;
	int victim_cpu;
	u64 victim_since_ns;
	struct vmlat_by iv_by;
	u32 exit_isa;
	u32 exit_reason;
	u64 exit_ns;
	const void *vmcb_checked;
	struct vmlat_nested_done nested_done;
};

/**
 * struct vmlat_stats - how the analyzer's bounded tables are doing
 * @dropped_vms: VMs not tracked because all VM slots were in use
 * @dropped_vcpus: vCPU threads not tracked (slots or task table full)
 * @dropped_victims: waits not attributed (per-CPU victim list full)
 */
struct vmlat_stats {
	atomic64_t dropped_vms;
	atomic64_t dropped_vcpus;
	atomic64_t dropped_victims;
};

struct kvm_vcpu;

int vmlat_analyzer_init(void);
void vmlat_analyzer_exit(void);
void vmlat_analyzer_reset(void);

void vmlat_on_kvm_entry(struct kvm_vcpu *vcpu);
void vmlat_on_kvm_exit(struct kvm_vcpu *vcpu, u32 isa);
void vmlat_on_userspace_exit(void);
void vmlat_on_mmu_get_page(void);
void vmlat_on_nested_vmexit_inject(void);
void vmlat_on_kvm_hypercall(unsigned long nr, unsigned long a0,
			    unsigned long a1, unsigned long a2,
			    unsigned long a3);
void vmlat_on_sched_switch(bool preempt, struct task_struct *prev,
			   struct task_struct *next, unsigned int prev_state);
void vmlat_on_sched_waking(struct task_struct *p);
void vmlat_on_sched_wakeup(struct task_struct *p);
void vmlat_on_sched_migrate(struct task_struct *p, int dest_cpu);
void vmlat_on_sched_exit(struct task_struct *p);

/* For debugfs: the tables, to walk under vmlat_analyzer_lock(). */
extern struct vmlat_vm *vmlat_vms;
extern struct vmlat_vcpu *vmlat_vcpus;
extern struct vmlat_stats vmlat_stats;

bool vmlat_vm_in_use(const struct vmlat_vm *vm);
void vmlat_vcpu_read_acct(struct vmlat_vcpu *vc, struct vmlat_vcpu_acct *a);
bool vmlat_vcpu_in_use(const struct vmlat_vcpu *vc);
void vmlat_analyzer_lock(void);
void vmlat_analyzer_unlock(void);
u64 vmlat_now_ns(void);

struct vmlat_hist_snap {
	u64 count, sum_ns, min_ns, max_ns;
	u64 buckets[VMLAT_HIST_NR_BUCKETS];
};

void vmlat_ahist_read(const struct vmlat_ahist *h, struct vmlat_hist_snap *s);

#endif /* _VMLAT_ANALYZER_H */
