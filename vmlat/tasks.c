// SPDX-License-Identifier: GPL-2.0
/*
 * The task -> vCPU table (tasks.h). Writers take vmlat_tasks_lock and
 * bracket every change in vmlat_tasks_seq, so a lookup that raced with
 * one retries instead of missing a key that moved. A key is counted in
 * the filter before it goes in and uncounted after it left, so that the
 * filter's "no" is always one a lookup could have given.
 *
 * Resizing (tasks.h) runs in a work item. It allocates the new map, then
 * copies VMLAT_TASK_COPY_STEP slots at a time under the lock, IRQs on in
 * between, while writers change both maps (taskmap.h), then publishes it
 * inside the seqcount, and frees the old one after an RCU grace period
 * (lookups run with preemption off, probes.c). Every section under the lock is
 * bounded by a constant, whatever the table's size.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "kick.h"
#include "tasks.h"

/* The smallest map: 256 slots, 4 KiB. */
#define VMLAT_TASK_MIN_BITS	8
/* Slots a step of the copy reads, under the lock. */
#define VMLAT_TASK_COPY_STEP	64

struct vmlat_task_map __rcu *vmlat_task_map;
struct vmlat_keyfilter vmlat_task_filter;
seqcount_t vmlat_tasks_seq = SEQCNT_ZERO(vmlat_tasks_seq);

static DEFINE_RAW_SPINLOCK(vmlat_tasks_lock);
/* Under vmlat_tasks_lock: the map being built, and whether it is lost. */
static struct vmlat_task_map *vmlat_task_next;
static bool vmlat_task_next_lost;
static bool vmlat_task_resizing;
/* The largest map's log2 of slots, and the keys the table takes at most. */
static unsigned int vmlat_task_max_bits;
static u32 vmlat_task_limit;
/* Inserts refused while the map was growing: tried again. */
static atomic64_t vmlat_task_missed;

static void vmlat_tasks_resize_workfn(struct work_struct *work);
static VMLAT_KICK(vmlat_tasks_resize_kick, vmlat_tasks_resize_workfn);

/* The map in use. Context: vmlat_tasks_lock held, or nothing can write. */
static struct vmlat_task_map *vmlat_task_cur(void)
{
	return rcu_dereference_protected(vmlat_task_map, 1);
}

static unsigned int vmlat_task_bits(const struct vmlat_task_map *m)
{
	return ilog2(vmlat_task_map_slots(m));
}

/* The size for @keys keys: an eighth full, within the bounds. */
static unsigned int vmlat_task_bits_for(u32 keys)
{
	unsigned int bits = order_base_2(max(8 * keys, 1U));

	return clamp(bits, (unsigned int)VMLAT_TASK_MIN_BITS,
		     vmlat_task_max_bits);
}

/*
 * Over a quarter full or under a thirty-second: have the work build a map
 * an eighth full. Task pointers are not random (slab strides): at half
 * full, runs of 11 slots were seen where a quarter keeps them at a few.
 * Context: vmlat_tasks_lock held.
 */
static void vmlat_tasks_check_size(const struct vmlat_task_map *m)
{
	u32 slots = vmlat_task_map_slots(m);

	if (vmlat_task_resizing)
		return;
	if ((m->keys > slots / 4 && vmlat_task_bits(m) < vmlat_task_max_bits) ||
	    (m->keys < slots / 32 &&
	     vmlat_task_bits(m) > VMLAT_TASK_MIN_BITS)) {
		vmlat_task_resizing = true;
		vmlat_kick(&vmlat_tasks_resize_kick);
	}
}

/* @p's new entry, in the map in use and the one being built. */
static int vmlat_task_insert(struct vmlat_task_map *m,
			     const struct task_struct *p, int idx)
{
	struct vmlat_task_map *next = vmlat_task_next;
	int ret = 0;

	/* Ordered before the key by the write barrier in _begin(). */
	vmlat_keyfilter_add(&vmlat_task_filter, vmlat_task_hash64(p));
	raw_write_seqcount_begin(&vmlat_tasks_seq);
	if (!vmlat_task_map_insert(m, p, idx)) {
		ret = -ENOSPC;
	} else if (next && !vmlat_task_map_insert(next, p, idx)) {
		/* In both or in neither. */
		if (vmlat_task_map_remove(m, p, next) == -ENOSPC)
			vmlat_task_next_lost = true;
		ret = -ENOSPC;
	}
	raw_write_seqcount_end(&vmlat_tasks_seq);
	if (ret) {
		vmlat_keyfilter_del(&vmlat_task_filter, vmlat_task_hash64(p));
		/* At the limit it is a cap; else the map is too small yet. */
		if (m->keys < vmlat_task_limit &&
		    (next || vmlat_task_bits(m) < vmlat_task_max_bits)) {
			atomic64_inc(&vmlat_task_missed);
			ret = -EAGAIN;
		}
	}
	return ret;
}

/**
 * vmlat_task_set() - record that @p runs the vCPU record @idx
 * @p:		a vCPU thread
 * @idx:	its record's index, or an untracked mark
 *
 * Replaces @p's entry if it has one.
 *
 * Context: any; IRQs off.
 * Return: 0; -ENOSPC if the table holds tasks_max threads (or as many as
 * fit near @p's home slot); -EAGAIN if the map has no room yet, until the
 * work made it grow.
 */
int vmlat_task_set(const struct task_struct *p, int idx)
{
	struct vmlat_task_map *m, *next;
	int s, ret = 0;

	raw_spin_lock(&vmlat_tasks_lock);
	m = vmlat_task_cur();
	next = vmlat_task_next;
	s = vmlat_task_map_slot_of(m, p);
	if (s >= 0) {
		raw_write_seqcount_begin(&vmlat_tasks_seq);
		WRITE_ONCE(m->slot[s].idx, idx);
		s = next ? vmlat_task_map_slot_of(next, p) : -1;
		if (s >= 0)
			WRITE_ONCE(next->slot[s].idx, idx);
		raw_write_seqcount_end(&vmlat_tasks_seq);
	} else {
		ret = vmlat_task_insert(m, p, idx);
	}
	vmlat_tasks_check_size(m);
	raw_spin_unlock(&vmlat_tasks_lock);
	return ret;
}

/**
 * vmlat_task_remove() - forget @p
 * @p:	a task
 *
 * Context: any; IRQs off.
 */
void vmlat_task_remove(const struct task_struct *p)
{
	struct vmlat_task_map *m, *next;
	int ret;

	raw_spin_lock(&vmlat_tasks_lock);
	m = vmlat_task_cur();
	next = vmlat_task_next;
	raw_write_seqcount_begin(&vmlat_tasks_seq);
	ret = vmlat_task_map_remove(m, p, next);
	if (ret != -ENOENT && next)
		vmlat_task_map_remove(next, p, NULL);
	raw_write_seqcount_end(&vmlat_tasks_seq);
	if (ret == -ENOSPC)
		vmlat_task_next_lost = true;
	if (ret != -ENOENT)
		vmlat_keyfilter_del(&vmlat_task_filter, vmlat_task_hash64(p));
	vmlat_tasks_check_size(m);
	raw_spin_unlock(&vmlat_tasks_lock);
}

static struct vmlat_task_map *vmlat_task_map_alloc(unsigned int bits)
{
	/* Fails rather than wake the OOM killer. */
	gfp_t gfp = GFP_KERNEL | __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
	struct vmlat_task_map *m = kmalloc(sizeof(*m), gfp);
	struct vmlat_task_slot *slot;

	slot = kvcalloc(1U << bits, sizeof(*slot), gfp);
	if (!m || !slot) {
		kfree(m);
		kvfree(slot);
		return NULL;
	}
	vmlat_task_map_init(m, slot, bits, vmlat_task_limit);
	return m;
}

static void vmlat_task_map_free(struct vmlat_task_map *m)
{
	if (!m)
		return;
	kvfree(m->slot);
	kfree(m);
}

/*
 * Build a map of the size the keys ask for, beside the one in use, and
 * publish it. A copy that ran out of room (the keys grew meanwhile) is
 * dropped; the next change of the table asks again.
 */
static void vmlat_tasks_resize_workfn(struct work_struct *work)
{
	struct vmlat_task_map *m, *next, *old;
	unsigned long flags;
	unsigned int bits;
	bool done = false;
	u32 from = 0;

	raw_spin_lock_irqsave(&vmlat_tasks_lock, flags);
	bits = vmlat_task_bits_for(vmlat_task_cur()->keys);
	raw_spin_unlock_irqrestore(&vmlat_tasks_lock, flags);
	next = bits != vmlat_task_bits(vmlat_task_cur()) ?
	       vmlat_task_map_alloc(bits) : NULL;

	raw_spin_lock_irqsave(&vmlat_tasks_lock, flags);
	vmlat_task_next = next;
	vmlat_task_next_lost = false;
	raw_spin_unlock_irqrestore(&vmlat_tasks_lock, flags);
	while (next && !done) {
		raw_spin_lock_irqsave(&vmlat_tasks_lock, flags);
		m = vmlat_task_cur();
		if (!vmlat_task_map_copy(next, m, &from, VMLAT_TASK_COPY_STEP))
			vmlat_task_next_lost = true;
		done = vmlat_task_next_lost || from >= vmlat_task_map_slots(m);
		raw_spin_unlock_irqrestore(&vmlat_tasks_lock, flags);
		cond_resched();
	}

	raw_spin_lock_irqsave(&vmlat_tasks_lock, flags);
	old = next;
	if (next && !vmlat_task_next_lost) {
		old = vmlat_task_cur();
		raw_write_seqcount_begin(&vmlat_tasks_seq);
		rcu_assign_pointer(vmlat_task_map, next);
		raw_write_seqcount_end(&vmlat_tasks_seq);
	}
	vmlat_task_next = NULL;
	vmlat_task_resizing = false;
	raw_spin_unlock_irqrestore(&vmlat_tasks_lock, flags);
	if (old) {
		/* Probes run with preemption off (probes.c), readers in RCU. */
		synchronize_rcu();
		vmlat_task_map_free(old);
	}
}

/**
 * vmlat_tasks_read_stats() - how full the table is, for status
 * @st:	filled in
 *
 * Context: process context; a racy snapshot (each slot read once).
 */
void vmlat_tasks_read_stats(struct vmlat_tasks_stats *st)
{
	const struct vmlat_task_slot *t;
	struct vmlat_task_map *m;
	unsigned int i, run = 0, slots;

	memset(st, 0, sizeof(*st));
	st->max_keys = vmlat_task_limit;
	rcu_read_lock();
	m = rcu_dereference(vmlat_task_map);
	slots = vmlat_task_map_slots(m);
	t = m->slot;
	st->slots = slots;
	for (i = 0; i < slots; i++) {
		if (!READ_ONCE(t[i].key)) {
			run = 0;
			continue;
		}
		st->keys++;
		if (vmlat_task_untracked(READ_ONCE(t[i].idx)))
			st->untracked++;
		st->probe_max = max(st->probe_max, ++run);
	}
	/* The run at the end of the map goes on at its start. */
	for (i = 0; run && run < VMLAT_TASK_PROBES && i < slots &&
	     READ_ONCE(t[i].key); i++)
		st->probe_max = max(st->probe_max, ++run);
	rcu_read_unlock();
	st->probe_max = min_t(unsigned int, st->probe_max, VMLAT_TASK_PROBES);
}

/* The bytes the maps take: the one in use and the one being built. */
size_t vmlat_tasks_bytes(void)
{
	unsigned long flags;
	size_t bytes;

	raw_spin_lock_irqsave(&vmlat_tasks_lock, flags);
	bytes = sizeof(struct vmlat_task_map) +
		vmlat_task_map_slots(vmlat_task_cur()) *
		sizeof(struct vmlat_task_slot);
	if (vmlat_task_next)
		bytes += sizeof(struct vmlat_task_map) +
			 vmlat_task_map_slots(vmlat_task_next) *
			 sizeof(struct vmlat_task_slot);
	raw_spin_unlock_irqrestore(&vmlat_tasks_lock, flags);
	return bytes;
}

/* Inserts refused while the map was too small, for status's missed. */
u64 vmlat_tasks_missed(void)
{
	return atomic64_read(&vmlat_task_missed);
}

/**
 * vmlat_tasks_init() - the table, for at most @vcpus vCPU records
 * @vcpus:	vCPU records; half as many untracked threads fit besides
 *		(tasks_max: three quarters of 2 * @vcpus rounded up to a
 *		power of two)
 *
 * Context: process context, before any probe is attached.
 * Return: 0 or -ENOMEM.
 */
int vmlat_tasks_init(unsigned int vcpus)
{
	unsigned int bits = order_base_2(2 * max(vcpus, 1U));
	struct vmlat_task_map *m;

	vmlat_task_limit = (1U << bits) / 4 * 3;
	/* Room to stay a quarter full up to the limit (3/16 there). */
	vmlat_task_max_bits = max(bits + 2, (unsigned int)VMLAT_TASK_MIN_BITS);
	m = vmlat_task_map_alloc(VMLAT_TASK_MIN_BITS);
	if (!m)
		return -ENOMEM;
	vmlat_keyfilter_init(&vmlat_task_filter);
	vmlat_task_next = NULL;
	vmlat_task_resizing = false;
	atomic64_set(&vmlat_task_missed, 0);
	rcu_assign_pointer(vmlat_task_map, m);
	return 0;
}

/* Context: process context, after no probe can run. */
void vmlat_tasks_exit(void)
{
	vmlat_kick_sync(&vmlat_tasks_resize_kick);
	vmlat_task_map_free(rcu_dereference_protected(vmlat_task_map, 1));
	RCU_INIT_POINTER(vmlat_task_map, NULL);
}
