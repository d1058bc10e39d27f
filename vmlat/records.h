/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The records vmlat keeps: one per VM and one per vCPU thread, made when
 * a vCPU thread's first KVM event comes (from pools: probes never
 * allocate), found through tables of slots bounded by the module
 * parameters, with counters of what did not fit. Who writes what:
 *  - a vCPU's accounting: its own thread (account.c), or under its lock;
 *  - a VM's exit and histogram counters: atomics, any of its vCPUs;
 *  - a VM's preemptor tables: under the VM's lock (charge.c);
 *  - slots: taken and given back under vmlat_alloc_lock (records.c).
 * Readers go through view.h, never here.
 *
 * A record is one lifetime: a VM record one struct kvm from its first
 * vCPU seen to its destruction, a vCPU record one thread running one
 * struct kvm_vcpu. KVM reuses the memory of both, so an address alone
 * does not name a VM or vCPU: see vmlat_vcpu_new().
 *
 * Memory follows the VMs: a VM's record and those of its vCPUs are freed
 * once it exited and keep_exited newer VMs exited after it (records.c).
 */
#ifndef _VMLAT_RECORDS_H
#define _VMLAT_RECORDS_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>

#include "ahist.h"
#include "aspace.h"
#include "clock_sync.h"
#include "exit_codes.h"
#include "exit_stats.h"
#include "irq.h"
#include "lhp.h"
#include "nested.h"
#include "pool.h"
#include "state.h"
#include "tasks.h"
#include "topk.h"
#include "types.h"

/**
 * struct vmlat_vm_nested_exits - a VM's L2 exits
 * @exits:	per enum vmlat_nested_by and reason slot
 * @undecoded:	the same for L2 exits of unknown reason
 */
struct vmlat_vm_nested_exits {
	atomic64_t exits[VMLAT_NR_NESTED_BY][VMLAT_EXIT_NR_SLOTS];
	atomic64_t undecoded[VMLAT_NR_NESTED_BY];
};

/* The vCPU ids whose interrupts vmlat can attribute (struct vmlat_vm_irq). */
#define VMLAT_IRQ_IDS	256

/**
 * struct vmlat_irq_cell - the interrupts of one source and target state
 * @count:	delivered
 * @sum_ns:	their delivery latencies
 * @max_ns:	the longest
 * @wait_ns:	of @sum_ns, the time their targets waited for a CPU
 *		(runnable, off CPU: preempted, or woken and not yet running)
 * @lost:	given up (core/irq.h): pushed out by newer ones, or never
 *		injected
 * @coalesced:	made pending while their vector already was (one
 *		interrupt to the guest); less those found apart after
 *		(core/irq.h)
 */
struct vmlat_irq_cell {
	atomic64_t count;
	atomic64_t sum_ns;
	atomic64_t max_ns;
	atomic64_t wait_ns;
	atomic64_t lost;
	atomic64_t coalesced;
};

/**
 * struct vmlat_vm_irq - a VM's interrupt deliveries (delivery.c)
 * @cell:	per source and state of the target when it became pending
 * @unmatched:	injections of a vector vmlat had not seen become pending
 * @ids_end:	one past the highest id @by_id had: how far to walk it
 *		(lhp.c); vmlat_alloc_lock's
 * @by_id:	its vCPU records by vCPU id (KVM's vcpu_id, what the
 *		interrupt tracepoints name), for those below VMLAT_IRQ_IDS:
 *		set and cleared under vmlat_alloc_lock, read by probes
 */
struct vmlat_vm_irq {
	struct vmlat_irq_cell cell[VMLAT_NR_IRQ_SOURCES][VMLAT_NR_IRQ_ATS];
	atomic64_t unmatched;
	u32 ids_end;
	struct vmlat_vcpu *by_id[VMLAT_IRQ_IDS];
};

/*
 * What a VM takes on first use, from the pool vmlat_blocks (pool.h): any
 * one of its histograms, its L2 exit counters, or its interrupt
 * deliveries.
 */
union vmlat_block {
	struct vmlat_ahist hist;
	struct vmlat_vm_nested_exits nested;
	struct vmlat_vm_irq irq;
};

/* A VM's interrupt deliveries take no bigger block than a histogram. */
static_assert(sizeof(struct vmlat_vm_irq) <= sizeof(struct vmlat_ahist));

/* Where a VM's histograms come from: vmlat_blocks. */
extern const struct vmlat_ahist_src vmlat_hist_src;

/**
 * struct vmlat_vm - one VM, named by its VMM process and its id
 * @lock:	protects @top, @preemptors, @stolen_by_host and @by_vm: the
 *		scheduler's probes take it, under the runqueue lock
 * @as_lock:	protects @as and @names: an exit that finds its vCPU in
 *		another guest address space takes it, as many times as the
 *		guest changes CR3, and never the scheduler's probes
 * @kvm:	the struct kvm, as a key only: never dereferenced; NULL once
 *		the VM is known to be destroyed (its threads may live on)
 * @id:		unique per VM lifetime since load: 1, 2, 3...
 * @pid:	tgid of the VMM process
 * @comm:	its name
 * @live_vcpus:	vCPU threads not exited; 0 and @exited: the VM is gone
 * @ident_seq:	written around the record's (re)use for a VM, from its
 *		init to its first vCPU's slot (vmlat_vcpu_new()): readers
 *		check they read the VM they listed
 * @exited:	all its vCPU threads exited (kept for display until reused)
 * @partly:	one of its vCPU threads was turned away at a cap (and may
 *		have a record since): its figures miss that thread's time
 * @exits:	exit counts and handling times per reason slot
 *		(exit_codes.h), with a histogram of the first reasons seen
 *		(exit_stats.h)
 * @hist:	preemption, wait and exit-handling durations; the last of
 *		the exits without a histogram in @exits only (undecoded, or
 *		of a reason past the first ones): read whole, it is merged
 *		with those (vmlat_view_hist()), so that an exit costs one
 *		histogram
 * @nested_exits: its L2 exits, once it had one
 * @nested_hist: L2 exit round trips and wake-up latencies (nested.h)
 * @irq:	its interrupt deliveries, from its first vCPU record on
 * @irq_hist:	their latencies, per source (enum vmlat_irq_src)
 * @expire_hist: its TSC-deadline timers' lateness at their VM entry,
 *		early or late (enum vmlat_expire_hist)
 * Every histogram, @nested_exits and @irq are NULL until their first sample or
 * event, then a block of vmlat_blocks, the record's until it is freed
 * (emptied when the record is reused).
 * @sync:	clock sync with its guest (clock_sync.h)
 * @top:	top preemptors by stolen time (space-saving top-k)
 * @preemptors:	who each slot of @top is
 * @stolen_by_host: time host tasks ran while its vCPUs waited
 * @by_vm:	the same by vCPUs of VMs (its own included), keyed by VM id:
 *		the VMs that took the most, and what the others took (@other);
 *		an id names one VM lifetime, so a reused record starts with
 *		no time of its own in anyone's table
 * @as:		its guest's address spaces: the stretches its vCPUs ended
 *		(aspace.h; the ones in progress are in their cursors)
 * @names:	who its guest said owns which address space (aspace.h)
 * @slot:	its slot in vmlat_vms
 * @hnode:	in the hash table of live VMs by @kvm (records.c)
 * @mm:		its VMM's address space, as a key only: how an interrupt
 *		that a thread of its VMM signals (an irqfd written by an
 *		I/O thread or a vhost worker) finds its VM
 * @mm_node:	in the hash table of live VMs by @mm (RCU: probes walk it)
 * @vcpus:	its vCPU records (vmlat_vcpu.vm_node)
 * @exit_node:	in the list of exited VMs once @exited, then in that of
 *		the records to free
 * The last six are vmlat_alloc_lock's.
 */
struct vmlat_vm {
	raw_spinlock_t lock;
	raw_spinlock_t as_lock;
	seqcount_t ident_seq;
	const void *kvm;
	u32 id;
	pid_t pid;
	char comm[TASK_COMM_LEN];
	atomic_t live_vcpus;
	bool exited;
	bool partly;
	struct vmlat_exit_stats exits;
	struct vmlat_ahist *hist[VMLAT_NR_HIST_KINDS];
	struct vmlat_vm_nested_exits *nested_exits;
	struct vmlat_ahist *nested_hist[VMLAT_NR_NESTED_HISTS];
	struct vmlat_vm_irq *irq;
	struct vmlat_ahist *irq_hist[VMLAT_NR_IRQ_SOURCES];
	struct vmlat_ahist *expire_hist[VMLAT_NR_EXPIRE_HISTS];
	struct vmlat_vm_sync sync;
	struct vmlat_topk top;
	struct vmlat_preemptor preemptors[VMLAT_TOPK_SLOTS];
	u64 stolen_by_host;
	struct vmlat_topk by_vm;
	struct vmlat_as_table as;
	struct vmlat_as_names names;
	unsigned int slot;
	struct hlist_node hnode;
	const void *mm;
	struct hlist_node mm_node;
	struct list_head vcpus;
	struct list_head exit_node;
};

/**
 * struct vmlat_vcpu - one vCPU thread
 * @lock:	serialises its state machine's scheduler events (its own,
 *		and wake-ups from other CPUs) and readers; its thread's own
 *		KVM events take it only when unexpected
 * @seq:	write barrier of @acct, for readers (view.c)
 * @task:	the thread, as a key; NULL once it exited
 * @kvm_vcpu:	the struct kvm_vcpu it runs, as a key only
 * @ran:	@kvm_vcpu was seen to have completed a VM entry (KVM's
 *		last_vmentry_cpu set): a vCPU at that address that has not is
 *		another one (written by its thread, read under
 *		vmlat_alloc_lock)
 * @vm:		its VM
 * @tid:	thread id
 * @idx:	vCPU index in its VM
 * @vcpu_id:	KVM's vcpu_id (the APIC id userspace gave it)
 * @exit_slot:	reason slot of the exit being handled, or VMLAT_SLOT_*
 * @acct:	state accounting
 * @victim_cpu:	CPU whose queue it waits on while preempted/woken, or -1
 *		(under that CPU's lock)
 * @victim_since_ns: since when it waits there
 * @iv_by:	who ran the longest slice on that CPU since it began to
 *		wait (under that CPU's lock)
 * @exit_isa:	the exit being handled: VMLAT_ISA_*, 0 if undecoded
 * @exit_reason: its raw code
 * @exit_ns:	its kvm_exit time; 0 until the record saw a kvm_exit
 * @vmcb_checked: the last VMCB pointer found plausible (kvm_x86.h)
 * @nested_done: what its last kvm_entry completed in the nested state
 *		machine (its thread's scratch space)
 * @irq:	its pending interrupts (core/irq.h), under @lock
 * @waits:	its last waits for a CPU (core/irq.h), under @lock: where it
 *		was when a timer's deadline passed (delivery.c)
 * @hv_entered_ns: the VM entry whose guest stretch its last exit for
 *		VMX's preemption timer ended, 0 if not known (its thread's)
 * @spun_on:	PAUSE exits (and long-spin-wait calls) of other vCPUs of
 *		its VM that found it
 *		preempted, since its preemption began (lhp.c)
 * @lhp:	its preemptions during which they spun (lhp.h), under @lock
 * @slot:	its slot in vmlat_vcpus
 * @vm_node:	in @vm's list of vCPU records
 * @free_node:	in the list of retired records, or of records to free
 * The last three are vmlat_alloc_lock's.
 *
 * Aligned on a cache line (its kmem_cache's): its lock and write barrier
 * share no line with another vCPU's.
 */
struct vmlat_vcpu {
	raw_spinlock_t lock;
	seqcount_t seq;
	const struct task_struct *task;
	const void *kvm_vcpu;
	bool ran;
	struct vmlat_vm *vm;
	pid_t tid;
	int idx;
	u32 vcpu_id;
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
	struct vmlat_irq_pend irq;
	struct vmlat_irq_waits waits;
	u64 hv_entered_ns;
	atomic_t spun_on;
	struct vmlat_lhp lhp;
	unsigned int slot;
	struct list_head vm_node;
	struct list_head free_node;
};

/**
 * struct vmlat_stats - how the bounded tables are doing
 * @dropped_vms: VMs not tracked because all VM slots, or all vCPU
 *		slots, were in use, each counted once (when its vCPU 0 is
 *		turned away)
 * @dropped_vcpus: vCPUs (a thread running a vCPU) not tracked, each
 *		counted once: no VM slot, no vCPU slot or no room in the task
 *		table
 * @dropped_victims: waits not attributed (per-CPU victim list full)
 * @irq_unattributed: interrupts made pending whose VM or vCPU vmlat could
 *		not tell (delivery.c): not from a vCPU thread, or to a vCPU
 *		without a record or with an id from VMLAT_IRQ_IDS on
 */
struct vmlat_stats {
	atomic64_t dropped_vms;
	atomic64_t dropped_vcpus;
	atomic64_t dropped_victims;
	atomic64_t irq_unattributed;
};

/* The tables' sizes, fixed at load (module parameters). */
extern unsigned int vmlat_max_vms;
extern unsigned int vmlat_max_vcpus;
/*
 * The slots: a record, or NULL (never used), or a free slot, its low bit
 * set (linking the next free one): vmlat_vm_at(), vmlat_vcpu_at().
 */
extern struct vmlat_vm **vmlat_vms;
extern struct vmlat_vcpu **vmlat_vcpus;
extern struct vmlat_stats vmlat_stats;
/* Live vCPU threads: the scheduler probes do nothing while it is 0. */
extern atomic_t vmlat_live_vcpus;
/* The reset every accounting catches up with (vmlat_records_reset()). */
extern u32 vmlat_reset_gen;
extern u64 vmlat_reset_ns;

DECLARE_PER_CPU(struct vmlat_vcpu *, vmlat_cur_vcpu);

#define VMLAT_SLOT_FREE	1UL

/*
 * The record in slot @i, or NULL. Context: any; the record stays while
 * the caller is a probe, or holds vmlat_records_mutex (view.c).
 */
static __always_inline struct vmlat_vcpu *vmlat_vcpu_at(unsigned int i)
{
	struct vmlat_vcpu *vc = READ_ONCE(vmlat_vcpus[i]);

	return (unsigned long)vc & VMLAT_SLOT_FREE ? NULL : vc;
}

static __always_inline struct vmlat_vm *vmlat_vm_at(unsigned int i)
{
	struct vmlat_vm *vm = READ_ONCE(vmlat_vms[i]);

	return (unsigned long)vm & VMLAT_SLOT_FREE ? NULL : vm;
}

/* The vCPU record of @p, or NULL. Context: any; no lock. */
static __always_inline struct vmlat_vcpu *
vmlat_vcpu_of(const struct task_struct *p)
{
	int idx = vmlat_task_find(p);
	struct vmlat_vcpu *vc;

	/* -1 (not a vCPU) and untracked marks alike */
	if ((unsigned int)idx >= VMLAT_TASK_UNTRACKED)
		return NULL;
	vc = vmlat_vcpu_at(idx);
	return vc && READ_ONCE(vc->task) == p ? vc : NULL;
}

/*
 * The current thread's vCPU record, or NULL. The CPU remembers the record
 * it last ran (or created), to spare the lookup on every KVM event: only a
 * hint, checked to be the current thread's.
 */
static __always_inline struct vmlat_vcpu *vmlat_vcpu_current(void)
{
	struct vmlat_vcpu *vc = this_cpu_read(vmlat_cur_vcpu);

	if (likely(vc && READ_ONCE(vc->task) == current))
		return vc;
	vc = vmlat_vcpu_of(current);
	if (vc)
		this_cpu_write(vmlat_cur_vcpu, vc);
	return vc;
}

/*
 * @vc's vCPU completed a VM entry: see struct vmlat_vcpu.ran.
 * Context: @vc's thread.
 */
static __always_inline void vmlat_vcpu_ran(struct vmlat_vcpu *vc)
{
	/* Pairs with the acquire in vmlat_vm_stale(). */
	smp_store_release(&vc->ran, true);
}

/*
 * Add a sample to @vm's histogram at @p (one of its @hist or
 * @nested_hist): a probe's, any context.
 */
static __always_inline void vmlat_vm_hist_add(struct vmlat_ahist **p, u64 ns)
{
	vmlat_ahist_add_lazy(p, &vmlat_hist_src, ns);
}

struct vmlat_vm_nested_exits *vmlat_vm_nested_exits(struct vmlat_vm *vm);
struct vmlat_vm_irq *vmlat_vm_irq(struct vmlat_vm *vm);
struct vmlat_vm *vmlat_vm_of_mm(const struct mm_struct *mm);

struct kvm_vcpu;

struct vmlat_vcpu *vmlat_vcpu_new(struct vmlat_vcpu *old,
				  struct kvm_vcpu *vcpu, enum vmlat_event ev,
				  u64 now);
void vmlat_vcpu_exited(struct vmlat_vcpu *vc, const struct task_struct *p);
void vmlat_untracked_exited(const struct task_struct *p);

/*
 * Readers of records hold it: a record is freed under it (records.c).
 * Context: process context.
 */
extern struct mutex vmlat_records_mutex;

/**
 * struct vmlat_records_stats - slots in use, for status
 * @vms_live:	VM records with a live vCPU thread
 * @vms_exited:	VM records kept for display (reusable)
 * @vcpus_live:	vCPU records of live threads
 * @vcpus_exited: vCPU records kept for display (reusable)
 */
struct vmlat_records_stats {
	unsigned int vms_live;
	unsigned int vms_exited;
	unsigned int vcpus_live;
	unsigned int vcpus_exited;
};

void vmlat_records_read_stats(struct vmlat_records_stats *st);

/**
 * struct vmlat_records_memory - what vmlat's records take, for status
 * @bytes:	all of it: the tables of slots and of tasks, the records and
 *		blocks in use and in their pools
 * @tables:	of which the tables, allocated at load
 * @vms:	the pool of VM records
 * @vcpus:	the pool of vCPU records
 * @blocks:	the pool of blocks VMs take on first use
 */
struct vmlat_records_memory {
	size_t bytes;
	size_t tables;
	struct vmlat_pool_stats vms;
	struct vmlat_pool_stats vcpus;
	struct vmlat_pool_stats blocks;
};

void vmlat_records_read_memory(struct vmlat_records_memory *mem);

void vmlat_records_reset(void);
int vmlat_records_init(void);
void vmlat_records_exit(void);

#endif /* _VMLAT_RECORDS_H */
