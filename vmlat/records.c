// SPDX-License-Identifier: GPL-2.0
/*
 * VM and vCPU records (records.h): the tables of slots, creating a vCPU's
 * record at its thread's first KVM event, retiring it when the thread
 * exits, freeing them, and resets.
 *
 * Slots are taken and given back under vmlat_alloc_lock, a raw spinlock
 * taken with IRQs off: creation runs in KVM's probes (preemption off),
 * retirement in sched_process_exit. It also serialises the writers of the
 * task table (tasks.h). A VM's record is reused or freed only once all
 * its vCPU threads exited (or moved on to another vCPU); until then it is
 * shown as it was.
 *
 * Records come from pools (pool.h): a probe never allocates, but where
 * the kernel allows it with IRQs off (not PREEMPT_RT) it tries GFP_NOWAIT
 * when its pool is empty; a thread that gets no record is not marked, and
 * tries again at its next event. An exited VM is kept for display until
 * keep_exited VMs exited after it: then its slot and those of its vCPUs
 * are free, and the work vmlat_records_free_kick frees the records, once
 * no probe (an RCU grace period) and no reader (vmlat_records_mutex) can
 * hold them.
 *
 * The tables of slots are sized at load by the module parameters max_vms
 * and max_vcpus (read-only once loaded), a pointer each:
 * vmlat_records_read_memory() says what they take, with the records.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/rculist.h>
#include <linux/kvm_host.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "delivery.h"
#include "kick.h"
#include "kvm_x86.h"
#include "records.h"

unsigned int vmlat_max_vms __read_mostly = VMLAT_MAX_VMS_DEFAULT;
unsigned int vmlat_max_vcpus __read_mostly = VMLAT_MAX_VCPUS_DEFAULT;
static unsigned int vmlat_keep_exited __read_mostly = VMLAT_KEEP_EXITED_DEFAULT;
struct vmlat_vm **vmlat_vms;
struct vmlat_vcpu **vmlat_vcpus;
DEFINE_MUTEX(vmlat_records_mutex);
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

static DEFINE_RAW_SPINLOCK(vmlat_alloc_lock);
/*
 * Bumped, under vmlat_alloc_lock, whenever a record may be had again (a
 * vCPU record retired: its slot, or its VM's, frees or is reused): a
 * thread turned away tries again at its next event after a change.
 */
static unsigned int vmlat_room_gen;

/*
 * What creating and retiring records go by, under vmlat_alloc_lock, so
 * that each step is bounded whatever the number of VMs and vCPUs the host
 * has or had: the live VMs by struct kvm, a hash table of a bucket per VM
 * slot (rounded up to a power of two), and by their VMM's mm, another as
 * large after it, which probes walk under RCU; the slots never used, from
 * *_fresh up, and those freed, a stack from *_free (-1: none) linked
 * through the slots; the exited VMs (how many: vmlat_vms_exited_nr) and
 * the retired vCPU records (their threads exited), oldest first; the
 * records to free, VMs with their vCPUs' and vCPUs alone.
 */
static u32 vmlat_vm_last_id;
static struct hlist_head *vmlat_vm_hash;
static unsigned int vmlat_vm_hash_bits;
static unsigned int vmlat_vm_fresh;
static unsigned int vmlat_vcpu_fresh;
static int vmlat_vm_free = -1;
static int vmlat_vcpu_free = -1;
static LIST_HEAD(vmlat_vms_exited);
static unsigned int vmlat_vms_exited_nr;
static LIST_HEAD(vmlat_vcpus_retired);
static LIST_HEAD(vmlat_vms_dead);
static LIST_HEAD(vmlat_vcpus_dead);

static void vmlat_records_free_workfn(struct work_struct *work);
static VMLAT_KICK(vmlat_records_free_kick, vmlat_records_free_workfn);

/*
 * The slot stacks: a free slot holds the index of the next one plus one
 * (0: none), shifted over VMLAT_SLOT_FREE. Context: vmlat_alloc_lock held.
 */
static void vmlat_slot_push(void **tab, int *head, unsigned int i)
{
	WRITE_ONCE(tab[i], (void *)(((unsigned long)(*head + 1) << 1) |
				    VMLAT_SLOT_FREE));
	*head = i;
}

static int vmlat_slot_peek(int head, unsigned int fresh, unsigned int max)
{
	if (head >= 0)
		return head;
	return fresh < max ? (int)fresh : -1;
}

/*
 * Take slot @i, from vmlat_slot_peek() with nothing pushed since: it
 * holds no record (NULL) until vmlat_slot_set().
 */
static void vmlat_slot_take(void **tab, int *head, unsigned int *fresh,
			    unsigned int i)
{
	if ((int)i == *head)
		*head = (int)((unsigned long)tab[i] >> 1) - 1;
	else
		(*fresh)++;
	WRITE_ONCE(tab[i], NULL);
}

/* Put @rec, made, in slot @i. */
static void vmlat_slot_set(void **tab, unsigned int i, void *rec)
{
	/* Pairs with READ_ONCE() in vmlat_*_at(): the record is made. */
	smp_store_release(&tab[i], rec);
}

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

/*
 * The block at *@p, one of a VM's members that take a whole block (union
 * vmlat_block), made zeroed at first use. Context: any context. Return:
 * it, or NULL if none could be had (pool.h).
 */
static void *vmlat_vm_block(void **p)
{
	union vmlat_block *b;
	void *cur;

	/* Pairs with the cmpxchg below: seen, it is zeroed. */
	cur = smp_load_acquire(p);
	if (cur)
		return cur;
	b = vmlat_pool_take(&vmlat_blocks);
	if (!b)
		return NULL;
	memset(b, 0, sizeof(*b));
	/* Fully ordered: whoever sees the pointer sees the zeroes. */
	cur = cmpxchg(p, NULL, (void *)b);
	if (!cur)
		return b;
	vmlat_pool_put(&vmlat_blocks, b);
	return cur;
}

/* @vm's L2 exit counters, made at its first L2 exit (vmlat_vm_block()). */
struct vmlat_vm_nested_exits *vmlat_vm_nested_exits(struct vmlat_vm *vm)
{
	return vmlat_vm_block((void **)&vm->nested_exits);
}

/* @vm's interrupt deliveries, made with its first vCPU record. */
struct vmlat_vm_irq *vmlat_vm_irq(struct vmlat_vm *vm)
{
	return vmlat_vm_block((void **)&vm->irq);
}

/*
 * @vc, a new record of @vm running @vcpu, can be the target of interrupts:
 * found by its vCPU id. A vCPU without KVM's local APIC (the VMM emulates
 * it, or none) gets none through kvm_apic_accept_irq: its VM takes no
 * block for them. Context: vmlat_alloc_lock held, in @vcpu's thread.
 */
static void vmlat_vcpu_irq_join(struct vmlat_vm *vm, struct vmlat_vcpu *vc,
				struct kvm_vcpu *vcpu)
{
	struct vmlat_vm_irq *q;

	if (vc->vcpu_id >= VMLAT_IRQ_IDS || !vmlat_layout_ok(VMLAT_LAYOUT_IRQ))
		return;
	if (vmlat_layout_ok(VMLAT_LAYOUT_LAPIC) && !READ_ONCE(vcpu->arch.apic))
		return;
	q = vmlat_vm_irq(vm);
	if (!q)
		return;
	/* Before the record: a walk up to it finds it (lhp.c). */
	if (vc->vcpu_id >= q->ids_end)
		WRITE_ONCE(q->ids_end, vc->vcpu_id + 1);
	/* Published whole: pairs with the dependent reads of delivery.c. */
	smp_store_release(&q->by_id[vc->vcpu_id], vc);
}

/* @vc's thread exited: no more a target. Context: vmlat_alloc_lock held. */
static void vmlat_vcpu_irq_leave(struct vmlat_vcpu *vc)
{
	/* Pairs with the cmpxchg of vmlat_vm_irq(). */
	struct vmlat_vm_irq *q = smp_load_acquire(&vc->vm->irq);

	if (q && vc->vcpu_id < VMLAT_IRQ_IDS && q->by_id[vc->vcpu_id] == vc)
		WRITE_ONCE(q->by_id[vc->vcpu_id], NULL);
}

/* Give block @b back, in process context. */
static void vmlat_block_give_back(void *b)
{
	if (b)
		vmlat_pool_give_back(&vmlat_blocks, b);
}

static void vmlat_hist_give_back(struct vmlat_ahist *h)
{
	vmlat_block_give_back(h);
}

/* Where the histograms of a VM being freed go back to. */
static const struct vmlat_ahist_src vmlat_hist_release_src = {
	.take = vmlat_hist_take,
	.put = vmlat_hist_give_back,
};

/*
 * The blocks @vm took, given back (the pool keeps what it has room for).
 * Context: process context; no probe uses @vm any more.
 */
static void vmlat_vm_release(struct vmlat_vm *vm)
{
	unsigned int i;

	vmlat_exit_stats_release(&vm->exits, &vmlat_hist_release_src);
	for (i = 0; i < VMLAT_NR_HIST_KINDS; i++) {
		vmlat_block_give_back(vm->hist[i]);
		vm->hist[i] = NULL;
	}
	for (i = 0; i < VMLAT_NR_NESTED_HISTS; i++) {
		vmlat_block_give_back(vm->nested_hist[i]);
		vm->nested_hist[i] = NULL;
	}
	vmlat_block_give_back(vm->nested_exits);
	vm->nested_exits = NULL;
	for (i = 0; i < VMLAT_NR_IRQ_SOURCES; i++) {
		vmlat_block_give_back(vm->irq_hist[i]);
		vm->irq_hist[i] = NULL;
	}
	for (i = 0; i < VMLAT_NR_EXPIRE_HISTS; i++) {
		vmlat_block_give_back(vm->expire_hist[i]);
		vm->expire_hist[i] = NULL;
	}
	vmlat_block_give_back(vm->irq);
	vm->irq = NULL;
}

/* Empty the histogram at @p, if it was made. */
static void vmlat_vm_hist_clear(struct vmlat_ahist **p)
{
	/* Pairs with the cmpxchg of vmlat_ahist_first(). */
	struct vmlat_ahist *h = smp_load_acquire(p);

	if (h)
		vmlat_ahist_init(h);
}

/* Zero @vm's interrupt counters; its vCPUs stay targets. */
static void vmlat_vm_irq_clear_stats(struct vmlat_vm *vm)
{
	/* Pairs with the cmpxchg of vmlat_vm_irq(). */
	struct vmlat_vm_irq *q = smp_load_acquire(&vm->irq);
	int src, at;

	if (!q)
		return;
	for (src = 0; src < VMLAT_NR_IRQ_SOURCES; src++) {
		for (at = 0; at < VMLAT_NR_IRQ_ATS; at++) {
			struct vmlat_irq_cell *c = &q->cell[src][at];

			atomic64_set(&c->count, 0);
			atomic64_set(&c->sum_ns, 0);
			atomic64_set(&c->max_ns, 0);
			atomic64_set(&c->wait_ns, 0);
			atomic64_set(&c->lost, 0);
			atomic64_set(&c->coalesced, 0);
		}
	}
	atomic64_set(&q->unmatched, 0);
}

static void vmlat_vm_clear_stats(struct vmlat_vm *vm)
{
	struct vmlat_vm_nested_exits *n;
	unsigned long flags;
	int i, by;

	vmlat_exit_stats_reset(&vm->exits);
	/* Pairs with the cmpxchg of vmlat_vm_nested_exits(). */
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
	for (i = 0; i < VMLAT_NR_IRQ_SOURCES; i++)
		vmlat_vm_hist_clear(&vm->irq_hist[i]);
	for (i = 0; i < VMLAT_NR_EXPIRE_HISTS; i++)
		vmlat_vm_hist_clear(&vm->expire_hist[i]);
	vmlat_vm_irq_clear_stats(vm);
	vmlat_vm_sync_clear_stats(&vm->sync);
	raw_spin_lock_irqsave(&vm->lock, flags);
	vmlat_topk_init(&vm->top);
	memset(vm->preemptors, 0, sizeof(vm->preemptors));
	vm->stolen_by_host = 0;
	vmlat_topk_init(&vm->by_vm);
	raw_spin_unlock_irqrestore(&vm->lock, flags);
	raw_spin_lock_irqsave(&vm->as_lock, flags);
	vmlat_as_table_init(&vm->as);
	vmlat_as_names_clear_stats(&vm->names);
	raw_spin_unlock_irqrestore(&vm->as_lock, flags);
}

static struct hlist_head *vmlat_vm_bucket(const void *kvm)
{
	return &vmlat_vm_hash[hash_ptr(kvm, vmlat_vm_hash_bits)];
}

/* The table by mm follows the one by kvm. */
static struct hlist_head *vmlat_vm_mm_bucket(const void *mm)
{
	return &vmlat_vm_hash[(1U << vmlat_vm_hash_bits) +
			      hash_ptr(mm, vmlat_vm_hash_bits)];
}

/*
 * @vm is no live VM's any more (its threads exited, or another VM took its
 * struct kvm's address): out of both tables. A probe walking the one by mm
 * may still be on it, and see it reused; the record is freed only after a
 * grace period (vmlat_records_free()).
 *
 * Context: vmlat_alloc_lock held.
 */
static void vmlat_vm_unhash(struct vmlat_vm *vm)
{
	if (!hlist_unhashed(&vm->hnode))
		hlist_del_init(&vm->hnode);
	if (!hlist_unhashed(&vm->mm_node))
		hlist_del_init_rcu(&vm->mm_node);
	WRITE_ONCE(vm->mm, NULL);
}

/**
 * vmlat_vm_of_mm() - the live VM whose VMM has address space @mm
 * @mm:		the current thread's, not a vCPU thread's
 *
 * Return: the VM, or NULL if none, or if two live VMs share @mm (a VMM
 * running two: whose interrupt it is cannot be told). The record may be
 * reused at any time: the caller checks what it finds in it.
 *
 * Context: a probe (preemption off: an RCU reader).
 */
struct vmlat_vm *vmlat_vm_of_mm(const struct mm_struct *mm)
{
	struct vmlat_vm *vm, *found = NULL;

	rcu_read_lock();
	hlist_for_each_entry_rcu(vm, vmlat_vm_mm_bucket(mm), mm_node) {
		if (READ_ONCE(vm->mm) != mm)
			continue;
		if (found) {
			found = NULL;
			break;
		}
		found = vm;
	}
	rcu_read_unlock();
	return found;
}

/* A record from its pool (zeroed): what zero does not make. */
static void vmlat_vm_construct(struct vmlat_vm *vm)
{
	raw_spin_lock_init(&vm->lock);
	raw_spin_lock_init(&vm->as_lock);
	seqcount_init(&vm->ident_seq);
	raw_spin_lock_init(&vm->sync.lock);
	vmlat_exit_stats_init(&vm->exits);
	INIT_HLIST_NODE(&vm->hnode);
	INIT_HLIST_NODE(&vm->mm_node);
	INIT_LIST_HEAD(&vm->vcpus);
	INIT_LIST_HEAD(&vm->exit_node);
}

static void vmlat_vcpu_construct(struct vmlat_vcpu *vc)
{
	raw_spin_lock_init(&vc->lock);
	seqcount_init(&vc->seq);
	vc->victim_cpu = -1;
	INIT_LIST_HEAD(&vc->vm_node);
	INIT_LIST_HEAD(&vc->free_node);
}

/* For the work to free them: they are in no slot any more. */
static void vmlat_records_to_free(void)
{
	vmlat_kick(&vmlat_records_free_kick);
}

/*
 * @vc's slot is free; the record goes to the work to free it, alone.
 * Context: vmlat_alloc_lock held; its thread retired it.
 */
static void vmlat_vcpu_kill(struct vmlat_vcpu *vc)
{
	list_del_init(&vc->vm_node);
	list_del_init(&vc->free_node);
	vmlat_slot_push((void **)vmlat_vcpus, &vmlat_vcpu_free, vc->slot);
	list_add_tail(&vc->free_node, &vmlat_vcpus_dead);
	vmlat_records_to_free();
}

/*
 * The oldest exited VM goes: its slot and those of its vCPUs are free,
 * the records go to the work to free them, its vCPUs' with it.
 * Context: vmlat_alloc_lock held.
 */
static void vmlat_vm_kill_oldest(void)
{
	struct vmlat_vm *vm;
	struct vmlat_vcpu *vc;

	vm = list_first_entry(&vmlat_vms_exited, struct vmlat_vm, exit_node);
	list_del(&vm->exit_node);
	vmlat_vms_exited_nr--;
	list_for_each_entry(vc, &vm->vcpus, vm_node) {
		list_del_init(&vc->free_node);
		vmlat_slot_push((void **)vmlat_vcpus, &vmlat_vcpu_free,
				vc->slot);
	}
	vmlat_slot_push((void **)vmlat_vms, &vmlat_vm_free, vm->slot);
	list_add_tail(&vm->exit_node, &vmlat_vms_dead);
	vmlat_records_to_free();
}

/*
 * Make @vm, a new record or an exited VM's reused in place, the record of
 * @kvm. A reused VM's vCPU records go, but @keep, which the caller takes.
 * Context: vmlat_alloc_lock held.
 */
static void vmlat_vm_init(struct vmlat_vm *vm, const void *kvm,
			  struct vmlat_vcpu *keep)
{
	struct vmlat_vcpu *vc, *tmp;
	unsigned long flags;

	if (!list_empty(&vm->exit_node)) {
		list_del_init(&vm->exit_node);
		vmlat_vms_exited_nr--;
	}
	list_for_each_entry_safe(vc, tmp, &vm->vcpus, vm_node)
		if (vc != keep)
			vmlat_vcpu_kill(vc);
	vmlat_vm_clear_stats(vm);
	vmlat_vm_sync_init(&vm->sync);
	raw_spin_lock_irqsave(&vm->as_lock, flags);
	vmlat_as_names_init(&vm->names);
	raw_spin_unlock_irqrestore(&vm->as_lock, flags);
	vm->kvm = kvm;
	hlist_add_head(&vm->hnode, vmlat_vm_bucket(kvm));
	/* A vCPU thread's: its VMM's (KVM's kvm->mm). */
	WRITE_ONCE(vm->mm, current->mm);
	hlist_add_head_rcu(&vm->mm_node, vmlat_vm_mm_bucket(current->mm));
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
	WRITE_ONCE(vm->partly, false);
	/*
	 * What an earlier VM of this record took from others stays theirs,
	 * under its own id: the new one starts in nobody's by_vm table.
	 */
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
		vmlat_vm_unhash(vm);
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

	vmlat_vcpu_irq_leave(vc);
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
		raw_spin_lock(&vm->as_lock);
		vmlat_as_table_add(&vm->as, &s);
		raw_spin_unlock(&vm->as_lock);
	}
	/* Shown as it was until its slot is needed: the oldest first. */
	list_add_tail(&vc->free_node, &vmlat_vcpus_retired);
	WRITE_ONCE(vmlat_room_gen, vmlat_room_gen + 1);
	atomic_dec(&vmlat_live_vcpus);
	if (atomic_dec_and_test(&vm->live_vcpus)) {
		WRITE_ONCE(vm->exited, true);
		vmlat_vm_unhash(vm);
		list_add_tail(&vm->exit_node, &vmlat_vms_exited);
		/* Kept for display: the last keep_exited ones. */
		if (++vmlat_vms_exited_nr > vmlat_keep_exited)
			vmlat_vm_kill_oldest();
	}
}

/*
 * Where a new record goes: a free slot for a new record, or else an old
 * record reused in place (the oldest exited VM, the vCPU record of the
 * thread that exited first), chosen by vmlat_vcpu_new() before anything
 * changes.
 */
struct vmlat_place {
	int slot;
	void *reuse;
};

/*
 * Take the place @pl for @vm: a new record from *@nvc, or the one reused.
 * Context: vmlat_alloc_lock held.
 */
static struct vmlat_vcpu *vmlat_vcpu_take(const struct vmlat_place *pl,
					  struct vmlat_vm *vm,
					  struct vmlat_vcpu **nvc)
{
	struct vmlat_vcpu *vc = pl->reuse;

	if (vc) {
		list_del_init(&vc->free_node);
	} else {
		vc = *nvc;
		*nvc = NULL;
		vmlat_vcpu_construct(vc);
		vc->slot = pl->slot;
	}
	list_move_tail(&vc->vm_node, &vm->vcpus);
	return vc;
}

/*
 * The current thread runs @vcpu, for which it has no record and gets none:
 * count it, unless it was turned away before (@turned_away), and mark it
 * with the room generation, so that its events cost a lookup, not
 * vmlat_alloc_lock, until a record may be had (vmlat_room_gen). @vm: its
 * VM's record, if that VM has one: only partly tracked now.
 * Context: vmlat_alloc_lock held.
 */
static void vmlat_vcpu_drop(struct kvm_vcpu *vcpu, struct vmlat_vm *vm,
			    bool turned_away)
{
	if (!turned_away) {
		if (!vm && vcpu->vcpu_idx == 0)
			atomic64_inc(&vmlat_stats.dropped_vms);
		atomic64_inc(&vmlat_stats.dropped_vcpus);
	}
	if (vm)
		WRITE_ONCE(vm->partly, true);
	/* No room for the mark: then the next event tries again. */
	vmlat_task_set(current, vmlat_task_untracked_in(vmlat_room_gen));
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
 * (vmlat_vm_stale()). A thread that gets no record for want of room (a
 * cap) is counted once and marked untracked in the task table; it tries
 * again once room may have freed (vmlat_room_gen), or for a vCPU that
 * never ran. Its VM is then only partly tracked (@vm->partly). One that
 * got no memory (an empty pool) is not marked: it tries at its next
 * event.
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
	struct vmlat_vcpu *vc, *nvc = NULL;
	struct vmlat_place vpl, cpl;
	struct vmlat_vm *vm, *nvm = NULL, *inited = NULL;
	bool tried_vm = false, turned_away = false;
	unsigned long flags;
	int idx, ret;

	/* Turned away: a lookup, no lock, until there may be room. */
	if (!old) {
		idx = vmlat_task_find(current);
		if (vmlat_task_untracked(idx)) {
			if (!never_ran && idx == vmlat_task_untracked_in(
					READ_ONCE(vmlat_room_gen)))
				return NULL;
			turned_away = true;
		}
	}

	nvc = vmlat_pool_take_or_alloc(&vmlat_vcpu_pool);
again:
	raw_spin_lock_irqsave(&vmlat_alloc_lock, flags);
	if (old) {
		vmlat_vcpu_retire(old);
		old = NULL;
	}
	vm = vmlat_vm_find(vcpu->kvm);
	if (!vm && !nvm && !tried_vm) {
		/* A new VM: its record, without holding the lock. */
		raw_spin_unlock_irqrestore(&vmlat_alloc_lock, flags);
		nvm = vmlat_pool_take_or_alloc(&vmlat_vm_pool);
		tried_vm = true;
		goto again;
	}
	vpl.reuse = NULL;
	vpl.slot = -1;
	if (!vm) {
		vpl.slot = vmlat_slot_peek(vmlat_vm_free, vmlat_vm_fresh,
					   vmlat_max_vms);
		if (vpl.slot < 0 || !nvm) {
			vpl.reuse = list_first_entry_or_null(&vmlat_vms_exited,
							     struct vmlat_vm,
							     exit_node);
			if (!vpl.reuse) {
				/* No room is a cap; no memory, next time. */
				if (vpl.slot < 0)
					vmlat_vcpu_drop(vcpu, NULL, turned_away);
				goto out;
			}
		}
	}
	cpl.reuse = NULL;
	cpl.slot = vmlat_slot_peek(vmlat_vcpu_free, vmlat_vcpu_fresh,
				   vmlat_max_vcpus);
	if (cpl.slot < 0 || !nvc) {
		/* An exited VM reused in place keeps one of its vCPUs' too. */
		struct vmlat_vm *rvm = vpl.reuse;

		cpl.reuse = rvm && !list_empty(&rvm->vcpus) ?
			    list_first_entry(&rvm->vcpus, struct vmlat_vcpu,
					     vm_node) :
			    list_first_entry_or_null(&vmlat_vcpus_retired,
						     struct vmlat_vcpu,
						     free_node);
		if (!cpl.reuse) {
			/* A VM not seen yet stays untracked with it. */
			if (cpl.slot < 0)
				vmlat_vcpu_drop(vcpu, vm, turned_away);
			goto out;
		}
	}
	vc = cpl.reuse;
	ret = vmlat_task_set(current, vc ? vc->slot : cpl.slot);
	if (ret) {
		/* A full table is a cap; a growing one, next time. */
		if (ret != -EAGAIN)
			vmlat_vcpu_drop(vcpu, vm, turned_away);
		goto out;
	}
	/* Taken before a VM reused in place frees its vCPUs' slots. */
	if (!cpl.reuse)
		vmlat_slot_take((void **)vmlat_vcpus, &vmlat_vcpu_free,
				&vmlat_vcpu_fresh, cpl.slot);
	if (!vm) {
		vm = vpl.reuse;
		if (!vm) {
			vm = nvm;
			nvm = NULL;
			vmlat_slot_take((void **)vmlat_vms, &vmlat_vm_free,
					&vmlat_vm_fresh, vpl.slot);
			vmlat_vm_construct(vm);
			vm->slot = vpl.slot;
		}
		/*
		 * Until its first vCPU is in its slot: readers drop what they
		 * read of the VM this record was, or list it with its vCPU.
		 */
		raw_write_seqcount_begin(&vm->ident_seq);
		inited = vm;
		vmlat_vm_init(vm, vcpu->kvm, cpl.reuse);
		if (!vpl.reuse)
			vmlat_slot_set((void **)vmlat_vms, vpl.slot, vm);
	}

	vc = vmlat_vcpu_take(&cpl, vm, &nvc);
	/* Turned away before: its VM's figures miss its time until now. */
	if (turned_away)
		WRITE_ONCE(vm->partly, true);
	raw_spin_lock(&vc->lock);
	vc->kvm_vcpu = vcpu;
	vc->ran = !never_ran;
	vc->vm = vm;
	vc->tid = current->pid;
	vc->idx = vcpu->vcpu_idx;
	vc->vcpu_id = vcpu->vcpu_id;
	memset(&vc->irq, 0, sizeof(vc->irq));
	atomic_set(&vc->spun_on, 0);
	memset(&vc->lhp, 0, sizeof(vc->lhp));
	/* Pairs with the release in vmlat_records_reset(). */
	vc->lhp.reset_gen = smp_load_acquire(&vmlat_reset_gen);
	vc->exit_slot = VMLAT_SLOT_UNDECODED;
	vc->exit_ns = 0;
	vc->victim_cpu = -1;
	vc->vmcb_checked = NULL;
	raw_write_seqcount_begin(&vc->seq);
	vmlat_acct_init(&vc->acct, ev, now);
	if (ev == VMLAT_EV_ENTRY)
		vmlat_nested_entry(&vc->acct.nested, vmlat_kvm_in_l2(vcpu), 0,
				   now, &vc->nested_done, 0);
	/* Counts from now: no reset to catch up with. */
	vc->acct.reset_gen = smp_load_acquire(&vmlat_reset_gen);
	raw_write_seqcount_end(&vc->seq);
	WRITE_ONCE(vc->task, current);
	raw_spin_unlock(&vc->lock);
	if (!cpl.reuse)
		vmlat_slot_set((void **)vmlat_vcpus, cpl.slot, vc);
	if (inited)
		raw_write_seqcount_end(&inited->ident_seq);
	vmlat_vcpu_irq_join(vm, vc, vcpu);
	vmlat_delivery_learn(vcpu);
	this_cpu_write(vmlat_cur_vcpu, vc);
	atomic_inc(&vm->live_vcpus);
	atomic_inc(&vmlat_live_vcpus);
out:
	raw_spin_unlock_irqrestore(&vmlat_alloc_lock, flags);
	/* Untouched: still zero, back to their pools. */
	if (nvc)
		vmlat_pool_put(&vmlat_vcpu_pool, nvc);
	if (nvm)
		vmlat_pool_put(&vmlat_vm_pool, nvm);
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
	struct vmlat_vcpu *vc;
	struct vmlat_vm *vm;
	unsigned int i;

	memset(st, 0, sizeof(*st));
	mutex_lock(&vmlat_records_mutex);
	for (i = 0; i < vmlat_max_vms; i++) {
		vm = vmlat_vm_at(i);
		if (!vm)
			continue;
		if (READ_ONCE(vm->exited))
			st->vms_exited++;
		else
			st->vms_live++;
	}
	for (i = 0; i < vmlat_max_vcpus; i++) {
		vc = vmlat_vcpu_at(i);
		if (!vc)
			continue;
		if (READ_ONCE(vc->task))
			st->vcpus_live++;
		else
			st->vcpus_exited++;
	}
	mutex_unlock(&vmlat_records_mutex);
}

/**
 * vmlat_records_reset() - zero every statistic; VMs and vCPUs stay known
 *
 * Context: process context.
 */
void vmlat_records_reset(void)
{
	struct vmlat_vm *vm;
	unsigned int i;

	/*
	 * The vCPUs' accounting is written without a lock by their threads:
	 * each catches up at its next event (readers apply it meanwhile).
	 */
	mutex_lock(&vmlat_records_mutex);
	WRITE_ONCE(vmlat_reset_ns, vmlat_now_ns());
	/* Whoever sees the new generation sees its time. */
	smp_store_release(&vmlat_reset_gen, vmlat_reset_gen + 1);
	/*
	 * A record may be reused in place for a new VM meanwhile, in a
	 * probe (vmlat_vm_init()): that too only zeroes the figures, each
	 * part under the lock or atomics that guard it, so in either order
	 * the new VM starts from zero, its identity untouched by a reset.
	 */
	for (i = 0; i < vmlat_max_vms; i++) {
		vm = vmlat_vm_at(i);
		if (vm)
			vmlat_vm_clear_stats(vm);
	}
	mutex_unlock(&vmlat_records_mutex);
	atomic64_set(&vmlat_stats.dropped_vms, 0);
	atomic64_set(&vmlat_stats.dropped_vcpus, 0);
	atomic64_set(&vmlat_stats.dropped_victims, 0);
	vmlat_pool_reset(&vmlat_vm_pool);
	vmlat_pool_reset(&vmlat_vcpu_pool);
	vmlat_pool_reset(&vmlat_blocks);
}

/* Set once no probe runs: the pools go next (vmlat_records_exit()). */
static bool vmlat_records_exiting;

/* No CPU keeps @vc as the record it last ran. */
static void vmlat_vcpu_unhint(struct vmlat_vcpu *vc)
{
	int cpu;

	for_each_possible_cpu(cpu)
		cmpxchg(per_cpu_ptr(&vmlat_cur_vcpu, cpu), vc, NULL);
}

/*
 * Free the records of @vms (with their vCPUs') and @vcpus, in no slot
 * any more: once no probe and no reader can hold one.
 */
static void vmlat_records_free(struct list_head *vms, struct list_head *vcpus)
{
	struct vmlat_vcpu *vc, *vtmp;
	struct vmlat_vm *vm, *tmp;

	list_for_each_entry(vm, vms, exit_node)
		list_for_each_entry(vc, &vm->vcpus, vm_node)
			vmlat_vcpu_unhint(vc);
	list_for_each_entry(vc, vcpus, free_node)
		vmlat_vcpu_unhint(vc);
	/*
	 * Probes that found one are done with it: they run with preemption
	 * off (probes.c), on 7.x too, where the tracepoint does not.
	 */
	synchronize_rcu();
	mutex_lock(&vmlat_records_mutex);
	list_for_each_entry_safe(vm, tmp, vms, exit_node) {
		list_for_each_entry_safe(vc, vtmp, &vm->vcpus, vm_node)
			vmlat_pool_free(&vmlat_vcpu_pool, vc);
		vmlat_vm_release(vm);
		vmlat_pool_free(&vmlat_vm_pool, vm);
	}
	list_for_each_entry_safe(vc, vtmp, vcpus, free_node)
		vmlat_pool_free(&vmlat_vcpu_pool, vc);
	mutex_unlock(&vmlat_records_mutex);
	/*
	 * The last VM gone: the pools anew, the empty slabs freed (not
	 * while VMs come and go).
	 */
	if (!vmlat_records_exiting &&
	    !atomic_long_read(&vmlat_vm_pool.used) &&
	    !atomic_long_read(&vmlat_vcpu_pool.used) &&
	    !atomic_long_read(&vmlat_blocks.used)) {
		vmlat_pool_renew(&vmlat_vm_pool);
		vmlat_pool_renew(&vmlat_vcpu_pool);
		vmlat_pool_renew(&vmlat_blocks);
	}
}

static void vmlat_records_free_workfn(struct work_struct *work)
{
	unsigned long flags;
	LIST_HEAD(vcpus);
	LIST_HEAD(vms);

	raw_spin_lock_irqsave(&vmlat_alloc_lock, flags);
	list_splice_init(&vmlat_vms_dead, &vms);
	list_splice_init(&vmlat_vcpus_dead, &vcpus);
	raw_spin_unlock_irqrestore(&vmlat_alloc_lock, flags);
	if (!list_empty(&vms) || !list_empty(&vcpus))
		vmlat_records_free(&vms, &vcpus);
}

/* The bytes of the hash tables of live VMs: a bucket per VM slot, twice. */
static size_t vmlat_vm_hash_bytes(void)
{
	return 2 * (sizeof(*vmlat_vm_hash) << vmlat_vm_hash_bits);
}

static size_t vmlat_pool_bytes(const struct vmlat_pool_stats *st)
{
	return (st->used + st->free) * st->size;
}

/**
 * vmlat_records_read_memory() - what the records take, for status
 * @mem:	filled in
 *
 * Context: any, while loaded.
 */
void vmlat_records_read_memory(struct vmlat_records_memory *mem)
{
	mem->tables = array_size(vmlat_max_vms, sizeof(*vmlat_vms)) +
		      vmlat_vm_hash_bytes() +
		      array_size(vmlat_max_vcpus, sizeof(*vmlat_vcpus)) +
		      vmlat_tasks_bytes();
	vmlat_pool_read_stats(&vmlat_vm_pool, &mem->vms);
	vmlat_pool_read_stats(&vmlat_vcpu_pool, &mem->vcpus);
	vmlat_pool_read_stats(&vmlat_blocks, &mem->blocks);
	mem->bytes = mem->tables + vmlat_pool_bytes(&mem->vms) +
		     vmlat_pool_bytes(&mem->vcpus) +
		     vmlat_pool_bytes(&mem->blocks);
}

/*
 * max_vms, max_vcpus, keep_exited: set at load only (0444 once loaded),
 * each in its range; a value out of range fails the load with -EINVAL
 * and a message.
 */
static const struct {
	const unsigned int *var;
	unsigned int min, max;
} vmlat_record_params[] = {
	{ &vmlat_max_vms, 1, VMLAT_MAX_VMS_LIMIT },
	{ &vmlat_max_vcpus, 1, VMLAT_MAX_VCPUS_LIMIT },
	{ &vmlat_keep_exited, 0, VMLAT_MAX_VMS_LIMIT },
};

static int param_size_set(const char *val, const struct kernel_param *kp)
{
	unsigned int i, n;

	for (i = 0; vmlat_record_params[i].var != kp->arg; i++)
		;
	if (kstrtouint(val, 0, &n) || n < vmlat_record_params[i].min ||
	    n > vmlat_record_params[i].max) {
		pr_err("%s: write a number from %u to %u, at load (not '%s')\n",
		       kp->name, vmlat_record_params[i].min,
		       vmlat_record_params[i].max, val);
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
module_param_cb(keep_exited, &size_ops, &vmlat_keep_exited, 0444);
MODULE_PARM_DESC(keep_exited, "exited VMs kept for display, the last ones (0.." __stringify(VMLAT_MAX_VMS_LIMIT) ", default " __stringify(VMLAT_KEEP_EXITED_DEFAULT) "); set at load");

/**
 * vmlat_records_init() - allocate the tables of slots, as large as the
 * module parameters max_vms and max_vcpus say; the records come later
 *
 * Context: process context, before any probe is attached.
 * Return: 0 or -ENOMEM.
 */
int vmlat_records_init(void)
{
	/* Fails the load rather than wake the OOM killer. */
	gfp_t gfp = GFP_KERNEL | __GFP_ZERO | __GFP_RETRY_MAYFAIL |
		    __GFP_NOWARN;

	vmlat_vms = kvmalloc_array(vmlat_max_vms, sizeof(*vmlat_vms), gfp);
	vmlat_vm_hash_bits = max(1, order_base_2(vmlat_max_vms));
	vmlat_vm_hash = kvmalloc(vmlat_vm_hash_bytes(), gfp);
	vmlat_vcpus = kvmalloc_array(vmlat_max_vcpus, sizeof(*vmlat_vcpus),
				     gfp);
	if (!vmlat_vms || !vmlat_vm_hash || !vmlat_vcpus ||
	    vmlat_tasks_init(vmlat_max_vcpus)) {
		vmlat_records_exit();
		pr_err("no memory for the tables of %u VMs and %u vCPUs: load with smaller max_vms and max_vcpus\n",
		       vmlat_max_vms, vmlat_max_vcpus);
		return -ENOMEM;
	}
	vmlat_vm_fresh = 0;
	vmlat_vcpu_fresh = 0;
	vmlat_vm_free = -1;
	vmlat_vcpu_free = -1;
	vmlat_vms_exited_nr = 0;
	vmlat_records_exiting = false;
	return 0;
}

/**
 * vmlat_records_exit() - free the records and the tables
 *
 * Context: process context, after every probe is detached and
 * tracepoint_synchronize_unregister() returned.
 */
void vmlat_records_exit(void)
{
	struct vmlat_vcpu *vc;
	struct vmlat_vm *vm;
	LIST_HEAD(vcpus);
	LIST_HEAD(vms);
	unsigned int i;

	vmlat_kick_sync(&vmlat_records_free_kick);
	vmlat_records_exiting = true;
	vmlat_records_free_workfn(NULL);
	/* What is left is in the slots: every VM with its vCPUs. */
	for (i = 0; vmlat_vms && i < vmlat_max_vms; i++) {
		vm = vmlat_vm_at(i);
		if (!vm)
			continue;
		list_del_init(&vm->exit_node);
		list_add_tail(&vm->exit_node, &vms);
	}
	/* vCPU records of no VM's list: none, but do not leak one. */
	for (i = 0; vmlat_vcpus && i < vmlat_max_vcpus; i++) {
		vc = vmlat_vcpu_at(i);
		if (vc && list_empty(&vc->vm_node)) {
			list_del_init(&vc->free_node);
			list_add_tail(&vc->free_node, &vcpus);
		}
	}
	vmlat_records_free(&vms, &vcpus);
	vmlat_tasks_exit();
	kvfree(vmlat_vcpus);
	kvfree(vmlat_vm_hash);
	kvfree(vmlat_vms);
	vmlat_vm_hash = NULL;
	vmlat_vcpus = NULL;
	vmlat_vms = NULL;
}
