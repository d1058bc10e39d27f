// SPDX-License-Identifier: GPL-2.0
/*
 * The task -> vCPU table (tasks.h): only the thread @p itself inserts or
 * removes its key, so the only race on a slot is two threads claiming the
 * same free one, which the cmpxchg settles.
 */
#include <linux/vmalloc.h>

#include "tasks.h"

struct vmlat_task_slot *vmlat_tasks;

/**
 * vmlat_task_insert() - record that @p runs the vCPU record @idx
 * @p:		the current thread
 * @idx:	its record's index
 *
 * Context: @p itself, any context.
 * Return: false if its probe sequence is full.
 */
bool vmlat_task_insert(const struct task_struct *p, u32 idx)
{
	u32 h = vmlat_task_hash(p), i;

	for (i = 0; i < VMLAT_TASK_PROBES; i++) {
		struct vmlat_task_slot *s =
			&vmlat_tasks[(h + i) & (VMLAT_TASK_SLOTS - 1)];
		const struct task_struct *k = READ_ONCE(s->task);

		if (k != VMLAT_TASK_FREE && k != VMLAT_TASK_TOMB)
			continue;
		if (cmpxchg(&s->task, k, VMLAT_TASK_CLAIMED) != k)
			continue;
		WRITE_ONCE(s->idx, idx);
		/* Publish idx before the key: see vmlat_task_find(). */
		smp_store_release(&s->task, p);
		return true;
	}
	return false;
}

/**
 * vmlat_task_remove() - forget @p
 * @p:	the current thread (or one that exits)
 */
void vmlat_task_remove(const struct task_struct *p)
{
	u32 h = vmlat_task_hash(p), i;

	for (i = 0; i < VMLAT_TASK_PROBES; i++) {
		struct vmlat_task_slot *s =
			&vmlat_tasks[(h + i) & (VMLAT_TASK_SLOTS - 1)];
		const struct task_struct *k = READ_ONCE(s->task);

		if (k == VMLAT_TASK_FREE)
			return;
		if (k == p) {
			WRITE_ONCE(s->task, VMLAT_TASK_TOMB);
			return;
		}
	}
}

/* Context: process context, before any probe is attached. */
int vmlat_tasks_init(void)
{
	vmlat_tasks = vzalloc(array_size(VMLAT_TASK_SLOTS,
					 sizeof(*vmlat_tasks)));
	return vmlat_tasks ? 0 : -ENOMEM;
}

/* Context: process context, after no probe can run. */
void vmlat_tasks_exit(void)
{
	vfree(vmlat_tasks);
	vmlat_tasks = NULL;
}
