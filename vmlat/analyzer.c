// SPDX-License-Identifier: GPL-2.0
/*
 * The live analyzer: per-vCPU state machines, per-VM exit statistics and
 * histograms, and who ran while a vCPU waited for its CPU.
 *
 * Everything here runs in tracepoint probes: KVM's entry/exit path and the
 * scheduler (runqueue lock held). Hence: no allocation (all tables are
 * allocated at load and bounded, with counters of what did not fit), no
 * sleeping locks (raw spinlocks, taken briefly and never nested except
 * CPU victim list -> VM), no printing.
 *
 * Finding a task's vCPU record must cost next to nothing for the many
 * tasks that are not vCPUs: an open-addressing table keyed by the
 * task_struct pointer, looked up without a lock. A thread inserts and
 * removes only its own key (in its kvm_entry/kvm_exit and process-exit
 * probes), so a lookup from another CPU can at worst miss one event,
 * which the state machine notices and resyncs from.
 *
 * Who preempted whom ([P0] Algorithms 1-2, online as in the digest's
 * §6.2): while a vCPU is preempted or woken-but-waiting, it is a "victim"
 * on the CPU whose queue holds it; at every context switch on that CPU,
 * the task that just ran is charged the time it ran since the victim
 * started waiting.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/hash.h>
#include <linux/kvm_host.h>
#include <linux/percpu.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>

#include "analyzer.h"
#include "kvm_x86.h"
#include "report.h"
#include "vmlat_hypercall.h"
#include "vmlat_trace.h"

#define VMLAT_TASK_SLOTS	(4 * VMLAT_MAX_VCPUS)	/* power of two */
#define VMLAT_TASK_PROBES	32
#define VMLAT_MAX_VICTIMS	16

/* vmlat_vcpu.exit_slot of an exit that is a clock-sync hypercall */
#define VMLAT_SLOT_SYNC	(-2)

#define TASK_FREE	((const struct task_struct *)0)
#define TASK_TOMB	((const struct task_struct *)1)
#define TASK_CLAIMED	((const struct task_struct *)2)

const char *const vmlat_hist_kind_names[VMLAT_NR_HIST_KINDS] = {
	[VMLAT_HIST_PREEMPT]	= "preempt",
	[VMLAT_HIST_WAIT]	= "wait",
	[VMLAT_HIST_EXIT]	= "exit",
};

struct vmlat_task_slot {
	const struct task_struct *task;
	u32 idx;
};

/* The CPU's queue: vCPUs waiting on it, and when it last switched. */
struct vmlat_cpu {
	raw_spinlock_t lock;
	u64 last_switch_ns;
	unsigned int nr_victims;
	struct vmlat_vcpu *victims[VMLAT_MAX_VICTIMS];
};

struct vmlat_vm *vmlat_vms;
struct vmlat_vcpu *vmlat_vcpus;
struct vmlat_stats vmlat_stats;

static struct vmlat_task_slot *vmlat_tasks;
static unsigned long vmlat_vm_used[BITS_TO_LONGS(VMLAT_MAX_VMS)];
static unsigned long vmlat_vcpu_used[BITS_TO_LONGS(VMLAT_MAX_VCPUS)];
static DEFINE_RAW_SPINLOCK(vmlat_alloc_lock);
static DEFINE_PER_CPU(struct vmlat_cpu, vmlat_cpus);
/* Live vCPU threads: the scheduler probes do nothing while it is 0. */
static atomic_t vmlat_live_vcpus = ATOMIC_INIT(0);
/*
 * The vCPU record a CPU last ran (or created), to find the current
 * thread's record without a hash lookup on every KVM event. Only a hint:
 * the record is checked to be the current thread's.
 */
static DEFINE_PER_CPU(struct vmlat_vcpu *, vmlat_cur_vcpu);
/*
 * Resets: vmlat_analyzer_reset() bumps the generation after setting the
 * time; every vCPU's accounting catches up at its next event (under its
 * write barrier), and readers apply it to their copy meanwhile.
 */
static u32 vmlat_reset_gen;
static u64 vmlat_reset_ns;

/* The clock of ftrace's "mono" trace clock, safe in any context. */
u64 vmlat_now_ns(void)
{
	return ktime_get_mono_fast_ns();
}

/* ---- histograms --------------------------------------------------- */

static void vmlat_ahist_init(struct vmlat_ahist *h)
{
	int i;

	atomic64_set(&h->sum_ns, 0);
	atomic64_set(&h->min_ns, U64_MAX);
	atomic64_set(&h->max_ns, 0);
	for (i = 0; i < VMLAT_HIST_NR_BUCKETS; i++)
		atomic64_set(&h->buckets[i], 0);
}

static void vmlat_ahist_add(struct vmlat_ahist *h, u64 ns)
{
	s64 old;

	atomic64_inc(&h->buckets[vmlat_hist_bucket(ns)]);
	atomic64_add(ns, &h->sum_ns);
	old = atomic64_read(&h->min_ns);
	while ((u64)old > ns && !atomic64_try_cmpxchg(&h->min_ns, &old, ns))
		;
	old = atomic64_read(&h->max_ns);
	while ((u64)old < ns && !atomic64_try_cmpxchg(&h->max_ns, &old, ns))
		;
}

/**
 * vmlat_ahist_read() - copy a histogram (each field is read atomically;
 * a concurrent update may be half-seen, which a reader of live data
 * accepts)
 * @h:	the histogram
 * @s:	the copy
 */
void vmlat_ahist_read(const struct vmlat_ahist *h, struct vmlat_hist_snap *s)
{
	int i;

	s->sum_ns = atomic64_read(&h->sum_ns);
	s->min_ns = atomic64_read(&h->min_ns);
	s->max_ns = atomic64_read(&h->max_ns);
	/* The count is the buckets' sum: one atomic less per sample. */
	s->count = 0;
	for (i = 0; i < VMLAT_HIST_NR_BUCKETS; i++) {
		s->buckets[i] = atomic64_read(&h->buckets[i]);
		s->count += s->buckets[i];
	}
	if (!s->count)
		s->min_ns = 0;
}

/* ---- task -> vCPU ------------------------------------------------- */

static u32 vmlat_task_hash(const struct task_struct *p)
{
	return hash_ptr((void *)p, ilog2(VMLAT_TASK_SLOTS));
}

static __always_inline struct vmlat_vcpu *
vmlat_vcpu_of(const struct task_struct *p)
{
	u32 h = vmlat_task_hash(p), i;
	const struct task_struct *k;
	struct vmlat_vcpu *vc;

	for (i = 0; i < VMLAT_TASK_PROBES; i++) {
		struct vmlat_task_slot *s =
			&vmlat_tasks[(h + i) & (VMLAT_TASK_SLOTS - 1)];

		/* Pairs with the release in vmlat_task_insert(): idx is set. */
		k = smp_load_acquire(&s->task);
		if (k == TASK_FREE)
			return NULL;
		if (k != p)
			continue;
		vc = &vmlat_vcpus[READ_ONCE(s->idx)];
		return READ_ONCE(vc->task) == p ? vc : NULL;
	}
	return NULL;
}

/* The current thread's vCPU record, or NULL. */
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

/* Only the thread @p itself inserts or removes its key. */
static bool vmlat_task_insert(const struct task_struct *p, u32 idx)
{
	u32 h = vmlat_task_hash(p), i;

	for (i = 0; i < VMLAT_TASK_PROBES; i++) {
		struct vmlat_task_slot *s =
			&vmlat_tasks[(h + i) & (VMLAT_TASK_SLOTS - 1)];
		const struct task_struct *k = READ_ONCE(s->task);

		if (k != TASK_FREE && k != TASK_TOMB)
			continue;
		if (cmpxchg(&s->task, k, TASK_CLAIMED) != k)
			continue;
		WRITE_ONCE(s->idx, idx);
		/* Publish idx before the key: see vmlat_vcpu_of(). */
		smp_store_release(&s->task, p);
		return true;
	}
	return false;
}

static void vmlat_task_remove(const struct task_struct *p)
{
	u32 h = vmlat_task_hash(p), i;

	for (i = 0; i < VMLAT_TASK_PROBES; i++) {
		struct vmlat_task_slot *s =
			&vmlat_tasks[(h + i) & (VMLAT_TASK_SLOTS - 1)];
		const struct task_struct *k = READ_ONCE(s->task);

		if (k == TASK_FREE)
			return;
		if (k == p) {
			WRITE_ONCE(s->task, TASK_TOMB);
			return;
		}
	}
}

/* ---- VM and vCPU records ------------------------------------------ */

bool vmlat_vm_in_use(const struct vmlat_vm *vm)
{
	return test_bit(vm - vmlat_vms, vmlat_vm_used);
}

bool vmlat_vcpu_in_use(const struct vmlat_vcpu *vc)
{
	return test_bit(vc - vmlat_vcpus, vmlat_vcpu_used);
}

static void vmlat_vm_clear_stats(struct vmlat_vm *vm)
{
	unsigned long flags;
	int i;

	for (i = 0; i < VMLAT_EXIT_NR_SLOTS; i++) {
		atomic64_set(&vm->exit_count[i], 0);
		atomic64_set(&vm->exit_ns[i], 0);
	}
	atomic64_set(&vm->exit_undecoded, 0);
	for (i = 0; i < VMLAT_EXIT_NR_SLOTS; i++) {
		atomic64_set(&vm->nested_exits[0][i], 0);
		atomic64_set(&vm->nested_exits[1][i], 0);
	}
	atomic64_set(&vm->nested_undecoded[0], 0);
	atomic64_set(&vm->nested_undecoded[1], 0);
	for (i = 0; i < VMLAT_NR_HIST_KINDS; i++)
		vmlat_ahist_init(&vm->hist[i]);
	for (i = 0; i < VMLAT_NR_NESTED_HISTS; i++)
		vmlat_ahist_init(&vm->nested_hist[i]);
	vmlat_vm_sync_clear_stats(&vm->sync);
	for (i = 0; i < VMLAT_REASON_HISTS; i++) {
		atomic_set(&vm->reason_slot[i], -1);
		vmlat_ahist_init(&vm->reason_hist[i]);
	}
	raw_spin_lock_irqsave(&vm->lock, flags);
	memset(vm->preemptors, 0, sizeof(vm->preemptors));
	vm->other_ns = 0;
	memset(vm->stolen_by, 0, sizeof(vm->stolen_by));
	raw_spin_unlock_irqrestore(&vm->lock, flags);
}

/* Free (or reclaim an exited) VM slot. Context: vmlat_alloc_lock held. */
static struct vmlat_vm *vmlat_vm_new(const void *kvm)
{
	struct vmlat_vm *vm;
	int i, slot;

	slot = find_first_zero_bit(vmlat_vm_used, VMLAT_MAX_VMS);
	if (slot >= VMLAT_MAX_VMS) {
		for (slot = 0; slot < VMLAT_MAX_VMS; slot++) {
			if (READ_ONCE(vmlat_vms[slot].exited))
				break;
		}
		if (slot >= VMLAT_MAX_VMS)
			return NULL;
		/* Its exited vCPU records go with it. */
		for (i = 0; i < VMLAT_MAX_VCPUS; i++) {
			if (test_bit(i, vmlat_vcpu_used) &&
			    vmlat_vcpus[i].vm == &vmlat_vms[slot])
				clear_bit(i, vmlat_vcpu_used);
		}
	}
	vm = &vmlat_vms[slot];
	vmlat_vm_clear_stats(vm);
	vmlat_vm_sync_init(&vm->sync);
	vm->kvm = kvm;
	vm->pid = current->tgid;
	/*
	 * As tracepoints copy comm: get_task_comm() takes task_lock(), a
	 * sleeping lock on PREEMPT_RT, and this runs in a probe under a raw
	 * spinlock. A racing rename can tear the copy, not overrun it.
	 */
	memcpy(vm->comm, current->group_leader->comm, sizeof(vm->comm));
	vm->comm[sizeof(vm->comm) - 1] = '\0';
	atomic_set(&vm->live_vcpus, 0);
	WRITE_ONCE(vm->exited, false);
	/* Nobody was stolen from by an earlier VM of this slot. */
	for (i = 0; i < VMLAT_MAX_VMS; i++) {
		raw_spin_lock(&vmlat_vms[i].lock);
		vmlat_vms[i].stolen_by[1 + slot] = 0;
		raw_spin_unlock(&vmlat_vms[i].lock);
	}
	set_bit(slot, vmlat_vm_used);
	return vm;
}

static struct vmlat_vm *vmlat_vm_find(const void *kvm)
{
	int i;

	for_each_set_bit(i, vmlat_vm_used, VMLAT_MAX_VMS) {
		if (vmlat_vms[i].kvm == kvm && !READ_ONCE(vmlat_vms[i].exited))
			return &vmlat_vms[i];
	}
	return NULL;
}

/* Context: vmlat_alloc_lock held. */
static void vmlat_vcpu_retire(struct vmlat_vcpu *vc)
{
	struct vmlat_vm *vm = vc->vm;

	raw_spin_lock(&vc->lock);
	WRITE_ONCE(vc->task, NULL);
	raw_write_seqcount_begin(&vc->seq);
	vmlat_acct_end(&vc->acct, vmlat_now_ns());
	raw_write_seqcount_end(&vc->seq);
	raw_spin_unlock(&vc->lock);
	atomic_dec(&vmlat_live_vcpus);
	if (atomic_dec_and_test(&vm->live_vcpus))
		WRITE_ONCE(vm->exited, true);
}

/* Context: vmlat_alloc_lock held. */
static int vmlat_vcpu_slot(void)
{
	int i = find_first_zero_bit(vmlat_vcpu_used, VMLAT_MAX_VCPUS);

	if (i < VMLAT_MAX_VCPUS)
		return i;
	/* Reclaim an exited vCPU of a VM that still runs. */
	for (i = 0; i < VMLAT_MAX_VCPUS; i++) {
		if (!READ_ONCE(vmlat_vcpus[i].task))
			return i;
	}
	return -1;
}

/* Whether a vCPU runs its L2 guest: is_guest_mode(), as KVM reads it. */
static __always_inline bool vmlat_in_l2(const struct kvm_vcpu *vcpu)
{
	return vcpu->arch.hflags & HF_GUEST_MASK;
}

/*
 * Creates the record of the current thread for @vcpu, at its first KVM
 * event @ev; @old: the thread's record for another vCPU (a VMM that
 * destroyed a VM and made another), retired first. Returns NULL: the
 * creating event needs no more accounting (or the tables are full).
 */
static noinline struct vmlat_vcpu *vmlat_vcpu_new(struct vmlat_vcpu *old,
						  struct kvm_vcpu *vcpu,
						  enum vmlat_event ev, u64 now)
{
	struct vmlat_vcpu *vc = old;
	struct vmlat_vm *vm;
	unsigned long flags;
	bool inserted;
	int idx;

	raw_spin_lock_irqsave(&vmlat_alloc_lock, flags);
	if (vc) {
		vmlat_task_remove(current);
		vmlat_vcpu_retire(vc);
	}
	vm = vmlat_vm_find(vcpu->kvm);
	if (!vm)
		vm = vmlat_vm_new(vcpu->kvm);
	if (!vm) {
		atomic64_inc(&vmlat_stats.dropped_vms);
		vc = NULL;
		goto out;
	}
	idx = vmlat_vcpu_slot();
	if (idx < 0) {
		atomic64_inc(&vmlat_stats.dropped_vcpus);
		vc = NULL;
		goto out;
	}
	vc = &vmlat_vcpus[idx];
	raw_spin_lock(&vc->lock);
	vc->kvm_vcpu = vcpu;
	vc->vm = vm;
	vc->tid = current->pid;
	vc->idx = vcpu->vcpu_idx;
	vc->exit_slot = -1;
	vc->victim_cpu = -1;
	vc->vmcb_checked = NULL;
	raw_write_seqcount_begin(&vc->seq);
	vmlat_acct_init(&vc->acct, ev, now);
	if (ev == VMLAT_EV_ENTRY)
		vmlat_nested_entry(&vc->acct.nested, vmlat_in_l2(vcpu), 0, now,
				   &vc->nested_done);
	/* Counts from now: no reset to catch up with (see below). */
	vc->acct.reset_gen = smp_load_acquire(&vmlat_reset_gen);
	raw_write_seqcount_end(&vc->seq);
	WRITE_ONCE(vc->task, current);
	raw_spin_unlock(&vc->lock);
	this_cpu_write(vmlat_cur_vcpu, vc);
	set_bit(idx, vmlat_vcpu_used);
	inserted = vmlat_task_insert(current, idx);
	if (!inserted) {
		atomic64_inc(&vmlat_stats.dropped_vcpus);
		WRITE_ONCE(vc->task, NULL);
		clear_bit(idx, vmlat_vcpu_used);
		vc = NULL;
		goto out;
	}
	atomic_inc(&vm->live_vcpus);
	atomic_inc(&vmlat_live_vcpus);
	vc = NULL;	/* created at @ev: nothing more to account */
out:
	raw_spin_unlock_irqrestore(&vmlat_alloc_lock, flags);
	return vc;
}

/*
 * The record of the current thread, running @vcpu; created (and NULL
 * returned) at its first KVM event @ev.
 */
static __always_inline struct vmlat_vcpu *
vmlat_vcpu_get(struct kvm_vcpu *vcpu, enum vmlat_event ev, u64 now)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_current();

	if (likely(vc && vc->kvm_vcpu == vcpu))
		return vc;
	return vmlat_vcpu_new(vc, vcpu, ev, now);
}

/* ---- state machine ------------------------------------------------ */

static void vmlat_vm_exit_done(struct vmlat_vm *vm, int slot, u64 ns)
{
	int i, s;

	vmlat_ahist_add(&vm->hist[VMLAT_HIST_EXIT], ns);
	if (slot < 0)
		return;
	atomic64_add(ns, &vm->exit_ns[slot]);
	/* Reason histograms go to the first reasons seen, lock-free. */
	for (i = 0; i < VMLAT_REASON_HISTS; i++) {
		s = atomic_read(&vm->reason_slot[i]);
		if (s == -1 && atomic_try_cmpxchg(&vm->reason_slot[i], &s, slot))
			s = slot;
		if (s == slot) {
			vmlat_ahist_add(&vm->reason_hist[i], ns);
			return;
		}
	}
}

/* An interval crossed its threshold: fill in a report. */
static noinline void vmlat_interval_report(struct vmlat_vcpu *vc,
					   enum vmlat_hist_kind kind, u64 ns,
					   const struct vmlat_by *by, u64 now)
{
	struct vmlat_report r = {
		.kind = kind,
		.vm_pid = vc->vm->pid,
		.vcpu = vc->idx,
		.duration_ns = ns,
		.end_ns = now,
	};

	memcpy(r.vm_comm, vc->vm->comm, sizeof(r.vm_comm));
	if (kind == VMLAT_HIST_EXIT) {
		r.cpu = smp_processor_id();
		r.start_ns = vc->exit_ns;
		r.isa = vc->exit_isa;
		r.exit_reason = vc->exit_reason;
		r.by.kind = VMLAT_BY_NONE;
		r.by.vcpu = -1;
	} else {
		r.cpu = by->cpu;
		r.start_ns = now - ns;
		r.by = *by;
	}
	vmlat_report(&r);
}

/* Count what a completed interval was: histograms, trace event, report. */
static __always_inline void vmlat_vcpu_done(struct vmlat_vcpu *vc,
					    const struct vmlat_done *done,
					    int slot, const struct vmlat_by *by,
					    u64 now)
{
	struct vmlat_vm *vm = vc->vm;
	enum vmlat_hist_kind kind;

	switch (done->kind) {
	case VMLAT_DONE_PREEMPT:
		kind = VMLAT_HIST_PREEMPT;
		vmlat_ahist_add(&vm->hist[kind], done->ns);
		trace_vmlat_preempt(vm->pid, vc->idx, done->ns, by);
		break;
	case VMLAT_DONE_WAIT:
		kind = VMLAT_HIST_WAIT;
		vmlat_ahist_add(&vm->hist[kind], done->ns);
		trace_vmlat_wait(vm->pid, vc->idx, done->ns, by);
		break;
	case VMLAT_DONE_EXIT:
		/* The exits of clock sync are not the guest's workload. */
		if (unlikely(slot == VMLAT_SLOT_SYNC)) {
			atomic64_add(done->ns, &vm->sync.exit_ns);
			return;
		}
		kind = VMLAT_HIST_EXIT;
		vmlat_vm_exit_done(vm, slot, done->ns);
		trace_vmlat_exit(vm->pid, vc->idx, done->ns, vc->exit_isa,
				 vc->exit_reason);
		break;
	default:
		return;
	}
	if (unlikely(vmlat_over_threshold(kind, done->ns)))
		vmlat_interval_report(vc, kind, done->ns, by, now);
}

/*
 * What a kvm_entry or kvm_exit tells the nested state machine, as flags
 * (in registers: a struct on the stack costs its zeroing on kernels built
 * with CONFIG_INIT_STACK_ALL_ZERO, at every exit).
 */
#define VMLAT_NIN_EVENT		0x1	/* a kvm_entry or kvm_exit */
#define VMLAT_NIN_L2		0x2	/* is_guest_mode(): L2 exited/entered */
#define VMLAT_NIN_VMENTER	0x4	/* the exit is L1's VMRUN/VMLAUNCH/VMRESUME */

/*
 * Feed the nested state machine a kvm_entry or kvm_exit of @a's vCPU;
 * true if it completed something to count (in @nd).
 * Context: in a write section of its vCPU's seq, in its thread.
 */
static __always_inline bool vmlat_nested_event(struct vmlat_vcpu_acct *a,
					       enum vmlat_event ev, bool hlt,
					       unsigned int nin, int slot,
					       u64 now,
					       struct vmlat_nested_done *nd)
{
	if (!nin)
		return false;
	if (ev == VMLAT_EV_EXIT) {
		vmlat_nested_exit(&a->nested, nin & VMLAT_NIN_L2, slot, hlt,
				  nin & VMLAT_NIN_VMENTER, now);
		return false;
	}
	return vmlat_nested_entry(&a->nested, nin & VMLAT_NIN_L2, a->woken_ns,
				  now, nd);
}

/* Count what a kvm_entry completed in the nested state machine. */
static noinline void vmlat_nested_done(struct vmlat_vcpu *vc,
				       const struct vmlat_nested_done *nd)
{
	struct vmlat_vm *vm = vc->vm;
	unsigned int i;
	int slot;

	if (nd->handled) {
		i = nd->handled == VMLAT_LEVEL_L1;
		if (nd->slot >= 0)
			atomic64_inc(&vm->nested_exits[i][nd->slot]);
		else
			atomic64_inc(&vm->nested_undecoded[i]);
	}
	for (i = 0; i < nd->nr; i++) {
		vmlat_ahist_add(&vm->nested_hist[nd->iv[i].hist],
				nd->iv[i].ns);
		if (nd->iv[i].hist != VMLAT_NH_L2_EXIT_L0 &&
		    nd->iv[i].hist != VMLAT_NH_L2_EXIT_L1)
			continue;
		slot = nd->iv[i].slot;
		trace_vmlat_nested_exit(vm->pid, vc->idx, nd->iv[i].ns,
					slot < 0 ? 0 : vmlat_exit_slot_isa(slot),
					slot < 0 ? 0 : vmlat_exit_slot_code(slot),
					nd->iv[i].hist == VMLAT_NH_L2_EXIT_L1);
	}
}

/*
 * Catch up with a reset @vc has not counted from yet.
 * Context: in a write section of @vc->seq.
 */
static __always_inline void vmlat_vcpu_catch_up(struct vmlat_vcpu *vc)
{
	/* Pairs with the release in vmlat_analyzer_reset(): the time is set. */
	u32 gen = smp_load_acquire(&vmlat_reset_gen);

	if (unlikely(vc->acct.reset_gen != gen))
		vmlat_acct_reset(&vc->acct, gen, READ_ONCE(vmlat_reset_ns));
}

/*
 * One event of @vc, under its lock; @by: for a switch-in, who ran the
 * longest slice while it waited (what a completed preemption or wait is
 * attributed to).
 */
static noinline void vmlat_vcpu_event(struct vmlat_vcpu *vc,
				      enum vmlat_event ev, bool hlt, u64 now,
				      const struct vmlat_by *by,
				      unsigned int nin, int nslot)
{
	struct vmlat_nested_done *nd = &vc->nested_done;
	struct vmlat_done done;
	unsigned long flags;
	bool count_nd;
	int slot;

	raw_spin_lock_irqsave(&vc->lock, flags);
	/* Write nothing then: see vmlat_owner_event(). */
	if (!nin && vmlat_acct_event_is_noop(&vc->acct, ev)) {
		raw_spin_unlock_irqrestore(&vc->lock, flags);
		return;
	}
	slot = vc->exit_slot;
	raw_write_seqcount_begin(&vc->seq);
	vmlat_vcpu_catch_up(vc);
	vmlat_acct_event(&vc->acct, ev, hlt, now, &done);
	count_nd = vmlat_nested_event(&vc->acct, ev, hlt, nin, nslot, now, nd);
	raw_write_seqcount_end(&vc->seq);
	raw_spin_unlock_irqrestore(&vc->lock, flags);
	vmlat_vcpu_done(vc, &done, slot, by, now);
	if (unlikely(count_nd))
		vmlat_nested_done(vc, nd);
}

static_assert(VMLAT_GUEST < VMLAT_USER && VMLAT_KERNEL < VMLAT_USER &&
	      VMLAT_PREEMPTED > VMLAT_USER && VMLAT_WAIT > VMLAT_USER &&
	      VMLAT_IDLE > VMLAT_USER && VMLAT_BLOCKED > VMLAT_USER,
	      "the on-CPU states are the ones up to VMLAT_USER");

/*
 * One of the current thread's own KVM events (kvm_exit, kvm_userspace_exit,
 * kvm_entry): three per exit round trip, so without the lock when it can
 * be. While the vCPU is on CPU (guest, kernel, user), only this thread
 * writes its accounting: what other CPUs report then (a wake-up of a
 * running task) changes nothing and writes nothing, and what takes it off
 * CPU (its switch-out) runs in this thread. The write barrier is for
 * readers (vmlat_vcpu_read_acct()); it is the raw one, without lockdep's
 * annotation, which cannot know that the writers in hard IRQ context (a
 * wake-up of a halted vCPU) and these never meet. Anything unexpected
 * goes the locked way.
 *
 * Context: @vc's thread, preemption off.
 */
static __always_inline void vmlat_owner_event(struct vmlat_vcpu *vc,
					      enum vmlat_event ev, bool hlt,
					      u64 now, unsigned int nin,
					      int nslot)
{
	struct vmlat_nested_done *nd = &vc->nested_done;
	struct vmlat_done done;
	bool ok, count_nd = false;

	if (likely(READ_ONCE(vc->acct.state) <= VMLAT_USER)) {
		raw_write_seqcount_begin(&vc->seq);
		vmlat_vcpu_catch_up(vc);
		ok = vmlat_acct_owner(&vc->acct, ev, hlt, now, &done);
		if (likely(ok))
			count_nd = vmlat_nested_event(&vc->acct, ev, hlt, nin,
						      nslot, now, nd);
		raw_write_seqcount_end(&vc->seq);
		if (likely(ok)) {
			if (done.kind == VMLAT_DONE_EXIT)
				vmlat_vcpu_done(vc, &done, vc->exit_slot, NULL,
						now);
			if (unlikely(count_nd))
				vmlat_nested_done(vc, nd);
			return;
		}
	}
	vmlat_vcpu_event(vc, ev, hlt, now, NULL, nin, nslot);
}

/*
 * Apply @fn to the nested state of the current thread's @vc, as
 * vmlat_owner_event() writes: without the lock while it is on CPU.
 */
static void vmlat_owner_nested(struct vmlat_vcpu *vc,
			       void (*fn)(struct vmlat_nested *n))
{
	unsigned long flags;

	if (likely(READ_ONCE(vc->acct.state) <= VMLAT_USER)) {
		raw_write_seqcount_begin(&vc->seq);
		fn(&vc->acct.nested);
		raw_write_seqcount_end(&vc->seq);
		return;
	}
	raw_spin_lock_irqsave(&vc->lock, flags);
	raw_write_seqcount_begin(&vc->seq);
	fn(&vc->acct.nested);
	raw_write_seqcount_end(&vc->seq);
	raw_spin_unlock_irqrestore(&vc->lock, flags);
}

/**
 * vmlat_vcpu_read_acct() - a consistent copy of a vCPU's accounting
 * @vc:	the vCPU
 * @a:	the copy, with any reset @vc has not caught up with applied
 *
 * Context: process context, @vc->lock held (no other writer then runs
 * but @vc's own thread, whose write sections are short and never wait).
 */
void vmlat_vcpu_read_acct(struct vmlat_vcpu *vc, struct vmlat_vcpu_acct *a)
{
	unsigned int seq;
	u32 gen;

	do {
		seq = read_seqcount_begin(&vc->seq);
		*a = vc->acct;
	} while (read_seqcount_retry(&vc->seq, seq));
	/* Pairs with the release in vmlat_analyzer_reset(). */
	gen = smp_load_acquire(&vmlat_reset_gen);
	if (a->reset_gen != gen)
		vmlat_acct_reset(a, gen, READ_ONCE(vmlat_reset_ns));
}

/**
 * vmlat_on_kvm_entry() - a vCPU enters guest mode
 * @vcpu:	the vCPU; current is its thread
 *
 * Context: kvm_entry tracepoint, preemption disabled.
 */
void vmlat_on_kvm_entry(struct kvm_vcpu *vcpu)
{
	u64 now = vmlat_now_ns();
	struct vmlat_vcpu *vc = vmlat_vcpu_get(vcpu, VMLAT_EV_ENTRY, now);
	unsigned int nin = VMLAT_NIN_EVENT |
			   (vmlat_in_l2(vcpu) ? VMLAT_NIN_L2 : 0);

	if (vc)
		vmlat_owner_event(vc, VMLAT_EV_ENTRY, false, now, nin, -1);
}

/**
 * vmlat_on_kvm_exit() - a vCPU leaves guest mode
 * @vcpu:	the vCPU; current is its thread
 * @isa:	KVM_ISA_SVM or KVM_ISA_VMX
 *
 * Context: kvm_exit tracepoint, on the vCPU's CPU, preemption disabled.
 */
void vmlat_on_kvm_exit(struct kvm_vcpu *vcpu, u32 isa)
{
	u64 now = vmlat_now_ns(), code;
	struct vmlat_vcpu *vc, *created;
	bool hlt = false, decoded;
	int slot = -1;

	vc = vmlat_vcpu_get(vcpu, VMLAT_EV_EXIT, now);
	/* NULL: just created at this exit (or not tracked) */
	created = vc ? NULL : vmlat_vcpu_current();
	if (!vc && !created)
		return;

	decoded = !vmlat_read_exit_code(vcpu, isa, &code,
					&(vc ?: created)->vmcb_checked);
	if (decoded) {
		slot = vmlat_exit_slot(isa, code);
		hlt = vmlat_exit_slot_is_hlt(slot);
	}

	if (vc) {
		unsigned int nin = VMLAT_NIN_EVENT |
			(vmlat_in_l2(vcpu) ? VMLAT_NIN_L2 : 0) |
			(vmlat_exit_slot_is_vmenter(slot) ? VMLAT_NIN_VMENTER : 0);

		vmlat_owner_event(vc, VMLAT_EV_EXIT, hlt, now, nin, slot);
	} else {
		vc = created;
		raw_write_seqcount_begin(&vc->seq);
		vc->acct.halted = hlt;
		raw_write_seqcount_end(&vc->seq);
	}
	WRITE_ONCE(vc->exit_slot, slot);
	/* Only this thread reads them, at its next kvm_entry. */
	vc->exit_isa = decoded ? isa : 0;
	vc->exit_reason = decoded ? (u32)code : 0;
	vc->exit_ns = now;
	if (slot >= 0)
		atomic64_inc(&vc->vm->exit_count[slot]);
	else
		atomic64_inc(&vc->vm->exit_undecoded);
}

/**
 * vmlat_on_userspace_exit() - the current vCPU thread returns to its VMM
 *
 * Context: kvm_userspace_exit tracepoint.
 */
void vmlat_on_userspace_exit(void)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_current();

	if (vc)
		vmlat_owner_event(vc, VMLAT_EV_USER_EXIT, false,
				  vmlat_now_ns(), 0, -1);
}

/**
 * vmlat_on_mmu_get_page() - KVM's MMU looked up or made a shadow page
 *
 * Context: kvmmmu:kvm_mmu_get_page tracepoint, MMU lock held; current
 * may be a vCPU thread or any thread of a VMM (the ioctls of dirty
 * logging).
 */
void vmlat_on_mmu_get_page(void)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_current();

	/* A READ_ONCE(): it is ours to write, readers copy it under seq. */
	if (vc && READ_ONCE(vc->acct.nested.p1_state) == VMLAT_P1_WAITING)
		vmlat_owner_nested(vc, vmlat_nested_mmu_page);
}

/**
 * vmlat_on_nested_vmexit_inject() - KVM makes L1 handle an exit of L2
 *
 * Context: kvm_nested_vmexit_inject tracepoint, in the vCPU's thread.
 */
void vmlat_on_nested_vmexit_inject(void)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_current();

	if (vc && READ_ONCE(vc->acct.nested.p1_state) != VMLAT_P1_NORMAL)
		vmlat_owner_nested(vc, vmlat_nested_inject);
}

/**
 * vmlat_on_kvm_hypercall() - a guest made a hypercall
 * @nr:		its number (RAX)
 * @a0:		RBX
 * @a1:		RCX
 * @a2:		RDX
 * @a3:		RSI
 *
 * vmlat's clock-sync calls (hypercall/vmlat_hypercall.h) go to their VM's
 * mapping, and their exit leaves the exit statistics for the VM's sync
 * counters. Any other number returns at once.
 *
 * Context: kvm_hypercall tracepoint, in the vCPU's thread, handling the
 * exit (the kvm_exit probe ran).
 */
void vmlat_on_kvm_hypercall(unsigned long nr, unsigned long a0,
			    unsigned long a1, unsigned long a2,
			    unsigned long a3)
{
	struct vmlat_sync_xchg x;
	struct vmlat_vcpu *vc;
	struct vmlat_vm *vm;
	int slot;

	if (likely(nr != VMLAT_HC_NR))
		return;
	vc = vmlat_vcpu_current();
	if (!vc)
		return;
	vm = vc->vm;
	if (vmlat_vm_sync_call(&vm->sync, vmlat_now_ns(), a0, a1, a2, a3, &x))
		trace_vmlat_sync(vm->pid, vc->idx, x.seq, x.g1, x.h, x.g2);

	slot = vc->exit_slot;
	if (slot == VMLAT_SLOT_SYNC)
		return;
	if (slot >= 0)
		atomic64_dec(&vm->exit_count[slot]);
	else
		atomic64_dec(&vm->exit_undecoded);
	atomic64_inc(&vm->sync.exits);
	WRITE_ONCE(vc->exit_slot, VMLAT_SLOT_SYNC);
}

/* ---- preemptors --------------------------------------------------- */

static void vmlat_charge(struct vmlat_vcpu *victim, struct task_struct *by,
			 u64 ns)
{
	struct vmlat_vm *vm = victim->vm;
	struct vmlat_vcpu *byvc = vmlat_vcpu_of(by);
	struct vmlat_preemptor *p, *free = NULL, *least = NULL;
	u8 kind = VMLAT_BY_HOST;
	u64 inherit;
	int i;

	if (byvc)
		kind = byvc->vm == vm ? VMLAT_BY_SAME_VM : VMLAT_BY_VM;

	/* The interval's longest slice: what its trace event names. */
	if (ns > victim->iv_by.ns) {
		struct vmlat_by *b = &victim->iv_by;

		b->kind = kind;
		b->pid = by->pid;
		b->vm_pid = byvc ? byvc->vm->pid : 0;
		b->vcpu = byvc ? byvc->idx : -1;
		b->ns = ns;
		memcpy(b->comm, by->comm, sizeof(b->comm));
		b->comm[sizeof(b->comm) - 1] = '\0';
	}

	raw_spin_lock(&vm->lock);
	vm->stolen_by[byvc ? 1 + (byvc->vm - vmlat_vms) : 0] += ns;
	for (i = 0; i < VMLAT_TOP_PREEMPTORS; i++) {
		p = &vm->preemptors[i];
		if (!p->slices) {
			free = free ?: p;
			continue;
		}
		if (p->pid == by->pid && p->kind == kind)
			goto found;
		if (!least || p->weight_ns < least->weight_ns)
			least = p;
	}
	inherit = 0;
	if (!free) {
		/*
		 * Table full: the "space-saving" top-k scheme. The newcomer
		 * replaces the entry of least weight, whose stolen time goes
		 * to "other", and inherits its weight. Weights only grow, so
		 * preemptors that take turns cannot keep evicting each other
		 * while older small entries stay: any preemptor with more than
		 * 1/VMLAT_TOP_PREEMPTORS of the stolen time keeps an entry. The
		 * stolen time shown stays exact: what the entry was charged.
		 */
		vm->other_ns += least->stolen_ns;
		inherit = least->weight_ns;
		memset(least, 0, sizeof(*least));
		free = least;
	}
	p = free;
	p->kind = kind;
	p->pid = by->pid;
	memcpy(p->comm, by->comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = '\0';
	p->vm_pid = byvc ? byvc->vm->pid : 0;
	p->vcpu = byvc ? byvc->idx : -1;
	p->weight_ns = inherit;
found:
	p->stolen_ns += ns;
	p->weight_ns += ns;
	p->slices++;
	raw_spin_unlock(&vm->lock);
}

static void vmlat_by_none(struct vmlat_by *b, int cpu)
{
	memset(b, 0, sizeof(*b));
	b->kind = VMLAT_BY_NONE;
	b->cpu = cpu;
	b->vcpu = -1;
}

/*
 * @vc waits on @cpu from @now; @by: who ran so far in this interval (it
 * moved from another CPU), or NULL: the interval begins.
 * Context: @c->lock held.
 */
static void vmlat_victim_add(struct vmlat_cpu *c, int cpu,
			     struct vmlat_vcpu *vc, u64 now,
			     const struct vmlat_by *by)
{
	if (vc->victim_cpu >= 0)
		return;
	if (c->nr_victims >= VMLAT_MAX_VICTIMS) {
		atomic64_inc(&vmlat_stats.dropped_victims);
		return;
	}
	c->victims[c->nr_victims++] = vc;
	vc->victim_cpu = cpu;
	vc->victim_since_ns = now;
	if (by) {
		vc->iv_by = *by;
		vc->iv_by.cpu = cpu;
	} else {
		vmlat_by_none(&vc->iv_by, cpu);
	}
}

/* Context: @c->lock held. */
static void vmlat_victim_del(struct vmlat_cpu *c, struct vmlat_vcpu *vc)
{
	unsigned int i;

	for (i = 0; i < c->nr_victims; i++) {
		if (c->victims[i] == vc) {
			c->victims[i] = c->victims[--c->nr_victims];
			break;
		}
	}
	vc->victim_cpu = -1;
}

/*
 * Remove @vc from whatever CPU it waits on; @by (if not NULL): set to who
 * ran the longest slice there meanwhile.
 */
static void vmlat_victim_leave(struct vmlat_vcpu *vc, struct vmlat_by *by)
{
	int cpu = READ_ONCE(vc->victim_cpu);
	unsigned long flags;
	struct vmlat_cpu *c;

	if (by)
		vmlat_by_none(by, cpu);
	if (cpu < 0)
		return;
	/* Wake-ups take these locks in hard IRQ context. */
	c = per_cpu_ptr(&vmlat_cpus, cpu);
	raw_spin_lock_irqsave(&c->lock, flags);
	if (vc->victim_cpu == cpu) {
		if (by)
			*by = vc->iv_by;
		vmlat_victim_del(c, vc);
	}
	raw_spin_unlock_irqrestore(&c->lock, flags);
}

/*
 * The context switch of a vCPU, or on a CPU a vCPU waits for: out of line,
 * so that the many others pay for no more than vmlat_on_sched_switch()'s
 * few registers.
 */
static noinline void vmlat_switch_vcpu(bool preempt, struct task_struct *prev,
				       unsigned int prev_state,
				       struct vmlat_vcpu *pv,
				       struct vmlat_vcpu *nv,
				       struct vmlat_cpu *c)
{
	bool runnable;
	unsigned int i;
	u64 now, from;
	int cpu;

	now = vmlat_now_ns();
	cpu = smp_processor_id();
	/* As __schedule(): a preempted task stays on the runqueue. */
	runnable = preempt || prev_state == TASK_RUNNING;

	if (pv)
		vmlat_vcpu_event(pv, runnable ? VMLAT_EV_OUT_RUNNABLE :
				 VMLAT_EV_OUT_SLEEP, false, now, NULL, 0, -1);

	/*
	 * Charge prev for its time on this CPU to every vCPU that waited here
	 * meanwhile, next included: so before next leaves the victim list.
	 */
	raw_spin_lock(&c->lock);
	for (i = 0; i < c->nr_victims; i++) {
		from = max(c->last_switch_ns, c->victims[i]->victim_since_ns);
		if (now > from)
			vmlat_charge(c->victims[i], prev, now - from);
	}
	c->last_switch_ns = now;
	if (pv && runnable)
		vmlat_victim_add(c, cpu, pv, now, NULL);
	raw_spin_unlock(&c->lock);

	if (nv) {
		struct vmlat_by by;

		this_cpu_write(vmlat_cur_vcpu, nv);
		vmlat_victim_leave(nv, &by);
		vmlat_vcpu_event(nv, VMLAT_EV_IN, false, now, &by, 0, -1);
	}
}

/**
 * vmlat_on_sched_switch() - a context switch
 * @preempt:	prev was preempted
 * @prev:	the task leaving the CPU
 * @next:	the task taking it
 * @prev_state:	prev's state as the scheduler saw it
 *
 * Context: sched_switch tracepoint, runqueue lock held, IRQs off.
 */
void vmlat_on_sched_switch(bool preempt, struct task_struct *prev,
			   struct task_struct *next, unsigned int prev_state)
{
	struct vmlat_vcpu *pv, *nv;
	struct vmlat_cpu *c;

	if (!atomic_read(&vmlat_live_vcpus))
		return;

	c = this_cpu_ptr(&vmlat_cpus);
	pv = vmlat_vcpu_of(prev);
	nv = vmlat_vcpu_of(next);
	/*
	 * Neither task is a vCPU and no vCPU waits here: nothing to account,
	 * and no clock read or lock on most context switches of a host.
	 * Victims are only added to this CPU's list under this runqueue's
	 * lock (sched_switch, sched_wakeup, sched_migrate_task), which we
	 * hold, so none can appear meanwhile; a later one is charged from
	 * its own victim_since_ns, never from a skipped switch.
	 */
	if (!pv && !nv && !READ_ONCE(c->nr_victims))
		return;
	vmlat_switch_vcpu(preempt, prev, prev_state, pv, nv, c);
}

/**
 * vmlat_on_sched_waking() - a task is being woken
 * @p:	the task
 *
 * Context: sched_waking tracepoint, on the waker's CPU.
 */
void vmlat_on_sched_waking(struct task_struct *p)
{
	struct vmlat_vcpu *vc;

	if (!atomic_read(&vmlat_live_vcpus))
		return;
	vc = vmlat_vcpu_of(p);
	if (vc)
		vmlat_vcpu_event(vc, VMLAT_EV_WAKEUP, false, vmlat_now_ns(),
				 NULL, 0, -1);
}

/**
 * vmlat_on_sched_wakeup() - a woken task is on a runqueue
 * @p:	the task; task_cpu(@p) is the CPU whose queue holds it
 *
 * Context: sched_wakeup tracepoint, that runqueue's lock held.
 */
void vmlat_on_sched_wakeup(struct task_struct *p)
{
	struct vmlat_vcpu *vc;
	struct vmlat_cpu *c;
	int cpu;

	if (!atomic_read(&vmlat_live_vcpus))
		return;
	vc = vmlat_vcpu_of(p);
	if (!vc || READ_ONCE(vc->acct.state) != VMLAT_WAIT)
		return;
	cpu = task_cpu(p);
	c = per_cpu_ptr(&vmlat_cpus, cpu);
	raw_spin_lock(&c->lock);
	vmlat_victim_add(c, cpu, vc, vmlat_now_ns(), NULL);
	raw_spin_unlock(&c->lock);
}

/**
 * vmlat_on_sched_migrate() - a task moves to another CPU's queue
 * @p:		the task
 * @dest_cpu:	where it goes
 *
 * Context: sched_migrate_task tracepoint, runqueue locks held.
 */
void vmlat_on_sched_migrate(struct task_struct *p, int dest_cpu)
{
	struct vmlat_vcpu *vc;
	struct vmlat_by by;
	struct vmlat_cpu *c;
	u64 since;

	if (!atomic_read(&vmlat_live_vcpus))
		return;
	vc = vmlat_vcpu_of(p);
	if (!vc || READ_ONCE(vc->victim_cpu) < 0)
		return;
	since = READ_ONCE(vc->victim_since_ns);
	vmlat_victim_leave(vc, &by);
	c = per_cpu_ptr(&vmlat_cpus, dest_cpu);
	raw_spin_lock(&c->lock);
	vmlat_victim_add(c, dest_cpu, vc, max(since, vmlat_now_ns()), &by);
	raw_spin_unlock(&c->lock);
}

/**
 * vmlat_on_sched_exit() - a thread exits
 * @p:	the thread (current)
 *
 * Context: sched_process_exit tracepoint, process context.
 */
void vmlat_on_sched_exit(struct task_struct *p)
{
	struct vmlat_vcpu *vc = vmlat_vcpu_of(p);
	unsigned long flags;

	if (!vc)
		return;
	vmlat_victim_leave(vc, NULL);
	raw_spin_lock_irqsave(&vmlat_alloc_lock, flags);
	vmlat_task_remove(p);
	vmlat_vcpu_retire(vc);
	raw_spin_unlock_irqrestore(&vmlat_alloc_lock, flags);
}

/* ---- lifetime ------------------------------------------------------ */

/**
 * vmlat_analyzer_reset() - zero every statistic; VMs and vCPUs stay known
 *
 * Context: process context.
 */
void vmlat_analyzer_reset(void)
{
	static DEFINE_MUTEX(reset_mutex);
	int i;

	/*
	 * The vCPUs' accounting is written without a lock by their threads:
	 * each catches up at its next event (readers apply it meanwhile).
	 */
	mutex_lock(&reset_mutex);
	WRITE_ONCE(vmlat_reset_ns, vmlat_now_ns());
	/* Whoever sees the new generation sees its time. */
	smp_store_release(&vmlat_reset_gen, vmlat_reset_gen + 1);
	mutex_unlock(&reset_mutex);

	for (i = 0; i < VMLAT_MAX_VMS; i++)
		vmlat_vm_clear_stats(&vmlat_vms[i]);
	atomic64_set(&vmlat_stats.dropped_vms, 0);
	atomic64_set(&vmlat_stats.dropped_vcpus, 0);
	atomic64_set(&vmlat_stats.dropped_victims, 0);
}

/**
 * vmlat_analyzer_init() - allocate the bounded tables
 *
 * Context: process context, before any probe is attached.
 * Return: 0 or -ENOMEM.
 */
int vmlat_analyzer_init(void)
{
	int i, cpu;

	vmlat_vms = vzalloc(array_size(VMLAT_MAX_VMS, sizeof(*vmlat_vms)));
	vmlat_vcpus = vzalloc(array_size(VMLAT_MAX_VCPUS,
					 sizeof(*vmlat_vcpus)));
	vmlat_tasks = vzalloc(array_size(VMLAT_TASK_SLOTS,
					 sizeof(*vmlat_tasks)));
	if (!vmlat_vms || !vmlat_vcpus || !vmlat_tasks) {
		vmlat_analyzer_exit();
		return -ENOMEM;
	}
	for (i = 0; i < VMLAT_MAX_VMS; i++) {
		raw_spin_lock_init(&vmlat_vms[i].lock);
		raw_spin_lock_init(&vmlat_vms[i].sync.lock);
		vmlat_vm_clear_stats(&vmlat_vms[i]);
	}
	for (i = 0; i < VMLAT_MAX_VCPUS; i++) {
		raw_spin_lock_init(&vmlat_vcpus[i].lock);
		seqcount_init(&vmlat_vcpus[i].seq);
		vmlat_vcpus[i].victim_cpu = -1;
	}
	for_each_possible_cpu(cpu)
		raw_spin_lock_init(&per_cpu_ptr(&vmlat_cpus, cpu)->lock);
	return 0;
}

/**
 * vmlat_analyzer_exit() - free the tables
 *
 * Context: process context, after every probe is detached and
 * tracepoint_synchronize_unregister() returned.
 */
void vmlat_analyzer_exit(void)
{
	vfree(vmlat_tasks);
	vfree(vmlat_vcpus);
	vfree(vmlat_vms);
	vmlat_tasks = NULL;
	vmlat_vcpus = NULL;
	vmlat_vms = NULL;
}
