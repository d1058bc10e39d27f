/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which tasks are vCPU threads: a map (taskmap.h) from a task_struct
 * pointer to the index of its vCPU record (records.h), or to a mark of
 * a vCPU thread vmlat had no room for (VMLAT_TASK_UNTRACKED).
 *
 * A lookup must cost next to nothing for the many tasks that are not
 * vCPUs (every context switch of the host asks), so it takes no lock: it
 * reads under a seqcount and retries if a writer moved entries meanwhile,
 * or replaced the map. Writers take vmlat_tasks_lock (inside records.c's
 * vmlat_alloc_lock).
 *
 * The map follows the number of vCPU threads: it starts at
 * VMLAT_TASK_MIN_BITS, and a work item builds one of another size when it
 * is over a quarter full or under a 32nd, a bounded step at a time, then
 * publishes it. tasks_max is a limit on keys, not an allocation.
 */
#ifndef _VMLAT_TASKS_H
#define _VMLAT_TASKS_H

#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/seqlock.h>

#include "keyfilter.h"
#include "taskmap.h"
#include "types.h"

/*
 * A vCPU thread that has no record (records.c: it did not fit) is kept
 * with a value from VMLAT_TASK_UNTRACKED on: that, plus the room
 * generation it was turned away in (records.c: bumped whenever a record
 * may be had again), so that its events cost a lookup until then.
 * Records' indexes are below VMLAT_MAX_VCPUS_LIMIT, far under it.
 */
#define VMLAT_TASK_UNTRACKED		0x40000000
static_assert(VMLAT_MAX_VCPUS_LIMIT < VMLAT_TASK_UNTRACKED);

static __always_inline bool vmlat_task_untracked(int idx)
{
	return idx >= VMLAT_TASK_UNTRACKED;
}

static __always_inline int vmlat_task_untracked_in(unsigned int gen)
{
	return VMLAT_TASK_UNTRACKED | (gen & (VMLAT_TASK_UNTRACKED - 1));
}

/*
 * The map in use; freed an RCU grace period after it was replaced: probes
 * read it with preemption off (probes.c), status under rcu_read_lock().
 */
extern struct vmlat_task_map __rcu *vmlat_task_map;
extern seqcount_t vmlat_tasks_seq;

/*
 * Which hashes may be in the table (keyfilter.h): most lookups are of
 * tasks that are no vCPU thread, at every context switch and wake-up of
 * the host, and end at its one byte. 8 KiB, in the module's data.
 */
extern struct vmlat_keyfilter vmlat_task_filter;

/**
 * vmlat_task_maybe() - whether @p may be a known vCPU thread
 * @p:	any task
 *
 * The filter's byte alone: false is sure; true wants vmlat_task_find()
 * (the byte may count another task of the same bucket).
 */
static __always_inline bool vmlat_task_maybe(const struct task_struct *p)
{
	return vmlat_keyfilter_maybe(&vmlat_task_filter, vmlat_task_hash64(p));
}

/**
 * vmlat_task_find() - the vCPU record index of @p
 * @p:	any task
 *
 * Context: a probe, preemption off (probes.c); no lock.
 * Return: the index, an untracked mark, or -1 if @p is not a
 * known vCPU thread. The record may have been retired meanwhile: check its task
 * (records.h).
 */
static __always_inline int vmlat_task_find(const struct task_struct *p)
{
	unsigned int seq;
	int idx;

	if (!vmlat_task_maybe(p))
		return -1;
	do {
		seq = raw_read_seqcount_begin(&vmlat_tasks_seq);
		idx = vmlat_task_map_probe(rcu_dereference_sched(vmlat_task_map),
					   p);
	} while (unlikely(read_seqcount_retry(&vmlat_tasks_seq, seq)));
	return idx;
}

/**
 * struct vmlat_tasks_stats - how full the table is
 * @max_keys:	keys it takes at most (tasks_max)
 * @slots:	slots of the map in use
 * @keys:	keys in it (vCPU threads, tracked or not)
 * @untracked:	of which VMLAT_TASK_UNTRACKED
 * @probe_max:	the longest run of used slots, capped at VMLAT_TASK_PROBES:
 *		the most slots a lookup reads
 */
struct vmlat_tasks_stats {
	unsigned int max_keys;
	unsigned int slots;
	unsigned int keys;
	unsigned int untracked;
	unsigned int probe_max;
};

int vmlat_task_set(const struct task_struct *p, int idx);
void vmlat_task_remove(const struct task_struct *p);
void vmlat_tasks_read_stats(struct vmlat_tasks_stats *st);
size_t vmlat_tasks_bytes(void);
u64 vmlat_tasks_missed(void);
int vmlat_tasks_init(unsigned int vcpus);
void vmlat_tasks_exit(void);

#endif /* _VMLAT_TASKS_H */
