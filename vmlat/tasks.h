/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which tasks are vCPU threads: an open-addressing table (linear probing)
 * from a task_struct pointer to the index of its vCPU record (records.h),
 * or to VMLAT_TASK_UNTRACKED for a vCPU thread vmlat had no room for.
 *
 * A lookup must cost next to nothing for the many tasks that are not
 * vCPUs (every context switch of the host asks), so it takes no lock: it
 * reads under a seqcount and retries if a writer moved entries meanwhile.
 * Writers are serialised by their caller (records.c's vmlat_alloc_lock).
 * A removal shifts the entries after it back (no tombstones), so the
 * table never holds more than its live keys and a miss stops at the first
 * free slot, however many vCPU threads came and went.
 */
#ifndef _VMLAT_TASKS_H
#define _VMLAT_TASKS_H

#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/sched.h>
#include <linux/seqlock.h>

#include "keyfilter.h"
#include "types.h"

#define VMLAT_TASK_PROBES	32

/*
 * A vCPU thread that has no record (records.c: it did not fit), in the
 * KVM_RUN it was turned away in; then, once that returned, until it runs
 * a new vCPU (_NEXT).
 */
#define VMLAT_TASK_UNTRACKED		INT_MAX
#define VMLAT_TASK_UNTRACKED_NEXT	(INT_MAX - 1)

static __always_inline bool vmlat_task_untracked(int idx)
{
	return idx >= VMLAT_TASK_UNTRACKED_NEXT;
}

struct vmlat_task_slot {
	const struct task_struct *task;		/* NULL: free */
	int idx;
};

extern struct vmlat_task_slot *vmlat_tasks;
extern seqcount_t vmlat_tasks_seq;
/*
 * The table's size, a power of two fixed at load, as the lookup uses it:
 * the mask of a slot index (slots - 1) and hash_ptr()'s shift (64 -
 * log2(slots)), kept ready rather than computed at every lookup.
 */
extern u32 vmlat_task_mask;
extern u32 vmlat_task_shift;

/*
 * Which hashes may be in the table (keyfilter.h): most lookups are of
 * tasks that are no vCPU thread, at every context switch and wake-up of
 * the host, and end at its one byte. 8 KiB, in the module's data.
 */
extern struct vmlat_keyfilter vmlat_task_filter;

/* The 64-bit multiplicative hash of @p, hash_ptr()'s before its shift. */
static __always_inline u64 vmlat_task_hash64(const struct task_struct *p)
{
	return (u64)(unsigned long)p * GOLDEN_RATIO_64;
}

/* hash_ptr(p, log2(slots)). */
static __always_inline u32 vmlat_task_hash(const struct task_struct *p)
{
	return (u32)(vmlat_task_hash64(p) >> vmlat_task_shift);
}

static __always_inline int vmlat_task_probe(const struct task_struct *p)
{
	struct vmlat_task_slot *t = vmlat_tasks;
	u32 h = vmlat_task_hash(p), mask = vmlat_task_mask, i;
	const struct task_struct *k;

	for (i = 0; i < VMLAT_TASK_PROBES; i++) {
		struct vmlat_task_slot *s = &t[(h + i) & mask];

		k = READ_ONCE(s->task);
		if (!k)
			return -1;
		if (k == p)
			return READ_ONCE(s->idx);
	}
	return -1;
}

/**
 * vmlat_task_find() - the vCPU record index of @p
 * @p:	any task
 *
 * Context: any; no lock.
 * Return: the index, VMLAT_TASK_UNTRACKED(_NEXT), or -1 if @p is not a
 * known vCPU thread. The record may have been retired meanwhile: check its task
 * (records.h).
 */
static __always_inline int vmlat_task_find(const struct task_struct *p)
{
	unsigned int seq;
	int idx;

	if (!vmlat_keyfilter_maybe(&vmlat_task_filter, vmlat_task_hash64(p)))
		return -1;
	do {
		seq = raw_read_seqcount_begin(&vmlat_tasks_seq);
		idx = vmlat_task_probe(p);
	} while (unlikely(read_seqcount_retry(&vmlat_tasks_seq, seq)));
	return idx;
}

/**
 * struct vmlat_tasks_stats - how full the table is
 * @max_keys:	keys it takes at most
 * @keys:	keys in it (vCPU threads, tracked or not)
 * @untracked:	of which VMLAT_TASK_UNTRACKED
 * @probe_max:	the longest run of used slots, capped at VMLAT_TASK_PROBES:
 *		the most slots a lookup reads
 */
struct vmlat_tasks_stats {
	unsigned int max_keys;
	unsigned int keys;
	unsigned int untracked;
	unsigned int probe_max;
};

bool vmlat_task_set(const struct task_struct *p, int idx);
void vmlat_task_remove(const struct task_struct *p);
void vmlat_tasks_read_stats(struct vmlat_tasks_stats *st);
size_t vmlat_tasks_bytes(void);
int vmlat_tasks_init(unsigned int vcpus);
void vmlat_tasks_exit(void);

#endif /* _VMLAT_TASKS_H */
