/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The task table's map (pure logic): open addressing with linear probing,
 * from a key (a task_struct pointer) to an int (tasks.h says what).
 *
 * A lookup reads slots with READ_ONCE() and no lock; the caller retries
 * it under a seqcount if a writer moved entries meanwhile. Writers are
 * serialised by the caller. A removal shifts the entries after it back
 * (no tombstones), so a map never holds more than its live keys and a
 * miss stops at the first free slot, however many keys came and went.
 *
 * A map has a fixed size; the table grows and shrinks by building a map
 * of another size beside the one in use and then publishing it. The
 * copy is made a bounded range of slots at a time (vmlat_task_map_copy(),
 * between which writers run): while it runs, every change to the map in
 * use is made to the new one too (vmlat_task_map_remove()'s @mirror
 * takes the entries a removal moves, which may land behind the copy), so the new
 * map ends with exactly the old one's keys and values.
 */
#ifndef _VMLAT_TASKMAP_H
#define _VMLAT_TASKMAP_H

#include "pure.h"

/* The most slots a lookup reads, and so the longest run a key may end. */
#define VMLAT_TASK_PROBES	32

/* hash_ptr()'s multiplier (include/linux/hash.h). */
#define VMLAT_TASK_GOLDEN_RATIO_64	0x61C8864680B583EBull

struct vmlat_task_slot {
	const void *key;	/* NULL: free */
	int idx;
};

/**
 * struct vmlat_task_map - one size of the table
 * @mask:	its slots - 1 (a power of two)
 * @shift:	64 - log2(slots): a key's home is its hash's top bits
 * @keys:	keys in it; writers only
 * @max_keys:	keys it takes at most: three quarters of its slots, so
 *		that runs stay short, or less (the table's limit)
 * @slot:	the slots
 */
struct vmlat_task_map {
	u32 mask;
	u32 shift;
	u32 keys;
	u32 max_keys;
	struct vmlat_task_slot *slot;
};

/* The 64-bit multiplicative hash of @key, hash_ptr()'s before its shift. */
static inline u64 vmlat_task_hash64(const void *key)
{
	return (u64)(unsigned long)key * VMLAT_TASK_GOLDEN_RATIO_64;
}

/* The slot @key's run starts from in @m: hash_ptr(key, log2(slots)). */
static inline u32 vmlat_task_map_home(const struct vmlat_task_map *m,
				      const void *key)
{
	return (u32)(vmlat_task_hash64(key) >> m->shift);
}

/**
 * vmlat_task_map_probe() - @key's value in @m, without a lock
 * @m:	a map; its mask, shift and slot never change
 * @key:	a key
 *
 * Return: the value, or -1 if @key is not in @m. Racing with a writer, the
 * answer can be wrong: the caller's seqcount says so.
 */
static inline int vmlat_task_map_probe(const struct vmlat_task_map *m,
				       const void *key)
{
	const struct vmlat_task_slot *t = m->slot;
	u32 h = vmlat_task_map_home(m, key), mask = m->mask, i;
	const void *k;

	for (i = 0; i < VMLAT_TASK_PROBES; i++) {
		const struct vmlat_task_slot *s = &t[(h + i) & mask];

		k = READ_ONCE(s->key);
		if (!k)
			return -1;
		if (k == key)
			return READ_ONCE(s->idx);
	}
	return -1;
}

static inline u32 vmlat_task_map_slots(const struct vmlat_task_map *m)
{
	return m->mask + 1;
}

static inline bool vmlat_task_map_full(const struct vmlat_task_map *m)
{
	return m->keys >= m->max_keys;
}

void vmlat_task_map_init(struct vmlat_task_map *m,
			 struct vmlat_task_slot *slot, unsigned int bits,
			 u32 limit);
int vmlat_task_map_slot_of(const struct vmlat_task_map *m, const void *key);
bool vmlat_task_map_insert(struct vmlat_task_map *m, const void *key,
			   int idx);
int vmlat_task_map_remove(struct vmlat_task_map *m, const void *key,
			  struct vmlat_task_map *mirror);
bool vmlat_task_map_copy(struct vmlat_task_map *dst,
			 const struct vmlat_task_map *src, u32 *from, u32 n);

#endif /* _VMLAT_TASKMAP_H */
