// SPDX-License-Identifier: GPL-2.0
/*
 * The task -> vCPU table (tasks.h). Writers are serialised by their
 * caller and bracket every change in vmlat_tasks_seq, so a lookup that
 * raced with one retries instead of missing a key that moved. A key is
 * counted in the filter before it goes in and uncounted after it left,
 * so that the filter's "no" is always one a lookup could have given.
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include "tasks.h"

struct vmlat_task_slot *vmlat_tasks;
struct vmlat_keyfilter vmlat_task_filter;
seqcount_t vmlat_tasks_seq = SEQCNT_ZERO(vmlat_tasks_seq);
u32 vmlat_task_mask __read_mostly;
u32 vmlat_task_shift __read_mostly;
static unsigned int vmlat_tasks_keys;	/* under the writers' lock */
/* Keys kept at most: three quarters of the slots, so clusters stay short. */
static unsigned int vmlat_tasks_max_keys;

static u32 vmlat_task_slots(void)
{
	return vmlat_task_mask + 1;
}

/* The slot holding @p, or -1. Context: writers' lock held. */
static int vmlat_task_slot_of(const struct task_struct *p)
{
	u32 h = vmlat_task_hash(p), i, j;

	for (i = 0; i < VMLAT_TASK_PROBES; i++) {
		j = (h + i) & vmlat_task_mask;
		if (!vmlat_tasks[j].task)
			return -1;
		if (vmlat_tasks[j].task == p)
			return j;
	}
	return -1;
}

/**
 * vmlat_task_set() - record that @p runs the vCPU record @idx
 * @p:		a vCPU thread
 * @idx:	its record's index, or VMLAT_TASK_UNTRACKED(_NEXT)
 *
 * Replaces @p's entry if it has one.
 *
 * Context: any; the writers' lock held (records.c), IRQs off.
 * Return: false if the table has no room for @p.
 */
bool vmlat_task_set(const struct task_struct *p, int idx)
{
	u32 h = vmlat_task_hash(p), i, j;
	int s = vmlat_task_slot_of(p);

	if (s >= 0) {
		raw_write_seqcount_begin(&vmlat_tasks_seq);
		WRITE_ONCE(vmlat_tasks[s].idx, idx);
		raw_write_seqcount_end(&vmlat_tasks_seq);
		return true;
	}
	if (vmlat_tasks_keys >= vmlat_tasks_max_keys)
		return false;
	for (i = 0; i < VMLAT_TASK_PROBES; i++) {
		j = (h + i) & vmlat_task_mask;
		if (vmlat_tasks[j].task)
			continue;
		/* Ordered before the key by the write barrier in _begin(). */
		vmlat_keyfilter_add(&vmlat_task_filter, vmlat_task_hash64(p));
		raw_write_seqcount_begin(&vmlat_tasks_seq);
		WRITE_ONCE(vmlat_tasks[j].idx, idx);
		WRITE_ONCE(vmlat_tasks[j].task, p);
		raw_write_seqcount_end(&vmlat_tasks_seq);
		vmlat_tasks_keys++;
		return true;
	}
	return false;
}

/**
 * vmlat_task_remove() - forget @p
 * @p:	a task
 *
 * Backward-shift deletion: every entry after @p's in its run that may
 * move closer to its home slot moves into the hole, so the run looks as
 * if @p had never been inserted. Entries only ever move closer to home:
 * each stays within VMLAT_TASK_PROBES of it.
 *
 * Context: any; the writers' lock held (records.c), IRQs off.
 */
void vmlat_task_remove(const struct task_struct *p)
{
	int s = vmlat_task_slot_of(p);
	u32 hole, j, home;

	if (s < 0)
		return;
	hole = s;
	raw_write_seqcount_begin(&vmlat_tasks_seq);
	for (j = (hole + 1) & vmlat_task_mask; vmlat_tasks[j].task;
	     j = (j + 1) & vmlat_task_mask) {
		home = vmlat_task_hash(vmlat_tasks[j].task);
		/* Can the entry at j move to the hole: is hole in [home, j)? */
		if (((j - home) & vmlat_task_mask) <
		    ((j - hole) & vmlat_task_mask))
			continue;
		WRITE_ONCE(vmlat_tasks[hole].idx, vmlat_tasks[j].idx);
		WRITE_ONCE(vmlat_tasks[hole].task, vmlat_tasks[j].task);
		hole = j;
	}
	WRITE_ONCE(vmlat_tasks[hole].task, NULL);
	raw_write_seqcount_end(&vmlat_tasks_seq);
	vmlat_keyfilter_del(&vmlat_task_filter, vmlat_task_hash64(p));
	vmlat_tasks_keys--;
}

/**
 * vmlat_tasks_read_stats() - how full the table is, for status
 * @st:	filled in
 *
 * Context: any; a racy snapshot (each slot read once).
 */
void vmlat_tasks_read_stats(struct vmlat_tasks_stats *st)
{
	unsigned int i, run = 0;

	memset(st, 0, sizeof(*st));
	st->max_keys = vmlat_tasks_max_keys;
	for (i = 0; i < vmlat_task_slots(); i++) {
		if (!READ_ONCE(vmlat_tasks[i].task)) {
			run = 0;
			continue;
		}
		st->keys++;
		if (vmlat_task_untracked(READ_ONCE(vmlat_tasks[i].idx)))
			st->untracked++;
		st->probe_max = max(st->probe_max, ++run);
	}
	/* The run at the end of the table goes on at its start. */
	for (i = 0; run && run < VMLAT_TASK_PROBES && i < vmlat_task_slots() &&
	     READ_ONCE(vmlat_tasks[i].task); i++)
		st->probe_max = max(st->probe_max, ++run);
	st->probe_max = min_t(unsigned int, st->probe_max, VMLAT_TASK_PROBES);
}

/* The bytes the table takes. Context: while it is allocated. */
size_t vmlat_tasks_bytes(void)
{
	return (size_t)vmlat_task_slots() * sizeof(*vmlat_tasks);
}

/**
 * vmlat_tasks_init() - allocate the table for @vcpus vCPU threads
 * @vcpus:	vCPU records; half as many untracked threads fit besides,
 *		and the table stays at most three quarters full (half full
 *		when every vCPU has a record)
 *
 * Context: process context, before any probe is attached.
 * Return: 0 or -ENOMEM.
 */
int vmlat_tasks_init(unsigned int vcpus)
{
	unsigned int bits = order_base_2(2 * max(vcpus, 1U));

	vmlat_task_mask = (1U << bits) - 1;
	vmlat_task_shift = 64 - bits;
	vmlat_tasks_max_keys = vmlat_task_slots() / 4 * 3;
	/* Fails the load rather than wake the OOM killer. */
	vmlat_tasks = kvzalloc(vmlat_tasks_bytes(), GFP_KERNEL |
			       __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	vmlat_tasks_keys = 0;
	vmlat_keyfilter_init(&vmlat_task_filter);
	return vmlat_tasks ? 0 : -ENOMEM;
}

/* Context: process context, after no probe can run. */
void vmlat_tasks_exit(void)
{
	kvfree(vmlat_tasks);
	vmlat_tasks = NULL;
}
