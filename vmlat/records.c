// SPDX-License-Identifier: GPL-2.0
/*
 * VM and vCPU records (records.h): the tables, their slots, creating a
 * vCPU's record at its thread's first KVM event, retiring it when the
 * thread exits, and resets.
 *
 * Slots are taken and given back under vmlat_alloc_lock, a raw spinlock
 * taken with IRQs off: creation runs in KVM's probes (preemption off),
 * retirement in sched_process_exit. It also serialises the writers of the
 * task table (tasks.h). A VM's slot is reused only once all its vCPU
 * threads exited (or moved on to another vCPU); until then it is shown as
 * it was.
 *
 * The tables are sized at load by the module parameters max_vms and
 * max_vcpus (read-only once loaded): vmlat_records_read_memory() says what
 * they take.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/hash.h>
#include <linux/kvm_host.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/vmalloc.h>

#include "kvm_x86.h"
#include "records.h"

unsigned int vmlat_max_vms __read_mostly = VMLAT_MAX_VMS_DEFAULT;
unsigned int vmlat_max_vcpus __read_mostly = VMLAT_MAX_VCPUS_DEFAULT;
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

static unsigned long *vmlat_vm_used;
static unsigned long *vmlat_vcpu_used;
static DEFINE_RAW_SPINLOCK(vmlat_alloc_lock);

/*
 * What creating and retiring records go by, under vmlat_alloc_lock, so
 * that each step is bounded whatever the number of VMs and vCPUs the host
 * has or had: the live VMs by struct kvm, a hash table of a bucket per VM
 * slot (rounded up to a power of two); the slots never used, from
 * *_fresh up; the exited VMs and the retired vCPU records (their threads
 * exited), oldest first; the vCPU records freed with their VM.
 */
static u32 vmlat_vm_last_id;
static struct hlist_head *vmlat_vm_hash;
static unsigned int vmlat_vm_hash_bits;
static unsigned int vmlat_vm_fresh;
static unsigned int vmlat_vcpu_fresh;
static LIST_HEAD(vmlat_vms_exited);
static LIST_HEAD(vmlat_vcpus_retired);
static LIST_HEAD(vmlat_vcpus_free);

static struct vmlat_ahist *vmlat_hist_take(void)
{
	union vmlat_block *b = vmlat_pool_take(&vmlat_blocks);

	if (!b)
		return NULL;
	vmlat_ahist_init(&b->hist);
	return &b->hist;
}

static void vmlat_hist_put(struct vmlat_ahist *h)
{
	vmlat_pool_put(&vmlat_blocks, container_of(h, union vmlat_block, hist));
}

const struct vmlat_ahist_src vmlat_hist_src = {
	.take = vmlat_hist_take,
	.put = vmlat_hist_put,
};

/**
 * vmlat_vm_nested_exits() - @vm's L2 exit counters, made at its first
 * @vm:	the VM
 *
 * Context: any context.
 * Return: the counters, or NULL if none could be had (pool.h).
 */
struct vmlat_vm_nested_exits *vmlat_vm_nested_exits(struct vmlat_vm *vm)
{
	struct vmlat_vm_nested_exits *n = smp_load_acquire(&vm->nested_exits);
	union vmlat_block *b;

	if (n)
		return n;
	b = vmlat_pool_take(&vmlat_blocks);
	if (!b)
		return NULL;
	memset(&b->nested, 0, sizeof(b->nested));
	/* Fully ordered: whoever sees the pointer sees the zeroes. */
	n = cmpxchg(&vm->nested_exits, NULL, &b->nested);
	if (!n)
		return &b->nested;
	vmlat_pool_put(&vmlat_blocks, b);
	return n;
}

/* The blocks @vm took, given back. Context: no probe uses @vm any more. */
static void vmlat_vm_release(struct vmlat_vm *vm)
{
	unsigned int i;

	vmlat_exit_stats_release(&vm->exits, &vmlat_hist_src);
	for (i = 0; i < VMLAT_NR_HIST_KINDS; i++) {
		if (vm->hist[i])
			vmlat_hist_put(vm->hist[i]);
		vm->hist[i] = NULL;
	}
	for (i = 0; i < VMLAT_NR_NESTED_HISTS; i++) {
		if (vm->nested_hist[i])
			vmlat_hist_put(vm->nested_hist[i]);
		vm->nested_hist[i] = NULL;
	}
	if (vm->nested_exits)
		vmlat_pool_put(&vmlat_blocks, container_of(vm->nested_exits,
							   union vmlat_block,
							   nested));
	vm->nested_exits = NULL;
}

bool vmlat_vm_in_use(const struct vmlat_vm *vm)
{
	return test_bit(vm - vmlat_vms, vmlat_vm_used);
}

bool vmlat_vcpu_in_use(const struct vmlat_vcpu *vc)
{
	return test_bit(vc - vmlat_vcpus, vmlat_vcpu_used);
}

/* Empty the histogram at @p, if it was made. */
static void vmlat_vm_hist_clear(struct vmlat_ahist **p)
{
	struct vmlat_ahist *h = smp_load_acquire(p);

	if (h)
		vmlat_ahist_init(h);
}

static void vmlat_vm_clear_stats(struct vmlat_vm *vm)
{
	struct vmlat_vm_nested_exits *n;
	unsigned long flags;
	int i, by;

	vmlat_exit_stats_reset(&vm->exits);
	n = smp_load_acquire(&vm->nested_exits);
	if (n) {
		for (by = 0; by < VMLAT_NR_NESTED_BY; by++) {
			for (i = 0; i < VMLAT_EXIT_NR_SLOTS; i++)
				atomic64_set(&n->exits[by][i], 0);
			atomic64_set(&n->undecoded[by], 0);
		}
	}
	for (i = 0; i < VMLAT_NR_HIST_KINDS; i++)
		vmlat_vm_hist_clear(&vm->hist[i]);
	for (i = 0; i < VMLAT_NR_NESTED_HISTS; i++)
		vmlat_vm_hist_clear(&vm->nested_hist[i]);
	vmlat_vm_sync_clear_stats(&vm->sync);
	raw_spin_lock_irqsave(&vm->lock, flags);
	vmlat_topk_init(&vm->top);
	memset(vm->preemptors, 0, sizeof(vm->preemptors));
	vm->stolen_by_host = 0;
	vmlat_topk_init(&vm->by_vm);
	vmlat_as_table_init(&vm->as);
	vmlat_as_names_clear_stats(&vm->names);
	raw_spin_unlock_irqrestore(&vm->lock, flags);
}

/*
 * A VM slot for a new VM: one never used, or else that of the VM that
 * exited first (the VMs shown are the last ones), or -1. Nothing changes
 * until vmlat_vm_init() takes it. Context: vmlat_alloc_lock held.
 */
static int vmlat_vm_slot(void)
{
	struct vmlat_vm *vm;

	if (vmlat_vm_fresh < vmlat_max_vms)
		return vmlat_vm_fresh;
	vm = list_first_entry_or_null(&vmlat_vms_exited, struct vmlat_vm,
				      exit_node);
	return vm ? vm - vmlat_vms : -1;
}

static struct hlist_head *vmlat_vm_bucket(const void *kvm)
{
	return &vmlat_vm_hash[hash_ptr(kvm, vmlat_vm_hash_bits)];
}

/*
 * Make @slot (from vmlat_vm_slot()) the record of @kvm. An exited VM's
 * vCPU records go with it: their slots are free again.
 * Context: vmlat_alloc_lock held.
 */
static struct vmlat_vm *vmlat_vm_init(int slot, const void *kvm)
{
	struct vmlat_vm *vm = &vmlat_vms[slot];
	struct vmlat_vcpu *vc, *tmp;
	unsigned long flags;

	if (slot == vmlat_vm_fresh)
		vmlat_vm_fresh++;
	else
		list_del_init(&vm->exit_node);
	list_for_each_entry_safe(vc, tmp, &vm->vcpus, vm_node) {
		list_del_init(&vc->vm_node);
		list_move_tail(&vc->free_node, &vmlat_vcpus_free);
		clear_bit(vc - vmlat_vcpus, vmlat_vcpu_used);
	}
	vmlat_vm_clear_stats(vm);
	vmlat_vm_sync_init(&vm->sync);
	raw_spin_lock_irqsave(&vm->lock, flags);
	vmlat_as_names_init(&vm->names);
	raw_spin_unlock_irqrestore(&vm->lock, flags);
	vm->kvm = kvm;
	hlist_add_head(&vm->hnode, vmlat_vm_bucket(kvm));
	vm->id = ++vmlat_vm_last_id ?: ++vmlat_vm_last_id;
	vm->pid = current->tgid;
	/*
	 * As tracepoints copy comm: get_task_comm() takes task_lock(), a
	 * sleeping lock on PREEMPT_RT, and this runs in a probe under a raw
	 * spinlock. A racing rename can tear the copy, not overrun it.
	 */
	vmlat_copy_comm(vm->comm, current->group_leader->comm);
	atomic_set(&vm->live_vcpus, 0);
	WRITE_ONCE(vm->exited, false);
	/*
	 * What an earlier VM of this slot took from others stays theirs,
	 * under its own id: the new one starts in nobody's by_vm table.
	 */
	set_bit(slot, vmlat_vm_used);
	return vm;
}

/* How many of a VM's vCPU records vmlat_vm_stale() looks at, at most. */
#define VMLAT_STALE_WITNESSES	8

/*
 * Whether @vm, the live record of @kvm, is of an earlier VM at the same
 * address. Each of its vCPU records names a vCPU by index and address:
 * in one VM's lifetime index i is one vCPU, which lives as long as the
 * VM. So if @kvm's vCPU i is not at that address, or is there but never
 * ran while the record's did, @kvm is another VM. The first vCPU thread
 * of a new VM asks before any of its vCPUs ran (each one's first event
 * comes here first, under the lock), so one record that ran tells; the
 * first VMLAT_STALE_WITNESSES records are asked, whatever the VM's size.
 *
 * Context: vmlat_alloc_lock held, in a thread running a vCPU of @kvm.
 */
static bool vmlat_vm_stale(const struct vmlat_vm *vm, struct kvm *kvm)
{
	struct vmlat_vcpu *vc;
	struct kvm_vcpu *v;
	int n = 0;

	list_for_each_entry(vc, &vm->vcpus, vm_node) {
		if (n++ == VMLAT_STALE_WITNESSES)
			break;
		v = vmlat_kvm_vcpu_at(kvm, vc->idx);
		if (v != vc->kvm_vcpu)
			return true;
		/* Pairs with the release in vmlat_vcpu_ran(). */
		if (smp_load_acquire(&vc->ran) && vmlat_kvm_vcpu_never_ran(v))
			return true;
	}
	return false;
}

/*
 * The live record of @kvm, or NULL. A record found to be of an earlier VM
 * at that address is detached from it: it stays, as it was, until its
 * last thread retires it.
 *
 * Context: vmlat_alloc_lock held, in a thread running a vCPU of @kvm.
 */
static struct vmlat_vm *vmlat_vm_find(struct kvm *kvm)
{
	struct hlist_node *tmp;
	struct vmlat_vm *vm;

	hlist_for_each_entry_safe(vm, tmp, vmlat_vm_bucket(kvm), hnode) {
		if (vm->kvm != kvm)
			continue;
		if (!vmlat_vm_stale(vm, kvm))
			return vm;
		vm->kvm = NULL;
		hlist_del_init(&vm->hnode);
	}
	return NULL;
}

/* Context: vmlat_alloc_lock held. */
static void vmlat_vcpu_retire(struct vmlat_vcpu *vc)
{
	struct vmlat_vm *vm = vc->vm;
	struct vmlat_as_stretch s;
	struct vmlat_as_times t;
	bool had;

	raw_spin_lock(&vc->lock);
	WRITE_ONCE(vc->task, NULL);
	raw_write_seqcount_begin(&vc->seq);
	vmlat_acct_end(&vc->acct, vmlat_now_ns());
	/* Its last address space's stretch goes to the VM, once. */
	vmlat_acct_as_times(vc->acct.time_ns, &t);
	had = vmlat_as_cursor_move(&vc->acct.as, VMLAT_AS_NONE, &t, &s);
	raw_write_seqcount_end(&vc->seq);
	raw_spin_unlock(&vc->lock);
	if (had) {
		raw_spin_lock(&vm->lock);
		vmlat_as_table_add(&vm->as, &s);
		raw_spin_unlock(&vm->lock);
	}
	/* Shown as it was until its slot is needed: the oldest first. */
	list_add_tail(&vc->free_node, &vmlat_vcpus_retired);
	atomic_dec(&vmlat_live_vcpus);
	if (atomic_dec_and_test(&vm->live_vcpus)) {
		WRITE_ONCE(vm->exited, true);
		if (!hlist_unhashed(&vm->hnode))
			hlist_del_init(&vm->hnode);
		list_add_tail(&vm->exit_node, &vmlat_vms_exited);
	}
}

/*
 * A vCPU slot: one never used, one freed with its VM, or else that of the
 * thread that exited first (of a VM that may still run), or -1. Nothing
 * changes until vmlat_vcpu_take() takes it.
 * Context: vmlat_alloc_lock held.
 */
static int vmlat_vcpu_slot(void)
{
	struct vmlat_vcpu *vc;

	if (vmlat_vcpu_fresh < vmlat_max_vcpus)
		return vmlat_vcpu_fresh;
	vc = list_first_entry_or_null(&vmlat_vcpus_free, struct vmlat_vcpu,
				      free_node) ?:
	     list_first_entry_or_null(&vmlat_vcpus_retired, struct vmlat_vcpu,
				      free_node);
	return vc ? vc - vmlat_vcpus : -1;
}

/* Take slot @idx of vmlat_vcpu_slot() for @vm. Context: as it. */
static struct vmlat_vcpu *vmlat_vcpu_take(int idx, struct vmlat_vm *vm)
{
	struct vmlat_vcpu *vc = &vmlat_vcpus[idx];

	if (idx == vmlat_vcpu_fresh)
		vmlat_vcpu_fresh++;
	else
		list_del_init(&vc->free_node);
	list_move_tail(&vc->vm_node, &vm->vcpus);
	return vc;
}

/*
 * The current thread runs @vcpu, for which it has no record and gets none:
 * count it once and remember it, so that its events cost a lookup, not
 * vmlat_alloc_lock, until it runs a new vCPU (vmlat_untracked_run_ended()).
 * Context: vmlat_alloc_lock held.
 */
static void vmlat_vcpu_drop(struct kvm_vcpu *vcpu, bool no_vm)
{
	if (no_vm && vcpu->vcpu_idx == 0)
		atomic64_inc(&vmlat_stats.dropped_vms);
	atomic64_inc(&vmlat_stats.dropped_vcpus);
	/* No room for the mark: then the next event tries again. */
	vmlat_task_set(current, VMLAT_TASK_UNTRACKED);
}

/**
 * vmlat_vcpu_new() - the record of the current thread for @vcpu
 * @old:	the thread's record for a vCPU that is not @vcpu, or is @vcpu's
 *		address reused by another vCPU (a VMM that destroyed a VM and
 *		made another), retired first; or NULL
 * @vcpu:	the vCPU the thread runs
 * @ev:		its first KVM event (VMLAT_EV_ENTRY or VMLAT_EV_EXIT)
 * @now:	its time
 *
 * A VM record and a vCPU record are made together or not at all: a VM is
 * not tracked without a vCPU. A VM record is found by the struct kvm's
 * address and kept only if its vCPUs are still that VM's
 * (vmlat_vm_stale()). A thread that gets no record is marked untracked in
 * the task table and counted once, and tries again only for a new vCPU,
 * after the KVM_RUN it was turned away in.
 *
 * Context: the thread's kvm_entry/kvm_exit probe, preemption off.
 * Return: NULL: the creating event needs no more accounting (or the
 * thread is not tracked); this CPU's vmlat_cur_vcpu is the new record then.
 */
noinline struct vmlat_vcpu *vmlat_vcpu_new(struct vmlat_vcpu *old,
					   struct kvm_vcpu *vcpu,
					   enum vmlat_event ev, u64 now)
{
	bool never_ran = vmlat_kvm_vcpu_never_ran(vcpu);
	struct vmlat_vcpu *vc;
	struct vmlat_vm *vm;
	unsigned long flags;
	int idx, slot = -1;

	/*
	 * Not tracked: a lookup, no lock, until a vCPU that never ran after
	 * the KVM_RUN it was turned away in (which may see the vCPU's first
	 * entry more than once, and its first exit before KVM notes the run).
	 */
	if (!old) {
		idx = vmlat_task_find(current);
		if (idx == VMLAT_TASK_UNTRACKED ||
		    (idx == VMLAT_TASK_UNTRACKED_NEXT && !never_ran))
			return NULL;
	}

	raw_spin_lock_irqsave(&vmlat_alloc_lock, flags);
	if (old)
		vmlat_vcpu_retire(old);
	vm = vmlat_vm_find(vcpu->kvm);
	if (!vm) {
		slot = vmlat_vm_slot();
		if (slot < 0) {
			vmlat_vcpu_drop(vcpu, true);
			goto out;
		}
	}
	idx = vmlat_vcpu_slot();
	if (idx < 0 || !vmlat_task_set(current, idx)) {
		/* A VM not seen yet stays untracked with it: a dropped VM. */
		vmlat_vcpu_drop(vcpu, !vm);
		goto out;
	}
	if (!vm)
		vm = vmlat_vm_init(slot, vcpu->kvm);

	vc = vmlat_vcpu_take(idx, vm);
	raw_spin_lock(&vc->lock);
	vc->kvm_vcpu = vcpu;
	vc->ran = !never_ran;
	vc->vm = vm;
	vc->tid = current->pid;
	vc->idx = vcpu->vcpu_idx;
	vc->exit_slot = VMLAT_SLOT_UNDECODED;
	vc->exit_ns = 0;
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
	atomic_inc(&vm->live_vcpus);
	atomic_inc(&vmlat_live_vcpus);
out:
	raw_spin_unlock_irqrestore(&vmlat_alloc_lock, flags);
	return NULL;	/* created at @ev: nothing more to account */
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
 * vmlat_untracked_run_ended() - a thread turned away returns to its VMM
 *
 * From now on a vCPU that never ran is a new one: it is tried again.
 * Context: kvm_userspace_exit, in a thread without a record.
 */
void vmlat_untracked_run_ended(void)
{
	unsigned long flags;

	if (vmlat_task_find(current) != VMLAT_TASK_UNTRACKED)
		return;
	raw_spin_lock_irqsave(&vmlat_alloc_lock, flags);
	vmlat_task_set(current, VMLAT_TASK_UNTRACKED_NEXT);
	raw_spin_unlock_irqrestore(&vmlat_alloc_lock, flags);
}

/**
 * vmlat_untracked_exited() - forget an exiting thread marked untracked
 * @p:	the thread
 *
 * Context: sched_process_exit, in the thread.
 */
void vmlat_untracked_exited(const struct task_struct *p)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&vmlat_alloc_lock, flags);
	vmlat_task_remove(p);
	raw_spin_unlock_irqrestore(&vmlat_alloc_lock, flags);
}

/**
 * vmlat_records_read_stats() - slots in use, for status
 * @st:	filled in
 *
 * Context: any; a racy snapshot.
 */
void vmlat_records_read_stats(struct vmlat_records_stats *st)
{
	int i;

	memset(st, 0, sizeof(*st));
	for_each_set_bit(i, vmlat_vm_used, vmlat_max_vms) {
		if (READ_ONCE(vmlat_vms[i].exited))
			st->vms_exited++;
		else
			st->vms_live++;
	}
	for_each_set_bit(i, vmlat_vcpu_used, vmlat_max_vcpus) {
		if (READ_ONCE(vmlat_vcpus[i].task))
			st->vcpus_live++;
		else
			st->vcpus_exited++;
	}
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

	for (i = 0; i < vmlat_max_vms; i++)
		vmlat_vm_clear_stats(&vmlat_vms[i]);
	atomic64_set(&vmlat_stats.dropped_vms, 0);
	atomic64_set(&vmlat_stats.dropped_vcpus, 0);
	atomic64_set(&vmlat_stats.dropped_victims, 0);
	vmlat_pool_reset(&vmlat_blocks);
}

/* The bytes of the hash table of live VMs: a bucket per VM slot. */
static size_t vmlat_vm_hash_bytes(void)
{
	return sizeof(*vmlat_vm_hash) << vmlat_vm_hash_bits;
}

/* The bytes of a bitmap of @bits, allocated whole longs. */
static size_t vmlat_bitmap_bytes(unsigned int bits)
{
	return BITS_TO_LONGS(bits) * sizeof(unsigned long);
}

/**
 * vmlat_records_read_memory() - what the tables take, for status
 * @mem:	filled in
 *
 * Context: any, while loaded.
 */
void vmlat_records_read_memory(struct vmlat_records_memory *mem)
{
	size_t vms = vmlat_max_vms, vcpus = vmlat_max_vcpus;
	size_t tasks = vmlat_tasks_bytes();

	mem->vm_bytes = sizeof(*vmlat_vms) +
			DIV_ROUND_UP(vmlat_vm_hash_bytes(), vms);
	mem->vcpu_bytes = sizeof(*vmlat_vcpus) + DIV_ROUND_UP(tasks, vcpus);
	vmlat_pool_read_stats(&vmlat_blocks, &mem->blocks);
	mem->bytes = vms * sizeof(*vmlat_vms) + vmlat_vm_hash_bytes() +
		     vcpus * sizeof(*vmlat_vcpus) +
		     tasks + vmlat_bitmap_bytes(vmlat_max_vms) +
		     vmlat_bitmap_bytes(vmlat_max_vcpus) +
		     (mem->blocks.used + mem->blocks.free) * mem->blocks.size;
}

/*
 * max_vms, max_vcpus: set at load only (0444 once loaded), in
 * [1, VMLAT_MAX_*_LIMIT]; a value out of range fails the load with
 * -EINVAL and a message.
 */
static int param_size_set(const char *val, const struct kernel_param *kp)
{
	unsigned int limit = kp->arg == &vmlat_max_vms ?
			     VMLAT_MAX_VMS_LIMIT : VMLAT_MAX_VCPUS_LIMIT;
	unsigned int n;

	if (kstrtouint(val, 0, &n) || n < 1 || n > limit) {
		pr_err("%s: write a number from 1 to %u, at load (not '%s')\n",
		       kp->name, limit, val);
		return -EINVAL;
	}
	*(unsigned int *)kp->arg = n;
	return 0;
}

static const struct kernel_param_ops size_ops = {
	.set = param_size_set,
	.get = param_get_uint,
};

module_param_cb(max_vms, &size_ops, &vmlat_max_vms, 0444);
MODULE_PARM_DESC(max_vms, "VM records (1.." __stringify(VMLAT_MAX_VMS_LIMIT) ", default " __stringify(VMLAT_MAX_VMS_DEFAULT) "); set at load");
module_param_cb(max_vcpus, &size_ops, &vmlat_max_vcpus, 0444);
MODULE_PARM_DESC(max_vcpus, "vCPU records (1.." __stringify(VMLAT_MAX_VCPUS_LIMIT) ", default " __stringify(VMLAT_MAX_VCPUS_DEFAULT) "); set at load");

/**
 * vmlat_records_init() - allocate the bounded tables, as large as the
 * module parameters max_vms and max_vcpus say
 *
 * Context: process context, before any probe is attached.
 * Return: 0 or -ENOMEM.
 */
int vmlat_records_init(void)
{
	int i;

	vmlat_vms = vzalloc(array_size(vmlat_max_vms, sizeof(*vmlat_vms)));
	vmlat_vm_hash_bits = max(1, order_base_2(vmlat_max_vms));
	vmlat_vm_hash = vzalloc(vmlat_vm_hash_bytes());
	vmlat_vcpus = vzalloc(array_size(vmlat_max_vcpus,
					 sizeof(*vmlat_vcpus)));
	vmlat_vm_used = vzalloc(vmlat_bitmap_bytes(vmlat_max_vms));
	vmlat_vcpu_used = vzalloc(vmlat_bitmap_bytes(vmlat_max_vcpus));
	if (!vmlat_vms || !vmlat_vm_hash || !vmlat_vcpus || !vmlat_vm_used ||
	    !vmlat_vcpu_used || vmlat_tasks_init(vmlat_max_vcpus)) {
		vmlat_records_exit();
		pr_err("no memory for %u VMs and %u vCPUs: load with smaller max_vms and max_vcpus\n",
		       vmlat_max_vms, vmlat_max_vcpus);
		return -ENOMEM;
	}
	for (i = 0; i < vmlat_max_vms; i++) {
		raw_spin_lock_init(&vmlat_vms[i].lock);
		raw_spin_lock_init(&vmlat_vms[i].sync.lock);
		vmlat_exit_stats_init(&vmlat_vms[i].exits);
		vmlat_vm_clear_stats(&vmlat_vms[i]);
		INIT_HLIST_NODE(&vmlat_vms[i].hnode);
		INIT_LIST_HEAD(&vmlat_vms[i].vcpus);
		INIT_LIST_HEAD(&vmlat_vms[i].exit_node);
	}
	for (i = 0; i < vmlat_max_vcpus; i++) {
		raw_spin_lock_init(&vmlat_vcpus[i].lock);
		seqcount_init(&vmlat_vcpus[i].seq);
		vmlat_vcpus[i].victim_cpu = -1;
		INIT_LIST_HEAD(&vmlat_vcpus[i].vm_node);
		INIT_LIST_HEAD(&vmlat_vcpus[i].free_node);
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
	unsigned int i;

	for (i = 0; vmlat_vms && i < vmlat_max_vms; i++)
		vmlat_vm_release(&vmlat_vms[i]);
	vmlat_tasks_exit();
	vfree(vmlat_vcpu_used);
	vfree(vmlat_vm_used);
	vfree(vmlat_vcpus);
	vfree(vmlat_vm_hash);
	vfree(vmlat_vms);
	vmlat_vm_hash = NULL;
	vmlat_vcpu_used = NULL;
	vmlat_vm_used = NULL;
	vmlat_vcpus = NULL;
	vmlat_vms = NULL;
}
