// SPDX-License-Identifier: GPL-2.0
/*
 * VM and vCPU records (records.h): the tables, their slots, creating a
 * vCPU's record at its thread's first KVM event, retiring it when the
 * thread exits, and resets.
 *
 * Slots are taken and given back under vmlat_alloc_lock, a raw spinlock
 * taken with IRQs off: creation runs in KVM's probes (preemption off),
 * retirement in sched_process_exit. A VM's slot is reused only once all
 * its vCPU threads exited; until then it is shown as it was.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/kvm_host.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/vmalloc.h>

#include "kvm_x86.h"
#include "records.h"

struct vmlat_vm *vmlat_vms;
struct vmlat_vcpu *vmlat_vcpus;
struct vmlat_stats vmlat_stats;
atomic_t vmlat_live_vcpus = ATOMIC_INIT(0);
DEFINE_PER_CPU(struct vmlat_vcpu *, vmlat_cur_vcpu);

/*
 * Resets: vmlat_records_reset() bumps the generation after setting the
 * time; every vCPU's accounting catches up at its next event (under its
 * write barrier), and readers apply it to their copy meanwhile.
 */
u32 vmlat_reset_gen;
u64 vmlat_reset_ns;

static unsigned long vmlat_vm_used[BITS_TO_LONGS(VMLAT_MAX_VMS)];
static unsigned long vmlat_vcpu_used[BITS_TO_LONGS(VMLAT_MAX_VCPUS)];
static DEFINE_RAW_SPINLOCK(vmlat_alloc_lock);

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
	int i, by;

	for (i = 0; i < VMLAT_EXIT_NR_SLOTS; i++) {
		atomic64_set(&vm->exit_count[i], 0);
		atomic64_set(&vm->exit_ns[i], 0);
		for (by = 0; by < VMLAT_NR_NESTED_BY; by++)
			atomic64_set(&vm->nested_exits[by][i], 0);
	}
	atomic64_set(&vm->exit_undecoded, 0);
	for (by = 0; by < VMLAT_NR_NESTED_BY; by++)
		atomic64_set(&vm->nested_undecoded[by], 0);
	for (i = 0; i < VMLAT_NR_HIST_KINDS; i++)
		vmlat_ahist_init(&vm->hist[i]);
	for (i = 0; i < VMLAT_NR_NESTED_HISTS; i++)
		vmlat_ahist_init(&vm->nested_hist[i]);
	vmlat_vm_sync_clear_stats(&vm->sync);
	for (i = 0; i < VMLAT_REASON_HISTS; i++) {
		atomic_set(&vm->reason_slot[i], VMLAT_SLOT_UNDECODED);
		vmlat_ahist_init(&vm->reason_hist[i]);
	}
	raw_spin_lock_irqsave(&vm->lock, flags);
	vmlat_topk_init(&vm->top);
	memset(vm->preemptors, 0, sizeof(vm->preemptors));
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
	vmlat_copy_comm(vm->comm, current->group_leader->comm);
	atomic_set(&vm->live_vcpus, 0);
	WRITE_ONCE(vm->exited, false);
	/* Nobody was stolen from by an earlier VM of this slot. */
	for (i = 0; i < VMLAT_MAX_VMS; i++) {
		raw_spin_lock(&vmlat_vms[i].lock);
		vmlat_vms[i].stolen_by[vmlat_stolen_row(vm)] = 0;
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

/**
 * vmlat_vcpu_new() - the record of the current thread for @vcpu
 * @old:	the thread's record for another vCPU (a VMM that destroyed a
 *		VM and made another), retired first; or NULL
 * @vcpu:	the vCPU the thread runs
 * @ev:		its first KVM event (VMLAT_EV_ENTRY or VMLAT_EV_EXIT)
 * @now:	its time
 *
 * Context: the thread's kvm_entry/kvm_exit probe, preemption off.
 * Return: NULL: the creating event needs no more accounting (or the
 * tables are full); this CPU's vmlat_cur_vcpu is the new record then.
 */
noinline struct vmlat_vcpu *vmlat_vcpu_new(struct vmlat_vcpu *old,
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
	vc->exit_slot = VMLAT_SLOT_UNDECODED;
	vc->victim_cpu = -1;
	vc->vmcb_checked = NULL;
	raw_write_seqcount_begin(&vc->seq);
	vmlat_acct_init(&vc->acct, ev, now);
	if (ev == VMLAT_EV_ENTRY)
		vmlat_nested_entry(&vc->acct.nested, vmlat_kvm_in_l2(vcpu), 0,
				   now, &vc->nested_done);
	/* Counts from now: no reset to catch up with. */
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

/**
 * vmlat_vcpu_exited() - retire the record of an exiting vCPU thread
 * @vc:	its record; it waits on no CPU any more
 * @p:	the thread
 *
 * Context: sched_process_exit, in the thread.
 */
void vmlat_vcpu_exited(struct vmlat_vcpu *vc, const struct task_struct *p)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&vmlat_alloc_lock, flags);
	vmlat_task_remove(p);
	vmlat_vcpu_retire(vc);
	raw_spin_unlock_irqrestore(&vmlat_alloc_lock, flags);
}

/**
 * vmlat_records_reset() - zero every statistic; VMs and vCPUs stay known
 *
 * Context: process context.
 */
void vmlat_records_reset(void)
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
 * vmlat_records_init() - allocate the bounded tables
 *
 * Context: process context, before any probe is attached.
 * Return: 0 or -ENOMEM.
 */
int vmlat_records_init(void)
{
	int i;

	vmlat_vms = vzalloc(array_size(VMLAT_MAX_VMS, sizeof(*vmlat_vms)));
	vmlat_vcpus = vzalloc(array_size(VMLAT_MAX_VCPUS,
					 sizeof(*vmlat_vcpus)));
	if (!vmlat_vms || !vmlat_vcpus || vmlat_tasks_init()) {
		vmlat_records_exit();
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
	return 0;
}

/**
 * vmlat_records_exit() - free the tables
 *
 * Context: process context, after every probe is detached and
 * tracepoint_synchronize_unregister() returned.
 */
void vmlat_records_exit(void)
{
	vmlat_tasks_exit();
	vfree(vmlat_vcpus);
	vfree(vmlat_vms);
	vmlat_vcpus = NULL;
	vmlat_vms = NULL;
}
