// SPDX-License-Identifier: GPL-2.0
/*
 * The task table's map (taskmap.h): insertion, backward-shift removal,
 * and the bounded steps of a copy into a map of another size.
 */
#include "taskmap.h"

/**
 * vmlat_task_map_init() - an empty map
 * @m:		the map
 * @slot:	its 2^@bits slots, zeroed
 * @bits:	log2 of its slots, 1..31
 * @limit:	keys the table takes at most, whatever its size
 */
void vmlat_task_map_init(struct vmlat_task_map *m,
			 struct vmlat_task_slot *slot, unsigned int bits,
			 u32 limit)
{
	m->mask = (1U << bits) - 1;
	m->shift = 64 - bits;
	m->keys = 0;
	m->max_keys = vmlat_task_map_slots(m) / 4 * 3;
	if (m->max_keys > limit)
		m->max_keys = limit;
	m->slot = slot;
}

/* The slot holding @key, or -1. Context: writers. */
int vmlat_task_map_slot_of(const struct vmlat_task_map *m, const void *key)
{
	u32 h = vmlat_task_map_home(m, key), i, j;

	for (i = 0; i < VMLAT_TASK_PROBES; i++) {
		j = (h + i) & m->mask;
		if (!m->slot[j].key)
			return -1;
		if (m->slot[j].key == key)
			return j;
	}
	return -1;
}

/**
 * vmlat_task_map_insert() - put @key, not in @m, with @idx
 * @m:		the map
 * @key:	the key
 * @idx:	its value
 *
 * The value is written before the key, for lookups.
 * Return: false if @m is full or has no free slot within
 * VMLAT_TASK_PROBES of @key's home.
 */
bool vmlat_task_map_insert(struct vmlat_task_map *m, const void *key,
			   int idx)
{
	u32 h = vmlat_task_map_home(m, key), i, j;

	if (vmlat_task_map_full(m))
		return false;
	for (i = 0; i < VMLAT_TASK_PROBES; i++) {
		j = (h + i) & m->mask;
		if (m->slot[j].key)
			continue;
		WRITE_ONCE(m->slot[j].idx, idx);
		WRITE_ONCE(m->slot[j].key, key);
		m->keys++;
		return true;
	}
	return false;
}

/* @key with @idx in @m: updated if there, else inserted. */
static bool vmlat_task_map_ensure(struct vmlat_task_map *m, const void *key,
				  int idx)
{
	int s = vmlat_task_map_slot_of(m, key);

	if (s < 0)
		return vmlat_task_map_insert(m, key, idx);
	WRITE_ONCE(m->slot[s].idx, idx);
	return true;
}

/**
 * vmlat_task_map_remove() - take @key out of @m
 * @m:		the map
 * @key:	the key
 * @mirror:	NULL, or a map being copied from @m: every entry the
 *		removal moves is put in it too, wherever the copy is
 *
 * Backward-shift deletion: every entry after @key's in its run that may
 * move closer to its home slot moves into the hole, so the run looks as
 * if @key had never been inserted. Entries only ever move closer to home:
 * each stays within VMLAT_TASK_PROBES of it. The moved entry is written
 * to the hole before the slot it left is reused or freed: a lookup that
 * passes both sees it at least once (and a seqcount tells it to retry).
 *
 * Return: 0, -ENOENT if @key is not in @m, or -ENOSPC if it was removed
 * but @mirror had no room for an entry it moved (the copy is lost).
 */
int vmlat_task_map_remove(struct vmlat_task_map *m, const void *key,
			  struct vmlat_task_map *mirror)
{
	int s = vmlat_task_map_slot_of(m, key), ret = 0;
	u32 hole, j, home;

	if (s < 0)
		return -ENOENT;
	hole = s;
	for (j = (hole + 1) & m->mask; m->slot[j].key; j = (j + 1) & m->mask) {
		home = vmlat_task_map_home(m, m->slot[j].key);
		/* Can the entry at j move to the hole: is hole in [home, j)? */
		if (((j - home) & m->mask) < ((j - hole) & m->mask))
			continue;
		WRITE_ONCE(m->slot[hole].idx, m->slot[j].idx);
		WRITE_ONCE(m->slot[hole].key, m->slot[j].key);
		if (mirror && !vmlat_task_map_ensure(mirror, m->slot[j].key,
						     m->slot[j].idx))
			ret = -ENOSPC;
		hole = j;
	}
	WRITE_ONCE(m->slot[hole].key, NULL);
	m->keys--;
	return ret;
}

/**
 * vmlat_task_map_copy() - copy @n more slots of @src into @dst
 * @dst:	the map being built
 * @src:	the map in use
 * @from:	the first slot of @src not copied yet; advanced
 * @n:		slots to copy in this step
 *
 * A key of those slots that @dst has is left as it is (a writer put it
 * there, with its latest value). The copy is done when *@from passes
 * @src's last slot.
 *
 * Return: false if @dst had no room: the copy cannot be finished.
 */
bool vmlat_task_map_copy(struct vmlat_task_map *dst,
			 const struct vmlat_task_map *src, u32 *from, u32 n)
{
	u32 end = *from + n, i;

	if (end > vmlat_task_map_slots(src) || end < *from)
		end = vmlat_task_map_slots(src);
	for (i = *from; i < end; i++) {
		const struct vmlat_task_slot *s = &src->slot[i];

		if (!s->key || vmlat_task_map_slot_of(dst, s->key) >= 0)
			continue;
		if (!vmlat_task_map_insert(dst, s->key, s->idx))
			return false;
	}
	*from = end;
	return true;
}
