/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which tasks are vCPU threads: an open-addressing table from a
 * task_struct pointer to the index of its vCPU record (records.h).
 *
 * A lookup must cost next to nothing for the many tasks that are not
 * vCPUs (every context switch of the host asks), so it takes no lock.
 * A thread inserts and removes only its own key (in its KVM and
 * process-exit probes), so a lookup from another CPU can at worst miss
 * one event, which the state machine notices and resyncs from.
 */
#ifndef _VMLAT_TASKS_H
#define _VMLAT_TASKS_H

#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/sched.h>

#include "types.h"

#define VMLAT_TASK_SLOTS	(4 * VMLAT_MAX_VCPUS)	/* power of two */
#define VMLAT_TASK_PROBES	32

#define VMLAT_TASK_FREE		((const struct task_struct *)0)
#define VMLAT_TASK_TOMB		((const struct task_struct *)1)
#define VMLAT_TASK_CLAIMED	((const struct task_struct *)2)

struct vmlat_task_slot {
	const struct task_struct *task;
	u32 idx;
};

extern struct vmlat_task_slot *vmlat_tasks;

static __always_inline u32 vmlat_task_hash(const struct task_struct *p)
{
	return hash_ptr((void *)p, ilog2(VMLAT_TASK_SLOTS));
}

/**
 * vmlat_task_find() - the vCPU record index of @p
 * @p:	any task
 *
 * Context: any; no lock.
 * Return: the index, or -1 if @p is not a known vCPU thread. The record
 * may have been retired meanwhile: check its task (records.h).
 */
static __always_inline int vmlat_task_find(const struct task_struct *p)
{
	u32 h = vmlat_task_hash(p), i;
	const struct task_struct *k;

	for (i = 0; i < VMLAT_TASK_PROBES; i++) {
		struct vmlat_task_slot *s =
			&vmlat_tasks[(h + i) & (VMLAT_TASK_SLOTS - 1)];

		/* Pairs with the release in vmlat_task_insert(): idx is set. */
		k = smp_load_acquire(&s->task);
		if (k == VMLAT_TASK_FREE)
			return -1;
		if (k == p)
			return READ_ONCE(s->idx);
	}
	return -1;
}

bool vmlat_task_insert(const struct task_struct *p, u32 idx);
void vmlat_task_remove(const struct task_struct *p);
int vmlat_tasks_init(void);
void vmlat_tasks_exit(void);

#endif /* _VMLAT_TASKS_H */
